/* lib/util.c - see lib/util.h */
#include "lib/util.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

const char *program_name = "memcg-policy";
int log_verbosity;

void closep(int *fd)
{
	if (*fd >= 0) {
		int saved = errno;
		close(*fd);
		errno = saved;
	}
}

__attribute__((noreturn)) static void oom(void)
{
	fputs("memcg-policy: out of memory\n", stderr);
	abort();
}

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		oom();
	return p;
}

void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);
	if (!p)
		oom();
	return p;
}

void *xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);
	if (!q)
		oom();
	return q;
}

char *xstrdup(const char *s)
{
	char *p = strdup(s);
	if (!p)
		oom();
	return p;
}

char *xstrndup(const char *s, size_t n)
{
	char *p = strndup(s, n);
	if (!p)
		oom();
	return p;
}

char *xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *p;
	va_start(ap, fmt);
	int r = vasprintf(&p, fmt, ap);
	va_end(ap);
	if (r < 0)
		oom();
	return p;
}

static void sb_grow(struct strbuf *sb, size_t extra)
{
	if (sb->len + extra + 1 <= sb->cap)
		return;
	size_t cap = sb->cap ? sb->cap : 64;
	while (cap < sb->len + extra + 1) {
		if (cap > SIZE_MAX / 2)
			oom();
		cap *= 2;
	}
	sb->s = xrealloc(sb->s, cap);
	sb->cap = cap;
}

void sb_appendn(struct strbuf *sb, const char *s, size_t n)
{
	sb_grow(sb, n);
	if (n)
		memcpy(sb->s + sb->len, s, n);
	sb->len += n;
	sb->s[sb->len] = '\0';
}

void sb_append(struct strbuf *sb, const char *s) { sb_appendn(sb, s, strlen(s)); }

void sb_appendc(struct strbuf *sb, char c) { sb_appendn(sb, &c, 1); }

void sb_appendf(struct strbuf *sb, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		oom();
	sb_grow(sb, (size_t)n);
	va_start(ap, fmt);
	vsnprintf(sb->s + sb->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	sb->len += (size_t)n;
}

char *sb_take(struct strbuf *sb)
{
	char *s = sb->s ? sb->s : xstrdup("");
	sb->s = NULL;
	sb->len = sb->cap = 0;
	return s;
}

void sb_free(struct strbuf *sb)
{
	free(sb->s);
	sb->s = NULL;
	sb->len = sb->cap = 0;
}

void strv_push(struct strv *sv, char *owned)
{
	sv->v = xrealloc(sv->v, (sv->n + 2) * sizeof(char *));
	sv->v[sv->n++] = owned;
	sv->v[sv->n] = NULL;
}

void strv_pushdup(struct strv *sv, const char *s) { strv_push(sv, xstrdup(s)); }

void strv_pushdup_all(struct strv *sv, const struct strv *from)
{
	for (size_t i = 0; i < from->n; i++)
		strv_pushdup(sv, from->v[i]);
}

bool strv_contains(const struct strv *sv, const char *s)
{
	for (size_t i = 0; i < sv->n; i++)
		if (streq(sv->v[i], s))
			return true;
	return false;
}

void strv_free(struct strv *sv)
{
	for (size_t i = 0; i < sv->n; i++)
		free(sv->v[i]);
	free(sv->v);
	sv->v = NULL;
	sv->n = 0;
}

bool startswith(const char *s, const char *prefix) { return strncmp(s, prefix, strlen(prefix)) == 0; }

bool endswith(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);
	return a >= b && memcmp(s + a - b, suffix, b) == 0;
}

bool bytes_same(const char *a, size_t alen, const char *b, size_t blen)
{
	if (!a || !b)
		return !a && !b;
	return alen == blen && memcmp(a, b, alen) == 0;
}

bool streq_ptr(const char *a, const char *b)
{
	if (!a || !b)
		return a == b;
	return strcmp(a, b) == 0;
}

static uint64_t str_hash(const char *s)
{
	uint64_t h = 1469598103934665603ull; /* FNV-1a */
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

/* Puts i in the table unless an earlier string equals it. */
static void str_index_put(struct str_index *x, size_t i, str_index_key_fn key, const void *ctx)
{
	const char *s = key(ctx, i);
	for (size_t h = (size_t)str_hash(s) & (x->cap - 1);; h = (h + 1) & (x->cap - 1)) {
		if (!x->slot[h]) {
			x->slot[h] = i + 1;
			return;
		}
		if (streq(key(ctx, x->slot[h] - 1), s))
			return;
	}
}

size_t str_index_find(struct str_index *x, const char *s, size_t count, str_index_key_fn key, const void *ctx)
{
	if (count < x->n)
		str_index_reset(x);
	if (count > x->n) {
		if ((count + 1) * 2 > x->cap) {
			/* rebuilt at twice what it holds: at most half full */
			size_t cap = 16;
			while (cap < (count + 1) * 4)
				cap *= 2;
			free(x->slot);
			x->slot = xcalloc(cap, sizeof(*x->slot));
			x->cap = cap;
			x->n = 0;
		}
		for (size_t i = x->n; i < count; i++)
			str_index_put(x, i, key, ctx);
		x->n = count;
	}
	if (!x->cap)
		return SIZE_MAX;
	for (size_t h = (size_t)str_hash(s) & (x->cap - 1); x->slot[h]; h = (h + 1) & (x->cap - 1))
		if (streq(key(ctx, x->slot[h] - 1), s))
			return x->slot[h] - 1;
	return SIZE_MAX;
}

void str_index_reset(struct str_index *x)
{
	free(x->slot);
	*x = (struct str_index){ 0 };
}

int parse_size(const char *s, unsigned long long *out)
{
	if (!s || !isdigit((unsigned char)*s))
		return -1;
	errno = 0;
	char *end;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno)
		return -1;
	unsigned shift = 0;
	switch (toupper((unsigned char)*end)) {
	case '\0': break;
	case 'K': shift = 10; break;
	case 'M': shift = 20; break;
	case 'G': shift = 30; break;
	case 'T': shift = 40; break;
	default: return -1;
	}
	if (*end) {
		end++;
		if (*end == 'i')
			end++;
		if (*end == 'B' || *end == 'b')
			end++;
		if (*end)
			return -1;
	}
	if (shift && v > (ULLONG_MAX >> shift))
		return -1;
	*out = v << shift;
	return 0;
}

size_t utf8_seq_len(const unsigned char *s, size_t n)
{
	if (n > 0 && s[0] < 0x80)
		return 1;
	size_t len = s[0] >= 0xf0 ? 4 : s[0] >= 0xe0 ? 3 : s[0] >= 0xc0 ? 2 : 0;
	if (len == 0 || len > n || s[0] >= 0xf5 || s[0] == 0xc0 || s[0] == 0xc1)
		return 0;
	for (size_t i = 1; i < len; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	if (len == 3 && ((s[0] == 0xe0 && s[1] < 0xa0) || (s[0] == 0xed && s[1] >= 0xa0)))
		return 0; /* overlong, surrogate */
	if (len == 4 && ((s[0] == 0xf0 && s[1] < 0x90) || (s[0] == 0xf4 && s[1] >= 0x90)))
		return 0; /* overlong, past U+10FFFF */
	return len;
}

/* Length of the multi-byte UTF-8 sequence at s if it is a valid one of a
 * printable character (C1 controls U+0080..U+009F are not), else 0. */
static size_t utf8_printable(const unsigned char *s, size_t n)
{
	size_t len = utf8_seq_len(s, n);
	if (len < 2 || (len == 2 && s[0] == 0xc2 && s[1] < 0xa0))
		return 0;
	return len;
}

static char *escape(const char *text, bool lines)
{
	struct strbuf sb = { 0 };
	const unsigned char *s = (const unsigned char *)text;
	size_t n = strlen(text);
	for (size_t i = 0; i < n;) {
		unsigned char c = s[i];
		if (lines && (c == '\n' || c == '\t')) {
			sb_appendc(&sb, (char)c);
		} else if (c == '\\') {
			sb_append(&sb, "\\\\");
		} else if (c >= 0x07 && c <= 0x0d) {
			sb_appendc(&sb, '\\');
			sb_appendc(&sb, "abtnvfr"[c - 0x07]);
		} else if (c < 0x20 || c == 0x7f) {
			sb_appendf(&sb, "\\x%02x", c);
		} else if (c >= 0x80) {
			size_t len = utf8_printable(s + i, n - i);
			if (!len) {
				sb_appendf(&sb, "\\x%02x", c);
			} else {
				sb_appendn(&sb, text + i, len);
				i += len;
				continue;
			}
		} else {
			sb_appendc(&sb, (char)c);
		}
		i++;
	}
	return sb.s ? sb_take(&sb) : xstrdup("");
}

char *text_escape(const char *text) { return escape(text, false); }
char *text_escape_lines(const char *text) { return escape(text, true); }

const char *esc(const char *text)
{
	static char *ring[8];
	static unsigned next;
	if (!text)
		return NULL;
	unsigned i = next++ % ARRAY_SIZE(ring);
	free(ring[i]);
	ring[i] = text_escape(text);
	return ring[i];
}

/* "memcg-policy: MESSAGE" on stderr, names from a root (which may hold
 * control bytes) escaped for the terminal */
_printf_(1, 0) static void log_line(const char *fmt, va_list ap)
{
	char *msg = NULL;
	if (vasprintf(&msg, fmt, ap) < 0 || !msg)
		return;
	char *shown = text_escape(msg);
	fprintf(stderr, "%s: %s\n", program_name, shown);
	free(shown);
	free(msg);
}

bool log_progress_off;

void log_progress(const char *fmt, ...)
{
	if (log_verbosity < 0 || log_progress_off)
		return;
	va_list ap;
	va_start(ap, fmt);
	log_line(fmt, ap);
	va_end(ap);
}

void log_verbose_lines(const char *prog, const char *text)
{
	if (log_verbosity < 1 || !text)
		return;
	for (const char *p = text; *p;) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		log_verbose("%s: %.*s", prog, (int)n, p);
		p += n + (nl != NULL);
	}
}

void log_verbose(const char *fmt, ...)
{
	if (log_verbosity < 1)
		return;
	va_list ap;
	va_start(ap, fmt);
	log_line(fmt, ap);
	va_end(ap);
}

/* Test only: the variable name=N (milliseconds, at most 60000) makes the
 * run sleep there. MEMCG_POLICY_LOCK_HOLD_MS: right after a run took the
 * lock (facts/journal.c), so that concurrent runs really wait for it;
 * MEMCG_POLICY_LOOK_HOLD_MS: between apply's first look and its taking the
 * lock (cmd/apply.c), so that another run can change things meanwhile
 * (tests/cmd/concurrency.sh). */
void test_hold(const char *name)
{
	const char *s = getenv(name);
	if (!s || !*s)
		return;
	char *end;
	errno = 0;
	unsigned long ms = strtoul(s, &end, 10);
	if (errno || *end || ms == 0 || ms > 60000)
		return;
	struct timespec ts = { .tv_sec = (time_t)(ms / 1000), .tv_nsec = (long)(ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}
