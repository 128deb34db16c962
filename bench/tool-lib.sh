# bench/tool-lib.sh - sourced by bench/tool-live.sh, bench/tool-apply.sh,
# bench/tool-profile.sh and bench/grubby-compare.sh (bash). Provides:
#   $MP                  the binary measured ($MEMCG_POLICY, else build/memcg-policy)
#   need CMD PACKAGE     stop with a clear message when a tool is missing
#   $WORK, bench_tmp     a work directory on the real disk ($BENCH_DIR,
#                        default /var/tmp), removed at exit; a fresh one in it
#   machine_report DIR   CPU, cores, kernel, memcg state, file system of DIR
#   make_root DIR N      a root with 4 kernels and N BLS entries laid out the
#                        way openSUSE's sdbootutil writes them
#   hf_rounds ...        hyperfine in rounds, commands in turn (see below)
#   stat_of NAME         median, 10th and 90th percentile of NAME's runs (ms)
#   maxrss_kib CMD...    peak resident memory of CMD, in KiB
# Nothing here asserts a time: the scripts print what they measure.
# shellcheck shell=bash
set -u
export LC_ALL=C
: "${TOP:=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}"
MP=${MEMCG_POLICY:-$TOP/build/memcg-policy}
# shellcheck source-path=SCRIPTDIR source=snapper-entry.sh
. "$TOP/bench/snapper-entry.sh"
case $MP in /*) ;; *) MP="$PWD/$MP" ;; esac

die() { echo "${0##*/}: $*" >&2; exit 2; }

need() {
	command -v "$1" >/dev/null 2>&1 ||
		die "needs $1 (Debian: apt-get install $2)"
}

[ -x "$MP" ] || die "no binary at $MP: run make first (or set MEMCG_POLICY)"
need hyperfine hyperfine
need jq jq
[ -x /usr/bin/time ] || die "needs /usr/bin/time (Debian: apt-get install time)"

# One directory for everything a script makes, on the file system the
# measurements are about: fsync costs nothing on tmpfs, so the default is
# /var/tmp, on the root file system. Removed at exit.
WORK=$(mktemp -d "${BENCH_DIR:-/var/tmp}/memcg-bench.XXXXXX") ||
	die "cannot create a directory in ${BENCH_DIR:-/var/tmp}"
trap 'rm -rf "$WORK"' EXIT

# bench_tmp: a fresh directory inside $WORK
bench_tmp() { mktemp -d "$WORK/d.XXXXXX"; }

fs_of() {
	local src type opts
	read -r type src opts <<<"$(findmnt -n -o FSTYPE,SOURCE,OPTIONS --target "$1")"
	echo "$type on $src ($(cut -d, -f1-3 <<<"$opts"))"
}

machine_report() {
	local cpu cores mem memcg
	cpu=$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)
	cores=$(nproc)
	mem=$(awk '/^MemTotal/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo)
	memcg=$(awk '$1 == "memory" { print ($4 ? "on" : "off") }' /proc/cgroups 2>/dev/null)
	echo "machine: $cpu, $cores CPUs, $mem RAM, kernel $(uname -r), memcg ${memcg:-?}"
	[ $# -eq 0 ] || echo "files:   $1: $(fs_of "$1")"
	echo "load:    $(cut -d' ' -f1-3 /proc/loadavg) (1, 5, 15 min) at $(date -u +%FT%TZ)"
	echo "binary:  $MP ($("$MP" --version 2>/dev/null | head -1))"
}

# ---- fixture roots --------------------------------------------------------

BENCH_KERNELS=(6.8.1-1-default 6.8.5-1-default 6.9.1-1-default 6.9.3-1-default)
# A whole config as a distribution installs it (Debian 12's amd64 one, 260
# KB, bench/data/README): the size a reader meets, not a trimmed fixture.
# BENCH_CONFIG=FILE takes another (plain text).
if [ -z "${BENCH_CONFIG:-}" ]; then
	need xz xz-utils
	BENCH_CONFIG=$WORK/bench.config
	xz -dc "$TOP/bench/data/debian12-6.1.192-amd64.config.xz" >"$BENCH_CONFIG" ||
		die "cannot unpack bench/data/debian12-6.1.192-amd64.config.xz"
fi
BENCH_MID=0f5e2c8d7a6b4c3e9d1f2a3b4c5d6e7f

# make_root DIR N [MODE]: 4 kernels (boot/vmlinuz-VER, boot/config-VER,
# lib/modules/VER, as tests/lib.sh add_kernel does) and N entries
# boot/loader/entries/opensuse-tumbleweed-VER-SNAPSHOT.conf, entry i for
# kernel i mod 4 and snapshot i/4 + 1 (25 snapshots x 4 kernels for 100).
# Policy mode MODE (default off: every entry gets cgroup_disable=memory).
make_root() {
	local d=$1 n=$2 mode=${3:-off} v i s
	mkdir -p "$d/etc" "$d/boot/loader/entries"
	printf '[policy]\nmode = %s\n' "$mode" >"$d/etc/memcg-policy.conf"
	chmod 0644 "$d/etc/memcg-policy.conf"
	echo "$BENCH_MID" >"$d/etc/machine-id"
	# sdbootutil names entries by os-release's ID: this installation's
	printf 'NAME="openSUSE Tumbleweed"\nID="opensuse-tumbleweed"\nID_LIKE="opensuse suse"\n' >"$d/etc/os-release"
	for v in "${BENCH_KERNELS[@]}"; do
		mkdir -p "$d/lib/modules/$v"
		: >"$d/boot/vmlinuz-$v"
		cp "$BENCH_CONFIG" "$d/boot/config-$v"
	done
	for ((i = 0; i < n; i++)); do
		v=${BENCH_KERNELS[i % 4]}
		s=$((i / 4 + 1))
		snapper_entry "$v" "$s" "$BENCH_MID" >"$d/boot/loader/entries/opensuse-tumbleweed-$v-$s.conf"
	done
}

# tree_state DIR: every file and directory with type, inode, size, mtime
# and ctime: a file rewritten, replaced, created, removed or chmod'ed shows.
tree_state() {
	(cd "$1" && find . -printf '%p %y %i %s %T@ %C@\n' | sort)
}

# ---- timing ---------------------------------------------------------------

_hf_times=$WORK/times # NAME<TAB>SECONDS<TAB>ROUND per run
_hf_cpu=$WORK/cpu     # NAME<TAB>user+system seconds, per round (hyperfine's mean)
: >"$_hf_times"
: >"$_hf_cpu"

# hf_rounds ROUNDS RUNS [--prepare CMD] NAME CMD [NAME CMD ...]
# hf_rounds ROUNDS RUNS --prepare-each NAME CMD PREPARE [NAME CMD PREPARE ...]
# Runs hyperfine ROUNDS times, each time every command RUNS times (after
# one warm-up run), the order of the commands turned by one each round: a
# slow spell of a shared machine hits every command, so ratios of commands
# measured together hold better than their times. hyperfine runs each
# command without a shell (-N) and sends its output to /dev/null; a
# PREPARE command runs before each run of its command, untimed.
hf_rounds() {
	local rounds=$1 runs=$2 r k i n json each=0
	shift 2
	local prep=()
	if [ "${1:-}" = --prepare ]; then
		prep=(--prepare "$2")
		shift 2
	elif [ "${1:-}" = --prepare-each ]; then
		each=1
		shift
	fi
	local names=() cmds=() preps=()
	while [ $# -gt 0 ]; do
		names+=("$1")
		cmds+=("$2")
		shift 2
		if [ $each = 1 ]; then
			preps+=("$1")
			shift
		fi
	done
	n=${#names[@]}
	json=$WORK/hf.json
	for ((r = 0; r < rounds; r++)); do
		local args=() pargs=()
		for ((k = 0; k < n; k++)); do
			i=$(((k + r) % n))
			args+=(-n "${names[i]}" "${cmds[i]}")
			[ $each = 0 ] || pargs+=(--prepare "${preps[i]}")
		done
		hyperfine -N --style none -w 1 -r "$runs" "${prep[@]}" "${pargs[@]}" --export-json "$json" "${args[@]}" >/dev/null 2>&1 ||
			die "hyperfine failed (a command exited non-zero?): ${cmds[*]}"
		jq -r --arg r "$r" '.results[] | .command as $c | .times[] | "\($c)\t\(.)\t\($r)"' "$json" >>"$_hf_times"
		jq -r '.results[] | "\(.command)\t\(.user + .system)"' "$json" >>"$_hf_cpu"
	done
}

# stat_of NAME: "MEDIAN P10 P90 N" in milliseconds over every run of NAME
stat_of() {
	awk -F'\t' -v n="$1" '$1 == n { print $2 * 1000 }' "$_hf_times" | sort -g |
		awk '{ v[NR] = $1 } END {
			if (NR == 0) { print "nan nan nan 0"; exit }
			m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
			lo = v[int(NR * 0.1) + 1]; hi = v[NR - int(NR * 0.1)]
			printf "%.3f %.3f %.3f %d\n", m, lo, hi, NR }'
}

# round_ratios A B: "LOWEST HIGHEST MEDIAN" over the rounds of the ratio of A's
# median in a round to B's median in the same round
round_ratios() {
	awk -F'\t' -v a="$1" -v b="$2" '
		$1 == a || $1 == b { n[$1, $3]++; v[$1, $3, n[$1, $3]] = $2; if ($3 + 1 > R) R = $3 + 1 }
		function med(c, r,   k, i, j, t, m) {
			k = n[c, r]
			for (i = 1; i <= k; i++) w[i] = v[c, r, i]
			for (i = 2; i <= k; i++) { t = w[i]; for (j = i - 1; j >= 1 && w[j] > t; j--) w[j + 1] = w[j]; w[j + 1] = t }
			return (k % 2) ? w[(k + 1) / 2] : (w[k / 2] + w[k / 2 + 1]) / 2
		}
		END {
			lo = ""; hi = ""; m = 0
			for (r = 0; r < R; r++) {
				if (!n[a, r] || !n[b, r]) continue
				q = med(a, r) / med(b, r)
				qs[++m] = q
				if (lo == "" || q < lo) lo = q
				if (hi == "" || q > hi) hi = q
			}
			if (lo == "") { print "nan nan nan"; exit }
			for (i = 2; i <= m; i++) { t = qs[i]; for (j = i - 1; j >= 1 && qs[j] > t; j--) qs[j + 1] = qs[j]; qs[j + 1] = t }
			printf "%.2f %.2f %.2f\n", lo, hi, (m % 2) ? qs[(m + 1) / 2] : (qs[m / 2] + qs[m / 2 + 1]) / 2
		}' "$_hf_times"
}

# cpu_of NAME: mean user+system milliseconds per run
cpu_of() {
	awk -F'\t' -v n="$1" '$1 == n { s += $2; c++ } END { printf "%.3f\n", c ? s / c * 1000 : 0 }' "$_hf_cpu"
}

# hf_reset: forget the runs measured so far
hf_reset() { : >"$_hf_times"; : >"$_hf_cpu"; }

# maxrss_kib CMD...: the peak resident set of CMD (for a script: of the
# largest single process it waited for, which is what getrusage reports
# for children), KiB; CMD's output is thrown away.
maxrss_kib() {
	local f
	f=$(mktemp)
	/usr/bin/time -f '%M' -o "$f" "$@" >/dev/null 2>&1
	tail -1 "$f"
	rm -f "$f"
}

# ratio A B: A / B with two decimals
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f\n", a / b; else print "nan" }'; }

# ---- what a run does to files and processes ---------------------------------

# Every x86-64 call that can change a file or start a process.
TRACE_CALLS=open,openat,openat2,creat,rename,renameat,renameat2,unlink,unlinkat,mkdir,mkdirat,rmdir,link,linkat,symlink,symlinkat,truncate,ftruncate,fallocate,fsync,fdatasync,syncfs,sync,sync_file_range,chmod,fchmod,fchmodat,chown,fchown,fchownat,lchown,utimensat,write,pwrite64,writev,pwritev,pwritev2,copy_file_range,sendfile,clone,clone3,fork,vfork,execve,execveat

# trace_run LOG CMD...: CMD and its children under strace, those calls
# logged in LOG.PID, one file per process (so that no line is split);
# returns CMD's exit status
trace_run() {
	local log=$1
	shift
	rm -f "$log".*
	strace -ff -qq -o "$log" -e trace="$TRACE_CALLS" -e signal=none "$@" >/dev/null 2>&1
}

# trace_counts LOG: "KEY=N ..." for the successful calls in LOG.*:
#   wopen   opens for writing (O_WRONLY, O_RDWR, O_CREAT or O_TRUNC), but
#           not of /dev/null (a shell's redirections show here too)
#   rename  renames; unlink: unlinks and rmdirs; mkdir; link: links, symlinks
#   write   writes to descriptors other than 0-2
#   sync    fsync, fdatasync, syncfs, sync, sync_file_range
#   meta    chmod, chown, utimensat, truncate, fallocate families
#   fork    processes started (clone without CLONE_THREAD, fork, vfork)
#   exec    programs run (execve after the first one)
trace_counts() {
	cat "$1".* | awk '
		/^\+\+\+|^---/ { next }
		{
			ret = $0; sub(/.*\) += /, "", ret)
			ok = (ret ~ /^(0x[0-9a-f]+|[0-9]+)( |$)/)
			call = $0; sub(/\(.*/, "", call)
			if (!ok) next
			if (call ~ /^(open|openat|openat2|creat)$/) {
				if ((call == "creat" || $0 ~ /O_WRONLY|O_RDWR|O_CREAT|O_TRUNC/) && $0 !~ /"\/dev\/null"/) c["wopen"]++
			}
			else if (call ~ /^rename/) c["rename"]++
			else if (call ~ /^(unlink|unlinkat|rmdir)$/) c["unlink"]++
			else if (call ~ /^mkdir/) c["mkdir"]++
			else if (call ~ /^(link|linkat|symlink|symlinkat)$/) c["link"]++
			else if (call ~ /^(write|pwrite64|writev|pwritev|pwritev2|copy_file_range|sendfile)$/) {
				fd = $0; sub(/^[a-z0-9_]+\(/, "", fd); sub(/[,)].*/, "", fd)
				if (fd + 0 > 2) c["write"]++
			}
			else if (call ~ /^(fsync|fdatasync|syncfs|sync|sync_file_range)$/) c["sync"]++
			else if (call ~ /^(chmod|fchmod|fchmodat|chown|fchown|fchownat|lchown|utimensat|truncate|ftruncate|fallocate)$/) c["meta"]++
			else if (call ~ /^(clone|clone3)$/) { if ($0 !~ /CLONE_THREAD/) c["fork"]++ }
			else if (call ~ /^(fork|vfork)$/) c["fork"]++
			else if (call ~ /^execve/) c["exec"]++
		}
		END {
			printf "wopen=%d rename=%d unlink=%d mkdir=%d link=%d write=%d sync=%d meta=%d fork=%d exec=%d\n",
				c["wopen"], c["rename"], c["unlink"], c["mkdir"], c["link"], c["write"], c["sync"], c["meta"],
				c["fork"], (c["exec"] > 0 ? c["exec"] - 1 : 0)
		}'
}

# tree_diff A B: "FILES DIRS": how many files (anything not a directory)
# and directories differ between two tree_state listings
tree_diff() {
	diff <(echo "$1") <(echo "$2") | grep '^[<>]' | cut -c3- | awk '{ print $1, $2 }' | sort -u |
		awk '{ seen[$1] = seen[$1] || ($2 == "d") ; all[$1] = 1 }
			END { for (p in all) if (seen[p]) d++; else f++; printf "%d %d\n", f, d }'
}
