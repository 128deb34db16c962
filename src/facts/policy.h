/* facts/policy.h - the policy files (DESIGN section 4), loaded with inih through
 * a line-counting reader, merged in order (later files win), every value
 * remembering the file:line that set it. */
#pragma once

#include <stdbool.h>

#include "io/rootfs.h"

enum policy_mode { MODE_UNSET = 0, MODE_ON, MODE_OFF, MODE_AUTO };
enum policy_otherwise { OTHERWISE_KEEP, OTHERWISE_KERNEL, OTHERWISE_ON, OTHERWISE_OFF };
enum tristate { TRI_AUTO, TRI_YES, TRI_NO };
enum accounting { ACCOUNTING_FULL, ACCOUNTING_LITE };

/* Where a value came from: "FILE:LINE", or "built-in default".
 * file points at one of the policy's files[] strings (owned by the struct
 * policy, valid as long as it is): never free it. */
struct origin {
	char *file; /* display path, NULL = built-in default */
	unsigned line;
};

struct policy_kernel_section {
	char *glob;	       /* fnmatch(3) pattern on the kernel release */
	struct origin origin;  /* the section header */
	enum policy_mode mode; /* MODE_UNSET if not given */
	struct origin mode_origin;
	int default_state; /* -1 unset, else enum memcg_default */
	struct origin default_origin;
	int accepts_enable; /* -1 unset, 0/1 */
	struct origin accepts_enable_origin;
};

struct policy {
	enum policy_mode mode;
	struct origin mode_origin;
	enum accounting accounting;
	struct origin accounting_origin;
	bool strict;
	struct origin strict_origin;
	char *strict_despite; /* "FILE:LINE": strict = yes read from a file with an error */

	char **needs_memcg;
	size_t n_needs_memcg;
	struct origin needs_memcg_origin;
	bool needs_memcg_units;
	struct origin needs_memcg_units_origin;
	bool has_min_ram;
	unsigned long long min_ram;
	struct origin min_ram_origin;
	bool has_assume_ram;
	unsigned long long assume_ram;
	struct origin assume_ram_origin;
	enum policy_otherwise otherwise;
	struct origin otherwise_origin;

	struct policy_kernel_section *kernels;
	size_t n_kernels; /* in file order */

	enum tristate grub, systemd_boot, kernel_cmdline, rpi, regenerate;
	struct origin grub_origin, systemd_boot_origin, kernel_cmdline_origin, rpi_origin, regenerate_origin;
	/* [bootloaders] u-boot-menu: Debian's extlinux.conf for U-Boot */
	enum tristate u_boot_menu;
	struct origin u_boot_menu_origin;
	/* [bootloaders] flash-kernel: Debian's flash-kernel and its boot script */
	enum tristate flash_kernel;
	struct origin flash_kernel_origin;
	/* [bootloaders] secure-boot: is Secure Boot on where the root boots
	 * (auto: the firmware's variable on a live system, off in an image) */
	enum tristate secure_boot;
	struct origin secure_boot_origin;

	char **files;
	size_t n_files; /* display paths of the files read, in order */
};

/* Fills built-in defaults. policy_free() releases everything (after an
 * error too) and leaves the struct zeroed. */
void policy_init(struct policy *p);
void policy_free(struct policy *p);

/* Loads the policy: config_file (from --config) replaces the search;
 * otherwise, inside the root, the *.conf files of /usr/lib/memcg-policy.d
 * (sorted by name, hidden files skipped), /etc/memcg-policy.conf, the
 * *.conf files of /etc/memcg-policy.d; missing ones skipped.
 * Each file: regular file, owned by root or the invoking user, not writable
 * by group or others (checked with fstat on the opened descriptor); lines
 * counted by our own reader, lines over 200 bytes, unknown sections/keys,
 * bad values and duplicate keys in one file are errors.
 * Every directory from the root down to each place searched gets the
 * same owner check and may not be writable by group or others (a sticky
 * directory such as /tmp may, except for the drop-in directories, whose
 * files are all read).
 * --config FILE is opened as given (a path on the invoking system, like
 * any file named on a command line), with the same safety checks, its
 * directories (symlinks resolved) from / down included.
 * Errors are printed as "FILE:LINE: message" and return -EXIT_BADINPUT
 * (or -EXIT_SYSTEM for I/O errors); the first error stops the load.
 * p must have been set up with policy_init(); the files are merged into it.
 * Syntax: "key = value" (':' works as '=' too, '_' as '-' in keys), values
 * case-insensitive; a line holds at most 199 characters (200 bytes with
 * its line break); '#' or ';' at the start of a line, or after whitespace,
 * starts a comment; indentation is ignored (never a continuation line). */
int policy_load(const struct root *r, const char *config_file, struct policy *p);

/* policy_load with the administrator's file (/etc/memcg-policy.conf in the
 * root, or config_file) read as TEXT instead of its bytes on disk: what
 * the policy would be once TEXT is written there (set --dry-run). The
 * other files are read as by policy_load. text NULL: policy_load. */
int policy_load_as_if(const struct root *r, const char *config_file, const char *text, size_t len, struct policy *p);

/* The directory checks of policy_load for a file on the invoking system
 * (--config FILE), for a file that may not exist yet: 0 or a negative exit
 * code (reported). */
int policy_check_host_dirs(const char *file);

/* Loads one file's text (exposed for tests and fuzzing), merging it into p
 * (set up with policy_init()). display is the name used in messages and
 * origins. Returns 0, or -EXIT_BADINPUT (message printed) and then p is
 * unchanged: a file is checked whole before any of its values is taken. */
int policy_load_buffer(struct policy *p, const char *text, size_t len, const char *display);

/* The line of the error the last failing policy_load_buffer() reported
 * (0: the last call succeeded). For tests and fuzzing. */
unsigned policy_last_error_line(void);

/* For the set command: returns in *out (newly allocated) the policy text
 * with "mode = MODE" in its [policy] section, every other byte kept: the
 * value of each existing mode key in [policy] is replaced (comments after it
 * kept); else "mode = MODE" is inserted right after the first [policy]
 * header; else "[policy]\nmode = MODE\n" is appended (after a line break if
 * the text did not end with one). mode is on, off or auto. Pure; returns 0
 * or -EXIT_USAGE for another mode. */
int policy_set_mode_text(const char *text, size_t len, const char *mode, char **out);

/* The last [kernel GLOB] section matching release that sets the field, for
 * mode / default / accepts-cgroup-enable; NULL if none. */
const struct policy_kernel_section *policy_kernel_mode(const struct policy *p, const char *release);
const struct policy_kernel_section *policy_kernel_default(const struct policy *p, const char *release);
const struct policy_kernel_section *policy_kernel_accepts(const struct policy *p, const char *release);

const char *policy_mode_name(enum policy_mode m);
const char *policy_otherwise_name(enum policy_otherwise o);
const char *tristate_name(enum tristate t);
const char *policy_accounting_name(enum accounting a);
/* "FILE:LINE" or "built-in default", newly allocated. */
char *origin_str(const struct origin *o);
