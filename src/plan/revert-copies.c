/* plan/revert-copies.c - revert's second half: the tool's tokens out of the
 * copies distribution tools made from a file it edited.
 *
 * kernel-install's entry writer (90-loaderentry.install), Fedora's
 * 20-grub.install and sdbootutil write a new entry's options from
 * /etc/kernel/cmdline. After apply edited that file, every kernel installed
 * later gets an entry with the tool's tokens in it, an entry the tool never
 * wrote and so never journaled. An entry is such a copy when its options
 * are, token for token, the command line the tool last wrote there (as
 * kernel-install reads the file), with at most the
 * "systemd.machine_id=ID" kernel-install appends when the entry token is
 * the machine id. A copy gets the same token-level undo as the file it
 * came from; an entry with the tool's tokens whose options are anything
 * else is the admin's and is left as it is, with a warning. */
#include "lib/diag.h"
#include "plan/revert.h"

#include "lib/cmdline.h"
#include "slots/slot.h"
#include "slots/table.h"
#include "lib/util.h"

/* The line the tool last wrote to /etc/kernel/cmdline, as kernel-install
 * reads it. */
static char *written_line(const struct journal_entry *e)
{
	struct slot s = { .kind = SLOT_KERNEL_CMDLINE,
			  .path = (char *)KCMDLINE_PATH,
			  .exists = true,
			  .content = e->written,
			  .len = e->written_len };
	return slot_cmdline(&s);
}

/* Are the kernel tokens of a and b the same, byte for byte, in order,
 * after b's last "systemd.machine_id=" token where a has none? */
static bool same_tokens(const char *a, const char *b)
{
	struct cmdline ca, cb;
	cmdline_split(a, strlen(a), &ca);
	cmdline_split(b, strlen(b), &cb);
	size_t nb = cb.n;
	if (nb > 0 && startswith(cb.line + cb.tok[nb - 1].start, "systemd.machine_id=") &&
	    !strstr(a, "systemd.machine_id="))
		nb--;
	bool same = ca.n == nb;
	for (size_t i = 0; same && i < nb; i++)
		same = ca.tok[i].len == cb.tok[i].len &&
		       memcmp(ca.line + ca.tok[i].start, cb.line + cb.tok[i].start, ca.tok[i].len) == 0;
	cmdline_free(&ca);
	cmdline_free(&cb);
	return same;
}

static bool has_any(const char *line, const struct strv *tokens)
{
	struct cmdline c;
	cmdline_split(line, strlen(line), &c);
	bool any = false;
	for (size_t i = 0; i < tokens->n && !any; i++)
		any = cmdline_has_arg(&c, tokens->v[i]);
	cmdline_free(&c);
	return any;
}

bool kcmdline_copy_added(const struct journal *j, const struct slot *s, struct strv *out)
{
	*out = (struct strv){ 0 };
	if (s->kind != SLOT_BLS || !s->exists || journal_get(j, s->path))
		return false;
	const struct journal_entry *src = journal_get(j, KCMDLINE_PATH);
	if (!src || src->added.n == 0)
		return false;
	_cleanup_free_ char *wline = written_line(src);
	_cleanup_free_ char *opts = slot_cmdline(s);
	if (!wline || !opts || !same_tokens(wline, opts))
		return false;
	strv_pushdup_all(out, &src->added);
	return true;
}

bool revert_needs_copies(const struct journal *j)
{
	const struct journal_entry *src = journal_get(j, KCMDLINE_PATH);
	return src && src->added.n > 0;
}

void revert_plan_copies(struct revert_plan *p, const struct root *r, const struct journal *j, const struct slot_list *l)
{
	const struct journal_entry *src = journal_get(j, KCMDLINE_PATH);
	if (!src || src->added.n == 0)
		return;
	_cleanup_free_ char *wline = written_line(src);
	struct decision d = { .remove = src->added, .add = src->removed };
	for (size_t i = 0; i < l->n; i++) {
		const struct slot *s = &l->v[i];
		if (s->kind != SLOT_BLS || s->unmanaged || !s->exists || journal_get(j, s->path))
			continue;
		_cleanup_free_ char *opts = slot_cmdline(s);
		if (!opts || !has_any(opts, &src->added))
			continue;
		if (!wline || !same_tokens(wline, opts)) {
			_cleanup_free_ char *disp = root_display(r, s->path);
			diag_warn("%s has the tool's arguments, but its options are not those the tool wrote "
				  "to " KCMDLINE_PATH ": left as it is",
				  disp);
			continue;
		}
		struct strv added = { 0 }, removed = { 0 };
		size_t len = 0;
		char *content = slot_edit(s, &d, &added, &removed, &len);
		if (content && !(len == s->len && memcmp(content, s->content, len) == 0)) {
			revert_plan_copy_item(p, s, content, len, &added, &removed);
		} else {
			free(content);
			strv_free(&added);
			strv_free(&removed);
		}
	}
}
