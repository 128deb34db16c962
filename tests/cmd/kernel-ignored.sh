#!/bin/bash
# "Reboot needed" only while the running kernel's /proc/cmdline lacks what
# the boot configuration gives it. A kernel that booted with that line and
# runs the other way all the same ignored it: check says so (not in sync,
# exit 1, naming what wins: its built-in command line, or rules other than
# its config tells), never "reboot needed" forever.
#
# On the live system, in a private mount namespace: the boot configuration
# is /etc/kernel/cmdline on a tmpfs, the booted line a file bound over
# /proc/cmdline, the kernel's config (for its built-in line) a file bound
# over /proc/config.gz; the running state is the machine's own.
. "$TOP/tests/lib.sh"
if [ "$(id -u)" -ne 0 ] || ! unshare -m true 2>/dev/null; then
	echo "SKIP: needs root and mount namespaces"
	exit 0
fi
running=$(awk '$1 == "memory" { print ($4 == 1) ? "on" : "off" }' /proc/cgroups)
if [ "$running" != on ]; then
	echo "SKIP: the running kernel has memcg $running; these cases need it on"
	exit 0
fi
if [ -r /proc/config.gz ]; then cfg=$(zcat /proc/config.gz); else cfg=$(cat "/boot/config-$(uname -r)"); fi
if ! grep -q '^CONFIG_MEMCG=y' <<<"$cfg"; then
	echo "SKIP: the running kernel has no memcg"
	exit 0
fi
rel=$(uname -r)
W=$(mkroot)
# mode = off: the decision for the running kernel (memcg on) is off
printf '[policy]\nmode = off\n[bootloaders]\ngrub = no\nkernel-cmdline = yes\n' | write_policy "$W/policy.conf"
# the booted line: the real one, its kernel part led by BOOTED
booted() { printf '%s %s\n' "$1" "$(cat /proc/cmdline)" >"$W/cmdline.booted"; }
# the config: the real one with CONFIG_CMDLINE as given (prepended)
builtin_config() {
	sed -e '/^CONFIG_CMDLINE_BOOL=/d' -e '/^CONFIG_CMDLINE=/d' -e '/^CONFIG_CMDLINE_OVERRIDE=/d' <<<"$cfg" >"$W/config"
	printf 'CONFIG_CMDLINE_BOOL=y\nCONFIG_CMDLINE="%s"\n' "$1" >>"$W/config"
	gzip -c "$W/config" >"$W/config.gz"
}
# in_ns CONFIG-GZ|- KERNEL-CMDLINE ARGS...: the tool in the namespace
in_ns() {
	local conf=$1 kcl=$2
	shift 2
	local o e
	o=$(mktemp) e=$(mktemp)
	# shellcheck disable=SC2016 # the script's variables are its own
	unshare -m --propagation private bash -c '
		w=$1 conf=$2 kcl=$3; shift 3
		mkdir -p /etc/kernel /var/lib/memcg-policy || exit 90
		for d in /etc/kernel /var/lib/memcg-policy /run; do mount -t tmpfs none "$d" || exit 90; done
		printf "%s\n" "$kcl" >/etc/kernel/cmdline
		mount --bind "$w/cmdline.booted" /proc/cmdline || exit 90
		if [ "$conf" != - ]; then mount --bind "$conf" /proc/config.gz || exit 90; fi
		exec "$@"
	' - "$W" "$conf" "$kcl" "$@" >"$o" 2>"$e"
	RC=$?
	OUT=$(cat "$o") ERR=$(cat "$e")
	rm -f "$o" "$e"
}
has() { case $2 in *"$3"*) pass "$1" ;; *) fail "$1" "no: $3" "in: $2" ;; esac; }

# 1. booted with the configuration's cgroup_disable=memory, runs with memcg on
booted cgroup_disable=memory
in_ns - "root=/dev/vda ro cgroup_disable=memory" "$MEMCG_POLICY" --config "$W/policy.conf" check
expect_eq "booted with the token, memcg on: check is not in sync (1), not reboot needed (5)" "$RC" 1
has "booted with the token, memcg on: check says the kernel ignored it" "$OUT" \
	"$rel booted with the command line the boot configuration gives it and runs with memcg on, not off: the kernel ignored it"
has "booted with the token, memcg on: and that a reboot does not change it" "$OUT" "a reboot does not change it"
in_ns - "root=/dev/vda ro cgroup_disable=memory" "$MEMCG_POLICY" --config "$W/policy.conf" --json status
expect_eq "booted with the token: --json reboot is kernel_ignores" "$(jq -r .reboot <<<"$OUT")" kernel_ignores
has "booted with the token: --json kernel_ignored says it" "$(jq -r .kernel_ignored <<<"$OUT")" "the kernel ignored it"
tmp=$(mktemp)
printf '%s\n' "$OUT" >"$tmp"
json_check "booted with the token: status --json" "$tmp" "$RC"
in_ns - "root=/dev/vda ro cgroup_disable=memory" "$MEMCG_POLICY" --config "$W/policy.conf" check --monitoring
expect_eq "booted with the token: monitoring is CRITICAL (2), not WARNING" "$RC" 2
has "booted with the token: the monitoring line says it" "$OUT" "the kernel ignored it"
in_ns - "root=/dev/vda ro cgroup_disable=memory" "$MEMCG_POLICY" --config "$W/policy.conf" apply
expect_eq "booted with the token: apply exits 0 (nothing to write)" "$RC" 0
has "booted with the token: apply's next boot line says the kernel ignores it" "$OUT" \
	"memcg off by its command line, but the kernel booted with it now runs with memcg on: the kernel ignores it"

# 2. the same, the token added by the kernel's built-in command line
if [ -e /proc/config.gz ]; then
	builtin_config "cgroup_disable=memory"
	booted cgroup_disable=memory
	in_ns "$W/config.gz" "root=/dev/vda ro" "$MEMCG_POLICY" --config "$W/policy.conf" check
	expect_eq "built-in cgroup_disable=memory, memcg on: check is not in sync (1)" "$RC" 1
	has "built-in cgroup_disable=memory: check names the built-in command line" "$OUT" \
		"its built-in command line (CONFIG_CMDLINE) adds cgroup_disable=memory"
fi

# 3. booted with an older line (no token): a reboot is needed
booted ""
in_ns - "root=/dev/vda ro cgroup_disable=memory" "$MEMCG_POLICY" --config "$W/policy.conf" check
expect_eq "booted without the token: check says in sync, reboot needed (5)" "$RC" 5
has "booted without the token: reboot needed" "$OUT" "in sync; reboot needed"
in_ns - "root=/dev/vda ro cgroup_disable=memory" "$MEMCG_POLICY" --config "$W/policy.conf" --json status
expect_eq "booted without the token: --json reboot is needed" "$(jq -r .reboot <<<"$OUT")" needed
# 4. the booted line as configured, and memcg on as decided: no reboot
printf '[policy]\nmode = on\n[bootloaders]\ngrub = no\nkernel-cmdline = yes\n' | write_policy "$W/policy.conf"
in_ns - "root=/dev/vda ro" "$MEMCG_POLICY" --config "$W/policy.conf" --json status
expect_eq "mode on, running on: --json reboot is not_needed" "$(jq -r .reboot <<<"$OUT")" not_needed
