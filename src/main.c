/* main.c - global options and the command table; every command lives in
 * its own src/cmd-NAME.c and parses its own options. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <json-c/json.h>

#include "context.h"
#include "util.h"

struct command {
	const char *name;
	command_fn fn;
	const char *args;
	const char *help;
};

static const struct command commands[] = {
	{ "status", cmd_status, "", "kernels, running state, policy, decision and every boot slot" },
	{ "decide", cmd_decide, "[--kernel VER] [--explain]", "print on or off for the default kernel (or VER)" },
	{ "apply", cmd_apply, "[--kernel VER] [--dry-run] [--no-regenerate] [--hook]", "make the boot configuration match the decision" },
	{ "check", cmd_check, "[--kernel VER]", "compare without writing: 0 in sync, 1 drift, 5 reboot pending" },
	{ "set", cmd_set, "on|off|auto [--no-apply]", "record mode= in /etc/memcg-policy.conf, then apply" },
	{ "revert", cmd_revert, "[--dry-run] [--kernel VER]", "take out every argument the tool wrote, restore what it removed" },
	{ "bench", cmd_bench, "[OPTIONS] | --compare A B", "page-fault microbenchmark" },
	{ "grub-cmdline", cmd_grub_cmdline, "[--no-add] VALUE", "plumbing for the GRUB drop-in" },
};

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: %s [--root DIR] [--config FILE] [--json] [-q] [-v] COMMAND [ARGS]\n"
		"\n"
		"Decides whether the memory cgroup controller is on at boot and writes\n"
		"that decision into the boot configuration.\n"
		"\n"
		"Options:\n"
		"  --root DIR      work on the tree at DIR (an image), never on the host\n"
		"  --config FILE   read only this policy file\n"
		"  --json          print one JSON object (status, decide, apply, check)\n"
		"  -q, --quiet     print errors only\n"
		"  -v, --verbose   say more\n"
		"  -h, --help      show this help\n"
		"  -V, --version   show the version\n"
		"\n"
		"Commands:\n",
		program_name);
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
		fprintf(f, "  %-13s %s\n  %-13s   %s\n", commands[i].name, commands[i].args, "", commands[i].help);
	fprintf(f,
		"\n"
		"Exit status: 0 ok, 1 drift (check), 2 usage error, 3 bad input,\n"
		"4 system failure, 5 reboot pending (check).\n");
}

static void close_stdout(void)
{
	if (fflush(stdout) != 0 || ferror(stdout) || fclose(stdout) != 0) {
		fprintf(stderr, "%s: write error on standard output\n", program_name);
		_exit(EXIT_SYSTEM);
	}
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "root", required_argument, NULL, 'r' },
		{ "config", required_argument, NULL, 'c' },
		{ "json", no_argument, NULL, 'j' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	struct context ctx = { .root = { .fd = -1 }, .lock_fd = -1 };
	int c;

	atexit(close_stdout);
	/* "+": stop at the command name; the command parses the rest. */
	while ((c = getopt_long(argc, argv, "+qvhV", opts, NULL)) != -1) {
		switch (c) {
		case 'r': ctx.root_path = optarg; break;
		case 'c': ctx.config_path = optarg; break;
		case 'j': ctx.json = true; break;
		case 'q': log_verbosity = -1; break;
		case 'v': log_verbosity = 1; break;
		case 'h': usage(stdout); return EXIT_OK;
		case 'V': printf("memcg-policy %s\n", VERSION); return EXIT_OK;
		default:
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		fprintf(stderr, "%s: no command given\n", program_name);
		usage(stderr);
		return EXIT_USAGE;
	}
	const struct command *cmd = NULL;
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
		if (streq(argv[optind], commands[i].name))
			cmd = &commands[i];
	if (!cmd) {
		fprintf(stderr, "%s: unknown command '%s' (see --help)\n", program_name, argv[optind]);
		return EXIT_USAGE;
	}
	if (ctx.root_path && !*ctx.root_path) {
		fprintf(stderr, "%s: --root needs a directory\n", program_name);
		return EXIT_USAGE;
	}
	if (ctx.root_path) {
		int r = root_open(&ctx.root, ctx.root_path);
		if (r < 0) {
			fprintf(stderr, "%s: %s: cannot open root: %s\n", program_name, ctx.root_path, strerror(-r));
			return EXIT_USAGE;
		}
	} else if (root_open(&ctx.root, NULL) < 0) {
		fprintf(stderr, "%s: /: %m\n", program_name);
		return EXIT_SYSTEM;
	}
	int sub_argc = argc - optind;
	char **sub_argv = argv + optind;
	optind = 0; /* GNU getopt: full reset for the command's own parsing */
	int rc = cmd->fn(&ctx, sub_argc, sub_argv);
	context_free(&ctx);
	return rc;
}
