#!/bin/bash
# u-boot-menu (Debian's extlinux.conf for U-Boot boards): the menu the real
# u-boot-update writes is what the tool judges, and its fragment in
# /etc/u-boot-menu/conf.d/ carries the decision into it.
#
# A Debian arm64 root of its own (its kernel, /etc/fstab, /etc/default/u-boot,
# the host's /usr/sbin/u-boot-update copied in); the host's /usr/bin,
# /usr/lib and /usr/share are bound into it in a private mount namespace, so
# that u-boot-update (sh, sed, linux-version of linux-base) runs chrooted
# into the tree, as `apply --regenerate` runs it. Every menu here is the
# real u-boot-update's.
. "$TOP/tests/lib.sh"
if ! private_mounts; then
	echo "SKIP: u-boot-menu tests need root and a private mount namespace"
	exit 0
fi
if [ ! -x /usr/sbin/u-boot-update ] || ! command -v linux-version >/dev/null; then
	echo "SKIP: u-boot-menu tests need Debian's u-boot-menu installed (u-boot-update, linux-version)"
	exit 0
fi
CFG=$FIX/configs/debian12-arm64.config
K=6.1.0-18-arm64
# shellcheck source=tests/uboot-lib.sh
. "$TOP/tests/uboot-lib.sh"

# --- the fragment keeps u-boot-update's defaults (no data: the same menu) ---
# three configurations: U_BOOT_PARAMETERS set; empty with /etc/kernel/cmdline;
# empty without it ("ro quiet")
for case in set kcmdline none; do
	t=$(newtree)
	case $case in
	set) printf 'U_BOOT_PARAMETERS="console=ttyAMA0 quiet"\n' >>"$t/etc/default/u-boot" ;;
	kcmdline) printf 'root=/dev/vda2 console=ttyS0 ro\n' >"$t/etc/kernel/cmdline" ;;
	esac
	uboot_update "$t"
	cp "$t/boot/extlinux/extlinux.conf" "$SCRATCH/without.$case"
	cp "$TOP/u-boot-menu/99-memcg-policy.conf" "$t/etc/u-boot-menu/conf.d/99-memcg-policy.conf"
	uboot_update "$t"
	check "the fragment with no recorded decision: the same menu u-boot-update writes alone ($case)" \
		cmp -s "$SCRATCH/without.$case" "$t/boot/extlinux/extlinux.conf"
done

M=$MEMCG_POLICY
has() { grep -qF -- "$2" <<<"$1"; }
expect_has() { # expect_has NAME TEXT FIXED-STRING
	if has "$2" "$3"; then pass "$1"; else fail "$1" "no: $3" "in: $2"; fi
}
# line N TREE: the Nth append line of its menu
line() { appends "$2" | sed -n "${1}p"; }
# tree: a new tree in $t, or the script stops (nothing below runs on "/")
tree() {
	t=$(newtree)
	if [ -z "$t" ] || [ ! -d "$t/etc/u-boot-menu" ]; then
		echo "FAIL: no fixture tree"
		exit 1
	fi
}

# --- set off: the menu u-boot-update wrote, judged, then regenerated ---
tree
printf 'U_BOOT_PARAMETERS="console=ttyAMA0 cgroup_enable=memory quiet"\n' >>"$t/etc/default/u-boot"
uboot_update "$t"
cp "$t/boot/extlinux/extlinux.conf" "$SCRATCH/orig.conf"
expect_eq "the real menu: the normal entry has the admin's line" "$(line 1 "$t")" \
	"root=UUID=$UUID console=ttyAMA0 cgroup_enable=memory quiet"
expect_exit "check before apply: the menu is drift (1)" 1 "$M" --root "$t" check
expect_has "check names the menu's line and kernel" "$OUT" \
	"drift: /boot/extlinux/extlinux.conf: line 20 ($K) lacks cgroup_disable=memory and has cgroup_enable=memory"
expect_has "check: the fragment is not installed yet" "$OUT" \
	"the fragment /etc/u-boot-menu/conf.d/99-memcg-policy.conf is not installed"
expect_exit "status --json before apply" 0 "$M" --root "$t" --json status
expect_eq "status --json: the menu is a slot of kind extlinux, drift" \
	"$(jq -r '.slots[] | select(.path == "/boot/extlinux/extlinux.conf") | "\(.kind) \(.state)"' <<<"$OUT")" \
	"extlinux drift"
expect_eq "status --json: not in sync" "$(jq -r .in_sync <<<"$OUT")" false

# apply without --regenerate: no program of the image runs
expect_exit "apply --root without --regenerate: exit 0" 0 "$M" --root "$t" apply
check "apply without --regenerate: the menu is not touched (u-boot-update not run)" \
	cmp -s "$SCRATCH/orig.conf" "$t/boot/extlinux/extlinux.conf"
check "apply: the fragment is the package's text" \
	cmp -s "$TOP/u-boot-menu/99-memcg-policy.conf" "$t/etc/u-boot-menu/conf.d/99-memcg-policy.conf"
expect_has "apply: it says the menu was not regenerated, and how" "$ERR" \
	"run u-boot-update inside it, or apply --regenerate"
expect_exit "check after apply in an image not regenerated: in sync (0)" 0 "$M" --root "$t" check
expect_exit "status after apply, not regenerated" 0 "$M" --root "$t" status
expect_has "status: the menu is not regenerated yet, by u-boot-update" "$OUT" \
	"the menu gets it when the image runs u-boot-update"

expect_exit "apply --regenerate: u-boot-update in the image's namespace, exit 0" 0 \
	in_ns "$t" "$M" --root "$t" apply --regenerate
expect_has "apply --regenerate says the menu was regenerated" "$OUT" "regenerated /boot/extlinux/extlinux.conf"
expect_eq "after set off: the normal entry (the admin's on taken out, off added)" \
	"$(line 1 "$t")" "root=UUID=$UUID console=ttyAMA0 quiet cgroup_disable=memory"
expect_eq "after set off: the recovery entry (without quiet, then single)" \
	"$(line 2 "$t")" "root=UUID=$UUID console=ttyAMA0 cgroup_disable=memory single"
expect_exit "check after apply --regenerate: in sync (0)" 0 "$M" --root "$t" check
expect_eq "/etc/default/u-boot keeps the admin's line" \
	"$(tail -n 1 "$t/etc/default/u-boot")" 'U_BOOT_PARAMETERS="console=ttyAMA0 cgroup_enable=memory quiet"'
# a kernel update: the package's hook runs u-boot-update, which keeps the decision
uboot_update "$t"
expect_eq "u-boot-update again (a kernel update): the decision stays" "$(line 1 "$t")" \
	"root=UUID=$UUID console=ttyAMA0 quiet cgroup_disable=memory"

expect_exit "revert --regenerate: exit 0" 0 in_ns "$t" "$M" --root "$t" revert --regenerate
check "revert: the menu is u-boot-update's original, every byte" \
	cmp "$SCRATCH/orig.conf" "$t/boot/extlinux/extlinux.conf"
check "revert: the fragment is gone" test ! -e "$t/etc/u-boot-menu/conf.d/99-memcg-policy.conf"
check "revert: the recorded decision is gone" test ! -e "$t/var/lib/memcg-policy/grub.tokens"

# --- u-boot-update's fallback to /etc/kernel/cmdline, kept ---
tree
printf 'root=/dev/vda2 console=ttyS0 ro cgroup_enable=memory\n' >"$t/etc/kernel/cmdline"
uboot_update "$t"
cp "$t/boot/extlinux/extlinux.conf" "$SCRATCH/orig-k.conf"
expect_eq "the real menu: root= and the rest from /etc/kernel/cmdline" "$(line 1 "$t")" \
	"root=/dev/vda2 console=ttyS0 ro cgroup_enable=memory"
expect_exit "apply --regenerate with /etc/kernel/cmdline: exit 0" 0 in_ns "$t" "$M" --root "$t" apply --regenerate
expect_eq "after set off: /etc/kernel/cmdline carries it" "$(cat "$t/etc/kernel/cmdline")" \
	"root=/dev/vda2 console=ttyS0 ro cgroup_disable=memory"
expect_eq "after set off: the menu still takes root= and the rest from /etc/kernel/cmdline" "$(line 1 "$t")" \
	"root=/dev/vda2 console=ttyS0 ro cgroup_disable=memory"
expect_exit "check: in sync (0)" 0 "$M" --root "$t" check
expect_exit "revert --regenerate: exit 0 (/etc/kernel/cmdline)" 0 in_ns "$t" "$M" --root "$t" revert --regenerate
check "revert: the menu is u-boot-update's original, every byte (/etc/kernel/cmdline)" \
	cmp "$SCRATCH/orig-k.conf" "$t/boot/extlinux/extlinux.conf"
expect_eq "revert: /etc/kernel/cmdline as it was" "$(cat "$t/etc/kernel/cmdline")" \
	"root=/dev/vda2 console=ttyS0 ro cgroup_enable=memory"

# --- u-boot-update's default ("ro quiet"), mode = on (memcg on by default) ---
tree
write_policy "$t/etc/memcg-policy.conf" <<'EOF'
[policy]
mode = on
EOF
uboot_update "$t"
cp "$t/boot/extlinux/extlinux.conf" "$SCRATCH/orig-on.conf"
expect_eq "the real menu: u-boot-update's default line" "$(line 1 "$t")" "root=UUID=$UUID ro quiet"
# the fragment is needed to keep a cgroup_disable=memory out, as GRUB's drop-in is
expect_exit "check with mode = on before apply: the fragment is missing (1)" 1 "$M" --root "$t" check
expect_has "check: the fragment is missing" "$OUT" "missing: /etc/u-boot-menu/conf.d/99-memcg-policy.conf"
expect_exit "apply --regenerate, mode = on: exit 0" 0 in_ns "$t" "$M" --root "$t" apply --regenerate
check "mode = on: the menu as it was" cmp -s "$SCRATCH/orig-on.conf" "$t/boot/extlinux/extlinux.conf"
expect_exit "check with mode = on after apply: in sync (0)" 0 "$M" --root "$t" check
printf 'U_BOOT_PARAMETERS="quiet cgroup_disable=memory"\n' >>"$t/etc/default/u-boot"
uboot_update "$t"
expect_eq "mode = on, an admin's cgroup_disable=memory: kept out of the menu u-boot-update writes" \
	"$(line 1 "$t")" "root=UUID=$UUID quiet"
expect_exit "check: in sync (0)" 0 "$M" --root "$t" check

# --- a later fragment that overrides ours: said, never "in sync" ---
tree
uboot_update "$t"
printf 'U_BOOT_PARAMETERS="console=ttyS2"\n' >"$t/etc/u-boot-menu/conf.d/zz-local.conf"
expect_exit "apply --regenerate with a later fragment: the menu lacks it after regenerating (4)" 4 \
	in_ns "$t" "$M" --root "$t" apply --regenerate
expect_has "apply names the menu" "$ERR" \
	"/boot/extlinux/extlinux.conf: regenerated, but its linux lines do not carry the decision"
expect_exit "check with a later fragment: drift (1)" 1 "$M" --root "$t" check
expect_has "check names the fragment and its line" "$OUT" \
	"a later fragment overrides ours: /etc/u-boot-menu/conf.d/zz-local.conf:1 sets U_BOOT_PARAMETERS"
expect_exit "apply again with the later fragment: nothing to write, still no success (1)" 1 \
	in_ns "$t" "$M" --root "$t" apply --regenerate
expect_has "apply again names the menu and the fragment" "$ERR" \
	"/boot/extlinux/extlinux.conf does not carry the decision: line 20 ($K) lacks cgroup_disable=memory"

# --- u-boot-update turned off in /etc/default/u-boot ---
tree
uboot_update "$t"
printf 'U_BOOT_UPDATE="false"\n' >>"$t/etc/default/u-boot"
expect_exit "check with U_BOOT_UPDATE=false: drift (1)" 1 "$M" --root "$t" check
expect_has "check says u-boot-update is turned off, and where" "$OUT" \
	"u-boot-update is turned off: /etc/default/u-boot:5 sets U_BOOT_UPDATE=false"

# --- [bootloaders] u-boot-menu = no ---
tree
uboot_update "$t"
cp "$t/boot/extlinux/extlinux.conf" "$SCRATCH/orig-no.conf"
write_policy "$t/etc/memcg-policy.conf" <<'EOF'
[policy]
mode = off
[bootloaders]
u-boot-menu = no
EOF
expect_exit "u-boot-menu = no: apply --regenerate, nothing it may edit (1)" 1 \
	in_ns "$t" "$M" --root "$t" apply --regenerate
expect_has "u-boot-menu = no: apply says nothing carries the decision" "$ERR" "nothing written: no boot configuration"
check "u-boot-menu = no: no fragment written" test ! -e "$t/etc/u-boot-menu/conf.d/99-memcg-policy.conf"
check "u-boot-menu = no: the menu untouched" cmp -s "$SCRATCH/orig-no.conf" "$t/boot/extlinux/extlinux.conf"
expect_exit "u-boot-menu = no: status" 0 "$M" --root "$t" status
expect_has "u-boot-menu = no: the menu is listed as not managed, and why" "$OUT" "u-boot-menu = no"

# --- an extlinux.conf that u-boot-update did not write, and no u-boot-update ---
tree
rm "$t/usr/sbin/u-boot-update"
mkdir -p "$t/boot/extlinux"
printf 'label linux\n\tkernel /boot/vmlinuz-%s\n\tappend root=/dev/sda1 ro\n' "$K" >"$t/boot/extlinux/extlinux.conf"
# u_boot_kinds: the u-boot-menu slots of the --json status in $OUT
u_boot_kinds() { jq -r '[.slots[].kind | select(. == "extlinux" or . == "u-boot-dropin")] | join(",")' <<<"$OUT"; }
expect_exit "a hand-written extlinux.conf, no u-boot-menu: status" 0 "$M" --root "$t" --json status
expect_eq "a hand-written extlinux.conf is not taken for u-boot-update's" "$(u_boot_kinds)" ""

# --- u-boot-menu installed, never run: U-Boot does not boot this root ---
tree
expect_exit "u-boot-update but no menu: status" 0 "$M" --root "$t" --json status
expect_eq "u-boot-update installed without a menu: nothing of u-boot-menu is managed" "$(u_boot_kinds)" ""
write_policy "$t/etc/memcg-policy.conf" <<'EOF'
[policy]
mode = off
[bootloaders]
u-boot-menu = yes
EOF
expect_exit "the same with u-boot-menu = yes: status" 0 "$M" --root "$t" --json status
expect_eq "u-boot-menu = yes: its fragment and data are managed without a menu yet" "$(u_boot_kinds)" "u-boot-dropin"

# --- GRUB's root with u-boot-menu installed, never run: GRUB's change does
# not run u-boot-update (the recorded decision is both's) ---
tree
cp /usr/sbin/grub-mkconfig /usr/sbin/update-grub /usr/sbin/grub-probe "$t/usr/sbin/"
mkdir -p "$t/boot/grub" "$t/etc/default/grub.d" "$t/etc/grub.d"
cp /etc/grub.d/00_header "$t/etc/grub.d/"
printf 'GRUB_CMDLINE_LINUX=""\n' >"$t/etc/default/grub"
printf '# an old menu\n' >"$t/boot/grub/grub.cfg"
expect_exit "GRUB and an unused u-boot-update: apply --regenerate, exit 0" 0 in_ns "$t" "$M" --root "$t" apply --regenerate
expect_has "GRUB and an unused u-boot-update: update-grub ran" "$OUT" "regenerated /boot/grub/grub.cfg"
check "GRUB and an unused u-boot-update: u-boot-update did not run (no extlinux.conf made)" \
	test ! -e "$t/boot/extlinux"

# --- u-boot-update turned off by a fragment after ours ---
tree
uboot_update "$t"
expect_exit "apply (the fragment in place, the menu not regenerated): exit 0" 0 "$M" --root "$t" apply
printf 'U_BOOT_UPDATE=false\n' >"$t/etc/u-boot-menu/conf.d/zz-off.conf"
expect_exit "check with U_BOOT_UPDATE=false in a fragment after ours: drift, not 'not regenerated yet' (1)" 1 \
	"$M" --root "$t" check
expect_has "check says u-boot-update is turned off by the later fragment" "$OUT" \
	"u-boot-update is turned off: /etc/u-boot-menu/conf.d/zz-off.conf:1 sets U_BOOT_UPDATE=false"
