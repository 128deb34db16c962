/* slots/slot.c - finding the slots of a root and dispatching their edits by
 * kind, see slots/slot.h. The kinds live in slots/bls.c, slots/kcmdline.c,
 * slots/rpi.c and (GRUB) slots/grub/grub.c. */
#include "slots/slot.h"
#include "lib/cmdline.h"
#include "lib/diag.h"
#include "slots/slot-int.h"

#include <errno.h>
#include <stdio.h>
#include <sys/stat.h>

/* What each kind is called, the generated menus it is an input of
 * (MENU_*), and whether it is such a menu itself. */
static const struct {
	const char *name;
	unsigned feeds;
	bool is_menu;
} kinds[] = {
	[SLOT_BLS] = { "bls", 0, false },
	[SLOT_KERNEL_CMDLINE] = { "kernel-cmdline", 0, false },
	[SLOT_RPI] = { "rpi", 0, false },
	[SLOT_RPI_EXTRA] = { "rpi-extra", 0, false },
	[SLOT_GRUB_DROPIN] = { "grub-dropin", MENU_GRUB, false },
	[SLOT_GRUB_DEFAULT] = { "grub-default", MENU_GRUB, false },
	[SLOT_GRUB_CFG] = { "grub-cfg", MENU_GRUB, true },
	[SLOT_GRUBENV] = { "grubenv", MENU_GRUB, false },
	[SLOT_UKI] = { "uki", 0, false },
	[SLOT_GRUB_TOKENS] = { "grub-tokens", MENU_GRUB | MENU_UBOOT, false },
	[SLOT_UBOOT_DROPIN] = { "u-boot-dropin", MENU_UBOOT, false },
	[SLOT_EXTLINUX] = { "extlinux", MENU_UBOOT, true },
	[SLOT_FLASHK_DEFAULT] = { "flash-kernel", MENU_FLASHK, false },
	[SLOT_BOOT_SCRIPT] = { "boot-script", MENU_FLASHK, true },
};

static const struct {
	const char *path;
	enum slot_kind kind;
} kind_paths[] = {
	{ KCMDLINE_PATH, SLOT_KERNEL_CMDLINE },
	{ RPI_CMDLINE_PATH, SLOT_RPI },
	{ RPI_CMDLINE_OLD_PATH, SLOT_RPI },
	{ RPI_EXTRA_PATH, SLOT_RPI_EXTRA },
	{ GRUB_DROPIN_PATH, SLOT_GRUB_DROPIN },
	{ GRUB_DEFAULT_PATH, SLOT_GRUB_DEFAULT },
	{ GRUB_TOKENS_PATH, SLOT_GRUB_TOKENS },
	{ GRUBENV_PATH, SLOT_GRUBENV },
	{ GRUBENV2_PATH, SLOT_GRUBENV },
	{ UBOOT_DROPIN_PATH, SLOT_UBOOT_DROPIN },
	{ FLASHK_DEFAULT_PATH, SLOT_FLASHK_DEFAULT },
};
static const char *const entry_dirs[] = { "/boot/loader/entries/", "/efi/loader/entries/",
					  "/boot/efi/loader/entries/" };

bool slot_kind_of_path(const char *path, enum slot_kind *kind)
{
	enum slot_kind dummy;
	if (!kind)
		kind = &dummy;
	for (size_t i = 0; i < ARRAY_SIZE(kind_paths); i++)
		if (streq(path, kind_paths[i].path)) {
			*kind = kind_paths[i].kind;
			return true;
		}
	for (size_t i = 0; i < ARRAY_SIZE(entry_dirs); i++) {
		if (!startswith(path, entry_dirs[i]))
			continue;
		const char *name = path + strlen(entry_dirs[i]);
		*kind = SLOT_BLS;
		return name[0] && name[0] != '.' && !strchr(name, '/') && endswith(name, ".conf");
	}
	return false;
}

const char *slot_kind_name(enum slot_kind k)
{
	if ((size_t)k < ARRAY_SIZE(kinds) && kinds[k].name)
		return kinds[k].name;
	return "unknown";
}

unsigned slot_kind_menus(enum slot_kind k) { return (size_t)k < ARRAY_SIZE(kinds) ? kinds[k].feeds : 0; }

bool slot_kind_feeds_menu(enum slot_kind k) { return slot_kind_menus(k) && !slot_kind_is_menu(k); }

bool slot_kind_is_menu(enum slot_kind k) { return (size_t)k < ARRAY_SIZE(kinds) && kinds[k].is_menu; }

bool slots_menu_regen_needed(const struct slot_list *l, const bool *changed, unsigned menu)
{
	/* the family is there: a managed slot of its own (the recorded
	 * decision, GRUB's and u-boot-menu's, is no sign of either) */
	bool there = false;
	for (size_t i = 0; i < l->n && !there; i++)
		there = !l->v[i].unmanaged && slot_kind_menus(l->v[i].kind) == menu;
	for (size_t i = 0; i < l->n && there; i++) {
		const struct slot *s = &l->v[i];
		if (!changed[i] || s->unmanaged || !(slot_kind_menus(s->kind) & menu))
			continue;
		if (!slot_kind_is_menu(s->kind) || slot_regeneration_helps(s))
			return true;
	}
	return false;
}

const char *slot_state_name(enum slot_state s)
{
	switch (s) {
	case SLOT_IN_SYNC: return "in-sync";
	case SLOT_DRIFT: return "drift";
	case SLOT_MISSING: return "missing";
	case SLOT_UNMANAGED: return "unmanaged";
	case SLOT_NOT_REGENERATED: return "not-regenerated";
	}
	return "unknown";
}

struct slot *slot_list_add(struct slot_list *l, enum slot_kind kind, const char *path)
{
	l->v = xrealloc(l->v, (l->n + 1) * sizeof(*l->v));
	struct slot *s = &l->v[l->n++];
	memset(s, 0, sizeof(*s));
	s->kind = kind;
	s->path = xstrdup(path);
	s->mode = 0644;
	return s;
}

void menu_facts_free(struct menu_facts *m)
{
	if (!m)
		return;
	free(m->regen);
	free(m->overrides);
	free(m->missing);
	free(m->default_value);
	free(m->stale);
	free(m);
}

void uki_facts_free(struct uki_facts *u)
{
	if (!u)
		return;
	free(u->own);
	free(u->uname);
	strv_free(&u->addons);
	strv_free(&u->addon_lines);
	strv_free(&u->rebuild);
	free(u->no_rebuild);
	free(u);
}

static void slot_free(struct slot *s)
{
	free(s->path);
	free(s->kernel);
	free(s->content);
	free(s->note);
	menu_facts_free(s->menu);
	uki_facts_free(s->uki);
}

void slots_free(struct slot_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		slot_free(&l->v[i]);
	free(l->v);
	free(l->boot_dir);
	strv_free(&l->rejected);
	memset(l, 0, sizeof(*l));
}

char *slot_policy_off(const struct policy *p, enum tristate t, const struct origin *o, const char *key)
{
	if (!p || t != TRI_NO)
		return NULL;
	if (o && o->file)
		return xasprintf("bootloaders: %s = no (%s:%u)", key, o->file, o->line);
	return xasprintf("bootloaders: %s = no", key);
}

int slot_read_text(const struct root *r, const char *path, char **out, size_t *len)
{
	_cleanup_free_ char *disp = root_display(r, path);
	*out = NULL;
	*len = 0;
	char *text;
	size_t n;
	/* one open: its type check on the O_PATH descriptor is the stat */
	int e = root_read_file(r, path, MAX_INPUT_FILE, &text, &n);
	if (e == -ENOENT)
		return 0;
	if (e == -EFBIG)
		return diag_error(EXIT_BADINPUT, "%s: larger than %u bytes", disp, MAX_INPUT_FILE);
	if (e == -EINVAL || e == -EISDIR)
		return diag_error(EXIT_BADINPUT, "%s: not a regular file", disp);
	/* what resolving the path refuses, said as a stat said it */
	if (e == -EXDEV || e == -ELOOP || e == -ENOTDIR)
		return diag_error(root_error_exit(e), "%s: %s", disp, root_strerror(e));
	if (e < 0)
		return diag_error(root_error_exit(e), "%s: cannot read: %s", disp, root_strerror(e));
	e = slot_text_check(disp, text, n);
	if (e < 0) {
		free(text);
		return e;
	}
	*out = text;
	*len = n;
	return 0;
}

int slot_text_check(const char *disp, const char *text, size_t n)
{
	/* memchr for both (a line at a time): every boot file read is
	 * checked, on every run */
	const char *nul = memchr(text, '\0', n);
	size_t upto = nul ? (size_t)(nul - text) : n; /* lines before the NUL */
	unsigned line = 1;
	for (size_t start = 0;; line++) {
		const char *nl = memchr(text + start, '\n', n - start);
		size_t end = nl ? (size_t)(nl - text) : n;
		if (nul && (size_t)(nul - text) < end)
			return diag_error(EXIT_BADINPUT, "%s:%u: NUL byte", disp, line);
		if (end - start > MAX_BOOT_LINE)
			return diag_error(EXIT_BADINPUT, "%s:%u: line longer than %u bytes", disp, line, MAX_BOOT_LINE);
		if (!nl || end >= upto)
			break;
		start = end + 1;
	}
	return 0;
}

char *slot_content_copy(const struct slot *s, size_t *new_len)
{
	*new_len = s->content ? s->len : 0;
	char *c = xmalloc(*new_len + 1);
	if (*new_len)
		memcpy(c, s->content, *new_len);
	c[*new_len] = '\0';
	return c;
}

/* ---- files that hold one command line ---- */

static bool is_ws(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; }

/* /etc/kernel/cmdline as kernel-install reads it (its loader-entry
 * plugin: tr -s "$IFS" ' ', then one trailing space dropped): every run
 * of spaces, tabs and newlines, quoted or not, becomes one space. */
static char *kernel_install_read(const char *text, size_t len)
{
	struct strbuf sb = { 0 };
	sb_append(&sb, "");
	for (size_t i = 0; i < len; i++) {
		bool ifs = text[i] == ' ' || text[i] == '\t' || text[i] == '\n';
		if (!ifs)
			sb_appendc(&sb, text[i]);
		else if (sb.len == 0 || sb.s[sb.len - 1] != ' ')
			sb_appendc(&sb, ' ');
	}
	if (sb.len > 0 && sb.s[sb.len - 1] == ' ')
		sb.s[--sb.len] = '\0';
	return sb_take(&sb);
}

char *line_slot_cmdline(const struct slot *s)
{
	if (!s->content)
		return NULL;
	if (s->kind == SLOT_KERNEL_CMDLINE)
		return kernel_install_read(s->content, s->len);
	struct strbuf sb = { 0 };
	sb_append(&sb, "");
	size_t i = 0, n = s->len;
	while (i < n && is_ws(s->content[i]))
		i++;
	while (n > i && is_ws(s->content[n - 1]))
		n--;
	for (; i < n; i++)
		sb_appendc(&sb, s->content[i] == '\n' ? ' ' : s->content[i]);
	return sb_take(&sb);
}

void add_tokens(char **text, size_t *len, const struct strv *add, joined_fn joined, void *ctx, struct strv *added,
		const struct slot *s)
{
	for (size_t i = 0; i < add->n; i++) {
		_cleanup_free_ char *line = joined ? joined(ctx) : NULL;
		struct cmdline c;
		if (line)
			cmdline_split(line, strlen(line), &c);
		else
			cmdline_split(*text, *len, &c);
		bool present = cmdline_has_arg(&c, add->v[i]);
		cmdline_free(&c);
		if (present)
			continue;
		struct strv one = { 0 };
		strv_pushdup(&one, add->v[i]);
		char *n = cmdline_edit_like(*text, *len, NULL, &one, s->like, s->like_len);
		strv_free(&one);
		size_t nlen = strlen(n);
		if (nlen == *len && memcmp(n, *text, nlen) == 0) {
			free(n);
			continue; /* not a token that can be added */
		}
		if (added)
			strv_pushdup(added, add->v[i]);
		free(*text);
		*text = n;
		*len = nlen;
	}
}

char *line_slot_edit(const struct slot *s, const struct decision *d, struct strv *added, struct strv *removed,
		     size_t *new_len)
{
	const char *old = s->content ? s->content : "";
	size_t old_len = s->content ? s->len : 0;
	/* The kernel never sees the end of the file: cmdline.txt's line
	 * break (and the blank lines after it), /etc/kernel/cmdline's last
	 * run of spaces, tabs and newlines (kernel-install squashes it into
	 * the space it drops). The edit works on the rest, so that an open
	 * quote does not take that end into the last token. */
	size_t body = old_len;
	if (s->kind == SLOT_KERNEL_CMDLINE) {
		while (body > 0 && strchr(" \t\n", old[body - 1]))
			body--;
	} else {
		const char *nl = memchr(old, '\n', old_len);
		if (nl)
			body = (size_t)(nl - old);
	}
	char *text = cmdline_edit(old, body, &d->remove, NULL, removed);
	size_t len = strlen(text);
	add_tokens(&text, &len, &d->add, NULL, NULL, added, s);
	if (body < old_len) {
		text = xrealloc(text, len + old_len - body + 1);
		memcpy(text + len, old + body, old_len - body);
		len += old_len - body;
		text[len] = '\0';
	}
	/* an empty (or new) file gets a line with its line break */
	if (old_len == 0 && len > 0) {
		text = xrealloc(text, len + 2);
		text[len++] = '\n';
		text[len] = '\0';
	}
	*new_len = len;
	return text;
}
