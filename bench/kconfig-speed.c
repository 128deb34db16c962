/* kconfig-speed.c - the config reader's own speed, in-process: the tool's
 * kconfig_parse() (every line checked, the facts derived) run in a loop on
 * one config held in memory, nothing else timed.
 *
 *   kconfig-speed FILE [ROUNDS [PARSES]]
 *
 * ROUNDS rounds (default 15) of PARSES parses (default 2000); for each
 * round the CPU time of the thread per parse; prints the median, the 10th
 * and 90th percentiles, and the median's throughput in GB/s (10^9 bytes).
 * The config is read whole first (a gzip one inflated once): only the
 * reader is measured. Built against the tool's objects by `make
 * bench-kconfig-speed` (mk/bench-tool.mk). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "facts/kconfig.h"
#include "lib/util.h"

static double thread_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	if (argc < 2 || argc > 4) {
		fprintf(stderr, "usage: kconfig-speed FILE [ROUNDS [PARSES]]\n");
		return 2;
	}
	int rounds = argc > 2 ? atoi(argv[2]) : 15, parses = argc > 3 ? atoi(argv[3]) : 2000;
	if (rounds < 1 || rounds > 1000 || parses < 1) {
		fprintf(stderr, "kconfig-speed: ROUNDS 1-1000, PARSES at least 1\n");
		return 2;
	}
	FILE *f = fopen(argv[1], "rb");
	if (!f) {
		perror(argv[1]);
		return 1;
	}
	size_t cap = 1 << 20, n = 0;
	char *raw = xmalloc(cap);
	for (size_t r; (r = fread(raw + n, 1, cap - n, f)) > 0;) {
		n += r;
		if (n == cap)
			raw = xrealloc(raw, cap *= 2);
	}
	fclose(f);
	char *text = NULL;
	size_t len = 0;
	int e = kconfig_inflate(raw, n, 64u << 20, &text, &len);
	free(raw);
	if (e < 0) {
		fprintf(stderr, "%s: %s\n", argv[1], strerror(-e));
		return 1;
	}
	/* once, to say what the reader found (and that it reads it) */
	struct kconfig_facts facts;
	unsigned bad = 0;
	e = kconfig_parse(text, len, "6.1.0-0-amd64", &facts, &bad);
	if (e < 0) {
		fprintf(stderr, "%s:%u: refused by the reader\n", argv[1], bad);
		return 1;
	}
	printf("config:   %s, %zu bytes; memcg %s, arch %s\n", argv[1], len, facts.memcg_built ? "built" : "not built",
	       facts.arch ? facts.arch : "?");
	kconfig_facts_free(&facts);

	double *per = xcalloc((size_t)rounds, sizeof(*per));
	unsigned long sink = 0;
	for (int r = 0; r < rounds; r++) {
		double t0 = thread_ns();
		for (int i = 0; i < parses; i++) {
			struct kconfig_facts fx;
			if (kconfig_parse(text, len, "6.1.0-0-amd64", &fx, &bad) < 0)
				abort();
			sink += fx.memcg_built;
			kconfig_facts_free(&fx);
		}
		per[r] = (thread_ns() - t0) / parses;
	}
	qsort(per, (size_t)rounds, sizeof(*per), cmp_double);
	double med = per[rounds / 2], p10 = per[rounds / 10], p90 = per[rounds - 1 - rounds / 10];
	printf("rounds:   %d x %d parses (%lu)\n", rounds, parses, sink);
	printf("per parse: median %.1f us (p10 %.1f, p90 %.1f), thread CPU time\n", med / 1e3, p10 / 1e3, p90 / 1e3);
	printf("speed:    %.2f GB/s of config text (median)\n", (double)len / med);
	free(per);
	free(text);
	return 0;
}
