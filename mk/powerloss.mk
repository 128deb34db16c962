# mk/powerloss.mk - `make check-powerloss`: a QEMU guest edits 100 BLS
# entries on a FAT32 ESP and an ext4 /boot while the host kills the whole
# machine at random moments; fsck, every entry old or new, revert and
# convergence after each kill (tests/powerloss/README.md). Needs root, QEMU
# and the Debian mirror (the kernel). POWERLOSS_KILLS=N (default 12).
.PHONY: check-powerloss
check-powerloss: all
	tests/powerloss/run.sh $(POWERLOSS_KILLS)
