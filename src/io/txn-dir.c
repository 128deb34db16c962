/* io/txn-dir.c - the directories a transaction works in (see io/txn.h and
 * io/txn.c): a path split into directory and name, each directory opened once
 * per commit (O_RDONLY, for fsync), missing parents of a new file created
 * and recorded for rollback. */
#include "io/txn-int.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- small helpers ---- */

/* "/a/b/c" -> "/a/b" and "c"; "/c" -> "/" and "c"; "c" -> "/" and "c". */
void split_path(const char *path, char **dir, char **name)
{
	const char *slash = strrchr(path, '/');
	if (!slash) {
		*dir = xstrdup("/");
		*name = xstrdup(path);
		return;
	}
	*name = xstrdup(slash + 1);
	const char *end = slash;
	while (end > path && end[-1] == '/')
		end--;
	*dir = end == path ? xstrdup("/") : xstrndup(path, (size_t)(end - path));
}

/* ---- directories ---- */

static struct txn_dir *dir_find(struct txn *t, const char *path)
{
	for (size_t i = 0; i < t->n_dirs; i++)
		if (streq(t->dirs[i]->path, path))
			return t->dirs[i];
	return NULL;
}

void dirs_close(struct txn *t)
{
	for (size_t i = 0; i < t->n_dirs; i++) {
		if (t->dirs[i]->fd >= 0)
			close(t->dirs[i]->fd);
		free(t->dirs[i]->path);
		free(t->dirs[i]);
	}
	free(t->dirs);
	t->dirs = NULL;
	t->n_dirs = 0;
}

/* mkdir -p inside the root; records what it made. */
static int mkdir_p(struct txn *t, const char *path)
{
	int fd = root_openat(t->root, path, O_PATH | O_DIRECTORY, 0);
	if (fd >= 0) {
		close(fd);
		return 0;
	}
	if (fd != -ENOENT)
		return fd;
	_cleanup_free_ char *parent = NULL, *name = NULL;
	split_path(path, &parent, &name);
	if (!*name || streq(name, ".") || streq(name, ".."))
		return -ENOENT;
	int r = mkdir_p(t, parent);
	if (r < 0)
		return r;
	_cleanup_close_ int pfd = root_openat(t->root, parent, O_RDONLY | O_DIRECTORY, 0);
	if (pfd < 0)
		return pfd;
	if (mkdirat(pfd, name, 0755) < 0)
		return errno == EEXIST ? 0 : -errno;
	strv_pushdup(&t->made_dirs, path);
	/* the new directory's entry must be durable with the files in it */
	if (fsync(pfd) < 0)
		return -errno;
	return 0;
}

/* The directory at path, opened once per commit; NULL and *err on failure. */
struct txn_dir *dir_get(struct txn *t, const char *path, bool create, int *err)
{
	struct txn_dir *d = dir_find(t, path);
	if (d)
		return d;
	struct stat st;
	int fd = root_openat_st(t->root, path, O_RDONLY | O_DIRECTORY, 0, &st);
	if (fd == -ENOENT && create) {
		int r = mkdir_p(t, path);
		fd = r < 0 ? r : root_openat_st(t->root, path, O_RDONLY | O_DIRECTORY, 0, &st);
	}
	if (fd < 0) {
		*err = fd;
		return NULL;
	}
	d = xcalloc(1, sizeof(*d));
	d->path = xstrdup(path);
	d->fd = fd;
	d->dev = st.st_dev;
	d->ino = st.st_ino;
	d->fat = fs_is_fat(fd);
	t->dirs = xrealloc(t->dirs,
			   (t->n_dirs + 1) *
				   sizeof(*t->dirs)); /* NOLINT(bugprone-sizeof-expression): an array of pointers */
	t->dirs[t->n_dirs++] = d;
	return d;
}
