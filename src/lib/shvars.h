/* shvars.h - the variables a POSIX shell would have after sourcing files of
 * plain assignments (/etc/default/grub and its drop-ins), known without
 * running a byte of them. Pure.
 *
 * Read: blank and comment lines; `NAME=WORD` (several on one line, or
 * separated by `;`), `export` with assignments or names,
 * `unset NAME...`; words made of unquoted text, `\x`, '...', "..." (with
 * the \$ \` \" \\ escapes) and $NAME / ${NAME} of variables set earlier;
 * backslash-newline joins lines. A value with $(...), `...`, $1, ${NAME:-x}
 * and the like is *unknown* (the variable, not the file): knowing it takes
 * running code. Any other statement (a command, `.`, if/for/case, a
 * function, a redirection, &&, |) could set anything: from there on every
 * variable is unknown, with that FILE:LINE as the reason. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

struct shvar {
	char *name;
	char *value;	  /* NULL when unknown or unset */
	bool unknown;	  /* the value takes running code to know */
	const char *file; /* where it was set last (or made unknown) */
	unsigned line;
	const char *why; /* unknown: what would have to run (static text) */
};

struct shvars {
	struct shvar *v;
	size_t n;
	/* the first statement that could set anything: every variable not
	 * set plainly before it is unknown from there on */
	bool poisoned;
	const char *poison_file;
	unsigned poison_line;
	const char *poison_why;
	char **files; /* copies of the file names the entries point to */
	size_t nfiles;
};

/* Runs text (len bytes, the file's name given for reasons) over vs, as a
 * shell sourcing it would. Never fails: what it cannot know it marks. */
void shvars_source(struct shvars *vs, const char *file, const char *text, size_t len);

/* A variable as it stands: *value is its value (NULL when unset); false
 * when it cannot be known (then *file, *line, *why say where and why). */
bool shvars_get(const struct shvars *vs, const char *name, const char **value, const char **file, unsigned *line,
		const char **why);

/* Sets a variable to a known value (what a filter between two files, such
 * as the tool's own GRUB drop-in, leaves). */
void shvars_set(struct shvars *vs, const char *name, const char *value, const char *file, unsigned line);

void shvars_free(struct shvars *vs);
