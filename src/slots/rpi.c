/* slots/rpi.c - Raspberry Pi: the firmware reads the kernel's command line
 * from cmdline.txt on the boot partition (/boot/firmware/cmdline.txt,
 * older /boot/cmdline.txt), one line.
 *
 * Debian's raspi-firmware (/etc/kernel/postinst.d/z50-raspi-firmware)
 * rewrites cmdline.txt at every kernel update as its own arguments
 * followed by the content of /etc/default/raspi-extra-cmdline. There both
 * are slots: the extra file (created when missing) so that the next
 * kernel update keeps the decision, and cmdline.txt, what the firmware
 * reads, so that the next boot has it without waiting for that update.
 * Both get the same tokens at their end, so the hook's next cmdline.txt
 * is the one the tool wrote. */
#include "lib/diag.h"
#include "slots/kinds.h"
#include "slots/rpi-config.h"

#include <stdio.h>

#define RASPI_FIRMWARE_HOOK "/etc/kernel/postinst.d/z50-raspi-firmware"
#define RASPI_EXTRA RPI_EXTRA_PATH

/* One command line: anything but whitespace after the first line is bad input. */
static int check_one_line(const struct root *r, const char *path, const char *text, size_t len)
{
	unsigned line = 1;
	for (size_t i = 0; i < len; i++) {
		if (text[i] == '\n') {
			line++;
			continue;
		}
		if (line > 1 && !strchr(" \t\r\v\f", text[i])) {
			_cleanup_free_ char *disp = root_display(r, path);
			return diag_error(EXIT_BADINPUT,
					  "%s:%u: more than one line (the command line must be one line)", disp, line);
		}
	}
	return 0;
}

static int add_file(const struct root *r, const struct policy *p, enum slot_kind kind, const char *path, bool create,
		    const char *unmanaged_note, struct slot_list *l)
{
	char *text;
	size_t len;
	int e = slot_read_text(r, path, &text, &len);
	if (e < 0)
		return e;
	if (!text && !create)
		return 0;
	if (text) {
		e = check_one_line(r, path, text, len);
		if (e < 0) {
			free(text);
			return e;
		}
	}
	char *off = p ? slot_policy_off(p, p->rpi, &p->rpi_origin, "rpi") : NULL;
	if (!text && off) {
		free(off);
		return 0;
	}
	struct slot *s = slot_list_add(l, kind, path);
	if (text) {
		s->exists = true;
		s->content = text;
		s->len = len;
	} else {
		s->create = true;
		s->content = xstrdup("");
		s->len = 0;
		s->note = xstrdup("missing: created with the arguments to append");
	}
	if (unmanaged_note || off) {
		s->unmanaged = true;
		free(s->note);
		if (off && unmanaged_note) {
			s->note = xasprintf("%s; %s", unmanaged_note, off);
			free(off);
		} else {
			s->note = off ? off : xstrdup(unmanaged_note);
		}
	}
	return 0;
}

/* The command line files the firmware reads, by config.txt (os_prefix=,
 * cmdline=) for the boards that count; without a config.txt the two
 * places it has been. */
static void cmdline_files(const struct root *r, struct strv *out)
{
	struct rpi_config c;
	if (rpi_config_read(r, &c) == 0 && c.dir) {
		for (size_t i = 0; i < c.n; i++)
			if (rpi_boot_counts(&c, i) && !strv_contains(out, c.boot[i].cmdline_path) &&
			    root_exists(r, c.boot[i].cmdline_path))
				strv_pushdup(out, c.boot[i].cmdline_path);
		rpi_config_free(&c);
		if (out->n)
			return;
	}
	static const char *const txt[] = { RPI_CMDLINE_PATH, RPI_CMDLINE_OLD_PATH };
	for (size_t i = 0; i < ARRAY_SIZE(txt); i++)
		if (root_exists(r, txt[i])) {
			strv_pushdup(out, txt[i]);
			return;
		}
}

int rpi_slots_find(const struct root *r, const struct policy *p, struct slot_list *l)
{
	_cleanup_strv_ struct strv found = { 0 };
	cmdline_files(r, &found);
	int e = 0;
	for (size_t i = 0; i < found.n && e >= 0; i++)
		e = add_file(r, p, SLOT_RPI, found.v[i], false, NULL, l);
	if (e >= 0 && root_exists(r, RASPI_FIRMWARE_HOOK))
		e = add_file(r, p, SLOT_RPI_EXTRA, RASPI_EXTRA, true, NULL, l);
	return e;
}
