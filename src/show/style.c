/* show/style.c - colour on a terminal only (show/style.h). */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "show/style.h"

static bool colour(void)
{
	static int on = -1;
	if (on < 0) {
		const char *no = getenv("NO_COLOR"), *term = getenv("TERM");
		on = isatty(STDOUT_FILENO) && !(no && *no) && !(term && strcmp(term, "dumb") == 0);
	}
	return on;
}

const char *style_begin(enum style s)
{
	if (!colour())
		return "";
	switch (s) {
	case STYLE_STATE: return "\033[1m";
	case STYLE_GOOD: return "\033[0;32m";
	case STYLE_WARN: return "\033[0;33m";
	case STYLE_BAD: return "\033[0;31m";
	}
	return "";
}

const char *style_end(void) { return colour() ? "\033[0m" : ""; }
