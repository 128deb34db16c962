#!/bin/bash
# bench/tool-apply.sh [ROUNDS [RUNS [EDIT-RUNS]]] - `apply` on roots laid out the way
# openSUSE's sdbootutil lays out BLS entries (4 kernels, one entry per
# kernel per snapshot), on the real disk ($BENCH_DIR, default /var/tmp).
#
# 1. apply with nothing to change, roots of 10, 100 and 1000 entries already
#    applied once: time, files written (must be 0), child processes (must
#    be 0), how the time grows with the entries, peak memory.
# 2. apply that edits every entry (mode = off adds cgroup_disable=memory),
#    from clean roots of 10, 100 (25 snapshots x 4 kernels: DESIGN's budget,
#    about 16 ms) and 1000 entries: time, files written, sync calls,
#    child processes, peak memory.
# 3. what the sync points cost on this file system: fsync of each of 100
#    freshly written files against one syncfs.
# Times: hyperfine, ROUNDS rounds (default 10) of RUNS runs (default 5;
# EDIT-RUNS, default 2, for the edits, each after a fresh copy), the sizes
# in turn. Counts: one run under strace, and the inode, size,
# mtime and ctime of everything in the root before and after.
# Takes one to three minutes (the fsyncs of 1000 files vary most).
set -u
# shellcheck source=bench/tool-lib.sh
. "$(dirname "$0")/tool-lib.sh"
need strace strace

rounds=${1:-10}
runs=${2:-5}
edit_runs=${3:-2}
sizes=(10 100 1000)

machine_report "$WORK"
echo "rounds:  $rounds x $runs runs of each command ($edit_runs for edits), order turned each round"
echo

# ---- 1. nothing to change ----------------------------------------------------

declare -A noop_root
for n in "${sizes[@]}"; do
	d="$WORK/noop-$n"
	make_root "$d" "$n"
	out=$("$MP" --root "$d" apply) || die "first apply on $n entries failed"
	[ "$(grep -c '^changed ' <<<"$out")" -eq "$n" ] || die "first apply on $n entries did not change $n entries"
	noop_root[$n]=$d
done
sync -f "$WORK"

echo "== apply with nothing to change (already applied once) =="
printf '%8s %8s %8s %8s %8s %9s %7s %7s %7s %7s\n' entries median p10 p90 cpu "peak RSS" files dirs "write" children
printf '%8s %8s %8s %8s %8s %9s %7s %7s %7s %7s\n' "" ms ms ms ms/run KiB written changed calls started
args=()
for n in "${sizes[@]}"; do
	args+=("noop-$n" "$MP --root ${noop_root[$n]} apply")
done
hf_rounds "$rounds" "$runs" "${args[@]}"
declare -A noop_med
for n in "${sizes[@]}"; do
	d=${noop_root[$n]}
	out=$("$MP" --root "$d" apply)
	[ "$out" = "nothing to change" ] || die "apply on $n entries said: $out"
	before=$(tree_state "$d")
	trace_run "$WORK/trace" "$MP" --root "$d" apply || die "traced apply on $n entries failed"
	after=$(tree_state "$d")
	read -r files dirs <<<"$(tree_diff "$before" "$after")"
	counts=$(trace_counts "$WORK/trace")
	eval "$counts"
	# shellcheck disable=SC2154 # set by eval
	wcalls=$((wopen + rename + unlink + mkdir + link + write + sync + meta))
	# shellcheck disable=SC2154
	children=$((fork + exec))
	read -r med lo hi _ <<<"$(stat_of "noop-$n")"
	noop_med[$n]=$med
	printf '%8d %8.2f %8.2f %8.2f %8.2f %9s %7d %7d %7d %7d\n' "$n" "$med" "$lo" "$hi" "$(cpu_of "noop-$n")" \
		"$(maxrss_kib "$MP" --root "$d" apply)" "$files" "$dirs" "$wcalls" "$children"
done
growth() {
	awk -v what="$1" -v a="$2" -v b="$3" -v c="$4" 'BEGIN {
		m1 = (b - a) / 90 * 1000; m2 = (c - b) / 900 * 1000
		printf "growth, %s: %.1f us per entry from 10 to 100, %.1f us from 100 to 1000", what, m1, m2
		if (m1 > 0) printf " (ratio %.2f; 1 = linear)", m2 / m1
		printf "; fixed part %.2f ms\n", a - 10 * m2 / 1000
	}'
}
growth "wall (median)" "${noop_med[10]}" "${noop_med[100]}" "${noop_med[1000]}"
growth "cpu" "$(cpu_of noop-10)" "$(cpu_of noop-100)" "$(cpu_of noop-1000)"
echo "write calls: opens for writing, renames, unlinks, mkdirs, links, writes to"
echo "files, syncs, chmod/chown/utime (strace); children: forks and execs."
echo

# ---- 2. edit every entry -------------------------------------------------------

echo "== apply that edits every entry, from clean (mode = off: +cgroup_disable=memory) =="
declare -A pristine
for n in "${sizes[@]}"; do
	pristine[$n]="$WORK/clean-$n"
	make_root "${pristine[$n]}" "$n"
done
sync -f "$WORK"
# fresh copy, written back to disk, before each run: the entries are old
# files, as on a real system
fresh() { echo "rm -rf $WORK/edit-$1 && cp -a ${pristine[$1]} $WORK/edit-$1 && sync -f $WORK"; }
hf_reset
args=()
for n in "${sizes[@]}"; do
	args+=("edit-$n" "$MP --root $WORK/edit-$n apply" "sh -c '$(fresh "$n")'")
done
hf_rounds "$rounds" "$edit_runs" --prepare-each "${args[@]}"
printf '%8s %8s %8s %8s %8s %9s %7s %7s %7s %7s %7s %8s\n' entries median p10 p90 cpu "peak RSS" files dirs fsync rename children "in fsync"
printf '%8s %8s %8s %8s %8s %9s %7s %7s %7s %7s %7s %8s\n' "" ms ms ms ms/run KiB written changed calls calls started ms
declare -A edit_med
for n in "${sizes[@]}"; do
	d="$WORK/edit-$n"
	sh -c "$(fresh "$n")"
	before=$(tree_state "$d")
	trace_run "$WORK/trace" "$MP" --root "$d" apply || die "traced edit of $n entries failed"
	after=$(tree_state "$d")
	read -r files dirs <<<"$(tree_diff "$before" "$after")"
	eval "$(trace_counts "$WORK/trace")"
	[ "$("$MP" --root "$d" check >/dev/null 2>&1; echo $?)" = 0 ] || die "check after the edit of $n entries: not in sync"
	# time spent inside fsync, from a second traced run
	sh -c "$(fresh "$n")"
	infsync=$(strace -qq -T -e trace=fsync,fdatasync,syncfs "$MP" --root "$d" apply 2>&1 >/dev/null |
		awk -F'<' '/^(fsync|fdatasync|syncfs)\(/ { sub(/>.*/, "", $NF); s += $NF } END { printf "%.2f", s * 1000 }')
	sh -c "$(fresh "$n")"
	rss=$(maxrss_kib "$MP" --root "$d" apply)
	read -r med lo hi _ <<<"$(stat_of "edit-$n")"
	edit_med[$n]=$med
	# shellcheck disable=SC2154
	printf '%8d %8.2f %8.2f %8.2f %8.2f %9s %7d %7d %7d %7d %7d %8s\n' "$n" "$med" "$lo" "$hi" "$(cpu_of "edit-$n")" \
		"$rss" "$files" "$dirs" "$sync" "$rename" $((fork + exec)) "$infsync"
done
growth "wall (median)" "${edit_med[10]}" "${edit_med[100]}" "${edit_med[1000]}"
growth "cpu" "$(cpu_of edit-10)" "$(cpu_of edit-100)" "$(cpu_of edit-1000)"
echo "files written include the journal (/var/lib/memcg-policy/journal.json);"
echo "in fsync: time inside fsync/fdatasync/syncfs of one run (strace -T)."
echo

# ---- 3. the cost of a sync point here --------------------------------------------

echo "== durability on $(fs_of "$WORK"): 100 fresh files =="
src="${pristine[100]}/boot/loader/entries"
files=$(cd "$src" && ls)
dst="$WORK/sync-test"
list=""
for f in $files; do list="$list $dst/$f"; done
hf_reset
hf_rounds "$rounds" "$runs" --prepare-each \
	"fsync each (sync FILE...)" "sync$list" "sh -c 'rm -rf $dst && sync -f $WORK && cp -r $src $dst'" \
	"fdatasync each (sync -d)" "sync -d$list" "sh -c 'rm -rf $dst && sync -f $WORK && cp -r $src $dst'" \
	"one syncfs (sync -f DIR)" "sync -f $dst" "sh -c 'rm -rf $dst && sync -f $WORK && cp -r $src $dst'" \
	"nothing to sync (sync -f)" "sync -f $dst" "sync -f $WORK"
printf '%-28s %8s %8s %8s\n' "" median p10 p90
for name in "fsync each (sync FILE...)" "fdatasync each (sync -d)" "one syncfs (sync -f DIR)" "nothing to sync (sync -f)"; do
	read -r med lo hi _ <<<"$(stat_of "$name")"
	printf '%-28s %8.2f %8.2f %8.2f\n' "$name" "$med" "$lo" "$hi"
done
echo "(each after copying the 100 entries afresh; times include starting sync(1))"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
