/* io/txn-int.h - private to the transaction modules (io/txn.c: the sequence of a
 * commit and its rollback; io/txn-dir.c: the directories it works in;
 * io/txn-tmp.c: the temp files, their owner and mode, and the leftovers of a
 * killed run). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "io/txn.h"

struct txn_dir {
	char *path; /* inside the root, as opened */
	int fd;	    /* O_RDONLY|O_DIRECTORY */
	dev_t dev;
	ino_t ino;
	bool touched; /* an entry was renamed or removed: fsync it */
	bool pending; /* touched in the current phase of the renames */
	bool cleaned; /* leftover temp files removed */
	bool fat;     /* on vfat or exfat: no ordering of metadata writes (see place() in io/txn.c) */
	/* what the first temp file made here with the mode made_with got */
	bool made_known;
	mode_t made_with;
	struct stat made;
};

/* ---- io/txn-dir.c ---- */

void split_path(const char *path, char **dir, char **name);
void dirs_close(struct txn *t);
struct txn_dir *dir_get(struct txn *t, const char *path, bool create, int *err);

/* ---- io/txn-tmp.c ---- */

int write_all(int fd, const char *data, size_t len);
int tmp_create(int dirfd, bool fat, const char *name, mode_t mode, char **tmpname);
/* The owner and mode of old (NULL: a new file: only mode) on fd, a temp
 * file tmp_create made in d (NULL: look at fd every time) with mode. */
int set_owner_mode(int fd, mode_t mode, const struct stat *old, struct txn_dir *d);
/* Is fd on vfat or exfat (no owners, no journal)? */
bool fs_is_fat(int fd);
/* Before the first temp file in d: takes a shared lock on d (held while
 * d->fd is open) and, only where no other run holds one, removes the temp
 * files killed runs left there. */
void dir_clean(const struct txn *t, struct txn_dir *d);
