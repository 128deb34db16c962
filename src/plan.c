/* plan.c - decisions for every kernel and the plan for every slot, see
 * plan.h. Loading happens through the context; the rest is pure. */
#include "plan.h"

#include <json-c/json.h>

#include "grub.h"
#include "util.h"

const struct kernel_decision *evaluation_find(const struct evaluation *ev, const char *release)
{
	for (size_t i = 0; i < ev->n_kd; i++)
		if (streq(ev->kd[i].k->version, release))
			return &ev->kd[i];
	return NULL;
}

static const struct decision *lookup_decision(void *data, const char *release)
{
	const struct evaluation *ev = data;
	const struct kernel_decision *kd = release ? evaluation_find(ev, release) : NULL;
	if (!kd)
		kd = ev->def;
	return kd ? &kd->d : NULL;
}

/* The command line the current configuration gives a kernel, for
 * otherwise = keep: what the running kernel booted with, else its own
 * slot, else the first global slot that holds a line. */
static char *configured_cmdline(const struct context *ctx, const struct evaluation *ev, const struct kernel *k,
				bool is_default)
{
	if (k->running && ctx->sys.proc_cmdline)
		return xstrdup(ctx->sys.proc_cmdline);
	for (size_t i = 0; i < ev->slots.n; i++) {
		const struct slot *s = &ev->slots.v[i];
		if (s->kernel && streq(s->kernel, k->version) && s->exists) {
			char *line = slot_cmdline(s);
			if (line)
				return line;
		}
	}
	if (!is_default)
		return NULL;
	for (size_t i = 0; i < ev->slots.n; i++) {
		const struct slot *s = &ev->slots.v[i];
		if (!s->kernel && s->exists) {
			char *line = slot_cmdline(s);
			if (line)
				return line;
		}
	}
	return NULL;
}

static void plan_slot(const struct evaluation *ev, struct slot *s, struct slot_change *c, const char *only)
{
	const char *kernel = s->kernel ? s->kernel : (ev->def ? ev->def->k->version : NULL);
	const struct kernel_decision *kd = kernel ? evaluation_find(ev, kernel) : NULL;
	c->kernel = kernel;
	if (s->unmanaged) {
		c->state = SLOT_UNMANAGED;
		return;
	}
	if (!kd) {
		c->state = SLOT_UNMANAGED;
		free(s->note);
		if (only)
			s->note = xasprintf("belongs to kernel %s, not to %s (--kernel)", kernel ? kernel : "?", only);
		else
			s->note = xasprintf("kernel %s is not installed in the root", kernel ? kernel : "?");
		return;
	}
	c->d = &kd->d;
	if (s->kind == SLOT_GRUB_CFG) {
		c->state = grub_cfg_state(s, lookup_decision, (void *)ev);
		return;
	}
	c->new_content = slot_edit(s, &kd->d, &c->added, &c->removed, &c->new_len);
	if (!c->new_content) {
		c->state = SLOT_UNMANAGED;
		return;
	}
	if (!s->exists) {
		/* created only to carry something: a keep decision, or one
		 * that adds nothing, creates no file. What the decision adds
		 * counts, not what this edit added: a file created from an
		 * entry that already has the tokens (an earlier run was
		 * killed between its renames) is still created. */
		c->changed = s->create && ((!kd->d.keep && kd->d.add.n > 0) || grub_slot_creates(s, &kd->d));
		c->state = c->changed ? SLOT_MISSING : SLOT_IN_SYNC;
		return;
	}
	c->changed = c->new_len != s->len || memcmp(c->new_content, s->content, s->len) != 0;
	c->state = c->changed ? SLOT_DRIFT : SLOT_IN_SYNC;
}

int evaluate(struct context *ctx, const char *only, struct evaluation *ev)
{
	memset(ev, 0, sizeof(*ev));
	int r = context_load_policy(ctx);
	if (r < 0)
		return r;
	r = context_load_kernels(ctx, only);
	if (r < 0)
		return r;
	for (size_t i = 0; i < ctx->kernels.n; i++)
		if (ctx->kernels.k[i].config_error)
			return ctx->kernels.k[i].config_error;
	r = context_load_system(ctx);
	if (r < 0)
		return r;
	struct kernel *defk = kernels_default(&ctx->kernels);
	if (!defk)
		return report(EXIT_BADINPUT, "no kernel found");
	r = slots_find(&ctx->root, &ctx->policy, defk->version, &ev->slots);
	if (r < 0)
		return r;

	ev->n_kd = ctx->kernels.n;
	ev->kd = xcalloc(ev->n_kd, sizeof(*ev->kd));
	for (size_t i = 0; i < ev->n_kd; i++) {
		struct kernel_decision *kd = &ev->kd[i];
		kd->k = &ctx->kernels.k[i];
		if (kd->k == defk)
			ev->def = kd;
		decide_kernel_init(&kd->dk, kd->k, &ctx->policy);
		_cleanup_free_ char *configured = configured_cmdline(ctx, ev, kd->k, kd->k == defk);
		decide(&ctx->policy, &kd->dk, &ctx->sys, configured, &kd->d);
	}

	ev->ch = xcalloc(ev->slots.n ? ev->slots.n : 1, sizeof(*ev->ch));
	ev->in_sync = true;
	for (size_t i = 0; i < ev->slots.n; i++) {
		plan_slot(ev, &ev->slots.v[i], &ev->ch[i], only);
		if (ev->ch[i].state == SLOT_DRIFT || ev->ch[i].state == SLOT_MISSING)
			ev->in_sync = false;
	}

	/* Reboot pending: the running kernel's memcg state is not what its
	 * decision asks for (live system only). */
	if (ctx->root.live && ctx->sys.running != RUN_UNKNOWN) {
		for (size_t i = 0; i < ev->n_kd; i++) {
			struct kernel_decision *kd = &ev->kd[i];
			if (!kd->k->running)
				continue;
			ev->running_known = true;
			enum memcg_state now = ctx->sys.running == RUN_ON ? STATE_ON : STATE_OFF;
			if (now != kd->d.state)
				ev->reboot_pending = true;
		}
	}
	return 0;
}

void evaluation_free(struct evaluation *ev)
{
	for (size_t i = 0; i < ev->n_kd; i++)
		decision_free(&ev->kd[i].d);
	free(ev->kd);
	for (size_t i = 0; i < ev->slots.n && ev->ch; i++) {
		free(ev->ch[i].new_content);
		strv_free(&ev->ch[i].added);
		strv_free(&ev->ch[i].removed);
	}
	free(ev->ch);
	slots_free(&ev->slots);
	memset(ev, 0, sizeof(*ev));
}

static struct json_object *strv_json(const struct strv *sv)
{
	struct json_object *a = json_object_new_array();
	for (size_t i = 0; i < sv->n; i++)
		json_object_array_add(a, json_object_new_string(sv->v[i]));
	return a;
}

static struct json_object *str_or_null(const char *s)
{
	return s ? json_object_new_string(s) : NULL;
}

static const char *family_name(enum kernel_family f)
{
	switch (f) {
	case FAMILY_MAINLINE: return "mainline";
	case FAMILY_DEBIAN_OLD: return "debian-old";
	case FAMILY_SUSE: return "suse";
	case FAMILY_RPI: return "raspberrypi";
	case FAMILY_RPI_FIRMWARE: return "raspberrypi-firmware";
	}
	return "?";
}

static const char *builtin_mode_name(enum builtin_cmdline_mode m)
{
	switch (m) {
	case BUILTIN_NONE: return "none";
	case BUILTIN_PREPEND: return "prepend";
	case BUILTIN_FALLBACK: return "fallback";
	case BUILTIN_APPEND: return "append";
	case BUILTIN_OVERRIDE: return "override";
	}
	return "?";
}

static const char *rule_name(enum memcg_rule r)
{
	switch (r) {
	case RULE_DISABLE_WINS: return "disable-wins";
	case RULE_LAST_WINS: return "last-wins";
	case RULE_ENABLE_WINS: return "enable-wins";
	}
	return "?";
}

struct json_object *evaluation_json(const struct context *ctx, const struct evaluation *ev)
{
	struct json_object *o = json_object_new_object();
	json_object_object_add(o, "root", json_object_new_string(ctx->root.path));
	struct json_object *ka = json_object_new_array();
	for (size_t i = 0; i < ev->n_kd; i++) {
		const struct kernel_decision *kd = &ev->kd[i];
		struct json_object *k = json_object_new_object();
		json_object_object_add(k, "version", json_object_new_string(kd->k->version));
		json_object_object_add(k, "default_kernel", json_object_new_boolean(kd == ev->def));
		json_object_object_add(k, "running", json_object_new_boolean(kd->k->running));
		json_object_object_add(k, "config", str_or_null(kd->k->config_path));
		json_object_object_add(k, "memcg_built", json_object_new_boolean(kd->dk.memcg_built));
		json_object_object_add(k, "default", json_object_new_string(kd->dk.default_state == MEMCG_DEFAULT_ON ? "on" : "off"));
		json_object_object_add(k, "default_reason", str_or_null(kd->dk.default_reason));
		json_object_object_add(k, "family", json_object_new_string(family_name(kd->k->kc.family)));
		json_object_object_add(k, "rule", json_object_new_string(rule_name(kd->dk.rule)));
		json_object_object_add(k, "accepts_cgroup_enable", json_object_new_boolean(kd->dk.accepts_enable));
		json_object_object_add(k, "accepts_cgroup_enable_source", str_or_null(kd->dk.accepts_reason));
		json_object_object_add(k, "builtin_cmdline", str_or_null(kd->dk.builtin_cmdline));
		json_object_object_add(k, "builtin_cmdline_mode", json_object_new_string(builtin_mode_name(kd->dk.builtin_mode)));
		json_object_object_add(k, "mode", json_object_new_string(policy_mode_name(kd->d.mode)));
		json_object_object_add(k, "keep", json_object_new_boolean(kd->d.keep));
		json_object_object_add(k, "decision", json_object_new_string(memcg_state_name(kd->d.state)));
		json_object_object_add(k, "reasons", strv_json(&kd->d.reasons));
		json_object_object_add(k, "warnings", strv_json(&kd->d.warnings));
		json_object_object_add(k, "add", strv_json(&kd->d.add));
		json_object_object_add(k, "remove", strv_json(&kd->d.remove));
		json_object_array_add(ka, k);
	}
	json_object_object_add(o, "kernels", ka);

	struct json_object *sa = json_object_new_array();
	for (size_t i = 0; i < ev->slots.n; i++) {
		const struct slot *s = &ev->slots.v[i];
		const struct slot_change *c = &ev->ch[i];
		struct json_object *j = json_object_new_object();
		json_object_object_add(j, "kind", json_object_new_string(slot_kind_name(s->kind)));
		json_object_object_add(j, "path", json_object_new_string(s->path));
		json_object_object_add(j, "kernel", str_or_null(s->kernel));
		json_object_object_add(j, "state", json_object_new_string(slot_state_name(c->state)));
		json_object_object_add(j, "note", str_or_null(s->note));
		if (c->added.n || c->removed.n) {
			json_object_object_add(j, "would_add", strv_json(&c->added));
			json_object_object_add(j, "would_remove", strv_json(&c->removed));
		}
		json_object_array_add(sa, j);
	}
	json_object_object_add(o, "slots", sa);
	json_object_object_add(o, "boot_dir", str_or_null(ev->slots.boot_dir));
	json_object_object_add(o, "rejected_boot_dirs", strv_json(&ev->slots.rejected));
	json_object_object_add(o, "in_sync", json_object_new_boolean(ev->in_sync));
	json_object_object_add(o, "reboot_pending", json_object_new_boolean(ev->reboot_pending));
	struct json_object *run = json_object_new_object();
	json_object_object_add(run, "memcg", ctx->root.live ? json_object_new_string(run_state_name(ctx->sys.running)) : NULL);
	json_object_object_add(run, "source", str_or_null(ctx->sys.running_source));
	json_object_object_add(run, "cmdline", str_or_null(ctx->sys.proc_cmdline));
	json_object_object_add(o, "running", run);
	struct json_object *pol = json_object_new_object();
	struct strv files = { ctx->policy.files, ctx->policy.n_files };
	json_object_object_add(pol, "files", strv_json(&files));
	json_object_object_add(pol, "mode", json_object_new_string(policy_mode_name(ctx->policy.mode)));
	json_object_object_add(o, "policy", pol);
	struct json_object *sys = json_object_new_object();
	json_object_object_add(sys, "needs_memcg_programs", strv_json(&ctx->sys.programs));
	json_object_object_add(sys, "needs_memcg_units", strv_json(&ctx->sys.units));
	json_object_object_add(sys, "ram", ctx->sys.have_ram ? json_object_new_uint64(ctx->sys.ram) : NULL);
	json_object_object_add(o, "system", sys);
	return o;
}
