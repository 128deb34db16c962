/* plan/plan.h - the whole picture a command works from: the decision for every
 * kernel, every slot, and each slot's new content (the plan), computed
 * before anything is written. */
#pragma once

#include <stdbool.h>

#include "facts/context.h"
#include "decide/decide.h"
#include "slots/slot.h"

struct evaluation {
	struct kernel_decision *kd;
	size_t n_kd;
	struct kernel_decision *def; /* the default kernel's */
	struct decision grub;	     /* what the GRUB slots follow (grub_decision) */
	/* --kernel with GRUB managed: one GRUB command line serves every
	 * installed kernel, so the others are read and decided too:
	 * menu_kd holds them all, menu_kd[menu_own] borrowed from kd[0] */
	struct kernel_list menu_kernels;
	struct kernel_decision *menu_kd;
	size_t n_menu_kd, menu_own;
	struct slot_list slots;
	struct slot_change *ch; /* one per slot, same index */
	bool in_sync;
	/* no managed boot slot (none at all, or only unmanaged ones), for
	 * a kernel the decision has an opinion on: nothing carries the
	 * decision to the next boot (a boot partition not mounted, a tree
	 * before its boot loader, a GRUB file without GRUB); never in sync */
	bool no_boot_config;
	/* an image whose GRUB data carries tokens lacks the program its GRUB
	 * drop-in runs: no menu it makes carries them; never in sync */
	bool grub_no_program;
	bool reboot_pending; /* live: the running kernel runs otherwise,
				      * having booted with an older line */
	/* live: the running kernel booted with the line the configuration
	 * gives it and runs otherwise all the same: what wins, as a sentence
	 * (never in sync: the next boot of that kernel has it again) */
	char *kernel_ignored;
};

/* Loads policy, kernels (only_kernel limits them), system facts and slots,
 * decides every kernel and plans every slot. Pure after the loading.
 * Returns 0 or a negative exit code (already reported). */
int evaluate(struct context *ctx, const char *only_kernel, struct evaluation *ev);
/* Frees what an evaluation holds and zeroes it: safe to call again */
void evaluation_free(struct evaluation *ev);
/* An evaluation freed when it goes out of scope */
#define _cleanup_evaluation_ _cleanup_(evaluation_free)

/* After a commit that wrote every changed slot's new content, and nothing
 * else (no menu regenerated): the evaluation a new look would give,
 * made from what was written instead of reading it all again. Only where
 * a slot's facts come from its bytes alone: no generated GRUB menu (its
 * facts compare file times) and no slot created (a missing slot's note).
 * Where the decisions cannot depend on the slots' bytes (no keep), they
 * stand and each written slot is in sync; else all is decided and planned
 * again. Returns 0 or a negative exit code, as evaluate. */
bool evaluation_can_follow_commit(const struct evaluation *ev);
int evaluation_follow_commit(struct context *ctx, const char *only, struct evaluation *ev);

/* One slot's plan, pure: its state, new content and the tokens added and
 * removed, from the decisions of ev (kd, def, grub) and the slot's
 * content; only is --kernel (NULL: all). A slot of no known kernel, or
 * one the tool may not edit, is unmanaged (c->note says why where the
 * plan knows). 0, or -EXIT_BADINPUT for an edit the tool refuses (an
 * item it cannot take out of a list exactly, a line pushed past the
 * kernel's COMMAND_LINE_SIZE), said with the slot's path. c is zeroed
 * by the caller; its fields are freed as evaluation_free frees them. */
int plan_slot(const struct evaluation *ev, const struct slot *s, struct slot_change *c, const char *only);

/* The decision of a kernel release, NULL if that kernel is not known. */
const struct kernel_decision *evaluation_find(const struct evaluation *ev, const char *release);

/* The command line the boot configuration gives a kernel (its own slot,
 * else for the default kernel the first global slot); NULL if none. */
char *evaluation_boot_cmdline(const struct evaluation *ev, const struct kernel_decision *kd);
