#!/bin/bash
# What is not there is never "in sync".
# No boot configuration at all (a Raspberry Pi image whose boot/firmware
# is not mounted, a tree before its boot loader package): nothing carries
# the decision to the next boot, so nothing says "in sync" or "nothing to
# change": check exits 1, monitoring is not OK, apply and set exit 1 and
# say nothing was written and why (a warning and 0 from the hook, unless
# strict = yes). Where the decision has no opinion (keep), there is
# nothing to carry, and no boot configuration is in sync.
# A slot whose file does not exist is "missing" (see the end).
. "$TOP/tests/lib.sh"

# setup CONFIG MODE [EXTRA-POLICY]: a root with one kernel and no boot
# configuration
setup() {
	root=$(mkroot)
	add_kernel "$root" "$2" "$FIX/configs/$1"
	printf '[policy]\nmode = %s\n%b' "$3" "${4:-}" | write_policy "$root/etc/memcg-policy.conf"
}
says() { # NAME TEXT PATTERN
	case $2 in
	*"$3"*) pass "$1" ;;
	*) fail "$1" "$2" ;;
	esac
}
for mode in off on; do
	for k in "debian12-amd64.config 6.1.0-40-amd64" "rpi-6.6-bcm2712.config 6.6.51+rpt-rpi-2712"; do
		read -r cfg ver <<<"$k"
		name="$ver, mode $mode"
		setup "$cfg" "$ver" "$mode"
		expect_exit "$name: check is not in sync (exit 1)" 1 "$MEMCG_POLICY" --root "$root" check
		says "$name: check says there is no boot configuration" "$OUT" "not in sync: no boot configuration found"
		says "$name: check says what to do" "$OUT" "mount the boot partition or install the boot loader"
		expect_exit "$name: check --monitoring is CRITICAL (2)" 2 "$MEMCG_POLICY" --root "$root" check --monitoring
		says "$name: the monitoring line says why" "$OUT" "MEMCG-POLICY CRITICAL - no boot configuration found"
		expect_exit "$name: status" 0 "$MEMCG_POLICY" --root "$root" status
		says "$name: status: not in sync" "$OUT" "In sync: no: no boot configuration found"
		json_run "$name: status --json" "$MEMCG_POLICY" --root "$root" --json status
		expect_eq "$name: status --json: in_sync false" "$(jq -r .in_sync <<<"$OUT")" false
		expect_exit "$name: apply exits 1" 1 "$MEMCG_POLICY" --root "$root" apply
		says "$name: apply says nothing was written" "$ERR" "nothing written: no boot configuration found"
		case $OUT in
		*"nothing to change"*) fail "$name: apply does not say 'nothing to change'" "$OUT" ;;
		*) pass "$name: apply does not say 'nothing to change'" ;;
		esac
		case $OUT in
		*"memcg $mode"*) fail "$name: apply does not promise the next boot's state" "$OUT" ;;
		*) pass "$name: apply does not promise the next boot's state" ;;
		esac
		check "$name: apply wrote nothing" test ! -e "$root/var/lib/memcg-policy/journal.json"
		expect_exit "$name: apply --dry-run exits 1" 1 "$MEMCG_POLICY" --root "$root" apply --dry-run
		expect_exit "$name: apply --hook: a warning, exit 0" 0 "$MEMCG_POLICY" --root "$root" apply --hook
		says "$name: apply --hook warns" "$ERR" "warning: nothing written: no boot configuration found"
		json_run "$name: apply --json" "$MEMCG_POLICY" --root "$root" --json apply
		expect_eq "$name: apply --json: exit 1, in_sync false, changed false" \
			"$(jq -r '[.exit_code, .in_sync, .changed] | @tsv' <<<"$OUT")" "$(printf '1\tfalse\tfalse')"
		other=on
		[ "$mode" = on ] && other=off
		expect_exit "$name: set $other exits 1" 1 "$MEMCG_POLICY" --root "$root" set "$other"
		says "$name: set says nothing was written to the boot configuration" "$ERR" "nothing written:"
	done
done

setup debian12-amd64.config 6.1.0-40-amd64 off 'strict = yes\n'
expect_exit "strict = yes: apply --hook exits 1" 1 "$MEMCG_POLICY" --root "$root" apply --hook

# a decision without an opinion: nothing to carry
setup debian12-amd64.config 6.1.0-40-amd64 auto '[auto]\notherwise = keep\n'
expect_exit "otherwise = keep, nothing needs memcg: check in sync" 0 "$MEMCG_POLICY" --root "$root" check
expect_exit "otherwise = keep: apply" 0 "$MEMCG_POLICY" --root "$root" apply

# GRUB's files without GRUB (an image build that wrote /etc/default/grub
# before the boot loader package, Ubuntu's cloud-image drop-ins copied
# in): every slot found is unmanaged, so nothing carries the decision
# either; the same answers as with no boot configuration at all.
for mode in off on; do
	name="GRUB files without GRUB, mode $mode"
	root=$(mkroot)
	add_kernel "$root" 6.8.0-57-generic "$FIX/configs/debian12-cloud-amd64.config"
	mkdir -p "$root/etc/default/grub.d"
	cp "$FIX/grub/cases/cloudimg/default-grub" "$root/etc/default/grub"
	cp "$FIX/grub/cases/cloudimg/grub.d/"*.cfg "$root/etc/default/grub.d/"
	printf '[policy]\nmode = %s\n' "$mode" | write_policy "$root/etc/memcg-policy.conf"
	expect_exit "$name: status" 0 "$MEMCG_POLICY" --root "$root" status
	says "$name: status lists the GRUB slots as unmanaged" "$OUT" "no grub-mkconfig or grub2-mkconfig in the root"
	says "$name: status: not in sync" "$OUT" "In sync: no: no boot configuration in $root that memcg-policy manages"
	expect_exit "$name: check is not in sync (exit 1)" 1 "$MEMCG_POLICY" --root "$root" check
	says "$name: check says nothing carries the decision" "$OUT" "nothing carries memcg $mode for 6.8.0-57-generic"
	expect_exit "$name: check --monitoring is CRITICAL (2)" 2 "$MEMCG_POLICY" --root "$root" check --monitoring
	expect_exit "$name: apply exits 1" 1 "$MEMCG_POLICY" --root "$root" apply
	says "$name: apply says nothing was written" "$ERR" "nothing written: no boot configuration in $root that memcg-policy manages"
	check "$name: apply wrote nothing" test ! -e "$root/var/lib/memcg-policy"
	# with [bootloaders] grub = yes the admin says GRUB is there: managed
	printf '[policy]\nmode = %s\n[bootloaders]\ngrub = yes\n' "$mode" | write_policy "$root/etc/memcg-policy.conf"
	image_program "$root"
	expect_exit "$name, grub = yes: check is drift (exit 1): the GRUB slots are to be made" 1 \
		"$MEMCG_POLICY" --root "$root" check
	says "$name, grub = yes: the drop-in is a managed slot, missing" "$OUT" "missing: /etc/default/grub.d/99-memcg-policy.cfg"
done

# A slot whose file does not exist is "missing", never "in-sync": in sync
# all the same where the decision puts nothing in it (memcg on, a kernel
# that has it on by default), drift where it must be created.
for mode in on off; do
	root=$(mkroot)
	cp -a "$FIX/roots/systemd-boot-xbootldr/." "$root/"
	add_kernel "$root" 6.8.11-300.fc40.x86_64 "$FIX/configs/debian12-amd64.config"
	add_kernel "$root" 6.9.7-200.fc40.x86_64 "$FIX/configs/debian12-amd64.config"
	printf '[policy]\nmode = %s\n' "$mode" | write_policy "$root/etc/memcg-policy.conf"
	expect_exit "absent /etc/kernel/cmdline, mode $mode: status" 0 "$MEMCG_POLICY" --root "$root" status
	line=$(grep -E '^  [a-z-]+ +[a-z-]+ +/etc/kernel/cmdline' <<<"$OUT")
	expect_eq "absent /etc/kernel/cmdline, mode $mode: status says missing" "$(awk '{print $2}' <<<"$line")" missing
	json_run "absent /etc/kernel/cmdline, mode $mode: status --json" "$MEMCG_POLICY" --root "$root" --json status
	expect_eq "absent /etc/kernel/cmdline, mode $mode: --json state missing" \
		"$(jq -r '.slots[] | select(.path == "/etc/kernel/cmdline") | .state' <<<"$OUT")" missing
	want=0
	[ "$mode" = off ] && want=1
	expect_exit "absent /etc/kernel/cmdline, mode $mode: check exits $want" "$want" \
		"$MEMCG_POLICY" --root "$root" check
done

# mode = on that cannot be met: a kernel with memcg off by default whose
# cgroup_enable= support is unknown (no config, its default given by a
# [kernel] section). Not "in sync" with memcg off: exit 3 from every verb,
# naming the key that meets it; nothing written. With the key, it is met.
um_root() {
	root=$(mkroot)
	mkdir -p "$root/etc/kernel" "$root/lib/modules/6.1.0-9-arm64"
	: >"$root/boot/vmlinuz-6.1.0-9-arm64"
	printf 'root=/dev/mmcblk0p2 ro\n' >"$root/etc/kernel/cmdline"
	printf '[policy]\nmode = %s\n[kernel 6.1.0-9-arm64]\ndefault = off\n%b' "$1" "${2:-}" |
		write_policy "$root/etc/memcg-policy.conf"
}
um_root on
before=$(cat "$root/etc/kernel/cmdline")
for verb in check apply status decide; do
	expect_exit "unmeetable on: $verb exits 3" 3 "$MEMCG_POLICY" --root "$root" "$verb"
	says "unmeetable on: $verb names the key that meets it" "$ERR" \
		"say so with accepts-cgroup-enable = yes in a [kernel 6.1.0-9-arm64] section"
done
expect_exit "unmeetable on: check --monitoring is UNKNOWN (3), not OK" 3 "$MEMCG_POLICY" --root "$root" check --monitoring
says "unmeetable on: the monitoring line names the key" "$OUT" "MEMCG-POLICY UNKNOWN - 6.1.0-9-arm64: mode = on asks for memcg on"
expect_eq "unmeetable on: nothing written" "$(cat "$root/etc/kernel/cmdline")" "$before"
um_root off
expect_exit "unmeetable on: set on exits 6 (recorded, not applied)" 6 "$MEMCG_POLICY" --root "$root" set on
says "unmeetable on: set on says it recorded and did not apply" "$OUT" "mode = on is recorded, but not applied"
expect_eq "unmeetable on: set on: the boot configuration as it was" "$(cat "$root/etc/kernel/cmdline")" "$before"
um_root on 'accepts-cgroup-enable = yes\n'
expect_exit "on with accepts-cgroup-enable = yes: apply" 0 "$MEMCG_POLICY" --root "$root" apply
check "on with accepts-cgroup-enable = yes: cgroup_enable=memory written" grep -qw cgroup_enable=memory "$root/etc/kernel/cmdline"
expect_exit "on with accepts-cgroup-enable = yes: check in sync" 0 "$MEMCG_POLICY" --root "$root" check

# An image with GRUB whose drop-in would find no memcg-policy program (the
# package not installed in it): no menu its update-grub makes carries the
# decision. Not in sync, and apply refuses (exit 3, nothing written) and
# says to install the package; with the program there, it applies.
np_root() {
	root=$(mkroot)
	add_kernel "$root" 6.1.0-25-amd64 "$FIX/configs/debian12-amd64.config"
	mkdir -p "$root/etc/default/grub.d" "$root/usr/sbin" "$root/boot/grub"
	# shellcheck disable=SC2016 # grub-mkconfig's ${sysconfdir}, literally
	printf '#! /bin/sh\nfor x in ${sysconfdir}/default/grub.d/*.cfg ; do :; done\n' >"$root/usr/sbin/grub-mkconfig"
	chmod 0755 "$root/usr/sbin/grub-mkconfig"
	printf 'GRUB_DEFAULT=0\nGRUB_CMDLINE_LINUX_DEFAULT="quiet"\nGRUB_CMDLINE_LINUX=""\n' >"$root/etc/default/grub"
	printf 'menuentry Debian {\n\tlinux\t/boot/vmlinuz-6.1.0-25-amd64 root=/dev/sda1 ro quiet\n}\n' \
		>"$root/boot/grub/grub.cfg"
	printf '[policy]\nmode = off\n' | write_policy "$root/etc/memcg-policy.conf"
}
np_root
before=$(cd "$root" && find . | sort)
expect_exit "GRUB image without the program: apply refuses (3)" 3 "$MEMCG_POLICY" --root "$root" apply
says "GRUB image without the program: apply says nothing was written and why" "$ERR" \
	"nothing written: $root has no memcg-policy program"
says "GRUB image without the program: and what to do" "$ERR" "install the memcg-policy package into it"
expect_eq "GRUB image without the program: nothing written" "$(cd "$root" && find . | sort)" "$before"
expect_exit "GRUB image without the program: check is not in sync (1)" 1 "$MEMCG_POLICY" --root "$root" check
says "GRUB image without the program: check says why" "$OUT" "not in sync: $root has no memcg-policy program"
expect_exit "GRUB image without the program: monitoring CRITICAL (2)" 2 "$MEMCG_POLICY" --root "$root" check --monitoring
expect_exit "GRUB image without the program: status" 0 "$MEMCG_POLICY" --root "$root" status
says "GRUB image without the program: status: not in sync" "$OUT" "In sync: no: $root has no memcg-policy program"
image_program "$root"
expect_exit "GRUB image with the program: apply" 0 "$MEMCG_POLICY" --root "$root" apply
check "GRUB image with the program: the drop-in is written" test -f "$root/etc/default/grub.d/99-memcg-policy.cfg"
expect_exit "GRUB image with the program: check in sync (the menu awaits the image's update-grub)" 0 \
	"$MEMCG_POLICY" --root "$root" check
# no opinion (auto, nothing needs memcg: keep): nothing for the drop-in
# to carry, nothing needed from the image
np_root
printf '[policy]\nmode = auto\n' | write_policy "$root/etc/memcg-policy.conf"
expect_exit "GRUB image without the program, nothing to carry: check in sync" 0 "$MEMCG_POLICY" --root "$root" check

# The same where GRUB has no grub.d (Fedora, upstream, Arch): the marked
# line in /etc/default/grub sources the drop-in from the package's data
# directory. It must name the file the image has (its package's prefix,
# not this build's $(DATADIR)); an image without it is refused as one
# without the program.
fedora_root() {
	np_root
	rm -rf "$root/etc/default/grub.d" "$root/usr/sbin/grub-mkconfig"
	mkdir -p "$root/usr/bin"
	printf '#! /bin/sh\n. /etc/default/grub\n' >"$root/usr/bin/grub2-mkconfig"
	chmod 0755 "$root/usr/bin/grub2-mkconfig"
	image_program "$root"
	rm -r "$root/usr/share/memcg-policy" # the program, not the drop-in
}
fedora_root
before=$(cd "$root" && find . | sort)
expect_exit "marked-line GRUB image without the drop-in file: apply refuses (3)" 3 "$MEMCG_POLICY" --root "$root" apply
says "marked-line GRUB image without the drop-in file: says which file is missing" "$ERR" \
	"no drop-in (/usr/share/memcg-policy/99-memcg-policy.cfg) for its /etc/default/grub to source"
expect_eq "marked-line GRUB image without the drop-in file: nothing written" "$(cd "$root" && find . | sort)" "$before"
expect_exit "marked-line GRUB image without the drop-in file: check is not in sync (1)" 1 \
	"$MEMCG_POLICY" --root "$root" check
# (the packages' place, whatever this build's $(DATADIR) is)
fedora_root
mkdir -p "$root/usr/share/memcg-policy"
cp "$TOP/grub.d/99-memcg-policy.cfg" "$root/usr/share/memcg-policy/99-memcg-policy.cfg"
expect_exit "marked-line GRUB image, drop-in under /usr/share: apply" 0 "$MEMCG_POLICY" --root "$root" apply
expect_eq "marked-line GRUB image, drop-in under /usr/share: the marked line sources that file" \
	"$(tail -n 1 "$root/etc/default/grub")" \
	"if [ -r /usr/share/memcg-policy/99-memcg-policy.cfg ]; then . /usr/share/memcg-policy/99-memcg-policy.cfg; fi  # added by memcg-policy"
