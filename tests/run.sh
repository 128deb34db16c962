#!/bin/bash
# Runs every unit test binary and command test script against one build
# directory and prints "N passed, N failed". Each test prints lines
# "PASS: name" / "FAIL: name"; a test program that exits non-zero without a
# FAIL line counts as one failure of its own.
set -u
build=${1:?usage: tests/run.sh BUILD-DIR}
top=$(cd "$(dirname "$0")/.." && pwd)
case $build in
/*) ;;
*) build="$top/$build" ;;
esac
build=$(cd "$build" && pwd) || exit 2
export MEMCG_POLICY="$build/memcg-policy"
export TOP="$top"
export LC_ALL=C
log=$(mktemp)
trap 'rm -f "$log"' EXIT
passed=0
failed=0

run_one() {
	local name=$1
	shift
	local out rc
	out=$("$@" 2>&1)
	rc=$?
	printf '%s\n' "$out" | sed "s|^|[$name] |" >>"$log"
	local p f
	p=$(printf '%s\n' "$out" | grep -c '^PASS: ')
	f=$(printf '%s\n' "$out" | grep -c '^FAIL: ')
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		f=1
		echo "FAIL: $name exited $rc with no FAIL line" >>"$log"
	fi
	passed=$((passed + p))
	failed=$((failed + f))
	printf '%-40s %4d passed, %d failed\n' "$name" "$p" "$f"
	if [ "$f" -ne 0 ]; then
		printf '%s\n' "$out" | grep -v '^PASS: ' | sed 's/^/    /'
	fi
}

for t in "$build"/tests/test-*; do
	[ -x "$t" ] || continue
	run_one "unit/$(basename "$t")" "$t"
done
for t in "$top"/tests/cmd/*.sh; do
	[ -f "$t" ] || continue
	run_one "cmd/$(basename "$t" .sh)" bash "$t"
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
