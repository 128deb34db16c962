/* io/txn.h - the one way the tool writes files: a transaction of whole-file
 * replacements, made durable together (DESIGN section 6).
 *
 * txn_commit():
 *   1. for every file: a temp file in the same directory
 *      (".NAME.memcg-policy.XXXXXX", O_CREAT|O_EXCL|O_NOFOLLOW, a name no
 *      boot loader picks up), full write checked, mode and owner of the old
 *      file (new files: 0644, or the mode given);
 *   2. one syncfs per file system the temp files are on: they become
 *      durable together (DESIGN section 6: a few sync points per run);
 *   3. renameat every temp file over its target, in order;
 *   4. fsync each touched directory once.
 * (3 and 4 run once for the records to be durable first, once for the
 * other files, once for the records to follow them: txn_add_record.)
 * A failure at any step removes every temp file; if some targets were
 * already replaced they are put back (old content, same way), created ones
 * unlinked. Then -EXIT_SYSTEM with "memcg-policy: PATH: what failed: errno".
 * Deleting a file is a change too (data NULL).
 *
 * Test-only fault injection (documented in the man page as such):
 *   MEMCG_POLICY_FAILPOINT=N   the Nth write/sync/rename/unlink step fails with EIO
 *   MEMCG_POLICY_CRASHPOINT=N  the process SIGKILLs itself at the Nth step
 * Every step counts from 1, over the whole process (so that a command that
 * commits twice can be failed at each of its steps in turn); txn_steps()
 * tells how many steps this process has taken so far. The steps are: each
 * temp file's write, each file system's syncfs, each rename (on vfat or exfat
 * followed by the fsync of its directory and the fsync of the renamed file,
 * two steps more), each unlink, each directory's fsync (in that order within
 * a commit). Rollback work is not
 * counted and never injected.
 *
 * Symlinks: a target that is a symlink is followed inside the root, one
 * link at a time (readlinkat, absolute targets restart at the root,
 * relative ones from the link's directory, directories resolved with
 * root_openat): the link's target is replaced and the link itself kept. No
 * /proc is needed and nothing outside the root is ever touched. A dangling
 * link gets its target created (inside the root).
 *
 * Owner and mode: the old file's, set on the temp file before the rename
 * (owner first, then mode, so set-id bits survive); on vfat/exfat, which
 * keep no owner, an EPERM from fchown/fchmod is not an error. Then the old
 * file's extended attributes (POSIX ACLs, security.* labels, user.*): one
 * that cannot be set fails the commit before anything is renamed.
 *
 * Other rules: a file whose content already equals the new content is not
 * written (no temp file, no step); a target that is not a regular file is
 * bad input (-EXIT_BADINPUT "PATH: not a regular file") and nothing is
 * written; missing parent directories of a new file are created (0755) and
 * removed again on rollback; leftover temp files of an earlier run that was
 * killed (".NAME.memcg-policy.XXXXXX" in a directory about to be written)
 * are removed first (commits run under the lock, see facts/journal.h). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "io/rootfs.h"
#include "lib/util.h"
#include "io/xattr.h"

struct txn_dir; /* private to txn*.c (io/txn-int.h): a directory descriptor shared by the files in it */

/* When a file is renamed into place, relative to the others (see
 * txn_add_record). */
enum txn_order { TXN_WITH_OTHERS = 0, TXN_BEFORE, TXN_AFTER };

struct txn_file {
	char *path; /* inside the root */
	char *data; /* new content; NULL = delete the file */
	size_t len;
	mode_t mode;	 /* for a new file (0: 0644) */
	bool force_mode; /* mode also for an existing file (txn_add_record) */
	enum txn_order order;
	/* filled by txn_commit */
	int dirfd;  /* directory holding the (symlink-resolved) target; borrowed */
	char *name; /* the target's name in dirfd, after symlinks */
	struct txn_dir *dir;
	char *tmpname;
	bool existed;
	bool unchanged; /* content already as wanted: not written */
	bool renamed;	/* replaced (or, for a delete, unlinked) */
	char *old;	/* old content, for rollback */
	size_t old_len;
	struct stat *old_st;
	struct xattrs *old_xattrs; /* kept on the replacement */
};

struct txn {
	const struct root *root;
	struct txn_file *files;
	size_t n, cap;
	struct str_index by_path; /* files by path (lib/util.h) */
	unsigned written;	  /* files replaced or deleted by the last commit */
	/* private to txn_commit */
	struct txn_dir **dirs;
	size_t n_dirs;
	struct strv made_dirs; /* created parent directories, for rollback */
};

void txn_init(struct txn *t, const struct root *r);
/* Adds a replacement (data copied; NULL means delete, as txn_delete). A
 * file already in the transaction is replaced by the later call. */
void txn_add(struct txn *t, const char *path, const char *data, size_t len, mode_t new_mode);
void txn_delete(struct txn *t, const char *path);
/* The record of the other changes (the journal; data NULL deletes it):
 * mode 0600 whatever the old file's (it holds copies of files that may be
 * private), and durable, renamed and its directory synced, before
 * (TXN_BEFORE: write-ahead, as apply records what it is about to change)
 * or only after (TXN_AFTER: revert forgets what it has put back) every
 * other file of the transaction has been renamed and its directory synced,
 * on whatever file systems they are. */
void txn_add_record(struct txn *t, const char *path, const char *data, size_t len, enum txn_order order);
int txn_commit(struct txn *t);
void txn_free(struct txn *t);
unsigned txn_steps(void);
/* Tests: read MEMCG_POLICY_FAILPOINT / MEMCG_POLICY_CRASHPOINT again and
 * restart the step count at 0 (otherwise the environment is read once, at
 * the first step of the process). */
void txn_failpoints_from_env(void);

/* Single-file convenience: txn of one. */
int write_file_atomic(const struct root *r, const char *path, const char *data, size_t len, mode_t new_mode);
/* Writes a file of the invoking system (not of --root, e.g. --config or
 * --prometheus) atomically: its directory is opened as a root of its own.
 * Returns 0 or a negative exit code (reported). */
int write_host_file_atomic(const char *path, const char *text, size_t len, mode_t mode);
