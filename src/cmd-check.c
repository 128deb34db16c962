/* cmd-check.c - `check [--kernel VER]`: compare without writing.
 * Exit 0 in sync, 1 drift, 5 in sync but the running kernel still runs
 * otherwise (a reboot is needed). */
#include <getopt.h>
#include <stdio.h>

#include "plan.h"
#include "report.h"
#include "util.h"

int cmd_check(struct context *ctx, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "kernel", required_argument, NULL, 'k' },
		{ NULL, 0, NULL, 0 },
	};
	const char *kernel = NULL;
	int c;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'k': kernel = optarg; break;
		default: return EXIT_USAGE;
		}
	}
	if (!no_more_args(argc, argv))
		return EXIT_USAGE;
	struct evaluation ev;
	int r = evaluate(ctx, kernel, &ev);
	if (r < 0) {
		evaluation_free(&ev);
		return -r;
	}
	int rc = !ev.in_sync ? EXIT_DRIFT : ev.reboot_pending ? EXIT_REBOOT : EXIT_OK;
	if (ctx->json) {
		struct json_object *o = json_report_new(ctx, "check");
		json_report_evaluation(o, ctx, &ev);
		json_report_emit(o, rc);
	} else if (log_verbosity >= 0) {
		for (size_t i = 0; i < ev.slots.n; i++) {
			const struct slot *s = &ev.slots.v[i];
			const struct slot_change *ch = &ev.ch[i];
			if (ch->state != SLOT_DRIFT && ch->state != SLOT_MISSING)
				continue;
			printf("%s: %s", slot_state_name(ch->state), s->path);
			for (size_t j = 0; j < ch->added.n; j++)
				printf(" (needs %s)", ch->added.v[j]);
			for (size_t j = 0; j < ch->removed.n; j++)
				printf(" (has %s)", ch->removed.v[j]);
			if (s->note)
				printf(": %s", s->note);
			printf("\n");
		}
		if (rc == EXIT_OK)
			printf("in sync\n");
		else if (rc == EXIT_REBOOT)
			printf("in sync; reboot needed: the running kernel has memcg %s\n",
			       run_state_name(ctx->sys.running));
	}
	evaluation_free(&ev);
	return rc;
}
