#!/bin/bash
# A chroot is an offline root: the program run inside a tree by chroot(8)
# with the host's /proc mounted there (an image build's kernel hook, an
# mmdebstrap hook, a rescue shell) reads the tree as it reads --root: the
# host's kernel, RAM and memcg state stay out of the decision, the tree's
# boot entries are found without libblkid, no "reboot needed" is said
# about the host, and it says so in one line.
#
# The tree is an image of its own: its kernels, entries and policy; the
# program and the host's shared libraries are bound into /opt (nothing in
# the tree's own paths), in a private mount namespace.
. "$TOP/tests/lib.sh"
if [ "$(id -u)" -ne 0 ] || ! unshare -m true 2>/dev/null; then
	echo "SKIP: chroot tests need root and mount namespaces"
	exit 0
fi
CFG=$FIX/configs/debian12-amd64.config
MID=0f5e2c8d7a6b4c3e9d1f2a3b4c5d6e7f
K1=6.8.11-300.fc40.x86_64
K2=6.9.7-200.fc40.x86_64
LIBDIR=$(dirname "$(readlink -f /lib64/ld-linux-x86-64.so.2)")

tree=$(mkroot)
cp -a "$FIX/roots/systemd-boot-xbootldr/." "$tree/"
add_kernel "$tree" "$K1" "$CFG"
add_kernel "$tree" "$K2" "$CFG"
# the image's policy: off below 2G of RAM, the image's machines have 1G;
# the host has more (checked below), so the host's RAM would decide on
write_policy "$tree/etc/memcg-policy.conf" <<'EOF'
[policy]
mode = auto
[auto]
needs-memcg-units = no
min-ram = 2G
assume-ram = 1G
otherwise = on
EOF
mkdir -p "$tree/opt/lib" "$tree/opt/bin" "$tree/proc"
cp "$MEMCG_POLICY" "$tree/opt/bin/memcg-policy"
entry=$tree/boot/loader/entries/$MID-$K2.conf
host_ram_k=$(awk '$1 == "MemTotal:" { print $2 }' /proc/meminfo)
host_memcg=$(awk '$1 == "memory" { print ($4 == 1) ? "on" : "off" }' /proc/cgroups)

# in_chroot [proc|noproc] [ENV=V...] -- ARGS...: the program in the tree,
# chrooted, /proc mounted there or not; stdout in $OUT, stderr in $ERR,
# exit code in $RC
in_chroot() {
	local proc=$1
	shift
	local env=()
	while [ "$1" != -- ]; do env+=("$1"); shift; done
	shift
	local o e
	o=$(mktemp) e=$(mktemp)
	# shellcheck disable=SC2016 # the script's variables are its own
	unshare -m --propagation private bash -c '
		t=$1 lib=$2 proc=$3; shift 3
		mount --bind -o ro "$lib" "$t/opt/lib" || exit 90
		if [ "$proc" = proc ]; then mount -t proc proc "$t/proc" || exit 90; fi
		exec /usr/bin/env -i "$@"
	' - "$tree" "$LIBDIR" "$proc" "${env[@]}" "$(command -v chroot)" "$tree" \
		/opt/lib/ld-linux-x86-64.so.2 --library-path /opt/lib /opt/bin/memcg-policy "$@" >"$o" 2>"$e"
	RC=$?
	OUT=$(cat "$o") ERR=$(cat "$e")
	rm -f "$o" "$e"
}
has() { grep -qF -- "$2" <<<"$1"; }
expect_has() { # expect_has NAME TEXT FIXED-STRING
	if has "$2" "$3"; then pass "$1"; else fail "$1" "no: $3" "in: $2"; fi
}
expect_lacks() {
	if has "$2" "$3"; then fail "$1" "has: $3" "in: $2"; else pass "$1"; fi
}

# the test's own premise: the host's RAM is over the image's min-ram
check "the host has more RAM than the image's min-ram (2G)" test "$host_ram_k" -gt $((2 << 20))
in_chroot proc -- --version
expect_eq "the program runs in the chroot" "$RC" 0
[ "$RC" -eq 0 ] || { echo "FAIL: cannot run the program in a chroot: $ERR"; exit 0; }

in_chroot proc -- status
expect_eq "status in a chroot: exit 0" "$RC" 0
expect_has "status in a chroot: its root is read as an image" "$OUT" "Root: / (a chroot: read as an image)"
expect_has "status in a chroot: it says so in one line" "$ERR" "in a chroot: / is read as an image"
expect_eq "status in a chroot: one line on stderr" "$(wc -l <<<"$ERR")" 1
expect_has "status in a chroot: RAM from assume-ram, not the host's /proc/meminfo" "$OUT" "RAM:           1024M (assume-ram)"
expect_lacks "status in a chroot: no running kernel" "$OUT" "Running:"
expect_lacks "status in a chroot: no reboot pending about the host" "$OUT" "Reboot pending:"
expect_lacks "status in a chroot: the host's kernel is not one of the tree's" "$OUT" "$(uname -r)"
expect_has "status in a chroot: the tree's boot entries are found" "$OUT" "/boot/loader/entries/$MID-$K2.conf"
expect_lacks "status in a chroot: the tree's /boot is not rejected" "$OUT" "rejected:"

in_chroot proc -- --json decide
expect_eq "decide --json in a chroot: exit 0" "$RC" 0
expect_eq "decide in a chroot: the image's decision (off: 1G of RAM)" "$(jq -r .decision <<<"$OUT")" off
expect_eq "decide --json in a chroot: live is false" "$(jq -r .live <<<"$OUT")" false
expect_eq "decide --json in a chroot: chroot is true" "$(jq -r .chroot <<<"$OUT")" true
expect_eq "decide --json in a chroot: no running state" "$(jq -c .running <<<"$OUT")" \
	'{"memcg":null,"source":null,"cmdline":null}'
expect_eq "decide --json in a chroot: nothing on stderr" "$ERR" ""
tmp=$(mktemp)
printf '%s\n' "$OUT" >"$tmp"
json_check "decide --json in a chroot" "$tmp" "$RC"
rm -f "$tmp"

in_chroot proc -- apply
expect_eq "apply in a chroot: exit 0" "$RC" 0
check "apply in a chroot: the image's entry gets cgroup_disable=memory" grep -qw cgroup_disable=memory "$entry"
expect_has "apply in a chroot: the next boot is the image's" "$OUT" "next boot of the image ($K2): memcg off"
expect_lacks "apply in a chroot: no word about the host's running kernel" "$OUT" "running now"

in_chroot proc -- check
expect_eq "check in a chroot after apply: in sync, no reboot of the host asked for (0)" "$RC" 0

# an image mounted and chrooted into, in the host's own mount namespace
# (as an image build mounts its disk image): its root is a mount's root
img=$(mkroot)
umount_img() { umount "$img/proc" "$img/opt/lib" "$img" 2>/dev/null; }
trap 'umount_img; cleanup_tmp' EXIT
if mount --bind "$tree" "$img" && mount --bind -o ro "$LIBDIR" "$img/opt/lib" && mount -t proc proc "$img/proc"; then
	OUT=$(/usr/bin/env -i "$(command -v chroot)" "$img" /opt/lib/ld-linux-x86-64.so.2 --library-path /opt/lib \
		/opt/bin/memcg-policy --json decide 2>&1)
	expect_eq "a mounted image chrooted into: chroot is true" "$(jq -r .chroot <<<"$OUT" 2>&1)" true
	expect_eq "a mounted image chrooted into: the image's decision" "$(jq -r .decision <<<"$OUT" 2>&1)" off
else
	fail "the image is mounted for the test"
fi
umount_img

# no /proc at all: a chroot too
in_chroot noproc -- --json decide
expect_eq "decide without /proc: chroot is true" "$(jq -r .chroot <<<"$OUT")" true
expect_eq "decide without /proc: the image's decision" "$(jq -r .decision <<<"$OUT")" off

# the chroot that stands for the running machine, as systemd's
# SYSTEMD_IGNORE_CHROOT has it: the host's kernel runs, its RAM counts
in_chroot proc MEMCG_POLICY_IGNORE_CHROOT=1 -- --json decide
expect_eq "MEMCG_POLICY_IGNORE_CHROOT=1: live" "$(jq -r .live <<<"$OUT")" true
expect_eq "MEMCG_POLICY_IGNORE_CHROOT=1: the host's running state is read" "$(jq -r .running.memcg <<<"$OUT")" "$host_memcg"
expect_eq "MEMCG_POLICY_IGNORE_CHROOT=1: the host's RAM decides (on)" "$(jq -r '[.kernels[] | select(.version == "'"$K2"'") | .decision][0]' <<<"$OUT")" on

# outside any chroot, the same program is on the live system
expect_exit "the live system is not a chroot" 0 "$MEMCG_POLICY" --json decide
expect_eq "the live system: live is true" "$(jq -r .live <<<"$OUT")" true
expect_eq "the live system: chroot is false" "$(jq -r .chroot <<<"$OUT")" false
