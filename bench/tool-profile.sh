#!/bin/bash
# bench/tool-profile.sh [ROUNDS] - where the time of `status`, `decide` and
# `apply` goes, for comparing with bench/tool-live.sh and tool-apply.sh:
#   1. starting the program: an empty C program with and without the
#      libraries memcg-policy links (built here with cc and pkg-config);
#   2. the running kernel's symbol table, which `status` reads to tell
#      whether the kernel accepts cgroup_enable=, and the systemd unit
#      files `decide` scans for Memory*= settings (needs-memcg-units);
#      `decide` timed with the scan turned off through --config;
#   3. system calls of one run of each (strace -c -w: wall time per call);
#   4. instructions per stage (valgrind --tool=callgrind, if installed), for
#      decide, status, and apply editing 100 BLS entries.
# Read-only on the system; apply runs on a root in $BENCH_DIR. About 30 s.
set -u
# shellcheck source=bench/tool-lib.sh
. "$(dirname "$0")/tool-lib.sh"
need strace strace
need cc "gcc"
need pkg-config pkg-config

rounds=${1:-10}
machine_report "$WORK"
echo

# ---- 1. start-up -------------------------------------------------------------

echo "== 1. starting a program (exec, dynamic linking), ms =="
echo 'int main(void) { return 0; }' >"$WORK/empty.c"
libs="inih blkid libkmod zlib json-c"
cc -O2 -o "$WORK/empty" "$WORK/empty.c"
# shellcheck disable=SC2046,SC2086
cc -O2 -o "$WORK/empty-all" "$WORK/empty.c" -Wl,--no-as-needed $(pkg-config --libs $libs)
# shellcheck disable=SC2046
cc -O2 -o "$WORK/empty-kmod" "$WORK/empty.c" -Wl,--no-as-needed $(pkg-config --libs libkmod)
# shellcheck disable=SC2046,SC2086
cc -O2 -o "$WORK/empty-nokmod" "$WORK/empty.c" -Wl,--no-as-needed $(pkg-config --libs inih blkid zlib json-c)
hf_rounds "$rounds" 10 \
	"empty program" "$WORK/empty" \
	"empty + inih blkid kmod zlib json-c" "$WORK/empty-all" \
	"empty + libkmod alone" "$WORK/empty-kmod" \
	"empty + all but libkmod" "$WORK/empty-nokmod" \
	"memcg-policy --version" "$MP --version"
for name in "empty program" "empty + inih blkid kmod zlib json-c" "empty + libkmod alone" "empty + all but libkmod" "memcg-policy --version"; do
	read -r med lo hi _ <<<"$(stat_of "$name")"
	printf '  %-36s %6.2f  (p10 %.2f, p90 %.2f)\n' "$name" "$med" "$lo" "$hi"
done
echo "  libraries loaded by memcg-policy: $(ldd "$MP" | grep -c '=>') ($(ldd "$MP" | awk '/=>/ { sub(/\.so.*/, "", $1); printf "%s ", $1 }'))"
echo

# ---- 2. what status and decide read --------------------------------------------

echo "== 2. the inputs that cost =="
if [ -r /proc/kallsyms ]; then
	lines=$(wc -l </proc/kallsyms)
	bytes=$(wc -c </proc/kallsyms)
	first_mod=$(grep -m1 -n $'\t\\[' /proc/kallsyms | cut -d: -f1)
	echo "  /proc/kallsyms: $lines lines, $bytes bytes; first module symbol at line ${first_mod:-none} (status stops there)"
	echo "  reads of it in one status: $(strace -e trace=read,openat2 "$MP" status 2>&1 >/dev/null |
		awk '/openat2\(.*"proc\/kallsyms"/ { split($0, a, "= "); fd = a[2] + 0; next } fd && $0 ~ "^read\\(" fd "," { n++ } END { print n + 0 }')"
fi
cat >"$WORK/nounits.conf" <<'EOF'
[policy]
mode = auto
[auto]
needs-memcg-units = no
EOF
chmod 0644 "$WORK/nounits.conf"
units=$(strace -e trace=openat2 "$MP" decide 2>&1 >/dev/null | grep -cE '"(etc|run|usr/local/lib|usr/lib|lib)/systemd/system/[^"]*(service|slice|scope|socket|mount|swap|\.conf)"')
echo "  unit files opened by one decide: $units"
for d in /lib/systemd/system /usr/lib/systemd/system; do
	[ -d "$d" ] && echo "    $d: $(stat -L -c 'device %d inode %i' "$d")"
done
hf_reset
hf_rounds "$rounds" 5 \
	"cat /proc/kallsyms" "cat /proc/kallsyms" \
	"zcat /proc/config.gz" "zcat /proc/config.gz" \
	"decide" "$MP decide" \
	"decide, no unit scan" "$MP --config $WORK/nounits.conf decide" \
	"status" "$MP status" \
	"status, no unit scan" "$MP --config $WORK/nounits.conf status"
for name in "cat /proc/kallsyms" "zcat /proc/config.gz" "decide" "decide, no unit scan" "status" "status, no unit scan"; do
	read -r med lo hi _ <<<"$(stat_of "$name")"
	printf '  %-24s %6.2f ms  (p10 %.2f, p90 %.2f)  cpu %.2f ms\n' "$name" "$med" "$lo" "$hi" "$(cpu_of "$name")"
done
echo

# ---- 3. system calls -------------------------------------------------------------

sys_summary() {
	strace -c -w -S time "$@" 2>&1 >/dev/null | awk '
		/^-/ { dash++; next }
		dash == 1 && NF >= 5 { n++; if (n <= 6) printf "    %-14s %6d calls %8.2f ms\n", $NF, $4, $2 * 1000 }
		/total$/ { printf "    %-14s %6d calls %8.2f ms\n", "total", $3, $2 * 1000 }'
}
echo "== 3. system calls, one run each (strace -c -w, wall time inside the calls) =="
echo "  decide:"
sys_summary "$MP" decide
echo "  status:"
sys_summary "$MP" status
root100="$WORK/root100"
make_root "$root100" 100
sync -f "$WORK"
echo "  apply editing 100 BLS entries:"
sys_summary "$MP" --root "$root100" apply
echo

# ---- 4. instructions per stage ---------------------------------------------------------

echo "== 4. instructions per stage (callgrind, inclusive) =="
if ! command -v valgrind >/dev/null || ! command -v callgrind_annotate >/dev/null; then
	echo "  valgrind not installed (Debian: apt-get install valgrind): skipped"
	exit 0
fi
stages='_dl_start|main|evaluate|context_load_kernels|kernels_load|kconfig_inflate|kconfig_parse|scan_symbol_file|scan_line|context_load_system|probe_system|scan_unit_file|find_programs|slots_find|slot_edit|cmdline_split|journal_serialize|journal_record|txn_commit|txn_add|file_slot|status_print|print_json'
cg() {
	local what=$1
	shift
	valgrind --tool=callgrind --callgrind-out-file="$WORK/cg.out" "$@" >/dev/null 2>&1
	echo "  $what:"
	callgrind_annotate --inclusive=yes "$WORK/cg.out" 2>/dev/null | awk -v re="^($stages)\$" '
		/PROGRAM TOTALS/ { gsub(/,/, "", $1); total = $1; printf "    %-30s %12s\n", "total", $1; next }
		/^ *[0-9,]+ \(/ {
			f = $0; sub(/ \[.*/, "", f); sub(/.*:/, "", f)
			if (f ~ re && !(f in seen)) { seen[f] = 1; n = $1; gsub(/,/, "", n); printf "    %-30s %12d %5.1f%%\n", f, n, 100 * n / total }
		}'
}
cg "decide" "$MP" decide
cg "status" "$MP" status
rm -rf "$root100"
make_root "$root100" 100
cg "apply editing 100 entries" "$MP" --root "$root100" apply
echo "  (_dl_start: the dynamic loader; main: everything after it)"
