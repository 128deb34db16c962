/* revert.h - what revert does beside undoing the journal's records. */
#pragma once

#include <stdbool.h>

#include "context.h"
#include "journal.h"
#include "txn.h"

struct json_object;

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
