#!/bin/bash
# tests/powerloss/run.sh [KILLS] - power loss, not just SIGKILL: a QEMU
# guest (Debian's kernel; busybox, memcg-policy and its libraries in the
# initramfs) edits 100 BLS entries, 50 on a FAT32 ESP and 50 on an ext4
# /boot, with set off / set on over and over, and the host kills the whole
# machine at a random moment. After each kill, on the host: the ext4 image's
# journal replayed as a mount would, then e2fsck -fn clean; fsck.fat -n
# clean but for the dirty bit an unclean unmount leaves; every entry on
# both file systems byte for byte either its pristine or its "off" content
# (nothing torn, nothing half-written). Then, in the next boot: check does
# not call anything bad input, revert gives every entry back byte for byte
# (so every change on disk had its journal record), set off converges and
# check says in sync. See tests/powerloss/README.md.
#
# KILLS (default $POWERLOSS_KILLS, else 12). Environment: MEMCG_POLICY (the
# binary, default build/memcg-policy), BOOT_CACHE (the kernel, shared with
# the boot tier), POWERLOSS_WORK (default build/powerloss-work: images and
# serial logs stay), POWERLOSS_SEED (the random kill times).
# Prints "PASS: ..." / "FAIL: ..." and "N passed, N failed" last.
set -u
export LC_ALL=C
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TOP=$(cd "$HERE/../.." && pwd)
KILLS=${1:-${POWERLOSS_KILLS:-12}}
MP=$(realpath -m "${MEMCG_POLICY:-$TOP/build/memcg-policy}")
CACHE=$(realpath -m "${BOOT_CACHE:-$TOP/build/boot-cache}")
WORK=$(realpath -m "${POWERLOSS_WORK:-$TOP/build/powerloss-work}")
SEED=${POWERLOSS_SEED:-$$}
BOOT_TIMEOUT=${BOOT_TIMEOUT:-180}

# shellcheck source-path=SCRIPTDIR source=../../bench/snapper-entry.sh
. "$TOP/bench/snapper-entry.sh"
# shellcheck source-path=SCRIPTDIR source=../boot/lib.sh
. "$HERE/../boot/lib.sh"

# shellcheck source-path=SCRIPTDIR source=../tier.sh
. "$TOP/tests/tier.sh"

# ------------------------------------------------------------------ guest

# fetch_modules: the modules the guest needs (virtio disks, ext4, vfat and
# its code pages) from the same linux-image package as the kernel, with
# depmod's index, into $CACHE/modules-$KVER.
MODULES="drivers/virtio drivers/block/virtio_blk.ko fs/ext4 fs/jbd2 fs/mbcache.ko fs/fat fs/nls lib/crc16.ko
lib/libcrc32c.ko crypto/crc32c_generic.ko"
fetch_modules() {
	local dir="$CACHE/modules-$KVER" m
	[ -s "$dir/lib/modules/$KVER/modules.dep" ] && return 0
	local -a pats=()
	for m in $MODULES; do
		case $m in
		*.ko) pats+=("./lib/modules/$KVER/kernel/$m") ;;
		*) pats+=("./lib/modules/$KVER/kernel/$m/*") ;;
		esac
	done
	(
		cd "$CACHE" || exit 1
		rm -f "linux-image-$KVER"_*.deb
		apt-get download "linux-image-$KVER" >apt-modules.log 2>&1 || { cat apt-modules.log >&2; exit 1; }
		rm -rf "$dir" && mkdir -p "$dir" || exit 1
		dpkg-deb --fsys-tarfile "linux-image-$KVER"_*.deb |
			tar -x -C "$dir" --wildcards "${pats[@]}" "./lib/modules/$KVER/modules.builtin" "./lib/modules/$KVER/modules.order" ||
			exit 1
		rm -f "linux-image-$KVER"_*.deb
		depmod -b "$dir" "$KVER"
	)
}

# The libraries memcg-policy loads with dlopen (by soname), not seen by ldd.
# ------------------------------------------------------------------ disks

# The tree: 4 installed kernels, 100 snapshot entries (openSUSE's sdbootutil
# layout), 50 on the ESP and 50 on /boot, the policy in /etc.
MID=0f5e2c8d7a6b4c3e9d1f2a3b4c5d6e7f
KERNELS=(6.1.0-10-amd64 6.1.0-11-amd64 6.1.0-12-amd64 6.1.0-13-amd64)
make_tree() {
	local d=$1 v i s dir
	mkdir -p "$d/etc" "$d/boot/loader/entries" "$d/efi/loader/entries" "$d/var/lib" "$d/run" || return 1
	echo "$MID" >"$d/etc/machine-id"
	printf 'NAME="openSUSE Tumbleweed"\nID="opensuse-tumbleweed"\n' >"$d/etc/os-release"
	printf '[policy]\nmode = on\n' >"$d/etc/memcg-policy.conf"
	for v in "${KERNELS[@]}"; do
		mkdir -p "$d/lib/modules/$v" && : >"$d/boot/vmlinuz-$v" && cp "$KCONFIG" "$d/boot/config-$v" || return 1
	done
	for ((i = 0; i < 100; i++)); do
		v=${KERNELS[i % 4]}
		s=$((i / 4 + 1))
		dir=efi
		[ "$i" -lt 50 ] || dir=boot
		snapper_entry "$v" "$s" "$MID" >"$d/$dir/loader/entries/opensuse-tumbleweed-$v-$s.conf" || return 1
	done
}

# make_images TREE: root.img (ext4 from TREE without efi/) and esp.img
# (FAT32 from TREE/efi), both whole-disk file systems.
make_images() {
	local t=$1
	rm -f "$W/root.img" "$W/esp.img"
	mkdir -p "$W/esp-src" && cp -a "$t/efi/." "$W/esp-src/" && rm -rf "${t:?}/efi" && mkdir "$t/efi" || return 1
	truncate -s 128M "$W/root.img" && mkfs.ext4 -q -F -d "$t" "$W/root.img" >/dev/null || return 1
	mkfs.vfat -F 32 -n ESP -C "$W/esp.img" $((64 * 1024)) >/dev/null && mcopy -s -i "$W/esp.img" "$W/esp-src"/* ::/
}

# variants: the pristine and the "off" content of every entry, from the
# tool run on a copy of the tree on the host (ESP as a directory).
variants() {
	local t="$W/variant-tree"
	rm -rf "$t" && make_tree "$t" || return 1
	(cd "$t" && find efi/loader/entries boot/loader/entries -name '*.conf' -exec sha256sum {} + | sort -k2) >"$W/pristine.sums"
	"$MP" --root "$t" set off >"$W/variant-set.log" 2>&1 || { cat "$W/variant-set.log" >&2; return 1; }
	(cd "$t" && find efi/loader/entries boot/loader/entries -name '*.conf' -exec sha256sum {} + | sort -k2) >"$W/off.sums"
	cmp -s <(awk '{print $2}' "$W/pristine.sums") <(awk '{print $2}' "$W/off.sums")
}

# ----------------------------------------------------------------- checks

# boot PHASE OUTDIR [KILL-AFTER-SECONDS]: one boot with pl=PHASE; with a
# delay, the machine is killed (SIGKILL to QEMU: the guest's caches are
# lost, what QEMU wrote to the images stays) that long after the guest
# reports @@STORM@@.
boot() {
	local phase=$1 out=$2 delay=${3:-} pid t0 start
	mkdir -p "$out" && : >"$out/serial.log"
	start=$(date +%s.%N)
	timeout -k 5 "$BOOT_TIMEOUT" qemu-system-x86_64 -accel tcg -m 512 -smp 1 -nographic -no-reboot -nic none \
		-kernel "$KERNEL" -initrd "$W/initrd.gz" -append "console=ttyS0 panic=-1 quiet pl=$phase" \
		-drive "file=$W/root.img,format=raw,if=virtio" -drive "file=$W/esp.img,format=raw,if=virtio" \
		</dev/null >"$out/serial.log" 2>"$out/qemu.log" &
	pid=$!
	if [ -n "$delay" ]; then
		t0=
		while kill -0 "$pid" 2>/dev/null; do
			if [ -z "$t0" ] && grep -aq '^@@STORM@@' "$out/serial.log"; then
				t0=$(date +%s.%N)
				sleep "$delay"
				pkill -KILL -P "$pid" 2>/dev/null # QEMU, the child of timeout
				kill -KILL "$pid" 2>/dev/null
				break
			fi
			sleep 0.05
		done
	fi
	wait "$pid" 2>/dev/null
	BOOT_SECS=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
	LOG=$out/serial.log
}
# no_hang WHAT: no command of this boot's checks hung in the guest (the
# guest's init reports one with "@@HUNG@@" lines: where it waited)
no_hang() {
	local hung
	hung=$(tr -d '\r' <"$LOG" | grep -a '^@@HUNG@@')
	if [ -n "$hung" ]; then
		fail "$1: no command hangs in the guest" "$hung"
	else
		pass "$1: no command hangs in the guest"
	fi
}
# field NAME: the guest's "@@NAME@@ VALUE" in this boot's log
field() { report_field "$LOG" "$1"; }

# after_cut N: the host's checks of the images as the cut left them.
after_cut() {
	local k=$1 d="$W/cut-$1" fat="$W/cut-$1/esp-check.img" torn=0 f sum want other
	mkdir -p "$d"
	# ext4: the journal replayed as the next mount would, then clean
	e2fsck -E journal_only -p "$W/root.img" >"$d/e2fsck-replay.log" 2>&1
	if e2fsck -fn "$W/root.img" >"$d/e2fsck.log" 2>&1; then
		pass "kill $k: e2fsck -fn clean on the ext4 /boot"
	else
		fail "kill $k: e2fsck -fn clean on the ext4 /boot" "$(tail -n 15 "$d/e2fsck.log")"
	fi
	# FAT: clean but for the two marks of an unclean unmount, both
	# advisory: the dirty bit Linux sets while it is mounted (FAT32: bit 0
	# of byte 0x41 of the boot sector; the backup boot sector stays clean)
	# and FSInfo's free cluster count, a hint Linux updates lazily (set to
	# 0xFFFFFFFF, "unknown" by the FAT specification); and lost clusters
	# (allocated, named by no file), which FAT cannot avoid: a cluster is
	# allocated in the FAT and named in a directory entry by two writes
	# Linux does not order, so a cut between them leaves it allocated and
	# unnamed (a temp file's, or the old file's after a rename); no file's
	# data is in them. And FATs that differ where both are intact (the
	# second copy a write behind the first: Linux writes the FAT's two
	# copies as separate blocks, so a cut can fall between them); fsck.fat
	# then reads the first, and everything it finds with it is checked
	# here as with one FAT. Shared clusters, a file naming free clusters, a
	# wrong size, a bad directory: all fail; so does anything the repair
	# below leaves.
	cp "$W/esp.img" "$fat" || return 1
	local b fsi hint
	b=$(od -An -tu1 -j $((0x41)) -N1 "$fat" | tr -d ' ')
	printf '%b' "\\$(printf '%03o' $((b & 254)))" | dd of="$fat" bs=1 seek=$((0x41)) conv=notrunc 2>/dev/null
	fsi=$(od -An -tu2 -j $((0x30)) -N2 "$fat" | tr -d ' ')
	hint=$(od -An -tu4 -j $((fsi * 512 + 488)) -N4 "$fat" | tr -d ' ')
	printf '\377\377\377\377' | dd of="$fat" bs=1 seek=$((fsi * 512 + 488)) conv=notrunc 2>/dev/null
	fsck.fat -n "$fat" >"$d/fsck.fat.log" 2>&1
	local frc=$? lost other
	lost=$(sed -n 's/^Reclaimed \([0-9]*\) unused clusters\{0,1\} .*/\1/p' "$d/fsck.fat.log")
	local fats=
	if grep -q '^FATs differ but appear to be intact\.$' "$d/fsck.fat.log" &&
		grep -q '^ *Using first FAT\.$' "$d/fsck.fat.log"; then
		fats=yes
		FATS_DIFFERED=$((FATS_DIFFERED + 1))
	fi
	other=$(grep -v -e '^fsck.fat ' -e '^Reclaimed [0-9]* unused clusters\{0,1\} ([0-9]* bytes)\.$' \
		-e '^Free cluster summary uninitialized (should be [0-9]*)$' -e '^Leaving filesystem unchanged\.$' \
		-e '^FATs differ but appear to be intact\.$' -e '^ *Using first FAT\.$' \
		-e '^$' -e "^$fat: [0-9]* files, [0-9]*/[0-9]* clusters\$" "$d/fsck.fat.log")
	LOST=${lost:-0}
	if { [ $frc -eq 0 ] || { [ $frc -eq 1 ] && [ -n "$lost$fats" ]; }; } && [ -z "$other" ]; then
		pass "kill $k: fsck.fat -n finds nothing on the FAT32 ESP but ${lost:-no} lost clusters${fats:+ and a second FAT a write behind} (dirty bit $((b & 1)), free count hint $hint)"
	else
		fail "kill $k: fsck.fat -n clean on the FAT32 ESP" "$(tail -n 15 "$d/fsck.fat.log")"
	fi
	# as the next boot would (Debian's fstab: fsck pass 1 for the ESP,
	# systemd-fsck runs fsck.fat -a): the dirty bit cleared, lost clusters
	# reclaimed, the second FAT made the first's copy; after it fsck.fat
	# finds nothing at all
	fsck.fat -a "$W/esp.img" >"$d/fsck.fat-a.log" 2>&1
	fsck.fat -n "$W/esp.img" >"$d/fsck.fat-after.log" 2>&1
	frc=$?
	other=$(grep -v -e '^fsck.fat ' -e '^$' -e "^$W/esp.img: [0-9]* files, [0-9]*/[0-9]* clusters\$" "$d/fsck.fat-after.log")
	if [ $frc -eq 0 ] && [ -z "$other" ]; then
		pass "kill $k: after fsck.fat -a, as at the next boot, fsck.fat -n finds nothing on the ESP"
	else
		fail "kill $k: after fsck.fat -a, as at the next boot, fsck.fat -n finds nothing on the ESP" "$(tail -n 15 "$d/fsck.fat-after.log")"
	fi
	rm -f "$fat"
	# every entry old or new
	rm -rf "$d/files" && mkdir -p "$d/files/efi/loader" "$d/files/boot/loader"
	mcopy -s -n -i "$W/esp.img" ::/loader/entries "$d/files/efi/loader/" 2>"$d/mcopy.log"
	debugfs -R "rdump /boot/loader/entries $d/files/boot/loader" "$W/root.img" >"$d/debugfs.log" 2>&1
	(cd "$d/files" && find efi/loader/entries boot/loader/entries -name '*.conf' -exec sha256sum {} + | sort -k2) >"$d/now.sums"
	LEFT=$(find "$d/files" \( -name '*memcg-policy*' -o -iname 'MP??????.MCG' \) | wc -l)
	# a temp file on FAT has an 8.3 name and nothing else: one directory
	# slot, whole or absent at a cut (a long name's run of slots across
	# sectors was torn by one); mdir prints a long name after the time
	mdir -i "$W/esp.img" ::/loader/entries >"$d/mdir.log" 2>&1
	local fattmp longtmp
	fattmp=$(grep -c '^MP[A-Z0-9]\{6\} MCG ' "$d/mdir.log")
	longtmp=$(grep -E -c '^MP[A-Z0-9]{6} MCG .*[0-9]:[0-9]{2} +[^ ]|memcg-policy' "$d/mdir.log")
	expect_eq "kill $k: the $fattmp temp files left on the FAT ESP each hold one directory slot (no long name)" "$longtmp" 0
	expect_eq "kill $k: the 100 entries are all there" "$(awk '{print $2}' "$d/now.sums" | tr '\n' ' ')" \
		"$(awk '{print $2}' "$W/pristine.sums" | tr '\n' ' ')"
	local nold=0 nnew=0
	while read -r sum f; do
		want=$(awk -v f="$f" '$2 == f { print $1 }' "$W/pristine.sums")
		other=$(awk -v f="$f" '$2 == f { print $1 }' "$W/off.sums")
		if [ "$sum" = "$want" ]; then
			nold=$((nold + 1))
		elif [ "$sum" = "$other" ]; then
			nnew=$((nnew + 1))
		else
			torn=$((torn + 1))
			[ "$torn" -gt 3 ] || echo "  torn: $f" >&2
		fi
	done <"$d/now.sums"
	expect_eq "kill $k: every entry byte for byte as before or as after an edit ($nold without, $nnew with cgroup_disable=memory)" "$torn" 0
	NOLD=$nold NNEW=$nnew
}

# next_run N LOG: the guest's run after the cut, as it reported it.
next_run() {
	local k=$1
	case $(field CHECK-AFTER-CUT) in
	0 | 1) pass "kill $k: check after the cut says in sync or drift, never bad input ($(field CHECK-AFTER-CUT))" ;;
	*) fail "kill $k: check after the cut says in sync or drift" "exit $(field CHECK-AFTER-CUT)" ;;
	esac
	expect_eq "kill $k: revert after the cut exits 0" "$(field REVERT)" 0
	tr -d '\r' <"$LOG" | sed -n 's/^@@SUM@@ \([0-9a-f]*\) \/\(.*\)$/\1  \2/p' | sort -k2 >"$W/cut-$k/reverted.sums"
	if cmp -s "$W/cut-$k/reverted.sums" "$W/pristine.sums"; then
		pass "kill $k: revert gives back every entry byte for byte (each change had its record)"
	else
		fail "kill $k: revert gives back every entry byte for byte" \
			"$(diff "$W/pristine.sums" "$W/cut-$k/reverted.sums" | head -n 8)"
	fi
	expect_eq "kill $k: no record left in the journal after the revert" "$(field JOURNAL-RECORDS-AFTER-REVERT)" 0
	expect_eq "kill $k: no temporary file left once set off wrote every entry" "$(field LEFTOVERS-AFTER)" 0
	expect_eq "kill $k: set off converges (exit 0)" "$(field SET-OFF)" 0
	expect_eq "kill $k: check then says in sync (exit 0)" "$(field CHECK)" 0
	expect_eq "kill $k: all 100 entries have cgroup_disable=memory" "$(field OFF-ENTRIES)" 100
}

# ------------------------------------------------------------------- main

case $KILLS in '' | *[!0-9]* | 0) fail "KILLS is a number of kills, at least 1 (got: $KILLS)"; finish ;; esac
if [ "$(id -u)" -ne 0 ]; then fail "tests/powerloss/run.sh runs as root (mknod in the initramfs)"; finish; fi
for c in qemu-system-x86_64 mkfs.vfat fsck.fat mkfs.ext4 e2fsck debugfs mcopy cpio depmod ldd apt-get dpkg-deb timeout; do
	command -v "$c" >/dev/null 2>&1 || fail "command $c is installed (.ci/packages)"
done
[ -x /bin/busybox ] || fail "/bin/busybox is installed (busybox-static)"
[ -x "$MP" ] || fail "$MP is built (make)"
[ "$failed" -eq 0 ] || finish
W=$WORK
if ! { rm -rf "$W" && mkdir -p "$W"; }; then fail "work directory $W"; finish; fi
T0=$(date +%s)
fetch_assets >"$W/fetch.log" 2>&1 || { fail "the Debian kernel is fetched" "$(tail -n 5 "$W/fetch.log")"; finish; }
fetch_modules >>"$W/fetch.log" 2>&1 || { fail "its modules are fetched" "$(tail -n 5 "$W/fetch.log")"; finish; }
build_tool_initramfs "$W/initrd.gz" "$HERE/init" "$MP" "$CACHE/modules-$KVER/lib/modules" ||
	{ fail "the guest's initramfs builds"; finish; }
variants || { fail "the pristine and off contents of the entries"; finish; }
if ! { make_tree "$W/tree" && make_images "$W/tree"; }; then fail "the disk images"; finish; fi
note "kernel $KVER; seed $SEED; $KILLS kills; work $W"

LOG=
boot first "$W/first"
expect_eq "the first apply in the guest (set off) exits 0" "$(field FIRST)" 0
RANDOM=$SEED
runs_total=0
lost_total=0
FATS_DIFFERED=0
declare -a delays=()
for ((k = 1; k <= KILLS; k++)); do
	# a kill 0.0 to 6.0 s after the storm starts (one set takes about
	# 1 to 2 s in the guest): early in a run, in its writes, between runs
	# (drawn here, not in a command substitution: bash seeds a subshell's
	# RANDOM anew, and the seed would not give the same kill times again)
	delay="$((RANDOM % 6)).$((RANDOM % 10))"
	delays+=("$delay")
	boot storm "$W/boot-$k" "$delay"
	no_hang "kill $k"
	if ! tr -d '\r' <"$LOG" | grep -q '^@@STORM@@'; then
		fail "kill $k: the guest reaches the storm (boot of $BOOT_SECS s, timeout ${BOOT_TIMEOUT}s)" \
			"$(tr -d '\r' <"$LOG" | tail -n 40; tail -n 5 "$W/boot-$k/qemu.log")"
		finish
	fi
	runs=$(tr -d '\r' <"$LOG" | grep -c '^@@RUN@@')
	runs_total=$((runs_total + runs))
	if [ "$k" -gt 1 ]; then next_run $((k - 1)); fi
	bad=$(tr -d '\r' <"$LOG" | grep '^@@RUN@@' | awk '$4 != 0' | head -n 3)
	expect_eq "kill $k: every completed set in the storm exited 0" "$bad" ""
	after_cut "$k"
	lost_total=$((lost_total + LOST))
	note "kill $k after $delay s (boot and storm $BOOT_SECS s): $runs sets completed, $NOLD entries without and $NNEW with the token, $LEFT temporary files left, $LOST lost FAT clusters"
done
boot final "$W/final"
no_hang "the last boot"
next_run "$KILLS"
expect_eq "the last run ends" "$(tr -d '\r' <"$LOG" | grep -c '^@@END@@')" 1
note "kills: $KILLS (delays ${delays[*]} s), sets completed between them: $runs_total, lost FAT clusters: $lost_total, cuts with the second FAT a write behind: $FATS_DIFFERED; tier: $(($(date +%s) - T0)) s"
finish
