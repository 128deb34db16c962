# tests/lib.sh - sourced by the command tests (bash). Provides:
#   $MEMCG_POLICY  the binary under test (set by tests/run.sh)
#   mkroot         a fresh fixture root (removed at exit)
#   pass NAME / fail NAME MSG / check NAME CMD... / expect_eq NAME GOT WANT
#   expect_exit NAME CODE CMD...   runs CMD, checks its exit code
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
	rm -f "$o" "$e"
	if [ "$rc" -eq "$code" ]; then
		pass "$name"
	else
		fail "$name" "exit $rc, expected $code: $*" "stdout: $OUT" "stderr: $ERR"
	fi
}

# A kernel in a fixture root: add_kernel ROOT VERSION CONFIG-FILE [gzip]
add_kernel() {
	local root=$1 ver=$2 cfg=$3
	mkdir -p "$root/boot" "$root/lib/modules/$ver"
	: >"$root/boot/vmlinuz-$ver"
	if [ "${4:-}" = gzip ]; then gzip -c "$cfg" >"$root/boot/config-$ver"; else cp "$cfg" "$root/boot/config-$ver"; fi
}

# A policy file with safe permissions: write_policy FILE <<EOF ... EOF
write_policy() {
	mkdir -p "$(dirname "$1")"
	cat >"$1"
	chmod 0644 "$1"
}
