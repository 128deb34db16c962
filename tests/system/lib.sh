# tests/system/lib.sh - the machinery of the system tests, sourced by
# run.sh: real Debian 12 systems built with mmdebstrap, their disk images,
# chroots into them, and boots under QEMU with the observation read back
# from the serial console. Nothing here knows the journey; run.sh does.
# shellcheck shell=bash
# shellcheck disable=SC2034 # the variables set here are run.sh's

note() { printf '# %s\n' "$*" >&2; }

# ----------------------------------------------------------------- kernels

# pick_kernels: sets KOLD (the kernel package the base system gets: the one
# the oldest linux-image-amd64 in the archive depends on, i.e. the point
# release's) and KNEW (the one the newest linux-image-amd64 depends on,
# installed later with apt as an update). Both as package names.
pick_kernels() {
	local vers v dep
	vers=$(apt-cache madison linux-image-amd64 2>/dev/null | awk '{ print $3 }' | sort -V | uniq)
	KOLD='' KNEW=''
	for v in $vers; do
		dep=$(apt-cache show "linux-image-amd64=$v" 2>/dev/null |
			sed -n 's/^Depends:.*\(linux-image-[0-9][^ ,]*-amd64\).*/\1/p' | head -n1)
		[ -n "$dep" ] || continue
		[ -n "$KOLD" ] || KOLD=$dep
		KNEW=$dep
	done
	if [ -z "$KOLD" ] || [ "$KOLD" = "$KNEW" ]; then
		echo "cannot find two kernel versions of linux-image-amd64 (apt-cache madison linux-image-amd64: $vers); run apt-get update" >&2
		return 1
	fi
}

# ---------------------------------------------------------------- building

# build_rootfs DIR PACKAGES...: a bookworm system (SUITE, if set: trixie
# for the UKI system) from the Debian mirror
# with mmdebstrap into the directory DIR. The .deb files are kept in
# $DEBS ($CACHE/debs, or a journey's own copy of it: see run_parallel)
# between runs (apt reuses them; nothing is downloaded twice).
build_rootfs() {
	local dir=$1
	shift
	local inc
	inc=$(printf '%s,' "$@")
	mkdir -p "$DEBS" || return 1
	rm -rf "$dir"
	mkdir -p "$(dirname "$dir")" || return 1
	# APT's sandbox user is root: the download needs no unprivileged
	# access to the host's /dev (on some hosts /dev/null is not 0666).
	# dpkg without an fsync per file while the image is built (the
	# image is made from the tree afterwards; nothing here needs it
	# durable): taken out again before the build ends, so every later
	# dpkg run of the journey is the system's own.
	# shellcheck disable=SC2016 # $1 is mmdebstrap's (the chroot)
	mmdebstrap --variant=apt --skip=essential/unlink \
		--aptopt='APT::Sandbox::User "root"' \
		--include="${inc%,}" \
		--setup-hook='mkdir -p "$1"/etc/dpkg/dpkg.cfg.d && echo force-unsafe-io >"$1"/etc/dpkg/dpkg.cfg.d/00memcg-test-unsafe-io' \
		--customize-hook='rm -f "$1"/etc/dpkg/dpkg.cfg.d/00memcg-test-unsafe-io' \
		--setup-hook='mkdir -p "$1"/var/cache/apt/archives/' \
		--setup-hook="sync-in $DEBS /var/cache/apt/archives/" \
		--customize-hook="sync-out /var/cache/apt/archives $DEBS" \
		"${SUITE:-bookworm}" "$dir" \
		"deb $MIRROR ${SUITE:-bookworm} main" \
		"deb $MIRROR-security ${SUITE:-bookworm}-security main"
}

# customize_rootfs DIR: what an installer leaves besides the packages, and
# what the test adds: a machine id, a host name, APT's sources as the
# installer writes them (the system updates from the mirror later), and
# the observation unit.
customize_rootfs() {
	local dir=$1
	od -An -N16 -tx1 /dev/urandom | tr -d ' \n' >"$dir/etc/machine-id" && echo >>"$dir/etc/machine-id" &&
		echo memcg-system >"$dir/etc/hostname" &&
		install -D -m 0755 "$HERE/observe.sh" "$dir/usr/local/sbin/memcg-observe" &&
		install -D -m 0644 "$HERE/memcg-observe.service" "$dir/etc/systemd/system/memcg-observe.service" &&
		mkdir -p "$dir/etc/systemd/system/sysinit.target.wants" &&
		ln -sf ../memcg-observe.service "$dir/etc/systemd/system/sysinit.target.wants/memcg-observe.service"
}

# ------------------------------------------------------------------ images

# Loop devices and mounts of this run, undone at exit whatever happens.
LOOPS=()
MOUNTS=()
# loop_attach IMG [OFFSET SIZE]: prints the device. Only /dev/loop10 and
# up: Debian's 10_linux takes a /dev/loop[0-9] root for a loop-mounted
# file and replaces it with the file's path.
loop_attach() {
	local n dev
	for n in $(seq 10 99); do
		dev=/dev/loop$n
		[ -b "$dev" ] || mknod -m 0660 "$dev" b 7 "$n" 2>/dev/null || continue
		losetup "$dev" >/dev/null 2>&1 && continue # in use
		if [ $# -gt 1 ]; then
			losetup -o "$2" --sizelimit "$3" "$dev" "$1" 2>/dev/null || continue
		else
			losetup "$dev" "$1" 2>/dev/null || continue
		fi
		echo "$dev"
		return 0
	done
	echo "no free loop device among /dev/loop10../dev/loop99" >&2
	return 1
}
undo_all() {
	local i
	for ((i = ${#MOUNTS[@]} - 1; i >= 0; i--)); do umount "${MOUNTS[i]}" 2>/dev/null || umount -l "${MOUNTS[i]}" 2>/dev/null; done
	MOUNTS=()
	for i in "${LOOPS[@]}"; do losetup -d "$i" 2>/dev/null; done
	LOOPS=()
}
mnt() { # mnt ARGS... TARGET: mount, remembered for undo_all
	mount "$@" || return 1
	MOUNTS+=("${*: -1}")
}

# make_disk IMG LAYOUT DIR [ESPDIR]: a raw disk image of SIZE with a real
# partition table (sfdisk) and the root file system made from DIR
# (mkfs.ext4 -d, no loop device). LAYOUT:
#   bios  MBR, partition 1 = ext4 root (GRUB's core image in the gap)
#   efi   GPT, partition 1 = ESP (FAT, from ESPDIR with mtools),
#         partition 2 = ext4 root
# Sets ROOT_OFF, ROOT_SIZE (bytes), ESP_OFF, ESP_SIZE.
DISK_MB=3072
ESP_MB=256
make_disk() {
	local img=$1 layout=$2 dir=$3 esp=${4:-}
	rm -f "$img"
	truncate -s "${DISK_MB}M" "$img" || return 1
	case $layout in
	bios)
		printf 'label: dos\nstart=2048, type=83, bootable\n' | sfdisk -q "$img" || return 1
		ROOT_OFF=$((2048 * 512))
		;;
	efi)
		printf 'label: gpt\nstart=2048, size=%sMiB, type=uefi, name=ESP\ntype=linux, name=root\n' "$ESP_MB" |
			sfdisk -q "$img" || return 1
		ESP_OFF=$((2048 * 512))
		ESP_SIZE=$((ESP_MB * 1024 * 1024))
		ROOT_OFF=$((ESP_OFF + ESP_SIZE))
		;;
	esac
	ROOT_SIZE=$(($(stat -c %s "$img") - ROOT_OFF - 1024 * 1024))
	mkfs.ext4 -q -F -L root -E offset="$ROOT_OFF" -d "$dir" "$img" "$((ROOT_SIZE / 1024))k" || return 1
	if [ "$layout" = efi ]; then
		ESPDIR=$esp esp_to_image "$img" || return 1
	fi
}

# open_system IMG: the root file system of IMG mounted on $MNT (a loop
# device at its offset; the whole disk on another, $DISK_DEV), with
# /proc, /sys, a small /dev holding those two devices and the
# /dev/disk/by-uuid link udev would make (grub-mkconfig writes root=UUID=
# only when it exists), /run, /tmp, and APT's archive cache bound to
# $DEBS. The host's resolv.conf for APT.
open_system() {
	local img=$1 rootdev d
	DISK_DEV=$(loop_attach "$img") || return 1
	LOOPS+=("$DISK_DEV")
	rootdev=$(loop_attach "$img" "$ROOT_OFF" "$ROOT_SIZE") || return 1
	LOOPS+=("$rootdev")
	mkdir -p "$MNT" && mnt -t ext4 "$rootdev" "$MNT" || return 1
	mnt -t proc proc "$MNT/proc" && mnt -t sysfs sysfs "$MNT/sys" &&
		mnt -t tmpfs -o mode=0755 tmpfs "$MNT/dev" &&
		mnt -t tmpfs -o mode=0755 tmpfs "$MNT/run" || return 1
	for d in null:1:3 zero:1:5 full:1:7 random:1:8 urandom:1:9 tty:5:0 console:5:1; do
		mknod -m 0666 "$MNT/dev/${d%%:*}" c "$(echo "$d" | cut -d: -f2)" "${d##*:}" || return 1
	done
	blknod "$DISK_DEV" "$MNT$DISK_DEV" && blknod "$rootdev" "$MNT$rootdev" || return 1
	mkdir -p "$MNT/dev/pts" "$MNT/dev/shm" "$MNT/dev/disk/by-uuid" || return 1
	mnt -t devpts -o newinstance,ptmxmode=0666 devpts "$MNT/dev/pts" || return 1
	ln -s pts/ptmx "$MNT/dev/ptmx"
	ROOT_UUID=$(blkid -p -s UUID -o value "$rootdev") || return 1
	ln -s "../../${rootdev#/dev/}" "$MNT/dev/disk/by-uuid/$ROOT_UUID" || return 1
	mkdir -p "$MNT/var/cache/apt/archives" && mnt --bind "$DEBS" "$MNT/var/cache/apt/archives" || return 1
	cp /etc/resolv.conf "$MNT/etc/resolv.conf" 2>/dev/null || :
	if [ -n "${ESPDIR:-}" ]; then
		mkdir -p "$ESPDIR" "$MNT/boot/efi" && mnt --bind "$ESPDIR" "$MNT/boot/efi" || return 1
	fi
}

# esp_to_image IMG: the ESP partition of IMG made anew (FAT, the volume
# serial $ESP_SERIAL that the system's fstab names) from $ESPDIR. The host
# has no FAT driver: in the chroot the ESP is that directory, bound on
# /boot/efi; mtools writes it into the image before each boot.
ESP_SERIAL=1234ABCD
esp_to_image() {
	mformat -i "$1@@$ESP_OFF" -T $((ESP_SIZE / 512)) -h 64 -s 32 -F -N "$ESP_SERIAL" -v ESP :: || return 1
	[ -z "$(ls -A "$ESPDIR")" ] || mcopy -s -i "$1@@$ESP_OFF" "$ESPDIR"/* ::/
}

# in_sys_esp_device CMD...: in_sys CMD with /boot/efi a mount whose
# source is a block device of the ESP partition, as grub-install wants it
# (it reads the device to see a FAT file system). The host has no FAT
# driver: the mount is a tmpfs holding $ESPDIR's files, named after a loop
# device at the ESP's offset; what CMD leaves there goes back to $ESPDIR.
in_sys_esp_device() {
	local dev rc
	dev=$(loop_attach "$IMG" "$ESP_OFF" "$ESP_SIZE") || return 1
	LOOPS+=("$dev")
	blknod "$dev" "$MNT$dev" || return 1
	mnt -t tmpfs "$dev" "$MNT/boot/efi" || return 1
	cp -a "$ESPDIR/." "$MNT/boot/efi/" || return 1
	in_sys "$@"
	rc=$?
	find "$ESPDIR" -mindepth 1 -delete && cp -a "$MNT/boot/efi/." "$ESPDIR/" || rc=1
	umount "$MNT/boot/efi" && unset 'MOUNTS[-1]' || rc=1
	rm -f "$MNT$dev"
	return $rc
}

blknod() { # blknod DEV NODE: NODE, a block device node for DEV
	local maj min
	maj=$(stat -L -c %t "$1") && min=$(stat -L -c %T "$1") || return 1
	mknod -m 0660 "$2" b "$((0x$maj))" "$((0x$min))"
}

# close_system: everything of open_system undone, the file system clean.
close_system() {
	sync
	undo_all
}

# in_sys CMD...: CMD run as root runs it in the system (chroot, a clean
# environment, no questions from debconf).
# SYS_ENV: more NAME=VALUE for every command (the ESP checks relaxed
# where the ESP is a directory in the chroot, see esp_to_image).
# AS_LIVE: more NAME=VALUE while the chroot stands for the running
# machine (the administrator's steps; empty for an image build's steps).
SYS_ENV=()
AS_LIVE=()
in_sys() {
	chroot "$MNT" /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
		HOME=/root LC_ALL=C DEBIAN_FRONTEND=noninteractive "${SYS_ENV[@]}" "${AS_LIVE[@]}" "$@"
}

# ------------------------------------------------------------------- QEMU

# boot_system OUTDIR IMG FIRMWARE: one boot of the disk image under QEMU
# (TCG): FIRMWARE bios (SeaBIOS) or efi (OVMF, fresh variables). The
# serial console goes to OUTDIR/serial.log (kept), QEMU's own messages to
# OUTDIR/qemu.log; a timeout on every boot. Sets BOOT_STATE (exit,
# timeout) and BOOT_SECS.
boot_system() {
	local out=$1 img=$2 fw=$3 start end rc
	local -a fwargs=()
	mkdir -p "$out" || return 1
	if [ "$fw" = efi ]; then
		cp "$OVMF_VARS" "$out/OVMF_VARS.fd" || return 1
		fwargs=(-drive "if=pflash,format=raw,unit=0,readonly=on,file=$OVMF_CODE"
			-drive "if=pflash,format=raw,unit=1,file=$out/OVMF_VARS.fd")
	fi
	start=$(date +%s.%N)
	timeout -k 5 "$BOOT_TIMEOUT" nice qemu-system-x86_64 -accel tcg -smp 1 -m "$BOOT_MEM" \
		-nographic -no-reboot -nic none "${fwargs[@]}" \
		-drive "file=$img,format=raw,if=virtio" \
		</dev/null >"$out/serial.log" 2>"$out/qemu.log"
	rc=$?
	end=$(date +%s.%N)
	BOOT_SECS=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", b - a }')
	if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then BOOT_STATE='timeout'; else BOOT_STATE='exit'; fi
}

# memcg_field LOG KEY: the value of the first "MEMCG: KEY=" line.
memcg_field() {
	tr -d '\r' <"$1" | sed -n "s/^MEMCG: $2=//p" | head -n1
}

# memory_state LOG: on, off or unknown, from the guest's report: the
# enabled column of /proc/cgroups' memory row and the cgroup2 root's
# controllers must agree.
memory_state() {
	local row ctl a=unknown b=unknown
	row=$(memcg_field "$1" cgroups-memory)
	ctl=$(memcg_field "$1" controllers)
	case $(echo "$row" | awk '{ print $4 }') in
	1) a=on ;;
	0) a=off ;;
	esac
	case $ctl in
	"" | none) ;;
	*) case " $ctl " in *" memory "*) b=on ;; *) b=off ;; esac ;;
	esac
	if [ "$a" = "$b" ]; then echo "$a"; else echo "inconsistent(/proc/cgroups=$a,cgroup.controllers=$b)"; fi
}

# ----------------------------------------------------------------- package

# copy_debs FROM TO: the .deb files of FROM that TO lacks, hard-linked
# (copied across file systems). Only the .deb files: APT's lock file must
# not be shared between two journeys' caches (one's apt-get would find it
# taken by the other's).
copy_debs() {
	local f
	mkdir -p "$2" || return 1
	for f in "$1"/*.deb; do
		[ -e "$f" ] || continue
		[ -e "$2/${f##*/}" ] || ln "$f" "$2/" 2>/dev/null || cp "$f" "$2/" || return 1
	done
}

# build_deb OUTDIR: the .deb of this tree built with dpkg-buildpackage
# (-us -uc -b, nocheck: the suite is the other tiers' job) from a copy of
# the working tree, with its debian/ directory (top level, or
# packaging/debian). MEMCG_SYSTEM_BROKEN=apply-writes-nothing builds a
# deliberately broken package instead: apply commits nothing but reports
# as usual (the tier must fail); uki-not-rebuilt: kernel-install is never
# run for a UKI, as if it had succeeded (the UKI journey must fail). Sets
# DEB.
build_deb() {
	local out=$1 ver src deb
	ver=$(sed -n 's/^VERSION *= *//p' "$TOP/Makefile")
	src="$out/memcg-policy-$ver"
	rm -rf "$out" && mkdir -p "$src" || return 1
	tar -C "$TOP" --exclude=./.git --exclude='./build*' --exclude=./debian -cf - . | tar -C "$src" -xf - || return 1
	if [ -d "$TOP/debian" ]; then
		cp -a "$TOP/debian" "$src/debian" || return 1
	else
		rm -rf "$src/debian" && cp -a "$TOP/packaging/debian" "$src/debian" || return 1
	fi
	case ${MEMCG_SYSTEM_BROKEN:-} in
	"") ;;
	apply-writes-nothing)
		note "building a BROKEN package: apply commits nothing"
		sed -i 's/^\([[:space:]]*\)r = commit_changes(.*);/\1r = 0; \/\* broken on purpose \*\//' "$src/src/cmd/apply.c"
		grep -q 'broken on purpose' "$src/src/cmd/apply.c" || {
			echo "MEMCG_SYSTEM_BROKEN: the mutation no longer applies to src/cmd/apply.c" >&2
			return 1
		}
		;;
	uki-not-rebuilt)
		note "building a BROKEN package: UKIs are said to be rebuilt and are not"
		sed -i 's/^\([[:space:]]*\)rc = spawn_run(argv, .*);$/\1rc = 0; \/\* broken on purpose \*\//' \
			"$src/src/slots/uki-run.c"
		grep -q 'broken on purpose' "$src/src/slots/uki-run.c" || {
			echo "MEMCG_SYSTEM_BROKEN: the mutation no longer applies to src/slots/uki-run.c" >&2
			return 1
		}
		;;
	*)
		echo "MEMCG_SYSTEM_BROKEN=$MEMCG_SYSTEM_BROKEN: unknown (known: apply-writes-nothing, uki-not-rebuilt)" >&2
		return 1
		;;
	esac
	(cd "$src" && DEB_BUILD_OPTIONS=nocheck nice dpkg-buildpackage -us -uc -b) >"$out/build.log" 2>&1 || {
		tail -n 40 "$out/build.log" >&2
		return 1
	}
	deb=$(find "$out" -maxdepth 1 -name 'memcg-policy_*.deb' | head -n1)
	[ -n "$deb" ] || { echo "dpkg-buildpackage left no memcg-policy_*.deb in $out" >&2; return 1; }
	DEB=$deb
}
