/* policy.c - the policy files, see policy.h and DESIGN section 4.
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
#include "policy.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <ini.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "diag.h"
#include "kconfig.h"
#include "util.h"

/* The longest line: 200 bytes counting its line break (199 characters),
 * as many as fit in inih's buffer (INI_MAX_LINE 200, with the NUL). */
#define POLICY_MAX_LINE 200
#if defined(INI_MAX_LINE) && INI_MAX_LINE < POLICY_MAX_LINE
#error "inih's line buffer is smaller than a policy line"
#endif
#if defined(INI_HANDLER_LINENO) && INI_HANDLER_LINENO
#error "the handler is written for Debian's inih (INI_HANDLER_LINENO 0)"
#endif

static const char *const default_needs_memcg[] = {
	"dockerd", "containerd", "podman", "crio", "kubelet", "k3s", "lxd", "incusd",
};

/* ---- names and values ------------------------------------------------ */

struct name_value {
	const char *name;
	int value;
};

static const struct name_value mode_values[] = {
	{ "on", MODE_ON }, { "off", MODE_OFF }, { "auto", MODE_AUTO }, { NULL, 0 },
};
static const struct name_value accounting_values[] = {
	{ "full", ACCOUNTING_FULL }, { "lite", ACCOUNTING_LITE }, { NULL, 0 },
};
static const struct name_value bool_values[] = {
	{ "yes", 1 }, { "no", 0 }, { "true", 1 }, { "false", 0 }, { "1", 1 }, { "0", 0 }, { NULL, 0 },
};
static const struct name_value tristate_values[] = {
	{ "auto", TRI_AUTO }, { "yes", TRI_YES }, { "no", TRI_NO }, { "true", TRI_YES },
	{ "false", TRI_NO }, { "1", TRI_YES }, { "0", TRI_NO }, { NULL, 0 },
};
static const struct name_value otherwise_values[] = {
	{ "keep", OTHERWISE_KEEP }, { "kernel", OTHERWISE_KERNEL }, { "on", OTHERWISE_ON },
	{ "off", OTHERWISE_OFF }, { NULL, 0 },
};
static const struct name_value default_values[] = {
	{ "on", MEMCG_DEFAULT_ON }, { "off", MEMCG_DEFAULT_OFF }, { NULL, 0 },
};

static int lookup_value(const struct name_value *t, const char *s, int *out)
{
	for (; t->name; t++)
		if (strcasecmp(t->name, s) == 0) {
			*out = t->value;
			return 0;
		}
	return -1;
}

const char *policy_mode_name(enum policy_mode m)
{
	switch (m) {
	case MODE_ON: return "on";
	case MODE_OFF: return "off";
	case MODE_AUTO: return "auto";
	case MODE_UNSET: break;
	}
	return "unset";
}

const char *policy_otherwise_name(enum policy_otherwise o)
{
	switch (o) {
	case OTHERWISE_KEEP: return "keep";
	case OTHERWISE_KERNEL: return "kernel";
	case OTHERWISE_ON: return "on";
	case OTHERWISE_OFF: return "off";
	}
	return "?";
}

const char *tristate_name(enum tristate t)
{
	switch (t) {
	case TRI_AUTO: return "auto";
	case TRI_YES: return "yes";
	case TRI_NO: return "no";
	}
	return "?";
}

const char *policy_accounting_name(enum accounting a)
{
	return a == ACCOUNTING_LITE ? "lite" : "full";
}

char *origin_str(const struct origin *o)
{
	if (!o->file)
		return xstrdup("built-in default");
	return xasprintf("%s:%u", o->file, o->line);
}

/* ---- the policy struct ----------------------------------------------- */

void policy_init(struct policy *p)
{
	*p = (struct policy){
		.mode = MODE_AUTO,
		.accounting = ACCOUNTING_FULL,
		.strict = false,
		.needs_memcg_units = true,
		.otherwise = OTHERWISE_KEEP,
		.grub = TRI_AUTO,
		.systemd_boot = TRI_AUTO,
		.kernel_cmdline = TRI_AUTO,
		.rpi = TRI_AUTO,
		.regenerate = TRI_AUTO,
	};
	p->n_needs_memcg = ARRAY_SIZE(default_needs_memcg);
	p->needs_memcg = xcalloc(p->n_needs_memcg + 1, sizeof(char *));
	for (size_t i = 0; i < p->n_needs_memcg; i++)
		p->needs_memcg[i] = xstrdup(default_needs_memcg[i]);
}

static void free_words(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

void policy_free(struct policy *p)
{
	free(p->strict_despite);
	free_words(p->needs_memcg, p->n_needs_memcg);
	for (size_t i = 0; i < p->n_kernels; i++)
		free(p->kernels[i].glob);
	free(p->kernels);
	free_words(p->files, p->n_files);
	*p = (struct policy){ 0 };
}

/* ---- kernel sections ------------------------------------------------- */

enum kernel_field { KF_MODE, KF_DEFAULT, KF_ACCEPTS };

static bool kernel_field_set(const struct policy_kernel_section *s, enum kernel_field f)
{
	switch (f) {
	case KF_MODE: return s->mode != MODE_UNSET;
	case KF_DEFAULT: return s->default_state >= 0;
	case KF_ACCEPTS: return s->accepts_enable >= 0;
	}
	return false;
}

static const struct policy_kernel_section *kernel_lookup(const struct policy *p, const char *release,
							  enum kernel_field f)
{
	if (!release)
		return NULL;
	for (size_t i = p->n_kernels; i-- > 0;) {
		const struct policy_kernel_section *s = &p->kernels[i];
		if (kernel_field_set(s, f) && fnmatch(s->glob, release, 0) == 0)
			return s;
	}
	return NULL;
}

const struct policy_kernel_section *policy_kernel_mode(const struct policy *p, const char *release)
{
	return kernel_lookup(p, release, KF_MODE);
}

const struct policy_kernel_section *policy_kernel_default(const struct policy *p, const char *release)
{
	return kernel_lookup(p, release, KF_DEFAULT);
}

const struct policy_kernel_section *policy_kernel_accepts(const struct policy *p, const char *release)
{
	return kernel_lookup(p, release, KF_ACCEPTS);
}

/* ---- keys ------------------------------------------------------------ */

enum section_kind { SEC_NONE, SEC_POLICY, SEC_AUTO, SEC_KERNEL, SEC_BOOTLOADERS };

enum value_type {
	V_MODE,       /* enum policy_mode: on | off | auto */
	V_ACCOUNTING, /* enum accounting */
	V_BOOL,       /* bool */
	V_INTBOOL,    /* int 0/1 (-1 unset) */
	V_WORDS,      /* char ** + size_t count */
	V_SIZE,       /* unsigned long long + bool has; empty = unset */
	V_OTHERWISE,  /* enum policy_otherwise */
	V_DEFAULT,    /* int: enum memcg_default (-1 unset) */
	V_TRISTATE,   /* enum tristate */
};

#define NO_OFFSET ((size_t)-1)

/* off: the field; off2: the count (V_WORDS) or the has-flag (V_SIZE);
 * origin: its struct origin. Offsets into struct policy, or into struct
 * policy_kernel_section for SEC_KERNEL. */
struct key_def {
	enum section_kind section;
	const char *name;
	enum value_type type;
	size_t off, off2, origin;
};

#define PKEY(sec, name, type, field, field2) \
	{ sec, name, type, offsetof(struct policy, field), field2, offsetof(struct policy, field##_origin) }
#define KKEY(name, type, field, origin_field) \
	{ SEC_KERNEL, name, type, offsetof(struct policy_kernel_section, field), NO_OFFSET, \
	  offsetof(struct policy_kernel_section, origin_field) }

static const struct key_def keys[] = {
	PKEY(SEC_POLICY, "mode", V_MODE, mode, NO_OFFSET),
	PKEY(SEC_POLICY, "accounting", V_ACCOUNTING, accounting, NO_OFFSET),
	PKEY(SEC_POLICY, "strict", V_BOOL, strict, NO_OFFSET),
	PKEY(SEC_AUTO, "needs-memcg", V_WORDS, needs_memcg, offsetof(struct policy, n_needs_memcg)),
	PKEY(SEC_AUTO, "needs-memcg-units", V_BOOL, needs_memcg_units, NO_OFFSET),
	{ SEC_AUTO, "min-ram", V_SIZE, offsetof(struct policy, min_ram), offsetof(struct policy, has_min_ram),
	  offsetof(struct policy, min_ram_origin) },
	{ SEC_AUTO, "assume-ram", V_SIZE, offsetof(struct policy, assume_ram),
	  offsetof(struct policy, has_assume_ram), offsetof(struct policy, assume_ram_origin) },
	PKEY(SEC_AUTO, "otherwise", V_OTHERWISE, otherwise, NO_OFFSET),
	KKEY("mode", V_MODE, mode, mode_origin),
	KKEY("default", V_DEFAULT, default_state, default_origin),
	KKEY("accepts-cgroup-enable", V_INTBOOL, accepts_enable, accepts_enable_origin),
	PKEY(SEC_BOOTLOADERS, "grub", V_TRISTATE, grub, NO_OFFSET),
	PKEY(SEC_BOOTLOADERS, "systemd-boot", V_TRISTATE, systemd_boot, NO_OFFSET),
	PKEY(SEC_BOOTLOADERS, "kernel-cmdline", V_TRISTATE, kernel_cmdline, NO_OFFSET),
	PKEY(SEC_BOOTLOADERS, "rpi", V_TRISTATE, rpi, NO_OFFSET),
	PKEY(SEC_BOOTLOADERS, "regenerate", V_TRISTATE, regenerate, NO_OFFSET),
};

static const char *expected_values(enum value_type t)
{
	switch (t) {
	case V_MODE: return "on, off or auto";
	case V_ACCOUNTING: return "full or lite";
	case V_BOOL:
	case V_INTBOOL: return "yes or no";
	case V_WORDS: return "program names separated by spaces";
	case V_SIZE: return "a size such as 512M or 1G, or nothing";
	case V_OTHERWISE: return "keep, kernel, on or off";
	case V_DEFAULT: return "on or off";
	case V_TRISTATE: return "auto, yes or no";
	}
	return "?";
}

/* A parsed value, before it is stored. */
struct value {
	int i;
	unsigned long long size;
	bool has;
	struct strv words;
};

static bool valid_program_name(const char *w)
{
	if (streq(w, ".") || streq(w, ".."))
		return false;
	for (const char *c = w; *c; c++)
		if (*c == '/' || *c == ',' || (unsigned char)*c < 0x20 || *c == 0x7f)
			return false;
	return true;
}

static int parse_value(enum value_type t, const char *s, struct value *v)
{
	switch (t) {
	case V_MODE: return lookup_value(mode_values, s, &v->i);
	case V_ACCOUNTING: return lookup_value(accounting_values, s, &v->i);
	case V_BOOL:
	case V_INTBOOL: return lookup_value(bool_values, s, &v->i);
	case V_OTHERWISE: return lookup_value(otherwise_values, s, &v->i);
	case V_DEFAULT: return lookup_value(default_values, s, &v->i);
	case V_TRISTATE: return lookup_value(tristate_values, s, &v->i);
	case V_SIZE:
		v->has = *s != '\0';
		return v->has ? parse_size(s, &v->size) : 0;
	case V_WORDS: {
		const char *c = s;
		for (;;) {
			while (isspace((unsigned char)*c))
				c++;
			if (!*c)
				return 0;
			const char *e = c;
			while (*e && !isspace((unsigned char)*e))
				e++;
			char *w = xstrndup(c, (size_t)(e - c));
			strv_push(&v->words, w);
			if (!valid_program_name(w))
				return -1;
			c = e;
		}
	}
	}
	return -1;
}

#define FIELD(base, off, type) ((type *)(void *)((char *)(base) + (off)))

static void store_value(void *base, const struct key_def *k, struct value *v, struct origin o)
{
	switch (k->type) {
	case V_MODE: *FIELD(base, k->off, enum policy_mode) = (enum policy_mode)v->i; break;
	case V_ACCOUNTING: *FIELD(base, k->off, enum accounting) = (enum accounting)v->i; break;
	case V_BOOL: *FIELD(base, k->off, bool) = v->i != 0; break;
	case V_INTBOOL:
	case V_DEFAULT: *FIELD(base, k->off, int) = v->i; break;
	case V_OTHERWISE: *FIELD(base, k->off, enum policy_otherwise) = (enum policy_otherwise)v->i; break;
	case V_TRISTATE: *FIELD(base, k->off, enum tristate) = (enum tristate)v->i; break;
	case V_SIZE:
		*FIELD(base, k->off, unsigned long long) = v->has ? v->size : 0;
		*FIELD(base, k->off2, bool) = v->has;
		break;
	case V_WORDS: {
		char ***words = FIELD(base, k->off, char **);
		size_t *n = FIELD(base, k->off2, size_t);
		free_words(*words, *n);
		*n = v->words.n;
		*words = v->words.v ? v->words.v : xcalloc(1, sizeof(char *));
		v->words = (struct strv){ 0 };
		break;
	}
	}
	*FIELD(base, k->origin, struct origin) = o;
}

/* ---- the parser ------------------------------------------------------ */

struct seen_key {
	char *section; /* "policy", "kernel GLOB"... */
	const struct key_def *key;
	unsigned line;
};

struct parse_ctx {
	struct policy *p;
	bool apply;        /* second pass: store values */
	const char *file;  /* display name (the copy in p->files when applying) */
	const char *text;
	size_t len, pos;
	unsigned line;
	bool last_full; /* the last line filled inih's buffer */

	enum section_kind section;
	char *section_name; /* for messages and duplicate detection */
	size_t kernel;      /* index in p->kernels of the current [kernel] section */

	struct seen_key *seen;
	size_t n_seen;

	unsigned err_line;
	char *err_msg;
};

static unsigned last_error_line;

unsigned policy_last_error_line(void)
{
	return last_error_line;
}

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

static bool is_blank(char ch)
{
	return ch == ' ' || ch == '\t' || ch == '\r' || ch == '\f' || ch == '\v';
}

/* End of the meaningful part of s[0..n): before an inline comment (a '#' or
 * ';' at the start or after whitespace), without trailing whitespace. */
static size_t content_end(const char *s, size_t n)
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

static size_t skip_blank(const char *s, size_t i, size_t n)
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
				parse_error(c, "[%.*s]: one glob per [kernel] section (no spaces in it)", (int)len, name);
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

static const struct key_def *find_key(enum section_kind sec, const char *canon)
{
	for (size_t i = 0; i < ARRAY_SIZE(keys); i++)
		if (keys[i].section == sec && streq(keys[i].name, canon))
			return &keys[i];
	return NULL;
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
	for (size_t i = 0; i < len;) {
		size_t e = i;
		while (e < len && text[e] != '\n')
			e++;
		ln++;
		size_t a = i, b = e;
		i = e + 1;
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

/* ---- files ----------------------------------------------------------- */

/* Checks and reads one opened policy file. Takes the descriptor. */
static int load_fd(struct policy *p, int fd_in, const char *display)
{
	_cleanup_close_ int fd = fd_in;
	struct stat st;
	if (fstat(fd, &st) < 0) {
		int e = errno;
		return diag_error(EXIT_SYSTEM, "%s: cannot stat policy file: %s", display, strerror(e));
	}
	if (!S_ISREG(st.st_mode))
		return diag_error(EXIT_BADINPUT, "%s: unsafe policy file: not a regular file", display);
	if (st.st_uid != 0 && st.st_uid != getuid())
		return diag_error(EXIT_BADINPUT, "%s: unsafe policy file: owned by uid %u, not by root or the invoking user",
			      display, (unsigned)st.st_uid);
	if (st.st_mode & (S_IWGRP | S_IWOTH))
		return diag_error(EXIT_BADINPUT, "%s: unsafe policy file: writable by %s (mode %04o)", display,
			      (st.st_mode & S_IWOTH) ? "others" : "group", (unsigned)(st.st_mode & 07777));

	_cleanup_free_ char *text = NULL;
	size_t len = 0;
	int r = read_fd_all(fd, MAX_INPUT_FILE, &text, &len);
	if (r == -EFBIG)
		return diag_error(EXIT_BADINPUT, "%s: policy file too large", display);
	if (r < 0)
		return diag_error(EXIT_SYSTEM, "%s: cannot read policy file: %s", display, strerror(-r));
	return policy_load_buffer(p, text, len, display);
}

/* One file inside the root; a missing one is skipped. */
static int load_root_file(const struct root *r, const char *path, struct policy *p)
{
	_cleanup_free_ char *display = root_display(r, path);
	int fd = root_openat(r, path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK, 0);
	if (fd == -ENOENT)
		return 0;
	if (fd == -EINVAL || fd == -EISDIR)
		return diag_error(EXIT_BADINPUT, "%s: unsafe policy file: not a regular file", display);
	if (fd < 0)
		return diag_error(root_error_exit(fd), "%s: cannot open policy file: %s", display, root_strerror(fd));
	log_verbose("reading policy %s", display);
	return load_fd(p, fd, display);
}

/* A directory on the policy search path: owned by root or the invoking
 * user; not writable by group or others, except (for a directory whose
 * files are named, not listed) a sticky one such as /tmp, where nobody else
 * can replace or remove the policy file. A directory whose *.conf files are
 * all read (listed) may not be writable by others at all. */
static int check_dir_st(const struct stat *st, const char *display, bool listed)
{
	if (st->st_uid != 0 && st->st_uid != getuid())
		return diag_error(EXIT_BADINPUT,
			      "%s: unsafe policy directory: owned by uid %u, not by root or the invoking user", display,
			      (unsigned)st->st_uid);
	if ((st->st_mode & (S_IWGRP | S_IWOTH)) && (listed || !(st->st_mode & S_ISVTX)))
		return diag_error(EXIT_BADINPUT, "%s: unsafe policy directory: writable by %s (mode %04o)", display,
			      (st->st_mode & S_IWOTH) ? "others" : "group", (unsigned)(st->st_mode & 07777));
	return 0;
}

/* Checks every directory from the root down to dir (inside the root); the
 * walk stops at the first that is not there. */
static int check_root_dirs(const struct root *r, const char *dir, bool listed)
{
	size_t len = strlen(dir);
	for (size_t end = 0; end <= len; end++) {
		if (end < len && dir[end] != '/')
			continue;
		if (end == len && len == 1)
			break; /* dir is "/": checked at end 0 */
		_cleanup_free_ char *prefix = end ? xstrndup(dir, end) : xstrdup("/");
		_cleanup_free_ char *display = root_display(r, prefix);
		_cleanup_close_ int fd = root_openat(r, prefix, O_PATH | O_DIRECTORY, 0);
		if (fd == -ENOENT || fd == -ENOTDIR)
			return 0;
		if (fd < 0)
			return diag_error(root_error_exit(fd), "%s: cannot open policy directory: %s", display,
				      root_strerror(fd));
		struct stat st;
		if (fstat(fd, &st) < 0) {
			int e = errno;
			return diag_error(EXIT_SYSTEM, "%s: %s", display, strerror(e));
		}
		int rc = check_dir_st(&st, display, listed && end == len);
		if (rc < 0)
			return rc;
	}
	return 0;
}

int policy_check_host_dirs(const char *file)
{
	_cleanup_free_ char *copy = xstrdup(file);
	char *slash = strrchr(copy, '/');
	_cleanup_free_ char *dir = NULL;
	if (!slash) {
		dir = getcwd(NULL, 0);
		if (!dir)
			return diag_error(EXIT_SYSTEM, "%s: cannot find the current directory: %s", file, strerror(errno));
	} else {
		*slash = '\0';
		dir = xstrdup(*copy ? copy : "/");
	}
	char *real = realpath(dir, NULL);
	if (!real)
		return diag_error(EXIT_BADINPUT, "%s: cannot open policy directory: %s", dir, strerror(errno));
	struct root host;
	int r = root_open(&host, NULL);
	if (r < 0) {
		free(real);
		return diag_error(EXIT_SYSTEM, "/: %s", strerror(-r));
	}
	r = check_root_dirs(&host, real, false);
	root_close(&host);
	free(real);
	return r;
}

/* DIR/ *.conf inside the root, sorted by name; hidden files are skipped. */
static int load_root_dir(const struct root *r, const char *dir, struct policy *p)
{
	int rc = check_root_dirs(r, dir, true);
	if (rc < 0)
		return rc;
	char **names = NULL;
	int n = root_list_dir(r, dir, ".conf", &names);
	if (n == -ENOENT)
		return 0;
	if (n < 0) {
		_cleanup_free_ char *display = root_display(r, dir);
		return diag_error(root_error_exit(n), "%s: cannot list policy directory: %s", display, root_strerror(n));
	}
	int ret = 0;
	for (int i = 0; i < n && ret == 0; i++) {
		if (names[i][0] == '.')
			continue;
		_cleanup_free_ char *path = path_join(dir, names[i]);
		ret = load_root_file(r, path, p);
	}
	names_free(names, n);
	return ret;
}

int policy_load(const struct root *r, const char *config_file, struct policy *p)
{
	if (config_file) {
		int fd = open(config_file, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
		if (fd < 0) {
			int e = errno;
			return diag_error(EXIT_BADINPUT, "%s: cannot open policy file: %s", config_file, strerror(e));
		}
		int rc = policy_check_host_dirs(config_file);
		if (rc < 0) {
			close(fd);
			return rc;
		}
		return load_fd(p, fd, config_file);
	}
	int ret = load_root_dir(r, "/usr/lib/memcg-policy.d", p);
	if (ret == 0)
		ret = check_root_dirs(r, "/etc", false);
	if (ret == 0)
		ret = load_root_file(r, "/etc/memcg-policy.conf", p);
	if (ret == 0)
		ret = load_root_dir(r, "/etc/memcg-policy.d", p);
	return ret;
}

/* ---- editing mode= for the set command ------------------------------- */

int policy_set_mode_text(const char *text, size_t len, const char *mode, char **out)
{
	int m;
	*out = NULL;
	if (!mode || lookup_value(mode_values, mode, &m) < 0)
		return -EXIT_USAGE;
	mode = policy_mode_name((enum policy_mode)m);

	struct strbuf sb = { 0 };
	bool in_policy = false, replaced = false;
	size_t insert_at = (size_t)-1; /* after the first [policy] header line */
	bool header_has_nl = true;

	for (size_t pos = 0, lineno = 1; pos < len; lineno++) {
		const char *s = text + pos;
		const char *nl = memchr(s, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - s) : len - pos;
		size_t next = pos + n + (nl ? 1 : 0);

		size_t b = 0;
		if (lineno == 1 && n >= 3 && memcmp(s, "\xef\xbb\xbf", 3) == 0)
			b = 3;
		b = skip_blank(s, b, n);
		size_t e = b + content_end(s + b, n - b);

		if (e > b && s[b] == '[') {
			in_policy = false;
			if (s[e - 1] == ']') {
				size_t nb = skip_blank(s, b + 1, e - 1), ne = e - 1;
				while (ne > nb && is_blank(s[ne - 1]))
					ne--;
				in_policy = ne - nb == 6 && memcmp(s + nb, "policy", 6) == 0;
			}
			if (in_policy && insert_at == (size_t)-1) {
				insert_at = next;
				header_has_nl = nl != NULL;
			}
		} else if (in_policy && e > b) {
			size_t sep = b;
			while (sep < e && s[sep] != '=' && s[sep] != ':')
				sep++;
			size_t kend = sep;
			while (kend > b && is_blank(s[kend - 1]))
				kend--;
			if (sep < e && kend - b == 4 && memcmp(s + b, "mode", 4) == 0) {
				size_t vs = skip_blank(s, sep + 1, e);
				/* s[vs..e) is the old value; keep all around it */
				sb_appendn(&sb, text + pos, vs);
				/* An empty value ends right after the separator (the
				 * blanks and comment after it are kept behind it):
				 * "mode =  # c" becomes "mode = X  # c". */
				if (vs == e && is_blank(s[sep - 1]))
					sb_appendc(&sb, ' ');
				sb_append(&sb, mode);
				sb_appendn(&sb, s + e, next - pos - e);
				replaced = true;
				pos = next;
				continue;
			}
		}
		sb_appendn(&sb, s, next - pos);
		pos = next;
	}

	if (!replaced) {
		_cleanup_free_ char *line = xasprintf("mode = %s\n", mode);
		if (insert_at != (size_t)-1) {
			size_t done_len = sb.len;
			char *done = sb_take(&sb);
			sb_appendn(&sb, done, insert_at);
			if (!header_has_nl)
				sb_appendc(&sb, '\n');
			sb_append(&sb, line);
			sb_appendn(&sb, done + insert_at, done_len - insert_at);
			free(done);
		} else {
			if (sb.len > 0 && sb.s[sb.len - 1] != '\n')
				sb_appendc(&sb, '\n');
			sb_append(&sb, "[policy]\n");
			sb_append(&sb, line);
		}
	}
	*out = sb_take(&sb);
	return 0;
}
