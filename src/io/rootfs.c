/* io/rootfs.c - root-confined file access, see io/rootfs.h: opening (reading,
 * stat and listing through these opens: io/rootfs-files.c) */
#include "io/rootfs.h"
#include "io/rootfs-int.h"
#include "io/chroot.h"
#include "io/inputs.h"
#include "lib/util.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef SYS_openat2
#define SYS_openat2 437
#endif

static int openat2_supported = -1; /* unknown, 0 no, 1 yes */

int root_open(struct root *r, const char *path)
{
	r->chroot = path == NULL && running_in_chroot() > 0;
	r->live = path == NULL && !r->chroot;
	r->path = xstrdup(path ? path : "/");
	r->fd = open(r->path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (r->fd < 0) {
		int e = -errno;
		free(r->path);
		r->path = NULL;
		return e;
	}
	if (getenv("MEMCG_POLICY_NO_OPENAT2"))
		openat2_supported = 0;
	return 0;
}

void root_close(struct root *r)
{
	if (r->fd >= 0)
		close(r->fd);
	r->fd = -1;
	free(r->path);
	r->path = NULL;
}

char *root_display(const struct root *r, const char *path)
{
	if (r->live)
		return xstrdup(path);
	return path_join(r->path, path);
}

char *path_join(const char *a, const char *b)
{
	size_t la = strlen(a);
	while (la > 0 && a[la - 1] == '/')
		la--;
	while (*b == '/')
		b++;
	size_t lb = strlen(b);
	char *p = xmalloc(la + 1 + lb + 1);
	memcpy(p, a, la);
	p[la] = '/';
	memcpy(p + la + 1, b, lb + 1);
	return p;
}

/* The fallback walk: resolves one component at a time with O_NOFOLLOW,
 * reads symlinks itself and restarts absolute ones at the root; ".." at
 * the root stays at the root. */
#define MAX_LINKS 40

/* Closes the walk's directory descriptors and returns result. */
static int close_walk(int dfd, const int *stack, int depth, int result)
{
	int saved = errno;
	close(dfd);
	while (depth > 0)
		close(stack[--depth]);
	errno = saved;
	return result;
}

static int walk_open(int rootfd, const char *path, int flags, mode_t mode)
{
	_cleanup_free_ char *todo = xstrdup(path);
	int links = 0;
	int dfd = fcntl(rootfd, F_DUPFD_CLOEXEC, 3);
	if (dfd < 0)
		return -errno;
	/* stack of directory descriptors to support ".." */
	int stack[256];
	int depth = 0;
	char *p = todo;

	for (;;) {
		while (*p == '/')
			p++;
		if (!*p) {
			/* the path names a directory */
			if (flags & O_CREAT)
				return close_walk(dfd, stack, depth, -EISDIR);
			int fd = openat(dfd, ".", (flags & ~(O_NOFOLLOW)) | O_CLOEXEC, mode);
			return close_walk(dfd, stack, depth, fd < 0 ? -errno : fd);
		}
		char *slash = strchr(p, '/');
		char *rest = NULL;
		if (slash) {
			*slash = '\0';
			rest = slash + 1;
			while (*rest == '/')
				rest++;
			if (!*rest)
				rest = NULL;
		}
		if (streq(p, ".")) {
			p = rest ? rest : p + strlen(p);
			continue;
		}
		if (streq(p, "..")) {
			if (depth > 0) {
				close(dfd);
				dfd = stack[--depth];
			}
			p = rest ? rest : p + strlen(p);
			continue;
		}
		bool last = rest == NULL;
		/* a symlink is read and spliced in (absolute ones restart at
		 * the root), unless it is the last component and the caller
		 * asked for O_NOFOLLOW */
		char target[4096];
		ssize_t n = readlinkat(dfd, p, target, sizeof(target) - 1);
		if (n >= 0 && !(last && (flags & O_NOFOLLOW))) {
			target[n] = '\0';
			if (++links > MAX_LINKS)
				return close_walk(dfd, stack, depth, -ELOOP);
			char *joined = xasprintf("%s%s%s", target, rest ? "/" : "", rest ? rest : "");
			if (target[0] == '/') {
				close(dfd);
				while (depth > 0)
					close(stack[--depth]);
				dfd = fcntl(rootfd, F_DUPFD_CLOEXEC, 3);
				if (dfd < 0) {
					free(joined);
					return -errno;
				}
			}
			free(todo);
			todo = joined;
			p = todo;
			continue;
		}
		int fd;
		if (last)
			fd = openat(dfd, p, flags | O_NOFOLLOW | O_CLOEXEC, mode);
		else
			fd = openat(dfd, p, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			return close_walk(dfd, stack, depth, -errno);
		if (last)
			return close_walk(dfd, stack, depth, fd);
		if (depth == (int)ARRAY_SIZE(stack)) {
			close(fd);
			return close_walk(dfd, stack, depth, -ENAMETOOLONG);
		}
		stack[depth++] = dfd;
		dfd = fd;
		p = rest;
	}
}

/* openat2(RESOLVE_IN_ROOT) fails with EAGAIN when a rename anywhere on
 * the system races a ".." step of the lookup. It is retried this many
 * times; then the component walk resolves the path (it needs no retry). */
#define OPENAT2_RETRIES 64
static unsigned long eagain_seen;

unsigned long root_openat2_eagain_count(void) { return eagain_seen; }

static unsigned eagain_injected;

void root_openat2_inject_eagain(unsigned n) { eagain_injected = n; }

/* Resolves path inside the root with flags as given (no type check). */
static int resolve(const struct root *r, const char *path, int flags, mode_t mode)
{
	if (openat2_supported != 0) {
		struct open_how how = {
			.flags = (unsigned long long)(flags | O_CLOEXEC),
			.mode = (flags & (O_CREAT | O_TMPFILE)) ? mode : 0,
			.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
		};
		const char *rel = path;
		while (*rel == '/')
			rel++;
		if (!*rel)
			rel = ".";
		for (unsigned attempt = 0;; attempt++) {
			long fd;
			if (eagain_injected) {
				eagain_injected--;
				errno = EAGAIN;
				fd = -1;
			} else {
				fd = syscall(SYS_openat2, r->fd, rel, &how, sizeof(how));
			}
			if (fd >= 0) {
				openat2_supported = 1;
				return (int)fd;
			}
			if (errno != EAGAIN)
				break;
			eagain_seen++;
			if (attempt >= OPENAT2_RETRIES)
				return walk_open(r->fd, path, flags, mode);
		}
		if (errno != ENOSYS && errno != EPERM)
			return -errno;
		if (errno == EPERM && openat2_supported == 1)
			return -EPERM;
		openat2_supported = 0;
	}
	return walk_open(r->fd, path, flags, mode);
}

/* The device of the running kernel's devtmpfs: /dev when it is a mount
 * of its own with tmpfs' magic (devtmpfs reports it), else none (a chroot
 * or container whose /dev is a plain directory). */
static dev_t devtmpfs_dev(void)
{
	static dev_t dev = (dev_t)-1;
	static bool known;
	if (!known) {
		struct stat d, top;
		struct statfs sfs;
		if (stat("/dev", &d) == 0 && S_ISDIR(d.st_mode) && stat("/", &top) == 0 && d.st_dev != top.st_dev &&
		    statfs("/dev", &sfs) == 0 && (unsigned long)sfs.f_type == TMPFS_MAGIC)
			dev = d.st_dev;
		known = true;
	}
	return dev;
}

/* The f_type of each file system seen, by device: a file system's type
 * does not change while it is mounted, so one fstatfs per file system, not
 * per file, answers for every file on it. */
#define FS_TYPES_KEPT 32
static struct {
	dev_t dev;
	long type;
} fs_types[FS_TYPES_KEPT];
static size_t n_fs_types;

long root_fs_type(int fd, dev_t dev)
{
	for (size_t i = 0; i < n_fs_types; i++)
		if (fs_types[i].dev == dev)
			return fs_types[i].type;
	struct statfs sfs;
	if (fstatfs(fd, &sfs) < 0)
		return -1;
	if (n_fs_types < FS_TYPES_KEPT)
		fs_types[n_fs_types++] = (__typeof__(fs_types[0])){ dev, (long)sfs.f_type };
	return (long)sfs.f_type;
}

/* File systems that are the running kernel's, never an image's: reached
 * from a root (the host's /proc mounted into it for a chroot, an image's
 * symlink to /proc/cmdline), they would pull the host into the image's
 * decision. devtmpfs reports tmpfs' magic: it is told by its device (and
 * never when the root itself lies on it). */
static bool is_pseudo_fs(const struct root *r, int fd, const struct stat *st)
{
	static const unsigned long magics[] = {
		PROC_SUPER_MAGIC,
		SYSFS_MAGIC,
		DEBUGFS_MAGIC,
		TRACEFS_MAGIC,
		SECURITYFS_MAGIC,
		DEVPTS_SUPER_MAGIC,
		CGROUP_SUPER_MAGIC,
		CGROUP2_SUPER_MAGIC,
		BPF_FS_MAGIC,
		PSTOREFS_MAGIC,
		EFIVARFS_MAGIC,
		SELINUX_MAGIC,
		SMACK_MAGIC,
		BINFMTFS_MAGIC,
		NSFS_MAGIC,
		USBDEVICE_SUPER_MAGIC,
		0x62656570 /* configfs */,
		0x65735543 /* fusectl */,
	};
	long type = root_fs_type(fd, st->st_dev);
	if (type == -1)
		return true;
	for (size_t i = 0; i < ARRAY_SIZE(magics); i++)
		if ((unsigned long)type == magics[i])
			return true;
	dev_t dev = devtmpfs_dev();
	if (dev == (dev_t)-1 || st->st_dev != dev)
		return false;
	struct stat top;
	return fstat(r->fd, &top) < 0 || top.st_dev != dev;
}

/* Opens the file that the O_PATH descriptor pfd names with flags, without
 * resolving its path again: through /proc/self/fd where there is a /proc
 * (the magic link is the descriptor's own file: nothing to check), else by
 * path, and then it must still be the same file. */
int root_reopen(const struct root *r, int pfd, const struct stat *st, const char *path, int flags)
{
	int f = flags & ~(O_CREAT | O_EXCL | O_NOFOLLOW | O_DIRECTORY | O_PATH);
	char proc[64];
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", pfd);
	int fd = open(proc, f | O_CLOEXEC);
	if (fd >= 0)
		return fd;
	if (errno != ENOENT)
		return -errno;
	fd = resolve(r, path, f | (flags & O_NOFOLLOW), 0);
	if (fd < 0)
		return fd;
	struct stat now;
	if (fstat(fd, &now) < 0 || now.st_dev != st->st_dev || now.st_ino != st->st_ino) {
		close(fd);
		return -EAGAIN;
	}
	return fd;
}

/* The O_PATH descriptor of path (flags: O_NOFOLLOW, O_DIRECTORY), its stat
 * in *st, refused with -EXDEV on a pseudo file system with --root. */
int root_open_path(const struct root *r, const char *path, int flags, struct stat *st)
{
	int how = flags & (O_NOFOLLOW | O_DIRECTORY);
	int pfd = resolve(r, path, O_PATH | how, 0);
	if (pfd < 0) {
		if (inputs_noting())
			inputs_note(path, how, pfd, NULL, -1, false);
		return pfd;
	}
	int e = fstat(pfd, st) < 0 ? -errno : 0;
	if (e == 0 && !r->live && is_pseudo_fs(r, pfd, st))
		e = -EXDEV;
	if (inputs_noting())
		inputs_note(path, how, e, st, e == 0 ? root_fs_type(pfd, st->st_dev) : -1,
			    (flags & O_DIRECTORY) && !(flags & O_PATH));
	if (e < 0) {
		close(pfd);
		return e;
	}
	return pfd;
}

bool root_inputs_unchanged(const struct root *r)
{
	size_t n;
	bool usable;
	const struct input *v = inputs_list(&n, &usable);
	if (!usable)
		return false;
	for (size_t i = 0; i < n; i++) {
		struct stat st = { 0 };
		int pfd = root_open_path(r, v[i].path, v[i].flags, &st);
		if (pfd >= 0)
			close(pfd);
		if (!input_same(&v[i], pfd < 0 ? pfd : 0, &st))
			return false;
	}
	return true;
}

/* -EISDIR, -EINVAL or 0: what a regular-file open says of the type. */
int root_regular_only(const struct stat *st)
{
	return S_ISDIR(st->st_mode) ? -EISDIR : !S_ISREG(st->st_mode) ? -EINVAL : 0;
}

int root_openat(const struct root *r, const char *path, int flags, mode_t mode)
{
	struct stat st;
	return root_openat_st(r, path, flags, mode, &st);
}

int root_openat_st(const struct root *r, const char *path, int flags, mode_t mode, struct stat *out)
{
	bool want_dir = flags & O_DIRECTORY;
	/* first an O_PATH descriptor: opening it never blocks and never
	 * reaches a driver; the type is checked on it */
	for (int tries = 0;; tries++) {
		struct stat st;
		int pfd = root_open_path(r, path, flags, &st);
		if (pfd == -ENOENT && (flags & O_CREAT)) {
			int fd = resolve(r, path, (flags | O_EXCL | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY) & ~O_DIRECTORY,
					 mode);
			if (fd >= 0 && fstat(fd, out) < 0) {
				int e = -errno;
				close(fd);
				return e;
			}
			if (fd != -EEXIST || (flags & O_EXCL) || tries > 3)
				return fd;
			continue; /* made by someone else meanwhile: check it */
		}
		if (pfd < 0)
			return pfd;
		*out = st;
		if (flags & O_PATH)
			return pfd;
		int e = want_dir ? 0 : root_regular_only(&st);
		if (e == 0 && (flags & O_CREAT) && (flags & O_EXCL))
			e = -EEXIST;
		if (e < 0) {
			close(pfd);
			return e;
		}
		int fd = root_reopen(r, pfd, &st, path, flags | (want_dir ? O_DIRECTORY : O_NONBLOCK | O_NOCTTY));
		close(pfd);
		if (fd == -EAGAIN && tries < 3)
			continue; /* replaced between the two opens */
		return fd;
	}
}

const char *root_strerror(int e)
{
	switch (e) {
	case -EINVAL:
	case -EISDIR: return "not a regular file";
	case -EXDEV:
		return "on a pseudo file system of the running kernel (proc, sysfs, devtmpfs...): refused with --root";
	default: return strerror(-e);
	}
}

int root_error_exit(int e)
{
	return e == -EINVAL || e == -EISDIR || e == -EXDEV || e == -ELOOP || e == -EFBIG ? EXIT_BADINPUT : EXIT_SYSTEM;
}
