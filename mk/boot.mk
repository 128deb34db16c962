# mk/boot.mk - the boot-test tier: a stock Debian kernel booted by the real
# bootloaders under QEMU from boot configuration memcg-policy wrote
# (tests/boot/README.md). Needs root, QEMU, OVMF, GRUB and loop devices;
# a missing one is a failure, not a skip. BOOT_CASES=glob... picks cases.
.PHONY: check-boot
check-boot: all
	MEMCG_POLICY=$(BUILD)/memcg-policy tests/boot/run.sh $(BOOT_CASES)
