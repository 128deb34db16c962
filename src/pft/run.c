/* pft/run.c - see pft/run.h */
#include "pft/run.h"
#include "lib/diag.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>

static char *clean_value(const char *value)
{
	char *v = xstrdup(value ? value : "");
	for (char *p = v; *p; p++)
		if (iscntrl((unsigned char)*p))
			*p = ' ';
	char *start = v;
	while (*start == ' ')
		start++;
	size_t n = strlen(start);
	while (n > 0 && start[n - 1] == ' ')
		n--;
	char *out = xstrndup(start, n);
	free(v);
	return out;
}

void bench_run_set(struct bench_run *r, const char *key, const char *value)
{
	char *v = clean_value(value);
	for (size_t i = 0; i < r->keys.n; i++)
		if (streq(r->keys.v[i], key)) {
			free(r->values.v[i]);
			r->values.v[i] = v;
			return;
		}
	strv_pushdup(&r->keys, key);
	strv_push(&r->values, v);
}

const char *bench_run_get(const struct bench_run *r, const char *key)
{
	for (size_t i = 0; i < r->keys.n; i++)
		if (streq(r->keys.v[i], key))
			return r->values.v[i];
	return NULL;
}

void bench_run_add_metric(struct bench_run *r, const char *stat, const char *name, double value)
{
	r->metrics = xrealloc(r->metrics, (r->n_metrics + 1) * sizeof(*r->metrics));
	r->metrics[r->n_metrics++] = (struct bench_metric){
		.stat = xstrdup(stat),
		.name = xstrdup(name),
		.value = value,
	};
}

const struct bench_metric *bench_run_find(const struct bench_run *r, const char *stat, const char *name)
{
	for (size_t i = 0; i < r->n_metrics; i++)
		if (streq(r->metrics[i].stat, stat) && streq(r->metrics[i].name, name))
			return &r->metrics[i];
	return NULL;
}

char *bench_metric_label(const struct bench_metric *m)
{
	if (streq(m->stat, "coeffvar")) /* as mmtests spells it */
		return xasprintf("CoeffVar %s", m->name);
	char *s = xasprintf("%s %s", m->stat, m->name);
	s[0] = (char)toupper((unsigned char)s[0]);
	return s;
}

void bench_run_free(struct bench_run *r)
{
	strv_free(&r->keys);
	strv_free(&r->values);
	for (size_t i = 0; i < r->n_metrics; i++) {
		free(r->metrics[i].stat);
		free(r->metrics[i].name);
	}
	free(r->metrics);
	r->metrics = NULL;
	r->n_metrics = 0;
}

char *bench_run_format(const struct bench_run *r)
{
	struct strbuf sb = { 0 };
	sb_append(&sb, BENCH_RUN_HEADER "\n");
	for (size_t i = 0; i < r->keys.n; i++)
		sb_appendf(&sb, "%s: %s\n", r->keys.v[i], r->values.v[i]);
	for (size_t i = 0; i < r->n_metrics; i++)
		sb_appendf(&sb, "%s %s %.4f\n", r->metrics[i].stat, r->metrics[i].name, r->metrics[i].value);
	return sb_take(&sb);
}

static bool is_key(const char *s, size_t n)
{
	if (n == 0)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!islower((unsigned char)s[i]) && !isdigit((unsigned char)s[i]) && s[i] != '-')
			return false;
	return true;
}

static bool is_stat(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!islower((unsigned char)*s))
			return false;
	return true;
}

/* One line without its newline: metadata or a metric. */
static int parse_line(char *line, const char *file, unsigned lineno, struct bench_run *r)
{
	char *colon = strchr(line, ':');
	char *space = strchr(line, ' ');
	if (colon && (!space || colon < space)) {
		if (!is_key(line, (size_t)(colon - line)))
			return diag_error(EXIT_BADINPUT, "%s:%u: bad key '%.*s'", file, lineno, (int)(colon - line),
					  line);
		if (colon[1] != '\0' && colon[1] != ' ')
			return diag_error(EXIT_BADINPUT, "%s:%u: expected 'KEY: VALUE'", file, lineno);
		*colon = '\0';
		if (bench_run_get(r, line))
			return diag_error(EXIT_BADINPUT, "%s:%u: '%s' given twice", file, lineno, line);
		bench_run_set(r, line, colon + 1);
		return 0;
	}

	char *save = NULL;
	char *stat = strtok_r(line, " \t", &save);
	char *name = stat ? strtok_r(NULL, " \t", &save) : NULL;
	char *value = name ? strtok_r(NULL, " \t", &save) : NULL;
	if (!value || strtok_r(NULL, " \t", &save))
		return diag_error(EXIT_BADINPUT, "%s:%u: expected 'KEY: VALUE' or 'STAT NAME VALUE'", file, lineno);
	if (!is_stat(stat))
		return diag_error(EXIT_BADINPUT, "%s:%u: bad statistic '%s'", file, lineno, stat);
	errno = 0;
	char *end;
	double v = strtod(value, &end);
	if (errno || end == value || *end || !isfinite(v) || v < 0)
		return diag_error(EXIT_BADINPUT, "%s:%u: bad value '%s' for %s %s", file, lineno, value, stat, name);
	if (bench_run_find(r, stat, name))
		return diag_error(EXIT_BADINPUT, "%s:%u: %s %s given twice", file, lineno, stat, name);
	bench_run_add_metric(r, stat, name, v);
	return 0;
}

int bench_run_parse(const char *text, size_t len, const char *file, struct bench_run *out)
{
	struct bench_run r = { 0 };
	if (memchr(text, '\0', len))
		return diag_error(EXIT_BADINPUT, "%s: not a memcg-policy bench file (binary data)", file);

	unsigned lineno = 0;
	const char *p = text, *end = text + len;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
		_cleanup_free_ char *line = xstrndup(p, n);
		p += n + (nl ? 1 : 0);
		lineno++;
		/* Trailing blanks (and a CR) are not part of the content. */
		size_t l = strlen(line);
		while (l > 0 && isspace((unsigned char)line[l - 1]))
			line[--l] = '\0';

		if (lineno == 1) {
			if (streq(line, BENCH_RUN_HEADER))
				continue;
			bench_run_free(&r);
			if (startswith(line, "memcg-policy-bench "))
				return diag_error(EXIT_BADINPUT,
						  "%s:1: unsupported format '%s' (this version reads '%s')", file, line,
						  BENCH_RUN_HEADER);
			return diag_error(EXIT_BADINPUT, "%s:1: not a memcg-policy bench file (no '%s' line)", file,
					  BENCH_RUN_HEADER);
		}
		if (!*line || *line == '#')
			continue;
		int rc = parse_line(line, file, lineno, &r);
		if (rc < 0) {
			bench_run_free(&r);
			return rc;
		}
	}
	if (lineno == 0)
		return diag_error(EXIT_BADINPUT, "%s:1: empty file, not a memcg-policy bench file", file);

	const char *missing = !bench_run_get(&r, "kernel") ? "kernel" : !bench_run_get(&r, "memcg") ? "memcg" : NULL;
	int rc = 0;
	if (missing)
		rc = diag_error(EXIT_BADINPUT, "%s:%u: no '%s:' line", file, lineno, missing);
	else if (r.n_metrics == 0)
		rc = diag_error(EXIT_BADINPUT, "%s:%u: no results", file, lineno);
	if (rc < 0) {
		bench_run_free(&r);
		return rc;
	}
	*out = r;
	return 0;
}

void bench_spread(const double *v, size_t n, struct bench_spread *out)
{
	memset(out, 0, sizeof(*out));
	if (n == 0)
		return;
	double sum = 0;
	out->min = out->max = v[0];
	for (size_t i = 0; i < n; i++) {
		sum += v[i];
		if (v[i] < out->min)
			out->min = v[i];
		if (v[i] > out->max)
			out->max = v[i];
	}
	double mean = sum / (double)n, sq = 0;
	for (size_t i = 0; i < n; i++)
		sq += (v[i] - mean) * (v[i] - mean);
	out->stddev = n > 1 ? sqrt(sq / (double)(n - 1)) : 0;
	out->coeffvar = mean != 0 ? out->stddev / mean * 100.0 : 0;
}

/* Facts of a run that make two runs comparable: what was run, and on
 * what machine. */
static const struct {
	const char *key;
	const char *what;
	bool machine;
} comparable[] = {
	{ "threads", "thread counts", false }, { "size", "bytes per thread", false },
	{ "iterations", "iterations", false }, { "cpu", "CPU", true },
	{ "nproc", "number of CPUs", true },   { "arch", "architecture", true },
};

static bool has_spread(const struct bench_run *r)
{
	for (size_t i = 0; i < r->n_metrics; i++)
		if (streq(r->metrics[i].stat, "stddev"))
			return true;
	return false;
}

void bench_compare_warnings(const struct bench_run *a, const struct bench_run *b, struct strv *out)
{
	for (size_t i = 0; i < ARRAY_SIZE(comparable); i++) {
		const char *va = bench_run_get(a, comparable[i].key), *vb = bench_run_get(b, comparable[i].key);
		if (!va || !vb || streq(va, vb))
			continue;
		strv_push(out,
			  xasprintf("the runs differ in %s (%s: A %s, B %s)%s", comparable[i].what, comparable[i].key,
				    va, vb, comparable[i].machine ? ": they were made on different machines" : ""));
	}
	const struct bench_run *runs[] = { a, b };
	for (size_t k = 0; k < 2; k++)
		if (!has_spread(runs[k]))
			strv_push(out, xasprintf("%c has no spread figures (Min, Stddev, CoeffVar, Max): saved by an "
						 "earlier version",
						 k ? 'B' : 'A'));
	/* what memcg costs is told by two runs that differ in it */
	const char *ma = bench_run_get(a, "memcg"), *mb = bench_run_get(b, "memcg");
	if (ma && mb && streq(ma, mb))
		strv_push(out, xasprintf("both runs had memcg %s: their difference is not memcg's cost, only how "
					 "much two runs differ here",
					 ma));
	/* other work on the machine while a run ran */
	for (size_t k = 0; k < 2; k++) {
		const char *load = bench_run_get(runs[k], "load"), *nproc = bench_run_get(runs[k], "nproc");
		double l, n;
		if (load && nproc && sscanf(load, "%lf", &l) == 1 && sscanf(nproc, "%lf", &n) == 1 && n > 0 &&
		    l > n / 4)
			strv_push(out, xasprintf("%c ran with a load of %s on %s CPUs: other work competed with it, "
						 "and its figures are noisier",
						 k ? 'B' : 'A', load, nproc));
	}
	/* a difference within the runs' own spread is noise */
	for (size_t i = 0; i < a->n_metrics; i++) {
		const struct bench_metric *h = &a->metrics[i];
		if (!streq(h->stat, "hmean") || strncmp(h->name, "faults/cpu-", 11) != 0)
			continue;
		const struct bench_metric *hb = bench_run_find(b, "hmean", h->name);
		const struct bench_metric *ca = bench_run_find(a, "coeffvar", h->name);
		const struct bench_metric *cb = bench_run_find(b, "coeffvar", h->name);
		double pct;
		if (!hb || !ca || !cb || !bench_pct(h->value, hb->value, &pct))
			continue;
		double noise = ca->value > cb->value ? ca->value : cb->value;
		if (fabs(pct) <= noise)
			strv_push(out, xasprintf("%s: the difference (%+.2f%%) is within the runs' noise (CoeffVar "
						 "%.2f%% and %.2f%%): run more iterations, or both again",
						 h->name, pct, ca->value, cb->value));
	}
}

bool bench_pct(double a, double b, double *pct)
{
	if (a == 0) {
		*pct = 0;
		return b == 0;
	}
	*pct = (b - a) / a * 100.0;
	return true;
}

static int max_int(int a, int b) { return a > b ? a : b; }

/* Width of "%.4f" of v. */
static int value_width(double v) { return snprintf(NULL, 0, "%.4f", v); }

static int label_width(const struct bench_run *r)
{
	int w = 18;
	for (size_t i = 0; i < r->n_metrics; i++) {
		_cleanup_free_ char *label = bench_metric_label(&r->metrics[i]);
		w = max_int(w, (int)strlen(label));
	}
	return w + 2;
}

char *bench_run_format_metrics(const struct bench_run *r)
{
	int lw = label_width(r), vw = 13;
	for (size_t i = 0; i < r->n_metrics; i++)
		vw = max_int(vw, value_width(r->metrics[i].value) + 1);
	struct strbuf sb = { 0 };
	for (size_t i = 0; i < r->n_metrics; i++) {
		_cleanup_free_ char *label = bench_metric_label(&r->metrics[i]);
		sb_appendf(&sb, "%-*s%*.4f\n", lw, label, vw, r->metrics[i].value);
	}
	return sb_take(&sb);
}

static void append_pct(struct strbuf *sb, double a, double b)
{
	double pct;
	if (bench_pct(a, b, &pct))
		sb_appendf(sb, " (%6.2f%%)", pct);
	else
		sb_append(sb, " (    n/a)");
}

char *bench_compare_format(const struct bench_run *a, const char *file_a, const struct bench_run *b, const char *file_b)
{
	int lw = label_width(a), wa = 13, wb = 15;
	for (size_t i = 0; i < a->n_metrics; i++) {
		wa = max_int(wa, value_width(a->metrics[i].value) + 1);
		const struct bench_metric *mb = bench_run_find(b, a->metrics[i].stat, a->metrics[i].name);
		if (mb)
			wb = max_int(wb, value_width(mb->value) + 3);
	}

	struct strbuf sb = { 0 };
	const struct bench_run *runs[] = { a, b };
	const char *files[] = { file_a, file_b };
	for (size_t k = 0; k < 2; k++) {
		const char *kernel = bench_run_get(runs[k], "kernel"), *memcg = bench_run_get(runs[k], "memcg");
		sb_appendf(&sb, "%c: kernel %s, memcg %s (%s)\n", k ? 'B' : 'A', kernel ? kernel : "?",
			   memcg ? memcg : "?", files[k]);
	}
	for (size_t i = 0; i < a->n_metrics; i++) {
		const struct bench_metric *ma = &a->metrics[i];
		const struct bench_metric *mb = bench_run_find(b, ma->stat, ma->name);
		_cleanup_free_ char *label = bench_metric_label(ma);
		/* The base column is 0.00% by definition, as in mmtests. */
		sb_appendf(&sb, "%-*s%*.4f (%6.2f%%)", lw, label, wa, ma->value, 0.0);
		if (mb) {
			sb_appendf(&sb, "%*.4f", wb, mb->value);
			append_pct(&sb, ma->value, mb->value);
		} else {
			sb_appendf(&sb, "%*s", wb, "-");
		}
		sb_appendc(&sb, '\n');
	}
	return sb_take(&sb);
}
