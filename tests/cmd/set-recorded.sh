#!/bin/bash
# set records the mode, then applies it. Where the recording succeeded and
# the applying failed (bad input, or a system failure the commit rolled
# back), set exits 6 and says so: the mode is in the policy file, the boot
# configuration as it was. Failures are injected at each write step of
# apply's commit (MEMCG_POLICY_FAILPOINT, the crash tests' hook).
. "$TOP/tests/lib.sh"
setup() {
	root=$(mkroot)
	add_kernel "$root" 6.1.0-40-amd64 "$FIX/configs/debian12-amd64.config"
	mkdir -p "$root/etc/kernel"
	printf 'root=/dev/sda1 ro\n' >"$root/etc/kernel/cmdline"
	printf '[policy]\nmode = %s\n[bootloaders]\nkernel-cmdline = yes\n' "$1" | write_policy "$root/etc/memcg-policy.conf"
}
mode_of() { sed -n 's/^mode = //p' "$root/etc/memcg-policy.conf"; }

# the policy's own write is steps 1-4; apply's commit (journal, boot file,
# their syncs and renames) follows
for n in 5 6 7 8 9 10 11; do
	setup on
	expect_exit "failure at commit step $n: set off exits 6" 6 env MEMCG_POLICY_FAILPOINT=$n \
		"$MEMCG_POLICY" --root "$root" set off
	expect_eq "failure at commit step $n: the mode is recorded" "$(mode_of)" off
	expect_eq "failure at commit step $n: the boot configuration as it was" "$(cat "$root/etc/kernel/cmdline")" \
		"root=/dev/sda1 ro"
	case $OUT in
	*"recorded, but not applied: the boot configuration is as it was"*) pass "failure at commit step $n: says so" ;;
	*) fail "failure at commit step $n: says so" "$OUT" ;;
	esac
done
setup on
json_run "failure at a commit step, --json" env MEMCG_POLICY_FAILPOINT=6 "$MEMCG_POLICY" --root "$root" --json set off
expect_eq "--json: exit_code 6, an error" "$(jq -r '[.exit_code, (.errors | length > 0)] | @tsv' <<<"$OUT")" \
	"$(printf '6\ttrue')"
expect_eq "--json: the process exits 6" "$RC" 6
expect_exit "apply afterwards: the boot configuration follows the recorded mode" 0 "$MEMCG_POLICY" --root "$root" apply
expect_eq "apply afterwards: cgroup_disable=memory" "$(cat "$root/etc/kernel/cmdline")" "root=/dev/sda1 ro cgroup_disable=memory"

# the policy's own write failing: nothing recorded, a system failure (4)
setup on
expect_exit "failure writing the policy: exit 4" 4 env MEMCG_POLICY_FAILPOINT=1 "$MEMCG_POLICY" --root "$root" set off
expect_eq "failure writing the policy: the mode as it was" "$(mode_of)" on
# recorded already: set off again with the commit failing is apply's failure (4)
setup off
expect_exit "mode recorded already, the commit fails: exit 4, not 6" 4 env MEMCG_POLICY_FAILPOINT=1 \
	"$MEMCG_POLICY" --root "$root" set off
