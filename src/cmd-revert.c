/* cmd-revert.c - `revert [--dry-run] [--kernel VER] [--policy]`: takes out every
 * argument the tool wrote and puts back what it removed, from the journal
 * (journal.h): files still as the tool left them get their original bytes
 * back; files changed since get the token-level undo. --kernel limits it to
 * the files of one kernel (the kernel-install plugin's `remove`: the
 * kernel's entries are gone by then, and so are their journal records).
 * Without it, entries written from /etc/kernel/cmdline after the tool
 * edited it lose the tool's tokens too (revert-copies.c).
 * It ends saying whether the policy would put the arguments back at the
 * next kernel update; --policy also records mode = auto so that it does
 * not (with otherwise = keep and nothing that needs memcg). */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>

#include "commands.h"
#include "jsonc.h"

#include "cmdline.h"
#include "diag.h"
#include "grub.h"
#include "journal.h"
#include "plan.h"
#include "report.h"
#include "revert.h"
#include "slots.h"
#include "spawn.h"
#include "txn.h"
#include "util.h"

#include "context.h"

static bool is_grubenv(const char *path) { return endswith(path, "/grubenv"); }

/* The content a journal entry gives back; NULL: delete the file. */
static char *reverted_content(const struct journal_entry *e, const char *cur, size_t cur_len, size_t *len,
			      bool *delete)
{
	*delete = false;
	if (streq(e->path, GRUB_TOKENS_PATH)) {
		/* the tool's own data: gone, whatever it holds */
		*delete = true;
		return NULL;
	}
	if (cur_len == e->written_len && memcmp(cur, e->written, cur_len) == 0) {
		if (!e->had_original) {
			*delete = true;
			return NULL;
		}
		*len = e->original_len;
		return xstrndup(e->original, e->original_len);
	}
	/* changed since: /etc/default/grub loses the marked line, other
	 * files get the token-level undo */
	if (streq(e->path, GRUB_DEFAULT_PATH))
		return grub_default_unmark(cur, cur_len, len);
	/* undo token by token: each item of the tokens we added goes
	 * ("name=a,b" removes a and b, as cmdline_edit reads it) */
	char *out = cmdline_edit(cur, cur_len, &e->added, &e->removed, NULL);
	*len = strlen(out);
	return out;
}

/* grubenv: the journal holds kernelopts values. The original value where
 * kernelopts is still what the tool wrote, else the token-level undo; the
 * new block joins the transaction, so the record ends only with it. */
static int revert_kernelopts(struct context *ctx, const struct journal_entry *e, bool dry_run, struct txn *t,
			     struct json_object *obj)
{
	_cleanup_free_ char *text = NULL;
	size_t len;
	int rr = root_read_file(&ctx->root, e->path, 64u << 10, &text, &len);
	if (rr == -ENOENT) {
		diag_warn("%s is gone: nothing to revert there", e->path);
		return 0;
	}
	_cleanup_free_ char *d = root_display(&ctx->root, e->path);
	if (rr < 0)
		return diag_error(root_error_exit(rr), "%s: %s", d, root_strerror(rr));
	_cleanup_free_ char *cur = grubenv_get(text, len, "kernelopts");
	if (!cur) {
		diag_warn("%s: no kernelopts any more: nothing to revert there", d);
		return 0;
	}
	_cleanup_free_ char *want = NULL;
	if (strlen(cur) == e->written_len && memcmp(cur, e->written, e->written_len) == 0)
		want = xstrndup(e->original, e->original_len);
	else
		want = cmdline_edit(cur, strlen(cur), &e->added, &e->removed, NULL);
	if (streq(want, cur))
		return 0;
	if (obj)
		json_report_file(obj, e->path, "restored", &e->removed, &e->added);
	if (dry_run) {
		if (!ctx->json)
			printf("would set kernelopts in %s to: %s\n", esc(e->path), esc(want));
		return 0;
	}
	size_t blen;
	int r = 0;
	_cleanup_free_ char *block = grub_kernelopts_block(&ctx->root, e->path, want, &blen, &r);
	if (!block)
		return r;
	txn_add(t, e->path, block, blen, 0644);
	if (log_verbosity >= 0 && !ctx->json)
		printf("restored kernelopts in %s\n", esc(e->path));
	return 0;
}

/* Undoes the journal's records (those of kernel, if given); files[] of
 * obj gets each file. Returns 0 or a negative exit code. */
static int revert_journal(struct context *ctx, bool dry_run, const char *kernel, struct json_object *obj)
{
	struct journal j = {0};
	int r = journal_load(&ctx->root, &j);
	if (r < 0)
		return r;
	if (j.n == 0) {
		if (log_verbosity >= 0 && !ctx->json)
			printf("nothing to revert\n");
		journal_free(&j);
		return 0;
	}
	struct txn t;
	txn_init(&t, &ctx->root);
	bool grub_input = false;
	struct strv done = {0}; /* paths whose records end */
	for (size_t i = 0; i < j.n && r >= 0; i++) {
		const struct journal_entry *e = &j.v[i];
		if (kernel && !streq_ptr(e->kernel, kernel))
			continue;
		strv_pushdup(&done, e->path);
		_cleanup_free_ char *cur = NULL;
		size_t cur_len = 0;
		bool exists = true;
		if (is_grubenv(e->path)) {
			r = revert_kernelopts(ctx, e, dry_run, &t, obj);
			grub_input = true;
			continue;
		}
		int rr = root_read_file(&ctx->root, e->path, MAX_INPUT_FILE, &cur, &cur_len);
		if (rr == -ENOENT) {
			exists = false;
		} else if (rr < 0) {
			_cleanup_free_ char *d = root_display(&ctx->root, e->path);
			r = diag_error(EXIT_SYSTEM, "%s: %s", d, strerror(-rr));
			break;
		}
		if (!exists) {
			if (kernel)
				log_verbose("%s is gone: its record is dropped", e->path);
			else
				diag_warn("%s is gone: nothing to revert there", e->path);
			continue;
		}
		size_t len = 0;
		bool del;
		_cleanup_free_ char *content = reverted_content(e, cur, cur_len, &len, &del);
		if (!del && len == cur_len && memcmp(content, cur, len) == 0)
			continue;
		if (startswith(e->path, "/etc/default/grub") || streq(e->path, GRUB_TOKENS_PATH))
			grub_input = true;
		if (obj)
			json_report_file(obj, e->path, del ? "removed" : "restored", &e->removed, &e->added);
		if (dry_run) {
			if (ctx->json)
				continue;
			r = print_unified_diff(e->path, cur, cur_len, del ? NULL : content, del ? 0 : len);
			continue;
		}
		if (del)
			txn_delete(&t, e->path);
		else
			txn_add(&t, e->path, content, len, 0644);
		if (log_verbosity >= 0 && !ctx->json)
			printf("%s %s\n", del ? "removed" : "restored", esc(e->path));
	}
	if (r >= 0 && !kernel)
		r = revert_copies(ctx, &j, dry_run, &t, obj);
	if (r >= 0 && !dry_run && done.n) {
		for (size_t i = 0; i < done.n; i++)
			journal_forget(&j, done.v[i]);
		/* the records end only once what they undo is durable */
		if (j.n == 0) {
			txn_add_record(&t, JOURNAL_PATH, NULL, 0, TXN_AFTER);
		} else {
			size_t len;
			_cleanup_free_ char *text = journal_serialize(&j, &len);
			txn_add_record(&t, JOURNAL_PATH, text, len, TXN_AFTER);
		}
		r = txn_commit(&t);
	}
	strv_free(&done);
	txn_free(&t);
	journal_free(&j);
	if (r >= 0 && !dry_run && grub_input) {
		/* regenerate the menu from the restored inputs */
		r = context_load_policy(ctx);
		if (r >= 0) {
			struct slot_list l = {0};
			r = grub_slots_find(&ctx->root, &ctx->policy, &l);
			if (r >= 0) {
				bool *changed = xcalloc(l.n ? l.n : 1, sizeof(bool));
				for (size_t i = 0; i < l.n; i++)
					changed[i] = l.v[i].kind != SLOT_GRUB_CFG;
				unsigned ran = 0;
				r = grub_after_commit(&ctx->root, &ctx->policy, &l, changed, GRUB_REGEN_POLICY, &ran);
				free(changed);
			}
			slots_free(&l);
		}
	}
	return r < 0 ? r : 0;
}

/* After the revert: would the policy put arguments back at the next
 * kernel update (the kernel hooks run apply)? Said in text, and in
 * reapply_pending. An error here leaves the revert done: the state is
 * then unknown (null). */
static int tell_reapply(struct context *ctx, struct json_object *obj, bool dry_run)
{
	context_unload(ctx);
	struct evaluation ev;
	diag_errors_as_warnings(true);
	int r = evaluate(ctx, NULL, &ev);
	diag_errors_as_warnings(false);
	if (r < 0) {
		evaluation_free(&ev);
		if (!obj)
			diag_warn("cannot tell whether the policy applies again at the next kernel update");
		return 0;
	}
	if (obj) {
		json_report_evaluation(obj, ctx, &ev);
		json_report_set(obj, "reapply_pending", json_object_new_boolean(!ev.in_sync));
	} else if (log_verbosity >= 0 && !dry_run) {
		const struct kernel_decision *kd = ev.def;
		if (ev.in_sync || !kd)
			printf("the policy adds nothing back: the next kernel update leaves the boot configuration as it is now\n");
		else
			printf("the policy (mode = %s) still decides memcg %s for %s: the next kernel update or apply puts its "
			       "arguments back; to stop that, run memcg-policy revert --policy (records mode = auto, which "
			       "keeps the configuration as it is when nothing needs memcg and otherwise = keep)\n",
			       policy_mode_name(kd->d.mode), memcg_state_name(kd->d.state), kd->k->version);
	}
	if (!obj && !dry_run) {
		struct next_boot nb;
		next_boot_of(ctx, &ev, &nb);
		if (log_verbosity >= 0)
			print_next_boot(ctx, &nb);
	}
	evaluation_free(&ev);
	return 0;
}

int cmd_revert(struct context *ctx, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "dry-run", no_argument, NULL, 'n' },
		{ "kernel", required_argument, NULL, 'k' },
		{ "policy", no_argument, NULL, 'p' },
		{ NULL, 0, NULL, 0 },
	};
	bool dry_run = false, reset_policy = false;
	const char *kernel = NULL;
	int c;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'n': dry_run = true; break;
		case 'k': kernel = optarg; break;
		case 'p': reset_policy = true; break;
		default: return EXIT_USAGE;
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
	int r = revert_journal(ctx, dry_run, kernel, obj);
	bool wrote_policy = false, existed;
	if (r >= 0 && reset_policy && !dry_run)
		r = policy_file_set_mode(ctx, "auto", &wrote_policy, &existed);
	if (r >= 0 && obj && wrote_policy) {
		const char *path = ctx->config_path ? ctx->config_path : "/etc/memcg-policy.conf";
		json_report_file(obj, path, existed ? "changed" : "created", NULL, NULL);
	}
	if (r >= 0 && !kernel)
		r = tell_reapply(ctx, obj, dry_run);
	if (obj) {
		struct json_object *files;
		bool changed = json_object_object_get_ex(obj, "files", &files) && json_object_array_length(files) > 0;
		json_report_set(obj, "changed", json_object_new_boolean(changed));
		json_report_set(obj, "dry_run", json_object_new_boolean(dry_run));
		return json_report_emit(obj, r < 0 ? -r : EXIT_OK);
	}
	return r < 0 ? -r : EXIT_OK;
}

