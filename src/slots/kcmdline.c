/* slots/kcmdline.c - /etc/kernel/cmdline, the command line kernel-install
 * (and UKI builders, sdbootutil, Fedora's 20-grub) give new kernels.
 *
 * Present: its tokens are edited in place (several lines are read as one
 * command line, as kernel-install does).
 * Absent: created only where kernels are installed with kernel-install,
 * which is the case when
 *   - /etc/kernel/install.conf (else /usr/lib/kernel/install.conf) says
 *     layout=bls or layout=uki (another layout: no), or, with no layout,
 *   - kernel-install is there (/usr/bin/kernel-install, /bin/kernel-install
 *     or /usr/lib/kernel/install.d/) and it has written BLS entries: an
 *     entry named "TOKEN-*.conf" or a directory $BOOT/TOKEN, TOKEN being
 *     /etc/kernel/entry-token or /etc/machine-id;
 * or when the policy says kernel-cmdline = yes. Its first content is the
 * default kernel's entry's options without initrd=, BOOT_IMAGE= and
 * systemd.machine_id=; never empty, and never without the root= that entry
 * had (no such entry: not created). */
#include "slots/kinds.h"

#include <errno.h>
#include <stdio.h>

#define KCMDLINE KCMDLINE_PATH

static char *read_trimmed(const struct root *r, const char *path)
{
	char *text;
	size_t len;
	if (root_read_file(r, path, 4096, &text, &len) < 0)
		return NULL;
	size_t s = strspn(text, " \t\r\n");
	while (len > s && strchr(" \t\r\n", text[len - 1]))
		len--;
	char *v = len > s ? xstrndup(text + s, len - s) : NULL;
	free(text);
	return v;
}

int kernel_install_layout(const struct root *r)
{
	static const char *const files[] = { "/etc/kernel/install.conf", "/usr/lib/kernel/install.conf" };
	for (size_t f = 0; f < ARRAY_SIZE(files); f++) {
		_cleanup_free_ char *text = NULL;
		size_t len;
		if (root_read_file(r, files[f], MAX_INPUT_FILE, &text, &len) < 0)
			continue;
		int layout = KI_LAYOUT_UNSET;
		for (char *line = text; line && *line;) {
			char *nl = strchr(line, '\n');
			if (nl)
				*nl = '\0';
			char *p = line + strspn(line, " \t");
			if (startswith(p, "layout")) {
				p += 6;
				p += strspn(p, " \t");
				if (*p == '=') {
					p++;
					p += strspn(p, " \t\"'");
					size_t n = strcspn(p, " \t\"'\r#");
					layout = n == 3 && strncmp(p, "bls", 3) == 0   ? KI_LAYOUT_BLS
						 : n == 3 && strncmp(p, "uki", 3) == 0 ? KI_LAYOUT_UKI
										       : KI_LAYOUT_OTHER;
				}
			}
			line = nl ? nl + 1 : NULL;
		}
		return layout; /* the first file found is the one kernel-install reads */
	}
	return -1;
}

static bool entries_named_by(const struct slot_list *l, const char *token)
{
	_cleanup_free_ char *prefix = xasprintf("%s-", token);
	for (size_t i = 0; i < l->n; i++) {
		if (l->v[i].kind != SLOT_BLS)
			continue;
		const char *base = strrchr(l->v[i].path, '/');
		base = base ? base + 1 : l->v[i].path;
		if (startswith(base, prefix))
			return true;
	}
	return false;
}

bool kernel_install_used(const struct root *r, const struct slot_list *l)
{
	int layout = kernel_install_layout(r);
	if (layout != KI_LAYOUT_UNSET)
		return layout == KI_LAYOUT_BLS || layout == KI_LAYOUT_UKI;
	if (!root_exists(r, "/usr/bin/kernel-install") && !root_exists(r, "/bin/kernel-install") &&
	    !root_is_dir(r, "/usr/lib/kernel/install.d"))
		return false;
	static const char *const token_files[] = { "/etc/kernel/entry-token", "/etc/machine-id" };
	for (size_t i = 0; i < ARRAY_SIZE(token_files); i++) {
		_cleanup_free_ char *token = read_trimmed(r, token_files[i]);
		if (!token || strchr(token, '/'))
			continue;
		if (entries_named_by(l, token))
			return true;
		if (l->boot_dir) {
			_cleanup_free_ char *dir = path_join(l->boot_dir, token);
			if (root_is_dir(r, dir))
				return true;
		}
	}
	return false;
}

int kcmdline_slots_find(const struct root *r, const struct policy *p, const char *default_kernel, struct slot_list *l)
{
	char *text;
	size_t len;
	int e = slot_read_text(r, KCMDLINE, &text, &len);
	if (e < 0)
		return e;
	l->uses_kernel_install = kernel_install_used(r, l);
	char *off = p ? slot_policy_off(p, p->kernel_cmdline, &p->kernel_cmdline_origin, "kernel-cmdline") : NULL;
	if (text) {
		struct slot *s = slot_list_add(l, SLOT_KERNEL_CMDLINE, KCMDLINE);
		s->exists = true;
		s->content = text;
		s->len = len;
		if (off) {
			s->unmanaged = true;
			s->note = off;
		}
		return 0;
	}
	if (off) {
		free(off);
		return 0;
	}
	if (!l->uses_kernel_install && !(p && p->kernel_cmdline == TRI_YES))
		return 0;
	const char *from = NULL;
	char *base = bls_base_cmdline(l, default_kernel, &from);
	struct slot *s = slot_list_add(l, SLOT_KERNEL_CMDLINE, KCMDLINE);
	if (!base) {
		s->unmanaged = true;
		s->note = xstrdup("missing, and not created: no boot entry of the default kernel with root= "
				  "to take its command line from");
		return 0;
	}
	s->create = true;
	s->len = strlen(base) + 1;
	s->content = xasprintf("%s\n", base);
	s->note =
		xasprintf("missing: created from the %s of %s", endswith(from, ".efi") ? "own line" : "options", from);
	free(base);
	return 0;
}
