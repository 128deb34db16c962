/* revert.h - what revert does beside undoing the journal's records. */
#pragma once

#include <stdbool.h>

#include "context.h"
#include "journal.h"
#include "txn.h"

struct json_object;
struct slot;

/* Is the BLS entry s (not in the journal yet) a copy of /etc/kernel/cmdline
 * as the tool last wrote it (revert-copies.c says when)? Then out gets the
 * tokens the tool had added there: apply, taking them out of the copy,
 * records them as the tool's own, not as the admin's. */
bool kcmdline_copy_added(const struct journal *j, const struct slot *s, struct strv *out);

/* The tool's tokens out of the boot entries distribution tools wrote from
 * /etc/kernel/cmdline after the tool edited it (revert-copies.c says which
 * entries count as such copies): each gets the same token-level undo as
 * the file, added to t (or, with dry_run, printed as a diff); files[] of
 * obj gets each one. Entries with the tool's tokens that are not such
 * copies are warned about and left alone; where the boot files cannot
 * be read, that is said and the copies stay. Returns 0 or a negative exit
 * code. */
int revert_copies(struct context *ctx, const struct journal *j, bool dry_run, struct txn *t,
		  struct json_object *obj);
