/* facts/policy-ini.c - reading the text of one policy file (policy_load_buffer),
 * see facts/policy.h and DESIGN section 4; the keys and values it knows are in
 * facts/policy.c.
 *
 * Debian's libinih is built with fixed options (ini.h): a 200-byte line
 * buffer that cuts longer lines silently, lines that start with whitespace
 * continue the previous value, only ';' starts an inline comment, and no
 * line numbers for the handler. So inih reads through our own reader,
 * which walks the text in memory, counts lines, rejects over-long ones,
 * drops indentation and '#' / ';' comments and handles the section headers
 * itself; inih then sees "key=value" lines, empty lines and nothing else.
 *
 * Each file is parsed twice: once to check it, then, only when it is valid,
 * once to merge it into the policy, so that a bad file changes nothing. */
#include "facts/policy.h"

#include <ini.h>
#include <stdio.h>

#include "lib/diag.h"
#include "facts/policy-int.h"
#include "lib/util.h"

/* The longest line: 200 bytes counting its line break (199 characters),
 * as many as fit in inih's buffer (INI_MAX_LINE 200, with the NUL). */
#define POLICY_MAX_LINE 200
#if defined(INI_MAX_LINE) && INI_MAX_LINE < POLICY_MAX_LINE
#error "inih's line buffer is smaller than a policy line"
#endif
#if defined(INI_HANDLER_LINENO) && INI_HANDLER_LINENO
#error "the handler is written for Debian's inih (INI_HANDLER_LINENO 0)"
#endif

/* ---- the parser ------------------------------------------------------ */

struct seen_key {
	char *section; /* "policy", "kernel GLOB"... */
	const struct key_def *key;
	unsigned line;
};

struct parse_ctx {
	struct policy *p;
	bool apply;	  /* second pass: store values */
	const char *file; /* display name (the copy in p->files when applying) */
	const char *text;
	size_t len, pos;
	unsigned line;
	bool last_full; /* the last line filled inih's buffer */

	enum section_kind section;
	char *section_name; /* for messages and duplicate detection */
	size_t kernel;	    /* index in p->kernels of the current [kernel] section */

	struct seen_key *seen;
	size_t n_seen;

	unsigned err_line;
	char *err_msg;
};

static unsigned last_error_line;

unsigned policy_last_error_line(void) { return last_error_line; }

static void parse_error(struct parse_ctx *c, const char *fmt, ...) _printf_(2, 3);
static void parse_error(struct parse_ctx *c, const char *fmt, ...)
{
	if (c->err_line)
		return;
	va_list ap;
	va_start(ap, fmt);
	if (vasprintf(&c->err_msg, fmt, ap) < 0)
		abort();
	va_end(ap);
	c->err_line = c->line;
}

bool is_blank(char ch) { return ch == ' ' || ch == '\t' || ch == '\r' || ch == '\f' || ch == '\v'; }

/* End of the meaningful part of s[0..n): before an inline comment (a '#' or
 * ';' at the start or after whitespace), without trailing whitespace. */
size_t content_end(const char *s, size_t n)
{
	size_t e = n;
	for (size_t i = 0; i < n; i++)
		if ((s[i] == '#' || s[i] == ';') && (i == 0 || is_blank(s[i - 1]))) {
			e = i;
			break;
		}
	while (e > 0 && is_blank(s[e - 1]))
		e--;
	return e;
}

size_t skip_blank(const char *s, size_t i, size_t n)
{
	while (i < n && is_blank(s[i]))
		i++;
	return i;
}

/* Whether s[0..n) is the given section name, with blanks around it. */
static int section_header(struct parse_ctx *c, const char *s, size_t n)
{
	/* s[0] is '[' */
	if (n < 2 || s[n - 1] != ']') {
		parse_error(c, "expected ']' at the end of the section header");
		return -1;
	}
	size_t b = skip_blank(s, 1, n - 1), e = n - 1;
	while (e > b && is_blank(s[e - 1]))
		e--;
	const char *name = s + b;
	size_t len = e - b;

	free(c->section_name);
	c->section_name = NULL;
	c->section = SEC_NONE;

	static const struct {
		const char *name;
		enum section_kind kind;
	} sections[] = { { "policy", SEC_POLICY }, { "auto", SEC_AUTO }, { "bootloaders", SEC_BOOTLOADERS } };
	for (size_t i = 0; i < ARRAY_SIZE(sections); i++)
		if (len == strlen(sections[i].name) && memcmp(name, sections[i].name, len) == 0) {
			c->section = sections[i].kind;
			c->section_name = xstrndup(name, len);
			return 0;
		}

	if (len >= 6 && memcmp(name, "kernel", 6) == 0 && (len == 6 || is_blank(name[6]))) {
		size_t g = skip_blank(name, 6, len);
		if (g == len) {
			parse_error(c, "[kernel] needs a glob of kernel releases, e.g. [kernel 6.6.*-v8+]");
			return -1;
		}
		for (size_t i = g; i < len; i++)
			if (is_blank(name[i])) {
				parse_error(c, "[%.*s]: one glob per [kernel] section (no spaces in it)", (int)len,
					    name);
				return -1;
			}
		c->section = SEC_KERNEL;
		c->section_name = xasprintf("kernel %.*s", (int)(len - g), name + g);
		if (c->apply) {
			struct policy *p = c->p;
			p->kernels = xrealloc(p->kernels, (p->n_kernels + 1) * sizeof(*p->kernels));
			p->kernels[p->n_kernels] = (struct policy_kernel_section){
				.glob = xstrndup(name + g, len - g),
				.origin = { (char *)c->file, c->line },
				.mode = MODE_UNSET,
				.default_state = -1,
				.accepts_enable = -1,
			};
			c->kernel = p->n_kernels++;
		}
		return 0;
	}
	parse_error(c, "unknown section [%.*s]", (int)len, name);
	return -1;
}

/* inih's reader: one physical line per call, so that inih's line count is
 * ours. buf receives "key=value", or an empty line for blank lines,
 * comments and section headers. Returns NULL at the end and after the
 * first error, which stops the parse. */
static char *policy_reader(char *buf, int num, void *stream)
{
	struct parse_ctx *c = stream;

	/* inih releases after Debian's r55 look for the rest of a line that
	 * filled the buffer without a line break by reading on into a small
	 * buffer; our lines are always whole, so there is nothing more. */
	if (c->last_full) {
		c->last_full = false;
		if (num < POLICY_MAX_LINE)
			return NULL;
	}
	if (c->err_line || c->pos >= c->len)
		return NULL;
	if (num < POLICY_MAX_LINE) {
		parse_error(c, "internal error: inih's line buffer holds only %d bytes", num);
		return NULL;
	}

	const char *s = c->text + c->pos;
	size_t avail = c->len - c->pos;
	const char *nl = memchr(s, '\n', avail);
	size_t n = nl ? (size_t)(nl - s) : avail;
	c->pos += nl ? n + 1 : n;
	c->line++;

	if (memchr(s, '\0', n)) {
		parse_error(c, "NUL byte in the line");
		return NULL;
	}
	if (n > 0 && s[n - 1] == '\r')
		n--; /* "\r\n" counts as one line break */
	if (n > POLICY_MAX_LINE - 1) {
		parse_error(c, "line too long (%zu characters, at most %d)", n, POLICY_MAX_LINE - 1);
		return NULL;
	}
	if (c->line == 1 && n >= 3 && memcmp(s, "\xef\xbb\xbf", 3) == 0) {
		s += 3; /* UTF-8 byte order mark */
		n -= 3;
	}
	/* Indentation is not continuation: every line stands alone. */
	size_t b = skip_blank(s, 0, n);
	s += b;
	n = content_end(s, n - b);

	buf[0] = '\0';
	if (n == 0)
		return buf; /* blank or comment */
	if (s[0] == '[')
		return section_header(c, s, n) < 0 ? NULL : buf;

	size_t sep = 0;
	while (sep < n && s[sep] != '=' && s[sep] != ':')
		sep++;
	if (sep == n) {
		parse_error(c, "expected 'key = value', a [section] or a comment");
		return NULL;
	}
	size_t klen = sep;
	while (klen > 0 && is_blank(s[klen - 1]))
		klen--;
	if (klen == 0) {
		parse_error(c, "missing key before '%c'", s[sep]);
		return NULL;
	}
	size_t v = skip_blank(s, sep + 1, n);
	/* klen + 1 + (n - v) <= n < num */
	size_t out = 0;
	memcpy(buf, s, klen);
	out += klen;
	buf[out++] = '=';
	memcpy(buf + out, s + v, n - v);
	out += n - v;
	if (out + 1 < (size_t)num)
		buf[out++] = '\n';
	else
		c->last_full = true; /* a 199-byte "key=value": fits, but without '\n' */
	buf[out] = '\0';
	return buf;
}

static int policy_handler(void *user, const char *section _unused_, const char *name, const char *value)
{
	struct parse_ctx *c = user;
	if (c->err_line)
		return 0;
	if (c->section == SEC_NONE) {
		parse_error(c, "'%s' is outside of any section", name);
		return 0;
	}
	_cleanup_free_ char *canon = xstrdup(name);
	for (char *ch = canon; *ch; ch++)
		if (*ch == '_')
			*ch = '-';
	const struct key_def *k = find_key(c->section, canon);
	if (!k) {
		parse_error(c, "unknown key '%s' in [%s]", name, c->section_name);
		return 0;
	}
	for (size_t i = 0; i < c->n_seen; i++)
		if (c->seen[i].key == k && streq(c->seen[i].section, c->section_name)) {
			parse_error(c, "duplicate key '%s' in [%s] (already set at line %u)", name, c->section_name,
				    c->seen[i].line);
			return 0;
		}
	c->seen = xrealloc(c->seen, (c->n_seen + 1) * sizeof(*c->seen));
	c->seen[c->n_seen++] = (struct seen_key){ xstrdup(c->section_name), k, c->line };

	struct value v = { 0 };
	if (parse_value(k->type, value, &v) < 0) {
		parse_error(c, "bad value '%s' for %s (expected %s)", value, name, expected_values(k->type));
		strv_free(&v.words);
		return 0;
	}
	if (c->apply) {
		void *base = k->section == SEC_KERNEL ? (void *)&c->p->kernels[c->kernel] : (void *)c->p;
		store_value(base, k, &v, (struct origin){ (char *)c->file, c->line });
	}
	strv_free(&v.words);
	return 1;
}

static int parse_pass(struct parse_ctx *c)
{
	int r = ini_parse_stream(policy_reader, c, policy_handler, c);
	if (r == -2)
		return diag_error(EXIT_SYSTEM, "%s: out of memory while parsing", c->file);
	if (r < 0) /* cannot happen with a stream */
		return diag_error(EXIT_SYSTEM, "%s: the policy parser failed (%d)", c->file, r);
	/* Every line inih could object to was checked by the reader first;
	 * should it still find an error, the first one is reported. */
	if (r > 0 && (!c->err_line || (unsigned)r < c->err_line)) {
		free(c->err_msg);
		c->err_msg = xstrdup("syntax error");
		c->err_line = (unsigned)r;
	}
	if (c->err_line) {
		last_error_line = c->err_line;
		return diag_error(EXIT_BADINPUT, "%s:%u: %s", c->file, c->err_line, c->err_msg);
	}
	return 0;
}

static void parse_ctx_reset(struct parse_ctx *c)
{
	for (size_t i = 0; i < c->n_seen; i++)
		free(c->seen[i].section);
	free(c->seen);
	c->seen = NULL;
	c->n_seen = 0;
	free(c->section_name);
	c->section_name = NULL;
	free(c->err_msg);
	c->err_msg = NULL;
	c->err_line = 0;
	c->section = SEC_NONE;
	c->pos = 0;
	c->line = 0;
	c->last_full = false;
}

/* A file with an error is not applied, except for strict = yes in its
 * [policy] section, so that a kernel hook fails on a policy whose other
 * line is wrong rather than letting it pass. The lines are read plainly:
 * "[section]", "key = value", '#' and ';' comments. */
static void strict_despite_error(struct policy *p, const char *text, size_t len, const char *display)
{
	bool in_policy = false;
	unsigned ln = 0;
	const char *l;
	size_t ll;
	for (size_t pos = 0; text_next_line(text, len, &pos, &l, &ll);) {
		ln++;
		size_t a = (size_t)(l - text), b = a + ll;
		while (a < b && (text[a] == ' ' || text[a] == '\t'))
			a++;
		while (b > a && (text[b - 1] == ' ' || text[b - 1] == '\t' || text[b - 1] == '\r'))
			b--;
		if (a == b || text[a] == '#' || text[a] == ';')
			continue;
		if (text[a] == '[') {
			in_policy = b - a == 8 && memcmp(text + a, "[policy]", 8) == 0;
			continue;
		}
		const char *eq = memchr(text + a, '=', b - a);
		if (!in_policy || !eq)
			continue;
		size_t kb = (size_t)(eq - text);
		while (kb > a && (text[kb - 1] == ' ' || text[kb - 1] == '\t'))
			kb--;
		if (kb - a != 6 || memcmp(text + a, "strict", 6) != 0)
			continue;
		size_t va = (size_t)(eq - text) + 1;
		while (va < b && (text[va] == ' ' || text[va] == '\t'))
			va++;
		_cleanup_free_ char *value = xstrndup(text + va, b - va);
		struct value v = { 0 };
		if (parse_value(V_BOOL, value, &v) == 0 && v.i) {
			free(p->strict_despite);
			p->strict_despite = xasprintf("%s:%u", display, ln);
			p->strict = true;
		}
		strv_free(&v.words);
	}
}

int policy_load_buffer(struct policy *p, const char *text, size_t len, const char *display)
{
	struct parse_ctx c = { .p = p, .file = display, .text = text, .len = len };
	last_error_line = 0;

	int r = parse_pass(&c);
	parse_ctx_reset(&c);
	if (r < 0) {
		strict_despite_error(p, text, len, display);
		return r;
	}

	p->files = xrealloc(p->files, (p->n_files + 2) * sizeof(char *));
	p->files[p->n_files] = xstrdup(display);
	c.file = p->files[p->n_files++];
	p->files[p->n_files] = NULL;
	c.apply = true;
	r = parse_pass(&c);
	parse_ctx_reset(&c);
	return r;
}
