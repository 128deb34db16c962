/* cmd-set.c - `set on|off|auto [--no-apply]`: records mode= in the
 * [policy] section of /etc/memcg-policy.conf (or the --config file),
 * keeping its comments and other keys, then applies. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>

#include <json-c/json.h>

#include "journal.h"
#include "plan.h"
#include "policy.h"
#include "report.h"
#include "txn.h"
#include "util.h"

#include "context.h"

#define ADMIN_POLICY "/etc/memcg-policy.conf"

static int read_current(struct context *ctx, char **text, size_t *len, bool *exists, char **display)
{
	int r;
	*exists = true;
	if (ctx->config_path) {
		*display = xstrdup(ctx->config_path);
		r = read_host_file(ctx->config_path, MAX_INPUT_FILE, text, len);
	} else {
		*display = root_display(&ctx->root, ADMIN_POLICY);
		r = root_read_file(&ctx->root, ADMIN_POLICY, MAX_INPUT_FILE, text, len);
	}
	if (r == -ENOENT) {
		*exists = false;
		*text = xstrdup("");
		*len = 0;
		return 0;
	}
	if (r < 0)
		return report(r == -EINVAL || r == -EISDIR || r == -EFBIG ? EXIT_BADINPUT : EXIT_SYSTEM, "%s: %s",
			      *display, strerror(-r));
	return 0;
}

/* Writes the --config file (a host path) atomically: its directory is
 * opened as a root of its own. */
static int write_config(struct context *ctx, const char *text, size_t len)
{
	if (!ctx->config_path)
		return write_file_atomic(&ctx->root, ADMIN_POLICY, text, len, 0644);
	return write_host_file_atomic(ctx->config_path, text, len, 0644);
}

int policy_file_set_mode(struct context *ctx, const char *mode, bool *wrote, bool *exists)
{
	_cleanup_free_ char *text = NULL, *display = NULL, *updated = NULL;
	size_t len = 0;
	*wrote = false;
	int r = read_current(ctx, &text, &len, exists, &display);
	if (r < 0)
		return r;
	/* the file as it is must be a valid policy: never rewrite what we
	 * cannot read */
	struct policy check;
	policy_init(&check);
	r = *exists ? policy_load_buffer(&check, text, len, display) : 0;
	policy_free(&check);
	if (r < 0)
		return r;
	if (!text)
		return -EXIT_SYSTEM;
	r = policy_set_mode_text(text, len, mode, &updated);
	if (r < 0 || !updated)
		return r < 0 ? r : -EXIT_SYSTEM;
	if (*exists && streq(updated, text))
		return 0;
	r = write_config(ctx, updated, strlen(updated));
	if (r < 0)
		return r;
	*wrote = true;
	if (log_verbosity >= 0 && !ctx->json)
		printf("%s: mode = %s\n", display, mode);
	return 0;
}

int cmd_set(struct context *ctx, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "no-apply", no_argument, NULL, 'n' },
		{ NULL, 0, NULL, 0 },
	};
	bool no_apply = false;
	int c;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'n': no_apply = true; break;
		default: return EXIT_USAGE;
		}
	}
	if (argc - optind != 1) {
		report(EXIT_USAGE, "set: expected one of on, off, auto");
		return EXIT_USAGE;
	}
	const char *mode = argv[optind] ? argv[optind] : "";
	if (!streq(mode, "on") && !streq(mode, "off") && !streq(mode, "auto")) {
		report(EXIT_USAGE, "set: '%s' is not one of on, off, auto", mode);
		return EXIT_USAGE;
	}

	ctx->lock_fd = lock_take(&ctx->root);
	if (ctx->lock_fd < 0)
		return -ctx->lock_fd;
	bool wrote, exists;
	int r = policy_file_set_mode(ctx, mode, &wrote, &exists);
	if (r < 0)
		return -r;
	struct json_object *obj = NULL;
	if (ctx->json) {
		obj = json_report_new(ctx, "set");
		_cleanup_free_ char *path = ctx->config_path ? xstrdup(ctx->config_path) : xstrdup(ADMIN_POLICY);
		if (wrote)
			json_report_file(obj, path, exists ? "changed" : "created", NULL, NULL);
		json_report_set(obj, "changed", json_object_new_boolean(wrote));
	}
	if (no_apply) {
		if (!obj) {
			if (log_verbosity >= 0)
				printf("not applied yet (--no-apply): memcg-policy apply makes the boot configuration match\n");
			return EXIT_OK;
		}
		struct evaluation ev;
		r = evaluate(ctx, NULL, &ev);
		if (r >= 0)
			json_report_evaluation(obj, ctx, &ev);
		evaluation_free(&ev);
		return json_report_emit(obj, r < 0 ? -r : EXIT_OK);
	}
	struct apply_options o = { .report = obj };
	return apply_run(ctx, &o);
}
