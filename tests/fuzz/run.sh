#!/bin/bash
# tests/fuzz/run.sh BUILD SECONDS NAME... - runs each libFuzzer harness
# BUILD/fuzz-NAME for SECONDS on a working copy of its corpus
# (BUILD/corpus/NAME, seeded from tests/fuzz/corpus/NAME, which is only
# read), with tests/fuzz/NAME.dict when there is one. Prints one line per
# harness: executions, corpus size, findings; the log is BUILD/logs/NAME.log,
# what was found BUILD/artifacts/NAME/. Appends "NAME EXECS SECONDS FINDINGS"
# to BUILD/fuzz-ledger.txt (the totals in docs/reliability.md come from there).
# Each harness is one test: "PASS: fuzz-NAME ..." or "FAIL: fuzz-NAME ...",
# and the last line is "N passed, N failed" (tests/check-all.sh reads it).
# Exit status: 0 no finding, 1 some harness found something, 2 usage.
set -u
build=${1:?usage: tests/fuzz/run.sh BUILD SECONDS NAME...}
secs=${2:?usage: tests/fuzz/run.sh BUILD SECONDS NAME...}
shift 2
[ $# -gt 0 ] || { echo "usage: tests/fuzz/run.sh BUILD SECONDS NAME..." >&2; exit 2; }
top=$(cd "$(dirname "$0")/../.." && pwd)
case $build in /*) ;; *) build="$top/$build" ;; esac
export LC_ALL=C
# leaks count as findings; a harness allocates nothing it keeps
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
bad=0
total_execs=0
npass=0
nfail=0
for name in "$@"; do
	bin="$build/fuzz-$name"
	if [ ! -x "$bin" ]; then
		echo "FAIL: fuzz-$name: not built ($bin)"
		bad=1
		nfail=$((nfail + 1))
		continue
	fi
	seeds="$top/tests/fuzz/corpus/$name"
	work="$build/corpus/$name"
	art="$build/artifacts/$name"
	mkdir -p "$work" "$art" "$build/logs"
	log="$build/logs/$name.log"
	args=(-max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -max_len=20000
		-print_final_stats=1 -close_fd_mask=1 -artifact_prefix="$art/")
	[ -f "$top/tests/fuzz/$name.dict" ] && args+=(-dict="$top/tests/fuzz/$name.dict")
	dirs=("$work")
	[ -d "$seeds" ] && dirs+=("$seeds")
	before=$(find "$art" -type f | wc -l)
	"$bin" "${args[@]}" "${dirs[@]}" >"$log" 2>&1
	rc=$?
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
	execs=${execs:-0}
	found=$(($(find "$art" -type f | wc -l) - before))
	if [ "$rc" -ne 0 ] && [ "$found" -eq 0 ]; then
		found=1 # a failure that left no artifact (e.g. the harness would not start)
	fi
	corpus=$(find "$work" -type f | wc -l)
	printf 'fuzz-%-14s %10s executions in %ss, corpus %s, findings %s\n' "$name" "$execs" "$secs" "$corpus" "$found"
	echo "$name $execs $secs $found" >>"$build/fuzz-ledger.txt"
	total_execs=$((total_execs + execs))
	if [ "$found" -eq 0 ]; then
		echo "PASS: fuzz-$name: $execs executions, no finding"
		npass=$((npass + 1))
	else
		echo "FAIL: fuzz-$name: $found finding(s), log $log"
		nfail=$((nfail + 1))
		bad=1
		grep -m1 -A25 -E 'ERROR: |runtime error|property does not hold|==ERROR' "$log" | sed 's/^/    /'
		find "$art" -type f -printf '%T@ %p\n' | sort -rn | head -5 | sed 's/^[^ ]* /    artifact: /'
	fi
done
echo "fuzzing: $total_execs executions in all"
echo "$npass passed, $nfail failed"
exit "$bad"
