#!/bin/bash
# make check:      the whole suite on the normal build, then once more built
#                  with ASan and UBSan.
# make check-all:  that, then the tiers that need root and more packages:
#                  Debian's own kernel images read by the layouts test,
#                  the Ansible role with the real ansible-playbook (check-ansible),
#                  real boots under QEMU (check-boot), the Debian and RPM
#                  packages (check-pkg), a short fuzzing round (check-fuzz),
#                  the kernel's own parser on generated edits (check-kparse),
#                  real Debian systems built, walked through and booted
#                  (check-system), power cuts of a QEMU guest in the
#                  middle of apply (check-powerloss), unified kernel
#                  images rebuilt by a Debian 13 root's kernel-install
#                  (check-uki), make check in a Debian 13 container
#                  (check-trixie)
#                  and the linters (lint).
# Prints each stage's count and, last, the combined "N passed, N failed".
set -u
cd "$(dirname "$0")/.." || exit 2
make="${MAKE:-make}"
total_p=0
total_f=0

# stage NAME COMMAND...: runs it, takes its last "N passed, N failed" line;
# a stage without one counts as one test, passed if it exited 0.
stage() {
	local name=$1
	shift
	echo "== $name"
	local out rc t0=$SECONDS
	out=$("$@" 2>&1)
	rc=$?
	printf '%s\n' "$out" | grep -v '^\s*PASS: ' | sed '$d'
	local last p f
	last=$(printf '%s\n' "$out" | grep -E '^[0-9]+ passed, [0-9]+ failed' | tail -n 1)
	p=$(printf '%s\n' "$last" | sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed.*$/\1/p')
	f=$(printf '%s\n' "$last" | sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed.*$/\2/p')
	if [ -z "$p" ]; then
		if [ "$rc" -eq 0 ]; then p=1 f=0; else p=0 f=1; printf '%s\n' "$out" | tail -n 20; fi
	elif [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		echo "$name exited $rc with no failed test: counted as a failure"
		f=1
	fi
	echo "($name: $p passed, $f failed, $((SECONDS - t0)) s)"
	total_p=$((total_p + p))
	total_f=$((total_f + f))
}

# The normal build with Debian's build flags where dpkg-buildflags is
# there (hardening: _FORTIFY_SOURCE, the stack protector, format
# security): the flags the package is built with, so that the package
# tier need not run the same suite a third time inside dpkg-buildpackage
# (make check-pkg alone still does).
flags=()
if command -v dpkg-buildflags >/dev/null 2>&1; then
	flags=("CFLAGS=$(dpkg-buildflags --get CFLAGS)" "CPPFLAGS=$(dpkg-buildflags --get CPPFLAGS)"
		"LDFLAGS=$(dpkg-buildflags --get LDFLAGS)")
fi
label="normal build"
[ ${#flags[@]} -eq 0 ] || label="normal build (Debian's build flags)"
stage "$label" "$make" -s BUILD=build "${flags[@]}" all unit check-one
stage "sanitizers build (ASan, UBSan)" "$make" -s BUILD=build-san SAN=1 all unit check-one
if [ "${1:-}" = all ]; then
	stage "Debian's kernel images (layouts)" tests/fixtures/debian-kernels.sh --test build
	stage "boot tests under QEMU" "$make" -s check-boot
	stage "a U-Boot board booted (arm64, u-boot-menu, flash-kernel)" "$make" -s check-boot-u-boot
	stage "bench's cgroup on cgroup v2, in a guest" "$make" -s check-bench-cgroup
	if [ ${#flags[@]} -gt 0 ]; then
		stage "packages (the suite ran above with the package's flags)" env PKG_NOCHECK=1 "$make" -s check-pkg
	else
		stage "packages" "$make" -s check-pkg
	fi
	stage "Ansible role" "$make" -s check-ansible
	stage "real Debian systems, booted" "$make" -s check-system
	stage "power loss under QEMU" "$make" -s check-powerloss
	if [ -f mk/fuzz.mk ]; then stage "fuzzing round" "$make" -s check-fuzz; fi
	stage "kernel parser judges the edits" "$make" -s check-kparse
	stage "UKIs rebuilt on a Debian 13 root" "$make" -s check-uki
	stage "make check on Debian 13" "$make" -s check-trixie
	stage "linters" "$make" -s lint
fi
echo "$total_p passed, $total_f failed"
[ "$total_f" -eq 0 ]
