/* grub.h - the GRUB slots (DESIGN section 5): the drop-in, the marked line
 * in /etc/default/grub, grubenv's kernelopts, and the generated menu, which
 * is never edited but regenerated with the root's own GRUB tools and read
 * back to verify its linux lines. Called from slots_find / slot_edit /
 * the apply command; implemented in slot-grub.c. */
#pragma once

#include <stdbool.h>

#include "decide.h"
#include "policy.h"
#include "rootfs.h"
#include "slot.h"

/* Appends the GRUB slots of the root to l (none where there is no GRUB). */
int grub_slots_find(const struct root *r, const struct policy *p, struct slot_list *l);

/* slot_edit for the GRUB kinds (drop-in, marked line, grubenv). For the
 * drop-in and /etc/default/grub, added and removed stay empty: they are
 * shell files, not command lines, and must never get a token-level edit
 * (revert restores their bytes, or takes the marked line out). */
char *grub_slot_edit(const struct slot *s, const struct decision *d, struct strv *added, struct strv *removed,
		     size_t *new_len);

/* Should a missing GRUB input (drop-in, /etc/default/grub) be created for
 * this decision? Yes unless it is keep: the drop-in carries no token
 * itself, but the menu needs it both to add tokens and to take
 * contradicting ones out of GRUB_CMDLINE_LINUX*. */
bool grub_slot_creates(const struct slot *s, const struct decision *d);

/* The state of a generated menu (SLOT_GRUB_CFG) for the decisions: every
 * linux line of each kernel carries its decision's tokens; fills s->note
 * with the reason on drift. lookup returns the decision of a kernel release
 * (NULL if unknown: the default's is used). */
typedef const struct decision *(*decision_lookup_fn)(void *data, const char *release);
enum slot_state grub_cfg_state(struct slot *s, decision_lookup_fn lookup, void *data);

/* After the files are written: grubenv through grub-editenv (SLOT_GRUBENV
 * changes are not written as files; the value set is the one the journal
 * records as written), then one regeneration of the menu if any GRUB input
 * changed and the policy allows (regenerate = auto: not with --root; never
 * with no_regenerate). A SLOT_GRUB_CFG marked changed asks for a
 * regeneration too (a drifting menu whose inputs are in place, e.g. after
 * the decision changed), unless its drift note says regenerating cannot
 * help (a later drop-in overrides ours, the drop-in is not in place).
 * Returns 0 or -EXIT_SYSTEM with the tool's output shown. ran_tools counts
 * the tools run. */
int grub_after_commit(const struct root *r, const struct policy *p, const struct slot_list *l,
		      const bool *changed, bool no_regenerate, unsigned *ran_tools);

/* Sets kernelopts in a grubenv through the root's grub2-editenv /
 * grub-editenv (used by revert). Returns 0 or -EXIT_SYSTEM. */
int grub_set_kernelopts(const struct root *r, const char *grubenv_path, const char *value);

/* The command line a GRUB slot gives the default kernel (slot_cmdline):
 * grubenv's kernelopts value, or the first linux line of a generated menu;
 * NULL for the drop-in and /etc/default/grub. */
char *grub_slot_cmdline(const struct slot *s);

/* /etc/default/grub without the marked line(s) apply added (every other
 * byte kept): for revert when the file changed since the tool wrote it. */
char *grub_default_unmark(const char *text, size_t len, size_t *new_len);

/* Where the drop-in is installed on the Debian family, and the marked line
 * that sources it from $(DATADIR) elsewhere ("...  # added by memcg-policy"). */
#define GRUB_DROPIN_PATH "/etc/default/grub.d/99-memcg-policy.cfg"
#define GRUB_DEFAULT_PATH "/etc/default/grub"
const char *grub_marked_line(void);

/* Pure helpers, exposed for tests. */
/* Words of one line of GRUB script: blanks separate them; '...' is
 * literal; "..." keeps $ and takes \ \" \$ as escapes; a backslash outside
 * quotes escapes the next byte; # at the start of a word starts a comment;
 * ; or a line break ends the command. $VAR references are kept as text. */
void grub_split_words(const char *line, size_t len, struct strv *words);
/* The kernel release 10_linux derives from a kernel path (its name without
 * the non-digit prefix up to the last '-', without ".efi.signed"). */
char *grub_release_from_path(const char *path);
/* A variable of a grubenv block (its escapes undone); NULL if not set. */
char *grubenv_get(const char *text, size_t len, const char *name);
