#!/bin/bash
# flash-kernel (Debian's boot scripts for U-Boot boards): the boot script the
# real flash-kernel writes is what the tool judges, and the value of
# LINUX_KERNEL_CMDLINE in /etc/default/flash-kernel carries the decision
# into it.
#
# A Debian arm64 root of its own with flash-kernel 3.107's own files
# (tests/fixtures/flash-kernel, unpacked from the arm64 package: the
# program, its functions, its machine database, its generic boot script
# template and the package's /etc/default/flash-kernel), the machine
# "Raspberry Pi 3 Model B" of that database. The host's /usr/bin, /usr/lib
# and Perl's modules are bound into it in a private mount namespace, so that
# flash-kernel (sh, sed, mkimage of u-boot-tools, linux-version of
# linux-base) runs chrooted into the tree, as `apply --regenerate` runs it.
# Every boot script here is the real flash-kernel's.
. "$TOP/tests/lib.sh"
if ! private_mounts; then
	echo "SKIP: flash-kernel tests need root and a private mount namespace"
	exit 0
fi
if ! command -v mkimage >/dev/null || ! command -v linux-version >/dev/null || ! command -v dtc >/dev/null; then
	echo "SKIP: flash-kernel tests need mkimage (u-boot-tools), linux-version (linux-base) and dtc"
	exit 0
fi
CFG=$FIX/configs/debian12-arm64.config
K=6.1.0-18-arm64
FK=$FIX/flash-kernel
# shellcheck source=tests/uboot-lib.sh
. "$TOP/tests/uboot-lib.sh"
NS_DIRS=$FK_NS_DIRS
M=$MEMCG_POLICY

# fktree: a new tree in $t with flash-kernel installed as its package
# installs it, for the machine $1 (default: Raspberry Pi 3 Model B), or the
# script stops (nothing below runs on "/")
fktree() {
	t=$(newtree)
	if [ -z "$t" ] || [ ! -d "$t/etc/u-boot-menu" ]; then
		echo "FAIL: no fixture tree"
		exit 1
	fi
	fk_install "$t" "${1:-Raspberry Pi 3 Model B}"
	# the board's device tree, where flash-kernel looks for it first (its
	# content is no part of the command line)
	printf '/dts-v1/;\n/ { model = "Raspberry Pi 3 Model B"; #address-cells = <1>; #size-cells = <1>; };\n' |
		dtc -q -I dts -O dtb -o "$t/etc/flash-kernel/dtbs/bcm2837-rpi-3-b.dtb"
}

# script TREE: the text of its boot script (after the U-Boot image's
# header and its table of parts); bootargs TREE: the setenv bootargs line
# the template's @@LINUX_KERNEL_CMDLINE@@ line became
# (BA: U-Boot's own ${bootargs}, as the lines have it)
# shellcheck disable=SC2016 # U-Boot's variable, not the shell's
BA='${bootargs}'
script() { tail -c +73 "$1/boot/boot.scr"; }
bootargs() { script "$1" | grep -a '^setenv bootargs "' | tail -n 1; }
has() { grep -qF -- "$2" <<<"$1"; }
expect_has() { # expect_has NAME TEXT FIXED-STRING
	if has "$2" "$3"; then pass "$1"; else fail "$1" "no: $3" "in: $2"; fi
}

# --- the package as installed: flash-kernel's boot script ---
fktree
flash_kernel "$t"
check "the real flash-kernel wrote the machine's boot script" test -s "$t/boot/boot.scr"
expect_eq "the script's bootargs line: the package's default (quiet)" "$(bootargs "$t")" \
	"setenv bootargs \" $BA quiet\""
cp "$t/boot/boot.scr" "$SCRATCH/orig.scr"
cp "$t/etc/default/flash-kernel" "$SCRATCH/orig.def"

expect_exit "check before apply: drift (1)" 1 "$M" --root "$t" check
expect_has "check names the boot script's line and its kernel" "$OUT" \
	"drift: /boot/boot.scr: line 33 ($K) lacks cgroup_disable=memory"
expect_has "check: /etc/default/flash-kernel needs the token" "$OUT" \
	"drift: /etc/default/flash-kernel (needs cgroup_disable=memory)"
expect_exit "status --json before apply" 0 "$M" --root "$t" --json status
expect_eq "status --json: the two slots, their kinds and states" \
	"$(jq -r '[.slots[] | select(.kind == "flash-kernel" or .kind == "boot-script") | "\(.kind) \(.path) \(.state)"] | join(",")' <<<"$OUT")" \
	"boot-script /boot/boot.scr drift,flash-kernel /etc/default/flash-kernel drift"

# --dry-run: the edit shown, nothing written
expect_exit "apply --dry-run: exit 0" 0 "$M" --root "$t" apply --dry-run
expect_has "apply --dry-run shows the value's edit" "$OUT" '+LINUX_KERNEL_CMDLINE="quiet cgroup_disable=memory"'
check "apply --dry-run: nothing written" cmp -s "$SCRATCH/orig.def" "$t/etc/default/flash-kernel"

# apply without --regenerate: no program of the image runs
expect_exit "apply --root without --regenerate: exit 0" 0 "$M" --root "$t" apply
expect_eq "apply: the value carries the decision, the rest of the file as it was" \
	"$(cat "$t/etc/default/flash-kernel")" \
	"$(printf 'LINUX_KERNEL_CMDLINE="quiet cgroup_disable=memory"\nLINUX_KERNEL_CMDLINE_DEFAULTS=""')"
check "apply without --regenerate: the boot script is not touched (flash-kernel not run)" \
	cmp -s "$SCRATCH/orig.scr" "$t/boot/boot.scr"
expect_has "apply: it says the boot script was not regenerated, and how" "$ERR" \
	"/boot/boot.scr not regenerated in $t (--root): run flash-kernel inside it, or apply --regenerate"
expect_exit "check after apply in an image not regenerated: in sync (0)" 0 "$M" --root "$t" check
expect_exit "status after apply, not regenerated" 0 "$M" --root "$t" status
expect_has "status: the boot script gets it when the image runs flash-kernel" "$OUT" \
	"the menu gets it when the image runs flash-kernel"
expect_has "status shows the bootargs line U-Boot runs, its layers as they are" "$OUT" \
	"U-Boot runs: setenv bootargs \" $BA quiet\""

expect_exit "apply --regenerate: flash-kernel in the image's namespace, exit 0" 0 \
	in_ns "$t" "$M" --root "$t" apply --regenerate
expect_has "apply --regenerate says the boot script was regenerated" "$OUT" "regenerated /boot/boot.scr"
expect_eq "after set off: the script's bootargs line carries it" "$(bootargs "$t")" \
	"setenv bootargs \" $BA quiet cgroup_disable=memory\""
expect_exit "check after apply --regenerate: in sync (0)" 0 "$M" --root "$t" check
# a kernel update: the package's hooks run flash-kernel, which keeps it
flash_kernel "$t"
expect_eq "flash-kernel again (a kernel update): the decision stays" "$(bootargs "$t")" \
	"setenv bootargs \" $BA quiet cgroup_disable=memory\""
expect_exit "check after the kernel update: in sync (0)" 0 "$M" --root "$t" check

expect_exit "revert --regenerate: exit 0" 0 in_ns "$t" "$M" --root "$t" revert --regenerate
check "revert: /etc/default/flash-kernel as the package wrote it, every byte" \
	cmp "$SCRATCH/orig.def" "$t/etc/default/flash-kernel"
# the U-Boot image's header holds the time it was made (and its CRC)
check "revert: the boot script flash-kernel makes without the tool, every byte after the image's header" \
	cmp <(tail -c +65 "$SCRATCH/orig.scr") <(tail -c +65 "$t/boot/boot.scr")
expect_exit "check after revert: drift again (1)" 1 "$M" --root "$t" check

# --- an admin's own value: the tool's token goes, the admin's later edit stays ---
fktree
sed -i 's/^LINUX_KERNEL_CMDLINE=.*/LINUX_KERNEL_CMDLINE="console=ttyS1,115200 cgroup_enable=memory quiet"/' \
	"$t/etc/default/flash-kernel"
flash_kernel "$t"
cp "$t/etc/default/flash-kernel" "$SCRATCH/admin.def"
expect_exit "mode = off over an admin's cgroup_enable=memory: apply --regenerate, exit 0" 0 \
	in_ns "$t" "$M" --root "$t" apply --regenerate
expect_eq "the admin's on taken out, off added" "$(head -n 1 "$t/etc/default/flash-kernel")" \
	'LINUX_KERNEL_CMDLINE="console=ttyS1,115200 quiet cgroup_disable=memory"'
expect_eq "the boot script carries the edited value" "$(bootargs "$t")" \
	"setenv bootargs \" $BA console=ttyS1,115200 quiet cgroup_disable=memory\""
sed -i 's/ quiet / quiet loglevel=4 /' "$t/etc/default/flash-kernel"
expect_exit "revert after the admin's later edit: exit 0" 0 "$M" --root "$t" revert
expect_eq "revert: the admin's edit kept, the tool's token out, the admin's token back in its place" \
	"$(head -n 1 "$t/etc/default/flash-kernel")" \
	'LINUX_KERNEL_CMDLINE="console=ttyS1,115200 cgroup_enable=memory quiet loglevel=4"'

# --- a value that takes running code to know: not edited, never "in sync" ---
fktree
# shellcheck disable=SC2016 # the file's text
printf 'LINUX_KERNEL_CMDLINE="$(cat /etc/board-args) quiet"\nLINUX_KERNEL_CMDLINE_DEFAULTS=""\n' \
	>"$t/etc/default/flash-kernel"
printf 'console=ttyS0\n' >"$t/etc/board-args"
flash_kernel "$t"
cp "$t/etc/default/flash-kernel" "$SCRATCH/code.def"
expect_exit "a computed value: check says drift (1)" 1 "$M" --root "$t" check
expect_has "check names the file and line, and what to do" "$OUT" \
	"/etc/default/flash-kernel:1: LINUX_KERNEL_CMDLINE is not a plain value"
expect_exit "a computed value: apply does not claim success (1)" 1 in_ns "$t" "$M" --root "$t" apply --regenerate
check "a computed value: the file is not written" cmp -s "$SCRATCH/code.def" "$t/etc/default/flash-kernel"

# --- LINUX_KERNEL_CMDLINE_DEFAULTS with a cgroup switch: said, never "in sync" ---
fktree
sed -i 's/^LINUX_KERNEL_CMDLINE_DEFAULTS=.*/LINUX_KERNEL_CMDLINE_DEFAULTS="cgroup_disable=memory"/' \
	"$t/etc/default/flash-kernel"
write_policy "$t/etc/memcg-policy.conf" <<'EOF'
[policy]
mode = on
EOF
flash_kernel "$t"
expect_exit "mode = on, the defaults variable has cgroup_disable=memory: check drift (1)" 1 "$M" --root "$t" check
expect_has "check names the defaults variable" "$OUT" \
	'sets LINUX_KERNEL_CMDLINE_DEFAULTS="cgroup_disable=memory", which the tool does not edit'
expect_exit "the same: apply does not claim success (1)" 1 in_ns "$t" "$M" --root "$t" apply --regenerate
expect_has "apply names the boot script and the defaults variable" "$ERR" \
	"/boot/boot.scr does not carry the decision: line 33 ($K) has cgroup_disable=memory"

# --- [bootloaders] flash-kernel = no ---
fktree
flash_kernel "$t"
write_policy "$t/etc/memcg-policy.conf" <<'EOF'
[policy]
mode = off
[bootloaders]
flash-kernel = no
EOF
expect_exit "flash-kernel = no: apply, nothing it may edit (1)" 1 "$M" --root "$t" apply
check "flash-kernel = no: the file untouched" cmp -s "$SCRATCH/orig.def" "$t/etc/default/flash-kernel"
expect_exit "flash-kernel = no: status" 0 "$M" --root "$t" status
expect_has "flash-kernel = no: listed as not managed, and why" "$OUT" "flash-kernel = no"

# --- a machine flash-kernel writes no boot script for ---
fktree "Dummy Virtual Machine"
expect_exit "a machine without a boot script: status" 0 "$M" --root "$t" status
expect_has "status says flash-kernel writes no boot script for it" "$OUT" \
	'flash-kernel writes no boot script for the machine "Dummy Virtual Machine"'
expect_exit "a machine without a boot script: apply does not claim success (1)" 1 "$M" --root "$t" apply

# --- no flash-kernel: a boot.scr of someone else's is not taken for its ---
fktree
flash_kernel "$t"
rm "$t/usr/sbin/flash-kernel"
# fk_kinds: the flash-kernel slots of the --json status in $OUT
fk_kinds() { jq -r '[.slots[].kind | select(. == "flash-kernel" or . == "boot-script")] | join(",")' <<<"$OUT"; }
expect_exit "no flash-kernel: status" 0 "$M" --root "$t" --json status
expect_eq "no flash-kernel in the root: none of its slots" "$(fk_kinds)" ""
fktree
mkimage -A arm64 -O linux -T script -C none -n "my own script" -d "$FK/etc/flash-kernel/bootscript/bootscr.uboot-generic" \
	"$t/boot/boot.scr" >/dev/null
expect_exit "a boot.scr that flash-kernel did not make: status" 0 "$M" --root "$t" --json status
expect_eq "a boot.scr named otherwise is not judged as flash-kernel's" "$(fk_kinds)" "flash-kernel"
script "$t" >"$t/boot/boot.scr.txt" && mv "$t/boot/boot.scr.txt" "$t/boot/boot.scr"
expect_exit "a boot.scr of plain text: status" 0 "$M" --root "$t" --json status
expect_eq "a boot.scr of plain text (not made by mkimage) is not judged as flash-kernel's" "$(fk_kinds)" "flash-kernel"

# --- the next boot is the boot script's line ---
fktree
sed -i 's/^LINUX_KERNEL_CMDLINE_DEFAULTS=.*/LINUX_KERNEL_CMDLINE_DEFAULTS="cgroup_disable=memory"/' \
	"$t/etc/default/flash-kernel"
flash_kernel "$t"
expect_exit "a script with the token from the defaults variable: status" 0 "$M" --root "$t" status
expect_has "status: the next boot is memcg off (the boot script's line)" "$OUT" "Next boot ($K): memcg OFF"
