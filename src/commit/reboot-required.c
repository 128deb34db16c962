/* commit/reboot-required.c - /run/reboot-required and its .pkgs list (see
 * commit/reboot-required.h). The files' form is update-notifier-common's
 * (/usr/share/update-notifier/notify-reboot-required): the flag holds
 * "*** System restart required ***", the list a package name a line. */
#include "commit/reboot-required.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "io/rootfs.h"
#include "io/txn.h"
#include "lib/diag.h"
#include "lib/util.h"

#define NOTE_DIR "/run"
#define PKG "memcg-policy"
#define FLAG_TEXT "*** System restart required ***\n"

/* Each function below returns 0, or -1 after a warning. */

/* The list's bytes, NULL and 0 when it does not exist. */
static int read_list(const char *path, char **text, size_t *len)
{
	int r = read_host_file(path, 1 << 20, text, len);
	if (r == -ENOENT) {
		*text = NULL;
		*len = 0;
		return 0;
	}
	if (r < 0) {
		diag_warn("%s: %s", path, strerror(-r));
		return -1;
	}
	return 0;
}

static bool has_line(const char *text, size_t len, const char *line)
{
	size_t n = strlen(line);
	for (size_t i = 0; i < len;) {
		const char *nl = memchr(text + i, '\n', len - i);
		size_t l = nl ? (size_t)(nl - (text + i)) : len - i;
		if (l == n && memcmp(text + i, line, n) == 0)
			return true;
		i += l + 1;
	}
	return false;
}

/* NOTE_DIR/NAME written whole (io/txn.h), mode 0644. */
static int write_whole(const char *name, const char *data, size_t len)
{
	_cleanup_free_ char *path = path_join(NOTE_DIR, name);
	diag_errors_as_warnings(true);
	int r = write_host_file_atomic(path, data, len, 0644);
	diag_errors_as_warnings(false);
	return r < 0 ? -1 : 0;
}

static int remove_file(const char *name)
{
	_cleanup_free_ char *path = path_join(NOTE_DIR, name);
	if (unlink(path) < 0 && errno != ENOENT) {
		diag_warn("%s: %s", path, strerror(errno));
		return -1;
	}
	return 0;
}

static int add_note(void)
{
	_cleanup_free_ char *list = path_join(NOTE_DIR, "reboot-required.pkgs");
	_cleanup_free_ char *text = NULL;
	size_t len = 0;
	int r = read_list(list, &text, &len);
	if (r < 0)
		return r;
	if (!text || !has_line(text, len, PKG)) {
		const char *was = text ? text : "";
		size_t was_len = text ? len : 0;
		bool open_line = was_len > 0 && was[was_len - 1] != '\n';
		_cleanup_free_ char *updated = xasprintf("%.*s%s" PKG "\n", (int)was_len, was, open_line ? "\n" : "");
		r = write_whole("reboot-required.pkgs", updated, strlen(updated));
		if (r < 0)
			return r;
	}
	_cleanup_free_ char *flag = path_join(NOTE_DIR, "reboot-required");
	if (access(flag, F_OK) == 0)
		return 0;
	return write_whole("reboot-required", FLAG_TEXT, strlen(FLAG_TEXT));
}

static int take_note_back(void)
{
	_cleanup_free_ char *list = path_join(NOTE_DIR, "reboot-required.pkgs");
	_cleanup_free_ char *text = NULL;
	size_t len = 0;
	int r = read_list(list, &text, &len);
	if (r < 0 || !text || !has_line(text, len, PKG))
		return r;
	struct strbuf sb = { 0 };
	for (size_t i = 0; i < len;) {
		const char *nl = memchr(text + i, '\n', len - i);
		size_t l = nl ? (size_t)(nl - (text + i)) : len - i;
		if (!(l == strlen(PKG) && memcmp(text + i, PKG, l) == 0) && l > 0) {
			sb_appendn(&sb, text + i, l);
			sb_appendc(&sb, '\n');
		}
		i += l + 1;
	}
	if (sb.len > 0) {
		/* another package still needs the reboot: the flag stays */
		r = write_whole("reboot-required.pkgs", sb.s, sb.len);
		sb_free(&sb);
		return r;
	}
	sb_free(&sb);
	if (remove_file("reboot-required") < 0)
		return -1;
	return remove_file("reboot-required.pkgs");
}

void reboot_required_note(bool live, bool needed)
{
	if (!live || access("/etc/debian_version", F_OK) != 0)
		return;
	if (needed)
		(void)add_note();
	else
		(void)take_note_back();
}
