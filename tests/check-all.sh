#!/bin/bash
# make check: the whole suite on the normal build, then once more built with
# ASan and UBSan; prints the combined "N passed, N failed" last.
set -u
cd "$(dirname "$0")/.." || exit 2
make="${MAKE:-make}"
total_p=0
total_f=0
for variant in normal sanitizers; do
	if [ "$variant" = normal ]; then args=(BUILD=build); else args=(BUILD=build-san SAN=1); fi
	echo "== $variant build"
	if ! "$make" -s "${args[@]}" all unit; then
		echo "build failed ($variant)"
		total_f=$((total_f + 1))
		continue
	fi
	out=$("$make" -s "${args[@]}" check-one 2>&1)
	printf '%s\n' "$out" | sed '$d'
	last=$(printf '%s\n' "$out" | tail -n 1)
	p=$(printf '%s\n' "$last" | sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed$/\1/p')
	f=$(printf '%s\n' "$last" | sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed$/\2/p')
	if [ -z "$p" ]; then
		printf '%s\n' "$out" | tail -n 20
		echo "test run of the $variant build gave no summary"
		total_f=$((total_f + 1))
		continue
	fi
	echo "($variant: $p passed, $f failed)"
	total_p=$((total_p + p))
	total_f=$((total_f + f))
done
echo "$total_p passed, $total_f failed"
[ "$total_f" -eq 0 ]
