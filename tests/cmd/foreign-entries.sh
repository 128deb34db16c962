#!/bin/bash
# Only this installation's entries are read as a base or edited (an ESP
# shared by two systems): an entry is this root's by machine-id, by entry
# token (its file name), or, with neither, by naming a kernel this root
# has. /etc/kernel/cmdline is created only from such an entry, else not at
# all (status says why). Where no boot slot is left that the tool manages,
# nothing carries the decision: not in sync, apply writes nothing (exit 1),
# as with no boot configuration at all (tests/cmd/false-sync.sh).
. "$TOP/tests/lib.sh"

says() { # NAME TEXT PATTERN
	case $2 in
	*"$3"*) pass "$1" ;;
	*) fail "$1" "$2" ;;
	esac
}
snap() { (cd "$1" && find . -printf '%p %m\n' -type f -exec md5sum {} \; | sort | md5sum); }

MID_THIS=0f5e2c8d7a6b4c3e9d1f2a3b4c5d6e7f
MID_OTHER=6a9857a393724b7a981ebb5b8495b9ea
VER=6.1.0-41-amd64
# debian_root: a Debian system that installs kernels with kernel-install
# (layout=bls), its ESP at /efi holding no entry of its own yet
debian_root() {
	root=$(mkroot)
	add_kernel "$root" "$VER" "$FIX/configs/debian12-amd64.config"
	echo "$MID_THIS" >"$root/etc/machine-id"
	printf 'PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"\nID=debian\n' >"$root/etc/os-release"
	mkdir -p "$root/etc/kernel" "$root/efi/loader/entries"
	echo layout=bls >"$root/etc/kernel/install.conf"
	printf '[policy]\nmode = off\n' | write_policy "$root/etc/memcg-policy.conf"
}
arch_entry() { # FILE: Arch's own hand-written entry (its wiki's example)
	printf 'title   Arch Linux\nlinux   /vmlinuz-linux\ninitrd  /initramfs-linux.img\noptions root=UUID=0a3407de-014b-458b-b5c1-848e92a327a3 rw\n' >"$1"
}
other_debian_entry() { # FILE: kernel-install's entry of another Debian on the ESP, same release
	printf 'title      Debian GNU/Linux 12 (bookworm)\nversion    %s\nmachine-id %s\nsort-key   debian\noptions    root=UUID=11111111-2222-3333-4444-555555555555 ro quiet\nlinux      /%s/%s/linux\ninitrd     /%s/%s/initrd.img-%s\n' \
		"$VER" "$MID_OTHER" "$MID_OTHER" "$VER" "$MID_OTHER" "$VER" "$VER" >"$1"
}

# --- an Arch entry on this Debian's ESP: not edited, not a base
debian_root
arch_entry "$root/efi/loader/entries/arch.conf"
s0=$(snap "$root")
expect_exit "Arch's entry: status exit 0" 0 "$MEMCG_POLICY" --root "$root" status
says "Arch's entry: status calls it another installation's" "$OUT" "another installation's entry, it seems"
says "Arch's entry: /etc/kernel/cmdline is not created from it" "$OUT" "missing, and not created"
expect_exit "Arch's entry: check is not in sync (exit 1)" 1 "$MEMCG_POLICY" --root "$root" check
says "Arch's entry: check says nothing carries the decision" "$OUT" "none it may edit"
expect_exit "Arch's entry: apply writes nothing (exit 1)" 1 "$MEMCG_POLICY" --root "$root" apply
says "Arch's entry: apply says nothing was written" "$ERR" "nothing written:"
expect_eq "Arch's entry: the tree is as it was (entry kept, no /etc/kernel/cmdline)" "$(snap "$root")" "$s0"

# --- another Debian's entry for the same release (its machine-id): not a base
debian_root
other_debian_entry "$root/efi/loader/entries/$MID_OTHER-$VER.conf"
s0=$(snap "$root")
expect_exit "another Debian's entry: status exit 0" 0 "$MEMCG_POLICY" --root "$root" status
says "another Debian's entry: status names its machine-id" "$OUT" "another installation's entry (machine-id $MID_OTHER)"
says "another Debian's entry: /etc/kernel/cmdline is not created from it" "$OUT" "missing, and not created"
expect_exit "another Debian's entry: apply writes nothing (exit 1)" 1 "$MEMCG_POLICY" --root "$root" apply
check "another Debian's entry: no /etc/kernel/cmdline with its root=" test ! -e "$root/etc/kernel/cmdline"
expect_eq "another Debian's entry: the tree is as it was" "$(snap "$root")" "$s0"

# --- with this root's own entry beside both: that one is the base and the only one edited
debian_root
arch_entry "$root/efi/loader/entries/arch.conf"
other_debian_entry "$root/efi/loader/entries/$MID_OTHER-$VER.conf"
printf 'title      Debian GNU/Linux 12 (bookworm)\nversion    %s\nmachine-id %s\noptions    root=UUID=a5a23e80-0329-442f-84c5-87178b098c9c ro quiet\nlinux      /%s/%s/linux\n' \
	"$VER" "$MID_THIS" "$MID_THIS" "$VER" >"$root/efi/loader/entries/$MID_THIS-$VER.conf"
cp "$root/efi/loader/entries/arch.conf" "$root/arch.before"
cp "$root/efi/loader/entries/$MID_OTHER-$VER.conf" "$root/other.before"
expect_exit "beside this root's entry: apply exit 0" 0 "$MEMCG_POLICY" --root "$root" apply
check "beside this root's entry: /etc/kernel/cmdline is made from this root's entry" \
	grep -qx 'root=UUID=a5a23e80-0329-442f-84c5-87178b098c9c ro quiet cgroup_disable=memory' "$root/etc/kernel/cmdline"
check "beside this root's entry: its entry gets the token" grep -q '^options .*cgroup_disable=memory' \
	"$root/efi/loader/entries/$MID_THIS-$VER.conf"
check "beside this root's entry: Arch's entry byte for byte" cmp -s "$root/arch.before" "$root/efi/loader/entries/arch.conf"
check "beside this root's entry: the other Debian's entry byte for byte" cmp -s "$root/other.before" \
	"$root/efi/loader/entries/$MID_OTHER-$VER.conf"
expect_exit "beside this root's entry: check in sync" 0 "$MEMCG_POLICY" --root "$root" check

# --- the same Arch entry on Arch itself (os-release ID=arch): its own, edited
root=$(mkroot)
AVER=6.12.1-arch1-1
mkdir -p "$root/usr/lib/modules/$AVER" "$root/boot/loader/entries"
cp "$FIX/configs/debian12-amd64.config" "$root/usr/lib/modules/$AVER/config"
: >"$root/usr/lib/modules/$AVER/vmlinuz"
echo linux >"$root/usr/lib/modules/$AVER/pkgbase"
: >"$root/boot/vmlinuz-linux"
printf 'NAME="Arch Linux"\nID=arch\n' >"$root/etc/os-release"
echo "$MID_THIS" >"$root/etc/machine-id"
arch_entry "$root/boot/loader/entries/arch.conf"
printf '[policy]\nmode = off\n' | write_policy "$root/etc/memcg-policy.conf"
expect_exit "Arch's entry on Arch: apply exit 0" 0 "$MEMCG_POLICY" --root "$root" apply
check "Arch's entry on Arch: edited" grep -qx 'options root=UUID=0a3407de-014b-458b-b5c1-848e92a327a3 rw cgroup_disable=memory' \
	"$root/boot/loader/entries/arch.conf"
# and on a root that names no token (no os-release, no machine-id) but has the image
rm "$root/etc/os-release" "$root/etc/machine-id"
arch_entry "$root/boot/loader/entries/arch.conf"
expect_exit "an entry whose image is in this root's /boot: apply exit 0" 0 "$MEMCG_POLICY" --root "$root" apply
check "an entry whose image is in this root's /boot: edited" grep -q '^options .*cgroup_disable=memory' \
	"$root/boot/loader/entries/arch.conf"
