#!/bin/bash
# tests/pkg/run.sh - the packages, as CI checks them (make check-pkg). Runs
# as root on a Debian machine that may be changed (it installs, removes and
# purges the package memcg-policy):
#   1. builds the .deb with dpkg-buildpackage -us -uc -b in a fresh git
#      clone of the tree (what is committed; a copy of the files outside a
#      git checkout), and checks what it holds;
#   2. lintian: no error or warning left (the remaining tags are explained
#      in debian/memcg-policy.lintian-overrides);
#   3. dpkg -i; `memcg-policy status` and `apply --dry-run` from the
#      installed path on this host (documented exit codes, nothing written);
#   4. in a private mount namespace with a test /boot: status, apply
#      --dry-run, the real kernel-install with the installed plugin after
#      90-loaderentry.install, and the installed Debian hook through
#      run-parts;
#      the package's prerm on removal reverts what the tool wrote there;
#   5. an upgrade (dpkg -i again) after `set` edited /etc/memcg-policy.conf
#      asks nothing and keeps it (not a conffile);
#   6. dpkg -r (the admin's policy kept, the kernel hook then does nothing)
#      and dpkg -P (conffiles, policy, journal gone; a journal that still
#      records changes kept; the admin's own drop-ins kept);
#   7. make dist, and rpmbuild -ta on its tarball.
# Prints "PASS: ..." / "FAIL: ..." per check and "N passed, N failed" last.
# PKG_NOCHECK=1 builds the .deb without running the test suite in it.
set -u
export LC_ALL=C
TOP=$(cd "$(dirname "$0")/../.." && pwd)
PKG=memcg-policy
REL=6.1.0-41-amd64        # the test kernel (a Debian 12 config, memcg on by default)
REL2=6.1.0-42-amd64
# shellcheck source-path=SCRIPTDIR source=../tier.sh
. "$TOP/tests/tier.sh"
check() {
	local name=$1
	shift
	if "$@"; then pass "$name"; else fail "$name" "command failed: $*"; fi
}
# run NAME CMD...: runs CMD with its output in $W/NAME.log; exit code in $RC
run() {
	local log=$W/$1.log
	shift
	"$@" >"$log" 2>&1
	RC=$?
}
tail_log() { tail -n "${2:-30}" "$W/$1.log" | sed 's/^/    /'; }

if [ "$(id -u)" -ne 0 ]; then
	fail "tests/pkg/run.sh runs as root (it installs and purges the package)"
	finish
fi
for tool in dpkg-buildpackage dh lintian dpkg rpmbuild unshare run-parts kernel-install; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		fail "$tool is installed (packages: debhelper devscripts lintian rpm systemd dpkg-dev)"
	fi
done
[ "$failed" -eq 0 ] || finish

W=$(mktemp -d /tmp/memcg-pkg.XXXXXX)
VERSION=$(sed -n 's/^VERSION *= *//p' "$TOP/Makefile")
DEBVERSION=$(dpkg-parsechangelog -l "$TOP/debian/changelog" -S Version)
SAVED=$W/saved-etc
# shellcheck disable=SC2317 # (called by the trap)
cleanup() {
	# Whatever happened: no package left behind, the host's own files back.
	if dpkg-query -W -f '${db:Status-Status}' "$PKG" 2>/dev/null | grep -qv '^not-installed$'; then
		dpkg -P "$PKG" >/dev/null 2>&1
	fi
	if [ -d "$SAVED" ]; then
		# what is there now is this test's; the host's was moved aside
		rm -rf /etc/memcg-policy.d /var/lib/memcg-policy
		[ -e "$SAVED/memcg-policy.conf" ] && mv -f "$SAVED/memcg-policy.conf" /etc/memcg-policy.conf
		[ -e "$SAVED/memcg-policy.d" ] && mv "$SAVED/memcg-policy.d" /etc/memcg-policy.d
		[ -e "$SAVED/var-lib-memcg-policy" ] && mv "$SAVED/var-lib-memcg-policy" /var/lib/memcg-policy
	fi
	[ -n "${KEEP:-}" ] || rm -rf "$W"
}
trap cleanup EXIT
echo "work directory: $W"

# ---- 1. build the .deb ---------------------------------------------------
SRC=$W/build/$PKG-$VERSION
mkdir -p "$SRC"
rmdir "$SRC"
if git -C "$TOP" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	# the usual way: a fresh clone, debian/ at its top
	git clone -q "$TOP" "$SRC" || { fail "git clone of $TOP"; finish; }
	[ -z "$(git -C "$TOP" status --porcelain --untracked-files=no)" ] ||
		echo "note: uncommitted changes of $TOP are not in the clone"
	pass "a fresh clone ($(git -C "$SRC" log -1 --format=%h)) has debian/ at its top"
else
	mkdir -p "$SRC"
	tar -C "$TOP" --exclude='./build*' -cf - . | tar -C "$SRC" -xf -
fi
opts=''
[ -n "${PKG_NOCHECK:-}" ] && opts=nocheck
run dpkg-buildpackage env -C "$SRC" DEB_BUILD_OPTIONS="$opts" dpkg-buildpackage -us -uc -b
DEB=$W/build/${PKG}_${DEBVERSION}_$(dpkg --print-architecture).deb
CHANGES=$W/build/${PKG}_${DEBVERSION}_$(dpkg --print-architecture).changes
if [ -f "$DEB" ] && [ -f "$CHANGES" ]; then
	pass "dpkg-buildpackage -us -uc -b builds $(basename "$DEB")"
else
	fail "dpkg-buildpackage -us -uc -b builds the .deb"
	tail_log dpkg-buildpackage 60
	finish
fi
if [ -z "$opts" ]; then
	if grep -qE '^[0-9]+ passed, 0 failed$' "$W/dpkg-buildpackage.log"; then
		pass "the test suite ran in the package build and passed ($(grep -E '^[0-9]+ passed, 0 failed$' "$W/dpkg-buildpackage.log" | tail -n 1))"
	else
		fail "the test suite ran in the package build and passed"
	fi
fi

# (dh_compress leaves small files such as README.md uncompressed)
contents=$(dpkg-deb -c "$DEB" | awk '{ print $1, $6 }' | grep -v '^d' | sed 's|^\([^ ]*\) \./|\1 /|; s|README\.md\.gz$|README.md|' | sort -k2)
want_files="-rwxr-xr-x /etc/kernel/postinst.d/50-memcg-policy
-rw-r--r-- /lib/systemd/system/memcg-policy-metrics.service
-rw-r--r-- /lib/systemd/system/memcg-policy-metrics.timer
-rw-r--r-- /etc/default/grub.d/99-memcg-policy.cfg
-rwxr-xr-x /usr/lib/kernel/install.d/55-memcg-policy.install
-rwxr-xr-x /usr/lib/kernel/install.d/95-memcg-policy.install
-rwxr-xr-x /usr/sbin/memcg-policy
-rw-r--r-- /usr/share/bash-completion/completions/memcg-policy
-rw-r--r-- /usr/share/doc/memcg-policy/README.md
-rw-r--r-- /usr/share/doc/memcg-policy/changelog.Debian.gz
-rw-r--r-- /usr/share/doc/memcg-policy/copyright
-rw-r--r-- /usr/share/lintian/overrides/memcg-policy
-rw-r--r-- /usr/share/man/man5/memcg-policy.conf.5.gz
-rw-r--r-- /usr/share/man/man8/memcg-policy.8.gz
-rw-r--r-- /usr/share/memcg-policy/99-memcg-policy.cfg
-rw-r--r-- /usr/share/memcg-policy/memcg-policy.conf"
expect_eq ".deb: files and modes" "$contents" "$(printf '%s\n' "$want_files" | sort -k2)"
conffiles=$(dpkg-deb -I "$DEB" conffiles 2>/dev/null | sort)
expect_eq ".deb: conffiles (not /etc/memcg-policy.conf, which set edits)" "$conffiles" "$(printf '%s\n' /etc/default/grub.d/99-memcg-policy.cfg /etc/kernel/postinst.d/50-memcg-policy)"
check ".deb: postrm purges the journal" sh -c "dpkg-deb -I '$DEB' postrm | grep -q 'rm -rf /var/lib/memcg-policy'"
check ".deb: prerm reverts on removal" sh -c "dpkg-deb -I '$DEB' prerm | grep -q 'memcg-policy -q revert'"
deps=$(dpkg-deb -f "$DEB" Depends)
case $deps in
*libinih*libkmod* | *libkmod*libinih* | *libjson-c*) pass ".deb: Depends from the shared libraries ($deps)" ;;
*) fail ".deb: Depends from the shared libraries" "Depends: $deps" ;;
esac
mkdir -p "$W/x"
dpkg-deb -x "$DEB" "$W/x"
expect_eq ".deb: hooks run /usr/sbin/memcg-policy" \
	"$(grep -h '^memcg_policy=' "$W/x/usr/lib/kernel/install.d/95-memcg-policy.install" "$W/x/etc/kernel/postinst.d/50-memcg-policy")" \
	"$(printf 'memcg_policy=/usr/sbin/memcg-policy\nmemcg_policy=/usr/sbin/memcg-policy')"
check ".deb: the binary sources the drop-in from /usr/share, where the package puts it" sh -c \
	"grep -qF /usr/share/memcg-policy/99-memcg-policy.cfg '$W/x/usr/sbin/memcg-policy' && ! grep -qF /usr/local/share '$W/x/usr/sbin/memcg-policy'"
check ".deb: the binary is hardened (BIND_NOW, PIE)" sh -c \
	"readelf -d '$W/x/usr/sbin/memcg-policy' | grep -q 'BIND_NOW' && readelf -h '$W/x/usr/sbin/memcg-policy' | grep -q 'DYN'"

# ---- 2. lintian ----------------------------------------------------------
run lintian lintian --info --display-info --pedantic --tag-display-limit 0 "$CHANGES"
if grep -qE '^[EW]: ' "$W/lintian.log"; then
	fail "lintian: no errors or warnings" "$(grep -E '^[EW]: ' "$W/lintian.log")"
else
	pass "lintian: no errors or warnings"
fi
others=$(grep -E '^[IPX]: ' "$W/lintian.log" || true)
if [ -n "$others" ]; then
	echo "lintian info/pedantic tags (not failures):"
	printf '%s\n' "$others" | sed 's/^/    /'
fi
over=$(lintian --show-overrides "$CHANGES" 2>/dev/null | grep -E '^O: ' || true)
[ -z "$over" ] || { echo "lintian tags overridden (explained in the overrides file):"; printf '%s\n' "$over" | sed 's/^/    /'; }

# ---- 3. install ----------------------------------------------------------
if dpkg-query -W -f '${db:Status-Status}' "$PKG" 2>/dev/null | grep -qv '^not-installed$'; then
	echo "note: $PKG was installed before this test; purging it first"
	dpkg -P "$PKG" >/dev/null 2>&1
fi
# A policy or journal of the host not from the package is moved aside and
# put back at the end.
mkdir -p "$SAVED"
[ -e /etc/memcg-policy.conf ] && mv /etc/memcg-policy.conf "$SAVED/"
[ -e /etc/memcg-policy.d ] && mv /etc/memcg-policy.d "$SAVED/"
[ -e /var/lib/memcg-policy ] && mv /var/lib/memcg-policy "$SAVED/var-lib-memcg-policy"

run dpkg-i dpkg -i "$DEB"
if [ "$RC" -eq 0 ]; then pass "dpkg -i"; else
	fail "dpkg -i (exit $RC)"
	tail_log dpkg-i
	finish
fi
for f in /usr/sbin/memcg-policy /usr/lib/kernel/install.d/55-memcg-policy.install /usr/lib/kernel/install.d/95-memcg-policy.install /etc/kernel/postinst.d/50-memcg-policy; do
	check "installed: $f executable" test -x "$f"
done
expect_eq "installed: /etc/memcg-policy.conf is the documented default, copied by postinst" \
	"$(cmp /etc/memcg-policy.conf /usr/share/memcg-policy/memcg-policy.conf 2>&1 && stat -c %a /etc/memcg-policy.conf)" 644
check "installed: /etc/memcg-policy.conf is not a conffile" sh -c "! dpkg-query -W -f '\${Conffiles}' $PKG | grep -q /etc/memcg-policy.conf"
for f in /etc/memcg-policy.conf /etc/default/grub.d/99-memcg-policy.cfg /usr/share/memcg-policy/99-memcg-policy.cfg \
	/usr/share/man/man8/memcg-policy.8.gz /usr/share/man/man5/memcg-policy.conf.5.gz \
	/usr/share/bash-completion/completions/memcg-policy /lib/systemd/system/memcg-policy-metrics.service \
	/lib/systemd/system/memcg-policy-metrics.timer; do
	check "installed: $f" test -f "$f"
done
check "installed: the metrics timer is not enabled (the admin's to turn on)" \
	test ! -e /etc/systemd/system/timers.target.wants/memcg-policy-metrics.timer
check "installed: the metrics service runs the installed program" \
	grep -qx 'ExecStart=/usr/sbin/memcg-policy -q check --prometheus /var/lib/prometheus/node-exporter/memcg-policy.prom' \
	/lib/systemd/system/memcg-policy-metrics.service
expect_eq "installed: memcg-policy --version" "$(/usr/sbin/memcg-policy --version 2>&1)" "memcg-policy $VERSION"
if command -v man >/dev/null 2>&1; then
	check "installed: man 8 memcg-policy renders" sh -c 'man 8 memcg-policy 2>/dev/null | grep -q "EXIT STATUS"'
	check "installed: man 5 memcg-policy.conf renders" sh -c 'man 5 memcg-policy.conf 2>/dev/null | grep -q "DECISION ORDER"'
fi
# shellcheck disable=SC2016
check "installed: bash completes memcg-policy commands" bash -c '
	. /usr/share/bash-completion/bash_completion
	_completion_loader memcg-policy
	COMP_WORDS=(memcg-policy ap); COMP_CWORD=1; COMP_LINE="memcg-policy ap"; COMP_POINT=${#COMP_LINE}
	_memcg_policy; [ "${COMPREPLY[*]}" = apply ]'

# status and apply --dry-run on this host as it is. What they find depends
# on the machine (a CI host may have no boot configuration at all), so the
# check is: an exit code documented for the command, an answer on stdout
# when it succeeds, no crash, and nothing written by the dry run.
marker=$W/marker
touch "$marker"
sleep 1
run host-status /usr/sbin/memcg-policy status
case $RC in
0)
	if grep -q . "$W/host-status.log"; then pass "host: status exits 0 and reports"; else fail "host: status exits 0 and reports"; fi
	;;
3 | 4) pass "host: status exits $RC (documented: bad input / system failure on this host): $(head -n 1 "$W/host-status.log")" ;;
*)
	fail "host: status exits 0, 3 or 4 (got $RC)"
	tail_log host-status
	;;
esac
run host-json /usr/sbin/memcg-policy --json status
if [ "$RC" -eq 0 ]; then
	if command -v jq >/dev/null 2>&1; then
		check "host: status --json is JSON with kernels and slots" jq -e '(.kernels | type == "array") and (.slots | type == "array")' "$W/host-json.log" >/dev/null
	fi
fi
run host-dry /usr/sbin/memcg-policy apply --dry-run
case $RC in
0 | 3 | 4) pass "host: apply --dry-run exits $RC (0, or 3/4 on this host's input)" ;;
*)
	fail "host: apply --dry-run exits 0, 3 or 4 (got $RC)"
	tail_log host-dry
	;;
esac
written=$(find /etc /boot /var/lib/memcg-policy /run/memcg-policy.lock -newer "$marker" \
	\( -type f -o -type l \) 2>/dev/null | grep -v '^/etc/ld.so.cache$' || true)
expect_eq "host: apply --dry-run wrote nothing" "$written" ""
check "host: no journal after a dry run" test ! -e /var/lib/memcg-policy/journal.json

# ---- 4. the live commands and the hooks on a test /boot -----------------
# A private mount namespace: tmpfs over /boot, /etc/kernel, /var/lib and
# /run, the test policy bound over /etc/memcg-policy.conf. The installed
# program runs without --root, as on a real system; only the boot partition
# checks are relaxed (MEMCG_POLICY_TRUST_BOOT), since the test /boot is no
# partition. GRUB and Raspberry Pi slots are off in the test policy, so that
# a GRUB on the host cannot take part.
NS=$W/ns
mkdir -p "$NS"
cp "$TOP/tests/fixtures/configs/debian12-amd64.config" "$NS/config"
printf '[policy]\nmode = off\n\n[bootloaders]\ngrub = no\nrpi = no\n' >"$NS/policy.conf"
chmod 0644 "$NS/policy.conf"
cat >"$NS/inside.sh" <<'INSIDE'
set -u
NS=$1 REL=$2 REL2=$3
say() { echo "$1: $2"; }
mount -t tmpfs memcg-test /boot || { say FAIL "mount tmpfs on /boot"; exit 1; }
# /etc/kernel as installed (the package's hook in postinst.d), on a tmpfs
mkdir -p "$NS/etc-kernel"
cp -a /etc/kernel/. "$NS/etc-kernel/"
mount -t tmpfs memcg-test /etc/kernel
cp -a "$NS/etc-kernel/." /etc/kernel/
mount -t tmpfs memcg-test /var/lib
mount -t tmpfs memcg-test /run
mount --bind "$NS/policy.conf" /etc/memcg-policy.conf
export MEMCG_POLICY_TRUST_BOOT=1
mkdir -p /boot/loader/entries
for r in "$REL" "$REL2"; do
	cp "$NS/config" "/boot/config-$r"
	printf 'not a kernel\n' >"/boot/vmlinuz-$r"
done
printf 'root=UUID=0c1d ro quiet\n' >/etc/kernel/cmdline
printf 'layout=bls\n' >/etc/kernel/install.conf
printf 'memcgtest\n' >/etc/kernel/entry-token
has() { printf ' %s ' "$(sed -n 's/^options[[:space:]]*//p' "$1")" | grep -qF " $2 "; }

out=$(/usr/sbin/memcg-policy status 2>&1); rc=$?
if [ $rc -eq 0 ] && printf '%s' "$out" | grep -qF "$REL"; then say PASS "test /boot: status exits 0 and lists $REL"
else say FAIL "test /boot: status exits 0 and lists $REL (exit $rc)"; printf '%s\n' "$out" | sed 's/^/    /'; fi

before=$(cat /etc/kernel/cmdline)
out=$(/usr/sbin/memcg-policy apply --dry-run --kernel "$REL" 2>&1); rc=$?
if [ $rc -eq 0 ] && printf '%s' "$out" | grep -q '^+.*cgroup_disable=memory' && printf '%s' "$out" | grep -qF 'etc/kernel/cmdline'; then
	say PASS "test /boot: apply --dry-run shows the diff for /etc/kernel/cmdline"
else say FAIL "test /boot: apply --dry-run shows the diff for /etc/kernel/cmdline (exit $rc)"; printf '%s\n' "$out" | sed 's/^/    /'; fi
if [ "$(cat /etc/kernel/cmdline)" = "$before" ] && [ ! -e /var/lib/memcg-policy ]; then say PASS "test /boot: apply --dry-run wrote nothing"
else say FAIL "test /boot: apply --dry-run wrote nothing"; fi

# The real kernel-install, with the entry writer and the installed plugin.
export KERNEL_INSTALL_PLUGINS="/usr/lib/kernel/install.d/90-loaderentry.install /usr/lib/kernel/install.d/95-memcg-policy.install"
export KERNEL_INSTALL_CONF_ROOT=/etc/kernel BOOT_ROOT=/boot MACHINE_ID=0123456789abcdef0123456789abcdef
out=$(kernel-install add "$REL" "/boot/vmlinuz-$REL" 2>&1); rc=$?
entry=/boot/loader/entries/memcgtest-$REL.conf
if [ $rc -eq 0 ]; then say PASS "kernel-install add: exit 0"; else say FAIL "kernel-install add: exit 0 (got $rc)"; printf '%s\n' "$out" | sed 's/^/    /'; fi
if [ -f "$entry" ] && has "$entry" cgroup_disable=memory && has "$entry" root=UUID=0c1d; then
	say PASS "kernel-install add: the new entry has cgroup_disable=memory and its options"
else say FAIL "kernel-install add: the new entry has cgroup_disable=memory and its options"; cat "$entry" 2>&1 | sed 's/^/    /'; fi
if grep -qw cgroup_disable=memory /etc/kernel/cmdline; then say PASS "kernel-install add: /etc/kernel/cmdline has it for the next kernels"
else say FAIL "kernel-install add: /etc/kernel/cmdline has it for the next kernels"; fi
if [ -s /var/lib/memcg-policy/journal.json ]; then say PASS "kernel-install add: journal written"; else say FAIL "kernel-install add: journal written"; fi
/usr/sbin/memcg-policy check --kernel "$REL" >/dev/null 2>&1; rc=$?
if [ $rc -eq 0 ] || [ $rc -eq 5 ]; then say PASS "check after kernel-install: in sync (exit $rc)"
else say FAIL "check after kernel-install: in sync (exit 0 or 5, got $rc)"; fi
out=$(kernel-install remove "$REL" 2>&1); rc=$?
if [ $rc -eq 0 ] && [ ! -e "$entry" ]; then say PASS "kernel-install remove: exit 0, entry gone"
else say FAIL "kernel-install remove: exit 0, entry gone (exit $rc)"; printf '%s\n' "$out" | sed 's/^/    /'; fi

# The installed Debian hook, run the way a kernel package runs it, for a
# kernel whose entry another tool of this installation wrote (named by the
# os-release ID, as kernel-install's entry-token=os-id names it), beside
# another installation's entry for the same release on the shared ESP.
osid=$(. /etc/os-release && printf %s "$ID")
entry2=/boot/loader/entries/$osid-$REL2.conf
printf 'title Debian\nversion %s\noptions root=UUID=0c1d ro\nlinux /vmlinuz-%s\n' "$REL2" "$REL2" >"$entry2"
foreign=/boot/loader/entries/otheros-$REL2.conf
printf 'title Other OS\nversion %s\noptions root=UUID=ffff ro\nlinux /otheros/vmlinuz-%s\n' "$REL2" "$REL2" >"$foreign"
foreign_before=$(cat "$foreign")
out=$(run-parts --report --exit-on-error --regex '^50-memcg-policy$' --arg="$REL2" --arg="/boot/vmlinuz-$REL2" /etc/kernel/postinst.d 2>/dev/null); rc=$?
if [ $rc -eq 0 ]; then say PASS "postinst.d hook through run-parts: exit 0"; else say FAIL "postinst.d hook through run-parts: exit 0 (got $rc)"; fi
if [ -z "$out" ]; then say PASS "postinst.d hook: nothing on stdout"; else say FAIL "postinst.d hook: nothing on stdout"; printf '%s\n' "$out" | sed 's/^/    /'; fi
if has "$entry2" cgroup_disable=memory; then say PASS "postinst.d hook: the kernel's entry has cgroup_disable=memory"
else say FAIL "postinst.d hook: the kernel's entry has cgroup_disable=memory"; sed 's/^/    /' "$entry2"; fi
if [ "$(cat "$foreign")" = "$foreign_before" ]; then say PASS "postinst.d hook: another installation's entry left byte for byte"
else say FAIL "postinst.d hook: another installation's entry left byte for byte"; sed 's/^/    /' "$foreign"; fi

# The package's prerm, as dpkg runs it on removal: reverts with a message.
out=$(sh "$NS/prerm" remove 2>&1); rc=$?
if [ $rc -eq 0 ] && printf '%s' "$out" | grep -q 'reverting the boot configuration'; then say PASS "prerm remove: exit 0, says it reverts"
else say FAIL "prerm remove: exit 0, says it reverts (exit $rc)"; printf '%s\n' "$out" | sed 's/^/    /'; fi
if ! has "$entry2" cgroup_disable=memory && has "$entry2" root=UUID=0c1d && ! grep -qw cgroup_disable=memory /etc/kernel/cmdline; then
	say PASS "prerm remove: the tool's arguments are gone from the entry and /etc/kernel/cmdline"
else say FAIL "prerm remove: the tool's arguments are gone"; sed 's/^/    /' "$entry2" /etc/kernel/cmdline; fi
if [ ! -e /var/lib/memcg-policy/journal.json ]; then say PASS "prerm remove: the journal is empty, so gone"
else say FAIL "prerm remove: the journal is empty, so gone"; fi
out=$(sh "$NS/prerm" upgrade 2>&1); rc=$?
if [ $rc -eq 0 ] && [ -z "$out" ]; then say PASS "prerm upgrade: does nothing"; else say FAIL "prerm upgrade: does nothing"; fi
INSIDE
dpkg-deb -e "$DEB" "$W/control"
cp "$W/control/prerm" "$NS/prerm"
if unshare --mount --propagation private true 2>/dev/null; then
	unshare --mount --propagation private bash "$NS/inside.sh" "$NS" "$REL" "$REL2" >"$W/ns.log" 2>&1
	while IFS= read -r line; do
		case $line in
		"PASS: "*) pass "${line#PASS: }" ;;
		"FAIL: "*) fail "${line#FAIL: }" ;;
		*) echo "$line" ;;
		esac
	done <"$W/ns.log"
	grep -qE '^(PASS|FAIL): prerm upgrade' "$W/ns.log" || fail "the namespace test ran to its end" "$(tail -n 20 "$W/ns.log")"
else
	fail "a private mount namespace for the test /boot (unshare --mount needs CAP_SYS_ADMIN)"
fi
check "the namespace left the host's /boot alone" test ! -e /boot/loader/entries/memcgtest-$REL.conf

# ---- 5. upgrade after set edited the policy --------------------------------
run set-off /usr/sbin/memcg-policy set off --no-apply
expect_eq "set off --no-apply: exit 0" "$RC" 0
edited=$(cat /etc/memcg-policy.conf)
run upgrade dpkg -i "$DEB" </dev/null
expect_eq "upgrade (dpkg -i again): exit 0" "$RC" 0
check "upgrade: no question about a configuration file" sh -c "! grep -qiE 'configuration file|conffile' '$W/upgrade.log'"
expect_eq "upgrade: the policy set edited is kept byte for byte" "$(cat /etc/memcg-policy.conf)" "$edited"

# ---- 6. remove and purge -------------------------------------------------
echo "# the admin's line" >>/etc/memcg-policy.conf
admin_conf=$(cat /etc/memcg-policy.conf)
mkdir -p /etc/memcg-policy.d
printf '[auto]\nmin-ram = 1G\n' >/etc/memcg-policy.d/local.conf
run dpkg-r dpkg -r "$PKG"
if [ "$RC" -eq 0 ]; then pass "dpkg -r"; else fail "dpkg -r (exit $RC)"; tail_log dpkg-r; fi
check "removed: /usr/sbin/memcg-policy gone" test ! -e /usr/sbin/memcg-policy
check "removed: kernel-install plugin gone" test ! -e /usr/lib/kernel/install.d/95-memcg-policy.install
check "removed: man page gone" test ! -e /usr/share/man/man8/memcg-policy.8.gz
expect_eq "removed: the admin's /etc/memcg-policy.conf kept as it was" "$(cat /etc/memcg-policy.conf 2>&1)" "$admin_conf"
check "removed: nothing was recorded on this host, so nothing to revert and no message" sh -c "! grep -q 'reverting the boot configuration' '$W/dpkg-r.log'"
check "removed: the kernel hook (a conffile) stays" test -x /etc/kernel/postinst.d/50-memcg-policy
check "removed: the GRUB drop-in (a conffile) stays" test -f /etc/default/grub.d/99-memcg-policy.cfg
expect_eq "removed: package state config-files" "$(dpkg-query -W -f '${db:Status-Status}' "$PKG")" "config-files"
run hook-after-remove run-parts --report --exit-on-error --regex '^50-memcg-policy$' --arg="$REL" --arg="/boot/vmlinuz-$REL" /etc/kernel/postinst.d
expect_eq "removed: the kernel hook does nothing, exit 0" "$RC:$(cat "$W/hook-after-remove.log")" "0:"
if command -v sh >/dev/null; then
	# GRUB sources the drop-in with `set -e`: without the program it must leave the values alone.
	out=$(sh -ec 'GRUB_CMDLINE_LINUX="ro quiet"; GRUB_CMDLINE_LINUX_DEFAULT=splash; PATH=/usr/bin:/bin; . /etc/default/grub.d/99-memcg-policy.cfg; echo "$GRUB_CMDLINE_LINUX|$GRUB_CMDLINE_LINUX_DEFAULT"' 2>/dev/null)
	expect_eq "removed: the GRUB drop-in leaves the command line unchanged" "$out" "ro quiet|splash"
fi

mkdir -p /var/lib/memcg-policy
echo '{}' >/var/lib/memcg-policy/journal.json
run dpkg-P dpkg -P "$PKG"
if [ "$RC" -eq 0 ]; then pass "dpkg -P"; else fail "dpkg -P (exit $RC)"; tail_log dpkg-P; fi
check "purged: /etc/memcg-policy.conf gone (postinst made it)" test ! -e /etc/memcg-policy.conf
check "purged: the kernel hook gone" test ! -e /etc/kernel/postinst.d/50-memcg-policy
check "purged: the GRUB drop-in gone" test ! -e /etc/default/grub.d/99-memcg-policy.cfg
check "purged: the journal directory gone" test ! -e /var/lib/memcg-policy
check "purged: the admin's own /etc/memcg-policy.d/local.conf kept" test -f /etc/memcg-policy.d/local.conf
rm -rf /etc/memcg-policy.d
# a journal that still records changes (a revert that failed at removal)
# is not purged
run dpkg-i2 dpkg -i "$DEB"
run dpkg-r2 dpkg -r "$PKG"
mkdir -p /var/lib/memcg-policy
printf '{ "version": 1, "files": [ { "path": "/etc/kernel/cmdline" } ] }\n' >/var/lib/memcg-policy/journal.json
run dpkg-P2 dpkg -P "$PKG"
expect_eq "purge with records left: dpkg -P exit 0" "$RC" 0
check "purge with records left: the journal is kept" test -f /var/lib/memcg-policy/journal.json
check "purge with records left: and says so" grep -q 'still records changes' "$W/dpkg-P2.log"
rm -rf /var/lib/memcg-policy
expect_eq "purged: package not installed" "$(dpkg-query -W -f '${db:Status-Status}' "$PKG" 2>/dev/null || echo not-installed)" "not-installed"

# ---- 7. make dist, rpmbuild -ta ----------------------------------------------
R=$W/rpm
mkdir -p "$R"
run dist make -C "$SRC" dist
TARBALL=$SRC/$PKG-$VERSION.tar.gz
if [ "$RC" -eq 0 ] && [ -f "$TARBALL" ]; then pass "make dist makes $PKG-$VERSION.tar.gz"; else
	fail "make dist (exit $RC)"
	tail_log dist
	finish
fi
check "dist: the tarball holds the spec and debian/" sh -c \
	"tar -tzf '$TARBALL' | grep -qx '$PKG-$VERSION/packaging/rpm/memcg-policy.spec' && tar -tzf '$TARBALL' | grep -qx '$PKG-$VERSION/debian/control'"
# Debian's rpm database does not know the BuildRequires (Debian packages
# provide them): --nodeps.
run rpmbuild rpmbuild --define "_topdir $R" --nodeps -ta "$TARBALL"
RPM=$(find "$R/RPMS" -name "$PKG-$VERSION-*.rpm" ! -name '*debug*' 2>/dev/null | head -n 1)
if [ "$RC" -eq 0 ] && [ -n "$RPM" ]; then pass "rpmbuild -ta builds $(basename "$RPM")"; else
	fail "rpmbuild -ta (exit $RC)"
	tail_log rpmbuild 40
	finish
fi
# Our files; build-id links are rpm's, and whether man pages are compressed
# depends on the distribution's rpm macros (Debian's do not compress).
rfiles=$(rpm -qlp "$RPM" 2>/dev/null | grep -v -e '^/usr/share/doc' -e '^/usr/lib/\.build-id' | sed 's|\(/man[58]/.*\)\.gz$|\1|' | sort)
expect_eq "rpm: files" "$rfiles" "$(printf '%s\n' /usr/share/memcg-policy/memcg-policy.conf /usr/lib/kernel/install.d/55-memcg-policy.install /usr/lib/kernel/install.d/95-memcg-policy.install \
	/usr/sbin/memcg-policy /usr/share/bash-completion/completions/memcg-policy /usr/share/man/man5/memcg-policy.conf.5 \
	/usr/share/man/man8/memcg-policy.8 /usr/share/memcg-policy /usr/share/memcg-policy/99-memcg-policy.cfg \
	/usr/lib/systemd/system/memcg-policy-metrics.service /usr/lib/systemd/system/memcg-policy-metrics.timer | sort)"
expect_eq "rpm: no config file (set edits /etc/memcg-policy.conf, which %post makes)" "$(rpm -qcp "$RPM" 2>/dev/null)" ""
scripts=$(rpm -qp --scripts "$RPM" 2>/dev/null)
check "rpm: %preun reverts on erase" grep -q 'memcg-policy revert' <<<"$scripts"
check "rpm: %post copies the default policy when there is none" grep -q 'cp /usr/share/memcg-policy/memcg-policy.conf /etc/memcg-policy.conf' <<<"$scripts"
mkdir -p "$W/rx"
(cd "$W/rx" && rpm2cpio "$RPM" | cpio -idm --quiet)
check "rpm: the binary sources the drop-in from /usr/share, where the package puts it" \
	grep -qF /usr/share/memcg-policy/99-memcg-policy.cfg "$W/rx/usr/sbin/memcg-policy"
expect_eq "rpm: the plugin runs /usr/sbin/memcg-policy" \
	"$(grep '^memcg_policy=' "$W/rx/usr/lib/kernel/install.d/95-memcg-policy.install")" "memcg_policy=/usr/sbin/memcg-policy"
finish
