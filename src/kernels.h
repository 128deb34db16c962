/* kernels.h - the kernels installed in a root and the facts about each:
 * where its config comes from, what it says, whether it accepts
 * cgroup_enable=, and which one boots next (the default kernel). */
#pragma once

#include <stdbool.h>

#include "kconfig.h"
#include "rootfs.h"

struct kernel {
	char *version;
	bool installed;         /* module tree opens with libkmod, or boot/vmlinuz-VER */
	bool running;           /* live system and uname -r matches */
	char *config_path;      /* display path of the config read, NULL if none found */
	int config_error;       /* 0, or the negated exit code (-EXIT_BADINPUT) */
	struct kconfig_facts kc;
	int accepts_enable;     /* 1/0 final: kallsyms, System.map, else config markers */
	const char *accepts_enable_source; /* "/proc/kallsyms", "System.map-VER", "config" */
	char *system_map;       /* display path of System.map-VER if read */
};

struct kernel_list {
	struct kernel *k;
	size_t n;               /* newest first */
	char *running_release;  /* uname -r on a live system, NULL with --root */
	bool only;              /* loaded for one version asked for (kernels_load's only) */
};

/* Lists installed kernels in the root (lib/modules/VER opens with libkmod,
 * also usr/lib/modules/VER, or boot/vmlinuz-VER exists), newest first.
 * On a live system the running kernel is added if it is not installed.
 * If only is set, lists just that version (it need not be installed, but
 * then its config must be found). Reads each kernel's facts: config (order
 * of DESIGN section 3: /proc/config.gz only for the running kernel on a
 * live system; else boot/config-VER, lib/modules/VER/config,
 * usr/lib/modules/VER/config), then System.map / kallsyms.
 * Errors in one kernel's config are printed and kept in config_error; the
 * function itself fails only on system errors. */
int kernels_load(const struct root *r, const char *only, struct kernel_list *out);
void kernels_free(struct kernel_list *l);

/* By default the symbol tables (/proc/kallsyms, System.map) are read for
 * every kernel. With false, they are skipped for mainline kernels whose
 * memcg is on by default, where the answer changes no decision (reading
 * /proc/kallsyms costs ten times inflating /proc/config.gz). */
void kernels_read_symbols_always(bool always);

/* The default kernel: `only` if given, else the newest installed, else the
 * running one; NULL if there is none. */
struct kernel *kernels_default(struct kernel_list *l);
