#!/bin/bash
# tests/cmd/include-graph.sh [SRC-DIR]: the modules of src/ and what they
# use, read from their #include lines, must form no cycle.
# A module is a header (X-int.h, its internal part, counts as X) and the
# .c files that implement it: X.c for X.h, else the table in own_module
# (the command layer's cmd-*.c implement commands.h, the GRUB files grub.h,
# the slot kinds slot-kinds.h, X-PART.c is a part of X split by concern);
# a .c file of no module fails; main.c is a module of its own. Module A
# uses B when A's header or one of A's .c files includes B's header.
# tsort(1) finds the cycles. Prints "PASS:"/"FAIL:" lines and
# "N passed, N failed".
set -u
src=${1:-"$(cd "$(dirname "$0")/../.." && pwd)/src"}
edges=$(mktemp)
unknown=$(mktemp)
trap 'rm -f "$edges" "$unknown"' EXIT
locals() { sed -n 's/^#include "\([^"]*\)\.h".*/\1/p' "$1" | sed 's/-int$//'; }
own_module() {
	local name=$1 base=${1%.*}
	case $name in
	main.c) echo main; return ;;
	*.h) echo "${base%-int}"; return ;;
	esac
	if [ -f "$src/$base.h" ]; then echo "$base"; return; fi
	case $name in
	cmd-*.c) echo commands ;;
	grub*.c | slot-grub.c) echo grub ;;
	slot-*.c) echo slot-kinds ;;
	kernel-config.c) echo kernels ;;
	*-*.c)
		# a part of module X split by concern: X-PART.c
		if [ -f "$src/${base%%-*}.h" ]; then echo "${base%%-*}"; else echo ""; fi ;;
	*) echo "" ;;
	esac
}
for f in "$src"/*.h "$src"/*.c; do
	name=$(basename "$f")
	own=$(own_module "$name")
	if [ -z "$own" ]; then
		echo "$name" >>"$unknown"
		continue
	fi
	for h in $(locals "$f"); do
		[ "$h" = "$own" ] || echo "$own $h"
	done
	echo "$own $own"
done | sort -u >"$edges"
failed=0
if [ -s "$unknown" ]; then
	failed=1
	echo "FAIL: every .c file belongs to a module (no header of its own, no rule in own_module: $(tr '\n' ' ' <"$unknown"))"
fi
if [ "$failed" -eq 0 ] && loops=$(tsort "$edges" 2>&1 >/dev/null) && [ -z "$loops" ]; then
	echo "PASS: the include graph of src/ has no cycle ($(awk '$1 != $2' "$edges" | wc -l) uses among $(awk '{print $1}' "$edges" | sort -u | wc -l) modules)"
elif [ "$failed" -eq 0 ]; then
	failed=1
	echo "FAIL: the include graph of src/ has a cycle"
	printf '%s\n' "$loops" | sed 's/^/  /'
fi
passed=$((1 - failed))
# the check itself can fail: a copy of src/ where slot.h (below the plan)
# includes plan.h must be refused
if [ -z "${1:-}" ]; then
	copy=$(mktemp -d)
	cp "$src"/*.h "$src"/*.c "$copy"/
	echo '#include "plan.h"' >>"$copy/slot.h"
	if bash "$0" "$copy" >/dev/null 2>&1; then
		failed=$((failed + 1))
		echo "FAIL: a cycle put into a copy of src/ (slot.h including plan.h) is found"
	else
		passed=$((passed + 1))
		echo "PASS: a cycle put into a copy of src/ (slot.h including plan.h) is found"
	fi
	rm -rf "$copy"
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
