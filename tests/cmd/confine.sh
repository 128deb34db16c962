#!/bin/bash
# Confinement (issue "Hostile input and faults", part 3): hostile image
# trees for --root. A sentinel tree $S outside every image holds files at
# the absolute paths the image's symlinks name, with content that would
# change the result if it were read (mode = on, a kernel without memcg, a
# host command line). Where a case needs one, the image holds a decoy at the
# same path inside it ($root$S/...): an absolute symlink must resolve there.
# After every case the sentinel is compared byte for byte, by mtime and by
# atime (reads show: its atimes are set to 2000 before each case, and the
# file system updates an atime older than the ctime on any read), and its
# listing must not change. One case runs under strace -f -y and checks that
# no system call names or returns a sentinel path.
# Every case ends in exit 0 with a confined result, or exit 3/4 naming the
# path; all run under `timeout 20` (a FIFO must not hang the tool).
. "$TOP/tests/lib.sh"
CFG="$FIX/configs"
K1=6.5.6-300.fc39.x86_64
K2=6.6.8-200.fc39.x86_64
V=6.7.4-200.fc39.x86_64 # the newest: the default kernel
ENTRY="boot/loader/entries/6a9857a393724b7a981ebb5b8495b9ea-$V.conf"
DOTS=../../../../../../../../../../../../../../..

# ---- the sentinel ----
S=$(mkroot)
rm -rf "${S:?}/etc" "${S:?}/boot"
sent() { mkdir -p "$(dirname "$S/$1")" && cat >"$S/$1"; }
printf '[policy]\nmode = on\n' | sent etc/memcg-policy.conf
chmod 0644 "$S/etc/memcg-policy.conf"
sent "boot/config-$V" <"$CFG/no-memcg-x86.config"
sent "lib/modules/$V/config" <"$CFG/no-memcg-x86.config"
printf 'root=/dev/host-sentinel ro\n' | sent etc/kernel/cmdline
printf 'title host\nversion %s\nlinux /vmlinuz-%s\noptions root=/dev/host-sentinel\n' "$V" "$V" | sent boot/loader/entries/x.conf
cp "$S/boot/loader/entries/x.conf" "$S/boot/loader/entries/host-$V.conf"
printf 'host journal: must not change\n' | sent var/lib/memcg-policy/journal.json
printf 'host lock\n' | sent run/memcg-policy.lock
printf 'title host esp\nlinux /vmlinuz\noptions root=/dev/host-esp\n' | sent efi/loader/entries/esp.conf
mkdir -p "$S/lib/modules/$V"
depmod -b "$S" "$V" 2>/dev/null
printf 'layout=bls\n' | sent etc/kernel/install.conf

reset_atimes() { find "$S" -exec touch -a -h -d 2000-01-01 {} +; }
# sentinel_state: type, size, mode, mtime, atime and hash of everything in
# $S; the atimes are put back to 2000 afterwards (hashing reads the files)
sentinel_state() {
	(cd "$S" && find . -printf '%p %y %s %m %T@ %A@\n' | sort)
	(cd "$S" && find . -type f -print0 | sort -z | xargs -0 sha256sum)
	reset_atimes
}
find "$S" -exec touch -h -d 2001-01-01 {} +
find "$S" -exec touch -a -h -d 2000-01-01 {} +
baseline=$(sentinel_state)
untouched() {
	local now
	now=$(sentinel_state)
	if [ "$now" = "$baseline" ]; then
		pass "$1: sentinel untouched (bytes, mtime, atime, listing)"
	else
		fail "$1: the sentinel changed" "$(diff <(echo "$baseline") <(echo "$now") | head -10)"
		reset_atimes
		baseline=$(sentinel_state) # report each change once
	fi
}

# ---- images ----
# image [MODE]: a fedora-like root with three kernels, policy MODE (off)
image() {
	root=$(mkroot)
	cp -a "$FIX/roots/fedora/." "$root/"
	local v
	for v in $K1 $K2 $V; do add_kernel "$root" "$v" "$CFG/debian12-amd64.config"; done
	printf '[policy]\nmode = %s\n' "${1:-off}" | write_policy "$root/etc/memcg-policy.conf"
}
# decoy PATH: the path $S/PATH inside the image (its directory made)
decoy() { mkdir -p "$(dirname "$root$S/$1")" && echo "$root$S/$1"; }
# link PATH TARGET: PATH (inside the image) becomes a symlink to TARGET
link() {
	rm -rf "${root:?}/$1"
	mkdir -p "$(dirname "$root/$1")"
	ln -s "$2" "$root/$1"
}

# Setting up a case may read the sentinel (a glob, a copy): its atimes are
# put back right before the tool runs, so only the tool's reads show.

# run NAME CMD...: the tool on $root under timeout; rc, OUT, ERR set
run() {
	local name=$1
	shift
	local o e
	reset_atimes
	o=$(mktemp)
	e=$(mktemp)
	timeout 20 "$MEMCG_POLICY" --root "$root" "$@" >"$o" 2>"$e"
	rc=$?
	OUT=$(cat "$o")
	ERR=$(cat "$e")
	if [ "$rc" -ne 124 ] && is_json_run "$MEMCG_POLICY" "$@"; then json_check "$name" "$o" "$rc"; fi
	rm -f "$o" "$e"
	if [ "$rc" -ne 124 ]; then pass "$name: ends (no hang)"; else fail "$name: hangs (killed by timeout)"; fi
}

# refused NAME PATH CODES CMD...: exit in CODES ("3" or "3 4"), message names PATH
refused() {
	local name=$1 path=$2 codes=$3
	shift 3
	run "$name" "$@"
	if [[ " $codes " == *" $rc "* ]]; then
		pass "$name: exit $rc"
	else
		fail "$name: exit $rc, expected $codes" "stdout: $OUT" "stderr: $ERR"
	fi
	if grep -qF -- "$path" <<<"$ERR"; then pass "$name: the message names $path"; else fail "$name: no $path in: $ERR"; fi
}

# ok NAME CMD...: exit 0
ok() {
	local name=$1
	shift
	run "$name" "$@"
	if [ "$rc" -eq 0 ]; then pass "$name: exit 0"; else fail "$name: exit $rc, expected 0" "stdout: $OUT" "stderr: $ERR"; fi
}

cases=0
done_case() {
	untouched "$1"
	cases=$((cases + 1))
}

# ==== symlinks out of the root: files ====

# the policy: the decoy says off, the sentinel on
for kind in abs rel; do
	image auto
	rm "$root/etc/memcg-policy.conf"
	printf '[policy]\nmode = off\n' | write_policy "$(decoy etc/memcg-policy.conf)"
	if [ $kind = abs ]; then link etc/memcg-policy.conf "$S/etc/memcg-policy.conf"; else link etc/memcg-policy.conf "$DOTS$S/etc/memcg-policy.conf"; fi
	ok "policy symlink ($kind)" decide
	expect_eq "policy symlink ($kind): the image's file decides" "$(head -n 1 <<<"$OUT")" off
	done_case "policy symlink ($kind)"
done

# a dangling one (nothing at that path in the image): no policy file
image
link etc/memcg-policy.conf "$S/etc/memcg-policy.conf"
ok "policy symlink, dangling in the image" decide --explain
check "policy symlink, dangling: built-in defaults" grep -q 'built-in default' <<<"$OUT"
done_case "policy symlink, dangling"

# the kernel config: the decoy has memcg, the sentinel does not
for kind in abs rel; do
	image
	cp "$root/boot/config-$V" "$(decoy "boot/config-$V")"
	if [ $kind = abs ]; then link "boot/config-$V" "$S/boot/config-$V"; else link "boot/config-$V" "$DOTS$S/boot/config-$V"; fi
	ok "config symlink ($kind)" --json decide
	expect_eq "config symlink ($kind): memcg built (the image's config)" \
		"$(jq -r --arg v "$V" '.kernels[] | select(.version == $v) | .memcg_built' <<<"$OUT")" true
	done_case "config symlink ($kind)"
done

# /etc/kernel/cmdline: edited through the link, inside the image
for kind in abs rel; do
	image
	printf 'root=/dev/image ro\n' >"$(decoy etc/kernel/cmdline)"
	if [ $kind = abs ]; then link etc/kernel/cmdline "$S/etc/kernel/cmdline"; else link etc/kernel/cmdline "$DOTS$S/etc/kernel/cmdline"; fi
	ok "kernel cmdline symlink ($kind): apply" apply
	expect_eq "kernel cmdline symlink ($kind): the image's file is edited" "$(cat "$root$S/etc/kernel/cmdline")" \
		"root=/dev/image ro cgroup_disable=memory"
	check "kernel cmdline symlink ($kind): the link is kept" test -L "$root/etc/kernel/cmdline"
	ok "kernel cmdline symlink ($kind): revert" revert
	expect_eq "kernel cmdline symlink ($kind): reverted" "$(cat "$root$S/etc/kernel/cmdline")" "root=/dev/image ro"
	done_case "kernel cmdline symlink ($kind)"
done

# a BLS entry
image
mv "$root/$ENTRY" "$(decoy boot/loader/entries/x.conf)"
link "$ENTRY" "$S/boot/loader/entries/x.conf"
ok "entry symlink (abs): apply" apply
check "entry symlink (abs): the image's entry is edited" grep -q 'cgroup_disable=memory$' "$root$S/boot/loader/entries/x.conf"
done_case "entry symlink (abs)"

image
rm "$root/$ENTRY"
link "$ENTRY" "$S/boot/loader/entries/x.conf"
ok "entry symlink, dangling in the image: apply" apply
check "entry symlink, dangling: warned and skipped" grep -q 'dangling symbolic link, skipped' <<<"$ERR"
check "entry symlink, dangling: not created" test ! -e "$root$S/boot/loader/entries/x.conf"
done_case "entry symlink, dangling"

# ==== symlinks out of the root: directories ====

for kind in abs rel; do
	image
	mkdir -p "$root$S/boot/loader"
	mv "$root/boot/loader/entries" "$root$S/boot/loader/entries"
	if [ $kind = abs ]; then link boot/loader/entries "$S/boot/loader/entries"; else link boot/loader/entries "$DOTS$S/boot/loader/entries"; fi
	ok "entries directory symlink ($kind): apply" apply
	expect_eq "entries directory symlink ($kind): the image's entries edited" \
		"$(grep -l 'cgroup_disable=memory' "$root$S"/boot/loader/entries/*.conf | wc -l)" 3
	done_case "entries directory symlink ($kind)"
done

# /boot/loader through "..": a relative link with .. in the middle
image
mkdir -p "$root$S/boot"
mv "$root/boot/loader" "$root$S/boot/loader"
link boot/loader "../etc/../$DOTS$S/boot/./loader"
ok "loader symlink with .. components: apply" apply
expect_eq "loader symlink with ..: entries edited inside the image" \
	"$(grep -l 'cgroup_disable=memory' "$root$S"/boot/loader/entries/*.conf | wc -l)" 3
done_case "loader symlink with .."

# /etc/kernel -> the host's directory: written inside the image
image
mkdir -p "$root$S/etc"
mv "$root/etc/kernel" "$root$S/etc/kernel"
link etc/kernel "$S/etc/kernel"
ok "/etc/kernel directory symlink: apply" apply
check "/etc/kernel directory symlink: edited inside the image" grep -q 'cgroup_disable=memory$' "$root$S/etc/kernel/cmdline"
done_case "/etc/kernel directory symlink"

# the journal's directory
image
mkdir -p "$(decoy var/lib/memcg-policy/x)"
link var/lib/memcg-policy "$S/var/lib/memcg-policy"
ok "journal directory symlink: apply" apply
check "journal directory symlink: journal written inside the image" test -s "$root$S/var/lib/memcg-policy/journal.json"
ok "journal directory symlink: revert" revert
check "journal directory symlink: reverted" grep -q 'quiet$' "$root/$ENTRY"
done_case "journal directory symlink"

# the lock's directory, with and without a decoy
image
mkdir -p "$(decoy run/x)"
link run "$S/run"
ok "/run symlink: apply" apply
check "/run symlink: the lock is inside the image" test -f "$root$S/run/memcg-policy.lock"
done_case "/run symlink"

image
link run "$S/run"
refused "/run symlink, dangling: apply" /run/memcg-policy.lock "4" apply
done_case "/run symlink, dangling"

# /lib/modules/VER, where the config is read from when /boot has none: the
# decoy's config has memcg, the sentinel's does not
image
rm -rf "${root:?}/boot/config-$V" "${root:?}/lib/modules/$V"
mkdir -p "$root$S/lib/modules/$V"
cp "$CFG/debian12-amd64.config" "$root$S/lib/modules/$V/config"
link "lib/modules/$V" "$S/lib/modules/$V"
ok "module tree symlink: decide" --json decide
expect_eq "module tree symlink: the config inside the image is read" \
	"$(jq -r --arg v "$V" '.kernels[] | select(.version == $v) | "\(.config) \(.memcg_built)"' <<<"$OUT")" \
	"/lib/modules/$V/config true"
done_case "module tree symlink"

# index files of the module tree that are links out of the root: libkmod
# resolved them itself, on the host (bug found here: regression case)
image
rm "$root/boot/vmlinuz-$V"
for f in "$S/lib/modules/$V"/modules.*; do ln -s "$f" "$root/lib/modules/$V/${f##*/}"; done
run "module index symlinks: decide" --json decide
if [ "$rc" -eq 0 ]; then pass "module index symlinks: exit 0"; else fail "module index symlinks: exit $rc" "$ERR"; fi
# shellcheck disable=SC2016 # $v is jq's
check "module index symlinks: no index inside the image, the kernel is not installed" \
	jq -e --arg v "$V" >/dev/null '[.kernels[].version] | index($v) == null' <<<"$OUT"
done_case "module index symlinks"

# ESPs that are symlinks
image
link efi /
link boot/efi /
ok "ESP symlinks to /: apply" apply
expect_eq "ESP symlinks to /: three entries edited, once" \
	"$(grep -c 'cgroup_disable=memory' "$root"/boot/loader/entries/*.conf | grep -c ':1$')" 3
done_case "ESP symlinks to /"

image
link efi "$S/efi"
link boot/efi "$DOTS$S/efi"
ok "ESP symlinks to the host's ESP: status" --json status
expect_eq "ESP symlinks to the host's ESP: no host entry listed" \
	"$(jq '[.slots[] | select(.path | test("esp.conf"))] | length' <<<"$OUT")" 0
done_case "ESP symlinks to the host's ESP"

image
mkdir -p "$root$S"
mv "$root/boot" "$root$S/boot"
link boot "$S/boot"
ok "/boot symlink to the host's /boot: apply" apply
expect_eq "/boot symlink: the image's entries edited" \
	"$(grep -l 'cgroup_disable=memory' "$root$S"/boot/loader/entries/*.conf | wc -l)" 3
done_case "/boot symlink to the host's /boot"

# symlink loops
image
link etc/kernel/cmdline cmdline
refused "symlink loop (self)" etc/kernel/cmdline "3 4" apply
done_case "symlink loop (self)"
image
link etc/kernel/cmdline /etc/kernel/b
link etc/kernel/b ../kernel/cmdline
refused "symlink loop (two links)" etc/kernel/cmdline "3 4" apply
done_case "symlink loop (two links)"

# a journal whose paths climb out of the root: revert writes only the boot
# files it manages, so such a journal is refused whole (exit 3) and nothing
# is written, outside the image or inside it
for kind in abs dotdot; do
	image
	mkdir -p "$root/var/lib/memcg-policy"
	if [ $kind = abs ]; then jp="$S/etc/kernel/cmdline"; else jp="/../../../../..$S/etc/kernel/cmdline"; fi
	jq -n --arg p "$jp" --rawfile w "$S/etc/kernel/cmdline" \
		'{version: 1, files: [{path: $p, kernel: null, had_original: true, original: "pwned\n",
		  written: $w, added: [], removed: []}]}' >"$root/var/lib/memcg-policy/journal.json"
	printf 'root=/dev/host-sentinel ro\n' >"$(decoy etc/kernel/cmdline)"
	refused "journal path out of the root ($kind): revert" var/lib/memcg-policy/journal.json "3" revert
	check "journal path out of the root ($kind): says it is no boot file" \
		grep -qF "corrupt journal: a path that is no boot file the tool manages" <<<"$ERR"
	expect_eq "journal path out of the root ($kind): the image's file untouched too" \
		"$(cat "$root$S/etc/kernel/cmdline")" "root=/dev/host-sentinel ro"
	done_case "journal path out of the root ($kind)"
done

# ==== FIFOs, devices, directories, huge files where a file is expected ====
# inputs (read): the message names the file
inputs=("etc/memcg-policy.conf" "boot/config-$V" "etc/kernel/cmdline" "$ENTRY" "var/lib/memcg-policy/journal.json")
for p in "${inputs[@]}"; do
	image
	rm -f "$root/$p"
	mkdir -p "$(dirname "$root/$p")"
	mkfifo "$root/$p"
	refused "FIFO at $p" "$p" "3" apply
	done_case "FIFO at $p"

	if [ "$(id -u)" -eq 0 ]; then
		image
		rm -f "$root/$p"
		mkdir -p "$(dirname "$root/$p")"
		mknod "$root/$p" c 1 3
		refused "device at $p" "$p" "3" apply
		done_case "device at $p"
	else
		echo "# not root: no device node at $p"
	fi

	image
	rm -f "$root/$p"
	mkdir -p "$root/$p"
	refused "directory at $p" "$p" "3" apply
	done_case "directory at $p"

	image
	mkdir -p "$(dirname "$root/$p")"
	truncate -s 100G "$root/$p"
	start=$(date +%s)
	refused "100 GiB sparse file at $p" "$p" "3" apply
	if [ $(($(date +%s) - start)) -lt 10 ]; then pass "100 GiB at $p: refused at once"; else fail "100 GiB at $p: slow"; fi
	done_case "100 GiB sparse file at $p"
done

# the lock file itself
whats="fifo dir device"
[ "$(id -u)" -eq 0 ] || { whats="fifo dir"; echo "# not root: no device node as the lock"; }
for what in $whats; do
	image
	mkdir -p "$root/run"
	case $what in
	fifo) mkfifo "$root/run/memcg-policy.lock" ;;
	dir) mkdir "$root/run/memcg-policy.lock" ;;
	device) mknod "$root/run/memcg-policy.lock" c 1 3 ;;
	esac
	refused "lock is a $what" run/memcg-policy.lock "4" apply
	done_case "lock is a $what"
done

# a kernel config that inflates past any sane size (80 MiB of zeros)
image
head -c $((80 << 20)) /dev/zero | gzip -1 >"$root/boot/config-$V"
refused "gzip bomb config" "boot/config-$V" "3" apply
done_case "gzip bomb config"

# GRUB inputs: huge and FIFO
for p in etc/default/grub boot/grub2/grub.cfg; do
	image
	truncate -s 100G "$root/$p"
	run "100 GiB $p: status" status
	if [ "$rc" -eq 0 ] || { [ "$rc" -ge 3 ] && [ "$rc" -le 4 ] && grep -qF "$p" <<<"$ERR"; }; then
		pass "100 GiB $p: exit $rc (confined result or an error naming it)"
	else
		fail "100 GiB $p: exit $rc" "$ERR"
	fi
	done_case "100 GiB $p"
	image
	rm "$root/$p"
	mkfifo "$root/$p"
	run "FIFO $p: status" status
	if [ "$rc" -eq 0 ] || { [ "$rc" -ge 3 ] && [ "$rc" -le 4 ] && grep -qF "$p" <<<"$ERR"; }; then
		pass "FIFO $p: exit $rc (confined result or an error naming it)"
	else
		fail "FIFO $p: exit $rc" "$ERR"
	fi
	done_case "FIFO $p"
done

# ==== unreadable files ====
# Root reads any file whatever its mode; so as root the tool runs as uid
# 65534 (setpriv) on a tree made readable to it, with one file chmod 000 at
# a time (the policy stays owned by root: allowed). Not as root, it just
# runs.
as_other=()
[ "$(id -u)" -eq 0 ] && as_other=(setpriv --reuid=65534 --regid=65534 --clear-groups)
for p in "boot/config-$V" "etc/kernel/cmdline" "$ENTRY"; do
	image
	chmod 0755 "$root"
	chmod 0000 "$root/$p"
	o=$(mktemp)
	e=$(mktemp)
	timeout 20 "${as_other[@]}" "$MEMCG_POLICY" --root "$root" check >"$o" 2>"$e"
	rc=$?
	ERR=$(cat "$e")
	rm -f "$o" "$e"
	if [ "$rc" -eq 4 ] && grep -qF "$p" <<<"$ERR" && grep -qi 'permission denied' <<<"$ERR"; then
		pass "unreadable $p: exit 4, names it: permission denied"
	else
		fail "unreadable $p: exit $rc" "$ERR"
	fi
	done_case "unreadable $p"
done

# ==== everything at once, under strace ====
if command -v strace >/dev/null; then
	image
	rm "$root/etc/memcg-policy.conf"
	printf '[policy]\nmode = off\n' | write_policy "$(decoy etc/memcg-policy.conf)"
	link etc/memcg-policy.conf "$S/etc/memcg-policy.conf"
	printf 'root=/dev/image ro\n' >"$(decoy etc/kernel/cmdline)"
	link etc/kernel/cmdline "$DOTS$S/etc/kernel/cmdline"
	link etc/kernel/install.conf "$S/etc/kernel/install.conf"
	mv "$root/$ENTRY" "$(decoy boot/loader/entries/x.conf)"
	link "$ENTRY" "$S/boot/loader/entries/x.conf"
	link "boot/loader/entries/host-$V.conf" "$S/boot/loader/entries/host-$V.conf"
	mkdir -p "$(decoy var/lib/memcg-policy/x)" "$(decoy run/x)"
	link var/lib/memcg-policy "$S/var/lib/memcg-policy"
	link run "$DOTS$S/run"
	link efi "$S/efi"
	rm "$root/boot/vmlinuz-$K2"
	for f in "$S/lib/modules/$V"/modules.*; do ln -s "$f" "$root/lib/modules/$K2/${f##*/}"; done
	log=$(mktemp)
	for cmd in status apply check revert; do
		reset_atimes
		timeout 60 strace -f -y -qq -e trace=%file,openat2,%desc -o "$log.$cmd" "$MEMCG_POLICY" --root "$root" $cmd >/dev/null 2>&1
		rc=$?
		if [ "$rc" -le 1 ]; then pass "strace: $cmd exit $rc"; else fail "strace: $cmd exit $rc"; fi
		# readlinkat returns the text of the image's links: not a path used
		hits=$(grep -v '^[0-9]* *readlinkat(' "$log.$cmd" | grep -cF -e "\"$S" -e "<$S")
		expect_eq "strace: $cmd names no sentinel path in any system call" "$hits" 0
		[ "$hits" -eq 0 ] || grep -F -e "\"$S" -e "<$S" "$log.$cmd" | head -5 | sed 's/^/    /'
		rm -f "$log.$cmd"
		if [ "$cmd" = apply ]; then
			check "strace: apply edited the image's entry" grep -q 'cgroup_disable=memory$' "$root$S/boot/loader/entries/x.conf"
			check "strace: apply edited the image's /etc/kernel/cmdline" grep -q 'cgroup_disable=memory$' "$root$S/etc/kernel/cmdline"
		fi
	done
	rm -f "$log"
	done_case "everything at once (strace)"
else
	echo "# strace not installed: the strace case did not run"
fi

# ==== no program of the image runs without --regenerate ====
# The image holds the programs a run could be tempted to start (its
# update-grub, grub-mkconfig, grub2-mkconfig, kernel-install, sh), its
# policy asks for regenerate = yes, and a changed decision leaves its GRUB
# menu stale. Under strace -f: no execve of a path inside the image and no
# chroot(2) or pivot_root(2) for every command; with apply --regenerate
# (the one documented exception) the image's update-grub does run.
if command -v strace >/dev/null; then
	image
	for p in usr/sbin/update-grub usr/sbin/grub-mkconfig usr/sbin/grub2-mkconfig usr/bin/kernel-install \
		usr/sbin/memcg-policy; do
		mkdir -p "$(dirname "$root/$p")"
		printf '#!/bin/sh\necho ran >>/ran.log\n' >"$root/$p"
		chmod 0755 "$root/$p"
	done
	# the package's drop-in, which the marked line of this GRUB (no
	# grub.d) sources; a shell that runs inside the image (static
	# busybox), and the mount points an image builder provides, so that
	# --regenerate can work
	mkdir -p "$root/usr/share/memcg-policy" "$root/bin" "$root/dev" "$root/proc" "$root/sys"
	cp "$TOP/grub.d/99-memcg-policy.cfg" "$root/usr/share/memcg-policy/"
	cp /bin/busybox "$root/bin/sh"
	printf '[policy]\nmode = off\n[bootloaders]\nregenerate = yes\n' | write_policy "$root/etc/memcg-policy.conf"
	log=$(mktemp)
	# image_runs LOG: the execve/chroot lines that are the image's
	image_runs() {
		grep -E '^[0-9]+ +(execve|execveat)\("'"$root"'|^[0-9]+ +(chroot|pivot_root)\(' "$1"
	}
	for cmd in status check decide "decide --explain" "apply --dry-run" "apply --hook" "apply --no-regenerate" \
		apply "set on --no-apply" "set off" revert "grub-cmdline root=/dev/sda1" "check --monitoring"; do
		# shellcheck disable=SC2086 # cmd holds the command and its options
		timeout 60 strace -f -qq -e trace=execve,execveat,chroot,pivot_root -o "$log" \
			"$MEMCG_POLICY" --root "$root" $cmd >/dev/null 2>&1
		runs=$(image_runs "$log")
		expect_eq "no image program: $cmd" "$runs" ""
	done
	check "no image program: nothing of the image logged a run" test ! -e "$root/ran.log"
	# a GRUB whose grubenv holds kernelopts (RHEL 8): the image's
	# grub2-editenv is there, the tool writes grubenv itself
	img1=$root
	root=$(mkroot)
	cp -a "$FIX/grub/rhel8/." "$root/"
	for v in 4.18.0-348.el8.x86_64 4.18.0-513.5.1.el8_9.x86_64; do add_kernel "$root" "$v" "$CFG/debian12-amd64.config"; done
	for p in usr/bin/grub2-editenv usr/bin/grub-editenv usr/sbin/grub2-mkconfig; do
		mkdir -p "$(dirname "$root/$p")"
		printf '#!/bin/sh\necho ran >>/ran.log\n' >"$root/$p"
		chmod 0755 "$root/$p"
	done
	mkdir -p "$root/bin"
	cp /bin/busybox "$root/bin/sh"
	printf '[policy]\nmode = off\n' | write_policy "$root/etc/memcg-policy.conf"
	for cmd in "apply --dry-run" apply check "apply --hook" revert; do
		# shellcheck disable=SC2086 # cmd holds the command and its options
		timeout 60 strace -f -qq -e trace=execve,execveat,chroot,pivot_root -o "$log" \
			"$MEMCG_POLICY" --root "$root" $cmd >/dev/null 2>&1
		expect_eq "no image program (grubenv with kernelopts): $cmd" "$(image_runs "$log")" ""
		if [ "$cmd" = apply ]; then
			check "no image program (grubenv with kernelopts): apply changed kernelopts" \
				grep -q 'kernelopts=.*cgroup_disable=memory' "$root/boot/grub2/grubenv"
		fi
	done
	check "no image program (grubenv with kernelopts): nothing of the image logged a run" test ! -e "$root/ran.log"
	root=$img1
	# the control: --regenerate runs the image's update-grub (chrooted)
	printf '[policy]\nmode = on\n' | write_policy "$root/etc/memcg-policy.conf"
	timeout 60 strace -f -qq -e trace=execve,execveat,chroot,pivot_root -o "$log" \
		"$MEMCG_POLICY" --root "$root" apply --regenerate >/dev/null 2>&1
	if grep -qE '^[0-9]+ +(chroot|pivot_root)\(' "$log"; then
		pass "no image program: the check sees apply --regenerate enter the image"
	else
		fail "no image program: apply --regenerate did not enter the image (the check would see nothing)" "$(head -20 "$log")"
	fi
	rm -f "$log"
	done_case "no image program without --regenerate (strace)"
fi

echo "# hostile trees: $cases"
if [ "$cases" -ge 40 ]; then pass "hostile trees: $cases cases"; else fail "hostile trees: only $cases cases"; fi
