/* cmd/bench-measure.c - one run of `memcg-policy bench` (cmd/bench.c): the
 * machine and kernel it ran on (from /proc and uname), the thread counts
 * measured with a progress line, the results as a table or JSON, and the
 * run saved for --compare (a run that cannot be saved is not started). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "io/jsonc.h"

#include "pft/pft.h"
#include "pft/run.h"
#include "cmd/bench-int.h"
#include "show/report.h"
#include "facts/context.h"
#include "lib/diag.h"
#include "lib/util.h"

unsigned cpu_count(void)
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

static unsigned long long mem_available(const struct context *ctx)
{
	_cleanup_free_ char *info = read_proc(ctx, "/proc/meminfo");
	_cleanup_free_ char *v = info ? proc_field(info, "MemAvailable") : NULL;
	unsigned long long kib;
	if (!v || sscanf(v, "%llu", &kib) != 1)
		return 0;
	return kib << 10;
}

/* st and source: the memcg state as probe_memcg_running() gave it */
static void collect_metadata(const struct context *ctx, enum run_state st, const char *source,
			     const struct bench_cgroup *cg, struct bench_run *run)
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
	bench_run_set(run, "memcg", run_state_name(st));
	if (source)
		bench_run_set(run, "memcg-source", source);
	_cleanup_free_ char *cmdline = read_proc(ctx, "/proc/cmdline");
	bench_run_set(run, "cmdline", cmdline ? cmdline : "unknown");
	bench_run_set(run, "cgroup", cg->path);
	bench_run_set(run, "cgroup-note", cg->note);
	_cleanup_free_ char *cpu = cpu_model(ctx);
	bench_run_set(run, "cpu", cpu);
	_cleanup_free_ char *ncpu = xasprintf("%u", cpu_count());
	bench_run_set(run, "nproc", ncpu);
	/* other work on the machine as the run starts: the 1-minute load */
	_cleanup_free_ char *loadavg = read_proc(ctx, "/proc/loadavg");
	char load[32];
	if (loadavg && sscanf(loadavg, "%31s", load) == 1)
		bench_run_set(run, "load", load);
}

struct progress {
	bool on;
	int width;	 /* of the last line, to clear it */
	unsigned total;	 /* iterations of every thread count */
	unsigned before; /* those of the thread counts already run */
	double t0;	 /* when the first began (CLOCK_MONOTONIC) */
};

/* Called as each iteration begins: where it is, and once one is done, an
 * estimate of the time left (from the time per iteration so far). */
static void show_progress(unsigned threads, unsigned iteration, unsigned iterations, void *data)
{
	struct progress *p = data;
	if (!p->on)
		return;
	unsigned done = p->before + iteration - 1;
	char left[48] = "";
	if (done > 0)
		snprintf(left, sizeof(left), ", about %.0f s left",
			 (clock_seconds(CLOCK_MONOTONIC) - p->t0) / done * (p->total - done));
	int n = fprintf(stderr, "\rthreads %u, iteration %u/%u%s", threads, iteration, iterations, left);
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

static struct json_object *json_doubles(const double *v, size_t n)
{
	struct json_object *a = json_object_new_array();
	for (size_t i = 0; i < n; i++)
		json_object_array_add(a, json_number(v[i]));
	return a;
}

/* The run as --json's "bench" value: {kind, run: metadata and results,
 * compare: null} */
static struct json_object *run_json(const struct bench_run *run, const struct pft_result *res, unsigned n)
{
	struct json_object *o = json_metadata(run, NULL);
	struct json_object *results = json_object_new_array();
	for (unsigned i = 0; i < n; i++) {
		const struct pft_result *r = &res[i];
		struct json_object *t = json_object_new_object();
		json_object_object_add(t, "threads", json_object_new_int((int)r->threads));
		json_object_object_add(t, "hmean_faults_per_cpu", json_number(r->hmean_faults_per_cpu));
		json_object_object_add(t, "hmean_faults_per_sec", json_number(r->hmean_faults_per_sec));
		json_object_object_add(t, "faults_per_cpu", json_doubles(r->faults_per_cpu, r->iterations));
		json_object_object_add(t, "faults_per_sec", json_doubles(r->faults_per_sec, r->iterations));
		json_object_object_add(t, "user", json_number(r->user));
		json_object_object_add(t, "system", json_number(r->system));
		json_object_object_add(t, "elapsed", json_number(r->elapsed));
		json_object_array_add(results, t);
	}
	json_object_object_add(o, "results", results);
	return bench_json("run", o, NULL);
}

static void print_run_table(const struct bench_run *run)
{
	const char *source = bench_run_get(run, "memcg-source");
	const char *arch = bench_run_get(run, "arch");
	printf("memcg-policy bench: page faults, in the manner of mmtests' pft\n");
	printf("machine   %s, %s CPUs%s%s\n", bench_run_get(run, "cpu"), bench_run_get(run, "nproc"), arch ? ", " : "",
	       arch ? arch : "");
	printf("kernel    %s\n", bench_run_get(run, "kernel"));
	printf("memcg     %s%s%s%s\n", bench_run_get(run, "memcg"), source ? " (" : "", source ? source : "",
	       source ? ")" : "");
	const char *cg_note = bench_run_get(run, "cgroup-note");
	printf("cgroup    %s%s%s%s\n", bench_run_get(run, "cgroup"), cg_note ? " (" : "", cg_note ? cg_note : "",
	       cg_note ? ")" : "");
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

int do_run(const struct context *ctx, const unsigned *threads, unsigned n_threads, unsigned long long size,
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

	struct json_object *report = ctx->json ? json_report_new(ctx, "bench") : NULL;
	/* the threads run where real tasks run: entered before the first,
	 * left after the last */
	const char *memcg_source = NULL;
	enum run_state memcg = probe_memcg_running(&memcg_source);
	struct bench_cgroup cg;
	bench_cgroup_enter(&cg, memcg == RUN_ON);
	struct bench_run run = { 0 };
	collect_metadata(ctx, memcg, memcg_source, &cg, &run);
	struct strbuf list = { 0 };
	for (unsigned i = 0; i < n_threads; i++)
		sb_appendf(&list, "%s%u", i ? "," : "", threads[i]);
	_cleanup_free_ char *size_s = xasprintf("%llu", size);
	_cleanup_free_ char *iter_s = xasprintf("%u", iterations);
	bench_run_set(&run, "size", size_s);
	bench_run_set(&run, "iterations", iter_s);
	bench_run_set(&run, "threads", list.s);
	sb_free(&list);

	struct progress progress = { .on = log_verbosity >= 0 && isatty(STDERR_FILENO),
				     .total = n_threads * iterations };
	progress.t0 = clock_seconds(CLOCK_MONOTONIC);
	struct pft_result *res = xcalloc(n_threads, sizeof(*res));
	int rc = EXIT_OK;
	unsigned done = 0;
	for (; done < n_threads; done++) {
		progress.before = done * iterations;
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
						     k == 0 ? res[i].hmean_faults_per_cpu
							    : res[i].hmean_faults_per_sec);
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
			json_report_set(report, "bench", run_json(&run, res, n_threads));
		else
			print_run_table(&run);
		if (save) {
			_cleanup_free_ char *text = bench_run_format(&run);
			int r = write_file_atomic(save, text);
			if (r < 0)
				rc = -r;
		}
	}
	bench_cgroup_free(&cg);
	for (unsigned i = 0; i < done; i++)
		pft_result_free(&res[i]);
	free(res);
	bench_run_free(&run);
	return report ? json_report_emit(report, rc) : rc;
}
