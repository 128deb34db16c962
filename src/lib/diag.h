/* lib/diag.h - diagnostics: every error and warning of a run, recorded by the
 * stage that finds it in one list (severity, exit code, file, line, text)
 * and printed once by the command layer, as text on stderr or inside the
 * --json object (show/report.h).
 *
 * Stages return negated exit codes and record why:
 *     return diag_error(EXIT_BADINPUT, "%s:%u: bad value", file, line);
 * A message that starts with "FILE:LINE: " has its file and line taken out
 * into their own fields. Nothing here prints until diag_print(). */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "lib/util.h"

enum diag_level { DIAG_ERROR, DIAG_WARNING };

struct diagnostic {
	enum diag_level level;
	int code;      /* the exit code it stands for (errors); 0 for warnings */
	char *message; /* the whole text, "FILE:LINE: text" where it names a place */
	char *file;    /* NULL where the message names no FILE:LINE */
	unsigned line; /* 0 where it names none */
	bool printed;  /* diag_print() has shown it */
};

/* Records an error; returns -code. */
int diag_error(int code, const char *fmt, ...) _printf_(2, 3);
/* Records a warning (always: -q only keeps diag_print() from showing it). */
void diag_warn(const char *fmt, ...) _printf_(1, 2);

/* The list so far, in the order of recording. */
size_t diag_count(void);
const struct diagnostic *diag_at(size_t i);
/* The first error recorded, NULL if none. */
const struct diagnostic *diag_first_error(void);

/* Every error recorded so far becomes a warning (apply --hook: an input
 * error must not fail the package operation). Returns how many. */
size_t diag_demote_errors(void);
/* While on, errors recorded are warnings (a look after the work is done,
 * whose failure does not fail the run: revert's view of the policy). */
void diag_errors_as_warnings(bool on);

/* Prints what is not printed yet to stderr, "memcg-policy: [warning: ]
 * MESSAGE" with names escaped for a terminal; warnings not with -q. */
void diag_print(void);
/* Forgets every diagnostic. */
void diag_reset(void);
