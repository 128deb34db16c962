#!/bin/bash
# bench/tool-floor.sh [ROUNDS [RUNS]] - memcg-policy against the floor of
# its own work, side by side in one run (bench/edit-floor.c, the least
# code that does the same I/O):
#
# 1. `status` and `decide` on a root with 4 installed kernels, against
#    reading (and inflating) their 4 configs (Debian 12's whole amd64 config,
#    bench/data): plain /boot/config-VER files
#    as Debian installs them, and the same gzip-packed.
#    And `apply --kernel VER --hook` with nothing to change against reading
#    (inflating) that one kernel's config; what it wrote and started.
# 1a. `status` on 5, 10 and 20 kernels against reading their configs:
#    the time per kernel (linear growth).
# 1b. `status` on the same 4 kernels with Debian's GRUB (its settings read
#    without a shell), against the same floor.
# 2. `apply` editing 100 and 1000 BLS entries (snapshots x 4 kernels, mode
#    = off adds cgroup_disable=memory to each), against two floors: the bare
#    one (reading each entry, writing a temp file, one syncfs, renaming all,
#    one directory fsync) and the safe one (first a journal record made
#    durable, then type-checked opens, each temp file with the old one's
#    mode, owner and extended attributes, one syncfs, the renames, one
#    directory fsync); and per edited entry, the system calls (strace -c)
#    and instructions (valgrind's callgrind) of the tool and the floors.
#    A fresh copy of the root, written back to disk, before every run; the
#    1000-entry case in half the rounds.
#
# ROUNDS rounds (default 15) of RUNS runs (default 5; 2 for the edits), the
# commands' order turned each round; ratios of the medians over all runs,
# and the range and median of the per-round ratios (the ratio of the two
# commands' medians in each round: a slow spell of the disk hits both
# commands of a round, so this one moves less from run to run). Nothing is
# asserted.
#
# MEMCG_POLICY_BEFORE=BINARY adds that binary's status and apply (an older
# build, say) to the same rounds, so that a change is measured against what
# it replaced under the same conditions of the disk.
set -u
# shellcheck source=bench/tool-lib.sh
. "$(dirname "$0")/tool-lib.sh"
need cc gcc

rounds=${1:-15}
runs=${2:-5}
FLOOR=$WORK/edit-floor
cc -O2 -o "$FLOOR" "$TOP/bench/edit-floor.c" -lz || die "cannot build bench/edit-floor.c (needs zlib1g-dev)"

machine_report "$WORK"
echo "rounds:  $rounds x $runs runs of each command (2 for edits), order turned each round"
echo

row() { # NAME-A NAME-B LABEL
	local a b lo hi med
	read -r a _ <<<"$(stat_of "$1")"
	read -r b _ <<<"$(stat_of "$2")"
	read -r lo hi med <<<"$(round_ratios "$1" "$2")"
	printf '%-44s %8.2f %8.2f %7s %11s %7s\n' "$3" "$a" "$b" "$(ratio "$a" "$b")" "$lo-$hi" "$med"
}
header() {
	printf '%-44s %8s %8s %7s %11s %7s\n' "$1" "tool" "floor" "ratio" "per round" "median"
	printf '%-44s %8s %8s %7s %11s %7s\n' "" ms ms "" "" "of rounds"
}

# ---- 1. status and decide on 4 kernels ------------------------------------
plain=$WORK/k4-plain
packed=$WORK/k4-gzip
declare -A hook_counts
growth=()
make_root "$plain" 4
make_root "$packed" 4
for v in "${BENCH_KERNELS[@]}"; do
	gzip -9 -c "$plain/boot/config-$v" >"$packed/boot/config-$v"
done
"$MP" --root "$packed" status >/dev/null || die "status on the gzip root failed"
cfgs() { local v s=""; for v in "${BENCH_KERNELS[@]}"; do s="$s $1/boot/config-$v"; done; echo "$s"; }
sync -f "$WORK"
BEFORE=${MEMCG_POLICY_BEFORE:-}
before_status=()
if [ -n "$BEFORE" ]; then
	[ -x "$BEFORE" ] || die "MEMCG_POLICY_BEFORE: no binary at $BEFORE"
	before_status=(status-plain-before "$BEFORE --root $plain status"
		status-gzip-before "$BEFORE --root $packed status")
fi
hf_reset
hf_rounds "$rounds" "$runs" \
	status-plain "$MP --root $plain status" decide-plain "$MP --root $plain decide" \
	floor-plain "$FLOOR read$(cfgs "$plain")" \
	status-gzip "$MP --root $packed status" decide-gzip "$MP --root $packed decide" \
	floor-gzip "$FLOOR read$(cfgs "$packed")" "${before_status[@]}"
# apply --kernel VER --hook with nothing to change (a kernel package's
# hook on a system in sync): against reading, or inflating, that one config
for r in "$plain" "$packed"; do
	"$MP" --root "$r" apply >/dev/null || die "apply failed on $r"
	before=$(tree_state "$r")
	"$MP" --root "$r" apply --kernel "${BENCH_KERNELS[0]}" --hook >/dev/null || die "the hook failed on $r"
	[ "$(tree_state "$r")" = "$before" ] || die "apply --hook in sync changed files in $r"
	trace_run "$WORK/hook" "$MP" --root "$r" apply --kernel "${BENCH_KERNELS[0]}" --hook || die "the hook failed under strace"
	hook_counts[$r]=$(trace_counts "$WORK/hook")
done
sync -f "$WORK"
hf_rounds "$rounds" "$runs" \
	hook-plain "$MP --root $plain apply --kernel ${BENCH_KERNELS[0]} --hook" \
	floor1-plain "$FLOOR read $plain/boot/config-${BENCH_KERNELS[0]}" \
	hook-gzip "$MP --root $packed apply --kernel ${BENCH_KERNELS[0]} --hook" \
	floor1-gzip "$FLOOR read $packed/boot/config-${BENCH_KERNELS[0]}"
echo "== status / decide on 4 kernels against reading their configs =="
header "command / floor"
row status-plain floor-plain "status, plain configs / read 4 configs"
row decide-plain floor-plain "decide, plain configs / read 4 configs"
row status-gzip floor-gzip "status, gzip configs / inflate 4 configs"
row decide-gzip floor-gzip "decide, gzip configs / inflate 4 configs"
if [ -n "$BEFORE" ]; then
	row status-plain-before floor-plain "status (before), plain / read 4 configs"
	row status-gzip-before floor-gzip "status (before), gzip / inflate 4 configs"
fi
echo
echo "== apply --kernel VER --hook, nothing to change, against reading that config =="
header "command / floor"
row hook-plain floor1-plain "hook, plain config / read 1 config"
row hook-gzip floor1-gzip "hook, gzip config / inflate 1 config"
echo "what the hook did (strace): plain: ${hook_counts[$plain]}"
echo "                            gzip:  ${hook_counts[$packed]}"
echo

# ---- 1a. growth in kernels: status on 5, 10 and 20 kernels ---------------
# Roots with N kernels (Debian 12's whole config each, plain) and one BLS
# entry per kernel; status against reading the N configs. Linear when the
# time per kernel stays the same from 5 to 20.
for n in 5 10 20; do
	kr=$WORK/kn$n
	mkdir -p "$kr/etc" "$kr/boot/loader/entries"
	printf '[policy]\nmode = off\n' >"$kr/etc/memcg-policy.conf"
	echo "$BENCH_MID" >"$kr/etc/machine-id"
	files=""
	for ((i = 1; i <= n; i++)); do
		v=6.1.0-$i-amd64
		mkdir -p "$kr/lib/modules/$v"
		: >"$kr/boot/vmlinuz-$v"
		cp "$BENCH_CONFIG" "$kr/boot/config-$v"
		snapper_entry "$v" 1 "$BENCH_MID" >"$kr/boot/loader/entries/debian-$v.conf"
		files="$files $kr/boot/config-$v"
	done
	"$MP" --root "$kr" status >/dev/null || die "status on $n kernels failed"
	growth+=("status-k$n" "$MP --root $kr status" "floor-k$n" "$FLOOR read$files")
done
sync -f "$WORK"
hf_reset
hf_rounds "$rounds" "$runs" "${growth[@]}"
echo "== status on 5, 10 and 20 kernels against reading their configs =="
header "command / floor"
for n in 5 10 20; do
	row "status-k$n" "floor-k$n" "status, $n kernels / read $n configs"
done
read -r t5 _ <<<"$(stat_of status-k5)"
read -r t20 _ <<<"$(stat_of status-k20)"
read -r f5 _ <<<"$(stat_of floor-k5)"
read -r f20 _ <<<"$(stat_of floor-k20)"
awk -v a="$t5" -v b="$t20" -v c="$f5" -v d="$f20" 'BEGIN {
	printf "per kernel from 5 to 20: status %.3f ms, the floor %.3f ms\n", (b - a) / 15, (d - c) / 15 }'
echo

# ---- 1b. status on a Debian GRUB tree ---------------------------------------
# The same 4 kernels with Debian's GRUB: /etc/default/grub as Debian 12's
# grub2 package installs it, grub-mkconfig with its grub.d loop, the
# package's drop-in and program, a generated menu. status reads GRUB's
# settings with its own reader of shell assignments (no shell started
# with --root); MEMCG_POLICY_BEFORE=an older build shows what sourcing
# them with /bin/sh cost.
grubroot=$WORK/k4-grub
cp -a "$plain" "$grubroot"
mkdir -p "$grubroot/etc/default/grub.d" "$grubroot/usr/sbin" "$grubroot/boot/grub"
cp "$TOP/tests/fixtures/grub/debian/default-grub" "$grubroot/etc/default/grub"
cp "$TOP/grub.d/99-memcg-policy.cfg" "$grubroot/etc/default/grub.d/"
# shellcheck disable=SC2016 # grub-mkconfig's ${sysconfdir}, literally
printf '#! /bin/sh\nfor x in ${sysconfdir}/default/grub.d/*.cfg ; do :; done\n' >"$grubroot/usr/sbin/grub-mkconfig"
printf '#!/bin/sh\nexit 1\n' >"$grubroot/usr/sbin/memcg-policy"
chmod 0755 "$grubroot/usr/sbin/grub-mkconfig" "$grubroot/usr/sbin/memcg-policy"
for v in "${BENCH_KERNELS[@]}"; do
	printf "menuentry 'Debian GNU/Linux' {\n\tlinux\t/boot/vmlinuz-%s root=UUID=a5a23e80-0329-442f-84c5-87178b098c9c ro quiet\n}\n" "$v"
done >"$grubroot/boot/grub/grub.cfg"
"$MP" --root "$grubroot" status >/dev/null || die "status on the GRUB root failed"
# the same tree with the configs gzip-packed
grubgz=$WORK/k4-grub-gzip
cp -a "$grubroot" "$grubgz"
for v in "${BENCH_KERNELS[@]}"; do
	cp "$packed/boot/config-$v" "$grubgz/boot/config-$v"
done
"$MP" --root "$grubgz" status >/dev/null || die "status on the gzip GRUB root failed"
sync -f "$WORK"
before_grub=()
[ -z "$BEFORE" ] || before_grub=(status-grub-before "$BEFORE --root $grubroot status")
hf_reset
hf_rounds "$rounds" "$runs" \
	status-grub "$MP --root $grubroot status" floor-plain "$FLOOR read$(cfgs "$plain")" \
	status-grub-gzip "$MP --root $grubgz status" decide-grub-gzip "$MP --root $grubgz decide" \
	floor-gzip "$FLOOR read$(cfgs "$packed")" "${before_grub[@]}"
echo "== status on a Debian GRUB tree (4 kernels) against reading their configs =="
header "command / floor"
row status-grub floor-plain "status, GRUB tree / read 4 configs"
row status-grub-gzip floor-gzip "status, GRUB tree, gzip / inflate 4"
row decide-grub-gzip floor-gzip "decide, GRUB tree, gzip / inflate 4"
if [ -n "$BEFORE" ]; then
	row status-grub-before floor-plain "status (before), GRUB tree / read 4 configs"
	row status-grub status-grub-before "status now / status before"
fi
echo

# ---- 2. apply editing 100 and 1000 entries --------------------------------
# Two floors: the bare one (read, temp file, syncfs, renames, one fsync)
# and the safe one (the journal record durable first, type-checked opens,
# mode, owner and xattrs kept, then the same): bench/edit-floor.c. Two
# cases for the tool: the first run since boot (no lock file in /run, a
# tmpfs: apply reads everything, takes the lock, reads everything again
# under it) and a later one (the lock file is there: taken first, one
# reading). A fresh copy of the root, written back to disk, before each run.
fresh() { echo "rm -rf $WORK/$1 && cp -a ${2:-$pristine} $WORK/$1 && sync -f $WORK"; }
# syscalls N CMD...: system calls CMD and its children make, per entry
syscalls() {
	local n=$1 out
	shift
	out=$WORK/strace.out
	strace -f -c -o "$out" "$@" >/dev/null 2>&1 || die "failed under strace: $*"
	awk -v n="$n" '$NF == "total" { printf "%.1f\n", $(NF-2) / n }' "$out"
}
# instructions N CMD...: instructions CMD runs (valgrind's lackey-free
# count: callgrind's Ir), per entry; "-" without valgrind
instructions() {
	local n=$1 out
	shift
	command -v valgrind >/dev/null || { echo -; return; }
	out=$WORK/callgrind.out
	valgrind --tool=callgrind --callgrind-out-file="$out" "$@" >/dev/null 2>&1 || die "failed under valgrind: $*"
	awk -v n="$n" '/^summary:/ { printf "%.0f\n", $2 / n }' "$out"
}
for n in 100 1000; do
	pristine=$WORK/e$n-pristine
	make_root "$pristine" "$n"
	mkdir -p "$pristine/var/lib/memcg-policy"
	locked=$WORK/e$n-locked
	cp -a "$pristine" "$locked"
	mkdir -p "$locked/run"
	install -m 0600 /dev/null "$locked/run/memcg-policy.lock"
	sync -f "$WORK"
	erunds=$rounds
	[ "$n" -lt 1000 ] || erunds=$(((rounds + 1) / 2))
	before_apply=()
	if [ -n "$BEFORE" ]; then
		before_apply=("apply-$n-before" "$BEFORE --root $WORK/e-old apply" "sh -c '$(fresh e-old)'"
			"apply-$n-locked-before" "$BEFORE --root $WORK/e-oldl apply" "sh -c '$(fresh e-oldl "$locked")'")
	fi
	hf_reset
	hf_rounds "$erunds" 2 --prepare-each \
		apply-$n "$MP --root $WORK/e-tool apply" "sh -c '$(fresh e-tool)'" \
		apply-$n-locked "$MP --root $WORK/e-lock apply" "sh -c '$(fresh e-lock "$locked")'" \
		floor-$n "$FLOOR edit $WORK/e-floor/boot/loader/entries cgroup_disable=memory" "sh -c '$(fresh e-floor)'" \
		safe-$n "$FLOOR safe $WORK/e-safe/boot/loader/entries cgroup_disable=memory $WORK/e-safe/var/lib/memcg-policy/journal.floor" \
		"sh -c '$(fresh e-safe)'" \
		"${before_apply[@]}"
	# all three did the same edit
	sh -c "$(fresh e-tool)" && sh -c "$(fresh e-floor)" && sh -c "$(fresh e-safe)"
	"$MP" --root "$WORK/e-tool" apply >/dev/null || die "apply failed"
	"$FLOOR" edit "$WORK/e-floor/boot/loader/entries" cgroup_disable=memory || die "the floor failed"
	"$FLOOR" safe "$WORK/e-safe/boot/loader/entries" cgroup_disable=memory "$WORK/e-safe/var/lib/memcg-policy/journal.floor" ||
		die "the safe floor failed"
	if ! diff -r "$WORK/e-tool/boot/loader/entries" "$WORK/e-floor/boot/loader/entries" >/dev/null ||
		! diff -r "$WORK/e-tool/boot/loader/entries" "$WORK/e-safe/boot/loader/entries" >/dev/null; then
		die "the tool and the floors did not write the same entries"
	fi
	echo "== apply editing $n entries against the floors (same bytes written; $erunds rounds) =="
	header "command / floor"
	row apply-$n safe-$n "apply, first run since boot / safe floor"
	row apply-$n-locked safe-$n "apply, lock file there / safe floor"
	row apply-$n floor-$n "apply, first run since boot / bare floor"
	row apply-$n-locked floor-$n "apply, lock file there / bare floor"
	row safe-$n floor-$n "safe floor / bare floor"
	if [ -n "$BEFORE" ]; then
		row apply-$n-before safe-$n "apply (before), first run / safe floor"
		row apply-$n-locked-before safe-$n "apply (before), lock there / safe floor"
	fi
	# the counts that do not depend on the machine's mood
	sh -c "$(fresh e-tool "$locked")" && sh -c "$(fresh e-floor)" && sh -c "$(fresh e-safe)"
	st=$(syscalls "$n" "$MP" --root "$WORK/e-tool" apply)
	sf=$(syscalls "$n" "$FLOOR" edit "$WORK/e-floor/boot/loader/entries" cgroup_disable=memory)
	ss=$(syscalls "$n" "$FLOOR" safe "$WORK/e-safe/boot/loader/entries" cgroup_disable=memory \
		"$WORK/e-safe/var/lib/memcg-policy/journal.floor")
	sh -c "$(fresh e-tool "$locked")" && sh -c "$(fresh e-safe)"
	it=$(instructions "$n" "$MP" --root "$WORK/e-tool" apply)
	is=$(instructions "$n" "$FLOOR" safe "$WORK/e-safe/boot/loader/entries" cgroup_disable=memory \
		"$WORK/e-safe/var/lib/memcg-policy/journal.floor")
	printf '%-44s %8s %8s %8s\n' "per edited entry (lock file there)" tool safe bare
	printf '%-44s %8s %8s %8s\n' "  system calls" "$st" "$ss" "$sf"
	printf '%-44s %8s %8s %8s\n' "  instructions (callgrind)" "$it" "$is" "-"
	echo
done
