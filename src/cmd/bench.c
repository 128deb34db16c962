/* cmd/bench.c - `memcg-policy bench`: the page-fault microbenchmark of
 * DESIGN section 8 (mmtests' pft), run on this machine, saved, compared.
 *
 * It always measures the running system: with --root it refuses to run
 * (exit 2), since nothing of an image can be measured; --compare only reads
 * the two files it is given and works with or without --root.
 *
 * Here: the options; a run is measured in cmd/bench-measure.c, two saved
 * runs compared in cmd/bench-compare.c. */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

#include "cmd/commands.h"
#include "cmd/bench-int.h"
#include "facts/context.h"
#include "lib/util.h"

#define DEFAULT_SIZE (256ull << 20)
#define DEFAULT_ITERATIONS 5u
#define MAX_THREADS 1024u
#define MAX_ITERATIONS 100000u

static void bench_usage(FILE *f)
{
	fprintf(f,
		"Usage: %s bench [--threads LIST] [--size SIZE] [--iterations N] [--save FILE]\n"
		"       %s bench --compare A B\n"
		"\n"
		"Page-fault microbenchmark in the manner of mmtests' pft: each thread maps\n"
		"a private anonymous region (THP off), writes one byte per page, unmaps it;\n"
		"repeated. Reports harmonic means of faults/cpu and faults/sec per thread\n"
		"count, and user, system and elapsed time, with the kernel, the memcg state,\n"
		"the kernel command line and the cgroup of the run. It always measures the\n"
		"running system, so it does not take --root (--compare does).\n"
		"\n"
		"  -t, --threads LIST    thread counts, e.g. 1,2,4 or 1-4 (default 1 to the\n"
		"                        number of CPUs)\n"
		"  -s, --size SIZE       bytes per thread and iteration, K/M/G suffixes\n"
		"                        (default 256M)\n"
		"  -i, --iterations N    iterations per thread count (default %u)\n"
		"      --save FILE       also write the run to FILE, for --compare\n"
		"      --compare A B     print two saved runs side by side, with B's\n"
		"                        difference from A in percent ((B-A)/A: for faults/*\n"
		"                        higher is better, for times lower is better)\n"
		"  -h, --help            show this help\n"
		"\n"
		"To see what memcg costs here: bench --save on.txt, switch memcg off\n"
		"(memcg-policy set off), reboot, bench --save off.txt, then\n"
		"bench --compare on.txt off.txt.\n",
		program_name, program_name, DEFAULT_ITERATIONS);
}

static int usage_error(const char *fmt, ...) _printf_(1, 2);
static int usage_error(const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "%s: bench: ", program_name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, " (see bench --help)\n");
	return EXIT_USAGE;
}

static bool parse_uint(const char *s, unsigned max, unsigned *out)
{
	if (!s || *s < '0' || *s > '9')
		return false;
	errno = 0;
	char *end;
	unsigned long v = strtoul(s, &end, 10);
	if (errno || *end || v == 0 || v > max)
		return false;
	*out = (unsigned)v;
	return true;
}

/* "1,2,4" or "1-4" or a mix; each count once, in the order given. */
static bool parse_thread_list(const char *s, unsigned **list, unsigned *n)
{
	_cleanup_free_ char *copy = xstrdup(s);
	unsigned *v = NULL;
	unsigned count = 0;
	char *save = NULL;
	for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		unsigned lo, hi;
		char *dash = strchr(tok, '-');
		if (dash) {
			*dash = '\0';
			if (!parse_uint(tok, MAX_THREADS, &lo) || !parse_uint(dash + 1, MAX_THREADS, &hi) || lo > hi)
				goto bad;
		} else if (!parse_uint(tok, MAX_THREADS, &lo)) {
			goto bad;
		} else {
			hi = lo;
		}
		for (unsigned t = lo; t <= hi; t++) {
			for (unsigned i = 0; i < count; i++)
				if (v[i] == t)
					goto bad;
			if (count >= MAX_THREADS)
				goto bad;
			v = xrealloc(v, (count + 1) * sizeof(*v));
			v[count++] = t;
		}
	}
	/* strtok_r skips empty fields; "1,,2" or ",1" are still typos. */
	if (count == 0 || strstr(s, ",,") || *s == ',' || s[strlen(s) - 1] == ',')
		goto bad;
	*list = v;
	*n = count;
	return true;
bad:
	free(v);
	return false;
}

int cmd_bench(struct context *ctx, int argc, char **argv)
{
	enum { OPT_SAVE = 0x100, OPT_COMPARE };
	static const struct option opts[] = {
		{ "threads", required_argument, NULL, 't' },
		{ "size", required_argument, NULL, 's' },
		{ "iterations", required_argument, NULL, 'i' },
		{ "save", required_argument, NULL, OPT_SAVE },
		{ "compare", required_argument, NULL, OPT_COMPARE },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	_cleanup_free_ unsigned *threads = NULL;
	unsigned n_threads = 0, iterations = DEFAULT_ITERATIONS;
	unsigned long long size = DEFAULT_SIZE;
	const char *save = NULL, *compare = NULL;
	bool run_options = false;
	int c;

	while ((c = getopt_long(argc, argv, "t:s:i:h", opts, NULL)) != -1) {
		switch (c) {
		case 't':
			free(threads);
			threads = NULL;
			if (!parse_thread_list(optarg, &threads, &n_threads))
				return usage_error(
					"bad --threads '%s': counts from 1 to 1024, each once, as 1,2,4 or 1-4",
					optarg);
			run_options = true;
			break;
		case 's': {
			long pagesz = sysconf(_SC_PAGESIZE);
			if (parse_size(optarg, &size) < 0 || size < (unsigned long long)(pagesz > 0 ? pagesz : 4096) ||
			    size > SIZE_MAX / 2)
				return usage_error("bad --size '%s': at least one page, as 8M or 1G", optarg);
			run_options = true;
			break;
		}
		case 'i':
			if (!parse_uint(optarg, MAX_ITERATIONS, &iterations))
				return usage_error("bad --iterations '%s': a number from 1 to 100000", optarg);
			run_options = true;
			break;
		case OPT_SAVE:
			if (!*optarg)
				return usage_error("--save needs a file name");
			save = optarg;
			run_options = true;
			break;
		case OPT_COMPARE: compare = optarg; break;
		case 'h': bench_usage(stdout); return EXIT_OK;
		default: return bad_option("bench", opts, argc, argv);
		}
	}

	if (compare) {
		if (run_options)
			return usage_error("--compare reads two saved runs and takes no other options");
		if (argc - optind != 1)
			return usage_error("--compare needs two files: --compare A B");
		return do_compare(ctx, compare, argv[optind]);
	}
	if (optind < argc)
		return usage_error("unexpected argument '%s'", argv[optind]);
	if (ctx->root_path)
		return usage_error("measures the running system, not an image: it does not take --root");

	if (!threads) {
		n_threads = cpu_count();
		if (n_threads > MAX_THREADS)
			n_threads = MAX_THREADS;
		threads = xcalloc(n_threads, sizeof(*threads));
		for (unsigned i = 0; i < n_threads; i++)
			threads[i] = i + 1;
	}
	return do_run(ctx, threads, n_threads, size, iterations, save);
}
