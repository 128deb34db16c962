#!/bin/bash
# grub-cmdline: the plumbing the GRUB drop-in calls. It applies the tokens
# the last apply recorded (/var/lib/memcg-policy/grub.tokens), never the
# policy, to GRUB_CMDLINE_LINUX and GRUB_CMDLINE_LINUX_DEFAULT read as the
# one line the kernel gets; without data it changes nothing; any error
# gives no output and a non-zero exit.
# shellcheck source=../lib.sh disable=SC1091,SC2016 # literal ${sysconfdir} in a fixture script
. "$TOP/tests/lib.sh"
CFG="$FIX/configs"

# grub_root: a root with GRUB (Debian's grub-mkconfig, a menu) and kernels
grub_root() {
	local r
	r=$(mkroot)
	mkdir -p "$r/etc/default" "$r/usr/sbin" "$r/boot/grub"
	cp /usr/sbin/grub-mkconfig "$r/usr/sbin/" 2>/dev/null ||
		printf '#! /bin/sh\nfor x in ${sysconfdir}/default/grub.d/*.cfg ; do :; done\n' >"$r/usr/sbin/grub-mkconfig"
	chmod 0755 "$r/usr/sbin/grub-mkconfig"
	image_program "$r"
	printf 'GRUB_CMDLINE_LINUX=""\n' >"$r/etc/default/grub"
	: >"$r/boot/grub/grub.cfg"
	echo "$r"
}
tokens() { mkdir -p "$1/var/lib/memcg-policy" && cat >"$1/var/lib/memcg-policy/grub.tokens"; }

root=$(grub_root)
add_kernel "$root" 6.1.0-41-amd64 "$CFG/debian12-amd64.config"

expect_exit "no data: exit 0" 0 "$MEMCG_POLICY" --root "$root" grub-cmdline -- 'quiet cgroup_enable=memory' 'splash  x'
expect_eq "no data: both values unchanged" "$OUT" "$(printf 'quiet cgroup_enable=memory\nsplash  x')"

printf '[policy]\nmode = off\n' | write_policy "$root/etc/memcg-policy.conf"
expect_exit "apply off records the tokens" 0 "$MEMCG_POLICY" --root "$root" apply
expect_eq "the recorded tokens" "$(grep -v '^#' "$root/var/lib/memcg-policy/grub.tokens")" \
	"$(printf 'add cgroup_disable=memory\nremove cgroup_enable=memory\nlimit 2047')"

expect_exit "off: exit 0" 0 "$MEMCG_POLICY" --root "$root" grub-cmdline -- 'root=/dev/sda1 cgroup_enable=memory' 'quiet cgroup-enable=memory splash'
expect_eq "off: added to LINUX, contradicting tokens out of both" "$OUT" \
	"$(printf 'root=/dev/sda1 cgroup_disable=memory\nquiet splash')"
# what it takes out of the admin's values is said on stderr, which
# update-grub shows while it runs
expect_eq "off: says what it took out of each variable" "$ERR" "$(printf '%s\n' \
	"memcg-policy: GRUB_CMDLINE_LINUX: cgroup_enable=memory taken out for the menu, by the decision the last apply recorded (/var/lib/memcg-policy/grub.tokens); the file that sets it keeps it" \
	"memcg-policy: GRUB_CMDLINE_LINUX_DEFAULT: cgroup-enable=memory taken out for the menu, by the decision the last apply recorded (/var/lib/memcg-policy/grub.tokens); the file that sets it keeps it")"
expect_exit "off, an item of a list: exit 0" 0 "$MEMCG_POLICY" --root "$root" grub-cmdline -- 'ro' 'cgroup_enable=memory,cpuset'
expect_eq "off, an item of a list: says what is left of it" "$ERR" \
	"memcg-policy: GRUB_CMDLINE_LINUX_DEFAULT: cgroup_enable=memory,cpuset (cgroup_enable=cpuset left) taken out for the menu, by the decision the last apply recorded (/var/lib/memcg-policy/grub.tokens); the file that sets it keeps it"
expect_exit "off, nothing of the admin's to take out: exit 0" 0 "$MEMCG_POLICY" --root "$root" grub-cmdline -- 'ro' 'quiet'
expect_eq "off, nothing of the admin's to take out: nothing said (adding is the decision's)" "$ERR" ""
expect_exit "-q: exit 0" 0 "$MEMCG_POLICY" -q --root "$root" grub-cmdline -- 'ro cgroup_enable=memory' 'quiet'
expect_eq "-q: nothing said" "$ERR" ""
expect_exit "-- in LINUX: exit 0" 0 "$MEMCG_POLICY" --root "$root" grub-cmdline -- 'a cgroup_enable=memory -- single' 'cgroup_enable=memory'
expect_eq "-- in LINUX: added before it; DEFAULT goes to init and stays" "$OUT" \
	"$(printf 'a cgroup_disable=memory -- single\ncgroup_enable=memory')"
expect_exit "open quote in LINUX: exit 0" 0 "$MEMCG_POLICY" --root "$root" grub-cmdline -- 'a foo="x' 'cgroup_enable=memory" cgroup_enable=memory q'
expect_eq "open quote in LINUX: the quoted part of DEFAULT is a value, the rest is edited" "$OUT" \
	"$(printf 'a cgroup_disable=memory foo="x\ncgroup_enable=memory" q')"
expect_exit "token in DEFAULT only: exit 0" 0 "$MEMCG_POLICY" --root "$root" grub-cmdline -- 'ro' 'cgroup_disable=memory quiet'
expect_eq "token in DEFAULT only: into LINUX (recovery), once for normal entries" "$OUT" \
	"$(printf 'ro cgroup_disable=memory\nquiet')"
expect_exit "one VALUE: exit 0" 0 "$MEMCG_POLICY" --root "$root" grub-cmdline 'quiet  "a b"   cgroup_enable=memory'
expect_eq "one VALUE: LINUX alone, other bytes kept" "$OUT" 'quiet  "a b" cgroup_disable=memory'
expect_exit "--no-add: exit 0" 0 "$MEMCG_POLICY" --root "$root" grub-cmdline --no-add 'quiet cgroup_enable=memory'
expect_eq "--no-add: only takes out" "$OUT" "quiet"

printf '[policy]\nmode = sometimes\n' | write_policy "$root/etc/memcg-policy.conf"
expect_exit "a policy error: still exit 0 (the policy is never read)" 0 "$MEMCG_POLICY" --root "$root" grub-cmdline -- 'a cgroup_enable=memory' ''
expect_eq "a policy error: the last applied state" "$OUT" "a cgroup_disable=memory"

printf 'add cgroup_disable=memory\nadd init=/bin/sh\n' | tokens "$root"
expect_exit "data with a foreign token: exit 3" 3 "$MEMCG_POLICY" --root "$root" grub-cmdline -- 'a' 'b'
expect_eq "data with a foreign token: no output" "$OUT" ""
case $ERR in
*"/var/lib/memcg-policy/grub.tokens:2: "*) pass "data with a foreign token: FILE:LINE" ;;
*) fail "data with a foreign token: FILE:LINE" "$ERR" ;;
esac
printf 'add cgroup_disable=memory\n' | tokens "$root"
expect_exit "a line break in a value: exit 3" 3 "$MEMCG_POLICY" --root "$root" grub-cmdline -- "$(printf 'a\nb')" ''
expect_eq "a line break in a value: no output" "$OUT" ""
expect_exit "no VALUE: exit 2" 2 "$MEMCG_POLICY" --root "$root" grub-cmdline
expect_exit "three VALUEs: exit 2" 2 "$MEMCG_POLICY" --root "$root" grub-cmdline a b c

# one menu line for kernels that disagree on cgroup_enable=: added for the
# kernel that needs it (on mainline an init variable nobody reads), as
# issue 30 asks; tests/cmd/grub-one-line.sh has the rest
mixed=$(grub_root)
add_kernel "$mixed" 3.16.0-11-amd64 "$CFG/debian8-3.16-amd64.config"
add_kernel "$mixed" 6.1.0-41-amd64 "$CFG/debian12-amd64.config"
printf '[policy]\nmode = on\n' | write_policy "$mixed/etc/memcg-policy.conf"
expect_exit "mixed menu, mode on: apply" 0 "$MEMCG_POLICY" --root "$mixed" apply
expect_eq "mixed menu: cgroup_enable=memory recorded" "$(grep -c '^add cgroup_enable=memory$' "$mixed/var/lib/memcg-policy/grub.tokens")" 1
expect_exit "mixed menu: grub-cmdline" 0 "$MEMCG_POLICY" --root "$mixed" grub-cmdline -- 'cgroup_disable=memory' 'q'
expect_eq "mixed menu: disable out, enable added" "$OUT" "$(printf 'cgroup_enable=memory\nq')"

# the recorded limit: an edit that would make the line longer than the
# menu's kernels keep adds nothing, and still takes out; a pair already
# over it is warned about
printf 'add cgroup_disable=memory\nremove cgroup_enable=memory\nlimit 60\n' | tokens "$root"
lin='root=/dev/sda1 ro cgroup_enable=memory console=ttyS0,115200'
expect_exit "over the recorded limit: exit 0" 0 "$MEMCG_POLICY" --root "$root" grub-cmdline -- "$lin" 'quiet'
expect_eq "over the recorded limit: taken out, nothing added" "$OUT" \
	"$(printf 'root=/dev/sda1 ro console=ttyS0,115200\nquiet')"
case $ERR in
*"longer than the 60 bytes the menu's kernels keep: nothing added, only taken out"*) pass "over the recorded limit: says so" ;;
*) fail "over the recorded limit: says so" "$ERR" ;;
esac
expect_exit "already over it: exit 0" 0 "$MEMCG_POLICY" --root "$root" grub-cmdline -- "$lin x=$(printf 'y%.0s' {1..30})" 'quiet'
case $ERR in
*"longer than the 60 the menu's kernels keep: the end of the line is lost at boot"*) pass "already over it: warned" ;;
*) fail "already over it: warned" "$ERR" ;;
esac
