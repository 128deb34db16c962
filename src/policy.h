/* policy.h - the policy files (DESIGN section 4), loaded with inih through
 * a line-counting reader, merged in order (later files win), every value
 * remembering the file:line that set it. */
#pragma once

#include <stdbool.h>

#include "rootfs.h"

enum policy_mode { MODE_UNSET = 0, MODE_ON, MODE_OFF, MODE_AUTO };
enum policy_otherwise { OTHERWISE_KEEP, OTHERWISE_KERNEL, OTHERWISE_ON, OTHERWISE_OFF };
enum tristate { TRI_AUTO, TRI_YES, TRI_NO };
enum accounting { ACCOUNTING_FULL, ACCOUNTING_LITE };

/* Where a value came from: "FILE:LINE", or "built-in default". */
struct origin {
	char *file; /* display path, NULL = built-in default */
	unsigned line;
};

struct policy_kernel_section {
	char *glob;                /* fnmatch(3) pattern on the kernel release */
	struct origin origin;      /* the section header */
	enum policy_mode mode;     /* MODE_UNSET if not given */
	struct origin mode_origin;
	int default_state;         /* -1 unset, else enum memcg_default */
	struct origin default_origin;
	int accepts_enable;        /* -1 unset, 0/1 */
	struct origin accepts_enable_origin;
};

struct policy {
	enum policy_mode mode;           struct origin mode_origin;
	enum accounting accounting;      struct origin accounting_origin;
	bool strict;                     struct origin strict_origin;

	char **needs_memcg; size_t n_needs_memcg; struct origin needs_memcg_origin;
	bool needs_memcg_units;          struct origin needs_memcg_units_origin;
	bool has_min_ram; unsigned long long min_ram;       struct origin min_ram_origin;
	bool has_assume_ram; unsigned long long assume_ram; struct origin assume_ram_origin;
	enum policy_otherwise otherwise; struct origin otherwise_origin;

	struct policy_kernel_section *kernels; size_t n_kernels; /* in file order */

	enum tristate grub, systemd_boot, kernel_cmdline, rpi, regenerate;
	struct origin grub_origin, systemd_boot_origin, kernel_cmdline_origin, rpi_origin, regenerate_origin;

	char **files; size_t n_files;    /* display paths of the files read, in order */
};

/* Fills built-in defaults. */
void policy_init(struct policy *p);
void policy_free(struct policy *p);

/* Loads the policy: config_file (from --config) replaces the search;
 * otherwise /usr/lib/memcg-policy.d/*.conf, /etc/memcg-policy.conf,
 * /etc/memcg-policy.d/*.conf inside the root, missing ones skipped.
 * Each file: regular file, owned by root or the invoking user, not writable
 * by group or others (checked with fstat on the opened descriptor); lines
 * counted by our own reader, lines over 200 bytes, unknown sections/keys,
 * bad values and duplicate keys in one file are errors.
 * --config FILE is opened as given (a path on the invoking system, like
 * any file named on a command line), with the same safety checks.
 * Errors are printed as "FILE:LINE: message" and return -EXIT_BADINPUT
 * (or -EXIT_SYSTEM for I/O errors). */
int policy_load(const struct root *r, const char *config_file, struct policy *p);

/* Loads one file's text (exposed for tests and fuzzing). display is the
 * name used in messages and origins. Returns 0 or -EXIT_BADINPUT. */
int policy_load_buffer(struct policy *p, const char *text, size_t len, const char *display);

/* The last [kernel GLOB] section matching release that sets the field, for
 * mode / default / accepts-cgroup-enable; NULL if none. */
const struct policy_kernel_section *policy_kernel_mode(const struct policy *p, const char *release);
const struct policy_kernel_section *policy_kernel_default(const struct policy *p, const char *release);
const struct policy_kernel_section *policy_kernel_accepts(const struct policy *p, const char *release);

const char *policy_mode_name(enum policy_mode m);
const char *policy_otherwise_name(enum policy_otherwise o);
const char *tristate_name(enum tristate t);
/* "FILE:LINE" or "built-in default", newly allocated. */
char *origin_str(const struct origin *o);
