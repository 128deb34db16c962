/* lib/diag.c - the list of diagnostics, see lib/diag.h. */
#include "lib/diag.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

static struct diagnostic *list;
static size_t n_list, cap_list;
static bool as_warnings;

/* "FILE:LINE: text": the first ":DIGITS: " after a non-empty file part. */
static void split_place(struct diagnostic *d)
{
	const char *msg = d->message;
	for (const char *p = msg; (p = strchr(p, ':')) != NULL; p++) {
		if (p == msg || !isdigit((unsigned char)p[1]))
			continue;
		char *end;
		errno = 0;
		unsigned long v = strtoul(p + 1, &end, 10);
		if (errno == 0 && end[0] == ':' && end[1] == ' ' && v > 0 && v <= 0xffffffffUL) {
			d->file = xstrndup(msg, (size_t)(p - msg));
			d->line = (unsigned)v;
			return;
		}
	}
}

static void vrecord(enum diag_level level, int code, const char *fmt, va_list ap) _printf_(3, 0);
static void vrecord(enum diag_level level, int code, const char *fmt, va_list ap)
{
	char *msg = NULL;
	if (vasprintf(&msg, fmt, ap) < 0 || !msg) {
		fprintf(stderr, "%s: out of memory\n", program_name);
		abort();
	}
	if (n_list == cap_list) {
		cap_list = cap_list ? 2 * cap_list : 8;
		list = xrealloc(list, cap_list * sizeof(*list));
	}
	if (level == DIAG_ERROR && as_warnings)
		level = DIAG_WARNING;
	struct diagnostic *d = &list[n_list++];
	*d = (struct diagnostic){ .level = level, .code = level == DIAG_ERROR ? code : 0, .message = msg };
	split_place(d);
}

int diag_error(int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vrecord(DIAG_ERROR, code, fmt, ap);
	va_end(ap);
	return -code;
}

void diag_warn(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vrecord(DIAG_WARNING, 0, fmt, ap);
	va_end(ap);
}

size_t diag_count(void) { return n_list; }

const struct diagnostic *diag_at(size_t i) { return i < n_list ? &list[i] : NULL; }

const struct diagnostic *diag_first_error(void)
{
	for (size_t i = 0; i < n_list; i++)
		if (list[i].level == DIAG_ERROR)
			return &list[i];
	return NULL;
}

size_t diag_demote_errors(void)
{
	size_t n = 0;
	for (size_t i = 0; i < n_list; i++)
		if (list[i].level == DIAG_ERROR) {
			list[i].level = DIAG_WARNING;
			list[i].code = 0;
			n++;
		}
	return n;
}

void diag_errors_as_warnings(bool on) { as_warnings = on; }

void diag_print(void)
{
	for (size_t i = 0; i < n_list; i++) {
		struct diagnostic *d = &list[i];
		if (d->printed)
			continue;
		d->printed = true;
		if (d->level == DIAG_WARNING && log_verbosity < 0)
			continue;
		/* names from a root (file names, kernel releases) may hold
		 * control bytes: the terminal gets them escaped */
		_cleanup_free_ char *shown = text_escape(d->message);
		fprintf(stderr, "%s: %s%s\n", program_name, d->level == DIAG_WARNING ? "warning: " : "", shown);
	}
	fflush(stderr);
}

void diag_reset(void)
{
	for (size_t i = 0; i < n_list; i++) {
		free(list[i].message);
		free(list[i].file);
	}
	free(list);
	list = NULL;
	n_list = cap_list = 0;
	as_warnings = false;
}
