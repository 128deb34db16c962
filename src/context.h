/* context.h - what every command gets: the global options and, loaded on
 * demand, the root, the policy, the kernels and the system facts. */
#pragma once

#include <stdbool.h>

#include "kernels.h"
#include "policy.h"
#include "probe.h"
#include "rootfs.h"

struct context {
	/* global options */
	const char *root_path;   /* --root, NULL on the live system */
	const char *config_path; /* --config */
	bool json;
	int lock_fd;             /* held lock (journal.h lock_take), -1 if none */

	struct root root;        /* opened by main before any command */
	struct policy policy;
	bool policy_loaded;
	struct kernel_list kernels;
	bool kernels_loaded;
	struct system_facts sys;
	bool sys_loaded;
};

/* A command: argv[0] is the command's name; getopt state is reset before
 * each call. Returns an exit code (enum exit_code). */
typedef int (*command_fn)(struct context *ctx, int argc, char **argv);

/* Loaders; each runs once and returns 0 or a negative exit code (the error
 * already printed). only_kernel limits kernels_load to one version. */
int context_load_policy(struct context *ctx);
int context_load_kernels(struct context *ctx, const char *only_kernel);
int context_load_system(struct context *ctx);
/* Forgets what the loaders read (policy, kernels, system facts), so that
 * the next load reads it again; context_free() also closes root and lock. */
void context_unload(struct context *ctx);
void context_free(struct context *ctx);

/* Commands, one file each (src/cmd-NAME.c). */
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
	bool regenerate;   /* --regenerate: always, with --root in a private mount namespace */
	bool hook;
	struct json_object *report; /* --json: the object to fill (set's); NULL: apply's own */
};
int apply_run(struct context *ctx, const struct apply_options *o);

/* Records mode = MODE in the [policy] section of /etc/memcg-policy.conf
 * (or the --config file), keeping the rest; the file must be a valid
 * policy. Used by set and revert --policy; the caller holds the lock.
 * Returns 0 or a negative exit code (reported). */
int policy_file_set_mode(struct context *ctx, const char *mode, bool *wrote, bool *exists);

/* After a command's options: true if no argument is left, else says which
 * one is unexpected ("memcg-policy: CMD: unexpected argument 'X'"). */
bool no_more_args(int argc, char **argv);

/* Prints a JSON object (json-c), pretty, with a newline: the one object of
 * a --json run (report.h), or to stdout. */
struct json_object;
void print_json(struct json_object *obj);
