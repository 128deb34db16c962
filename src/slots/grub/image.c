/* slots/grub/image.c - running an image's update-grub / grub-mkconfig for
 * `apply --regenerate` with --root: the only program of an image the tool
 * ever runs. The child gets a private mount namespace (every mount
 * MS_PRIVATE, so nothing propagates to the host), the host's /dev bound at
 * IMAGE/dev, a new proc at IMAGE/proc and a read-only sysfs at IMAGE/sys,
 * then chroots into the image. The mount points are opened inside the image
 * by the parent (links resolved in the image, never on the host) and
 * mounted on through /proc/self/fd. The mounts go away with the namespace
 * when the tool and its children exit. A preflight does all of it in a
 * child that runs nothing, so that apply can refuse before writing. */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <limits.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/diag.h"
#include "slots/grub/grub-int.h"
#include "io/spawn.h"

enum step { STEP_UNSHARE, STEP_PRIVATE, STEP_DEV, STEP_PROC, STEP_SYS, STEP_CHROOT, STEP_TOOL, STEP_INTERP, STEP_N };

static const char *const mount_dirs[3] = { "/dev", "/proc", "/sys" };

struct image_ns {
	/* resolved inside the image by the parent: the host path each has
	 * now, and its inode, which the child checks after opening it again
	 * in its own namespace (a descriptor from the parent's namespace
	 * cannot be mounted on there) */
	char *path[4]; /* the root, /dev, /proc, /sys */
	dev_t dev[4];
	ino_t ino[4];
	/* preflight only: what must be executable inside the image */
	const char *tool, *interp;
	int step; /* in the child: the step that failed */
};

/* In the child: "/proc/self/fd/N" into buf (no stdio). */
static void fd_path(char *buf, int fd)
{
	static const char pre[] = "/proc/self/fd/";
	memcpy(buf, pre, sizeof(pre) - 1);
	char digits[12];
	int n = 0;
	do {
		digits[n++] = (char)('0' + fd % 10);
		fd /= 10;
	} while (fd > 0 && n < (int)sizeof(digits));
	char *p = buf + sizeof(pre) - 1;
	while (n > 0)
		*p++ = digits[--n];
	*p = '\0';
}

/* In the child: opens what the parent resolved, if it is still the same
 * directory. */
static int reopen(const struct image_ns *ns, int i)
{
	int fd = open(ns->path[i], O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	struct stat st;
	if (fstat(fd, &st) < 0 || st.st_dev != ns->dev[i] || st.st_ino != ns->ino[i]) {
		close(fd);
		return -ESTALE;
	}
	return fd;
}

/* In the child: system calls only. Returns 0 or an errno value, the failed
 * step in ns->step. */
static int ns_enter(struct image_ns *ns)
{
	static const char *const fstype[3] = { NULL, "proc", "sysfs" };
	static const unsigned long flags[3] = { MS_BIND | MS_REC, MS_NOSUID | MS_NODEV | MS_NOEXEC,
						MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_RDONLY };
	static const char *const source[3] = { "/dev", "proc", "sysfs" };
	ns->step = STEP_UNSHARE;
	if (unshare(CLONE_NEWNS) < 0)
		return errno;
	ns->step = STEP_PRIVATE;
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		return errno;
	for (int i = 0; i < 3; i++) {
		ns->step = STEP_DEV + i;
		int fd = reopen(ns, i + 1);
		if (fd < 0)
			return -fd;
		char target[40];
		fd_path(target, fd);
		int e = mount(source[i], target, fstype[i], flags[i], NULL) < 0 ? errno : 0;
		close(fd);
		if (e)
			return e;
	}
	ns->step = STEP_CHROOT;
	int fd = reopen(ns, 0);
	if (fd < 0)
		return -fd;
	int e = fchdir(fd) < 0 || chroot(".") < 0 || chdir("/") < 0 ? errno : 0;
	close(fd);
	return e;
}

static int prepare_run(void *data) { return ns_enter(data); }

static void ns_close(struct image_ns *ns)
{
	for (int i = 0; i < 4; i++)
		free(ns->path[i]);
}

/* Resolves the root and the mount points inside the image: each must be a
 * directory right under the root, not a symbolic link (opened by its one
 * name from the root's descriptor: what is mounted there already, such as
 * the proc an image builder mounted, is mounted over, never read). */
static int ns_open(const struct root *r, struct image_ns *ns)
{
	memset(ns, 0, sizeof(*ns));
	for (int i = 0; i < 4; i++) {
		const char *in = i ? mount_dirs[i - 1] : "/";
		_cleanup_close_ int fd = openat(r->fd, i ? in + 1 : ".", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			fd = -errno;
		struct stat st;
		_cleanup_free_ char *d = root_display(r, in);
		if (fd < 0) {
			ns_close(ns);
			return diag_error(
				EXIT_SYSTEM, "--regenerate: %s: %s: no directory to mount %s on for the image's tools",
				d, fd == -ENOTDIR ? "not a directory (or a symbolic link)" : strerror(-fd), in + 1);
		}
		char link[40];
		fd_path(link, fd);
		char buf[PATH_MAX];
		ssize_t n = readlink(link, buf, sizeof(buf) - 1);
		if (n <= 0 || buf[0] != '/' || fstat(fd, &st) < 0) {
			ns_close(ns);
			return diag_error(EXIT_SYSTEM, "--regenerate: %s: cannot tell where it is", d);
		}
		buf[n] = '\0';
		ns->path[i] = xstrdup(buf);
		ns->dev[i] = st.st_dev;
		ns->ino[i] = st.st_ino;
	}
	return 0;
}

/* The interpreter of a script ("#!/bin/sh -e" -> /bin/sh); NULL for a
 * binary or an unreadable file (the preflight then checks the tool only). */
static char *interpreter_of(const struct root *r, const char *tool)
{
	_cleanup_free_ char *text = NULL;
	size_t len;
	if (root_read_file(r, tool, 16u << 20, &text, &len) < 0 || len < 3 || text[0] != '#' || text[1] != '!')
		return NULL;
	const char *p = text + 2;
	while (*p == ' ' || *p == '\t')
		p++;
	size_t n = strcspn(p, " \t\n");
	return n ? xstrndup(p, n) : NULL;
}

int grub_image_preflight(const struct root *r, const char *tool)
{
	struct image_ns ns;
	int e = ns_open(r, &ns);
	if (e < 0)
		return e;
	_cleanup_free_ char *interp = interpreter_of(r, tool);
	ns.tool = tool;
	ns.interp = interp;
	int pfd[2];
	if (pipe2(pfd, O_CLOEXEC) < 0) {
		e = -errno;
		ns_close(&ns);
		return diag_error(EXIT_SYSTEM, "--regenerate: pipe: %s", strerror(-e));
	}
	fflush(stdout);
	fflush(stderr);
	pid_t pid = fork();
	if (pid < 0) {
		e = errno;
		close(pfd[0]);
		close(pfd[1]);
		ns_close(&ns);
		return diag_error(EXIT_SYSTEM, "--regenerate: fork: %s", strerror(e));
	}
	if (pid == 0) {
		int res[2] = { 0, ns_enter(&ns) };
		if (!res[1]) {
			ns.step = STEP_TOOL;
			if (access(ns.tool, X_OK) < 0)
				res[1] = errno;
		}
		if (!res[1] && ns.interp) {
			ns.step = STEP_INTERP;
			if (access(ns.interp, X_OK) < 0)
				res[1] = errno;
		}
		res[0] = ns.step;
		ssize_t _unused_ n = write(pfd[1], res, sizeof(res));
		_exit(res[1] ? 1 : 0);
	}
	close(pfd[1]);
	int res[2] = { STEP_N, EIO };
	ssize_t n;
	do
		n = read(pfd[0], res, sizeof(res));
	while (n < 0 && errno == EINTR);
	close(pfd[0]);
	int status;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	ns_close(&ns);
	if (n == (ssize_t)sizeof(res) && res[1] == 0)
		return 0;
	const char *err = strerror(res[1]);
	switch (n == (ssize_t)sizeof(res) ? res[0] : STEP_N) {
	case STEP_UNSHARE:
		return diag_error(EXIT_SYSTEM, "--regenerate: cannot create a private mount namespace: %s (needs root)",
				  err);
	case STEP_PRIVATE:
		return diag_error(EXIT_SYSTEM, "--regenerate: cannot make the mounts of the namespace private: %s",
				  err);
	case STEP_DEV:
	case STEP_PROC:
	case STEP_SYS: {
		int i = res[0] - STEP_DEV;
		if (res[1] == ESTALE)
			err = "it changed while being prepared";
		_cleanup_free_ char *d = root_display(r, mount_dirs[i]);
		return diag_error(EXIT_SYSTEM, "--regenerate: cannot mount %s on %s: %s",
				  i == 0 ? "the host's /dev" : mount_dirs[i] + 1, d, err);
	}
	case STEP_CHROOT: return diag_error(EXIT_SYSTEM, "--regenerate: cannot chroot into %s: %s", r->path, err);
	case STEP_TOOL: {
		_cleanup_free_ char *d = root_display(r, tool);
		return diag_error(EXIT_SYSTEM, "--regenerate: %s cannot be run inside the image: %s", d, err);
	}
	case STEP_INTERP: {
		_cleanup_free_ char *d = root_display(r, interp);
		return diag_error(EXIT_SYSTEM,
				  "--regenerate: %s, the interpreter of %s, cannot be run inside the image: %s", d,
				  grub_basename(tool), err);
	}
	default: return diag_error(EXIT_SYSTEM, "--regenerate: the preparation of %s failed", r->path);
	}
}

int grub_image_run(const struct root *r, const char *const *argv, const char *const *env, char **output)
{
	struct image_ns ns;
	int e = ns_open(r, &ns);
	if (e < 0)
		return e;
	int rc = spawn_run_prepared(argv, env, NULL, NULL, output, prepare_run, &ns);
	ns_close(&ns);
	return rc;
}
