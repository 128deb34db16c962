# tests/tier.sh - the counting of a standalone test tier (tests/pkg,
# tests/ansible, tests/system, tests/powerloss), sourced by its run.sh:
#   pass NAME / fail NAME [DETAIL...] / expect_eq NAME GOT WANT
#   finish    prints "N passed, N failed" and exits (1 if anything
#             failed); a tier that defines tier_before_finish has it run
#             first (undoing mounts, say)
# shellcheck shell=bash
passed=0
failed=0
pass() { echo "PASS: $1"; passed=$((passed + 1)); }
fail() {
	echo "FAIL: $1"
	failed=$((failed + 1))
	shift
	[ $# -eq 0 ] || printf '  %s\n' "$@"
}
expect_eq() { if [ "$2" = "$3" ]; then pass "$1"; else fail "$1" "got:  $2" "want: $3"; fi; }
finish() {
	if declare -F tier_before_finish >/dev/null; then tier_before_finish; fi
	echo "$passed passed, $failed failed"
	[ "$failed" -eq 0 ]
	exit
}
