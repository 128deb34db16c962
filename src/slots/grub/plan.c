/* slots/grub/plan.c - the GRUB part of an evaluation (slots/grub/grub.h): the one decision
 * the GRUB slots follow, the state of a menu that only awaits its
 * regeneration in an image, the dry-run's linux lines before and after,
 * what status shows of the variables, and the line the menu's kernels
 * get, judged before anything is written. The variables' values come
 * from slots/grub/vars.c. */
#include <errno.h>
#include <stdio.h>

#include "lib/cmdline.h"
#include "lib/diag.h"
#include "slots/grub/grub-int.h"

int grub_decision(const struct kernel_decision *kd, size_t n, const struct kernel_decision *def,
		  const struct slot_list *l, struct decision *out)
{
	struct grub_kernel *k = xcalloc(n ? n : 1, sizeof(*k));
	size_t idef = n;
	for (size_t i = 0; i < n; i++) {
		k[i] = (struct grub_kernel){ kd[i].k->version, &kd[i].dk, &kd[i].d };
		if (&kd[i] == def)
			idef = i;
	}
	_cleanup_free_ char *err = grub_menu_decision(k, n, idef, out);
	free(k);
	if (err)
		return diag_error(EXIT_BADINPUT, "%s", err);
	for (size_t i = 0; i < n; i++) {
		size_t sz = cmdline_size_for_arch(kd[i].k->kc.arch);
		if (sz && (!out->line_limit || sz - 1 < out->line_limit))
			out->line_limit = sz - 1;
	}
	if (!out->keep)
		return 0;
	for (size_t i = 0; i < l->n; i++) {
		const struct slot *s = &l->v[i];
		if (s->kind != SLOT_GRUB_TOKENS || !s->content || s->unmanaged)
			continue;
		struct grub_tokens t;
		unsigned bad;
		if (grub_tokens_parse(s->content, s->len, &t, &bad) < 0)
			return diag_error(EXIT_BADINPUT, "%s:%u: " GRUB_TOKENS_BAD, s->path, bad);
		strv_free(&out->add);
		strv_free(&out->remove);
		out->add = t.add;
		out->remove = t.remove;
		out->keep = false;
		strv_pushdup(&out->reasons, "GRUB: keep: the tokens the last apply recorded (" GRUB_TOKENS_PATH ")");
	}
	return 0;
}

/* Where the drop-in looks for the program (grub.d/99-memcg-policy.cfg:
 * the PATH of update-grub and kernel hooks, then its own list). */
static const char *const program_paths[] = {
	"/usr/local/sbin/memcg-policy", "/usr/local/bin/memcg-policy", "/usr/sbin/memcg-policy",
	"/usr/bin/memcg-policy",	"/sbin/memcg-policy",	       "/bin/memcg-policy",
};

bool grub_image_lacks_program(const struct root *r, const struct slot_list *l, const struct slot_change *ch)
{
	if (r->live)
		return false;
	bool carries = false;
	for (size_t i = 0; i < l->n; i++)
		if (l->v[i].kind == SLOT_GRUBENV && !l->v[i].unmanaged)
			return false; /* the entries read kernelopts, which the tool writes itself */
	for (size_t i = 0; i < l->n && !carries; i++) {
		const struct slot *s = &l->v[i];
		if (s->kind != SLOT_GRUB_TOKENS || s->unmanaged)
			continue;
		const char *text = ch[i].new_content ? ch[i].new_content : s->content;
		size_t len = ch[i].new_content ? ch[i].new_len : s->len;
		struct grub_tokens t;
		unsigned bad;
		if (text && grub_tokens_parse(text, len, &t, &bad) == 0) {
			carries = t.add.n || t.remove.n;
			grub_tokens_free(&t);
		}
	}
	if (!carries)
		return false;
	/* a marked line sources the drop-in from a file of the package */
	for (size_t i = 0; i < l->n; i++)
		if (l->v[i].kind == SLOT_GRUB_DEFAULT && !l->v[i].unmanaged && !l->v[i].source)
			return true;
	for (size_t i = 0; i < ARRAY_SIZE(program_paths); i++) {
		struct stat st;
		if (root_stat(r, program_paths[i], &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 0111))
			return false;
	}
	return true;
}

void grub_settle_menus(const struct root *r, const struct slot_list *l, struct slot_change *ch)
{
	if (r->live)
		return;
	for (size_t i = 0; i < l->n; i++)
		if (slot_kind_feeds_menu(l->v[i].kind) && (ch[i].changed || ch[i].state == SLOT_DRIFT))
			return; /* the configuration itself is not right yet */
	for (size_t i = 0; i < l->n; i++) {
		const struct slot *s = &l->v[i];
		if (!slot_kind_is_menu(s->kind) || ch[i].state != SLOT_DRIFT || !slot_regeneration_helps(s))
			continue;
		ch[i].state = SLOT_NOT_REGENERATED;
		char *note = xasprintf("menu not regenerated yet (the configuration is right; the menu gets it when "
				       "the image runs %s, or with apply --regenerate): %s",
				       menu_tool_name(s->kind), slot_note(s, &ch[i]) ? slot_note(s, &ch[i]) : "");
		free(ch[i].note);
		ch[i].note = note;
	}
}

/* ---- apply --dry-run: each linux line before and after ---- */

static bool ends_with_n(const char *s, size_t n, const char *suffix, size_t *cut)
{
	size_t m = strlen(suffix);
	if (m > n || memcmp(s + n - m, suffix, m) != 0)
		return false;
	*cut = n - m;
	return true;
}

/* The menu line's arguments (after "linux") with the variables' part
 * replaced: `... LINUX DEFAULT` (normal entries) or `... LINUX` (recovery)
 * as 10_linux writes them, from the values now (or before the drop-in);
 * NULL if the line was made from neither. */
static char *predict(const char *args, size_t n, const struct vars v[3])
{
	for (int w = 1; w >= 0; w--) {
		_cleanup_free_ char *normal = xasprintf(" %s %s", v[w].lin, v[w].def);
		_cleanup_free_ char *recovery = xasprintf(" %s", v[w].lin);
		size_t cut;
		if (ends_with_n(args, n, normal, &cut))
			return xasprintf("%.*s %s %s", (int)cut, args, v[2].lin, v[2].def);
		if (ends_with_n(args, n, recovery, &cut))
			return xasprintf("%.*s %s", (int)cut, args, v[2].lin);
	}
	return NULL;
}

struct preview {
	const char *path;
	const struct vars *v;
	unsigned lines;
};

static bool preview_line(void *data, const struct menu_line *m)
{
	struct preview *pv = data;
	if (!m->is_linux)
		return true;
	const char *t = m->text, *end = m->text + m->text_len;
	while (t < end && (*t == ' ' || *t == '\t'))
		t++;
	while (t < end && *t != ' ' && *t != '\t')
		t++;
	while (t < end && (*t == ' ' || *t == '\t'))
		t++;
	size_t n = (size_t)(end - t);
	_cleanup_free_ char *after = predict(t, n, pv->v);
	_cleanup_free_ char *before = xstrndup(t, n);
	printf("%s:%u: before: %s\n", esc(pv->path), m->line, esc(before));
	if (after)
		printf("%s:%u: after:  %s\n", esc(pv->path), m->line, esc(after));
	else
		printf("%s:%u: after:  ? (not made from GRUB_CMDLINE_LINUX and GRUB_CMDLINE_LINUX_DEFAULT as they are "
		       "now: regenerate the menu to see)\n",
		       esc(pv->path), m->line);
	pv->lines++;
	return true;
}

int grub_preview(const struct root *r, const struct slot_list *l, const struct slot_change *ch)
{
	bool any = false, menus = false;
	for (size_t i = 0; i < l->n; i++) {
		if (l->v[i].unmanaged)
			continue;
		if (slot_kind_feeds_menu(l->v[i].kind) && ch[i].changed)
			any = true;
		if (l->v[i].kind == SLOT_GRUB_CFG && l->v[i].content) {
			menus = true;
			any |= ch[i].state == SLOT_DRIFT || ch[i].state == SLOT_NOT_REGENERATED;
		}
	}
	if (!any || !menus)
		return 0;
	struct vars v[3] = { { 0 } };
	_cleanup_free_ char *why_not = NULL;
	int e = grub_get_vars(r, l, ch, v, &why_not);
	if (e < 0) {
		diag_warn("cannot know GRUB_CMDLINE_LINUX and GRUB_CMDLINE_LINUX_DEFAULT: %s", esc(why_not));
		return 0;
	}
	printf("GRUB_CMDLINE_LINUX=\"%s\" GRUB_CMDLINE_LINUX_DEFAULT=\"%s\" will become\n"
	       "GRUB_CMDLINE_LINUX=\"%s\" GRUB_CMDLINE_LINUX_DEFAULT=\"%s\"\n",
	       esc(v[1].lin), esc(v[1].def), esc(v[2].lin), esc(v[2].def));
	for (size_t i = 0; i < l->n; i++) {
		const struct slot *s = &l->v[i];
		if (s->kind != SLOT_GRUB_CFG || !s->content || s->unmanaged)
			continue;
		struct preview pv = { s->path, v, 0 };
		printf("%s: each linux line before and after regenerating:\n", esc(s->path));
		grub_menu_lines(s->content, s->len, preview_line, &pv);
	}
	grub_vars_free(v);
	return fflush(stdout) == 0 ? 0 : diag_error(EXIT_SYSTEM, "cannot write: %s", strerror(errno));
}

/* ---- status: the GRUB variables as written and as the menu gets them ---- */

/* Prints every line of text assigning name ("NAME=" at the start of the
 * line, after blanks or "export "), as FILE:LINE: TEXT. */
static void print_assignments(const char *path, const char *text, size_t len, const char *name)
{
	size_t n = strlen(name);
	unsigned ln = 1;
	for (size_t i = 0; i < len; ln++) {
		size_t e = i;
		while (e < len && text[e] != '\n')
			e++;
		size_t j = i;
		while (j < e && (text[j] == ' ' || text[j] == '\t'))
			j++;
		if (e - j >= 7 && memcmp(text + j, "export ", 7) == 0)
			j += 7;
		while (j < e && (text[j] == ' ' || text[j] == '\t'))
			j++;
		if (e - j > n && memcmp(text + j, name, n) == 0 && text[j + n] == '=') {
			_cleanup_free_ char *line = xstrndup(text + j, e - j);
			printf("    written:       %s:%u: %s\n", esc(path), ln, esc(line));
		}
		i = e + 1;
	}
}

static void print_written(const struct root *r, bool dropins, const char *name)
{
	_cleanup_free_ char *deftext = NULL;
	size_t deflen = 0;
	if (root_read_file(r, GRUB_DEFAULT_PATH, MAX_INPUT_FILE, &deftext, &deflen) == 0) {
		size_t n;
		_cleanup_free_ char *unmarked = grub_default_unmark(deftext, deflen, &n);
		print_assignments(GRUB_DEFAULT_PATH, unmarked, n, name);
	}
	if (!dropins)
		return;
	char **names = NULL;
	int n = root_list_dir(r, "/etc/default/grub.d", ".cfg", &names);
	for (int i = 0; i < n; i++) {
		if (streq(names[i], GRUB_DROPIN_NAME))
			continue;
		_cleanup_free_ char *p = path_join("/etc/default/grub.d", names[i]);
		_cleanup_free_ char *text = NULL;
		size_t len;
		if (root_read_file(r, p, MAX_INPUT_FILE, &text, &len) == 0)
			print_assignments(p, text, len, name);
	}
	names_free(names, n > 0 ? n : 0);
}

int grub_status(const struct root *r, const struct slot_list *l, const struct slot_change *ch)
{
	const struct slot *in = NULL;
	for (size_t i = 0; i < l->n; i++)
		if ((l->v[i].kind == SLOT_GRUB_DROPIN || l->v[i].kind == SLOT_GRUB_DEFAULT) && !l->v[i].unmanaged)
			in = &l->v[i];
	if (!in)
		return 0;
	struct vars v[3] = { { 0 } };
	_cleanup_free_ char *why_not = NULL;
	int e = grub_get_vars(r, l, ch, v, &why_not);
	printf("GRUB command line (GRUB_CMDLINE_LINUX, then GRUB_CMDLINE_LINUX_DEFAULT: one line at boot):\n");
	for (int k = 0; k < 2; k++) {
		const char *name = k ? "GRUB_CMDLINE_LINUX_DEFAULT" : "GRUB_CMDLINE_LINUX";
		printf("  %s\n", name);
		print_written(r, in->kind == SLOT_GRUB_DROPIN, name);
		if (e < 0)
			continue;
		printf("    as written:    \"%s\"\n", esc(k ? v[0].def : v[0].lin));
		printf("    menu gets:     \"%s\"%s\n", esc(k ? v[1].def : v[1].lin),
		       streq(k ? v[0].def : v[0].lin, k ? v[1].def : v[1].lin) ? "" : " (through the drop-in's data)");
		if (!streq(k ? v[1].def : v[1].lin, k ? v[2].def : v[2].lin))
			printf("    after apply:   \"%s\"\n", esc(k ? v[2].def : v[2].lin));
	}
	if (e < 0)
		printf("  (cannot know them: %s)\n", esc(why_not));
	else
		grub_vars_free(v);
	return 0;
}

/* ---- the line the menu's kernels get, judged before anything is written ---- */

/* The line a GRUB linux line hands the kernel: "BOOT_IMAGE=PATH " and its
 * arguments (GRUB's linux loader puts the image's path first). */
struct over_limit {
	const char *path;
	size_t limit; /* bytes the kernel keeps */
	const char *arch;
	bool warned;
};

static bool warn_long_line(void *data, const struct menu_line *m)
{
	struct over_limit *o = data;
	if (!m->is_linux || !m->image)
		return true;
	size_t n = strlen("BOOT_IMAGE= ") + strlen(m->image) + strlen(m->cmdline);
	if (n > o->limit) {
		diag_warn(
			"%s:%u: the kernel command line is %zu bytes (with GRUB's BOOT_IMAGE=), longer than the %zu a "
			"%s kernel keeps (COMMAND_LINE_SIZE %zu): its end is lost at boot",
			esc(o->path), m->line, n, o->limit, o->arch, o->limit + 1);
		o->warned = true;
		return false;
	}
	return true;
}

/* Does after have a cgroup_enable=memory that now lacks? */
static bool adds_enable(const char *now, const char *after)
{
	struct cmdline a, b;
	cmdline_split(now, strlen(now), &a);
	cmdline_split(after, strlen(after), &b);
	bool r = cmdline_has_item(&b, "cgroup_enable", "memory") && !cmdline_has_item(&a, "cgroup_enable", "memory");
	cmdline_free(&a);
	cmdline_free(&b);
	return r;
}

int grub_check_lines(const struct root *r, const struct slot_list *l, const struct slot_change *ch,
		     const struct kernel_decision *kd, size_t n)
{
	/* the menu's kernels that keep the fewest bytes */
	size_t limit = 0;
	const char *arch = NULL;
	for (size_t i = 0; i < n; i++) {
		size_t sz = cmdline_size_for_arch(kd[i].k->kc.arch);
		if (sz && (!limit || sz - 1 < limit)) {
			limit = sz - 1;
			arch = kd[i].k->kc.arch;
		}
	}
	const struct slot *tok = NULL;
	const struct slot_change *tok_ch = NULL;
	bool warned = false;
	for (size_t i = 0; i < l->n; i++) {
		const struct slot *s = &l->v[i];
		if (s->unmanaged)
			continue;
		if (s->kind == SLOT_GRUB_TOKENS) {
			tok = s;
			tok_ch = &ch[i];
		} else if (s->kind == SLOT_GRUB_CFG && s->content && limit && !warned) {
			struct over_limit o = { s->path, limit, arch, false };
			grub_menu_lines(s->content, s->len, warn_long_line, &o);
			warned = o.warned;
		}
	}
	if (!tok)
		return 0;
	const char *next = tok_ch->new_content ? tok_ch->new_content : tok->content;
	size_t next_len = tok_ch->new_content ? tok_ch->new_len : tok->len;
	struct grub_tokens t;
	unsigned bad;
	if (!next || grub_tokens_parse(next, next_len, &t, &bad) < 0)
		return 0;
	bool empty = !t.add.n && !t.remove.n;
	if (empty) {
		grub_tokens_free(&t);
		return 0;
	}
	/* by the tool's reader only: values that take running code to know
	 * are not judged here (apply --dry-run and status show them) */
	struct vars v[3] = { { 0 } };
	struct unknown u = { 0 };
	int e = grub_read_vars(r, l, ch, v, &u);
	grub_unknown_clear(&u);
	if (e < 0) {
		grub_tokens_free(&t);
		return 0;
	}
	const char *at = v[0].lin_at ? v[0].lin_at : v[0].def_at ? v[0].def_at : GRUB_DEFAULT_PATH;
	_cleanup_free_ char *written = xasprintf("%s %s", v[0].lin, v[0].def);
	_cleanup_free_ char *now = xasprintf("%s %s", v[1].lin, v[1].def);
	_cleanup_free_ char *after = xasprintf("%s %s", v[2].lin, v[2].def);
	_cleanup_free_ char *lo = NULL, *dout = NULL;
	_cleanup_free_ char *refused = cmdline_edit_refused(written, strlen(written), &t.remove);
	int filter = grub_filter(&t, v[0].lin, v[0].def, &lo, &dout);
	grub_tokens_free(&t);
	if (refused) {
		e = diag_error(
			EXIT_BADINPUT,
			"%s: cannot take memory out of the list in '%s' (GRUB_CMDLINE_LINUX and "
			"GRUB_CMDLINE_LINUX_DEFAULT) without changing how the kernel reads its other items; edit it "
			"by hand",
			esc(at), esc(refused));
		goto out;
	}
	if (filter < 0) {
		e = diag_error(
			EXIT_BADINPUT,
			"%s: GRUB_CMDLINE_LINUX ends inside a quote that GRUB_CMDLINE_LINUX_DEFAULT closes, across a "
			"memcg argument: the kernel reads them as one line and the drop-in cannot edit it safely; "
			"close the quote in GRUB_CMDLINE_LINUX",
			esc(at));
		goto out;
	}
	/* normal entries get "LINUX DEFAULT", recovery entries "single LINUX"
	 * (10_linux's default GRUB_CMDLINE_LINUX_RECOVERY): written (as the
	 * files say), now (through the data there is) and after (the data
	 * proposed), for each */
	const size_t single = strlen("single ");
	const struct {
		size_t written, now, after;
	} len[2] = {
		{ strlen(written), strlen(now), strlen(after) },
		{ single + strlen(v[0].lin), single + strlen(v[1].lin), single + strlen(v[2].lin) },
	};
	for (int k = 0; k < 2 && limit; k++)
		if (len[k].after > limit && len[k].after > len[k].now && len[k].after > len[k].written) {
			e = diag_error(
				EXIT_BADINPUT,
				"%s: GRUB_CMDLINE_LINUX and GRUB_CMDLINE_LINUX_DEFAULT would give %s entries a line of "
				"%zu bytes, over the %zu a %s kernel keeps (COMMAND_LINE_SIZE %zu): not changed",
				esc(at), k ? "recovery" : "normal", len[k].after, limit, arch, limit + 1);
			goto out;
		}
	if (limit && !warned && (len[0].written > limit || len[0].now > limit))
		diag_warn(
			"%s: GRUB_CMDLINE_LINUX and GRUB_CMDLINE_LINUX_DEFAULT are %zu bytes, longer than the %zu a %s "
			"kernel keeps (COMMAND_LINE_SIZE %zu): the end of the line is lost at boot",
			esc(at), len[0].written > len[0].now ? len[0].written : len[0].now, limit, arch, limit + 1);
	/* each kernel by its own rules, normal and recovery entries */
	for (size_t i = 0; i < n; i++) {
		if (kd[i].d.keep || kd[i].unknown)
			continue;
		const struct decide_kernel *dk = &kd[i].dk;
		_cleanup_free_ char *own = NULL;
		{
			struct strbuf sb = { 0 };
			sb_append(&sb, "");
			for (size_t j = 0; j < kd[i].d.add.n; j++)
				sb_appendf(&sb, "%s%s", j ? " " : "", kd[i].d.add.v[j]);
			own = sb_take(&sb);
		}
		if (cmdline_memcg_state(dk, own) != kd[i].d.state)
			continue; /* no line can; its decision says so */
		/* a cgroup_enable=memory this kernel does not take, added for
		 * another: a variable of init, of which it gets at most 30 */
		if (!dk->accepts_enable && adds_enable(now, after) &&
		    cmdline_init_env_names(after, strlen(after)) > CMDLINE_INIT_ENVS) {
			e = diag_error(
				EXIT_BADINPUT,
				"%s: GRUB_CMDLINE_LINUX and GRUB_CMDLINE_LINUX_DEFAULT with the cgroup_enable=memory "
				"another kernel of the menu needs would give %s, which has no such parameter, more "
				"variables of init than the %d it takes (a panic at boot): not changed",
				esc(at), kd[i].k->version, CMDLINE_INIT_ENVS);
			goto out;
		}
		const char *which = NULL;
		if (cmdline_memcg_state(dk, after) != kd[i].d.state)
			which = "normal";
		else if (cmdline_memcg_state(dk, v[2].lin) != kd[i].d.state)
			which = "recovery";
		if (which) {
			e = diag_error(
				EXIT_BADINPUT,
				"%s: GRUB_CMDLINE_LINUX and GRUB_CMDLINE_LINUX_DEFAULT, as the drop-in would leave "
				"them, give %s memcg %s in its %s entries, not %s (the kernel reads \"%s\"); edit them "
				"by hand",
				esc(at), kd[i].k->version,
				memcg_state_name(cmdline_memcg_state(dk, streq(which, "normal") ? after : v[2].lin)),
				which, memcg_state_name(kd[i].d.state), esc(streq(which, "normal") ? after : v[2].lin));
			goto out;
		}
	}
	e = 0;
out:
	grub_vars_free(v);
	return e;
}
