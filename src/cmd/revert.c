/* cmd/revert.c - `revert [--dry-run] [--kernel VER] [--policy]`: takes out every
 * argument the tool wrote and puts back what it removed, from the journal
 * (facts/journal.h): files still as the tool left them get their original bytes
 * back; files changed since get the token-level undo. --kernel limits it to
 * the files of one kernel (the kernel-install plugin's `remove`: the
 * kernel's entries are gone by then, and so are their journal records).
 * Without it, entries written from /etc/kernel/cmdline after the tool
 * edited it lose the tool's tokens too (plan/revert-copies.c).
 * It ends saying whether the policy would put the arguments back at the
 * next kernel update; --policy also records mode = auto so that it does
 * not (with otherwise = keep and nothing that needs memcg). */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>

#include "cmd/commands.h"
#include "io/jsonc.h"

#include "commit/commit.h"
#include "commit/reboot-required.h"
#include "lib/diag.h"
#include "slots/grub/grub.h"
#include "facts/journal.h"
#include "plan/plan.h"
#include "show/report.h"
#include "plan/revert.h"
#include "slots/table.h"
#include "slots/uki.h"
#include "io/spawn.h"
#include "io/txn.h"
#include "lib/util.h"

#include "facts/context.h"

/* The records (those of kernel, if given) undone; a record whose file is
 * gone with its boot file system (not mounted) stays, that file system's
 * directory put in unmounted (once a record). */
static int plan_records(struct context *ctx, const struct journal *j, const char *kernel, struct revert_plan *p,
			struct strv *unmounted)
{
	for (size_t i = 0; i < j->n; i++) {
		const struct journal_entry *e = &j->v[i];
		if (kernel && !streq_ptr(e->kernel, kernel))
			continue;
		_cleanup_free_ char *text = NULL;
		size_t len = 0;
		int rr = root_read_file(&ctx->root, e->path, MAX_INPUT_FILE, &text, &len);
		char *dir = NULL;
		if (rr == -ENOENT && slot_fs_absent(&ctx->root, NULL, e->path, &dir)) {
			strv_push(unmounted, dir);
			continue;
		}
		if (rr == -ENOENT) {
			if (kernel)
				log_verbose("%s is gone: its record is dropped", e->path);
			else
				diag_warn("%s is gone: nothing to revert there", e->path);
		} else if (rr < 0) {
			_cleanup_free_ char *d = root_display(&ctx->root, e->path);
			return diag_error(root_error_exit(rr), "%s: %s", d, root_strerror(rr));
		}
		revert_plan_record(p, &ctx->root, e, text, len);
	}
	return 0;
}

/* Facts and plan: the current content of every file the journal's
 * records (those of kernel, if given) name, each record undone
 * (revert_plan_record), and, without --kernel, the boot entries written
 * from /etc/kernel/cmdline (revert_plan_copies). */
static int plan_revert(struct context *ctx, const struct journal *j, const char *kernel, struct revert_plan *p)
{
	_cleanup_(strv_free) struct strv unmounted = { 0 };
	int r = plan_records(ctx, j, kernel, p, &unmounted);
	report_unmounted(&ctx->root, &unmounted);
	if (r < 0 || kernel || !revert_needs_copies(j))
		return r;
	struct slot_list l;
	if (slots_find(&ctx->root, NULL, NULL, &l) < 0) {
		/* the revert of the journal's files goes on: a boot file that
		 * cannot be read only keeps its copies from being looked at */
		diag_warn("the boot entries written from " KCMDLINE_PATH " were not looked at (see above)");
		return 0;
	}
	revert_plan_copies(p, &ctx->root, j, &l);
	slots_free(&l);
	return 0;
}

static const char *item_verb(const struct revert_item *it)
{
	return it->u.action == UNDO_DELETE ? "removed" : "restored";
}

/* --dry-run: what the commit would write, as diffs (grubenv: the value). */
static int show_plan(const struct context *ctx, const struct revert_plan *p)
{
	int r = 0;
	for (size_t i = 0; i < p->n && r >= 0 && !ctx->json; i++) {
		const struct revert_item *it = &p->v[i];
		if (slot_kind_writes(it->kind) == SLOT_WRITES_KERNELOPTS)
			printf("would set kernelopts in %s to: %s\n", esc(it->path), esc(it->u.content));
		else
			r = print_unified_diff(it->path, it->u.cur, it->u.cur_len,
					       it->u.action == UNDO_DELETE ? NULL : it->u.content,
					       it->u.action == UNDO_DELETE ? 0 : it->u.len);
	}
	return r;
}

/* After the commit: what it did. */
static void tell_done(const struct context *ctx, const struct revert_plan *p)
{
	for (size_t i = 0; i < p->n && log_verbosity >= 0 && !ctx->json; i++) {
		const struct revert_item *it = &p->v[i];
		if (slot_kind_writes(it->kind) == SLOT_WRITES_KERNELOPTS)
			printf("restored kernelopts in %s\n", esc(it->path));
		else if (it->copy)
			printf("restored %s (its options were written from %s)\n", esc(it->path), KCMDLINE_PATH);
		else
			printf("%s %s\n", item_verb(it), esc(it->path));
	}
}

/* The plan's files and the journal without the ended records, in one
 * commit: the records end only once what they undo is durable. */
static int commit_revert(struct context *ctx, struct journal *j, const struct revert_plan *p)
{
	if (p->ended.n == 0)
		return 0;
	for (size_t i = 0; i < p->ended.n; i++)
		journal_forget(j, p->ended.v[i]);
	size_t len = 0;
	_cleanup_free_ char *text = j->n ? journal_serialize(j, &len) : NULL;
	struct file_change *fc = xcalloc(p->n ? p->n : 1, sizeof(*fc));
	for (size_t i = 0; i < p->n; i++) {
		const struct revert_item *it = &p->v[i];
		const bool del = it->u.action == UNDO_DELETE;
		fc[i] = (struct file_change){ it->path, it->kind, del ? NULL : it->u.content, del ? 0 : it->u.len, 0 };
	}
	int r = commit_changes(&ctx->root, fc, p->n, text, len, TXN_AFTER);
	free(fc);
	return r;
}

/* Regeneration: the menus (GRUB's, u-boot-menu's) made anew from the
 * restored inputs. */
static int regenerate_menu(struct context *ctx, enum grub_regen_mode mode)
{
	int r = context_load_policy(ctx);
	if (r < 0)
		return r;
	struct slot_list l = { 0 };
	r = grub_slots_find(&ctx->root, &ctx->policy, &l);
	if (r >= 0)
		r = uboot_slots_find(&ctx->root, &ctx->policy, &l);
	if (r >= 0)
		r = flashk_slots_find(&ctx->root, &ctx->policy, &l);
	if (r >= 0) {
		bool *changed = xcalloc(l.n ? l.n : 1, sizeof(bool));
		for (size_t i = 0; i < l.n; i++)
			changed[i] = slot_kind_writes(l.v[i].kind) != SLOT_WRITES_NOTHING;
		unsigned ran = 0;
		r = grub_after_commit(&ctx->root, &ctx->policy, &l, changed, mode, &ran);
		free(changed);
	}
	slots_free(&l);
	return r;
}

/* UKIs built from /etc/kernel/cmdline while it had the tool's tokens keep
 * them until rebuilt: after /etc/kernel/cmdline is reverted, each UKI
 * whose line still has a token taken out of it (or lacks one given back)
 * is rebuilt as apply rebuilds one, then read back: one that still has
 * them is an error (exit 4), never "reverted" while the next boot keeps
 * the tool's tokens. */
static int rebuild_ukis(struct context *ctx, const struct revert_plan *p, enum grub_regen_mode mode)
{
	struct decision d = { 0 };
	for (size_t i = 0; i < p->n; i++) {
		if (p->v[i].kind != SLOT_KERNEL_CMDLINE)
			continue;
		strv_pushdup_all(&d.remove, &p->v[i].taken);
		strv_pushdup_all(&d.add, &p->v[i].put_back);
	}
	if (!d.remove.n && !d.add.n)
		return 0;
	int r = context_load_policy(ctx);
	struct slot_list l = { 0 };
	_cleanup_(strv_free) struct strv paths = { 0 };
	if (r >= 0)
		r = slots_find_ukis(&ctx->root, &ctx->policy, &l);
	bool *changed = xcalloc(l.n ? l.n : 1, sizeof(bool));
	size_t n = 0;
	for (size_t i = 0; r >= 0 && i < l.n; i++) {
		_cleanup_free_ char *why = NULL;
		changed[i] = l.v[i].kind == SLOT_UKI && uki_state(&l.v[i], &d.add, &d.remove, &why) == SLOT_DRIFT &&
			     uki_rebuild_helps(&l.v[i], &d.remove);
		if (changed[i])
			strv_pushdup(&paths, l.v[i].path);
		n += changed[i];
	}
	unsigned ran = 0;
	if (r >= 0 && n)
		r = uki_after_commit(&ctx->root, &l, changed, mode, ctx->policy.regenerate == TRI_NO, &ran);
	free(changed);
	slots_free(&l);
	/* read back: a rebuilt UKI that kept them failed its rebuild (exit
	 * 4); one not rebuilt (--root without --regenerate, no way to
	 * rebuild it) still boots with the tool's tokens (exit 1) */
	if (r >= 0 && n)
		r = slots_find_ukis(&ctx->root, &ctx->policy, &l);
	for (size_t i = 0; r >= 0 && n && i < l.n; i++) {
		const struct slot *s = &l.v[i];
		_cleanup_free_ char *why = NULL;
		bool bad = s->kind == SLOT_UKI && !s->unmanaged && uki_state(s, &d.add, &d.remove, &why) == SLOT_DRIFT;
		_cleanup_free_ char *disp = root_display(&ctx->root, s->path);
		if (bad && ran > 0 && strv_contains(&paths, s->path))
			r = diag_error(EXIT_SYSTEM, "%s: rebuilt, but %s", disp, why);
		else if (bad)
			r = diag_error(EXIT_DRIFT, "%s: still boots with the tool's arguments: %s", disp, why);
		else if (ran > 0 && strv_contains(&paths, s->path) && log_verbosity >= 0 && !ctx->json)
			printf("rebuilt %s\n", esc(s->path));
	}
	slots_free(&l);
	strv_free(&d.remove);
	strv_free(&d.add);
	return r;
}

/* Undoes the journal's records (those of kernel, if given): facts, plan,
 * the plan shown (--dry-run) or committed, then regeneration; files[] of
 * obj gets each file. Returns 0 or a negative exit code. */
static int revert_journal(struct context *ctx, bool dry_run, const char *kernel, enum grub_regen_mode mode,
			  struct json_object *obj, bool *reverted)
{
	struct journal j = { 0 };
	int r = journal_load(&ctx->root, &j);
	if (r < 0)
		return r;
	if (j.n == 0) {
		if (log_verbosity >= 0 && !ctx->json)
			printf("nothing to revert\n");
		journal_free(&j);
		return 0;
	}
	struct revert_plan p = { 0 };
	r = plan_revert(ctx, &j, kernel, &p);
	for (size_t i = 0; r >= 0 && obj && i < p.n; i++)
		json_report_file(obj, p.v[i].path, item_verb(&p.v[i]), &p.v[i].put_back, &p.v[i].taken);
	if (r >= 0 && dry_run)
		r = show_plan(ctx, &p);
	if (r >= 0 && !dry_run) {
		r = commit_revert(ctx, &j, &p);
		if (r >= 0) {
			tell_done(ctx, &p);
			*reverted = p.n > 0;
		}
		if (r >= 0 && p.feeds_menu)
			r = regenerate_menu(ctx, mode);
		if (r >= 0)
			r = rebuild_ukis(ctx, &p, mode);
	}
	revert_plan_free(&p);
	journal_free(&j);
	return r < 0 ? r : 0;
}

/* After the revert: would the policy put arguments back at the next
 * kernel update (the kernel hooks run apply)? Said in text, and in
 * reapply_pending. An error here leaves the revert done: the state is
 * then unknown (null). */
static int tell_reapply(struct context *ctx, struct json_object *obj, bool dry_run, bool reverted)
{
	context_unload(ctx);
	_cleanup_evaluation_ struct evaluation ev = { 0 };
	diag_errors_as_warnings(true);
	int r = evaluate(ctx, NULL, &ev);
	diag_errors_as_warnings(false);
	if (r < 0) {
		if (!obj)
			diag_warn("cannot tell whether the policy applies again at the next kernel update");
		return 0;
	}
	struct next_boot nb;
	next_boot_of(ctx, &ev, &nb);
	/* Debian's reboot convention, from the state after the revert */
	if (!dry_run && reverted && nb.running_known)
		reboot_required_note(ctx->root.live, nb.reboot_needed);
	if (obj) {
		json_report_evaluation(obj, ctx, &ev);
		json_report_set(obj, "reapply_pending", json_object_new_boolean(!ev.in_sync));
	} else if (log_verbosity >= 0 && !dry_run) {
		const struct kernel_decision *kd = ev.def;
		if (ev.in_sync || !kd)
			printf("the policy adds nothing back: the next kernel update leaves the boot configuration as "
			       "it is now\n");
		else
			printf("the policy (mode = %s) still decides memcg %s for %s: the next kernel update or apply "
			       "puts its "
			       "arguments back; to stop that, run memcg-policy revert --policy (records mode = auto, "
			       "which "
			       "keeps the configuration as it is when nothing needs memcg and otherwise = keep)\n",
			       policy_mode_name(kd->d.mode), memcg_state_name(kd->d.state), kd->k->version);
	}
	if (!obj && !dry_run && log_verbosity >= 0)
		print_next_boot(ctx, &nb);
	return 0;
}

int cmd_revert(struct context *ctx, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "dry-run", no_argument, NULL, 'n' },
		{ "kernel", required_argument, NULL, 'k' },
		{ "policy", no_argument, NULL, 'p' },
		{ "regenerate", no_argument, NULL, 'G' },
		{ NULL, 0, NULL, 0 },
	};
	bool dry_run = false, reset_policy = false, regenerate = false;
	const char *kernel = NULL;
	int c;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'n': dry_run = true; break;
		case 'k': kernel = optarg; break;
		case 'p': reset_policy = true; break;
		case 'G': regenerate = true; break;
		default: return bad_option("revert", opts, argc, argv);
		}
	}
	if (!no_more_args(argc, argv))
		return EXIT_USAGE;
	if (reset_policy && kernel)
		return -diag_error(EXIT_USAGE, "revert: --policy and --kernel do not go together");
	if (!dry_run) {
		ctx->lock_fd = lock_take(&ctx->root);
		if (ctx->lock_fd < 0)
			return -ctx->lock_fd;
	}
	struct json_object *obj = ctx->json ? json_report_new(ctx, "revert") : NULL;
	bool reverted = false;
	int r = revert_journal(ctx, dry_run, kernel, regenerate ? GRUB_REGEN_FORCE : GRUB_REGEN_POLICY, obj, &reverted);
	bool wrote_policy = false, existed;
	if (r >= 0 && reset_policy && !dry_run)
		r = policy_file_set_mode(ctx, "auto", &wrote_policy, &existed);
	if (r >= 0 && obj && wrote_policy) {
		const char *path = ctx->config_path ? ctx->config_path : "/etc/memcg-policy.conf";
		json_report_file(obj, path, existed ? "changed" : "created", NULL, NULL);
	}
	if (r >= 0 && !kernel)
		r = tell_reapply(ctx, obj, dry_run, reverted);
	if (obj) {
		struct json_object *files;
		bool changed = json_object_object_get_ex(obj, "files", &files) && json_object_array_length(files) > 0;
		json_report_set(obj, "changed", json_object_new_boolean(changed));
		json_report_set(obj, "dry_run", json_object_new_boolean(dry_run));
		return json_report_emit(obj, r < 0 ? -r : EXIT_OK);
	}
	return r < 0 ? -r : EXIT_OK;
}
