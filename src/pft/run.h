/* pft/run.h - one run of `memcg-policy bench` as data: metadata (kernel,
 * memcg state, command line, cgroup...) and metrics; its saved form and the
 * side-by-side comparison of two runs in mmtests' format. No I/O here.
 *
 * Saved form, line-based text:
 *     memcg-policy-bench 1
 *     kernel: 6.18.0
 *     memcg: on
 *     ...                          (KEY: VALUE, KEY of [a-z0-9-])
 *     hmean faults/cpu-1 1509075.7561
 *     time elapsed-1 1.2345        (STAT NAME VALUE, STAT of [a-z])
 * Blank lines and lines starting with '#' are ignored. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "lib/util.h"

#define BENCH_RUN_HEADER "memcg-policy-bench 1"

struct bench_metric {
	char *stat; /* "hmean", "time" */
	char *name; /* "faults/cpu-1" */
	double value;
};

struct bench_run {
	struct strv keys;   /* metadata, in order */
	struct strv values; /* values[i] belongs to keys[i] */
	struct bench_metric *metrics;
	size_t n_metrics;
};

/* Metadata. set replaces an existing key; control characters in the
 * value (a newline would end the line) become spaces, and outer spaces go. */
void bench_run_set(struct bench_run *r, const char *key, const char *value);
const char *bench_run_get(const struct bench_run *r, const char *key);

void bench_run_add_metric(struct bench_run *r, const char *stat, const char *name, double value);
const struct bench_metric *bench_run_find(const struct bench_run *r, const char *stat, const char *name);

/* "Hmean faults/cpu-1": the stat capitalized, a space, the name. */
char *bench_metric_label(const struct bench_metric *m);

/* The saved form. */
char *bench_run_format(const struct bench_run *r);
/* Parses a saved run; file names it in messages. Returns 0, or
 * -EXIT_BADINPUT after printing "memcg-policy: FILE:LINE: message". */
int bench_run_parse(const char *text, size_t len, const char *file, struct bench_run *out);
void bench_run_free(struct bench_run *r);

/* The metrics alone, one a line: "Hmean faults/cpu-1   1509075.7561". */
char *bench_run_format_metrics(const struct bench_run *r);

/* The spread of samples: Min, Max, sample standard deviation, and the
 * coefficient of variation (Stddev / mean, in percent), as mmtests reports
 * them beside the Hmean. */
struct bench_spread {
	double min, max, stddev, coeffvar;
};
void bench_spread(const double *v, size_t n, struct bench_spread *out);

/* What makes two runs not directly comparable, one sentence each (pushed
 * to out): different thread counts, sizes, iterations or machines (CPU,
 * number of CPUs, architecture), a run without spread figures. */
void bench_compare_warnings(const struct bench_run *a, const struct bench_run *b, struct strv *out);

/* Percentage difference of b from a, (b - a) / a * 100; 0 when both are 0;
 * false when only a is 0 (no percentage can be given). */
bool bench_pct(double a, double b, double *pct);

/* Two runs side by side, for every metric of a, in mmtests' format:
 *   Hmean faults/cpu-1   1509075.7561 (  0.00%)   1508934.4568 ( -0.01%)
 * after two lines "A: kernel VERSION, memcg STATE (FILE)" and the same for
 * B. A metric b lacks shows "-". */
char *bench_compare_format(const struct bench_run *a, const char *file_a, const struct bench_run *b,
			   const char *file_b);
