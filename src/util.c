/* util.c - see util.h */
#include "util.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
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

bool startswith(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

bool endswith(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);
	return a >= b && memcmp(s + a - b, suffix, b) == 0;
}

bool streq_ptr(const char *a, const char *b)
{
	if (!a || !b)
		return a == b;
	return strcmp(a, b) == 0;
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
	case '\0':
		break;
	case 'K': shift = 10; break;
	case 'M': shift = 20; break;
	case 'G': shift = 30; break;
	case 'T': shift = 40; break;
	default:
		return -1;
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

void (*log_sink)(bool warning, const char *msg);

/* "memcg-policy: [prefix]message\n" on stderr; errors and warnings also go
 * to log_sink where one is set */
enum log_level { LOG_ERROR, LOG_WARNING, LOG_VERBOSE };
static void vlog(enum log_level level, const char *prefix, const char *fmt, va_list ap) _printf_(3, 0);
static void vlog(enum log_level level, const char *prefix, const char *fmt, va_list ap)
{
	va_list copy;
	va_copy(copy, ap);
	fprintf(stderr, "%s: %s", program_name, prefix);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	if (log_sink && level != LOG_VERBOSE) {
		char *msg = NULL;
		if (vasprintf(&msg, fmt, copy) >= 0 && msg)
			log_sink(level == LOG_WARNING, msg);
		free(msg);
	}
	va_end(copy);
}

int report(int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vlog(LOG_ERROR, "", fmt, ap);
	va_end(ap);
	return -code;
}

void report_warn(const char *fmt, ...)
{
	if (log_verbosity < 0)
		return;
	va_list ap;
	va_start(ap, fmt);
	vlog(LOG_WARNING, "warning: ", fmt, ap);
	va_end(ap);
}

void log_verbose(const char *fmt, ...)
{
	if (log_verbosity < 1)
		return;
	va_list ap;
	va_start(ap, fmt);
	vlog(LOG_VERBOSE, "", fmt, ap);
	va_end(ap);
}
