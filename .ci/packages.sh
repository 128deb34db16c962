#!/bin/sh
# .ci/packages.sh: the Debian packages of .ci/packages, one per line, by the
# names this release has: a line "a | b" names the first that apt knows
# (Debian 12 and 13 differ in a few: libclang-rt-14-dev and
# libclang-rt-19-dev, linux-source-6.1 and linux-source-6.12). Run
# apt-get update first.
set -eu
dir=$(dirname "$0")
grep -v '^#' "$dir/packages" | while IFS= read -r line; do
	case $line in
	"") ;;
	*"|"*)
		chosen=
		for p in $(echo "$line" | tr '|' ' '); do
			if apt-cache show "$p" >/dev/null 2>&1; then
				chosen=$p
				break
			fi
		done
		# none known: the first, so that apt says which is missing
		echo "${chosen:-$(echo "${line%%|*}" | tr -d ' ')}"
		;;
	*) echo "$line" ;;
	esac
done
