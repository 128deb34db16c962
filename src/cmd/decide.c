/* cmd/decide.c - `decide [--kernel VER] [--explain]`: "on" or "off" alone
 * on the first line for the default kernel (or VER); --explain adds every
 * rule that led there and the file:line that set it. */
#include <getopt.h>
#include <stdio.h>

#include "cmd/commands.h"
#include "lib/diag.h"
#include "plan/plan.h"
#include "show/report.h"
#include "lib/util.h"

int cmd_decide(struct context *ctx, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "kernel", required_argument, NULL, 'k' },
		{ "explain", no_argument, NULL, 'e' },
		{ NULL, 0, NULL, 0 },
	};
	const char *kernel = NULL;
	bool explain = false;
	int c;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'k': kernel = optarg; break;
		case 'e': explain = true; break;
		default: return bad_option("decide", opts, argc, argv);
		}
	}
	if (!no_more_args(argc, argv))
		return EXIT_USAGE;
	_cleanup_evaluation_ struct evaluation ev = { 0 };
	int r = evaluate(ctx, kernel, &ev);
	if (r < 0)
		return -r;
	const struct kernel_decision *kd = ev.def;
	for (size_t i = 0; i < kd->d.warnings.n; i++)
		diag_warn("%s", kd->d.warnings.v[i]);
	if (ctx->json) {
		struct json_object *o = json_report_new(ctx, "decide");
		json_report_evaluation(o, ctx, &ev);
		json_report_emit(o, EXIT_OK);
	} else {
		printf("%s\n", memcg_state_name(kd->d.state));
		if (explain) {
			printf("kernel: %s%s\n", esc(kd->k->version), kd->k->running ? " (running)" : "");
			printf("config: %s\n", kd->k->config_path   ? esc(kd->k->config_path)
					       : kd->k->config_note ? kd->k->config_note
								    : "(none)");
			for (size_t i = 0; i < ctx->policy.n_files; i++)
				printf("policy file: %s\n", esc(ctx->policy.files[i]));
			if (ctx->policy.n_files == 0)
				printf("policy file: none (built-in defaults)\n");
			for (size_t i = 0; i < kd->d.reasons.n; i++)
				printf("rule: %s\n", kd->d.reasons.v[i]);
			for (size_t i = 0; i < kd->d.add.n; i++)
				printf("add: %s\n", kd->d.add.v[i]);
			for (size_t i = 0; i < kd->d.remove.n; i++)
				printf("remove: %s\n", kd->d.remove.v[i]);
			if (kd->d.keep)
				printf("keep: nothing is added or removed\n");
		}
	}
	return EXIT_OK;
}
