# tests/boot/lib.sh - the machinery of the boot tests, sourced by run.sh:
# fetching the Debian kernel and systemd-boot, the guest initramfs, the
# ESP and GRUB disk images, running QEMU and reading the guest's report,
# and the initramfs that carries memcg-policy into a guest (the power-loss
# tier, bench/guest-onoff.sh); run.sh holds the cases.
# shellcheck shell=bash

# ---------------------------------------------------------------- logging

note() { printf '# %s\n' "$*" >&2; }

# die_prereq MSG: a missing prerequisite is a failure, never a skip.
prereq_fail() { echo "FAIL: prerequisite: $*"; PREREQ_FAILED=$((PREREQ_FAILED + 1)); }

# ---------------------------------------------------------- prerequisites

# check_prereqs FAMILY... : prints why a family cannot run, one reason a
# line; nothing when all is there.
need_cmd() {
	local c
	for c; do command -v "$c" >/dev/null 2>&1 || echo "command $c not found"; done
}

prereq_reasons() {
	local fam=$1
	need_cmd qemu-system-x86_64 timeout cpio gzip apt-get apt-cache dpkg-deb tar flock
	[ -x /bin/busybox ] || echo "/bin/busybox not found (package busybox-static)"
	if [ "$(id -u)" -ne 0 ]; then echo "not root (the initramfs needs a /dev/console node; GRUB needs loop devices and mounts)"; fi
	case $fam in
	direct) ;;
	sdboot)
		need_cmd mformat mcopy mmd
		[ -r "$OVMF_CODE" ] || echo "$OVMF_CODE not found (package ovmf)"
		[ -r "$OVMF_VARS" ] || echo "$OVMF_VARS not found (package ovmf)"
		;;
	grub-bios | grub-efi)
		need_cmd grub-mkconfig grub-probe unshare mount umount losetup mke2fs sfdisk
		[ -d /etc/grub.d ] || echo "/etc/grub.d not found (package grub-common)"
		if [ "$fam" = grub-bios ]; then
			need_cmd grub-install
			[ -r /usr/lib/grub/i386-pc/boot.img ] || echo "/usr/lib/grub/i386-pc not found (package grub-pc-bin)"
		else
			need_cmd grub-mkimage mformat mcopy mmd
			[ -r /usr/lib/grub/x86_64-efi/linux.mod ] || echo "/usr/lib/grub/x86_64-efi not found (package grub-efi-amd64-bin)"
			[ -r "$OVMF_CODE" ] || echo "$OVMF_CODE not found (package ovmf)"
		fi
		if [ ! -e /dev/loop-control ]; then
			echo "/dev/loop-control missing: no loop devices"
		elif [ "$(id -u)" -eq 0 ] && ! losetup -f >/dev/null 2>&1; then
			echo "no free loop device (losetup -f)"
		fi
		;;
	esac
}

# ----------------------------------------------------------------- assets

# shellcheck disable=SC2034 # KERNEL, KCONFIG and SDBOOT_EFI are for run.sh
# fetch_assets: the stock Debian kernel that linux-image-amd64 points at,
# and Debian's systemd-boot, into $CACHE; sets KVER, KERNEL, KCONFIG,
# SDBOOT_EFI. Packages are downloaded and unpacked, never installed.
fetch_assets() {
	mkdir -p "$CACHE" || return 1
	local lock="$CACHE/.lock"
	(
		flock 9 || exit 1
		cd "$CACHE" || exit 1
		local pkg
		pkg=$(apt-cache show --no-all-versions linux-image-amd64 2>/dev/null |
			sed -n 's/^Depends:.*\(linux-image-[0-9][^ ,]*\).*/\1/p' | head -n1)
		if [ -z "$pkg" ]; then
			echo "cannot resolve the dependency of linux-image-amd64 (apt-cache show linux-image-amd64)" >&2
			exit 1
		fi
		local ver=${pkg#linux-image-}
		if [ ! -s "vmlinuz-$ver" ] || [ ! -s "config-$ver" ]; then
			note "downloading $pkg"
			rm -f linux-image-*.deb
			apt-get download "$pkg" >apt-kernel.log 2>&1 || { cat apt-kernel.log >&2; exit 1; }
			local deb
			deb=$(find . -maxdepth 1 -name 'linux-image-*.deb' | head -n1)
			[ -n "$deb" ] || { echo "apt-get download $pkg left no .deb" >&2; exit 1; }
			rm -rf x && mkdir x
			# Only the kernel image and its config (the config is what
			# memcg-policy reads in the fixture roots).
			dpkg-deb --fsys-tarfile "$deb" | tar -x -C x --wildcards './boot/vmlinuz-*' './boot/config-*' ||
				{ echo "cannot unpack $deb" >&2; exit 1; }
			mv "x/boot/vmlinuz-$ver" "x/boot/config-$ver" . || exit 1
			rm -rf x "$deb"
		fi
		if [ ! -s systemd-bootx64.efi ]; then
			note "downloading systemd-boot-efi"
			rm -f systemd-boot-efi_*.deb
			apt-get download systemd-boot-efi >apt-sdboot.log 2>&1 || { cat apt-sdboot.log >&2; exit 1; }
			rm -rf x && mkdir x
			dpkg-deb -x systemd-boot-efi_*.deb x || exit 1
			mv x/usr/lib/systemd/boot/efi/systemd-bootx64.efi . || exit 1
			dpkg-deb -f systemd-boot-efi_*.deb Version >systemd-boot.version
			rm -rf x systemd-boot-efi_*.deb
		fi
		echo "$ver" >kernel.version
	) 9>"$lock" || return 1
	KVER=$(cat "$CACHE/kernel.version")
	KERNEL="$CACHE/vmlinuz-$KVER"
	KCONFIG="$CACHE/config-$KVER"
	SDBOOT_EFI="$CACHE/systemd-bootx64.efi"
}

# build_initramfs OUT: busybox and tests/boot/init as a gzip'd newc cpio.
build_initramfs() {
	local out=$1 d
	d=$(mktemp -d "$WORK/initramfs.XXXXXX") || return 1
	mkdir -p "$d/bin" "$d/dev" "$d/proc" "$d/sys" &&
		cp /bin/busybox "$d/bin/busybox" &&
		install -m 0755 "$HERE/init" "$d/init" &&
		mknod -m 0600 "$d/dev/console" c 5 1 &&
		(cd "$d" && find . | LC_ALL=C sort | cpio -o -H newc -R 0:0 --quiet) | gzip -9 >"$out"
	local rc=$?
	rm -rf "$d"
	return $rc
}

# The libraries memcg-policy opens at run time (by soname, src/io/dynlib.c)
DLOPENED="libz.so.1 liblzma.so.5 libzstd.so.1 liblz4.so.1 libbz2.so.1.0 liblzo2.so.2 libblkid.so.1 libjson-c.so.5
libkmod.so.2"

# build_tool_initramfs OUT INIT PROGRAM [MODULES]: a gzip'd newc cpio with
# busybox, INIT as /init, PROGRAM as /bin/memcg-policy with every shared
# library it links or opens at run time (each with what it links), and
# the MODULES directory as /lib/modules (the power-loss guest's disks).
build_tool_initramfs() {
	local out=$1 init=$2 prog=$3 mods=${4:-} d lib
	d=$(mktemp -d "$WORK/initramfs.XXXXXX") || return 1
	mkdir -p "$d/bin" "$d/dev" "$d/proc" "$d/sys" "$d/lib" &&
		cp /bin/busybox "$d/bin/busybox" &&
		install -m 0755 "$init" "$d/init" &&
		install -m 0755 "$prog" "$d/bin/memcg-policy" &&
		mknod -m 0600 "$d/dev/console" c 5 1 || return 1
	if [ -n "$mods" ]; then cp -a "$mods" "$d/lib/" || return 1; fi
	local -a objs=("$prog")
	for lib in $DLOPENED; do
		lib=$(ldconfig -p | awk -v n="$lib" '$1 == n && /x86-64/ { print $NF; exit }')
		[ -n "$lib" ] || return 1
		objs+=("$lib")
	done
	for lib in $(for o in "${objs[@]}"; do echo "$o"; ldd "$o"; done |
		awk '/=>/ { print $3; next } /^[[:space:]]*\// { print $1 } /^\// { print $1 }' | sort -u); do
		[ "$lib" = "$prog" ] && continue
		mkdir -p "$d$(dirname "$lib")" && cp -L "$lib" "$d$lib" || return 1
	done
	(cd "$d" && find . | LC_ALL=C sort | cpio -o -H newc -R 0:0 --quiet) | gzip -1 >"$out"
	local rc=$?
	rm -rf "$d"
	return $rc
}

# ----------------------------------------------------------------- images

# fat_image IMG DIR: a FAT image holding the tree DIR, written with mtools
# (the host has no vfat driver; nothing is mounted). Size from content.
fat_image() {
	local img=$1 dir=$2 kb mb
	kb=$(du -sk "$dir" | cut -f1)
	mb=$((kb / 1024 + 16))
	[ "$mb" -ge 32 ] || mb=32
	rm -f "$img"
	truncate -s "${mb}M" "$img" &&
		mformat -i "$img" -v ESP :: &&
		mcopy -s -i "$img" "$dir"/* ::/
}

# bls_field FILE KEY: the values of KEY lines in a BLS entry.
bls_field() {
	sed -n "s/^[[:space:]]*$2[[:space:]]\{1,\}\(.*[^[:space:]]\)[[:space:]]*\$/\1/p" "$1"
}

# sdboot_esp ROOT OUTDIR: an ESP image OUTDIR/esp.img as systemd-boot sees
# $BOOT = ROOT/boot: BOOTX64.EFI, loader/loader.conf, the entries in
# ROOT/boot/loader/entries (as the tool left them) and the files their
# linux/initrd lines name.
sdboot_esp() {
	local root=$1 out=$2 e p
	local esp="$out/esp"
	rm -rf "$esp"
	mkdir -p "$esp/EFI/BOOT" "$esp/loader/entries" || return 1
	cp "$SDBOOT_EFI" "$esp/EFI/BOOT/BOOTX64.EFI" || return 1
	cp "$root/boot/loader/loader.conf" "$esp/loader/loader.conf" || return 1
	for e in "$root"/boot/loader/entries/*.conf; do
		[ -f "$e" ] || { echo "no entries in $root/boot/loader/entries" >&2; return 1; }
		cp "$e" "$esp/loader/entries/" || return 1
		for p in $(bls_field "$e" linux) $(bls_field "$e" initrd); do
			case $p in
			/*) ;;
			*) p=/$p ;;
			esac
			case $p in
			*..*) echo "$e: refusing path $p" >&2; return 1 ;;
			esac
			[ -e "$esp$p" ] && continue
			mkdir -p "$(dirname "$esp$p")" && cp "$root/boot$p" "$esp$p" || return 1
		done
	done
	fat_image "$out/esp.img" "$esp" && rm -rf "$esp"
}

# Loop devices attached by this run, detached at exit whatever happens.
LOOPS_FILE=
loop_attach() { # loop_attach IMG [OFFSET]; prints the device
	local dev
	if [ -n "${2:-}" ]; then
		dev=$(losetup -f --show -o "$2" "$1") || return 1
	else
		dev=$(losetup -f --show "$1") || return 1
	fi
	echo "$dev" >>"$LOOPS_FILE"
	echo "$dev"
}
loop_detach_all() {
	[ -n "$LOOPS_FILE" ] && [ -s "$LOOPS_FILE" ] || return 0
	local d
	while read -r d; do losetup -d "$d" 2>/dev/null; done <"$LOOPS_FILE"
	: >"$LOOPS_FILE"
}

# grub_disk ROOT OUTDIR TARGET SHIMDIR: the real grub-mkconfig makes the
# menu from ROOT's /etc/default/grub (+ grub.d drop-ins) and /etc/grub.d,
# for the kernels in ROOT/boot, on a disk image OUTDIR/disk.img (MBR, one
# ext2 partition = /boot); TARGET bios: grub-install for i386-pc on it;
# efi: modules on it and OUTDIR/esp.img with a grub-mkimage'd BOOTX64.EFI;
# none: only the menu. The generated menu is copied back to
# ROOT/boot/grub/grub.cfg and to OUTDIR/grub.cfg. SHIMDIR goes first in
# grub-mkconfig's PATH (the memcg-policy the drop-in calls).
grub_disk() {
	local root=$1 out=$2 target=$3 shim=$4
	local img="$out/disk.img" la lb rc
	rm -f "$img"
	if ! truncate -s 96M "$img" ||
		! printf 'label: dos\nstart=2048, type=83, bootable\n' | sfdisk -q "$img" ||
		! mke2fs -q -F -t ext2 -L boot -E offset=1048576 -d "$root/boot" "$img" 95M; then
		echo "cannot make the /boot disk image" >&2
		return 1
	fi
	# The host kernel has no partition-table support, so the partition is
	# a second loop device at the partition's offset.
	la=$(loop_attach "$img") || return 1
	lb=$(loop_attach "$img" 1048576) || { loop_detach_all; return 1; }
	unshare -m --propagation private bash "$HERE/grub-ns.sh" "$root" "$la" "$lb" "$target" "$shim" "$out" \
		>"$out/grub-mkconfig.log" 2>&1
	rc=$?
	loop_detach_all
	if [ $rc -ne 0 ]; then
		echo "grub-mkconfig/grub-install failed (exit $rc):" >&2
		sed 's/^/    /' "$out/grub-mkconfig.log" >&2
		return 1
	fi
	mkdir -p "$root/boot/grub" && cp "$out/grub.cfg" "$root/boot/grub/grub.cfg" || return 1
	if [ "$target" = efi ]; then
		local esp="$out/esp"
		rm -rf "$esp" && mkdir -p "$esp/EFI/BOOT" &&
			mv "$out/BOOTX64.EFI" "$esp/EFI/BOOT/BOOTX64.EFI" &&
			fat_image "$out/esp.img" "$esp" && rm -rf "$esp" || return 1
	fi
	[ "$target" != none ] || rm -f "$img"
}

# ------------------------------------------------------------------- QEMU

# boot_guest OUTDIR QEMU-ARGS...: one boot, serial console to
# OUTDIR/serial.log, QEMU's own messages to OUTDIR/qemu.log. Writes
# OUTDIR/boot.result: "STATE SECONDS RC", STATE being exit, timeout or
# stalled (stuck at a firmware or bootloader prompt: stopped early).
boot_guest() {
	local out=$1
	shift
	local log="$out/serial.log" start end pid rc=0 state=
	: >"$log"
	start=$(date +%s.%N)
	timeout -k 5 "$BOOT_TIMEOUT" qemu-system-x86_64 -accel tcg -m 512 -nographic -no-reboot -nic none "$@" \
		</dev/null >"$log" 2>"$out/qemu.log" &
	pid=$!
	echo "$pid" >"$out/qemu.pid"
	while kill -0 "$pid" 2>/dev/null; do
		if grep -aq -e 'grub rescue>' -e 'grub> ' -e 'Press any key to continue' "$log" 2>/dev/null; then
			state="stalled"
			kill "$pid" 2>/dev/null
			break
		fi
		sleep 0.2
	done
	wait "$pid"
	rc=$?
	end=$(date +%s.%N)
	local secs
	secs=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", b - a }')
	if [ "$state" != stalled ]; then
		if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then state='timeout'; else state='exit'; fi
	fi
	echo "$state $secs $rc" >"$out/boot.result"
	rm -f "$out/qemu.pid"
}

# qemu_args FAMILY OUTDIR ROOT: prints the family's QEMU arguments, one a
# line (firmware, disks, kernel). Fresh OVMF variables per boot.
ovmf_args() {
	local out=$1
	cp "$OVMF_VARS" "$out/OVMF_VARS.fd" || return 1
	printf '%s\n' -drive "if=pflash,format=raw,unit=0,readonly=on,file=$OVMF_CODE" \
		-drive "if=pflash,format=raw,unit=1,file=$out/OVMF_VARS.fd"
}

# ----------------------------------------------------------- guest report

# report_field LOG MARKER: the text after "@@MARKER@@ " in the guest report
# (after whatever escape codes the firmware left at the start of the line).
report_field() {
	tr -d '\r' <"$1" | sed -n "s/^.*@@$2@@ //p" | head -n1
}

# memory_state LOG: "on", "off", or "unknown(...)" / "inconsistent(...)",
# from the memory row of /proc/cgroups (enabled column) and
# cgroup.controllers of a cgroup2 mount.
memory_state() {
	local log=$1 row ctl a=unknown b=unknown
	row=$(report_field "$log" CGROUPS-MEMORY)
	ctl=$(report_field "$log" CONTROLLERS)
	case $row in
	memory*)
		# subsys_name hierarchy num_cgroups enabled
		case $(echo "$row" | awk '{ print $4 }') in
		1) a=on ;;
		0) a=off ;;
		esac
		;;
	esac
	case $ctl in
	"" | mount-failed) ;;
	*) case " $ctl " in *" memory "*) b=on ;; *) b=off ;; esac ;;
	esac
	if [ "$a" = "$b" ]; then
		echo "$a"
	elif [ "$a" = unknown ] && [ "$b" != unknown ]; then
		echo "$b" # /proc/cgroups may lack the row (CONFIG_MEMCG_V1=n)
	else
		echo "inconsistent(/proc/cgroups=$a,cgroup2=$b)"
	fi
}

# has_word CMDLINE WORD: WORD (name=value) is on the command line, as the
# kernel reads it: "-" and "_" alike in the name, the value one item of a
# comma list (cgroup_disable=memory matches cgroup-disable=pressure,memory).
# A WORD without "=" must appear as a whole token.
has_word() {
	local cmdline=$1 word=$2 tok name val wname wval
	case $word in
	*=*) wname=${word%%=*} wval=${word#*=} ;;
	*) wname=$word wval= ;;
	esac
	wname=${wname//-/_}
	local -a toks
	read -r -a toks <<<"$cmdline"
	for tok in "${toks[@]}"; do
		[ "$tok" != -- ] || break # the rest goes to init
		case $tok in
		*=*) name=${tok%%=*} val=${tok#*=} ;;
		*) name=$tok val= ;;
		esac
		name=${name//-/_}
		[ "$name" = "$wname" ] || continue
		if [ -z "$wval" ]; then
			[ "$tok" = "${tok%%=*}" ] && return 0
			continue
		fi
		val=${val#\"}
		val=${val%\"}
		case ",$val," in *",$wval,"*) return 0 ;; esac
	done
	return 1
}
