#!/bin/bash
# tests/boot/grub-ns.sh ROOT DISK-LOOP BOOT-LOOP TARGET SHIMDIR OUTDIR
#
# Runs inside a private mount namespace (unshare -m, from lib.sh
# grub_disk). Debian's grub-mkconfig probes the devices of / and /boot and
# reads the fixed paths /etc/default/grub, /etc/default/grub.d/*.cfg and
# /etc/grub.d; so here the /boot partition of the disk image (BOOT-LOOP,
# ext2) is mounted on /boot, and the fixture's /etc/default and
# /etc/grub.d are bind-mounted over the host's, visible to this process
# tree only. Then the real grub-mkconfig writes /boot/grub/grub.cfg, and
# TARGET says how the disk becomes bootable:
#   bios  grub-install --target=i386-pc on DISK-LOOP (MBR + core.img)
#   efi   the x86_64-efi modules in /boot/grub, and OUTDIR/BOOTX64.EFI made
#         with grub-mkimage, with the early config grub-install would embed
#   none  the menu only
set -eu
root=$1 disk=$2 part=$3 target=$4 shim=$5 out=$6

mount --make-rprivate /
mount -t ext2 "$part" /boot
mount --bind "$root/etc/default" /etc/default
mount --bind "$root/etc/grub.d" /etc/grub.d
mkdir -p /boot/grub

# As root runs update-grub: a clean environment. The shim directory comes
# first so that the drop-in's "memcg-policy" is the binary under test,
# run on the fixture root.
env -i PATH="$shim:/usr/sbin:/usr/bin:/sbin:/bin" LC_ALL=C \
	grub-mkconfig -o /boot/grub/grub.cfg
cp /boot/grub/grub.cfg "$out/grub.cfg"

case $target in
bios)
	# The partition is a separate loop device (no partition scanning on
	# this host), so grub-install cannot see part_msdos by itself: name
	# the modules the core image needs to reach /boot.
	printf '(hd0) %s\n' "$disk" >/boot/grub/device.map
	env -i PATH="/usr/sbin:/usr/bin:/sbin:/bin" LC_ALL=C \
		grub-install --target=i386-pc --boot-directory=/boot \
		--modules="part_msdos ext2" "$disk"
	;;
efi)
	mkdir -p /boot/grub/x86_64-efi
	cp /usr/lib/grub/x86_64-efi/*.mod /usr/lib/grub/x86_64-efi/*.lst /boot/grub/x86_64-efi/
	uuid=$(grub-probe --target=fs_uuid /boot)
	# shellcheck disable=SC2016 # $root is GRUB's variable
	printf 'search.fs_uuid %s root\nset prefix=($root)%s\n' "$uuid" "'/grub'" >"$out/load.cfg"
	grub-mkimage -O x86_64-efi -d /usr/lib/grub/x86_64-efi -c "$out/load.cfg" -p /grub \
		-o "$out/BOOTX64.EFI" part_msdos ext2 search_fs_uuid normal
	;;
none) ;;
*)
	echo "grub-ns.sh: unknown target $target" >&2
	exit 2
	;;
esac
umount /boot
