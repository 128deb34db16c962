#!/bin/bash
# tests/boot/run.sh [PATTERN...] - boot a real Debian kernel through real
# bootloaders under QEMU, from boot configuration that memcg-policy wrote
# into a fixture root, and check the memory cgroup controller inside the
# booted guest. See tests/boot/README.md.
#
# Environment: MEMCG_POLICY (the binary under test; default build/),
# BOOT_CACHE (downloads; default build/boot-cache), BOOT_WORK (fixture
# roots, images and serial logs of the last run; default build/boot-work),
# BOOT_TIMEOUT (seconds per boot, 120), BOOT_JOBS (boots at once, 2).
# PATTERNs (shell globs) pick cases by name; default all.
#
# Prints "PASS: NAME (expected memory X, observed Y)" or "FAIL: ..." per
# case and "N passed, N failed" last; exits 1 when anything failed.
set -u
export LC_ALL=C
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TOP=$(cd "$HERE/../.." && pwd)
MEMCG_POLICY=$(realpath -m "${MEMCG_POLICY:-$TOP/build/memcg-policy}")
CACHE=$(realpath -m "${BOOT_CACHE:-$TOP/build/boot-cache}")
WORK=$(realpath -m "${BOOT_WORK:-$TOP/build/boot-work}")
BOOT_TIMEOUT=${BOOT_TIMEOUT:-120}
BOOT_JOBS=${BOOT_JOBS:-2}
OVMF_CODE=${OVMF_CODE:-/usr/share/OVMF/OVMF_CODE_4M.fd}
OVMF_VARS=${OVMF_VARS:-/usr/share/OVMF/OVMF_VARS_4M.fd}
DROPIN="$TOP/grub.d/99-memcg-policy.cfg"
PREREQ_FAILED=0

# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$HERE/lib.sh"

# ------------------------------------------------------------------ cases
#
# One row per case: NAME FAMILY ADMIN TOOL EXPECT PRESENT ABSENT
#   FAMILY   direct | sdboot | grub-bios | grub-efi
#   ADMIN    what the administrator wrote on the command line before the
#            tool ran ("-" for nothing)
#   TOOL     none      hand-written control: the tool never runs
#            off | on  policy "mode = off|on", then memcg-policy apply
#            nopolicy  memcg-policy apply with no policy file at all
#            revert    policy "mode = on", apply (must take the admin's
#                      cgroup_disable=memory out), then revert (must give
#                      back every file byte for byte)
#            keep      (GRUB) policy "mode = off", apply, then "mode =
#                      auto" with nothing needing memcg (keep), apply
#                      again: the menu update-grub makes then keeps off
#   EXPECT   memory controller state the booted kernel must show
#   PRESENT / ABSENT  comma-separated words /proc/cmdline must / must not
#            hold (besides boottest.keep=1, always present: the admin's
#            other arguments survive)
CASES=()
add_case() { CASES+=("$*"); }

for fam in direct sdboot grub-bios grub-efi; do
	add_case "$fam-control-none    $fam -                     none     on  -                     cgroup_disable=memory"
	add_case "$fam-control-disable $fam cgroup_disable=memory none     off cgroup_disable=memory -"
	add_case "$fam-control-enable  $fam cgroup_enable=memory  none     on  cgroup_enable=memory  cgroup_disable=memory"
	add_case "$fam-off             $fam -                     off      off cgroup_disable=memory -"
	add_case "$fam-on              $fam cgroup_disable=memory on       on  -                     cgroup_disable=memory"
	add_case "$fam-nopolicy        $fam -                     nopolicy on  -                     cgroup_disable=memory,cgroup_enable=memory"
	add_case "$fam-revert          $fam cgroup_disable=memory revert   off cgroup_disable=memory -"
done
for fam in grub-bios grub-efi; do
	add_case "$fam-keep            $fam -                     keep     off cgroup_disable=memory cgroup_enable=memory"
done

# ---------------------------------------------------------- fixture roots

# The slot each family boots from, relative to the root.
slot_of() {
	case $1 in
	direct) echo etc/kernel/cmdline ;;
	sdboot) echo "boot/loader/entries/debian-$KVER.conf" ;;
	grub-*) echo etc/default/grub ;;
	esac
}

# make_root FAMILY ADMIN ROOT CASEDIR: a Debian-like root as an installer
# leaves it: the kernel (image, config, initramfs) in /boot and the boot
# configuration of the family, holding ADMIN's arguments.
make_root() {
	local fam=$1 admin=$2 root=$3 c=$4
	[ "$admin" != - ] || admin=
	mkdir -p "$root/etc" "$root/boot" "$root/run" "$root/var/lib" || return 1
	cp /etc/os-release "$root/etc/os-release" &&
		cp "$KERNEL" "$root/boot/vmlinuz-$KVER" &&
		cp "$KCONFIG" "$root/boot/config-$KVER" &&
		cp "$INITRD" "$root/boot/initrd.img-$KVER" || return 1
	case $fam in
	direct)
		mkdir -p "$root/etc/kernel" &&
			echo "root=/dev/vda1 ro boottest.keep=1${admin:+ $admin}" >"$root/etc/kernel/cmdline"
		;;
	sdboot)
		mkdir -p "$root/boot/loader/entries" || return 1
		printf 'timeout 0\ndefault debian-%s.conf\n' "$KVER" >"$root/boot/loader/loader.conf" &&
			cat >"$root/boot/loader/entries/debian-$KVER.conf" <<-EOF
				title      Debian GNU/Linux
				version    $KVER
				linux      /vmlinuz-$KVER
				initrd     /initrd.img-$KVER
				options    root=/dev/vda1 ro console=ttyS0 panic=-1 boottest.keep=1${admin:+ $admin}
			EOF
		;;
	grub-*)
		# Debian's GRUB: the real scripts, a grub-mkconfig that sources
		# /etc/default/grub.d/*.cfg, and an /etc/default/grub with the
		# serial terminal (BIOS GRUB prints to the serial port only so).
		mkdir -p "$root/etc/default/grub.d" "$root/usr/sbin" &&
			cp -a /etc/grub.d "$root/etc/grub.d" &&
			cp /usr/sbin/grub-mkconfig "$root/usr/sbin/grub-mkconfig" || return 1
		[ ! -e /usr/sbin/update-grub ] || cp /usr/sbin/update-grub "$root/usr/sbin/update-grub" || return 1
		cat >"$root/etc/default/grub" <<-EOF
			# If you change this file, run 'update-grub' afterwards to update
			# /boot/grub/grub.cfg.
			GRUB_DEFAULT=0
			GRUB_TIMEOUT=0
			GRUB_DISTRIBUTOR=\`lsb_release -i -s 2> /dev/null || echo Debian\`
			GRUB_CMDLINE_LINUX_DEFAULT="boottest.default=1"
			GRUB_CMDLINE_LINUX="console=ttyS0 panic=-1 boottest.keep=1${admin:+ $admin}"
			GRUB_TERMINAL="serial console"
			GRUB_SERIAL_COMMAND="serial --unit=0 --speed=115200"
		EOF
		# The menu the installed system already has.
		grub_disk "$root" "$c" none "$c/shim"
		;;
	esac
}

# tool CASEDIR ARGS...: runs memcg-policy, output into the case's log.
tool() {
	local c=$1
	shift
	echo "+ memcg-policy $*" >>"$c/prepare.log"
	"$MEMCG_POLICY" "$@" >>"$c/prepare.log" 2>&1
	local rc=$?
	[ $rc -eq 0 ] || echo "memcg-policy $* exited $rc" >&2
	return $rc
}

# write_shim CASEDIR ROOT [POLICY]: CASEDIR/shim/memcg-policy, the
# "memcg-policy" the GRUB drop-in finds on PATH while grub-mkconfig runs:
# the binary under test, working on the fixture root (as the installed
# tool would on its own system). Each call is logged in CASEDIR/shim.calls.
write_shim() {
	local c=$1 root=$2 policy=${3:-}
	mkdir -p "$c/shim"
	{
		echo '#!/bin/sh'
		printf 'printf "%%s\\n" "$*" >>%q\n' "$c/shim.calls"
		if [ -n "$policy" ]; then
			printf 'exec %q --root %q --config %q "$@"\n' "$MEMCG_POLICY" "$root" "$policy"
		else
			printf 'exec %q --root %q "$@"\n' "$MEMCG_POLICY" "$root"
		fi
	} >"$c/shim/memcg-policy"
	chmod 0755 "$c/shim/memcg-policy"
}

# ====================================================================
# prepare_root CASE ROOT: the fixture root as memcg-policy leaves it.
# THIS is the step that depends on the tool: every case whose TOOL is not
# "none" runs the real binary here, with the contract's command line
# (DESIGN.md section 3):
#     memcg-policy --root ROOT --config POLICY apply
#     memcg-policy --root ROOT apply                  (no policy)
#     memcg-policy --root ROOT --config POLICY revert
# and GRUB cases then run the real grub-mkconfig, which sources the
# project's drop-in grub.d/99-memcg-policy.cfg. Nothing here writes what
# the tool should have written: when the tool (or the drop-in) is not
# there or does not do its job, the case FAILS, loudly, with the reason.
# ====================================================================
prepare_root() {
	local name=$1 root=$2 fam admin mode c
	read -r name fam admin mode _ <<<"$(case_row "$1")"
	c=$(dirname "$root")
	make_root "$fam" "$admin" "$root" "$c" || { echo "cannot build the fixture root" >&2; return 1; }
	[ "$mode" != none ] || return 0

	# ---- from here on, the tool's step ----
	if [ ! -x "$MEMCG_POLICY" ]; then
		echo "memcg-policy not built: $MEMCG_POLICY is missing (run make)" >&2
		return 1
	fi
	local policy=
	case $mode in
	off | on | revert | keep)
		policy="$c/policy.conf"
		printf '[policy]\nmode = %s\n' "$(case $mode in revert) echo on ;; keep) echo off ;; *) echo "$mode" ;; esac)" >"$policy"
		chmod 0644 "$policy"
		;;
	esac
	local popt=()
	[ -z "$policy" ] || popt=(--config "$policy")

	case $fam in
	grub-*)
		write_shim "$c" "$root" "$policy"
		if [ "$mode" != revert ]; then
			# Installed as the package installs it.
			if [ ! -f "$DROPIN" ]; then
				echo "the GRUB drop-in grub.d/99-memcg-policy.cfg is not in the tree yet" >&2
				return 1
			fi
			install -m 0644 "$DROPIN" "$root/etc/default/grub.d/99-memcg-policy.cfg" || return 1
		fi
		# the program as the package installs it in the system (the
		# tool refuses an image whose drop-in would find none); when
		# grub-mkconfig runs here, the shim on PATH stands for it
		mkdir -p "$root/usr/sbin" && install -m 0755 "$c/shim/memcg-policy" "$root/usr/sbin/memcg-policy" || return 1
		;;
	esac

	if [ "$mode" = revert ]; then
		local slot
		slot=$(slot_of "$fam")
		rm -rf "$c/root.orig" && cp -a "$root" "$c/root.orig" || return 1
		tool "$c" --root "$root" "${popt[@]}" apply || return 1
		case $fam in
		grub-*)
			if [ ! -f "$root/etc/default/grub.d/99-memcg-policy.cfg" ]; then
				echo "apply did not install /etc/default/grub.d/99-memcg-policy.cfg on a Debian GRUB root" >&2
				return 1
			fi
			;;
		*)
			if has_word "$(tr '\n' ' ' <"$root/$slot")" cgroup_disable=memory; then
				echo "apply with mode = on left the admin's cgroup_disable=memory in /$slot" >&2
				return 1
			fi
			;;
		esac
		tool "$c" --root "$root" "${popt[@]}" revert || return 1
		# Back to the original bytes; the lock (/run/memcg-policy.lock)
		# and the journal (/var/lib/memcg-policy/) may stay.
		if ! diff -r --no-dereference -x memcg-policy -x memcg-policy.lock \
			"$c/root.orig" "$root" >"$c/revert.diff" 2>&1; then
			echo "revert did not give back the original files:" >&2
			sed 's/^/    /' "$c/revert.diff" | head -n 40 >&2
			return 1
		fi
	else
		tool "$c" --root "$root" "${popt[@]}" apply || return 1
	fi
	if [ "$mode" = keep ]; then
		# the decision becomes keep: the last applied state must stay
		local tokens=$root/var/lib/memcg-policy/grub.tokens data
		data=$(cat "$tokens" 2>/dev/null)
		printf '[policy]\nmode = auto\n' >"$policy"
		tool "$c" --root "$root" "${popt[@]}" apply || return 1
		if [ -z "$data" ] || [ "$(cat "$tokens" 2>/dev/null)" != "$data" ]; then
			echo "apply with a keep decision changed the recorded GRUB tokens ($tokens)" >&2
			return 1
		fi
	fi

	case $fam in
	grub-*)
		# apply --root does not regenerate (DESIGN.md section 4,
		# regenerate = auto); this is the update-grub of that system.
		: >"$c/shim.calls"
		grub_disk "$root" "$c" "${fam#grub-}" "$c/shim" || return 1
		if [ -f "$root/etc/default/grub.d/99-memcg-policy.cfg" ] && [ ! -s "$c/shim.calls" ]; then
			echo "grub-mkconfig sourced the drop-in but it never ran memcg-policy from PATH" >&2
			return 1
		fi
		;;
	esac
}

# ------------------------------------------------------------ boot setup

case_row() {
	local r
	for r in "${CASES[@]}"; do
		[ "${r%% *}" != "$1" ] || { echo "$r"; return; }
	done
}

# boot_media CASE ROOT CASEDIR: what the family boots (from ROOT, after
# prepare_root), as QEMU arguments in CASEDIR/qemu.args, one a line.
boot_media() {
	local fam=$1 root=$2 c=$3
	local a="$c/qemu.args"
	case $fam in
	direct)
		local cmdline
		cmdline=$(tr '\n' ' ' <"$root/etc/kernel/cmdline")
		printf '%s\n' -kernel "$root/boot/vmlinuz-$KVER" -initrd "$root/boot/initrd.img-$KVER" \
			-append "${cmdline% } console=ttyS0 panic=-1" >"$a"
		;;
	sdboot)
		sdboot_esp "$root" "$c" || return 1
		{ ovmf_args "$c" && printf '%s\n' -drive "file=$c/esp.img,format=raw,if=virtio"; } >"$a"
		;;
	grub-bios)
		# grub_disk already ran in prepare_root (after the tool) or in
		# make_root (controls) with target none: build the bootable disk.
		[ -f "$c/disk.img" ] || grub_disk "$root" "$c" bios "$c/shim" || return 1
		printf '%s\n' -drive "file=$c/disk.img,format=raw,if=virtio,snapshot=on" >"$a"
		;;
	grub-efi)
		[ -f "$c/esp.img" ] || grub_disk "$root" "$c" efi "$c/shim" || return 1
		{ ovmf_args "$c" && printf '%s\n' -drive "file=$c/esp.img,format=raw,if=virtio" \
			-drive "file=$c/disk.img,format=raw,if=virtio,snapshot=on"; } >"$a"
		;;
	esac
}

run_boot() {
	local c=$1 args
	mapfile -t args <"$c/qemu.args"
	boot_guest "$c" "${args[@]}"
}

# ------------------------------------------------------------- evaluation

# evaluate NAME: prints the PASS/FAIL line of a case and its details.
evaluate() {
	local name fam admin mode expect present absent
	read -r name fam admin mode expect present absent <<<"$(case_row "$1")"
	local c="$WORK/$name" why=() observed="not booted" secs=
	if [ -s "$c/prepare.failed" ]; then
		echo "FAIL: $name (expected memory $expect, observed $observed): prepare failed"
		sed 's/^/    /' "$c/prepare.failed"
		return 1
	fi
	local result='' rc=''
	[ -f "$c/boot.result" ] && read -r result secs rc <"$c/boot.result"
	local log="$c/serial.log"
	if ! tr -d '\r' <"$log" 2>/dev/null | grep -q '^@@MEMCG-BOOT END@@'; then
		case $result in
		stalled) why+=("the boot stopped at a firmware/bootloader prompt after ${secs}s") ;;
		timeout) why+=("no report from the guest within ${BOOT_TIMEOUT}s") ;;
		*) why+=("no report from the guest (QEMU ${result:-not run}, status $rc, see $c/qemu.log)") ;;
		esac
	else
		observed=$(memory_state "$log")
		local cmdline w
		cmdline=$(report_field "$log" CMDLINE)
		[ "$observed" = "$expect" ] || why+=("memory controller is $observed, expected $expect")
		local words=boottest.keep=1
		case $fam in grub-*) words+=,boottest.default=1 ;; esac
		[ "$present" = - ] || words+=",$present"
		for w in ${words//,/ }; do
			has_word "$cmdline" "$w" || why+=("/proc/cmdline lacks $w")
		done
		if [ "$absent" != - ]; then
			for w in ${absent//,/ }; do
				! has_word "$cmdline" "$w" || why+=("/proc/cmdline has $w")
			done
		fi
	fi
	local t=
	[ -z "$secs" ] || t=" [boot ${secs}s]"
	if [ ${#why[@]} -eq 0 ]; then
		echo "PASS: $name (expected memory $expect, observed $observed)$t"
		return 0
	fi
	echo "FAIL: $name (expected memory $expect, observed $observed)$t"
	printf '    %s\n' "${why[@]}"
	if [ -f "$log" ]; then
		local seen
		seen=$(report_field "$log" CMDLINE)
		[ -z "$seen" ] || echo "    /proc/cmdline: $seen"
		echo "    last lines of $log:"
		tr -d '\r' <"$log" | sed 's/\x1b\[[0-9;?=]*[A-Za-z]//g; s/\x1bc//g' | grep -v '^[[:space:]]*$' |
			tail -n 8 | sed 's/^/      /'
	fi
	return 1
}

# ------------------------------------------------------------------- main

cleanup() {
	local p f
	for p in $(jobs -p); do kill "$p" 2>/dev/null; done
	for f in "$WORK"/*/qemu.pid; do
		[ -f "$f" ] && kill "$(cat "$f")" 2>/dev/null
	done
	loop_detach_all
}
trap cleanup EXIT
trap 'exit 130' INT TERM

selected=()
for r in "${CASES[@]}"; do
	n=${r%% *}
	if [ $# -eq 0 ]; then
		selected+=("$n")
		continue
	fi
	for p; do
		# shellcheck disable=SC2053 # PATTERN is a glob on purpose
		if [[ $n == $p ]]; then selected+=("$n") && break; fi
	done
done
if [ ${#selected[@]} -eq 0 ]; then
	echo "FAIL: no case matches: $*"
	echo "0 passed, 1 failed"
	exit 1
fi

if [ -d "$WORK" ]; then
	# Only ever remove what an earlier run of this script made.
	[ -f "$WORK/.memcg-boot-work" ] || { echo "FAIL: $WORK exists and is not a boot-test work directory"; echo "0 passed, 1 failed"; exit 1; }
	rm -rf "$WORK"
fi
mkdir -p "$WORK" && : >"$WORK/.memcg-boot-work"
LOOPS_FILE="$WORK/loops"
: >"$LOOPS_FILE"

# Prerequisites, per family; a missing one fails every case of the family.
declare -A famfail=()
for fam in direct sdboot grub-bios grub-efi; do
	printf '%s\n' "${selected[@]}" | grep -q "^$fam-" || continue
	reasons=$(prereq_reasons "$fam" | sort -u)
	if [ -n "$reasons" ]; then
		famfail[$fam]=$reasons
		while IFS= read -r line; do prereq_fail "$fam: $line"; done <<<"$reasons"
	fi
done

assets_ok=1
if ! fetch_assets 2>"$WORK/assets.log"; then
	prereq_fail "cannot fetch the Debian kernel / systemd-boot:"
	sed 's/^/    /' "$WORK/assets.log"
	assets_ok=0
else
	INITRD="$WORK/init.cpio.gz"
	if ! build_initramfs "$INITRD" 2>"$WORK/initramfs.log"; then
		prereq_fail "cannot build the initramfs:"
		sed 's/^/    /' "$WORK/initramfs.log"
		assets_ok=0
	else
		note "kernel $KVER ($(sed 's/^/systemd-boot /' "$CACHE/systemd-boot.version" 2>/dev/null))"
		note "memcg-policy: $MEMCG_POLICY"
	fi
fi

start_all=$(date +%s)
for name in "${selected[@]}"; do
	read -r _ fam _ <<<"$(case_row "$name")"
	c="$WORK/$name"
	mkdir -p "$c"
	if [ $assets_ok -eq 0 ]; then
		echo "no kernel or initramfs (see the prerequisite failures above)" >"$c/prepare.failed"
		continue
	fi
	if [ -n "${famfail[$fam]:-}" ]; then
		printf 'prerequisite missing:\n%s\n' "${famfail[$fam]}" >"$c/prepare.failed"
		continue
	fi
	note "preparing $name"
	if ! prepare_root "$name" "$c/root" 2>"$c/prepare.err" ||
		! boot_media "$fam" "$c/root" "$c" 2>>"$c/prepare.err"; then
		{
			cat "$c/prepare.err"
			if [ -s "$c/prepare.log" ]; then
				echo "memcg-policy output:"
				sed 's/^/  /' "$c/prepare.log"
			fi
		} >"$c/prepare.failed"
		[ -s "$c/prepare.failed" ] || echo "prepare failed without a message" >"$c/prepare.failed"
		continue
	fi
	while [ "$(jobs -rp | wc -l)" -ge "$BOOT_JOBS" ]; do wait -n; done
	note "booting $name"
	run_boot "$c" &
done
wait

passed=0
failed=$PREREQ_FAILED
for name in "${selected[@]}"; do
	if evaluate "$name"; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
	# Images are large; logs, menus and fixture roots stay for inspection.
	rm -f "$WORK/$name/disk.img" "$WORK/$name/esp.img" "$WORK/$name/OVMF_VARS.fd"
done
times=$(cat "$WORK"/*/boot.result 2>/dev/null | awk '{ print $2 }' | sort -n)
if [ -n "$times" ]; then
	note "boot wall times (s): min $(head -n1 <<<"$times"), max $(tail -n1 <<<"$times"), mean $(awk '{ s += $1 } END { printf "%.1f", s / NR }' <<<"$times"); whole run $(($(date +%s) - start_all)) s with $BOOT_JOBS boots at once"
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
