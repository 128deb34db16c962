/* test-bench.c - the pure parts of bench: harmonic mean, the saved-run
 * format and its parser, the compare table; and one tiny real run. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <unistd.h>

#include "pft/pft.h"
#include "pft/run.h"
#include "io/jsonc.h"
#include "test.h"

static bool close_to(double a, double b) { return fabs(a - b) <= 1e-9 * fabs(b); }

TEST(hmean_of_rates)
{
	double v[] = { 1.0, 2.0, 4.0 };
	CHECK(close_to(harmonic_mean(v, 3), 3.0 / (1.0 + 0.5 + 0.25)));
	double same[] = { 5.0, 5.0 };
	CHECK(close_to(harmonic_mean(same, 2), 5.0));
	double zero[] = { 5.0, 0.0 };
	CHECK(harmonic_mean(zero, 2) == 0);
	CHECK(harmonic_mean(v, 0) == 0);
}

static int parse(const char *text, struct bench_run *r)
{
	/* Errors go to stderr; tests/run.sh shows them only on failure. */
	return bench_run_parse(text, strlen(text), "run.txt", r);
}

TEST(format_and_parse_round_trip)
{
	struct bench_run r = {0};
	bench_run_set(&r, "kernel", "6.1.0-13-amd64");
	bench_run_set(&r, "memcg", "on");
	bench_run_set(&r, "cmdline", "BOOT_IMAGE=/vmlinuz root=UUID=x ro quiet\n");
	bench_run_add_metric(&r, "hmean", "faults/cpu-1", 1509075.7561);
	bench_run_add_metric(&r, "time", "elapsed-1", 1.5);
	char *text = bench_run_format(&r);
	CHECK_STR(text, "memcg-policy-bench 1\n"
			"kernel: 6.1.0-13-amd64\n"
			"memcg: on\n"
			"cmdline: BOOT_IMAGE=/vmlinuz root=UUID=x ro quiet\n"
			"hmean faults/cpu-1 1509075.7561\n"
			"time elapsed-1 1.5000\n");
	struct bench_run back = {0};
	CHECK_INT(parse(text, &back), 0);
	CHECK_STR(bench_run_get(&back, "cmdline"), "BOOT_IMAGE=/vmlinuz root=UUID=x ro quiet");
	CHECK_INT(back.n_metrics, 2);
	const struct bench_metric *m = bench_run_find(&back, "hmean", "faults/cpu-1");
	CHECK(m && close_to(m->value, 1509075.7561));
	CHECK(bench_run_find(&back, "time", "faults/cpu-1") == NULL);
	free(text);
	bench_run_free(&r);
	bench_run_free(&back);
}

TEST(parse_errors)
{
	static const struct {
		const char *text;
	} bad[] = {
		{ "" },
		{ "kernel: x\n" },
		{ "memcg-policy-bench 2\nkernel: x\nmemcg: on\nhmean a 1\n" },
		{ "memcg-policy-bench 1\nkernel: x\nmemcg: on\n" },                     /* no results */
		{ "memcg-policy-bench 1\nmemcg: on\nhmean a 1\n" },                      /* no kernel */
		{ "memcg-policy-bench 1\nkernel: x\nhmean a 1\n" },                      /* no memcg */
		{ "memcg-policy-bench 1\nkernel: x\nkernel: y\nmemcg: on\nhmean a 1\n" }, /* twice */
		{ "memcg-policy-bench 1\nkernel: x\nmemcg: on\nhmean a 1\nhmean a 2\n" },
		{ "memcg-policy-bench 1\nkernel: x\nmemcg: on\nhmean a\n" },
		{ "memcg-policy-bench 1\nkernel: x\nmemcg: on\nhmean a 1 2\n" },
		{ "memcg-policy-bench 1\nkernel: x\nmemcg: on\nhmean a -1\n" },
		{ "memcg-policy-bench 1\nkernel: x\nmemcg: on\nhmean a nan\n" },
		{ "memcg-policy-bench 1\nkernel: x\nmemcg: on\nhmean a inf\n" },
		{ "memcg-policy-bench 1\nkernel: x\nmemcg: on\nhmean a 1x\n" },
		{ "memcg-policy-bench 1\nkernel: x\nmemcg: on\nHmean a 1\n" },
		{ "memcg-policy-bench 1\nKernel: x\nmemcg: on\nhmean a 1\n" },
		{ "memcg-policy-bench 1\nkernel:x\nmemcg: on\nhmean a 1\n" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		struct bench_run r = {0};
		int rc = parse(bad[i].text, &r);
		if (rc != -EXIT_BADINPUT)
			printf("  case %zu: parse gave %d\n", i, rc);
		CHECK_INT(rc, -EXIT_BADINPUT);
		CHECK(r.n_metrics == 0 && r.keys.n == 0);
	}
	struct bench_run r = {0};
	const char nul[] = "memcg-policy-bench 1\nkernel: x\0\nmemcg: on\nhmean a 1\n";
	CHECK_INT(bench_run_parse(nul, sizeof(nul) - 1, "run.txt", &r), -EXIT_BADINPUT);
}

TEST(parse_tolerates_comments_blanks_crlf)
{
	struct bench_run r = {0};
	CHECK_INT(parse("memcg-policy-bench 1\r\n# saved by hand\n\nkernel: x \r\nmemcg: off\nhmean a 2.5\n"
			"future-key: ignored but kept\n",
			&r),
		  0);
	CHECK_STR(bench_run_get(&r, "kernel"), "x");
	CHECK_STR(bench_run_get(&r, "future-key"), "ignored but kept");
	CHECK_INT(r.n_metrics, 1);
	bench_run_free(&r);
}

TEST(pct)
{
	double p;
	CHECK(bench_pct(100, 110, &p) && close_to(p, 10));
	CHECK(bench_pct(100, 90, &p) && close_to(p, -10));
	CHECK(bench_pct(0, 0, &p) && p == 0);
	CHECK(!bench_pct(0, 1, &p));
}

TEST(compare_seed_line)
{
	struct bench_run a = {0}, b = {0};
	CHECK_INT(parse("memcg-policy-bench 1\nkernel: 4.0.0\nmemcg: on\nhmean faults/cpu-1 1509075.7561\n"
			"time user-1 0\nhmean faults/cpu-16 12.5\n",
			&a),
		  0);
	CHECK_INT(parse("memcg-policy-bench 1\nkernel: 4.0.0\nmemcg: off\nhmean faults/cpu-1 1508934.4568\n"
			"time user-1 0.25\n",
			&b),
		  0);
	char *text = bench_compare_format(&a, "on.txt", &b, "off.txt");
	CHECK_STR(text, "A: kernel 4.0.0, memcg on (on.txt)\n"
			"B: kernel 4.0.0, memcg off (off.txt)\n"
			/* the longest label, 19 characters, widens the name column */
			"Hmean faults/cpu-1    1509075.7561 (  0.00%)   1508934.4568 ( -0.01%)\n"
			"Time user-1                 0.0000 (  0.00%)         0.2500 (    n/a)\n"
			"Hmean faults/cpu-16        12.5000 (  0.00%)              -\n");
	free(text);
	text = bench_run_format_metrics(&b);
	CHECK_STR(text, "Hmean faults/cpu-1   1508934.4568\n"
			"Time user-1                0.2500\n");
	free(text);
	bench_run_free(&a);
	bench_run_free(&b);
}

/* the warnings of --compare: the same memcg state in both runs, a loaded
 * machine, a difference within the runs' own spread; none for two clean
 * runs that differ in memcg by more than their noise */
static char *warnings_of(const char *a_text, const char *b_text)
{
	struct bench_run a = {0}, b = {0};
	CHECK_INT(parse(a_text, &a), 0);
	CHECK_INT(parse(b_text, &b), 0);
	struct strv w = {0};
	bench_compare_warnings(&a, &b, &w);
	struct strbuf sb = {0};
	for (size_t i = 0; i < w.n; i++)
		sb_appendf(&sb, "%s\n", w.v[i]);
	strv_free(&w);
	bench_run_free(&a);
	bench_run_free(&b);
	return sb_take(&sb);
}

TEST(compare_warnings)
{
#define RUN(memcg, load, hmean, cv)                                                                              \
	"memcg-policy-bench 1\nkernel: 6.1.0\nmemcg: " memcg "\nnproc: 2\nload: " load "\nmin faults/cpu-1 1\nhmean faults/cpu-1 " hmean \
	"\nstddev faults/cpu-1 1\ncoeffvar faults/cpu-1 " cv "\nmax faults/cpu-1 1\n"
	char *w = warnings_of(RUN("on", "0.10", "1000000", "1.0"), RUN("off", "0.20", "1100000", "1.5"));
	CHECK_STR(w, "");
	free(w);
	w = warnings_of(RUN("on", "0.10", "1000000", "1.0"), RUN("on", "0.20", "1100000", "1.5"));
	CHECK(strstr(w, "both runs had memcg on: their difference is not memcg's cost") != NULL);
	free(w);
	w = warnings_of(RUN("on", "1.65", "1000000", "1.0"), RUN("off", "0.20", "1100000", "1.5"));
	CHECK_STR(w, "A ran with a load of 1.65 on 2 CPUs: other work competed with it, and its figures are noisier\n");
	free(w);
	w = warnings_of(RUN("on", "0.10", "1000000", "3.0"), RUN("off", "0.20", "1020000", "1.5"));
	CHECK_STR(w, "faults/cpu-1: the difference (+2.00%) is within the runs' noise (CoeffVar 3.00% and 1.50%): run "
		     "more iterations, or both again\n");
	free(w);
#undef RUN
}

TEST(tiny_real_run)
{
	struct pft_result r;
	long page = sysconf(_SC_PAGESIZE);
	CHECK_INT(pft_run(2, (size_t)page * 100 + 1, 3, NULL, NULL, &r), 0);
	CHECK_INT(r.threads, 2);
	CHECK_INT(r.iterations, 3);
	CHECK_INT(r.size, page * 101); /* rounded up to whole pages */
	CHECK_INT(r.pages, 2 * 101);
	for (unsigned i = 0; i < 3; i++)
		CHECK(r.faults_per_cpu[i] >= 0 && r.faults_per_sec[i] >= 0);
	CHECK(r.elapsed > 0);
	pft_result_free(&r);
	CHECK_INT(pft_run(0, 4096, 1, NULL, NULL, &r), -EINVAL);
}

/* --json numbers in their shortest exact form: what jq 1.7 and a Go
 * program print back (1509075.7561 was written 1509075.7561000001). */
TEST(json_numbers_shortest)
{
	static const struct {
		double d;
		const char *want;
	} c[] = {
		{ 1509075.7561, "1509075.7561" }, { 1000.0, "1000" }, { 0.1, "0.1" }, { -0.01, "-0.01" },
		{ 1e6, "1000000" },		  { 0.0, "0" },	      { 1.0 / 3.0, "0.3333333333333333" },
		{ 1.5e-7, "1.5e-07" },
	};
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		struct json_object *o = json_number(c[i].d);
		const char *got = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
		CHECK_STR(got, c[i].want);
		CHECK(strtod(got, NULL) == c[i].d);
		json_object_put(o);
	}
}

TEST_MAIN(T(json_numbers_shortest), T(hmean_of_rates), T(format_and_parse_round_trip), T(parse_errors),
	  T(parse_tolerates_comments_blanks_crlf), T(pct), T(compare_seed_line), T(compare_warnings), T(tiny_real_run))
