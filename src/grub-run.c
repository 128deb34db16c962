/* grub-run.c - running the root's GRUB tools after a commit: grubenv's
 * kernelopts, and one regeneration of the menu (grub.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "grub-int.h"
#include "journal.h"
#include "spawn.h"

static const char *const bin_dirs[] = { "/usr/sbin", "/usr/bin", "/sbin", "/bin", "/usr/local/sbin", "/usr/local/bin" };
const char *const grub_menus[2] = { "/boot/grub/grub.cfg", "/boot/grub2/grub.cfg" };

/* An executable regular file named name in the root's bin directories. */
char *grub_find_tool(const struct root *r, const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(bin_dirs); i++) {
		_cleanup_free_ char *p = path_join(bin_dirs[i], name);
		struct stat st;
		if (root_stat(r, p, &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 0111))
			return TAKE_PTR(p);
	}
	return NULL;
}

const char *grub_basename(const char *p)
{
	const char *s = strrchr(p, '/');
	return s ? s + 1 : p;
}

void grub_regen_free(struct grub_regen *g)
{
	free(g->tool);
	free(g->menu);
	memset(g, 0, sizeof(*g));
}

/* How the root regenerates its menu: update-grub where the menu it writes
 * (/boot/grub/grub.cfg) exists, else grub-mkconfig / grub2-mkconfig -o the
 * menu that exists (theirs first). No menu: nothing to regenerate (GRUB is
 * not the installed boot loader, as Debian's zz-update-grub also assumes). */
void grub_find_regen(const struct root *r, struct grub_regen *g)
{
	memset(g, 0, sizeof(*g));
	bool menu_grub = root_is_reg(r, grub_menus[0]), menu_grub2 = root_is_reg(r, grub_menus[1]);
	if (menu_grub) {
		g->tool = grub_find_tool(r, "update-grub");
		if (g->tool) {
			g->update_grub = true;
			return;
		}
	}
	char *mk = grub_find_tool(r, "grub-mkconfig");
	char *mk2 = grub_find_tool(r, "grub2-mkconfig");
	if (mk2 && (menu_grub2 || (!mk && menu_grub))) {
		g->tool = mk2;
		g->menu = xstrdup(menu_grub2 ? grub_menus[1] : grub_menus[0]);
		free(mk);
	} else if (mk && (menu_grub || menu_grub2)) {
		g->tool = mk;
		g->menu = xstrdup(menu_grub ? grub_menus[0] : grub_menus[1]);
		free(mk2);
	} else {
		free(mk);
		free(mk2);
	}
}

char *grub_regen_text(const struct grub_regen *g)
{
	if (!g->tool)
		return xstrdup("grub-mkconfig -o MENU");
	if (g->update_grub)
		return xstrdup(grub_basename(g->tool));
	return xasprintf("%s -o %s", grub_basename(g->tool), g->menu);
}

static int tool_failed(const char *what, int rc, const char *output)
{
	size_t n = output ? strlen(output) : 0;
	while (n > 0 && output[n - 1] == '\n')
		n--;
	if (rc < 0)
		return report(EXIT_SYSTEM, "%s: cannot run: %s", what, strerror(-rc));
	return report(EXIT_SYSTEM, "%s failed (exit status %d)%s%.*s", what, rc, n ? ":\n" : "", (int)n,
		      n ? output : "");
}

/* Runs a tool of the root: directly on a live system, else chrooted into
 * the root, with MEMCG_POLICY_IMAGE=1 so that the drop-in has memcg-policy
 * read the tree as an image (--root /), as this run does, rather than as the
 * machine the chroot happens to run on (its RAM, its running kernel). */
static int run_in_root(const struct root *r, const char *const *argv, char **output)
{
	static const char *const image_env[] = { "MEMCG_POLICY_IMAGE=1", NULL };
	return spawn_run(argv, r->live ? NULL : image_env, r->live ? NULL : r->path, NULL, output);
}

/* grub-editenv GRUBENV set kernelopts=VALUE. The root's own tool (chrooted
 * with --root); with --root where the root has none, or its tool cannot
 * run here (another architecture, no privilege to chroot), the host's
 * grub2-editenv / grub-editenv on the file opened inside the root and
 * handed over as /proc/self/fd/3: symlinks (/boot/grub2/grubenv ->
 * ../efi/EFI/redhat/grubenv) resolve inside the root, never on the host.
 * Then reads the value back. */
static int editenv_set(const struct root *r, const char *path, const char *value, unsigned *ran)
{
	_cleanup_free_ char *disp = root_display(r, path);
	_cleanup_free_ char *assign = xasprintf("kernelopts=%s", value);
	_cleanup_free_ char *tool = grub_find_tool(r, "grub2-editenv");
	if (!tool)
		tool = grub_find_tool(r, "grub-editenv");
	_cleanup_free_ char *out = NULL;
	int rc = -ENOENT;
	if (tool) {
		const char *argv[] = { tool, path, "set", assign, NULL };
		rc = run_in_root(r, argv, &out);
		(*ran)++;
		if (rc != 0 && (r->live || rc > 0))
			return tool_failed(grub_basename(tool), rc, out);
	}
	if (rc < 0) {
		/* --root: the host's tool on the root's file */
		_cleanup_close_ int fd = root_openat(r, path, O_RDONLY | O_CLOEXEC, 0);
		if (fd < 0)
			return report(root_error_exit(fd), "%s: %s", disp, root_strerror(fd));
		const int fds[] = { fd, -1 };
		static const char *const host_tools[] = { "grub2-editenv", "grub-editenv" };
		for (size_t i = 0; i < ARRAY_SIZE(host_tools) && rc < 0; i++) {
			const char *argv[] = { host_tools[i], "/proc/self/fd/3", "set", assign, NULL };
			free(out);
			out = NULL;
			rc = spawn_run(argv, NULL, NULL, fds, &out);
			if (rc >= 0)
				(*ran)++;
			if (rc != 0 && rc != -ENOENT)
				return tool_failed(host_tools[i], rc, out);
		}
		if (rc < 0)
			return report(EXIT_SYSTEM, "%s: no grub2-editenv or grub-editenv to set kernelopts with", disp);
	}
	/* read back */
	_cleanup_free_ char *text = NULL;
	size_t len;
	int e = root_read_file(r, path, 64u << 10, &text, &len);
	if (e < 0)
		return report(root_error_exit(e), "%s: cannot read: %s", disp, root_strerror(e));
	_cleanup_free_ char *now = grubenv_get(text, len, "kernelopts");
	if (!now || !streq(now, value))
		return report(EXIT_SYSTEM, "%s: kernelopts is not what grub-editenv was asked to set", disp);
	return 0;
}

int grub_set_kernelopts(const struct root *r, const char *grubenv_path, const char *value)
{
	unsigned ran = 0;
	return editenv_set(r, grubenv_path, value, &ran);
}

static bool is_input(enum slot_kind k)
{
	return k == SLOT_GRUB_DROPIN || k == SLOT_GRUB_DEFAULT || k == SLOT_GRUBENV || k == SLOT_GRUB_TOKENS;
}

/* Would these changes regenerate the menu (an input changed, or a menu
 * drifts that regenerating fixes)? */
static bool regen_needed(const struct slot_list *l, const bool *changed)
{
	for (size_t i = 0; i < l->n; i++) {
		const struct slot *s = &l->v[i];
		if (!changed[i] || s->unmanaged)
			continue;
		if (s->kind == SLOT_GRUB_CFG ? grub_regeneration_helps(s) : is_input(s->kind))
			return true;
	}
	return false;
}

int grub_regen_preflight(const struct root *r, const struct slot_list *l, const bool *changed)
{
	if (!regen_needed(l, changed))
		return 0;
	struct grub_regen g;
	grub_find_regen(r, &g);
	int e = 0;
	if (!g.tool) {
		e = report(EXIT_SYSTEM, "--regenerate: no GRUB menu with update-grub or grub-mkconfig to regenerate it in %s",
			   r->live ? "/" : r->path);
	} else if (!r->live) {
		e = grub_image_preflight(r, g.tool);
	}
	grub_regen_free(&g);
	return e;
}

int grub_after_commit(const struct root *r, const struct policy *p, const struct slot_list *l,
		      const bool *changed, enum grub_regen_mode mode, unsigned *ran_tools)
{
	unsigned ran_dummy = 0;
	if (!ran_tools)
		ran_tools = &ran_dummy;
	bool journal_loaded = false;
	struct journal j = {0};
	int e = 0;
	for (size_t i = 0; i < l->n && e >= 0; i++) {
		const struct slot *s = &l->v[i];
		if (!changed[i] || s->unmanaged || s->kind != SLOT_GRUBENV)
			continue;
		/* the value to set is what the commit journaled as written */
		if (!journal_loaded) {
			e = journal_load(r, &j);
			journal_loaded = true;
			if (e < 0)
				break;
		}
		struct journal_entry *je = journal_find(&j, s->path);
		if (!je || !je->written) {
			/* nothing of ours to set (revert already put the
			 * original back and dropped the journal) */
			log_verbose("%s: no kernelopts value journaled: not set", s->path);
			continue;
		}
		_cleanup_free_ char *value = xstrndup(je->written, je->written_len);
		if (s->content && streq(s->content, value))
			continue; /* already so */
		unsigned ran_editenv = 0;
		e = editenv_set(r, s->path, value, &ran_editenv);
	}
	if (journal_loaded)
		journal_free(&j);
	if (e < 0 || !regen_needed(l, changed))
		return e < 0 ? e : 0;

	struct grub_regen g;
	grub_find_regen(r, &g);
	if (!g.tool) {
		log_verbose("no GRUB menu with a grub-mkconfig to regenerate it: nothing regenerated");
		grub_regen_free(&g);
		return 0;
	}
	enum tristate want = p ? p->regenerate : TRI_AUTO;
	if (mode == GRUB_REGEN_POLICY && !r->live && want == TRI_YES) {
		const struct origin *o = &p->regenerate_origin;
		report_warn("%s%s%u: regenerate = yes is ignored with --root (no program of the image runs unless asked "
			    "on the command line): use apply --regenerate",
			    o->file ? o->file : "", o->file ? ":" : "", o->line);
	}
	if (mode == GRUB_REGEN_NEVER || (mode == GRUB_REGEN_POLICY && (want == TRI_NO || !r->live))) {
		_cleanup_free_ char *how = grub_regen_text(&g);
		if (r->live || mode == GRUB_REGEN_NEVER)
			log_verbose("GRUB menu not regenerated (%s): run %s",
				    mode == GRUB_REGEN_NEVER ? "--no-regenerate" : "regenerate = no", how);
		else
			report_warn("GRUB menu not regenerated in %s (--root): run %s inside it, or apply --regenerate", r->path,
				    how);
		grub_regen_free(&g);
		return 0;
	}
	const char *argv_ug[] = { g.tool, NULL };
	const char *argv_mk[] = { g.tool, "-o", g.menu, NULL };
	const char *const *argv = g.update_grub ? argv_ug : argv_mk;
	_cleanup_free_ char *out = NULL;
	log_verbose("running %s%s%s%s", g.tool, g.menu ? " -o " : "", g.menu ? g.menu : "",
		    r->live ? "" : " in a private mount namespace, chrooted into the image");
	int rc;
	if (r->live) {
		rc = spawn_run(argv, NULL, NULL, NULL, &out);
	} else {
		static const char *const image_env[] = { "MEMCG_POLICY_IMAGE=1", NULL };
		rc = grub_image_run(r, argv, image_env, &out);
	}
	(*ran_tools)++;
	if (rc != 0)
		e = tool_failed(grub_basename(g.tool), rc, out);
	else if (out && *out)
		log_verbose("%s", out);
	grub_regen_free(&g);
	return e;
}
