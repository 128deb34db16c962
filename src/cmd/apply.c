/* cmd/apply.c - `apply [--kernel VER] [--dry-run] [--[no-]regenerate] [--hook]`:
 * make the boot configuration match the decision. The plan is complete
 * before the first write; every changed file and the journal are written in
 * one transaction; GRUB's menu is regenerated once afterwards. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "cmd/commands.h"
#include "commit/reboot-required.h"
#include "io/jsonc.h"

#include "commit/commit.h"
#include "lib/diag.h"
#include "slots/grub/grub.h"
#include "io/inputs.h"
#include "facts/journal.h"
#include "plan/plan.h"
#include "show/report.h"
#include "plan/revert.h"
#include "slots/table.h"
#include "slots/uki.h"
#include "io/spawn.h"
#include "io/txn.h"
#include "lib/util.h"

static void print_changes(const struct evaluation *ev)
{
	for (size_t i = 0; i < ev->slots.n; i++) {
		const struct slot_change *c = &ev->ch[i];
		if (!c->changed)
			continue;
		printf("%s %s", ev->slots.v[i].exists ? "changed" : "created", esc(ev->slots.v[i].path));
		for (size_t j = 0; j < c->added.n; j++)
			printf(" +%s", esc(c->added.v[j]));
		for (size_t j = 0; j < c->removed.n; j++)
			printf(" -%s", esc(c->removed.v[j]));
		printf("\n");
	}
}

/* A generated GRUB menu that does not carry the decision, or a UKI that
 * a rebuild from /etc/kernel/cmdline would make carry it, where this run
 * may regenerate them: that is part of applying (the drop-in's output
 * changes with the policy while the drop-in itself stays the same; a UKI
 * keeps the line it was built with). */
static enum grub_regen_mode regen_mode(const struct apply_options *o)
{
	return o->no_regenerate ? GRUB_REGEN_NEVER : o->regenerate ? GRUB_REGEN_FORCE : GRUB_REGEN_POLICY;
}

static bool menu_drifts(const struct context *ctx, const struct apply_options *o, const struct evaluation *ev, size_t i)
{
	if (grub_regen_skipped(regen_mode(o), ctx->policy.regenerate == TRI_NO, ctx->root.live))
		return false;
	const struct slot *s = &ev->slots.v[i];
	const struct slot_change *c = &ev->ch[i];
	if (s->kind == SLOT_UKI)
		return c->state == SLOT_DRIFT && c->d && uki_rebuild_helps(s, &c->d->remove);
	return slot_kind_is_menu(s->kind) && (c->state == SLOT_DRIFT || c->state == SLOT_NOT_REGENERATED);
}

static bool any_change(const struct evaluation *ev)
{
	for (size_t i = 0; i < ev->slots.n; i++)
		if (ev->ch[i].changed)
			return true;
	return false;
}

static bool any_work(const struct context *ctx, const struct apply_options *o, const struct evaluation *ev)
{
	for (size_t i = 0; i < ev->slots.n; i++)
		if (ev->ch[i].changed || menu_drifts(ctx, o, ev, i))
			return true;
	return false;
}

static int write_files(struct context *ctx, struct evaluation *ev)
{
	struct journal j = { 0 };
	int r = journal_load(&ctx->root, &j);
	if (r < 0)
		return r;
	/* records of changes back to the original that have landed */
	for (size_t i = 0; i < ev->slots.n; i++) {
		const struct slot *s = &ev->slots.v[i];
		journal_prune(&j, s->path, s->exists ? s->content : NULL, s->exists ? s->len : 0);
	}
	/* records of files that are gone (a removed kernel's entries) and
	 * that this run does not create again; not those on a boot file
	 * system that is not mounted: their files are not gone */
	_cleanup_(strv_free) struct strv unmounted = { 0 };
	for (size_t i = j.n; i-- > 0;) {
		const char *path = j.v[i].path;
		bool planned = false;
		for (size_t k = 0; k < ev->slots.n && !planned; k++)
			planned = ev->ch[k].changed && streq(ev->slots.v[k].path, path);
		struct stat st;
		char *dir = NULL;
		if (planned || root_lstat(&ctx->root, path, &st) != -ENOENT)
			continue;
		if (slot_fs_absent(&ctx->root, &ctx->policy, path, &dir)) {
			strv_push(&unmounted, dir);
			continue;
		}
		log_verbose("%s is gone: its record is dropped", path);
		journal_forget(&j, path);
	}
	report_unmounted(&ctx->root, &unmounted);
	/* entries kernel-install wrote from /etc/kernel/cmdline after the tool
	 * edited it: told before this run's records change that file's */
	struct strv *copied = xcalloc(ev->slots.n ? ev->slots.n : 1, sizeof(*copied));
	for (size_t i = 0; i < ev->slots.n; i++)
		if (ev->ch[i].changed)
			kcmdline_copy_added(&j, &ev->slots.v[i], &copied[i]);
	for (size_t i = 0; i < ev->slots.n; i++) {
		const struct slot *s = &ev->slots.v[i];
		const struct slot_change *c = &ev->ch[i];
		if (!c->changed)
			continue;
		/* a token the tool put in the copy's source is the tool's own
		 * going away, not the admin's to give back at revert */
		struct strv removed = { 0 };
		for (size_t k = 0; k < c->removed.n; k++)
			if (!strv_contains(&copied[i], c->removed.v[k]))
				strv_pushdup(&removed, c->removed.v[k]);
		/* and the copy's original, for revert, is the entry without them */
		const char *old = s->content;
		size_t old_len = s->exists ? s->len : 0;
		_cleanup_free_ char *uncopied = NULL;
		if (copied[i].n) {
			struct decision d = { .remove = copied[i] };
			uncopied = slot_edit(s, &d, NULL, NULL, &old_len);
			if (uncopied)
				old = uncopied;
			else
				old_len = s->len;
		}
		journal_record(&j, s->path, s->kernel, s->exists, old, old_len, c->new_content, c->new_len, &c->added,
			       &removed);
		strv_free(&removed);
	}
	for (size_t i = 0; i < ev->slots.n; i++)
		strv_free(&copied[i]);
	free(copied);
	r = root_mkdir_p(&ctx->root, "/var/lib/memcg-policy", 0755);
	if (r < 0) {
		_cleanup_free_ char *d = root_display(&ctx->root, "/var/lib/memcg-policy");
		journal_free(&j);
		return diag_error(EXIT_SYSTEM, "%s: cannot create: %s", d, strerror(-r));
	}
	size_t len;
	_cleanup_free_ char *text = journal_serialize(&j, &len);
	journal_free(&j);
	struct file_change *fc = xcalloc(ev->slots.n ? ev->slots.n : 1, sizeof(*fc));
	size_t n = 0;
	for (size_t i = 0; i < ev->slots.n; i++) {
		const struct slot *s = &ev->slots.v[i];
		const struct slot_change *c = &ev->ch[i];
		if (c->changed && c->new_content)
			fc[n++] = (struct file_change){ s->path, s->kind, c->new_content, c->new_len, s->mode };
	}
	/* Write-ahead: the journal is durable (renamed, its directory synced)
	 * before any boot file is renamed, on whatever file system each is: a
	 * crash or power cut never keeps a change and loses its record. */
	r = commit_changes(&ctx->root, fc, n, text, len, TXN_BEFORE);
	free(fc);
	return r;
}

static int commit(struct context *ctx, struct evaluation *ev, const struct apply_options *o, unsigned *ran,
		  unsigned *rebuilt)
{
	bool *changed = xcalloc(ev->slots.n ? ev->slots.n : 1, sizeof(bool));
	for (size_t i = 0; i < ev->slots.n; i++)
		changed[i] = ev->ch[i].changed || menu_drifts(ctx, o, ev, i);
	/* --regenerate fails before anything is written if it cannot work */
	int r = o->regenerate ? grub_regen_preflight(&ctx->root, &ev->slots, changed) : 0;
	if (r >= 0 && o->regenerate)
		r = uki_rebuild_preflight(&ctx->root, &ev->slots, changed);
	if (r >= 0 && any_change(ev))
		r = write_files(ctx, ev);
	enum grub_regen_mode m = regen_mode(o);
	if (r >= 0)
		r = grub_after_commit(&ctx->root, &ctx->policy, &ev->slots, changed, m, ran);
	/* UKIs after the files: kernel-install builds them from
	 * /etc/kernel/cmdline as just written */
	if (r >= 0)
		r = uki_after_commit(&ctx->root, &ev->slots, changed, m, ctx->policy.regenerate == TRI_NO, rebuilt);
	free(changed);
	return r;
}

/* An input error under --hook is a warning, unless the policy is strict:
 * the one place where --hook turns the errors recorded so far into
 * warnings, before anything prints them. */
static int hook_result(struct context *ctx, const struct apply_options *o, int r)
{
	if (r >= 0 || !o->hook || r != -EXIT_BADINPUT)
		return r < 0 ? -r : r;
	if (ctx->policy_loaded && ctx->policy.strict) {
		if (ctx->policy.strict_despite)
			diag_warn("the error above fails the hook: strict = yes at %s, although its file has the error",
				  ctx->policy.strict_despite);
		return EXIT_BADINPUT;
	}
	diag_demote_errors();
	diag_warn("the error above is ignored in --hook mode (set strict = yes in the policy to fail instead)");
	return EXIT_OK;
}

/* set's mode recorded, the boot configuration left as it was by an error:
 * its own exit code, and said (the error says why) */
static int recorded_code(const struct apply_options *o, int rc)
{
	if (!o->recorded || (rc != EXIT_BADINPUT && rc != EXIT_SYSTEM))
		return rc;
	if (log_verbosity >= 0 && !json_output_active())
		printf("the mode is recorded, but not applied: the boot configuration is as it was (see the error)\n");
	return EXIT_RECORDED;
}

/* An error before the report is filled: the object says only that. */
static int early_end(struct context *ctx, const struct apply_options *o, int rc)
{
	rc = recorded_code(o, rc);
	if (ctx->json)
		json_report_emit(o->report ? o->report : json_report_new(ctx, "apply"), rc);
	return rc;
}

/* No boot configuration at all: nothing was written, and the next boot
 * will not have the decision. Exit 1 (the boot configuration does not
 * carry it), a warning and 0 in --hook mode unless strict = yes. */
static int no_boot_config(struct context *ctx, const struct apply_options *o, const struct evaluation *ev)
{
	_cleanup_free_ char *what = no_boot_config_text(ctx, ev);
	if (o->hook && !(ctx->policy_loaded && ctx->policy.strict)) {
		diag_warn("nothing written: %s", what);
		return EXIT_OK;
	}
	diag_error(EXIT_DRIFT, "nothing written: %s", what);
	return EXIT_DRIFT;
}

/* A generated menu that does not carry the decision, where regenerating it
 * would not help (something overrides the tool's input, or the input is
 * not one the tool may edit): the run did not do what was asked, whether
 * it wrote something or not. Exit 1 naming it; a warning in --hook mode
 * unless strict = yes, as for no boot configuration at all. */
static int menus_left(struct context *ctx, const struct apply_options *o, const struct evaluation *ev)
{
	int rc = EXIT_OK;
	const bool warn_only = o->hook && !(ctx->policy_loaded && ctx->policy.strict);
	for (size_t i = 0; i < ev->slots.n; i++) {
		const struct slot *s = &ev->slots.v[i];
		if (!slot_kind_is_menu(s->kind) || s->unmanaged || ev->ch[i].state != SLOT_DRIFT ||
		    slot_regeneration_helps(s))
			continue;
		const char *why = slot_note(s, &ev->ch[i]);
		if (warn_only) {
			diag_warn("%s does not carry the decision: %s", s->path, why ? why : "");
			continue;
		}
		diag_error(EXIT_DRIFT, "%s does not carry the decision: %s", s->path, why ? why : "");
		rc = EXIT_DRIFT;
	}
	return rc;
}

/* After a regeneration: every menu read back carries the decision in
 * its linux lines, else the regeneration did not do its job (the drop-in
 * not sourced, its program failing): exit 4, naming the menu and why. */
static int menus_carry(const struct evaluation *ev)
{
	int r = 0;
	for (size_t i = 0; i < ev->slots.n; i++) {
		const struct slot *s = &ev->slots.v[i];
		/* just regenerated: "not regenerated yet" is no excuse */
		if (!slot_kind_is_menu(s->kind) || s->unmanaged ||
		    !(slot_change_drifts(&ev->ch[i]) || ev->ch[i].state == SLOT_NOT_REGENERATED))
			continue;
		const char *why = slot_change_drifts(&ev->ch[i]) ? slot_note(s, &ev->ch[i]) : NULL;
		r = diag_error(EXIT_SYSTEM, "%s: regenerated, but its linux lines do not carry the decision%s%s",
			       s->path, why ? ": " : "", why ? why : "");
	}
	return r;
}

/* After UKIs were rebuilt: each one read back gives its kernel the
 * decision, else the rebuild did not do its job (a UKI of another name
 * than kernel-install writes, a generator that does not read
 * /etc/kernel/cmdline): exit 4, naming the UKI and what it lacks. */
static int ukis_carry(const struct evaluation *ev)
{
	int r = 0;
	for (size_t i = 0; i < ev->slots.n; i++) {
		const struct slot *s = &ev->slots.v[i];
		if (s->kind != SLOT_UKI || s->unmanaged || !slot_change_drifts(&ev->ch[i]))
			continue;
		r = diag_error(EXIT_SYSTEM, "%s: rebuilt, but %s", s->path, slot_note(s, &ev->ch[i]));
	}
	return r;
}

/* UKIs that still drift after the run (not rebuilt: --no-regenerate,
 * --root without --regenerate, no way to rebuild them, an addon against
 * the decision): their kernels boot without the decision, so the run
 * did not carry it: exit 1 naming each, a warning and 0 under --hook
 * (inside kernel-install the UKI being built takes the new line: only
 * with -v). */
static int ukis_left(const struct context *ctx, const struct apply_options *o, const struct evaluation *ev)
{
	const char *staging = getenv("KERNEL_INSTALL_STAGING_AREA");
	bool inside = staging && *staging;
	int rc = EXIT_OK;
	for (size_t i = 0; i < ev->slots.n; i++) {
		const struct slot *s = &ev->slots.v[i];
		if (s->kind != SLOT_UKI || s->unmanaged || !slot_change_drifts(&ev->ch[i]))
			continue;
		_cleanup_free_ char *disp = root_display(&ctx->root, s->path);
		if (inside)
			log_verbose("%s: %s", disp, slot_note(s, &ev->ch[i]));
		else if (o->hook)
			diag_warn("%s: not carrying the decision: %s", disp, slot_note(s, &ev->ch[i]));
		else
			rc = diag_error(EXIT_DRIFT, "%s: not carrying the decision: %s", disp,
					slot_note(s, &ev->ch[i]));
	}
	return rc < 0 ? -rc : rc;
}

/* An image whose GRUB drop-in would find no program: refused before the
 * lock is taken, exit 3, nothing written (nothing would reach the menu). */
static int no_program(struct context *ctx, const struct apply_options *o, struct evaluation *ev)
{
	_cleanup_free_ char *what = grub_no_program_text(ctx);
	diag_error(EXIT_BADINPUT, "nothing written: %s", what);
	evaluation_free(ev);
	return early_end(ctx, o, EXIT_BADINPUT);
}

/* A dry run's diff of one slot. The GRUB drop-in is the package's own
 * shell text, the same on every system: its diff only under -v. */
static int print_slot_diff(const struct slot *s, const struct slot_change *c)
{
	if (!c->changed)
		return 0;
	if (s->kind == SLOT_GRUB_DROPIN && log_verbosity < 1) {
		size_t lines = 0;
		for (size_t i = 0; i < c->new_len; i++)
			lines += c->new_content[i] == '\n';
		printf("would %s %s: the package's GRUB drop-in (%zu lines; -v shows the diff)\n",
		       s->exists ? "update" : "create", esc(s->path), lines);
		return 0;
	}
	return print_unified_diff(s->path, s->exists ? s->content : NULL, s->exists ? s->len : 0, c->new_content,
				  c->new_len);
}

/* The last line of a dry run that would change something: the next boot
 * as the run would leave it, not as it is now. Where the menu would be
 * regenerated (GRUB), the state it is meant to carry: apply itself reads
 * the regenerated menu back and fails if it does not (exit 4). */
static int print_dry_run_end(struct context *ctx, const struct apply_options *o, struct evaluation *ev)
{
	printf("a dry run: nothing written\n");
	if (!ev->def)
		return 0;
	struct next_boot before;
	next_boot_of(ctx, ev, &before);
	if (!evaluation_can_follow_commit(ev)) {
		enum memcg_state after = ev->def->d.state;
		bool ukis = false;
		for (size_t i = 0; i < ev->slots.n && !ukis; i++)
			ukis = menu_drifts(ctx, o, ev, i) && ev->slots.v[i].kind == SLOT_UKI;
		printf("once applied and %s, next boot%s (%s): memcg %s",
		       ukis ? "its UKIs rebuilt" : "the menu regenerated", ctx->root.live ? "" : " of the image",
		       esc(ev->def->k->version), memcg_state_name(after));
		if (before.known && before.state != after)
			printf(" (now: %s)", memcg_state_name(before.state));
		printf("\n");
		return 0;
	}
	int r = evaluation_follow_commit(ctx, o->kernel, ev);
	if (r < 0)
		return r;
	struct next_boot nb;
	next_boot_of(ctx, ev, &nb);
	nb.now_known = before.known;
	nb.now = before.state;
	printf("once applied, ");
	print_next_boot(ctx, &nb);
	return 0;
}

int apply_run(struct context *ctx, const struct apply_options *o)
{
	/* Where an earlier run left the lock file, take the lock first and
	 * evaluate once; else evaluate, and only if there is work create the
	 * lock, then evaluate again under it unless all the first evaluation
	 * looked at is unchanged (a run with nothing to change writes
	 * nothing, not even the lock file). */
	if (!o->dry_run && ctx->lock_fd < 0) {
		int fd = lock_take_if_present(&ctx->root);
		if (fd >= 0)
			ctx->lock_fd = fd;
		else if (fd != -ENOENT)
			return early_end(ctx, o, -fd);
	}
	/* Without the lock, note what the evaluation looks at: under the
	 * lock, if all of it is as it was, the plan stands. */
	bool noting = !o->dry_run && ctx->lock_fd < 0;
	if (noting)
		inputs_start();
	_cleanup_evaluation_ struct evaluation ev = { 0 };
	int r = evaluate(ctx, o->kernel, &ev);
	inputs_stop();
	if (r < 0) {
		inputs_clear();
		return early_end(ctx, o, hook_result(ctx, o, r));
	}
	if (ev.grub_no_program) {
		inputs_clear();
		return no_program(ctx, o, &ev);
	}
	if (!o->dry_run && any_work(ctx, o, &ev) && ctx->lock_fd < 0) {
		/* Changes to make: take the lock, then look again, since
		 * another run may have made them meanwhile. */
		test_hold("MEMCG_POLICY_LOOK_HOLD_MS");
		ctx->lock_fd = lock_take(&ctx->root);
		if (ctx->lock_fd < 0) {
			inputs_clear();
			return early_end(ctx, o, -ctx->lock_fd);
		}
		if (noting && root_inputs_unchanged(&ctx->root)) {
			log_verbose(
				"nothing the plan was made from changed before the lock was taken: the plan stands");
		} else {
			evaluation_free(&ev);
			context_unload(ctx); /* read everything again under the lock */
			r = evaluate(ctx, o->kernel, &ev);
			if (r < 0) {
				inputs_clear();
				return early_end(ctx, o, hook_result(ctx, o, r));
			}
		}
	}
	inputs_clear();
	if (ev.grub_no_program)
		return no_program(ctx, o, &ev);
	bool changed = any_change(&ev);
	unsigned ran = 0, rebuilt = 0;
	bool wrote = false, applied = false;
	if (o->dry_run && !ctx->json) {
		/* what the kernels get first (GRUB's lines before and after),
		 * then the files' diffs */
		r = grub_preview(&ctx->root, &ev.slots, ev.ch);
		for (size_t i = 0; i < ev.slots.n && r >= 0; i++)
			r = print_slot_diff(&ev.slots.v[i], &ev.ch[i]);
	} else if (o->dry_run) {
		/* --json: the files in the report */
	} else if (any_work(ctx, o, &ev)) {
		r = commit(ctx, &ev, o, &ran, &rebuilt);
		wrote = true;
		/* a failed commit is rolled back: as it was */
		applied = r >= 0;
	}
	struct json_object *obj = ctx->json ? (o->report ? o->report : json_report_new(ctx, "apply")) : NULL;
	if (r >= 0 && obj) {
		for (size_t i = 0; i < ev.slots.n; i++) {
			const struct slot *s = &ev.slots.v[i];
			if (ev.ch[i].changed)
				json_report_file(obj, s->path, s->exists ? "changed" : "created", &ev.ch[i].added,
						 &ev.ch[i].removed);
			else if (slot_kind_is_menu(s->kind) && ran > 0 && !o->dry_run)
				json_report_file(obj, s->path, "regenerated", NULL, NULL);
			else if (s->kind == SLOT_UKI && rebuilt > 0 && !o->dry_run && menu_drifts(ctx, o, &ev, i))
				json_report_file(obj, s->path, "rebuilt", NULL, NULL);
		}
	}
	if (r >= 0 && !o->dry_run && log_verbosity >= 0 && !(o->hook && log_verbosity < 1) && !ctx->json) {
		if (changed)
			print_changes(&ev);
		for (size_t i = 0; i < ev.slots.n && ran > 0; i++)
			if (slot_kind_is_menu(ev.slots.v[i].kind) && !ev.slots.v[i].unmanaged)
				printf("regenerated %s\n", esc(ev.slots.v[i].path));
		for (size_t i = 0; i < ev.slots.n && rebuilt > 0; i++)
			if (ev.slots.v[i].kind == SLOT_UKI && menu_drifts(ctx, o, &ev, i))
				printf("rebuilt %s\n", esc(ev.slots.v[i].path));
		if (!changed && ran == 0 && rebuilt == 0 && !ev.no_boot_config)
			printf("nothing to change\n");
	}
	if (r >= 0 && wrote) {
		/* report the state after the run: from what was written where
		 * that is the whole of it, else by looking again */
		if (ran == 0 && rebuilt == 0 && evaluation_can_follow_commit(&ev)) {
			r = evaluation_follow_commit(ctx, o->kernel, &ev);
		} else {
			evaluation_free(&ev);
			context_unload(ctx);
			r = evaluate(ctx, o->kernel, &ev);
		}
		if (r >= 0 && ran > 0)
			r = menus_carry(&ev);
		if (r >= 0 && rebuilt > 0)
			r = ukis_carry(&ev);
	}
	if (r >= 0) {
		struct next_boot nb;
		next_boot_of(ctx, &ev, &nb);
		/* Debian's reboot convention, from the state after the run */
		if (wrote && nb.running_known)
			reboot_required_note(ctx->root.live, nb.reboot_needed);
		for (size_t i = 0; ev.def && i < ev.def->d.warnings.n; i++)
			if (!o->hook || log_verbosity > 0)
				diag_warn("%s", ev.def->d.warnings.v[i]);
		for (size_t i = 0; i < ev.grub.warnings.n; i++)
			if (!o->hook || log_verbosity > 0)
				diag_warn("%s", ev.grub.warnings.v[i]);
		if (obj) {
			json_report_evaluation(obj, ctx, &ev);
			struct json_object *was;
			bool set_changed =
				json_object_object_get_ex(obj, "changed", &was) && json_object_get_boolean(was);
			json_report_set(obj, "changed",
					json_object_new_boolean(changed || ran > 0 || rebuilt > 0 || set_changed));
			json_report_set(obj, "dry_run", json_object_new_boolean(o->dry_run));
		} else if (log_verbosity >= 0 && !o->hook && o->dry_run && changed) {
			r = print_dry_run_end(ctx, o, &ev);
		} else if (log_verbosity >= 0 && !o->hook) {
			print_next_boot(ctx, &nb);
		}
	}
	int rc = r < 0 ? -r : EXIT_OK;
	if (rc == EXIT_OK && ev.no_boot_config)
		rc = no_boot_config(ctx, o, &ev);
	if (rc == EXIT_OK && !o->dry_run)
		rc = menus_left(ctx, o, &ev);
	if (rc == EXIT_OK && !o->dry_run)
		rc = ukis_left(ctx, o, &ev);
	if (!applied)
		rc = recorded_code(o, rc);
	if (obj)
		json_report_emit(obj, rc);
	return rc;
}

int cmd_apply(struct context *ctx, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "kernel", required_argument, NULL, 'k' },  { "dry-run", no_argument, NULL, 'n' },
		{ "no-regenerate", no_argument, NULL, 'R' }, { "regenerate", no_argument, NULL, 'G' },
		{ "hook", no_argument, NULL, 'H' },	     { NULL, 0, NULL, 0 },
	};
	struct apply_options o = { 0 };
	int c;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'k': o.kernel = optarg; break;
		case 'n': o.dry_run = true; break;
		case 'R': o.no_regenerate = true; break;
		case 'G': o.regenerate = true; break;
		case 'H': o.hook = true; break;
		default: return bad_option("apply", opts, argc, argv);
		}
	}
	if (!no_more_args(argc, argv))
		return EXIT_USAGE;
	if (o.regenerate && o.no_regenerate) {
		return -diag_error(EXIT_USAGE, "apply: --regenerate and --no-regenerate exclude each other");
	}
	return apply_run(ctx, &o);
}
