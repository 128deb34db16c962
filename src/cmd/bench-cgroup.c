/* cmd/bench-cgroup.c - where `memcg-policy bench` runs its threads (see
 * cmd/bench-int.h): in the cgroup the process is in, or, where that is the
 * root memory cgroup, in a child made for the run. A task of the root
 * memory cgroup is not charged as the tasks of every other cgroup are (the
 * root has no counters or limits to keep), and every real task runs in a
 * child: a measure taken in the root would not be what memcg costs them.
 * Live system only: the host's /proc and /sys, never a --root. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd/bench-int.h"
#include "io/rootfs.h"
#include "lib/diag.h"
#include "lib/util.h"

#define CHILD_PREFIX "memcg-policy-bench."

/* A small file of the host's /proc or cgroup file system; NULL if it
 * cannot be read. */
static char *read_small(const char *path)
{
	char *text = NULL;
	return read_host_file(path, 1u << 20, &text, NULL) == 0 ? text : NULL;
}

/* Writes text to a cgroup file: 0 or -errno. */
static int write_small(const char *path, const char *text)
{
	_cleanup_close_ int fd = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return -errno;
	size_t n = strlen(text);
	ssize_t w = write(fd, text, n);
	if (w < 0)
		return -errno;
	return (size_t)w == n ? 0 : -EIO;
}

/* The process's memory cgroup: its path in /proc/self/cgroup and whether
 * it is on cgroup v1 (a hierarchy with the memory controller) or v2. */
static char *own_memory_cgroup(bool *v1)
{
	_cleanup_free_ char *text = read_small("/proc/self/cgroup");
	char *unified = NULL;
	for (char *line = text, *next; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		char *c1 = strchr(line, ':');
		char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
		if (!c2)
			continue;
		*c2 = '\0';
		_cleanup_free_ char *list = xasprintf(",%s,", c1 + 1);
		if (strstr(list, ",memory,")) {
			free(unified);
			*v1 = true;
			return xstrdup(c2 + 1);
		}
		if (!c1[1] && !unified)
			unified = xstrdup(c2 + 1);
	}
	*v1 = false;
	return unified;
}

/* The directory of cgroup path in its mounted hierarchy (v1: the cgroup
 * mount with the memory option; v2: the cgroup2 mount), from
 * /proc/self/mountinfo: "ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTS... -
 * FSTYPE SOURCE SUPEROPTS". NULL where none is mounted. */
static char *cgroup_dir(bool v1, const char *path)
{
	_cleanup_free_ char *text = read_small("/proc/self/mountinfo");
	for (char *line = text, *next; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		char *f[5], *save = NULL, *w = strtok_r(line, " ", &save);
		size_t n = 0;
		for (; w && n < 5; w = strtok_r(NULL, " ", &save))
			f[n++] = w;
		while (w && !streq(w, "-"))
			w = strtok_r(NULL, " ", &save);
		const char *fstype = w ? strtok_r(NULL, " ", &save) : NULL;
		(void)(fstype ? strtok_r(NULL, " ", &save) : NULL);
		const char *super = fstype ? strtok_r(NULL, " ", &save) : NULL;
		if (n < 5 || !fstype)
			continue;
		if (v1) {
			_cleanup_free_ char *opts = xasprintf(",%s,", super ? super : "");
			if (!streq(fstype, "cgroup") || !strstr(opts, ",memory,"))
				continue;
		} else if (!streq(fstype, "cgroup2")) {
			continue;
		}
		/* mountinfo escapes blanks as \040: such a mount is not ours */
		const char *root = f[3], *mnt = f[4];
		if (streq(root, "/"))
			return streq(path, "/") ? xstrdup(mnt) : xasprintf("%s%s", mnt, path);
		size_t rl = strlen(root);
		if (strncmp(path, root, rl) == 0 && (path[rl] == '/' || !path[rl]))
			return xasprintf("%s%s", mnt, path + rl);
	}
	return NULL;
}

/* Is dir the root memory cgroup? v2: the root alone has no memory.current;
 * v1: the hierarchy's top as mounted from its root. */
static bool is_root_memcg(bool v1, const char *path, const char *dir)
{
	if (v1)
		return streq(path, "/");
	_cleanup_free_ char *current = xasprintf("%s/memory.current", dir);
	return access(current, F_OK) != 0 && errno == ENOENT;
}

void bench_cgroup_enter(struct bench_cgroup *c, bool memcg_on)
{
	memset(c, 0, sizeof(*c));
	bool v1 = false;
	_cleanup_free_ char *path = own_memory_cgroup(&v1);
	if (!path) {
		c->path = xstrdup("unknown");
		c->note = xstrdup("no cgroup found in /proc/self/cgroup");
		return;
	}
	_cleanup_free_ char *dir = cgroup_dir(v1, path);
	if (!memcg_on || !dir || !is_root_memcg(v1, path, dir)) {
		c->path = TAKE_PTR(path);
		c->note = xstrdup(!memcg_on ? "memcg is off: nothing charges it"
				  : !dir    ? "its hierarchy is not mounted: where it is"
					    : "its own cgroup, where memcg charges it as any task");
		return;
	}
	/* the root memory cgroup: a child for the run */
	int r = 0;
	c->root_procs = xasprintf("%s/cgroup.procs", dir);
	c->root_control = xasprintf("%s/cgroup.subtree_control", dir);
	if (!v1) {
		_cleanup_free_ char *ctl = read_small(c->root_control);
		_cleanup_free_ char *list = xasprintf(" %s ", ctl ? ctl : "");
		for (char *p = list; *p; p++)
			if (*p == '\n')
				*p = ' ';
		if (!strstr(list, " memory ")) {
			r = write_small(c->root_control, "+memory");
			c->enabled_memory = r == 0;
		}
	}
	_cleanup_free_ char *name = xasprintf(CHILD_PREFIX "%ld", (long)getpid());
	_cleanup_free_ char *child = path_join(dir, name);
	if (r == 0 && mkdir(child, 0755) < 0)
		r = -errno;
	if (r == 0) {
		c->made = TAKE_PTR(child);
		_cleanup_free_ char *procs = path_join(c->made, "cgroup.procs");
		_cleanup_free_ char *pid = xasprintf("%ld\n", (long)getpid());
		r = write_small(procs, pid);
	}
	if (r < 0) {
		errno = -r;
		diag_warn("bench: cannot make a cgroup for the run in %s: %m: the threads run in the root memory "
			  "cgroup, which memcg does not charge as it charges every other",
			  dir);
		bench_cgroup_leave(c);
		c->path = xstrdup(path);
		c->note = xstrdup("the root memory cgroup: a cgroup for the run could not be made");
		return;
	}
	/* where it is now, as the kernel says it */
	bool v1_again = v1;
	c->path = own_memory_cgroup(&v1_again);
	if (!c->path)
		c->path = xstrdup("unknown");
	c->note = xstrdup("made for the run: the process was in the root memory cgroup, which memcg does not charge "
			  "as it charges every other");
}

void bench_cgroup_leave(struct bench_cgroup *c)
{
	if (c->made) {
		_cleanup_free_ char *pid = xasprintf("%ld\n", (long)getpid());
		if (c->root_procs)
			(void)write_small(c->root_procs, pid);
		if (rmdir(c->made) < 0 && errno != ENOENT)
			diag_warn("bench: cannot remove the run's cgroup %s: %m", c->made);
	}
	if (c->enabled_memory && c->root_control)
		(void)write_small(c->root_control, "-memory"); /* as it was, where no other child needs it */
	free(c->made);
	free(c->root_procs);
	free(c->root_control);
	c->made = c->root_procs = c->root_control = NULL;
	c->enabled_memory = false;
}

void bench_cgroup_free(struct bench_cgroup *c)
{
	bench_cgroup_leave(c);
	free(c->path);
	free(c->note);
	c->path = c->note = NULL;
}
