/* cmd/status.c - `status`: kernels, running state, policy, decision, every
 * slot and whether it is in sync. */
#include <getopt.h>
#include <stdio.h>

#include "cmd/commands.h"
#include "slots/grub/grub.h"
#include "plan/plan.h"
#include "show/report.h"
#include "lib/util.h"

static const char *builtin_where(enum builtin_cmdline_mode m)
{
	switch (m) {
	case BUILTIN_PREPEND: return "before the boot loader's";
	case BUILTIN_APPEND: return "after the boot loader's";
	case BUILTIN_OVERRIDE: return "the boot loader's are ignored";
	case BUILTIN_FALLBACK: return "used when the boot loader passes none";
	case BUILTIN_NONE: break;
	}
	return "not used";
}

static void print_kernel(const struct evaluation *ev, const struct kernel_decision *kd)
{
	const struct kernel *k = kd->k;
	printf("  %s%s%s\n", esc(k->version), k->running ? " (running)" : "", kd == ev->def ? " (default)" : "");
	printf("    config:        %s\n", k->config_path ? esc(k->config_path) : k->config_note ? k->config_note : "(none)");
	if (!kd->dk.memcg_built)
		printf("    memcg:         not built\n");
	else
		printf("    memcg:         default %s (%s)\n", kd->dk.default_state == MEMCG_DEFAULT_ON ? "on" : "off",
		       kd->dk.default_reason ? kd->dk.default_reason : "config");
	printf("    cgroup_enable: %s (%s)\n", kd->dk.accepts_enable ? "accepted" : "not accepted",
	       kd->dk.accepts_reason ? kd->dk.accepts_reason : "config");
	if (kd->dk.builtin_cmdline)
		printf("    built-in line: \"%s\" (%s)\n", kd->dk.builtin_cmdline, builtin_where(kd->dk.builtin_mode));
	printf("    decision:      %s%s (mode %s)\n", memcg_state_name(kd->d.state), kd->d.keep ? ", keep" : "",
	       policy_mode_name(kd->d.mode));
	for (size_t i = 0; i < kd->d.add.n; i++)
		printf("    must have:     %s\n", kd->d.add.v[i]);
	for (size_t i = 0; i < kd->d.remove.n; i++)
		printf("    must not have: %s\n", kd->d.remove.v[i]);
	for (size_t i = 0; i < kd->d.warnings.n; i++)
		printf("    warning:       %s\n", kd->d.warnings.v[i]);
}

int cmd_status(struct context *ctx, int argc, char **argv)
{
	static const struct option opts[] = { { NULL, 0, NULL, 0 } };
	if (getopt_long(argc, argv, "", opts, NULL) != -1)
		return bad_option("status", opts, argc, argv);
	if (!no_more_args(argc, argv))
		return EXIT_USAGE;
	struct evaluation ev;
	int r = evaluate(ctx, NULL, &ev);
	if (r < 0) {
		evaluation_free(&ev);
		return -r;
	}
	if (ctx->json) {
		struct json_object *o = json_report_new(ctx, "status");
		json_report_evaluation(o, ctx, &ev);
		evaluation_free(&ev);
		return json_report_emit(o, EXIT_OK);
	}
	printf("Root: %s%s\n", esc(ctx->root.path),
	       ctx->root.live ? " (live system)" : ctx->root.chroot ? " (a chroot: read as an image)" : "");
	printf("Kernels:\n");
	for (size_t i = 0; i < ev.n_kd; i++)
		print_kernel(&ev, &ev.kd[i]);
	if (ctx->root.live) {
		printf("Running:\n");
		printf("  memcg:         %s (%s)\n", run_state_name(ctx->sys.running),
		       ctx->sys.running_source ? ctx->sys.running_source : "no cgroup information");
		if (ctx->sys.proc_cmdline)
			printf("  command line:  %s\n", esc(ctx->sys.proc_cmdline));
	}
	printf("Policy:\n");
	for (size_t i = 0; i < ctx->policy.n_files; i++)
		printf("  file:          %s\n", esc(ctx->policy.files[i]));
	if (ctx->policy.n_files == 0)
		printf("  file:          none (built-in defaults)\n");
	for (size_t i = 0; i < ctx->sys.programs.n; i++)
		printf("  needs memcg:   %s\n", esc(ctx->sys.programs.v[i]));
	for (size_t i = 0; i < ctx->sys.units.n; i++)
		printf("  needs memcg:   %s\n", esc(ctx->sys.units.v[i]));
	if (ctx->sys.have_ram)
		printf("  RAM:           %lluM (%s)\n", ctx->sys.ram >> 20, ctx->sys.ram_source);
	printf("Boot slots:\n");
	if (ev.slots.n == 0)
		printf("  none found\n");
	for (size_t i = 0; i < ev.slots.n; i++) {
		const struct slot *s = &ev.slots.v[i];
		printf("  %-14s %-9s %s%s%s%s\n", slot_kind_name(s->kind), slot_state_name(ev.ch[i].state), esc(s->path),
		       s->kernel ? " [" : "", s->kernel ? esc(s->kernel) : "", s->kernel ? "]" : "");
		if (slot_note(s, &ev.ch[i]))
			printf("  %-14s %-9s   %s\n", "", "", esc(slot_note(s, &ev.ch[i])));
	}
	for (size_t i = 0; i < ev.slots.rejected.n; i++)
		printf("  rejected:      %s\n", esc(ev.slots.rejected.v[i]));
	grub_status(&ctx->root, &ev.slots, ev.ch);
	if (ev.no_boot_config) {
		_cleanup_free_ char *what = no_boot_config_text(ctx, &ev);
		printf("In sync: no: %s\n", esc(what));
	} else if (ev.grub_no_program) {
		_cleanup_free_ char *what = grub_no_program_text(ctx);
		printf("In sync: no: %s\n", esc(what));
	} else if (ev.kernel_ignored) {
		printf("In sync: no: %s\n", esc(ev.kernel_ignored));
	} else {
		printf("In sync: %s\n", ev.in_sync ? "yes" : "no");
	}
	if (ctx->root.live)
		printf("Reboot pending: %s\n", ev.reboot_pending ? "yes" : "no");
	evaluation_free(&ev);
	return EXIT_OK;
}
