/* slots/grub/flashk.c - Debian's flash-kernel (U-Boot boards that boot a
 * boot script), see slots/grub/grub.h. flash-kernel (3.107) sources
 * /etc/default/flash-kernel and writes its machine's boot script (the
 * database's Boot-Script-Path, /boot/boot.scr on most boards) from a
 * template whose line
 *   setenv bootargs "@@LINUX_KERNEL_CMDLINE_DEFAULTS@@ ${bootargs} @@LINUX_KERNEL_CMDLINE@@"
 * takes the two variables' values, wrapped by mkimage as a legacy U-Boot
 * image named "boot script". It runs at every kernel's and initramfs'
 * installation (its kernel and initramfs hooks) for the newest kernel.
 *   SLOT_FLASHK_DEFAULT  /etc/default/flash-kernel: the tokens of the value
 *                        of its LINUX_KERNEL_CMDLINE assignment are edited,
 *                        every other byte kept; a value that takes running
 *                        code to know is not managed (the file and line
 *                        said);
 *   SLOT_BOOT_SCRIPT     the boot script: never edited; its bootargs line
 *                        judged against its kernel's decision, and made
 *                        anew by the root's flash-kernel after a change. */
#include "lib/diag.h"
#include "slots/grub/grub.h"

#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>

#include "lib/cmdline.h"
#include "lib/shvars.h"
#include "slots/grub/grub-int.h"
#include "slots/slot-int.h"

#define FK_VAR "LINUX_KERNEL_CMDLINE"
#define FK_VAR_DEFAULTS "LINUX_KERNEL_CMDLINE_DEFAULTS"
#define FK_MACHINE_FILE "/etc/flash-kernel/machine"
#define FK_DB_ETC "/etc/flash-kernel/db"
#define FK_DB_PKG "/usr/share/flash-kernel/db/all.db"
#define FK_SCRIPT_DEFAULT "/boot/boot.scr"
/* the name mkimage gives flash-kernel's script (mkimage_script's -n) */
#define FK_SCRIPT_NAME "boot script"

/* ---- /etc/default/flash-kernel ---- */

/* Where the value of the file's last LINUX_KERNEL_CMDLINE assignment is:
 * the bytes between its quotes (or the bare word), the quote (0: none). */
struct fk_value {
	size_t start, end;
	char quote;
	unsigned line;
};

static bool blank_or_comment(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	return p == end || *p == '#' || *p == '\r';
}

static bool name_char(char c)
{
	return c == '_' || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

/* Does the line name the variable (as a word of its own, not as a part of
 * LINUX_KERNEL_CMDLINE_DEFAULTS)? */
static bool names_var(const char *l, size_t n)
{
	const size_t k = strlen(FK_VAR);
	for (const char *p = l; (p = memmem(p, n - (size_t)(p - l), FK_VAR, k)); p += k)
		if ((p == l || !name_char(p[-1])) && (p + k == l + n || !name_char(p[k])))
			return true;
	return false;
}

/* One line: 1 an assignment of a plain value (*v set), 0 no assignment of
 * the variable, -1 one whose value is not plain (text to run, escapes,
 * more on the line than the assignment). */
static int assignment(const char *text, const char *l, size_t n, struct fk_value *v)
{
	const char *p = l, *end = l + n;
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	if ((size_t)(end - p) > 7 && memcmp(p, "export", 6) == 0 && (p[6] == ' ' || p[6] == '\t')) {
		p += 6;
		while (p < end && (*p == ' ' || *p == '\t'))
			p++;
	}
	const size_t k = strlen(FK_VAR);
	if ((size_t)(end - p) <= k || memcmp(p, FK_VAR, k) != 0 || p[k] != '=')
		return names_var(l, n) ? -1 : 0;
	p += k + 1;
	char q = (p < end && (*p == '"' || *p == '\'')) ? *p : 0;
	const char *s = q ? p + 1 : p;
	const char *e = s;
	if (q) {
		while (e < end && *e != q)
			e++;
		if (e == end)
			return -1; /* the value goes on to another line */
	} else {
		while (e < end && *e != ' ' && *e != '\t' && *e != ';' && *e != '\r')
			e++;
	}
	for (const char *c = s; c < e; c++)
		if (*c == '$' || *c == '`' || *c == '\\' || (!q && (*c == '"' || *c == '\'' || *c == '#')))
			return -1;
	if (!blank_or_comment(q ? e + 1 : e, end))
		return -1;
	v->start = (size_t)(s - text);
	v->end = (size_t)(e - text);
	v->quote = q;
	return 1;
}

/* The value's place in text: true with *v, false where no line assigns
 * it; where one does in a way the tool does not edit, false with *bad
 * set to its line. */
static bool value_find(const char *text, size_t len, struct fk_value *v, unsigned *bad)
{
	*bad = 0;
	bool found = false;
	const char *l;
	size_t n;
	unsigned ln = 0;
	for (size_t pos = 0; text_next_line(text, len, &pos, &l, &n);) {
		ln++;
		struct fk_value cur;
		int a = assignment(text, l, n, &cur);
		if (a < 0 && !*bad)
			*bad = ln;
		if (a > 0) {
			cur.line = ln;
			*v = cur;
			found = true;
		}
	}
	return found && !*bad;
}

/* The value the file gives LINUX_KERNEL_CMDLINE ("" where it sets none),
 * NULL where it cannot be known. */
static char *file_value(const char *disp, const char *text, size_t len, const char *name)
{
	struct shvars vs = { 0 };
	shvars_source(&vs, disp, text, len);
	const char *val = NULL, *file = NULL, *why = NULL;
	unsigned line = 0;
	char *out = shvars_get(&vs, name, &val, &file, &line, &why) ? xstrdup(val ? val : "") : NULL;
	shvars_free(&vs);
	return out;
}

static char *value_edit(const char *text, size_t len, const char *like, size_t like_len, const struct strv *remove,
			const struct strv *add, struct strv *added, struct strv *removed, size_t *new_len);

/* Why the file's LINUX_KERNEL_CMDLINE is not one the tool edits, or NULL:
 * every line naming it is a plain assignment, and nothing else in the
 * file could change it (as a shell sourcing it sees). */
char *flashk_value_problem(const char *disp, const char *text, size_t len)
{
	struct fk_value v;
	unsigned bad;
	bool found = value_find(text, len, &v, &bad);
	if (bad)
		return xasprintf("%s:%u: " FK_VAR " is not a plain value (a quoted or bare word on a line of its own): "
				 "edit it by hand",
				 disp, bad);
	struct shvars vs = { 0 };
	shvars_source(&vs, disp, text, len);
	const char *val = NULL, *file = NULL, *why = NULL;
	unsigned line = 0;
	char *out = NULL;
	if (!shvars_get(&vs, FK_VAR, &val, &file, &line, &why))
		out = xasprintf("%s:%u: " FK_VAR " takes running code to know (%s): edit it by hand",
				file ? file : disp, line, why ? why : "a command");
	else if (found && line != v.line)
		out = xasprintf("%s:%u: " FK_VAR " is set there, not by a plain assignment: edit it by hand", disp,
				line);
	shvars_free(&vs);
	if (!out) {
		/* an edit of the value must be what a shell reads */
		struct strv add = { 0 }, none = { 0 };
		strv_pushdup(&add, "memcg-policy.probe=1");
		size_t n;
		char *t = value_edit(text, len, NULL, 0, &none, &add, NULL, NULL, &n);
		if (!t)
			out = xasprintf("%s: a shell sourcing it would not read an edit of " FK_VAR
					" as written (a quote left open before it?): edit it by hand",
					disp);
		free(t);
		strv_free(&add);
	}
	return out;
}

/* The tokens in the value edited; the file around them kept. An
 * unquoted value that gets a blank is quoted; a file with no assignment
 * gets one at its end. */
static char *value_edit(const char *text, size_t len, const char *like, size_t like_len, const struct strv *remove,
			const struct strv *add, struct strv *added, struct strv *removed, size_t *new_len)
{
	struct fk_value v = { .start = len, .end = len, .quote = 0 };
	unsigned bad;
	bool found = value_find(text, len, &v, &bad);
	if (bad)
		return NULL;
	char *val = cmdline_edit(text + v.start, v.end - v.start, remove, NULL, removed);
	size_t vlen = strlen(val);
	const struct slot like_slot = { .kind = SLOT_FLASHK_DEFAULT, .like = like, .like_len = like_len };
	add_tokens(&val, &vlen, add, NULL, NULL, added, &like_slot);
	struct strbuf sb = { 0 };
	sb_append(&sb, "");
	if (found) {
		bool quote = !v.quote && strpbrk(val, " \t") != NULL;
		sb_appendn(&sb, text, v.start);
		if (quote)
			sb_append(&sb, "\"");
		sb_append(&sb, val);
		if (quote)
			sb_append(&sb, "\"");
		sb_appendn(&sb, text + v.end, len - v.end);
	} else if (vlen) {
		sb_appendn(&sb, text, len);
		if (len && text[len - 1] != '\n')
			sb_append(&sb, "\n");
		sb_appendf(&sb, FK_VAR "=\"%s\"\n", val);
	} else {
		sb_appendn(&sb, text, len);
	}
	/* a shell sourcing the new file must get exactly the new value (not
	 * so where an open quote earlier in the file takes the line in) */
	char *got = file_value("", sb.s, sb.len, FK_VAR);
	const bool as_meant = got && streq(got, val);
	free(got);
	free(val);
	if (!as_meant) {
		sb_free(&sb);
		return NULL;
	}
	*new_len = sb.len;
	return sb_take(&sb);
}

char *flashk_default_edit(const struct slot *s, const struct decision *d, struct strv *added, struct strv *removed,
			  size_t *new_len)
{
	if (s->unmanaged)
		return NULL;
	if (!d || d->keep)
		return slot_content_copy(s, new_len);
	char *out = value_edit(s->content ? s->content : "", s->content ? s->len : 0, s->like, s->like_len, &d->remove,
			       &d->add, added, removed, new_len);
	return out ? out : slot_content_copy(s, new_len);
}

char *flashk_default_cmdline(const struct slot *s)
{
	return s->content ? file_value(s->path, s->content, s->len, FK_VAR) : NULL;
}

char *flashk_default_undo(const char *cur, size_t cur_len, const char *original, size_t original_len,
			  const struct strv *added, const struct strv *removed, size_t *len)
{
	_cleanup_free_ char *like = NULL;
	struct fk_value v;
	unsigned bad;
	if (original && value_find(original, original_len, &v, &bad))
		like = xstrndup(original + v.start, v.end - v.start);
	char *out = value_edit(cur, cur_len, like, like ? strlen(like) : 0, added, removed, NULL, NULL, len);
	if (!out) {
		*len = cur_len;
		out = xstrndup(cur, cur_len);
	}
	return out;
}

/* ---- finding the slots ---- */

/* A field of the machine's entry in flash-kernel's database, as its
 * get_machine_field reads the database: the administrator's entries
 * (/etc/flash-kernel/db) before the package's. */
static char *machine_field(const struct root *r, const char *machine, const char *field)
{
	static const char *const dbs[] = { FK_DB_ETC, FK_DB_PKG };
	enum { LOOKING, GOT_MACHINE, FIELDS } state = LOOKING;
	for (size_t d = 0; d < ARRAY_SIZE(dbs); d++) {
		_cleanup_free_ char *text = NULL;
		size_t len;
		if (root_read_file(r, dbs[d], MAX_INPUT_FILE, &text, &len) < 0)
			continue;
		const char *l;
		size_t n;
		for (size_t pos = 0; text_next_line(text, len, &pos, &l, &n);) {
			while (n && (*l == ' ' || *l == '\t')) {
				l++;
				n--;
			}
			while (n && strchr(" \t\r", l[n - 1]))
				n--;
			size_t f = 0;
			while (f < n && l[f] != ' ' && l[f] != '\t')
				f++;
			size_t vs = f;
			while (vs < n && (l[vs] == ' ' || l[vs] == '\t'))
				vs++;
			const bool is_machine = f == 8 && memcmp(l, "Machine:", 8) == 0;
			if (state == LOOKING && is_machine && n - vs == strlen(machine) &&
			    memcmp(l + vs, machine, n - vs) == 0)
				state = GOT_MACHINE;
			if (state == LOOKING)
				continue;
			if (f == strlen(field) + 1 && memcmp(l, field, f - 1) == 0 && l[f - 1] == ':')
				return xstrndup(l + vs, n - vs);
			if (f == 0)
				state = LOOKING;
			else if (!is_machine)
				state = FIELDS;
		}
	}
	return NULL;
}

/* The machine flash-kernel works for: /etc/flash-kernel/machine, else
 * (on the running system only) the device tree's model. NULL: unknown. */
static char *machine_of(const struct root *r)
{
	static const char *const files[] = { FK_MACHINE_FILE, "/proc/device-tree/model" };
	for (size_t i = 0; i < ARRAY_SIZE(files); i++) {
		if (i == 1 && !r->live)
			break;
		char *text;
		size_t len;
		if (root_read_file(r, files[i], 4096, &text, &len) < 0)
			continue;
		size_t n = strnlen(text, len);
		while (n && strchr(" \t\r\n", text[n - 1]))
			n--;
		text[n] = '\0';
		if (n)
			return text;
		free(text);
	}
	return NULL;
}

/* What the boot script is made from (struct menu_facts). */
static struct menu_facts *menu_facts_find(const struct root *r, const char *tool, const char *script,
					  const struct slot *def)
{
	struct menu_facts *mf = xcalloc(1, sizeof(*mf));
	mf->regen = tool ? xstrdup("flash-kernel") : NULL;
	struct stat mst, st;
	if (root_stat(r, script, &mst) == 0 && root_stat(r, FLASHK_DEFAULT_PATH, &st) == 0 && grub_newer(&st, &mst))
		menu_fact(&mf->stale, "%s is newer than the boot script", FLASHK_DEFAULT_PATH);
	if (def && def->content) {
		_cleanup_free_ char *defaults = file_value(def->path, def->content, def->len, FK_VAR_DEFAULTS);
		if (defaults && (strstr(defaults, "cgroup_disable=") || strstr(defaults, "cgroup_enable=")))
			menu_fact(&mf->overrides,
				  "%s sets " FK_VAR_DEFAULTS "=\"%s\", which the tool does not edit: take the cgroup "
				  "switches out of it",
				  FLASHK_DEFAULT_PATH, defaults);
	}
	if (!tool)
		menu_fact(&mf->missing, "no flash-kernel in the root (flash-kernel is not installed)");
	else if (def && def->unmanaged && def->note)
		menu_fact(&mf->missing, "%s", def->note);
	mf->regeneration_helps = !mf->overrides && !mf->missing;
	return mf;
}

int flashk_slots_find(const struct root *r, const struct policy *p, struct slot_list *l)
{
	_cleanup_free_ char *tool = grub_find_tool(r, "flash-kernel");
	if (!tool && !(p && p->flash_kernel == TRI_YES))
		return 0;
	_cleanup_free_ char *off =
		p ? slot_policy_off(p, p->flash_kernel, &p->flash_kernel_origin, "flash-kernel") : NULL;
	_cleanup_free_ char *machine = machine_of(r);
	_cleanup_free_ char *script = machine ? machine_field(r, machine, "Boot-Script-Path") : NULL;
	const bool known = machine && script;
	if (!script)
		script = xstrdup(FK_SCRIPT_DEFAULT);

	struct slot *s = slot_list_add(l, SLOT_FLASHK_DEFAULT, FLASHK_DEFAULT_PATH);
	int e = slot_read_text(r, FLASHK_DEFAULT_PATH, &s->content, &s->len);
	if (e < 0)
		return e;
	s->exists = s->content != NULL;
	s->mode = 0644;
	_cleanup_free_ char *disp = root_display(r, FLASHK_DEFAULT_PATH);
	if (off) {
		s->note = xstrdup(off);
	} else if (!s->exists) {
		s->note = xstrdup("missing: flash-kernel cannot run without it (its package writes it): reinstall "
				  "flash-kernel");
	} else if (machine && !known && root_exists(r, FK_DB_PKG)) {
		s->note = xasprintf("flash-kernel writes no boot script for the machine \"%s\" (no Boot-Script-Path "
				    "in its database): the line its kernel gets is not read",
				    machine);
	} else {
		s->note = flashk_value_problem(disp, s->content, s->len);
	}
	s->unmanaged = s->note != NULL;
	const size_t def_at = l->n - 1;

	_cleanup_free_ char *text = NULL;
	size_t len = 0;
	e = root_is_reg(r, script) ? root_read_file(r, script, MAX_INPUT_FILE, &text, &len) : 0;
	if (e < 0) {
		_cleanup_free_ char *d = root_display(r, script);
		return diag_error(root_error_exit(e), "%s: cannot read: %s", d, root_strerror(e));
	}
	if (!text)
		return 0;
	const char *body;
	size_t blen;
	char name[UIMAGE_NAME_LEN + 1];
	if (!boot_script_text(text, len, &body, &blen, name) || !streq(name, FK_SCRIPT_NAME))
		return 0; /* a script of someone else's (flash-kernel's is an image of that name) */
	s = slot_list_add(l, SLOT_BOOT_SCRIPT, script);
	s->content = TAKE_PTR(text);
	s->len = len;
	s->exists = true;
	if (off) {
		s->unmanaged = true;
		s->note = xstrdup(off);
	} else {
		s->menu = menu_facts_find(r, tool, script, &l->v[def_at]);
	}
	/* the boot script first: the line the next boot gets is its line,
	 * not the value in the file it is made from */
	const struct slot t = l->v[def_at];
	l->v[def_at] = l->v[l->n - 1];
	l->v[l->n - 1] = t;
	return 0;
}

/* ---- regenerating ---- */

static const char *script_path(const struct slot_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		if (l->v[i].kind == SLOT_BOOT_SCRIPT)
			return l->v[i].path;
	return FK_SCRIPT_DEFAULT;
}

int flashk_regen_preflight(const struct root *r, const struct slot_list *l, const bool *changed)
{
	if (!slots_menu_regen_needed(l, changed, MENU_FLASHK))
		return 0;
	_cleanup_free_ char *tool = grub_find_tool(r, "flash-kernel");
	if (!tool)
		return diag_error(EXIT_SYSTEM, "--regenerate: no flash-kernel to regenerate %s in %s", script_path(l),
				  r->live ? "/" : r->path);
	return r->live ? 0 : grub_image_preflight(r, tool);
}

int flashk_after_commit(const struct root *r, const struct policy *p, const struct slot_list *l, const bool *changed,
			enum grub_regen_mode mode, unsigned *ran_tools)
{
	if (!slots_menu_regen_needed(l, changed, MENU_FLASHK))
		return 0;
	_cleanup_free_ char *tool = grub_find_tool(r, "flash-kernel");
	if (!tool) {
		log_verbose("no flash-kernel to regenerate the boot script: nothing regenerated");
		return 0;
	}
	const char *argv[] = { tool, NULL };
	const char *script = script_path(l);
	return menu_tool_run(r, mode, p && p->regenerate == TRI_NO, argv, script, script, "flash-kernel", ran_tools);
}
