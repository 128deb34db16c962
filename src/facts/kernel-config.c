/* facts/kernel-config.c - where a kernel's config comes from (facts/kernels.h): the
 * config files of DESIGN section 3, else the IKCONFIG block of the kernel
 * image or of configs.ko (facts/ikconfig.h), else the policy's [kernel GLOB]
 * default=. Every file is opened through io/rootfs.h. */
#include "lib/diag.h"
#include "facts/kernels.h"
#include "facts/ikconfig.h"
#include "facts/policy.h"
#include "lib/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>

const char *const kernel_module_trees[2] = { "/lib/modules", "/usr/lib/modules" };

/* The image file names of Raspberry Pi OS up to bullseye, by the
 * Foundation's release suffix: one image per flavour in /boot (or
 * /boot/firmware), not named by version. NULL for other releases. */
static const char *rpi_image_name(const char *ver)
{
	static const struct {
		const char *suffix, *image;
	} map[] = {
		{ "-v7l+", "kernel7l.img" },	   { "-v7+", "kernel7.img" },	    { "-v8+", "kernel8.img" },
		{ "-v8-16k+", "kernel_2712.img" }, { "-2712+", "kernel_2712.img" }, { "+", "kernel.img" },
	};
	if (strstr(ver, "+rpt-") || strstr(ver, "+bpo") || strstr(ver, "+deb"))
		return NULL; /* packaged kernels: vmlinuz-VER */
	for (size_t i = 0; i < ARRAY_SIZE(map); i++)
		if (endswith(ver, map[i].suffix))
			return map[i].image;
	return NULL;
}

/* The Raspberry Pi image of ver (rpi_image_name) if it is in the root:
 * a new string, or NULL. */
char *kernel_rpi_image(const struct root *r, const char *ver)
{
	const char *name = rpi_image_name(ver);
	if (!name)
		return NULL;
	static const char *const dirs[] = { "/boot/firmware", "/boot" };
	for (size_t i = 0; i < ARRAY_SIZE(dirs); i++) {
		char *p = xasprintf("%s/%s", dirs[i], name);
		if (root_is_reg(r, p))
			return p;
		free(p);
	}
	return NULL;
}

/* ---- config -------------------------------------------------------------- */

static bool errno_is_absent(int e) { return e == -ENOENT || e == -ENOTDIR; }

/* Reads a whole file of the root. Returns 1 when it is not there, 0 with
 * *raw (NUL-terminated), or a negative exit code (printed). */
static int read_whole(const struct root *r, const char *path, const char *disp, char **raw, size_t *raw_len)
{
	int rc = root_read_file_once(r, path, MAX_INPUT_FILE, raw, raw_len);
	if (errno_is_absent(rc))
		return 1;
	if (rc == -EISDIR || rc == -EINVAL)
		return diag_error(EXIT_BADINPUT, "%s: not a regular file", disp);
	if (rc == -EFBIG)
		return diag_error(EXIT_BADINPUT, "%s: larger than %u MiB", disp, MAX_INPUT_FILE >> 20);
	if (rc < 0)
		return diag_error(root_error_exit(rc), "%s: %s", disp, root_strerror(rc));
	return 0;
}

static int parse_text(struct kernel *k, const char *text, size_t len, const char *disp)
{
	unsigned line = 0;
	int rc = kconfig_parse(text, len, k->version, &k->kc, &line);
	if (rc < 0) {
		if (line)
			return diag_error(EXIT_BADINPUT, "%s:%u: not a kernel config", disp, line);
		return diag_error(EXIT_BADINPUT, "%s: not a kernel config", disp);
	}
	return 0;
}

/* Reads, inflates and parses one config file. Returns 1 when it was not
 * there, 0 when read (facts in k->kc), or a negative exit code (printed). */
static int read_config(const struct root *r, struct kernel *k, const char *path, const char *disp)
{
	_cleanup_free_ char *raw = NULL;
	size_t raw_len = 0;
	int rc = read_whole(r, path, disp, &raw, &raw_len);
	if (rc != 0)
		return rc;
	if (!kconfig_is_gzip(raw, raw_len))
		return parse_text(k, raw, raw_len, disp);
	_cleanup_free_ char *text = NULL;
	size_t len = 0;
	rc = kconfig_inflate(raw, raw_len, MAX_INPUT_FILE, &text, &len);
	if (rc == -EBADMSG)
		return diag_error(EXIT_BADINPUT, "%s: corrupt gzip data", disp);
	if (rc == -EFBIG)
		return diag_error(EXIT_BADINPUT, "%s: larger than %u MiB after decompression", disp,
				  MAX_INPUT_FILE >> 20);
	if (rc < 0)
		return diag_error(EXIT_SYSTEM, "%s: %s", disp, strerror(-rc));
	free(TAKE_PTR(raw));
	return parse_text(k, text, len, disp);
}

/* Why an image or module gave no config, for the list of places. */
static const char *embedded_absent_why(int rc)
{
	switch (rc) {
	case -ENOENT: return "no IKCONFIG block in it";
	case -ENOMSG: return "no compressed kernel payload found";
	case -EBADMSG: return "corrupt compressed data";
	case -EFBIG: return "too large after decompression";
	case -ENOPKG: return "its decompression library cannot be loaded";
	default: return "unreadable";
	}
}

/* The config inside a kernel image or configs.ko (CONFIG_IKCONFIG).
 * Returns 1 when the file is not there or has no config (why, appended to
 * looked), 0 when read (k->kc, *source), or a negative exit code. */
static int read_embedded(const struct root *r, struct kernel *k, const char *path, const char *disp, bool module,
			 struct strbuf *looked, char **source)
{
	_cleanup_free_ char *raw = NULL;
	size_t raw_len = 0;
	int rc = read_whole(r, path, disp, &raw, &raw_len);
	if (rc == 1) {
		sb_appendf(looked, "%s%s", looked->len ? ", " : "", disp);
		return 1;
	}
	if (rc == -EXIT_BADINPUT) {
		sb_appendf(looked, "%s%s (unusable)", looked->len ? ", " : "", disp);
		return 1;
	}
	if (rc < 0)
		return rc;
	struct ikconfig ik;
	rc = module ? ikconfig_from_module((const unsigned char *)raw, raw_len, &ik)
		    : ikconfig_from_image((const unsigned char *)raw, raw_len, &ik);
	free(TAKE_PTR(raw));
	if (rc < 0) {
		if (ik.packing != COMP_NONE)
			sb_appendf(looked, "%s%s (%s, %s payload)", looked->len ? ", " : "", disp,
				   embedded_absent_why(rc), comp_name(ik.packing));
		else
			sb_appendf(looked, "%s%s (%s)", looked->len ? ", " : "", disp,
				   raw_len ? embedded_absent_why(rc) : "empty");
		ikconfig_free(&ik);
		return 1;
	}
	_cleanup_free_ char *where = xasprintf("%s (embedded)", disp);
	rc = parse_text(k, ik.text, ik.len, where);
	if (rc == 0)
		*source = xasprintf("%s (%s, %s)", disp, module ? "IKCONFIG module" : "embedded",
				    ik.packing == COMP_NONE ? "uncompressed" : comp_name(ik.packing));
	ikconfig_free(&ik);
	return rc;
}

/* The config of one kernel, from the first place of DESIGN section 3 that
 * has one: config files, then the kernel image, then configs.ko. Errors
 * are printed and kept in k->config_error; a config that is nowhere sets
 * k->config_missing and k->config_looked (returns false). */
bool kernel_load_config(const struct root *r, struct kernel *k)
{
	struct place {
		char *path;
		int kind; /* 0 config file, 1 image, 2 module */
	} places[20];
	size_t n = 0;
	if (r->live && k->running)
		places[n++] = (struct place){ xstrdup("/proc/config.gz"), 0 };
	places[n++] = (struct place){ xasprintf("/boot/config-%s", k->version), 0 };
	for (size_t i = 0; i < ARRAY_SIZE(kernel_module_trees); i++)
		places[n++] = (struct place){ xasprintf("%s/%s/config", kernel_module_trees[i], k->version), 0 };
	places[n++] = (struct place){ xasprintf("/boot/vmlinuz-%s", k->version), 1 };
	for (size_t i = ARRAY_SIZE(kernel_module_trees); i-- > 0;)
		places[n++] = (struct place){ xasprintf("%s/%s/vmlinuz", kernel_module_trees[i], k->version), 1 };
	static const char *const ko[] = { "", ".xz", ".zst", ".gz" };
	for (size_t i = 0; i < ARRAY_SIZE(kernel_module_trees); i++)
		for (size_t j = 0; j < ARRAY_SIZE(ko); j++)
			places[n++] = (struct place){ xasprintf("%s/%s/kernel/kernel/configs.ko%s",
								kernel_module_trees[i], k->version, ko[j]),
						      2 };
	char *img = kernel_rpi_image(r, k->version);
	if (img)
		places[n++] = (struct place){ img, 1 };

	struct strbuf looked = { 0 };
	bool done = false;
	for (size_t i = 0; i < n && !done; i++) {
		char *disp = root_display(r, places[i].path);
		char *source = NULL;
		int rc;
		if (places[i].kind == 0) {
			rc = read_config(r, k, places[i].path, disp);
			if (rc == 1)
				sb_appendf(&looked, "%s%s", looked.len ? ", " : "", disp);
		} else {
			rc = read_embedded(r, k, places[i].path, disp, places[i].kind == 2, &looked, &source);
		}
		if (rc == 1) {
			free(disp);
			continue;
		}
		if (source) {
			free(disp);
			disp = source;
		}
		k->config_path = disp;
		k->config_error = rc < 0 ? rc : 0;
		done = true;
	}
	if (!done) {
		/* an error unless the policy decides the kernel
		 * (kernels_apply_policy), which also prints it */
		k->config_missing = true;
		k->config_error = -EXIT_BADINPUT;
		k->config_looked = sb_take(&looked);
	}
	sb_free(&looked);
	for (size_t i = 0; i < n; i++)
		free(places[i].path);
	return done;
}

void kernels_apply_policy(struct kernel_list *l, const struct policy *p, bool brief)
{
	for (size_t i = 0; i < l->n; i++) {
		struct kernel *k = &l->k[i];
		if (!k->config_missing)
			continue;
		const struct policy_kernel_section *sec = policy_kernel_default(p, k->version);
		if (!sec && brief) {
			size_t places = 1;
			for (const char *c = k->config_looked ? k->config_looked : ""; *c; c++)
				places += c[0] == ',' && c[1] == ' ';
			log_verbose("no kernel config for %s: looked in %s", k->version,
				    k->config_looked ? k->config_looked : "");
			diag_error(EXIT_BADINPUT,
				   "no kernel config for %s (looked in %zu places: -v lists them); to decide it "
				   "without one, add \"[kernel %s]\" with \"default = on\" (or off: the kernel's own "
				   "memcg default) to the policy",
				   k->version, places, k->version);
			continue;
		}
		if (!sec) {
			diag_error(EXIT_BADINPUT,
				   "no kernel config for %s (looked in %s); a [kernel GLOB] section "
				   "with default= can decide it without one",
				   k->version, k->config_looked ? k->config_looked : "");
			continue;
		}
		/* The section speaks for the kernel: memcg is built, its
		 * default is the section's; decide_kernel_init applies it. */
		k->config_from_policy = true;
		k->config_error = 0;
		if (streq(k->accepts_enable_source, "config"))
			k->accepts_enable_source = "unknown: no config, no System.map";
		k->kc.cgroups_built = k->kc.memcg_built = true;
		k->kc.memcg_v1 = true;
		k->kc.family = FAMILY_MAINLINE;
		k->kc.default_state = (enum memcg_default)sec->default_state;
		k->kc.rule = sec->default_state == MEMCG_DEFAULT_OFF ? RULE_LAST_WINS : RULE_DISABLE_WINS;
		k->kc.default_reason = "set by the policy's [kernel] default=";
		_cleanup_free_ char *at = origin_str(&sec->default_origin);
		k->config_note = xasprintf("none (decided from [kernel %s] default= at %s)", sec->glob, at);
	}
}
