#!/bin/bash
# The command table: `COMMAND --help` for every command, global options
# accepted after the command name as before it, and a missing or extra
# argument refused (exit 2) before anything is read or written.
. "$TOP/tests/lib.sh"

for cmd in status decide apply check set revert bench grub-cmdline; do
	expect_exit "$cmd --help: exit 0" 0 "$MEMCG_POLICY" "$cmd" --help
	expect_eq "$cmd --help: usage of $cmd on stdout" \
		"$(printf '%s\n' "$OUT" | grep -c "^Usage: memcg-policy .*$cmd")" 1
	expect_eq "$cmd --help: nothing on stderr" "$ERR" ""
	expect_exit "$cmd -h: exit 0" 0 "$MEMCG_POLICY" "$cmd" -h
done
# per-command options are listed by their command's help
expect_exit "apply --help (again)" 0 "$MEMCG_POLICY" apply --help
check "apply --help lists --dry-run" grep -q -- '--dry-run' <<<"$OUT"
check "apply --help lists --hook" grep -q -- '--hook' <<<"$OUT"
check "apply --help lists the global --root" grep -q -- '--root DIR' <<<"$OUT"
expect_exit "decide --help (again)" 0 "$MEMCG_POLICY" decide --help
check "decide --help lists --explain" grep -q -- '--explain' <<<"$OUT"
if grep -q -- --hook <<<"$OUT"; then fail "decide --help does not list apply's --hook"; else pass "decide --help does not list apply's --hook"; fi
# the overview points at COMMAND --help
expect_exit "--help" 0 "$MEMCG_POLICY" --help
check "--help mentions COMMAND --help" grep -q 'COMMAND --help' <<<"$OUT"

# global options after the command name mean the same as before it
root=$(mkroot)
add_kernel "$root" 6.1.0-41-amd64 "$FIX/configs/debian12-amd64.config"
printf '[policy]\nmode = off\n' | write_policy "$root/etc/memcg-policy.conf"
expect_exit "decide with globals before: exit 0" 0 "$MEMCG_POLICY" --root "$root" --json decide
before=$OUT
expect_exit "decide with globals after: exit 0" 0 "$MEMCG_POLICY" decide --root "$root" --json
expect_eq "decide: globals after the command give the same JSON" "$OUT" "$before"
expect_exit "decide --root=DIR --json after: exit 0" 0 "$MEMCG_POLICY" decide "--root=$root" --json
expect_eq "decide: --root=DIR after the command" "$OUT" "$before"
expect_exit "decide --kernel with globals mixed in: exit 0" 0 \
	"$MEMCG_POLICY" decide --root "$root" --kernel 6.1.0-41-amd64 -q
expect_eq "decide --kernel VER -q after the command: off" "$(head -n 1 <<<"$OUT")" off
alt=$(mkroot)
printf '[policy]\nmode = on\n' | write_policy "$alt/on.conf"
expect_exit "--config after the command: exit 0" 0 "$MEMCG_POLICY" decide --root "$root" --config "$alt/on.conf"
expect_eq "--config after the command is read" "$(head -n 1 <<<"$OUT")" on
expect_exit "status -v after the command: exit 0" 0 "$MEMCG_POLICY" status --root "$root" -v
expect_exit "a global option after the command without its value: exit 2" 2 "$MEMCG_POLICY" decide --root
check "the missing value is named" grep -q "'--root' needs a value" <<<"$ERR"

# after "--" everything is the command's: grub-cmdline gets "--json" as its VALUE
expect_exit "grub-cmdline -- --json: exit 0" 0 "$MEMCG_POLICY" --root "$root" grub-cmdline -- --json
check "grub-cmdline -- --json: --json is the value, kept" grep -q -- '--json' <<<"$OUT"

# missing or extra arguments: exit 2, nothing written
snap() { (cd "$root" && find . -printf '%p %s %T@\n' | sort | md5sum); }
s0=$(snap)
for args in "set" "set on off" "status extra" "decide extra" "apply extra" "check extra" "revert extra" "grub-cmdline" "set --bogus on"; do
	# shellcheck disable=SC2086
	expect_exit "'$args': usage error, exit 2" 2 "$MEMCG_POLICY" $args --root "$root"
done
expect_eq "usage errors wrote nothing in the root" "$(snap)" "$s0"

# the command table's argument counts are checked before the command runs:
# the first argument too many is named, a broken policy is not even read
printf '[policy]\nmode = bogus\n' | write_policy "$root/etc/memcg-policy.conf"
expect_exit "decide --kernel VER extra over a broken policy: usage error (2), not bad input (3)" 2 \
	"$MEMCG_POLICY" --root "$root" decide --kernel 6.1.0-41-amd64 extra
check "the extra argument is named, not the policy" grep -qx "memcg-policy: decide: unexpected argument 'extra'" <<<"$ERR"
expect_exit "bench with two arguments: exit 2 before measuring" 2 "$MEMCG_POLICY" bench --threads 1 --size 8M --iterations 1 x y
expect_eq "bench with two arguments: nothing measured" "$OUT" ""
check "bench names the argument too many" grep -q "bench: unexpected argument 'y'" <<<"$ERR"
expect_exit "--json status a b: exit 2" 2 "$MEMCG_POLICY" --json status a b
expect_eq "--json status a b: the error inside the object" \
	"$(jq -r '.errors[0].message' <<<"$OUT")" "status: unexpected argument 'a'"
