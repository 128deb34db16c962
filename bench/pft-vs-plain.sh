#!/bin/bash
# pft-vs-plain.sh - how fast is `memcg-policy bench`? Runs it (one thread)
# and build/pft-plain, the plainest page-fault loop, alternately ROUNDS
# times with the same size and iterations, and prints every round and the
# median of each figure, with bench's difference from plain in percent.
#
# Usage: bench/pft-vs-plain.sh [ROUNDS [SIZE-MiB [ITERATIONS]]]  (default 11 256 5)
# Needs: make build/memcg-policy build/pft-plain
# Alternating the two spreads the noise of a shared machine over both.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$top/build}
rounds=${1:-11}
mib=${2:-256}
iters=${3:-5}
bench=$build/memcg-policy
plain=$build/pft-plain
for f in "$bench" "$plain"; do
	[ -x "$f" ] || { echo "pft-vs-plain: $f missing (make build/memcg-policy build/pft-plain)" >&2; exit 2; }
done
export LC_ALL=C

out=$(mktemp)
trap 'rm -f "$out"' EXIT
printf '%-6s %14s %14s %14s %14s\n' round plain-sec plain-cpu bench-sec bench-cpu
for r in $(seq "$rounds"); do
	p=$("$plain" "$mib" "$iters")
	b=$("$bench" -q bench --threads 1 --size "${mib}M" --iterations "$iters")
	ps=$(awk '$1 == "faults/sec" { print $2 }' <<<"$p")
	pc=$(awk '$1 == "faults/cpu" { print $2 }' <<<"$p")
	bs=$(awk '$1 == "Hmean" && $2 == "faults/sec-1" { print $3 }' <<<"$b")
	bc=$(awk '$1 == "Hmean" && $2 == "faults/cpu-1" { print $3 }' <<<"$b")
	printf '%-6s %14.1f %14.1f %14.1f %14.1f\n' "$r" "$ps" "$pc" "$bs" "$bc" | tee -a "$out"
done

median() { # column
	awk -v c="$1" '{ print $c }' "$out" | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
ps=$(median 2)
pc=$(median 3)
bs=$(median 4)
bc=$(median 5)
printf '%-6s %14.1f %14.1f %14.1f %14.1f\n' median "$ps" "$pc" "$bs" "$bc"
awk -v ps="$ps" -v pc="$pc" -v bs="$bs" -v bc="$bc" 'BEGIN {
	printf "bench vs plain: faults/sec %+.2f%%, faults/cpu %+.2f%%\n", (bs - ps) / ps * 100, (bc - pc) / pc * 100
}'
