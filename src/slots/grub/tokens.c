/* slots/grub/tokens.c - the decision recorded for GRUB (slots/grub/grub.h): the data file
 * apply writes, the one decision a menu line follows when several kernels
 * share it, and the filter the drop-in applies to GRUB_CMDLINE_LINUX and
 * GRUB_CMDLINE_LINUX_DEFAULT. Pure. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "lib/cmdline.h"
#include "slots/grub/grub-int.h"

#define TOKENS_HEADER                                                                                                  \
	"# memcg-policy: the arguments the GRUB drop-in sets on the kernel command line.\n"                            \
	"# Written by `memcg-policy apply` (do not edit); `memcg-policy revert` removes it.\n"

void grub_tokens_free(struct grub_tokens *t)
{
	strv_free(&t->add);
	strv_free(&t->remove);
}

/* The names the tool manages; only tokens of these are ever recorded. */
static bool managed_token(const char *tok)
{
	static const char *const names[] = { "cgroup_disable", "cgroup_enable", "cgroup.memory" };
	const char *eq = strchr(tok, '=');
	if (!eq || !eq[1])
		return false;
	for (const char *p = eq + 1; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == ',' || *p == '_'))
			return false;
	for (size_t i = 0; i < ARRAY_SIZE(names); i++)
		if (param_name_eq(tok, (size_t)(eq - tok), names[i], strlen(names[i])))
			return true;
	return false;
}

int grub_tokens_parse(const char *text, size_t len, struct grub_tokens *t, unsigned *bad_line)
{
	memset(t, 0, sizeof(*t));
	*bad_line = 0;
	unsigned ln = 0;
	const char *l;
	size_t ll;
	for (size_t pos = 0; text_next_line(text, len, &pos, &l, &ll);) {
		ln++;
		_cleanup_free_ char *line = xstrndup(l, ll);
		size_t n = strlen(line);
		while (n > 0 && (line[n - 1] == ' ' || line[n - 1] == '\t' || line[n - 1] == '\r'))
			line[--n] = '\0';
		const char *p = line;
		while (*p == ' ' || *p == '\t')
			p++;
		if (!*p || *p == '#')
			continue;
		struct strv *into = NULL;
		const char *tok = "";
		if (startswith(p, "limit ")) {
			char *end = NULL;
			errno = 0;
			unsigned long long v = strtoull(p + 6, &end, 10);
			if (errno || end == p + 6 || *end || p[6] < '0' || p[6] > '9' || v == 0 || v > (1u << 20)) {
				grub_tokens_free(t);
				*bad_line = ln;
				return -EXIT_BADINPUT;
			}
			t->limit = (size_t)v;
			continue;
		}
		if (startswith(p, "add ")) {
			into = &t->add;
			tok = p + 4;
		} else if (startswith(p, "remove ")) {
			into = &t->remove;
			tok = p + 7;
		}
		while (*tok == ' ' || *tok == '\t')
			tok++;
		if (!into || !managed_token(tok)) {
			grub_tokens_free(t);
			*bad_line = ln;
			return -EXIT_BADINPUT;
		}
		if (!strv_contains(into, tok))
			strv_pushdup(into, tok);
	}
	return 0;
}

char *grub_tokens_format(const struct grub_tokens *t, size_t *len)
{
	struct strbuf sb = { 0 };
	sb_append(&sb, TOKENS_HEADER);
	for (size_t i = 0; i < t->add.n; i++)
		sb_appendf(&sb, "add %s\n", t->add.v[i]);
	for (size_t i = 0; i < t->remove.n; i++)
		sb_appendf(&sb, "remove %s\n", t->remove.v[i]);
	if (t->limit)
		sb_appendf(&sb, "limit %zu\n", t->limit);
	*len = sb.len;
	return sb_take(&sb);
}

#define TOK_D "cgroup_disable=memory"
#define TOK_E "cgroup_enable=memory"

/* Is tok cgroup_disable=memory or cgroup_enable=memory (any spelling)? */
static bool is_memcg_switch(const char *tok)
{
	struct cmdline c;
	cmdline_split(tok, strlen(tok), &c);
	bool r = c.n == 1 && (cmdline_token_has_item(&c, 0, "cgroup_disable", "memory") ||
			      cmdline_token_has_item(&c, 0, "cgroup_enable", "memory"));
	cmdline_free(&c);
	return r;
}

static char *joined(const struct strv *v)
{
	struct strbuf sb = { 0 };
	sb_append(&sb, "");
	for (size_t i = 0; i < v->n; i++)
		sb_appendf(&sb, "%s%s", i ? " " : "", v->v[i]);
	return sb_take(&sb);
}

/* Does a kernel's state count in the menu's decision: it has an opinion,
 * and its own tokens give it its state (where they cannot, e.g. a built-in
 * line no parameter overrides, its decision warns about that already)? */
static bool counts(const struct grub_kernel *k)
{
	if (k->d->keep || !k->dk)
		return false;
	_cleanup_free_ char *own = joined(&k->d->add);
	return cmdline_memcg_state(k->dk, own) == k->d->state;
}

/* Does every kernel that counts get its state from a line that carries
 * exactly these memcg arguments? */
static bool serves_all(const struct grub_kernel *k, size_t n, const struct strv *add)
{
	_cleanup_free_ char *line = joined(add);
	for (size_t i = 0; i < n; i++)
		if (counts(&k[i]) && cmdline_memcg_state(k[i].dk, line) != k[i].d->state)
			return false;
	return true;
}

char *grub_menu_decision(const struct grub_kernel *k, size_t n, size_t idef, struct decision *out)
{
	memset(out, 0, sizeof(*out));
	out->keep = true;
	if (idef < n) {
		out->state = k[idef].d->state;
		out->mode = k[idef].d->mode;
	}
	/* kernels with an opinion; all decided alike, or not */
	bool alike = true, any = false;
	size_t first = n;
	for (size_t i = 0; i < n; i++) {
		if (k[i].d->keep)
			continue;
		if (first == n)
			first = i;
		else if (k[i].d->state != k[first].d->state)
			alike = false;
		any = true;
	}
	if (!any)
		return NULL;
	if (!alike && (idef >= n || k[idef].d->keep)) {
		strv_pushdup(&out->warnings, "GRUB: the installed kernels are decided differently and the default "
					     "kernel has no opinion: the GRUB command line is left as it is");
		return NULL;
	}
	out->keep = false;
	/* the union of their tokens: what one kernel needs and the others
	 * ignore (cgroup_enable=memory on a kernel without that parameter is
	 * a variable of init nobody reads) serves them all */
	for (size_t i = 0; i < n; i++) {
		if (k[i].d->keep)
			continue;
		for (size_t j = 0; j < k[i].d->add.n; j++)
			if (!strv_contains(&out->add, k[i].d->add.v[j]))
				strv_pushdup(&out->add, k[i].d->add.v[j]);
	}
	bool clash = false;
	for (size_t i = 0; i < n; i++) {
		if (k[i].d->keep)
			continue;
		for (size_t j = 0; j < k[i].d->remove.n; j++) {
			const char *t = k[i].d->remove.v[j];
			if (strv_contains(&out->add, t))
				clash = true;
			else if (!strv_contains(&out->remove, t))
				strv_pushdup(&out->remove, t);
		}
	}
	if (!clash && serves_all(k, n, &out->add))
		return NULL;
	/* Kernels whose rules differ: the memcg switches the line ends up
	 * with, in order, that give each kernel its state. Both are taken out
	 * wherever they are and those put back in that order. */
	static const char *const seqs[][2] = {
		{ NULL, NULL }, { TOK_D, NULL }, { TOK_E, NULL }, { TOK_D, TOK_E }, { TOK_E, TOK_D }
	};
	for (size_t s = 0; s < ARRAY_SIZE(seqs); s++) {
		struct strv add = { 0 };
		for (size_t j = 0; j < out->add.n; j++)
			if (!is_memcg_switch(out->add.v[j]))
				strv_pushdup(&add, out->add.v[j]);
		struct strv sw = { 0 };
		for (size_t j = 0; j < 2 && seqs[s][j]; j++)
			strv_pushdup(&sw, seqs[s][j]);
		if (!serves_all(k, n, &sw)) {
			strv_free(&add);
			strv_free(&sw);
			continue;
		}
		strv_pushdup_all(&add, &sw);
		strv_free(&sw);
		struct strv rm = { 0 };
		for (size_t j = 0; j < out->remove.n; j++)
			if (!is_memcg_switch(out->remove.v[j]))
				strv_pushdup(&rm, out->remove.v[j]);
		strv_pushdup(&rm, TOK_D);
		strv_pushdup(&rm, TOK_E);
		strv_free(&out->add);
		strv_free(&out->remove);
		out->add = add;
		out->remove = rm;
		return NULL;
	}
	/* no one line: name a kernel of each state */
	size_t on = n, off = n;
	for (size_t i = 0; i < n; i++) {
		if (!counts(&k[i]))
			continue;
		if (k[i].d->state == STATE_ON && on == n)
			on = i;
		if (k[i].d->state == STATE_OFF && off == n)
			off = i;
	}
	strv_free(&out->add);
	strv_free(&out->remove);
	out->keep = true;
	if (on == n || off == n)
		return xstrdup("GRUB: no one command line gives every kernel of the menu its decision");
	return xasprintf("GRUB: one command line serves every kernel of the menu, and none gives %s memcg on and %s "
			 "memcg off (by their own rules): decide them alike, or remove one of them",
			 k[on].release, k[off].release);
}

/* ---- the filter ---- */

/* Would the filter have to edit token i, or read it to know whether to
 * add: does it carry an item of a token to remove (name=a,b: any of a, b),
 * or the name of a token to add? */
static bool token_touches(const struct cmdline *c, size_t i, const struct strv *add, const struct strv *remove)
{
	_cleanup_free_ char *nm = cmdline_token_name(c, i);
	for (size_t j = 0; nm && j < add->n; j++) {
		const char *eq = strchr(add->v[j], '=');
		if (eq && param_name_eq(nm, strlen(nm), add->v[j], (size_t)(eq - add->v[j])))
			return true;
	}
	for (size_t j = 0; j < remove->n; j++) {
		const char *eq = strchr(remove->v[j], '=');
		if (!eq)
			continue;
		_cleanup_free_ char *name = xstrndup(remove->v[j], (size_t)(eq - remove->v[j]));
		_cleanup_free_ char *list = xstrdup(eq + 1);
		char *save = NULL;
		for (char *item = strtok_r(list, ",", &save); item; item = strtok_r(NULL, ",", &save))
			if (cmdline_token_has_item(c, i, name, item))
				return true;
	}
	return false;
}

int grub_filter(const struct grub_tokens *t, const char *lin, const char *def, char **lin_out, char **def_out)
{
	*lin_out = *def_out = NULL;
	if (strchr(lin, '\n') || strchr(def, '\n'))
		return -EXIT_BADINPUT;
	size_t bl = strlen(lin);
	_cleanup_free_ char *joined = xasprintf("%s %s", lin, def);
	struct cmdline c;
	cmdline_split(joined, strlen(joined), &c);
	/* where GRUB_CMDLINE_LINUX_DEFAULT's own tokens start in it */
	size_t def_from = 0;
	bool def_kernel = true; /* does it hold kernel parameters at all? */
	for (size_t i = 0; i < c.n; i++) {
		size_t s = c.tok[i].start, e = s + c.tok[i].len;
		if (s <= bl && e > bl + 1) {
			/* an open quote in GRUB_CMDLINE_LINUX runs on into ..._DEFAULT */
			if (token_touches(&c, i, &t->add, &t->remove)) {
				cmdline_free(&c);
				return -EXIT_BADINPUT;
			}
			def_from = e - (bl + 1);
		}
		if (c.has_dashdash && i == c.n_kernel && s < bl)
			def_kernel = false; /* a "--" in GRUB_CMDLINE_LINUX: the rest goes to init */
	}
	cmdline_free(&c);

	struct strv none = { 0 };
	char *l = cmdline_edit(lin, bl, &t->remove, &none, NULL);
	/* added to GRUB_CMDLINE_LINUX (recovery entries get it too) */
	struct cmdline lc;
	struct strv added = { 0 };
	for (size_t i = 0; i < t->add.n; i++) {
		cmdline_split(l, strlen(l), &lc);
		bool have = cmdline_has_arg(&lc, t->add.v[i]);
		cmdline_free(&lc);
		if (have)
			continue;
		struct strv one = { &t->add.v[i], 1 };
		char *n = cmdline_edit(l, strlen(l), &none, &one, NULL);
		free(l);
		l = n;
		strv_pushdup(&added, t->add.v[i]);
	}
	char *d;
	if (!def_kernel) {
		d = xstrdup(def);
	} else {
		/* contradicting tokens out, and what was just added to
		 * GRUB_CMDLINE_LINUX, so that normal entries carry it once */
		struct strv rm = { 0 };
		strv_pushdup_all(&rm, &t->remove);
		strv_pushdup_all(&rm, &added);
		_cleanup_free_ char *rest = cmdline_edit(def + def_from, strlen(def + def_from), &rm, &none, NULL);
		d = xasprintf("%.*s%s", (int)def_from, def, rest);
		strv_free(&rm);
	}
	strv_free(&added);
	*lin_out = l;
	*def_out = d;
	return 0;
}
