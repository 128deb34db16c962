# mk/system.mk - `make check-system`: real Debian 12 systems built with
# mmdebstrap, the package built from this tree installed with apt, the
# administrator's journey walked in a chroot and booted under QEMU
# (tests/system/README.md). Needs root, network access to the Debian
# mirror, QEMU and loop devices. SYSTEMS=... picks systems;
# MEMCG_SYSTEM_BROKEN=apply-writes-nothing checks that a broken package
# fails the tier.
.PHONY: check-system
check-system:
	tests/system/run.sh $(SYSTEMS)
