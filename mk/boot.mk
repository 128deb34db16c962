# mk/boot.mk - the boot-test tier: a stock Debian kernel booted by the real
# bootloaders under QEMU from boot configuration memcg-policy wrote
# (tests/boot/README.md). Needs root, QEMU, OVMF, GRUB and loop devices;
# a missing one is a failure, not a skip. BOOT_CASES=glob... picks cases.
.PHONY: check-boot
check-boot: all
	MEMCG_POLICY=$(BUILD)/memcg-policy tests/boot/run.sh $(BOOT_CASES)

# bench from the root cgroup on cgroup v2, in a guest: the run takes place
# in a cgroup made for it (tests/boot/bench-cgroup.sh)
.PHONY: check-bench-cgroup
check-bench-cgroup: all
	MEMCG_POLICY=$(BUILD)/memcg-policy tests/boot/bench-cgroup.sh
