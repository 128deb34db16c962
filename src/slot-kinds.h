/* slot-kinds.h - private to the slot modules: what slot.c (discovery
 * order, dispatch) needs from slot-bls.c, slot-kcmdline.c and slot-rpi.c,
 * and the helpers they share. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "decide.h"
#include "find-boot.h"
#include "policy.h"
#include "rootfs.h"
#include "slot.h"

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
void add_tokens(char **text, size_t *len, const struct strv *add, joined_fn joined, void *ctx, struct strv *added);

/* BLS entries and UKIs of every boot directory. */
int bls_slots_find(const struct root *r, const struct policy *p, const struct boot_dirs *b, struct slot_list *l);
char *bls_slot_edit(const struct slot *s, const struct decision *d, struct strv *added, struct strv *removed,
		    size_t *new_len);
char *bls_slot_cmdline(const struct slot *s);
/* The reader's part of discovery, pure (for fuzzing): from s->content
 * (an entry's text), sets s->kernel (version, else from the linux path)
 * and, for entries the tool must not edit, s->unmanaged and s->note. p may
 * be NULL. */
void bls_entry_describe(struct slot *s, const struct policy *p);
/* An entry the editor cannot handle safely: a quote opened in an options
 * line (before the kernel's parameters end) that runs on into the next
 * options line. Bad input, "DISP:LINE: ..." (-EXIT_BADINPUT); pure. */
int bls_entry_check(const char *disp, const char *text, size_t len);
/* The line /etc/kernel/cmdline is created with: the options of the
 * default kernel's entry without initrd=, BOOT_IMAGE=,
 * systemd.machine_id=; NULL if there is none or it lacks root=.
 * *from_path (optional) is set to the entry's path. */
char *bls_base_cmdline(const struct slot_list *l, const char *default_kernel, const char **from_path);
/* This root's names on a shared boot partition (slot-bls-scope.c): its
 * machine id and every entry token it may use. */
struct bls_identity {
	char *machine_id;  /* /etc/machine-id, NULL if none */
	struct strv tokens; /* machine id, /etc/kernel/entry-token, os-release IMAGE_ID, ID */
};
void bls_identity_load(const struct root *r, struct bls_identity *id);
void bls_identity_free(struct bls_identity *id);
/* Why the entry at path belongs to another installation (a new string),
 * or NULL when it is this one's; pure. */
char *bls_entry_foreign(const struct bls_identity *id, const char *path, const char *machine_id_key,
			const char *release);
/* The kernel an entry boots: its linux path's release, else its version
 * without sdbootutil's "SNAPSHOT@"; NULL if neither names one. */
char *bls_entry_kernel(const char *version, const char *linux_path);
/* Kernel release named by an entry's linux path, NULL if none. */
char *bls_version_from_linux(const char *path);
/* Does this root install kernels with kernel-install (see slot-kcmdline.c)? */
bool kernel_install_used(const struct root *r, const struct slot_list *l);

int kcmdline_slots_find(const struct root *r, const struct policy *p, const char *default_kernel,
			struct slot_list *l);
int rpi_slots_find(const struct root *r, const struct policy *p, struct slot_list *l);
