/* txn.h - the one way the tool writes files: a transaction of whole-file
 * replacements, made durable together (DESIGN section 6).
 *
 * txn_commit():
 *   1. for every file: a temp file in the same directory
 *      (".NAME.memcg-policy.XXXXXX", O_CREAT|O_EXCL|O_NOFOLLOW, a name no
 *      boot loader picks up), full write checked, mode and owner of the old
 *      file (new files: 0644, or the mode given);
 *   2. fsync every temp file (one pass);
 *   3. renameat every temp file over its target, in order;
 *   4. fsync each touched directory once.
 * A failure at any step removes every temp file; if some targets were
 * already replaced they are put back (old content, same way), created ones
 * unlinked. Then -EXIT_SYSTEM with "memcg-policy: PATH: what failed: errno".
 * Deleting a file is a change too (data NULL).
 *
 * Test-only fault injection (documented in the man page as such):
 *   MEMCG_POLICY_FAILPOINT=N   the Nth write/fsync/rename/unlink step fails with EIO
 *   MEMCG_POLICY_CRASHPOINT=N  the process SIGKILLs itself at the Nth step
 * Every step counts from 1; txn_steps() tells how many a commit took. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "rootfs.h"

struct txn_file {
	char *path;       /* inside the root */
	char *data;       /* new content; NULL = delete the file */
	size_t len;
	mode_t mode;      /* for a new file */
	/* filled by txn_commit */
	int dirfd;
	char *tmpname;
	bool existed;
	bool renamed;
	char *old;        /* old content, for rollback */
	size_t old_len;
	struct stat *old_st;
};

struct txn {
	const struct root *root;
	struct txn_file *files;
	size_t n;
	unsigned written;  /* files replaced or deleted by the last commit */
};

void txn_init(struct txn *t, const struct root *r);
/* Adds a replacement (data copied). A file already in the transaction is
 * replaced by the later call. */
void txn_add(struct txn *t, const char *path, const char *data, size_t len, mode_t new_mode);
void txn_delete(struct txn *t, const char *path);
int txn_commit(struct txn *t);
void txn_free(struct txn *t);
unsigned txn_steps(void);

/* Single-file convenience: txn of one. */
int write_file_atomic(const struct root *r, const char *path, const char *data, size_t len, mode_t new_mode);
