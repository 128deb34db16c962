/* facts/probe.c - system facts, see facts/probe.h */
#include "facts/probe.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>

#include "lib/util.h"

const char *run_state_name(enum run_state s)
{
	switch (s) {
	case RUN_ON: return "on";
	case RUN_OFF: return "off";
	case RUN_NOT_BUILT: return "not built";
	case RUN_UNKNOWN: break;
	}
	return "unknown";
}

static const char *const bin_dirs[] = {
	"/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin",
};

/* The directories of list[0..n) that are there, each once, in order: on a
 * merged-/usr system /sbin, /bin and /lib/systemd/system are the /usr
 * ones, found first. Returns how many are in out. */
static size_t present_dirs(const struct root *r, const char *const *list, size_t n, const char **out)
{
	dev_t dev[8] = { 0 };
	ino_t ino[8] = { 0 };
	size_t m = 0;
	for (size_t i = 0; i < n && m < ARRAY_SIZE(dev); i++) {
		struct stat st;
		if (root_stat(r, list[i], &st) < 0 || !S_ISDIR(st.st_mode))
			continue;
		bool dup = false;
		for (size_t j = 0; j < m && !dup; j++)
			dup = dev[j] == st.st_dev && ino[j] == st.st_ino;
		if (dup)
			continue;
		dev[m] = st.st_dev;
		ino[m] = st.st_ino;
		out[m++] = list[i];
	}
	return m;
}

/* Appends one found item to its list and its data. */
static void push_found(struct strv *out, struct needs_found **found, char *text, const char *name, const char *path,
		       unsigned line, const char *directive)
{
	strv_push(out, text);
	*found = xrealloc(*found, out->n * sizeof(**found));
	(*found)[out->n - 1] = (struct needs_found){
		.name = xstrdup(name), .path = xstrdup(path), .line = line, .directive = directive
	};
}

void system_facts_add_program(struct system_facts *s, const char *name, const char *path)
{
	push_found(&s->programs, &s->found_programs, xasprintf("%s (%s)", name, path), name, path, 0, NULL);
}

void system_facts_add_unit(struct system_facts *s, const char *unit, const char *path, unsigned line,
			   const char *directive)
{
	push_found(&s->units, &s->found_units, xasprintf("%s:%u: %s=", path, line, directive), unit, path, line,
		   directive);
}

static void found_free(struct needs_found *f, size_t n)
{
	for (size_t i = 0; f && i < n; i++) {
		free(f[i].name);
		free(f[i].path);
	}
	free(f);
}

static void find_programs(const struct root *r, const struct policy *p, struct system_facts *s)
{
	_Static_assert(ARRAY_SIZE(bin_dirs) <= 8, "present_dirs keeps at most 8");
	if (p->n_needs_memcg == 0)
		return;
	const char *dirs[ARRAY_SIZE(bin_dirs)];
	size_t n_dirs = present_dirs(r, bin_dirs, ARRAY_SIZE(bin_dirs), dirs);
	for (size_t i = 0; i < p->n_needs_memcg; i++) {
		for (size_t j = 0; j < n_dirs; j++) {
			_cleanup_free_ char *path = path_join(dirs[j], p->needs_memcg[i]);
			struct stat st;
			if (root_stat(r, path, &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 0111)) {
				system_facts_add_program(s, p->needs_memcg[i], path);
				break;
			}
		}
	}
}

/* The unit directives that only work with memcg. */
static const char *const memory_directives[] = {
	"MemoryMax",
	"MemoryHigh",
	"MemoryLow",
	"MemoryMin",
	"MemorySwapMax",
	"MemoryLimit",
	"ManagedOOMSwap",
	"ManagedOOMMemoryPressure",
	"ManagedOOMMemoryPressureLimit",
	"ManagedOOMMemoryPressureDurationSec",
};

static const char *const unit_dirs[] = {
	"/etc/systemd/system",	   "/run/systemd/system", "/usr/local/lib/systemd/system",
	"/usr/lib/systemd/system", "/lib/systemd/system",
};

/* Does this line set a memory directive to something that needs memcg?
 * "infinity", "auto" and empty values do not. */
static const char *memory_directive(const char *line, size_t len)
{
	while (len && isspace((unsigned char)*line))
		line++, len--;
	for (size_t i = 0; i < ARRAY_SIZE(memory_directives); i++) {
		size_t n = strlen(memory_directives[i]);
		if (len <= n || memcmp(line, memory_directives[i], n) != 0)
			continue;
		const char *v = line + n;
		size_t vl = len - n;
		while (vl && (*v == ' ' || *v == '\t'))
			v++, vl--;
		if (!vl || *v != '=')
			continue;
		v++, vl--;
		while (vl && isspace((unsigned char)*v))
			v++, vl--;
		while (vl && isspace((unsigned char)v[vl - 1]))
			vl--;
		if (vl == 0 || (vl == 8 && !memcmp(v, "infinity", 8)) || (vl == 4 && !memcmp(v, "auto", 4)))
			continue;
		return memory_directives[i];
	}
	return NULL;
}

/* unit: the unit the file configures (a drop-in's is its directory's name) */
static void scan_unit_file(const struct root *r, const char *path, const char *unit, struct system_facts *s)
{
	_cleanup_free_ char *text = NULL;
	size_t len;
	if (root_read_file(r, path, 1u << 20, &text, &len) < 0)
		return;
	unsigned lineno = 0;
	for (const char *p = text; p < text + len;) {
		const char *nl = memchr(p, '\n', (size_t)(text + len - p));
		size_t l = nl ? (size_t)(nl - p) : (size_t)(text + len - p);
		lineno++;
		const char *d = memory_directive(p, l);
		if (d) {
			system_facts_add_unit(s, unit, path, lineno, d);
			return;
		}
		p += l + 1;
	}
}

static bool is_unit_name(const char *n)
{
	return endswith(n, ".service") || endswith(n, ".slice") || endswith(n, ".scope") || endswith(n, ".socket") ||
	       endswith(n, ".mount") || endswith(n, ".swap");
}

static void find_units(const struct root *r, struct system_facts *s)
{
	const struct strv *out = &s->units;
	/* each directory read once */
	_Static_assert(ARRAY_SIZE(unit_dirs) <= 8, "present_dirs keeps at most 8");
	const char *dirs[ARRAY_SIZE(unit_dirs)];
	size_t n_dirs = present_dirs(r, unit_dirs, ARRAY_SIZE(unit_dirs), dirs);
	for (size_t i = 0; i < n_dirs && out->n == 0; i++) {
		char **names;
		int n = root_list_dir(r, dirs[i], NULL, &names);
		for (int j = 0; j < n && out->n == 0; j++) {
			_cleanup_free_ char *path = path_join(dirs[i], names[j]);
			if (is_unit_name(names[j])) {
				scan_unit_file(r, path, names[j], s);
			} else if (endswith(names[j], ".d")) {
				char **drop;
				int m = root_list_dir(r, path, ".conf", &drop);
				_cleanup_free_ char *unit = xstrndup(names[j], strlen(names[j]) - 2);
				for (int k = 0; k < m && out->n == 0; k++) {
					_cleanup_free_ char *dp = path_join(path, drop[k]);
					scan_unit_file(r, dp, unit, s);
				}
				if (m > 0)
					names_free(drop, m);
			}
		}
		if (n > 0)
			names_free(names, n);
	}
}

/* The host files read on a live system (/proc, /sys) are small. */
#define MAX_HOST_FILE (4u << 20)

enum run_state probe_memcg_running(const char **source)
{
	_cleanup_free_ char *text = NULL;
	*source = NULL;
	if (read_host_file("/sys/fs/cgroup/cgroup.controllers", MAX_HOST_FILE, &text, NULL) == 0) {
		*source = "/sys/fs/cgroup/cgroup.controllers";
		for (char *save = NULL, *w = strtok_r(text, " \t\n", &save); w; w = strtok_r(NULL, " \t\n", &save))
			if (streq(w, "memory"))
				return RUN_ON;
		/* cgroup2 root without memory: fall back to /proc/cgroups,
		 * which tells "not built" from "disabled" */
		free(TAKE_PTR(text));
	}
	if (read_host_file("/proc/cgroups", MAX_HOST_FILE, &text, NULL) == 0) {
		for (char *save = NULL, *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
			char name[64];
			unsigned hier, num, enabled;
			if (sscanf(l, "%63s %u %u %u", name, &hier, &num, &enabled) == 4 && streq(name, "memory")) {
				*source = "/proc/cgroups";
				return enabled ? RUN_ON : RUN_OFF;
			}
		}
		if (*source) /* cgroup2 root said no memory, and no v1 row */
			return RUN_OFF;
		*source = "/proc/cgroups";
		return RUN_UNKNOWN;
	}
	return *source ? RUN_OFF : RUN_UNKNOWN;
}

static void live_ram(struct system_facts *s)
{
	_cleanup_free_ char *text = NULL;
	if (read_host_file("/proc/meminfo", MAX_HOST_FILE, &text, NULL) < 0 || !text)
		return;
	const char *m = strstr(text, "MemTotal:");
	unsigned long long kb;
	if (m && sscanf(m, "MemTotal: %llu kB", &kb) == 1) {
		s->have_ram = true;
		s->ram = kb << 10;
		s->ram_source = "/proc/meminfo";
	}
}

/* Can a unit's memory directive matter: some kernel decided by auto (the
 * decision) or off (the warning that it fails after the next boot)? With
 * every mode on, the unit files are not read. */
static bool units_can_matter(const struct policy *p)
{
	if (p->mode != MODE_ON)
		return true;
	for (size_t i = 0; i < p->n_kernels; i++)
		if (p->kernels[i].mode == MODE_AUTO || p->kernels[i].mode == MODE_OFF)
			return true;
	return false;
}

int probe_system(const struct root *r, const struct policy *p, struct system_facts *s)
{
	memset(s, 0, sizeof(*s));
	find_programs(r, p, s);
	if (p->needs_memcg_units && s->programs.n == 0 && units_can_matter(p))
		find_units(r, s);
	/* RAM: /proc/meminfo on a live system, else (or when it does not
	 * tell) the policy's assume-ram */
	if (r->live)
		live_ram(s);
	if (!s->have_ram && p->has_assume_ram) {
		s->have_ram = true;
		s->ram = p->assume_ram;
		s->ram_source = "assume-ram";
	}
	if (r->live) {
		s->running = probe_memcg_running(&s->running_source);
		char *line = NULL;
		if (read_host_file("/proc/cmdline", MAX_HOST_FILE, &line, NULL) == 0 && line) {
			size_t l = strlen(line);
			while (l && (line[l - 1] == '\n' || line[l - 1] == ' '))
				line[--l] = '\0';
			s->proc_cmdline = line;
		}
	}
	return 0;
}

void system_facts_free(struct system_facts *s)
{
	found_free(s->found_programs, s->programs.n);
	found_free(s->found_units, s->units.n);
	s->found_programs = s->found_units = NULL;
	strv_free(&s->programs);
	strv_free(&s->units);
	free(s->proc_cmdline);
	s->proc_cmdline = NULL;
}
