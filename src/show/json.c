/* show/json.c - the --json output, see show/report.h. */
#include "show/report.h"
#include "slots/uki.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include "io/jsonc.h"

#include "lib/diag.h"
#include "lib/util.h"

static FILE *json_out;	  /* the real stdout, with --json */
static bool emitted;	  /* the one object is out */
static char *root_prefix; /* "ROOT/" with --root: file names inside it become "/..." */

/* One diagnostic as the contract has it: message, file (inside the root),
 * line. */
static struct json_object *diagnostic_json(const char *message, const char *file, unsigned line)
{
	struct json_object *d = json_object_new_object();
	json_object_object_add(d, "message", json_object_new_string(message));
	struct json_object *f = NULL;
	if (file && root_prefix && startswith(file, root_prefix))
		f = json_object_new_string(file + strlen(root_prefix) - 1);
	else if (file)
		f = json_object_new_string(file);
	json_object_object_add(d, "file", f);
	json_object_object_add(d, "line", file ? json_object_new_int64(line) : NULL);
	return d;
}

int json_output_begin(const char *root_path)
{
	if (root_path && !root_prefix)
		root_prefix = path_join(root_path, "");
	if (json_out)
		return 0; /* already on: global options after the command name */
	int fd = dup(STDOUT_FILENO);
	if (fd < 0)
		return -errno;
	/* stray output goes nowhere: /dev/null, or, in a tree without /dev
	 * (a bare chroot), an anonymous file of its own */
	int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
	if (null < 0 && errno == ENOENT)
		null = memfd_create("memcg-policy-stdout", MFD_CLOEXEC);
	if (null < 0 || dup2(null, STDOUT_FILENO) < 0) {
		int e = errno;
		if (null >= 0)
			close(null);
		close(fd);
		return -e;
	}
	close(null);
	(void)fcntl(fd, F_SETFD, FD_CLOEXEC);
	json_out = fdopen(fd, "w");
	if (!json_out) {
		int e = errno;
		close(fd);
		return -e;
	}
	return 0;
}

bool json_output_active(void) { return json_out != NULL; }

bool json_output_end(void)
{
	if (!json_out)
		return true;
	bool ok = fflush(json_out) == 0 && !ferror(json_out);
	ok = fclose(json_out) == 0 && ok;
	json_out = NULL;
	free(root_prefix);
	root_prefix = NULL;
	return ok;
}

char *json_root_path(const struct context *ctx, const char *display)
{
	if (ctx->root.live || !ctx->root.path)
		return xstrdup(display);
	_cleanup_free_ char *prefix = path_join(ctx->root.path, "");
	if (startswith(display, prefix))
		return xasprintf("/%s", display + strlen(prefix));
	return xstrdup(display);
}

static struct json_object *str_or_null(const char *s) { return s ? json_object_new_string(s) : NULL; }

static struct json_object *path_or_null(const struct context *ctx, const char *display)
{
	if (!display)
		return NULL;
	_cleanup_free_ char *p = json_root_path(ctx, display);
	return json_object_new_string(p);
}

static struct json_object *strv_json(const struct strv *sv)
{
	struct json_object *a = json_object_new_array();
	for (size_t i = 0; sv && i < sv->n; i++)
		json_object_array_add(a, json_object_new_string(sv->v[i]));
	return a;
}

void json_report_set(struct json_object *o, const char *key, struct json_object *v)
{
	json_object_object_add(o, key, v);
}

struct json_object *json_report_new(const struct context *ctx, const char *command)
{
	struct json_object *o = json_object_new_object();
	json_object_object_add(o, "command", str_or_null(command));
	json_object_object_add(o, "version", json_object_new_string(VERSION));
	json_object_object_add(o, "schema_version", json_object_new_int(JSON_SCHEMA_VERSION));
	json_object_object_add(o, "exit_code", NULL);
	json_object_object_add(o, "errors", json_object_new_array());
	json_object_object_add(o, "warnings", json_object_new_array());
	json_object_object_add(o, "root", json_object_new_string(ctx->root_path ? ctx->root_path : "/"));
	/* before the root is opened (a usage error): as the options say */
	bool opened = ctx->root.fd >= 0;
	json_object_object_add(o, "live", json_object_new_boolean(opened ? ctx->root.live : !ctx->root_path));
	json_object_object_add(o, "chroot", json_object_new_boolean(opened && ctx->root.chroot));
	static const char *const null_keys[] = {
		"kernel",    "decision",	"kernels",	  "slots",   "boot_dir", "rejected_boot_dirs",
		"in_sync",   "reboot",		"kernel_ignored", "running", "policy",	 "system",
		"next_boot", "reapply_pending", "grub_value",	  "bench",
	};
	for (size_t i = 0; i < ARRAY_SIZE(null_keys); i++)
		json_object_object_add(o, null_keys[i], NULL);
	json_object_object_add(o, "changed", json_object_new_boolean(false));
	json_object_object_add(o, "dry_run", json_object_new_boolean(false));
	json_object_object_add(o, "files", json_object_new_array());
	return o;
}

void json_report_file(struct json_object *o, const char *path, const char *action, const struct strv *added,
		      const struct strv *removed)
{
	struct json_object *files;
	if (!json_object_object_get_ex(o, "files", &files))
		return;
	struct json_object *f = json_object_new_object();
	json_object_object_add(f, "path", json_object_new_string(path));
	json_object_object_add(f, "action", json_object_new_string(action));
	json_object_object_add(f, "added", strv_json(added));
	json_object_object_add(f, "removed", strv_json(removed));
	json_object_array_add(files, f);
}

static const char *family_name(enum kernel_family f)
{
	switch (f) {
	case FAMILY_MAINLINE: return "mainline";
	case FAMILY_DEBIAN_OLD: return "debian-old";
	case FAMILY_SUSE: return "suse";
	case FAMILY_RPI: return "raspberrypi";
	case FAMILY_RPI_FIRMWARE: return "raspberrypi-firmware";
	}
	return "?";
}

static const char *builtin_mode_name(enum builtin_cmdline_mode m)
{
	switch (m) {
	case BUILTIN_NONE: return "none";
	case BUILTIN_PREPEND: return "prepend";
	case BUILTIN_FALLBACK: return "fallback";
	case BUILTIN_APPEND: return "append";
	case BUILTIN_OVERRIDE: return "override";
	}
	return "?";
}

static const char *rule_name(enum memcg_rule r)
{
	switch (r) {
	case RULE_DISABLE_WINS: return "disable-wins";
	case RULE_LAST_WINS: return "last-wins";
	case RULE_ENABLE_WINS: return "enable-wins";
	}
	return "?";
}

/* One reason as data: {rule, value, file, line, text}. */
static struct json_object *reason_json(const struct context *ctx, const struct decision *d, size_t i)
{
	const struct reason_info *ri = i < d->n_info ? &d->info[i] : NULL;
	struct json_object *r = json_object_new_object();
	json_object_object_add(r, "rule", json_object_new_string(ri ? ri->rule : "other"));
	json_object_object_add(r, "value", str_or_null(ri ? ri->value : NULL));
	json_object_object_add(r, "file", path_or_null(ctx, ri ? ri->file : NULL));
	json_object_object_add(r, "line", ri && ri->line ? json_object_new_int64(ri->line) : NULL);
	json_object_object_add(r, "text", json_object_new_string(d->reasons.v[i]));
	return r;
}

static struct json_object *kernel_json(const struct context *ctx, const struct evaluation *ev,
				       const struct kernel_decision *kd)
{
	struct json_object *k = json_object_new_object();
	json_object_object_add(k, "version", json_object_new_string(kd->k->version));
	json_object_object_add(k, "default_kernel", json_object_new_boolean(kd == ev->def));
	json_object_object_add(k, "running", json_object_new_boolean(kd->k->running));
	json_object_object_add(k, "config", path_or_null(ctx, kd->k->config_path));
	json_object_object_add(k, "memcg_built", json_object_new_boolean(kd->dk.memcg_built));
	json_object_object_add(k, "default",
			       json_object_new_string(kd->dk.default_state == MEMCG_DEFAULT_ON ? "on" : "off"));
	json_object_object_add(k, "default_reason", str_or_null(kd->dk.default_reason));
	json_object_object_add(k, "family", json_object_new_string(family_name(kd->k->kc.family)));
	json_object_object_add(k, "rule", json_object_new_string(rule_name(kd->dk.rule)));
	json_object_object_add(k, "accepts_cgroup_enable", json_object_new_boolean(kd->dk.accepts_enable));
	json_object_object_add(k, "accepts_cgroup_enable_source", str_or_null(kd->dk.accepts_reason));
	json_object_object_add(k, "builtin_cmdline", str_or_null(kd->dk.builtin_cmdline));
	json_object_object_add(k, "builtin_cmdline_mode",
			       json_object_new_string(builtin_mode_name(kd->dk.builtin_mode)));
	json_object_object_add(k, "firmware_prefix", str_or_null(kd->dk.fw_prefix));
	json_object_object_add(k, "firmware_blob", str_or_null(kd->dk.fw_blob));
	json_object_object_add(k, "mode", json_object_new_string(policy_mode_name(kd->d.mode)));
	json_object_object_add(k, "keep", json_object_new_boolean(kd->d.keep));
	json_object_object_add(k, "decision", json_object_new_string(memcg_state_name(kd->d.state)));
	struct json_object *ra = json_object_new_array();
	for (size_t i = 0; i < kd->d.reasons.n; i++)
		json_object_array_add(ra, reason_json(ctx, &kd->d, i));
	json_object_object_add(k, "reasons", ra);
	json_object_object_add(k, "decided_by",
			       kd->d.why < kd->d.reasons.n && !kd->unknown ? reason_json(ctx, &kd->d, kd->d.why)
									   : NULL);
	json_object_object_add(k, "warnings", strv_json(&kd->d.warnings));
	json_object_object_add(k, "add", strv_json(&kd->d.add));
	json_object_object_add(k, "remove", strv_json(&kd->d.remove));
	return k;
}

static struct json_object *slot_json(const struct slot *s, const struct slot_change *c)
{
	struct json_object *j = json_object_new_object();
	json_object_object_add(j, "kind", json_object_new_string(slot_kind_name(s->kind)));
	json_object_object_add(j, "path", json_object_new_string(s->path));
	json_object_object_add(j, "kernel", str_or_null(s->kernel));
	json_object_object_add(j, "state", json_object_new_string(slot_state_name(c->state)));
	json_object_object_add(j, "note", str_or_null(slot_note(s, c)));
	json_object_object_add(j, "would_add", strv_json(&c->added));
	json_object_object_add(j, "would_remove", strv_json(&c->removed));
	const struct uki_facts *u = s->uki;
	if (u) {
		json_object_object_add(j, "cmdline", str_or_null(s->content));
		struct json_object *uj = json_object_new_object();
		json_object_object_add(uj, "cmdline", str_or_null(u->own));
		json_object_object_add(uj, "uname", str_or_null(u->uname));
		json_object_object_add(uj, "profiles", json_object_new_int((int)u->profiles));
		struct json_object *aa = json_object_new_array();
		for (size_t i = 0; i < u->addons.n; i++) {
			struct json_object *a = json_object_new_object();
			json_object_object_add(a, "path", json_object_new_string(u->addons.v[i]));
			json_object_object_add(a, "cmdline", json_object_new_string(u->addon_lines.v[i]));
			json_object_array_add(aa, a);
		}
		json_object_object_add(uj, "addons", aa);
		_cleanup_free_ char *rebuild = uki_rebuild_command(s);
		json_object_object_add(uj, "rebuild", str_or_null(rebuild));
		json_object_object_add(j, "uki", uj);
	}
	return j;
}

static enum memcg_state running_as_state(enum run_state r) { return r == RUN_ON ? STATE_ON : STATE_OFF; }

void next_boot_of(const struct context *ctx, const struct evaluation *ev, struct next_boot *nb)
{
	memset(nb, 0, sizeof(*nb));
	const struct kernel_decision *def = ev->def;
	if (!def)
		return;
	nb->kernel = def->k->version;
	if (def->unknown) {
		/* nothing known of the kernel's memcg */
	} else if (ev->in_sync) {
		nb->known = true;
		nb->state = def->d.state;
	} else {
		_cleanup_free_ char *line = evaluation_boot_cmdline(ev, def);
		if (line) {
			nb->known = true;
			nb->state = cmdline_memcg_state(&def->dk, line);
		}
	}
	if (ctx->root.live && ctx->sys_loaded && ctx->sys.running != RUN_UNKNOWN) {
		nb->running_known = true;
		nb->running = running_as_state(ctx->sys.running);
	}
	nb->ignored =
		ev->kernel_ignored && def->k->running && nb->known && nb->running_known && nb->state != nb->running;
	nb->reboot_needed = nb->known && nb->running_known && nb->state != nb->running && !nb->ignored;
}

void print_next_boot(const struct context *ctx, const struct next_boot *nb)
{
	if (!nb->kernel)
		return;
	if (!nb->known) {
		printf("next boot (%s): memcg state unknown (no command line found for it)\n", esc(nb->kernel));
		return;
	}
	const char *next = memcg_state_name(nb->state);
	char now[16] = "";
	if (nb->now_known && nb->now != nb->state)
		snprintf(now, sizeof(now), " (now: %s)", memcg_state_name(nb->now));
	if (nb->ignored)
		printf("next boot (%s): memcg %s by its command line, but the kernel booted with it now runs with "
		       "memcg "
		       "%s: the kernel ignores it (see check)\n",
		       esc(nb->kernel), next, memcg_state_name(nb->running));
	else if (!ctx->root.live)
		printf("next boot of the image (%s): memcg %s%s\n", esc(nb->kernel), next, now);
	else if (!nb->running_known)
		printf("next boot (%s): memcg %s%s; the running state is unknown\n", esc(nb->kernel), next, now);
	else if (nb->reboot_needed)
		printf("next boot (%s): memcg %s%s; running now: memcg %s: reboot needed\n", esc(nb->kernel), next, now,
		       memcg_state_name(nb->running));
	else
		printf("next boot (%s): memcg %s%s, as running now: no reboot needed\n", esc(nb->kernel), next, now);
}

const char *json_memcg_word(const char *name) { return streq(name, "not built") ? "not_built" : name; }

const char *reboot_state_name(const struct context *ctx, const struct evaluation *ev, const struct next_boot *nb)
{
	if (!ctx->root.live)
		return "not_live";
	if (nb->ignored)
		return "kernel_ignores";
	if (nb->reboot_needed || ev->reboot_pending)
		return "needed";
	if (ev->kernel_ignored)
		return "kernel_ignores";
	if (!nb->known || !nb->running_known)
		return "unknown";
	return "not_needed";
}

void json_report_evaluation(struct json_object *o, const struct context *ctx, const struct evaluation *ev)
{
	struct json_object *ka = json_object_new_array();
	for (size_t i = 0; i < ev->n_kd; i++)
		json_object_array_add(ka, kernel_json(ctx, ev, &ev->kd[i]));
	json_object_object_add(o, "kernels", ka);
	json_object_object_add(o, "kernel", ev->def ? json_object_new_string(ev->def->k->version) : NULL);
	json_object_object_add(o, "decision",
			       ev->def ? json_object_new_string(memcg_state_name(ev->def->d.state)) : NULL);

	struct json_object *sa = json_object_new_array();
	for (size_t i = 0; i < ev->slots.n; i++)
		json_object_array_add(sa, slot_json(&ev->slots.v[i], &ev->ch[i]));
	json_object_object_add(o, "slots", sa);
	json_object_object_add(o, "boot_dir", str_or_null(ev->slots.boot_dir));
	json_object_object_add(o, "rejected_boot_dirs", strv_json(&ev->slots.rejected));
	json_object_object_add(o, "in_sync", json_object_new_boolean(ev->in_sync));
	json_object_object_add(o, "kernel_ignored", str_or_null(ev->kernel_ignored));

	struct json_object *run = json_object_new_object();
	bool live = ctx->root.live && ctx->sys_loaded;
	json_object_object_add(run, "memcg",
			       live ? json_object_new_string(json_memcg_word(run_state_name(ctx->sys.running))) : NULL);
	json_object_object_add(run, "source", live ? str_or_null(ctx->sys.running_source) : NULL);
	json_object_object_add(run, "cmdline", live ? str_or_null(ctx->sys.proc_cmdline) : NULL);
	json_object_object_add(o, "running", run);

	struct json_object *pol = json_object_new_object();
	struct json_object *pf = json_object_new_array();
	for (size_t i = 0; i < ctx->policy.n_files; i++)
		json_object_array_add(pf, path_or_null(ctx, ctx->policy.files[i]));
	json_object_object_add(pol, "files", pf);
	json_object_object_add(pol, "mode", json_object_new_string(policy_mode_name(ctx->policy.mode)));
	json_object_object_add(o, "policy", pol);

	struct json_object *sys = json_object_new_object();
	struct json_object *pa = json_object_new_array();
	for (size_t i = 0; i < ctx->sys.programs.n; i++) {
		const struct needs_found *f = &ctx->sys.found_programs[i];
		struct json_object *j = json_object_new_object();
		json_object_object_add(j, "name", json_object_new_string(f->name));
		json_object_object_add(j, "path", json_object_new_string(f->path));
		json_object_array_add(pa, j);
	}
	json_object_object_add(sys, "needs_memcg_programs", pa);
	struct json_object *ua = json_object_new_array();
	for (size_t i = 0; i < ctx->sys.units.n; i++) {
		const struct needs_found *f = &ctx->sys.found_units[i];
		struct json_object *j = json_object_new_object();
		json_object_object_add(j, "unit", json_object_new_string(f->name));
		json_object_object_add(j, "file", json_object_new_string(f->path));
		json_object_object_add(j, "line", json_object_new_int64(f->line));
		json_object_object_add(j, "directive", json_object_new_string(f->directive));
		json_object_array_add(ua, j);
	}
	json_object_object_add(sys, "needs_memcg_units", ua);
	json_object_object_add(sys, "ram", ctx->sys.have_ram ? json_object_new_uint64(ctx->sys.ram) : NULL);
	json_object_object_add(o, "system", sys);

	struct next_boot nb;
	next_boot_of(ctx, ev, &nb);
	struct json_object *n = json_object_new_object();
	json_object_object_add(n, "kernel", str_or_null(nb.kernel));
	json_object_object_add(n, "memcg", nb.known ? json_object_new_string(memcg_state_name(nb.state)) : NULL);
	json_object_object_add(n, "running_memcg",
			       nb.running_known ? json_object_new_string(memcg_state_name(nb.running)) : NULL);
	json_object_object_add(o, "next_boot", n);
	json_object_object_add(o, "reboot", json_object_new_string(reboot_state_name(ctx, ev, &nb)));
}

int json_report_emit(struct json_object *o, int exit_code)
{
	if (emitted || !json_out) {
		json_object_put(o);
		return exit_code;
	}
	json_object_object_add(o, "exit_code", json_object_new_int(exit_code));
	struct json_object *errs = json_object_new_array(), *warns = json_object_new_array();
	for (size_t i = 0; i < diag_count(); i++) {
		const struct diagnostic *d = diag_at(i);
		json_object_array_add(d->level == DIAG_ERROR ? errs : warns,
				      diagnostic_json(d->message, d->file, d->line));
	}
	if (exit_code != EXIT_OK && exit_code != EXIT_DRIFT && exit_code != EXIT_REBOOT &&
	    json_object_array_length(errs) == 0)
		json_object_array_add(errs,
				      diagnostic_json(exit_code == EXIT_USAGE ? "usage error (see --help)"
									      : "failed (see the messages on stderr)",
						      NULL, 0));
	json_object_object_add(o, "errors", errs);
	json_object_object_add(o, "warnings", warns);
	print_json(o);
	json_object_put(o);
	return exit_code;
}

/* JSON text is UTF-8. json-c writes a string's bytes as they are, and a
 * name from a root may be any bytes: each byte HH of no valid UTF-8
 * sequence is written as the escape \udcHH (U+DC80..U+DCFF, the bytes
 * Python's "surrogateescape" gives back). Such bytes stand only inside
 * strings: everything else json-c writes is ASCII. */
static void put_json_text(const char *text, FILE *f)
{
	const unsigned char *s = (const unsigned char *)text;
	size_t n = strlen(text);
	for (size_t i = 0; i < n;) {
		size_t len = utf8_seq_len(s + i, n - i);
		if (len == 0) {
			fprintf(f, "\\udc%02x", s[i]);
			i++;
		} else {
			fwrite(s + i, 1, len, f);
			i += len;
		}
	}
}

void print_json(struct json_object *obj)
{
	FILE *f = json_out ? json_out : stdout;
	if (emitted)
		return;
	put_json_text(json_object_to_json_string_ext(obj, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
								  JSON_C_TO_STRING_NOSLASHESCAPE),
		      f);
	fputc('\n', f);
	emitted = json_out != NULL;
}

void json_report_fallback(const struct context *ctx, const char *command, int exit_code)
{
	if (emitted || !json_out)
		return;
	json_report_emit(json_report_new(ctx, command), exit_code);
}
