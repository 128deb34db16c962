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

/* slot_edit for the GRUB kinds (drop-in, marked line, grubenv). */
char *grub_slot_edit(const struct slot *s, const struct decision *d, struct strv *added, struct strv *removed,
		     size_t *new_len);

/* The state of a generated menu (SLOT_GRUB_CFG) for the decisions: every
 * linux line of each kernel carries its decision's tokens; fills s->note
 * with the reason on drift. lookup returns the decision of a kernel release
 * (NULL if unknown: the default's is used). */
typedef const struct decision *(*decision_lookup_fn)(void *data, const char *release);
enum slot_state grub_cfg_state(struct slot *s, decision_lookup_fn lookup, void *data);

/* After the files are written: grubenv through grub-editenv (SLOT_GRUBENV
 * changes are not written as files), then one regeneration of the menu if
 * any GRUB input changed and the policy allows (regenerate = auto: not
 * with --root; never with no_regenerate). Returns 0 or -EXIT_SYSTEM with
 * the tool's output shown. ran_tools counts the tools run. */
int grub_after_commit(const struct root *r, const struct policy *p, const struct slot_list *l,
		      const bool *changed, bool no_regenerate, unsigned *ran_tools);

/* Sets kernelopts in a grubenv through the root's grub2-editenv /
 * grub-editenv (used by revert). Returns 0 or -EXIT_SYSTEM. */
int grub_set_kernelopts(const struct root *r, const char *grubenv_path, const char *value);
