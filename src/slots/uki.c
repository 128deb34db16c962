/* slots/uki.c - unified kernel images: $BOOT/EFI/Linux/NAME.efi, the
 * systemd-boot "Type #2" entries that kernel-install's layout=uki writes.
 *
 * A UKI is read as systemd-stub reads it (systemd-stub(7)): its own
 * .cmdline (every control character a space, trailing spaces gone), then
 * the .cmdline of each global addon ($BOOT/loader/addons/NAME.addon.efi),
 * then of each of its own (NAME.efi.extra.d/NAME.addon.efi), each directory
 * in file-name order, joined by spaces. An addon with a .linux section is
 * not an addon (the stub refuses it), one whose .uname differs from the
 * UKI's is refused too. The boot loader passes no line of its own to a
 * Type #2 entry, so that joined line is what the kernel gets.
 *
 * The slot is read only: its content is that line. It is changed by
 * rebuilding it with the root's own kernel-install from
 * /etc/kernel/cmdline (the plan's rebuild command, run by
 * uki_after_commit in slots/uki-run.c). */
#include "slots/uki.h"
#include "slots/kinds.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <strings.h>
#include <unistd.h>

#include "io/pe.h"
#include "lib/cmdline.h"
#include "lib/diag.h"

#define UKI_MAX_CMDLINE (64u << 10)
#define UKI_MAX_UNAME 256u

/* The parts of a PE file the stub reads. */
struct pe_parts {
	char *cmdline;	   /* mangled as the stub does; NULL: no .cmdline */
	char *uname;	   /* NULL: no .uname */
	bool linux_;	   /* has a .linux section (a UKI, not an addon) */
	size_t profiles;   /* a multi-profile UKI's profiles (0: none) */
	bool profile_own;  /* its default profile (@0) has a .cmdline of its own */
	size_t others_own; /* other profiles with a .cmdline of their own */
};

static void pe_parts_free(struct pe_parts *p)
{
	free(p->cmdline);
	free(p->uname);
	memset(p, 0, sizeof(*p));
}

/* Reads path's PE parts. 0; -EBADMSG with *why (a new string) where the
 * file is not a PE image or a section is damaged; -errno for I/O. */
static int read_parts(const struct root *r, const char *path, struct pe_parts *out, char **why)
{
	memset(out, 0, sizeof(*out));
	*why = NULL;
	int fd = root_openat(r, path, O_RDONLY | O_CLOEXEC, 0);
	if (fd < 0)
		return fd;
	struct stat st;
	if (fstat(fd, &st) < 0) {
		int e = -errno;
		close(fd);
		return e;
	}
	struct pe_file pe;
	const char *bad = NULL;
	int e = pe_open(fd, (uint64_t)st.st_size, &pe, &bad);
	if (e == -EBADMSG)
		*why = xstrdup(bad);
	if (e < 0) {
		close(fd);
		return e;
	}
	out->linux_ = pe_find(&pe, ".linux") != NULL;
	/* a multi-profile UKI boots its first profile (@0) unless another is
	 * chosen in the boot menu: its sections before the base ones */
	out->profiles = pe_profiles(&pe);
	for (size_t p = 1; p < out->profiles; p++) {
		bool own = false;
		(void)pe_find_in_profile(&pe, p, ".cmdline", &own);
		out->others_own += own;
	}
	static const struct {
		const char *name;
		size_t max;
	} want[] = { { ".cmdline", UKI_MAX_CMDLINE }, { ".uname", UKI_MAX_UNAME } };
	for (size_t i = 0; i < ARRAY_SIZE(want) && e >= 0; i++) {
		bool own = false;
		const struct pe_section *s = pe_find_in_profile(&pe, 0, want[i].name, &own);
		if (!s)
			continue;
		if (i == 0)
			out->profile_own = own;
		char *text;
		size_t len;
		e = pe_section_text(fd, (uint64_t)st.st_size, s, want[i].max, &text, &len);
		if (e == -EFBIG || e == -EBADMSG) {
			*why = xasprintf("its %s section is %s", want[i].name,
					 e == -EFBIG ? "larger than a command line can be"
						     : "past the end of the file");
			e = -EBADMSG;
		}
		if (e < 0)
			break;
		if (i == 0) {
			pe_mangle_cmdline(text);
			out->cmdline = text;
		} else {
			text[strcspn(text, "\r\n")] = '\0';
			out->uname = text;
		}
	}
	pe_free(&pe);
	close(fd);
	if (e < 0)
		pe_parts_free(out);
	return e;
}

/* The release a UKI's file name carries ("TOKEN-6.12.57+deb13-amd64.efi",
 * with a boot counter "+3-1" before ".efi"), NULL if none. */
static char *name_release(const char *path)
{
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	size_t l = strlen(base) - 4; /* ".efi" */
	for (size_t i = 0; i + 1 < l; i++) {
		if (base[i] != '-' || base[i + 1] < '0' || base[i + 1] > '9')
			continue;
		char *v = xstrndup(base + i + 1, l - i - 1);
		/* a boot counter: "+LEFT" or "+LEFT-DONE" at the end */
		char *plus = strrchr(v, '+');
		if (plus && plus[1] && strspn(plus + 1, "0123456789-") == strlen(plus + 1))
			*plus = '\0';
		if (strchr(v, '.'))
			return v;
		free(v);
	}
	return NULL;
}

static bool is_addon_name(const char *name)
{
	size_t l = strlen(name);
	return name[0] != '.' && l > 10 && strcasecmp(name + l - 10, ".addon.efi") == 0;
}

/* Adds the addons of dir that apply to a UKI whose .uname is uname. */
static int add_addons(const struct root *r, const char *dir, const char *uname, struct uki_facts *u)
{
	if (!root_is_dir(r, dir))
		return 0;
	char **names;
	int n = root_list_dir(r, dir, NULL, &names);
	if (n < 0) {
		_cleanup_free_ char *disp = root_display(r, dir);
		return diag_error(root_error_exit(n), "%s: cannot list: %s", disp, root_strerror(n));
	}
	int e = 0;
	for (int i = 0; i < n && e >= 0; i++) {
		if (!is_addon_name(names[i]))
			continue;
		_cleanup_free_ char *path = path_join(dir, names[i]);
		if (!root_is_reg(r, path))
			continue;
		struct pe_parts a;
		_cleanup_free_ char *why = NULL;
		int re = read_parts(r, path, &a, &why);
		_cleanup_free_ char *disp = root_display(r, path);
		if (re == -EBADMSG) {
			diag_warn("%s: not read as an addon: %s (systemd-stub does not use it either)", disp, why);
			continue;
		}
		if (re < 0) {
			e = diag_error(root_error_exit(re), "%s: cannot read: %s", disp, root_strerror(re));
			break;
		}
		if (a.linux_) {
			diag_warn("%s: has a .linux section: systemd-stub does not take it as an addon", disp);
		} else if (a.uname && uname && !streq(a.uname, uname)) {
			log_verbose("%s: made for kernel %s, not %s: systemd-stub skips it", disp, a.uname, uname);
		} else if (a.cmdline && *a.cmdline) {
			strv_pushdup(&u->addons, path);
			strv_push(&u->addon_lines, TAKE_PTR(a.cmdline));
		}
		pe_parts_free(&a);
	}
	names_free(names, n);
	return e;
}

/* The line the stub gives: the UKI's own, then each addon's, by spaces. */
static char *joined_line(const struct uki_facts *u, size_t *len)
{
	struct strbuf sb = { 0 };
	sb_append(&sb, u->own ? u->own : "");
	for (size_t i = 0; i < u->addon_lines.n; i++) {
		if (sb.len)
			sb_appendc(&sb, ' ');
		sb_append(&sb, u->addon_lines.v[i]);
	}
	*len = sb.len;
	return sb_take(&sb);
}

/* The command that rebuilds the UKI of release ver from /etc/kernel/cmdline:
 * the root's kernel-install with layout=uki, the kernel image and the
 * initrd where Debian keeps them (what its initramfs hook runs). */
static void find_rebuild(const struct root *r, const char *ver, struct uki_facts *u)
{
	static const char *const tools[] = { "/usr/bin/kernel-install", "/bin/kernel-install" };
	const char *tool = NULL;
	for (size_t i = 0; i < ARRAY_SIZE(tools) && !tool; i++)
		if (root_is_reg(r, tools[i]))
			tool = tools[i];
	if (!ver) {
		u->no_rebuild = xstrdup("its kernel release is not known (no .uname, none in its name)");
		return;
	}
	if (u->profile_own) {
		u->no_rebuild = xstrdup("its default profile (@0) has a command line of its own, which a rebuild from "
					"/etc/kernel/cmdline does not change");
		return;
	}
	if (!tool) {
		u->no_rebuild = xstrdup("no kernel-install to rebuild it with");
		return;
	}
	if (kernel_install_layout(r) != KI_LAYOUT_UKI) {
		u->no_rebuild = xstrdup("kernel-install does not build UKIs here (layout=uki is not set in "
					"/etc/kernel/install.conf)");
		return;
	}
	_cleanup_free_ char *kernel = NULL;
	const char *const images[] = { "/boot/vmlinuz-", "/boot/vmlinux-", NULL };
	for (size_t i = 0; images[i] && !kernel; i++) {
		char *p = xasprintf("%s%s", images[i], ver);
		if (root_is_reg(r, p))
			kernel = p;
		else
			free(p);
	}
	if (!kernel) {
		char *p = xasprintf("/usr/lib/modules/%s/vmlinuz", ver);
		if (root_is_reg(r, p))
			kernel = p;
		else
			free(p);
	}
	if (!kernel) {
		u->no_rebuild = xasprintf("no kernel image of %s (/boot/vmlinuz-%s) to rebuild it from", ver, ver);
		return;
	}
	strv_pushdup(&u->rebuild, tool);
	strv_pushdup(&u->rebuild, "add");
	strv_pushdup(&u->rebuild, ver);
	strv_pushdup(&u->rebuild, kernel);
	_cleanup_free_ char *initrd = xasprintf("/boot/initrd.img-%s", ver);
	if (root_is_reg(r, initrd))
		strv_pushdup(&u->rebuild, initrd);
}

/* The facts of the UKI at path, whose own parts were read (taken over
 * from own): then its addons, the global ones of boot_dir first. 0, or a
 * negative exit code (nothing kept). */
static int facts_of(const struct root *r, const char *boot_dir, const char *path, struct pe_parts *own,
		    struct uki_facts **out)
{
	struct uki_facts *u = xcalloc(1, sizeof(*u));
	u->own = TAKE_PTR(own->cmdline);
	u->uname = TAKE_PTR(own->uname);
	u->profiles = own->profiles;
	u->profile_own = own->profile_own;
	u->others_own = own->others_own;
	_cleanup_free_ char *global = path_join(boot_dir, "loader/addons");
	_cleanup_free_ char *extra = xasprintf("%s.extra.d", path);
	int e = add_addons(r, global, u->uname, u);
	if (e >= 0)
		e = add_addons(r, extra, u->uname, u);
	if (e < 0) {
		uki_facts_free(u);
		return e;
	}
	*out = u;
	return 0;
}

static int uki_slot(const struct root *r, const struct policy *p, const struct bls_identity *id, const char *boot_dir,
		    const char *path, struct slot_list *l)
{
	struct pe_parts own;
	_cleanup_free_ char *why = NULL;
	int e = read_parts(r, path, &own, &why);
	_cleanup_free_ char *disp = root_display(r, path);
	if (e < 0 && e != -EBADMSG)
		return diag_error(root_error_exit(e), "%s: cannot read: %s", disp, root_strerror(e));
	struct slot *s = slot_list_add(l, SLOT_UKI, path);
	s->exists = true;
	if (e == -EBADMSG || !own.linux_) {
		s->unmanaged = true;
		s->kernel = name_release(path);
		s->note = e == -EBADMSG ? xasprintf("not read: %s", why)
					: xstrdup("no .linux section: not a unified kernel image");
		pe_parts_free(&own);
		return 0;
	}
	struct uki_facts *u;
	e = facts_of(r, boot_dir, path, &own, &u);
	if (e < 0)
		return e;
	s->uki = u;
	s->kernel = u->uname ? xstrdup(u->uname) : name_release(path);

	s->content = joined_line(u, &s->len);

	char *off = p ? slot_policy_off(p, p->systemd_boot, &p->systemd_boot_origin, "systemd-boot") : NULL;
	char *foreign = off ? NULL : bls_entry_foreign(id, path, NULL, s->kernel);
	if (off || foreign) {
		s->unmanaged = true;
		s->note = off ? off : foreign;
		return 0;
	}
	find_rebuild(r, s->kernel, u);
	return 0;
}

/* Is Secure Boot on where the root boots: the policy's secure-boot, else
 * on a live system the firmware's SecureBoot variable (its attributes,
 * then one byte: 1 on), else off. */
#define SECURE_BOOT_VAR "/sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c"
static bool secure_boot_on(const struct root *r, const struct policy *p)
{
	if (p && p->secure_boot != TRI_AUTO)
		return p->secure_boot == TRI_YES;
	if (!r->live)
		return false;
	_cleanup_free_ char *v = NULL;
	size_t n = 0;
	return read_host_file(SECURE_BOOT_VAR, 64, &v, &n) == 0 && n >= 5 && v[4] == 1;
}

int uki_entry_slot(const struct root *r, const struct policy *p, const char *boot_dir, struct slot *s, const char *uki,
		   const char *options)
{
	bool sb = secure_boot_on(r, p);
	if (options && *options && !sb) {
		/* the loader's line replaces the UKI's own: the entry's options
		 * are what the kernel gets, edited as any entry's */
		s->unmanaged = false;
		free(s->note);
		s->note = NULL;
		if (!s->kernel) {
			_cleanup_free_ char *path = path_join(boot_dir, uki);
			struct pe_parts parts;
			_cleanup_free_ char *why = NULL;
			if (read_parts(r, path, &parts, &why) == 0) {
				s->kernel = TAKE_PTR(parts.uname);
				pe_parts_free(&parts);
			}
		}
		return 0;
	}
	_cleanup_free_ char *path = path_join(boot_dir, uki);
	_cleanup_free_ char *disp = root_display(r, path);
	struct pe_parts own;
	_cleanup_free_ char *why = NULL;
	int e = read_parts(r, path, &own, &why);
	free(s->note);
	if (e == -ENOENT || e == -EBADMSG) {
		s->note = xasprintf("boots the UKI %s, which %s", path, e == -ENOENT ? "is not there" : why);
		return 0;
	}
	if (e < 0) {
		s->note = NULL;
		return diag_error(root_error_exit(e), "%s: cannot read: %s", disp, root_strerror(e));
	}
	struct uki_facts *u;
	e = facts_of(r, boot_dir, path, &own, &u);
	if (e < 0) {
		s->note = NULL;
		return e;
	}
	s->kind = SLOT_UKI;
	s->unmanaged = false;
	s->uki = u;
	if (!s->kernel && u->uname)
		s->kernel = xstrdup(u->uname);
	free(s->content);
	s->content = joined_line(u, &s->len);
	s->note = NULL;
	u->no_rebuild = xasprintf(options && *options
					  ? "its entry's options do not reach it (Secure Boot is on), and "
					    "%s is a UKI a boot entry names: rebuild it with the tool that made it"
					  : "%s is a UKI a boot entry names: rebuild it with the tool that made it, "
					    "or give the entry an options line",
				  path);
	return 0;
}

static bool is_efi_name(const char *name)
{
	size_t l = strlen(name);
	return name[0] != '.' && l > 4 && strcasecmp(name + l - 4, ".efi") == 0;
}

int uki_slots_find(const struct root *r, const struct policy *p, const struct bls_identity *id, const char *boot_dir,
		   struct slot_list *l)
{
	_cleanup_free_ char *dir = path_join(boot_dir, "EFI/Linux");
	char **names;
	int n = root_list_dir(r, dir, NULL, &names);
	if (n < 0) {
		_cleanup_free_ char *disp = root_display(r, dir);
		return diag_error(root_error_exit(n), "%s: cannot list: %s", disp, root_strerror(n));
	}
	int e = 0;
	for (int i = 0; i < n && e >= 0; i++) {
		if (!is_efi_name(names[i]))
			continue;
		_cleanup_free_ char *path = path_join(dir, names[i]);
		if (root_is_reg(r, path))
			e = uki_slot(r, p, id, boot_dir, path, l);
	}
	names_free(names, n);
	return e;
}

/* The first addon that brings an item the decision takes out: it stays
 * whatever the UKI's own line says, so it is what to change. NULL: none. */
static const char *addon_against(const struct slot *s, const struct strv *remove)
{
	const struct uki_facts *u = s->uki;
	const struct strv none = { 0 };
	const char *from = NULL;
	for (size_t i = 0; u && i < u->addon_lines.n && !from; i++) {
		struct strv m = { 0 }, w = { 0 };
		cmdline_faults(u->addon_lines.v[i], &none, remove, &m, &w);
		if (w.n)
			from = u->addons.v[i];
		strv_free(&m);
		strv_free(&w);
	}
	return from;
}

char *uki_rebuild_command(const struct slot *s)
{
	if (s->kind != SLOT_UKI || !s->uki || !s->uki->rebuild.n)
		return NULL;
	struct strbuf sb = { 0 };
	for (size_t i = 0; i < s->uki->rebuild.n; i++)
		sb_appendf(&sb, "%s%s", i ? " " : "", s->uki->rebuild.v[i]);
	return sb_take(&sb);
}

bool uki_rebuild_helps(const struct slot *s, const struct strv *remove)
{
	return s->kind == SLOT_UKI && !s->unmanaged && s->uki && s->uki->rebuild.n && !addon_against(s, remove);
}

enum slot_state uki_state(const struct slot *s, const struct strv *add, const struct strv *remove, char **why)
{
	*why = NULL;
	if (!s->content)
		return SLOT_IN_SYNC;
	struct strv missing = { 0 }, unwanted = { 0 };
	cmdline_faults(s->content, add, remove, &missing, &unwanted);
	if (!missing.n && !unwanted.n)
		return SLOT_IN_SYNC;
	const struct uki_facts *u = s->uki;
	struct strbuf sb = { 0 };
	sb_append(&sb, "the line systemd-stub gives it");
	if (missing.n) {
		sb_append(&sb, " lacks ");
		for (size_t i = 0; i < missing.n; i++)
			sb_appendf(&sb, "%s%s", i ? ", " : "", missing.v[i]);
	}
	const char *from_addon = addon_against(s, remove);
	if (unwanted.n) {
		sb_append(&sb, missing.n ? " and has " : " has ");
		for (size_t i = 0; i < unwanted.n; i++)
			sb_appendf(&sb, "%s%s", i ? ", " : "", unwanted.v[i]);
	}
	if (from_addon) {
		sb_appendf(&sb, " (from the addon %s: remove it, or take the token out of it)", from_addon);
	} else if (u && u->rebuild.n) {
		_cleanup_free_ char *cmd = uki_rebuild_command(s);
		sb_appendf(&sb, ": rebuild it from /etc/kernel/cmdline with %s", cmd);
	} else if (u && u->no_rebuild) {
		sb_appendf(&sb, ": cannot be rebuilt: %s", u->no_rebuild);
	}
	strv_free(&missing);
	strv_free(&unwanted);
	*why = sb_take(&sb);
	return SLOT_DRIFT;
}
