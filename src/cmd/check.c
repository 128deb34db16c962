/* cmd/check.c - `check [--kernel VER] [--monitoring] [--prometheus FILE]
 * [--nfd FILE]`:
 * compare without writing. Exit 0 in sync, 1 drift, 5 in sync but the
 * running kernel still runs otherwise (a reboot is needed); with
 * --monitoring one status line and the monitoring plugin exit codes
 * (show/monitor.h). */
#include <getopt.h>
#include <stdio.h>
#include <time.h>

#include "cmd/commands.h"
#include "lib/diag.h"
#include "show/monitor.h"
#include "plan/plan.h"
#include "show/report.h"
#include "io/txn.h"
#include "lib/util.h"

/* A file of the check's state for another program (--prometheus, --nfd),
 * written whole; text is freed. A failure to write it is the run's. */
static void write_state_file(const char *path, char *text, int *r, int *rc)
{
	int w = write_host_file_atomic(path, text, strlen(text), 0644);
	free(text);
	if (w < 0) {
		*rc = -w;
		*r = w;
	}
}

int cmd_check(struct context *ctx, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "kernel", required_argument, NULL, 'k' },
		{ "monitoring", no_argument, NULL, 'm' },
		{ "prometheus", required_argument, NULL, 'P' },
		{ "nfd", required_argument, NULL, 'N' },
		{ NULL, 0, NULL, 0 },
	};
	const char *kernel = NULL, *prometheus = NULL, *nfd = NULL;
	bool monitoring = false;
	int c;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'k': kernel = optarg; break;
		case 'm': monitoring = true; break;
		case 'P': prometheus = optarg; break;
		case 'N': nfd = optarg; break;
		default: bad_option("check", opts, argc, argv); return monitoring ? PLUGIN_UNKNOWN : EXIT_USAGE;
		}
	}
	if (!no_more_args(argc, argv))
		return monitoring ? PLUGIN_UNKNOWN : EXIT_USAGE;
	if (monitoring && ctx->json)
		return -diag_error(EXIT_USAGE,
				   "check: --monitoring prints one status line; it does not go with --json");
	if (prometheus && !*prometheus)
		return -diag_error(EXIT_USAGE, "check: --prometheus needs a file name");
	if (nfd && !*nfd)
		return -diag_error(EXIT_USAGE, "check: --nfd needs a file name");
	_cleanup_evaluation_ struct evaluation ev = { 0 };
	int r = evaluate(ctx, kernel, &ev);
	int rc = r < 0 ? -r : !ev.in_sync ? EXIT_DRIFT : ev.reboot_pending ? EXIT_REBOOT : EXIT_OK;
	if (prometheus)
		write_state_file(prometheus, prometheus_text(ctx, r < 0 ? NULL : &ev, rc, (long long)time(NULL)), &r,
				 &rc);
	if (nfd)
		write_state_file(nfd, nfd_feature_text(ctx, r < 0 ? NULL : &ev), &r, &rc);
	if (monitoring) {
		print_plugin_line(ctx, r < 0 ? NULL : &ev, rc);
		return (int)plugin_status_of(rc);
	}
	if (r < 0)
		return rc;
	if (ctx->json) {
		struct json_object *o = json_report_new(ctx, "check");
		json_report_evaluation(o, ctx, &ev);
		json_report_emit(o, rc);
	} else if (log_verbosity >= 0) {
		for (size_t i = 0; i < ev.slots.n; i++) {
			const struct slot *s = &ev.slots.v[i];
			const struct slot_change *ch = &ev.ch[i];
			if (!slot_change_drifts(ch) && ch->state != SLOT_NOT_REGENERATED)
				continue;
			printf("%s: %s", slot_state_name(ch->state), esc(s->path));
			for (size_t j = 0; j < ch->added.n; j++)
				printf(" (needs %s)", esc(ch->added.v[j]));
			for (size_t j = 0; j < ch->removed.n; j++)
				printf(" (has %s)", esc(ch->removed.v[j]));
			if (slot_note(s, ch))
				printf(": %s", esc(slot_note(s, ch)));
			printf("\n");
		}
		if (ev.no_boot_config) {
			_cleanup_free_ char *what = no_boot_config_text(ctx, &ev);
			printf("not in sync: %s\n", esc(what));
		}
		if (ev.grub_no_program) {
			_cleanup_free_ char *what = grub_no_program_text(ctx);
			printf("not in sync: %s\n", esc(what));
		}
		if (ev.kernel_ignored)
			printf("not in sync: %s\n", esc(ev.kernel_ignored));
		if (rc == EXIT_OK)
			printf("in sync\n");
		else if (rc == EXIT_REBOOT)
			printf("in sync; reboot needed: the running kernel has memcg %s\n",
			       run_state_name(ctx->sys.running));
	}
	return rc;
}
