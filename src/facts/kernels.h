/* facts/kernels.h - the kernels installed in a root and the facts about each:
 * where its config comes from, what it says, whether it accepts
 * cgroup_enable=, and which one boots next (the default kernel). */
#pragma once

#include <stdbool.h>

#include "facts/kconfig.h"
#include "io/rootfs.h"
#include "lib/util.h"

struct kernel {
	char *version;
	bool installed;	     /* module tree opens with libkmod, or an image of it exists */
	bool running;	     /* live system and uname -r matches */
	char *config_path;   /* display path of the config read, NULL if none found */
	int config_error;    /* 0, or the negated exit code (-EXIT_BADINPUT) */
	bool config_missing; /* no config anywhere: config_looked lists the places */
	char *config_looked;
	bool config_from_policy; /* decided from a [kernel GLOB] section's default= */
	char *config_note;	 /* config_path NULL: what stands in for it, for text output */
	struct kconfig_facts kc;
	int accepts_enable;		   /* 1/0 final: kallsyms, System.map, else config markers */
	const char *accepts_enable_source; /* "/proc/kallsyms", "System.map-VER", "config" */
	char *system_map;		   /* display path of System.map-VER if read */
	/* booted by the Raspberry Pi firmware (facts/rpi-firmware.h): the
	 * device tree prefix it gets before cmdline.txt, NULL: none known */
	char *fw_prefix;
	char *fw_blob;
	char *fw_note;	       /* boards that differ, or a blob not read */
	struct strv fw_others; /* the other boards' prefixes, where they differ */
};

struct kernel_list {
	struct kernel *k;
	size_t n;	       /* newest first */
	char *running_release; /* uname -r on a live system, NULL with --root */
	bool only;	       /* loaded for one version asked for (kernels_load's only) */
};

/* Lists installed kernels in the root (lib/modules/VER opens with libkmod,
 * also usr/lib/modules/VER; or boot/vmlinuz-VER, usr/lib/modules/VER/vmlinuz
 * or lib/modules/VER/vmlinuz exists; or, on Raspberry Pi OS, the module
 * tree and its flavour's boot/kernel*.img), newest first.
 * On a live system the running kernel is added if it is not installed.
 * If only is set, lists just that version (it need not be installed, but
 * then its config must be found). Reads each kernel's facts: config (order
 * of DESIGN section 3: /proc/config.gz only for the running kernel on a
 * live system; else boot/config-VER, lib/modules/VER/config,
 * usr/lib/modules/VER/config; then the image's IKCONFIG block:
 * boot/vmlinuz-VER, usr/lib/modules/VER/vmlinuz, lib/modules/VER/vmlinuz;
 * then configs.ko in the module tree; then a Raspberry Pi kernel*.img),
 * then System.map / kallsyms. Errors in one kernel's config are printed
 * and kept in config_error; a config found nowhere sets config_error and
 * config_missing without a message (the policy may still decide the
 * kernel: kernels_apply_policy); the function itself fails only on system
 * errors. */
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

struct policy;
/* For each kernel whose config was found nowhere: a [kernel GLOB] section
 * of the policy that sets default= decides it (memcg taken as built, its
 * default and rule from the section; config_error cleared); otherwise the
 * error naming every place looked at is recorded. */
void kernels_apply_policy(struct kernel_list *l, const struct policy *p, bool brief);
/* brief (status): the error says how many places were looked in (the
 * places themselves under -v) and the policy lines that would decide it */

/* Shared by facts/kernels.c and facts/kernel-config.c. */
extern const char *const kernel_module_trees[2]; /* "/lib/modules", "/usr/lib/modules" */
/* The Raspberry Pi OS image of ver (boot/kernel7l.img for 5.10.103-v7l+,
 * ...; in /boot/firmware or /boot) if it is in the root, else NULL. */
char *kernel_rpi_image(const struct root *r, const char *ver);
/* Reads k's config (see kernels_load); false when it is nowhere. */
bool kernel_load_config(const struct root *r, struct kernel *k);
