/* slots/grub/menu.c - reading a generated GRUB menu (never edited): its linux
 * lines, the kernel release each one boots, and whether they carry the
 * decision (slots/grub/grub.h). Pure. */
#include <stdio.h>

#include "lib/cmdline.h"
#include "slots/grub/grub-int.h"

void grub_split_words(const char *s, size_t len, struct strv *words)
{
	struct strbuf w = { 0 };
	bool in_word = false;
	size_t i = 0;
	while (i < len) {
		char c = s[i];
		if (c == '\n' || c == ';')
			break;
		if (c == ' ' || c == '\t' || c == '\r') {
			if (in_word)
				strv_push(words, sb_take(&w));
			in_word = false;
			i++;
			continue;
		}
		if (c == '#' && !in_word)
			break;
		if (!in_word)
			sb_append(&w, "");
		in_word = true;
		if (c == '\\') {
			if (i + 1 < len && s[i + 1] != '\n')
				sb_appendc(&w, s[i + 1]);
			i += 2;
		} else if (c == '\'') {
			for (i++; i < len && s[i] != '\''; i++)
				sb_appendc(&w, s[i]);
			i++;
		} else if (c == '"') {
			for (i++; i < len && s[i] != '"'; i++) {
				if (s[i] == '\\' && i + 1 < len && strchr("\"\\$", s[i + 1]))
					i++;
				sb_appendc(&w, s[i]);
			}
			i++;
		} else {
			sb_appendc(&w, c);
			i++;
		}
	}
	if (in_word)
		strv_push(words, sb_take(&w));
	sb_free(&w);
}

char *grub_release_from_path(const char *path)
{
	_cleanup_free_ char *b = xstrdup(grub_basename(path));
	if (endswith(b, ".efi.signed"))
		b[strlen(b) - strlen(".efi.signed")] = '\0';
	/* sed "s,^[^0-9]*-,,": the longest digit-free prefix ending in '-' */
	size_t cut = 0;
	for (size_t i = 0; b[i] && !(b[i] >= '0' && b[i] <= '9'); i++)
		if (b[i] == '-')
			cut = i + 1;
	return xstrdup(b + cut);
}

/* The command line GRUB hands the kernel for these arguments: each word
 * one parameter, quoted when it holds blanks (grub_create_loader_cmdline). */
static char *words_cmdline(const struct strv *w, size_t from)
{
	struct strbuf sb = { 0 };
	sb_append(&sb, "");
	for (size_t i = from; i < w->n; i++) {
		if (i > from)
			sb_appendc(&sb, ' ');
		const char *a = w->v[i];
		if (strpbrk(a, " \t")) {
			sb_appendc(&sb, '"');
			for (const char *p = a; *p; p++)
				if (*p != '"')
					sb_appendc(&sb, *p);
			sb_appendc(&sb, '"');
		} else {
			sb_append(&sb, a);
		}
	}
	return sb_take(&sb);
}

static bool is_linux_cmd(const char *w) { return streq(w, "linux") || streq(w, "linux16") || streq(w, "linuxefi"); }

/* Calls fn for every kernel command line of the sections written by a
 * *linux* script (10_linux, 20_linux_xen, 10_linux_zfs; not 30_os-prober
 * nor 40_custom), or of the whole menu when it has no "### BEGIN" marks.
 * Stops when fn returns false. */
void grub_menu_lines(const char *text, size_t len, menu_line_fn fn, void *data)
{
	bool marks = (len >= 10 && memcmp(text, "### BEGIN ", 10) == 0) || memmem(text, len, "\n### BEGIN ", 11);
	bool relevant = !marks, recovery = false;
	unsigned ln = 0;
	const char *l;
	size_t n;
	for (size_t pos = 0; text_next_line(text, len, &pos, &l, &n);) {
		ln++;
		if (n >= 10 && memcmp(l, "### BEGIN ", 10) == 0) {
			_cleanup_free_ char *name = xstrndup(l + 10, n - 10);
			const char *b = grub_basename(name);
			relevant = strstr(b, "linux") && !strstr(b, "os-prober");
			continue;
		}
		if (n >= 8 && memcmp(l, "### END ", 8) == 0) {
			relevant = !marks;
			continue;
		}
		if (!relevant)
			continue;
		struct strv w = { 0 };
		grub_split_words(l, n, &w);
		struct menu_line m = { .line = ln, .text = l, .text_len = n };
		if (w.n >= 1 && (streq(w.v[0], "menuentry") || streq(w.v[0], "submenu"))) {
			recovery = memmem(l, n, "recovery", 8) || memmem(l, n, "rescue", 6);
		} else if (w.n >= 2 && is_linux_cmd(w.v[0])) {
			m.release = grub_release_from_path(w.v[1]);
			m.image = xstrdup(w.v[1]);
			m.cmdline = words_cmdline(&w, 2);
			m.recovery = recovery;
			m.is_linux = true;
		} else if (w.n >= 2 && streq(w.v[0], "set") && startswith(w.v[1], "kernelopts=")) {
			m.cmdline = xstrdup(w.v[1] + strlen("kernelopts="));
		}
		strv_free(&w);
		bool go = true;
		if (m.cmdline)
			go = fn(data, &m);
		free(m.release);
		free(m.image);
		free(m.cmdline);
		if (!go)
			break;
	}
}

void menu_fact(char **field, const char *fmt, ...)
{
	if (*field)
		return;
	va_list ap;
	va_start(ap, fmt);
	char *t;
	if (vasprintf(&t, fmt, ap) < 0)
		t = xstrdup("?");
	va_end(ap);
	for (char *p = t; *p; p++)
		if (*p == '\n')
			*p = ' ';
	*field = t;
}

/* Calls fn for every kernel command line of the menu s, GRUB's or
 * u-boot-update's. */
static void menu_lines(const struct slot *s, menu_line_fn fn, void *data)
{
	if (!s->content)
		return;
	if (s->kind == SLOT_EXTLINUX)
		extlinux_menu_lines(s->content, s->len, fn, data);
	else if (s->kind == SLOT_BOOT_SCRIPT)
		boot_script_menu_lines(s->content, s->len, fn, data);
	else
		grub_menu_lines(s->content, s->len, fn, data);
}

struct verify {
	decision_lookup_fn lookup;
	void *data;
	unsigned total, bad, bad_normal, bad_recovery, recovery_total;
	unsigned first_line;
	char *first_release;
	struct strv missing, unwanted; /* of the first bad line */
	struct strv unwanted_all;
	/* of the first bad line whose tokens are right: its kernel gets
	 * another state by its own rules */
	const char *state_got, *state_want;
};

/* Does this kernel's state count for a menu line: it has an opinion, and
 * its own tokens give it its state? */
static bool own_counts(const struct kernel_decision *kd)
{
	if (!kd || kd->unknown || kd->d.keep)
		return false;
	struct strbuf sb = { 0 };
	sb_append(&sb, "");
	for (size_t i = 0; i < kd->d.add.n; i++)
		sb_appendf(&sb, "%s%s", i ? " " : "", kd->d.add.v[i]);
	bool r = cmdline_memcg_state(&kd->dk, sb.s) == kd->d.state;
	sb_free(&sb);
	return r;
}

static void join_into(struct strbuf *sb, const struct strv *v)
{
	for (size_t i = 0; i < v->n; i++) {
		if (i)
			sb_append(sb, ", ");
		sb_append(sb, v->v[i]);
	}
}

static bool verify_line(void *data, const struct menu_line *m)
{
	struct verify *v = data;
	const struct kernel_decision *own = NULL;
	const struct decision *d = v->lookup(v->data, m->release, &own);
	if (!d || d->keep)
		return true;
	v->total++;
	v->recovery_total += m->recovery;
	/* a switch both taken out and added goes back in its order: it is
	 * wanted, and each kernel's rules judge the order */
	struct strv remove = { 0 };
	for (size_t i = 0; i < d->remove.n; i++)
		if (!strv_contains(&d->add, d->remove.v[i]))
			strv_pushdup(&remove, d->remove.v[i]);
	struct strv missing = { 0 }, unwanted = { 0 };
	cmdline_faults(m->cmdline, &d->add, &remove, &missing, &unwanted);
	strv_free(&remove);
	enum memcg_state got = STATE_OFF;
	bool wrong = own_counts(own) && (got = cmdline_memcg_state(&own->dk, m->cmdline)) != own->d.state;
	if (missing.n || unwanted.n || wrong) {
		v->bad++;
		if (m->recovery)
			v->bad_recovery++;
		else
			v->bad_normal++;
		for (size_t i = 0; i < unwanted.n; i++)
			if (!strv_contains(&v->unwanted_all, unwanted.v[i]))
				strv_pushdup(&v->unwanted_all, unwanted.v[i]);
		if (!v->first_line) {
			v->first_line = m->line;
			v->first_release = m->release ? xstrdup(m->release) : NULL;
			v->missing = missing;
			v->unwanted = unwanted;
			if (wrong) {
				v->state_got = memcg_state_name(got);
				v->state_want = memcg_state_name(own->d.state);
			}
			return true;
		}
	}
	strv_free(&missing);
	strv_free(&unwanted);
	return true;
}

enum slot_state grub_cfg_state(const struct slot *s, decision_lookup_fn lookup, void *data, char **why)
{
	*why = NULL;
	const struct menu_facts no_facts = { .regeneration_helps = true };
	const struct menu_facts *mf = s->menu ? s->menu : &no_facts;
	if (!s->content)
		return SLOT_IN_SYNC;
	struct verify v = { .lookup = lookup, .data = data };
	menu_lines(s, verify_line, &v);
	if (!v.bad) {
		strv_free(&v.unwanted_all);
		return SLOT_IN_SYNC;
	}
	struct strbuf sb = { 0 };
	sb_appendf(&sb, "line %u", v.first_line);
	if (v.first_release)
		sb_appendf(&sb, " (%s)", v.first_release);
	if (v.missing.n) {
		sb_append(&sb, " lacks ");
		join_into(&sb, &v.missing);
	}
	if (v.unwanted.n) {
		sb_append(&sb, v.missing.n ? " and has " : " has ");
		join_into(&sb, &v.unwanted);
	}
	if (!v.missing.n && !v.unwanted.n && v.state_got)
		sb_appendf(&sb, " gives it memcg %s, not %s (by that kernel's own rules)", v.state_got, v.state_want);
	sb_appendf(&sb, "; %u of %u kernel command lines do not carry the decision: ", v.bad, v.total);

	const char *regen = mf->regen, *over = mf->overrides, *miss = mf->missing, *defv = mf->default_value,
		   *stale = mf->stale;
	bool default_contradicts = false;
	if (defv && v.unwanted_all.n && v.bad_recovery == 0 && v.recovery_total > 0) {
		/* only normal entries are wrong: they get GRUB_CMDLINE_LINUX_DEFAULT too */
		struct cmdline c;
		cmdline_split(defv, strlen(defv), &c);
		for (size_t i = 0; i < v.unwanted_all.n && !default_contradicts; i++) {
			const char *eq = strchr(v.unwanted_all.v[i], '=');
			_cleanup_free_ char *name = xstrndup(v.unwanted_all.v[i], (size_t)(eq - v.unwanted_all.v[i]));
			default_contradicts = cmdline_has_item(&c, name, eq + 1);
		}
		cmdline_free(&c);
	}
	if (over) {
		sb_append(&sb, over);
	} else if (miss) {
		sb_append(&sb, miss);
	} else {
		if (default_contradicts) {
			sb_append(&sb, "GRUB_CMDLINE_LINUX_DEFAULT contradicts the decision (");
			join_into(&sb, &v.unwanted_all);
			sb_append(&sb, ") and the menu predates the drop-in: ");
		}
		sb_appendf(&sb, "stale menu: regenerate with %s",
			   regen		      ? regen
			   : s->kind == SLOT_GRUB_CFG ? "grub-mkconfig"
						      : menu_tool_name(s->kind));
		if (stale)
			sb_appendf(&sb, " (%s)", stale);
	}
	*why = sb_take(&sb);
	free(v.first_release);
	strv_free(&v.missing);
	strv_free(&v.unwanted);
	strv_free(&v.unwanted_all);
	return SLOT_DRIFT;
}

const char *menu_tool_name(enum slot_kind k)
{
	return k == SLOT_EXTLINUX      ? "u-boot-update"
	       : k == SLOT_BOOT_SCRIPT ? "flash-kernel"
				       : "update-grub / grub-mkconfig";
}

static bool first_line(void *data, const struct menu_line *m)
{
	char **out = data;
	*out = xstrdup(m->cmdline);
	return false;
}

char *grubenv_cmdline(const struct slot *s) { return s->content ? xstrdup(s->content) : NULL; }

char *grub_menu_cmdline(const struct slot *s)
{
	char *out = NULL;
	menu_lines(s, first_line, &out);
	return out;
}
