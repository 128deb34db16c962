/* slots/grub/tokens.c - the decision recorded for GRUB (slots/grub/grub.h): the data file
 * apply writes, the one decision a menu line follows when several kernels
 * share it, and the filter the drop-in applies to GRUB_CMDLINE_LINUX and
 * GRUB_CMDLINE_LINUX_DEFAULT. Pure. */
#include <stdio.h>

#include "lib/cmdline.h"
#include "slots/grub/grub-int.h"

#define TOKENS_HEADER                                                                                   \
	"# memcg-policy: the arguments the GRUB drop-in sets on the kernel command line.\n"                \
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
	struct strbuf sb = {0};
	sb_append(&sb, TOKENS_HEADER);
	for (size_t i = 0; i < t->add.n; i++)
		sb_appendf(&sb, "add %s\n", t->add.v[i]);
	for (size_t i = 0; i < t->remove.n; i++)
		sb_appendf(&sb, "remove %s\n", t->remove.v[i]);
	*len = sb.len;
	return sb_take(&sb);
}

static bool is_enable(const char *tok)
{
	const char *eq = strchr(tok, '=');
	return eq && param_name_eq(tok, (size_t)(eq - tok), "cgroup_enable", strlen("cgroup_enable"));
}

void grub_menu_decision(const struct grub_kernel *k, size_t n, size_t idef, struct decision *out)
{
	memset(out, 0, sizeof(*out));
	out->keep = true;
	if (idef < n) {
		out->state = k[idef].d->state;
		out->mode = k[idef].d->mode;
	}
	/* kernels with an opinion; all decided alike, or the default's */
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
		return;
	out->keep = false;
	if (!alike) {
		if (idef >= n || k[idef].d->keep) {
			strv_pushdup(&out->warnings, "GRUB: the installed kernels are decided differently and the default "
						     "kernel has no opinion: the GRUB command line is left as it is");
			out->keep = true;
			return;
		}
		strv_push(&out->warnings,
			  xasprintf("GRUB: the installed kernels are decided differently; one GRUB command line serves "
				    "them all and follows the default kernel %s (see memcg-policy status)",
				    k[idef].release));
	}
	for (size_t i = 0; i < n; i++) {
		if (k[i].d->keep || (!alike && i != idef))
			continue;
		out->state = k[i].d->state;
		for (size_t j = 0; j < k[i].d->add.n; j++) {
			const char *t = k[i].d->add.v[j];
			if (strv_contains(&out->add, t))
				continue;
			/* never add a token to a kernel that does not accept it */
			const char *refuser = NULL;
			for (size_t m = 0; m < n && !refuser && is_enable(t); m++)
				if (!k[m].d->keep && !k[m].accepts_enable)
					refuser = k[m].release;
			if (refuser) {
				char *w = xasprintf("GRUB: %s is not added: one GRUB command line serves every kernel and "
						    "%s does not accept it; %s boots with memcg off (remove the kernel that "
						    "does not accept it, or set accepts-cgroup-enable = yes for it in a "
						    "[kernel] section if it does)",
						    t, refuser, k[i].release);
				if (!strv_contains(&out->warnings, w))
					strv_push(&out->warnings, w);
				else
					free(w);
				continue;
			}
			strv_pushdup(&out->add, t);
		}
	}
	for (size_t i = 0; i < n; i++) {
		if (k[i].d->keep || (!alike && i != idef))
			continue;
		for (size_t j = 0; j < k[i].d->remove.n; j++) {
			const char *t = k[i].d->remove.v[j];
			if (!strv_contains(&out->remove, t) && !strv_contains(&out->add, t))
				strv_pushdup(&out->remove, t);
		}
	}
}

/* ---- the filter ---- */

/* Is some item of a managed token (name=a,b) among the token's? */
static bool token_touches(const struct cmdline *c, size_t i, const struct strv *v)
{
	for (size_t j = 0; j < v->n; j++) {
		const char *eq = strchr(v->v[j], '=');
		if (!eq)
			continue;
		_cleanup_free_ char *name = xstrndup(v->v[j], (size_t)(eq - v->v[j]));
		_cleanup_free_ char *nm = cmdline_token_name(c, i);
		if (nm && param_name_eq(nm, strlen(nm), name, strlen(name)))
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
			if (token_touches(&c, i, &t->add) || token_touches(&c, i, &t->remove)) {
				cmdline_free(&c);
				return -EXIT_BADINPUT;
			}
			def_from = e - (bl + 1);
		}
		if (c.has_dashdash && i == c.n_kernel && s < bl)
			def_kernel = false; /* a "--" in GRUB_CMDLINE_LINUX: the rest goes to init */
	}
	cmdline_free(&c);

	struct strv none = {0};
	char *l = cmdline_edit(lin, bl, &t->remove, &none, NULL);
	/* added to GRUB_CMDLINE_LINUX (recovery entries get it too) */
	struct cmdline lc;
	struct strv added = {0};
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
		struct strv rm = {0};
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
