#!/bin/bash
# tests/uki/fetch-ukify.sh DIR: Debian 13's ukify and systemd-stub, for the
# tests to build real UKIs and addons with: systemd-ukify and
# systemd-boot-efi of trixie, downloaded from the Debian mirror by apt
# (its signature checks) into DIR/apt and unpacked into DIR/root. ukify
# runs with the host's Python (python3-pefile, python3-zstandard in
# .ci/packages). Prints DIR/root; does nothing where it is there already.
set -eu
dir=$1
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
# two test runs (the normal and the sanitizer build) may ask at once
exec 9>"$dir/.lock"
flock 9
if [ -x "$dir/root/usr/bin/ukify" ] && [ -f "$dir/root/usr/lib/systemd/boot/efi/linuxx64.efi.stub" ]; then
	echo "$dir/root"
	exit 0
fi
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
a=$dir/apt
mkdir -p "$a/lists/partial" "$a/cache/archives/partial" "$a/etc"
printf 'deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] %s trixie main\n' "$mirror" >"$a/etc/sources.list"
opts=(-o "Dir::Etc::SourceList=$a/etc/sources.list" -o "Dir::Etc::SourceParts=-"
	-o "Dir::State::Lists=$a/lists" -o "Dir::Cache=$a/cache" -o "Dir::State::status=/dev/null"
	-o "APT::Architecture=amd64" -o "Debug::NoLocking=1" -q)
apt-get "${opts[@]}" update >"$a/update.log" 2>&1 || { cat "$a/update.log" >&2; exit 1; }
(cd "$a/cache/archives" && apt-get "${opts[@]}" download systemd-ukify systemd-boot-efi >"$a/download.log" 2>&1) ||
	{ cat "$a/download.log" >&2; exit 1; }
rm -rf "$dir/root"
for deb in "$a"/cache/archives/*.deb; do dpkg-deb -x "$deb" "$dir/root"; done
echo "$dir/root"
