/* show/monitor.c - check --monitoring and --prometheus, see show/monitor.h. */
#include "show/monitor.h"

#include <errno.h>
#include <stdio.h>

#include "lib/diag.h"
#include "show/report.h"
#include "io/rootfs.h"
#include "io/txn.h"
#include "lib/util.h"

enum plugin_status plugin_status_of(int check_exit)
{
	switch (check_exit) {
	case EXIT_OK: return PLUGIN_OK;
	case EXIT_REBOOT: return PLUGIN_WARNING;
	case EXIT_DRIFT: return PLUGIN_CRITICAL;
	default: return PLUGIN_UNKNOWN;
	}
}

static const char *const status_names[] = { "OK", "WARNING", "CRITICAL", "UNKNOWN" };

static size_t drifting(const struct evaluation *ev)
{
	size_t n = 0;
	for (size_t i = 0; i < ev->slots.n; i++)
		if (slot_change_drifts(&ev->ch[i]))
			n++;
	return n;
}

/* One line: control bytes of names from the root never reach it. */
static void put_clean(const char *s)
{
	for (; *s; s++)
		putchar((unsigned char)*s < 0x20 || *s == 0x7f || *s == '|' ? '?' : *s);
}

void print_plugin_line(const struct context *ctx, const struct evaluation *ev, int check_exit)
{
	enum plugin_status st = plugin_status_of(check_exit);
	printf("MEMCG-POLICY %s - ", status_names[st]);
	if (!ev || !ev->def) {
		const struct diagnostic *d = diag_first_error();
		put_clean(d ? d->message : "the check could not run (see the messages on stderr)");
		putchar('\n');
		return;
	}
	struct next_boot nb;
	next_boot_of(ctx, ev, &nb);
	const struct kernel_decision *kd = ev->def;
	struct strbuf sb = { 0 };
	switch (st) {
	case PLUGIN_OK:
		sb_appendf(&sb, "in sync: memcg %s for %s", memcg_state_name(kd->d.state), kd->k->version);
		if (nb.running_known)
			sb_appendf(&sb, ", running %s", memcg_state_name(nb.running));
		break;
	case PLUGIN_WARNING:
		sb_appendf(
			&sb,
			"reboot pending: the boot configuration gives memcg %s for %s, the running kernel has memcg %s",
			memcg_state_name(kd->d.state), kd->k->version, memcg_state_name(nb.running));
		break;
	default: {
		_cleanup_free_ char *what = not_carried_text(ctx, ev);
		if (what) {
			sb_append(&sb, what);
			break;
		}
		if (ev->kernel_ignored && !drifting(ev)) {
			sb_append(&sb, ev->kernel_ignored);
			break;
		}
		sb_appendf(&sb, "drift: %zu boot slot%s not as decided (memcg %s for %s):", drifting(ev),
			   drifting(ev) == 1 ? "" : "s", memcg_state_name(kd->d.state), kd->k->version);
		for (size_t i = 0; i < ev->slots.n; i++)
			if (slot_change_drifts(&ev->ch[i]))
				sb_appendf(&sb, " %s", ev->slots.v[i].path);
		sb_append(&sb, "; memcg-policy apply fixes it");
		break;
	}
	}
	/* what the tool knows will go wrong after the next boot (a program
	 * that needs memcg with memcg off) reaches the monitoring too */
	for (size_t i = 0; i < kd->d.warnings.n; i++)
		sb_appendf(&sb, "; warning: %s", kd->d.warnings.v[i]);
	_cleanup_free_ char *text = sb_take(&sb);
	put_clean(text);
	printf(" | drift_slots=%zu;;1;0 reboot_pending=%d;1;;0;1\n", drifting(ev), ev->reboot_pending ? 1 : 0);
}

/* A label value: \, " and line breaks escaped as the text format wants. */
static void label_value(struct strbuf *sb, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\')
			sb_append(sb, "\\\\");
		else if (*s == '"')
			sb_append(sb, "\\\"");
		else if (*s == '\n')
			sb_append(sb, "\\n");
		else
			sb_appendc(sb, *s);
	}
}

static void metric(struct strbuf *sb, const char *name, const char *help, const char *label, const char *value,
		   long long v)
{
	sb_appendf(sb, "# HELP %s %s\n# TYPE %s gauge\n%s", name, help, name, name);
	if (label && value) {
		sb_appendf(sb, "{%s=\"", label);
		label_value(sb, value);
		sb_append(sb, "\"}");
	}
	sb_appendf(sb, " %lld\n", v);
}

char *nfd_feature_text(const struct context *ctx, const struct evaluation *ev)
{
	const char *v = "unknown";
	if (ev && ev->def) {
		struct next_boot nb;
		next_boot_of(ctx, ev, &nb);
		if (ev->reboot_pending)
			v = "pending";
		else if (nb.running_known)
			v = memcg_state_name(nb.running);
		else if (!ctx->root.live && nb.known)
			v = memcg_state_name(nb.state);
	}
	return xasprintf("memcg-policy.memcg=%s\n", v);
}

char *prometheus_text(const struct context *ctx, const struct evaluation *ev, int check_exit, long long now)
{
	struct strbuf sb = { 0 };
	metric(&sb, "memcg_policy_check_exit_code",
	       "Exit code of memcg-policy check: 0 in sync, 1 drift, 3 bad input, 4 system failure, 5 reboot pending.",
	       NULL, NULL, check_exit);
	if (ev && ev->def) {
		const struct kernel_decision *kd = ev->def;
		struct next_boot nb;
		next_boot_of(ctx, ev, &nb);
		metric(&sb, "memcg_policy_decision", "Decision for the default kernel: 1 memcg on, 0 off.", "kernel",
		       kd->k->version, kd->d.state == STATE_ON);
		if (nb.running_known)
			metric(&sb, "memcg_policy_running", "memcg in the running kernel: 1 on, 0 off.", NULL, NULL,
			       nb.running == STATE_ON);
		metric(&sb, "memcg_policy_in_sync", "1 when every boot slot matches the decisions.", NULL, NULL,
		       ev->in_sync);
		metric(&sb, "memcg_policy_drift_slots", "Boot slots that do not match the decisions.", NULL, NULL,
		       (long long)drifting(ev));
		metric(&sb, "memcg_policy_reboot_pending", "1 when the running kernel does not have the decided state.",
		       NULL, NULL, ev->reboot_pending);
	}
	metric(&sb, "memcg_policy_last_check_timestamp_seconds", "When the check ran (Unix time).", NULL, NULL, now);
	return sb_take(&sb);
}
