#!/bin/bash
# tests/trixie/check.sh: `make check` (the normal and the sanitizer
# builds, every unit and command test) inside a Debian 13 (trixie) build
# chroot, made with mmdebstrap from the Debian mirror and kept in
# $TRIXIE_CACHE (default build/trixie-chroot) between runs, and entered as
# a container (below): the project builds and passes on Debian 13's
# compilers, libraries and tools (gcc 14, jq 1.7, run-parts, ...), not
# only on the Debian 12 it is developed on. The tree's files (tracked
# and new) are copied in. Needs root. Prints make check's output, whose
# last line is "N passed, N failed".
set -u
TOP=$(cd "$(dirname "$0")/../.." && pwd)
cache=${TRIXIE_CACHE:-$TOP/build/trixie-chroot}
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
fail() { echo "FAIL: $1"; shift; [ $# -eq 0 ] || printf '  %s\n' "$@"; echo "0 passed, 1 failed"; exit 1; }
[ "$(id -u)" -eq 0 ] || fail "check-trixie runs as root (mmdebstrap, chroot, mounts)"
command -v mmdebstrap >/dev/null || fail "mmdebstrap is installed (.ci/packages)"
# What make check needs, by Debian 13's names (.ci/packages has Debian
# 12's, with the tiers' packages).
pkgs=(build-essential pkg-config libinih-dev libblkid-dev libkmod-dev zlib1g-dev liblzma-dev libzstd-dev
	liblz4-dev libbz2-dev liblzo2-dev libjson-c-dev libfdt-dev device-tree-compiler clang jq dash kmod strace grub-common grub2-common mandoc
	shellcheck cppcheck busybox-static xz-utils zstd lz4 bzip2 lzop python3 python3-jsonschema
	python3-pefile python3-zstandard acl attr xfsprogs prometheus-node-exporter unattended-upgrades
	systemd systemd-sysv python3-apt devscripts dpkg-dev bash-completion debhelper e2fsprogs fdisk git
	ca-certificates mount u-boot-menu u-boot-tools)
list=$(printf '%s,' "${pkgs[@]}")
list=${list%,}
mkdir -p "$cache"
tarball=$cache/trixie-build.tar
if [ ! -s "$tarball" ] || [ "$(cat "$cache/pkgs" 2>/dev/null)" != "$list" ]; then
	mmdebstrap --variant=apt --include="$list" trixie "$cache/new.tar" "$mirror" >"$cache/mmdebstrap.log" 2>&1 ||
		fail "mmdebstrap builds a Debian 13 build chroot" "$(tail -n 20 "$cache/mmdebstrap.log")"
	mv "$cache/new.tar" "$tarball"
	echo "$list" >"$cache/pkgs"
fi
W=$(mktemp -d "${TMPDIR:-/tmp}/memcg-trixie.XXXXXX")
trap 'rm -rf "$W"' EXIT
R=$W/root
if ! { mkdir -p "$R" && tar -C "$R" -xf "$tarball"; }; then fail "the root unpacks"; fi
cp /etc/resolv.conf "$R/etc/resolv.conf" 2>/dev/null
# u-boot-menu (for cmd/u-boot-menu) makes an initial /boot/extlinux/extlinux.conf
# when it is first installed (4.2.4's postinst): a build container is no
# U-Boot board, and the tests of the live system would find one
rm -rf "${R:?}/boot/extlinux"
mkdir -p "$R/src"
(cd "$TOP" && git ls-files -co --exclude-standard -z | tar --null -T - -cf -) | tar -C "$R/src" -xf - ||
	fail "the tree is copied into the root"
# the corpus of kernel configs beside the project, as here
if [ -d "$TOP/../shared/corpus" ]; then mkdir -p "$R/shared" && cp -a "$TOP/../shared/corpus" "$R/shared/"; fi
# A container rather than a bare chroot: private mount and PID
# namespaces, the root pivoted (no way back to the host's), a proc of its
# own whose PID 1 is the shell below. The tool tells a chroot from a
# machine by init's root: here it sees a machine, as in systemd-nspawn,
# and the tests of the live system run. /tmp stays on the root's file
# system (grub-probe, run by the GRUB tests, finds its device).
# shellcheck disable=SC2016 # expanded by the shell in the namespaces
unshare --mount --pid --fork --propagation private /bin/sh -ec '
	R=$1
	mount --bind "$R" "$R"
	mount --rbind /dev "$R/dev"
	mount -t sysfs sysfs "$R/sys"
	mount -t tmpfs -o mode=0755 tmpfs "$R/run"
	cd "$R"
	mkdir -p .oldroot
	pivot_root . .oldroot
	exec chroot . /bin/sh -ec "
		mount -t proc proc /proc
		umount -l /.oldroot
		rmdir /.oldroot
		cd /src
		gcc --version | head -n 1
		jq --version
		make -s check"
' sh "$R"
