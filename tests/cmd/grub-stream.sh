#!/bin/bash
# apply -v shows update-grub's output as it comes, not when it is done:
# the image's update-grub (run by apply --regenerate, in a private mount
# namespace) prints a first line, then waits up to 5 s for the test to
# have seen that line on the tool's stderr before it prints its second.
. "$TOP/tests/lib.sh"

if ! private_mounts || ! [ -x /bin/busybox ]; then
	echo "SKIP: update-grub's output as it comes (needs root, a private mount namespace and busybox)"
	exit 0
fi
root=$(mkroot)
add_kernel "$root" 6.1.0-41-amd64 "$FIX/configs/debian12-amd64.config"
mkdir -p "$root/etc/default/grub.d" "$root/usr/sbin" "$root/boot/grub" "$root/bin" "$root/tmp" \
	"$root/dev" "$root/proc" "$root/sys"
image_program "$root"
printf 'GRUB_CMDLINE_LINUX_DEFAULT="quiet"\nGRUB_CMDLINE_LINUX=""\n' >"$root/etc/default/grub"
# shellcheck disable=SC2016 # grub-mkconfig's ${sysconfdir}, literally
printf '#! /bin/sh\nfor x in ${sysconfdir}/default/grub.d/*.cfg ; do :; done\n' >"$root/usr/sbin/grub-mkconfig"
cp /bin/busybox "$root/bin/sh"
cat >"$root/usr/sbin/update-grub" <<'EOF'
#!/bin/sh
echo "first line"
i=0
while [ $i -lt 5 ] && ! [ -e /tmp/seen ]; do sleep 1; i=$((i + 1)); done
if [ -e /tmp/seen ]; then echo "second line: the first was seen"; else echo "second line: the first was not seen"; fi
EOF
chmod 0755 "$root/usr/sbin/update-grub" "$root/usr/sbin/grub-mkconfig"
printf "menuentry 'Debian' {\n\tlinux /boot/vmlinuz-6.1.0-41-amd64 root=/dev/sda1 ro quiet\n}\n" >"$root/boot/grub/grub.cfg"
printf '[policy]\nmode = off\n' | write_policy "$root/etc/memcg-policy.conf"
log=$(mktemp "${TMPDIR:-/tmp}/memcg-stream.XXXXXX")
_tmpdirs+=("$log")
"$MEMCG_POLICY" --root "$root" -v apply --regenerate 2> >(while IFS= read -r l; do
	printf '%s\n' "$l" >>"$log"
	case $l in *"update-grub: first line"*) : >"$root/tmp/seen" ;; esac
done) >/dev/null
wait
check "apply -v: update-grub's first line shown" grep -q 'update-grub: first line' "$log"
check "apply -v: shown while update-grub still ran" grep -q 'update-grub: second line: the first was seen' "$log"
