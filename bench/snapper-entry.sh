# bench/snapper-entry.sh - snapper_entry VER SNAPSHOT MACHINE-ID prints a
# BLS entry as openSUSE's sdbootutil writes one for a snapshot of a kernel.
# Sourced by bench/tool-lib.sh (make_root) and tests/powerloss/run.sh.
# shellcheck shell=bash
snapper_entry() {
	cat <<EOF
title      Snapper: *openSUSE Tumbleweed ($1@$2)
version    $1
sort-key   opensuse-tumbleweed
options    root=UUID=3b1d9f4e-7c2a-4e5b-8d6f-1a2b3c4d5e6f rootflags=subvol=@/.snapshots/$2/snapshot mitigations=auto quiet security=apparmor systemd.machine_id=$3
linux      /opensuse-tumbleweed/$1/linux-0123456789abcdef0123456789abcdef01234567
initrd     /opensuse-tumbleweed/$1/initrd-fedcba9876543210fedcba9876543210fedcba98
EOF
}
