#!/bin/bash
# tests/boot/u-boot.sh - a U-Boot board, booted: Debian's arm64 kernel
# started by U-Boot (Debian's u-boot-qemu, qemu_arm64) under
# qemu-system-aarch64 -M virt from the extlinux.conf that the real
# u-boot-update wrote into a Debian arm64 root (tests/uboot-lib.sh):
#   1. as u-boot-update made it, with the administrator's line: memcg on;
#   2. after `memcg-policy --root set off` (which runs no program of the
#      image) and the board's own u-boot-update (as at its next kernel
#      update): memcg off, cgroup_disable=memory and the administrator's
#      arguments on the kernel's command line;
#   3. after `memcg-policy revert --regenerate`: the menu byte for byte as
#      it was, memcg on;
#   4. after `memcg-policy apply --regenerate` (the policy still off; the
#      tool runs the image's u-boot-update itself): memcg off;
# and from the boot script flash-kernel 3.107 (tests/fixtures/flash-kernel)
# wrote into another such root: memcg on as it was made, off after
# `set off` and the board's flash-kernel, on again after `revert
# --regenerate` (which runs the image's flash-kernel).
# The kernel (linux-image-*-arm64-unsigned, the version of the newest amd64
# one apt knows) and busybox-static for the guest's init are fetched from
# the Debian mirror into BOOT_CACHE (default build/boot-cache). Needs root,
# qemu-system-aarch64, u-boot-qemu, u-boot-menu, mtools, dosfstools,
# fdisk, cpio: a missing one is a failure, not a skip.
#
# Prints PASS/FAIL lines and "N passed, N failed" last; exit 1 on a failure.
set -u
export LC_ALL=C
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TOP=$(cd "$HERE/../.." && pwd)
export TOP FIX=$TOP/tests/fixtures
MEMCG_POLICY=$(realpath -m "${MEMCG_POLICY:-$TOP/build/memcg-policy}")
export MEMCG_POLICY
CACHE=$(realpath -m "${BOOT_CACHE:-$TOP/build/boot-cache}")/arm64
BOOT_TIMEOUT=${BOOT_TIMEOUT:-180}
UBOOT_BIN=/usr/lib/u-boot/qemu_arm64/u-boot.bin
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org}

# shellcheck source=tests/lib.sh
. "$TOP/tests/lib.sh"
npass=0 nfail=0
pass() { echo "PASS: $1"; npass=$((npass + 1)); }
fail() {
	echo "FAIL: $1"
	shift
	[ $# -eq 0 ] || printf '  %s\n' "$@"
	nfail=$((nfail + 1))
}
finish() {
	echo "$npass passed, $nfail failed"
	[ "$nfail" -eq 0 ]
	exit
}

missing=
for tool in qemu-system-aarch64 u-boot-update linux-version mkfs.vfat mcopy sfdisk cpio unshare; do
	command -v "$tool" >/dev/null || missing="$missing $tool"
done
[ -r "$UBOOT_BIN" ] || missing="$missing $UBOOT_BIN"
if [ -n "$missing" ]; then
	fail "the tier's tools are there" "missing:$missing (apt-get install \$(.ci/packages.sh))"
	finish
fi
if ! private_mounts; then
	fail "a private mount namespace can be made (root)"
	finish
fi

# --- the kernel and busybox for arm64, from the mirror ---
# fetch NAME [ARM64-NAME]: the arm64 .deb of the package whose amd64 build
# apt knows as NAME (named ARM64-NAME on arm64), from where the mirror keeps
# the amd64 one, into $CACHE; its path on stdout
fetch() {
	local file base deb
	file=$(apt-cache show "$1" 2>/dev/null | sed -n 's/^Filename: //p' | head -n 1)
	[ -n "$file" ] || return 1
	file=${file%_amd64.deb}_arm64.deb
	if [ -n "${2:-}" ]; then file=$(dirname "$file")/$2_${file#*/"$1"_}; fi
	deb=$CACHE/$(basename "$file")
	if [ ! -s "$deb" ]; then
		mkdir -p "$CACHE"
		for base in "$MIRROR/debian-security" "$MIRROR/debian"; do
			if python3 -c 'import sys, urllib.request; urllib.request.urlretrieve(sys.argv[1], sys.argv[2])' \
				"$base/$file" "$deb.part" 2>/dev/null; then
				mv "$deb.part" "$deb"
				break
			fi
			rm -f "$deb.part"
		done
	fi
	[ -s "$deb" ] && echo "$deb"
}
kpkg=$(apt-cache search --names-only '^linux-image-6\.1\.0-[0-9]+-amd64-unsigned$' | cut -d' ' -f1 | sort -V | tail -n 1)
K=${kpkg#linux-image-}
K=${K%-amd64-unsigned}-arm64
kdeb=$(fetch "$kpkg" "linux-image-$K-unsigned") && bdeb=$(fetch busybox-static)
if [ -z "${kdeb:-}" ] || [ -z "${bdeb:-}" ]; then
	fail "Debian's arm64 kernel ($K) and busybox-static are fetched from $MIRROR"
	finish
fi
X=$(mkroot)
if ! { dpkg-deb --fsys-tarfile "$kdeb" | tar x -C "$X" "./boot/vmlinuz-$K" "./boot/config-$K" &&
	dpkg-deb --fsys-tarfile "$bdeb" | tar x -C "$X" ./bin/busybox; }; then
	fail "the kernel $K and busybox unpacked"
	finish
fi
CFG=$X/boot/config-$K
# shellcheck source=tests/uboot-lib.sh
. "$TOP/tests/uboot-lib.sh"

# the guest's init: the kernel's command line and memcg's state, then off
ird=$(mkroot)
mkdir -p "$ird/bin" "$ird/dev" "$ird/proc"
cp "$X/bin/busybox" "$ird/bin/busybox"
cat >"$ird/init" <<'EOF'
#!/bin/busybox sh
/bin/busybox mount -t proc proc /proc
echo "MEMCG: cmdline=$(/bin/busybox cat /proc/cmdline)"
echo "MEMCG: enabled=$(/bin/busybox awk '$1 == "memory" { print $4 }' /proc/cgroups)"
echo "MEMCG: end"
/bin/busybox poweroff -f
EOF
chmod 0755 "$ird/init"
mknod "$ird/dev/console" c 5 1
rmdir "${ird:?}/etc" "${ird:?}/boot"

# --- the board's root ---
tree() {
	t=$(newtree)
	if [ -z "$t" ] || [ ! -d "$t/etc/u-boot-menu" ]; then
		fail "a fixture tree"
		finish
	fi
}
tree
cp "$X/boot/vmlinuz-$K" "$t/boot/vmlinuz-$K"
(cd "$ird" && find . | cpio -o -H newc 2>/dev/null | gzip -1) >"$t/boot/initrd.img-$K"
printf 'U_BOOT_PARAMETERS="console=ttyAMA0 boottest.keep=1"\n' >>"$t/etc/default/u-boot"
write_policy "$t/etc/memcg-policy.conf" <<'EOF'
[policy]
mode = on
EOF
check "u-boot-update writes the board's menu" uboot_update "$t"
cp "$t/boot/extlinux/extlinux.conf" "$SCRATCH/orig.conf"

# boot NAME: the tree's /boot on a FAT partition, booted by U-Boot; the
# guest's report in $CMDLINE and $ENABLED, its serial log in $SCRATCH/NAME.log
boot() {
	local img=$SCRATCH/$1 log=$SCRATCH/$1.log
	rm -f "$img.part" "$img.disk"
	CMDLINE='' ENABLED=
	mkfs.vfat -C "$img.part" 98304 >/dev/null &&
		MTOOLS_SKIP_CHECK=1 mcopy -s -i "$img.part" "$t/boot" ::/ &&
		truncate -s 97M "$img.disk" &&
		printf 'start=2048, type=c, bootable\n' | sfdisk -q "$img.disk" &&
		dd if="$img.part" of="$img.disk" bs=1M seek=1 conv=notrunc status=none || return 1
	rm -f "$img.part"
	timeout "$BOOT_TIMEOUT" qemu-system-aarch64 -M virt -cpu cortex-a57 -m 512 -nographic -no-reboot \
		-bios "$UBOOT_BIN" -drive "if=none,file=$img.disk,format=raw,id=d" \
		-device virtio-blk-device,drive=d >"$log" 2>&1 </dev/null
	rm -f "$img.disk"
	CMDLINE=$(sed -n 's/^MEMCG: cmdline=//p' "$log" | tr -d '\r' | tail -n 1)
	ENABLED=$(sed -n 's/^MEMCG: enabled=//p' "$log" | tr -d '\r' | tail -n 1)
	grep -q '^MEMCG: end' "$log"
}
# words_in LINE WORD...: is each WORD a whole word of LINE?
words_in() {
	local line=" $1 " w
	shift
	for w in "$@"; do
		case $line in *" $w "*) ;; *) return 1 ;; esac
	done
}

if boot before; then pass "before apply: the guest booted from u-boot-update's menu"; else
	fail "before apply: the guest booted from u-boot-update's menu" "$(tail -n 20 "$SCRATCH/before.log")"
fi
expect_eq "before apply: memcg on in the guest" "$ENABLED" 1
check "before apply: the administrator's line reached the kernel" words_in "$CMDLINE" console=ttyAMA0 boottest.keep=1

# set off as an image builder runs it (no program of the image runs), then
# the board's own u-boot-update, as its next kernel update runs it
expect_exit "set off (--root): exit 0" 0 "$MEMCG_POLICY" --root "$t" set off
check "set off: the policy says mode = off" grep -qx 'mode = off' "$t/etc/memcg-policy.conf"
check "set off: the menu is not regenerated by it (no program of the image runs)" \
	cmp -s "$SCRATCH/orig.conf" "$t/boot/extlinux/extlinux.conf"
check "the board's u-boot-update after set off" uboot_update "$t"
expect_exit "check after set off and u-boot-update: in sync (0)" 0 "$MEMCG_POLICY" --root "$t" check
if boot off; then pass "after set off: the guest booted"; else
	fail "after set off: the guest booted" "$(tail -n 20 "$SCRATCH/off.log")"
fi
expect_eq "after set off: memcg off in the guest" "$ENABLED" 0
check "after set off: cgroup_disable=memory and the administrator's line reached the kernel" \
	words_in "$CMDLINE" cgroup_disable=memory console=ttyAMA0 boottest.keep=1

expect_exit "revert --regenerate: exit 0" 0 in_ns "$t" "$MEMCG_POLICY" --root "$t" revert --regenerate
check "revert: the menu is u-boot-update's original, every byte" cmp "$SCRATCH/orig.conf" "$t/boot/extlinux/extlinux.conf"
if boot reverted; then pass "after revert: the guest booted"; else
	fail "after revert: the guest booted" "$(tail -n 20 "$SCRATCH/reverted.log")"
fi
expect_eq "after revert: memcg on in the guest" "$ENABLED" 1
if words_in "$CMDLINE" cgroup_disable=memory; then
	fail "after revert: no cgroup_disable=memory on the kernel's line" "$CMDLINE"
else
	pass "after revert: no cgroup_disable=memory on the kernel's line"
fi

# the policy still says off: apply --regenerate, the tool running the
# image's u-boot-update itself
expect_exit "apply --regenerate (mode = off): exit 0" 0 in_ns "$t" "$MEMCG_POLICY" --root "$t" apply --regenerate
expect_exit "check after apply --regenerate: in sync (0)" 0 "$MEMCG_POLICY" --root "$t" check
if boot applied; then pass "after apply --regenerate: the guest booted"; else
	fail "after apply --regenerate: the guest booted" "$(tail -n 20 "$SCRATCH/applied.log")"
fi
expect_eq "after apply --regenerate: memcg off in the guest" "$ENABLED" 0
check "after apply --regenerate: cgroup_disable=memory on the kernel's line" words_in "$CMDLINE" cgroup_disable=memory

# --- flash-kernel: the boot script U-Boot runs ---
# A root with flash-kernel 3.107 (tests/fixtures/flash-kernel) for the
# machine QEMU's virt board names itself ("linux,dummy-virt", which the
# package's database lists with no boot script): the administrator's entry
# in /etc/flash-kernel/db gives it the generic boot script, the board's
# device tree (the one QEMU gives U-Boot, dumped) in /etc/flash-kernel/dtbs/, and, in
# preboot.d, the one address its U-Boot does not set (fdt_addr_r), as
# flash-kernel provides for boards of one's own. The image's dpkg says
# arm64 (flash-kernel boots with booti there): a stand-in answers
# --print-architecture, bound over the host's in the tree's namespace.
NS_DIRS=$FK_NS_DIRS
# shellcheck disable=SC2016 # the stand-in's own text
printf '#!/bin/sh\n[ "$1" = --print-architecture ] && { echo arm64; exit 0; }\necho "dpkg: a stand-in" >&2\nexit 1\n' \
	>"$SCRATCH/dpkg"
chmod 0755 "$SCRATCH/dpkg"
NS_BINDS="$SCRATCH/dpkg:/usr/bin/dpkg"
tree
fk_install "$t" "linux,dummy-virt"
cp "$X/boot/vmlinuz-$K" "$t/boot/vmlinuz-$K"
(cd "$ird" && find . | cpio -o -H newc 2>/dev/null | gzip -1) >"$t/boot/initrd.img-$K"
printf '%s\n' "Machine: linux,dummy-virt" "Kernel-Flavors: arm64" "DTB-Id: qemu-virt.dtb" \
	"Boot-Script-Path: /boot/boot.scr" "U-Boot-Script-Name: bootscr.uboot-generic" \
	"Required-Packages: u-boot-tools" >"$t/etc/flash-kernel/db"
mkdir -p "$t/etc/flash-kernel/preboot.d"
printf 'setenv fdt_addr_r 0x48000000\n' >"$t/etc/flash-kernel/preboot.d/00-fdt-addr"
qemu-system-aarch64 -M "virt,dumpdtb=$t/etc/flash-kernel/dtbs/qemu-virt.dtb" -cpu cortex-a57 -m 512 \
	-bios "$UBOOT_BIN" -nographic >/dev/null 2>&1
sed -i 's/^LINUX_KERNEL_CMDLINE=.*/LINUX_KERNEL_CMDLINE="console=ttyAMA0 boottest.keep=1"/' \
	"$t/etc/default/flash-kernel"
printf '[policy]\nmode = on\n' | write_policy "$t/etc/memcg-policy.conf"
check "flash-kernel writes the board's boot script" flash_kernel "$t"
cp "$t/etc/default/flash-kernel" "$SCRATCH/fk-orig.def"
if boot fk-before; then pass "flash-kernel, before apply: the guest booted from its boot script"; else
	fail "flash-kernel, before apply: the guest booted from its boot script" "$(tail -n 20 "$SCRATCH/fk-before.log")"
fi
check "flash-kernel, before apply: U-Boot ran the boot script" grep -q 'Found U-Boot script /boot/boot.scr' \
	"$SCRATCH/fk-before.log"
expect_eq "flash-kernel, before apply: memcg on in the guest" "$ENABLED" 1
check "flash-kernel, before apply: the administrator's line reached the kernel" \
	words_in "$CMDLINE" console=ttyAMA0 boottest.keep=1

expect_exit "flash-kernel: set off (--root): exit 0" 0 "$MEMCG_POLICY" --root "$t" set off
check "flash-kernel: the board's flash-kernel after set off (its next kernel update)" flash_kernel "$t"
expect_exit "flash-kernel: check after set off and flash-kernel: in sync (0)" 0 "$MEMCG_POLICY" --root "$t" check
if boot fk-off; then pass "flash-kernel, after set off: the guest booted"; else
	fail "flash-kernel, after set off: the guest booted" "$(tail -n 20 "$SCRATCH/fk-off.log")"
fi
expect_eq "flash-kernel, after set off: memcg off in the guest" "$ENABLED" 0
check "flash-kernel, after set off: cgroup_disable=memory and the administrator's line reached the kernel" \
	words_in "$CMDLINE" cgroup_disable=memory console=ttyAMA0 boottest.keep=1

expect_exit "flash-kernel: revert --regenerate: exit 0" 0 in_ns "$t" "$MEMCG_POLICY" --root "$t" revert --regenerate
check "flash-kernel: revert gives /etc/default/flash-kernel back, every byte" \
	cmp "$SCRATCH/fk-orig.def" "$t/etc/default/flash-kernel"
if boot fk-reverted; then pass "flash-kernel, after revert: the guest booted"; else
	fail "flash-kernel, after revert: the guest booted" "$(tail -n 20 "$SCRATCH/fk-reverted.log")"
fi
expect_eq "flash-kernel, after revert: memcg on in the guest" "$ENABLED" 1
finish
