/* facts/rpi-firmware.h - the line the Raspberry Pi firmware puts before
 * cmdline.txt: /chosen/bootargs of the device tree blob it loads (since
 * the 6.12 kernels the Foundation's blobs carry cgroup_disable=memory
 * there), read with libfdt from the blob config.txt names for each board
 * that counts (slots/rpi-config.h), and joined before the command line
 * file in the firmware's order. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "io/rootfs.h"

struct rpi_prefix {
	char *bootargs; /* "" when the blob has none */
	char *blob;	/* display path of the blob */
	char *boards;	/* the boards that load it, "5, 500" */
};

struct rpi_firmware {
	bool present;	      /* a config.txt with a blob of a board the tool knows */
	struct rpi_prefix *v; /* one per distinct bootargs, in the boards' order */
	size_t n;
	char *unreadable; /* a blob that could not be read: why (the prefix is then not known) */
	char *uncertain;  /* FILE:LINE of a value set under a filter the tool cannot judge */
};

/* Reads the prefix for the root. 0 or a negative exit code (printed). */
int rpi_firmware_read(const struct root *r, struct rpi_firmware *out);
void rpi_firmware_free(struct rpi_firmware *f);

struct kernel_list;
/* Gives every kernel the firmware boots (arm and arm64 ones, or of an
 * unknown architecture) the prefix: the first one, and where boards load
 * blobs with different prefixes or a blob could not be read, a note that
 * says so. */
void rpi_firmware_to_kernels(const struct rpi_firmware *f, struct kernel_list *l);
