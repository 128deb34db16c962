/* slots/grub/grub.h - the GRUB slots (DESIGN section 5): the drop-in, the marked line
 * in /etc/default/grub, grubenv's kernelopts, and the generated menu, which
 * is never edited but regenerated with the root's own GRUB tools and read
 * back to verify its linux lines. Called from slots_find / slot_edit /
 * the apply command; implemented in slots/grub/grub.c. */
#pragma once

#include <stdbool.h>

#include "decide/decide.h"
#include "facts/policy.h"
#include "io/rootfs.h"
#include "slots/slot.h"

/* Appends the GRUB slots of the root to l (none where there is no GRUB). */
int grub_slots_find(const struct root *r, const struct policy *p, struct slot_list *l);

/* The editors of the GRUB kinds in the table of slot kinds (slots/table.c):
 * the drop-in, the marked line of /etc/default/grub, the recorded tokens,
 * grubenv's kernelopts. For the drop-in, /etc/default/grub and the tokens,
 * added and removed stay empty: they are shell or data files, not command
 * lines, and must never get a token-level edit (revert restores their
 * bytes, or takes the marked line out). */
char *grub_dropin_edit(const struct slot *s, const struct decision *d, struct strv *added, struct strv *removed,
		       size_t *new_len);
char *grub_default_edit(const struct slot *s, const struct decision *d, struct strv *added, struct strv *removed,
			size_t *new_len);
char *grub_tokens_edit(const struct slot *s, const struct decision *d, struct strv *added, struct strv *removed,
		       size_t *new_len);
char *grubenv_edit(const struct slot *s, const struct decision *d, struct strv *added, struct strv *removed,
		   size_t *new_len);

/* Should a missing GRUB input (drop-in, /etc/default/grub) be created for
 * this decision? Yes unless it is keep: the drop-in carries no token
 * itself, but the menu needs it both to add tokens and to take
 * contradicting ones out of GRUB_CMDLINE_LINUX*. */
bool grub_slot_creates(const struct slot *s, const struct decision *d);

/* The state of a generated menu (SLOT_GRUB_CFG) for the decisions: every
 * linux line of each kernel carries its decision's tokens. Pure: on drift
 * *why (NULL otherwise) gets the reason, from the facts found with the
 * menu (s->menu). lookup returns the decision of a kernel release
 * (NULL if unknown: the default's is used). */
/* The decision a menu's lines follow (the GRUB one), and in *own the
 * kernel of that release with its own decision and rules (NULL when not
 * installed or not known). */
struct kernel_decision;
typedef const struct decision *(*decision_lookup_fn)(void *data, const char *release,
						     const struct kernel_decision **own);
enum slot_state grub_cfg_state(const struct slot *s, decision_lookup_fn lookup, void *data, char **why);

/* Whether the menu is regenerated after a change: as the policy says
 * (regenerate = yes / auto on a live system; never with --root, where
 * regenerate = yes is ignored with a message), never (--no-regenerate), or
 * always (--regenerate: with --root in a private mount namespace, see
 * grub_regen_preflight). */
enum grub_regen_mode { GRUB_REGEN_POLICY, GRUB_REGEN_NEVER, GRUB_REGEN_FORCE };
/* Does mode leave the regeneration out: never, or as the policy says
 * where it says regenerate = no (policy_no) or the root is not live? */
static inline bool grub_regen_skipped(enum grub_regen_mode mode, bool policy_no, bool live)
{
	return mode == GRUB_REGEN_NEVER || (mode == GRUB_REGEN_POLICY && (policy_no || !live));
}

/* Before anything is written, for --regenerate: where the slots' changes
 * would regenerate a menu, that the root has a tool to do it and, with
 * --root, that the private mount namespace can be set up and the tool can
 * run in it. 0 or -EXIT_SYSTEM (reported). */
int grub_regen_preflight(const struct root *r, const struct slot_list *l, const bool *changed);

/* apply --regenerate with --root (slots/grub/image.c): the image's tool (update-grub, or
 * kernel-install for its UKIs: slots/uki.h) in a
 * private mount namespace with /dev, /proc, /sys, chrooted. The preflight
 * does the same setup and checks that the tool (and its #! interpreter)
 * can run inside, running nothing; 0 or -EXIT_SYSTEM, reported. The run
 * returns what spawn_run does. */
int grub_image_preflight(const struct root *r, const char *tool);
int grub_image_run(const struct root *r, const char *const *argv, const char *const *env, char **output);

/* After the files are written (grubenv's kernelopts among them, through
 * grub_kernelopts_block): one regeneration of the menu if any GRUB input
 * changed and mode allows. A SLOT_GRUB_CFG marked changed asks for a
 * regeneration too (a drifting menu whose inputs are in place, e.g. after
 * the decision changed), unless its facts say regenerating cannot
 * help (a later drop-in overrides ours, the drop-in is not in place).
 * Returns 0 or -EXIT_SYSTEM with the tool's output shown. ran_tools counts
 * the regenerations run. */
int grub_after_commit(const struct root *r, const struct policy *p, const struct slot_list *l, const bool *changed,
		      enum grub_regen_mode mode, unsigned *ran_tools);

/* ---- u-boot-menu (slots/grub/uboot.c) ----
 * Debian's u-boot-menu: u-boot-update writes /boot/extlinux/extlinux.conf
 * from /etc/default/u-boot and /etc/u-boot-menu/conf.d/\*.conf; the tool's
 * fragment there applies the recorded decision (GRUB_TOKENS_PATH, as the
 * GRUB drop-in does) to U_BOOT_PARAMETERS. Appends the fragment, the
 * recorded decision (where no GRUB slot did) and the menu, read and
 * verified: none where the root has neither u-boot-update nor an
 * extlinux.conf that it wrote. */
int uboot_slots_find(const struct root *r, const struct policy *p, struct slot_list *l);
/* The fragment's text built into the program; its editor (the text, or the
 * file as it is for keep). */
const char *uboot_dropin_builtin(size_t *len);
char *uboot_dropin_edit(const struct slot *s, const struct decision *d, struct strv *added, struct strv *removed,
			size_t *new_len);
/* After a commit that changed the fragment or the recorded decision, or
 * where extlinux.conf drifts and regenerating helps: u-boot-update, as
 * grub_after_commit runs GRUB's tool (called by it). */
int uboot_regen_preflight(const struct root *r, const struct slot_list *l, const bool *changed);
int uboot_after_commit(const struct root *r, const struct policy *p, const struct slot_list *l, const bool *changed,
		       enum grub_regen_mode mode, unsigned *ran_tools);

/* flash-kernel (slots/grub/flashk.c): /etc/default/flash-kernel, whose
 * LINUX_KERNEL_CMDLINE value is edited, and the boot script flash-kernel
 * writes for the machine (its database's Boot-Script-Path, else
 * /boot/boot.scr), read and verified: none where the root has no
 * flash-kernel (unless the policy says flash-kernel = yes). */
int flashk_slots_find(const struct root *r, const struct policy *p, struct slot_list *l);
char *flashk_default_edit(const struct slot *s, const struct decision *d, struct strv *added, struct strv *removed,
			  size_t *new_len);
/* Why the file's LINUX_KERNEL_CMDLINE is not one the tool edits ("DISP:LINE:
 * ..."), or NULL: every line naming it is a plain assignment (a quoted or
 * bare word without expansions, on a line of its own), and a shell
 * sourcing the file gets the value of the last one. Pure. */
char *flashk_value_problem(const char *disp, const char *text, size_t len);
/* The value the file gives LINUX_KERNEL_CMDLINE; NULL: not known. */
char *flashk_default_cmdline(const struct slot *s);
/* revert's undo of a file changed since the tool wrote it: the tokens
 * added taken out of the value, those removed put back where the
 * original value had them. */
char *flashk_default_undo(const char *cur, size_t cur_len, const char *original, size_t original_len,
			  const struct strv *added, const struct strv *removed, size_t *len);
/* The boot script's last "setenv bootargs" line as it is (its layers:
 * LINUX_KERNEL_CMDLINE_DEFAULTS, the board's own ${bootargs},
 * LINUX_KERNEL_CMDLINE); NULL: none. */
char *boot_script_bootargs(const struct slot *s);
/* After a commit that changed /etc/default/flash-kernel, or where the
 * boot script drifts and regenerating helps: flash-kernel, as
 * grub_after_commit runs GRUB's tool (called by it). */
int flashk_regen_preflight(const struct root *r, const struct slot_list *l, const bool *changed);
int flashk_after_commit(const struct root *r, const struct policy *p, const struct slot_list *l, const bool *changed,
			enum grub_regen_mode mode, unsigned *ran_tools);

/* The grubenv at path (inside the root) with kernelopts set to value, for
 * the transaction to replace the file with (never written in place: a
 * hard-linked grubenv keeps its other name). NULL with the error reported
 * (-EXIT_SYSTEM in *err) when it cannot be read, is not a GRUB environment
 * block, or the value does not fit. No program runs. */
char *grub_kernelopts_block(const struct root *r, const char *path, const char *value, size_t *len, int *err);

/* The command line a GRUB slot gives the default kernel (slot_cmdline):
 * grubenv's kernelopts value; the first linux line of a generated menu. */
char *grubenv_cmdline(const struct slot *s);
char *grub_menu_cmdline(const struct slot *s);

/* /etc/default/grub without the marked line(s) apply added (every other
 * byte kept): for revert when the file changed since the tool wrote it. */
char *grub_default_unmark(const char *text, size_t len, size_t *new_len);

/* Where the drop-in is installed on the Debian family, and the marked line
 * that sources it from DATA_PATH elsewhere ("...  # added by memcg-policy";
 * NULL: this build's $(DATADIR)). A new string. */
/* (GRUB_DROPIN_PATH, GRUB_DEFAULT_PATH: slots/slot.h) */
char *grub_marked_line(const char *data_path);
/* The drop-in the marked line is to source: on the live system this
 * build's $(DATADIR)/memcg-policy/99-memcg-policy.cfg; in an image the
 * first of that and /usr/share/... (the packages') it holds, NULL
 * when it holds none (its package is not installed: nothing the menu is
 * made from would carry the decision). */
const char *grub_data_path(const struct root *r);

/* ---- the recorded decision (slots/grub/tokens.c) ----
 * apply records what the drop-in applies in a data file the tool owns and
 * journals like every file it writes; the drop-in (through grub-cmdline)
 * reads only that file, never the policy: keep keeps, a policy error at
 * kernel-update time keeps the last applied state, revert deletes it. */
/* (GRUB_TOKENS_PATH: slots/slot.h) */
/* For apply --dry-run only: the program the drop-in runs, and the data it
 * reads instead of GRUB_TOKENS_PATH. */
#define ENV_GRUB_FILTER "MEMCG_POLICY_FILTER"
#define ENV_GRUB_TOKENS "MEMCG_POLICY_GRUB_TOKENS"

struct grub_tokens {
	struct strv add;    /* tokens to have: "cgroup_disable=memory" */
	struct strv remove; /* "name=item" not to have */
	size_t limit;	    /* bytes of the line the menu's kernels keep
			      * (COMMAND_LINE_SIZE - 1 of the smallest); 0 unknown */
};
/* "add TOKEN" / "remove TOKEN" lines, one optional "limit BYTES" line,
 * # comments; only memcg arguments (cgroup_disable=, cgroup_enable=,
 * cgroup.memory=) are accepted: anything else is bad input
 * (-EXIT_BADINPUT, its line in *bad_line; nothing printed: see
 * GRUB_TOKENS_BAD). */
int grub_tokens_parse(const char *text, size_t len, struct grub_tokens *t, unsigned *bad_line);
#define GRUB_TOKENS_BAD "not \"add TOKEN\" or \"remove TOKEN\" with a memcg argument, or \"limit BYTES\""
char *grub_tokens_format(const struct grub_tokens *t, size_t *len);
void grub_tokens_free(struct grub_tokens *t);

/* One kernel of a menu, for grub_menu_decision. */
struct grub_kernel {
	const char *release;
	const struct decide_kernel *dk; /* its rules (cmdline_memcg_state) */
	const struct decision *d;
};
/* The one decision a GRUB command line follows for all n kernels (idef the
 * default): keep when none has an opinion, or when they are decided
 * differently and the default has none (with a warning). Else the union of
 * their tokens where that gives each kernel with an opinion its state by
 * its own rules (a cgroup_enable=memory one kernel needs is an unread
 * variable of init on one without that parameter); else the memcg
 * switches taken out wherever they are and put back in the order that
 * does (e.g. cgroup_disable=memory then cgroup_enable=memory: off where
 * disable wins, on where the last wins). None: keep, and the error
 * returned (a new string naming a kernel of each state); else NULL. */
char *grub_menu_decision(const struct grub_kernel *k, size_t n, size_t idef, struct decision *out);

/* The decision every GRUB slot of an evaluation follows (grub_menu_decision
 * over the n kernels); where it is keep and the data file of l holds
 * tokens, those: the last applied state. A data file that cannot be read
 * then is bad input (-EXIT_BADINPUT, reported). */
struct kernel_decision;
int grub_decision(const struct kernel_decision *kd, size_t n, const struct kernel_decision *def,
		  const struct slot_list *l, struct decision *out);

/* In an image (--root, a chroot), where the GRUB data carries tokens:
 * does the image lack the program the drop-in runs (memcg-policy in the
 * directories grub.d/99-memcg-policy.cfg looks in), or, where
 * /etc/default/grub's marked line is to source the drop-in, the drop-in
 * file itself (grub_data_path)? Then no regeneration of its menu can
 * carry the decision. Not where the entries read grubenv's kernelopts,
 * which the tool writes itself. */
bool grub_image_lacks_program(const struct root *r, const struct slot_list *l, const struct slot_change *ch);

/* In an image (--root), a menu that drifts only because it was not
 * regenerated since the GRUB configuration became right gets its own
 * state, SLOT_NOT_REGENERATED (in sync for check), with a note saying so. */
struct slot_change;
void grub_settle_menus(const struct root *r, const struct slot_list *l, struct slot_change *ch);

/* apply --dry-run: the GRUB variables now and as the proposed data makes
 * them (the root's /etc/default/grub and grub.d/\*.cfg sourced by /bin/sh
 * from memory files, through the real drop-in and this program), and for
 * every linux line of each menu the line before and after regenerating.
 * Prints nothing where no GRUB input changes and no menu drifts. */
int grub_preview(const struct root *r, const struct slot_list *l, const struct slot_change *ch);

/* status: GRUB_CMDLINE_LINUX and _DEFAULT as the administrator wrote them
 * (each assignment, FILE:LINE, in the order grub-mkconfig sources them),
 * their values so, the values the menu gets through the drop-in and its
 * data now, and after apply where that differs. Prints nothing where GRUB
 * is not managed. */
int grub_status(const struct root *r, const struct slot_list *l, const struct slot_change *ch);

/* The line the menu's n kernels get from GRUB_CMDLINE_LINUX and
 * GRUB_CMDLINE_LINUX_DEFAULT once the drop-in applies the data as ch
 * leaves it (read by the tool's own reader; values that take code to know
 * are not judged): a memory item that cannot be taken out of its list, an
 * open quote in GRUB_CMDLINE_LINUX across a memcg argument, an edit that
 * makes a line longer than the menu's kernels keep, or a kernel with an
 * opinion that would not get its state (each by its own rules, normal and
 * recovery entries) is bad input naming the file and line that set the
 * value (-EXIT_BADINPUT, reported). A line already over the limit, and a
 * menu linux line over it, are warned about. */
int grub_check_lines(const struct root *r, const struct slot_list *l, const struct slot_change *ch,
		     const struct kernel_decision *kd, size_t n);

/* The drop-in's text built into the program. */
const char *grub_dropin_builtin(size_t *len);

/* The filter: GRUB_CMDLINE_LINUX (lin) and GRUB_CMDLINE_LINUX_DEFAULT (def)
 * reach the kernel joined by a space and are read as one line: the
 * removed items go from both (not from what follows a "--" in lin, which
 * goes to init), the added tokens go into lin (recovery entries get only
 * lin) and out of def (so normal entries carry them once). Every other byte
 * is kept. -EXIT_BADINPUT (nothing set) for a value with a line break or an
 * open quote in lin running on into def through a memcg argument. */
int grub_filter(const struct grub_tokens *t, const char *lin, const char *def, char **lin_out, char **def_out);

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
/* The block with name set to value, as grub-editenv's set writes it: the
 * variable replaced where it is (else appended after the last one), '\'
 * and line breaks escaped with '\', the rest of the block moved and padded
 * with '#' to the same size. -EINVAL (not a GRUB environment block, or a
 * broken one), -ENOSPC (the value does not fit), else 0 and *out (len
 * bytes). */
int grubenv_set(const char *text, size_t len, const char *name, const char *value, char **out);
