/* io/txn.c - whole-file replacements made durable together, see io/txn.h.
 *
 * A commit runs in phases so that a failure anywhere before the renames
 * leaves every target untouched, and one after leaves what rollback can put
 * back:
 *   prepare  resolve each target inside the root (following symlinks inside
 *            it), refuse what is not a regular file, read the old content
 *            and its stat; nothing is written in this phase except missing
 *            parent directories of new files;
 *   write    one temp file per changed file, written in full, owner then
 *            mode of the old file (on FAT under an 8.3 name: tmp_create);
 *   sync     one syncfs(2) per file system the temp files are on: the
 *            temp files become durable together (an fsync each costs
 *            ten times as much for a hundred BLS entries);
 *   rename   renameat of every temp file over its target (on FAT one at a
 *            time, each with its syncs: fat_place), then the unlinks;
 *   dirsync  fsync of each distinct directory touched, once.
 * Directories are opened O_RDONLY (not O_PATH): fsync needs a real
 * descriptor. Temp files are closed after their write and reopened
 * read-only for the sync pass, so that a transaction of a thousand BLS
 * entries does not hold a thousand descriptors.
 *
 * The directories are in io/txn-dir.c; the temp files (creation, owner and
 * mode, leftovers of a killed run) in io/txn-tmp.c; one file written alone
 * (write_file_atomic, write_host_file_atomic) in io/txn-one.c. */
#include "io/txn.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "lib/diag.h"
#include "io/readcache.h"
#include "io/txn-int.h"

#define MAX_SYMLINKS 40

/* ---- fault injection (test only) ---- */

static unsigned steps_taken;
static unsigned fail_at, crash_at;
static bool points_read;

static unsigned env_uint(const char *name)
{
	const char *s = getenv(name);
	if (!s || !*s)
		return 0;
	char *end;
	errno = 0;
	unsigned long v = strtoul(s, &end, 10);
	if (errno || *end || v > UINT_MAX)
		return 0;
	return (unsigned)v;
}

static void read_points(void)
{
	fail_at = env_uint("MEMCG_POLICY_FAILPOINT");
	crash_at = env_uint("MEMCG_POLICY_CRASHPOINT");
	points_read = true;
}

void txn_failpoints_from_env(void)
{
	read_points();
	steps_taken = 0;
}

unsigned txn_steps(void) { return steps_taken; }

/* Called right before each step; -1 with errno EIO when the step is to fail. */
static int step(void)
{
	if (!points_read)
		read_points();
	steps_taken++;
	if (crash_at && steps_taken == crash_at)
		raise(SIGKILL);
	if (fail_at && steps_taken == fail_at) {
		errno = EIO;
		return -1;
	}
	return 0;
}

/* ---- the transaction ---- */

void txn_init(struct txn *t, const struct root *r)
{
	memset(t, 0, sizeof(*t));
	t->root = r;
}

static void file_reset(struct txn_file *f)
{
	free(f->name);
	f->name = NULL;
	free(f->tmpname);
	f->tmpname = NULL;
	free(f->old);
	f->old = NULL;
	f->old_len = 0;
	free(f->old_st);
	f->old_st = NULL;
	if (f->old_xattrs)
		xattrs_free(f->old_xattrs);
	free(f->old_xattrs);
	f->old_xattrs = NULL;
	f->dirfd = -1;
	f->dir = NULL;
	f->existed = f->unchanged = f->renamed = false;
}

static const char *file_path(const void *ctx, size_t i) { return ((const struct txn *)ctx)->files[i].path; }

static struct txn_file *file_slot(struct txn *t, const char *path)
{
	size_t i = str_index_find(&t->by_path, path, t->n, file_path, t);
	if (i != SIZE_MAX) {
		free(t->files[i].data);
		t->files[i].data = NULL;
		return &t->files[i];
	}
	if (t->n == t->cap) {
		t->cap = t->cap ? t->cap * 2 : 16;
		t->files = xrealloc(t->files, t->cap * sizeof(*t->files));
	}
	struct txn_file *f = &t->files[t->n++];
	memset(f, 0, sizeof(*f));
	f->dirfd = -1;
	f->path = xstrdup(path);
	return f;
}

void txn_add(struct txn *t, const char *path, const char *data, size_t len, mode_t new_mode)
{
	struct txn_file *f = file_slot(t, path);
	f->mode = new_mode;
	if (!data) {
		f->len = 0;
		return;
	}
	f->data = xmalloc(len + 1);
	if (len)
		memcpy(f->data, data, len);
	f->data[len] = '\0';
	f->len = len;
}

void txn_delete(struct txn *t, const char *path) { txn_add(t, path, NULL, 0, 0); }

void txn_add_record(struct txn *t, const char *path, const char *data, size_t len, enum txn_order order)
{
	txn_add(t, path, data, len, 0600);
	size_t i = str_index_find(&t->by_path, path, t->n, file_path, t);
	if (i != SIZE_MAX) {
		t->files[i].force_mode = true;
		t->files[i].order = order;
	}
}

void txn_free(struct txn *t)
{
	for (size_t i = 0; i < t->n; i++) {
		file_reset(&t->files[i]);
		free(t->files[i].path);
		free(t->files[i].data);
	}
	free(t->files);
	t->files = NULL;
	t->n = t->cap = 0;
	str_index_reset(&t->by_path);
	dirs_close(t);
	strv_free(&t->made_dirs);
}

/* Finds the target of f inside the root and reads what it holds now. */
static int prepare(struct txn *t, struct txn_file *f)
{
	_cleanup_free_ char *disp = root_display(t->root, f->path);
	_cleanup_free_ char *cur = xstrdup(f->path);
	for (int links = 0;; links++) {
		_cleanup_free_ char *dirpath = NULL, *name = NULL;
		split_path(cur, &dirpath, &name);
		if (!*name || streq(name, ".") || streq(name, ".."))
			return diag_error(EXIT_BADINPUT, "%s: not a regular file", disp);
		int r = 0;
		struct txn_dir *d = dir_get(t, dirpath, f->data != NULL, &r);
		if (!d) {
			if (!f->data && (r == -ENOENT || r == -ENOTDIR))
				return 0; /* deleting what is not there */
			return diag_error(root_error_exit(r), "%s: cannot open the directory: %s", disp,
					  root_strerror(r));
		}
		struct stat st;
		if (fstatat(d->fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			if (errno != ENOENT)
				return diag_error(EXIT_SYSTEM, "%s: %s", disp, strerror(errno));
			f->dir = d;
			f->dirfd = d->fd;
			f->name = TAKE_PTR(name);
			return 0;
		}
		if (S_ISLNK(st.st_mode)) {
			char target[PATH_MAX];
			ssize_t n = links < MAX_SYMLINKS ? readlinkat(d->fd, name, target, sizeof(target) - 1) : -1;
			if (links >= MAX_SYMLINKS)
				errno = ELOOP;
			if (n < 0)
				return diag_error(EXIT_SYSTEM, "%s: %s", disp, strerror(errno));
			target[n] = '\0';
			free(cur);
			cur = target[0] == '/' ? xstrdup(target) : path_join(dirpath, target);
			continue;
		}
		if (!S_ISREG(st.st_mode))
			return diag_error(EXIT_BADINPUT, "%s: not a regular file", disp);
		f->existed = true;
		f->dir = d;
		f->dirfd = d->fd;
		f->old_xattrs = xmalloc(sizeof(*f->old_xattrs));
		/* the file this run read, by the identity of its name: its bytes
		 * and attributes as read then (io/readcache.h says why the
		 * identity is enough) */
		if (readcache_get(&st, &f->old, &f->old_len)) {
			if (readcache_get_xattrs(&st, f->old_xattrs)) {
				f->old_st = xmalloc(sizeof(*f->old_st));
				*f->old_st = st;
				f->name = TAKE_PTR(name);
				f->unchanged = f->data && f->len == f->old_len && memcmp(f->data, f->old, f->len) == 0;
				return 0;
			}
			free(f->old);
			f->old = NULL;
		}
		_cleanup_close_ int fd = openat(d->fd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
		if (fd < 0)
			return diag_error(EXIT_SYSTEM, "%s: cannot open: %s", disp, strerror(errno));
		f->old_st = xmalloc(sizeof(*f->old_st));
		struct timespec since = readcache_clock();
		if (fstat(fd, f->old_st) < 0)
			return diag_error(EXIT_SYSTEM, "%s: %s", disp, strerror(errno));
		if (!S_ISREG(f->old_st->st_mode))
			return diag_error(EXIT_BADINPUT, "%s: not a regular file", disp);
		/* the evaluation's bytes, where the file is still the one it read */
		r = read_fd_stat(fd, f->old_st, since, MAX_INPUT_FILE, &f->old, &f->old_len);
		if (r < 0)
			return diag_error(EXIT_SYSTEM, "%s: cannot read: %s", disp, strerror(-r));
		if (!readcache_get_xattrs(f->old_st, f->old_xattrs)) {
			r = xattrs_read(fd, f->old_xattrs);
			if (r < 0)
				return diag_error(EXIT_SYSTEM, "%s: cannot read its extended attributes: %s", disp,
						  strerror(-r));
		}
		f->name = TAKE_PTR(name);
		f->unchanged = f->data && f->len == f->old_len && memcmp(f->data, f->old, f->len) == 0;
		return 0;
	}
}

static mode_t file_mode(const struct txn_file *f)
{
	if (f->force_mode)
		return f->mode & 07777;
	if (f->existed)
		return f->old_st->st_mode & 07777;
	return f->mode ? f->mode & 07777 : 0644;
}

/* Rollback: writes the old content back the atomic way (no steps). */
static int restore_old(struct txn_file *f)
{
	_cleanup_free_ char *tn = NULL;
	int fd = tmp_create(f->dirfd, f->dir->fat, f->name, file_mode(f), &tn);
	if (fd < 0)
		return fd;
	if (!tn) {
		close(fd);
		return -EINVAL;
	}
	int r = write_all(fd, f->old, f->old_len);
	if (r == 0)
		r = set_owner_mode(fd, file_mode(f), f->old_st, NULL);
	const char *failed = NULL;
	if (r == 0 && f->old_xattrs)
		r = xattrs_apply(fd, f->old_xattrs, &failed);
	if (r == 0 && fsync(fd) < 0)
		r = -errno;
	if (close(fd) < 0 && r == 0)
		r = -errno;
	if (r == 0 && renameat(f->dirfd, tn, f->dirfd, f->name) < 0)
		r = -errno;
	if (r < 0)
		(void)unlinkat(f->dirfd, tn, 0);
	return r;
}

static void rollback(struct txn *t)
{
	for (size_t i = 0; i < t->n; i++) {
		struct txn_file *f = &t->files[i];
		if (f->tmpname) {
			(void)unlinkat(f->dirfd, f->tmpname, 0);
			free(f->tmpname);
			f->tmpname = NULL;
		}
	}
	for (size_t i = t->n; i-- > 0;) {
		struct txn_file *f = &t->files[i];
		if (!f->renamed)
			continue;
		int r;
		if (f->existed)
			r = restore_old(f);
		else
			r = unlinkat(f->dirfd, f->name, 0) < 0 ? -errno : 0;
		if (r < 0) {
			_cleanup_free_ char *disp = root_display(t->root, f->path);
			diag_warn("%s: could not put the old file back: %s", disp, strerror(-r));
		}
		f->renamed = false;
		f->dir->touched = true;
	}
	for (size_t i = 0; i < t->n_dirs; i++)
		if (t->dirs[i]->touched)
			(void)fsync(t->dirs[i]->fd);
	for (size_t i = t->made_dirs.n; i-- > 0;) {
		_cleanup_free_ char *parent = NULL, *name = NULL;
		split_path(t->made_dirs.v[i], &parent, &name);
		_cleanup_close_ int pfd = root_openat(t->root, parent, O_RDONLY | O_DIRECTORY, 0);
		if (pfd >= 0 && unlinkat(pfd, name, AT_REMOVEDIR) == 0)
			(void)fsync(pfd);
	}
	strv_free(&t->made_dirs);
}

static int fail(struct txn *t, const char *path, const char *what, int err)
{
	_cleanup_free_ char *disp = root_display(t->root, path);
	int r = diag_error(EXIT_SYSTEM, "%s: %s: %s", disp, what, strerror(err));
	rollback(t);
	return r;
}

/* FAT has no journal and Linux keeps no order among its metadata writes.
 * A rename over a file there takes three writes: the target's directory
 * entry gets the new first cluster and size (only when the renamed file's
 * inode is written back: a directory's fsync does not do that), the temp
 * file's entry is removed (the directory's fsync), and the old file's
 * clusters are freed in the FAT (when its inode goes, at the rename, unless
 * it is still open). Any cut between a free and the entry that drops the
 * old clusters leaves the target naming free clusters (fsck.fat truncates
 * it to nothing); one between the target's entry and the temp's removal
 * leaves two names on one cluster chain (seen in tests/powerloss). So on
 * FAT each rename goes alone, in the one safe order: the old file held
 * open (its clusters stay allocated), rename, the directory synced (the
 * temp's name is gone, the target still the old file), the renamed file
 * synced (the target is the new file), then the old file let go (its
 * clusters freed in memory, written by the next sync). A cut anywhere
 * leaves every name on its own data, old or new; at worst the clusters of
 * the file that lost its name stay allocated until fsck.fat reclaims them. */
static int fat_place(struct txn_file *f)
{
	int hold = openat(f->dirfd, f->name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	int r = -1, fd = -1;
	if (step() < 0 || renameat(f->dirfd, f->tmpname, f->dirfd, f->name) < 0)
		goto out;
	free(f->tmpname);
	f->tmpname = NULL;
	f->renamed = true;
	if (step() < 0 || fsync(f->dir->fd) < 0 || step() < 0)
		goto out;
	fd = openat(f->dirfd, f->name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd >= 0)
		r = fsync(fd);
out:;
	int e = errno;
	if (fd >= 0)
		close(fd);
	if (hold >= 0)
		close(hold);
	errno = e;
	return r;
}

/* One phase of the renames: the files of that order renamed, the deleted
 * ones unlinked, each directory touched synced once. */
static int place(struct txn *t, enum txn_order order)
{
	for (size_t i = 0; i < t->n; i++) {
		struct txn_file *f = &t->files[i];
		if (!f->tmpname || f->order != order)
			continue;
		if (f->dir->fat) {
			int r = fat_place(f);
			if (f->renamed)
				f->dir->touched = f->dir->pending = true;
			if (r < 0)
				return fail(t, f->path,
					    f->renamed ? "cannot sync the renamed file"
						       : "cannot rename the temporary file into place",
					    errno);
			continue;
		}
		if (step() < 0 || renameat(f->dirfd, f->tmpname, f->dirfd, f->name) < 0)
			return fail(t, f->path, "cannot rename the temporary file into place", errno);
		free(f->tmpname);
		f->tmpname = NULL;
		f->renamed = true;
		f->dir->touched = f->dir->pending = true;
	}
	for (size_t i = 0; i < t->n; i++) {
		struct txn_file *f = &t->files[i];
		if (f->data || !f->existed || f->order != order)
			continue;
		if (step() < 0 || unlinkat(f->dirfd, f->name, 0) < 0)
			return fail(t, f->path, "cannot delete", errno);
		f->renamed = true;
		f->dir->touched = f->dir->pending = true;
	}
	for (size_t i = 0; i < t->n_dirs; i++) {
		struct txn_dir *d = t->dirs[i];
		if (!d->pending)
			continue;
		bool seen = false;
		for (size_t j = 0; j < i; j++)
			if (t->dirs[j]->pending && t->dirs[j]->dev == d->dev && t->dirs[j]->ino == d->ino)
				seen = true;
		if (seen)
			continue;
		if (step() < 0 || fsync(d->fd) < 0)
			return fail(t, d->path, "cannot sync the directory", errno);
	}
	for (size_t i = 0; i < t->n_dirs; i++)
		t->dirs[i]->pending = false;
	return 0;
}

static int commit(struct txn *t)
{
	bool work = false;
	for (size_t i = 0; i < t->n; i++) {
		struct txn_file *f = &t->files[i];
		file_reset(f);
		int r = prepare(t, f);
		if (r < 0) {
			rollback(t);
			return r;
		}
		if (f->data ? !f->unchanged : f->existed)
			work = true;
	}
	if (!work)
		return 0;

	for (size_t i = 0; i < t->n; i++) {
		struct txn_file *f = &t->files[i];
		if (f->data && !f->unchanged)
			dir_clean(t, f->dir);
		else if (!f->data && f->existed)
			dir_clean(t, f->dir);
	}

	/* write */
	for (size_t i = 0; i < t->n; i++) {
		struct txn_file *f = &t->files[i];
		if (!f->data || f->unchanged)
			continue;
		int fd = tmp_create(f->dirfd, f->dir->fat, f->name, file_mode(f), &f->tmpname);
		if (fd < 0)
			return fail(t, f->path, "cannot create a temporary file", -fd);
		int r = step() < 0 ? -errno : write_all(fd, f->data, f->len);
		const char *what = "cannot write";
		if (r == 0) {
			r = set_owner_mode(fd, file_mode(f), f->existed ? f->old_st : NULL, f->dir);
			what = "cannot set owner and mode";
		}
		_cleanup_free_ char *xwhat = NULL;
		const char *failed = NULL;
		if (r == 0 && f->existed && f->old_xattrs) {
			r = xattrs_apply(fd, f->old_xattrs, &failed);
			if (r < 0) {
				xwhat = xasprintf("cannot keep the extended attribute %s", failed ? failed : "");
				what = xwhat;
			}
		}
		if (close(fd) < 0 && r == 0) {
			r = -errno;
			what = "cannot write";
		}
		if (r < 0)
			return fail(t, f->path, what, -r);
	}

	/* make the temp files durable: one syncfs per file system */
	for (size_t i = 0; i < t->n; i++) {
		struct txn_file *f = &t->files[i];
		if (!f->tmpname)
			continue;
		bool seen = false;
		for (size_t j = 0; j < i && !seen; j++)
			seen = t->files[j].tmpname && t->files[j].dir->dev == f->dir->dev;
		if (seen)
			continue;
		if (step() < 0 || syncfs(f->dirfd) < 0)
			return fail(t, f->path, "cannot sync the file system", errno);
	}

	/* rename, then unlink, then sync the directories: the records to be
	 * durable before the rest first, those to follow it last */
	static const enum txn_order phases[] = { TXN_BEFORE, TXN_WITH_OTHERS, TXN_AFTER };
	for (size_t ph = 0; ph < ARRAY_SIZE(phases); ph++) {
		int r = place(t, phases[ph]);
		if (r < 0)
			return r;
	}

	for (size_t i = 0; i < t->n; i++)
		if (t->files[i].renamed)
			t->written++;
	return 0;
}

int txn_commit(struct txn *t)
{
	t->written = 0;
	strv_free(&t->made_dirs);
	int r = commit(t);
	/* descriptors do not outlive the commit */
	for (size_t i = 0; i < t->n; i++) {
		t->files[i].dirfd = -1;
		t->files[i].dir = NULL;
	}
	dirs_close(t);
	return r;
}
