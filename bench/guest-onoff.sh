#!/bin/bash
# bench/guest-onoff.sh - what memcg costs, measured with memcg-policy bench
# in a guest booted with memcg on and with cgroup_disable=memory, rounds
# alternating (Debian's stock kernel under QEMU, direct kernel boot, one
# CPU, an initramfs with the program: tests/boot/lib.sh). Prints each
# round's faults per CPU second, the median of each state and their ratio,
# and the side-by-side of the last two runs (bench --compare).
#
#   bench/guest-onoff.sh [ROUNDS]      (root: the initramfs needs a device node)
#
# The guest runs under TCG (tests/boot/lib.sh's boot_guest): the figure is
# what memcg adds to the page-fault path of an emulated CPU, not of real
# hardware; `memcg-policy bench --compare` on the machine itself is the
# real figure (bench/README.md).
set -u
export LC_ALL=C
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TOP=$(cd "$HERE/.." && pwd)
ROUNDS=${1:-3}
MP=$(realpath -m "${MEMCG_POLICY:-$TOP/build/memcg-policy}")
CACHE=$(realpath -m "${BOOT_CACHE:-$TOP/build/boot-cache}")
WORK=$(realpath -m "${BENCH_WORK:-$TOP/build/bench-guest}")
BOOT_TIMEOUT=${BOOT_TIMEOUT:-300}
SIZE=${BENCH_SIZE:-128M}
ITERATIONS=${BENCH_ITERATIONS:-15}
# shellcheck source-path=SCRIPTDIR source=../tests/boot/lib.sh
. "$TOP/tests/boot/lib.sh"

[ -x "$MP" ] || { echo "bench/guest-onoff.sh: $MP not built (make)" >&2; exit 1; }
mkdir -p "$WORK" || exit 1
fetch_assets || { echo "bench/guest-onoff.sh: cannot fetch the kernel" >&2; exit 1; }
build_tool_initramfs "$WORK/initrd.gz" "$HERE/guest-init" "$MP" || { echo "cannot build the initramfs" >&2; exit 1; }

# run STATE N: one boot; the saved run in $WORK/STATE-N.txt
run() {
	local state=$1 n=$2 out="$WORK/$1-$2" extra=
	[ "$state" = off ] && extra=" cgroup_disable=memory"
	mkdir -p "$out"
	boot_guest "$out" -kernel "$KERNEL" -initrd "$WORK/initrd.gz" \
		-append "console=ttyS0 quiet panic=-1 bench.size=$SIZE bench.iterations=$ITERATIONS$extra"
	# the marker may follow the firmware's escape sequences on its line
	tr -d '\r' <"$out/serial.log" | sed -n '/@@BENCH BEGIN@@$/,/^@@BENCH END@@$/p' | sed '1d;$d' >"$WORK/$state-$n.txt"
	if ! grep -q '^hmean faults/cpu-1 ' "$WORK/$state-$n.txt"; then
		echo "bench/guest-onoff.sh: $state round $n gave no result (see $out/serial.log)" >&2
		return 1
	fi
	if ! grep -qx "memcg: $state" "$WORK/$state-$n.txt"; then
		echo "bench/guest-onoff.sh: $state round $n ran with $(sed -n 's/^memcg: //p' "$WORK/$state-$n.txt")" >&2
		return 1
	fi
}
hmean() { sed -n 's/^hmean faults\/cpu-1 //p' "$1"; }
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

for n in $(seq "$ROUNDS"); do
	run on "$n" || exit 1
	run off "$n" || exit 1
	printf 'round %s: faults/cpu-1 on %s, off %s\n' "$n" "$(hmean "$WORK/on-$n.txt")" "$(hmean "$WORK/off-$n.txt")"
done
on=$(for n in $(seq "$ROUNDS"); do hmean "$WORK/on-$n.txt"; done | median)
off=$(for n in $(seq "$ROUNDS"); do hmean "$WORK/off-$n.txt"; done | median)
printf 'median faults/cpu-1: memcg on %s, off %s: off is %s%% faster (%s, %s)\n' "$on" "$off" \
	"$(awk -v a="$on" -v b="$off" 'BEGIN { printf "%+.1f", (b - a) / a * 100 }')" \
	"QEMU TCG, an emulated CPU" "kernel $KVER"
"$MP" bench --compare "$WORK/on-$ROUNDS.txt" "$WORK/off-$ROUNDS.txt" 2>/dev/null | sed -n '1,2p;/^Hmean faults\/cpu-1/p;/^CoeffVar faults\/cpu-1/p'
