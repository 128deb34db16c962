#!/bin/bash
# bench: a tiny run works, its output and saved file parse, --compare prints
# mmtests' format with the right percentages, bad input is exit 3 naming the
# file, bad options are exit 2. Nothing here depends on how fast it is.
# shellcheck source=/dev/null
. "$(dirname "$0")/../lib.sh"

d=$(mkroot)
tiny=(--size 8M --iterations 2 --threads "1,2")
num='[0-9]+\.[0-9]{4}'

# --- a tiny run, saved
expect_exit "bench runs" 0 "$MEMCG_POLICY" bench "${tiny[@]}" --save "$d/a.txt"
run_out=$OUT
expect_eq "no progress or messages when stderr is not a terminal" "$ERR" ""
expect_eq "run header names the kernel" "$(grep '^kernel ' <<<"$run_out" | awk '{ print $2 }')" "$(uname -r)"
check "run header gives the memcg state" grep -Eq '^memcg +(on|off|not built|unknown)( \(.*\))?$' <<<"$run_out"
check "run header names the machine" grep -Eq '^machine +.+, [0-9]+ CPUs' <<<"$run_out"
for m in faults/cpu-1 faults/cpu-2 faults/sec-1 faults/sec-2; do
	check "output has Hmean $m, a positive number" grep -Eq "^Hmean $m +[1-9][0-9]*\.[0-9]{4}\$" <<<"$run_out"
done
for m in user-1 system-1 elapsed-1 user-2 system-2 elapsed-2; do
	check "output has Time $m" grep -Eq "^Time $m +$num\$" <<<"$run_out"
done
for m in faults/cpu-1 faults/cpu-2 faults/sec-1 faults/sec-2; do
	for st in Min Stddev CoeffVar Max; do
		check "output has $st $m" grep -Eq "^$st $m +$num\$" <<<"$run_out"
	done
	v() { awk -v s="$1" -v m="$m" '$1 == s && $2 == m { print $3 }' <<<"$run_out"; }
	check "spread of $m: Min <= Hmean <= Max" awk -v lo="$(v Min)" -v h="$(v Hmean)" -v hi="$(v Max)" \
		'BEGIN { exit !(lo <= h && h <= hi) }'
done
expect_eq "metrics: 4 hmeans with their spread (Min, Stddev, CoeffVar, Max) and 6 times, nothing else" \
	"$(grep -Ec "^(Min|Hmean|Stddev|CoeffVar|Max|Time) [a-z/]+-[12] +$num\$" <<<"$run_out")" 26

check "--save wrote the file" test -s "$d/a.txt"
expect_eq "saved file starts with the format line" "$(head -n 1 "$d/a.txt")" "memcg-policy-bench 1"
expect_eq "saved kernel" "$(sed -n 's/^kernel: //p' "$d/a.txt")" "$(uname -r)"
for k in memcg cmdline cgroup cpu nproc date; do
	check "saved file records $k" grep -Eq "^$k: .+" "$d/a.txt"
done
expect_eq "saved cmdline is /proc/cmdline" "$(sed -n 's/^cmdline: //p' "$d/a.txt")" \
	"$(tr '\n\t' '  ' </proc/cmdline | sed 's/^ *//; s/ *$//')"
expect_eq "saved metrics match the printed ones" \
	"$(awk '$1 ~ /^(min|hmean|stddev|coeffvar|max|time)$/ { print $1, $2, $3 }' "$d/a.txt")" \
	"$(awk '$1 ~ /^(Min|Hmean|Stddev|CoeffVar|Max|Time)$/ { print tolower($1), $2, $3 }' <<<"$run_out")"

# --- --json run
expect_exit "bench --json runs" 0 "$MEMCG_POLICY" --json bench --size 8M --iterations 2 --threads 2
if command -v jq >/dev/null; then
	expect_eq "--json: one result per thread count, with samples per iteration" \
		"$(jq -c '[.bench.run.results[] | [.threads, (.faults_per_cpu | length), (.faults_per_sec | length), (.hmean_faults_per_cpu > 0)]]' <<<"$OUT")" \
		'[[2,2,2,true]]'
	expect_eq "--json: records the kernel" "$(jq -r .bench.run.kernel <<<"$OUT")" "$(uname -r)"
	# one shape for every command: the report's envelope, the counts as
	# numbers, the keys in one style
	expect_eq "--json: the report's envelope, schema version 2" \
		"$(jq -c '[.command, .schema_version, .exit_code, .bench.kind, .bench.compare]' <<<"$OUT")" '["bench",2,0,"run",null]'
	expect_eq "--json: the thread counts and sizes as numbers" \
		"$(jq -c '.bench.run | [.threads, .size, .iterations, (.nproc | type)]' <<<"$OUT")" '[[2],8388608,2,"number"]'
	expect_eq "--json: every key in snake_case" \
		"$(jq -r '[paths | last | strings | select(test("^[a-z0-9_]+$") | not)] | join(" ")' <<<"$OUT")" ""
fi

# --- compare two saved runs
expect_exit "second run" 0 "$MEMCG_POLICY" bench "${tiny[@]}" --save "$d/b.txt"
expect_exit "--compare two runs" 0 "$MEMCG_POLICY" bench --compare "$d/a.txt" "$d/b.txt"
cmp_out=$OUT
# "n/a" where A is 0 and B is not (a time too short to register).
line_re="^(Min|Hmean|Stddev|CoeffVar|Max|Time) [a-z/]+-[12] +$num \\(  0\\.00%\\) +$num \\(( *-?[0-9]+\\.[0-9]{2}%|    n/a)\\)\$"
expect_eq "--compare: a line in mmtests' format for each of the 26 metrics (the spread included)" \
	"$(grep -Ec "$line_re" <<<"$cmp_out")" 26
# two runs of this machine as it is: the same memcg state, so what they
# differ by is noise, and --compare says so (the load and noise warnings
# depend on the machine's mood: tests/unit/test-bench.c covers them)
expect_eq "--compare: two runs alike: warned that both had the same memcg state" \
	"$(grep -c "^memcg-policy: warning: bench --compare: both runs had memcg $(sed -n 's/^memcg: //p' "$d/a.txt"): their difference is not memcg's cost" <<<"$ERR")" 1
expect_eq "--compare: two runs alike: no warning that they differ in what was run or where" \
	"$(grep -c 'the runs differ in' <<<"$ERR")" 0
expect_eq "--compare: nothing else but the A: and B: lines" \
	"$(grep -Evc "$line_re" <<<"$cmp_out")" 2
expect_eq "--compare: A line" "$(sed -n 1p <<<"$cmp_out")" \
	"A: kernel $(uname -r), memcg $(sed -n 's/^memcg: //p' "$d/a.txt") ($d/a.txt)"
expect_eq "--compare: B line" "$(sed -n 2p <<<"$cmp_out")" \
	"B: kernel $(uname -r), memcg $(sed -n 's/^memcg: //p' "$d/b.txt") ($d/b.txt)"
expect_eq "--compare: first column is A's values" \
	"$(awk '/^(Min|Hmean|Stddev|CoeffVar|Max|Time) / { print $2, $3 }' <<<"$cmp_out")" \
	"$(awk '$1 ~ /^(min|hmean|stddev|coeffvar|max|time)$/ { print $2, $3 }' "$d/a.txt")"
expect_eq "--compare: the first column's percentage is always 0.00%" \
	"$(awk '/^(Min|Hmean|Stddev|CoeffVar|Max|Time) / { print $4 $5 }' <<<"$cmp_out" | sort -u)" "(0.00%)"

# runs that do not compare: other threads, another machine
sed 's/^threads: .*/threads: 1,2,4/; s/^cpu: .*/cpu: Some Other CPU/' "$d/a.txt" >"$d/other.txt"
expect_exit "--compare different runs: still compared" 0 "$MEMCG_POLICY" bench --compare "$d/a.txt" "$d/other.txt"
check "--compare different runs: warns about the thread counts" \
	grep -Eq '^memcg-policy: warning: bench --compare: the runs differ in thread counts \(threads: A 1,2, B 1,2,4\)$' <<<"$ERR"
check "--compare different runs: warns that the machines differ" \
	grep -Eq '^memcg-policy: warning: bench --compare: the runs differ in CPU \(cpu: A .*, B Some Other CPU\): they were made on different machines$' <<<"$ERR"
expect_eq "--compare different runs: two warnings that they differ" "$(grep -c 'the runs differ in' <<<"$ERR")" 2

expect_exit "--compare a run with itself" 0 "$MEMCG_POLICY" bench --compare "$d/a.txt" "$d/a.txt"
expect_eq "--compare A A: B's percentages are 0.00% too" \
	"$(grep -E "^Hmean" <<<"$OUT" | sed -E 's/.*\( *(-?[0-9.]+)%\)$/\1/' | sort -u)" "0.00"

# Known values: the seed's own line, and the sign of the difference.
cat >"$d/seed-a.txt" <<'EOF'
memcg-policy-bench 1
kernel: 4.0.0-vanilla
memcg: on
# a comment
hmean faults/cpu-1 1509075.7561
hmean faults/sec-1 1000.0000
time elapsed-1 10.0000
EOF
cat >"$d/seed-b.txt" <<'EOF'
memcg-policy-bench 1
kernel: 4.0.0-nomemcg
memcg: off
hmean faults/cpu-1 1508934.4568
hmean faults/sec-1 1100.0000
EOF
expect_exit "--compare known values" 0 "$MEMCG_POLICY" bench --compare "$d/seed-a.txt" "$d/seed-b.txt"
expect_eq "--compare known values: exact output" "$OUT" "A: kernel 4.0.0-vanilla, memcg on ($d/seed-a.txt)
B: kernel 4.0.0-nomemcg, memcg off ($d/seed-b.txt)
Hmean faults/cpu-1   1509075.7561 (  0.00%)   1508934.4568 ( -0.01%)
Hmean faults/sec-1      1000.0000 (  0.00%)      1100.0000 ( 10.00%)
Time elapsed-1            10.0000 (  0.00%)              -"
expect_eq "--compare known values: runs without spread are named" "$ERR" \
	"memcg-policy: warning: bench --compare: A has no spread figures (Min, Stddev, CoeffVar, Max): saved by an earlier version
memcg-policy: warning: bench --compare: B has no spread figures (Min, Stddev, CoeffVar, Max): saved by an earlier version"
if command -v jq >/dev/null; then
	expect_exit "--json --compare" 0 "$MEMCG_POLICY" --json bench --compare "$d/seed-a.txt" "$d/seed-b.txt"
	expect_eq "--json --compare: values and differences" \
		"$(jq -c '[.bench.compare.metrics[] | [.name, .a, .b, (if .diff_percent == null then null else (.diff_percent * 100 | round) end)]]' <<<"$OUT")" \
		'[["faults/cpu-1",1509075.7561,1508934.4568,-1],["faults/sec-1",1000,1100,1000],["elapsed-1",10,null,null]]'
	expect_eq "--json --compare: the report's envelope; the comparison's warnings are its warnings" \
		"$(jq -c '[.command, .schema_version, .bench.kind, .bench.run, (.warnings | length)]' <<<"$OUT")" '["bench",2,"compare",null,2]'
	sed 's/^memcg: off$/memcg: not built/' "$d/seed-b.txt" >"$d/seed-nb.txt"
	expect_exit "--json --compare, a run of a kernel without memcg" 0 "$MEMCG_POLICY" --json bench --compare "$d/seed-a.txt" "$d/seed-nb.txt"
	expect_eq "--json --compare: \"not built\" in the contract's style" "$(jq -r .bench.compare.b.memcg <<<"$OUT")" not_built
fi

# --- bad saved files: exit 3, "memcg-policy: FILE:LINE: message"
printf 'memcg-policy-bench 1\nkernel: x\nmemcg: on\nhmean faults/cpu-1 fast\n' >"$d/bad-value.txt"
expect_exit "--compare: bad value is exit 3" 3 "$MEMCG_POLICY" bench --compare "$d/bad-value.txt" "$d/a.txt"
check "--compare: bad value names file and line" grep -Fq "memcg-policy: $d/bad-value.txt:4: " <<<"$ERR"
expect_exit "--compare: bad B file is exit 3 too" 3 "$MEMCG_POLICY" bench --compare "$d/a.txt" "$d/bad-value.txt"
check "--compare: bad B file named" grep -Fq "memcg-policy: $d/bad-value.txt:4: " <<<"$ERR"
expect_eq "--compare: nothing printed for a bad file" "$OUT" ""

printf 'kernel: x\nmemcg: on\n' >"$d/no-header.txt"
expect_exit "--compare: file without the format line is exit 3" 3 "$MEMCG_POLICY" bench --compare "$d/no-header.txt" "$d/a.txt"
check "--compare: missing format line reported at line 1" grep -Fq "memcg-policy: $d/no-header.txt:1: " <<<"$ERR"

printf 'memcg-policy-bench 2\n' >"$d/v2.txt"
expect_exit "--compare: unknown format version is exit 3" 3 "$MEMCG_POLICY" bench --compare "$d/v2.txt" "$d/a.txt"
check "--compare: unknown version reported at line 1" grep -Fq "$d/v2.txt:1: unsupported format" <<<"$ERR"

printf 'memcg-policy-bench 1\nkernel: x\nmemcg: on\n\nhmean faults/cpu-1 1.0\nhmean faults/cpu-1 2.0\n' >"$d/dup.txt"
expect_exit "--compare: a metric given twice is exit 3" 3 "$MEMCG_POLICY" bench --compare "$d/dup.txt" "$d/a.txt"
check "--compare: the duplicate's line is named" grep -Fq "$d/dup.txt:6: " <<<"$ERR"

printf 'memcg-policy-bench 1\nmemcg: on\nhmean faults/cpu-1 1.0\n' >"$d/no-kernel.txt"
expect_exit "--compare: a run without its kernel is exit 3" 3 "$MEMCG_POLICY" bench --compare "$d/no-kernel.txt" "$d/a.txt"
check "--compare: missing kernel reported" grep -Fq "$d/no-kernel.txt:3: no 'kernel:' line" <<<"$ERR"

printf 'memcg-policy-bench 1\nkernel: x\nmemcg: on\nhmean faults/cpu-1 1.0 2.0\n' >"$d/extra.txt"
expect_exit "--compare: extra field is exit 3" 3 "$MEMCG_POLICY" bench --compare "$d/extra.txt" "$d/a.txt"
check "--compare: extra field's line named" grep -Fq "$d/extra.txt:4: " <<<"$ERR"

expect_exit "--compare: missing file is exit 3" 3 "$MEMCG_POLICY" bench --compare "$d/a.txt" "$d/nonexistent.txt"
check "--compare: missing file named" grep -Fq "memcg-policy: $d/nonexistent.txt: " <<<"$ERR"
expect_exit "--compare: a directory is exit 3" 3 "$MEMCG_POLICY" bench --compare "$d" "$d/a.txt"
check "--compare: the directory is named" grep -Fq "memcg-policy: $d: " <<<"$ERR"

# --- --save that cannot be written: exit 4, nothing left behind
expect_exit "--save into a missing directory is exit 4" 4 "$MEMCG_POLICY" bench --size 8M --iterations 1 --threads 1 --save "$d/no/such/dir/x.txt"
check "--save failure names the file" grep -Fq "$d/no/such/dir/x.txt" <<<"$ERR"
expect_eq "--save is checked before the run: nothing measured, nothing printed" "$OUT" ""
check "--save failure says nothing was measured" grep -Fq "(nothing measured)" <<<"$ERR"
expect_exit "--save to a directory is a usage error, before the run" 2 "$MEMCG_POLICY" bench --size 8M --iterations 1 --threads 1 --save "$d"
expect_eq "--save to a directory: nothing printed" "$OUT" ""

# --- usage errors: exit 2
bad_options=(
	"--threads 0"
	"--threads abc"
	"--threads 1,1"
	"--threads 1,,2"
	"--threads 3-1"
	"--threads 2000"
	"--size 0"
	"--size 12Q"
	"--iterations 0"
	"--iterations two"
	"--bogus"
	"unexpected-argument"
	"--compare $d/a.txt"
	"--compare $d/a.txt $d/b.txt --threads 1"
	"--compare $d/a.txt $d/b.txt $d/a.txt"
	"--save"
)
for o in "${bad_options[@]}"; do
	# shellcheck disable=SC2086 # split on purpose
	expect_exit "bad option is exit 2: bench $o" 2 "$MEMCG_POLICY" bench $o
done
expect_exit "bench refuses --root (it measures the running system)" 2 "$MEMCG_POLICY" --root "$d" bench "${tiny[@]}"
check "--root refusal says why" grep -q "running system" <<<"$ERR"
expect_exit "--compare works with --root (reads only its two files)" 0 "$MEMCG_POLICY" --root "$d" bench --compare "$d/a.txt" "$d/b.txt"
expect_exit "bench --help" 0 "$MEMCG_POLICY" bench --help
check "--help mentions --compare" grep -q -- "--compare A B" <<<"$OUT"

# --- progress on a terminal only (script(1) gives it one)
if command -v script >/dev/null; then
	tty_out=$(script -qec "$(printf '%q ' "$MEMCG_POLICY" bench --size 8M --iterations 2 --threads 1) >/dev/null" /dev/null)
	check "progress line on a terminal" grep -q "threads 1, iteration 2/2" <<<"$tty_out"
	check "progress line cleared at the end" grep -Eq $'\r +\r$' <<<"$(tr -d '\n' <<<"$tty_out")"
	tty_out=$(script -qec "$(printf '%q ' "$MEMCG_POLICY" -q bench --size 8M --iterations 2 --threads 1) >/dev/null" /dev/null)
	expect_eq "no progress with -q" "$tty_out" ""
fi

# --- where the threads run: a task of the root memory cgroup is not
# charged as others are, so from there bench makes a cgroup for the run,
# runs in it (as the kernel's /proc/self/cgroup says), and removes it
memline=$(grep -E '^[0-9]+:([^:]*,)?memory(,[^:]*)?:' /proc/self/cgroup)
if [ -n "$memline" ]; then
	memroot=$(awk '$9 == "cgroup" && $NF ~ /(^|,)memory(,|$)/ { print $5; exit }' /proc/self/mountinfo)
else
	memroot=$(awk '$9 == "cgroup2" { print $5; exit }' /proc/self/mountinfo)
	# the real root alone has no memory.current (a cgroup namespace's "/" has)
	[ -n "$memroot" ] && [ -e "$memroot/memory.current" ] && memroot=
	[ -n "$memroot" ] && ! grep -qw memory "$memroot/cgroup.controllers" 2>/dev/null && memroot=
fi
running=$(awk '$1 == "memory" { print ($4 == 1) ? "on" : "off" }' /proc/cgroups)
if [ "$(id -u)" -ne 0 ] || [ -z "$memroot" ] || [ "$running" != on ] || [ ! -w "$memroot/cgroup.procs" ]; then
	echo "SKIP: bench from the root memory cgroup: needs root, memcg on and the memory hierarchy's root (memcg $running, root '${memroot:-none}')"
else
	before=$(cat "$memroot/cgroup.subtree_control" 2>/dev/null)
	# shellcheck disable=SC2016 # the inner shell's own $$
	OUT=$(sh -c 'echo $$ >"$1/cgroup.procs" && echo "pid $$" && exec "$2" bench --size 8M --iterations 2 --threads 1,2 --save "$3"' \
		- "$memroot" "$MEMCG_POLICY" "$d/rootcg.txt" 2>&1)
	RC=$?
	expect_eq "from the root memory cgroup: bench runs (exit 0)" "$RC" 0
	pid=$(sed -n 's/^pid //p' <<<"$OUT")
	expect_eq "from the root memory cgroup: the threads ran in a cgroup made for the run (as the kernel says)" \
		"$(sed -n 's/^cgroup: //p' "$d/rootcg.txt")" "/memcg-policy-bench.$pid"
	has "from the root memory cgroup: the table says where and why" "$OUT" \
		"cgroup    /memcg-policy-bench.$pid (made for the run: the process was in the root memory cgroup"
	check "from the root memory cgroup: the run's cgroup is removed afterwards" test ! -e "$memroot/memcg-policy-bench.$pid"
	expect_eq "from the root memory cgroup: the root's subtree_control as it was" \
		"$(cat "$memroot/cgroup.subtree_control" 2>/dev/null)" "$before"
fi
own=$(cut -d: -f3 <<<"$memline")
[ -n "$own" ] || own=$(sed -n 's/^0:://p' /proc/self/cgroup)
if [ "$own" = / ]; then
	echo "SKIP: bench from a cgroup of its own: this test runs in the root cgroup"
else
	expect_exit "from its own cgroup: bench runs there" 0 "$MEMCG_POLICY" bench --size 8M --iterations 1 --threads 1 --save "$d/owncg.txt"
	expect_eq "from its own cgroup: the cgroup recorded is the process's own" "$(sed -n 's/^cgroup: //p' "$d/owncg.txt")" "$own"
fi
