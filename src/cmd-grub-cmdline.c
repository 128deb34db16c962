/* cmd-grub-cmdline.c - plumbing for the GRUB drop-in:
 *   grub-cmdline [--no-add] VALUE
 * prints VALUE with the managed tokens set as decided for the default
 * kernel, every other byte kept; --no-add only takes out contradicting
 * tokens (for GRUB_CMDLINE_LINUX_DEFAULT). On any error: no output and a
 * non-zero exit, so the drop-in keeps the value unchanged. */
#include <getopt.h>
#include <stdio.h>

#include "cmdline.h"
#include "decide.h"
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
		fprintf(stderr, "%s: grub-cmdline: exactly one VALUE expected\n", program_name);
		return EXIT_USAGE;
	}
	const char *value = argv[optind];
	int r = context_load_policy(ctx);
	if (r >= 0)
		r = context_load_kernels(ctx, NULL);
	struct kernel *k = r >= 0 ? kernels_default(&ctx->kernels) : NULL;
	if (r >= 0 && k && k->config_error)
		r = k->config_error;
	if (r >= 0)
		r = context_load_system(ctx);
	if (r < 0)
		return -r;
	if (!k)
		return -report(EXIT_BADINPUT, "no kernel found");
	struct decide_kernel dk;
	struct decision d;
	decide_kernel_init(&dk, k, &ctx->policy);
	decide(&ctx->policy, &dk, &ctx->sys, value, &d);
	struct strv none = {0};
	_cleanup_free_ char *out = cmdline_edit(value, strlen(value), &d.remove, no_add ? &none : &d.add, NULL);
	decision_free(&d);
	printf("%s\n", out);
	return EXIT_OK;
}
