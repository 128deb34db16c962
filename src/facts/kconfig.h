/* facts/kconfig.h - a kernel's build configuration turned into the facts the
 * decision needs (DESIGN section 1). Parsing is pure (kconfig_parse works
 * on a buffer); kconfig_inflate detects gzip by its magic bytes. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

enum memcg_default {
	MEMCG_DEFAULT_ON,
	MEMCG_DEFAULT_OFF,
};

/* How cgroup_disable=memory and cgroup_enable=memory combine. */
enum memcg_rule {
	RULE_DISABLE_WINS, /* mainline: cgroup_disable wins in any order, enable is unknown */
	RULE_LAST_WINS,	   /* old Debian, SUSE proposal, Raspberry Pi 6.12+ */
	RULE_ENABLE_WINS,  /* Raspberry Pi <= 6.6: enable always wins */
};

enum kernel_family {
	FAMILY_MAINLINE,
	FAMILY_DEBIAN_OLD,   /* CONFIG_MEMCG_DISABLED / CONFIG_CGROUP_MEM_RES_CTLR_DISABLED */
	FAMILY_SUSE,	     /* # CONFIG_MEMCG_DEFAULT_ENABLED is not set */
	FAMILY_RPI,	     /* Raspberry Pi Foundation tree, <= 6.6 */
	FAMILY_RPI_FIRMWARE, /* Raspberry Pi 6.12+: firmware adds cgroup_disable=memory */
};

enum builtin_cmdline_mode {
	BUILTIN_NONE,
	BUILTIN_PREPEND, /* x86 CONFIG_CMDLINE_BOOL; built-in first, bootloader later */
	BUILTIN_FALLBACK, /* DT CONFIG_CMDLINE_FROM_BOOTLOADER (or no mode set): used only when the bootloader passes none */
	BUILTIN_APPEND,	  /* DT CONFIG_CMDLINE_EXTEND: built-in appended last */
	BUILTIN_OVERRIDE, /* x86 CONFIG_CMDLINE_OVERRIDE / DT CONFIG_CMDLINE_FORCE: bootloader ignored */
};

struct kconfig_facts {
	bool cgroups_built; /* CONFIG_CGROUPS=y */
	bool memcg_built;   /* CONFIG_MEMCG=y (CONFIG_CGROUP_MEM_RES_CTLR=y before 3.6) */
	bool memcg_v1;	    /* CONFIG_MEMCG_V1=y, or a kernel before it existed */
	enum kernel_family family;
	enum memcg_default default_state; /* with no bootloader arguments, before the built-in line */
	enum memcg_rule rule;
	const char *default_reason;   /* static text: "CONFIG_MEMCG_DISABLED=y (Debian 3.6-4.6)" ... */
	const char *not_built_reason; /* static text when memcg is not built: "# CONFIG_MEMCG is not set" ... */
	int accepts_enable;	      /* 1 yes, 0 no: cgroup_enable=memory enables (from markers) */
	char *builtin_cmdline;	      /* CONFIG_CMDLINE value unquoted, NULL if empty/unset */
	enum builtin_cmdline_mode builtin_mode;
	char *arch;	      /* from the "# Linux/ARCH VER Kernel Configuration" header, or NULL */
	char *header_version; /* the VER in that header, or NULL */
	bool rpi_symbols;     /* CONFIG_BRCM_CHAR_DRIVERS / CONFIG_BCM_VCIO / CONFIG_USB_DWCOTG */
};

/* Does data start with gzip's magic bytes (1f 8b)? */
bool kconfig_is_gzip(const char *data, size_t len);

/* Inflates gzip data (magic 1f 8b) into a new buffer, or copies plain text.
 * Returns 0, -EBADMSG for corrupt or truncated gzip, -EFBIG past max bytes,
 * -ENOPKG when zlib cannot be loaded. */
int kconfig_inflate(const char *data, size_t len, size_t max, char **out, size_t *out_len);

/* Parses config text. release is the kernel release ("6.6.51+rpt-rpi-v8"),
 * used for Raspberry Pi detection and the version; may be NULL.
 * Returns 0, or -EBADMSG if the text is not a kernel config (binary data,
 * no CONFIG_ line at all); *bad_line receives the 1-based line that showed it
 * (0 if not one line). Every line must be blank, a comment, or
 * CONFIG_NAME=VALUE (a quoted VALUE must be a whole Kconfig string); when a
 * symbol is set twice the last line wins, as in Kconfig. bad_line may be
 * NULL. */
int kconfig_parse(const char *text, size_t len, const char *release, struct kconfig_facts *out, unsigned *bad_line);
void kconfig_facts_free(struct kconfig_facts *f);

/* Is the release a Raspberry Pi Foundation kernel by its name
 * (+rpt-rpi-*, -v7+, -v7l+, -v8+, -v8-16k, ...)? */
bool release_is_rpi(const char *release);

/* major*1000+minor from "6.12.3-..." (0 if it does not parse). */
unsigned release_major_minor(const char *release);

/* Version order as dpkg/rpmvercmp do it for releases: "6.1.0-10" > "6.1.0-9".
 * Returns <0, 0, >0. */
int release_compare(const char *a, const char *b);
