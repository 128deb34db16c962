/* io/inputs.h - what an evaluation looked at in the root, by identity: every
 * path rootfs resolved (a file or directory with its device, inode, type,
 * size, mtime and ctime; an absent path with its error). apply notes them
 * on its first look, without the lock; once it holds the lock, looking at
 * each path again (io/rootfs.h: root_inputs_unchanged) tells whether the first
 * evaluation still stands, without reading or parsing anything again.
 *
 * What must be the same: for a regular file and a directory that was
 * listed, the whole identity; for a directory only resolved through or
 * checked, its device, inode, type, mode and owner (creating the lock file
 * changes the mtime of /run, or of / where /run was missing, and no path
 * noted under them changes with it).
 *
 * A file or listed directory counts only when its stat can be trusted to
 * show a change (io/readcache.h's rule: a local disk file system, a ctime
 * older than the start of the noting by more than the timestamps'
 * granularity); one that cannot makes the whole set unusable, and apply
 * evaluates again. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>
#include <time.h>

struct input {
	char *path;
	int flags;    /* O_NOFOLLOW, O_DIRECTORY as resolved */
	int err;      /* 0, or the -errno the path gave */
	bool content; /* a regular file, or a listed directory */
	dev_t dev;
	ino_t ino;
	mode_t mode;
	uid_t uid;
	gid_t gid;
	off_t size;
	struct timespec mtime, ctime;
};

/* Forgets what was noted and notes from now on; the clock is taken now. */
void inputs_start(void);
/* Stops noting (what was noted is kept). */
void inputs_stop(void);
bool inputs_noting(void);
/* rootfs: path resolved with flags gave err (0: st describes it; fs_type
 * is its file system's statfs f_type); listed: it is a directory opened
 * to be listed. */
void inputs_note(const char *path, int flags, int err, const struct stat *st, long fs_type, bool listed);
/* The distinct inputs noted; usable is false when one of them cannot be
 * trusted (see above) or none was noted. */
const struct input *inputs_list(size_t *n, bool *usable);
/* Same identity (or the same error) as the noted input? */
bool input_same(const struct input *in, int err, const struct stat *st);
void inputs_clear(void);
