/* cmd/status.c - `status`: kernels, running state, policy, decision, every
 * slot and whether it is in sync. */
#include <getopt.h>
#include <stdio.h>

#include "cmd/commands.h"
#include "slots/grub/grub.h"
#include "plan/plan.h"
#include "show/report.h"
#include "show/style.h"
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
	if (kd->unknown) {
		printf("    config:        none found (-v lists the places looked in)\n");
		printf("    memcg:         default unknown\n");
		printf("    decision:      unknown: [kernel %s] default = on (or off) in the policy decides it\n",
		       esc(k->version));
		return;
	}
	printf("    config:        %s\n", k->config_path   ? esc(k->config_path)
					  : k->config_note ? k->config_note
							   : "(none)");
	if (!kd->dk.memcg_built)
		printf("    memcg:         not built\n");
	else
		printf("    memcg:         default %s (%s)\n", kd->dk.default_state == MEMCG_DEFAULT_ON ? "on" : "off",
		       kd->dk.default_reason ? kd->dk.default_reason : "config");
	printf("    cgroup_enable: %s (%s)\n", kd->dk.accepts_enable ? "accepted" : "not accepted",
	       kd->dk.accepts_reason ? kd->dk.accepts_reason : "config");
	if (kd->dk.builtin_cmdline)
		printf("    built-in line: \"%s\" (%s)\n", kd->dk.builtin_cmdline, builtin_where(kd->dk.builtin_mode));
	if (kd->dk.fw_prefix)
		printf("    firmware line: %s%s%s (%s: /chosen/bootargs, before cmdline.txt)\n",
		       *kd->dk.fw_prefix ? "\"" : "", *kd->dk.fw_prefix ? esc(kd->dk.fw_prefix) : "none",
		       *kd->dk.fw_prefix ? "\"" : "", esc(kd->dk.fw_blob));
	printf("    decision:      %s%s (mode %s)\n", memcg_state_name(kd->d.state), kd->d.keep ? ", keep" : "",
	       policy_mode_name(kd->d.mode));
	for (size_t i = 0; i < kd->d.add.n; i++)
		printf("    must have:     %s\n", kd->d.add.v[i]);
	for (size_t i = 0; i < kd->d.remove.n; i++)
		printf("    must not have: %s\n", kd->d.remove.v[i]);
	/* the headline says each warning once; with -v each kernel's too */
	for (size_t i = 0; log_verbosity > 0 && i < kd->d.warnings.n; i++)
		printf("    warning:       %s\n", kd->d.warnings.v[i]);
}

/* A slot that follows a kernel without a config (its own, or the default
 * kernel's where it names none): its state is not known either. */
static bool slot_unknown(const struct evaluation *ev, const struct slot *s)
{
	if (!s->kernel)
		return ev->def && ev->def->unknown;
	for (size_t i = 0; i < ev->n_kd; i++)
		if (ev->kd[i].unknown && streq(ev->kd[i].k->version, s->kernel))
			return true;
	return false;
}

/* Folding of long lists without -v: more kernels than this, more slots
 * than this (of which this many in sync are shown) */
#define FOLD_KERNELS 3
#define FOLD_SLOTS 12
#define FOLD_SLOTS_SHOWN 4

static bool same_decision(const struct kernel_decision *a, const struct kernel_decision *b)
{
	return a->d.state == b->d.state && a->d.keep == b->d.keep && a->d.mode == b->d.mode;
}

/* " and N more" for one printf (lives until the next call) */
static const char *and_more(size_t n)
{
	static char buf[32];
	snprintf(buf, sizeof(buf), " and %zu more", n);
	return buf;
}

static const char *state_upper(enum memcg_state s) { return s == STATE_ON ? "ON" : "OFF"; }

/* The answer first: what the next boot gives memcg and the rule that
 * decides it (or why the boot configuration does not carry it), the
 * running state and whether a reboot is needed, every warning. The
 * detail follows. */
static void print_headline(const struct context *ctx, const struct evaluation *ev, const char *not_carried)
{
	const struct kernel_decision *def = ev->def;
	if (!def)
		return;
	struct next_boot nb;
	next_boot_of(ctx, ev, &nb);
	const struct decision *d = &def->d;
	const char *why = d->why < d->reasons.n ? d->reasons.v[d->why] : "?";
	printf("Next boot (%s): %smemcg %s%s", esc(nb.kernel), style_begin(STYLE_STATE),
	       nb.known ? state_upper(nb.state) : "unknown", style_end());
	_cleanup_free_ char *problem = NULL;
	if (def->unknown)
		problem =
			xasprintf("no kernel config for %s: [kernel %s] default = on (or off) in the policy decides it",
				  def->k->version, def->k->version);
	else if (not_carried)
		problem = xstrdup(not_carried);
	else if (ev->kernel_ignored && !nb.ignored)
		problem = xstrdup(ev->kernel_ignored);
	bool in_sync = !problem && (ev->in_sync || nb.ignored);
	if (problem)
		printf(" \u2014 %snot in sync%s: %s\n", style_begin(STYLE_BAD), style_end(), esc(problem));
	else if (!in_sync && nb.known && nb.state == d->state)
		printf(" \u2014 %snot in sync%s: the boot configuration lacks what the policy asks; memcg-policy "
		       "apply writes it\n",
		       style_begin(STYLE_BAD), style_end());
	else if (!in_sync)
		printf(" \u2014 %snot in sync%s: memcg-policy apply makes it %s\n", style_begin(STYLE_BAD), style_end(),
		       state_upper(d->state));
	else
		printf(" \u2014 %s\n", esc(why));
	/* where the boot configuration does not carry it: the decision */
	if (!in_sync && !def->unknown)
		printf("Decided: %smemcg %s%s \u2014 %s\n", style_begin(STYLE_STATE), state_upper(d->state),
		       style_end(), esc(why));
	if (ctx->root.live) {
		if (!nb.running_known)
			printf("Running: memcg unknown (no cgroup information)\n");
		else if (nb.ignored)
			printf("Running: %smemcg %s%s \u2014 %sthe kernel ignored its command line%s: %s\n",
			       style_begin(STYLE_STATE), state_upper(nb.running), style_end(), style_begin(STYLE_BAD),
			       style_end(), esc(ev->kernel_ignored));
		else
			printf("Running: %smemcg %s%s \u2014 %s%s%s\n", style_begin(STYLE_STATE),
			       state_upper(nb.running), style_end(),
			       style_begin(nb.reboot_needed ? STYLE_WARN : STYLE_GOOD),
			       nb.reboot_needed ? "reboot needed" : "no reboot needed", style_end());
	}
	struct strv said = { 0 }; /* a warning every kernel gives, once */
	for (size_t i = 0; i < ev->n_kd; i++)
		for (size_t j = 0; j < ev->kd[i].d.warnings.n; j++) {
			const char *w = ev->kd[i].d.warnings.v[j];
			if (strv_contains(&said, w))
				continue;
			strv_pushdup(&said, w);
			printf("%sWarning%s: %s\n", style_begin(STYLE_WARN), style_end(), esc(w));
		}
	strv_free(&said);
	printf("\n");
}

int cmd_status(struct context *ctx, int argc, char **argv)
{
	static const struct option opts[] = { { NULL, 0, NULL, 0 } };
	if (getopt_long(argc, argv, "", opts, NULL) != -1)
		return bad_option("status", opts, argc, argv);
	if (!no_more_args(argc, argv))
		return EXIT_USAGE;
	/* shown with the rest, one short error each (not for --json, whose
	 * kernels[] has no unknown default) */
	ctx->configs_may_be_missing = !ctx->json;
	_cleanup_evaluation_ struct evaluation ev = { 0 };
	int r = evaluate(ctx, NULL, &ev);
	if (r < 0)
		return -r;
	if (ctx->json) {
		struct json_object *o = json_report_new(ctx, "status");
		json_report_evaluation(o, ctx, &ev);
		return json_report_emit(o, EXIT_OK);
	}
	/* why nothing carries the decision, said at the top and at the end */
	_cleanup_free_ char *not_carried = not_carried_text(ctx, &ev);
	print_headline(ctx, &ev, not_carried);
	printf("Root: %s%s\n", esc(ctx->root.path),
	       ctx->root.live	  ? " (live system)"
	       : ctx->root.chroot ? " (a chroot: read as an image)"
				  : "");
	/* long lists folded (-v: everything): the default and the running
	 * kernel in full, the others a line each; slots that are in sync
	 * after the first few counted */
	bool fold = log_verbosity < 1;
	printf("Kernels:\n");
	for (size_t i = 0; ev.kd && i < ev.n_kd; i++) {
		const struct kernel_decision *kd = &ev.kd[i];
		if (!fold || ev.n_kd <= FOLD_KERNELS || kd == ev.def || kd->k->running || kd->unknown) {
			print_kernel(&ev, kd);
			continue;
		}
		/* a run of folded kernels with the same decision: one line */
		size_t n = 1;
		while (i + n < ev.n_kd && same_decision(&ev.kd[i + n], kd) && ev.kd + i + n != ev.def &&
		       !ev.kd[i + n].k->running && !ev.kd[i + n].unknown)
			n++;
		printf("  %s%s: decision %s%s (mode %s; -v shows %s)\n", esc(kd->k->version),
		       n > 1 ? and_more(n - 1) : "", memcg_state_name(kd->d.state), kd->d.keep ? ", keep" : "",
		       policy_mode_name(kd->d.mode), n > 1 ? "their facts" : "its facts");
		i += n - 1;
	}
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
	size_t shown_in_sync = 0, folded = 0;
	for (size_t i = 0; i < ev.slots.n; i++) {
		const struct slot *s = &ev.slots.v[i];
		const char *state = s->unmanaged || !slot_unknown(&ev, s) ? slot_state_name(ev.ch[i].state) : "unknown";
		if (fold && ev.slots.n > FOLD_SLOTS && ev.ch[i].state == SLOT_IN_SYNC && !s->unmanaged &&
		    shown_in_sync++ >= FOLD_SLOTS_SHOWN) {
			folded++;
			continue;
		}
		printf("  %-14s %-9s %s%s%s%s\n", slot_kind_name(s->kind), state, esc(s->path), s->kernel ? " [" : "",
		       s->kernel ? esc(s->kernel) : "", s->kernel ? "]" : "");
		if (slot_note(s, &ev.ch[i]))
			printf("  %-14s %-9s   %s\n", "", "", esc(slot_note(s, &ev.ch[i])));
		/* a boot script's line: its layers as the script sets them */
		if (s->kind == SLOT_BOOT_SCRIPT) {
			_cleanup_free_ char *set = boot_script_bootargs(s);
			if (set)
				printf("  %-14s %-9s   U-Boot runs: %s\n", "", "", esc(set + strspn(set, " \t")));
		}
		/* a UKI's line is in no file an admin edits: shown, and with
		 * -v where each part comes from */
		if (s->kind == SLOT_UKI && s->uki && s->content) {
			const struct uki_facts *u = s->uki;
			printf("  %-14s %-9s   the kernel gets: %s", "", "", esc(s->content));
			if (u->addons.n)
				printf(" (its own line, then %zu addon%s)", u->addons.n, u->addons.n == 1 ? "" : "s");
			printf("\n");
			if (u->profiles)
				printf("  %-14s %-9s   profile @0 of %zu (the default), its line %s%s\n", "", "",
				       u->profiles, u->profile_own ? "its own" : "the base one",
				       u->others_own ? "; other profiles with a line of their own are not judged" : "");
			for (size_t k = 0; log_verbosity > 0 && k < u->addons.n; k++)
				printf("  %-14s %-9s   addon %s: %s\n", "", "", esc(u->addons.v[k]),
				       esc(u->addon_lines.v[k]));
		}
	}
	if (folded)
		printf("  ... and %zu more in sync (-v lists them)\n", folded);
	for (size_t i = 0; i < ev.slots.rejected.n; i++)
		printf("  rejected:      %s\n", esc(ev.slots.rejected.v[i]));
	grub_status(&ctx->root, &ev.slots, ev.ch);
	size_t unknown = 0;
	for (size_t i = 0; i < ev.n_kd; i++)
		unknown += ev.kd[i].unknown;
	if (unknown) {
		printf("In sync: no: %zu kernel%s without a config\n", unknown, unknown == 1 ? "" : "s");
	} else if (not_carried) {
		printf("In sync: no: %s\n", esc(not_carried));
	} else if (ev.kernel_ignored) {
		printf("In sync: no: %s\n", esc(ev.kernel_ignored));
	} else {
		printf("In sync: %s\n", ev.in_sync ? "yes" : "no");
	}
	if (ctx->root.live)
		printf("Reboot pending: %s\n", ev.reboot_pending ? "yes" : "no");
	/* the errors (diag) say which configs are missing */
	return unknown ? EXIT_BADINPUT : EXIT_OK;
}
