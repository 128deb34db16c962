/* io/readcache.h - the bytes of the files a run has read, kept for the rest
 * of the run, so that reading a file again (apply's evaluation under the
 * lock, the commit's old content, the report after the commit) costs the
 * usual open and type check but no read.
 *
 * A file is known by its device, inode, size, mtime and ctime, as fstat(2)
 * gives them on the descriptor being read; a later read gets the kept bytes
 * only when all five are the same. A change made after the first read
 * moves the ctime past the clock at that read, so a file is kept only when
 * its ctime is older than the moment its reading began by more than the
 * file system's timestamp granularity (1 ms where ctimes carry nanoseconds,
 * 2 s where they do not: FAT's), and only on local disk file systems whose
 * stat is the inode's own (ext2/3/4, XFS, Btrfs, F2FS, tmpfs, vfat, exFAT):
 * never on network or FUSE file systems, never on proc or sysfs.
 *
 * A kept file may also keep its extended attributes, read on the same
 * descriptor as its bytes: the transaction then needs only the identity
 * (one fstatat) to know both again before it replaces the file. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>
#include <time.h>

/* The clock to pass to readcache_put: taken before the fstat of a read. */
struct timespec readcache_clock(void);

/* A copy (NUL-terminated, caller frees) of the kept bytes of the file st
 * describes; false when there are none. */
bool readcache_get(const struct stat *st, char **out, size_t *len);

/* Keeps data (len bytes) as the content of the file st describes, read
 * since t from a file system of type fs_type (statfs f_type: it decides).
 * True when it was kept. */
bool readcache_put(long fs_type, const struct stat *st, struct timespec t, const char *data, size_t len);

struct xattrs;
/* Keeps a copy of x as the extended attributes of the kept file st
 * describes (read on the descriptor its bytes were read on); nothing
 * when that file is not kept. */
void readcache_put_xattrs(const struct stat *st, const struct xattrs *x);

/* A copy of the kept extended attributes of the file st describes (the
 * caller frees it with xattrs_free); false when there are none kept. */
bool readcache_get_xattrs(const struct stat *st, struct xattrs *out);

/* Does the stat st (of a file system of type fs_type, taken after t) show
 * every change made since t? The rule above; io/inputs.h uses it too. */
bool readcache_trusted(long fs_type, const struct stat *st, struct timespec t);

/* Forgets everything kept (tests; a long-running caller). */
void readcache_clear(void);
