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
