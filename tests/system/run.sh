#!/bin/bash
# tests/system/run.sh [SYSTEM...] - real Debian 12 systems, built at test
# time with mmdebstrap from the Debian mirror, the memcg-policy package
# (built from this tree with dpkg-buildpackage) installed into them with
# apt, the administrator's whole journey walked in a chroot with the
# distribution's own tools (the chroot standing for the running machine:
# MEMCG_POLICY_IGNORE_CHROOT=1, except in step 3, a kernel installed as
# an image build installs it, where the chroot is what it is), and each
# step booted under QEMU (TCG) by the
# bootloader installed on the disk image, systemd as init; a unit added by
# the test reports the memory controller's state on the serial console.
# See tests/system/README.md.
#
# SYSTEMs: grub-bios, grub-efi, sdboot (Debian 12), uki-trixie (Debian 13
# with unified kernel images) (default: all of them).
# Environment: SYSTEM_CACHE (the .deb files, kept between runs; default
# $XDG_CACHE_HOME/memcg-policy-system, else build/system-cache), SYSTEM_WORK (images and serial logs of the last
# run; default build/system-work), BOOT_TIMEOUT (seconds per boot, 300),
# MEMCG_SYSTEM_MIRROR (default http://deb.debian.org/debian),
# MEMCG_SYSTEM_BROKEN=apply-writes-nothing (a broken package: must fail),
# MEMCG_SYSTEM_UNTIL=N (stop after step N of the journey),
# SYSTEM_JOBS (journeys at once, each in its own process; default 3: all of them).
#
# Prints "PASS: ..." / "FAIL: ..." per check and "N passed, N failed" last.
set -u
export LC_ALL=C
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TOP=$(cd "$HERE/../.." && pwd)
if [ -n "${SYSTEM_CACHE:-}" ]; then
	CACHE=$(realpath -m "$SYSTEM_CACHE")
elif [ -n "${XDG_CACHE_HOME:-}" ]; then
	CACHE=$(realpath -m "$XDG_CACHE_HOME/memcg-policy-system")
else
	CACHE=$TOP/build/system-cache
fi
WORK=$(realpath -m "${SYSTEM_WORK:-$TOP/build/system-work}")
BOOT_TIMEOUT=${BOOT_TIMEOUT:-300}
BOOT_MEM=${BOOT_MEM:-1024}
MIRROR=${MEMCG_SYSTEM_MIRROR:-http://deb.debian.org/debian}
OVMF_CODE=${OVMF_CODE:-/usr/share/OVMF/OVMF_CODE_4M.fd}
OVMF_VARS=${OVMF_VARS:-/usr/share/OVMF/OVMF_VARS_4M.fd}

# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$HERE/lib.sh"

# shellcheck source-path=SCRIPTDIR source=../tier.sh
. "$TOP/tests/tier.sh"
tier_before_finish() { undo_all; }
trap undo_all EXIT

# ------------------------------------------------------------------ checks

# sys_run NAME CMD...: CMD in the system; its output (stdout and stderr)
# in $OUT and $S/NAME.log, its exit code in $RC.
sys_run() {
	local name=$1
	shift
	in_sys "$@" >"$S/$name.log" 2>&1
	RC=$?
	OUT=$(cat "$S/$name.log")
}
# sys_ok NAME CMD...: sys_run, and a check that it exited 0.
sys_ok() {
	local name=$1
	shift
	sys_run "$name" "$@"
	if [ "$RC" -eq 0 ]; then
		pass "$SYS $STEP: $* exits 0"
	else
		fail "$SYS $STEP: $* exits 0" "exit $RC; its output:" "$(tail -n 30 "$S/$name.log")"
	fi
}
expect_out() { # expect_out WHAT FIXED-STRING: in $OUT
	if grep -qF -- "$2" <<<"$OUT"; then pass "$SYS $STEP: $1"; else fail "$SYS $STEP: $1" "no line with: $2" "output:" "$OUT"; fi
}
same_file() { # same_file WHAT SAVED PATH-IN-SYSTEM
	if cmp -s "$2" "$MNT$3"; then
		pass "$SYS $STEP: $1"
	else
		fail "$SYS $STEP: $1" "$(diff -u "$2" "$MNT$3" 2>&1 | head -n 20)"
	fi
}
# first_linux: the first "linux" line of the generated GRUB menu (the
# default entry).
first_linux() {
	sed -n 's/^[[:space:]]*linux[[:space:]]\{1,\}//p' "$MNT/boot/grub/grub.cfg" | head -n1
}
has_token() { # has_token LINE TOKEN
	local t
	for t in $1; do [ "$t" = "$2" ] && return 0; done
	return 1
}
expect_token() { # expect_token WHAT LINE TOKEN yes|no
	local got=no
	has_token "$2" "$3" && got=yes
	if [ "$got" = "$4" ]; then pass "$SYS $STEP: $1"; else fail "$SYS $STEP: $1" "line: $2" "$3 present: $got, wanted: $4"; fi
}

# as_live: the chroot stands for the running machine (an administrator's
# step); as_image: it is an image being built, as a chroot is to the tool.
as_live() { AS_LIVE=(MEMCG_POLICY_IGNORE_CHROOT=1); }
as_image() { AS_LIVE=(); }

# image_policy: step 3's policy, whose decision differs between the image
# and the host the chroot runs on: auto, off below 2G of RAM, the image's
# machines having 1G (assume-ram), on otherwise. Read as the image (a
# chroot) it is off; read with the host's RAM (more than 2G, checked), on.
image_policy() {
	printf '%s\n' '[policy]' 'mode = auto' '[auto]' 'needs-memcg-units = no' 'min-ram = 2G' \
		'assume-ram = 1G' 'otherwise = on' >"$MNT/etc/memcg-policy.conf" && chmod 0644 "$MNT/etc/memcg-policy.conf"
}
host_ram_over_2g() { awk '$1 == "MemTotal:" { exit !($2 > 2 * 1024 * 1024) }' /proc/meminfo; }

# The host's memcg state: a chroot's "running now" is the host's kernel.
host_memcg() {
	awk '$1 == "memory" { print ($4 == 1) ? "on" : "off"; f = 1 } END { if (!f) print "unknown" }' /proc/cgroups
}
# expect_next_boot VER STATE: the tool's report of the next boot, as an
# admin reads it after apply/set/revert: its state for VER, and a reboot
# needed exactly when the running kernel (here the host's) differs.
expect_next_boot() {
	local ver=$1 state=$2 run want
	run=$(host_memcg)
	if [ "$run" = "$state" ]; then
		want="next boot ($ver): memcg $state, as running now: no reboot needed"
	else
		want="next boot ($ver): memcg $state; running now: memcg $run: reboot needed"
	fi
	expect_out "the tool says the next boot has memcg $state (reboot needed: $([ "$run" = "$state" ] && echo no || echo yes))" "$want"
}

# boot_and_check EXPECT-KVER EXPECT-STATE CHECK-RC TOKEN yes|no: closes
# the system, boots it, and checks the guest's report: the kernel that
# booted, the memory controller's state, TOKEN on /proc/cmdline or not,
# and `memcg-policy check`'s exit code in the booted system (- for not
# checked, absent for no tool). Reopens the system afterwards.
boot_and_check() {
	local kver=$1 state=$2 crc=$3 tok=$4 present=$5 log got
	close_system
	if [ -n "${ESPDIR:-}" ]; then esp_to_image "$IMG" || fail "$SYS $STEP: the ESP is written into the image"; fi
	boot_system "$S/boot" "$IMG" "$FW"
	log="$S/boot/serial.log"
	BOOTS+=("$SYS $STEP: $BOOT_SECS s")
	note "$SYS $STEP: boot took $BOOT_SECS s ($BOOT_STATE)"
	if [ "$BOOT_STATE" = exit ] && tr -d '\r' <"$log" | grep -qx 'MEMCG: end'; then
		pass "$SYS $STEP: boots and reports ($BOOT_SECS s)"
		tr -d '\r' <"$log" | grep -E '^MEMCG: (kernel|cmdline|cgroups-memory|controllers|check)=' | sed 's/^/    /'
		expect_eq "$SYS $STEP: the booted kernel is $kver" "$(memcg_field "$log" kernel)" "$kver"
		expect_eq "$SYS $STEP: memcg is $state in the booted system" "$(memory_state "$log")" "$state"
		got=no
		has_token "$(memcg_field "$log" cmdline)" "$tok" && got=yes
		expect_eq "$SYS $STEP: $tok on the booted kernel's command line: $present" "$got" "$present"
		[ "$crc" = - ] || expect_eq "$SYS $STEP: memcg-policy check in the booted system exits $crc" "$(memcg_field "$log" check)" "$crc"
	else
		fail "$SYS $STEP: boots and reports" "state $BOOT_STATE after $BOOT_SECS s; serial console log kept: $log" \
			"$(tr -d '\r' <"$log" | tail -n 25)"
	fi
	open_system "$IMG" || { fail "$SYS $STEP: the image opens again after the boot"; return 1; }
}

# status_headline VER STATE MODE: status's first line on the system, the
# answer: the next boot's memcg and the policy line that decides it
status_headline() {
	sys_run status memcg-policy status
	expect_eq "$SYS $STEP: status leads with the next boot's memcg and the rule that decides it" \
		"$(head -n 1 <<<"$OUT" | sed 's/conf:[0-9]*)$/conf:N)/')" \
		"Next boot ($1): memcg $2 — mode = $3 (/etc/memcg-policy.conf:N)"
}

# want_step N: step N is to run (MEMCG_SYSTEM_UNTIL=N stops after it).
want_step() { [ "$1" -le "${MEMCG_SYSTEM_UNTIL:-6}" ]; }

kver_of() { echo "${1#linux-image-}"; }

# --------------------------------------------------------------- systems

# The administrator's settings a serial-console machine would have, in
# Debian's /etc/default/grub: no menu delay, the console on the serial
# port, systemd quiet.
ADMIN_CMDLINE="console=ttyS0 systemd.show_status=0"
grub_admin_config() {
	sed -i -e 's/^GRUB_TIMEOUT=.*/GRUB_TIMEOUT=0/' \
		-e "s/^GRUB_CMDLINE_LINUX=.*/GRUB_CMDLINE_LINUX=\"$ADMIN_CMDLINE\"/" "$1/etc/default/grub"
}
write_fstab() { # write_fstab DIR: root by UUID (set after the image is made)
	printf 'UUID=%s / ext4 errors=remount-ro 0 1\n' "$ROOT_UUID" >"$MNT/etc/fstab"
}

# build_grub_bios: bookworm with grub-pc on an MBR disk; GRUB's boot
# sector and core image installed by the system's own grub-install
# (i386-pc) through the disk's loop device, the menu by its update-grub.
build_grub_bios() {
	local dir="$S/rootfs"
	build_rootfs "$dir" "$KOLD" systemd-sysv udev initramfs-tools e2fsprogs grub-pc >"$S/mmdebstrap.log" 2>&1 || {
		tail -n 30 "$S/mmdebstrap.log" >&2
		return 1
	}
	customize_rootfs "$dir" && grub_admin_config "$dir" || return 1
	make_disk "$IMG" bios "$dir" || return 1
	rm -rf "$dir"
	open_system "$IMG" || return 1
	write_fstab
	# The root is a loop device of its own (no partition scanning here), so
	# grub-install is told the disk and the modules to reach the root.
	printf '(hd0) %s\n' "$DISK_DEV" >"$MNT/boot/grub/device.map"
	in_sys grub-install --target=i386-pc --modules="part_msdos ext2" "$DISK_DEV" >"$S/grub-install.log" 2>&1 || {
		cat "$S/grub-install.log" >&2
		return 1
	}
	rm -f "$MNT/boot/grub/device.map"
	in_sys update-grub >"$S/update-grub.log" 2>&1 || { cat "$S/update-grub.log" >&2; return 1; }
}

# write_fstab_esp: the ESP on /boot/efi, by the volume serial
# esp_to_image gives it.
write_fstab_esp() {
	printf 'UUID=%s-%s /boot/efi vfat umask=0077 0 0\n' "${ESP_SERIAL:0:4}" "${ESP_SERIAL:4:4}" >>"$MNT/etc/fstab"
}

# efi_disk DIR: the root file system DIR on a GPT disk (an empty ESP +
# ext4 root; DIR removed), opened, with the fstab of both.
efi_disk() {
	local dir=$1
	rm -rf "$ESPDIR" && mkdir -p "$ESPDIR" || return 1
	make_disk "$IMG" efi "$dir" "$ESPDIR" || return 1
	rm -rf "$dir"
	open_system "$IMG" || return 1
	write_fstab
	write_fstab_esp
}

# build_grub_efi: bookworm with grub-efi-amd64 on a GPT disk (ESP + ext4
# root); GRUB's EFI image installed by the system's own grub-install
# (x86_64-efi) on the ESP at the removable-media path EFI/BOOT/BOOTX64.EFI
# (the firmware's variables are not the chroot's to write: --no-nvram),
# the menu by its update-grub.
build_grub_efi() {
	local dir="$S/rootfs"
	build_rootfs "$dir" "$KOLD" systemd-sysv udev initramfs-tools e2fsprogs grub-efi-amd64 >"$S/mmdebstrap.log" 2>&1 || {
		tail -n 30 "$S/mmdebstrap.log" >&2
		return 1
	}
	customize_rootfs "$dir" && grub_admin_config "$dir" && mkdir -p "$dir/boot/efi" || return 1
	efi_disk "$dir" || return 1
	# As for BIOS, the root's loop device is not seen as a partition of the
	# disk: the core image is told the modules to find it (part_gpt ext2).
	in_sys_esp_device grub-install --target=x86_64-efi --efi-directory=/boot/efi --removable --no-nvram \
		--modules="part_gpt ext2" >"$S/grub-install.log" 2>&1 || {
		cat "$S/grub-install.log" >&2
		return 1
	}
	[ -f "$ESPDIR/EFI/BOOT/BOOTX64.EFI" ] || { echo "grub-install left no EFI/BOOT/BOOTX64.EFI on the ESP" >&2; ls -R "$ESPDIR" >&2; return 1; }
	in_sys update-grub >"$S/update-grub.log" 2>&1 || { cat "$S/update-grub.log" >&2; return 1; }
}

# build_sdboot: bookworm with systemd-boot on a GPT disk (ESP + ext4
# root). As the systemd-boot package's postinst does when it finds an ESP:
# bootctl install, then kernel-install add for the installed kernel, with
# the admin's /etc/kernel/cmdline and layout=bls in /etc/kernel/install.conf.
build_sdboot() {
	local dir="$S/rootfs" old
	old=$(kver_of "$KOLD")
	build_rootfs "$dir" "$KOLD" systemd-sysv udev initramfs-tools e2fsprogs systemd-boot >"$S/mmdebstrap.log" 2>&1 || {
		tail -n 30 "$S/mmdebstrap.log" >&2
		return 1
	}
	customize_rootfs "$dir" || return 1
	mkdir -p "$dir/boot/efi" "$dir/etc/kernel" && echo layout=bls >"$dir/etc/kernel/install.conf" || return 1
	efi_disk "$dir" || return 1
	printf 'root=UUID=%s ro %s quiet\n' "$ROOT_UUID" "$ADMIN_CMDLINE" >"$MNT/etc/kernel/cmdline"
	in_sys bootctl install --no-variables --esp-path=/boot/efi --make-machine-id-directory=auto >"$S/bootctl.log" 2>&1 || {
		cat "$S/bootctl.log" >&2
		return 1
	}
	in_sys kernel-install add "$old" "/boot/vmlinuz-$old" "/boot/initrd.img-$old" >"$S/kernel-install.log" 2>&1 || {
		cat "$S/kernel-install.log" >&2
		return 1
	}
	[ -n "$(entry_of "$old")" ] || { echo "kernel-install made no entry for $old" >&2; ls -R "$ESPDIR" >&2; return 1; }
}

# build_uki: Debian 13 (trixie) with systemd-boot and unified kernel
# images on a GPT disk (ESP + ext4 root), as Debian documents the setup:
# systemd-ukify installed, layout=uki in /etc/kernel/install.conf, the
# admin's /etc/kernel/cmdline; bootctl install, then kernel-install add
# for the installed kernel, which builds the UKI (60-ukify.install) and
# puts it on the ESP as EFI/Linux/TOKEN-VERSION.efi (90-uki-copy.install).
# Sets UKI_VER, the kernel's release.
build_uki() {
	local dir="$S/rootfs" k
	SUITE=trixie build_rootfs "$dir" linux-image-amd64 systemd-sysv udev initramfs-tools e2fsprogs systemd-boot systemd-boot-efi \
		systemd-ukify >"$S/mmdebstrap.log" 2>&1 || {
		tail -n 30 "$S/mmdebstrap.log" >&2
		return 1
	}
	for k in "$dir"/boot/vmlinuz-*; do UKI_VER=${k##*/vmlinuz-}; done
	if [ -z "${UKI_VER:-}" ] || [ ! -f "$dir/boot/initrd.img-$UKI_VER" ]; then
		echo "no kernel and initrd in /boot" >&2
		return 1
	fi
	customize_rootfs "$dir" || return 1
	mkdir -p "$dir/boot/efi" "$dir/etc/kernel" && echo layout=uki >"$dir/etc/kernel/install.conf" || return 1
	efi_disk "$dir" || return 1
	printf 'root=UUID=%s ro %s quiet\n' "$ROOT_UUID" "$ADMIN_CMDLINE" >"$MNT/etc/kernel/cmdline"
	in_sys bootctl install --no-variables --esp-path=/boot/efi >"$S/bootctl.log" 2>&1 || {
		cat "$S/bootctl.log" >&2
		return 1
	}
	in_sys kernel-install add "$UKI_VER" "/boot/vmlinuz-$UKI_VER" "/boot/initrd.img-$UKI_VER" >"$S/kernel-install.log" 2>&1 || {
		cat "$S/kernel-install.log" >&2
		return 1
	}
	[ -n "$(uki_of "$UKI_VER")" ] || { echo "kernel-install made no UKI for $UKI_VER" >&2; ls -R "$ESPDIR" >&2; return 1; }
}
# uki_of VER: the UKI of VER on the ESP (path in the system).
uki_of() {
	local e
	for e in "$ESPDIR"/EFI/Linux/*"$1"*.efi; do
		[ -f "$e" ] && { echo "/boot/efi/EFI/Linux/${e##*/}"; return; }
	done
}
# uki_cmdline VER: the .cmdline of VER's UKI, as the system's own ukify
# inspect reads it
uki_cmdline() {
	in_sys ukify inspect "$(uki_of "$1")" --json=short 2>/dev/null | jq -r '.[".cmdline"].text // ""'
}

# entry_of VER: the BLS entry of VER on the ESP (path in the system).
entry_of() {
	local e
	for e in "$ESPDIR"/loader/entries/*"$1"*.conf; do
		[ -f "$e" ] && { echo "/boot/efi/loader/entries/${e##*/}"; return; }
	done
}
entry_options() { # entry_options VER: the options line of VER's entry
	local e
	e=$(entry_of "$1")
	[ -n "$e" ] && sed -n 's/^options[[:space:]]\{1,\}//p' "$MNT$e" | head -n1
}

# ---------------------------------------------------------------- journey

# snapshot NAME: the boot configuration as it is now, to compare later.
snapshot() {
	local d="$W/$SYS/snap-$1"
	rm -rf "$d" && mkdir -p "$d" || return 1
	cp "$MNT/etc/default/grub" "$d/grub" && cp "$MNT/boot/grub/grub.cfg" "$d/grub.cfg" || return 1
	(cd "$MNT/etc/default" && find . -path ./grub -prune -o -print | sort) >"$d/etc-default.list"
}

# outside_before_package: step 0 on a GRUB system, before the package is
# in it: an image builder runs the package's program from outside with
# --root, under an image policy of mode = off. No program in the image
# means no menu its update-grub makes can carry the decision: apply
# refuses (exit 3, nothing written, saying to install the package) and
# check says not in sync (1), instead of a success no boot would have.
outside_before_package() {
	STEP="0 (the tool from outside, no program in the image yet)"
	S="$W/$SYS/0-outside" && mkdir -p "$S"
	local tool="$W/$SYS/outside/usr/sbin/memcg-policy" f
	dpkg-deb -x "$DEB" "$W/$SYS/outside" || { fail "$SYS $STEP: the package unpacked on the host"; return 1; }
	printf '%s\n' '[policy]' 'mode = off' >"$MNT/etc/memcg-policy.conf" || return 1
	"$tool" --root "$MNT" apply >"$S/apply.log" 2>&1
	RC=$?
	OUT=$(cat "$S/apply.log")
	expect_eq "$SYS $STEP: apply --root on an image without the program exits 3" "$RC" 3
	expect_out "apply --root says to install the package into the image" "install the memcg-policy package into it"
	same_file "apply --root: /etc/default/grub unchanged" "$W/$SYS/snap-before/grub" /etc/default/grub
	same_file "apply --root: /boot/grub/grub.cfg unchanged" "$W/$SYS/snap-before/grub.cfg" /boot/grub/grub.cfg
	for f in /etc/default/grub.d/99-memcg-policy.cfg /var/lib/memcg-policy; do
		if [ -e "$MNT$f" ]; then fail "$SYS $STEP: apply --root wrote no $f"; else pass "$SYS $STEP: apply --root wrote no $f"; fi
	done
	"$tool" --root "$MNT" check >"$S/check.log" 2>&1
	RC=$?
	OUT=$(cat "$S/check.log")
	expect_eq "$SYS $STEP: check --root: not in sync (1)" "$RC" 1
	expect_out "check --root says to install the package into the image" "install the memcg-policy package into it"
	rm -f "$MNT/etc/memcg-policy.conf"
}

# journey_grub: the six steps on a GRUB system (update-grub regenerates
# the menu from /etc/default/grub and the drop-ins).
journey_grub() {
	local old new d
	old=$(kver_of "$KOLD")
	new=$(kver_of "$KNEW")
	snapshot before || return 1
	outside_before_package || return 1

	want_step 1 || return 0
	STEP="1 (installed with its defaults)"
	S="$W/$SYS/1-install" && mkdir -p "$S"
	cp "$DEB" "$MNT/tmp/" || return 1
	sys_ok apt-update apt-get update
	sys_ok apt-install apt-get install -y "/tmp/$(basename "$DEB")"
	[ "$RC" -eq 0 ] || return 1
	sys_run files dpkg-query -L memcg-policy
	printf '%s\n' "$OUT" >"$W/$SYS/package-files"
	same_file "/etc/default/grub unchanged" "$W/$SYS/snap-before/grub" /etc/default/grub
	same_file "/boot/grub/grub.cfg unchanged" "$W/$SYS/snap-before/grub.cfg" /boot/grub/grub.cfg
	sys_ok update-grub update-grub
	same_file "update-grub with the package's drop-in: the menu is byte for byte as before" \
		"$W/$SYS/snap-before/grub.cfg" /boot/grub/grub.cfg
	sys_ok status memcg-policy status
	sys_run apply-dry memcg-policy apply --dry-run
	expect_eq "$SYS $STEP: apply --dry-run exits 0" "$RC" 0
	expect_out "apply --dry-run: the next boot keeps memcg on" "next boot ($old): memcg on"
	boot_and_check "$old" on 0 cgroup_disable=memory no

	want_step 2 || return 0
	STEP="2 (set off)"
	S="$W/$SYS/2-off" && mkdir -p "$S"
	sys_ok set-off memcg-policy set off
	expect_out "set off says what it recorded" "/etc/memcg-policy.conf: mode = off"
	expect_next_boot "$old" off
	same_file "/etc/default/grub unchanged (the drop-in carries the change)" "$W/$SYS/snap-before/grub" /etc/default/grub
	expect_token "the default menu entry gets cgroup_disable=memory" "$(first_linux)" cgroup_disable=memory yes
	expect_token "the admin's arguments stay in the menu entry" "$(first_linux)" console=ttyS0 yes
	status_headline "$old" OFF off
	boot_and_check "$old" off 0 cgroup_disable=memory yes

	want_step 3 || return 0
	STEP="3 (a newer kernel from apt, as an image build installs it)"
	S="$W/$SYS/3-kernel" && mkdir -p "$S"
	image_policy_step || return 0
	sys_ok apt-kernel apt-get install -y linux-image-amd64
	if [ -e "$MNT/boot/vmlinuz-$new" ]; then pass "$SYS $STEP: $KNEW installed"; else fail "$SYS $STEP: $KNEW installed"; fi
	expect_token "the new default entry (vmlinuz-$new) gets cgroup_disable=memory (the image's decision)" "$(first_linux)" cgroup_disable=memory yes
	expect_token "the new default entry is the new kernel" "$(first_linux)" "/boot/vmlinuz-$new" yes
	sys_run apply-after-kernel memcg-policy apply
	expect_eq "$SYS $STEP: apply after the kernel update exits 0" "$RC" 0
	expect_out "apply in the chroot says it reads it as an image" "in a chroot: / is read as an image"
	if grep -q '^changed ' <<<"$OUT"; then
		fail "$SYS $STEP: the kernel hook left nothing for apply to do" "$OUT"
	else
		pass "$SYS $STEP: the kernel hook left nothing for apply to do"
	fi
	expect_out "apply in the chroot: the image's next boot, no word of the host's kernel" "next boot of the image ($new): memcg off"
	as_live
	boot_and_check "$new" off 0 cgroup_disable=memory yes

	want_step 4 || return 0
	STEP="4 (set on over the admin's own cgroup_disable=memory)"
	S="$W/$SYS/4-on" && mkdir -p "$S"
	sed -i "s/^GRUB_CMDLINE_LINUX=.*/GRUB_CMDLINE_LINUX=\"$ADMIN_CMDLINE cgroup_disable=memory\"/" "$MNT/etc/default/grub"
	sys_ok admin-update-grub update-grub
	snapshot admin || return 1
	sys_ok set-on memcg-policy set on
	expect_out "set on says what it recorded" "/etc/memcg-policy.conf: mode = on"
	expect_next_boot "$new" on
	same_file "/etc/default/grub is the admin's, byte for byte" "$W/$SYS/snap-admin/grub" /etc/default/grub
	expect_token "the default menu entry loses cgroup_disable=memory" "$(first_linux)" cgroup_disable=memory no
	expect_token "the admin's other arguments stay" "$(first_linux)" console=ttyS0 yes
	# the admin's own update-grub: the drop-in says what it takes out
	sys_ok admin-update-grub-after update-grub
	expect_out "update-grub shows what the drop-in took out of the admin's GRUB_CMDLINE_LINUX" \
		"memcg-policy: GRUB_CMDLINE_LINUX: cgroup_disable=memory taken out for the menu"
	boot_and_check "$new" on 0 cgroup_disable=memory no

	want_step 5 || return 0
	STEP="5 (revert)"
	S="$W/$SYS/5-revert" && mkdir -p "$S"
	sys_ok revert memcg-policy revert
	expect_out "revert says what it took out or restored" "$(printf 'removed \nrestored ')"
	same_file "/etc/default/grub is the admin's, byte for byte" "$W/$SYS/snap-admin/grub" /etc/default/grub
	same_file "the menu is the admin's again, byte for byte" "$W/$SYS/snap-admin/grub.cfg" /boot/grub/grub.cfg
	boot_and_check "$new" off - cgroup_disable=memory yes

	want_step 6 || return 0
	STEP="6 (remove, purge)"
	S="$W/$SYS/6-purge" && mkdir -p "$S"
	sys_ok remove apt-get remove -y memcg-policy
	if [ -e "$MNT/usr/sbin/memcg-policy" ]; then fail "$SYS $STEP: remove takes the program"; else pass "$SYS $STEP: remove takes the program"; fi
	sys_ok remove-update-grub update-grub
	same_file "update-grub after remove: the admin's menu" "$W/$SYS/snap-admin/grub.cfg" /boot/grub/grub.cfg
	sys_ok purge apt-get purge -y memcg-policy
	local left=() f
	while read -r f; do
		[ -n "$f" ] && [ ! -d "$MNT$f" ] && [ -e "$MNT$f" ] && left+=("$f")
	done <"$W/$SYS/package-files"
	expect_eq "$SYS $STEP: no file of the package left after purge" "${left[*]}" ""
	for f in /etc/memcg-policy.conf /var/lib/memcg-policy /etc/default/grub.d/99-memcg-policy.cfg; do
		if [ -e "$MNT$f" ]; then fail "$SYS $STEP: $f gone"; else pass "$SYS $STEP: $f gone"; fi
	done
	(cd "$MNT/etc/default" && find . -path ./grub -prune -o -print | sort) >"$S/etc-default.list"
	if cmp -s "$W/$SYS/snap-before/etc-default.list" "$S/etc-default.list"; then
		pass "$SYS $STEP: /etc/default as before the package came"
	else
		fail "$SYS $STEP: /etc/default as before the package came" "$(diff "$W/$SYS/snap-before/etc-default.list" "$S/etc-default.list")"
	fi
	sys_ok purge-update-grub update-grub
	same_file "/etc/default/grub is the admin's, byte for byte" "$W/$SYS/snap-admin/grub" /etc/default/grub
	same_file "update-grub after purge: the admin's menu, byte for byte" "$W/$SYS/snap-admin/grub.cfg" /boot/grub/grub.cfg
}

# snap_sdboot NAME: /etc/kernel/cmdline and the ESP's entries as they are now.
snap_sdboot() {
	local d="$W/$SYS/snap-$1"
	rm -rf "$d" && mkdir -p "$d" || return 1
	cp "$MNT/etc/kernel/cmdline" "$d/cmdline" && cp -a "$ESPDIR/loader/entries" "$d/entries"
}
same_entries() { # same_entries WHAT SNAP
	if diff -r "$W/$SYS/snap-$2/entries" "$ESPDIR/loader/entries" >"$S/entries.diff" 2>&1; then
		pass "$SYS $STEP: $1"
	else
		fail "$SYS $STEP: $1" "$(head -n 20 "$S/entries.diff")"
	fi
}

# journey_sdboot: the six steps on a systemd-boot system (kernel-install
# writes the entries from /etc/kernel/cmdline). The admin's own
# cgroup_disable=memory is not part of this journey: /etc/kernel/cmdline
# is the tool's slot too, so step 5 gives back the admin's original
# (memcg on).
journey_sdboot() {
	local old new
	old=$(kver_of "$KOLD")
	new=$(kver_of "$KNEW")
	snap_sdboot before || return 1

	want_step 1 || return 0
	STEP="1 (installed with its defaults)"
	S="$W/$SYS/1-install" && mkdir -p "$S"
	cp "$DEB" "$MNT/tmp/" || return 1
	sys_ok apt-update apt-get update
	sys_ok apt-install apt-get install -y "/tmp/$(basename "$DEB")"
	[ "$RC" -eq 0 ] || return 1
	sys_run files dpkg-query -L memcg-policy
	printf '%s\n' "$OUT" >"$W/$SYS/package-files"
	same_file "/etc/kernel/cmdline unchanged" "$W/$SYS/snap-before/cmdline" /etc/kernel/cmdline
	same_entries "the boot entries unchanged" before
	sys_run apply-dry memcg-policy apply --dry-run
	expect_eq "$SYS $STEP: apply --dry-run exits 0" "$RC" 0
	expect_out "apply --dry-run: the next boot keeps memcg on" "next boot ($old): memcg on"
	boot_and_check "$old" on 0 cgroup_disable=memory no

	want_step 2 || return 0
	STEP="2 (set off)"
	S="$W/$SYS/2-off" && mkdir -p "$S"
	sys_ok set-off memcg-policy set off
	expect_out "set off says what it recorded" "/etc/memcg-policy.conf: mode = off"
	expect_next_boot "$old" off
	expect_token "the entry of $old gets cgroup_disable=memory" "$(entry_options "$old")" cgroup_disable=memory yes
	expect_token "the admin's arguments stay in the entry" "$(entry_options "$old")" console=ttyS0 yes
	expect_token "/etc/kernel/cmdline gets cgroup_disable=memory" "$(cat "$MNT/etc/kernel/cmdline")" cgroup_disable=memory yes
	status_headline "$old" OFF off
	boot_and_check "$old" off 0 cgroup_disable=memory yes

	want_step 3 || return 0
	STEP="3 (a newer kernel from apt, as an image build installs it)"
	S="$W/$SYS/3-kernel" && mkdir -p "$S"
	image_policy_step || return 0
	sys_ok apt-kernel apt-get install -y linux-image-amd64
	if [ -n "$(entry_of "$new")" ]; then pass "$SYS $STEP: kernel-install made the entry of $new"; else fail "$SYS $STEP: kernel-install made the entry of $new" "$(ls "$ESPDIR/loader/entries")"; fi
	expect_token "the new kernel's entry has cgroup_disable=memory" "$(entry_options "$new")" cgroup_disable=memory yes
	sys_run apply-after-kernel memcg-policy apply
	expect_eq "$SYS $STEP: apply after the kernel update exits 0" "$RC" 0
	if grep -q '^changed ' <<<"$OUT"; then
		fail "$SYS $STEP: the kernel hooks left nothing for apply to do" "$OUT"
	else
		pass "$SYS $STEP: the kernel hooks left nothing for apply to do"
	fi
	# the first run since boot (/run is a fresh tmpfs: no lock file) with
	# something to do: a hand edit took the token out of the new entry.
	# apply looks, takes the lock, finds every file it read unchanged and
	# keeps its plan; the boot below shows the entry it wrote.
	local ne
	ne=$(entry_of "$new")
	rm -f "$MNT/run/memcg-policy.lock"
	sed -i 's/ cgroup_disable=memory//' "$MNT$ne"
	expect_token "a hand edit took cgroup_disable=memory out of the entry of $new" "$(entry_options "$new")" cgroup_disable=memory no
	# a file changed within the timestamps' granularity of the look (2 s
	# where a ctime has no sub-microsecond digits) is not trusted to be
	# unchanged by its stat, and apply would look again: let them age
	sleep 2.1
	sys_run apply-first-run memcg-policy -v apply
	expect_eq "$SYS $STEP: apply with no lock file yet exits 0" "$RC" 0
	expect_out "apply with no lock file yet: its first look's plan stands under the lock" "the plan stands"
	expect_out "apply with no lock file yet: it changed the entry" "changed ${ne}"
	expect_token "apply put cgroup_disable=memory back in the entry of $new" "$(entry_options "$new")" cgroup_disable=memory yes
	if [ -e "$MNT/run/memcg-policy.lock" ]; then pass "$SYS $STEP: apply made the lock file"; else fail "$SYS $STEP: apply made the lock file"; fi
	# read as an image, the chroot has no running kernel: in sync, and no
	# reboot asked for because of the host's kernel (5 on the old build)
	sys_run check-after-first-run memcg-policy check
	expect_eq "$SYS $STEP: check after it says in sync (0: the host's kernel is not the image's)" "$RC" 0
	as_live
	boot_and_check "$new" off 0 cgroup_disable=memory yes

	want_step 4 || return 0
	STEP="4 (set on)"
	S="$W/$SYS/4-on" && mkdir -p "$S"
	sys_ok set-on memcg-policy set on
	expect_out "set on says what it recorded" "/etc/memcg-policy.conf: mode = on"
	expect_next_boot "$new" on
	expect_token "the new kernel's entry loses cgroup_disable=memory" "$(entry_options "$new")" cgroup_disable=memory no
	expect_token "the admin's arguments stay" "$(entry_options "$new")" console=ttyS0 yes
	boot_and_check "$new" on 0 cgroup_disable=memory no

	want_step 5 || return 0
	STEP="5 (set off, a later edit of the admin's, set on and off, then revert)"
	S="$W/$SYS/5-revert" && mkdir -p "$S"
	# with the tool's token in /etc/kernel/cmdline, the admin adds
	# loglevel=4 there; the tool writes the file twice more (set on, set
	# off) and the admin remakes the entry of the new kernel; revert works
	# on the files as they are now: it takes out the tool's token and keeps
	# the admin's edit made between two applies (restoring the bytes from
	# before the first apply would lose loglevel=4)
	sys_ok set-off-again memcg-policy set off
	expect_token "set off: /etc/kernel/cmdline has cgroup_disable=memory again" "$(cat "$MNT/etc/kernel/cmdline")" cgroup_disable=memory yes
	sed -i '1s/$/ loglevel=4/' "$MNT/etc/kernel/cmdline"
	sys_ok set-on-between memcg-policy set on
	expect_token "set on after the edit: the token leaves /etc/kernel/cmdline" "$(cat "$MNT/etc/kernel/cmdline")" cgroup_disable=memory no
	sys_ok set-off-between memcg-policy set off
	expect_token "set off again: /etc/kernel/cmdline keeps loglevel=4" "$(cat "$MNT/etc/kernel/cmdline")" loglevel=4 yes
	sys_ok admin-kernel-install kernel-install add "$new" "/boot/vmlinuz-$new" "/boot/initrd.img-$new"
	expect_token "the admin's kernel-install gives the entry of $new loglevel=4" "$(entry_options "$new")" loglevel=4 yes
	sed '1s/$/ loglevel=4/' "$W/$SYS/snap-before/cmdline" >"$W/$SYS/admin-cmdline"
	sys_ok revert memcg-policy revert
	expect_out "revert says it took the token out of /etc/kernel/cmdline" "/etc/kernel/cmdline"
	same_file "/etc/kernel/cmdline is the admin's with the later edit, without the tool's token, byte for byte" \
		"$W/$SYS/admin-cmdline" /etc/kernel/cmdline
	expect_token "the entry of $old has no cgroup_disable=memory" "$(entry_options "$old")" cgroup_disable=memory no
	expect_token "the entry of $new keeps the admin's loglevel=4" "$(entry_options "$new")" loglevel=4 yes
	expect_token "the entry of $new has no cgroup_disable=memory" "$(entry_options "$new")" cgroup_disable=memory no
	boot_and_check "$new" on - loglevel=4 yes
	expect_token "cgroup_disable=memory is not on the booted kernel's command line" \
		"$(memcg_field "$S/boot/serial.log" cmdline)" cgroup_disable=memory no

	want_step 6 || return 0
	STEP="6 (remove, purge)"
	S="$W/$SYS/6-purge" && mkdir -p "$S"
	sys_ok remove apt-get remove -y memcg-policy
	sys_ok purge apt-get purge -y memcg-policy
	local left=() f
	while read -r f; do
		[ -n "$f" ] && [ ! -d "$MNT$f" ] && [ -e "$MNT$f" ] && left+=("$f")
	done <"$W/$SYS/package-files"
	expect_eq "$SYS $STEP: no file of the package left after purge" "${left[*]}" ""
	same_file "/etc/kernel/cmdline is the admin's (the later edit kept)" "$W/$SYS/admin-cmdline" /etc/kernel/cmdline
	expect_token "the entry of $old as before: no cgroup_disable=memory" "$(entry_options "$old")" cgroup_disable=memory no
}

# journey_uki: Debian 13 with UKIs. The kernel gets the UKI's own
# .cmdline: the tool must rebuild the UKI (the system's kernel-install)
# for anything it decides to reach the kernel, and must say "memcg off"
# only where the UKI has the token. Steps: 1 installed, 2 set off (the
# UKI rebuilt), 3 revert (rebuilt without it; the policy still says off,
# so check says drift), 4 update-initramfs as an initramfs or kernel
# update runs it (kernel-install add through Debian's hook: the package's
# 55 plugin puts the decision into /etc/kernel/cmdline before
# 60-ukify.install builds the UKI), 5 set on, 6 remove and purge. Each
# step but the last booted under OVMF.
journey_uki() {
	local v=$UKI_VER u
	u=$(uki_of "$v")

	want_step 1 || return 0
	STEP="1 (installed with its defaults)"
	S="$W/$SYS/1-install" && mkdir -p "$S"
	cp "$MNT/etc/kernel/cmdline" "$W/$SYS/cmdline-before" || return 1
	cp "$DEB" "$MNT/tmp/" || return 1
	sys_ok apt-update apt-get update
	sys_ok apt-install apt-get install -y "/tmp/$(basename "$DEB")"
	[ "$RC" -eq 0 ] || return 1
	sys_run files dpkg-query -L memcg-policy
	printf '%s\n' "$OUT" >"$W/$SYS/package-files"
	sys_ok status memcg-policy status
	expect_out "status lists the UKI as a slot in sync" "in-sync   $u"
	expect_token "the UKI's .cmdline (ukify inspect) has the admin's console" "$(uki_cmdline "$v")" console=ttyS0 yes
	boot_and_check "$v" on 0 cgroup_disable=memory no

	want_step 2 || return 0
	STEP="2 (set off)"
	S="$W/$SYS/2-off" && mkdir -p "$S"
	sys_ok set-off memcg-policy set off
	expect_out "set off says it rebuilt the UKI" "rebuilt $u"
	expect_next_boot "$v" off
	expect_token "/etc/kernel/cmdline gets cgroup_disable=memory" "$(cat "$MNT/etc/kernel/cmdline")" cgroup_disable=memory yes
	expect_token "the rebuilt UKI's .cmdline has cgroup_disable=memory" "$(uki_cmdline "$v")" cgroup_disable=memory yes
	expect_token "the admin's arguments stay in it" "$(uki_cmdline "$v")" console=ttyS0 yes
	status_headline "$v" OFF off
	boot_and_check "$v" off 0 cgroup_disable=memory yes

	want_step 3 || return 0
	STEP="3 (revert)"
	S="$W/$SYS/3-revert" && mkdir -p "$S"
	sys_ok revert memcg-policy revert
	expect_out "revert says it rebuilt the UKI" "rebuilt $u"
	same_file "/etc/kernel/cmdline is the admin's, byte for byte" "$W/$SYS/cmdline-before" /etc/kernel/cmdline
	expect_token "the UKI's .cmdline has no cgroup_disable=memory" "$(uki_cmdline "$v")" cgroup_disable=memory no
	expect_next_boot "$v" on
	# the policy still says off: check in the booted system says drift
	boot_and_check "$v" on 1 cgroup_disable=memory no

	want_step 4 || return 0
	STEP="4 (update-initramfs: the UKI built anew by the system's hooks)"
	S="$W/$SYS/4-initramfs" && mkdir -p "$S"
	sys_ok update-initramfs update-initramfs -u -k "$v"
	expect_token "the package's plugin put cgroup_disable=memory back into /etc/kernel/cmdline" \
		"$(cat "$MNT/etc/kernel/cmdline")" cgroup_disable=memory yes
	expect_token "the UKI built by that update has it (55-memcg-policy.install ran before 60-ukify.install)" \
		"$(uki_cmdline "$v")" cgroup_disable=memory yes
	sys_run check-after-update memcg-policy check
	expect_eq "$SYS $STEP: check after the update: in sync or a reboot needed (0 or 5)" \
		"$([ "$RC" -eq 0 ] || [ "$RC" -eq 5 ] && echo yes || echo "no ($RC)")" yes
	boot_and_check "$v" off 0 cgroup_disable=memory yes

	want_step 5 || return 0
	STEP="5 (set on)"
	S="$W/$SYS/5-on" && mkdir -p "$S"
	sys_ok set-on memcg-policy set on
	expect_out "set on says it rebuilt the UKI" "rebuilt $u"
	expect_next_boot "$v" on
	expect_token "the UKI's .cmdline loses cgroup_disable=memory" "$(uki_cmdline "$v")" cgroup_disable=memory no
	boot_and_check "$v" on 0 cgroup_disable=memory no

	want_step 6 || return 0
	STEP="6 (remove, purge)"
	S="$W/$SYS/6-purge" && mkdir -p "$S"
	sys_ok revert-before-remove memcg-policy revert --policy
	sys_ok remove apt-get remove -y memcg-policy
	sys_ok purge apt-get purge -y memcg-policy
	local left=() f
	while read -r f; do
		[ -n "$f" ] && [ ! -d "$MNT$f" ] && [ -e "$MNT$f" ] && left+=("$f")
	done <"$W/$SYS/package-files"
	expect_eq "$SYS $STEP: no file of the package left after purge" "${left[*]}" ""
	same_file "/etc/kernel/cmdline is the admin's" "$W/$SYS/cmdline-before" /etc/kernel/cmdline
	expect_token "the UKI's .cmdline as before: no cgroup_disable=memory" "$(uki_cmdline "$v")" cgroup_disable=memory no
}

# image_policy_step: step 3 begins as an image build: the chroot read
# as an image, the image's own policy (image_policy).
image_policy_step() {
	if ! host_ram_over_2g; then
		fail "$SYS $STEP: the host has more than 2G of RAM (the step's premise)"
		return 1
	fi
	as_image
	image_policy || { fail "$SYS $STEP: the image's policy written"; return 1; }
	sys_run decide-image memcg-policy decide
	expect_eq "$SYS $STEP: decide in the image build exits 0" "$RC" 0
	local what="decide in the image build: the image's decision (1G < min-ram 2G: off), not the host's RAM's (on)"
	if grep -qx off <<<"$OUT"; then pass "$SYS $STEP: $what"; else fail "$SYS $STEP: $what" "output:" "$OUT"; fi
}

# ------------------------------------------------------------------- main

run_system() {
	SYS=$1
	local t0 t1
	S="$W/$SYS/build" && rm -rf "${W:?}/$SYS" && mkdir -p "$S"
	as_live
	IMG="$W/$SYS/disk.img"
	MNT="$W/$SYS/mnt"
	STEP=build
	t0=$(date +%s)
	case $SYS in
	grub-bios) FW=bios ESPDIR='' SYS_ENV=(); build_grub_bios ;;
	grub-efi) FW=efi ESPDIR="$W/$SYS/esp" SYS_ENV=(); build_grub_efi ;;
	sdboot)
		FW=efi ESPDIR="$W/$SYS/esp"
		# the ESP is a directory in the chroot (esp_to_image): bootctl,
		# kernel-install and memcg-policy are told to take it as one there
		SYS_ENV=(SYSTEMD_RELAX_ESP_CHECKS=1 MEMCG_POLICY_TRUST_BOOT=1)
		build_sdboot
		;;
	uki-trixie)
		FW=efi ESPDIR="$W/$SYS/esp"
		SYS_ENV=(SYSTEMD_RELAX_ESP_CHECKS=1 MEMCG_POLICY_TRUST_BOOT=1)
		build_uki
		;;
	*) fail "unknown system $SYS"; return ;;
	esac
	local rc=$?
	t1=$(date +%s)
	if [ $rc -ne 0 ]; then
		fail "$SYS: the system builds (see $S)"
		undo_all
		return
	fi
	pass "$SYS: the system builds ($((t1 - t0)) s)"
	BUILDS+=("$SYS: $((t1 - t0)) s")
	case $SYS in
	grub-*) journey_grub ;;
	sdboot) journey_sdboot ;;
	uki-trixie) journey_uki ;;
	esac
	undo_all
	note "$SYS: build and journey took $(($(date +%s) - t0)) s"
}

# run_parallel SYSTEM...: each SYSTEM's journey in a process of its own,
# $JOBS at a time (a journey spends most of its time in one-threaded
# work: dpkg, QEMU's TCG, waiting for the mirror), each with its own
# copy of the .deb cache (APT's lock is per cache) merged back after it.
# Their outputs are printed whole, one after the other, and counted.
run_parallel() {
	local sys out last p f
	trap 'kill $(jobs -p) 2>/dev/null' INT TERM
	for sys; do
		while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do wait -n; done
		copy_debs "$DEBS" "$W/debs-$sys" || { fail "$sys: the journey's copy of the .deb cache"; continue; }
		SYSTEM_JOURNEY=$sys SYSTEM_DEB=$DEB SYSTEM_KOLD=$KOLD SYSTEM_KNEW=$KNEW \
			SYSTEM_DEBS="$W/debs-$sys" bash "$HERE/run.sh" >"$W/$sys.out" 2>&1 &
	done
	wait
	trap - INT TERM
	for sys; do
		out=$W/$sys.out
		[ -f "$out" ] || continue
		last=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$out" | tail -n 1)
		grep -vE '^[0-9]+ passed, [0-9]+ failed$' "$out"
		p=${last%% passed*}
		f=${last#*passed, }
		f=${f%% failed}
		if [ -z "$last" ]; then
			fail "$sys: the journey ends with its counts (output: $out)"
		else
			passed=$((passed + p))
			failed=$((failed + f))
		fi
		copy_debs "$W/debs-$sys" "$DEBS" && rm -rf "${W:?}/debs-$sys"
	done
}

if [ "$(id -u)" -ne 0 ]; then fail "tests/system/run.sh runs as root (chroot, loop devices, mounts)"; finish; fi
for c in mmdebstrap qemu-system-x86_64 sfdisk mkfs.ext4 losetup blkid chroot dpkg-buildpackage mformat mcopy timeout; do
	command -v "$c" >/dev/null 2>&1 || fail "command $c is installed (.ci/packages)"
done
[ "$failed" -eq 0 ] || finish
W=$WORK
DEBS=${SYSTEM_DEBS:-$CACHE/debs}
mkdir -p "$W" "$DEBS" || { fail "work and cache directories"; finish; }
T0=$(date +%s)
BUILDS=()
BOOTS=()
if [ -n "${SYSTEM_JOURNEY:-}" ]; then
	# one journey of run_parallel: the kernels and the .deb are the parent's
	DEB=$SYSTEM_DEB KOLD=$SYSTEM_KOLD KNEW=$SYSTEM_KNEW
	run_system "$SYSTEM_JOURNEY"
	note "builds: ${BUILDS[*]}"
	note "boots: ${BOOTS[*]}"
	finish
fi
pick_kernels || { fail "two kernel versions in the archive"; finish; }
note "base kernel $KOLD, update $KNEW; cache $CACHE; work $W"
S="$W/deb"
if build_deb "$W/deb"; then pass "the .deb builds with dpkg-buildpackage ($(basename "$DEB"))"; else fail "the .deb builds"; finish; fi
[ $# -gt 0 ] || set -- grub-bios grub-efi sdboot uki-trixie
JOBS=${SYSTEM_JOBS:-3}
if [ $# -gt 1 ] && [ "$JOBS" -gt 1 ]; then
	run_parallel "$@"
else
	for sys; do run_system "$sys"; done
	note "builds: ${BUILDS[*]}"
	note "boots: ${BOOTS[*]}"
fi
note "tier total: $(($(date +%s) - T0)) s"
finish
