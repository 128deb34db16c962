#!/bin/bash
# A boot file system that is not mounted is not a boot file system whose
# entries are gone: apply and revert keep the journal's records of its
# files and say so; once it is back, revert takes the tokens out. A file
# really gone from a boot file system that is there (a removed kernel's
# entry) still ends its record.
. "$TOP/tests/lib.sh"
CFG=$FIX/configs/debian12-amd64.config
MID=0f5e2c8d7a6b4c3e9d1f2a3b4c5d6e7f
K1=6.8.11-300.fc40.x86_64
K2=6.9.7-200.fc40.x86_64

setup() {
	root=$(mkroot)
	cp -a "$FIX/roots/systemd-boot-xbootldr/." "$root/"
	add_kernel "$root" "$K1" "$CFG"
	add_kernel "$root" "$K2" "$CFG"
	printf '[policy]\nmode = off\n' | write_policy "$root/etc/memcg-policy.conf"
	e1=$root/boot/loader/entries/$MID-$K1.conf
	e2=$root/boot/loader/entries/$MID-$K2.conf
	journal=$root/var/lib/memcg-policy/journal.json
	stash=$(mkroot)
}
# XBOOTLDR at /boot "unmounted": what it holds leaves the root's /boot,
# which keeps only the root file system's own files (the kernels)
unmount_boot() { mv "$root/boot/loader" "$root/boot/$MID" "$stash/"; }
mount_boot() { mv "$stash/loader" "$stash/$MID" "$root/boot/"; }
kcl_untokened() { sed -i 's/ cgroup_disable=memory//' "$root/etc/kernel/cmdline"; }
lacks_token() { ! grep -qw cgroup_disable=memory "$1"; }
not_in_journal() { ! grep -qF "$1" "$journal"; }
in_journal() { grep -qF "\"/boot/loader/entries/$MID-$1.conf\"" "$journal"; }

setup
expect_exit "apply" 0 "$MEMCG_POLICY" --root "$root" apply
check "apply: the entries have the token" grep -qw cgroup_disable=memory "$e2"
check "apply: the journal has the entry's record" in_journal "$K2"

unmount_boot
# an admin's edit that apply writes again: it rewrites the journal
kcl_untokened
expect_exit "XBOOTLDR not mounted: apply" 0 "$MEMCG_POLICY" --root "$root" apply
check "XBOOTLDR not mounted: apply keeps the entries' records" in_journal "$K2"
case $ERR in
*"/boot: not mounted: 2 records kept"*) pass "XBOOTLDR not mounted: apply says so" ;;
*) fail "XBOOTLDR not mounted: apply says so" "$ERR" ;;
esac
expect_exit "XBOOTLDR not mounted: revert" 0 "$MEMCG_POLICY" --root "$root" revert
check "XBOOTLDR not mounted: revert keeps the entries' records" in_journal "$K2"
case $ERR in
*"/boot: not mounted: 2 records kept"*) pass "XBOOTLDR not mounted: revert says so" ;;
*) fail "XBOOTLDR not mounted: revert says so" "$ERR" ;;
esac

mount_boot
expect_exit "XBOOTLDR mounted again: revert" 0 "$MEMCG_POLICY" --root "$root" revert
check "XBOOTLDR mounted again: revert took the token out of the first entry" \
	lacks_token "$e1"
check "XBOOTLDR mounted again: and out of the second" lacks_token "$e2"
check "XBOOTLDR mounted again: the entries as before apply" \
	cmp -s "$e2" "$FIX/roots/systemd-boot-xbootldr/boot/loader/entries/$MID-$K2.conf"

# a removed kernel's entry on a mounted XBOOTLDR: its record ends
setup
expect_exit "entry removed: apply" 0 "$MEMCG_POLICY" --root "$root" apply
rm -f "$e1"
rm -rf "${root:?}/lib/modules/$K1" "$root/boot/vmlinuz-$K1" "$root/boot/config-$K1"
kcl_untokened
expect_exit "entry removed: apply again" 0 "$MEMCG_POLICY" --root "$root" apply
check "entry removed: its record ended" not_in_journal "$MID-$K1.conf"
check "entry removed: the other one's stays" in_journal "$K2"
case $ERR in
*"not mounted"*) fail "entry removed: nothing said about mounts" "$ERR" ;;
*) pass "entry removed: nothing said about mounts" ;;
esac
