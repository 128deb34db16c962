/* facts/journal.h - what the tool changed, so that `revert` can undo it:
 * /var/lib/memcg-policy/journal.json inside the root (json-c). For every
 * file the tool changed it keeps the content the file had before the tool
 * first touched it, the content the tool last wrote, and the tokens it
 * added and the admin tokens it removed (in order, exact text), and the
 * kernel the file belongs to.
 *
 * When the file was changed since the tool last wrote it (an admin, a
 * config manager) and the tool writes it again, the record's original is
 * rebased on that change (slot_unedit): the change is the admin's to keep.
 *
 * revert: a file whose current content is what the tool last wrote (or
 * what it held before that write, where the write never landed) gets its
 * original bytes back exactly; a file changed since (a kernel update, an
 * admin edit) gets the token-level undo: our added tokens taken out, the
 * removed ones put back (where they are missing). A file the tool created
 * (original absent) is deleted when it still holds what the tool wrote. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "io/rootfs.h"
#include "lib/util.h"

#define JOURNAL_PATH "/var/lib/memcg-policy/journal.json"

struct journal_entry {
	char *path;
	char *kernel;	   /* NULL for a global slot */
	bool had_original; /* false: the tool created the file */
	char *original;	   /* content before the tool first changed it */
	size_t original_len;
	char *written; /* content the tool last wrote (NULL: it deleted the file) */
	size_t written_len;
	/* the content the file had when the tool planned its last write (NULL:
	 * absent): write-ahead, the record is durable before the file is, so
	 * a file still holding this is one whose last write never landed (a
	 * power cut), as the tool left it before */
	char *before;
	size_t before_len;
	struct strv added;   /* tokens the tool added, cumulative */
	struct strv removed; /* admin tokens the tool removed, cumulative */
};

struct journal {
	struct journal_entry *v;
	size_t n, cap;
	/* the entries by path (lib/util.h); allocated on first look-up, so
	 * that a const journal can be looked in: never copy a journal */
	struct str_index *by_path;
};

/* Reads the journal (a missing one is empty). A corrupt journal is bad
 * input: -EXIT_BADINPUT with its path; so is one that is owned by another
 * user than root (or the user running the tool) or writable by group or
 * others ("unsafe journal"), or that names a file that is not a boot file
 * the tool manages (slot_kind_of_path, slots/slot.h). It is written 0600 (it holds
 * copies of boot files that may be private). */
int journal_load(const struct root *r, struct journal *j);
/* Records a change the tool is about to write: keeps the first original,
 * replaces written and before, accumulates tokens (an added token later
 * removed by the tool itself is dropped from added, and vice versa). A
 * change back to the original is recorded too (the journal is written
 * before the file: forgetting the record then would leave a file whose
 * change did not land without one); journal_prune drops it once it has
 * landed. */
void journal_record(struct journal *j, const char *path, const char *kernel, bool existed, const char *old,
		    size_t old_len, const char *new_content, size_t new_len, const struct strv *added,
		    const struct strv *removed);
void journal_forget(struct journal *j, const char *path);
/* Forgets path's record when the file (content cur, NULL: absent) is as
 * the tool last wrote it and that is what the admin had: the change back
 * has landed, nothing is left to revert. */
void journal_prune(struct journal *j, const char *path, const char *cur, size_t cur_len);
struct journal_entry *journal_find(struct journal *j, const char *path);
/* The same, for reading only. */
const struct journal_entry *journal_get(const struct journal *j, const char *path);
/* Serialized JSON text (for adding to the same transaction). */
char *journal_serialize(const struct journal *j, size_t *len);
void journal_free(struct journal *j);

/* The lock: /run/memcg-policy.lock inside the root (the directory is
 * created if missing), flock(LOCK_EX). If another run holds it, says
 * "waiting for the lock held by another memcg-policy (PATH)" once and
 * waits. Returns an fd to keep open, or -EXIT_SYSTEM. */
int lock_take(const struct root *r);

/* The same where the lock file already exists (an earlier run made it);
 * -ENOENT, and nothing written or printed, where it does not or cannot be
 * opened for writing (a read-only image). */
int lock_take_if_present(const struct root *r);
