/* slots/grub/run.c - after a commit, one regeneration of the menu with the
 * root's GRUB tools; grubenv's kernelopts as a new block for the
 * transaction (slots/grub/grub.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/diag.h"
#include "slots/grub/grub-int.h"
#include "io/spawn.h"

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

char *grub_kernelopts_block(const struct root *r, const char *path, const char *value, size_t *len, int *err)
{
	_cleanup_free_ char *disp = root_display(r, path);
	_cleanup_free_ char *text = NULL;
	size_t n;
	int e = root_read_file(r, path, 64u << 10, &text, &n);
	if (e < 0) {
		*err = diag_error(root_error_exit(e), "%s: cannot read: %s", disp, root_strerror(e));
		return NULL;
	}
	char *out;
	e = grubenv_set(text, n, "kernelopts", value, &out);
	if (e == -ENOSPC) {
		*err = diag_error(EXIT_SYSTEM,
				  "%s: the new kernelopts (%zu bytes) does not fit in the %zu-byte environment block",
				  disp, strlen(value), n);
		return NULL;
	}
	if (e < 0) {
		*err = diag_error(EXIT_SYSTEM,
				  "%s: not a GRUB environment block (no signature, or no padding after a line break)",
				  disp);
		return NULL;
	}
	*len = n;
	return out;
}

static int grub_only_preflight(const struct root *r, const struct slot_list *l, const bool *changed);

int grub_regen_preflight(const struct root *r, const struct slot_list *l, const bool *changed)
{
	int e = grub_only_preflight(r, l, changed);
	e = e < 0 ? e : uboot_regen_preflight(r, l, changed);
	return e < 0 ? e : flashk_regen_preflight(r, l, changed);
}

static int grub_only_preflight(const struct root *r, const struct slot_list *l, const bool *changed)
{
	if (!slots_menu_regen_needed(l, changed, MENU_GRUB))
		return 0;
	struct grub_regen g;
	grub_find_regen(r, &g);
	int e = 0;
	if (!g.tool) {
		e = diag_error(EXIT_SYSTEM,
			       "--regenerate: no GRUB menu with update-grub or grub-mkconfig to regenerate it in %s",
			       r->live ? "/" : r->path);
	} else if (!r->live) {
		e = grub_image_preflight(r, g.tool);
	}
	grub_regen_free(&g);
	return e;
}

static int grub_only_after_commit(const struct root *r, const struct policy *p, const struct slot_list *l,
				  const bool *changed, enum grub_regen_mode mode, unsigned *ran_tools);

int grub_after_commit(const struct root *r, const struct policy *p, const struct slot_list *l, const bool *changed,
		      enum grub_regen_mode mode, unsigned *ran_tools)
{
	unsigned ran_dummy = 0;
	if (!ran_tools)
		ran_tools = &ran_dummy;
	int e = grub_only_after_commit(r, p, l, changed, mode, ran_tools);
	e = e < 0 ? e : uboot_after_commit(r, p, l, changed, mode, ran_tools);
	return e < 0 ? e : flashk_after_commit(r, p, l, changed, mode, ran_tools);
}

static int grub_only_after_commit(const struct root *r, const struct policy *p, const struct slot_list *l,
				  const bool *changed, enum grub_regen_mode mode, unsigned *ran_tools)
{
	int e = 0;
	if (!slots_menu_regen_needed(l, changed, MENU_GRUB))
		return 0;

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
		diag_warn("%s%s%u: regenerate = yes is ignored %s (no program of the image runs unless asked "
			  "on the command line): use apply --regenerate",
			  o->file ? o->file : "", o->file ? ":" : "", o->line,
			  r->chroot ? "in a chroot" : "with --root");
	}
	_cleanup_free_ char *how = grub_regen_text(&g);
	const char *argv_ug[] = { g.tool, NULL };
	const char *argv_mk[] = { g.tool, "-o", g.menu, NULL };
	e = menu_tool_run(r, mode, want == TRI_NO, g.update_grub ? argv_ug : argv_mk, "GRUB menu", "the GRUB menu", how,
			  ran_tools);
	grub_regen_free(&g);
	return e;
}

int menu_tool_run(const struct root *r, enum grub_regen_mode mode, bool policy_no, const char *const *argv,
		  const char *menu, const char *what, const char *how, unsigned *ran_tools)
{
	if (grub_regen_skipped(mode, policy_no, r->live)) {
		if (r->live || mode == GRUB_REGEN_NEVER)
			log_verbose("%s not regenerated (%s): run %s", menu,
				    mode == GRUB_REGEN_NEVER ? "--no-regenerate" : "regenerate = no", how);
		else if (r->chroot)
			diag_warn("%s not regenerated (in a chroot): run %s, or apply --regenerate", menu, how);
		else
			diag_warn("%s not regenerated in %s (--root): run %s inside it, or apply --regenerate", menu,
				  r->path, how);
		return 0;
	}
	struct strbuf cmd = { 0 };
	for (size_t i = 0; argv[i]; i++)
		sb_appendf(&cmd, "%s%s", i ? " " : "", argv[i]);
	log_verbose("running %s%s", cmd.s, r->live ? "" : " in a private mount namespace, chrooted into the image");
	sb_free(&cmd);
	const char *name = grub_basename(argv[0]);
	if (log_verbosity < 1)
		log_progress("running %s to regenerate %s%s (-v shows its output)...", name, what,
			     r->live ? "" : " of the image");
	_cleanup_free_ char *out = NULL;
	int rc;
	/* with -v its output as it comes, not when it is done */
	spawn_stream_next(name);
	if (r->live) {
		rc = spawn_run(argv, NULL, NULL, NULL, &out);
	} else {
		static const char *const image_env[] = { "MEMCG_POLICY_IMAGE=1", NULL };
		rc = grub_image_run(r, argv, image_env, &out);
	}
	spawn_stream_next(NULL); /* where the run never started one */
	(*ran_tools)++;
	return rc != 0 ? spawn_failed(name, rc, out) : 0;
}
