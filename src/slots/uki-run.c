/* slots/uki-run.c - after a commit, the UKIs that drift rebuilt with the
 * root's kernel-install (slots/uki.h): "kernel-install add VER KERNEL
 * [INITRD]", what Debian's initramfs hook runs, which builds the UKI from
 * /etc/kernel/cmdline (60-ukify.install) and copies it to $BOOT/EFI/Linux
 * (90-uki-copy.install). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "io/spawn.h"
#include "lib/diag.h"
#include "slots/uki.h"

/* A UKI marked for a rebuild: its command as one string, else NULL. */
static char *rebuild_text(const struct slot *s, bool changed)
{
	return changed && !s->unmanaged ? uki_rebuild_command(s) : NULL;
}

/* The rebuild commands of the UKIs marked changed, once each (two UKIs of
 * one kernel, a boot-counted copy and its original, are one rebuild). */
static void commands(const struct slot_list *l, const bool *changed, struct strv *out)
{
	for (size_t i = 0; i < l->n; i++) {
		char *cmd = rebuild_text(&l->v[i], changed[i]);
		if (cmd && strv_contains(out, cmd))
			free(cmd);
		else if (cmd)
			strv_push(out, cmd);
	}
}

/* The first UKI marked changed whose command is cmd (commands() gave it). */
static const struct slot *slot_of(const struct slot_list *l, const bool *changed, const char *cmd)
{
	for (size_t i = 0; i < l->n; i++) {
		_cleanup_free_ char *c = rebuild_text(&l->v[i], changed[i]);
		if (c && streq(c, cmd))
			return &l->v[i];
	}
	abort(); /* commands() took cmd from one of them */
}

/* The environment of kernel-install on a live system: the clean one of
 * io/spawn.h, MEMCG_POLICY_REBUILDING=1 for the package's plugins, and
 * the caller's settings of where systemd's tools find $BOOT (the ESP and
 * XBOOTLDR paths, their relaxed checks, BOOT_ROOT): a rebuild must go
 * where kernel-install goes when the admin runs it. */
static void live_env(struct strv *env)
{
	static const char *const pass[] = { "SYSTEMD_ESP_PATH", "SYSTEMD_XBOOTLDR_PATH", "SYSTEMD_RELAX_ESP_CHECKS",
					    "SYSTEMD_RELAX_XBOOTLDR_CHECKS", "BOOT_ROOT" };
	strv_pushdup(env, "MEMCG_POLICY_REBUILDING=1");
	for (size_t i = 0; i < ARRAY_SIZE(pass); i++) {
		const char *v = getenv(pass[i]);
		if (v)
			strv_push(env, xasprintf("%s=%s", pass[i], v));
	}
}

int uki_rebuild_preflight(const struct root *r, const struct slot_list *l, const bool *changed)
{
	_cleanup_(strv_free) struct strv cmds = { 0 };
	commands(l, changed, &cmds);
	if (!cmds.n || r->live)
		return 0;
	const struct slot *s = slot_of(l, changed, cmds.v[0]);
	return grub_image_preflight(r, s->uki->rebuild.v[0]);
}

int uki_after_commit(const struct root *r, const struct slot_list *l, const bool *changed, enum grub_regen_mode mode,
		     bool policy_no, unsigned *ran)
{
	_cleanup_(strv_free) struct strv cmds = { 0 };
	commands(l, changed, &cmds);
	if (!cmds.n)
		return 0;
	const char *staging = getenv("KERNEL_INSTALL_STAGING_AREA");
	if (staging && *staging) {
		log_verbose("inside kernel-install: no UKI is rebuilt from here (the one it builds now takes "
			    "/etc/kernel/cmdline as just written)");
		return 0;
	}
	if (grub_regen_skipped(mode, policy_no, r->live)) {
		for (size_t i = 0; i < cmds.n; i++) {
			if (r->live || mode == GRUB_REGEN_NEVER)
				log_verbose("UKI not rebuilt (%s): run %s",
					    mode == GRUB_REGEN_NEVER ? "--no-regenerate" : "regenerate = no",
					    cmds.v[i]);
			else
				diag_warn("UKI not rebuilt in %s (%s): run %s inside it, or apply --regenerate",
					  r->chroot ? "this chroot" : r->path, r->chroot ? "a chroot" : "--root",
					  cmds.v[i]);
		}
		return 0;
	}
	int e = 0;
	for (size_t i = 0; i < cmds.n && e >= 0; i++) {
		const struct slot *s = slot_of(l, changed, cmds.v[i]);
		const struct strv *rb = &s->uki->rebuild;
		const char **argv = xcalloc(rb->n + 1, sizeof(char *));
		for (size_t k = 0; k < rb->n; k++)
			argv[k] = rb->v[k];
		log_verbose("running %s%s", cmds.v[i],
			    r->live ? "" : " in a private mount namespace, chrooted into the image");
		if (log_verbosity < 1)
			log_progress("running kernel-install to rebuild the UKI of %s%s (-v shows its output)...",
				     rb->v[2], r->live ? "" : " in the image");
		_cleanup_free_ char *out = NULL;
		int rc;
		/* the package's plugins in it run no apply of their own: this run
		 * holds the lock they would wait for, and has written
		 * /etc/kernel/cmdline already (hooks/55-memcg-policy.install) */
		if (r->live) {
			_cleanup_(strv_free) struct strv env = { 0 };
			live_env(&env);
			rc = spawn_run(argv, (const char *const *)env.v, NULL, NULL, &out);
		} else {
			static const char *const image_env[] = { "MEMCG_POLICY_IMAGE=1", "MEMCG_POLICY_REBUILDING=1",
								 NULL };
			rc = grub_image_run(r, argv, image_env, &out);
		}
		free(argv);
		(*ran)++;
		if (rc != 0)
			e = spawn_failed(rc < 0 ? "kernel-install" : cmds.v[i], rc, out);
		else
			log_verbose_lines("kernel-install", out);
	}
	return e;
}
