#!/bin/bash
# The whole text a user reads, against golden files: status (which leads
# with the answer: the next boot's memcg and the rule that decides it, the
# running state, every warning), check, decide --explain, set --dry-run and
# GRUB's apply --dry-run, on fixture roots and on a live-like system, each
# in tests/fixtures/golden/NAME.txt: stdout, then stderr after a "--
# stderr" line, then the exit code. Values that change from run to run or
# machine to machine are normalized: the root's path (ROOT), the running
# kernel's release (RUNNING), the machine's RAM.
#
# GOLDEN_UPDATE=1 writes the files from this build instead of comparing
# (read the diff before committing it).
. "$TOP/tests/lib.sh"
G="$FIX/golden"
CFG="$FIX/configs"

# golden NAME CMD...: CMD's text against $G/NAME.txt
golden() {
	local name=$1 o e rc
	shift
	o=$(mktemp) e=$(mktemp)
	"$@" >"$o" 2>"$e"
	rc=$?
	{
		cat "$o"
		if [ -s "$e" ]; then echo "-- stderr"; cat "$e"; fi
		echo "-- exit $rc"
	} | normalize >"$o.all"
	if [ "${GOLDEN_UPDATE:-}" = 1 ]; then
		cp "$o.all" "$G/$name.txt"
		pass "golden $name: written"
	elif diff -u "$G/$name.txt" "$o.all" >"$o.diff"; then
		pass "golden $name"
	else
		fail "golden $name: the text differs from $G/$name.txt" "$(head -n 40 "$o.diff")"
	fi
	rm -f "$o" "$e" "$o.all" "$o.diff"
}
normalize() {
	sed -e "s|$root|ROOT|g" -e "s|$(uname -r)|RUNNING|g" \
		-e 's|^\(  RAM: *\)[0-9]*M (/proc/meminfo)|\1NM (/proc/meminfo)|'
}

# colour: on a terminal (a pty from script(1)) the states are coloured,
# never in a pipe, with NO_COLOR set or with TERM=dumb
colours() { # colours NAME yes|no ENV...: status on a pty
	local name=$1 want=$2 got=no tty
	shift 2
	tty=$(mktemp)
	env "$@" script -qec "$(printf '%q ' "$MEMCG_POLICY" --root "$root" status)" /dev/null >"$tty" 2>&1
	grep -q $'\033\[' "$tty" && got=yes
	rm -f "$tty"
	expect_eq "status on a terminal, $name: coloured: $want" "$got" "$want"
}

# --- a Fedora root (BLS entries, /etc/kernel/cmdline, GRUB unmanaged)
fedora() { # fedora MODE: the fixture root with two kernels and a policy
	root=$(mkroot)
	cp -a "$FIX/roots/fedora/." "$root/"
	add_kernel "$root" 6.6.8-200.fc39.x86_64 "$CFG/debian12-amd64.config"
	add_kernel "$root" 6.7.4-200.fc39.x86_64 "$CFG/debian12-amd64.config"
	printf '[policy]\nmode = %s\n' "$1" | write_policy "$root/etc/memcg-policy.conf"
}
fedora off
golden status-fedora-off-not-applied "$MEMCG_POLICY" --root "$root" status
golden check-fedora-off-not-applied "$MEMCG_POLICY" --root "$root" check
golden explain-fedora-off "$MEMCG_POLICY" --root "$root" decide --explain
golden set-on-dry-run-fedora "$MEMCG_POLICY" --root "$root" set on --dry-run
if command -v script >/dev/null; then
	colours "TERM=xterm" yes -u NO_COLOR TERM=xterm
	colours "NO_COLOR=1" no TERM=xterm NO_COLOR=1
	colours "TERM=dumb" no -u NO_COLOR TERM=dumb
	colours "NO_COLOR empty" yes TERM=xterm NO_COLOR=
	out=$("$MEMCG_POLICY" --root "$root" status)
	if grep -q $'\033' <<<"$out"; then fail "status in a pipe: no colour"; else pass "status in a pipe: no colour"; fi
else
	fail "script(1) is installed (util-linux: bsdutils)"
fi
"$MEMCG_POLICY" --root "$root" apply >/dev/null
golden status-fedora-off-applied "$MEMCG_POLICY" --root "$root" status
golden check-fedora-off-applied "$MEMCG_POLICY" --root "$root" check

# --- a kernel without a config: status shows everything else, that
# kernel's default unknown, one short error (exit 3); -v lists the places;
# apply still stops with the whole list
fedora on
rm "$root/boot/config-6.6.8-200.fc39.x86_64"
golden status-missing-config "$MEMCG_POLICY" --root "$root" status
golden status-v-missing-config-stderr sh -c '"$@" 2>&1 >/dev/null' - "$MEMCG_POLICY" --root "$root" -v status
rm "$root/boot/config-6.7.4-200.fc39.x86_64"
golden status-missing-config-default "$MEMCG_POLICY" --root "$root" status
golden apply-missing-config "$MEMCG_POLICY" --root "$root" apply

# --- a long tree (16 kernels, a BLS entry each): without -v the other
# kernels are a line each and the slots in sync after the first few are
# counted; -v shows everything
root=$(mkroot)
mid=6a9857a393724b7a981ebb5b8495b9ea
echo "$mid" >"$root/etc/machine-id"
mkdir -p "$root/boot/loader/entries"
for i in $(seq 10 25); do
	v="6.$i.0-100.fc40.x86_64"
	add_kernel "$root" "$v" "$CFG/debian12-amd64.config"
	printf 'title Fedora Linux (%s)\nversion %s\nlinux /vmlinuz-%s\noptions root=/dev/vda2 ro quiet\n' "$v" "$v" "$v" \
		>"$root/boot/loader/entries/$mid-$v.conf"
done
printf '[policy]\nmode = off\n' | write_policy "$root/etc/memcg-policy.conf"
"$MEMCG_POLICY" --root "$root" apply >/dev/null 2>&1
golden status-long-tree "$MEMCG_POLICY" --root "$root" status
expect_exit "a long tree, status -v: exit 0" 0 "$MEMCG_POLICY" -v --root "$root" status
expect_eq "a long tree, status -v: every kernel in full" "$(grep -c '^    config:' <<<"$OUT")" 16
expect_eq "a long tree, status -v: every entry listed" "$(grep -c '^  bls ' <<<"$OUT")" 16

# --- auto: a program that needs memcg decides, on a Raspberry Pi OS root
root=$(mkroot)
cp -a "$FIX/roots/rpios/." "$root/"
add_kernel "$root" 6.6.51+rpt-rpi-2712 "$CFG/rpi-6.6-bcm2712.config"
printf '[policy]\nmode = auto\n' | write_policy "$root/etc/memcg-policy.conf"
mkdir -p "$root/usr/local/bin"
printf '#!/bin/sh\n' >"$root/usr/local/bin/k3s"
chmod 0755 "$root/usr/local/bin/k3s"
golden status-rpios-auto-k3s "$MEMCG_POLICY" --root "$root" status

# --- a warning: a built-in command line the boot loader cannot override
root=$(mkroot)
cp -a "$FIX/roots/fedora/." "$root/"
add_kernel "$root" 6.7.4-200.fc39.x86_64 "$CFG/x86-cmdline-override.config"
printf '[policy]\nmode = off\n' | write_policy "$root/etc/memcg-policy.conf"
golden status-builtin-override "$MEMCG_POLICY" --root "$root" status

# --- no boot configuration at all (a Pi image, boot/firmware not mounted)
root=$(mkroot)
add_kernel "$root" 6.12.25+rpt-rpi-2712 "$CFG/rpi-6.12-bcm2712.config"
printf '[policy]\nmode = on\n' | write_policy "$root/etc/memcg-policy.conf"
golden status-no-boot-config "$MEMCG_POLICY" --root "$root" status

# --- GRUB (Ubuntu's cloud image settings): the dry run of apply
root=$(mkroot)
add_kernel "$root" 6.8.0-57-generic "$CFG/debian12-cloud-amd64.config"
: >"$root/boot/initrd.img-6.8.0-57-generic"
mkdir -p "$root/etc/default/grub.d" "$root/usr/sbin" "$root/boot/grub"
image_program "$root"
cp "$FIX/grub/cases/cloudimg/default-grub" "$root/etc/default/grub"
cp "$FIX/grub/cases/cloudimg/grub.d/"*.cfg "$root/etc/default/grub.d/"
printf '#! /bin/sh\nexit 0\n' >"$root/usr/sbin/grub-mkconfig"
chmod 0755 "$root/usr/sbin/grub-mkconfig"
printf '[policy]\nmode = off\n' | write_policy "$root/etc/memcg-policy.conf"
golden apply-dry-run-grub "$MEMCG_POLICY" --root "$root" apply --dry-run
golden status-grub-off-not-applied "$MEMCG_POLICY" --root "$root" status

# --- Debian's GRUB (a grub.d loop): the dry run leads with the kernel
# lines before and after; the package's drop-in is one line (-v: its diff)
root=$(mkroot)
add_kernel "$root" 6.1.0-40-amd64 "$CFG/debian12-amd64.config"
mkdir -p "$root/etc/default/grub.d" "$root/usr/sbin" "$root/boot/grub"
image_program "$root"
cp "$FIX/grub/debian/default-grub" "$root/etc/default/grub"
# shellcheck disable=SC2016 # grub-mkconfig's ${sysconfdir}, literally
printf '#! /bin/sh\nfor x in ${sysconfdir}/default/grub.d/*.cfg ; do :; done\n' >"$root/usr/sbin/grub-mkconfig"
chmod 0755 "$root/usr/sbin/grub-mkconfig"
# the menu as 10_linux writes it: "ro ${GRUB_CMDLINE_LINUX} ${GRUB_CMDLINE_LINUX_DEFAULT}"
printf 'menuentry Debian {\n\tlinux\t/boot/vmlinuz-6.1.0-40-amd64 root=/dev/sda1 ro  quiet\n}\n' >"$root/boot/grub/grub.cfg"
printf '[policy]\nmode = off\n' | write_policy "$root/etc/memcg-policy.conf"
golden apply-dry-run-grub-debian "$MEMCG_POLICY" --root "$root" apply --dry-run
expect_exit "GRUB dry run -v: exit 0" 0 "$MEMCG_POLICY" -v --root "$root" apply --dry-run
check "GRUB dry run -v: the drop-in's diff" grep -qF '+# 99-memcg-policy.cfg - GRUB drop-in of memcg-policy' <<<"$OUT"

# --- the live system, in a private mount namespace: /etc/kernel/cmdline
# with the decision, the booted line without it (reboot needed), the
# kernel's config a fixture's
if [ "$(id -u)" -ne 0 ] || ! unshare -m true 2>/dev/null ||
	[ "$(awk '$1 == "memory" { print $4 }' /proc/cgroups)" != 1 ]; then
	echo "SKIP: the live case needs root, mount namespaces and memcg on in the running kernel"
	exit 0
fi
root=$(mkroot)
printf '[policy]\nmode = off\n[bootloaders]\ngrub = no\nkernel-cmdline = yes\n' |
	write_policy "$root/policy.conf"
printf 'root=/dev/vda ro console=ttyS0\n' >"$root/cmdline.booted"
cp "$CFG/debian12-amd64.config" "$root/config"
gzip -c "$root/config" >"$root/config.gz"
live() {
	# shellcheck disable=SC2016 # the script's variables are its own
	unshare -m --propagation private bash -c '
		w=$1; shift
		mkdir -p /etc/kernel /etc/default /var/lib/memcg-policy || exit 90
		for d in /etc/kernel /etc/default /var/lib/memcg-policy /run /boot; do
			mount -t tmpfs none "$d" || exit 90
		done
		printf "root=/dev/vda ro console=ttyS0 cgroup_disable=memory\n" >/etc/kernel/cmdline
		mount --bind "$w/cmdline.booted" /proc/cmdline || exit 90
		if [ -e /proc/config.gz ]; then
			mount --bind "$w/config.gz" /proc/config.gz || exit 90
		else
			cp "$w/config" "/boot/config-$(uname -r)" || exit 90
		fi
		exec "$@"
	' - "$root" "$@"
}
golden status-live-reboot-needed live "$MEMCG_POLICY" --config "$root/policy.conf" status
golden check-live-reboot-needed live "$MEMCG_POLICY" --config "$root/policy.conf" check
live "$MEMCG_POLICY" --config "$root/policy.conf" check --nfd "$root/nfd" >/dev/null 2>&1
expect_eq "check --nfd on the live system while a reboot is needed: pending" "$(cat "$root/nfd")" "memcg-policy.memcg=pending"
