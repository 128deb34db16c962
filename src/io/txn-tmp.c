/* io/txn-tmp.c - the temp files of a transaction (see io/txn.h and io/txn.c):
 * ".NAME.memcg-policy.XXXXXX" (on FAT "MPXXXXXX.MCG", see tmp_create)
 * created O_EXCL beside the target, written in full, given the old file's
 * owner and mode (vfat and exfat keep none); and the leftovers of a killed
 * run removed before a directory is written, except one that shares its
 * data with another file there (FAT). */
#include "io/txn-int.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <strings.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#include "lib/diag.h"
#include "io/extent.h"
#include "io/rootfs.h"

#ifndef EXFAT_SUPER_MAGIC
#define EXFAT_SUPER_MAGIC 0x2011BAB0
#endif

#define TMP_MARK ".memcg-policy."
#define TMP_RAND 6
/* on FAT: an 8.3 name, upper case: "MP", TMP_RAND of [A-Z0-9], ".MCG" */
#define TMP_FAT_HEAD "MP"
#define TMP_FAT_EXT ".MCG"
#define TMP_FAT_LEN (sizeof(TMP_FAT_HEAD) - 1 + TMP_RAND + sizeof(TMP_FAT_EXT) - 1)

/* ---- small helpers ---- */

int write_all(int fd, const char *data, size_t len)
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

/* Random bytes for names, fetched a pool at a time: a run that writes a
 * hundred files makes one getrandom call, not a hundred. Returns how many
 * of the n wanted it could give (fewer before the pool can be filled). */
static size_t random_bytes(unsigned char *out, size_t n)
{
	static unsigned char pool[256];
	static size_t left;
	size_t got = 0;
	while (got < n) {
		if (left == 0) {
			ssize_t r = getrandom(pool, sizeof(pool), GRND_NONBLOCK);
			if (r < 0 && errno == EINTR)
				continue;
			if (r <= 0)
				break;
			left = (size_t)r;
		}
		out[got++] = pool[--left];
	}
	return got;
}

static void random_suffix(char out[TMP_RAND + 1], bool fat)
{
	static const char mixed[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
	static const char upper[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
	const char *chars = fat ? upper : mixed;
	size_t nchars = fat ? sizeof(upper) - 1 : sizeof(mixed) - 1;
	unsigned char rnd[TMP_RAND];
	size_t got = random_bytes(rnd, sizeof(rnd));
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
		out[i] = chars[rnd[i] % nchars];
	out[TMP_RAND] = '\0';
}

static bool is_alnum(char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }

/* Is NAME one of our temp files: ".X.memcg-policy.XXXXXX" anywhere, or,
 * in a FAT directory, "MPXXXXXX.MCG" in either case (vfat shows a short
 * name in lower case under shortname=lower)? */
static bool is_tmp_name(const char *name, bool fat)
{
	size_t len = strlen(name), mark = strlen(TMP_MARK);
	if (fat && len == TMP_FAT_LEN && strncasecmp(name, TMP_FAT_HEAD, strlen(TMP_FAT_HEAD)) == 0 &&
	    strcasecmp(name + len - strlen(TMP_FAT_EXT), TMP_FAT_EXT) == 0) {
		const char *r = name + strlen(TMP_FAT_HEAD);
		size_t i = 0;
		while (i < TMP_RAND && is_alnum(r[i]))
			i++;
		if (i == TMP_RAND)
			return true;
	}
	if (name[0] != '.' || len < 1 + 1 + mark + TMP_RAND)
		return false;
	const char *m = name + len - TMP_RAND - mark;
	if (memcmp(m, TMP_MARK, mark) != 0)
		return false;
	for (const char *p = m + mark; *p; p++)
		if (!is_alnum(*p))
			return false;
	return true;
}

/* Creates ".NAME.memcg-policy.XXXXXX" in dirfd (O_EXCL) with the
 * permission bits of mode (as the umask lets them through): the file's own
 * mode from the start, so that set_owner_mode mostly has nothing to do.
 *
 * In a FAT directory (fat) the name is "MPXXXXXX.MCG" instead: an upper
 * case 8.3 name, which vfat stores in one 32-byte directory slot. A long
 * name takes a slot per 13 characters before its short one, and creating
 * or removing them writes a run of slots that often crosses a sector: the
 * kernel writes the sectors back in no atomic unit, so a power cut between
 * them left long name fragments no short entry follows, or a temp file
 * under its short alias only, which no later run knows as its own (the
 * power loss tier found both; fsck.fat -a does not mend the first). One
 * slot is one sector write: the temp file is there whole or not at all. */
int tmp_create(int dirfd, bool fat, const char *name, mode_t mode, char **tmpname)
{
	/* the whole name must fit NAME_MAX: cut NAME if it has to */
	int keep = (int)(NAME_MAX - 1 - strlen(TMP_MARK) - TMP_RAND);
	for (int tries = 0; tries < 100; tries++) {
		char suffix[TMP_RAND + 1];
		random_suffix(suffix, fat);
		char *tn = fat ? xasprintf(TMP_FAT_HEAD "%s" TMP_FAT_EXT, suffix)
			       : xasprintf(".%.*s" TMP_MARK "%s", keep, name, suffix);
		int fd =
			openat(dirfd, tn, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY, mode & 0777);
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
bool fs_is_fat(int fd)
{
	struct statfs sfs;
	if (fstatfs(fd, &sfs) < 0)
		return false;
	return sfs.f_type == MSDOS_SUPER_MAGIC || (unsigned long)sfs.f_type == EXFAT_SUPER_MAGIC;
}

/* Owner first (chown clears set-id bits), then mode. What a new file
 * gets when it is created depends on the process (its user, group and
 * umask) and on the directory (its set-group-ID bit and group, its default
 * ACL, the file system's mount options), none of which a commit changes:
 * so the first temp file made in d with a mode is looked at (fstat), and
 * the others made there with the same mode are taken to be alike. */
int set_owner_mode(int fd, mode_t mode, const struct stat *old, struct txn_dir *d)
{
	struct stat st;
	if (d && d->made_known && d->made_with == (mode & 0777)) {
		st = d->made;
	} else {
		if (fstat(fd, &st) < 0)
			return -errno;
		if (d) {
			d->made = st;
			d->made_with = mode & 0777;
			d->made_known = true;
		}
	}
	if (old && (st.st_uid != old->st_uid || st.st_gid != old->st_gid)) {
		if (fchown(fd, old->st_uid, old->st_gid) < 0) {
			int e = errno;
			if (!(e == EPERM && fs_is_fat(fd)))
				return -e;
		}
	}
	/* created with the permission bits: only set-id and sticky bits, or
	 * what the umask took, are left to set (chown keeps the others) */
	if ((st.st_mode & 07777) != mode && fchmod(fd, mode) < 0) {
		int e = errno;
		if (!(e == EPERM && fs_is_fat(fd)))
			return -e;
	}
	return 0;
}

/* ---- directories ---- */

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
static void remove_leftovers(const struct txn *t, struct txn_dir *d)
{
	_cleanup_close_ int fd = openat(d->fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct strv all = { 0 }, tmps = { 0 }, others = { 0 };
	if (fd < 0 || dir_fd_names(fd, &all) < 0) {
		strv_free(&all);
		return;
	}
	for (size_t i = 0; i < all.n; i++) {
		struct strv *to = is_tmp_name(all.v[i], d->fat) ? &tmps : &others;
		strv_push(to, TAKE_PTR(all.v[i]));
	}
	strv_free(&all);
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

void dir_clean(const struct txn *t, struct txn_dir *d)
{
	if (!d || d->cleaned)
		return;
	d->cleaned = true;
	/* A run holds a shared lock on the directory from here until it is
	 * done with its temp files (the lock goes with d->fd); leftovers are
	 * removed only by a run that gets the lock alone, so no run takes a
	 * temp file another one is writing (two check --prometheus at once,
	 * which take no journal lock). */
	if (flock(d->fd, LOCK_EX | LOCK_NB) < 0) {
		(void)flock(d->fd, LOCK_SH);
		return;
	}
	remove_leftovers(t, d);
	(void)flock(d->fd, LOCK_SH);
}
