#!/bin/bash
# tests/run.sh BUILD [TEST...]: runs every unit test binary and command
# test script against one build directory (or only the TESTs named: a
# script such as tests/cmd/grub.sh or cmd/grub, a unit test such as
# test-cmdline or unit/test-cmdline) and prints "N passed, N failed[, N
# skipped]". Each test prints lines "PASS: name" / "FAIL: name" / "SKIP:
# name"; a test program that exits non-zero without a FAIL line counts as
# one failure of its own.
#
# Each test's line gives its wall-clock seconds. Up to TEST_JOBS (default: the number of CPUs, at most 4) tests run at
# once, each with its own output; the results are printed in the order
# above. The tests that time races between processes (SERIAL below) run
# alone, after the others.
set -u
build=${1:?usage: tests/run.sh BUILD-DIR [TEST...]}
shift
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
passed=0
failed=0
skipped=0

# report NAME OUTFILE RC SECONDS: counts and prints one finished test
report() {
	local name=$1 out rc=$3 secs=$4
	out=$(cat "$2")
	printf '%s\n' "$out" | sed "s|^|[$name] |" >>"$log"
	local p f s
	p=$(printf '%s\n' "$out" | grep -c '^PASS: ')
	f=$(printf '%s\n' "$out" | grep -c '^FAIL: ')
	s=$(printf '%s\n' "$out" | grep -c '^SKIP: ')
	skipped=$((skipped + s))
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		f=1
		echo "FAIL: $name exited $rc with no FAIL line" >>"$log"
	fi
	passed=$((passed + p))
	failed=$((failed + f))
	if [ "$s" -gt 0 ]; then
		printf '%-32s %4ds %5d passed, %d failed, %d skipped\n' "$name" "$secs" "$p" "$f" "$s"
	else
		printf '%-32s %4ds %5d passed, %d failed\n' "$name" "$secs" "$p" "$f"
	fi
	if [ "$f" -ne 0 ]; then
		printf '%s\n' "$out" | grep -v '^PASS: ' | sed 's/^/    /'
	fi
}

# tests that time races between processes: run alone
SERIAL=" cmd/concurrency cmd/crash "
# the longest: started first, so that the others fill the time beside them
LONG=" cmd/grub cmd/walk cmd/security cmd/confine cmd/apply cmd/badinput "
jobs=${TEST_JOBS:-$(nproc 2>/dev/null || echo 1)}
[ "$jobs" -gt 4 ] && jobs=4
outdir=$(mktemp -d)
trap 'rm -f "$log"; rm -rf "$outdir"' EXIT
names=()
paths=()
add_test() { names+=("$1"); paths+=("$2"); }

# start I: runs test I in the background, its output in outdir/I.out and
# its exit code in outdir/I.rc
start() {
	local i=$1
	case ${names[$i]} in
	unit/*) (t0=$SECONDS; "${paths[$i]}" >"$outdir/$i.out" 2>&1; echo $? >"$outdir/$i.rc"; echo $((SECONDS - t0)) >"$outdir/$i.s") & ;;
	*) (t0=$SECONDS; bash "${paths[$i]}" >"$outdir/$i.out" 2>&1; echo $? >"$outdir/$i.rc"; echo $((SECONDS - t0)) >"$outdir/$i.s") & ;;
	esac
}

# the tests named, or all of them
units=()
scripts=()
if [ $# -eq 0 ]; then
	for t in "$build"/tests/test-*; do
		[ -x "$t" ] && [ "${t%.d}" = "$t" ] && units+=("$t")
	done
	for t in "$top"/tests/cmd/*.sh; do
		[ -f "$t" ] && scripts+=("$t")
	done
fi
for a in "$@"; do
	n=$(basename "$a")
	n=${n%.sh}
	if [ -x "$build/tests/$n" ]; then
		units+=("$build/tests/$n")
	elif [ -f "$top/tests/cmd/$n.sh" ]; then
		scripts+=("$top/tests/cmd/$n.sh")
	else
		echo "tests/run.sh: no test $a (neither $build/tests/$n nor tests/cmd/$n.sh)" >&2
		exit 2
	fi
done
for t in ${units[@]+"${units[@]}"}; do
	add_test "unit/$(basename "$t")" "$t"
done
for t in ${scripts[@]+"${scripts[@]}"}; do
	add_test "cmd/$(basename "$t" .sh)" "$t"
done
order=()
for i in "${!names[@]}"; do
	case $LONG in *" ${names[$i]} "*) order+=("$i") ;; esac
done
for i in "${!names[@]}"; do
	case $LONG$SERIAL in *" ${names[$i]} "*) ;; *) order+=("$i") ;; esac
done
for i in ${order[@]+"${order[@]}"}; do
	while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n; done
	start "$i"
done
wait
for i in "${!names[@]}"; do
	case $SERIAL in *" ${names[$i]} "*) start "$i"; wait ;; esac
done
for i in "${!names[@]}"; do
	report "${names[$i]}" "$outdir/$i.out" "$(cat "$outdir/$i.rc")" "$(cat "$outdir/$i.s")"
done
if [ "$skipped" -gt 0 ]; then
	echo "$passed passed, $failed failed, $skipped skipped"
else
	echo "$passed passed, $failed failed"
fi
[ "$failed" -eq 0 ]
