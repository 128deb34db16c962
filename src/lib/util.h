/* lib/util.h - small helpers shared by every module: ownership macros, checked
 * allocation, a growable string buffer, string vectors, verbose logging and
 * the exit codes of the command-line contract (errors: lib/diag.h). */
#pragma once

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Exit codes (DESIGN section 3). Library functions return the negated code. */
enum exit_code {
	EXIT_OK = 0,
	EXIT_DRIFT = 1,
	EXIT_USAGE = 2,
	EXIT_BADINPUT = 3,
	EXIT_SYSTEM = 4,
	EXIT_REBOOT = 5,
	/* set: the mode is recorded in the policy file, but applying it
	 * failed (bad input or a system failure, said): the boot
	 * configuration is as it was */
	EXIT_RECORDED = 6,
};

#define _cleanup_(f) __attribute__((cleanup(f)))
#define _cleanup_free_ _cleanup_(freep)
#define _printf_(a, b) __attribute__((format(printf, a, b)))
#define _unused_ __attribute__((unused))
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* Hand over ownership: returns p and leaves NULL behind. */
#define TAKE_PTR(p)                                                                                                    \
	({                                                                                                             \
		__typeof__(p) _take_p_ = (p);                                                                          \
		(p) = NULL;                                                                                            \
		_take_p_;                                                                                              \
	})

static inline void freep(void *p) { free(*(void **)p); }
void closep(int *fd);
#define _cleanup_close_ _cleanup_(closep)

/* Checked allocation: out of memory aborts with a message. */
void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
char *xasprintf(const char *fmt, ...) _printf_(1, 2);

/* Length of the valid UTF-8 sequence at s (at most n bytes, n > 0): 1 for
 * ASCII, 2 to 4, or 0 where the bytes are no valid UTF-8 (overlong,
 * surrogate, past U+10FFFF, cut short). */
size_t utf8_seq_len(const unsigned char *s, size_t n);

/* Text for a terminal: control bytes as C escapes (\n, \t, \x1b...), a
 * backslash doubled, bytes that are no valid UTF-8 (and the C1 controls
 * U+0080..U+009F) as \xHH; printable UTF-8 kept. Newly allocated. */
char *text_escape(const char *text);
/* The same for lines of text (a diff, a file's content): newlines and tabs
 * kept as they are. */
char *text_escape_lines(const char *text);
/* The same for use in one printf: the result lives until eight more calls
 * (NULL stays NULL). */
const char *esc(const char *text);

/* Growable NUL-terminated buffer. */
struct strbuf {
	char *s;
	size_t len;
	size_t cap;
};
void sb_appendn(struct strbuf *sb, const char *s, size_t n);
void sb_append(struct strbuf *sb, const char *s);
void sb_appendc(struct strbuf *sb, char c);
void sb_appendf(struct strbuf *sb, const char *fmt, ...) _printf_(2, 3);
char *sb_take(struct strbuf *sb); /* never NULL; buffer reset */
void sb_free(struct strbuf *sb);

/* NULL-terminated vector of owned strings. */
struct strv {
	char **v;
	size_t n;
};
void strv_push(struct strv *sv, char *owned);
void strv_pushdup(struct strv *sv, const char *s);
/* Appends a copy of every string of from. */
void strv_pushdup_all(struct strv *sv, const struct strv *from);
bool strv_contains(const struct strv *sv, const char *s);
void strv_free(struct strv *sv);
#define _cleanup_strv_ _cleanup_(strv_free)

/* Walks text (len bytes) line by line: the line at *pos, without its
 * '\n', as *line and *n; *pos moves past it. False at the end (a last line
 * without '\n' is a line; nothing follows a final '\n'). */
static inline bool text_next_line(const char *text, size_t len, size_t *pos, const char **line, size_t *n)
{
	if (*pos >= len)
		return false;
	const char *start = text + *pos;
	const char *nl = memchr(start, '\n', len - *pos);
	*line = start;
	*n = nl ? (size_t)(nl - start) : len - *pos;
	*pos += *n + 1;
	return true;
}

bool startswith(const char *s, const char *prefix);
bool endswith(const char *s, const char *suffix);
bool streq_ptr(const char *a, const char *b);
/* The same bytes, NULL (absent) equal only to NULL. */
bool bytes_same(const char *a, size_t alen, const char *b, size_t blen);
static inline bool streq(const char *a, const char *b) { return strcmp(a, b) == 0; }

/* An index of strings by value, over strings kept elsewhere: which i of
 * 0..count-1 has key(ctx, i) equal to s (the first such). Built on first
 * use, and grown as strings are appended (count larger than last time);
 * after a string is removed or changed, str_index_reset() makes the next
 * find build it again. Finds are O(1) on average. */
struct str_index {
	size_t *slot; /* i + 1, 0 for empty; cap is a power of two */
	size_t cap;
	size_t n; /* strings indexed: 0..n-1 */
};
typedef const char *(*str_index_key_fn)(const void *ctx, size_t i);
/* SIZE_MAX when none. */
size_t str_index_find(struct str_index *x, const char *s, size_t count, str_index_key_fn key, const void *ctx);
void str_index_reset(struct str_index *x);

/* Parses sizes such as "512M", "1G", "1024" (bytes; K/M/G/T are powers of
 * 1024). Returns 0 or -1 on a bad value. */
int parse_size(const char *s, unsigned long long *out);

/* Verbose progress (-v only), straight to stderr; errors and warnings are
 * diagnostics (lib/diag.h). */
extern int log_verbosity; /* 0 normal, -1 quiet (-q), 1 verbose (-v) */
void log_verbose(const char *fmt, ...) _printf_(1, 2);
/* Each line of a program's output as a verbose line of its own, led by
 * the program's name (-v only). */
void log_verbose_lines(const char *prog, const char *text);
/* A line that says what starts now and takes a while (running update-grub),
 * on stderr; not with -q, nor with --json (log_progress_off). */
extern bool log_progress_off;
void log_progress(const char *fmt, ...) _printf_(1, 2);

static inline bool timespec_eq(struct timespec a, struct timespec b)
{
	return a.tv_sec == b.tv_sec && a.tv_nsec == b.tv_nsec;
}

/* Test only: sleeps the milliseconds the environment variable name gives
 * (lib/util.c says where each is used). */
void test_hold(const char *name);

extern const char *program_name;
