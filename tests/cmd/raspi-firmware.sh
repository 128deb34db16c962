#!/bin/bash
# Debian's raspi-firmware, with the package's real kernel hook
# (tests/fixtures/roots/raspi-firmware/etc/kernel/postinst.d/z50-raspi-firmware,
# from raspi-firmware_1.20220830+ds-1_all.deb) run as a kernel update runs
# it, in a private mount namespace where the fixture root's /boot,
# /boot/firmware and /etc/default are the real paths. Shows: cmdline.txt
# carries the decision right after apply, the hook's next cmdline.txt is
# the one apply wrote, check tells the truth in between, and revert gives
# back what the hook writes without the tool.
. "$TOP/tests/lib.sh"
skip() { echo "SKIP: $1 ($2)"; }

VER=6.1.0-50-rpi
TXT=boot/firmware/cmdline.txt
EXTRA=etc/default/raspi-extra-cmdline

# hook ROOT: the kernel update's run of z50-raspi-firmware on ROOT
hook() {
	local r=$1
	# shellcheck disable=SC2016 # the inner script expands its own arguments
	unshare --mount --propagation private sh -c '
		r=$1 ver=$2
		mount --bind "$r/boot" /boot &&
		mount --bind "$r/boot/firmware" /boot/firmware &&
		mount --bind "$r/etc/default" /etc/default &&
		DEB_MAINT_PARAMS=configure exec sh "$r/etc/kernel/postinst.d/z50-raspi-firmware" "$ver" "/boot/vmlinuz-$ver"
	' sh "$r" "$VER" >/dev/null 2>&1
}

setup() {
	root=$(mkroot)
	cp -a "$FIX/roots/raspi-firmware/." "$root/"
	add_kernel "$root" "$VER" "$FIX/configs/debian12-rpi-armel.config"
	: >"$root/boot/initrd.img-$VER"
	printf '[policy]\nmode = %s\n' "$1" | write_policy "$root/etc/memcg-policy.conf"
}

if [ "$(id -u)" -ne 0 ] || ! unshare --mount --propagation private true 2>/dev/null; then
	skip "raspi-firmware hook" "needs root and a private mount namespace"
	exit 0
fi

# ---- the fixture is what the real hook writes --------------------------
setup off
fixture_txt=$(cat "$root/$TXT")
check "hook: runs (exit 0)" hook "$root"
expect_eq "fixture: cmdline.txt is what the real hook writes from the fixture's files" "$(cat "$root/$TXT")" "$fixture_txt"

# ---- off: both files, the next boot and the next kernel update ----------
expect_exit "off: check before apply: drift" 1 "$MEMCG_POLICY" --root "$root" check
expect_exit "off: apply" 0 "$MEMCG_POLICY" --root "$root" apply
check "off: apply names cmdline.txt" grep -qF "/$TXT" <<<"$OUT"
check "off: apply names raspi-extra-cmdline" grep -qF "/$EXTRA" <<<"$OUT"
expect_eq "off: cmdline.txt carries the decision now" "$(cat "$root/$TXT")" "$fixture_txt cgroup_disable=memory"
expect_eq "off: raspi-extra-cmdline carries it for the next kernel update" "$(cat "$root/$EXTRA")" "quiet cgroup_disable=memory"
expect_exit "off: check after apply: in sync" 0 "$MEMCG_POLICY" --root "$root" check
applied=$(cat "$root/$TXT")
check "off: kernel update: hook runs" hook "$root"
expect_eq "off: kernel update: the hook writes the cmdline.txt apply wrote" "$(cat "$root/$TXT")" "$applied"
expect_exit "off: check after the kernel update: in sync" 0 "$MEMCG_POLICY" --root "$root" check
expect_exit "off: apply after the kernel update" 0 "$MEMCG_POLICY" --root "$root" apply
expect_eq "off: apply after the kernel update: nothing to change" "$(head -n 1 <<<"$OUT")" "nothing to change"

# ---- a drift check sees an out-of-date cmdline.txt ----------------------
printf '%s\n' "$fixture_txt" >"$root/$TXT"
expect_exit "off: cmdline.txt without the token: check says drift" 1 "$MEMCG_POLICY" --root "$root" check
expect_exit "off: apply puts it back" 0 "$MEMCG_POLICY" --root "$root" apply
expect_eq "off: cmdline.txt has it again" "$(cat "$root/$TXT")" "$applied"

# ---- revert, after a kernel update that changed the hook's arguments ----
sed -i 's/^#CMA=64M$/CMA=128M/' "$root/etc/default/raspi-firmware"
check "revert: kernel update with CMA=128M: hook runs" hook "$root"
check "revert: the hook kept the token" grep -qw cgroup_disable=memory "$root/$TXT"
expect_exit "revert: exit 0" 0 "$MEMCG_POLICY" --root "$root" revert
expect_eq "revert: raspi-extra-cmdline as it was" "$(cat "$root/$EXTRA")" "quiet"
reverted=$(cat "$root/$TXT")
expect_eq "revert: cmdline.txt is the hook's new one without the token" "$reverted" "${fixture_txt/cma=64M/cma=128M}"
check "revert: next kernel update: hook runs" hook "$root"
expect_eq "revert: the hook then writes the cmdline.txt revert left" "$(cat "$root/$TXT")" "$reverted"
expect_exit "revert: a second revert" 0 "$MEMCG_POLICY" --root "$root" revert
expect_eq "revert: a second revert has nothing to do" "$(head -n 1 <<<"$OUT")" "nothing to revert"

# ---- on over the admin's own cgroup_disable=memory ----------------------
setup on
printf 'quiet cgroup_disable=memory\n' >"$root/$EXTRA"
check "on: hook with the admin's token runs" hook "$root"
orig_txt=$(cat "$root/$TXT")
expect_exit "on: apply" 0 "$MEMCG_POLICY" --root "$root" apply
check "on: the admin's cgroup_disable=memory is out of cmdline.txt" test "$(grep -cw cgroup_disable=memory "$root/$TXT")" -eq 0
check "on: and out of raspi-extra-cmdline" test "$(grep -cw cgroup_disable=memory "$root/$EXTRA")" -eq 0
applied=$(cat "$root/$TXT")
check "on: kernel update: hook runs" hook "$root"
expect_eq "on: kernel update: the hook writes the cmdline.txt apply wrote" "$(cat "$root/$TXT")" "$applied"
expect_exit "on: revert" 0 "$MEMCG_POLICY" --root "$root" revert
expect_eq "on: revert gives the admin's raspi-extra-cmdline back" "$(cat "$root/$EXTRA")" "quiet cgroup_disable=memory"
check "on: revert: hook runs" hook "$root"
expect_eq "on: revert: cmdline.txt as the hook wrote it before the tool" "$(cat "$root/$TXT")" "$orig_txt"
