#!/bin/bash
# The line a Raspberry Pi kernel really gets: the firmware puts the device
# tree blob's /chosen/bootargs before cmdline.txt, and config.txt decides
# which blob and which command line file count (os_prefix=, cmdline=,
# device_tree=, [pi4]/[pi5] sections, include). Blobs: Debian 13's real
# mainline ones (tests/fixtures/rpi/README, no bootargs) and the same with
# the Foundation's bootargs written by the real fdtput. Kernels: the
# Foundation's 6.12 (a later cgroup_enable=memory wins) and Debian's
# mainline arm64 (a cgroup_disable=memory wins).
. "$TOP/tests/lib.sh"

if ! command -v fdtput >/dev/null; then
	fail "fdtput (device-tree-compiler) is missing"
	exit 1
fi

RPI=6.12.25+rpt-rpi-2712
MAIN=6.1.0-53-arm64
FOUNDATION_ARGS="reboot=w coherent_pool=1M 8250.nr_uarts=1 pci=pcie_bus_safe cgroup_disable=memory numa_policy=interleave"
LINE="console=serial0,115200 console=tty1 root=PARTUUID=4e639091-02 rootfstype=ext4 fsck.repair=yes rootwait"

# foundation_blob OUT: the Pi 5's blob with the Foundation's prefix
foundation_blob() {
	cp "$FIX/rpi/bcm2712-rpi-5-b.dtb" "$1"
	fdtput -t s "$1" /chosen bootargs "$FOUNDATION_ARGS"
}

# setup MODE KERNEL-VERSION CONFIG: a Raspberry Pi OS-like boot partition
setup() {
	root=$(mkroot)
	add_kernel "$root" "$2" "$3"
	mkdir -p "$root/boot/firmware"
	# in the shape of pi-gen's config.txt (stage1 00-boot-files)
	cat >"$root/boot/firmware/config.txt" <<'CFG'
# For more options and information see
# http://rptl.io/configtxt
dtparam=audio=on
camera_auto_detect=1
display_auto_detect=1
auto_initramfs=1
dtoverlay=vc4-kms-v3d
max_framebuffers=2
disable_fw_kms_setup=1
arm_64bit=1
disable_overscan=1
arm_boost=1

[cm4]
otg_mode=1

[cm5]
dtoverlay=dwc2,dr_mode=host

[all]
CFG
	echo "$LINE" >"$root/boot/firmware/cmdline.txt"
	printf '[policy]\nmode = %s\n' "$1" | write_policy "$root/etc/memcg-policy.conf"
}
txt() { cat "$root/boot/firmware/${1:-cmdline.txt}"; }

# ---- the Foundation's blob, the Foundation's kernel ------------------------
setup on "$RPI" "$FIX/configs/rpi-6.12-bcm2712.config"
foundation_blob "$root/boot/firmware/bcm2712-rpi-5-b.dtb"
expect_exit "foundation blob: check before apply: drift" 1 "$MEMCG_POLICY" --root "$root" check
expect_exit "foundation blob, on: apply" 0 "$MEMCG_POLICY" --root "$root" apply
expect_eq "foundation blob, on: cgroup_enable=memory after the prefix" "$(txt)" "$LINE cgroup_enable=memory"
expect_exit "foundation blob, on: check: in sync" 0 "$MEMCG_POLICY" --root "$root" check
expect_exit "foundation blob: decide --explain" 0 "$MEMCG_POLICY" --root "$root" decide --explain
check "foundation blob: --explain names the blob and its prefix" \
	grep -qF "/boot/firmware/bcm2712-rpi-5-b.dtb's /chosen/bootargs comes before cmdline.txt: \"$FOUNDATION_ARGS\"" <<<"$OUT"

expect_exit "foundation blob: status" 0 "$MEMCG_POLICY" --root "$root" status
check "foundation blob: status shows the firmware's line and its blob" \
	grep -qF "firmware line: \"$FOUNDATION_ARGS\" ($root/boot/firmware/bcm2712-rpi-5-b.dtb: /chosen/bootargs, before cmdline.txt)" <<<"$OUT"
expect_exit "foundation blob: status --json" 0 "$MEMCG_POLICY" --root "$root" status --json
expect_eq "foundation blob: --json firmware_prefix" "$(jq -r '.kernels[0].firmware_prefix' <<<"$OUT")" "$FOUNDATION_ARGS"

setup off "$RPI" "$FIX/configs/rpi-6.12-bcm2712.config"
foundation_blob "$root/boot/firmware/bcm2712-rpi-5-b.dtb"
expect_exit "foundation blob, off: apply" 0 "$MEMCG_POLICY" --root "$root" apply
expect_eq "foundation blob, off: the prefix turns it off: cmdline.txt untouched" "$(txt)" "$LINE"
expect_exit "foundation blob, off: check: in sync" 0 "$MEMCG_POLICY" --root "$root" check

# ---- a blob without the prefix (Debian's), the Foundation's kernel ---------
setup off "$RPI" "$FIX/configs/rpi-6.12-bcm2712.config"
cp "$FIX/rpi/bcm2712-rpi-5-b.dtb" "$root/boot/firmware/"
expect_exit "no prefix, off: check before apply: drift (the kernel's own default is on)" 1 \
	"$MEMCG_POLICY" --root "$root" check
expect_exit "no prefix, off: apply" 0 "$MEMCG_POLICY" --root "$root" apply
expect_eq "no prefix, off: cgroup_disable=memory added" "$(txt)" "$LINE cgroup_disable=memory"
expect_exit "no prefix, off: status" 0 "$MEMCG_POLICY" --root "$root" status
check "no prefix, off: status: next boot off" grep -q "^Next boot ($RPI): memcg OFF" <<<"$OUT"
expect_exit "no prefix: decide --explain" 0 "$MEMCG_POLICY" --root "$root" decide --explain
check "no prefix: --explain says the blob has none" \
	grep -qF "bcm2712-rpi-5-b.dtb's /chosen/bootargs comes before cmdline.txt: (none)" <<<"$OUT"

# ---- the Foundation's blob, a kernel with mainline rules -------------------
setup on "$MAIN" "$FIX/configs/debian12-arm64.config"
foundation_blob "$root/boot/firmware/bcm2712-rpi-5-b.dtb"
expect_exit "mainline kernel, foundation blob, on: apply refuses (exit 3)" 3 "$MEMCG_POLICY" --root "$root" apply
expect_eq "mainline kernel, foundation blob, on: nothing written" "$(txt)" "$LINE"
check "mainline kernel, foundation blob, on: the message names the blob" \
	grep -qF "bcm2712-rpi-5-b.dtb" <<<"$ERR$OUT"
setup on "$MAIN" "$FIX/configs/debian12-arm64.config"
cp "$FIX/rpi/bcm2712-rpi-5-b.dtb" "$root/boot/firmware/"
expect_exit "mainline kernel, Debian's blob, on: in sync as it is" 0 "$MEMCG_POLICY" --root "$root" check

# ---- Ubuntu's A/B layout: os_prefix=current/ -------------------------------
setup on "$RPI" "$FIX/configs/rpi-6.12-bcm2712.config"
mkdir -p "$root/boot/firmware/current" "$root/boot/firmware/new"
printf '[all]\nos_prefix=current/\n\n[tryboot]\nos_prefix=new/\n' >>"$root/boot/firmware/config.txt"
echo "$LINE" >"$root/boot/firmware/current/cmdline.txt"
echo "$LINE" >"$root/boot/firmware/new/cmdline.txt"
foundation_blob "$root/boot/firmware/current/bcm2712-rpi-5-b.dtb"
cp "$root/boot/firmware/current/bcm2712-rpi-5-b.dtb" "$root/boot/firmware/new/"
expect_exit "A/B: apply" 0 "$MEMCG_POLICY" --root "$root" apply
expect_eq "A/B: current/cmdline.txt, the one the firmware reads, carries it" "$(txt current/cmdline.txt)" \
	"$LINE cgroup_enable=memory"
expect_eq "A/B: the top cmdline.txt, which the firmware does not read, is untouched" "$(txt)" "$LINE"
expect_eq "A/B: new/ (a trial boot's) is untouched" "$(txt new/cmdline.txt)" "$LINE"
expect_exit "A/B: check: in sync" 0 "$MEMCG_POLICY" --root "$root" check
echo "$LINE" >"$root/boot/firmware/current/cmdline.txt"
expect_exit "A/B: current/cmdline.txt put back: check says drift" 1 "$MEMCG_POLICY" --root "$root" check

# ---- include, and boards that differ ---------------------------------------
setup off "$RPI" "$FIX/configs/rpi-6.12-bcm2712.config"
printf 'include extra.txt\n' >>"$root/boot/firmware/config.txt"
printf '[pi4]\ncmdline=cmdline-pi4.txt\n[all]\n' >"$root/boot/firmware/extra.txt"
echo "$LINE" >"$root/boot/firmware/cmdline-pi4.txt"
cp "$FIX/rpi/bcm2711-rpi-4-b.dtb" "$root/boot/firmware/"
foundation_blob "$root/boot/firmware/bcm2712-rpi-5-b.dtb"
expect_exit "boards: apply" 0 "$MEMCG_POLICY" --root "$root" apply
expect_eq "boards: the Pi 4's file (by the included [pi4] cmdline=) gets cgroup_disable=memory" \
	"$(txt cmdline-pi4.txt)" "$LINE cgroup_disable=memory"
expect_exit "boards: decide" 0 "$MEMCG_POLICY" --root "$root" decide
check "boards: the prefixes that differ are named" grep -qF "the boards' device trees give different prefixes" \
	<<<"$OUT$ERR"

# ---- a damaged blob: not trusted, said, nothing crashes --------------------
setup off "$RPI" "$FIX/configs/rpi-6.12-bcm2712.config"
head -c 3000 "$FIX/rpi/bcm2712-rpi-5-b.dtb" >"$root/boot/firmware/bcm2712-rpi-5-b.dtb"
expect_exit "damaged blob: decide" 0 "$MEMCG_POLICY" --root "$root" decide
check "damaged blob: the prefix is said to be unknown" \
	grep -qE "device tree prefix is not known \(.*/boot/firmware/bcm2712-rpi-5-b.dtb: FDT_ERR_TRUNCATED\)" <<<"$OUT$ERR"

# ---- a hostile image: config.txt including itself, a FIFO for a blob -------
setup on "$RPI" "$FIX/configs/rpi-6.12-bcm2712.config"
printf 'include config.txt\n' >>"$root/boot/firmware/config.txt"
expect_exit "include loop: apply refuses (exit 3)" 3 "$MEMCG_POLICY" --root "$root" apply
check "include loop: said with the file" grep -qF "config.txt: included more than 8 deep" <<<"$ERR"
expect_eq "include loop: nothing written" "$(txt)" "$LINE"
setup on "$RPI" "$FIX/configs/rpi-6.12-bcm2712.config"
mkfifo "$root/boot/firmware/bcm2712-rpi-5-b.dtb"
expect_exit "a FIFO for the blob: apply does not hang and takes no blob" 0 timeout 20 "$MEMCG_POLICY" --root "$root" apply
expect_eq "a FIFO for the blob: the old assumption: cgroup_enable=memory added" "$(txt)" "$LINE cgroup_enable=memory"

# ---- a filter the tool cannot judge: taken to apply, and said ---------------
setup on "$RPI" "$FIX/configs/rpi-6.12-bcm2712.config"
mkdir -p "$root/boot/firmware/hdmi"
printf '[HDMI:1]\nos_prefix=hdmi/\n[all]\n' >>"$root/boot/firmware/config.txt"
echo "$LINE" >"$root/boot/firmware/hdmi/cmdline.txt"
foundation_blob "$root/boot/firmware/hdmi/bcm2712-rpi-5-b.dtb"
expect_exit "[HDMI:1]: apply" 0 "$MEMCG_POLICY" --root "$root" apply
expect_eq "[HDMI:1]: its os_prefix is taken to apply" "$(txt hdmi/cmdline.txt)" "$LINE cgroup_enable=memory"
check "[HDMI:1]: said, with the line" grep -qE "config.txt:22: set in a section of config.txt whose filter the tool cannot judge" <<<"$ERR"
