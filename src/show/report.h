/* show/report.h - the --json output (DESIGN section 3; the contract is
 * schema/memcg-policy.schema.json): one JSON object on stdout per run,
 * errors included, with every key always present (null when unknown) and
 * every path absolute inside the root.
 *
 * With --json, main calls json_output_begin() before the command runs: the
 * real standard output is kept for the object, and file descriptor 1 points
 * at /dev/null, so neither text of the tool nor of a program it runs (the
 * root's update-grub) can reach it. Diagnostics (lib/diag.h) still go to
 * stderr, and are the object's "errors" and "warnings". */
#pragma once

#include <stdbool.h>

#include "facts/context.h"
#include "decide/decide.h"
#include "plan/plan.h"

struct json_object;

/* The version of the contract --json prints (schema_version): 2 since
 * the keys are one style, reasons are data and one field says reboot. */
#define JSON_SCHEMA_VERSION 2

/* Keeps the real stdout for the object and silences fd 1; root_path is
 * --root (NULL on the live system). Called again (global options after
 * the command name), it only notes root_path. Returns 0 or -errno. */
int json_output_begin(const char *root_path);
bool json_output_active(void);
/* Flushes the object's stream; false on a write error. */
bool json_output_end(void);

/* A report object for command: every key of the contract, with null or
 * empty values; the command fills what it knows. */
struct json_object *json_report_new(const struct context *ctx, const char *command);
/* The state an evaluation shows: kernels, slots, in_sync, reboot,
 * running, policy, system, decision, kernel, next_boot. */
void json_report_evaluation(struct json_object *o, const struct context *ctx, const struct evaluation *ev);
/* One entry of files[]: a path inside the root, what happened to it
 * ("changed", "created", "removed", "restored", "regenerated"), the tokens
 * added and removed (NULL: none). */
void json_report_file(struct json_object *o, const char *path, const char *action, const struct strv *added,
		      const struct strv *removed);
/* Replaces the value of a key (v owned; NULL sets null). */
void json_report_set(struct json_object *o, const char *key, struct json_object *v);
/* Prints the object with exit_code, errors and warnings, once; frees it.
 * Returns exit_code. */
int json_report_emit(struct json_object *o, int exit_code);
/* For main: where a command ended without printing its object (a usage
 * error, an error before the evaluation), prints one with what is known. */
void json_report_fallback(const struct context *ctx, const char *command, int exit_code);

/* The path inside the root for a path shown to the user ("ROOT/x" ->
 * "/x"); other paths as they are. Owned by the caller. */
char *json_root_path(const struct context *ctx, const char *display);

/* What the next boot gives memcg and whether that needs a reboot, from the
 * evaluation: the default kernel's decision when every slot is in sync,
 * else the state its configured command line gives. running is false when
 * the running state is unknown (an image, no cgroup information). */
struct next_boot {
	bool known;
	enum memcg_state state;
	const char *kernel;
	bool running_known;
	enum memcg_state running;
	bool reboot_needed;
	/* the next boot's kernel runs now, booted with this line, and runs
	 * otherwise all the same (evaluation.kernel_ignored): the next boot
	 * will not have the state the line gives either */
	bool ignored;
	/* a dry run's: the next boot's state as the files are now, said
	 * after the state the run would leave ("(now: on)") */
	bool now_known;
	enum memcg_state now;
};
void next_boot_of(const struct context *ctx, const struct evaluation *ev, struct next_boot *nb);
/* A running memcg state as --json writes it: run_state_name()'s (and a
 * saved bench run's) "not built" is "not_built"; the others as they are. */
const char *json_memcg_word(const char *name);
/* The one reboot state of --json ("reboot"): "needed" (the next boot's
 * memcg differs from the running one, or the running kernel is not as
 * decided: check exits 2), "not_needed", "kernel_ignores" (the kernel
 * booted with the configured line and runs otherwise: a reboot does not
 * change it), "unknown" (a live system whose running or next state is not
 * known), "not_live" (--root: an image has no running kernel). */
const char *reboot_state_name(const struct context *ctx, const struct evaluation *ev, const struct next_boot *nb);
/* Prints the human line for it: "next boot (VER): memcg off; running now:
 * memcg on: reboot needed". */
void print_next_boot(const struct context *ctx, const struct next_boot *nb);

/* Prints a JSON object (json-c), pretty, with a newline: the one object of
 * a --json run (show/report.h), or to stdout. */
void print_json(struct json_object *obj);

/* Records kept because their files are on a boot file system that is not
 * mounted: dirs holds that file system's directory once a record; said
 * once a directory as a warning ("DIR: not mounted: N records kept"). */
void report_unmounted(const struct root *r, const struct strv *dirs);

/* evaluation's no_boot_config, said: where nothing was found, what the
 * next boot misses, what to do. */
char *no_boot_config_text(const struct context *ctx, const struct evaluation *ev);
/* An image whose GRUB data carries tokens, without the program its GRUB
 * drop-in runs (evaluation.grub_no_program): what to say and do. */
char *grub_no_program_text(const struct context *ctx);
/* Why nothing the tool may write carries the decision to the next boot
 * (no_boot_config, else grub_no_program): the one of the two texts above
 * that applies, or NULL. */
char *not_carried_text(const struct context *ctx, const struct evaluation *ev);
