/* slots/slot-int.h - private to the slot modules: the helpers every slot kind
 * shares (slots/slot.c), below the kinds and the table of them (slots/table.c). */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "facts/policy.h"
#include "io/rootfs.h"
#include "slots/slot.h"

/* Longest line accepted in a boot file. */
#define MAX_BOOT_LINE (64u << 10)

/* Appends a zeroed slot to l and returns it. */
struct slot *slot_list_add(struct slot_list *l, enum slot_kind kind, const char *path);
/* The slot's content unchanged, as a new NUL-terminated string (empty for
 * a missing file): the edit of a slot that is left as it is. */
char *slot_content_copy(const struct slot *s, size_t *new_len);

/* Reads a boot text file: *out NULL when it does not exist. A file that
 * is not regular, too large, has NUL bytes or a line over MAX_BOOT_LINE is
 * bad input (reported with FILE:LINE, -EXIT_BADINPUT); I/O errors
 * -EXIT_SYSTEM. */
int slot_read_text(const struct root *r, const char *path, char **out, size_t *len);
/* The checks slot_read_text() makes on the bytes it read (NUL bytes, lines
 * over MAX_BOOT_LINE), reported as "DISP:LINE: ..."; pure (for fuzzing). */
int slot_text_check(const char *disp, const char *text, size_t len);

/* "bootloaders: KEY = no (FILE:LINE)" when the policy turns a slot kind
 * off, else NULL. */
char *slot_policy_off(const struct policy *p, enum tristate t, const struct origin *o, const char *key);

/* The edit of a file that holds one command line (all its lines read as
 * one): /etc/kernel/cmdline, cmdline.txt, raspi-extra-cmdline. */
char *line_slot_edit(const struct slot *s, const struct decision *d, struct strv *added, struct strv *removed,
		     size_t *new_len);
/* Its command line: lines joined by spaces, surrounding whitespace off. */
char *line_slot_cmdline(const struct slot *s);

/* Adds the add tokens one by one to the text at *text (replaced), each
 * unless present in the whole command line (joined(ctx) gives it, after
 * the previous additions); records those that changed the text. */
typedef char *(*joined_fn)(void *ctx);
void add_tokens(char **text, size_t *len, const struct strv *add, joined_fn joined, void *ctx, struct strv *added,
		const struct slot *s);
