/* facts/rpi-firmware.c - the Raspberry Pi firmware's device tree prefix,
 * see facts/rpi-firmware.h */
#include "facts/rpi-firmware.h"

#include <errno.h>
#include <string.h>

#include "facts/kernels.h"
#include "io/fdt.h"
#include "lib/diag.h"
#include "lib/util.h"
#include "slots/rpi-config.h"

#define MAX_DTB (4u << 20)

int rpi_firmware_read(const struct root *r, struct rpi_firmware *out)
{
	memset(out, 0, sizeof(*out));
	struct rpi_config c;
	int e = rpi_config_read(r, &c);
	if (e < 0 || !c.dir)
		return e < 0 ? e : 0;
	for (size_t i = 0; i < c.n && !out->unreadable; i++) {
		const struct rpi_boot *b = &c.boot[i];
		if (!rpi_boot_counts(&c, i))
			continue;
		if (b->uncertain_at && !out->uncertain)
			out->uncertain = xstrdup(b->uncertain_at);
		if (!b->dtb_path)
			continue;
		_cleanup_free_ char *disp = root_display(r, b->dtb_path);
		_cleanup_free_ char *blob = NULL;
		size_t len = 0;
		e = root_read_file_once(r, b->dtb_path, MAX_DTB, &blob, &len);
		_cleanup_free_ char *args = NULL;
		const char *why = NULL;
		if (e == 0)
			e = fdt_chosen_bootargs(blob, len, &args, &why);
		if (e < 0) {
			out->unreadable = xasprintf("%s: %s", disp,
						    e == -ENOSYS ? "libfdt.so.1 cannot be loaded"
						    : why	 ? why
								 : root_strerror(e));
			break;
		}
		out->present = true;
		const char *a = args ? args : "";
		size_t j = 0;
		while (j < out->n && !streq(out->v[j].bootargs, a))
			j++;
		if (j == out->n) {
			out->v = xrealloc(out->v, (out->n + 1) * sizeof(*out->v));
			out->v[out->n++] = (struct rpi_prefix){ xstrdup(a), xstrdup(disp), xstrdup(b->board->name) };
		} else {
			char *more = xasprintf("%s, %s", out->v[j].boards, b->board->name);
			free(out->v[j].boards);
			out->v[j].boards = more;
		}
	}
	rpi_config_free(&c);
	return 0;
}

void rpi_firmware_free(struct rpi_firmware *f)
{
	for (size_t i = 0; i < f->n; i++) {
		free(f->v[i].bootargs);
		free(f->v[i].blob);
		free(f->v[i].boards);
	}
	free(f->v);
	free(f->unreadable);
	free(f->uncertain);
	memset(f, 0, sizeof(*f));
}

void rpi_firmware_to_kernels(const struct rpi_firmware *f, struct kernel_list *l)
{
	if (!f->present && !f->unreadable && !f->uncertain)
		return;
	_cleanup_free_ char *note = NULL;
	if (f->unreadable) {
		note = xasprintf("the Raspberry Pi firmware's device tree prefix is not known (%s): the firmware of "
				 "the 6.12 kernels is taken to add cgroup_disable=memory",
				 f->unreadable);
	} else if (f->n > 1) {
		struct strbuf sb = { 0 };
		sb_append(&sb, "the boards' device trees give different prefixes before cmdline.txt; the line is made "
			       "to serve each:");
		for (size_t i = 0; i < f->n; i++)
			sb_appendf(&sb, " %s (%s): \"%s\"%s", f->v[i].boards, f->v[i].blob, f->v[i].bootargs,
				   i + 1 < f->n ? ";" : "");
		note = sb_take(&sb);
	}
	if (f->uncertain) {
		char *more = xasprintf("%s%s%s: set in a section of config.txt whose filter the tool cannot judge "
				       "([HDMI:0], [EDID=...], [gpio...], a serial number): taken to apply",
				       note ? note : "", note ? "; " : "", f->uncertain);
		free(note);
		note = more;
	}
	for (size_t i = 0; i < l->n; i++) {
		struct kernel *k = &l->k[i];
		const char *arch = k->kc.arch;
		if (arch && !streq(arch, "arm64") && !streq(arch, "arm"))
			continue;
		if (f->present && !f->unreadable) {
			k->fw_prefix = xstrdup(f->v[0].bootargs);
			k->fw_blob = xstrdup(f->v[0].blob);
			for (size_t j = 1; j < f->n; j++)
				strv_pushdup(&k->fw_others, f->v[j].bootargs);
		}
		if (note)
			k->fw_note = xstrdup(note);
	}
}
