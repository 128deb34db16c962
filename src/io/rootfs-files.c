/* io/rootfs-files.c - reading, stat and listing inside the root through
 * the confined opens of io/rootfs.c (see io/rootfs.h). */
#include "io/rootfs.h"
#include "io/rootfs-int.h"
#include "io/readcache.h"
#include "io/xattr.h"
#include "lib/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int read_fd(int fd, const struct stat *st, struct timespec t, size_t max, bool keep, char **out, size_t *len)
{
	int e = root_regular_only(st);
	if (e < 0)
		return e;
	if ((unsigned long long)st->st_size > max)
		return -EFBIG;
	if (keep && readcache_get(st, out, len))
		return 0;
	/* straight into a buffer of the size fstat gave (one byte more, to
	 * see the end at once; 4 KiB for the 0 of proc files); grown only
	 * if the file grew meanwhile */
	size_t cap = st->st_size > 0 ? (size_t)st->st_size + 1 : 4096, n = 0;
	if (cap > max + 1)
		cap = max + 1;
	char *buf = xmalloc(cap + 1);
	for (;;) {
		if (n == cap) {
			if (cap > max) {
				free(buf);
				return -EFBIG;
			}
			cap = cap > max / 2 ? max + 1 : cap * 2;
			buf = xrealloc(buf, cap + 1);
		}
		size_t want = cap - n;
		ssize_t r = read(fd, buf + n, want);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			e = -errno;
			free(buf);
			return e;
		}
		if (r == 0)
			break;
		n += (size_t)r;
		if (n > max) {
			free(buf);
			return -EFBIG;
		}
		/* a regular file gives less than asked only at its end (or
		 * when a signal cuts the read short, and the tool catches
		 * none while reading): no read more to see the end; a file
		 * whose size fstat does not tell (proc) is read to a 0 */
		if (st->st_size > 0 && (size_t)r < want)
			break;
	}
	buf[n] = '\0';
	/* a kept file keeps its extended attributes too, read on this
	 * descriptor: a transaction replacing it needs them (one call where
	 * it has none) */
	struct xattrs x;
	if (keep && readcache_put(root_fs_type(fd, st->st_dev), st, t, buf, n) && xattrs_read(fd, &x) == 0) {
		readcache_put_xattrs(st, &x);
		xattrs_free(&x);
	}
	if (len)
		*len = n;
	*out = buf;
	return 0;
}

int read_fd_stat(int fd, const struct stat *st, struct timespec t, size_t max, char **out, size_t *len)
{
	return read_fd(fd, st, t, max, true, out, len);
}

int read_fd_all(int fd, size_t max, char **out, size_t *len)
{
	struct timespec t = readcache_clock();
	struct stat st;
	if (fstat(fd, &st) < 0)
		return -errno;
	return read_fd_stat(fd, &st, t, max, out, len);
}

static int read_file(const struct root *r, const char *path, size_t max, bool keep, char **out, size_t *len)
{
	for (int tries = 0;; tries++) {
		struct timespec t = readcache_clock();
		struct stat st;
		_cleanup_close_ int pfd = root_open_path(r, path, 0, &st);
		if (pfd < 0)
			return pfd;
		int e = root_regular_only(&st);
		if (e < 0)
			return e;
		if ((unsigned long long)st.st_size > max)
			return -EFBIG;
		/* read before: the type check and the identity were enough */
		if (keep && readcache_get(&st, out, len))
			return 0;
		/* O_NONBLOCK: opening a FIFO must not hang (it is refused above
		 * anyway, and again by read_fd_stat) */
		_cleanup_close_ int fd = root_reopen(r, pfd, &st, path, O_RDONLY | O_NONBLOCK | O_NOCTTY);
		if (fd == -EAGAIN && tries < 3)
			continue; /* replaced between the two opens */
		if (fd < 0)
			return fd;
		return read_fd(fd, &st, t, max, keep, out, len);
	}
}

int root_read_file(const struct root *r, const char *path, size_t max, char **out, size_t *len)
{
	return read_file(r, path, max, true, out, len);
}

int root_read_file_once(const struct root *r, const char *path, size_t max, char **out, size_t *len)
{
	return read_file(r, path, max, false, out, len);
}

int read_host_file(const char *path, size_t max, char **out, size_t *len)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	return read_fd_all(fd, max, out, len);
}

static int do_stat(const struct root *r, const char *path, struct stat *st, bool follow)
{
	_cleanup_close_ int fd = root_open_path(r, path, follow ? 0 : O_NOFOLLOW, st);
	return fd < 0 ? fd : 0;
}

int root_stat(const struct root *r, const char *path, struct stat *st) { return do_stat(r, path, st, true); }
int root_lstat(const struct root *r, const char *path, struct stat *st) { return do_stat(r, path, st, false); }

bool root_exists(const struct root *r, const char *path)
{
	struct stat st;
	return root_stat(r, path, &st) == 0;
}

bool root_is_dir(const struct root *r, const char *path)
{
	struct stat st;
	return root_stat(r, path, &st) == 0 && S_ISDIR(st.st_mode);
}

bool root_is_reg(const struct root *r, const char *path)
{
	struct stat st;
	return root_stat(r, path, &st) == 0 && S_ISREG(st.st_mode);
}

int dir_fd_names(int fd, struct strv *out)
{
	/* getdents64 straight into a buffer: readdir's DIR costs an fstat
	 * and two fcntl calls a directory, and the tool lists a few on each
	 * run (the entries, the kernels, the journal's directory) */
	union {
		struct dirent64 align;
		char bytes[32768];
	} buf;
	for (;;) {
		ssize_t n = getdents64(fd, buf.bytes, sizeof(buf.bytes));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return 0;
		for (ssize_t at = 0; at < n;) {
			const struct dirent64 *de = (const struct dirent64 *)(buf.bytes + at);
			at += de->d_reclen;
			if (!streq(de->d_name, ".") && !streq(de->d_name, ".."))
				strv_pushdup(out, de->d_name);
		}
	}
}

static int cmp_names(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

int root_list_dir(const struct root *r, const char *path, const char *suffix, char ***names)
{
	*names = NULL;
	_cleanup_close_ int fd = root_openat(r, path, O_RDONLY | O_DIRECTORY, 0);
	if (fd < 0)
		return fd;
	struct strv all = { 0 }, sv = { 0 };
	int e = dir_fd_names(fd, &all);
	if (e < 0) {
		strv_free(&all);
		return e;
	}
	for (size_t i = 0; i < all.n; i++)
		if (!suffix || endswith(all.v[i], suffix))
			strv_push(&sv, TAKE_PTR(all.v[i]));
	strv_free(&all);
	if (sv.n)
		qsort(sv.v, sv.n, sizeof(char *), cmp_names);
	*names = sv.v;
	return (int)sv.n;
}

void names_free(char **names, int n)
{
	for (int i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

int root_mkdir_p(const struct root *r, const char *path, mode_t mode)
{
	if (root_is_dir(r, path))
		return 0;
	_cleanup_free_ char *parent = xstrdup(path);
	char *slash = strrchr(parent, '/');
	if (!slash)
		return -EINVAL;
	_cleanup_free_ char *base = xstrdup(slash + 1);
	if (slash == parent)
		parent[1] = '\0';
	else
		*slash = '\0';
	if (!*base)
		return -EINVAL;
	if (!streq(parent, "/")) {
		int e = root_mkdir_p(r, parent, mode);
		if (e < 0)
			return e;
	}
	_cleanup_close_ int dfd = root_openat(r, parent, O_PATH | O_DIRECTORY, 0);
	if (dfd < 0)
		return dfd;
	if (mkdirat(dfd, base, mode) < 0 && errno != EEXIST)
		return -errno;
	return 0;
}
