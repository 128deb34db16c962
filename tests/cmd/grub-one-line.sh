#!/bin/bash
# The GRUB command line as the one line the kernels read (issue 30):
# GRUB_CMDLINE_LINUX and _DEFAULT reach the kernel joined by a space, one
# line serves every kernel of the menu, and the kernel keeps at most
# COMMAND_LINE_SIZE - 1 bytes of it. Each case runs `apply` on an image,
# then the real drop-in as grub-mkconfig runs it (/etc/default/grub and
# grub.d/*.cfg sourced by /bin/sh, the drop-in calling this build), and
# looks at the values the menu would get. The kernel-parser tier
# (make check-kparse) judges thousands of generated pairs the same way.
# shellcheck source=../lib.sh disable=SC1091,SC2016 # literal ${sysconfdir} in a fixture script
. "$TOP/tests/lib.sh"
CFG="$FIX/configs"

# grub_root LINUX DEFAULT: an image with Debian's GRUB, the package's files
# and the two values
grub_root() {
	local r
	r=$(mkroot)
	mkdir -p "$r/etc/default/grub.d" "$r/usr/sbin" "$r/boot/grub"
	cp /usr/sbin/grub-mkconfig "$r/usr/sbin/" 2>/dev/null ||
		printf '#! /bin/sh\nfor x in ${sysconfdir}/default/grub.d/*.cfg ; do :; done\n' >"$r/usr/sbin/grub-mkconfig"
	chmod 0755 "$r/usr/sbin/grub-mkconfig"
	image_program "$r"
	set_values "$r" "$1" "$2"
	echo "$r"
}
# set_values ROOT LINUX DEFAULT (single-quoted in the file)
set_values() {
	local q="'\\''"
	printf "GRUB_DEFAULT=0\nGRUB_CMDLINE_LINUX_DEFAULT='%s'\nGRUB_CMDLINE_LINUX='%s'\n" \
		"${3//\'/$q}" "${2//\'/$q}" >"$1/etc/default/grub"
}
# menu_values ROOT: the two values as grub-mkconfig has them after the
# drop-in, one a line; the drop-in's stderr in MENU_ERR
menu_values() {
	local w
	w=$(mktemp "${TMPDIR:-/tmp}/memcg-filter.XXXXXX")
	_tmpdirs+=("$w")
	printf '#!/bin/sh\nexec "%s" --root "%s" "$@"\n' "$MEMCG_POLICY" "$1" >"$w"
	chmod 0755 "$w"
	MENU=$(MEMCG_POLICY_FILTER=$w /bin/sh -c 'set -e; . "$1/etc/default/grub"
		for x in "$1"/etc/default/grub.d/*.cfg; do if [ -e "$x" ]; then . "$x"; fi; done
		printf "%s\n%s\n" "$GRUB_CMDLINE_LINUX" "$GRUB_CMDLINE_LINUX_DEFAULT"' sh "$1" 2>"$w.err")
	MENU_ERR=$(cat "$w.err")
	rm -f "$w.err"
}
policy() { printf '%b' "$2" | write_policy "$1/etc/memcg-policy.conf"; }
no_data() {
	if [ -e "$1/var/lib/memcg-policy/grub.tokens" ] || [ -e "$1/etc/default/grub.d/99-memcg-policy.cfg" ]; then
		fail "$2" "the GRUB data or drop-in was written"
	else
		pass "$2"
	fi
}
contains() {
	case $2 in
	*"$3"*) pass "$1" ;;
	*) fail "$1" "no '$3' in: $2" ;;
	esac
}

# ---- 1. the pair is one line ----

# An open quote in GRUB_CMDLINE_LINUX that _DEFAULT closes, around a
# cgroup_disable= value without a memory item ("cpu cpuset" is one item):
# the cgroup_disable=memory after it is a parameter of its own and goes
# (it used to be refused for the name alone, and the menu kept memcg off).
r=$(grub_root 'root=/dev/sda1 cgroup_disable="cpu' 'cpuset" cgroup_disable=memory quiet')
add_kernel "$r" 6.1.0-41-amd64 "$CFG/debian12-amd64.config"
policy "$r" '[policy]\nmode = on\n'
expect_exit "open quote across the pair: apply" 0 "$MEMCG_POLICY" --root "$r" apply
menu_values "$r"
expect_eq "open quote across the pair: the menu's values" "$MENU" \
	"$(printf '%s\n%s' 'root=/dev/sda1 cgroup_disable="cpu' 'cpuset" quiet')"

# The memory item inside a value the open quote makes: it cannot be taken
# out without changing how the kernel reads the rest: refused, file and
# line named, nothing written.
r=$(grub_root 'root=/dev/sda1 cgroup_disable=memory,"a' 'b",cpu quiet')
add_kernel "$r" 6.1.0-41-amd64 "$CFG/debian12-amd64.config"
policy "$r" '[policy]\nmode = on\n'
expect_exit "a list the pair makes: exit 3" 3 "$MEMCG_POLICY" --root "$r" apply
contains "a list the pair makes: file and line" "$ERR" "/etc/default/grub:3: cannot take memory out of the list"
no_data "$r" "a list the pair makes: nothing written"

# A "--" in GRUB_CMDLINE_LINUX: all of _DEFAULT goes to init; the token goes
# before the "--", init's arguments stay as they are.
r=$(grub_root 'root=/dev/sda1 -- single' 'cgroup_enable=memory quiet')
add_kernel "$r" 6.1.0-41-amd64 "$CFG/debian12-amd64.config"
policy "$r" '[policy]\nmode = off\n'
expect_exit "-- in LINUX: apply" 0 "$MEMCG_POLICY" --root "$r" apply
menu_values "$r"
expect_eq "-- in LINUX: before the --, init's arguments kept" "$MENU" \
	"$(printf '%s\n%s' 'root=/dev/sda1 cgroup_disable=memory -- single' 'cgroup_enable=memory quiet')"

# ---- 2. two kernels, one line ----

# Debian 12's 6.1 (mainline rules) and Debian 8's 3.16 (off by default,
# the last switch wins), mode on: cgroup_enable=memory is added for 3.16.
r=$(grub_root 'root=/dev/sda1' 'quiet cgroup_disable=memory')
add_kernel "$r" 3.16.0-11-amd64 "$CFG/debian8-3.16-amd64.config"
add_kernel "$r" 6.1.0-41-amd64 "$CFG/debian12-amd64.config"
policy "$r" '[policy]\nmode = on\n'
expect_exit "two kernels, on: apply" 0 "$MEMCG_POLICY" --root "$r" apply
menu_values "$r"
expect_eq "two kernels, on: enable added for 3.16, disable out" "$MENU" \
	"$(printf '%s\n%s' 'root=/dev/sda1 cgroup_enable=memory' 'quiet')"
# a menu made before: its 3.16 entry lacks the token; judged by 3.16's rules
printf '%s\n' "### BEGIN /etc/grub.d/10_linux ###" \
	"menuentry 'Debian' {" "	linux /boot/vmlinuz-6.1.0-41-amd64 root=/dev/sda1 quiet" "}" \
	"menuentry 'Debian 3.16' {" "	linux /boot/vmlinuz-3.16.0-11-amd64 root=/dev/sda1 quiet" "}" \
	"### END /etc/grub.d/10_linux ###" >"$r/boot/grub/grub.cfg"
json_run "two kernels, on: status --json" "$MEMCG_POLICY" --root "$r" --json status
expect_eq "two kernels, on: the old menu is not in sync" \
	"$(jq -r '.slots[] | select(.path == "/boot/grub/grub.cfg") | .state' <<<"$OUT")" "not-regenerated"
contains "two kernels, on: which line, which kernel" \
	"$(jq -r '.slots[] | select(.path == "/boot/grub/grub.cfg") | .note' <<<"$OUT")" \
	"lacks cgroup_enable=memory; 2 of 2 kernel command lines do not carry the decision"

# A kernel update: the hook runs apply --kernel for the new kernel alone,
# and the one line still serves the old one.
add_kernel "$r" 6.1.0-42-amd64 "$CFG/debian12-amd64.config"
expect_exit "two kernels, a kernel update: the hook" 0 "$MEMCG_POLICY" --root "$r" apply --kernel 6.1.0-42-amd64 --hook
expect_eq "two kernels, a kernel update: cgroup_enable=memory still recorded for 3.16" \
	"$(grep -c '^add cgroup_enable=memory$' "$r/var/lib/memcg-policy/grub.tokens")" 1

# Decided apart: 6.1 off, 3.16 on. Disable wins on 6.1, the last one on
# 3.16: cgroup_disable=memory then cgroup_enable=memory, in that order,
# wherever the administrator had them.
r=$(grub_root 'cgroup_enable=memory root=/dev/sda1' 'quiet')
add_kernel "$r" 3.16.0-11-amd64 "$CFG/debian8-3.16-amd64.config"
add_kernel "$r" 6.1.0-41-amd64 "$CFG/debian12-amd64.config"
policy "$r" '[policy]\nmode = on\n[kernel 6.1.*]\nmode = off\n[kernel 3.16.*]\nmode = on\n'
expect_exit "decided apart: apply" 0 "$MEMCG_POLICY" --root "$r" apply
menu_values "$r"
expect_eq "decided apart: both switches, in the order that serves both" "$MENU" \
	"$(printf '%s\n%s' 'root=/dev/sda1 cgroup_disable=memory cgroup_enable=memory' 'quiet')"
# a menu with them the other way round: 3.16 boots with memcg off
printf '%s\n' "### BEGIN /etc/grub.d/10_linux ###" \
	"menuentry 'Debian' {" "	linux /boot/vmlinuz-6.1.0-41-amd64 root=/dev/sda1 cgroup_enable=memory cgroup_disable=memory quiet" "}" \
	"menuentry 'Debian 3.16' {" "	linux /boot/vmlinuz-3.16.0-11-amd64 root=/dev/sda1 cgroup_enable=memory cgroup_disable=memory quiet" "}" \
	"### END /etc/grub.d/10_linux ###" >"$r/boot/grub/grub.cfg"
json_run "decided apart: status --json" "$MEMCG_POLICY" --root "$r" --json status
contains "decided apart: the wrong order is drift for 3.16" \
	"$(jq -r '.slots[] | select(.path == "/boot/grub/grub.cfg") | .note' <<<"$OUT")" \
	"line 6 (3.16.0-11-amd64) gives it memcg off, not on"

# Two kernels of one rule decided apart: no one line serves both.
r=$(grub_root 'root=/dev/sda1' 'quiet')
add_kernel "$r" 6.1.0-13-amd64 "$CFG/debian12-amd64.config"
add_kernel "$r" 6.1.0-41-amd64 "$CFG/debian12-amd64.config"
policy "$r" '[policy]\nmode = on\n[kernel 6.1.0-13-amd64]\nmode = off\n'
expect_exit "no one line: exit 3" 3 "$MEMCG_POLICY" --root "$r" apply
contains "no one line: names both kernels" "$ERR" "none gives 6.1.0-41-amd64 memcg on and 6.1.0-13-amd64 memcg off"
no_data "$r" "no one line: nothing written"
expect_exit "no one line, --kernel: exit 3 all the same" 3 "$MEMCG_POLICY" --root "$r" apply --kernel 6.1.0-41-amd64
no_data "$r" "no one line, --kernel: nothing written"

# ---- 3. the kernel's limit ----

long=root=/dev/sda1
i=0
while [ "${#long}" -lt 2090 ]; do
	i=$((i + 1))
	long="$long p$i=xxxxxxxxxxxxxxxxxxxxxxxx"
done
# already over 2047 bytes: every command says so, and the drop-in while
# update-grub runs
r=$(grub_root "$long" 'quiet')
add_kernel "$r" 6.1.0-41-amd64 "$CFG/debian12-amd64.config"
policy "$r" '[policy]\nmode = on\n'
expect_exit "over the limit: apply" 0 "$MEMCG_POLICY" --root "$r" apply
contains "over the limit: apply warns" "$ERR" "longer than the 2047 a x86 kernel keeps"
expect_exit "over the limit: status" 0 "$MEMCG_POLICY" --root "$r" status
contains "over the limit: status warns" "$ERR" "longer than the 2047"
expect_exit "over the limit: check" 0 "$MEMCG_POLICY" --root "$r" check
contains "over the limit: check warns" "$ERR" "longer than the 2047"
menu_values "$r"
contains "over the limit: the drop-in warns" "$MENU_ERR" "longer than the 2047 the menu's kernels keep"
# an edit that would make it longer still: refused
policy "$r" '[policy]\nmode = off\n'
expect_exit "over the limit, the token would make it longer: exit 3" 3 "$MEMCG_POLICY" --root "$r" apply
contains "over the limit, longer: says so" "$ERR" "over the 2047 a x86 kernel keeps"
# just under it: the token would cross it
r=$(grub_root "${long:0:2035}" '')
add_kernel "$r" 6.1.0-41-amd64 "$CFG/debian12-amd64.config"
policy "$r" '[policy]\nmode = off\n'
expect_exit "crossing the limit: exit 3" 3 "$MEMCG_POLICY" --root "$r" apply
contains "crossing the limit: file and line" "$ERR" "/etc/default/grub:3: GRUB_CMDLINE_LINUX and GRUB_CMDLINE_LINUX_DEFAULT would give normal entries a line of"
no_data "$r" "crossing the limit: nothing written"

# the recovery entries' line ("single LINUX") crosses it where the normal
# entries' does not
r=$(grub_root "${long:0:2020}" '')
add_kernel "$r" 6.1.0-41-amd64 "$CFG/debian12-amd64.config"
policy "$r" '[policy]\nmode = off\n'
expect_exit "crossing the limit in recovery entries: exit 3" 3 "$MEMCG_POLICY" --root "$r" apply
contains "crossing the limit in recovery entries: says which" "$ERR" "would give recovery entries a line of 2049 bytes"
no_data "$r" "crossing the limit in recovery entries: nothing written"
