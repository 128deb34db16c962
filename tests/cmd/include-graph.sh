#!/bin/bash
# tests/cmd/include-graph.sh [SRC-DIR]: the dependency rule of src/'s
# folders (HACKING.md), read from the #include lines.
#
# A file's layer is its first folder under src/ (slots/grub/ is in slots;
# main.c is "main"). Each layer may include its own folder and the layers
# listed for it below, nothing above: the pipeline read top down,
#   cmd -> show, commit -> plan -> decide -> facts -> slots -> io -> lib
# with show and commit side by side (neither includes the other) and pft,
# the bench engine, on io and lib.
#
# An include that breaks the rule fails, unless it is written in
# tests/cmd/include-exceptions.txt ("FILE HEADER  # why"): the debt the
# move to folders found, to be cut. A listed exception that no longer
# occurs fails too, so the list can only shrink and stays true.
# Includes are resolved as the compiler does (-Isrc): "io/rootfs.h" is
# src/io/rootfs.h; a bare "rootfs.h" is looked up by name in src/.
# Prints "PASS:"/"FAIL:" lines and "N passed, N failed".
set -u
here=$(cd "$(dirname "$0")" && pwd)
src=${1:-"$(cd "$here/../.." && pwd)/src"}
exceptions=${2:-"$here/include-exceptions.txt"}

declare -A allowed=(
	[main]="cmd show commit plan decide facts slots io lib pft"
	[cmd]="show commit plan decide facts slots io lib pft"
	[show]="plan decide facts slots io lib"
	[commit]="plan decide facts slots io lib"
	[plan]="decide facts slots io lib"
	[decide]="facts slots io lib"
	[facts]="slots io lib"
	[slots]="io lib"
	[io]="lib"
	[lib]=""
	[pft]="io lib"
)
layer_of() {
	case $1 in
	*/*) echo "${1%%/*}" ;;
	*) echo main ;;
	esac
}

passed=0
failed=0
found=$(mktemp)
unknown=$(mktemp)
trap 'rm -f "$found" "$unknown"' EXIT
cd "$src" || exit 2
while IFS= read -r f; do
	f=${f#./}
	from=$(layer_of "$f")
	if [ -z "${allowed[$from]+x}" ]; then
		echo "$f" >>"$unknown"
		continue
	fi
	while IFS= read -r inc; do
		if [ -f "$inc" ]; then
			target=$inc
		else
			target=$(find . -name "$(basename "$inc")" -type f | head -n 1)
			target=${target#./}
			[ -n "$target" ] || continue # a generated or system header
		fi
		to=$(layer_of "$target")
		[ "$to" = "$from" ] && continue
		case " ${allowed[$from]} " in
		*" $to "*) continue ;;
		esac
		echo "$f $target"
	done < <(sed -n 's/^#include "\([^"]*\)".*/\1/p' "$f")
done < <(find . -name '*.[ch]' | sort) | sort -u >"$found"

if [ -s "$unknown" ]; then
	failed=$((failed + 1))
	echo "FAIL: every file is in a folder of the rule (not in one: $(tr '\n' ' ' <"$unknown"))"
else
	passed=$((passed + 1))
	echo "PASS: every file of src/ is in a folder of the rule"
fi

listed=$(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$exceptions" | awk '{print $1, $2}' | sort -u)
new=$(comm -23 "$found" <(printf '%s\n' "$listed" | sed '/^$/d'))
gone=$(comm -13 "$found" <(printf '%s\n' "$listed" | sed '/^$/d'))
if [ -z "$new" ]; then
	passed=$((passed + 1))
	echo "PASS: no include against the folders' rule beyond the $(wc -l <"$found") recorded ones"
else
	failed=$((failed + 1))
	echo "FAIL: includes against the folders' rule (FILE HEADER), not recorded:"
	printf '%s\n' "$new" | sed 's/^/  /'
fi
if [ -z "$gone" ]; then
	passed=$((passed + 1))
	echo "PASS: every recorded exception still occurs (the list only shrinks)"
else
	failed=$((failed + 1))
	echo "FAIL: recorded exceptions that no longer occur (take them out of $(basename "$exceptions")):"
	printf '%s\n' "$gone" | sed 's/^/  /'
fi

# the house rule on size: no source file over 600 lines (a longer one is
# cut where its parts meet, as slots/grub/vars.c out of plan.c)
long=$(find . -name '*.[ch]' -exec wc -l {} + | awk '$2 != "total" && $1 > 600 { print $2 " (" $1 ")" }')
if [ -z "$long" ]; then
	passed=$((passed + 1))
	echo "PASS: no source file over 600 lines"
else
	failed=$((failed + 1))
	echo "FAIL: source files over 600 lines: $(printf '%s' "$long" | tr '\n' ' ')"
fi

# the check itself can fail: a copy of src/ where a header of lib/ (the
# bottom) includes one of cmd/ (the top) must be refused
if [ -z "${1:-}" ]; then
	copy=$(mktemp -d)
	cp -a "$src/." "$copy/"
	echo '#include "cmd/commands.h"' >>"$copy/lib/util.h"
	if bash "$0" "$copy" "$exceptions" >/dev/null 2>&1; then
		failed=$((failed + 1))
		echo "FAIL: a wrong include put into a copy of src/ (lib/util.h including cmd/commands.h) is found"
	else
		passed=$((passed + 1))
		echo "PASS: a wrong include put into a copy of src/ (lib/util.h including cmd/commands.h) is found"
	fi
	rm -rf "$copy"
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
