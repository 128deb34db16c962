/* slots/rpi-config.h - config.txt read as the Raspberry Pi firmware reads
 * it, for what decides the kernel's command line: which file is the
 * command line (os_prefix=, cmdline=) and which device tree blob is loaded
 * (os_prefix=, device_tree=, else the board's own blob), board by board.
 *
 * Conditional sections: [all] resets every filter, [none] turns the lines
 * after it off until [all]; a model filter ([pi3], [pi3+], [pi02], [pi0],
 * [pi4], [pi400], [cm4], [pi5], [pi500], [cm5]) replaces the model filter
 * before it; [tryboot] lines count only for a trial boot (not read here);
 * any other filter ([HDMI:0], [EDID=...], [gpio4=1], [0x...], [board-type=])
 * is one the tool cannot judge from the files: its lines are taken to
 * apply, and the board is marked uncertain. include FILE reads FILE (from
 * the boot directory, 8 deep at most) where the line stands. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "io/rootfs.h"

struct rpi_board {
	const char *name;	/* "5", "4B", "400", "CM4", "3B+", ... */
	const char *compatible; /* the device tree's model compatible, "raspberrypi,5-model-b" */
	const char *filters[3]; /* model filters that select it: "pi5", "pi500" */
	const char *dtbs[3];	/* the blob the firmware loads for it, in its order */
};

struct rpi_boot {
	const struct rpi_board *board;
	char *cmdline_path; /* inside the root: DIR/PREFIX + cmdline= (cmdline.txt) */
	char *dtb_path;	    /* the blob it loads, NULL: none there (or device_tree= empty) */
	char *config_at;    /* FILE:LINE of the os_prefix=/cmdline=/device_tree= that set them, NULL: defaults */
	char *uncertain_at; /* FILE:LINE of a value set under a filter the tool cannot judge, NULL: none */
};

struct rpi_config {
	char *dir;	       /* "/boot/firmware" or "/boot"; NULL: no config.txt */
	char *config_path;     /* DIR/config.txt */
	struct rpi_boot *boot; /* one per board of the table, in its order */
	size_t n;
	/* the live system's board (its device tree's compatible), NULL:
	 * not a Raspberry Pi the tool knows, or --root */
	const struct rpi_board *running_on;
};

/* Does board i count: the board the live system runs on; else (an image)
 * every board whose blob is there, or every board when none is. */
bool rpi_boot_counts(const struct rpi_config *c, size_t i);

/* The boards the tool knows (64-bit capable), and their number. */
extern const struct rpi_board rpi_boards[];
extern const size_t rpi_n_boards;

/* Reads config.txt of the root's Raspberry Pi boot directory (and what it
 * includes) for every board. 0 (out->dir NULL when there is none), or a
 * negative exit code (printed): a file that cannot be read. */
int rpi_config_read(const struct root *r, struct rpi_config *out);
void rpi_config_free(struct rpi_config *c);
