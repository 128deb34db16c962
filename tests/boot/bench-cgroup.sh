#!/bin/bash
# tests/boot/bench-cgroup.sh - where `memcg-policy bench` runs its threads on
# cgroup v2, proven in a guest (Debian's kernel under QEMU, the bench
# guest's initramfs: bench/guest-init, which mounts cgroup2 and runs the
# program from its /init, in the root cgroup). A task of the root memory
# cgroup is not charged as every other is, so with memcg on the run must
# take place in a cgroup made for it, and say so; with cgroup_disable=memory
# it stays where it is. The development machine's memory controller is on
# cgroup v1, where tests/cmd/bench.sh shows the same; this shows v2.
#
# Environment: MEMCG_POLICY (default build/memcg-policy), BOOT_CACHE (the
# kernel, shared with the boot tier), BENCH_CGROUP_WORK (default
# build/bench-cgroup-work: serial logs stay). Prints "PASS: ..." /
# "FAIL: ..." and "N passed, N failed" last.
set -u
export LC_ALL=C
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TOP=$(cd "$HERE/../.." && pwd)
MP=$(realpath -m "${MEMCG_POLICY:-$TOP/build/memcg-policy}")
CACHE=$(realpath -m "${BOOT_CACHE:-$TOP/build/boot-cache}")
WORK=$(realpath -m "${BENCH_CGROUP_WORK:-$TOP/build/bench-cgroup-work}")
BOOT_TIMEOUT=${BOOT_TIMEOUT:-300}
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$HERE/lib.sh"
# shellcheck source-path=SCRIPTDIR source=../tier.sh
. "$TOP/tests/tier.sh"

[ -x "$MP" ] || { fail "prerequisite: $MP is not built (make)"; finish; }
mkdir -p "$WORK" || { fail "prerequisite: cannot make $WORK"; finish; }
fetch_assets 2>"$WORK/assets.log" || { fail "prerequisite: cannot fetch the kernel" "$(cat "$WORK/assets.log")"; finish; }
build_tool_initramfs "$WORK/initrd.gz" "$TOP/bench/guest-init" "$MP" ||
	{ fail "prerequisite: cannot build the initramfs"; finish; }

# boot STATE: one boot, memcg on or off; the saved run in $WORK/STATE.txt
boot() {
	local state=$1 out="$WORK/$1" extra=
	[ "$state" = off ] && extra=" cgroup_disable=memory"
	mkdir -p "$out"
	boot_guest "$out" -kernel "$KERNEL" -initrd "$WORK/initrd.gz" \
		-append "console=ttyS0 quiet panic=-1 bench.size=4M bench.iterations=2$extra"
	tr -d '\r' <"$out/serial.log" | sed -n '/@@BENCH BEGIN@@$/,/^@@BENCH END@@$/p' | sed '1d;$d' >"$WORK/$state.txt"
}
field() { sed -n "s/^$2: //p" "$WORK/$1.txt"; }

boot on &
boot off &
wait
if grep -q '^hmean faults/cpu-1 ' "$WORK/on.txt"; then
	pass "memcg on: the guest's bench ran"
	expect_eq "memcg on: it ran with memcg on" "$(field on memcg)" on
	got=$(field on cgroup)
	if [[ $got =~ ^/memcg-policy-bench\.[0-9]+$ ]]; then
		pass "memcg on, from the root cgroup (cgroup v2): the threads ran in a cgroup made for the run ($got)"
	else
		fail "memcg on, from the root cgroup (cgroup v2): the threads ran in a cgroup made for the run" "got: $got"
	fi
	expect_eq "memcg on: the run says why" "$(field on cgroup-note)" \
		"made for the run: the process was in the root memory cgroup, which memcg does not charge as it charges every other"
	expect_eq "memcg on: afterwards its cgroup is removed, the root's subtree_control as it was (empty at boot)" \
		"$(tr -d '\r' <"$WORK/on/serial.log" | sed -n 's/^@@CGROUP-AFTER@@ //p')" "subtree_control=[] left=[]"
else
	fail "memcg on: the guest's bench ran" "$(tr -d '\r' <"$WORK/on/serial.log" | tail -n 20)"
fi
if grep -q '^hmean faults/cpu-1 ' "$WORK/off.txt"; then
	pass "memcg off: the guest's bench ran"
	expect_eq "memcg off: it ran with memcg off" "$(field off memcg)" off
	expect_eq "memcg off: the threads stayed in the root cgroup" "$(field off cgroup)" /
	expect_eq "memcg off: the run says why" "$(field off cgroup-note)" "memcg is off: nothing charges it"
else
	fail "memcg off: the guest's bench ran" "$(tr -d '\r' <"$WORK/off/serial.log" | tail -n 20)"
fi
finish
