/* cmd-grub-cmdline.c - plumbing for the GRUB drop-in:
 *   grub-cmdline [--no-add] VALUE
 * prints VALUE with the managed tokens set as decided for the default
 * kernel, every other byte kept; --no-add only takes out contradicting
 * tokens (for GRUB_CMDLINE_LINUX_DEFAULT). On any error: no output and a
 * non-zero exit, so the drop-in keeps the value unchanged. */
#include <getopt.h>
#include <stdio.h>

#include <json-c/json.h>

#include "cmdline.h"
#include "decide.h"
#include "report.h"
#include "util.h"

#include "context.h"

int cmd_grub_cmdline(struct context *ctx, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "no-add", no_argument, NULL, 'n' },
		{ NULL, 0, NULL, 0 },
	};
	bool no_add = false;
	int c;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'n': no_add = true; break;
		default: return EXIT_USAGE;
		}
	}
	if (argc - optind != 1) {
		report(EXIT_USAGE, "grub-cmdline: exactly one VALUE expected");
		return EXIT_USAGE;
	}
	const char *value = argv[optind];
	int r = context_load_policy(ctx);
	if (r >= 0)
		r = context_load_kernels(ctx, NULL);
	struct kernel *def = r >= 0 ? kernels_default(&ctx->kernels) : NULL;
	if (r >= 0 && !def)
		r = report(EXIT_BADINPUT, "no kernel found");
	for (size_t i = 0; r >= 0 && i < ctx->kernels.n; i++)
		if (ctx->kernels.k[i].config_error)
			r = ctx->kernels.k[i].config_error;
	if (r >= 0)
		r = context_load_system(ctx);
	if (r < 0)
		return -r;

	/* One command line serves every kernel in the menu. Where all kernels
	 * are decided alike, it carries the union of their tokens (each is
	 * harmless where another kernel ignores it: cgroup_enable=memory is
	 * an unknown parameter on a mainline kernel); otherwise the default
	 * kernel's decision is used and the others show drift in status. */
	struct strv add = {0}, remove = {0};
	struct decision *d = xcalloc(ctx->kernels.n, sizeof(*d));
	bool alike = true;
	size_t idef = 0;
	for (size_t i = 0; i < ctx->kernels.n; i++) {
		struct decide_kernel dk;
		decide_kernel_init(&dk, &ctx->kernels.k[i], &ctx->policy);
		decide(&ctx->policy, &dk, &ctx->sys, value, &d[i]);
		if (&ctx->kernels.k[i] == def)
			idef = i;
	}
	for (size_t i = 0; i < ctx->kernels.n; i++)
		if (d[i].keep != d[idef].keep || d[i].state != d[idef].state)
			alike = false;
	for (size_t i = 0; i < ctx->kernels.n; i++) {
		if (!alike && i != idef)
			continue;
		for (size_t j = 0; j < d[i].add.n; j++)
			if (!strv_contains(&add, d[i].add.v[j]))
				strv_pushdup(&add, d[i].add.v[j]);
	}
	for (size_t i = 0; i < ctx->kernels.n; i++) {
		if (!alike && i != idef)
			continue;
		for (size_t j = 0; j < d[i].remove.n; j++)
			if (!strv_contains(&remove, d[i].remove.v[j]) && !strv_contains(&add, d[i].remove.v[j]))
				strv_pushdup(&remove, d[i].remove.v[j]);
	}
	if (!alike)
		report_warn("the installed kernels are decided differently; the GRUB command line follows the "
			    "default kernel %s (see memcg-policy status)", def->version);
	for (size_t i = 0; i < ctx->kernels.n; i++)
		decision_free(&d[i]);
	free(d);
	struct strv none = {0};
	_cleanup_free_ char *out = cmdline_edit(value, strlen(value), &remove, no_add ? &none : &add, NULL);
	strv_free(&add);
	strv_free(&remove);
	if (ctx->json) {
		struct json_object *o = json_report_new(ctx, "grub-cmdline");
		json_report_set(o, "grub_value", json_object_new_string(out));
		return json_report_emit(o, EXIT_OK);
	}
	printf("%s\n", out);
	return EXIT_OK;
}
