#!/bin/bash
# revert works on the files as they are now: every change made after the
# tool's first apply (an admin's edit, a config manager's template) stays,
# whether it came before another apply that wrote the file or after the
# last one; only the tool's tokens leave and the admin's come back. A file
# the tool created goes only while it holds exactly what the tool wrote.
. "$TOP/tests/lib.sh"
CFG=$FIX/configs/debian12-amd64.config
MID=0f5e2c8d7a6b4c3e9d1f2a3b4c5d6e7f
K1=6.8.11-300.fc40.x86_64
K2=6.9.7-200.fc40.x86_64

# a systemd-boot root (XBOOTLDR at /boot) without /etc/kernel/cmdline
setup_bls() {
	root=$(mkroot)
	cp -a "$FIX/roots/systemd-boot-xbootldr/." "$root/"
	add_kernel "$root" "$K1" "$CFG"
	add_kernel "$root" "$K2" "$CFG"
	printf '[policy]\nmode = off\n' | write_policy "$root/etc/memcg-policy.conf"
	entry=$root/boot/loader/entries/$MID-$K2.conf
	kcl=$root/etc/kernel/cmdline
}
apply() { expect_exit "$1: apply" 0 "$MEMCG_POLICY" --root "$root" apply; }
revert() { expect_exit "$1: revert" 0 "$MEMCG_POLICY" --root "$root" revert; }
lacks_token() { ! grep -qw cgroup_disable=memory "$1"; }
opts() { sed -n 's/^options[[:space:]]*//p' "$1"; }

# 1. An entry whose root= the admin fixed between two applies (a new root
# file system; the line rewritten without the token, so the second apply
# writes it again): revert keeps the new root=.
setup_bls
apply "entry edited between applies"
sed -i 's/^options.*/options    root=UUID=feedf00d-0000-4000-8000-000000000001 ro quiet/' "$entry"
want=$(cat "$entry")
apply "entry edited between applies: again"
check "entry edited between applies: the second apply put the token back" grep -qw cgroup_disable=memory "$entry"
revert "entry edited between applies"
expect_eq "entry edited between applies: revert keeps the new root=, bytes as the admin left them" \
	"$(cat "$entry")" "$want"

# 2. The same edit after the last apply, the token kept: only the token goes.
setup_bls
apply "entry edited after apply"
sed -i 's/root=UUID=[^ ]*/root=UUID=feedf00d-0000-4000-8000-000000000002/' "$entry"
revert "entry edited after apply"
expect_eq "entry edited after apply: revert keeps the new root=, the token out" "$(opts "$entry")" \
	"root=UUID=feedf00d-0000-4000-8000-000000000002 ro quiet systemd.machine_id=$MID"

# 3. /etc/kernel/cmdline created by the tool and then edited by the admin
# (a new root=, the token dropped), then applied again: revert keeps the
# file with the admin's line.
setup_bls
apply "created file edited between applies"
check "created file edited between applies: the tool created /etc/kernel/cmdline" test -f "$kcl"
printf 'root=UUID=feedf00d-0000-4000-8000-000000000003 ro quiet splash\n' >"$kcl"
apply "created file edited between applies: again"
check "created file edited between applies: the second apply put the token back" grep -qw cgroup_disable=memory "$kcl"
revert "created file edited between applies"
expect_eq "created file edited between applies: revert keeps the admin's file without the token" \
	"$(cat "$kcl" 2>&1)" "root=UUID=feedf00d-0000-4000-8000-000000000003 ro quiet splash"

# 4. The created file edited after the last apply: it stays, the token out.
setup_bls
apply "created file edited after apply"
sed -i 's/$/ splash/' "$kcl"
revert "created file edited after apply"
expect_eq "created file edited after apply: revert keeps it without the token" "$(cat "$kcl" 2>&1)" \
	"root=UUID=3b1d9f4e-7c2a-4e5b-8d6f-1a2b3c4d5e6f ro quiet splash"

# 5. The created file untouched since: revert removes it.
setup_bls
apply "created file untouched"
apply "created file untouched: again (nothing to do)"
revert "created file untouched"
check "created file untouched: revert removed it" test ! -e "$kcl"

# 6. A token the tool removed, an admin edit between two applies that
# write: revert keeps the edit and puts the admin's token back.
setup_bls
printf '[policy]\nmode = on\n' | write_policy "$root/etc/memcg-policy.conf"
sed -i 's/^options.*/& cgroup_disable=memory/' "$entry"
apply "removed token, edit between applies"
check "removed token, edit between applies: the token was taken out" \
	lacks_token "$entry"
sed -i 's/^options.*/options    root=UUID=feedf00d-0000-4000-8000-000000000004 ro cgroup_disable=memory/' "$entry"
apply "removed token, edit between applies: again"
revert "removed token, edit between applies"
expect_eq "removed token, edit between applies: revert keeps the edit, the admin's token back" \
	"$(opts "$entry")" "root=UUID=feedf00d-0000-4000-8000-000000000004 ro cgroup_disable=memory"

# 7. /etc/default/grub rewritten by a config manager between two applies
# (its template without the tool's marked line, a new timeout): revert
# keeps the template's settings. Upstream's layout (grub-mkconfig without
# Debian's grub.d loop), where the tool marks /etc/default/grub.
root=$(mkroot)
mkdir -p "$root/etc/default" "$root/boot/grub" "$root/usr/bin"
cp "$FIX/grub/upstream/etc/default/grub" "$root/etc/default/grub"
printf '#! /bin/sh\n. /etc/default/grub\n' >"$root/usr/bin/grub-mkconfig"
chmod 0755 "$root/usr/bin/grub-mkconfig"
# the package installed in the image: its program, for the marked line
image_program "$root" /usr/bin
add_kernel "$root" 6.1.0-40-amd64 "$CFG"
printf '[policy]\nmode = off\n' | write_policy "$root/etc/memcg-policy.conf"
apply "/etc/default/grub templated between applies"
check "/etc/default/grub templated between applies: marked" grep -q 'added by memcg-policy' "$root/etc/default/grub"
sed -e 's/^GRUB_TIMEOUT=.*/GRUB_TIMEOUT=3/' "$FIX/grub/upstream/etc/default/grub" >"$root/etc/default/grub"
want=$(cat "$root/etc/default/grub")
apply "/etc/default/grub templated between applies: again"
check "/etc/default/grub templated between applies: marked again" grep -q 'added by memcg-policy' "$root/etc/default/grub"
revert "/etc/default/grub templated between applies"
expect_eq "/etc/default/grub templated between applies: revert keeps GRUB_TIMEOUT=3" \
	"$(cat "$root/etc/default/grub")" "$want"

# 8. An admin's token the tool took out goes back where it was, also after
# a later edit (the undo then works on the current bytes): in the entry's
# options and in /etc/kernel/cmdline, between the same neighbours.
setup_bls
sed -i 's/^options\(\s*\)root=\([^ ]*\) ro/options\1root=\2 cgroup_enable=memory ro/' "$entry"
printf 'root=/dev/sda2 cgroup_enable=memory ro quiet splash\n' >"$kcl"
check "token back in place: the entry has the admin's cgroup_enable=memory" grep -q ' cgroup_enable=memory ro ' "$entry"
apply "token back in place"
check "token back in place: apply took it out of the entry" sh -c "! grep -qw cgroup_enable=memory '$entry'"
check "token back in place: and out of /etc/kernel/cmdline" sh -c "! grep -qw cgroup_enable=memory '$kcl'"
sed -i 's/ quiet/ quiet loglevel=3/' "$entry" "$kcl"
revert "token back in place"
expect_eq "token back in place: the entry has it between root= and ro again" \
	"$(opts "$entry" | sed 's/root=[^ ]*/root=R/')" "root=R cgroup_enable=memory ro quiet loglevel=3 systemd.machine_id=$MID"
expect_eq "token back in place: /etc/kernel/cmdline has it between root= and ro again" \
	"$(cat "$kcl")" "root=/dev/sda2 cgroup_enable=memory ro quiet loglevel=3 splash"
