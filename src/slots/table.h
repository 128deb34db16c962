/* slots/table.h - every slot kind behind one table of operations (slots/table.c):
 * finding a root's slots, editing one for a decision, the command line it
 * gives its kernel. The kinds (slots/kinds.h, slots/grub/grub.h) sit below it, the
 * helpers they share (slots/slot-int.h) below them. */
#pragma once

#include <stddef.h>

#include "decide/decide.h"
#include "facts/policy.h"
#include "io/rootfs.h"
#include "slots/slot.h"

/* Finds every slot in the root, reading each one's content. default_kernel
 * is the release global slots belong to (for entries without a version).
 * A boot file that cannot be parsed safely (e.g. a BLS entry with a line
 * over 64 KiB, NUL bytes, a cmdline.txt of several non-empty lines) is bad
 * input: recorded with FILE:LINE and -EXIT_BADINPUT. I/O errors:
 * -EXIT_SYSTEM. */
int slots_find(const struct root *r, const struct policy *p, const char *default_kernel, struct slot_list *out);

/* Only the root's unified kernel images, as slots_find finds them: for
 * what concerns UKIs alone (revert's rebuild), which a damaged boot entry
 * elsewhere must not stop. */
int slots_find_ukis(const struct root *r, const struct policy *p, struct slot_list *out);

/* A file gone from the root may have gone with its file system: is path
 * one on a boot file system (the ESP or XBOOTLDR: the directory before its
 * loader/ or EFI/Linux/) that is not there now (not mounted, or, on a live
 * system, not verified as slots_find verifies it)? Then its journal
 * record must stay. dir (optional) gets that directory. */
bool slot_fs_absent(const struct root *r, const struct policy *p, const char *path, char **dir);

/* The new content of a slot for a decision (NULL decision = revert handled
 * elsewhere). Returns a new string (identical content when nothing changes)
 * and fills added/removed with the exact tokens added and removed. For read-only kinds returns NULL. */
char *slot_edit(const struct slot *s, const struct decision *d, struct strv *added, struct strv *removed,
		size_t *new_len);

/* The command line a slot gives its kernel (options lines joined), for
 * otherwise=keep and for verification; NULL if not applicable. */
char *slot_cmdline(const struct slot *s);

/* How a change of a kind is written: the file itself, grubenv's
 * kernelopts value (as a new environment block), or nothing (a kind only
 * read: menus are regenerated, UKIs rebuilt by their tools). */
enum slot_write { SLOT_WRITES_FILE, SLOT_WRITES_KERNELOPTS, SLOT_WRITES_NOTHING };
enum slot_write slot_kind_writes(enum slot_kind k);

/* What revert does with a journal record (facts/journal.h) of a file of its
 * kind, given the file's current content (pure: no file is read). */
enum undo_action { UNDO_NOTHING, UNDO_WRITE, UNDO_DELETE };
struct slot_undo {
	enum undo_action action;
	char *content; /* UNDO_WRITE: the new content (grubenv: the kernelopts value) */
	size_t len;
	char *cur; /* what it replaces: the file, or grubenv's kernelopts value */
	size_t cur_len;
	const char *why; /* UNDO_NOTHING where something is amiss: what */
};
struct journal_entry;
/* A file still as the tool wrote it (or as it was before the tool's last
 * write, where that write never landed: facts/journal.h) gets its original back
 * (a file the tool created is deleted); one changed since gets the kind's
 * undo:
 * /etc/default/grub loses the marked line, grubenv's kernelopts and the
 * other files the tool's tokens (and get the admin's back), and the
 * tool's own data (grub.tokens) goes whatever it holds. */
void slot_undo(enum slot_kind k, const struct journal_entry *e, const char *text, size_t len, struct slot_undo *out);
void slot_undo_free(struct slot_undo *u);
/* The kind's undo of the content cur (grubenv: the kernelopts value), with
 * e's tokens: what the file would be had the tool never touched it, where
 * someone changed it after the tool's last write (journal_record rebases
 * the record's original on it). NULL for the tool's own data, which has
 * no original to keep. */
char *slot_unedit(enum slot_kind k, const struct journal_entry *e, const char *cur, size_t cur_len, size_t *len);
