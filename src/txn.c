/* txn.c - whole-file replacements made durable together, see txn.h.
 *
 * A commit runs in phases so that a failure anywhere before the renames
 * leaves every target untouched, and one after leaves what rollback can put
 * back:
 *   prepare  resolve each target inside the root (following symlinks inside
 *            it), refuse what is not a regular file, read the old content
 *            and its stat; nothing is written in this phase except missing
 *            parent directories of new files;
 *   write    one temp file per changed file, written in full, owner then
 *            mode of the old file;
 *   sync     one syncfs(2) per file system the temp files are on: the
 *            temp files become durable together (an fsync each costs
 *            ten times as much for a hundred BLS entries);
 *   rename   renameat of every temp file over its target, then the unlinks;
 *   dirsync  fsync of each distinct directory touched, once.
 * Directories are opened O_RDONLY (not O_PATH): fsync needs a real
 * descriptor. Temp files are closed after their write and reopened
 * read-only for the sync pass, so that a transaction of a thousand BLS
 * entries does not hold a thousand descriptors. */
#include "txn.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <signal.h>
#include <stdio.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#include "diag.h"
#include "extent.h"
#include "readcache.h"

#ifndef EXFAT_SUPER_MAGIC
#define EXFAT_SUPER_MAGIC 0x2011BAB0
#endif

#define TMP_MARK ".memcg-policy."
#define TMP_RAND 6
#define MAX_SYMLINKS 40

struct txn_dir {
	char *path;   /* inside the root, as opened */
	int fd;       /* O_RDONLY|O_DIRECTORY */
	dev_t dev;
	ino_t ino;
	bool touched; /* an entry was renamed or removed: fsync it */
	bool pending; /* touched in the current phase of the renames */
	bool cleaned; /* leftover temp files removed */
};

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

/* ---- small helpers ---- */

/* "/a/b/c" -> "/a/b" and "c"; "/c" -> "/" and "c"; "c" -> "/" and "c". */
static void split_path(const char *path, char **dir, char **name)
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

static int write_all(int fd, const char *data, size_t len)
{
	while (len > 0) {
		ssize_t n = write(fd, data, len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return -EIO;
		data += n;
		len -= (size_t)n;
	}
	return 0;
}

static void random_suffix(char out[TMP_RAND + 1])
{
	static const char chars[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
	unsigned char rnd[TMP_RAND];
	size_t got = 0;
	while (got < sizeof(rnd)) {
		ssize_t n = getrandom(rnd + got, sizeof(rnd) - got, GRND_NONBLOCK);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		got += (size_t)n;
	}
	if (got < sizeof(rnd)) {
		/* no entropy yet (early boot): O_EXCL still makes the name safe */
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		unsigned long long x = (unsigned long long)ts.tv_nsec ^ ((unsigned long long)getpid() << 20) ^
				       (unsigned long long)ts.tv_sec;
		for (size_t i = got; i < sizeof(rnd); i++) {
			x = x * 6364136223846793005ULL + 1442695040888963407ULL;
			rnd[i] = (unsigned char)(x >> 56);
		}
	}
	for (size_t i = 0; i < TMP_RAND; i++)
		out[i] = chars[rnd[i] % (sizeof(chars) - 1)];
	out[TMP_RAND] = '\0';
}

/* Is NAME one of our temp files (".X.memcg-policy.XXXXXX")? */
static bool is_tmp_name(const char *name)
{
	size_t len = strlen(name), mark = strlen(TMP_MARK);
	if (name[0] != '.' || len < 1 + 1 + mark + TMP_RAND)
		return false;
	const char *m = name + len - TMP_RAND - mark;
	if (memcmp(m, TMP_MARK, mark) != 0)
		return false;
	for (const char *p = m + mark; *p; p++)
		if (!((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9')))
			return false;
	return true;
}

/* Creates ".NAME.memcg-policy.XXXXXX" in dirfd (0600, O_EXCL). */
static int tmp_create(int dirfd, const char *name, char **tmpname)
{
	/* the whole name must fit NAME_MAX: cut NAME if it has to */
	int keep = (int)(NAME_MAX - 1 - strlen(TMP_MARK) - TMP_RAND);
	for (int tries = 0; tries < 100; tries++) {
		char suffix[TMP_RAND + 1];
		random_suffix(suffix);
		char *tn = xasprintf(".%.*s" TMP_MARK "%s", keep, name, suffix);
		int fd = openat(dirfd, tn, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY, 0600);
		if (fd >= 0) {
			*tmpname = tn;
			return fd;
		}
		int e = errno;
		free(tn);
		if (e != EEXIST)
			return -e;
	}
	return -EEXIST;
}

/* vfat and exfat keep no owner and only a read-only bit: chown and some
 * chmods fail with EPERM there, and that is no reason to give up. */
static bool fs_without_owners(int fd)
{
	struct statfs sfs;
	if (fstatfs(fd, &sfs) < 0)
		return false;
	return sfs.f_type == MSDOS_SUPER_MAGIC || (unsigned long)sfs.f_type == EXFAT_SUPER_MAGIC;
}

/* Owner first (chown clears set-id bits), then mode. */
static int set_owner_mode(int fd, mode_t mode, const struct stat *old)
{
	struct stat st;
	if (fstat(fd, &st) < 0)
		return -errno;
	if (old && (st.st_uid != old->st_uid || st.st_gid != old->st_gid)) {
		if (fchown(fd, old->st_uid, old->st_gid) < 0) {
			int e = errno;
			if (!(e == EPERM && fs_without_owners(fd)))
				return -e;
		}
	}
	if (fchmod(fd, mode) < 0) {
		int e = errno;
		if (!(e == EPERM && fs_without_owners(fd)))
			return -e;
	}
	return 0;
}

/* ---- directories ---- */

static struct txn_dir *dir_find(struct txn *t, const char *path)
{
	for (size_t i = 0; i < t->n_dirs; i++)
		if (streq(t->dirs[i]->path, path))
			return t->dirs[i];
	return NULL;
}

static void dirs_close(struct txn *t)
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
static struct txn_dir *dir_get(struct txn *t, const char *path, bool create, int *err)
{
	struct txn_dir *d = dir_find(t, path);
	if (d)
		return d;
	int fd = root_openat(t->root, path, O_RDONLY | O_DIRECTORY, 0);
	if (fd == -ENOENT && create) {
		int r = mkdir_p(t, path);
		fd = r < 0 ? r : root_openat(t->root, path, O_RDONLY | O_DIRECTORY, 0);
	}
	struct stat st;
	if (fd >= 0 && fstat(fd, &st) < 0) {
		int e = -errno;
		close(fd);
		fd = e;
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
	t->dirs = xrealloc(t->dirs, (t->n_dirs + 1) * sizeof(*t->dirs)); /* NOLINT(bugprone-sizeof-expression): an array of pointers */
	t->dirs[t->n_dirs++] = d;
	return d;
}

/* The first extent of DIR/NAME's data (0: none, or not a regular file). */
static uint64_t extent_at(int dirfd, const char *name)
{
	int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	struct stat st;
	uint64_t phys = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ? file_first_extent(fd) : 0;
	close(fd);
	return phys;
}

/* Removes temp files a killed run left behind in d. On FAT a power cut in
 * the middle of the rename over the target can leave both names pointing
 * at the same cluster chain (the target's entry already rewritten, the
 * temp file's not yet removed): unlinking the temp file would free the
 * clusters the target now uses. So a leftover that shares its data with
 * another file of the directory is left in place, with a warning. */
static void dir_clean(const struct txn *t, struct txn_dir *d)
{
	if (!d || d->cleaned)
		return;
	d->cleaned = true;
	int fd = openat(d->fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return;
	DIR *dir = fdopendir(fd);
	if (!dir) {
		close(fd);
		return;
	}
	struct strv tmps = { 0 }, others = { 0 };
	struct dirent *de;
	while ((de = readdir(dir))) {
		if (streq(de->d_name, ".") || streq(de->d_name, ".."))
			continue;
		strv_pushdup(is_tmp_name(de->d_name) ? &tmps : &others, de->d_name);
	}
	closedir(dir);
	uint64_t *phys = tmps.n ? xcalloc(others.n ? others.n : 1, sizeof(*phys)) : NULL;
	for (size_t i = 0; tmps.n && i < others.n; i++)
		phys[i] = extent_at(d->fd, others.v[i]);
	for (size_t i = 0; i < tmps.n; i++) {
		struct stat st;
		if (fstatat(d->fd, tmps.v[i], &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode))
			continue;
		uint64_t p = extent_at(d->fd, tmps.v[i]);
		const char *twin = NULL;
		for (size_t j = 0; p && j < others.n && !twin; j++)
			if (phys[j] == p)
				twin = others.v[j];
		if (twin) {
			_cleanup_free_ char *path = path_join(d->path, tmps.v[i]);
			_cleanup_free_ char *disp = root_display(t->root, path);
			diag_warn("%s: a temporary file left by an interrupted run shares its data with %s (a rename "
				    "cut short on FAT): left in place; check the file system (fsck.fat)",
				    esc(disp), esc(twin));
			continue;
		}
		(void)unlinkat(d->fd, tmps.v[i], 0);
	}
	free(phys);
	strv_free(&tmps);
	strv_free(&others);
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

static struct txn_file *file_slot(struct txn *t, const char *path)
{
	for (size_t i = 0; i < t->n; i++)
		if (streq(t->files[i].path, path)) {
			free(t->files[i].data);
			t->files[i].data = NULL;
			return &t->files[i];
		}
	t->files = xrealloc(t->files, (t->n + 1) * sizeof(*t->files));
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
	for (size_t i = 0; i < t->n; i++)
		if (streq(t->files[i].path, path)) {
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
	t->n = 0;
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
			return diag_error(root_error_exit(r), "%s: cannot open the directory: %s", disp, root_strerror(r));
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
		f->old_xattrs = xmalloc(sizeof(*f->old_xattrs));
		r = xattrs_read(fd, f->old_xattrs);
		if (r < 0)
			return diag_error(EXIT_SYSTEM, "%s: cannot read its extended attributes: %s", disp, strerror(-r));
		f->existed = true;
		f->dir = d;
		f->dirfd = d->fd;
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
	int fd = tmp_create(f->dirfd, f->name, &tn);
	if (fd < 0)
		return fd;
	if (!tn) {
		close(fd);
		return -EINVAL;
	}
	int r = write_all(fd, f->old, f->old_len);
	if (r == 0)
		r = set_owner_mode(fd, file_mode(f), f->old_st);
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

/* One phase of the renames: the files of that order renamed, the deleted
 * ones unlinked, each directory touched synced once. */
static int place(struct txn *t, enum txn_order order)
{
	for (size_t i = 0; i < t->n; i++) {
		struct txn_file *f = &t->files[i];
		if (!f->tmpname || f->order != order)
			continue;
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
		int fd = tmp_create(f->dirfd, f->name, &f->tmpname);
		if (fd < 0)
			return fail(t, f->path, "cannot create a temporary file", -fd);
		int r = step() < 0 ? -errno : write_all(fd, f->data, f->len);
		const char *what = "cannot write";
		if (r == 0) {
			r = set_owner_mode(fd, file_mode(f), f->existed ? f->old_st : NULL);
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

int write_file_atomic(const struct root *r, const char *path, const char *data, size_t len, mode_t new_mode)
{
	struct txn t;
	txn_init(&t, r);
	txn_add(&t, path, data, len, new_mode);
	int ret = txn_commit(&t);
	txn_free(&t);
	return ret;
}

int write_host_file_atomic(const char *path, const char *text, size_t len, mode_t mode)
{
	_cleanup_free_ char *dir = xstrdup(path);
	char *slash = strrchr(dir, '/');
	const char *name = path;
	if (slash) {
		name = slash + 1;
		if (slash == dir)
			dir[1] = '\0';
		else
			*slash = '\0';
	} else {
		free(dir);
		dir = xstrdup(".");
	}
	if (!*name)
		return diag_error(EXIT_USAGE, "%s: not a file name", path);
	struct root r;
	int e = root_open(&r, dir);
	if (e < 0)
		return diag_error(EXIT_SYSTEM, "%s: %s", dir, strerror(-e));
	_cleanup_free_ char *p = xasprintf("/%s", name);
	e = write_file_atomic(&r, p, text, len, mode);
	root_close(&r);
	return e;
}
