/* cmd/options.c - the one message for a bad option, see cmd/commands.h. */
#include <getopt.h>
#include <string.h>

#include "cmd/commands.h"
#include "lib/diag.h"
#include "lib/util.h"

/* The long option arg names (exact, or a prefix of one only), or NULL. */
static const struct option *long_option(const struct option *opts, const char *arg)
{
	size_t n = strcspn(arg, "=");
	const struct option *found = NULL;
	for (const struct option *o = opts; o && o->name; o++) {
		if (strlen(o->name) == n && strncmp(o->name, arg, n) == 0)
			return o;
		if (strncmp(o->name, arg, n) == 0)
			found = found ? NULL : o;
	}
	return found;
}

int bad_option(const char *cmd, const struct option *opts, int argc, char **argv)
{
	const char *arg = optind > 0 && optind <= argc ? argv[optind - 1] : NULL;
	_cleanup_free_ char *hint =
		cmd ? xasprintf("see %s %s --help", program_name, cmd) : xasprintf("see %s --help", program_name);
	_cleanup_free_ char *where = cmd ? xasprintf("%s: ", cmd) : xstrdup("");
	if (arg && startswith(arg, "--")) {
		const struct option *o = long_option(opts, arg + 2);
		if (o && o->has_arg == required_argument && !strchr(arg, '='))
			return -diag_error(EXIT_USAGE, "%soption '--%s' needs a value (%s)", where, o->name, hint);
		if (o && o->has_arg == no_argument && strchr(arg, '='))
			return -diag_error(EXIT_USAGE, "%soption '--%s' takes no value (%s)", where, o->name, hint);
		return -diag_error(EXIT_USAGE, "%sunknown option '%s' (%s)", where, esc(arg), hint);
	}
	if (optopt)
		return -diag_error(EXIT_USAGE, "%sunknown option '-%c' (%s)", where, optopt, hint);
	return -diag_error(EXIT_USAGE, "%sunknown option '%s' (%s)", where, arg ? esc(arg) : "?", hint);
}
