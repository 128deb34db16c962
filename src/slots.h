/* slots.h - every slot kind behind one table of operations (slots.c):
 * finding a root's slots, editing one for a decision, the command line it
 * gives its kernel. The kinds (slot-kinds.h, grub.h) sit below it, the
 * helpers they share (slot-int.h) below them. */
#pragma once

#include <stddef.h>

#include "decide.h"
#include "policy.h"
#include "rootfs.h"
#include "slot.h"

/* Finds every slot in the root, reading each one's content. default_kernel
 * is the release global slots belong to (for entries without a version).
 * A boot file that cannot be parsed safely (e.g. a BLS entry with a line
 * over 64 KiB, NUL bytes, a cmdline.txt of several non-empty lines) is bad
 * input: recorded with FILE:LINE and -EXIT_BADINPUT. I/O errors:
 * -EXIT_SYSTEM. */
int slots_find(const struct root *r, const struct policy *p, const char *default_kernel, struct slot_list *out);

/* The new content of a slot for a decision (NULL decision = revert handled
 * elsewhere). Returns a new string (identical content when nothing changes)
 * and fills added/removed with the exact tokens added and removed. For read-only kinds returns NULL. */
char *slot_edit(const struct slot *s, const struct decision *d, struct strv *added, struct strv *removed,
		size_t *new_len);

/* The command line a slot gives its kernel (options lines joined), for
 * otherwise=keep and for verification; NULL if not applicable. */
char *slot_cmdline(const struct slot *s);
