/* cmd/bench-int.h - private to `memcg-policy bench` (cmd/bench.c: options;
 * cmd/bench-measure.c: a run measured, printed and saved;
 * cmd/bench-compare.c: two saved runs loaded and compared). */
#pragma once

#include "io/jsonc.h"

#include "pft/run.h"
#include "facts/context.h"

/* Where the run's threads run (cmd/bench-cgroup.c): the process's own
 * memory cgroup, or, where that is the root one and memcg is on, a child
 * made for the run, which the process enters (its threads follow) and
 * leaves, removed, afterwards. Never fails the run: where no child can be
 * made, a warning, and the run stays where it is. */
struct bench_cgroup {
	char *path; /* the cgroup the threads run in, as /proc/self/cgroup says it */
	char *note; /* why there, for the reader */
	char *made; /* the directory made for the run; NULL: none */
	char *root_procs, *root_control;
	bool enabled_memory; /* +memory written to the root's subtree_control */
};
void bench_cgroup_enter(struct bench_cgroup *c, bool memcg_on);
/* Back to where the process was, the child removed. */
void bench_cgroup_leave(struct bench_cgroup *c);
void bench_cgroup_free(struct bench_cgroup *c);

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
