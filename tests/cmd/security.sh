#!/bin/bash
# --root as a security boundary: every file the tool reads from an image is
# checked on an O_PATH descriptor before it is opened (a FIFO or device is
# never opened, so nothing blocks and no driver is reached), and with --root
# a file on a pseudo file system of the running kernel (proc, sysfs,
# devtmpfs...) is refused wherever it is read. Each case runs on a fresh
# fixture root under `timeout 20` and checks the exit code, that the message
# names the path, and that the tree is unchanged (type, mode and hash of
# every file; the lock file and run/ left out).
. "$TOP/tests/lib.sh"
CFG="$FIX/configs"
K2=6.6.8-200.fc39.x86_64
V=6.7.4-200.fc39.x86_64 # the newest: the default kernel
ENTRY="boot/loader/entries/6a9857a393724b7a981ebb5b8495b9ea-$V.conf"

image() {
	root=$(mkroot)
	cp -a "$FIX/roots/fedora/." "$root/"
	local v
	for v in 6.5.6-300.fc39.x86_64 $K2 $V; do add_kernel "$root" "$v" "$CFG/debian12-amd64.config"; done
	printf '[policy]\nmode = off\n' | write_policy "$root/etc/memcg-policy.conf"
}

tree_hash() {
	(cd "$1" && find . -path ./run -prune -o -path ./proc -prune -o -path ./sys -prune -o -path ./dev -prune \
		-o -printf '%p %y %m\n' | sort
	 cd "$1" && find . -path ./run -prune -o -path ./proc -prune -o -path ./sys -prune -o -path ./dev -prune \
		-o -type f -print0 | sort -z | xargs -0 -r sha256sum) | sha256sum | cut -c1-16
}

# run NAME CMD...: CMD (a prefix such as "ns" and the tool's arguments
# after --root) on $root; rc, OUT, ERR set; the tree compared
run() {
	local name=$1
	shift
	local pre=()
	while [ "$1" != -- ]; do pre+=("$1"); shift; done
	shift
	local before after o e
	before=$(tree_hash "$root")
	o=$(mktemp)
	e=$(mktemp)
	timeout 20 "${pre[@]}" "$MEMCG_POLICY" --root "$root" "$@" >"$o" 2>"$e"
	rc=$?
	OUT=$(cat "$o")
	ERR=$(cat "$e")
	rm -f "$o" "$e"
	after=$(tree_hash "$root")
	if [ "$rc" -ne 124 ]; then pass "$name: ends (no hang)"; else fail "$name: hangs (killed by timeout)"; fi
	expect_eq "$name: tree unchanged" "$after" "$before"
}

# refused NAME CODE PATH TEXT PREFIX... -- CMD...
refused() {
	local name=$1 code=$2 path=$3 text=$4
	shift 4
	run "$name" "$@"
	expect_eq "$name: exit $code" "$rc" "$code"
	if grep -qF "memcg-policy: $root/$path: " <<<"$ERR" && grep -qF "$text" <<<"$ERR"; then
		pass "$name: names $path: $text"
	else
		fail "$name: message" "want: $root/$path: ...$text" "stderr: $ERR"
	fi
}

# ==== FIFOs and devices where a file is read ====
# (the places not covered by tests/cmd/confine.sh: drop-ins, every place a
# kernel config is looked for, the vendor policy)
places=("etc/memcg-policy.d/50-x.conf" "usr/lib/memcg-policy.d/50-x.conf" "lib/modules/$V/config"
	"usr/lib/modules/$V/config")
for p in "${places[@]}"; do
	for what in fifo device; do
		if [ $what = device ] && [ "$(id -u)" -ne 0 ]; then
			echo "# not root: no device node at $p"
			continue
		fi
		image
		case $p in *"/$V/config") rm "$root/boot/config-$V" ;; esac
		mkdir -p "$(dirname "$root/$p")"
		rm -f "$root/$p"
		# a tty: opened, it would become the controlling terminal
		if [ $what = fifo ]; then mkfifo "$root/$p"; else mknod "$root/$p" c 5 0; fi
		refused "$what at $p" 3 "$p" "not a regular file" -- apply
	done
done

# The index files libkmod opens (modules.*.bin): a FIFO among them would
# block libkmod's own open. The kernel has only its module tree (no
# boot/vmlinuz), so the tree is looked at; it still counts when its
# modules.dep.bin is a regular file, and the run ends.
if command -v depmod >/dev/null; then
	for idx in modules.dep.bin modules.alias.bin modules.symbols.bin modules.builtin.bin modules.builtin.alias.bin; do
		image
		rm "$root/boot/vmlinuz-$K2"
		depmod -b "$root" "$K2" 2>/dev/null
		rm -f "$root/lib/modules/$K2/$idx"
		mkfifo "$root/lib/modules/$K2/$idx"
		run "FIFO as module index $idx" -- --json status
		expect_eq "FIFO as module index $idx: exit 0" "$rc" 0
		want=true
		[ $idx = modules.dep.bin ] && want=false
		expect_eq "FIFO as module index $idx: $K2 installed: $want" \
			"$(jq --arg k "$K2" '[.kernels[].version] | index($k) != null' <<<"$OUT")" "$want"
	done
	# libkmod opens the index files by name: a file swapped in after the
	# tool's checks (a FIFO, a link out of the root) would reach it. With
	# --root the tool reads the index header itself, through the root.
	image
	rm "$root/boot/vmlinuz-$K2"
	depmod -b "$root" "$K2" 2>/dev/null
	if command -v strace >/dev/null; then
		log=$(mktemp)
		timeout 60 strace -f -qq -e trace=open,openat,openat2 -o "$log" "$MEMCG_POLICY" --root "$root" --json status >"$log.out" 2>/dev/null
		expect_eq "module tree with --root: $K2 installed (its index header read)" \
			"$(jq --arg k "$K2" '[.kernels[].version] | index($k) != null' <"$log.out")" true
		expect_eq "module tree with --root: no index file opened by name (libkmod not used)" \
			"$(grep -c '/proc/self/fd/[0-9]*/modules\.' "$log")" 0
		rm -f "$log" "$log.out"
	else
		fail "strace is not installed"
	fi
	printf 'not an index, but a regular file\n' >"$root/lib/modules/$K2/modules.dep.bin"
	run "module tree whose modules.dep.bin is no index" -- --json status
	expect_eq "module tree whose modules.dep.bin is no index: $K2 not installed" \
		"$(jq --arg k "$K2" '[.kernels[].version] | index($k) != null' <<<"$OUT")" false
else
	fail "depmod (kmod) is not installed"
fi

# ==== pseudo file systems of the running kernel, reached from a root ====
# As image builders do, the host's /proc, /sys and /dev are mounted in the
# image (in a private mount namespace); the image's files point at them.
if [ "$(id -u)" -eq 0 ] && unshare -m true 2>/dev/null; then
	# shellcheck disable=SC2016 # the inner shell's $0 and $@
	ns=(unshare -m sh -c 'for d in proc sys dev; do mkdir -p "$0/$d" && mount --rbind "/$d" "$0/$d" || exit 99; done; exec "$@"')
	# pseudo NAME PATH TARGET CMD...: PATH (in the image) a symlink to TARGET
	pseudo() {
		local name=$1 path=$2 target=$3
		shift 3
		image
		rm -rf "${root:?}/$path"
		mkdir -p "$(dirname "$root/$path")"
		ln -s "$target" "$root/$path"
		refused "$name" 3 "$path" "pseudo file system" "${ns[@]:0:5}" "$root" -- "$@"
	}
	pseudo "proc: /etc/kernel/cmdline -> /proc/cmdline" etc/kernel/cmdline /proc/cmdline apply
	pseudo "proc: kernel config -> /proc/self/environ" "boot/config-$V" /proc/self/environ apply
	pseudo "proc: policy -> /proc/self/environ" etc/memcg-policy.conf /proc/self/environ decide
	pseudo "sysfs: policy drop-in directory -> /sys/kernel" etc/memcg-policy.d /sys/kernel decide
	pseudo "sysfs: BLS entry -> a sysfs file" "$ENTRY" /sys/kernel/uevent_seqnum apply
	pseudo "devtmpfs: kernel config -> /dev/zero" "boot/config-$V" /dev/zero apply
	pseudo "devtmpfs: policy -> /dev/null" etc/memcg-policy.conf /dev/null decide
	pseudo "proc: journal -> /proc/self/mounts" var/lib/memcg-policy/journal.json /proc/self/mounts revert
	# a pseudo file system mounted over a directory of the image itself
	image
	mkdir -p "$root/etc/memcg-policy.d"
	# shellcheck disable=SC2016 # the inner shell's $0 and $@
	refused "proc mounted on the drop-in directory" 3 etc/memcg-policy.d "pseudo file system" \
		unshare -m sh -c 'mount -t proc proc "$0/etc/memcg-policy.d" && exec "$@"' "$root" -- decide
	# the live system reads /proc as always (no --root): tests/cmd/live.sh
else
	echo "# not root or no mount namespaces: no pseudo file system in an image"
fi

# ==== the policy: checked before any write, directories included ====
P=etc/memcg-policy.conf
# every directory of the search path, writable by others or by the group:
# every command refuses the policy (exit 3) and names the directory
for d in "" etc etc/memcg-policy.d usr usr/lib usr/lib/memcg-policy.d; do
	for bits in o+w g+w; do
		image
		mkdir -p "$root/$d"
		chmod "$bits" "$root/$d"
		refused "directory /$d $bits" 3 "$d" "unsafe policy directory: writable by" -- decide
		[ -n "$d" ] || continue
		refused "directory /$d $bits: set" 3 "$d" "unsafe policy directory: writable by" -- set on
	done
done
# a sticky world-writable drop-in directory is still refused (anyone
# could add a file there); owned by another user (as root only)
image
mkdir -p "$root/etc/memcg-policy.d"
chmod 1777 "$root/etc/memcg-policy.d"
refused "sticky drop-in directory" 3 etc/memcg-policy.d "unsafe policy directory: writable by others" -- decide
if [ "$(id -u)" -eq 0 ]; then
	image
	mkdir -p "$root/usr/lib/memcg-policy.d"
	chown 12345 "$root/usr/lib/memcg-policy.d"
	refused "drop-in directory of another owner" 3 usr/lib/memcg-policy.d "owned by uid 12345" -- decide
	image
	chown 12345 "$root/$P"
	refused "set: policy of another owner" 3 "$P" "unsafe policy file: owned by uid 12345" -- set on
fi
# set checks the file before it writes: an unsafe policy stays as it was
for bits in 0664 0666; do
	image
	chmod $bits "$root/$P"
	refused "set: policy file mode $bits" 3 "$P" "unsafe policy file: writable by" -- set on
done
image
mkdir -p "$root/etc/memcg-policy.d"
printf '[policy]\nmode = sometimes\n' | write_policy "$root/etc/memcg-policy.d/50-x.conf"
refused "set: a broken drop-in" 3 etc/memcg-policy.d/50-x.conf:2 "bad value 'sometimes'" -- set on

# --config in a sticky directory such as /tmp is accepted (nobody else can
# replace the file); --config given as a symbolic link: the link's target is
# the file read and the file written, the link stays, and set says so
image
cfgdir=$(mkroot)/sticky
mkdir "$cfgdir"
chmod 1777 "$cfgdir"
printf '[policy]\nmode = off\n' | write_policy "$cfgdir/real.conf"
ln -s real.conf "$cfgdir/link.conf"
run "set --config LINK" -- --config "$cfgdir/link.conf" set on --no-apply
expect_eq "set --config LINK: exit 0" "$rc" 0
check "set --config LINK: the link is still a link" test -L "$cfgdir/link.conf"
expect_eq "set --config LINK: the target has mode = on" "$(grep '^mode' "$cfgdir/real.conf")" "mode = on"
if grep -qF "$cfgdir/link.conf -> $cfgdir/real.conf: mode = on (written at the link's target)" <<<"$OUT"; then
	pass "set --config LINK: says it wrote the target"
else
	fail "set --config LINK: says it wrote the target" "stdout: $OUT"
fi
expect_eq "set --config LINK: nothing else in the directory" "$(find "$cfgdir" -mindepth 1 -printf "%f " | tr " " "\n" | sort | tr "\n" " ")" "link.conf real.conf "
ln -s missing.conf "$cfgdir/dangling.conf"
run "set --config DANGLING" -- --config "$cfgdir/dangling.conf" set on --no-apply
expect_eq "set --config DANGLING: exit 3" "$rc" 3
check "set --config DANGLING: no file created" test ! -e "$cfgdir/missing.conf"
check "set --config DANGLING: says why" grep -qF "a symbolic link to a missing file" <<<"$ERR"

# set whose mode a drop-in or a [kernel] section overrides: it records the
# mode, names what overrides it, exits 1 and applies nothing (the admin's
# own cgroup_disable=memory stays)
boot_hash() { (cd "$root" && find boot etc/kernel -type f -print0 | sort -z | xargs -0 sha256sum) | sha256sum; }
for how in drop-in kernel-section; do
	image
	sed -i 's/$/ cgroup_disable=memory/' "$root/etc/kernel/cmdline"
	sed -i 's/^options .*/& cgroup_disable=memory/' "$root"/boot/loader/entries/*.conf
	mkdir -p "$root/etc/memcg-policy.d"
	if [ $how = drop-in ]; then
		printf '[policy]\nmode = on\n' | write_policy "$root/etc/memcg-policy.d/50-on.conf"
		where="etc/memcg-policy.d/50-on.conf:2"
	else
		printf '[policy]\nmode = on\n[kernel 6.*]\nmode = on\n' | write_policy "$root/$P"
		where="$P:4"
	fi
	before=$(boot_hash)
	o=$(mktemp)
	e=$(mktemp)
	timeout 20 "$MEMCG_POLICY" --root "$root" set off >"$o" 2>"$e"
	rc=$?
	ERR=$(cat "$e")
	rm -f "$o" "$e"
	expect_eq "set off overridden ($how): exit 1" "$rc" 1
	expect_eq "set off overridden ($how): mode = off recorded" "$(grep -c '^mode = off' "$root/$P")" 1
	if grep -qF "warning: mode = off is recorded, but $root/$where sets mode = on for $V" <<<"$ERR" &&
		grep -qF "nothing applied" <<<"$ERR"; then
		pass "set off overridden ($how): names $where, says nothing was applied"
	else
		fail "set off overridden ($how): message" "stderr: $ERR"
	fi
	expect_eq "set off overridden ($how): boot files unchanged" "$(boot_hash)" "$before"
	json=$(timeout 20 "$MEMCG_POLICY" --root "$root" --json set off 2>/dev/null)
	expect_eq "set off overridden ($how): --json exit 1" "$(jq -r .exit_code <<<"$json" 2>/dev/null)" 1
done

# ==== the journal: trusted only when only root could have written it ====
J=var/lib/memcg-policy/journal.json
# image_applied: an image after one apply (its journal holds records)
image_applied() {
	image
	timeout 20 "$MEMCG_POLICY" --root "$root" apply >/dev/null 2>&1
}
image_applied
expect_eq "journal: written 0600" "$(stat -c %a "$root/$J")" 600
image_applied
chmod 0644 "$root/$J"
printf '[policy]\nmode = on\n' | write_policy "$root/$P"
timeout 20 "$MEMCG_POLICY" --root "$root" apply >/dev/null 2>&1
expect_eq "journal: an older 0644 journal becomes 0600 when written" "$(stat -c %a "$root/$J")" 600
for bits in 0660 0606 0620 0666; do
	for cmd in apply revert; do
		image_applied
		printf '[policy]\nmode = on\n' | write_policy "$root/$P"
		chmod $bits "$root/$J"
		refused "journal mode $bits: $cmd" 3 "$J" "unsafe journal: writable by" -- $cmd
	done
done
if [ "$(id -u)" -eq 0 ]; then
	for cmd in apply revert; do
		image_applied
		printf '[policy]\nmode = on\n' | write_policy "$root/$P"
		chown 12345 "$root/$J"
		refused "journal of another owner: $cmd" 3 "$J" "unsafe journal: owned by uid 12345" -- $cmd
	done
fi
# a journal naming a file that is no boot slot: revert writes nothing
for victim in etc/passwd etc/shadow usr/bin/true "boot/loader/entries/../../etc/passwd" var/lib/memcg-policy/grub.tokens.x; do
	image
	mkdir -p "$root/etc" "$root/usr/bin" "$root/${J%/*}"
	printf 'root:x:0:0::/root:/bin/sh\n' >"$root/etc/passwd"
	cp "$root/etc/passwd" "$root/etc/shadow"
	cp "$root/etc/passwd" "$root/usr/bin/true"
	jq -n --arg p "/$victim" '{version: 1, files: [{path: $p, kernel: null, had_original: true,
		original: "evil::0:0::/:/bin/sh\n", written: "root:x:0:0::/root:/bin/sh\n", added: [], removed: []}]}' >"$root/$J"
	chmod 0600 "$root/$J"
	refused "journal names /$victim: revert" 3 "$J" "a path that is no boot file the tool manages" -- revert
done

# records of files that are gone are pruned at the next apply
image_applied
n0=$(jq '.files | length' "$root/$J")
gone=$(cd "$root" && find boot/loader/entries -name '*6.5.6*' | head -1)
rm "$root/$gone"
sed -i 's/ cgroup_disable=memory//' "$root/$ENTRY" # drift: apply has work to do
timeout 20 "$MEMCG_POLICY" --root "$root" apply >/dev/null 2>&1
expect_eq "journal: the gone entry's record is pruned" "$(jq --arg p "/$gone" '[.files[] | select(.path == $p)] | length' "$root/$J")" 0
expect_eq "journal: the other records stay" "$(jq '.files | length' "$root/$J")" $((n0 - 1))
missing=0
for p in $(jq -r '.files[].path' "$root/$J"); do [ -e "$root$p" ] || missing=$((missing + 1)); done
expect_eq "journal: every record names a file that is there" "$missing" 0

# write-ahead: the journal is durable (renamed, its directory synced)
# before any boot file is renamed, and revert forgets a record only after
# what it put back is durable; here the journal is on a file system of its
# own (a tmpfs), the boot files on another
if command -v strace >/dev/null && [ "$(id -u)" -eq 0 ] && unshare -m true 2>/dev/null; then
	image
	mkdir -p "$root/${J%/*}"
	log=$(mktemp)
	# shellcheck disable=SC2016 # the inner shell's $0 and $@
	onfs=(unshare -m sh -c 'mount -t tmpfs -o mode=0755 tmpfs "$0/var/lib/memcg-policy" && exec "$@"' "$root")
	# order LOG: one letter per event: J journal renamed or unlinked, S
	# the journal's directory synced, B a boot file renamed, D a boot
	# file's directory synced
	order() {
		awk -v jd="<$root/var/lib/memcg-policy>" '
			/^[0-9]+ +(renameat2?|rename|unlinkat)\(/ { print (index($0, jd) ? "J" : "B"); next }
			/^[0-9]+ +fsync\(/ { print (index($0, jd) ? "S" : "D") }' "$1" | tr -d '\n'
	}
	# both runs in one mount namespace (the tmpfs lives as long as it)
	# shellcheck disable=SC2016 # the inner shell's variables
	"${onfs[@]}" sh -c 'for c in apply revert; do
		strace -f -qq -y -e trace=rename,renameat,renameat2,unlinkat,fsync -o "$0.$c" "$1" --root "$2" $c >/dev/null 2>&1
	done' "$log" "$MEMCG_POLICY" "$root"
	seq=$(order "$log.apply")
	if [[ $seq =~ ^JS[BD]*$ ]] && [[ $seq == *B* ]]; then
		pass "write-ahead: apply makes the journal durable before the first boot file ($seq)"
	else
		fail "write-ahead: apply: journal first" "events: $seq (J journal renamed, S its directory synced, B boot file renamed, D its directory synced)"
	fi
	seq=$(order "$log.revert")
	if [[ $seq =~ ^[BD]*D+JS$ ]] && [[ $seq == *B* ]]; then
		pass "write-ahead: revert forgets the records after the files are back ($seq)"
	else
		fail "write-ahead: revert: journal last" "events: $seq"
	fi
	rm -f "$log" "$log.apply" "$log.revert"
else
	echo "# no strace, not root or no mount namespaces: no write-ahead order check"
fi

# ==== rewrites keep extended attributes; no write goes through a hard link ====
if command -v setfacl >/dev/null && command -v getfattr >/dev/null; then
	image
	files=(etc/kernel/cmdline "$ENTRY")
	for f in "${files[@]}"; do
		setfacl -m u:4321:rw,g::r "$root/$f"
		setfattr -n user.memcg-test -v kept "$root/$f"
		[ "$(id -u)" -ne 0 ] || setfattr -n security.memcg-test -v label "$root/$f"
	done
	declare -A acl_before xa_before
	for f in "${files[@]}"; do
		acl_before[$f]=$(getfacl -cp "$root/$f")
		xa_before[$f]=$(getfattr -d -m '^(user|security)\.memcg' --absolute-names "$root/$f" | tail -n +2)
	done
	run "xattrs: apply" -- apply >/dev/null
	for f in "${files[@]}"; do
		check "xattrs: $f was rewritten" grep -q cgroup_disable=memory "$root/$f"
		expect_eq "xattrs: $f keeps its ACL" "$(getfacl -cp "$root/$f")" "${acl_before[$f]}"
		expect_eq "xattrs: $f keeps user.* and security.*" \
			"$(getfattr -d -m '^(user|security)\.memcg' --absolute-names "$root/$f" | tail -n +2)" "${xa_before[$f]}"
	done
else
	fail "xattrs: setfacl/getfattr (packages acl, attr) are missing"
fi
# every boot file the tool writes, hard-linked to a file outside the root
# (an image cloned with cp -al): the outside file keeps its bytes
for f in etc/kernel/cmdline "$ENTRY" etc/default/grub; do
	image
	out=$(mkroot)/outside
	cp "$root/$f" "$out"
	ln -f "$out" "$root/$f"
	before=$(sha256sum <"$out")
	timeout 20 "$MEMCG_POLICY" --root "$root" apply >/dev/null 2>&1
	expect_eq "hard link out of the root at $f: the outside file is untouched" "$(sha256sum <"$out")" "$before"
done

# ==== names from a root reach the terminal escaped ====
image
evil=$'6a9857a393724b7a981ebb5b8495b9ea-x\e[2J\nchanged fake-entry +x.conf'
sed 's/^version .*/version 6.5.6-300.fc39.x86_64/' "$root/$ENTRY" >"$root/boot/loader/entries/$evil"
for cmd in status check "apply --dry-run" apply; do
	# shellcheck disable=SC2086 # cmd holds the command and its option
	out=$(timeout 20 "$MEMCG_POLICY" --root "$root" $cmd 2>&1)
	expect_eq "escaped names: $cmd: no escape byte in the output" "$(grep -c $'\e' <<<"$out")" 0
	expect_eq "escaped names: $cmd: no forged line" "$(grep -c '^changed fake-entry' <<<"$out")" 0
	check "escaped names: $cmd: the name is shown escaped" grep -qF '\x1b[2J\nchanged fake-entry +x.conf' <<<"$out"
done
json=$(timeout 20 "$MEMCG_POLICY" --root "$root" --json status 2>/dev/null)
expect_eq "escaped names: --json has the name as it is" \
	"$(jq --arg p "/boot/loader/entries/$evil" '[.slots[] | select(.path == $p)] | length' <<<"$json")" 1
# a name that is no UTF-8 (Latin-1 bytes, a lone continuation byte):
# --json is still UTF-8 JSON, each such byte written as \udcHH, which a
# reader turns back into the byte (Python's surrogateescape)
image
raw=$'6a9857a393724b7a981ebb5b8495b9ea-caf\xe9-\x80.conf'
sed 's/^version .*/version 6.5.6-300.fc39.x86_64/' "$root/$ENTRY" >"$root/boot/loader/entries/$raw"
expect_exit "non-UTF-8 name: status --json" 0 "$MEMCG_POLICY" --root "$root" --json status
got=$(printf '%s' "$OUT" | python3 -c '
import json, sys
raw = sys.stdin.buffer.read()
raw.decode("utf-8")  # strict: the text is UTF-8
o = json.loads(raw)
for s in o["slots"]:
    p = s["path"].encode("utf-8", "surrogateescape")
    if b"-caf" in p:
        sys.stdout.buffer.write(p + b"\n")
' 2>&1)
expect_eq "non-UTF-8 name: --json is UTF-8 and gives the name's bytes back" "$got" "/boot/loader/entries/$raw"
# and in messages: a FIFO under such a name
image
rm "$root/$ENTRY"
mkfifo "$root/boot/loader/entries/$evil"
err=$(timeout 20 "$MEMCG_POLICY" --root "$root" apply 2>&1 >/dev/null)
expect_eq "escaped names: message: no escape byte" "$(grep -c $'\e' <<<"$err")" 0
check "escaped names: message names it escaped" grep -qF '\x1b[2J\nchanged fake-entry +x.conf: not a regular file' <<<"$err"

# ==== contents and unit names from a root reach the terminal escaped ====
# an entry whose options set the terminal's title (OSC) and clear it (CSI),
# a unit whose name clears the screen: the diff of apply --dry-run and
# status's "needs memcg" lines show them escaped
image
sed -i 's/^options .*/& x=\x1b]0;owned\x07y=\x1b[2J/' "$root/$ENTRY"
check "escaped contents: the entry has the escape bytes" grep -q $'\e' "$root/$ENTRY"
out=$(timeout 20 "$MEMCG_POLICY" --root "$root" apply --dry-run 2>&1)
check "escaped contents: apply --dry-run shows the diff" grep -q '^+options ' <<<"$out"
expect_eq "escaped contents: apply --dry-run: no escape or bell byte" "$(grep -c $'[\e\a]' <<<"$out")" 0
check "escaped contents: apply --dry-run: the bytes shown escaped" grep -qF 'x=\x1b]0;owned\ay=\x1b[2J' <<<"$out"
image
printf '[policy]\nmode = auto\n[auto]\notherwise = off\n' | write_policy "$root/etc/memcg-policy.conf"
mkdir -p "$root/etc/systemd/system"
printf '[Service]\nMemoryMax=1G\n' >"$root/etc/systemd/system/"$'evil\e[2J.service'
out=$(timeout 20 "$MEMCG_POLICY" --root "$root" status 2>&1)
check "escaped unit names: status names the unit" grep -qF 'evil\x1b[2J.service' <<<"$out"
expect_eq "escaped unit names: status: no escape byte" "$(grep -c $'\e' <<<"$out")" 0

# ==== leftover temp files: never unlinked while they share data ====
# On FAT a power cut in the middle of a rename can leave the temp file's and
# the target's directory entries pointing at one cluster chain; removing
# the temp file then frees what the target uses. The state is made here on
# XFS with a reflink (two names, one extent; the host has no vfat driver):
# the sharing leftover is kept, with a warning; an independent one goes.
if [ "$(id -u)" -eq 0 ] && command -v mkfs.xfs >/dev/null && unshare -m true 2>/dev/null; then
	image
	img=$(mkroot)/xfs.img
	truncate -s 320M "$img"
	mkfs.xfs -q -m reflink=1 "$img"
	ed=boot/loader/entries
	name=${ENTRY##*/}
	# shellcheck disable=SC2016 # the inner shell's variables
	out=$(unshare -m sh -c '
		img=$0 root=$1 ed=$2 name=$3 tool=$4
		mkdir -p "$root/mnt" && mount -o loop "$img" "$root/mnt" || exit 99
		cp -a "$root/$ed/." "$root/mnt/" && mount --bind "$root/mnt" "$root/$ed" || exit 99
		cp --reflink=always "$root/$ed/$name" "$root/$ed/.$name.memcg-policy.Shared"
		sed -n p "$root/$ed/$name" >"$root/$ed/.$name.memcg-policy.Lone00" # read and write: no reflink
		"$tool" --root "$root" apply >/dev/null 2>"$root/err"
		echo "rc=$?"
		ls -A "$root/$ed" | grep -c "memcg-policy\.Shared$"
		ls -A "$root/$ed" | grep -c "memcg-policy\.Lone00$"
		grep -c "cgroup_disable=memory" "$root/$ed/$name"
		cat "$root/err"
		umount "$root/$ed"; umount "$root/mnt"' "$img" "$root" "$ed" "$name" "$MEMCG_POLICY")
	expect_eq "leftover sharing data: apply exit 0" "$(sed -n 1p <<<"$out")" "rc=0"
	expect_eq "leftover sharing data: kept" "$(sed -n 2p <<<"$out")" 1
	expect_eq "leftover sharing nothing: removed" "$(sed -n 3p <<<"$out")" 0
	expect_eq "leftover sharing data: the entry itself is rewritten" "$(sed -n 4p <<<"$out")" 1
	if grep -qF "memcg-policy.Shared: a temporary file left by an interrupted run shares its data with $name" <<<"$out"; then
		pass "leftover sharing data: a warning names both"
	else
		fail "leftover sharing data: a warning names both" "$out"
	fi
elif [ "$(id -u)" -eq 0 ]; then
	fail "leftover temp files: mkfs.xfs (xfsprogs) or mount namespaces missing"
else
	echo "# not root: no file system with shared extents for the leftover case"
fi
