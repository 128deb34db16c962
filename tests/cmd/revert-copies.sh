#!/bin/bash
# revert takes the tool's tokens out of the entries the real kernel-install
# (systemd's, with its own 90-loaderentry.install entry writer and without
# the tool's plugin) wrote from /etc/kernel/cmdline after apply had edited
# it; an entry the admin wrote with the same tokens stays as it is.
. "$TOP/tests/lib.sh"
skip() { echo "SKIP: $1 ($2)"; }

LOADERENTRY=''
for d in /usr/lib/kernel/install.d /lib/kernel/install.d; do
	[ -x "$d/90-loaderentry.install" ] && LOADERENTRY=$d/90-loaderentry.install && break
done
if ! command -v kernel-install >/dev/null || [ -z "$LOADERENTRY" ]; then
	skip "revert of copies" "systemd's kernel-install or 90-loaderentry.install not installed"
	exit 0
fi

MID=0123456789abcdef0123456789abcdef
OLD=6.1.0-40-amd64
NEW=6.1.0-41-amd64
CFG=$FIX/configs/debian12-amd64.config

# setup TOKEN: a kernel-install root (layout=bls) with one kernel and its
# entry; TOKEN is the entry token ("" for none: kernel-install then names
# entries by the machine id and adds systemd.machine_id= to their options)
setup() {
	root=$(mkroot)
	mkdir -p "$root/etc/kernel" "$root/boot/loader/entries"
	printf 'root=UUID=0c1d ro quiet\n' >"$root/etc/kernel/cmdline"
	printf 'layout=bls\n' >"$root/etc/kernel/install.conf"
	printf '%s\n' "$MID" >"$root/etc/machine-id"
	tok=$1
	[ -n "$tok" ] && printf '%s\n' "$tok" >"$root/etc/kernel/entry-token"
	add_kernel "$root" "$OLD" "$CFG"
	add_kernel "$root" "$NEW" "$CFG"
	printf '[policy]\nmode = off\n' | write_policy "$root/etc/memcg-policy.conf"
	ki add "$OLD"
	orig=$(mkroot)
	cp -a "$root/." "$orig/"
}

# ki add|remove VER: the real kernel-install on the root, its entry writer only
ki() {
	env KERNEL_INSTALL_PLUGINS="$LOADERENTRY" KERNEL_INSTALL_CONF_ROOT="$root/etc/kernel" \
		BOOT_ROOT="$root/boot" MACHINE_ID="$MID" kernel-install "$1" "$2" "$root/boot/vmlinuz-$2" >/dev/null 2>&1
}

entry_of() { echo "$root/boot/loader/entries/${tok:-$MID}-$1.conf"; }
opts() { sed -n 's/^options[[:space:]]*//p' "$1"; }

for tok in memcgtest ""; do
	name="token ${tok:-machine-id}"
	setup "$tok"
	check "$name: kernel-install wrote the first entry" test -f "$(entry_of "$OLD")"
	expect_exit "$name: apply" 0 "$MEMCG_POLICY" --root "$root" apply
	check "$name: apply: /etc/kernel/cmdline has the token" grep -qw cgroup_disable=memory "$root/etc/kernel/cmdline"
	check "$name: apply: the first entry has it" grep -qw cgroup_disable=memory "$(entry_of "$OLD")"
	check "$name: kernel-install add of a new kernel" ki add "$NEW"
	new_entry=$(entry_of "$NEW")
	check "$name: the new entry has the token, copied from /etc/kernel/cmdline" grep -qw cgroup_disable=memory "$new_entry"
	new_before=$(cat "$new_entry")
	# the admin's own entry with the token, options of their own
	admin=$root/boot/loader/entries/${tok:-$MID}-rescue.conf
	printf 'title Rescue\nversion %s\noptions root=UUID=0c1d ro single cgroup_disable=memory\nlinux /vmlinuz-%s\n' "$OLD" "$OLD" >"$admin"
	admin_before=$(cat "$admin")

	expect_exit "$name: revert --dry-run" 0 "$MEMCG_POLICY" --root "$root" revert --dry-run
	check "$name: revert --dry-run shows the new entry's diff" grep -qF "+++ b/boot/loader/entries/${tok:-$MID}-$NEW.conf" <<<"$OUT"
	expect_eq "$name: revert --dry-run writes nothing" "$(cat "$new_entry")" "$new_before"
	expect_exit "$name: revert" 0 "$MEMCG_POLICY" --root "$root" revert
	check "$name: revert says it restored the copy" grep -qF "restored /boot/loader/entries/${tok:-$MID}-$NEW.conf" <<<"$OUT"
	expect_eq "$name: revert: /etc/kernel/cmdline as it was" "$(cat "$root/etc/kernel/cmdline")" "$(cat "$orig/etc/kernel/cmdline")"
	expect_eq "$name: revert: the first entry as it was" "$(cat "$(entry_of "$OLD")")" "$(cat "$orig/boot/loader/entries/${tok:-$MID}-$OLD.conf")"
	expect_eq "$name: revert: the new entry without the token, every other byte kept" "$(cat "$new_entry")" \
		"${new_before// cgroup_disable=memory/}"
	# what kernel-install writes for the new kernel without the tool
	kept=$(cat "$new_entry")
	check "$name: kernel-install remove of the new kernel" ki remove "$NEW"
	check "$name: kernel-install add it again, after the revert" ki add "$NEW"
	expect_eq "$name: revert left the entry kernel-install writes without the tool" "$(opts "$new_entry")" "$(sed -n 's/^options[[:space:]]*//p' <<<"$kept")"
	expect_eq "$name: the admin's entry with the token left as it is" "$(cat "$admin")" "$admin_before"
	check "$name: revert warns about the admin's entry" grep -qF "${tok:-$MID}-rescue.conf has the tool's arguments" <<<"$ERR"
	expect_exit "$name: a second revert" 0 "$MEMCG_POLICY" --root "$root" revert
	expect_eq "$name: a second revert has nothing to do" "$(head -n 1 <<<"$OUT")" "nothing to revert"
done

# With the machine id as entry token, kernel-install adds systemd.machine_id=
# to the copy: that is still a copy.
check "token machine-id: kernel-install put systemd.machine_id= in the new entry" grep -q "systemd.machine_id=$MID" "$new_entry"

# A boot file that cannot be read (NUL bytes: bad input) keeps revert from
# looking at the copies, never from reverting the journal's files.
setup memcgtest
expect_exit "unreadable entry: apply" 0 "$MEMCG_POLICY" --root "$root" apply
check "unreadable entry: kernel-install add of a new kernel" ki add "$NEW"
printf 'title x\0\noptions quiet\nlinux /vmlinuz-%s\n' "$OLD" >"$root/boot/loader/entries/memcgtest-broken.conf"
expect_exit "unreadable entry: revert exits 0" 0 "$MEMCG_POLICY" --root "$root" revert
expect_eq "unreadable entry: /etc/kernel/cmdline as it was" "$(cat "$root/etc/kernel/cmdline")" "$(cat "$orig/etc/kernel/cmdline")"
check "unreadable entry: revert says the copies were not looked at" grep -qF "were not looked at" <<<"$ERR"
check "unreadable entry: the copy keeps its token" grep -qw cgroup_disable=memory "$(entry_of "$NEW")"

# set on after a copy was made: the tool takes its own token out of the
# copy, and revert does not give it back as if the admin had written it.
setup memcgtest
expect_exit "on over a copy: apply off" 0 "$MEMCG_POLICY" --root "$root" apply
check "on over a copy: kernel-install add of a new kernel" ki add "$NEW"
check "on over a copy: the copy has the token" grep -qw cgroup_disable=memory "$(entry_of "$NEW")"
printf '[policy]\nmode = on\n' | write_policy "$root/etc/memcg-policy.conf"
expect_exit "on over a copy: apply on" 0 "$MEMCG_POLICY" --root "$root" apply
check "on over a copy: the token is out of the copy" test "$(grep -cw cgroup_disable=memory "$(entry_of "$NEW")")" -eq 0
expect_exit "on over a copy: revert" 0 "$MEMCG_POLICY" --root "$root" revert
check "on over a copy: revert leaves the copy without the tool's token" test "$(grep -cw cgroup_disable=memory "$(entry_of "$NEW")")" -eq 0
expect_eq "on over a copy: /etc/kernel/cmdline as it was" "$(cat "$root/etc/kernel/cmdline")" "$(cat "$orig/etc/kernel/cmdline")"
