/* facts/probe.h - facts about the system the decision depends on: programs and
 * unit files that need memcg, RAM, the running state of memcg. With --root
 * nothing of the host is looked at (RAM comes from assume-ram, running
 * state is unknown). */
#pragma once

#include <stdbool.h>

#include "facts/policy.h"
#include "io/rootfs.h"
#include "lib/util.h"

enum run_state { RUN_UNKNOWN, RUN_ON, RUN_OFF, RUN_NOT_BUILT };

/* A program or a unit file found that needs memcg, as data (--json). */
struct needs_found {
	char *name;	       /* the program ("k3s"), the unit file's name ("web.service") */
	char *path;	       /* the program's path, the unit file's path (in the root) */
	unsigned line;	       /* the unit file's line; 0 for a program */
	const char *directive; /* "MemoryMax"; NULL for a program */
};

struct system_facts {
	struct strv programs;		    /* "NAME (/usr/bin/NAME)" for each needs-memcg program found */
	struct strv units;		    /* "UNIT-PATH:LINE: Directive=" for each memory directive found */
	struct needs_found *found_programs; /* programs as data, programs.n of them */
	struct needs_found *found_units;    /* units as data, units.n of them */
	bool have_ram;
	unsigned long long ram;	    /* bytes: /proc/meminfo MemTotal live, assume-ram with --root */
	const char *ram_source;	    /* "/proc/meminfo", "assume-ram" */
	enum run_state running;	    /* live only */
	const char *running_source; /* "/sys/fs/cgroup/cgroup.controllers", "/proc/cgroups" */
	char *proc_cmdline;	    /* live only: /proc/cmdline */
};

int probe_system(const struct root *r, const struct policy *p, struct system_facts *out);
void system_facts_free(struct system_facts *s);
/* A program found ("k3s", "/usr/local/bin/k3s"), a unit file's memory
 * directive ("web.service", its file, the line, "MemoryMax"): appended as
 * text and as data. */
void system_facts_add_program(struct system_facts *s, const char *name, const char *path);
void system_facts_add_unit(struct system_facts *s, const char *unit, const char *path, unsigned line,
			   const char *directive);
const char *run_state_name(enum run_state s);

/* The running kernel's memcg state: memory in the cgroup2 root's
 * cgroup.controllers, else the enabled column of /proc/cgroups. Live
 * system only (host paths). *source names the file that told. */
enum run_state probe_memcg_running(const char **source);
