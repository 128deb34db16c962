/* main.c - global options and the command table; every command lives in
 * its own src/cmd/NAME.c and parses its own options. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "cmd/commands.h"
#include "facts/context.h"
#include "lib/diag.h"
#include "show/report.h"
#include "lib/util.h"

struct command {
	const char *name;
	command_fn fn;
	const char *args;	/* synopsis of the command's own arguments */
	const char *help;	/* one line for the overview */
	const char *options;	/* the command's options, for COMMAND --help; NULL: it prints its own */
	int min_args, max_args; /* how many arguments besides options, checked before it runs */
	const char *value_opts; /* its options that take a value: " long ... -x " (space-separated) */
	const char *args_error; /* what a wrong count says; NULL: "missing" / "unexpected argument" */
};

static const struct command commands[] = {
	{ "status", cmd_status, "", "kernels, running state, policy, decision and every boot slot", "", 0, 0, "",
	  NULL },
	{ "decide", cmd_decide, "[--kernel VER] [--explain]", "print on or off for the default kernel (or VER)",
	  "  --kernel VER    decide for the installed kernel VER instead of the default one\n"
	  "  --explain       then print each rule and the file:line that set it\n",
	  0, 0, " kernel ", NULL },
	{ "apply", cmd_apply, "[--kernel VER] [--dry-run] [--no-regenerate | --regenerate] [--hook]",
	  "make the boot configuration match the decision",
	  "  --kernel VER    only the slots of the installed kernel VER (and the shared ones)\n"
	  "  --dry-run       print a unified diff of every file it would change; write nothing\n"
	  "  --no-regenerate do not run update-grub / grub-mkconfig afterwards\n"
	  "  --regenerate    run it even where the policy would not; with --root, the\n"
	  "                  image's, in a private mount namespace, chrooted\n"
	  "  --hook          as a kernel hook: quiet, and a policy error is only a warning\n"
	  "                  (unless the policy says strict = yes)\n",
	  0, 0, " kernel ", NULL },
	{ "check", cmd_check, "[--kernel VER] [--monitoring] [--prometheus FILE] [--nfd FILE]",
	  "compare without writing: 0 in sync, 1 drift, 5 reboot pending",
	  "  --kernel VER    check for the installed kernel VER instead of the default one\n"
	  "  --monitoring    one status line; exit 0 OK, 1 WARNING (reboot pending),\n"
	  "                  2 CRITICAL (drift), 3 UNKNOWN (error), as monitoring plugins\n"
	  "  --prometheus FILE  also write node_exporter textfile metrics to FILE, atomically\n"
	  "  --nfd FILE      also write a node-feature-discovery feature file:\n"
	  "                  memcg-policy.memcg=on|off|pending|unknown\n",
	  0, 0, " kernel prometheus nfd ", NULL },
	{ "set", cmd_set, "on|off|auto [--no-apply | --dry-run]", "record mode= in /etc/memcg-policy.conf, then apply",
	  "  --no-apply      only record the mode; do not apply it\n"
	  "  --dry-run       print what it would record and the diff of every file apply\n"
	  "                  would then change; write nothing\n",
	  1, 1, "", "expected one of on, off, auto" },
	{ "revert", cmd_revert, "[--dry-run] [--kernel VER] [--policy] [--regenerate]",
	  "take out every argument the tool wrote, restore what it removed",
	  "  --dry-run       print what it would change; write nothing\n"
	  "  --kernel VER    only the slots of the installed kernel VER\n"
	  "  --policy        also record mode = auto, so that the policy does not put them back\n"
	  "  --regenerate    regenerate GRUB's menu and rebuild UKIs even with --root\n"
	  "                  (the image's own tools, in a private mount namespace)\n",
	  0, 0, " kernel ", NULL },
	{ "bench", cmd_bench, "[OPTIONS] | --compare A B", "page-fault microbenchmark", NULL, 0, 1,
	  " threads size iterations save compare -t -s -i ", NULL },
	{ "grub-cmdline", cmd_grub_cmdline, "[--no-add] VALUE", "plumbing for the GRUB drop-in",
	  "  --no-add        only take out contradicting tokens (for GRUB_CMDLINE_LINUX_DEFAULT)\n", 1, 2, "",
	  "LINUX [DEFAULT] expected (--no-add: one VALUE)" },
};

static const char global_options[] = "  --root DIR      work on the tree at DIR (an image), never on the host\n"
				     "  --config FILE   read only this policy file\n"
				     "  --json          print one JSON object and nothing else on stdout\n"
				     "  -q, --quiet     print errors only\n"
				     "  -v, --verbose   say more\n";

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: %s [--root DIR] [--config FILE] [--json] [-q] [-v] COMMAND [ARGS]\n"
		"\n"
		"Decides whether the memory cgroup controller is on at boot and writes\n"
		"that decision into the boot configuration.\n"
		"\n"
		"Options:\n"
		"%s"
		"  -h, --help      show this help\n"
		"  -V, --version   show the version\n"
		"\n"
		"Commands:\n",
		program_name, global_options);
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
		fprintf(f, "  %-13s %s\n  %-13s   %s\n", commands[i].name, commands[i].args, "", commands[i].help);
	fprintf(f,
		"\n"
		"Exit status: 0 ok, 1 drift (check), 2 usage error, 3 bad input,\n"
		"4 system failure, 5 reboot pending (check).\n"
		"\n"
		"%s COMMAND --help shows a command's own options.\n",
		program_name);
}

static void command_usage(FILE *f, const struct command *cmd)
{
	fprintf(f, "Usage: %s [GLOBAL OPTIONS] %s %s\n\n%s.\n", program_name, cmd->name, cmd->args, cmd->help);
	fprintf(f, "\nOptions:\n%s", cmd->options);
	fprintf(f, "  -h, --help      show this help\n");
	fprintf(f, "\nGlobal options (before or after the command name):\n%s", global_options);
}

/* One global option: from before the command name (getopt) or after it. */
static void take_global(struct context *ctx, int opt, const char *value)
{
	switch (opt) {
	case 'r': ctx->root_path = value; break;
	case 'c': ctx->config_path = value; break;
	case 'j':
		ctx->json = true;
		log_progress_off = true; /* stderr stays for the diagnostics */
		break;
	case 'q': log_verbosity = -1; break;
	case 'v': log_verbosity = 1; break;
	default: break;
	}
}

/* Global options may also follow the command name: take them out of the
 * command's arguments (up to a "--", after which everything is the
 * command's), so that each command parses only its own. Returns the new
 * argument count, or -1 (message printed) when a value is missing. */
static int hoist_globals(struct context *ctx, int argc, char **argv)
{
	static const struct {
		const char *name;
		int opt;
		bool value;
	} globals[] = {
		{ "--root", 'r', true },   { "--config", 'c', true }, { "--json", 'j', false },
		{ "--quiet", 'q', false }, { "-q", 'q', false },      { "--verbose", 'v', false },
		{ "-v", 'v', false },
	};
	int out = 1;
	int i = 1;
	for (; i < argc; i++) {
		const char *a = argv[i];
		if (streq(a, "--"))
			break;
		bool taken = false;
		for (size_t g = 0; g < ARRAY_SIZE(globals) && !taken; g++) {
			size_t len = strlen(globals[g].name);
			if (strncmp(a, globals[g].name, len) != 0)
				continue;
			if (a[len] == '\0' && !globals[g].value) {
				take_global(ctx, globals[g].opt, NULL);
				taken = true;
			} else if (a[len] == '\0' && globals[g].value) {
				if (i + 1 >= argc) {
					fprintf(stderr, "%s: %s: option '%s' needs a value\n", program_name, argv[0],
						a);
					return -1;
				}
				take_global(ctx, globals[g].opt, argv[++i]);
				taken = true;
			} else if (a[len] == '=' && globals[g].value) {
				take_global(ctx, globals[g].opt, a + len + 1);
				taken = true;
			}
		}
		if (!taken)
			argv[out++] = argv[i];
	}
	for (; i < argc; i++)
		argv[out++] = argv[i];
	argv[out] = NULL;
	return out;
}

/* Is opt ("--name[=v]" or "-x...") one of the command's options that take
 * a value in the next argument? Long names may be abbreviated, as getopt
 * allows. */
static bool takes_next_value(const struct command *cmd, const char *opt)
{
	const char *list = cmd->value_opts;
	if (startswith(opt, "--")) {
		const char *name = opt + 2;
		if (strchr(name, '='))
			return false;
		size_t n = strlen(name);
		for (const char *w = list; n && (w = strstr(w, name)) != NULL; w++)
			if (w[-1] == ' ')
				return true;
		return false;
	}
	/* "-t" with its value in the next argument; "-t4" holds it */
	char shortopt[4] = { ' ', '-', opt[1], ' ' };
	return opt[1] && !opt[2] && memmem(list, strlen(list), shortopt, sizeof(shortopt));
}

/* The command's arguments besides its options (getopt also takes options
 * after them, and everything after "--"), counted against the table before
 * the command runs. Returns true when the count fits; else records why. */
static bool args_fit(const struct command *cmd, int argc, char **argv)
{
	int n = 0;
	const char *extra = NULL;
	bool options = true;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (options && streq(a, "--")) {
			options = false;
			continue;
		}
		if (options && a[0] == '-' && a[1]) {
			if (takes_next_value(cmd, a))
				i++;
			continue;
		}
		if (++n > cmd->max_args && !extra)
			extra = a;
	}
	if (n >= cmd->min_args && n <= cmd->max_args)
		return true;
	if (cmd->args_error)
		diag_error(EXIT_USAGE, "%s: %s", cmd->name, cmd->args_error);
	else if (extra)
		diag_error(EXIT_USAGE, "%s: unexpected argument '%s'", cmd->name, extra);
	else
		diag_error(EXIT_USAGE, "%s: missing argument (%s %s)", cmd->name, cmd->name, cmd->args);
	return false;
}

/* COMMAND --help (or -h) anywhere before a "--". */
static bool wants_help(int argc, char **argv)
{
	for (int i = 1; i < argc && !streq(argv[i], "--"); i++)
		if (streq(argv[i], "--help") || streq(argv[i], "-h"))
			return true;
	return false;
}

/* At exit: diagnostics not yet printed (an exit from elsewhere), then the
 * check that standard output was written. */
static void close_stdout(void)
{
	diag_print();
	bool json_ok = json_output_end();
	if (fflush(stdout) != 0 || ferror(stdout) || fclose(stdout) != 0 || !json_ok) {
		fprintf(stderr, "%s: write error on standard output\n", program_name);
		_exit(EXIT_SYSTEM);
	}
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "root", required_argument, NULL, 'r' }, { "config", required_argument, NULL, 'c' },
		{ "json", no_argument, NULL, 'j' },	  { "quiet", no_argument, NULL, 'q' },
		{ "verbose", no_argument, NULL, 'v' },	  { "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },	  { NULL, 0, NULL, 0 },
	};
	struct context ctx = { .root = { .fd = -1 }, .lock_fd = -1 };
	int c;

	atexit(close_stdout);
	opterr = 0; /* a bad option gets one message of ours (bad_option) */
	/* "+": stop at the command name; the command parses the rest. */
	while ((c = getopt_long(argc, argv, "+qvhV", opts, NULL)) != -1) {
		switch (c) {
		case 'r':
		case 'c':
		case 'j':
		case 'q':
		case 'v': take_global(&ctx, c, optarg); break;
		case 'h': usage(stdout); return EXIT_OK;
		case 'V': printf("memcg-policy %s\n", VERSION); return EXIT_OK;
		default:
			bad_option(NULL, opts, argc, argv);
			if (ctx.json && json_output_begin(ctx.root_path) == 0) {
				json_report_fallback(&ctx, NULL, EXIT_USAGE);
				return EXIT_USAGE;
			}
			diag_print();
			return EXIT_USAGE;
		}
	}
	if (ctx.json && json_output_begin(ctx.root_path) < 0) {
		fprintf(stderr, "%s: --json: %m\n", program_name);
		return EXIT_SYSTEM;
	}
	if (optind >= argc) {
		diag_error(EXIT_USAGE, "no command given");
		diag_print();
		if (!ctx.json)
			usage(stderr);
		json_report_fallback(&ctx, NULL, EXIT_USAGE);
		return EXIT_USAGE;
	}
	const struct command *cmd = NULL;
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
		if (streq(argv[optind], commands[i].name))
			cmd = &commands[i];
	if (!cmd) {
		diag_error(EXIT_USAGE, "unknown command '%s' (see --help)", argv[optind]);
		json_report_fallback(&ctx, NULL, EXIT_USAGE);
		return EXIT_USAGE;
	}
	int sub_argc = argc - optind;
	char **sub_argv = argv + optind;
	if (cmd->options && wants_help(sub_argc, sub_argv)) {
		command_usage(stdout, cmd);
		return EXIT_OK;
	}
	sub_argc = hoist_globals(&ctx, sub_argc, sub_argv);
	if (ctx.json && json_output_begin(ctx.root_path) < 0) {
		fprintf(stderr, "%s: --json: %m\n", program_name);
		return EXIT_SYSTEM;
	}
	if (sub_argc < 0 || !args_fit(cmd, sub_argc, sub_argv)) {
		json_report_fallback(&ctx, cmd->name, EXIT_USAGE);
		return EXIT_USAGE;
	}
	if (ctx.root_path && !*ctx.root_path) {
		diag_error(EXIT_USAGE, "--root needs a directory");
		json_report_fallback(&ctx, cmd->name, EXIT_USAGE);
		return EXIT_USAGE;
	}
	if (ctx.root_path) {
		int r = root_open(&ctx.root, ctx.root_path);
		if (r < 0) {
			diag_error(EXIT_USAGE, "%s: cannot open root: %s", ctx.root_path, strerror(-r));
			json_report_fallback(&ctx, cmd->name, EXIT_USAGE);
			return EXIT_USAGE;
		}
	} else if (root_open(&ctx.root, NULL) < 0) {
		diag_error(EXIT_SYSTEM, "/: %s", strerror(errno));
		json_report_fallback(&ctx, cmd->name, EXIT_SYSTEM);
		return EXIT_SYSTEM;
	}
	/* a chroot is said once, where the run is read by a person */
	if (ctx.root.chroot && !ctx.json && log_verbosity >= 0 && !streq(cmd->name, "grub-cmdline"))
		fprintf(stderr,
			"%s: in a chroot: / is read as an image, not as the running system "
			"(no running kernel, RAM from assume-ram)\n",
			program_name);
	optind = 0; /* GNU getopt: full reset for the command's own parsing */
	int rc = cmd->fn(&ctx, sub_argc, sub_argv);
	json_report_fallback(&ctx, cmd->name, rc);
	context_free(&ctx);
	/* the command layer's edge: what the stages recorded, printed once */
	diag_print();
	return rc;
}
