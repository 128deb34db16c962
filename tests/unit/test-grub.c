/* test-grub.c - the GRUB slots: reading GRUB script words, kernel
 * releases of menu paths, grubenv values, the marked line of
 * /etc/default/grub, the drop-in, menu verification with its reasons,
 * detection on small fake roots, and what runs after a commit. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "slots/grub/grub.h"
#include "slots/table.h"
#include "facts/policy.h"
#include "io/rootfs.h"
#include "io/spawn.h"
#include "test.h"

/* /etc/default/grub's marked line naming this build's $(DATADIR), kept
 * for the whole run (reachable: no leak) */
static const char *marked_line(void)
{
	static char *m;
	if (!m)
		m = grub_marked_line(NULL);
	return m;
}

/* ---- helpers ---- */

static void words_of(const char *line, struct strv *w)
{
	*w = (struct strv){ 0 };
	grub_split_words(line, strlen(line), w);
}

static struct decision mkdecision(const char *add, const char *rm)
{
	struct decision d = { 0 };
	if (add)
		strv_pushdup(&d.add, add);
	if (rm)
		strv_pushdup(&d.remove, rm);
	return d;
}

/* decisions by release for grub_cfg_state */
struct lookup_table {
	const char *release[4];
	const struct decision *d[4];
	const struct decision *def;
};

static const struct decision *lookup(void *data, const char *release, const struct kernel_decision **own)
{
	struct lookup_table *t = data;
	*own = NULL;
	for (size_t i = 0; i < 4 && t->release[i]; i++)
		if (release && streq(t->release[i], release))
			return t->d[i];
	return t->def;
}

/* A menu slot with the facts found with it, written as "KEY\tTEXT" lines:
 * R how to regenerate, O what overrides the drop-in, M what is missing,
 * D GRUB_CMDLINE_LINUX_DEFAULT, S an input newer than the menu. */
static struct slot menu_slot(const char *text, const char *hints)
{
	struct slot s = { .kind = SLOT_GRUB_CFG, .exists = true };
	s.path = xstrdup("/boot/grub/grub.cfg");
	s.content = xstrdup(text);
	s.len = strlen(text);
	if (hints) {
		s.menu = xcalloc(1, sizeof(*s.menu));
		for (const char *p = hints; *p;) {
			const char *e = strchr(p, '\n');
			size_t n = e ? (size_t)(e - p) : strlen(p);
			char **f = p[0] == 'R' ? &s.menu->regen : p[0] == 'O' ? &s.menu->overrides :
				   p[0] == 'M' ? &s.menu->missing : p[0] == 'D' ? &s.menu->default_value :
				   &s.menu->stale;
			if (!*f)
				*f = xstrndup(p + 2, n - 2);
			p = e ? e + 1 : p + n;
		}
		s.menu->regeneration_helps = !s.menu->overrides && !s.menu->missing;
	}
	return s;
}

/* The menu's state, with its reason kept in the slot's note for the
 * checks below. */
static enum slot_state cfg_state(struct slot *s, decision_lookup_fn fn, void *data)
{
	char *why = NULL;
	enum slot_state st = grub_cfg_state(s, fn, data, &why);
	free(s->note);
	s->note = why;
	return st;
}

static void slot_clear(struct slot *s)
{
	free(s->path);
	free(s->content);
	free(s->note);
	free(s->kernel);
	menu_facts_free(s->menu);
	memset(s, 0, sizeof(*s));
}

static char tmpl[] = "/tmp/test-grub.XXXXXX";

static void put(const char *root, const char *path, const char *text, mode_t mode)
{
	char *p = xasprintf("%s%s", root, path);
	char *dir = xstrdup(p);
	for (char *s = dir + 1; *s; s++)
		if (*s == '/') {
			*s = '\0';
			mkdir(dir, 0755);
			*s = '/';
		}
	free(dir);
	FILE *f = fopen(p, "w");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
	chmod(p, mode);
	free(p);
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	struct strbuf sb = { 0 };
	char buf[4096];
	size_t n;
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		sb_appendn(&sb, buf, n);
	fclose(f);
	*len = sb.len;
	return sb_take(&sb);
}

static const struct slot *find_kind(const struct slot_list *l, enum slot_kind k)
{
	for (size_t i = 0; i < l->n; i++)
		if (l->v[i].kind == k)
			return &l->v[i];
	return NULL;
}

/* ---- GRUB script words ---- */

TEST(words_plain_and_quotes)
{
	struct strv w;
	words_of("\tlinux\t/boot/vmlinuz-6.1.0-13-amd64 root=UUID=ab-cd ro  quiet", &w);
	CHECK_INT(w.n, 5);
	CHECK_STR(w.v[0], "linux");
	CHECK_STR(w.v[1], "/boot/vmlinuz-6.1.0-13-amd64");
	CHECK_STR(w.v[4], "quiet");
	strv_free(&w);

	words_of("linux /vmlinuz foo=\"a b\" 'x y' it\\'s \"q\\\"t\" $vt_handoff e=''", &w);
	CHECK_INT(w.n, 8);
	CHECK_STR(w.v[2], "foo=a b");
	CHECK_STR(w.v[3], "x y");
	CHECK_STR(w.v[4], "it's");
	CHECK_STR(w.v[5], "q\"t");
	CHECK_STR(w.v[6], "$vt_handoff");
	CHECK_STR(w.v[7], "e=");
	strv_free(&w);

	/* empty quoted word, comment, command separator */
	words_of("set a='' # comment words", &w);
	CHECK_INT(w.n, 2);
	CHECK_STR(w.v[1], "a=");
	strv_free(&w);
	words_of("linux /k a; echo b", &w);
	CHECK_INT(w.n, 3);
	CHECK_STR(w.v[2], "a");
	strv_free(&w);
	/* single quotes keep backslashes and $ */
	words_of("x 'a\\b$c'", &w);
	CHECK_STR(w.v[1], "a\\b$c");
	strv_free(&w);
}

TEST(release_from_path)
{
	char *r = grub_release_from_path("/boot/vmlinuz-6.1.0-13-amd64");
	CHECK_STR(r, "6.1.0-13-amd64");
	free(r);
	r = grub_release_from_path("/vmlinuz-5.14.0-362.el9.x86_64");
	CHECK_STR(r, "5.14.0-362.el9.x86_64");
	free(r);
	r = grub_release_from_path("($root)/boot/vmlinuz-6.1.0-13-amd64.efi.signed");
	CHECK_STR(r, "6.1.0-13-amd64");
	free(r);
	r = grub_release_from_path("/boot/vmlinuz-linux"); /* Arch: as 10_linux says */
	CHECK_STR(r, "linux");
	free(r);
	/* 10_linux's sed stops at the first digit: genkernel names keep the arch */
	r = grub_release_from_path("/boot/kernel-genkernel-x86_64-6.6.13-gentoo");
	CHECK_STR(r, "x86_64-6.6.13-gentoo");
	free(r);
}

/* ---- grubenv ---- */

TEST(grubenv_values)
{
	static const char env[] = "# GRUB Environment Block\n"
				  "saved_entry=0\n"
				  "kernelopts=root=/dev/mapper/rhel-root ro crashkernel=auto rhgb quiet\n"
				  "odd=a\\\\b\\\nc\n"
				  "######################";
	char *v = grubenv_get(env, strlen(env), "kernelopts");
	CHECK_STR(v, "root=/dev/mapper/rhel-root ro crashkernel=auto rhgb quiet");
	free(v);
	v = grubenv_get(env, strlen(env), "odd");
	CHECK_STR(v, "a\\b\nc");
	free(v);
	CHECK(grubenv_get(env, strlen(env), "kernel") == NULL);
	CHECK(grubenv_get(env, strlen(env), "missing") == NULL);
	v = grubenv_get(env, strlen(env), "saved_entry");
	CHECK_STR(v, "0");
	free(v);
}

/* ---- editing ---- */

TEST(marked_line_added_at_end)
{
	struct decision d = mkdecision("cgroup_disable=memory", "cgroup_enable=memory");
	static const char orig[] = "GRUB_DEFAULT=0\nGRUB_CMDLINE_LINUX=\"rhgb quiet cgroup_enable=memory\"\n";
	struct slot s = { .kind = SLOT_GRUB_DEFAULT, .exists = true };
	s.content = xstrdup(orig);
	s.len = strlen(orig);
	struct strv added = { 0 }, removed = { 0 };
	size_t n;
	char *out = slot_edit(&s, &d, &added, &removed, &n);
	CHECK_INT(n, strlen(out));
	CHECK(strncmp(out, orig, strlen(orig)) == 0); /* every byte of the admin's kept */
	char *want = xasprintf("%s%s\n", orig, marked_line());
	CHECK_STR(out, want);
	free(want);
	{
		char *m = grub_marked_line("/usr/share/memcg-policy/99-memcg-policy.cfg");
		CHECK(strstr(m, "# added by memcg-policy") != NULL);
		CHECK(strstr(m, "if [ -r /usr/share/memcg-policy/99-memcg-policy.cfg ]; then . "
				"/usr/share/memcg-policy/99-memcg-policy.cfg; fi") == m);
		free(m);
	}
	CHECK(strstr(marked_line(), "if [ -r /") == marked_line());
	/* no tokens: a shell file is never edited token by token */
	CHECK_INT(added.n, 0);
	CHECK_INT(removed.n, 0);

	/* again: unchanged */
	free(s.content);
	s.content = out;
	s.len = n;
	char *again = slot_edit(&s, &d, &added, &removed, &n);
	CHECK_STR(again, out);
	free(again);

	/* unmarking gives the original back */
	char *un = grub_default_unmark(out, strlen(out), &n);
	CHECK_STR(un, orig);
	CHECK_INT(n, strlen(orig));
	free(un);

	/* keep: nothing added */
	struct decision keep = { .keep = true };
	free(s.content);
	s.content = xstrdup(orig);
	s.len = strlen(orig);
	char *k = slot_edit(&s, &keep, &added, &removed, &n);
	CHECK_STR(k, orig);
	free(k);
	free(s.content);
	decision_free(&d);
}

TEST(marked_line_moves_to_end_and_no_final_newline)
{
	struct decision d = mkdecision("cgroup_disable=memory", NULL);
	/* the admin appended a line after ours, and no final newline */
	char *text = xasprintf("A=1\n%s\nGRUB_CMDLINE_LINUX=\"x\"", marked_line());
	struct slot s = { .kind = SLOT_GRUB_DEFAULT, .exists = true, .content = text, .len = strlen(text) };
	size_t n;
	char *out = slot_edit(&s, &d, NULL, NULL, &n);
	char *want = xasprintf("A=1\nGRUB_CMDLINE_LINUX=\"x\"\n%s\n", marked_line());
	CHECK_STR(out, want);
	free(want);
	free(out);
	free(text);

	/* a missing file gets just the line; CRLF marked lines are found too */
	struct slot m = { .kind = SLOT_GRUB_DEFAULT, .create = true };
	out = slot_edit(&m, &d, NULL, NULL, &n);
	want = xasprintf("%s\n", marked_line());
	CHECK_STR(out, want);
	free(want);
	free(out);
	CHECK(grub_slot_creates(&m, &d));
	struct decision keep = { .keep = true };
	CHECK(!grub_slot_creates(&m, &keep));

	text = xasprintf("B=2\r\n%s\r\n", marked_line());
	char *un = grub_default_unmark(text, strlen(text), &n);
	CHECK_STR(un, "B=2\r\n");
	free(un);
	free(text);
	decision_free(&d);
}

TEST(dropin_installed_as_built_in)
{
	struct decision d = mkdecision("cgroup_disable=memory", "cgroup_enable=memory");
	struct slot s = { .kind = SLOT_GRUB_DROPIN, .create = true };
	size_t n;
	char *out = slot_edit(&s, &d, NULL, NULL, &n);
	const char *top = getenv("TOP");
	char *path = xasprintf("%s/grub.d/99-memcg-policy.cfg", top ? top : ".");
	size_t flen = 0;
	char *file = slurp(path, &flen);
	CHECK(file != NULL);
	CHECK_INT(n, flen);
	CHECK(file && memcmp(out, file, flen) == 0);
	free(file);
	free(path);
	free(out);
	CHECK(grub_slot_creates(&s, &d));

	/* keep: a missing drop-in stays missing (empty new content) */
	struct decision keep = { .keep = true };
	out = slot_edit(&s, &keep, NULL, NULL, &n);
	CHECK_INT(n, 0);
	free(out);

	/* an existing one, whatever it holds, is left alone */
	struct slot e = { .kind = SLOT_GRUB_DROPIN, .exists = true, .content = xstrdup("# admin's\n"), .len = 10 };
	out = slot_edit(&e, &d, NULL, NULL, &n);
	CHECK_STR(out, "# admin's\n");
	CHECK(!grub_slot_creates(&e, &d));
	free(out);
	free(e.content);
	/* unmanaged: nothing */
	e.unmanaged = true;
	CHECK(slot_edit(&e, &d, NULL, NULL, &n) == NULL);
	decision_free(&d);
}

TEST(grubenv_value_edited)
{
	struct decision d = mkdecision("cgroup_disable=memory", "cgroup_enable=memory");
	static const char v[] = "root=/dev/mapper/rhel-root ro cgroup_enable=memory rhgb quiet";
	struct slot s = { .kind = SLOT_GRUBENV, .exists = true, .content = xstrdup(v), .len = strlen(v) };
	struct strv added = { 0 }, removed = { 0 };
	size_t n;
	char *out = slot_edit(&s, &d, &added, &removed, &n);
	CHECK_STR(out, "root=/dev/mapper/rhel-root ro rhgb quiet cgroup_disable=memory");
	CHECK_INT(added.n, 1);
	CHECK_STR(added.v[0], "cgroup_disable=memory");
	CHECK_INT(removed.n, 1);
	CHECK_STR(removed.v[0], "cgroup_enable=memory");
	char *line = slot_cmdline(&s);
	CHECK_STR(line, v);
	free(line);
	free(out);
	strv_free(&added);
	strv_free(&removed);
	free(s.content);
	decision_free(&d);
}

/* ---- menu verification ---- */

static const char MENU_OK[] =
	"### BEGIN /etc/grub.d/00_header ###\n"
	"set default=\"0\"\n"
	"### END /etc/grub.d/00_header ###\n"
	"\n"
	"### BEGIN /etc/grub.d/10_linux ###\n"
	"menuentry 'Debian GNU/Linux' --class debian $menuentry_id_option 'gnulinux-simple-x' {\n"
	"\tlinux\t/boot/vmlinuz-6.1.0-15-amd64 root=UUID=x ro console=ttyS0 cgroup_disable=memory quiet\n"
	"}\n"
	"submenu 'Advanced options for Debian GNU/Linux' $menuentry_id_option 'gnulinux-advanced-x' {\n"
	"\tmenuentry 'Debian GNU/Linux, with Linux 6.1.0-15-amd64' --class debian {\n"
	"\t\tlinux\t/boot/vmlinuz-6.1.0-15-amd64 root=UUID=x ro console=ttyS0 cgroup_disable=memory quiet\n"
	"\t}\n"
	"\tmenuentry 'Debian GNU/Linux, with Linux 6.1.0-15-amd64 (recovery mode)' --class debian {\n"
	"\t\tlinux\t/boot/vmlinuz-6.1.0-15-amd64 root=UUID=x ro single console=ttyS0 cgroup_disable=memory\n"
	"\t}\n"
	"\tmenuentry 'Debian GNU/Linux, with Linux 6.1.0-13-amd64' --class debian {\n"
	"\t\tlinux\t/boot/vmlinuz-6.1.0-13-amd64 root=UUID=x ro console=ttyS0 cgroup_disable=memory quiet\n"
	"\t}\n"
	"\tmenuentry 'Debian GNU/Linux, with Linux 6.1.0-13-amd64 (recovery mode)' --class debian {\n"
	"\t\tlinux\t/boot/vmlinuz-6.1.0-13-amd64 root=UUID=x ro single console=ttyS0 cgroup_disable=memory\n"
	"\t}\n"
	"}\n"
	"### END /etc/grub.d/10_linux ###\n"
	"### BEGIN /etc/grub.d/30_os-prober ###\n"
	"menuentry 'Other Linux' {\n"
	"\tlinux /vmlinuz-5.10.0-9-amd64 root=/dev/sdb1 cgroup_enable=memory\n"
	"}\n"
	"### END /etc/grub.d/30_os-prober ###\n"
	"### BEGIN /etc/grub.d/40_custom ###\n"
	"menuentry 'mine' {\n\tlinux /boot/vmlinuz-6.1.0-15-amd64 root=/dev/sda1\n}\n"
	"### END /etc/grub.d/40_custom ###\n";

TEST(menu_in_sync_ignores_other_sections)
{
	struct decision off = mkdecision("cgroup_disable=memory", "cgroup_enable=memory");
	struct lookup_table t = { .def = &off };
	struct slot s = menu_slot(MENU_OK, "R\tupdate-grub\n");
	CHECK_INT(cfg_state(&s, lookup, &t), SLOT_IN_SYNC);
	CHECK(s.note == NULL); /* hints replaced */
	/* the first linux line of the linux sections is what boots */
	char *line = slot_cmdline(&s);
	CHECK_STR(line, "root=UUID=x ro console=ttyS0 cgroup_disable=memory quiet");
	free(line);
	slot_clear(&s);

	/* a keep decision never drifts */
	struct decision keep = { .keep = true };
	t.def = &keep;
	s = menu_slot("linux /boot/vmlinuz-1 cgroup_enable=memory\n", NULL);
	CHECK_INT(cfg_state(&s, lookup, &t), SLOT_IN_SYNC);
	slot_clear(&s);
	decision_free(&off);
}

/* ---- one line for the menu's kernels (grub_menu_decision) ---- */

static const struct decide_kernel K_MAINLINE = { .release = "6.1.0-9-amd64", .memcg_built = true, .default_state = MEMCG_DEFAULT_ON,
						 .rule = RULE_DISABLE_WINS, .accepts_enable = false, .builtin_mode = BUILTIN_NONE };
static const struct decide_kernel K_MAINLINE2 = { .release = "6.1.0-13-amd64", .memcg_built = true, .default_state = MEMCG_DEFAULT_ON,
						 .rule = RULE_DISABLE_WINS, .accepts_enable = false, .builtin_mode = BUILTIN_NONE };
static const struct decide_kernel K_DEBIAN8 = { .release = "3.16.0-4-amd64", .memcg_built = true, .default_state = MEMCG_DEFAULT_OFF,
						 .rule = RULE_LAST_WINS, .accepts_enable = true, .builtin_mode = BUILTIN_NONE };
static const struct decide_kernel K_RPI66 = { .release = "6.6.51+rpt-rpi-2712", .memcg_built = true, .default_state = MEMCG_DEFAULT_OFF,
						 .rule = RULE_ENABLE_WINS, .accepts_enable = true, .builtin_mode = BUILTIN_NONE };

/* The decision decide() takes for a kernel of these rules in mode on/off. */
static struct decision decided(const struct decide_kernel *k, enum memcg_state want)
{
	struct decision d = { .state = want };
	bool on_default = k->default_state == MEMCG_DEFAULT_ON;
	if (want == STATE_ON) {
		strv_pushdup(&d.remove, "cgroup_disable=memory");
		if (!on_default)
			strv_pushdup(&d.add, "cgroup_enable=memory");
	} else {
		strv_pushdup(&d.remove, "cgroup_enable=memory");
		if (on_default || k->rule == RULE_ENABLE_WINS)
			strv_pushdup(&d.add, "cgroup_disable=memory");
	}
	return d;
}

static char *joined_strv(const struct strv *v)
{
	struct strbuf sb = {0};
	sb_append(&sb, "");
	for (size_t i = 0; i < v->n; i++)
		sb_appendf(&sb, "%s%s", i ? " " : "", v->v[i]);
	return sb_take(&sb);
}

TEST(menu_decision_one_line_for_kernels_of_other_rules)
{
	static const struct {
		const struct decide_kernel *a, *b;
		enum memcg_state sa, sb;
		const char *add;    /* the tokens recorded, in order; NULL: an error */
	} cases[] = {
		/* alike: the union, cgroup_enable=memory for the old kernel
		 * (a variable of init nobody reads on mainline) */
		{ &K_MAINLINE, &K_DEBIAN8, STATE_ON, STATE_ON, "cgroup_enable=memory" },
		{ &K_MAINLINE, &K_DEBIAN8, STATE_OFF, STATE_OFF, "cgroup_disable=memory" },
		{ &K_MAINLINE, &K_RPI66, STATE_ON, STATE_ON, "cgroup_enable=memory" },
		/* apart: disable wins on mainline, the last one on 3.16 */
		{ &K_MAINLINE, &K_DEBIAN8, STATE_OFF, STATE_ON, "cgroup_disable=memory cgroup_enable=memory" },
		{ &K_MAINLINE, &K_DEBIAN8, STATE_ON, STATE_OFF, "" },
		{ &K_MAINLINE, &K_RPI66, STATE_OFF, STATE_ON, "cgroup_disable=memory cgroup_enable=memory" },
		{ &K_DEBIAN8, &K_RPI66, STATE_OFF, STATE_ON, "cgroup_enable=memory cgroup_disable=memory" },
		/* one rule, two states: no one line */
		{ &K_MAINLINE, &K_MAINLINE2, STATE_ON, STATE_OFF, NULL },
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct decision da = decided(cases[i].a, cases[i].sa), db = decided(cases[i].b, cases[i].sb);
		const struct grub_kernel k[2] = { { cases[i].a->release, cases[i].a, &da },
						  { cases[i].b->release, cases[i].b, &db } };
		struct decision out;
		char *err = grub_menu_decision(k, 2, 0, &out);
		if (!cases[i].add) {
			CHECK(err && strstr(err, cases[i].a->release) && strstr(err, cases[i].b->release));
			CHECK(out.keep);
		} else {
			CHECK(err == NULL);
			char *got = joined_strv(&out.add);
			CHECK_STR(got, cases[i].add);
			/* by each kernel's own rules, the recorded switches give it its state */
			CHECK_INT(cmdline_memcg_state(cases[i].a, got), cases[i].sa);
			CHECK_INT(cmdline_memcg_state(cases[i].b, got), cases[i].sb);
			free(got);
			CHECK(out.warnings.n == 0);
		}
		free(err);
		decision_free(&out);
		decision_free(&da);
		decision_free(&db);
	}
}

/* The filter with a solved decision: both switches out wherever they are,
 * back at the end of GRUB_CMDLINE_LINUX in their order, out of _DEFAULT. */
TEST(filter_puts_switches_in_order)
{
	struct grub_tokens t = {0};
	strv_pushdup(&t.add, "cgroup_disable=memory");
	strv_pushdup(&t.add, "cgroup_enable=memory");
	strv_pushdup(&t.remove, "cgroup_disable=memory");
	strv_pushdup(&t.remove, "cgroup_enable=memory");
	char *lo, *dout;
	CHECK_INT(grub_filter(&t, "cgroup_enable=memory root=/dev/sda1", "quiet cgroup_disable=memory", &lo, &dout), 0);
	CHECK_STR(lo, "root=/dev/sda1 cgroup_disable=memory cgroup_enable=memory");
	CHECK_STR(dout, "quiet");
	/* again: nothing more */
	char *lo2, *dout2;
	CHECK_INT(grub_filter(&t, lo, dout, &lo2, &dout2), 0);
	CHECK_STR(lo2, lo);
	CHECK_STR(dout2, dout);
	free(lo);
	free(dout);
	free(lo2);
	free(dout2);
	/* an open quote in LINUX that DEFAULT closes, across no memcg
	 * argument: the edit goes on (it used to be refused by name) */
	grub_tokens_free(&t);
	strv_pushdup(&t.remove, "cgroup_disable=memory");
	CHECK_INT(grub_filter(&t, "cgroup_enable=\"cpu", "cpuset\" cgroup_disable=memory quiet", &lo, &dout), 0);
	CHECK_STR(lo, "cgroup_enable=\"cpu");
	CHECK_STR(dout, "cpuset\" quiet");
	free(lo);
	free(dout);
	/* "cpu memory" is one item, not memory: nothing to take out */
	CHECK_INT(grub_filter(&t, "cgroup_disable=\"cpu", "memory\" quiet", &lo, &dout), 0);
	CHECK_STR(dout, "memory\" quiet");
	free(lo);
	free(dout);
	/* across a memory item to take out: refused */
	CHECK_INT(grub_filter(&t, "cgroup_disable=\"memory,x", "y\" quiet", &lo, &dout), -EXIT_BADINPUT);
	grub_tokens_free(&t);
}

/* Each menu line judged by its own kernel's rules too: the switches in
 * the wrong order are drift for the kernel they fail. */
struct own_table {
	const struct decision *grub;
	const struct kernel_decision *kd[2];
};

static const struct decision *lookup_own(void *data, const char *release, const struct kernel_decision **own)
{
	struct own_table *t = data;
	*own = NULL;
	for (size_t i = 0; i < 2; i++)
		if (release && streq(t->kd[i]->dk.release, release))
			*own = t->kd[i];
	return t->grub;
}

TEST(menu_lines_judged_by_their_kernels_rules)
{
	struct kernel_decision m = { .dk = K_MAINLINE, .d = decided(&K_MAINLINE, STATE_OFF) };
	struct kernel_decision o = { .dk = K_DEBIAN8, .d = decided(&K_DEBIAN8, STATE_ON) };
	const struct grub_kernel k[2] = { { K_MAINLINE.release, &m.dk, &m.d }, { K_DEBIAN8.release, &o.dk, &o.d } };
	struct decision g;
	char *err = grub_menu_decision(k, 2, 0, &g);
	CHECK(err == NULL);
	struct own_table t = { &g, { &m, &o } };
	struct slot s = menu_slot("menuentry 'a' {\n\tlinux /boot/vmlinuz-6.1.0-9-amd64 ro cgroup_disable=memory "
				  "cgroup_enable=memory\n}\nmenuentry 'b' {\n\tlinux /boot/vmlinuz-3.16.0-4-amd64 ro "
				  "cgroup_disable=memory cgroup_enable=memory\n}\n",
				  "R\tupdate-grub\n");
	CHECK_INT(cfg_state(&s, lookup_own, &t), SLOT_IN_SYNC);
	slot_clear(&s);
	s = menu_slot("menuentry 'a' {\n\tlinux /boot/vmlinuz-6.1.0-9-amd64 ro cgroup_enable=memory "
		      "cgroup_disable=memory\n}\nmenuentry 'b' {\n\tlinux /boot/vmlinuz-3.16.0-4-amd64 ro "
		      "cgroup_enable=memory cgroup_disable=memory\n}\n",
		      "R\tupdate-grub\n");
	CHECK_INT(cfg_state(&s, lookup_own, &t), SLOT_DRIFT);
	CHECK(s.note && strstr(s.note, "line 5 (3.16.0-4-amd64) gives it memcg off, not on"));
	CHECK(s.note && strstr(s.note, "1 of 2 kernel command lines"));
	slot_clear(&s);
	decision_free(&g);
	decision_free(&m.d);
	decision_free(&o.d);
}

TEST(menu_drift_stale)
{
	struct decision off = mkdecision("cgroup_disable=memory", "cgroup_enable=memory");
	struct decision on = mkdecision(NULL, "cgroup_disable=memory");
	struct lookup_table t = { .release = { "6.1.0-13-amd64" }, .d = { &on }, .def = &off };
	/* 6.1.0-13 must not have cgroup_disable=memory: all its lines drift */
	struct slot s = menu_slot(MENU_OK, "R\tupdate-grub\nS\t/etc/default/grub.d/99-memcg-policy.cfg is newer than the menu\n");
	CHECK_INT(cfg_state(&s, lookup, &t), SLOT_DRIFT);
	CHECK(s.note && strstr(s.note, "line 17 (6.1.0-13-amd64) has cgroup_disable=memory"));
	CHECK(s.note && strstr(s.note, "2 of 5 kernel command lines"));
	CHECK(s.note && strstr(s.note, "stale menu: regenerate with update-grub"));
	CHECK(s.note && strstr(s.note, "is newer than the menu"));
	slot_clear(&s);

	/* a missing token, with a grub-mkconfig hint */
	struct lookup_table t2 = { .def = &off };
	s = menu_slot("menuentry 'x' {\n\tlinux16 /vmlinuz-5.14.0 root=/dev/sda1 quiet\n}\n",
		      "R\tgrub2-mkconfig -o /boot/grub2/grub.cfg\n");
	CHECK_INT(cfg_state(&s, lookup, &t2), SLOT_DRIFT);
	CHECK(s.note && strstr(s.note, "line 2 (5.14.0) lacks cgroup_disable=memory"));
	CHECK(s.note && strstr(s.note, "regenerate with grub2-mkconfig -o /boot/grub2/grub.cfg"));
	slot_clear(&s);
	decision_free(&off);
	decision_free(&on);
}

TEST(menu_drift_reasons)
{
	struct decision off = mkdecision("cgroup_disable=memory", "cgroup_enable=memory");
	struct lookup_table t = { .def = &off };
	static const char menu[] =
		"### BEGIN /etc/grub.d/10_linux ###\n"
		"menuentry 'Debian GNU/Linux, with Linux 6.1.0-15-amd64' {\n"
		"\tlinux /boot/vmlinuz-6.1.0-15-amd64 ro cgroup_disable=memory quiet cgroup_enable=memory\n"
		"}\n"
		"menuentry 'Debian GNU/Linux, with Linux 6.1.0-15-amd64 (recovery mode)' {\n"
		"\tlinux /boot/vmlinuz-6.1.0-15-amd64 ro single cgroup_disable=memory\n"
		"}\n"
		"### END /etc/grub.d/10_linux ###\n";
	/* a later drop-in overrides ours: that is the reason given */
	struct slot s = menu_slot(menu, "R\tupdate-grub\nO\ta later drop-in overrides ours: /etc/default/grub.d/99-zzz.cfg:1 sets GRUB_CMDLINE_LINUX after 99-memcg-policy.cfg\nD\tquiet cgroup_enable=memory\n");
	CHECK_INT(cfg_state(&s, lookup, &t), SLOT_DRIFT);
	CHECK(s.note && strstr(s.note, "a later drop-in overrides ours: /etc/default/grub.d/99-zzz.cfg:1"));
	CHECK(s.note && !strstr(s.note, "stale"));
	slot_clear(&s);

	/* only normal entries have it, and GRUB_CMDLINE_LINUX_DEFAULT does */
	s = menu_slot(menu, "R\tupdate-grub\nD\tquiet cgroup_enable=memory\n");
	CHECK_INT(cfg_state(&s, lookup, &t), SLOT_DRIFT);
	CHECK(s.note && strstr(s.note, "GRUB_CMDLINE_LINUX_DEFAULT contradicts the decision (cgroup_enable=memory)"));
	CHECK(s.note && strstr(s.note, "stale menu: regenerate with update-grub"));
	slot_clear(&s);

	/* the drop-in is not in place */
	s = menu_slot(menu, "R\tupdate-grub\nM\tthe drop-in /etc/default/grub.d/99-memcg-policy.cfg is not installed: run memcg-policy apply\n");
	CHECK_INT(cfg_state(&s, lookup, &t), SLOT_DRIFT);
	CHECK(s.note && strstr(s.note, "is not installed"));
	slot_clear(&s);

	/* RHEL 8: the fallback kernelopts of the menu counts */
	s = menu_slot("### BEGIN /etc/grub.d/10_linux ###\nif [ -z \"${kernelopts}\" ]; then\n"
		      "  set kernelopts=\"root=/dev/mapper/rhel-root ro rhgb quiet \"\nfi\ninsmod blscfg\nblscfg\n"
		      "### END /etc/grub.d/10_linux ###\n",
		      "R\tgrub2-mkconfig -o /boot/grub2/grub.cfg\n");
	CHECK_INT(cfg_state(&s, lookup, &t), SLOT_DRIFT);
	CHECK(s.note && strstr(s.note, "line 3 lacks cgroup_disable=memory"));
	slot_clear(&s);

	/* quoted value: a token inside quotes is a value, not ours */
	s = menu_slot("linux /boot/vmlinuz-6.1 ro 'foo=x cgroup_enable=memory' cgroup_disable=memory\n", NULL);
	CHECK_INT(cfg_state(&s, lookup, &t), SLOT_IN_SYNC);
	slot_clear(&s);
	/* but an unquoted dash spelling counts */
	s = menu_slot("linux /boot/vmlinuz-6.1 ro cgroup-enable=memory cgroup_disable=memory\n", NULL);
	CHECK_INT(cfg_state(&s, lookup, &t), SLOT_DRIFT);
	slot_clear(&s);
	decision_free(&off);
}

/* ---- detection on fake roots ---- */

static const char MKCONFIG_DEBIAN[] = "#! /bin/sh\nset -e\nif test -f ${sysconfdir}/default/grub ; then\n"
				      "  . ${sysconfdir}/default/grub\nfi\nfor x in ${sysconfdir}/default/grub.d/*.cfg ; do\n"
				      "  if [ -e \"${x}\" ]; then\n    . \"${x}\"\n  fi\ndone\n";
static const char MKCONFIG_UPSTREAM[] = "#! /bin/sh\nset -e\nif test -f ${sysconfdir}/default/grub ; then\n"
					"  . ${sysconfdir}/default/grub\nfi\n";

struct fake_root {
	char *dir;
	struct root r;
	struct policy p;
};

static void fake_open(struct fake_root *f)
{
	char t[sizeof(tmpl)];
	memcpy(t, tmpl, sizeof(tmpl));
	f->dir = xstrdup(mkdtemp(t));
	policy_init(&f->p);
}

static int fake_find(struct fake_root *f, struct slot_list *l)
{
	memset(l, 0, sizeof(*l));
	if (root_open(&f->r, f->dir) < 0)
		return -1;
	int e = grub_slots_find(&f->r, &f->p, l);
	return e;
}

static void fake_close(struct fake_root *f)
{
	root_close(&f->r);
	policy_free(&f->p);
	char *cmd = xasprintf("rm -rf '%s'", f->dir);
	CHECK(system(cmd) == 0);
	free(cmd);
	free(f->dir);
}

TEST(detect_debian_dropin)
{
	struct fake_root f;
	fake_open(&f);
	put(f.dir, "/usr/sbin/grub-mkconfig", MKCONFIG_DEBIAN, 0755);
	put(f.dir, "/usr/sbin/update-grub", "#!/bin/sh\nexec grub-mkconfig -o /boot/grub/grub.cfg \"$@\"\n", 0755);
	put(f.dir, "/etc/default/grub", "GRUB_CMDLINE_LINUX_DEFAULT=\"quiet\"\n", 0644);
	put(f.dir, "/etc/default/grub.d/50-cloud.cfg", "GRUB_CMDLINE_LINUX_DEFAULT=\"console=ttyS0 cgroup_enable=memory\"\n", 0644);
	put(f.dir, "/etc/default/grub.d/99-zzz.cfg", "# later\nexport GRUB_CMDLINE_LINUX=\"$GRUB_CMDLINE_LINUX x\"\n", 0644);
	put(f.dir, "/boot/grub/grub.cfg", "linux /boot/vmlinuz-1 ro\n", 0644);
	struct slot_list l;
	CHECK_INT(fake_find(&f, &l), 0);
	CHECK_INT(l.n, 3); /* drop-in, its data, the menu */
	const struct slot *d = find_kind(&l, SLOT_GRUB_DROPIN);
	CHECK(d && streq(d->path, GRUB_DROPIN_PATH) && !d->exists && d->create && !d->unmanaged);
	const struct slot *t = find_kind(&l, SLOT_GRUB_TOKENS);
	CHECK(t && streq(t->path, GRUB_TOKENS_PATH) && !t->exists && t->create && !t->unmanaged);
	CHECK(!find_kind(&l, SLOT_GRUB_DEFAULT));
	const struct slot *m = find_kind(&l, SLOT_GRUB_CFG);
	CHECK(m && streq(m->path, "/boot/grub/grub.cfg") && m->exists);
	/* facts for the verdict */
	CHECK(m && m->menu && streq_ptr(m->menu->regen, "update-grub"));
	CHECK(m && m->menu && m->menu->overrides &&
	      strstr(m->menu->overrides, "/etc/default/grub.d/99-zzz.cfg:2 sets GRUB_CMDLINE_LINUX after"));
	CHECK(m && m->menu && m->menu->missing && startswith(m->menu->missing, "the drop-in"));
	CHECK(m && m->menu && streq_ptr(m->menu->default_value, "console=ttyS0 cgroup_enable=memory"));
	CHECK(m && m->menu && !m->menu->regeneration_helps);
	slots_free(&l);

	/* the drop-in in place, nothing after it: no override, no M */
	put(f.dir, "/etc/default/grub.d/99-memcg-policy.cfg", "# ours\n", 0644);
	char *zzz = xasprintf("%s/etc/default/grub.d/99-zzz.cfg", f.dir);
	CHECK(unlink(zzz) == 0);
	free(zzz);
	root_close(&f.r);
	CHECK_INT(fake_find(&f, &l), 0);
	d = find_kind(&l, SLOT_GRUB_DROPIN);
	CHECK(d && d->exists && d->content && streq(d->content, "# ours\n"));
	m = find_kind(&l, SLOT_GRUB_CFG);
	CHECK(m && m->menu && !m->menu->overrides && !m->menu->missing && m->menu->regeneration_helps);
	slots_free(&l);

	/* grub = no: reported, unmanaged */
	root_close(&f.r);
	f.p.grub = TRI_NO;
	CHECK_INT(fake_find(&f, &l), 0);
	CHECK_INT(l.n, 3);
	CHECK(find_kind(&l, SLOT_GRUB_TOKENS));
	for (size_t i = 0; i < l.n; i++)
		CHECK(l.v[i].unmanaged && l.v[i].note && strstr(l.v[i].note, "grub = no"));
	slots_free(&l);
	fake_close(&f);
}

TEST(detect_marked_line_and_grubenv)
{
	struct fake_root f;
	fake_open(&f);
	put(f.dir, "/usr/sbin/grub2-mkconfig", MKCONFIG_UPSTREAM, 0755);
	put(f.dir, "/etc/default/grub", "GRUB_ENABLE_BLSCFG=true\n", 0644);
	put(f.dir, "/boot/grub2/grub.cfg", "blscfg\n", 0644);
	put(f.dir, "/boot/grub2/grubenv",
	    "# GRUB Environment Block\nsaved_entry=x\nkernelopts=root=/dev/sda2 ro rhgb quiet\n#####\n", 0644);
	/* the same file by another name: found once */
	char *link = xasprintf("%s/boot/grub", f.dir);
	mkdir(link, 0755);
	free(link);
	link = xasprintf("%s/boot/grub/grubenv", f.dir);
	CHECK(symlink("../grub2/grubenv", link) == 0);
	free(link);
	struct slot_list l;
	CHECK_INT(fake_find(&f, &l), 0);
	const struct slot *d = find_kind(&l, SLOT_GRUB_DEFAULT);
	CHECK(d && d->exists && streq(d->content, "GRUB_ENABLE_BLSCFG=true\n"));
	CHECK(!find_kind(&l, SLOT_GRUB_DROPIN));
	const struct slot *e = find_kind(&l, SLOT_GRUBENV);
	CHECK(e && streq(e->path, "/boot/grub2/grubenv") && streq(e->content, "root=/dev/sda2 ro rhgb quiet"));
	/* the marked line, its data, grubenv, the menu */
	CHECK_INT(l.n, 4);
	const struct slot *t = find_kind(&l, SLOT_GRUB_TOKENS);
	CHECK(t && streq(t->path, GRUB_TOKENS_PATH) && !t->exists && t->create && !t->unmanaged);
	const struct slot *m = find_kind(&l, SLOT_GRUB_CFG);
	CHECK(m && m->menu && streq_ptr(m->menu->regen, "grub2-mkconfig -o /boot/grub2/grub.cfg"));
	CHECK(m && m->menu && m->menu->missing && strstr(m->menu->missing, "marked line of memcg-policy is missing"));
	slots_free(&l);
	fake_close(&f);
}

TEST(detect_none_and_uncertain)
{
	struct fake_root f;
	fake_open(&f);
	put(f.dir, "/etc/hostname", "x\n", 0644);
	struct slot_list l;
	CHECK_INT(fake_find(&f, &l), 0);
	CHECK_INT(l.n, 0); /* no GRUB at all */
	slots_free(&l);

	/* /etc/default/grub but no grub-mkconfig: reported, not managed ... */
	put(f.dir, "/etc/default/grub", "GRUB_TIMEOUT=5\n", 0644);
	root_close(&f.r);
	CHECK_INT(fake_find(&f, &l), 0);
	/* the marked line and the data it would read, both unmanaged */
	CHECK_INT(l.n, 2);
	CHECK(l.n == 2 && l.v[0].kind == SLOT_GRUB_DEFAULT && l.v[0].unmanaged && strstr(l.v[0].note, "grub = yes"));
	CHECK(l.n == 2 && l.v[1].kind == SLOT_GRUB_TOKENS && streq(l.v[1].path, GRUB_TOKENS_PATH) &&
	      l.v[1].unmanaged && strstr(l.v[1].note, "grub = yes"));
	slots_free(&l);
	/* ... unless the policy says grub = yes */
	root_close(&f.r);
	f.p.grub = TRI_YES;
	CHECK_INT(fake_find(&f, &l), 0);
	CHECK(l.n == 2 && l.v[0].kind == SLOT_GRUB_DEFAULT && !l.v[0].unmanaged);
	CHECK(l.n == 2 && l.v[1].kind == SLOT_GRUB_TOKENS && !l.v[1].unmanaged);
	slots_free(&l);
	fake_close(&f);
}

TEST(after_commit_runs_nothing_without_change)
{
	struct fake_root f;
	fake_open(&f);
	/* a tool that would leave a trace if it ran */
	char *trace = xasprintf("%s/ran", f.dir);
	char *script = xasprintf("#!/bin/sh\necho ran > %s\n", trace);
	put(f.dir, "/usr/sbin/grub-mkconfig", MKCONFIG_DEBIAN, 0755);
	put(f.dir, "/usr/sbin/update-grub", script, 0755);
	put(f.dir, "/boot/grub/grub.cfg", "linux /boot/vmlinuz-1 ro\n", 0644);
	struct slot_list l;
	CHECK_INT(fake_find(&f, &l), 0);
	bool changed[4] = { false, false, false, false };
	unsigned ran = 0;
	CHECK_INT(grub_after_commit(&f.r, &f.p, &l, changed, GRUB_REGEN_POLICY, &ran), 0);
	CHECK_INT(ran, 0);
	/* changed, but --root with regenerate = auto, or --no-regenerate */
	for (size_t i = 0; i < l.n; i++)
		changed[i] = true;
	log_verbosity = -1; /* the "not regenerated" notice */
	CHECK_INT(grub_after_commit(&f.r, &f.p, &l, changed, GRUB_REGEN_POLICY, &ran), 0);
	log_verbosity = 0;
	CHECK_INT(ran, 0);
	f.p.regenerate = TRI_YES;
	CHECK_INT(grub_after_commit(&f.r, &f.p, &l, changed, GRUB_REGEN_NEVER, &ran), 0);
	CHECK_INT(ran, 0);
	CHECK(access(trace, F_OK) != 0);
	slots_free(&l);
	free(trace);
	free(script);
	fake_close(&f);
}

/* ---- grubenv written as grub-editenv writes it ---- */

static bool have_editenv(void)
{
	if (access("/usr/bin/grub-editenv", X_OK) == 0)
		return true;
	printf("  grub-editenv is not installed (grub-common): cannot run this test\n");
	return false;
}

/* grub-editenv FILE ARGS... (no shell: values may hold anything) */
static int editenv(const char *file, const char *a1, const char *a2, const char *a3)
{
	const char *argv[] = { "/usr/bin/grub-editenv", file, a1, a2, a3, NULL };
	_cleanup_free_ char *out = NULL;
	return spawn_run(argv, NULL, NULL, NULL, &out);
}

struct env_case {
	const char *setup[3];  /* NAME=VALUE set first, by grub-editenv */
	const char *value;     /* kernelopts to set, by both */
};

TEST(grubenv_set_as_grub_editenv)
{
	if (!have_editenv()) {
		CHECK(!"grub-editenv installed");
		return;
	}
	static const struct env_case cases[] = {
		{ { NULL }, "root=/dev/sda2 ro quiet cgroup_disable=memory" },                     /* appended */
		{ { "saved_entry=abc", "kernelopts=root=/dev/sda2 ro", "boot_success=1" },
		  "root=/dev/sda2 ro rhgb quiet cgroup_disable=memory" },                          /* grows, in the middle */
		{ { "kernelopts=root=/dev/sda2 ro rhgb quiet cgroup_enable=memory", "tuned_params=x", NULL },
		  "root=/dev/sda2 ro" },                                                            /* shrinks */
		{ { "kernelopts=a", NULL }, "back\\slash and a\nline break" },                      /* escapes */
		{ { "xkernelopts=1", "kernelopts_old=2", "kernelopts=3" }, "4" },                   /* only the name itself */
		{ { "odd=x\nkernelopts=fake", NULL }, "real" },                                    /* an escaped line break */
		{ { "kernelopts=", NULL }, "" },                                                   /* empty */
	};
	char dir[] = "/tmp/memcg-grubenv.XXXXXX";
	CHECK(mkdtemp(dir) != NULL);
	_cleanup_free_ char *theirs = xasprintf("%s/theirs", dir);
	_cleanup_free_ char *ours = xasprintf("%s/ours", dir);
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		const struct env_case *c = &cases[i];
		unlink(theirs);
		CHECK_INT(editenv(theirs, "create", NULL, NULL), 0);
		for (int k = 0; k < 3 && c->setup[k]; k++)
			CHECK_INT(editenv(theirs, "set", c->setup[k], NULL), 0);
		size_t len = 0, after_len = 0;
		_cleanup_free_ char *before = slurp(theirs, &len);
		/* what grub-editenv set wrote, read by our reader */
		for (int k = 0; k < 3 && c->setup[k]; k++) {
			const char *eq = strchr(c->setup[k], '=');
			_cleanup_free_ char *name = xstrndup(c->setup[k], (size_t)(eq - c->setup[k]));
			_cleanup_free_ char *v = before ? grubenv_get(before, len, name) : NULL;
			CHECK_STR(v, eq + 1);
		}
		_cleanup_free_ char *assign = xasprintf("kernelopts=%s", c->value);
		CHECK_INT(editenv(theirs, "set", assign, NULL), 0);
		_cleanup_free_ char *after = slurp(theirs, &after_len);
		char *mine = NULL;
		CHECK_INT(before ? grubenv_set(before, len, "kernelopts", c->value, &mine) : -1, 0);
		/* byte for byte what grub-editenv set writes */
		CHECK(mine && after && after_len == len && memcmp(mine, after, len) == 0);
		if (mine && after && memcmp(mine, after, len) != 0)
			printf("  case %zu:\n  ours:   %.*s\n  theirs: %.*s\n", i, (int)len, mine, (int)after_len, after);
		/* and grub-editenv list reads ours back */
		FILE *f = fopen(ours, "wb");
		CHECK(f && mine && fwrite(mine, 1, len, f) == len);
		if (f)
			fclose(f);
		if (!strchr(c->value, '\n')) {
			const char *argv[] = { "/usr/bin/grub-editenv", ours, "list", NULL };
			_cleanup_free_ char *listed = NULL;
			CHECK_INT(spawn_run(argv, NULL, NULL, NULL, &listed), 0);
			_cleanup_free_ char *line = xasprintf("\n%s\n", assign);
			_cleanup_free_ char *nl_listed = xasprintf("\n%s", listed ? listed : "");
			CHECK(strstr(nl_listed, line) != NULL);
		}
		free(mine);
	}
	/* no room: grub-editenv refuses, and so do we */
	unlink(theirs);
	CHECK_INT(editenv(theirs, "create", NULL, NULL), 0);
	char big[1000];
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	/* (Debian's create writes a warning line too: 900 fit, not 900 more) */
	_cleanup_free_ char *fill = xasprintf("fill=%.*s", 900, big);
	CHECK_INT(editenv(theirs, "set", fill, NULL), 0);
	size_t len = 0;
	_cleanup_free_ char *full = slurp(theirs, &len);
	CHECK(editenv(theirs, "set", "kernelopts=root=/dev/sda2 ro quiet cgroup_disable=memory", NULL) != 0);
	char *mine = NULL;
	CHECK_INT(full ? grubenv_set(full, len, "kernelopts", "root=/dev/sda2 ro quiet cgroup_disable=memory", &mine) : 0,
		  -ENOSPC);
	CHECK(mine == NULL);
	/* not a block */
	CHECK_INT(grubenv_set("kernelopts=x\n####", 16, "kernelopts", "y", &mine), -EINVAL);
	CHECK_INT(grubenv_set("# GRUB Environment Block\nkernelopts=x", 37, "kernelopts", "y", &mine), -EINVAL);
	unlink(theirs);
	unlink(ours);
	rmdir(dir);
}

TEST(kernelopts_block_inside_the_root)
{
	if (!have_editenv()) {
		CHECK(!"grub-editenv installed");
		return;
	}
	/* RHEL 8 on EFI: /boot/grub2/grubenv -> ../efi/EFI/redhat/grubenv,
	 * resolved inside the root; no program runs */
	struct fake_root f;
	fake_open(&f);
	char *dir = xasprintf("%s/boot/efi/EFI/redhat", f.dir);
	char *cmd = xasprintf("mkdir -p '%s' '%s/boot/grub2' && grub-editenv '%s/grubenv' create && "
			      "grub-editenv '%s/grubenv' set 'kernelopts=root=/dev/sda2 ro quiet' saved_entry=abc",
			      dir, f.dir, dir, dir);
	CHECK(system(cmd) == 0);
	free(cmd);
	char *link = xasprintf("%s/boot/grub2/grubenv", f.dir);
	CHECK(symlink("../efi/EFI/redhat/grubenv", link) == 0);
	CHECK_INT(root_open(&f.r, f.dir), 0);
	unsigned spawned = spawn_count();
	size_t len = 0;
	int err = 0;
	char *text = grub_kernelopts_block(&f.r, "/boot/grub2/grubenv", "root=/dev/sda2 ro quiet cgroup_disable=memory",
					   &len, &err);
	CHECK_INT(err, 0);
	CHECK_INT(spawn_count(), spawned);
	CHECK_INT(len, 1024);
	char *v = text ? grubenv_get(text, len, "kernelopts") : NULL;
	CHECK_STR(v, "root=/dev/sda2 ro quiet cgroup_disable=memory");
	free(v);
	v = text ? grubenv_get(text, len, "saved_entry") : NULL;
	CHECK_STR(v, "abc");
	free(v);
	free(text);
	free(link);
	free(dir);
	fake_close(&f);
}

TEST_MAIN(T(words_plain_and_quotes), T(release_from_path), T(grubenv_values), T(marked_line_added_at_end),
	  T(marked_line_moves_to_end_and_no_final_newline), T(dropin_installed_as_built_in), T(grubenv_value_edited),
	  T(menu_in_sync_ignores_other_sections), T(menu_decision_one_line_for_kernels_of_other_rules), T(filter_puts_switches_in_order),
	  T(menu_lines_judged_by_their_kernels_rules), T(menu_drift_stale), T(menu_drift_reasons), T(detect_debian_dropin),
	  T(detect_marked_line_and_grubenv), T(detect_none_and_uncertain), T(after_commit_runs_nothing_without_change),
	  T(grubenv_set_as_grub_editenv), T(kernelopts_block_inside_the_root))
