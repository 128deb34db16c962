/* facts/context.h - what every command gets: the global options and, loaded on
 * demand, the root, the policy, the kernels and the system facts. */
#pragma once

#include <stdbool.h>

#include "facts/kernels.h"
#include "facts/policy.h"
#include "facts/probe.h"
#include "io/rootfs.h"

struct context {
	/* global options */
	const char *root_path;	 /* --root, NULL on the live system */
	const char *config_path; /* --config */
	bool json;
	int lock_fd; /* held lock (facts/journal.h lock_take), -1 if none */

	struct root root; /* opened by main before any command */
	struct policy policy;
	bool policy_loaded; /* allocated: context_unload frees it */
	int policy_result;  /* what loading it gave (0 or -exit code) */
	/* set --dry-run: the administrator's policy file as it would be
	 * written (facts/policy.h policy_load_as_if); NULL: as on disk */
	const char *policy_as_if;
	size_t policy_as_if_len;
	struct kernel_list kernels;
	bool kernels_loaded;
	int kernels_result;
	/* status: a kernel whose config is found nowhere is shown with its
	 * memcg default unknown (one short error, the places under -v), not
	 * a stop before anything is shown */
	bool configs_may_be_missing;
	struct system_facts sys;
	bool sys_loaded;
	int sys_result;
};

/* Loaders; each runs once and returns 0 or a negative exit code (the error
 * already printed). only_kernel limits kernels_load to one version. */
int context_load_policy(struct context *ctx);
int context_load_kernels(struct context *ctx, const char *only_kernel);
int context_load_system(struct context *ctx);
/* Forgets what the loaders read (policy, kernels, system facts), so that
 * the next load reads it again; context_free() also closes root and lock. */
void context_unload(struct context *ctx);
void context_free(struct context *ctx);

/* After a command's options: true if no argument is left, else says which
 * one is unexpected ("memcg-policy: CMD: unexpected argument 'X'"). */
bool no_more_args(int argc, char **argv);
