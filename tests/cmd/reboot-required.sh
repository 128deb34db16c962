#!/bin/bash
# Debian's reboot convention: a run on the live system that leaves the next
# boot's memcg unlike the running kernel's adds "memcg-policy" to
# /run/reboot-required.pkgs and creates /run/reboot-required ("*** System
# restart required ***"), as update-notifier-common's
# notify-reboot-required writes them; a later run after which no reboot is
# needed takes its line out, and both files where it was the only one.
# Never with --root, never from a dry run.
#
# On the live system, in a private mount namespace: /run, /etc/kernel and
# /var/lib/memcg-policy are directories of the test bound over the real
# ones (so what one run leaves the next one sees), the booted line a file
# bound over /proc/cmdline, the boot configuration /etc/kernel/cmdline;
# the running state is the machine's own (memcg on).
. "$TOP/tests/lib.sh"
if [ "$(id -u)" -ne 0 ] || ! unshare -m true 2>/dev/null; then
	echo "SKIP: needs root and mount namespaces"
	exit 0
fi
if [ ! -e /etc/debian_version ]; then
	echo "SKIP: not a Debian-family system"
	exit 0
fi
running=$(awk '$1 == "memory" { print ($4 == 1) ? "on" : "off" }' /proc/cgroups)
if [ "$running" != on ]; then
	echo "SKIP: the running kernel has memcg $running; these cases need it on"
	exit 0
fi
W=$(mkroot)
mkdir -p "$W/run" "$W/etc-kernel" "$W/var-lib"
printf '[policy]\nmode = on\n[bootloaders]\ngrub = no\nkernel-cmdline = yes\n' | write_policy "$W/policy.conf"
# the booted line: the real one without any memcg switch
sed -e 's/cgroup_disable=memory//g' -e 's/cgroup_enable=memory//g' /proc/cmdline >"$W/cmdline.booted"
printf 'root=/dev/sda1 ro quiet\n' >"$W/etc-kernel/cmdline"

# live ARGS...: the tool on the live system, in the namespace
live() {
	local o e
	o=$(mktemp) e=$(mktemp)
	# shellcheck disable=SC2016 # the script's variables are its own
	unshare -m --propagation private bash -c '
		w=$1; shift
		mkdir -p /etc/kernel /var/lib/memcg-policy || exit 90
		mount --bind "$w/run" /run || exit 90
		mount --bind "$w/etc-kernel" /etc/kernel || exit 90
		mount --bind "$w/var-lib" /var/lib/memcg-policy || exit 90
		mount --bind "$w/cmdline.booted" /proc/cmdline || exit 90
		exec "$@"
	' - "$W" "$MEMCG_POLICY" --config "$W/policy.conf" "$@" >"$o" 2>"$e"
	RC=$?
	OUT=$(cat "$o") ERR=$(cat "$e")
	rm -f "$o" "$e"
}
flag=$W/run/reboot-required
pkgs=$W/run/reboot-required.pkgs
has() { case $2 in *"$3"*) pass "$1" ;; *) fail "$1" "no: $3" "in: $2" ;; esac; }

live check
expect_eq "in sync to begin with (mode on, memcg on, nothing to add)" "$RC" 0

# a dry run writes nothing
live set off --dry-run
expect_eq "set off --dry-run: exit 0" "$RC" 0
check "set off --dry-run: no /run/reboot-required" test ! -e "$flag"
check "set off --dry-run: no /run/reboot-required.pkgs" test ! -e "$pkgs"

# set off: the next boot has memcg off, the running kernel on
live set off
expect_eq "set off: exit 0" "$RC" 0
has "set off: says a reboot is needed" "$OUT" "reboot needed"
expect_eq "set off: /run/reboot-required as Debian's packages write it" "$(cat "$flag" 2>&1)" "*** System restart required ***"
expect_eq "set off: /run/reboot-required.pkgs names the package" "$(cat "$pkgs" 2>&1)" memcg-policy
expect_eq "set off: both mode 0644" "$(stat -c %a "$flag" "$pkgs" 2>&1 | tr '\n' ' ')" "644 644 "
live set off
expect_eq "set off again: the package named once" "$(cat "$pkgs" 2>&1)" memcg-policy

# set on: the next boot as running: the note goes, both files (it was the only one)
live set on
expect_eq "set on: exit 0" "$RC" 0
check "set on: /run/reboot-required gone (memcg-policy was the only package)" test ! -e "$flag"
check "set on: /run/reboot-required.pkgs gone" test ! -e "$pkgs"

# beside another package's note: ours added after it, taken out alone
printf '*** System restart required ***\n' >"$flag"
printf 'linux-image-6.1.0-41-amd64\n' >"$pkgs"
live set off
expect_eq "set off after a kernel update's note: both packages listed" "$(cat "$pkgs" 2>&1)" \
	"$(printf 'linux-image-6.1.0-41-amd64\nmemcg-policy')"
live revert
expect_eq "revert: exit 0" "$RC" 0
check "revert: /run/reboot-required stays (the kernel update still needs it)" test -e "$flag"
expect_eq "revert: only the kernel update's line is left" "$(cat "$pkgs" 2>&1)" linux-image-6.1.0-41-amd64
rm -f "$flag" "$pkgs"

# revert of a change that needed a reboot: the note goes again
live set off
check "set off: the note is there" test -e "$flag"
live revert
expect_eq "revert after set off: exit 0" "$RC" 0
check "revert after set off: /run/reboot-required gone" test ! -e "$flag"
live set on
rm -f "$flag" "$pkgs"

# --root: an image's change never says anything about this machine's reboot
root=$(mkroot)
add_kernel "$root" 6.1.0-41-amd64 "$FIX/configs/debian12-amd64.config"
mkdir -p "$root/etc/kernel"
printf 'root=/dev/sda1 ro quiet\n' >"$root/etc/kernel/cmdline"
live --root "$root" set off
expect_eq "--root set off: exit 0" "$RC" 0
check "--root set off: the image's cmdline changed" grep -q cgroup_disable=memory "$root/etc/kernel/cmdline"
check "--root set off: no /run/reboot-required on the host" test ! -e "$flag"
check "--root set off: none in the image either" test ! -e "$root/run/reboot-required"

# The real consumer: unattended-upgrades' own code, which reboots a
# machine with Automatic-Reboot set when /var/run/reboot-required is
# there (/var/run is /run). Run in the namespace against the note the
# tool left, with /sbin/shutdown a stand-in that records how it was
# called.
if [ ! -x /usr/bin/unattended-upgrade ] || ! /usr/bin/python3 -c 'import apt_pkg' 2>/dev/null || [ ! -e /sbin/shutdown ]; then
	fail "unattended-upgrades (and python3-apt, /sbin/shutdown) are installed (.ci/packages)"
	exit 0
fi
printf '#!/bin/sh\necho "$@" >>%s/shutdown.calls\n' "$W" >"$W/shutdown"
chmod 0755 "$W/shutdown"
uu_reboot() { # the decision unattended-upgrades takes at the end of its run
	rm -f "$W/shutdown.calls"
	# shellcheck disable=SC2016 # the script's variables are its own
	unshare -m --propagation private bash -c '
		w=$1
		mount --bind "$w/run" /run || exit 90
		mount --bind "$w/shutdown" /sbin/shutdown || exit 90
		exec /usr/bin/python3 -c "
import importlib.machinery, importlib.util
loader = importlib.machinery.SourceFileLoader(\"uu\", \"/usr/bin/unattended-upgrade\")
spec = importlib.util.spec_from_loader(\"uu\", loader)
uu = importlib.util.module_from_spec(spec)
loader.exec_module(uu)
import apt_pkg
apt_pkg.init_config()
apt_pkg.config.set(\"Unattended-Upgrade::Automatic-Reboot\", \"true\")
uu.reboot_if_requested_and_needed()
"' - "$W" >"$W/uu.out" 2>&1
}
live set off
uu_reboot
expect_eq "unattended-upgrades, after set off: it reboots the machine (shutdown -r now)" \
	"$(cat "$W/shutdown.calls" 2>&1)" "-r now"
live set on
uu_reboot
check "unattended-upgrades, after set on (no reboot needed): it does not reboot" test ! -e "$W/shutdown.calls"
