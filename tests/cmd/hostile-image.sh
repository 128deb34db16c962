#!/bin/bash
# A hostile image: every file the tool reads in a --root tree carries $(...),
# backticks and ';' in its values (/etc/default/grub and its drop-ins, the
# policy's comments, a BLS entry, /etc/kernel/cmdline, cmdline.txt). status,
# decide, check, apply --dry-run, apply and revert must run nothing of it: a
# marker file outside the root that each payload would create stays absent,
# and the tool says which values it could not know (FILE:LINE and why).
# Also: a GRUB tree whose only code is Debian's GRUB_DISTRIBUTOR=`lsb_release
# ...` is read whole (the two command-line variables are plain).
# shellcheck disable=SC2016 # the stubs' ${sysconfdir} is meant literally
# shellcheck source=../lib.sh disable=SC1091
. "$TOP/tests/lib.sh"

W=$(mkroot)
MARK="$W/ran"
payload() { printf '$(touch %s.%s)' "$MARK" "$1"; }

hostile_root() {
	local root
	root=$(mkroot)
	add_kernel "$root" 6.1.0-25-amd64 "$FIX/configs/debian12-amd64.config"
	mkdir -p "$root/etc/default/grub.d" "$root/usr/sbin" "$root/boot/grub"
	# grub-mkconfig's sourcing loop tells the tool that drop-ins are read
	printf '#! /bin/sh\nfor x in ${sysconfdir}/default/grub.d/*.cfg ; do :; done\n' >"$root/usr/sbin/grub-mkconfig"
	chmod 0755 "$root/usr/sbin/grub-mkconfig"
	# the package installed in the image: its program, for the drop-in
	printf '#! /bin/sh\ntouch %s.program\n' "$MARK" >"$root/usr/sbin/memcg-policy"
	chmod 0755 "$root/usr/sbin/memcg-policy"
	cat >"$root/etc/default/grub" <<EOF
GRUB_DEFAULT=0
GRUB_DISTRIBUTOR=\`touch $MARK.bq; echo Debian\`
GRUB_CMDLINE_LINUX_DEFAULT="quiet $(payload default)"
GRUB_CMDLINE_LINUX="root=/dev/sda1; touch $MARK.semi"
EOF
	cat >"$root/etc/default/grub.d/50-image.cfg" <<EOF
GRUB_CMDLINE_LINUX="\$GRUB_CMDLINE_LINUX \`touch $MARK.dropin\`"
EOF
	# a menu as update-grub made it before
	printf 'menuentry Debian {\n\tlinux\t/boot/vmlinuz-6.1.0-25-amd64 root=/dev/sda1 ro quiet\n}\n' \
		>"$root/boot/grub/grub.cfg"
	printf '[policy]\n# %s\nmode = off\n' "$(payload policy)" | write_policy "$root/etc/memcg-policy.conf"
	echo "$root"
}

markers() { find "$W" -maxdepth 1 -name 'ran*' | wc -l; }

root=$(hostile_root)
echo "touch $MARK.cmd" >>"$root/etc/default/grub.d/50-image.cfg"
for cmd in "status" "decide" "decide --explain" "check" "apply --dry-run" "apply" "status" "check" "revert --dry-run" "revert"; do
	# shellcheck disable=SC2086 # the words of cmd
	"$MEMCG_POLICY" --root "$root" $cmd >"$W/out" 2>&1
	expect_eq "hostile image: '$cmd' runs nothing of the image" "$(markers)" 0
done

# status says which values it could not know, and where
root=$(hostile_root)
"$MEMCG_POLICY" --root "$root" status >"$W/out" 2>&1
check "hostile image: status names the file and line it could not read without running it" \
	grep -q "cannot know them: $root/etc/default/grub.d/50-image.cfg:1: a command substitution" "$W/out"
"$MEMCG_POLICY" --root "$root" apply --dry-run >"$W/out" 2>&1
check "hostile image: apply --dry-run says it cannot know the GRUB variables" \
	grep -q "cannot know GRUB_CMDLINE_LINUX and GRUB_CMDLINE_LINUX_DEFAULT: $root/etc/default/grub.d/50-image.cfg:1" "$W/out"

# a statement that runs code (not an assignment) makes every value unknown
root=$(hostile_root)
echo "touch $MARK.cmd" >"$root/etc/default/grub.d/50-image.cfg"
"$MEMCG_POLICY" --root "$root" status >"$W/out" 2>&1
check "hostile image: a command in a drop-in makes the values unknown (FILE:LINE: a command)" \
	grep -q "cannot know them: $root/etc/default/grub.d/50-image.cfg:1: a command:" "$W/out"
expect_eq "hostile image: still nothing ran" "$(markers)" 0

# Debian's own /etc/default/grub: GRUB_DISTRIBUTOR needs code, the command
# line does not; status shows the values without running anything
root=$(mkroot)
add_kernel "$root" 6.1.0-25-amd64 "$FIX/configs/debian12-amd64.config"
mkdir -p "$root/etc/default/grub.d" "$root/usr/sbin" "$root/boot/grub"
printf '#! /bin/sh\nfor x in ${sysconfdir}/default/grub.d/*.cfg ; do :; done\n' >"$root/usr/sbin/grub-mkconfig"
chmod 0755 "$root/usr/sbin/grub-mkconfig"
sed "s|lsb_release -i -s 2> /dev/null|touch $MARK.debian; lsb_release -i -s 2> /dev/null|" \
	"$FIX/grub/debian/default-grub" >"$root/etc/default/grub"
printf '[policy]\nmode = off\n' | write_policy "$root/etc/memcg-policy.conf"
expect_exit "Debian's /etc/default/grub: status" 0 "$MEMCG_POLICY" --root "$root" status
check "Debian's /etc/default/grub: status shows the value GRUB_CMDLINE_LINUX_DEFAULT has" \
	grep -qx '    as written:    "quiet"' <<<"$OUT"
check "Debian's /etc/default/grub: and what apply makes of GRUB_CMDLINE_LINUX" \
	grep -qx '    after apply:   "cgroup_disable=memory"' <<<"$OUT"
expect_eq "Debian's /etc/default/grub: GRUB_DISTRIBUTOR's command was not run" "$(markers)" 0
