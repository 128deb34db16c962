# shellcheck shell=bash
# tests/uboot-lib.sh - Debian arm64 roots with u-boot-menu, for
# tests/cmd/u-boot-menu.sh and tests/boot/u-boot.sh (sourced after
# tests/lib.sh, with K and CFG set). The host's /usr/bin, /usr/lib and
# /usr/share are bound into a root in a private mount namespace, so that
# the host's u-boot-update (sh, sed, linux-version of linux-base) runs
# chrooted into it, as `apply --regenerate` runs it.
UUID=0b6a7c1e-3f4d-4e5a-9b8c-7d6e5f4a3b2c

# newtree: a root with the kernel $K (config $CFG), its initrd, fstab,
# the package's /etc/default/u-boot, the host's u-boot-update and this
# build as /usr/sbin/memcg-policy, mode = off
newtree() {
	local t
	t=$(mkroot)
	mkdir -p "$t/usr/sbin" "$t/usr/bin" "$t/usr/lib" "$t/usr/lib64" "$t/usr/share" "$t/dev" "$t/proc" "$t/sys" \
		"$t/etc/u-boot-menu/conf.d" "$t/etc/default" "$t/etc/kernel" "$t/tmp"
	ln -s usr/bin "$t/bin"
	ln -s usr/lib "$t/lib"
	ln -s usr/lib64 "$t/lib64"
	ln -s usr/sbin "$t/sbin"
	add_kernel "$t" "$K" "$CFG"
	: >"$t/boot/initrd.img-$K"
	printf 'UUID=%s / ext4 errors=remount-ro 0 1\n' "$UUID" >"$t/etc/fstab"
	printf 'PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"\nID=debian\n' >"$t/etc/os-release"
	cp /usr/sbin/u-boot-update "$t/usr/sbin/u-boot-update"
	cp "$MEMCG_POLICY" "$t/usr/sbin/memcg-policy"
	# the package's conffile as it ships (every line a comment)
	printf '## /etc/default/u-boot - configuration file for u-boot-update(8)\n\n#U_BOOT_UPDATE="true"\n#U_BOOT_PARAMETERS="ro quiet"\n' \
		>"$t/etc/default/u-boot"
	write_policy "$t/etc/memcg-policy.conf" <<'EOF'
[policy]
mode = off
EOF
	echo "$t"
}

# in_ns TREE CMD...: CMD in a private mount namespace where TREE has the
# host's /usr/bin, /usr/lib, /usr/lib64 and /usr/share (read only; NS_DIRS
# names others), and then the files NS_BINDS names ("SOURCE:PATH ...",
# PATH in the tree) bound over what is there
NS_DIRS=${NS_DIRS:-/usr/bin /usr/lib /usr/lib64 /usr/share}
NS_BINDS=${NS_BINDS:-}
in_ns() {
	local t=$1
	shift
	# shellcheck disable=SC2016 # the script's variables are its own
	unshare -m --propagation private bash -c '
		t=$1; dirs=$2; binds=$3; shift 3
		for d in $dirs; do
			[ -d "$d" ] || continue
			mkdir -p "$t$d" && mount --bind -o ro "$d" "$t$d" || exit 90
		done
		for b in $binds; do
			mount --bind -o ro "${b%%:*}" "$t${b#*:}" || exit 90
		done
		exec "$@"
	' - "$t" "$NS_DIRS" "$NS_BINDS" "$@"
}

# uboot_update TREE: the real u-boot-update, chrooted into TREE with /dev
# and /proc (as on the system; the sanitizer build of the program the
# fragment runs needs /proc)
# (its output in $SCRATCH/u-boot-update.log); its exit code
SCRATCH=$(mkroot)
uboot_update() {
	# shellcheck disable=SC2016 # the script's variables are its own
	in_ns "$1" bash -c 'mount --rbind /dev "$1/dev" && mount -t proc proc "$1/proc" &&
		exec chroot "$1" /usr/sbin/u-boot-update' - "$1" \
		>"$SCRATCH/u-boot-update.log" 2>&1
}

# appends TREE: the append lines of its extlinux.conf, one per label
appends() { sed -n 's/^[[:space:]]*append[[:space:]]*//p' "$1/boot/extlinux/extlinux.conf"; }

# --- flash-kernel (tests/fixtures/flash-kernel: 3.107's own files) ---
# The dirs in_ns binds for a tree with flash-kernel: its own
# /usr/share/flash-kernel is the tree's, so only Perl's modules of the
# host's /usr/share (linux-version) are bound.
# shellcheck disable=SC2034 # for the scripts that source this
FK_NS_DIRS="/usr/bin /usr/lib /usr/lib64 /usr/share/perl5 /usr/share/perl"

# fk_install TREE MACHINE: flash-kernel installed into TREE as its package
# installs it (u-boot-menu's u-boot-update taken out), for MACHINE of its
# database (/etc/flash-kernel/machine)
fk_install() {
	local t=$1 fk=$FIX/flash-kernel
	rm -f "$t/usr/sbin/u-boot-update"
	cp -a "$fk/usr/sbin/flash-kernel" "$t/usr/sbin/"
	mkdir -p "$t/usr/share/flash-kernel" "$t/etc/flash-kernel/dtbs"
	cp -a "$fk/usr/share/flash-kernel/." "$t/usr/share/flash-kernel/"
	cp -a "$fk/etc/flash-kernel/." "$t/etc/flash-kernel/"
	# what the package's postinst writes with debconf's default answer
	cp "$fk/usr/share/flash-kernel/default/flash-kernel" "$t/etc/default/flash-kernel"
	printf '%s\n' "$2" >"$t/etc/flash-kernel/machine"
}

# flash_kernel TREE: the real flash-kernel, chrooted into TREE with /dev and
# /proc, as a kernel's installation runs it (in_ns: NS_DIRS=$FK_NS_DIRS;
# its output in $SCRATCH/fk.log)
flash_kernel() {
	# shellcheck disable=SC2016 # the script's variables are its own
	in_ns "$1" bash -c 'mount --rbind /dev "$1/dev" && mount -t proc proc "$1/proc" &&
		exec chroot "$1" /usr/sbin/flash-kernel' - "$1" >"$SCRATCH/fk.log" 2>&1
}
