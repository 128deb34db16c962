/* show/notes.c - notes said the same way by several commands: records
 * kept for a boot file system that is not mounted, no boot configuration
 * at all, an image without the program its GRUB drop-in runs; see
 * show/report.h. */
#include "show/report.h"
#include "lib/diag.h"

void report_unmounted(const struct root *r, const struct strv *dirs)
{
	for (size_t i = 0; i < dirs->n; i++) {
		bool seen = false;
		for (size_t k = 0; k < i && !seen; k++)
			seen = streq(dirs->v[k], dirs->v[i]);
		if (seen)
			continue;
		size_t n = 0;
		for (size_t k = i; k < dirs->n; k++)
			n += streq(dirs->v[k], dirs->v[i]);
		_cleanup_free_ char *d = root_display(r, dirs->v[i]);
		diag_warn("%s: not mounted: %zu record%s kept (%s once it is mounted)", d, n, n == 1 ? "" : "s",
			  "its files are undone or forgotten");
	}
}

/* The root as messages name it: "/" or "ROOT", without a trailing '/'. */
static char *root_name(const struct context *ctx)
{
	char *d = root_display(&ctx->root, "/");
	size_t n = strlen(d);
	if (n > 1 && d[n - 1] == '/')
		d[n - 1] = '\0';
	return d;
}

char *no_boot_config_text(const struct context *ctx, const struct evaluation *ev)
{
	_cleanup_free_ char *d = root_name(ctx);
	const struct kernel_decision *kd = ev->def;
	if (ev->slots.n > 0)
		return xasprintf("no boot configuration in %s that memcg-policy manages (%zu found, none it may edit: "
				 "see status for why): nothing carries memcg %s for %s to the next boot",
				 d, ev->slots.n, kd ? memcg_state_name(kd->d.state) : "?", kd ? kd->k->version : "?");
	return xasprintf("no boot configuration found in %s (no boot entry, /etc/kernel/cmdline, cmdline.txt, "
			 "GRUB file, u-boot-menu extlinux.conf or flash-kernel boot script): nothing carries memcg "
			 "%s for %s to the next boot; "
			 "mount the boot partition or "
			 "install the boot loader, then run apply again",
			 d, kd ? memcg_state_name(kd->d.state) : "?", kd ? kd->k->version : "?");
}

char *not_carried_text(const struct context *ctx, const struct evaluation *ev)
{
	if (ev->no_boot_config)
		return no_boot_config_text(ctx, ev);
	if (ev->grub_no_program)
		return grub_no_program_text(ctx);
	return NULL;
}

char *grub_no_program_text(const struct context *ctx)
{
	_cleanup_free_ char *d = root_name(ctx);
	return xasprintf("%s has no memcg-policy program (in /usr/local/sbin, /usr/local/bin, /usr/sbin, /usr/bin, "
			 "/sbin or /bin) for its GRUB drop-in to run, or no drop-in "
			 "(/usr/share/memcg-policy/99-memcg-policy.cfg) for its /etc/default/grub to source: no menu "
			 "its update-grub makes carries the decision; install the memcg-policy package into it, then "
			 "run apply again",
			 d);
}
