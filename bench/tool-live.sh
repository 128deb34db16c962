#!/bin/bash
# bench/tool-live.sh [ROUNDS [RUNS]] - `status` and `decide` on the running
# system (no --root), against the unavoidable work of reading the kernel's
# configuration, `zcat /proc/config.gz > /dev/null` (DESIGN section 9:
# budget 1.5 times).
#
# All commands are timed in the same run, in ROUNDS rounds (default 20) of
# RUNS runs each (default 5), their order turned every round, so that a busy
# spell of the machine hits them all; the ratio is of medians over every
# run, and the range of the ratio over the rounds shows how well it holds.
# Two rows for reference: `gzip -dc` (zcat is a shell script that runs it)
# and `memcg-policy --version` (starting the program and nothing else).
# Read-only: it changes nothing on the system. Takes about 15 s.
set -u
# shellcheck source=bench/tool-lib.sh
. "$(dirname "$0")/tool-lib.sh"

rounds=${1:-20}
runs=${2:-5}

if [ -r /proc/config.gz ]; then
	base_name="zcat /proc/config.gz >/dev/null"
	base_cmd="zcat /proc/config.gz"
	ref_name="gzip -dc /proc/config.gz"
	ref_cmd="gzip -dc /proc/config.gz"
else
	cfg=/boot/config-$(uname -r)
	[ -r "$cfg" ] || die "neither /proc/config.gz nor $cfg: no configuration to compare with"
	base_name="cat $cfg >/dev/null"
	base_cmd="cat $cfg"
	ref_name="zcat -f $cfg"
	ref_cmd="zcat -f $cfg"
	echo "note: no /proc/config.gz; the baseline is reading $cfg"
fi

# shellcheck disable=SC2119 # no file system to report here
machine_report
echo "rounds:  $rounds x $runs runs of each command, order turned each round"
echo

# both must work before they are timed
"$MP" status >/dev/null || die "memcg-policy status failed (exit $?)"
"$MP" decide >/dev/null || die "memcg-policy decide failed (exit $?)"

hf_rounds "$rounds" "$runs" \
	"$base_name" "$base_cmd" \
	"memcg-policy decide" "$MP decide" \
	"memcg-policy status" "$MP status" \
	"$ref_name" "$ref_cmd" \
	"memcg-policy --version" "$MP --version"

read -r bmed _ <<<"$(stat_of "$base_name")"
bcpu=$(cpu_of "$base_name")
row() {
	local name=$1 rss=$2 med lo hi r rr cpu
	read -r med lo hi _ <<<"$(stat_of "$name")"
	cpu=$(cpu_of "$name")
	r=$(ratio "$med" "$bmed")
	rr=$(round_ratios "$name" "$base_name" | cut -d' ' -f1-2)
	printf '%-32s %7.2f %7.2f %7.2f %7.2f %8s %6s %-11s %6s\n' "$name" "$med" "$lo" "$hi" "$cpu" "$rss" "$r" "${rr/ /-}" \
		"$(ratio "$cpu" "$bcpu")"
}
printf '%-32s %7s %7s %7s %7s %8s %6s %-11s %6s\n' "command" "median" "p10" "p90" "cpu" "peak RSS" "ratio" "per round" "cpu"
printf '%-32s %7s %7s %7s %7s %8s %6s %-11s %6s\n' "" "ms" "ms" "ms" "ms/run" "KiB" "" "low-high" "ratio"
if [ -r /proc/config.gz ]; then
	brss=$(maxrss_kib sh -c 'zcat /proc/config.gz')
else
	brss=$(maxrss_kib cat "$cfg")
fi
row "$base_name" "$brss"
row "memcg-policy decide" "$(maxrss_kib "$MP" decide)"
row "memcg-policy status" "$(maxrss_kib "$MP" status)"
echo "for reference:"
# shellcheck disable=SC2086 # a command line, split on purpose
row "$ref_name" "$(maxrss_kib $ref_cmd)"
row "memcg-policy --version" "$(maxrss_kib "$MP" --version)"
echo
echo "ratio: median of the command / median of '$base_name', all runs;"
echo "per round: the same ratio within each round, lowest and highest;"
echo "cpu: user+system time per run (hyperfine), and its ratio to the baseline's."
echo "budget (DESIGN section 9): 1.5."
echo "peak RSS: /usr/bin/time; for zcat, of its largest process (gzip or sh)."
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
