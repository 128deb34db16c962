/* shvars.c - plain shell assignments read without a shell, see shvars.h. */
#include "lib/shvars.h"

#include "lib/util.h"

static bool name_start(char c) { return c == '_' || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z'); }
static bool name_char(char c) { return name_start(c) || (c >= '0' && c <= '9'); }
static bool blank(char c) { return c == ' ' || c == '\t'; }
/* ends a word when unquoted */
static bool word_end(char c) { return blank(c) || c == '\n' || c == ';'; }
/* unquoted, it makes the statement more than assignments */
static bool meta(char c) { return c == '&' || c == '|' || c == '<' || c == '>' || c == '(' || c == ')'; }

static const char *intern_file(struct shvars *vs, const char *file)
{
	if (vs->nfiles && streq(vs->files[vs->nfiles - 1], file))
		return vs->files[vs->nfiles - 1];
	vs->files = xrealloc(vs->files, (vs->nfiles + 1) * sizeof(*vs->files));
	vs->files[vs->nfiles] = xstrdup(file);
	return vs->files[vs->nfiles++];
}

static struct shvar *find(const struct shvars *vs, const char *name, size_t n)
{
	for (size_t i = 0; i < vs->n; i++)
		if (strlen(vs->v[i].name) == n && memcmp(vs->v[i].name, name, n) == 0)
			return &vs->v[i];
	return NULL;
}

static struct shvar *get_or_add(struct shvars *vs, const char *name, size_t n)
{
	struct shvar *v = find(vs, name, n);
	if (v)
		return v;
	vs->v = xrealloc(vs->v, (vs->n + 1) * sizeof(*vs->v));
	v = &vs->v[vs->n++];
	*v = (struct shvar){ .name = xstrndup(name, n) };
	return v;
}

/* One word as it is being read. */
struct word {
	struct strbuf text;
	size_t eq;	     /* NAME= ends here (index of '='), or 0 */
	bool assign;	     /* starts with an unquoted NAME= */
	bool quoted_any;     /* some part was quoted or escaped */
	bool expanded;	     /* an unquoted $ expansion or glob character */
	const char *unknown; /* why its value needs code, or NULL */
	const char *unknown_file;
	unsigned unknown_line;
};

struct reader {
	struct shvars *vs;
	const char *file;
	const char *t;
	size_t len, i;
	unsigned line;
	const char *code; /* the statement is code: why */
};

static void set_unknown(struct reader *rd, struct word *w, const char *why)
{
	if (!w->unknown) {
		w->unknown = why;
		w->unknown_file = rd->file;
		w->unknown_line = rd->line;
	}
}

static void advance(struct reader *rd)
{
	if (rd->t[rd->i] == '\n')
		rd->line++;
	rd->i++;
}

/* A backslash-newline outside single quotes is gone before the shell reads
 * the text: it joins names (`$A\<newline>B` is $AB) and words. */
static void join(struct reader *rd)
{
	while (rd->i + 1 < rd->len && rd->t[rd->i] == '\\' && rd->t[rd->i + 1] == '\n') {
		rd->i += 2;
		rd->line++;
	}
}

/* Reads a name at rd->i across joined lines into nb; false if none. */
static bool read_name(struct reader *rd, struct strbuf *nb)
{
	join(rd);
	if (rd->i >= rd->len || !name_start(rd->t[rd->i]))
		return false;
	for (;;) {
		join(rd);
		if (rd->i >= rd->len || !name_char(rd->t[rd->i]))
			return true;
		sb_appendc(nb, rd->t[rd->i++]);
	}
}

/* Skips a $(...) or $((...)) whose "$(" was read: to the matching ')',
 * past quotes and nesting. False when it does not end. */
static bool skip_parens(struct reader *rd)
{
	int depth = 1;
	while (rd->i < rd->len) {
		char c = rd->t[rd->i];
		if (c == '\\' && rd->i + 1 < rd->len) {
			advance(rd);
			advance(rd);
			continue;
		}
		if (c == '\'') {
			advance(rd);
			while (rd->i < rd->len && rd->t[rd->i] != '\'')
				advance(rd);
			if (rd->i >= rd->len)
				return false;
		} else if (c == '"') {
			advance(rd);
			while (rd->i < rd->len && rd->t[rd->i] != '"') {
				if (rd->t[rd->i] == '\\' && rd->i + 1 < rd->len)
					advance(rd);
				advance(rd);
			}
			if (rd->i >= rd->len)
				return false;
		} else if (c == '(') {
			depth++;
		} else if (c == ')' && --depth == 0) {
			advance(rd);
			return true;
		}
		advance(rd);
	}
	return false;
}

/* Skips a `...` whose opening backquote was read. */
static bool skip_backquote(struct reader *rd)
{
	while (rd->i < rd->len) {
		char c = rd->t[rd->i];
		if (c == '\\' && rd->i + 1 < rd->len) {
			advance(rd);
		} else if (c == '`') {
			advance(rd);
			return true;
		}
		advance(rd);
	}
	return false;
}

/* Skips ${...} whose "${" was read, to the matching '}'. */
static bool skip_braces(struct reader *rd)
{
	int depth = 1;
	while (rd->i < rd->len) {
		char c = rd->t[rd->i];
		if (c == '\\' && rd->i + 1 < rd->len) {
			advance(rd);
		} else if (c == '\'' || c == '"') {
			char q = c;
			advance(rd);
			while (rd->i < rd->len && rd->t[rd->i] != q) {
				if (q == '"' && rd->t[rd->i] == '\\' && rd->i + 1 < rd->len)
					advance(rd);
				advance(rd);
			}
			if (rd->i >= rd->len)
				return false;
		} else if (c == '{') {
			depth++;
		} else if (c == '}' && --depth == 0) {
			advance(rd);
			return true;
		}
		advance(rd);
	}
	return false;
}

/* Appends the value of $NAME (name, n) to the word. */
static void expand_var(struct reader *rd, struct word *w, const char *name, size_t n)
{
	const struct shvar *v = find(rd->vs, name, n);
	if (rd->vs->poisoned) {
		set_unknown(rd, w, rd->vs->poison_why);
		return;
	}
	if (!v || !v->value) {
		if (v && v->unknown) {
			/* the reason is the variable's own */
			if (!w->unknown) {
				w->unknown = v->why;
				w->unknown_file = v->file;
				w->unknown_line = v->line;
			}
		}
		return; /* unset: empty */
	}
	sb_append(&w->text, v->value);
}

/* A '$' at rd->i: reads the expansion. False on text that does not end. */
static bool read_dollar(struct reader *rd, struct word *w, bool quoted)
{
	advance(rd); /* '$' */
	join(rd);
	if (rd->i >= rd->len) {
		sb_appendc(&w->text, '$');
		return true;
	}
	char c = rd->t[rd->i];
	if (c == '(') {
		advance(rd);
		join(rd);
		set_unknown(rd, w,
			    rd->i < rd->len && rd->t[rd->i] == '(' ? "an arithmetic expansion $((...))"
								   : "a command substitution $(...)");
		return skip_parens(rd);
	}
	if (c == '{') {
		advance(rd);
		_cleanup_(sb_free) struct strbuf nb = { 0 };
		bool named = read_name(rd, &nb);
		join(rd);
		if (named && rd->i < rd->len && rd->t[rd->i] == '}') {
			if (!quoted)
				w->expanded = true;
			expand_var(rd, w, nb.s, nb.len);
			rd->i++;
			return true;
		}
		set_unknown(rd, w, "a parameter expansion with an operator (${NAME:-...} and the like)");
		return skip_braces(rd);
	}
	if (name_start(c)) {
		_cleanup_(sb_free) struct strbuf nb = { 0 };
		read_name(rd, &nb);
		if (!quoted)
			w->expanded = true;
		expand_var(rd, w, nb.s, nb.len);
		return true;
	}
	if (c == '[') {
		/* bash's old arithmetic $[...]; dash keeps it as text */
		set_unknown(rd, w, "an arithmetic expansion $[...] (bash)");
		sb_appendc(&w->text, '$');
		return true;
	}
	if ((c >= '0' && c <= '9') || strchr("@*#?-$!", c)) {
		set_unknown(rd, w, "a positional or special parameter ($1, $@, $$...)");
		advance(rd);
		return true;
	}
	sb_appendc(&w->text, '$'); /* a lone '$' is itself */
	return true;
}

/* Reads one word at rd->i (not at a blank, newline or ';'). False: the
 * text does not end (an open quote) or the statement is code. */
static bool read_word(struct reader *rd, struct word *w)
{
	bool name_so_far = true;
	bool first = true;
	for (;;) {
		join(rd);
		if (rd->i >= rd->len)
			break;
		char c = rd->t[rd->i];
		if (word_end(c))
			break;
		if (meta(c)) {
			rd->code = "a redirection, pipe, list or subshell";
			return false;
		}
		if (name_so_far && c == '=' && !first) {
			w->assign = true;
			w->eq = w->text.len;
			sb_appendc(&w->text, '=');
			name_so_far = false;
			rd->i++;
			join(rd);
			if (rd->i < rd->len && rd->t[rd->i] == '~')
				set_unknown(rd, w, "a tilde expansion");
			continue;
		}
		if (!name_char(c) || (first && !name_start(c)))
			name_so_far = false;
		first = false;
		if (c == '\\') {
			advance(rd);
			if (rd->i >= rd->len) {
				sb_appendc(&w->text, '\\');
				break;
			}
			if (rd->t[rd->i] == '\n') { /* a line joined */
				advance(rd);
				continue;
			}
			w->quoted_any = true;
			sb_appendc(&w->text, rd->t[rd->i]);
			advance(rd);
		} else if (c == '\'') {
			w->quoted_any = true;
			advance(rd);
			size_t s = rd->i;
			while (rd->i < rd->len && rd->t[rd->i] != '\'')
				advance(rd);
			if (rd->i >= rd->len) {
				rd->code = "a single quote left open";
				return false;
			}
			sb_appendn(&w->text, rd->t + s, rd->i - s);
			advance(rd);
		} else if (c == '"') {
			w->quoted_any = true;
			advance(rd);
			for (;;) {
				join(rd);
				if (rd->i >= rd->len) {
					rd->code = "a double quote left open";
					return false;
				}
				char d = rd->t[rd->i];
				if (d == '"') {
					advance(rd);
					break;
				}
				if (d == '\\' && rd->i + 1 < rd->len && strchr("$`\"\\\n", rd->t[rd->i + 1])) {
					advance(rd);
					if (rd->t[rd->i] != '\n')
						sb_appendc(&w->text, rd->t[rd->i]);
					advance(rd);
				} else if (d == '$') {
					if (!read_dollar(rd, w, true)) {
						rd->code = "an expansion left open";
						return false;
					}
				} else if (d == '`') {
					advance(rd);
					set_unknown(rd, w, "a command substitution `...`");
					if (!skip_backquote(rd)) {
						rd->code = "a backquote left open";
						return false;
					}
				} else {
					sb_appendc(&w->text, d);
					advance(rd);
				}
			}
		} else if (c == '$') {
			if (!read_dollar(rd, w, false)) {
				rd->code = "an expansion left open";
				return false;
			}
		} else if (c == '`') {
			advance(rd);
			set_unknown(rd, w, "a command substitution `...`");
			if (!skip_backquote(rd)) {
				rd->code = "a backquote left open";
				return false;
			}
		} else {
			if (c == '*' || c == '?' || c == '[')
				w->expanded = true;
			if (c == '~' && w->assign && w->text.len > 0 && w->text.s[w->text.len - 1] == ':')
				set_unknown(rd, w, "a tilde expansion");
			sb_appendc(&w->text, c);
			advance(rd);
		}
	}
	return true;
}

static void assign(struct reader *rd, const struct word *w)
{
	struct shvar *v = get_or_add(rd->vs, w->text.s, w->eq);
	free(v->value);
	v->value = NULL;
	v->file = intern_file(rd->vs, w->unknown ? w->unknown_file : rd->file);
	v->line = w->unknown ? w->unknown_line : rd->line;
	v->unknown = w->unknown != NULL;
	v->why = w->unknown;
	if (!w->unknown)
		v->value = xstrdup(w->text.s + w->eq + 1);
}

static bool plain_name(const char *s)
{
	if (!name_start(*s))
		return false;
	while (*s && name_char(*s))
		s++;
	return *s == '\0';
}

static void poison(struct reader *rd, const char *why, unsigned line)
{
	if (rd->vs->poisoned)
		return;
	rd->vs->poisoned = true;
	rd->vs->poison_file = intern_file(rd->vs, rd->file);
	rd->vs->poison_line = line;
	rd->vs->poison_why = why;
}

enum mode { M_FIRST, M_ASSIGN, M_DECLARE, M_UNSET };

/* Takes in one word of a statement, in order: an assignment is made at
 * once (a later word may use it: A=1 B=$A); sets rd->code when the
 * statement is more than assignments. */
static void take_word(struct reader *rd, enum mode *m, const struct word *w)
{
	if (*m == M_FIRST) {
		if (w->assign) {
			*m = M_ASSIGN;
		} else if (!w->quoted_any && streq(w->text.s, "export")) {
			*m = M_DECLARE;
			return;
		} else if (!w->quoted_any && streq(w->text.s, "unset")) {
			*m = M_UNSET;
			return;
		} else {
			rd->code = "a command";
			return;
		}
	}
	switch (*m) {
	case M_ASSIGN:
		if (!w->assign) {
			rd->code = "a command run with assignments before it";
			return;
		}
		assign(rd, w);
		return;
	case M_DECLARE:
		if (w->assign) {
			if (w->expanded) {
				struct word u = *w;
				set_unknown(rd, &u, "an unquoted expansion in an export argument");
				assign(rd, &u);
			} else {
				assign(rd, w);
			}
		} else if (w->quoted_any || !plain_name(w->text.s)) {
			rd->code = "export of a name that is not plain";
		}
		return;
	case M_UNSET:
		if (streq(w->text.s, "-v") && !w->quoted_any)
			return;
		if (w->quoted_any || w->unknown || !plain_name(w->text.s)) {
			rd->code = "unset of a name that is not plain";
			return;
		}
		struct shvar *v = find(rd->vs, w->text.s, strlen(w->text.s));
		if (v) {
			free(v->value);
			v->value = NULL;
			v->unknown = false;
			v->why = NULL;
			v->file = intern_file(rd->vs, rd->file);
			v->line = rd->line;
		}
		return;
	case M_FIRST: break;
	}
}

/* One statement from rd->i to its newline or ';'. */
static void statement(struct reader *rd)
{
	unsigned first_line = rd->line;
	enum mode m = M_FIRST;
	size_t words = 0;
	rd->code = NULL;
	while (!rd->code) {
		while (rd->i < rd->len) {
			if (blank(rd->t[rd->i])) {
				rd->i++;
			} else if (rd->t[rd->i] == '\\' && rd->i + 1 < rd->len && rd->t[rd->i + 1] == '\n') {
				rd->i += 2;
				rd->line++;
			} else {
				break;
			}
		}
		if (rd->i < rd->len && rd->t[rd->i] == ';' && words == 0)
			rd->code = "a syntax error (';' with no command before it)";
		if (rd->code || rd->i >= rd->len || rd->t[rd->i] == '\n' || rd->t[rd->i] == ';')
			break;
		if (rd->t[rd->i] == '#') { /* a comment to the end of the line */
			while (rd->i < rd->len && rd->t[rd->i] != '\n')
				rd->i++;
			break;
		}
		struct word w = { 0 };
		sb_appendn(&w.text, "", 0);
		words++;
		if (read_word(rd, &w))
			take_word(rd, &m, &w);
		sb_free(&w.text);
	}
	if (rd->code) {
		poison(rd, rd->code, first_line);
		/* the rest of this line is code too */
		while (rd->i < rd->len && rd->t[rd->i] != '\n')
			rd->i++;
	}
	if (rd->i < rd->len && rd->t[rd->i] == ';')
		rd->i++;
}

void shvars_source(struct shvars *vs, const char *file, const char *text, size_t len)
{
	struct reader rd = { .vs = vs, .file = file, .t = text, .len = len, .line = 1 };
	const char *nul = memchr(text, '\0', len);
	if (nul) {
		unsigned line = 1;
		for (const char *p = text; p < nul; p++)
			line += *p == '\n';
		poison(&rd, "a NUL byte", line);
		return;
	}
	while (rd.i < rd.len && !vs->poisoned) {
		if (rd.t[rd.i] == '\n') {
			rd.i++;
			rd.line++;
			continue;
		}
		statement(&rd);
	}
}

bool shvars_get(const struct shvars *vs, const char *name, const char **value, const char **file, unsigned *line,
		const char **why)
{
	*value = NULL;
	if (vs->poisoned) {
		*file = vs->poison_file;
		*line = vs->poison_line;
		*why = vs->poison_why;
		return false;
	}
	const struct shvar *v = find(vs, name, strlen(name));
	if (v && v->unknown) {
		*file = v->file;
		*line = v->line;
		*why = v->why;
		return false;
	}
	*value = v ? v->value : NULL;
	*file = v ? v->file : NULL;
	*line = v ? v->line : 0;
	*why = NULL;
	return true;
}

void shvars_set(struct shvars *vs, const char *name, const char *value, const char *file, unsigned line)
{
	struct shvar *v = get_or_add(vs, name, strlen(name));
	free(v->value);
	v->value = value ? xstrdup(value) : NULL;
	v->unknown = false;
	v->why = NULL;
	v->file = intern_file(vs, file);
	v->line = line;
}

void shvars_free(struct shvars *vs)
{
	for (size_t i = 0; i < vs->n; i++) {
		free(vs->v[i].name);
		free(vs->v[i].value);
	}
	free(vs->v);
	for (size_t i = 0; i < vs->nfiles; i++)
		free(vs->files[i]);
	free(vs->files);
	*vs = (struct shvars){ 0 };
}
