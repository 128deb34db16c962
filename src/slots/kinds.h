/* slots/kinds.h - private to the slot modules: what slots/table.c (the table of
 * slot kinds) needs from slots/bls.c, slots/kcmdline.c and slots/rpi.c (the
 * GRUB kinds are in slots/grub/grub.h; the helpers they share in slots/slot-int.h). */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "decide/decide.h"
#include "slots/find-boot.h"
#include "facts/policy.h"
#include "io/rootfs.h"
#include "slots/slot-int.h"
#include "slots/slot.h"

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
/* This root's names on a shared boot partition (slots/bls-scope.c): its
 * machine id and every entry token it may use. */
struct bls_identity {
	char *machine_id;   /* /etc/machine-id, NULL if none */
	struct strv tokens; /* machine id, /etc/kernel/entry-token, os-release IMAGE_ID, ID */
};
void bls_identity_load(const struct root *r, struct bls_identity *id);
void bls_identity_free(struct bls_identity *id);
/* Why the entry at path belongs to another installation (a new string),
 * or NULL when it is this one's; pure. */
char *bls_entry_foreign(const struct bls_identity *id, const char *path, const char *machine_id_key,
			const char *release);
/* Why an entry that names no kernel release (no version line, no release
 * in its linux path) seems another installation's (a new string), or NULL
 * when it is this root's: its machine-id is this root's, its file name is
 * one of this root's entry tokens (alone or before "-"), or its linux
 * image is a file of this root's /boot by that name. */
char *bls_entry_unowned(const struct root *r, const struct bls_identity *id, const char *path,
			const char *machine_id_key, const char *linux_path);
/* The kernel an entry boots: its linux path's release, else its version
 * without sdbootutil's "SNAPSHOT@"; NULL if neither names one. */
char *bls_entry_kernel(const char *version, const char *linux_path);
/* Kernel release named by an entry's linux path, NULL if none. */
char *bls_version_from_linux(const char *path);
/* layout= of kernel-install's install.conf (/etc/kernel, else /usr/lib/kernel) */
enum { KI_LAYOUT_UNSET = -1, KI_LAYOUT_OTHER, KI_LAYOUT_BLS, KI_LAYOUT_UKI };
int kernel_install_layout(const struct root *r);
/* Does this root install kernels with kernel-install (see slots/kcmdline.c)? */
bool kernel_install_used(const struct root *r, const struct slot_list *l);

/* The unified kernel images of a boot directory ($BOOT/EFI/Linux/NAME.efi),
 * each read as systemd-stub reads it (slots/uki.c): its .cmdline and
 * .uname, and the addons that apply to it. */
int uki_slots_find(const struct root *r, const struct policy *p, const struct bls_identity *id, const char *boot_dir,
		   struct slot_list *l);
/* A boot entry that boots a UKI (a uki key, no linux key: s, found in
 * boot_dir, with its options lines joined in options). With options and
 * Secure Boot off, the options replace the UKI's own line: s stays a BLS
 * entry the tool edits. Else s becomes a read-only SLOT_UKI whose line
 * is the UKI's own and its addons' (the options are ignored under Secure
 * Boot). 0, or a negative exit code for an I/O error. */
int uki_entry_slot(const struct root *r, const struct policy *p, const char *boot_dir, struct slot *s, const char *uki,
		   const char *options);
int kcmdline_slots_find(const struct root *r, const struct policy *p, const char *default_kernel, struct slot_list *l);
int rpi_slots_find(const struct root *r, const struct policy *p, struct slot_list *l);
