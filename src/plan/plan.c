/* plan/plan.c - decisions for every kernel and the plan for every slot, see
 * plan/plan.h: gather (all the reading, through the context), then decide and
 * plan (pure: nothing read, nothing written, the slots left as found). */
#include "plan/plan.h"
#include "plan/running.h"

#include "lib/cmdline.h"
#include "lib/diag.h"
#include "slots/grub/grub.h"
#include "slots/table.h"
#include "slots/uki.h"
#include "lib/util.h"

const struct kernel_decision *evaluation_find(const struct evaluation *ev, const char *release)
{
	for (size_t i = 0; i < ev->n_kd; i++)
		if (streq(ev->kd[i].k->version, release))
			return &ev->kd[i];
	return NULL;
}

/* One GRUB command line serves every kernel of a menu. */
static const struct decision *lookup_decision(void *data, const char *release, const struct kernel_decision **own)
{
	const struct evaluation *ev = data;
	*own = release ? evaluation_find(ev, release) : NULL;
	return &ev->grub;
}

/* The command line the current configuration gives a kernel, for
 * otherwise = keep: what the running kernel booted with, else its own
 * slot, else the first global slot that holds a line. */
static char *configured_cmdline(const struct context *ctx, const struct evaluation *ev, const struct kernel *k,
				bool is_default)
{
	if (ctx && k->running && ctx->sys.proc_cmdline)
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

/* The kernel's limits on the line a slot gives it: a list whose memory
 * item cannot be taken out exactly, and an edit that pushes the line past
 * COMMAND_LINE_SIZE - 1 bytes for the kernel's architecture, are refused
 * (bad input); a line already past it is warned about. */
static int check_slot_line(const struct slot *s, const struct slot_change *c, const struct kernel *k)
{
	_cleanup_free_ char *old = s->content ? slot_cmdline(s) : NULL;
	if (old) {
		_cleanup_free_ char *bad = cmdline_edit_refused(old, strlen(old), &c->d->remove);
		if (bad)
			return diag_error(
				EXIT_BADINPUT,
				"%s: cannot take memory out of the list in '%s' without changing how the kernel "
				"reads its other items; edit it by hand",
				s->path, bad);
	}
	size_t size = cmdline_size_for_arch(k->kc.arch);
	if (!size)
		return 0;
	struct slot t = *s;
	t.content = c->new_content;
	t.len = c->new_len;
	_cleanup_free_ char *new = slot_cmdline(&t);
	/* cmdline.txt comes after the firmware's device tree prefix and a space */
	size_t pre = s->kind == SLOT_RPI && k->fw_prefix && *k->fw_prefix ? strlen(k->fw_prefix) + 1 : 0;
	const char *with = pre ? " with the firmware's device tree prefix" : "";
	size_t ol = (old ? strlen(old) : 0) + pre, nl = (new ? strlen(new) : 0) + pre;
	if (nl > size - 1 && nl > ol)
		return diag_error(EXIT_BADINPUT,
				  "%s: the command line would be %zu bytes%s, over the %zu a %s kernel keeps "
				  "(COMMAND_LINE_SIZE %zu): not changed",
				  s->path, nl, with, size - 1, k->kc.arch, size);
	if (ol > size - 1)
		diag_warn("%s: the command line is %zu bytes%s, longer than the %zu a %s kernel keeps "
			  "(COMMAND_LINE_SIZE %zu): its end is lost at boot",
			  s->path, ol, with, size - 1, k->kc.arch, size);
	return 0;
}

int plan_slot(const struct evaluation *ev, const struct slot *s, struct slot_change *c, const char *only)
{
	const char *kernel = s->kernel ? s->kernel : (ev->def ? ev->def->k->version : NULL);
	const struct kernel_decision *kd = kernel ? evaluation_find(ev, kernel) : NULL;
	c->kernel = kernel;
	if (s->unmanaged) {
		c->state = SLOT_UNMANAGED;
		return 0;
	}
	if (!kd) {
		c->state = SLOT_UNMANAGED;
		if (only)
			c->note = xasprintf("belongs to kernel %s, not to %s (--kernel)", kernel ? kernel : "?", only);
		else
			c->note = xasprintf("kernel %s is not installed in the root", kernel ? kernel : "?");
		return 0;
	}
	c->d = &kd->d;
	if (slot_kind_is_menu(s->kind)) {
		c->state = grub_cfg_state(s, lookup_decision, (void *)ev, &c->note);
		return 0;
	}
	if (s->kind == SLOT_UKI) {
		c->state = kd->d.keep ? SLOT_IN_SYNC : uki_state(s, &kd->d.add, &kd->d.remove, &c->note);
		return 0;
	}
	const struct decision *d = slot_kind_feeds_menu(s->kind) ? &ev->grub : &kd->d;
	c->d = d;
	c->new_content = slot_edit(s, d, &c->added, &c->removed, &c->new_len);
	if (!c->new_content) {
		c->state = SLOT_UNMANAGED;
		return 0;
	}
	if (!kd->d.keep) {
		int r = check_slot_line(s, c, kd->k);
		if (r < 0)
			return r;
	}
	if (!s->exists) {
		/* created only to carry something: a keep decision, or one
		 * that adds nothing, creates no file. What the decision adds
		 * counts, not what this edit added: a file created from an
		 * entry that already has the tokens (an earlier run was
		 * killed between its renames) is still created. */
		c->changed = s->create && ((!d->keep && d->add.n > 0) || grub_slot_creates(s, d));
		c->state = SLOT_MISSING;
		if (!c->changed)
			c->note = xstrdup("not there, and not needed: the decision puts nothing in it");
		return 0;
	}
	c->changed = c->new_len != s->len || memcmp(c->new_content, s->content, s->len) != 0;
	c->state = c->changed ? SLOT_DRIFT : SLOT_IN_SYNC;
	return 0;
}

char *evaluation_boot_cmdline(const struct evaluation *ev, const struct kernel_decision *kd)
{
	return configured_cmdline(NULL, ev, kd->k, kd == ev->def);
}

/* Gather: every fact the decisions and the plan work from, all of the
 * reading (policy, kernels, system, slots). *defk is the default kernel. */
static int gather(struct context *ctx, const char *only, struct evaluation *ev, struct kernel **defk)
{
	int r = context_load_policy(ctx);
	if (r < 0)
		return r;
	r = context_load_kernels(ctx, only);
	if (r < 0)
		return r;
	for (size_t i = 0; i < ctx->kernels.n; i++) {
		const struct kernel *k = &ctx->kernels.k[i];
		if (k->config_error && !(ctx->configs_may_be_missing && k->config_missing && !k->config_from_policy))
			return k->config_error;
	}
	r = context_load_system(ctx);
	if (r < 0)
		return r;
	*defk = kernels_default(&ctx->kernels);
	if (!*defk)
		return diag_error(EXIT_BADINPUT, "no kernel found");
	return slots_find(&ctx->root, &ctx->policy, (*defk)->version, &ev->slots);
}

/* A kernel asked to run with memcg on that cannot be turned on from the
 * boot loader (off by default, cgroup_enable= not known to it): an error
 * naming the key that meets it where the kernel does take the parameter,
 * never "in sync" with the kernel running the other way. */
static int unmeetable(const struct evaluation *ev)
{
	int r = 0;
	for (size_t i = 0; i < ev->n_kd; i++) {
		const struct kernel_decision *kd = &ev->kd[i];
		if (!kd->d.unmeetable)
			continue;
		if (kd->d.unmeetable_fw) {
			r = diag_error(
				EXIT_BADINPUT,
				"%s: mode = %s asks for memcg on, but the Raspberry Pi firmware puts "
				"cgroup_disable=memory before cmdline.txt (%s: /chosen/bootargs) and this kernel "
				"cannot turn memcg back on after it (%s): boot it with a device tree blob without "
				"it, or set mode = off or auto for it",
				kd->k->version, policy_mode_name(kd->d.mode), kd->dk.fw_blob,
				kd->dk.accepts_enable ? "a cgroup_disable=memory wins" : "no cgroup_enable= parameter");
			continue;
		}
		r = diag_error(EXIT_BADINPUT,
			       "%s: mode = %s asks for memcg on, but it is off by default in this kernel and "
			       "cgroup_enable=memory is not known to turn it on (%s): if the kernel takes it (as "
			       "Raspberry Pi and Debian's older kernels do), say so with accepts-cgroup-enable = yes "
			       "in a [kernel %s] section; else set mode = off or auto for it",
			       kd->k->version, policy_mode_name(kd->d.mode),
			       kd->dk.accepts_reason ? kd->dk.accepts_reason : "config", kd->k->version);
	}
	return r;
}

static bool grub_managed(const struct slot_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		if (l->v[i].kind == SLOT_GRUB_TOKENS && !l->v[i].unmanaged)
			return true;
	return false;
}

static void decide_one(struct context *ctx, const struct evaluation *ev, struct kernel_decision *kd, bool is_default)
{
	struct kernel *k = kd->k;
	decide_kernel_init(&kd->dk, k, &ctx->policy);
	if (k->config_missing && !k->config_from_policy) {
		/* nothing known to decide from: no opinion, never in sync */
		kd->unknown = true;
		kd->d.keep = true;
		kd->d.mode = ctx->policy.mode;
		decision_add_reason(&kd->d, "no_kernel_config", NULL, NULL, 0,
				    "no kernel config for %s: its memcg default is unknown", k->version);
		return;
	}
	_cleanup_free_ char *configured = configured_cmdline(ctx, ev, k, is_default);
	decide(&ctx->policy, &kd->dk, &ctx->sys, configured, &kd->d);
}

/* --kernel VER where GRUB is managed: the menu's other kernels, read and
 * decided as without --kernel, VER's decision borrowed. A kernel whose
 * config cannot be read has no opinion (it is reported without --kernel). */
static int decide_menu(struct context *ctx, struct evaluation *ev)
{
	int r = kernels_load(&ctx->root, NULL, &ev->menu_kernels);
	if (r < 0)
		return r;
	kernels_apply_policy(&ev->menu_kernels, &ctx->policy, true);
	const struct kernel_list *m = &ev->menu_kernels;
	const struct kernel *mdef = kernels_default(&ev->menu_kernels);
	ev->menu_kd = xcalloc(m->n + 1, sizeof(*ev->menu_kd));
	ev->menu_own = m->n + 1;
	for (size_t i = 0; i < m->n; i++) {
		struct kernel_decision *kd = &ev->menu_kd[ev->n_menu_kd++];
		if (ev->n_kd && streq(m->k[i].version, ev->kd[0].k->version)) {
			*kd = ev->kd[0];
			ev->menu_own = i;
			continue;
		}
		kd->k = &m->k[i];
		if (m->k[i].config_error && !m->k[i].config_missing) {
			/* a config that cannot be read: no opinion here (the
			 * run without --kernel reports it) */
			kd->unknown = true;
			kd->d.keep = true;
			kd->d.mode = ctx->policy.mode;
			continue;
		}
		decide_one(ctx, ev, kd, &m->k[i] == mdef);
	}
	if (ev->menu_own > m->n && ev->n_kd) {
		ev->menu_own = ev->n_menu_kd;
		ev->menu_kd[ev->n_menu_kd++] = ev->kd[0];
	}
	return 0;
}

/* Decide and plan: pure functions of the facts gathered. */
static int decide_and_plan(struct context *ctx, const char *only, struct kernel *defk, struct evaluation *ev)
{
	int r;
	ev->n_kd = ctx->kernels.k ? ctx->kernels.n : 0;
	ev->kd = xcalloc(ev->n_kd, sizeof(*ev->kd));
	for (size_t i = 0; i < ev->n_kd; i++) {
		struct kernel_decision *kd = &ev->kd[i];
		struct kernel *k = &ctx->kernels.k[i];
		const bool is_default = k == defk;
		kd->k = k;
		if (is_default)
			ev->def = kd;
		decide_one(ctx, ev, kd, is_default);
	}

	r = unmeetable(ev);
	if (r < 0)
		return r;
	const struct kernel_decision *mkd = ev->kd, *mdef = ev->def;
	size_t mn = ev->n_kd;
	if (ctx->kernels.only && grub_managed(&ev->slots)) {
		r = decide_menu(ctx, ev);
		if (r < 0)
			return r;
		mkd = ev->menu_kd;
		mn = ev->n_menu_kd;
		const struct kernel *d = kernels_default(&ev->menu_kernels);
		mdef = NULL;
		for (size_t i = 0; i < mn && d; i++)
			if (mkd[i].k == d || streq(mkd[i].k->version, d->version))
				mdef = &mkd[i];
	}
	r = grub_decision(mkd, mn, mdef, &ev->slots, &ev->grub);
	if (r < 0)
		return r;
	ev->ch = xcalloc(ev->slots.n ? ev->slots.n : 1, sizeof(*ev->ch));
	ev->in_sync = true;
	for (size_t i = 0; i < ev->n_kd; i++)
		if (ev->kd[i].unknown)
			ev->in_sync = false;
	for (size_t i = 0; i < ev->slots.n; i++) {
		r = plan_slot(ev, &ev->slots.v[i], &ev->ch[i], only);
		if (r < 0)
			return r;
	}
	if (!ev->grub.keep) {
		r = grub_check_lines(&ctx->root, &ev->slots, ev->ch, mkd, mn);
		if (r < 0)
			return r;
	}
	grub_settle_menus(&ctx->root, &ev->slots, ev->ch);
	ev->grub_no_program = grub_image_lacks_program(&ctx->root, &ev->slots, ev->ch);
	if (ev->grub_no_program)
		ev->in_sync = false;
	/* nothing carries the decision where no slot is managed: none found,
	 * or only ones the tool may not edit (no GRUB program in the root,
	 * another installation's entries) */
	size_t managed = 0;
	for (size_t i = 0; i < ev->slots.n; i++)
		if (!ev->slots.v[i].unmanaged)
			managed++;
	ev->no_boot_config = managed == 0 && ev->def && !ev->def->d.keep;
	if (ev->no_boot_config)
		ev->in_sync = false;
	for (size_t i = 0; i < ev->slots.n; i++)
		if (slot_change_drifts(&ev->ch[i]))
			ev->in_sync = false;

	judge_running(ctx, ev);
	return 0;
}

int evaluate(struct context *ctx, const char *only, struct evaluation *ev)
{
	memset(ev, 0, sizeof(*ev));
	struct kernel *defk = NULL;
	int r = gather(ctx, only, ev, &defk);
	return r < 0 ? r : decide_and_plan(ctx, only, defk, ev);
}

/* The decisions and plan of ev, freed; its slots and the context stay. */
static void plan_free(struct evaluation *ev)
{
	for (size_t i = 0; i < ev->n_menu_kd; i++)
		if (i != ev->menu_own)
			decision_free(&ev->menu_kd[i].d);
	free(ev->menu_kd);
	ev->menu_kd = NULL;
	ev->n_menu_kd = 0;
	kernels_free(&ev->menu_kernels);
	for (size_t i = 0; i < ev->n_kd; i++)
		decision_free(&ev->kd[i].d);
	free(ev->kd);
	decision_free(&ev->grub);
	for (size_t i = 0; i < ev->slots.n && ev->ch; i++) {
		free(ev->ch[i].new_content);
		free(ev->ch[i].note);
		strv_free(&ev->ch[i].added);
		strv_free(&ev->ch[i].removed);
	}
	free(ev->ch);
	ev->kd = NULL;
	ev->n_kd = 0;
	ev->def = NULL;
	memset(&ev->grub, 0, sizeof(ev->grub));
	ev->ch = NULL;
	ev->in_sync = ev->reboot_pending = ev->no_boot_config = ev->grub_no_program = false;
	free(ev->kernel_ignored);
	ev->kernel_ignored = NULL;
}

bool evaluation_can_follow_commit(const struct evaluation *ev)
{
	for (size_t i = 0; i < ev->slots.n; i++) {
		const struct slot *s = &ev->slots.v[i];
		if (slot_kind_is_menu(s->kind) || (ev->ch[i].changed && !s->exists))
			return false;
		/* a UKI is rebuilt, not written: read it again */
		if (s->kind == SLOT_UKI && slot_change_drifts(&ev->ch[i]))
			return false;
	}
	return ev->def != NULL;
}

/* Can the decisions depend on what the slots hold? Only through
 * otherwise = keep (decide() reads the configured line for nothing else)
 * and GRUB's recorded tokens (grub_decision, for a keep menu). */
static bool decisions_read_slots(const struct evaluation *ev)
{
	if (ev->grub.keep)
		return true;
	for (size_t i = 0; i < ev->n_kd; i++)
		if (ev->kd[i].d.keep)
			return true;
	for (size_t i = 0; i < ev->slots.n; i++)
		if (ev->slots.v[i].kind == SLOT_GRUB_TOKENS)
			return true;
	return false;
}

int evaluation_follow_commit(struct context *ctx, const char *only, struct evaluation *ev)
{
	struct kernel *defk = ev->def->k;
	for (size_t i = 0; i < ev->slots.n; i++) {
		struct slot *s = &ev->slots.v[i];
		struct slot_change *c = &ev->ch[i];
		if (!c->changed)
			continue;
		free(s->content);
		s->content = TAKE_PTR(c->new_content);
		s->len = c->new_len;
	}
	if (decisions_read_slots(ev)) {
		plan_free(ev);
		return decide_and_plan(ctx, only, defk, ev);
	}
	/* The same decisions, and an edit of what an edit wrote gives the
	 * same bytes (slot_edit is idempotent: tests/fuzz checks it for
	 * every decision): each written slot is in sync, the others stay
	 * as planned. */
	ev->in_sync = true;
	for (size_t i = 0; i < ev->slots.n; i++) {
		const struct slot *s = &ev->slots.v[i];
		struct slot_change *c = &ev->ch[i];
		if (c->changed) {
			c->changed = false;
			c->state = SLOT_IN_SYNC;
			c->new_content = xmalloc(s->len + 1);
			memcpy(c->new_content, s->content, s->len);
			c->new_content[s->len] = '\0';
			c->new_len = s->len;
			strv_free(&c->added);
			strv_free(&c->removed);
		}
		if (slot_change_drifts(c))
			ev->in_sync = false;
	}
	if (ev->grub_no_program)
		ev->in_sync = false;
	judge_running(ctx, ev);
	return 0;
}

void evaluation_free(struct evaluation *ev)
{
	plan_free(ev);
	slots_free(&ev->slots);
	memset(ev, 0, sizeof(*ev));
}
