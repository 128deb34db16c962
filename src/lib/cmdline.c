/* lib/cmdline.c - kernel command lines: split and inspect them by the
 * kernel's own rules (editing: lib/cmdline-edit.c) (lib/cmdline.c next_arg(), kernel/params.c
 * parse_args()). See lib/cmdline.h for the contract.
 *
 * Everything works on byte ranges of the borrowed line: the text is never
 * rewritten in place, so an edit can keep every byte it does not mean to
 * touch. */
#include "lib/cmdline.h"
#include "lib/cmdline-int.h"

#include <stdint.h>
#include <string.h>

#ifdef CMDLINE_MUTANT_DASH
/* Only in the mutant build of the kernel-parser tier (make
 * check-kparse-mutant): a deliberately wrong tokenizer for which '-' and
 * '_' differ, which that tier must catch. */
static char dash2underscore(char c) { return c; }
#else
static char dash2underscore(char c) { return c == '-' ? '_' : c; }
#endif

bool param_name_eq(const char *a, size_t alen, const char *b, size_t blen)
{
	if (alen != blen)
		return false;
	for (size_t i = 0; i < alen; i++)
		if (dash2underscore(a[i]) != dash2underscore(b[i]))
			return false;
	return true;
}

/* next_arg() on one token t[0..len):
 * - a leading '"' is skipped and marks the token "quoted";
 * - the name ends at the first '=' after the first byte of what remains
 *   (quotes do not hide it: the kernel does not look);
 * - a value starting with '"' loses it, and then a trailing '"' too;
 * - a quoted token loses its trailing '"' (once). */
void cmdline_tok_parse(const char *t, size_t len, struct tok_parts *p)
{
	bool quoted = len > 0 && t[0] == '"';
	size_t body = quoted ? 1 : 0;
	size_t eq = SIZE_MAX;
	bool last_quote = len > body && t[len - 1] == '"';

	for (size_t i = body + 1; i < len; i++)
		if (t[i] == '=') {
			eq = i;
			break;
		}

	*p = (struct tok_parts){ .name_off = body };
	if (eq == SIZE_MAX) {
		size_t end = len;
		if (quoted && last_quote)
			end--;
		p->name_len = end - body;
		return;
	}

	p->name_len = eq - body;
	p->has_value = true;
	size_t vs = eq + 1, ve = len;
	bool stripped = false;
	if (vs < len && t[vs] == '"') {
		vs++;
		if (last_quote) {
			ve = len - 1;
			stripped = true;
		}
	}
	if (quoted && last_quote && !stripped)
		ve = len - 1;
	if (ve < vs)
		ve = vs;
	p->val_off = vs;
	p->val_len = ve - vs;
}

void cmdline_split(const char *line, size_t len, struct cmdline *out)
{
	size_t cap = 0;

	if (!line) {
		line = "";
		len = 0;
	}
	*out = (struct cmdline){ .line = line, .line_len = len };

	/* blanks are the kernel's isspace() (lib/ctype.c): \t \n \v \f \r,
	 * space and 0xa0; a table, as most bytes of a line are neither
	 * blank nor a quote */
	enum { BLANK = 1, QUOTE = 2 };
	static const unsigned char cls[256] = {
		['\t'] = BLANK, ['\n'] = BLANK, ['\v'] = BLANK, ['\f'] = BLANK,
		['\r'] = BLANK, [' '] = BLANK,	[0xa0] = BLANK, ['"'] = QUOTE,
	};
	size_t i = 0;
	while (i < len) {
		while (i < len && (cls[(unsigned char)line[i]] & BLANK))
			i++;
		if (i >= len)
			break;
		size_t start = i;
		bool in_quote = false;
		for (; i < len; i++) {
			unsigned char k = cls[(unsigned char)line[i]];
			if (!k)
				continue;
			if (k == BLANK && !in_quote)
				break;
			if (k == QUOTE)
				in_quote = !in_quote;
		}
		if (out->n == cap) {
			cap = cap ? cap * 2 : 16;
			out->tok = xrealloc(out->tok, cap * sizeof(*out->tok));
		}
		out->tok[out->n++] = (struct cmdline_token){ start, i - start };
	}

	/* parse_args() stops at the first parameter named "--" without a
	 * value; quotes are stripped first, so `"--"` counts as well. */
	out->n_kernel = out->n;
	for (size_t k = 0; k < out->n; k++) {
		/* "--" once quotes are stripped: --, "--", "-- */
		if (out->tok[k].len > 4)
			continue;
		const char *t = line + out->tok[k].start;
		struct tok_parts p;
		cmdline_tok_parse(t, out->tok[k].len, &p);
		if (!p.has_value && p.name_len == 2 && memcmp(t + p.name_off, "--", 2) == 0) {
			out->n_kernel = k;
			out->has_dashdash = true;
			break;
		}
	}
}

void cmdline_free(struct cmdline *c)
{
	if (!c)
		return;
	free(c->tok);
	*c = (struct cmdline){ 0 };
}

char *cmdline_token_name(const struct cmdline *c, size_t i)
{
	if (!c || i >= c->n)
		return NULL;
	const char *t = c->line + c->tok[i].start;
	struct tok_parts p;
	cmdline_tok_parse(t, c->tok[i].len, &p);
	return xstrndup(t + p.name_off, p.name_len);
}

char *cmdline_token_value(const struct cmdline *c, size_t i)
{
	if (!c || i >= c->n)
		return NULL;
	const char *t = c->line + c->tok[i].start;
	struct tok_parts p;
	cmdline_tok_parse(t, c->tok[i].len, &p);
	if (!p.has_value)
		return NULL;
	return xstrndup(t + p.val_off, p.val_len);
}

/* Does the comma list v[0..vlen) hold item[0..ilen) as one of its
 * elements? Empty items never match (the kernel's list parsers skip them). */
bool cmdline_list_has(const char *v, size_t vlen, const char *item, size_t ilen)
{
	if (ilen == 0)
		return false;
	size_t i = 0;
	for (;;) {
		size_t j = i;
		while (j < vlen && v[j] != ',')
			j++;
		if (j - i == ilen && memcmp(v + i, item, ilen) == 0)
			return true;
		if (j >= vlen)
			return false;
		i = j + 1;
	}
}

bool cmdline_token_has_item(const struct cmdline *c, size_t i, const char *name, const char *item)
{
	if (!c || i >= c->n || !name || !item)
		return false;
	const char *t = c->line + c->tok[i].start;
	struct tok_parts p;
	cmdline_tok_parse(t, c->tok[i].len, &p);
	return p.has_value && param_name_eq(t + p.name_off, p.name_len, name, strlen(name)) &&
	       cmdline_list_has(t + p.val_off, p.val_len, item, strlen(item));
}

bool cmdline_has_item(const struct cmdline *c, const char *name, const char *item)
{
	for (size_t k = 0; c && k < c->n_kernel; k++)
		if (cmdline_token_has_item(c, k, name, item))
			return true;
	return false;
}

bool cmdline_has_arg(const struct cmdline *c, const char *arg)
{
	if (!c || !arg)
		return false;
	size_t alen = strlen(arg);
	struct tok_parts a;
	cmdline_tok_parse(arg, alen, &a);
	const char *aname = arg + a.name_off, *aval = arg + a.val_off;

	for (size_t k = 0; k < c->n_kernel; k++) {
		const char *t = c->line + c->tok[k].start;
		struct tok_parts p;
		cmdline_tok_parse(t, c->tok[k].len, &p);
		if (!param_name_eq(t + p.name_off, p.name_len, aname, a.name_len))
			continue;
		if (!a.has_value) {
			if (!p.has_value)
				return true;
			continue;
		}
		if (!p.has_value)
			continue;
		bool all = true;
		for (size_t i = 0; all;) {
			size_t j = i;
			while (j < a.val_len && aval[j] != ',')
				j++;
			if (j > i && !cmdline_list_has(t + p.val_off, p.val_len, aval + i, j - i))
				all = false;
			if (j >= a.val_len)
				break;
			i = j + 1;
		}
		if (all)
			return true;
	}
	return false;
}

size_t cmdline_init_env_names(const char *line, size_t len)
{
	struct cmdline c;
	cmdline_split(line, len, &c);
	struct strv names = { 0 };
	for (size_t i = 0; i < c.n_kernel; i++) {
		_cleanup_free_ char *name = cmdline_token_name(&c, i);
		_cleanup_free_ char *value = cmdline_token_value(&c, i);
		if (!name || !value || !*name || strchr(name, '.'))
			continue;
		for (char *p = name; *p; p++)
			if (*p == '-')
				*p = '_';
		if (streq(name, "cgroup_disable"))
			continue; /* a parameter of every kernel with memcg */
		if (!strv_contains(&names, name))
			strv_pushdup(&names, name);
	}
	size_t n = names.n;
	strv_free(&names);
	cmdline_free(&c);
	return n;
}

size_t cmdline_size_for_arch(const char *arch)
{
	static const struct {
		const char *arch;
		size_t size;
	} sizes[] = {
		{ "x86", 2048 },     { "x86_64", 2048 },    { "i386", 2048 },	{ "arm64", 2048 },
		{ "powerpc", 2048 }, { "ia64", 2048 },	    { "sparc", 2048 },	{ "sparc64", 2048 },
		{ "arm", 1024 },     { "riscv", 1024 },	    { "parisc", 1024 }, { "mips", 4096 },
		{ "um", 4096 },	     { "s390", 4096 },	    { "alpha", 256 },	{ "arc", 256 },
		{ "m68k", 256 },     { "microblaze", 256 }, { "xtensa", 256 },	{ "loongarch", 512 },
		{ "csky", 512 },     { "hexagon", 512 },    { "nios2", 512 },	{ "openrisc", 512 },
		{ "sh", 512 },
	};
	for (size_t i = 0; arch && i < ARRAY_SIZE(sizes); i++)
		if (streq(arch, sizes[i].arch))
			return sizes[i].size;
	return 0;
}

char *cmdline_join(const struct cmdline *c)
{
	struct strbuf sb = { 0 };
	sb_appendn(&sb, "", 0);
	if (!c || !c->line)
		return sb_take(&sb);
	for (size_t g = 0; g <= c->n; g++) {
		size_t gs = g == 0 ? 0 : c->tok[g - 1].start + c->tok[g - 1].len;
		size_t ge = g == c->n ? c->line_len : c->tok[g].start;
		sb_appendn(&sb, c->line + gs, ge - gs);
		if (g < c->n)
			sb_appendn(&sb, c->line + c->tok[g].start, c->tok[g].len);
	}
	return sb_take(&sb);
}

void cmdline_faults(const char *line, const struct strv *add, const struct strv *remove, struct strv *missing,
		    struct strv *unwanted)
{
	struct cmdline c;
	cmdline_split(line, strlen(line), &c);
	for (size_t i = 0; i < add->n; i++)
		if (!cmdline_has_arg(&c, add->v[i]))
			strv_pushdup(missing, add->v[i]);
	for (size_t i = 0; i < remove->n; i++) {
		const char *eq = strchr(remove->v[i], '=');
		if (!eq)
			continue;
		_cleanup_free_ char *name = xstrndup(remove->v[i], (size_t)(eq - remove->v[i]));
		_cleanup_free_ char *items = xstrdup(eq + 1);
		for (char *save = NULL, *it = strtok_r(items, ",", &save); it; it = strtok_r(NULL, ",", &save))
			if (cmdline_has_item(&c, name, it))
				strv_push(unwanted, xasprintf("%s=%s", name, it));
	}
	cmdline_free(&c);
}
