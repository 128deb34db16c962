/* plan/running.c - reboot pending or the kernel ignored it, see
 * plan/running.h */
#include "plan/running.h"
#include "lib/cmdline.h"
#include "lib/util.h"

#include <string.h>

/* The memcg switches a command line carries. */
struct switches {
	bool disable, enable;
};
static struct switches switches_of(const char *line)
{
	struct switches w = { false, false };
	if (!line)
		return w;
	struct cmdline c;
	cmdline_split(line, strlen(line), &c);
	w.disable = cmdline_has_item(&c, "cgroup_disable", "memory");
	w.enable = cmdline_has_item(&c, "cgroup_enable", "memory");
	cmdline_free(&c);
	return w;
}

/* The running kernel runs with memcg other than decided. Did it boot with
 * what the boot configuration gives it now (reboot or not, it runs so:
 * the kernel ignored it), or with an older line (a reboot is needed)? The
 * switches the booted line has beyond the configuration's must come from
 * a layer known to add them (the built-in command line, the Raspberry Pi
 * firmware's device tree prefix), else it booted with an older line.
 * Returns the text naming what wins, NULL for "reboot needed". */
static char *kernel_ignored(const struct context *ctx, const struct evaluation *ev, const struct kernel_decision *kd)
{
	_cleanup_free_ char *given = evaluation_boot_cmdline(ev, kd);
	if (!given || !ctx->sys.proc_cmdline)
		return NULL;
	struct switches g = switches_of(given), p = switches_of(ctx->sys.proc_cmdline);
	struct switches b = kd->dk.builtin_mode != BUILTIN_NONE ? switches_of(kd->dk.builtin_cmdline)
								: (struct switches){ false, false };
	/* the blob read, or where none was, the 6.12 kernels' firmware */
	bool firmware = kd->dk.fw_prefix ? fw_prefix_disables(&kd->dk) : kd->k->kc.family == FAMILY_RPI_FIRMWARE;
	if ((g.disable && !p.disable) || (g.enable && !p.enable))
		return NULL; /* the booted line lacks what the configuration gives */
	const char *layer = NULL;
	if (p.disable && !g.disable) {
		if (b.disable)
			layer = "its built-in command line (CONFIG_CMDLINE) adds cgroup_disable=memory";
		else if (firmware)
			layer = "the Raspberry Pi firmware's device tree prefix (/chosen/bootargs) adds "
				"cgroup_disable=memory";
		else
			return NULL;
	}
	if (p.enable && !g.enable) {
		if (!b.enable)
			return NULL;
		layer = "its built-in command line (CONFIG_CMDLINE) adds cgroup_enable=memory";
	}
	if (!layer)
		layer = "it does not follow the rules read from its config (a [kernel] section's default= or "
			"accepts-cgroup-enable= can correct them)";
	return xasprintf("%s booted with the command line the boot configuration gives it and runs with memcg %s, "
			 "not %s: the kernel ignored it: %s; a reboot does not change it",
			 kd->k->version, run_state_name(ctx->sys.running), memcg_state_name(kd->d.state), layer);
}

/* Reboot pending, or the kernel ignored it: the running kernel's memcg
 * state is not what its decision asks for (live system only). */
void judge_running(const struct context *ctx, struct evaluation *ev)
{
	ev->reboot_pending = false;
	free(ev->kernel_ignored);
	ev->kernel_ignored = NULL;
	if (ctx->root.live && ctx->sys.running != RUN_UNKNOWN) {
		for (size_t i = 0; i < ev->n_kd; i++) {
			struct kernel_decision *kd = &ev->kd[i];
			if (!kd->k->running || kd->unknown)
				continue;
			enum memcg_state now = ctx->sys.running == RUN_ON ? STATE_ON : STATE_OFF;
			if (now == kd->d.state)
				continue;
			char *ignored = kernel_ignored(ctx, ev, kd);
			if (ignored) {
				free(ev->kernel_ignored);
				ev->kernel_ignored = ignored;
				ev->in_sync = false;
			} else {
				ev->reboot_pending = true;
			}
		}
	}
}
