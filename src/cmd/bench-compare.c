/* cmd/bench-compare.c - `memcg-policy bench --compare A B` (cmd/bench.c):
 * two saved runs read back, a warning for what makes them not directly
 * comparable, and the two side by side as text or JSON. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>

#include "io/jsonc.h"

#include "pft/run.h"
#include "cmd/bench-int.h"
#include "show/report.h"
#include "facts/context.h"
#include "lib/diag.h"
#include "lib/util.h"

#define MAX_SAVED_FILE (1u << 20)

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

struct json_object *json_metadata(const struct bench_run *run, const char *file)
{
	struct json_object *o = json_object_new_object();
	if (file)
		json_object_object_add(o, "file", json_object_new_string(file));
	for (size_t i = 0; i < run->keys.n; i++) {
		const char *k = run->keys.v[i], *v = run->values.v[i];
		/* the saved file's keys ("memcg-source") in the contract's
		 * style ("memcg_source") */
		_cleanup_free_ char *key = xstrdup(k);
		for (char *c = key; *c; c++)
			if (*c == '-')
				*c = '_';
		struct json_object *val = NULL;
		char *end;
		errno = 0;
		if (streq(k, "threads")) {
			/* "1,2,4": the counts, as numbers */
			val = json_object_new_array();
			for (const char *c = v; *c;) {
				errno = 0;
				unsigned long t = strtoul(c, &end, 10);
				if (end == c || errno || (*end && *end != ',')) {
					json_object_put(val);
					val = NULL;
					break;
				}
				json_object_array_add(val, json_object_new_int64((int64_t)t));
				c = *end ? end + 1 : end;
			}
		} else if (streq(k, "nproc") || streq(k, "size") || streq(k, "iterations")) {
			long long n = strtoll(v, &end, 10);
			if (*v && !*end && !errno)
				val = json_object_new_int64(n);
		} else if (streq(k, "memcg")) {
			val = json_object_new_string(json_memcg_word(v));
		} else if (streq(k, "load")) {
			double d = strtod(v, &end);
			if (*v && !*end && !errno)
				val = json_number(d);
		}
		/* everything else, and a count that does not read as one, as
		 * recorded */
		json_object_object_add(o, key, val ? val : json_object_new_string(v));
	}
	return o;
}

struct json_object *bench_json(const char *kind, struct json_object *run, struct json_object *compare)
{
	struct json_object *o = json_object_new_object();
	json_object_object_add(o, "kind", json_object_new_string(kind));
	json_object_object_add(o, "run", run);
	json_object_object_add(o, "compare", compare);
	return o;
}

int do_compare(const struct context *ctx, const char *file_a, const char *file_b)
{
	struct bench_run a = { 0 }, b = { 0 };
	int r = load_run(file_a, &a);
	if (r == 0)
		r = load_run(file_b, &b);
	if (r < 0) {
		bench_run_free(&a);
		bench_run_free(&b);
		return -r;
	}
	struct strv warnings = { 0 };
	bench_compare_warnings(&a, &b, &warnings);
	for (size_t i = 0; i < warnings.n; i++)
		diag_warn("bench --compare: %s", warnings.v[i]);
	int rc = EXIT_OK;
	if (ctx->json) {
		struct json_object *o = json_object_new_object();
		json_object_object_add(o, "a", json_metadata(&a, file_a));
		json_object_object_add(o, "b", json_metadata(&b, file_b));
		struct json_object *metrics = json_object_new_array();
		for (size_t i = 0; i < a.n_metrics; i++) {
			const struct bench_metric *ma = &a.metrics[i];
			const struct bench_metric *mb = bench_run_find(&b, ma->stat, ma->name);
			struct json_object *m = json_object_new_object();
			json_object_object_add(m, "stat", json_object_new_string(ma->stat));
			json_object_object_add(m, "name", json_object_new_string(ma->name));
			json_object_object_add(m, "a", json_number(ma->value));
			json_object_object_add(m, "b", mb ? json_number(mb->value) : NULL);
			double pct;
			json_object_object_add(m, "diff_percent",
					       mb && bench_pct(ma->value, mb->value, &pct) ? json_number(pct) : NULL);
			json_object_array_add(metrics, m);
		}
		json_object_object_add(o, "metrics", metrics);
		struct json_object *report = json_report_new(ctx, "bench");
		json_report_set(report, "bench", bench_json("compare", NULL, o));
		rc = json_report_emit(report, EXIT_OK);
	} else {
		_cleanup_free_ char *text = bench_compare_format(&a, file_a, &b, file_b);
		fputs(text, stdout);
	}
	strv_free(&warnings);
	bench_run_free(&a);
	bench_run_free(&b);
	return rc;
}
