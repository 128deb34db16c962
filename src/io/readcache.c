/* io/readcache.c - bytes already read, kept by file identity, see io/readcache.h */
#include "io/readcache.h"
#include "io/xattr.h"
#include "lib/util.h"

#include <linux/magic.h>
#include <stdint.h>

#ifndef EXFAT_SUPER_MAGIC
#define EXFAT_SUPER_MAGIC 0x2011BAB0
#endif
#ifndef F2FS_SUPER_MAGIC
#define F2FS_SUPER_MAGIC 0xF2F52010
#endif

/* All kept bytes together stay below this; later files are not kept. */
#define READCACHE_MAX ((size_t)32 << 20)
/* Nor is a file larger than this: keeping it costs a copy on every run,
 * for the few that read it twice (kernel configs and images are read with
 * root_read_file_once, never kept). */
#define READCACHE_FILE_MAX ((size_t)128 << 10)
#define BUCKETS 1024

struct kept {
	struct kept *next;
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime, ctime;
	bool has_xattrs;
	struct xattrs xattrs;
	size_t len;
	char data[];
};

static struct kept *buckets[BUCKETS];
static size_t kept_bytes;

static size_t bucket_of(dev_t dev, ino_t ino)
{
	uint64_t h = (uint64_t)ino * 0x9E3779B97F4A7C15ull ^ (uint64_t)dev;
	return (size_t)(h >> 32) % BUCKETS;
}

static bool same_file(const struct kept *k, const struct stat *st)
{
	return k->dev == st->st_dev && k->ino == st->st_ino && k->size == st->st_size &&
	       timespec_eq(k->mtime, st->st_mtim) && timespec_eq(k->ctime, st->st_ctim);
}

struct timespec readcache_clock(void)
{
	struct timespec t = { 0, 0 };
	/* file timestamps come from the coarse clock (or a finer one, never
	 * behind it) */
	if (clock_gettime(CLOCK_REALTIME_COARSE, &t) < 0)
		t.tv_sec = 0; /* no clock: nothing is old enough to keep */
	return t;
}

static struct kept *find(const struct stat *st)
{
	if (!S_ISREG(st->st_mode))
		return NULL;
	for (struct kept *k = buckets[bucket_of(st->st_dev, st->st_ino)]; k; k = k->next)
		if (same_file(k, st))
			return k;
	return NULL;
}

static void kept_free(struct kept *k)
{
	if (k->has_xattrs)
		xattrs_free(&k->xattrs);
	free(k);
}

bool readcache_get(const struct stat *st, char **out, size_t *len)
{
	const struct kept *k = find(st);
	if (!k)
		return false;
	char *copy = xmalloc(k->len + 1);
	memcpy(copy, k->data, k->len);
	copy[k->len] = '\0';
	*out = copy;
	if (len)
		*len = k->len;
	return true;
}

void readcache_put_xattrs(const struct stat *st, const struct xattrs *x)
{
	struct kept *k = find(st);
	if (!k)
		return;
	if (k->has_xattrs)
		xattrs_free(&k->xattrs);
	xattrs_copy(x, &k->xattrs);
	k->has_xattrs = true;
}

bool readcache_get_xattrs(const struct stat *st, struct xattrs *out)
{
	const struct kept *k = find(st);
	if (!k || !k->has_xattrs)
		return false;
	xattrs_copy(&k->xattrs, out);
	return true;
}

/* Local disk file systems whose fstat is the inode's own, not a cached
 * copy of a server's. */
static bool fs_keeps(long fs_type)
{
	switch ((unsigned long)fs_type) {
	case EXT4_SUPER_MAGIC:
	case XFS_SUPER_MAGIC:
	case BTRFS_SUPER_MAGIC:
	case F2FS_SUPER_MAGIC:
	case TMPFS_MAGIC:
	case MSDOS_SUPER_MAGIC:
	case EXFAT_SUPER_MAGIC: return true;
	default: return false;
	}
}

/* Is the ctime older than t by more than the timestamps' granularity?
 * FAT and exFAT cut times down to 2 seconds (or 10 ms); a ctime with no
 * fraction at all is one of a file system that keeps whole seconds (ext4
 * with 128-byte inodes); the others keep nanoseconds. (A test of the
 * sub-microsecond digits alone called one nanosecond ctime in a thousand
 * coarse, and apply then looked again for nothing.) */
static bool old_enough(long fs_type, const struct stat *st, struct timespec t)
{
	bool coarse = (unsigned long)fs_type == MSDOS_SUPER_MAGIC || (unsigned long)fs_type == EXFAT_SUPER_MAGIC ||
		      st->st_ctim.tv_nsec == 0;
	long long margin_ns = coarse ? 2000000000LL : 1000000LL;
	long long c = (long long)st->st_ctim.tv_sec * 1000000000LL + st->st_ctim.tv_nsec;
	long long now = (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
	return t.tv_sec > 0 && c + margin_ns < now;
}

bool readcache_trusted(long fs_type, const struct stat *st, struct timespec t)
{
	return fs_keeps(fs_type) && old_enough(fs_type, st, t);
}

bool readcache_put(long fs_type, const struct stat *st, struct timespec t, const char *data, size_t len)
{
	if (!S_ISREG(st->st_mode) || (off_t)len != st->st_size || len > READCACHE_FILE_MAX ||
	    len > READCACHE_MAX - kept_bytes || !readcache_trusted(fs_type, st, t))
		return false;
	size_t b = bucket_of(st->st_dev, st->st_ino);
	for (struct kept **p = &buckets[b]; *p; p = &(*p)->next)
		if ((*p)->dev == st->st_dev && (*p)->ino == st->st_ino) {
			/* an older version of the same file */
			struct kept *old = *p;
			*p = old->next;
			kept_bytes -= old->len;
			kept_free(old);
			break;
		}
	struct kept *k = xmalloc(sizeof(*k) + len);
	k->dev = st->st_dev;
	k->ino = st->st_ino;
	k->size = st->st_size;
	k->mtime = st->st_mtim;
	k->ctime = st->st_ctim;
	k->has_xattrs = false;
	k->xattrs = (struct xattrs){ 0 };
	k->len = len;
	if (len)
		memcpy(k->data, data, len);
	k->next = buckets[b];
	buckets[b] = k;
	kept_bytes += len;
	return true;
}

void readcache_clear(void)
{
	for (size_t b = 0; b < BUCKETS; b++)
		while (buckets[b]) {
			struct kept *k = buckets[b];
			buckets[b] = k->next;
			kept_free(k);
		}
	kept_bytes = 0;
}
