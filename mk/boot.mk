# mk/boot.mk - the boot-test tier: a stock Debian kernel booted by the real
# bootloaders under QEMU from boot configuration memcg-policy wrote
# (tests/boot/README.md). Needs root, QEMU, OVMF, GRUB and loop devices;
# a missing one is a failure, not a skip. BOOT_CASES=glob... picks cases.
.PHONY: check-boot
check-boot: all
	MEMCG_POLICY=$(BUILD)/memcg-policy tests/boot/run.sh $(BOOT_CASES)

# a U-Boot board: Debian's arm64 kernel booted by U-Boot under
# qemu-system-aarch64 from the extlinux.conf u-boot-update wrote after apply
# and after revert (tests/boot/u-boot.sh)
.PHONY: check-boot-u-boot
check-boot-u-boot: all
	MEMCG_POLICY=$(BUILD)/memcg-policy tests/boot/u-boot.sh

# bench from the root cgroup on cgroup v2, in a guest: the run takes place
# in a cgroup made for it (tests/boot/bench-cgroup.sh)
.PHONY: check-bench-cgroup
check-bench-cgroup: all
	MEMCG_POLICY=$(BUILD)/memcg-policy tests/boot/bench-cgroup.sh
