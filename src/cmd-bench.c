/* cmd-bench.c - `memcg-policy bench`: the page-fault microbenchmark of
 * DESIGN section 8 (mmtests' pft), run on this machine, saved, compared.
 *
 * It always measures the running system: with --root it refuses to run
 * (exit 2), since nothing of an image can be measured; --compare only reads
 * the two files it is given and works with or without --root. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "commands.h"
#include "jsonc.h"

#include "bench-pft.h"
#include "report.h"
#include "bench-run.h"
#include "context.h"
#include "diag.h"
#include "util.h"

#define DEFAULT_SIZE (256ull << 20)
#define DEFAULT_ITERATIONS 5u
#define MAX_THREADS 1024u
#define MAX_ITERATIONS 100000u
#define MAX_SAVED_FILE (1u << 20)

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

static unsigned cpu_count(void)
{
	cpu_set_t set;
	if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0)
		return (unsigned)CPU_COUNT(&set);
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n > 0 ? (unsigned)n : 1;
}

/* The value of the first "KEY<blanks>: value" line of a /proc file. */
static char *proc_field(const char *text, const char *key)
{
	size_t kl = strlen(key);
	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		if (strncmp(p, key, kl) != 0)
			continue;
		const char *q = p + kl;
		while (*q == ' ' || *q == '\t')
			q++;
		if (*q != ':')
			continue;
		q++;
		while (*q == ' ' || *q == '\t')
			q++;
		return xstrndup(q, strcspn(q, "\n"));
	}
	return NULL;
}

static char *read_proc(const struct context *ctx, const char *path)
{
	char *text = NULL;
	if (root_read_file(&ctx->root, path, MAX_INPUT_FILE, &text, NULL) < 0)
		return NULL;
	return text;
}

static char *cpu_model(const struct context *ctx)
{
	_cleanup_free_ char *info = read_proc(ctx, "/proc/cpuinfo");
	if (!info)
		return xstrdup("unknown");
	/* x86 and most arm64: "model name"; Raspberry Pi and others: "Model",
	 * "Hardware"; s390, ppc: "cpu"/"machine". */
	static const char *const keys[] = { "model name", "Model", "Hardware", "cpu model", "cpu", "machine" };
	for (size_t i = 0; i < ARRAY_SIZE(keys); i++) {
		char *v = proc_field(info, keys[i]);
		if (v && *v)
			return v;
		free(v);
	}
	return xstrdup("unknown");
}

/* The cgroup memcg charges this process to: the memory hierarchy's line
 * of /proc/self/cgroup on cgroup v1, else the unified ("0::") one. */
static char *own_cgroup(const struct context *ctx)
{
	_cleanup_free_ char *text = read_proc(ctx, "/proc/self/cgroup");
	char *unified = NULL;
	for (char *line = text, *next; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		char *c1 = strchr(line, ':');
		char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
		if (!c2)
			continue;
		*c2 = '\0';
		const char *controllers = c1 + 1;
		if (!*controllers && !unified)
			unified = xstrdup(c2 + 1);
		_cleanup_free_ char *list = xasprintf(",%s,", controllers);
		if (strstr(list, ",memory,")) {
			free(unified);
			return xstrdup(c2 + 1);
		}
	}
	return unified ? unified : xstrdup("unknown");
}

static unsigned long long mem_available(const struct context *ctx)
{
	_cleanup_free_ char *info = read_proc(ctx, "/proc/meminfo");
	_cleanup_free_ char *v = info ? proc_field(info, "MemAvailable") : NULL;
	unsigned long long kib;
	if (!v || sscanf(v, "%llu", &kib) != 1)
		return 0;
	return kib << 10;
}

static void collect_metadata(const struct context *ctx, struct bench_run *run)
{
	struct utsname u;
	time_t now = time(NULL);
	struct tm tm;
	char date[64] = "unknown";
	if (gmtime_r(&now, &tm))
		strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%SZ", &tm);
	bench_run_set(run, "date", date);
	if (uname(&u) == 0) {
		bench_run_set(run, "kernel", u.release);
		bench_run_set(run, "arch", u.machine);
	} else {
		bench_run_set(run, "kernel", "unknown");
	}
	const char *source = NULL;
	enum run_state st = probe_memcg_running(&source);
	bench_run_set(run, "memcg", run_state_name(st));
	if (source)
		bench_run_set(run, "memcg-source", source);
	_cleanup_free_ char *cmdline = read_proc(ctx, "/proc/cmdline");
	bench_run_set(run, "cmdline", cmdline ? cmdline : "unknown");
	_cleanup_free_ char *cgroup = own_cgroup(ctx);
	bench_run_set(run, "cgroup", cgroup);
	_cleanup_free_ char *cpu = cpu_model(ctx);
	bench_run_set(run, "cpu", cpu);
	_cleanup_free_ char *ncpu = xasprintf("%u", cpu_count());
	bench_run_set(run, "nproc", ncpu);
}

struct progress {
	bool on;
	int width; /* of the last line, to clear it */
};

static void show_progress(unsigned threads, unsigned iteration, unsigned iterations, void *data)
{
	struct progress *p = data;
	if (!p->on)
		return;
	int n = fprintf(stderr, "\rthreads %u, iteration %u/%u", threads, iteration, iterations);
	if (n > 0 && n - 1 < p->width)
		fprintf(stderr, "%*s", p->width - (n - 1), "");
	if (n > 0 && n - 1 > p->width)
		p->width = n - 1;
	fflush(stderr);
}

static void clear_progress(struct progress *p)
{
	if (p->on && p->width > 0)
		fprintf(stderr, "\r%*s\r", p->width, "");
	p->width = 0;
}

/* Writes text to path through a temporary file in the same directory,
 * renamed into place. */
static int write_file_atomic(const char *path, const char *text)
{
	_cleanup_free_ char *tmp = xasprintf("%s.XXXXXX", path);
	int fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0)
		return diag_error(EXIT_SYSTEM, "%s: cannot create a file beside it: %m", path);
	size_t len = strlen(text), off = 0;
	int err = 0;
	while (off < len) {
		ssize_t n = write(fd, text + off, len - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			err = n < 0 ? errno : EIO;
			break;
		}
		off += (size_t)n;
	}
	if (!err && fchmod(fd, 0644) < 0)
		err = errno;
	if (!err && fsync(fd) < 0)
		err = errno;
	if (close(fd) < 0 && !err)
		err = errno;
	if (!err && rename(tmp, path) < 0)
		err = errno;
	if (err) {
		unlink(tmp);
		errno = err;
		return diag_error(EXIT_SYSTEM, "%s: cannot write: %m", path);
	}
	return 0;
}

static int load_run(const char *path, struct bench_run *run)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return diag_error(EXIT_BADINPUT, "%s: cannot open: %m", path);
	_cleanup_free_ char *text = NULL;
	size_t len = 0;
	int r = read_fd_all(fd, MAX_SAVED_FILE, &text, &len);
	if (r < 0) {
		errno = -r;
		return diag_error(EXIT_BADINPUT, "%s: cannot read: %m", path);
	}
	return bench_run_parse(text, len, path, run);
}

static struct json_object *json_metadata(const struct bench_run *run, const char *file)
{
	struct json_object *o = json_object_new_object();
	if (file)
		json_object_object_add(o, "file", json_object_new_string(file));
	for (size_t i = 0; i < run->keys.n; i++) {
		const char *k = run->keys.v[i], *v = run->values.v[i];
		/* Counts as numbers; everything else as recorded. */
		char *end;
		errno = 0;
		long long n = strtoll(v, &end, 10);
		bool number = (streq(k, "nproc") || streq(k, "size") || streq(k, "iterations")) && *v && !*end && !errno;
		json_object_object_add(o, k, number ? json_object_new_int64(n) : json_object_new_string(v));
	}
	return o;
}

static int do_compare(const struct context *ctx, const char *file_a, const char *file_b)
{
	struct bench_run a = {0}, b = {0};
	int r = load_run(file_a, &a);
	if (r == 0)
		r = load_run(file_b, &b);
	if (r < 0) {
		bench_run_free(&a);
		bench_run_free(&b);
		return -r;
	}
	struct strv warnings = {0};
	bench_compare_warnings(&a, &b, &warnings);
	for (size_t i = 0; i < warnings.n; i++)
		diag_warn("bench --compare: %s", warnings.v[i]);
	if (ctx->json) {
		struct json_object *o = json_object_new_object();
		struct json_object *w = json_object_new_array();
		for (size_t i = 0; i < warnings.n; i++)
			json_object_array_add(w, json_object_new_string(warnings.v[i]));
		json_object_object_add(o, "warnings", w);
		json_object_object_add(o, "a", json_metadata(&a, file_a));
		json_object_object_add(o, "b", json_metadata(&b, file_b));
		struct json_object *metrics = json_object_new_array();
		for (size_t i = 0; i < a.n_metrics; i++) {
			const struct bench_metric *ma = &a.metrics[i];
			const struct bench_metric *mb = bench_run_find(&b, ma->stat, ma->name);
			struct json_object *m = json_object_new_object();
			json_object_object_add(m, "stat", json_object_new_string(ma->stat));
			json_object_object_add(m, "name", json_object_new_string(ma->name));
			json_object_object_add(m, "a", json_object_new_double(ma->value));
			json_object_object_add(m, "b", mb ? json_object_new_double(mb->value) : NULL);
			double pct;
			json_object_object_add(m, "diff_percent",
					       mb && bench_pct(ma->value, mb->value, &pct) ? json_object_new_double(pct) : NULL);
			json_object_array_add(metrics, m);
		}
		json_object_object_add(o, "metrics", metrics);
		print_json(o);
		json_object_put(o);
	} else {
		_cleanup_free_ char *text = bench_compare_format(&a, file_a, &b, file_b);
		fputs(text, stdout);
	}
	strv_free(&warnings);
	bench_run_free(&a);
	bench_run_free(&b);
	return EXIT_OK;
}

static struct json_object *json_doubles(const double *v, size_t n)
{
	struct json_object *a = json_object_new_array();
	for (size_t i = 0; i < n; i++)
		json_object_array_add(a, json_object_new_double(v[i]));
	return a;
}

static void print_run_json(const struct bench_run *run, const struct pft_result *res, unsigned n)
{
	struct json_object *o = json_metadata(run, NULL);
	struct json_object *results = json_object_new_array();
	for (unsigned i = 0; i < n; i++) {
		const struct pft_result *r = &res[i];
		struct json_object *t = json_object_new_object();
		json_object_object_add(t, "threads", json_object_new_int((int)r->threads));
		json_object_object_add(t, "hmean_faults_per_cpu", json_object_new_double(r->hmean_faults_per_cpu));
		json_object_object_add(t, "hmean_faults_per_sec", json_object_new_double(r->hmean_faults_per_sec));
		json_object_object_add(t, "faults_per_cpu", json_doubles(r->faults_per_cpu, r->iterations));
		json_object_object_add(t, "faults_per_sec", json_doubles(r->faults_per_sec, r->iterations));
		json_object_object_add(t, "user", json_object_new_double(r->user));
		json_object_object_add(t, "system", json_object_new_double(r->system));
		json_object_object_add(t, "elapsed", json_object_new_double(r->elapsed));
		json_object_array_add(results, t);
	}
	json_object_object_add(o, "results", results);
	print_json(o);
	json_object_put(o);
}

static void print_run_table(const struct bench_run *run)
{
	const char *source = bench_run_get(run, "memcg-source");
	const char *arch = bench_run_get(run, "arch");
	printf("memcg-policy bench: page faults, in the manner of mmtests' pft\n");
	printf("machine   %s, %s CPUs%s%s\n", bench_run_get(run, "cpu"), bench_run_get(run, "nproc"),
	       arch ? ", " : "", arch ? arch : "");
	printf("kernel    %s\n", bench_run_get(run, "kernel"));
	printf("memcg     %s%s%s%s\n", bench_run_get(run, "memcg"), source ? " (" : "", source ? source : "",
	       source ? ")" : "");
	printf("cgroup    %s\n", bench_run_get(run, "cgroup"));
	printf("cmdline   %s\n", bench_run_get(run, "cmdline"));
	printf("run       %s bytes per thread, %s iterations, threads %s, THP off\n\n", bench_run_get(run, "size"),
	       bench_run_get(run, "iterations"), bench_run_get(run, "threads"));
	_cleanup_free_ char *table = bench_run_format_metrics(run);
	fputs(table, stdout);
}

/* Before measuring: a run that cannot be saved is not started. Creates
 * (and removes) a temporary file beside path, as the save will. */
static int check_save_path(const char *path)
{
	struct stat st;
	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
		return diag_error(EXIT_USAGE, "bench: --save %s: is a directory (nothing measured)", path);
	_cleanup_free_ char *tmp = xasprintf("%s.XXXXXX", path);
	int fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0)
		return diag_error(EXIT_SYSTEM, "%s: cannot save a run there: %m (nothing measured)", path);
	close(fd);
	unlink(tmp);
	return 0;
}

static int do_run(const struct context *ctx, const unsigned *threads, unsigned n_threads, unsigned long long size,
		  unsigned iterations, const char *save)
{
	if (save) {
		int r = check_save_path(save);
		if (r < 0)
			return -r;
	}
	unsigned max_threads = 0;
	for (unsigned i = 0; i < n_threads; i++)
		if (threads[i] > max_threads)
			max_threads = threads[i];
	if (max_threads == 0)
		max_threads = 1;
	unsigned long long avail = mem_available(ctx);
	if (size > ULLONG_MAX / max_threads || (avail && size * max_threads > avail / 10 * 9)) {
		fprintf(stderr,
			"%s: bench: %u threads of %llu MiB need more than 90%% of the %llu MiB available "
			"(see --size, --threads)\n",
			program_name, max_threads, size >> 20, avail >> 20);
		return EXIT_USAGE;
	}

	struct bench_run run = {0};
	collect_metadata(ctx, &run);
	struct strbuf list = {0};
	for (unsigned i = 0; i < n_threads; i++)
		sb_appendf(&list, "%s%u", i ? "," : "", threads[i]);
	_cleanup_free_ char *size_s = xasprintf("%llu", size);
	_cleanup_free_ char *iter_s = xasprintf("%u", iterations);
	bench_run_set(&run, "size", size_s);
	bench_run_set(&run, "iterations", iter_s);
	bench_run_set(&run, "threads", list.s);
	sb_free(&list);

	struct progress progress = { .on = log_verbosity >= 0 && isatty(STDERR_FILENO) };
	struct pft_result *res = xcalloc(n_threads, sizeof(*res));
	int rc = EXIT_OK;
	unsigned done = 0;
	for (; done < n_threads; done++) {
		int r = pft_run(threads[done], (size_t)size, iterations, show_progress, &progress, &res[done]);
		if (r < 0) {
			clear_progress(&progress);
			errno = -r;
			rc = -diag_error(EXIT_SYSTEM, "bench: %u threads of %llu bytes: %m", threads[done], size);
			break;
		}
	}
	clear_progress(&progress);

	if (rc == EXIT_OK) {
		/* per figure, as mmtests lists them: Min, Hmean, Stddev, CoeffVar, Max */
		static const char *const figures[] = { "faults/cpu", "faults/sec" };
		for (size_t k = 0; k < ARRAY_SIZE(figures); k++)
			for (unsigned i = 0; i < n_threads; i++) {
				_cleanup_free_ char *name = xasprintf("%s-%u", figures[k], res[i].threads);
				const double *samples = k == 0 ? res[i].faults_per_cpu : res[i].faults_per_sec;
				struct bench_spread sp;
				bench_spread(samples, res[i].iterations, &sp);
				bench_run_add_metric(&run, "min", name, sp.min);
				bench_run_add_metric(&run, "hmean", name,
						     k == 0 ? res[i].hmean_faults_per_cpu : res[i].hmean_faults_per_sec);
				bench_run_add_metric(&run, "stddev", name, sp.stddev);
				bench_run_add_metric(&run, "coeffvar", name, sp.coeffvar);
				bench_run_add_metric(&run, "max", name, sp.max);
			}
		for (unsigned i = 0; i < n_threads; i++) {
			_cleanup_free_ char *user = xasprintf("user-%u", res[i].threads);
			_cleanup_free_ char *sys = xasprintf("system-%u", res[i].threads);
			_cleanup_free_ char *elapsed = xasprintf("elapsed-%u", res[i].threads);
			bench_run_add_metric(&run, "time", user, res[i].user);
			bench_run_add_metric(&run, "time", sys, res[i].system);
			bench_run_add_metric(&run, "time", elapsed, res[i].elapsed);
		}
		if (ctx->json)
			print_run_json(&run, res, n_threads);
		else
			print_run_table(&run);
		if (save) {
			_cleanup_free_ char *text = bench_run_format(&run);
			int r = write_file_atomic(save, text);
			if (r < 0)
				rc = -r;
		}
	}
	for (unsigned i = 0; i < done; i++)
		pft_result_free(&res[i]);
	free(res);
	bench_run_free(&run);
	return rc;
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
				return usage_error("bad --threads '%s': counts from 1 to 1024, each once, as 1,2,4 or 1-4",
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
		case OPT_COMPARE:
			compare = optarg;
			break;
		case 'h':
			bench_usage(stdout);
			return EXIT_OK;
		default:
			bench_usage(stderr);
			return EXIT_USAGE;
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
