#!/bin/bash
# bench/grubby-style.sh - A STAND-IN FOR FEDORA'S grubby-bls, NOT grubby.
#
# grubby is not packaged in Debian, so bench/grubby-compare.sh cannot run
# the real one. This script edits BLS entries the way grubby-bls (the bash
# script behind `grubby` on Fedora, in rhboot/grubby) goes about it, so
# that its cost can be measured here:
#   - it first loads every entry: for each file and each of six keys
#     (title, version, linux, initrd, options, id) a `grep | sed` pipeline
#     in a command substitution;
#   - it looks up the default entry in grubenv (`grep | sed`);
#   - then, for every entry, a command substitution computes the new
#     options: one `echo | sed` pipeline per argument to remove, one
#     `echo | grep` per argument to add (and `echo | sed` when its key is
#     there already), and one `sed -i` writes the options line;
#   - like grubby-bls, it makes nothing durable: GNU `sed -i` writes a
#     temp file and renames it over the entry, with no fsync.
# Same kind and number of processes per entry and argument as grubby-bls,
# written anew for this benchmark; it handles only what the benchmark
# needs: --update-kernel=ALL with --args and --remove-args.
#
# Usage: bench/grubby-style.sh -b BLS-DIR [--env GRUBENV] --update-kernel=ALL
#            [--args="A B"] [--remove-args="C D"]
#
# Word splitting of unquoted $line, `ls` in a for loop and sed for what
# bash could do: deliberately, as grubby-bls does them (and as they cost).
# shellcheck disable=SC2045,SC2001,SC2086
set -u

blsdir=/boot/loader/entries
env=/boot/grub2/grubenv
add=""
remove=""
which=""
while [ $# -gt 0 ]; do
	case $1 in
	-b | --bls-directory) blsdir=$2; shift ;;
	--bls-directory=*) blsdir=${1#*=} ;;
	--env) env=$2; shift ;;
	--env=*) env=${1#*=} ;;
	--update-kernel=*) which=${1#*=} ;;
	--args=*) add=${1#*=} ;;
	--remove-args=*) remove=${1#*=} ;;
	*) echo "grubby-style.sh: unsupported: $1" >&2; exit 2 ;;
	esac
	shift
done
[ "$which" = ALL ] || { echo "grubby-style.sh: only --update-kernel=ALL" >&2; exit 2; }

# what grubby-bls reads at start
[ -r /etc/os-release ] && . /etc/os-release
machine_arch=$(uname -m)
: "$machine_arch"

# value KEY FILE: the value of KEY in a BLS file (one grep | sed pipeline)
value() {
	grep "^$1[ 	]" "$2" | sed -e "s,^$1[ 	]*,,"
}

files=()
options=()
load_entries() {
	local f i=0
	files=()
	options=()
	for f in $(ls -vr "$blsdir"/*.conf 2>/dev/null); do
		files[i]=$f
		local title version linux initrd id
		title=$(value title "$f")
		version=$(value version "$f")
		linux=$(value linux "$f")
		initrd=$(value initrd "$f")
		options[i]=$(value options "$f")
		id=$(value id "$f")
		: "$title$version$linux$initrd$id"
		i=$((i + 1))
	done
}

# new_options OLD: OLD with the --remove-args taken out and the --args put in
new_options() {
	local line=$1 a k v there
	for a in $remove; do
		line=$(echo $line | sed -e "s,\(^\| \)$a\( \|\$\), ,")
	done
	for a in $add; do
		case $a in
		*=*)
			v=${a##*=}
			k=${a%=*}
			there=$(echo $line | grep "$k=")
			if [ -n "$there" ]; then
				line=$(echo $line | sed -e "s,$k=[^ ]*,$k=$v,")
			else
				line="$line $k=$v"
			fi
			;;
		*)
			there=$(echo $line | grep "$a")
			[ -n "$there" ] || line="$line $a"
			;;
		esac
	done
	echo $line
}

load_entries
default=$(grep '^saved_entry=' "$env" 2>/dev/null | sed -e 's/^saved_entry=//')
: "$default"

for i in "${!files[@]}"; do
	new=$(new_options "${options[i]}")
	sed -i -e "s,^options.*,options $new," "${files[i]}"
done
