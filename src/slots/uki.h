/* slots/uki.h - unified kernel images as slots (slots/uki.c reads them, as
 * systemd-stub does) and their rebuild after a commit (slots/uki-run.c):
 * the root's own kernel-install, from /etc/kernel/cmdline. */
#pragma once

#include <stdbool.h>

#include "io/rootfs.h"
#include "lib/util.h"
#include "slots/grub/grub.h"
#include "slots/slot.h"

/* The UKI's state against the tokens its kernel's decision adds and
 * removes ("name=item", as cmdline_faults reads them): in sync when the
 * line the stub gives carries them, else drift, and *why says what it
 * lacks or has, where from, and what rebuilds it. Pure. */
enum slot_state uki_state(const struct slot *s, const struct strv *add, const struct strv *remove, char **why);

/* The command that rebuilds a UKI slot, its words joined by spaces (a new
 * string); NULL where there is none. */
char *uki_rebuild_command(const struct slot *s);

/* Would rebuilding it from /etc/kernel/cmdline help: there is a rebuild
 * command, and no addon brings a token to be removed (an addon outlives
 * every rebuild)? */
bool uki_rebuild_helps(const struct slot *s, const struct strv *remove);

/* Before anything is written, for --regenerate with --root: that
 * kernel-install can run inside the image, for the UKIs marked changed.
 * 0 or -EXIT_SYSTEM (reported). */
int uki_rebuild_preflight(const struct root *r, const struct slot_list *l, const bool *changed);

/* After the files are written: each UKI marked changed is rebuilt, once
 * per command, as the mode allows (as GRUB's menu: slots/grub/grub.h;
 * policy_no: the policy says regenerate = no),
 * never from inside kernel-install (KERNEL_INSTALL_STAGING_AREA set:
 * the plugin runs while a UKI is being built). Returns 0 or -EXIT_SYSTEM
 * with the tool's output shown; *ran counts the commands run. */
int uki_after_commit(const struct root *r, const struct slot_list *l, const bool *changed, enum grub_regen_mode mode,
		     bool policy_no, unsigned *ran);
