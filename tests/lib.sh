# tests/lib.sh - sourced by the command tests (bash). Provides:
#   $MEMCG_POLICY  the binary under test (set by tests/run.sh)
#   mkroot         a fresh fixture root (removed at exit)
#   pass NAME / fail NAME MSG / check NAME CMD... / expect_eq NAME GOT WANT
#   expect_exit NAME CODE CMD...   runs CMD, checks its exit code
#   json_run NAME CMD...  runs CMD (a --json run), its stdout in $OUT
#   add_kernel, write_policy, image_program   fixture roots
# Every --json output of the tool that goes through expect_exit or json_run
# is checked against schema/memcg-policy.schema.json (json_check).
# Every check prints "PASS: NAME" or "FAIL: NAME" for tests/run.sh.
# shellcheck shell=bash
set -u
: "${MEMCG_POLICY:?run through tests/run.sh}"
: "${TOP:=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}"
export FIX="$TOP/tests/fixtures"
export LC_ALL=C
_tmpdirs=()
cleanup_tmp() { [ ${#_tmpdirs[@]} -eq 0 ] || rm -rf "${_tmpdirs[@]}"; }
trap cleanup_tmp EXIT

mkroot() {
	local d
	d=$(mktemp -d "${TMPDIR:-/tmp}/memcg-test.XXXXXX")
	_tmpdirs+=("$d")
	mkdir -p "$d/etc" "$d/boot"
	echo "$d"
}

pass() { echo "PASS: $1"; }
# private_mounts: can this run enter a mount namespace of its own with
# private propagation (root, and "/" a mount point: not in a bare chroot)?
private_mounts() { [ "$(id -u)" -eq 0 ] && unshare -m --propagation private true 2>/dev/null; }
fail() { echo "FAIL: $1"; shift; [ $# -eq 0 ] || printf '  %s\n' "$@"; }

check() {
	local name=$1
	shift
	if "$@"; then pass "$name"; else fail "$name" "command failed: $*"; fi
}

expect_eq() {
	if [ "$2" = "$3" ]; then
		pass "$1"
	else
		fail "$1" "got:  $(printf '%q' "$2")" "want: $(printf '%q' "$3")"
	fi
}

# expect_exit NAME CODE CMD... ; leaves stdout in $OUT and stderr in $ERR
expect_exit() {
	local name=$1 code=$2
	shift 2
	local o e
	o=$(mktemp)
	e=$(mktemp)
	"$@" >"$o" 2>"$e"
	local rc=$?
	OUT=$(cat "$o")
	ERR=$(cat "$e")
	if [ "$rc" -eq "$code" ]; then
		pass "$name"
	else
		fail "$name" "exit $rc, expected $code: $*" "stdout: $OUT" "stderr: $ERR"
	fi
	if is_json_run "$@"; then json_check "$name" "$o" "$rc"; fi
	rm -f "$o" "$e"
}

# is_json_run CMD...: the tool with --json among its options (before a --)
is_json_run() {
	[ "$1" = "$MEMCG_POLICY" ] || return 1
	shift
	local a
	for a in "$@"; do
		case $a in
		--json) return 0 ;;
		--) return 1 ;;
		esac
	done
	return 1
}

# json_check NAME FILE EXIT-CODE: FILE (a --json stdout) is one JSON object
# that jq reads and the schema accepts, with the program's exit code
json_check() {
	local why
	if ! jq -e . "$2" >/dev/null 2>&1; then
		fail "$1: --json output is one JSON object (jq -e)" "$(head -c 300 "$2")"
	elif why=$(/usr/bin/python3 "$TOP/tests/json-validate.py" "$TOP/schema/memcg-policy.schema.json" "$2" "$3" 2>&1); then
		pass "$1: --json output matches the schema"
	else
		fail "$1: --json output matches the schema" "$why"
	fi
}

# json_run NAME CMD...: runs a --json command, checks its output against
# the schema; stdout in $OUT, exit code in $RC (stderr discarded)
json_run() {
	local name=$1 o
	shift
	o=$(mktemp)
	"$@" >"$o" 2>/dev/null
	RC=$?
	OUT=$(cat "$o")
	json_check "$name" "$o" "$RC"
	rm -f "$o"
}

# changes_of TEXT: the output of apply or set without its last line, which
# must say what the next boot gives ("next boot ..."); a FAIL line (to
# stderr) where it does not
changes_of() {
	local last
	last=$(tail -n 1 <<<"$1")
	case $last in
	"next boot "*) sed '$d' <<<"$1" ;;
	*)
		echo "FAIL: apply output ends with the next boot's state" >&2
		printf '  %s\n' "$1" >&2
		printf '%s\n' "$1" ;;
	esac
}

# A kernel in a fixture root: add_kernel ROOT VERSION CONFIG-FILE [gzip]
add_kernel() {
	local root=$1 ver=$2 cfg=$3
	mkdir -p "$root/boot" "$root/lib/modules/$ver"
	: >"$root/boot/vmlinuz-$ver"
	if [ "${4:-}" = gzip ]; then gzip -c "$cfg" >"$root/boot/config-$ver"; else cp "$cfg" "$root/boot/config-$ver"; fi
}

# The package's files in an image, for its GRUB: the program its drop-in
# runs, a stand-in that fails if run (with --root no program of the image
# runs), and the drop-in in /usr/share/memcg-policy/ that a marked line in
# /etc/default/grub sources where GRUB has no grub.d (a GRUB image without
# them is refused, tests/cmd/false-sync.sh). image_program ROOT [DIR] (DIR
# of the program: /usr/sbin by default)
image_program() {
	local d=$1${2:-/usr/sbin}
	mkdir -p "$d" "$1/usr/share/memcg-policy"
	printf '#!/bin/sh\nexit 1\n' >"$d/memcg-policy"
	chmod 0755 "$d/memcg-policy"
	cp "$TOP/grub.d/99-memcg-policy.cfg" "$1/usr/share/memcg-policy/99-memcg-policy.cfg"
}

# A policy file with safe permissions: write_policy FILE <<EOF ... EOF
write_policy() {
	mkdir -p "$(dirname "$1")"
	cat >"$1"
	chmod 0644 "$1"
}
