/* slots/find-boot.h - the directories boot entries are read from ($BOOT of the
 * Boot Loader Specification): the ESP at /efi, /boot or /boot/efi and
 * XBOOTLDR at /boot, as systemd's bootctl finds them.
 *
 * Only candidates that hold something of ours (loader/entries or
 * EFI/Linux) are considered. On a live system each one is verified unless
 * trusted: the ESP must be a vfat file system at the root of its mount,
 * on a GPT partition of type ESP (or an MBR partition of type 0xef);
 * XBOOTLDR the root of its mount on a GPT partition of type XBOOTLDR (MBR
 * 0xea), probed with libblkid on /dev/block/MAJ:MIN. A /boot that is
 * neither is still used when GRUB reads BLS entries from it (blscfg, as on
 * Fedora and RHEL), since GRUB does not care about partition types.
 * Every candidate refused is reported as "PATH: why". */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

#include "io/rootfs.h"
#include "lib/util.h"

enum boot_role {
	BOOT_ESP,      /* verified EFI System Partition */
	BOOT_XBOOTLDR, /* verified Extended Boot Loader partition */
	BOOT_PLAIN,    /* trusted without checks (--root, test variable, policy yes) or GRUB's BLS /boot */
};

struct boot_dir {
	char *path; /* inside the root: "/boot", "/efi", "/boot/efi" */
	enum boot_role role;
	bool has_entries; /* loader/entries is a directory */
	bool has_ukis;	  /* EFI/Linux is a directory */
};

struct boot_dirs {
	struct boot_dir *v; /* $BOOT first: XBOOTLDR, else the ESP (else the first found) */
	size_t n;
};

/* Finds the boot directories. trust skips the partition checks (always
 * the case when r is not live). Refused candidates are appended to
 * rejected. Never fails: a directory that cannot be verified is refused. */
void find_boot_dirs(const struct root *r, bool trust, struct boot_dirs *out, struct strv *rejected);
void boot_dirs_free(struct boot_dirs *b);

/* Does the root's GRUB read BLS entries (blscfg in its grub.cfg, or
 * GRUB_ENABLE_BLSCFG=true in /etc/default/grub)? */
bool grub_uses_blscfg(const struct root *r);

/* Environment variable for tests: trust $BOOT candidates on a live system
 * without libblkid checks. */
#define ENV_TRUST_BOOT "MEMCG_POLICY_TRUST_BOOT"
/* True if the test variable ENV_TRUST_BOOT is set (non-empty, not "0"). */
bool trust_boot_env(void);

#define ESP_GPT_TYPE "c12a7328-f81f-11d2-ba4b-00a0c93ec93b"
#define XBOOTLDR_GPT_TYPE "bc13c2ff-59e6-4262-a352-b275fd6f7172"
