/* slots/bls.c - Boot Loader Specification Type #1 entries
 * ($BOOT/loader/entries/NAME.conf) and UKIs ($BOOT/EFI/Linux/NAME.efi).
 *
 * An entry is "KEY VALUE" lines (whitespace between them, '#' comments).
 * Its kernel sees all its options lines joined with one space, so tokens
 * are removed from every options line, and new ones are added to the last
 * options line (or to the first one holding a bare "--", before it),
 * unless the joined line already has them. Every other byte of the file
 * stays as it was. */
#include "lib/cmdline.h"
#include "lib/diag.h"
#include "slots/kinds.h"

#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <strings.h>

struct bls_line {
	size_t start, end; /* the line, without its '\n' */
	bool options;
	bool sep;	     /* whitespace between "options" and its value */
	size_t vstart, vend; /* the value as the loader passes it on: without
			       * the blanks and '\r' at the end of the line */
};

static bool bls_ws(char c) { return c == ' ' || c == '\t'; }

static bool any_ws(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f'; }

static size_t bls_parse(const char *text, size_t len, struct bls_line **out)
{
	size_t n = 0, cap = 0;
	struct bls_line *v = NULL;
	size_t start = 0;
	while (start < len) {
		const char *nl = memchr(text + start, '\n', len - start);
		size_t end = nl ? (size_t)(nl - text) : len;
		struct bls_line L = { .start = start, .end = end };
		size_t k = start;
		while (k < end && bls_ws(text[k]))
			k++;
		size_t key = k;
		while (k < end && !any_ws(text[k]))
			k++;
		if (k - key == 7 && memcmp(text + key, "options", 7) == 0) {
			L.options = true;
			L.sep = k < end && bls_ws(text[k]);
			while (k < end && bls_ws(text[k]))
				k++;
			L.vstart = k;
			L.vend = end;
			while (L.vend > L.vstart && any_ws(text[L.vend - 1]))
				L.vend--;
		}
		if (n == cap) {
			cap = cap ? cap * 2 : 16;
			v = xrealloc(v, cap * sizeof(*v));
		}
		v[n++] = L;
		start = nl ? end + 1 : len;
	}
	*out = v;
	return n;
}

/* The value of the last line with this key (trimmed), NULL if none. The
 * lines as bls_parse splits them, without building their list: a few keys
 * of every entry are looked up on every run. */
static char *bls_value(const char *text, size_t len, const char *key)
{
	size_t klen = strlen(key);
	size_t fs = 0, fe = 0;
	bool found = false;
	for (size_t start = 0; start < len;) {
		const char *nl = memchr(text + start, '\n', len - start);
		size_t end = nl ? (size_t)(nl - text) : len;
		size_t k = start;
		while (k < end && bls_ws(text[k]))
			k++;
		if (end - k > klen && memcmp(text + k, key, klen) == 0 && bls_ws(text[k + klen])) {
			k += klen;
			while (k < end && any_ws(text[k]))
				k++;
			size_t e = end;
			while (e > k && any_ws(text[e - 1]))
				e--;
			fs = k;
			fe = e;
			found = true;
		}
		start = nl ? end + 1 : len;
	}
	return found ? xstrndup(text + fs, fe - fs) : NULL;
}

static char *options_joined(const char *text, size_t len)
{
	_cleanup_free_ struct bls_line *lines = NULL;
	size_t n = bls_parse(text, len, &lines);
	struct strbuf sb = { 0 };
	sb_append(&sb, "");
	bool first = true;
	for (size_t i = 0; i < n; i++) {
		if (!lines[i].options)
			continue;
		if (!first)
			sb_appendc(&sb, ' ');
		sb_appendn(&sb, text + lines[i].vstart, lines[i].vend - lines[i].vstart);
		first = false;
	}
	return sb_take(&sb);
}

char *bls_slot_cmdline(const struct slot *s)
{
	if (!s->content)
		return NULL;
	return options_joined(s->content, s->len);
}

static bool starts_digit(const char *s) { return isdigit((unsigned char)s[0]); }

/* Kernel releases start with a digit and have a dot ("6.9.7-200.fc40");
 * machine ids and "0-rescue-ID" do not. */
static bool looks_like_release(const char *s) { return starts_digit(s) && strchr(s, '.') != NULL; }

char *bls_version_from_linux(const char *path)
{
	static const char *const prefixes[] = { "vmlinuz-", "vmlinux-", "bzImage-", "zImage-",
						"Image-",   "uImage-",	"kernel-",  "linux-" };
	static const char *const names[] = { "linux", "vmlinuz", "vmlinux", "bzImage", "zImage", "Image", "kernel" };
	if (!path)
		return NULL;
	_cleanup_free_ char *p = xstrdup(path);
	size_t l = strlen(p);
	while (l > 0 && p[l - 1] == '/')
		p[--l] = '\0';
	char *slash = strrchr(p, '/');
	char *base = slash ? slash + 1 : p;
	for (size_t i = 0; i < ARRAY_SIZE(prefixes); i++)
		if (startswith(base, prefixes[i]) && looks_like_release(base + strlen(prefixes[i])))
			return xstrdup(base + strlen(prefixes[i]));
	if (!slash)
		return NULL;
	for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
		if (!streq(base, names[i]))
			continue;
		*slash = '\0';
		char *dir = strrchr(p, '/');
		dir = dir ? dir + 1 : p;
		if (looks_like_release(dir))
			return xstrdup(dir);
		return NULL;
	}
	return NULL;
}

#define UKI_NOTE "an entry that boots a UKI (slots/uki.c reads it)"

/* Does this options line end the kernel's parameters for the lines after
 * it? A bare "--" does; so does an unterminated quote: the lines are
 * joined with spaces, and the quote runs on through every later line, which
 * the kernel then reads as part of one quoted value. */
static bool line_ends_params(const char *s, size_t len)
{
	struct cmdline c;
	cmdline_split(s, len, &c);
	bool r = c.has_dashdash;
	if (!r && c.n > 0) {
		size_t quotes = 0;
		for (size_t i = 0; i < c.tok[c.n - 1].len; i++)
			quotes += s[c.tok[c.n - 1].start + i] == '"';
		r = quotes % 2;
	}
	cmdline_free(&c);
	return r;
}

static int entry_slot(const struct root *r, const struct policy *p, const struct bls_identity *id, const char *boot_dir,
		      const char *path, struct slot_list *l)
{
	char *text;
	size_t len;
	int e = slot_read_text(r, path, &text, &len);
	if (e < 0)
		return e;
	if (!text) {
		_cleanup_free_ char *disp = root_display(r, path);
		diag_warn("%s: dangling symbolic link, skipped", disp);
		return 0;
	}
	_cleanup_free_ char *disp = root_display(r, path);
	e = bls_entry_check(disp, text, len);
	if (e < 0) {
		free(text);
		return e;
	}
	struct slot *s = slot_list_add(l, SLOT_BLS, path);
	s->exists = true;
	s->content = text;
	s->len = len;
	bls_entry_describe(s, p);
	_cleanup_free_ char *uki = bls_value(text, len, "uki");
	_cleanup_free_ char *linux_path = bls_value(text, len, "linux");
	_cleanup_free_ char *mid = bls_value(text, len, "machine-id");
	/* text is the slot's content: an entry that boots a UKI may get the
	 * UKI's line as its content instead, so text is not read after this */
	if (uki && !linux_path && s->note && streq(s->note, UKI_NOTE)) {
		_cleanup_free_ char *joined = options_joined(text, len);
		e = uki_entry_slot(r, p, boot_dir, s, uki, joined);
		if (e < 0)
			return e;
	}
	if (!s->unmanaged) {
		char *why = bls_entry_foreign(id, path, mid, s->kernel);
		if (!why && !s->kernel)
			why = bls_entry_unowned(r, id, path, mid, linux_path);
		if (why) {
			s->unmanaged = true;
			s->note = why;
		}
	}
	return 0;
}

void bls_entry_describe(struct slot *s, const struct policy *p)
{
	const char *text = s->content ? s->content : "";
	size_t len = s->content ? s->len : 0;
	_cleanup_free_ char *version = bls_value(text, len, "version");
	_cleanup_free_ char *linux_path = bls_value(text, len, "linux");
	_cleanup_free_ char *uki = bls_value(text, len, "uki");
	_cleanup_free_ char *efi = bls_value(text, len, "efi");
	s->kernel = bls_entry_kernel(version, linux_path);

	_cleanup_free_ char *joined = options_joined(text, len);
	char *off = p ? slot_policy_off(p, p->systemd_boot, &p->systemd_boot_origin, "systemd-boot") : NULL;
	if (off) {
		s->unmanaged = true;
		s->note = off;
	} else if (strstr(joined, "$kernelopts")) {
		s->unmanaged = true;
		s->note = xstrdup("options use $kernelopts: grubenv is the slot");
	} else if (!linux_path && uki) {
		s->unmanaged = true;
		s->note = xstrdup(UKI_NOTE);
	} else if (!linux_path) {
		s->unmanaged = true;
		s->note = xasprintf("no linux line: %s", efi ? "an EFI program, not a kernel" : "not a kernel entry");
	}
}

int bls_entry_check(const char *disp, const char *text, size_t len)
{
	_cleanup_free_ struct bls_line *lines = NULL;
	size_t n = bls_parse(text, len, &lines);
	size_t last = SIZE_MAX;
	for (size_t i = 0; i < n; i++)
		if (lines[i].options)
			last = i;
	for (size_t i = 0; i < n; i++) {
		if (!lines[i].options)
			continue;
		const char *v = text + lines[i].vstart;
		size_t vl = lines[i].vend - lines[i].vstart, quotes = 0;
		struct cmdline c;
		cmdline_split(v, vl, &c);
		bool dashdash = c.has_dashdash;
		cmdline_free(&c);
		if (dashdash)
			break; /* what follows belongs to init */
		for (size_t k = 0; k < vl; k++)
			quotes += v[k] == '"';
		if (quotes % 2 && i != last)
			return diag_error(EXIT_BADINPUT,
					  "%s:%zu: a quote opened in this options line runs on into the next one "
					  "(the lines are joined): cannot edit the entry safely",
					  disp, i + 1);
	}
	return 0;
}

static int bls_find_in(const struct root *r, const struct policy *p, const struct bls_identity *id,
		       const struct boot_dirs *b, struct slot_list *l);

int bls_slots_find(const struct root *r, const struct policy *p, const struct boot_dirs *b, struct slot_list *l)
{
	struct bls_identity id;
	bls_identity_load(r, &id);
	int rc = bls_find_in(r, p, &id, b, l);
	bls_identity_free(&id);
	return rc;
}

static int bls_find_in(const struct root *r, const struct policy *p, const struct bls_identity *id,
		       const struct boot_dirs *b, struct slot_list *l)
{
	for (size_t d = 0; d < b->n; d++) {
		const struct boot_dir *bd = &b->v[d];
		if (bd->has_entries) {
			_cleanup_free_ char *dir = path_join(bd->path, "loader/entries");
			char **names;
			int n = root_list_dir(r, dir, ".conf", &names);
			if (n < 0) {
				_cleanup_free_ char *disp = root_display(r, dir);
				return diag_error(root_error_exit(n), "%s: cannot list: %s", disp, root_strerror(n));
			}
			int e = 0;
			for (int i = 0; i < n && e >= 0; i++) {
				if (names[i][0] == '.')
					continue;
				_cleanup_free_ char *path = path_join(dir, names[i]);
				e = entry_slot(r, p, id, bd->path, path, l);
			}
			names_free(names, n);
			if (e < 0)
				return e;
		}
		if (bd->has_ukis) {
			int e = uki_slots_find(r, p, id, bd->path, l);
			if (e < 0)
				return e;
		}
	}
	return 0;
}

/* ---- editing ---- */

struct bls_edit {
	char **val; /* edited value of each options line */
	size_t *vlen;
	size_t n;
};

static char *edit_joined(void *ctx)
{
	const struct bls_edit *be = ctx;
	struct strbuf sb = { 0 };
	sb_append(&sb, "");
	for (size_t i = 0; i < be->n; i++) {
		if (i)
			sb_appendc(&sb, ' ');
		sb_appendn(&sb, be->val[i], be->vlen[i]);
	}
	return sb_take(&sb);
}

char *bls_slot_edit(const struct slot *s, const struct decision *d, struct strv *added, struct strv *removed,
		    size_t *new_len)
{
	const char *text = s->content ? s->content : "";
	size_t len = s->content ? s->len : 0;
	_cleanup_free_ struct bls_line *lines = NULL;
	size_t n = bls_parse(text, len, &lines);

	size_t nopt = 0;
	for (size_t i = 0; i < n; i++)
		nopt += lines[i].options;
	/* one more value for a new options line, used when there is none */
	struct bls_edit be = {
		.val = xcalloc(nopt + 1, sizeof(char *)),
		.vlen = xcalloc(nopt + 1, sizeof(size_t)),
		.n = nopt ? nopt : 1,
	};
	size_t *line_of = xcalloc(nopt + 1, sizeof(size_t));

	/* removal in every options line up to the one that ends the
	 * kernel's parameters: after a "--" everything belongs to init, after
	 * an unterminated quote to a quoted value; new tokens go into that
	 * line (before its "--" or its unterminated quote). Each value is
	 * edited as the kernel gets it (bls_parse), without the blanks at the
	 * end of its line, which the rebuild keeps: an open quote must not
	 * take them into the last token. */
	size_t k = 0, target = SIZE_MAX;
	bool init_args = false;
	for (size_t i = 0; i < n; i++) {
		if (!lines[i].options)
			continue;
		const char *v = text + lines[i].vstart;
		size_t vl = lines[i].vend - lines[i].vstart;
		if (init_args)
			be.val[k] = xstrndup(v, vl);
		else
			be.val[k] = cmdline_edit(v, vl, &d->remove, NULL, removed);
		be.vlen[k] = strlen(be.val[k]);
		if (!init_args && line_ends_params(be.val[k], be.vlen[k])) {
			init_args = true;
			target = k;
		}
		line_of[k++] = i;
	}
	if (nopt == 0) {
		be.val[0] = xstrdup("");
		be.vlen[0] = 0;
		target = 0;
	} else if (target == SIZE_MAX) {
		target = nopt - 1;
	}
	add_tokens(&be.val[target], &be.vlen[target], &d->add, edit_joined, &be, added, s);

	/* rebuild: every byte outside the options values as it was */
	struct strbuf sb = { 0 };
	sb_append(&sb, "");
	size_t pos = 0;
	for (k = 0; k < nopt; k++) {
		const struct bls_line *L = &lines[line_of[k]];
		sb_appendn(&sb, text + pos, L->vstart - pos);
		/* "options" right before its value needs a blank, unless the
		 * value starts with one of its own ("options\rx") */
		if (!L->sep && be.vlen[k] > 0 && !any_ws(be.val[k][0]))
			sb_appendc(&sb, ' ');
		sb_appendn(&sb, be.val[k], be.vlen[k]);
		pos = L->vend;
	}
	sb_appendn(&sb, text + pos, len - pos);
	if (nopt == 0 && be.vlen[0] > 0) {
		bool crlf = len >= 2 && memmem(text, len, "\r\n", 2) != NULL;
		const char *nl = crlf ? "\r\n" : "\n";
		if (len > 0 && text[len - 1] != '\n')
			sb_append(&sb, nl);
		sb_append(&sb, "options ");
		sb_appendn(&sb, be.val[0], be.vlen[0]);
		sb_append(&sb, nl);
	}
	for (k = 0; k < nopt + 1; k++)
		free(be.val[k]);
	free(be.val);
	free(be.vlen);
	free(line_of);
	*new_len = sb.len;
	return sb_take(&sb);
}

/* ---- the line /etc/kernel/cmdline starts from ---- */

static bool entry_usable_for_base(const struct slot *s)
{
	/* never another installation's entry, nor one the tool may not edit;
	 * a UKI's own line (not its addons': they stay in force) */
	if (s->kind == SLOT_UKI)
		return !s->unmanaged && s->uki && s->uki->own;
	if (s->kind != SLOT_BLS || !s->content || s->unmanaged)
		return false;
	_cleanup_free_ char *linux_path = bls_value(s->content, s->len, "linux");
	_cleanup_free_ char *joined = options_joined(s->content, s->len);
	return linux_path && !strstr(joined, "$kernelopts");
}

char *bls_base_cmdline(const struct slot_list *l, const char *default_kernel, const char **from_path)
{
	const struct slot *from = NULL;
	for (int pass = 0; pass < 2 && !from; pass++)
		for (size_t i = 0; i < l->n && !from; i++) {
			const struct slot *s = &l->v[i];
			bool match = pass == 0 ? (s->kernel && default_kernel && streq(s->kernel, default_kernel))
					       : s->kernel == NULL;
			if (match && entry_usable_for_base(s))
				from = s;
		}
	if (!from)
		return NULL;
	if (from_path)
		*from_path = from->path;
	_cleanup_free_ char *joined =
		from->kind == SLOT_UKI ? xstrdup(from->uki->own) : options_joined(from->content, from->len);
	struct cmdline c;
	cmdline_split(joined, strlen(joined), &c);
	struct strbuf sb = { 0 };
	sb_append(&sb, "");
	bool has_root = false;
	static const char *const drop[] = { "initrd", "BOOT_IMAGE", "systemd.machine_id" };
	for (size_t i = 0; i < c.n; i++) {
		_cleanup_free_ char *name = cmdline_token_name(&c, i);
		_cleanup_free_ char *value = cmdline_token_value(&c, i);
		bool dropped = false;
		if (i < c.n_kernel) {
			for (size_t j = 0; j < ARRAY_SIZE(drop); j++)
				if (param_name_eq(name, strlen(name), drop[j], strlen(drop[j])))
					dropped = true;
			if (streq(name, "root") && value && *value)
				has_root = true;
		}
		if (dropped)
			continue;
		if (sb.len)
			sb_appendc(&sb, ' ');
		sb_appendn(&sb, joined + c.tok[i].start, c.tok[i].len);
	}
	cmdline_free(&c);
	if (!has_root || sb.len == 0) {
		sb_free(&sb);
		return NULL;
	}
	return sb_take(&sb);
}
