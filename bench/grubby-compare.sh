#!/bin/bash
# bench/grubby-compare.sh [ROUNDS] - the same edit of 10 and of 100 BLS
# entries (4 kernels, one entry per kernel per snapshot, as openSUSE's
# sdbootutil lays them out) made by `memcg-policy apply` and by
# bench/grubby-style.sh, a stand-in for Fedora's grubby-bls (grubby is not
# packaged in Debian; see that script). The edit: add cgroup_disable=memory,
# remove cgroup_enable=memory, in every entry:
#   memcg-policy --root ROOT apply            (policy mode = off)
#   grubby-style.sh -b ROOT/boot/loader/entries --update-kernel=ALL \
#       --args=cgroup_disable=memory --remove-args=cgroup_enable=memory
# Every run starts from a fresh copy of a clean root, written back to disk
# first. ROUNDS (default 5) runs of each, in turn. Then, from one run each
# under strace: processes started, fsync calls, renames; peak memory; and
# whether both left the same options in every entry.
# For reference, Fedora's grubby-bls took 16.1 s for 100 entries and 2.0 s
# for 10 on the machine of DESIGN section 9 (not this one).
# Takes about a minute on 2 CPUs.
set -u
# shellcheck source=bench/tool-lib.sh
. "$(dirname "$0")/tool-lib.sh"
need strace strace
GS="$TOP/bench/grubby-style.sh"

rounds=${1:-5}
sizes=(10 100)

machine_report "$WORK"
echo "rounds:  $rounds runs of each command, in turn"
echo "grubby:  $(command -v grubby || echo "not installed; not packaged in Debian ($(apt-cache policy grubby 2>/dev/null | grep -c Candidate) candidates)"); stand-in: bench/grubby-style.sh"
echo

declare -A pristine
for n in "${sizes[@]}"; do
	pristine[$n]="$WORK/clean-$n"
	make_root "${pristine[$n]}" "$n"
	# one entry in four carries the contradicting token, for both to remove
	for f in "${pristine[$n]}"/boot/loader/entries/*6.9.3-1-default-*.conf; do
		sed -i 's/ quiet / quiet cgroup_enable=memory /' "$f"
	done
done
sync -f "$WORK"

fresh() { echo "rm -rf $WORK/$2-$1 && cp -a ${pristine[$1]} $WORK/$2-$1 && sync -f $WORK"; }
tool_cmd() { echo "$MP --root $WORK/tool-$1 apply"; }
gs_cmd() { echo "$GS -b $WORK/gs-$1/boot/loader/entries --env $WORK/gs-$1/boot/grub2/grubenv --update-kernel=ALL --args=cgroup_disable=memory --remove-args=cgroup_enable=memory"; }

args=()
for n in "${sizes[@]}"; do
	args+=("tool-$n" "$(tool_cmd "$n")" "sh -c '$(fresh "$n" tool)'")
	args+=("gs-$n" "$(gs_cmd "$n")" "sh -c '$(fresh "$n" gs)'")
done
hf_rounds "$rounds" 1 --prepare-each "${args[@]}"

# options tokens of every entry, sorted, for comparing the results
tokens() {
	(cd "$1/boot/loader/entries" && for f in *.conf; do
		printf '%s:' "$f"
		awk '$1 == "options" { $1 = ""; print }' "$f" | tr -s ' \t' '\n' | sed '/^$/d' | sort | tr '\n' ' '
		echo
	done)
}

printf '%-22s %8s %7s %10s %9s %9s %7s %7s %7s\n' "" entries median "per entry" "peak RSS" processes programs fsync renames
printf '%-22s %8s %7s %10s %9s %9s %7s %7s %7s\n' "" "" ms ms KiB started run calls calls
declare -A med
for n in "${sizes[@]}"; do
	for who in tool gs; do
		sh -c "$(fresh "$n" "$who")"
		if [ $who = tool ]; then cmd=$(tool_cmd "$n"); label="memcg-policy apply"; else cmd=$(gs_cmd "$n"); label="grubby-style.sh"; fi
		# shellcheck disable=SC2086 # the command line is split on purpose
		trace_run "$WORK/trace" $cmd || die "$label on $n entries failed under strace"
		eval "$(trace_counts "$WORK/trace")"
		sh -c "$(fresh "$n" "$who")"
		# shellcheck disable=SC2086
		rss=$(maxrss_kib $cmd)
		read -r m _ <<<"$(stat_of "$who-$n")"
		med[$who-$n]=$m
		# shellcheck disable=SC2154 # set by eval
		printf '%-22s %8d %7.1f %10.2f %9s %9d %7d %7d %7d\n' "$label" "$n" "$m" "$(awk -v m="$m" -v n="$n" 'BEGIN { print m / n }')" \
			"$rss" "$fork" "$exec" "$sync" "$rename"
	done
	same=no
	[ "$(tokens "$WORK/tool-$n")" = "$(tokens "$WORK/gs-$n")" ] && same=yes
	echo "  $n entries: same options tokens in every entry after both: $same; grubby-style.sh / memcg-policy: $(ratio "${med[gs-$n]}" "${med[tool-$n]}") times"
done
echo
echo "processes started: forks and clones; programs run: execs (strace -f)."
echo "peak RSS: /usr/bin/time; for the script, of its largest single process."
echo "grubby-style.sh normalises the white space of each options line (as"
echo "grubby-bls does, through 'echo \$args'); memcg-policy keeps every other byte."
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
