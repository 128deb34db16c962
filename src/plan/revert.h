/* plan/revert.h - revert's plan: built from the journal's records and the
 * files' current content (plan/revert-plan.c), and from the boot entries
 * written from /etc/kernel/cmdline after the tool edited it
 * (plan/revert-copies.c); cmd/revert.c gathers those facts, shows the plan and
 * commits it through the same commit as apply (commit/commit.h). */
#pragma once

#include <stdbool.h>

#include "facts/journal.h"
#include "slots/slot.h"
#include "slots/table.h"

/* One file revert changes. */
struct revert_item {
	char *path;
	enum slot_kind kind;
	struct slot_undo u;   /* UNDO_WRITE or UNDO_DELETE, the content and what it replaces */
	struct strv put_back; /* the admin's tokens it gives back */
	struct strv taken;    /* the tool's tokens it takes out */
	bool copy;	      /* an entry written from /etc/kernel/cmdline */
};

struct revert_plan {
	struct revert_item *v;
	size_t n;
	struct strv ended; /* paths whose journal records end */
	bool feeds_menu;   /* a GRUB menu input changes: regenerate */
};

/* The record e undone, its file's current content being text (NULL: the
 * file is gone): an item where the file changes; the record ends in any
 * case. A grubenv without kernelopts any more is warned about. Pure (r
 * only names files in messages). */
void revert_plan_record(struct revert_plan *p, const struct root *r, const struct journal_entry *e, const char *text,
			size_t len);
/* The tool's tokens out of the BLS entries of l that distribution tools
 * wrote from /etc/kernel/cmdline after the tool edited it (plan/revert-copies.c
 * says which entries count as such copies): each gets the same token-level
 * undo as the file. Entries with the tool's tokens that are not such
 * copies are warned about and left alone. Pure. */
void revert_plan_copies(struct revert_plan *p, const struct root *r, const struct journal *j,
			const struct slot_list *l);
/* Does revert_plan_copies need the boot entries (the journal has tokens
 * the tool added to /etc/kernel/cmdline)? */
bool revert_needs_copies(const struct journal *j);
void revert_plan_free(struct revert_plan *p);
/* (plan/revert-copies.c's) a copy's item; content, put_back and taken are taken over */
void revert_plan_copy_item(struct revert_plan *p, const struct slot *s, char *content, size_t len,
			   struct strv *put_back, struct strv *taken);

/* Is the BLS entry s (not in the journal yet) a copy of /etc/kernel/cmdline
 * as the tool last wrote it? Then out gets the tokens the tool had added
 * there: apply, taking them out of the copy, records them as the tool's
 * own, not as the admin's. */
bool kcmdline_copy_added(const struct journal *j, const struct slot *s, struct strv *out);
