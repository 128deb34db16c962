/* slots/slot.h - the places that hold a kernel command line (DESIGN section 5).
 * Finding slots reads the root; editing a slot is pure: given its current
 * content and a decision, compute the new content. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "decide/decide.h"
#include "facts/policy.h"
#include "io/rootfs.h"
#include "lib/util.h"

/* The fixed paths a slot kind can have, inside the root (slots/slot.c's table
 * maps each to its kind; a BLS entry is any NAME.conf in an entries
 * directory of a boot partition). */
#define KCMDLINE_PATH "/etc/kernel/cmdline"
#define RPI_EXTRA_PATH "/etc/default/raspi-extra-cmdline"
#define RPI_CMDLINE_PATH "/boot/firmware/cmdline.txt"
#define RPI_CMDLINE_OLD_PATH "/boot/cmdline.txt" /* before Debian 12 / Raspberry Pi OS bookworm */
#define GRUB_DROPIN_PATH "/etc/default/grub.d/99-memcg-policy.cfg"
#define GRUB_DEFAULT_PATH "/etc/default/grub"
#define GRUB_TOKENS_PATH "/var/lib/memcg-policy/grub.tokens"
#define GRUBENV_PATH "/boot/grub/grubenv"
#define GRUBENV2_PATH "/boot/grub2/grubenv" /* the Fedora family's */
#define UBOOT_DROPIN_PATH "/etc/u-boot-menu/conf.d/99-memcg-policy.conf"
#define EXTLINUX_PATH "/boot/extlinux/extlinux.conf"
#define FLASHK_DEFAULT_PATH "/etc/default/flash-kernel"

enum slot_kind {
	SLOT_BLS,	     /* $BOOT/loader/entries/NAME.conf: options lines */
	SLOT_KERNEL_CMDLINE, /* /etc/kernel/cmdline */
	SLOT_RPI,	     /* cmdline.txt, one line */
	SLOT_RPI_EXTRA,	     /* /etc/default/raspi-extra-cmdline (Debian raspi-firmware) */
	SLOT_GRUB_DROPIN,    /* /etc/default/grub.d/99-memcg-policy.cfg */
	SLOT_GRUB_DEFAULT,   /* /etc/default/grub: marked line that sources the drop-in */
	SLOT_GRUB_CFG,	     /* generated menu: read only, verified */
	SLOT_GRUBENV,	     /* kernelopts in grubenv: the value; the block is rewritten whole */
	SLOT_UKI,	     /* UKIs in $BOOT/EFI/Linux: read, rebuilt by kernel-install */
	SLOT_GRUB_TOKENS,    /* /var/lib/memcg-policy/grub.tokens: what the GRUB and u-boot-menu drop-ins apply */
	SLOT_UBOOT_DROPIN,   /* /etc/u-boot-menu/conf.d/99-memcg-policy.conf */
	SLOT_EXTLINUX,	     /* u-boot-update's /boot/extlinux/extlinux.conf: read only, verified */
	SLOT_FLASHK_DEFAULT, /* /etc/default/flash-kernel: the value of LINUX_KERNEL_CMDLINE */
	SLOT_BOOT_SCRIPT,    /* flash-kernel's U-Boot script (/boot/boot.scr): read only, verified */
};

/* SLOT_NOT_REGENERATED: a generated GRUB menu in an image whose
 * configuration is right but which was not regenerated yet (in sync). */
enum slot_state { SLOT_IN_SYNC, SLOT_DRIFT, SLOT_MISSING, SLOT_UNMANAGED, SLOT_NOT_REGENERATED };

/* What a generated GRUB menu is made from, found with it (slots/grub/grub.c)
 * and read by its verdict (grub_cfg_state). Each text is the first one
 * found, NULL where there is none. */
struct menu_facts {
	char *regen;		 /* how to regenerate it ("update-grub") */
	char *overrides;	 /* something that overrides the drop-in or the marked line */
	char *missing;		 /* the drop-in or the marked line is not in place */
	char *default_value;	 /* GRUB_CMDLINE_LINUX_DEFAULT as the files set it last */
	char *stale;		 /* an input newer than the menu */
	bool regeneration_helps; /* regenerating would fix a drift: nothing overrides, nothing is missing */
};

/* What a unified kernel image gives its kernel (slots/uki.c): the line
 * systemd-stub builds is the slot's content; these are its parts. */
struct uki_facts {
	char *own;		 /* its .cmdline as the stub reads it; NULL: none */
	char *uname;		 /* its .uname; NULL: none */
	struct strv addons;	 /* the addons that apply, in the stub's order (paths) */
	struct strv addon_lines; /* their .cmdline, same index */
	/* the command that rebuilds it from /etc/kernel/cmdline ("kernel-install
	 * add VER KERNEL [INITRD]", argv joined by spaces), NULL: none; then
	 * no_rebuild says why */
	struct strv rebuild;
	char *no_rebuild;
	/* a multi-profile UKI: own and uname are its default profile's (@0,
	 * its own .cmdline where it has one, else the base one) */
	size_t profiles;   /* 0: not a multi-profile UKI */
	bool profile_own;  /* @0 has a .cmdline of its own */
	size_t others_own; /* other profiles with a .cmdline of their own (not judged) */
};

struct slot {
	enum slot_kind kind;
	char *path;   /* inside the root */
	char *kernel; /* version this slot belongs to; NULL = the default kernel's (global) */
	bool exists;
	bool create;   /* missing, and the tool should create it */
	char *content; /* current bytes (NUL-terminated), NULL if missing */
	size_t len;
	mode_t mode;		 /* for a new file */
	bool unmanaged;		 /* reported, never edited (UKI, $kernelopts, bootloaders = no) */
	char *note;		 /* unmanaged: why, and how to rebuild; drift: why */
	struct menu_facts *menu; /* SLOT_GRUB_CFG: what it is made from; NULL otherwise */
	struct uki_facts *uki;	 /* SLOT_UKI: its parts; NULL otherwise */
	/* revert's undo only: the command line before the tool changed it,
	 * where tokens put back go (cmdline_edit_like); NULL otherwise */
	const char *like;
	size_t like_len;
	/* SLOT_GRUB_DEFAULT: the drop-in its marked line sources (a static
	 * string, slots/grub/grub.h grub_data_path); NULL: none in the image */
	const char *source;
};

/* Would regenerating fix a generated menu's drift? Not when its facts say
 * something overrides the tool's input or it is not in place. */
static inline bool slot_regeneration_helps(const struct slot *s) { return !s->menu || s->menu->regeneration_helps; }

/* What the plan does with a slot (plan/plan.h): its new content and why. */
struct slot_change {
	enum slot_state state;	  /* in-sync, drift, missing (the file does not exist), unmanaged */
	const struct decision *d; /* the decision this slot follows; NULL if unmanaged */
	const char *kernel;	  /* release whose decision applies */
	char *new_content;	  /* NULL: read-only or unmanaged */
	size_t new_len;
	bool changed; /* new_content differs (or the file is to be created) */
	struct strv added;
	struct strv removed;
	char *note; /* the plan's word on it (why it drifts, is not managed); NULL: the slot's own */
};

struct slot_list {
	struct slot *v;
	size_t n;
	char *boot_dir;	      /* $BOOT found for BLS, NULL if none */
	struct strv rejected; /* "PATH: why it is not a boot partition" */
	bool uses_kernel_install;
};

void slots_free(struct slot_list *l);
void menu_facts_free(struct menu_facts *m);
void uki_facts_free(struct uki_facts *u);
/* Does the slot keep the boot configuration from being in sync: it
 * differs, or it is missing and must be created? (A missing file that
 * the decision needs nothing in is missing, and in sync.) */
static inline bool slot_change_drifts(const struct slot_change *c)
{
	return c->state == SLOT_DRIFT || (c->state == SLOT_MISSING && c->changed);
}

/* What to say about a slot: the plan's note, else the slot's own. */
static inline const char *slot_note(const struct slot *s, const struct slot_change *c)
{
	return c && c->note ? c->note : s->note;
}

/* The kind of a file the tool may write (the paths above, and BLS
 * entries: /boot, /efi or /boot/efi + /loader/entries/NAME.conf, a plain
 * name); false for any other path (revert writes only these). Plain
 * paths only: no "." or ".." component, no "//". kind may be NULL. */
bool slot_kind_of_path(const char *path, enum slot_kind *kind);
const char *slot_kind_name(enum slot_kind k);
/* The generated menus: GRUB's grub.cfg, u-boot-update's extlinux.conf,
 * flash-kernel's boot script. */
enum { MENU_GRUB = 1, MENU_UBOOT = 2, MENU_FLASHK = 4 };
/* The menus (MENU_*) a kind is an input of, or, for a menu, its own. */
unsigned slot_kind_menus(enum slot_kind k);
/* Is the kind an input of a generated menu (a change to it is followed by
 * one regeneration)? */
bool slot_kind_feeds_menu(enum slot_kind k); /* "bls", "kernel-cmdline", "rpi", ... */
/* Is the kind a generated menu, read and verified, never edited? */
bool slot_kind_is_menu(enum slot_kind k);
/* Would these changes (changed[i] for l->v[i]) regenerate the menu (one
 * MENU_*): a managed slot of that menu's own is there, and one of its
 * inputs changed, or it drifts and its facts say regenerating would fix
 * it. */
bool slots_menu_regen_needed(const struct slot_list *l, const bool *changed, unsigned menu);
const char *slot_state_name(enum slot_state s); /* "in-sync", "drift", "missing", "unmanaged" */
