/* slots/table.c - the table of slot kinds, see slots/table.h. */
#include "slots/table.h"
#include "lib/cmdline.h"
#include "slots/find-boot.h"
#include "slots/grub/grub.h"
#include "facts/journal.h"
#include "slots/slot-int.h"
#include "slots/kinds.h"

#include <stdint.h>
#include <string.h>

/* What a finder gets: the root, the policy, the default kernel's release
 * and the boot directories found. */
struct find_args {
	const struct root *r;
	const struct policy *p;
	const char *default_kernel;
	const struct boot_dirs *boot;
};

static int find_bls(const struct find_args *a, struct slot_list *l) { return bls_slots_find(a->r, a->p, a->boot, l); }
static int find_kcmdline(const struct find_args *a, struct slot_list *l)
{
	return kcmdline_slots_find(a->r, a->p, a->default_kernel, l);
}
static int find_rpi(const struct find_args *a, struct slot_list *l) { return rpi_slots_find(a->r, a->p, l); }
static int find_grub(const struct find_args *a, struct slot_list *l) { return grub_slots_find(a->r, a->p, l); }
static int find_uboot(const struct find_args *a, struct slot_list *l) { return uboot_slots_find(a->r, a->p, l); }
static int find_flashk(const struct find_args *a, struct slot_list *l) { return flashk_slots_find(a->r, a->p, l); }

/* The finders, in the order slots are listed. */
static int (*const finders[])(const struct find_args *, struct slot_list *) = {
	find_bls, find_kcmdline, find_rpi, find_grub, find_uboot, find_flashk,
};

/* Files the tool edits as text: nothing for an unmanaged one, the content
 * unchanged for no decision or keep, else the kind's editor. */
static char *edit_bls(const struct slot *s, const struct decision *d, struct strv *added, struct strv *removed,
		      size_t *new_len)
{
	if (s->unmanaged)
		return NULL;
	if (!d || d->keep)
		return slot_content_copy(s, new_len);
	return bls_slot_edit(s, d, added, removed, new_len);
}

static char *edit_line(const struct slot *s, const struct decision *d, struct strv *added, struct strv *removed,
		       size_t *new_len)
{
	if (s->unmanaged)
		return NULL;
	if (!d || d->keep)
		return slot_content_copy(s, new_len);
	return line_slot_edit(s, d, added, removed, new_len);
}

/* revert's undo of a record whose file is no longer what the tool wrote */
typedef char *undo_fn(enum slot_kind k, const struct journal_entry *e, const char *cur, size_t cur_len, size_t *len);

/* the tool's tokens out, the admin's back (cmdline_edit reads "name=a,b"
 * as the items a and b) */
static char *undo_tokens(enum slot_kind k _unused_, const struct journal_entry *e, const char *cur, size_t cur_len,
			 size_t *len)
{
	char *out = cmdline_edit(cur, cur_len, &e->added, &e->removed, NULL);
	*len = strlen(out);
	return out;
}

/* a one-line file (/etc/kernel/cmdline, cmdline.txt): the same, as apply
 * edits it, the admin's tokens back where the line had them before the
 * tool changed it */
static char *undo_line(enum slot_kind k, const struct journal_entry *e, const char *cur, size_t cur_len, size_t *len)
{
	const struct slot s = { .kind = k,
				.path = e->path,
				.content = (char *)cur,
				.len = cur_len,
				.exists = true,
				.like = e->had_original ? e->original : NULL,
				.like_len = e->original_len };
	const struct decision d = { .remove = e->added, .add = e->removed };
	return line_slot_edit(&s, &d, NULL, NULL, len);
}

/* a BLS entry: the same, in its options lines only (the entry's other
 * lines are not a command line: taking a token out of the whole file
 * would join the options line with the next) */
static char *undo_bls(enum slot_kind k _unused_, const struct journal_entry *e, const char *cur, size_t cur_len,
		      size_t *len)
{
	_cleanup_free_ char *like = NULL;
	if (e->had_original) {
		const struct slot o = { .kind = SLOT_BLS,
					.path = e->path,
					.content = e->original,
					.len = e->original_len,
					.exists = true };
		like = bls_slot_cmdline(&o);
	}
	const struct slot s = { .kind = SLOT_BLS,
				.path = e->path,
				.content = (char *)cur,
				.len = cur_len,
				.exists = true,
				.like = like,
				.like_len = like ? strlen(like) : 0 };
	const struct decision d = { .remove = e->added, .add = e->removed };
	return bls_slot_edit(&s, &d, NULL, NULL, len);
}

static char *undo_unmark(enum slot_kind k _unused_, const struct journal_entry *e, const char *cur, size_t cur_len,
			 size_t *len)
{
	(void)e;
	return grub_default_unmark(cur, cur_len, len);
}

/* /etc/default/flash-kernel: the same, in the value of its
 * LINUX_KERNEL_CMDLINE assignment */
static char *undo_flashk(enum slot_kind k _unused_, const struct journal_entry *e, const char *cur, size_t cur_len,
			 size_t *len)
{
	return flashk_default_undo(cur, cur_len, e->had_original ? e->original : NULL, e->original_len, &e->added,
				   &e->removed, len);
}

/* a UKI's content is the line systemd-stub gives its kernel (slots/uki.c) */
static char *uki_cmdline(const struct slot *s) { return s->content ? xstrdup(s->content) : NULL; }

struct slot_kind_ops {
	/* the new content for a decision; NULL: a kind that is only read */
	char *(*edit)(const struct slot *s, const struct decision *d, struct strv *added, struct strv *removed,
		      size_t *new_len);
	/* the command line it gives its kernel; NULL: none */
	char *(*cmdline)(const struct slot *s);
	enum slot_write writes;
	/* revert of a file changed since the tool wrote it; NULL: the file
	 * goes whatever it holds (the tool's own data) */
	undo_fn *undo;
};

static const struct slot_kind_ops kind_ops[] = {
	[SLOT_BLS] = { edit_bls, bls_slot_cmdline, SLOT_WRITES_FILE, undo_bls },
	[SLOT_KERNEL_CMDLINE] = { edit_line, line_slot_cmdline, SLOT_WRITES_FILE, undo_line },
	[SLOT_RPI] = { edit_line, line_slot_cmdline, SLOT_WRITES_FILE, undo_line },
	[SLOT_RPI_EXTRA] = { edit_line, line_slot_cmdline, SLOT_WRITES_FILE, undo_line },
	[SLOT_GRUB_DROPIN] = { grub_dropin_edit, NULL, SLOT_WRITES_FILE, undo_tokens },
	[SLOT_GRUB_DEFAULT] = { grub_default_edit, NULL, SLOT_WRITES_FILE, undo_unmark },
	[SLOT_GRUB_CFG] = { NULL, grub_menu_cmdline, SLOT_WRITES_NOTHING, NULL },
	[SLOT_GRUBENV] = { grubenv_edit, grubenv_cmdline, SLOT_WRITES_KERNELOPTS, undo_tokens },
	[SLOT_UKI] = { NULL, uki_cmdline, SLOT_WRITES_NOTHING, NULL },
	[SLOT_GRUB_TOKENS] = { grub_tokens_edit, NULL, SLOT_WRITES_FILE, NULL },
	[SLOT_UBOOT_DROPIN] = { uboot_dropin_edit, NULL, SLOT_WRITES_FILE, NULL },
	[SLOT_EXTLINUX] = { NULL, grub_menu_cmdline, SLOT_WRITES_NOTHING, NULL },
	[SLOT_FLASHK_DEFAULT] = { flashk_default_edit, flashk_default_cmdline, SLOT_WRITES_FILE, undo_flashk },
	[SLOT_BOOT_SCRIPT] = { NULL, grub_menu_cmdline, SLOT_WRITES_NOTHING, NULL },
};

static const struct slot_kind_ops *ops_of(enum slot_kind k)
{
	return (size_t)k < ARRAY_SIZE(kind_ops) ? &kind_ops[k] : NULL;
}

int slots_find(const struct root *r, const struct policy *p, const char *default_kernel, struct slot_list *out)
{
	memset(out, 0, sizeof(*out));
	bool trust = !r->live || trust_boot_env() || (p && p->systemd_boot == TRI_YES);
	struct boot_dirs b;
	find_boot_dirs(r, trust, &b, &out->rejected);
	for (size_t i = 0; i < b.n; i++)
		if (b.v[i].has_entries) {
			out->boot_dir = xstrdup(b.v[i].path);
			break;
		}
	if (!out->boot_dir && b.n)
		out->boot_dir = xstrdup(b.v[0].path);

	const struct find_args a = { r, p, default_kernel, &b };
	int e = 0;
	for (size_t i = 0; i < ARRAY_SIZE(finders) && e >= 0; i++)
		e = finders[i](&a, out);
	boot_dirs_free(&b);
	if (e < 0) {
		slots_free(out);
		return e;
	}
	return 0;
}

int slots_find_ukis(const struct root *r, const struct policy *p, struct slot_list *out)
{
	memset(out, 0, sizeof(*out));
	bool trust = !r->live || trust_boot_env() || (p && p->systemd_boot == TRI_YES);
	struct boot_dirs b;
	find_boot_dirs(r, trust, &b, &out->rejected);
	struct bls_identity id;
	bls_identity_load(r, &id);
	int e = 0;
	for (size_t i = 0; i < b.n && e >= 0; i++)
		if (b.v[i].has_ukis)
			e = uki_slots_find(r, p, &id, b.v[i].path, out);
	bls_identity_free(&id);
	boot_dirs_free(&b);
	if (e < 0)
		slots_free(out);
	return e;
}

bool slot_fs_absent(const struct root *r, const struct policy *p, const char *path, char **dir)
{
	static const char *const below[] = { "/loader/", "/EFI/Linux/" };
	static const char *const mounts[] = { "/efi", "/boot", "/boot/efi" };
	size_t plen = SIZE_MAX;
	for (size_t i = 0; i < ARRAY_SIZE(below) && plen == SIZE_MAX; i++) {
		const char *at = strstr(path, below[i]);
		if (at)
			plen = (size_t)(at - path);
	}
	bool boot_fs = false;
	for (size_t i = 0; i < ARRAY_SIZE(mounts) && plen != SIZE_MAX; i++)
		boot_fs |= strlen(mounts[i]) == plen && strncmp(path, mounts[i], plen) == 0;
	if (!boot_fs)
		return false;
	bool trust = !r->live || trust_boot_env() || (p && p->systemd_boot == TRI_YES);
	struct boot_dirs b;
	struct strv rejected = { 0 };
	find_boot_dirs(r, trust, &b, &rejected);
	bool found = false;
	for (size_t i = 0; i < b.n && !found; i++)
		found = strlen(b.v[i].path) == plen && strncmp(path, b.v[i].path, plen) == 0;
	boot_dirs_free(&b);
	strv_free(&rejected);
	if (!found && dir)
		*dir = xstrndup(path, plen);
	return !found;
}

char *slot_edit(const struct slot *s, const struct decision *d, struct strv *added, struct strv *removed,
		size_t *new_len)
{
	size_t dummy;
	const struct slot_kind_ops *o = ops_of(s->kind);
	if (!o || !o->edit)
		return NULL;
	return o->edit(s, d, added, removed, new_len ? new_len : &dummy);
}

char *slot_cmdline(const struct slot *s)
{
	const struct slot_kind_ops *o = ops_of(s->kind);
	return o && o->cmdline ? o->cmdline(s) : NULL;
}

enum slot_write slot_kind_writes(enum slot_kind k)
{
	const struct slot_kind_ops *o = ops_of(k);
	return o ? o->writes : SLOT_WRITES_NOTHING;
}

void slot_undo(enum slot_kind k, const struct journal_entry *e, const char *text, size_t len, struct slot_undo *out)
{
	*out = (struct slot_undo){ .action = UNDO_NOTHING };
	const struct slot_kind_ops *o = ops_of(k);
	if (!o || o->writes == SLOT_WRITES_NOTHING || !text)
		return;
	if (o->writes == SLOT_WRITES_KERNELOPTS) {
		/* the record holds kernelopts values, not the file */
		out->cur = grubenv_get(text, len, "kernelopts");
		if (!out->cur) {
			out->why = "no kernelopts any more";
			return;
		}
		out->cur_len = strlen(out->cur);
	} else {
		out->cur = xstrndup(text, len);
		out->cur_len = len;
	}
	/* as the tool left it: its last write, or, where that write never
	 * landed (a power cut after the journal), what it had left before */
	const bool as_written = (e->written && bytes_same(out->cur, out->cur_len, e->written, e->written_len)) ||
				(e->before && bytes_same(out->cur, out->cur_len, e->before, e->before_len));
	if (!o->undo || (as_written && !e->had_original)) {
		out->action = o->writes == SLOT_WRITES_FILE ? UNDO_DELETE : UNDO_NOTHING;
		return;
	}
	if (as_written) {
		out->content = xstrndup(e->original, e->original_len);
		out->len = e->original_len;
	} else {
		out->content = o->undo(k, e, out->cur, out->cur_len, &out->len);
	}
	if (out->len != out->cur_len || memcmp(out->content, out->cur, out->len) != 0)
		out->action = UNDO_WRITE;
}

char *slot_unedit(enum slot_kind k, const struct journal_entry *e, const char *cur, size_t cur_len, size_t *len)
{
	const struct slot_kind_ops *o = ops_of(k);
	if (!o || o->writes == SLOT_WRITES_NOTHING || !o->undo)
		return NULL;
	return o->undo(k, e, cur, cur_len, len);
}

void slot_undo_free(struct slot_undo *u)
{
	free(u->content);
	free(u->cur);
	*u = (struct slot_undo){ .action = UNDO_NOTHING };
}
