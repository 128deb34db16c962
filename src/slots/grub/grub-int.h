/* slots/grub/grub-int.h - private to the GRUB modules (slots/grub/grub.c: finding and
 * editing the inputs; slots/grub/menu.c: reading generated menus; slots/grub/run.c:
 * running the root's GRUB tools; slots/grub/tokens.c: the recorded tokens;
 * slots/grub/grubenv.c: the environment block; slots/grub/vars.c: the
 * values of the GRUB variables; slots/grub/plan.c: the decision, the
 * preview, status and the check of the lines). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>

#include "slots/grub/grub.h"
#include "io/rootfs.h"
#include "lib/util.h"

#define GRUB_MARK "# added by memcg-policy"
#define GRUB_DROPIN_NAME "99-memcg-policy.cfg"

extern const char *const grub_menus[2]; /* /boot/grub/grub.cfg, /boot/grub2/grub.cfg */

/* Was a modified after b (an input after the menu made from it)? */
static inline bool grub_newer(const struct stat *a, const struct stat *b)
{
	return a->st_mtim.tv_sec > b->st_mtim.tv_sec ||
	       (a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec > b->st_mtim.tv_nsec);
}

/* Sets *field (a fact of struct menu_facts) to the formatted text, line
 * breaks as spaces, unless an earlier fact already set it
 * (slots/grub/menu.c). */
void menu_fact(char **field, const char *fmt, ...) _printf_(2, 3);

/* After a commit, a menu's tool (argv, argv[0] its path in the root) as
 * the mode and the policy (regenerate = no: policy_no) allow: on the live
 * system, or chrooted into the image in its private mount namespace; else
 * a line saying it did not run, naming the menu ("GRUB menu") and how to
 * run it. what names the menu in the progress line. 0, or spawn_failed's
 * error; ran_tools counts the runs. */
int menu_tool_run(const struct root *r, enum grub_regen_mode mode, bool policy_no, const char *const *argv,
		  const char *menu, const char *what, const char *how, unsigned *ran_tools);

/* An executable regular file named name in the root's bin directories. */
char *grub_find_tool(const struct root *r, const char *name);
const char *grub_basename(const char *p);

/* How the root regenerates its menu. */
struct grub_regen {
	char *tool; /* path in the root: update-grub, grub-mkconfig or grub2-mkconfig */
	char *menu; /* the menu it writes; NULL: update-grub's own */
	bool update_grub;
};
void grub_find_regen(const struct root *r, struct grub_regen *g);
void grub_regen_free(struct grub_regen *g);
/* "update-grub", "grub2-mkconfig -o /boot/grub2/grub.cfg" */
char *grub_regen_text(const struct grub_regen *g);

/* One kernel command line of a menu: from a linux line, or the fallback
 * `set kernelopts="..."` of RHEL 8 style menus. */
struct menu_line {
	unsigned line;
	char *release; /* NULL: not known (kernelopts) */
	char *image;   /* the linux line's kernel path; NULL for kernelopts */
	char *cmdline;
	bool recovery;
	bool is_linux;	  /* a linux / linux16 / linuxefi line */
	const char *text; /* the menu line as it is (no '\n') */
	size_t text_len;
};

typedef bool (*menu_line_fn)(void *data, const struct menu_line *m);

/* Calls fn for every kernel command line of the sections written by a
 * *linux* script, or of the whole menu when it has no "### BEGIN" marks.
 * Stops when fn returns false. */
void grub_menu_lines(const char *text, size_t len, menu_line_fn fn, void *data);
/* The same for u-boot-update's extlinux.conf (slots/grub/uboot.c): each
 * label's append line, its kernel from its linux (or kernel) line,
 * recovery where its menu label says rescue or recovery. */
void extlinux_menu_lines(const char *text, size_t len, menu_line_fn fn, void *data);
/* Is kw the first word of the line l (n bytes; blanks before it, a blank
 * or the end after it, case as written, as U-Boot reads extlinux.conf and
 * scripts)? *arg: where the text after it and its blanks starts
 * (slots/grub/uboot.c). */
bool menu_keyword(const char *l, size_t n, const char *kw, size_t *arg);
/* A U-Boot boot script's text (slots/grub/bootscr.c): out of a legacy
 * U-Boot image of type script (its header, the lengths of its parts
 * ending in 0, then the first part), or the file as it is where it lacks
 * the image's magic. false: an image of another type, or cut short. name:
 * the image's name ("" for a file of text). */
#define UIMAGE_NAME_LEN 32u
bool boot_script_text(const char *content, size_t len, const char **text, size_t *tlen, char name[UIMAGE_NAME_LEN + 1]);
/* The tool that makes a menu of the kind: "u-boot-update", "flash-kernel",
 * "update-grub / grub-mkconfig". */
const char *menu_tool_name(enum slot_kind k);
/* The same for flash-kernel's boot script (slots/grub/flashk.c): one
 * line, the bootargs its setenv lines build (the board's own ${bootargs}
 * and other variables of its environment left out), its kernel from
 * fk_kvers. */
void boot_script_menu_lines(const char *content, size_t len, menu_line_fn fn, void *data);

/* ---- slots/grub/vars.c ---- */

/* GRUB_CMDLINE_LINUX and _DEFAULT, and where each was set last */
struct vars {
	char *lin, *def;
	/* where each was set last, by the tool's reader (NULL: unset, or
	 * known through the shell) */
	char *lin_at, *def_at;
};

/* Why a value could not be known without running code: FILE:LINE: why. */
struct unknown {
	char *where; /* display path of the file */
	unsigned line;
	const char *why;
};

void grub_unknown_clear(struct unknown *u);

/* The values three ways: [0] as written, [1] with the drop-in's filter of
 * the tokens recorded now, [2] of the tokens the change would record; by
 * the tool's reader only. -ENOEXEC with *u: a value takes running code to
 * know; -ENOENT: no GRUB input or tokens slot. */
int grub_read_vars(const struct root *r, const struct slot_list *l, const struct slot_change *ch, struct vars out[3],
		   struct unknown *u);

/* The same, and where the reader cannot know them on the live system, by
 * the shell or its cache; *why_not (newly allocated) says why neither
 * could. */
int grub_get_vars(const struct root *r, const struct slot_list *l, const struct slot_change *ch, struct vars v[3],
		  char **why_not);

void grub_vars_free(struct vars v[3]);
