/* cmd/set.c - `set on|off|auto [--no-apply|--dry-run]`: records mode= in
 * the [policy] section of /etc/memcg-policy.conf (or the --config file),
 * keeping its comments and other keys, then applies; --dry-run shows both
 * and writes nothing. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cmd/commands.h"
#include "io/jsonc.h"

#include "lib/diag.h"
#include "facts/journal.h"
#include "plan/plan.h"
#include "facts/policy.h"
#include "show/report.h"
#include "io/spawn.h"
#include "io/txn.h"
#include "lib/util.h"

#include "facts/context.h"

#define ADMIN_POLICY "/etc/memcg-policy.conf"

/* The file set writes: /etc/memcg-policy.conf in the root, or the
 * --config file; a --config that is a symbolic link is written at its
 * target (the file that was read), never replaced by a file of its own. */
struct target {
	char *path;    /* --config: the host path written (link resolved); NULL: in the root */
	char *display; /* for messages */
	bool via_link; /* --config named a symbolic link */
};

static int find_target(struct context *ctx, struct target *t)
{
	memset(t, 0, sizeof(*t));
	if (!ctx->config_path) {
		t->display = root_display(&ctx->root, ADMIN_POLICY);
		return 0;
	}
	struct stat st;
	if (lstat(ctx->config_path, &st) < 0) {
		if (errno != ENOENT)
			return diag_error(EXIT_SYSTEM, "%s: %s", ctx->config_path, strerror(errno));
		t->path = xstrdup(ctx->config_path);
		t->display = xstrdup(ctx->config_path);
		return 0;
	}
	t->path = realpath(ctx->config_path, NULL);
	if (!t->path) {
		int e = errno;
		if (e == ENOENT)
			return diag_error(EXIT_BADINPUT, "%s: a symbolic link to a missing file: not written",
					  ctx->config_path);
		return diag_error(EXIT_SYSTEM, "%s: %s", ctx->config_path, strerror(e));
	}
	t->via_link = S_ISLNK(st.st_mode);
	t->display = t->via_link ? xasprintf("%s -> %s", ctx->config_path, t->path) : xstrdup(ctx->config_path);
	return 0;
}

static void target_free(struct target *t)
{
	free(t->path);
	free(t->display);
}

static int read_current(struct context *ctx, const struct target *t, char **text, size_t *len, bool *exists)
{
	int r;
	*exists = true;
	if (t->path)
		r = read_host_file(t->path, MAX_INPUT_FILE, text, len);
	else
		r = root_read_file(&ctx->root, ADMIN_POLICY, MAX_INPUT_FILE, text, len);
	if (r == -ENOENT) {
		*exists = false;
		*text = xstrdup("");
		*len = 0;
		return 0;
	}
	if (r < 0)
		return diag_error(root_error_exit(r), "%s: %s", t->display, root_strerror(r));
	return 0;
}

/* Every check the policy gets when it is read (files: owner, mode, type,
 * syntax; the directories of the search path) before anything is written:
 * set never rewrites a policy it would refuse to use. */
static int check_policy(struct context *ctx, const struct target *t, bool exists)
{
	if (t->path && !exists)
		return policy_check_host_dirs(t->path);
	struct policy check;
	policy_init(&check);
	int r = policy_load(&ctx->root, t->path, &check);
	policy_free(&check);
	return r;
}

/* Writes the --config file (a host path) atomically: its directory is
 * opened as a root of its own. */
static int write_config(struct context *ctx, const struct target *t, const char *text, size_t len)
{
	if (!t->path)
		return write_file_atomic(&ctx->root, ADMIN_POLICY, text, len, 0644);
	return write_host_file_atomic(t->path, text, len, 0644);
}

/* The policy file's text with mode = MODE (*updated, owned) and whether
 * that differs from what is there (*differs; a missing file always does),
 * after every check the file gets when it is read. */
static int mode_text(struct context *ctx, const struct target *t, const char *mode, char **updated, bool *differs,
		     bool *exists, char **before)
{
	_cleanup_free_ char *text = NULL;
	size_t len = 0;
	*updated = NULL;
	int r = read_current(ctx, t, &text, &len, exists);
	if (r == 0)
		r = check_policy(ctx, t, *exists);
	if (r == 0 && !text)
		r = -EXIT_SYSTEM;
	if (r == 0) {
		r = policy_set_mode_text(text, len, mode, updated);
		if (r == 0 && !*updated)
			r = -EXIT_SYSTEM;
	}
	if (r == 0)
		*differs = !(*exists && streq(*updated, text));
	if (r == 0 && before)
		*before = TAKE_PTR(text);
	return r;
}

int policy_file_set_mode(struct context *ctx, const char *mode, bool *wrote, bool *exists)
{
	_cleanup_free_ char *updated = NULL;
	bool differs = false;
	*wrote = false;
	struct target t;
	int r = find_target(ctx, &t);
	if (r == 0)
		r = mode_text(ctx, &t, mode, &updated, &differs, exists, NULL);
	if (r == 0 && differs) {
		r = write_config(ctx, &t, updated, strlen(updated));
		if (r == 0) {
			*wrote = true;
			if (log_verbosity >= 0 && !ctx->json)
				printf("%s: mode = %s%s\n", esc(t.display), mode,
				       t.via_link ? " (written at the link's target)" : "");
		}
	}
	target_free(&t);
	return r;
}

/* After the mode is recorded: does a later file or a [kernel] section
 * decide another mode for a kernel? Then each is named, and set applies
 * nothing (the admin's own tokens are not taken out for a mode that does
 * not hold). Returns true when overridden. */
static bool overridden(struct context *ctx, const struct evaluation *ev, const char *mode, bool dry_run)
{
	const char *recorded = dry_run ? "would be recorded" : "is recorded";
	int want = streq(mode, "on") ? MODE_ON : streq(mode, "off") ? MODE_OFF : MODE_AUTO;
	bool any = false;
	for (size_t i = 0; i < ev->n_kd; i++) {
		const struct kernel_decision *kd = &ev->kd[i];
		if ((int)kd->d.mode == want)
			continue;
		const struct policy_kernel_section *ks = policy_kernel_mode(&ctx->policy, kd->k->version);
		_cleanup_free_ char *where =
			origin_str(ks && (int)ks->mode != want ? &ks->mode_origin : &ctx->policy.mode_origin);
		diag_warn("mode = %s %s, but %s sets mode = %s for %s", mode, recorded, where,
			  policy_mode_name(kd->d.mode), kd->k->version);
		any = true;
	}
	if (any)
		diag_warn("nothing %s: change or remove the setting named above, then run memcg-policy apply",
			  dry_run ? "would be applied" : "applied");
	return any;
}

/* set's --json report, begun: the policy file in files[] when it is (or
 * would be) written, and changed. */
static struct json_object *set_report(struct context *ctx, bool writes, bool exists)
{
	struct json_object *obj = json_report_new(ctx, "set");
	if (writes)
		json_report_file(obj, ctx->config_path ? ctx->config_path : ADMIN_POLICY,
				 exists ? "changed" : "created", NULL, NULL);
	json_report_set(obj, "changed", json_object_new_boolean(writes));
	return obj;
}

/* set --dry-run: what set would record and then what apply would do,
 * with the policy read as if the mode were recorded; no lock, nothing
 * written. */
static int set_dry_run(struct context *ctx, const char *mode)
{
	_cleanup_free_ char *updated = NULL, *before = NULL;
	bool differs = false, exists = false;
	struct target t;
	int r = find_target(ctx, &t);
	if (r == 0)
		r = mode_text(ctx, &t, mode, &updated, &differs, &exists, &before);
	if (r != 0 || !updated) {
		target_free(&t);
		return r < 0 ? -r : EXIT_SYSTEM;
	}
	struct json_object *obj = NULL;
	if (ctx->json) {
		obj = set_report(ctx, differs, exists);
	} else if (log_verbosity >= 0) {
		if (differs) {
			printf("%s: would record mode = %s%s\n", esc(t.display), mode,
			       t.via_link ? " (at the link's target)" : "");
			r = print_unified_diff(t.path ? t.path : ADMIN_POLICY, exists && before ? before : NULL,
					       exists && before ? strlen(before) : 0, updated, strlen(updated));
		} else
			printf("%s: mode = %s is recorded already\n", esc(t.display), mode);
	}
	target_free(&t);
	if (r < 0) {
		if (obj)
			json_object_put(obj);
		return -r;
	}
	ctx->policy_as_if = updated;
	ctx->policy_as_if_len = strlen(updated);
	_cleanup_evaluation_ struct evaluation ev = { 0 };
	r = evaluate(ctx, NULL, &ev);
	bool over = r >= 0 && overridden(ctx, &ev, mode, true);
	if (r < 0 || over) {
		if (obj && r >= 0)
			json_report_evaluation(obj, ctx, &ev);
		ctx->policy_as_if = NULL;
		int code = r < 0 ? -r : EXIT_DRIFT;
		return obj ? json_report_emit(obj, code) : code;
	}
	evaluation_free(&ev); /* apply looks again */
	struct apply_options o = { .dry_run = true, .report = obj };
	int rc = apply_run(ctx, &o);
	ctx->policy_as_if = NULL;
	return rc;
}

int cmd_set(struct context *ctx, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "no-apply", no_argument, NULL, 'n' },
		{ "dry-run", no_argument, NULL, 'd' },
		{ NULL, 0, NULL, 0 },
	};
	bool no_apply = false, dry_run = false;
	int c;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'n': no_apply = true; break;
		case 'd': dry_run = true; break;
		default: return bad_option("set", opts, argc, argv);
		}
	}
	if (argc - optind != 1) {
		diag_error(EXIT_USAGE, "set: expected one of on, off, auto");
		return EXIT_USAGE;
	}
	const char *mode = argv[optind] ? argv[optind] : "";
	if (!streq(mode, "on") && !streq(mode, "off") && !streq(mode, "auto")) {
		diag_error(EXIT_USAGE, "set: '%s' is not one of on, off, auto", mode);
		return EXIT_USAGE;
	}

	if (dry_run && no_apply) {
		diag_error(EXIT_USAGE, "set: --dry-run and --no-apply do not go together");
		return EXIT_USAGE;
	}
	if (dry_run)
		return set_dry_run(ctx, mode);

	ctx->lock_fd = lock_take(&ctx->root);
	if (ctx->lock_fd < 0)
		return -ctx->lock_fd;
	bool wrote = false, exists = false;
	int r = policy_file_set_mode(ctx, mode, &wrote, &exists);
	if (r < 0)
		return -r;
	/* what the policy now decides: overridden, nothing is applied */
	_cleanup_evaluation_ struct evaluation ev = { 0 };
	r = evaluate(ctx, NULL, &ev);
	bool over = r >= 0 && overridden(ctx, &ev, mode, false);
	struct json_object *obj = NULL;
	if (ctx->json)
		obj = set_report(ctx, wrote, exists);
	if (r < 0 || over || no_apply) {
		if (obj && r >= 0)
			json_report_evaluation(obj, ctx, &ev);
		int code = r < 0  ? (wrote && (r == -EXIT_BADINPUT || r == -EXIT_SYSTEM) ? EXIT_RECORDED : -r)
			   : over ? EXIT_DRIFT
				  : EXIT_OK;
		if (obj)
			return json_report_emit(obj, code);
		if (code == EXIT_RECORDED && log_verbosity >= 0)
			printf("mode = %s is recorded, but not applied: the boot configuration is as it was (see the "
			       "error)\n",
			       mode);
		if (!over && r >= 0 && log_verbosity >= 0)
			printf("not applied yet (--no-apply): memcg-policy apply makes the boot configuration match\n");
		return code;
	}
	evaluation_free(&ev); /* apply looks again */
	struct apply_options o = { .report = obj, .recorded = wrote };
	return apply_run(ctx, &o);
}
