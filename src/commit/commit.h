/* commit/commit.h - the one commit of apply and revert: every change of a plan
 * (file replacements, grubenv's kernelopts, deletions) and the journal's
 * record of them, written in one transaction (io/txn.h) with one rollback.
 * Regenerating the GRUB menu comes after it (grub_after_commit). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "io/rootfs.h"
#include "slots/slot.h"
#include "io/txn.h"

struct file_change {
	const char *path;    /* inside the root */
	enum slot_kind kind; /* how it is written (slot_kind_writes) */
	const char *data;    /* the new content (grubenv: the kernelopts value); NULL: delete */
	size_t len;
	mode_t mode; /* for a new file (0: 0644) */
};

/* Writes changes[0..n) and the journal (journal_text, NULL: the journal
 * is deleted) together; when says whether the journal is durable before
 * the files (apply: write-ahead) or after them (revert: the records end
 * only once what they undo is durable). Returns 0 or a negative exit code
 * (recorded in diag). */
int commit_changes(const struct root *r, const struct file_change *changes, size_t n, const char *journal_text,
		   size_t journal_len, enum txn_order when);
