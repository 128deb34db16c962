#!/bin/bash
# Crash consistency (issue "Hostile input and faults", part 2). A run is
# SIGKILLed at each write, fsync, rename, unlink and directory-fsync step in
# turn (MEMCG_POLICY_CRASHPOINT=N, see src/txn.h), N = 1, 2, ... until the
# run completes. After each kill:
#   - every file holds its old or its new bytes (the new ones from an
#     uninterrupted run on a copy), or is absent where one of them is;
#   - any temp file left behind is ".NAME.memcg-policy.XXXXXX": hidden, not
#     *.conf or *.cfg, and the tool's own BLS reader does not list it;
#   - the next run converges to exactly the uninterrupted run's tree (the
#     journal included) and leaves no temp file;
#   - revert then gives back the original bytes (the journal stayed
#     consistent through the crash).
# The same for revert (killed at each step, the next revert converges) and
# for set, which commits twice (the policy file, then the boot files).
. "$TOP/tests/lib.sh"
CFG="$FIX/configs"

fedora_kernels=(6.5.6-300.fc39.x86_64 6.6.8-200.fc39.x86_64 6.7.4-200.fc39.x86_64)
xbootldr_kernels=(6.8.11-300.fc40.x86_64 6.9.7-200.fc40.x86_64)

# fixture ROOT-NAME MODE KERNELS...: a fresh copy with kernels and a policy
fixture() {
	local name=$1 mode=$2 d v
	shift 2
	d=$(mkroot)
	cp -a "$FIX/roots/$name/." "$d/"
	for v in "$@"; do add_kernel "$d" "$v" "$CFG/debian12-amd64.config"; done
	printf '[policy]\nmode = %s\n' "$mode" | write_policy "$d/etc/memcg-policy.conf"
	echo "$d"
}

# snap DIR: "path hash" of every file and symlink (the lock file excluded:
# it is created empty and never holds data)
snap() {
	(cd "$1" && {
		find . -path ./run/memcg-policy.lock -prune -o -type l -printf '%p link:%l\n'
		find . -path ./run/memcg-policy.lock -prune -o -type f -print0 | xargs -0 -r sha256sum |
			sed 's/^\(.\{16\}\)[^ ]*  \(.*\)$/\2 \1/'
	} | sort)
}

is_tmp_name() { [[ $(basename "$1") =~ ^\..+\.memcg-policy\.[A-Za-z0-9]{6}$ ]]; }

# copy SRC: a fresh copy of a tree (printed)
copy() {
	local d
	d=$(mkroot)
	rm -rf "$d"
	cp -a "$1" "$d"
	echo "$d"
}

# run_killed N CMD...: runs the tool with the crash point; sets rc
run_killed() {
	local n=$1
	shift
	{ MEMCG_POLICY_CRASHPOINT=$n "$MEMCG_POLICY" "$@" >/dev/null 2>&1; } 2>/dev/null
	rc=$?
}

# old_or_new NAME OLD NEW WORK: every file of WORK is its OLD or NEW
# version; temp files are hidden and not loader names
old_or_new() {
	local name=$1 old=$2 new=$3 work=$4 f h bad="" tmps=0
	local -A O=() N=() W=()
	while read -r f h; do O[$f]=$h; done < <(snap "$old")
	while read -r f h; do N[$f]=$h; done < <(snap "$new")
	while read -r f h; do W[$f]=$h; done < <(snap "$work")
	for f in "${!W[@]}"; do
		if is_tmp_name "$f"; then
			tmps=$((tmps + 1))
			case $f in *.conf | *.cfg) bad="$bad loader-name:$f" ;; esac
			continue
		fi
		if [ "${W[$f]}" != "${O[$f]-}" ] && [ "${W[$f]}" != "${N[$f]-}" ]; then
			bad="$bad torn:$f"
		fi
	done
	for f in "${!O[@]}" "${!N[@]}"; do
		if [ -z "${W[$f]+x}" ] && [ -n "${O[$f]+x}" ] && [ -n "${N[$f]+x}" ]; then
			bad="$bad lost:$f"
		fi
	done
	if [ -z "$bad" ]; then pass "$name: every file old or new ($tmps temp files, all hidden)"; else fail "$name:$bad"; fi
}

# bls_count DIR: entries the tool's reader lists
bls_count() {
	json_run "status --json of the crashed tree" "$MEMCG_POLICY" --root "$1" --json status >&2
	jq '[.slots[] | select(.kind == "bls")] | length' <<<"$OUT"
}

no_tmp_left() {
	local left
	left=$(find "$2" -name '*.memcg-policy.*' | wc -l)
	expect_eq "$1: no temp file left" "$left" 0
}

total_points=0

# crash_loop LABEL ORIG NEW-REF REVERTED-REF CMD...: kills CMD at each step
# of ORIG in turn; NEW-REF is the tree after CMD ran uninterrupted, and
# REVERTED-REF after a revert of that (empty: no revert check)
crash_loop() {
	local label=$1 orig=$2 ref=$3 rref=$4 n work entries
	shift 4
	entries=$(bls_count "$orig")
	for ((n = 1; n < 200; n++)); do
		work=$(copy "$orig")
		run_killed "$n" --root "$work" "$@"
		if [ "$rc" -eq 0 ]; then
			rm -rf "$work"
			break
		fi
		expect_eq "$label: crash point $n: killed" "$rc" 137
		old_or_new "$label: crash point $n" "$orig" "$ref" "$work"
		expect_eq "$label: crash point $n: the BLS reader sees the same entries" "$(bls_count "$work")" "$entries"
		expect_exit "$label: crash point $n: the next run" 0 "$MEMCG_POLICY" --root "$work" "$@"
		expect_eq "$label: crash point $n: converges to the uninterrupted tree" "$(snap "$work")" "$(snap "$ref")"
		no_tmp_left "$label: crash point $n" "$work"
		if [ -n "$rref" ]; then
			expect_exit "$label: crash point $n: revert" 0 "$MEMCG_POLICY" --root "$work" revert
			expect_eq "$label: crash point $n: revert gives back the original bytes" "$(snap "$work")" "$(snap "$rref")"
		fi
		rm -rf "$work"
	done
	n=$((n - 1))
	if [ "$n" -ge 6 ]; then pass "$label: $n crash points, then the run completes"; else fail "$label: only $n crash points"; fi
	total_points=$((total_points + n))
}

# ---- apply: three entries and /etc/kernel/cmdline change (fedora, off) ----
orig=$(fixture fedora off "${fedora_kernels[@]}")
ref=$(copy "$orig")
expect_exit "fedora apply: uninterrupted" 0 "$MEMCG_POLICY" --root "$ref" apply
rref=$(copy "$ref")
expect_exit "fedora apply: uninterrupted revert" 0 "$MEMCG_POLICY" --root "$rref" revert
expect_eq "fedora apply: revert reference is the original tree (no journal)" \
	"$(snap "$rref")" "$(snap "$orig")"
changed=$(diff <(snap "$orig") <(snap "$ref") | grep -c '^>')
if [ "$changed" -ge 4 ]; then pass "fedora apply: changes $changed files (journal included)"; else fail "fedora apply: changes only $changed files"; fi
crash_loop "fedora apply" "$orig" "$ref" "$rref" apply

# ---- apply that creates a file: /etc/kernel/cmdline (xbootldr, off) ----
orig=$(fixture systemd-boot-xbootldr off "${xbootldr_kernels[@]}")
ref=$(copy "$orig")
expect_exit "xbootldr apply: uninterrupted" 0 "$MEMCG_POLICY" --root "$ref" apply
check "xbootldr apply: creates /etc/kernel/cmdline" test -f "$ref/etc/kernel/cmdline"
check "xbootldr apply: which the original lacks" test ! -e "$orig/etc/kernel/cmdline"
rref=$(copy "$ref")
expect_exit "xbootldr apply: uninterrupted revert" 0 "$MEMCG_POLICY" --root "$rref" revert
crash_loop "xbootldr apply" "$orig" "$ref" "$rref" apply

# Regression (found here, crash point 12): killed between the renames of
# the entries and of a new /etc/kernel/cmdline, the next run did not create
# it (its content, taken from the already edited entry, added nothing), and
# left the temp file behind. The same state made by hand:
orig=$(fixture systemd-boot-xbootldr off "${xbootldr_kernels[@]}")
for e in "$orig"/boot/loader/entries/*.conf; do sed -i 's/^options .*/& cgroup_disable=memory/' "$e"; done
expect_exit "entries already edited: apply" 0 "$MEMCG_POLICY" --root "$orig" apply
check "entries already edited: /etc/kernel/cmdline is created" grep -q ' cgroup_disable=memory$' "$orig/etc/kernel/cmdline"

# ---- revert: killed at each step, the next revert converges ----
orig=$(fixture fedora on "${fedora_kernels[@]}")
applied=$(copy "$orig")
expect_exit "fedora revert: apply on" 0 "$MEMCG_POLICY" --root "$applied" apply
ref=$(copy "$applied")
expect_exit "fedora revert: uninterrupted" 0 "$MEMCG_POLICY" --root "$ref" revert
expect_eq "fedora revert: reference is the original tree" "$(snap "$ref")" "$(snap "$orig")"
crash_loop "fedora revert" "$applied" "$ref" "" revert

# ---- set: two commits (the policy file, then the boot files) ----
orig=$(fixture fedora on "${fedora_kernels[@]}")
ref=$(copy "$orig")
expect_exit "fedora set off: uninterrupted" 0 "$MEMCG_POLICY" --root "$ref" set off
check "fedora set off: policy recorded" grep -q '^mode = off$' "$ref/etc/memcg-policy.conf"
rref=$(copy "$ref")
expect_exit "fedora set off: uninterrupted revert" 0 "$MEMCG_POLICY" --root "$rref" revert
crash_loop "fedora set off" "$orig" "$ref" "$rref" set off

# ---- revert of a created file: killed at each step (the unlink too) ----
orig=$(fixture systemd-boot-xbootldr off "${xbootldr_kernels[@]}")
applied=$(copy "$orig")
expect_exit "xbootldr revert: apply off" 0 "$MEMCG_POLICY" --root "$applied" apply
ref=$(copy "$applied")
expect_exit "xbootldr revert: uninterrupted" 0 "$MEMCG_POLICY" --root "$ref" revert
check "xbootldr revert: the created /etc/kernel/cmdline is deleted" test ! -e "$ref/etc/kernel/cmdline"
crash_loop "xbootldr revert" "$applied" "$ref" "" revert

echo "# crash points exercised: $total_points"
if [ "$total_points" -ge 40 ]; then pass "crash points: $total_points in all"; else fail "crash points: only $total_points"; fi

# ---- failures (EIO at each step, MEMCG_POLICY_FAILPOINT): exit 4 and
# every file as it was (rollback), for what tests/cmd/apply.sh does not
# cover: a created file, revert, set ----
total_fail=0
# fail_loop LABEL ORIG CMD...: every failure leaves ORIG's bytes exactly
fail_loop() {
	local label=$1 orig=$2 n work
	shift 2
	for ((n = 1; n < 200; n++)); do
		work=$(copy "$orig")
		MEMCG_POLICY_FAILPOINT=$n "$MEMCG_POLICY" --root "$work" "$@" >/dev/null 2>"$work.err"
		rc=$?
		if [ "$rc" -eq 0 ]; then
			rm -rf "$work" "$work.err"
			break
		fi
		expect_eq "$label: failpoint $n: exit 4" "$rc" 4
		check "$label: failpoint $n: the message names what failed" grep -q '^memcg-policy: .*: ' "$work.err"
		expect_eq "$label: failpoint $n: every file as it was" "$(snap "$work")" "$(snap "$orig")"
		no_tmp_left "$label: failpoint $n" "$work"
		rm -rf "$work" "$work.err"
	done
	n=$((n - 1))
	if [ "$n" -ge 4 ]; then pass "$label: $n failpoints, then the run completes"; else fail "$label: only $n failpoints"; fi
	total_fail=$((total_fail + n))
}
orig=$(fixture systemd-boot-xbootldr off "${xbootldr_kernels[@]}")
fail_loop "xbootldr apply (creates a file)" "$orig" apply
orig=$(fixture fedora on "${fedora_kernels[@]}")
expect_exit "fedora revert failures: apply on" 0 "$MEMCG_POLICY" --root "$orig" apply
fail_loop "fedora revert" "$orig" revert
# set: the policy file is its own commit; a failure there changes nothing
orig=$(fixture fedora on "${fedora_kernels[@]}")
work=$(copy "$orig")
MEMCG_POLICY_FAILPOINT=1 "$MEMCG_POLICY" --root "$work" set off >/dev/null 2>&1
expect_eq "set off: failpoint 1 (the policy file's write): exit 4" "$?" 4
expect_eq "set off: failpoint 1: every file as it was" "$(snap "$work")" "$(snap "$orig")"
total_fail=$((total_fail + 1))
echo "# failpoints exercised: $total_fail"

# ---- a real fault: the file system is full (ENOSPC) ----
# (a tmpfs mounted in a mount namespace: root only)
if ! private_mounts; then
	echo "SKIP: a full file system (needs root and a private mount namespace)"
	exit 0
fi
orig=$(fixture fedora off "${fedora_kernels[@]}")
res=$(mkroot)
before=$(snap "$orig")
# shellcheck disable=SC2016 # the script's variables are its own
unshare -m bash -c '
	set -e
	root=$1
	cp -a "$root/boot" "$root/boot.copy"
	mount -t tmpfs -o size=256k tmpfs "$root/boot"
	cp -a "$root/boot.copy/." "$root/boot/"
	head -c 10M /dev/zero >"$root/boot/filler" 2>/dev/null || true
	set +e
	"$2" --root "$root" apply >/dev/null 2>"$3/err"
	echo $? >"$3/rc"
	find "$root/boot" -name "*.memcg-policy.*" | wc -l >"$3/tmp"
	rm "$root/boot/filler"
	rm -rf "$root/boot.copy.after"
	cp -a "$root/boot/." "$root/boot.copy.after"
' _ "$orig" "$MEMCG_POLICY" "$res"
expect_eq "ENOSPC: exit 4" "$(cat "$res/rc")" 4
check "ENOSPC: the message says so" grep -q 'No space left on device' "$res/err"
expect_eq "ENOSPC: no temp file left on the full file system" "$(cat "$res/tmp")" 0
rm -rf "${orig:?}/boot"
mv "$orig/boot.copy.after" "$orig/boot"
rm -rf "$orig/boot.copy"
expect_eq "ENOSPC: every file as it was" "$(snap "$orig")" "$before"
