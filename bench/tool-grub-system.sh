#!/bin/bash
# bench/tool-grub-system.sh [ROUNDS] [IMAGE] - what an administrator waits
# for on a real Debian 12 GRUB system: `memcg-policy set off` against the
# `update-grub` it runs, side by side in one run.
#
# IMAGE is the disk of the systems tier's grub-bios system (make
# check-system leaves it at build/system-work/grub-bios/disk.img: Debian
# 12 from the mirror, GRUB for BIOS, two kernels). Its root file system is
# mounted from a loop device and entered with chroot as the tier does
# (tests/system/lib.sh: /proc, /sys, a /dev with the disk, root=UUID=), the
# binary measured and the package's drop-in copied in, and the chroot
# taken for the running machine (MEMCG_POLICY_IGNORE_CHROOT=1) so that
# set regenerates the menu. Timed in ROUNDS rounds (default 15), the order
# turned each round:
#   update-grub    the system's own, with the drop-in and the decision
#                  recorded (what every kernel update runs)
#   set off        preceded, untimed, by set on: the policy written, the
#                  decision recorded, update-grub run, the menu read back
# The tool's own time is set off's minus update-grub's. Needs root,
# losetup, chroot, hyperfine and jq. Nothing is asserted.
set -u
# shellcheck source=bench/tool-lib.sh
. "$(dirname "$0")/tool-lib.sh"
# shellcheck source=tests/system/lib.sh
. "$TOP/tests/system/lib.sh"

rounds=${1:-15}
IMG=${2:-$TOP/build/system-work/grub-bios/disk.img}
[ "$(id -u)" -eq 0 ] || die "needs root (loop devices, chroot)"
[ -f "$IMG" ] || die "no disk image at $IMG: run make check-system first (it leaves the grub-bios system there)"
need losetup mount
MNT=$WORK/mnt
DEBS=$WORK/debs
mkdir -p "$DEBS"
LOOPS=()
ROOT_OFF=$((2048 * 512))
ROOT_SIZE=$(($(stat -c %s "$IMG") - ROOT_OFF - 1024 * 1024))
trap 'undo_all; rm -rf "$WORK"' EXIT
open_system "$IMG" || die "cannot open the system in $IMG"
[ -x "$MNT/usr/sbin/update-grub" ] || die "$IMG: no update-grub in the system"

# the binary measured and the package's drop-in, as the package installs them
install -m 0755 "$MP" "$MNT/usr/sbin/memcg-policy"
install -m 0644 "$TOP/grub.d/99-memcg-policy.cfg" "$MNT/etc/default/grub.d/99-memcg-policy.cfg"
printf '[policy]\nmode = on\n' >"$MNT/etc/memcg-policy.conf"
chmod 0644 "$MNT/etc/memcg-policy.conf"
# in_sys as one program hyperfine can run (no shell function)
wrap() { # wrap NAME CMD...
	printf '#!/bin/sh\nexec chroot %s /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LC_ALL=C MEMCG_POLICY_IGNORE_CHROOT=1 %s >/dev/null 2>&1\n' \
		"$MNT" "${*:2}" >"$WORK/in-sys-$1"
	chmod 0755 "$WORK/in-sys-$1"
}
wrap update-grub update-grub
wrap on memcg-policy set on
wrap off memcg-policy set off
"$WORK/in-sys-on" || die "set on failed in the system"
"$WORK/in-sys-off" || die "set off failed in the system"
grep -q 'cgroup_disable=memory' "$MNT/boot/grub/grub.cfg" || die "set off did not reach the menu"
"$WORK/in-sys-update-grub" || die "update-grub failed in the system"
kernels=$(find "$MNT/boot" -maxdepth 1 -name 'vmlinuz-*' | wc -l)

machine_report "$MNT"
echo "system:  $IMG ($kernels kernels; $(grep -c '^[[:space:]]*linux' "$MNT/boot/grub/grub.cfg") linux lines in the menu)"
echo "rounds:  $rounds x 2 runs of each command, order turned each round"
echo
hf_reset
hf_rounds "$rounds" 2 --prepare-each \
	update-grub "$WORK/in-sys-update-grub" "true" \
	set-off "$WORK/in-sys-off" "$WORK/in-sys-on"
read -r ug ug10 ug90 _ <<<"$(stat_of update-grub)"
read -r so so10 so90 _ <<<"$(stat_of set-off)"
read -r lo hi med <<<"$(round_ratios set-off update-grub)"
printf '%-34s %9s %9s %9s\n' "command" "median ms" p10 p90
printf '%-34s %9.1f %9.1f %9.1f\n' "update-grub" "$ug" "$ug10" "$ug90"
printf '%-34s %9.1f %9.1f %9.1f\n' "memcg-policy set off" "$so" "$so10" "$so90"
echo
echo "set off / update-grub: $(ratio "$so" "$ug") (per round $lo-$hi, median of rounds $med)"
awk -v a="$so" -v b="$ug" 'BEGIN { printf "the tool'"'"'s own time: %.1f ms, %.1f %% of update-grub'"'"'s\n", a - b, 100 * (a - b) / b }'
