/* cmd/commands.h - the command layer: one file per command (src/cmd/NAME.c),
 * dispatched by main.c's table, each working from a context (facts/context.h).
 * Commands call the stages, turn their results into output, and leave the
 * diagnostics the stages recorded (lib/diag.h) for main to print. */
#pragma once

#include <stdbool.h>

#include "facts/context.h"

struct json_object;
struct option;

/* After getopt_long returned '?' (opterr is 0): records the one message
 * for it, "CMD: unknown option '--bogus' (see memcg-policy CMD --help)" or
 * "CMD: option '--kernel' needs a value (...)"; cmd NULL for the global
 * options. Returns EXIT_USAGE. */
int bad_option(const char *cmd, const struct option *opts, int argc, char **argv);

/* A command: argv[0] is the command's name; getopt state is reset before
 * each call. Returns an exit code (enum exit_code). */
typedef int (*command_fn)(struct context *ctx, int argc, char **argv);

/* Commands, one file each (src/cmd/NAME.c). */
int cmd_status(struct context *ctx, int argc, char **argv);
int cmd_decide(struct context *ctx, int argc, char **argv);
int cmd_apply(struct context *ctx, int argc, char **argv);
int cmd_check(struct context *ctx, int argc, char **argv);
int cmd_set(struct context *ctx, int argc, char **argv);
int cmd_revert(struct context *ctx, int argc, char **argv);
int cmd_bench(struct context *ctx, int argc, char **argv);
int cmd_grub_cmdline(struct context *ctx, int argc, char **argv);

/* apply, shared by `apply` and `set` */
struct apply_options {
	const char *kernel;
	bool dry_run;
	bool no_regenerate;
	bool regenerate; /* --regenerate: always, with --root in a private mount namespace */
	bool hook;
	struct json_object *report; /* --json: the object to fill (set's); NULL: apply's own */
	/* set's: the mode was just recorded; bad input or a system failure
	 * that leaves the boot configuration as it was is EXIT_RECORDED */
	bool recorded;
};
int apply_run(struct context *ctx, const struct apply_options *o);

/* Records mode = MODE in the [policy] section of /etc/memcg-policy.conf
 * (or the --config file), keeping the rest; the file must be a valid
 * policy. Used by set and revert --policy; the caller holds the lock.
 * Returns 0 or a negative exit code (reported). */
int policy_file_set_mode(struct context *ctx, const char *mode, bool *wrote, bool *exists);
