/* facts/kconfig-int.h - private to the kernel config modules (facts/kconfig.c: gzip and
 * the line parser; facts/kconfig-facts.c: what the parsed symbols mean). */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "facts/kconfig.h"

/* The symbols the facts are made of, without the CONFIG_ prefix. */
enum sym {
	SYM_CGROUPS,
	SYM_MEMCG,
	SYM_CGROUP_MEM_RES_CTLR,
	SYM_MEMCG_DISABLED,
	SYM_CGROUP_MEM_RES_CTLR_DISABLED,
	SYM_MEMCG_DEFAULT_ENABLED,
	SYM_MEMCG_V1,
	SYM_CMDLINE,
	SYM_CMDLINE_BOOL,
	SYM_CMDLINE_OVERRIDE,
	SYM_CMDLINE_FORCE,
	SYM_CMDLINE_EXTEND,
	SYM_CMDLINE_FROM_BOOTLOADER,
	SYM_CMDLINE_FALLBACK,
	SYM_BRCM_CHAR_DRIVERS,
	SYM_BCM_VCIO,
	SYM_USB_DWCOTG,
	SYM_X86,
	SYM_OF,
	SYM_COUNT,
};

enum sym_state {
	SYM_ABSENT,  /* no line names it */
	SYM_NOT_SET, /* "# CONFIG_X is not set" */
	SYM_VALUE,   /* CONFIG_X=value (the last one wins, as in Kconfig) */
};

struct sym_value {
	enum sym_state state;
	const char *val; /* into the text, not terminated */
	size_t len;
	unsigned line;
};

struct parse_state {
	struct sym_value syms[SYM_COUNT];
	const char *header_arch, *header_ver;
	size_t header_arch_len, header_ver_len;
	bool have_header;
	unsigned assignments;
};

/* The facts of a parsed config (facts/kconfig-facts.c). */
void derive_facts(const struct parse_state *ps, const char *release, struct kconfig_facts *f);
