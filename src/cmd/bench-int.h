/* cmd/bench-int.h - private to `memcg-policy bench` (cmd/bench.c: options;
 * cmd/bench-measure.c: a run measured, printed and saved;
 * cmd/bench-compare.c: two saved runs loaded and compared). */
#pragma once

#include "io/jsonc.h"

#include "pft/run.h"
#include "facts/context.h"

/* CPUs this process may run on (cmd/bench-measure.c). */
unsigned cpu_count(void);
int do_run(const struct context *ctx, const unsigned *threads, unsigned n_threads, unsigned long long size,
	   unsigned iterations, const char *save);

/* A run's metadata as JSON, with the file it was read from
 * (cmd/bench-compare.c). */
struct json_object *json_metadata(const struct bench_run *run, const char *file);
/* --json's "bench" value: {kind: "run" or "compare", run, compare}
 * (either NULL for null; both owned). */
struct json_object *bench_json(const char *kind, struct json_object *run, struct json_object *compare);
int do_compare(const struct context *ctx, const char *file_a, const char *file_b);
