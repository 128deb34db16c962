/* test-policy.c - the policy loader and the mode= editor (src/policy.c). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/diag.h"
#include "facts/context.h"
#include "facts/kconfig.h"
#include "facts/policy.h"
#include "test.h"
#include "test-fs.h"
#include "lib/util.h"

/* ---- helpers --------------------------------------------------------- */

static int load(struct policy *p, const char *text, const char *name)
{
	return policy_load_buffer(p, text, strlen(text), name);
}

/* stderr goes to a temporary file between capture_start and capture_end. */
static FILE *capture_file;
static int saved_stderr = -1;

static void capture_start(void)
{
	fflush(stderr);
	capture_file = tmpfile();
	saved_stderr = dup(2);
	if (!capture_file || saved_stderr < 0 || dup2(fileno(capture_file), 2) < 0)
		abort();
}

static char *capture_end(void)
{
	/* as the command layer does: what the code recorded, printed once */
	diag_print();
	diag_reset();
	fflush(stderr);
	dup2(saved_stderr, 2);
	close(saved_stderr);
	saved_stderr = -1;
	rewind(capture_file);
	struct strbuf sb = { 0 };
	char buf[1024];
	size_t n;
	while ((n = fread(buf, 1, sizeof(buf), capture_file)) > 0)
		sb_appendn(&sb, buf, n);
	fclose(capture_file);
	capture_file = NULL;
	return sb_take(&sb);
}

/* Loads text that must fail: returns the error line (0 if it loaded) and
 * stores the message printed in *msg if msg is not NULL. */
static unsigned load_error(const char *text, char **msg)
{
	struct policy p;
	policy_init(&p);
	capture_start();
	int r = load(&p, text, "bad.conf");
	char *out = capture_end();
	policy_free(&p);
	unsigned line = r == -EXIT_BADINPUT ? policy_last_error_line() : 0;
	if (r != 0 && r != -EXIT_BADINPUT)
		line = 99999; /* wrong kind of failure */
	if (msg)
		*msg = out;
	else
		free(out);
	return line;
}

static char *origin(const struct origin *o)
{
	static char buf[4][256];
	static unsigned next;
	char *b = buf[next++ % 4];
	char *s = origin_str(o);
	snprintf(b, sizeof(buf[0]), "%s", s);
	free(s);
	return b;
}

static char *make_tmpdir(void)
{
	char *d = xstrdup("/tmp/test-policy.XXXXXX");
	if (!mkdtemp(d))
		abort();
	return d;
}

static void write_file(const char *path, const char *text, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		abort();
	size_t len = strlen(text);
	if (write(fd, text, len) != (ssize_t)len)
		abort();
	if (fchmod(fd, mode) < 0)
		abort();
	close(fd);
}

static char *read_text(const char *path, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	char *s = NULL;
	int r = read_fd_all(fd, MAX_INPUT_FILE, &s, len);
	close(fd);
	return r < 0 ? NULL : s;
}

/* ---- defaults and values --------------------------------------------- */

TEST(defaults)
{
	struct policy p;
	policy_init(&p);
	CHECK_INT(p.mode, MODE_AUTO);
	CHECK_INT(p.accounting, ACCOUNTING_FULL);
	CHECK(!p.strict);
	CHECK_INT(p.n_needs_memcg, 8);
	CHECK_STR(p.needs_memcg[0], "dockerd");
	CHECK_STR(p.needs_memcg[7], "incusd");
	CHECK(p.needs_memcg[8] == NULL);
	CHECK(p.needs_memcg_units);
	CHECK(!p.has_min_ram);
	CHECK(!p.has_assume_ram);
	CHECK_INT(p.otherwise, OTHERWISE_KEEP);
	CHECK_INT(p.n_kernels, 0);
	CHECK_INT(p.grub, TRI_AUTO);
	CHECK_INT(p.systemd_boot, TRI_AUTO);
	CHECK_INT(p.kernel_cmdline, TRI_AUTO);
	CHECK_INT(p.rpi, TRI_AUTO);
	CHECK_INT(p.regenerate, TRI_AUTO);
	CHECK_INT(p.n_files, 0);
	CHECK_STR(origin(&p.mode_origin), "built-in default");
	CHECK_STR(origin(&p.regenerate_origin), "built-in default");
	CHECK(policy_kernel_mode(&p, "6.1.0") == NULL);
	policy_free(&p);
}

TEST(names)
{
	CHECK_STR(policy_mode_name(MODE_ON), "on");
	CHECK_STR(policy_mode_name(MODE_OFF), "off");
	CHECK_STR(policy_mode_name(MODE_AUTO), "auto");
	CHECK_STR(policy_mode_name(MODE_UNSET), "unset");
	CHECK_STR(policy_otherwise_name(OTHERWISE_KERNEL), "kernel");
	CHECK_STR(policy_otherwise_name(OTHERWISE_KEEP), "keep");
	CHECK_STR(tristate_name(TRI_NO), "no");
	CHECK_STR(tristate_name(TRI_YES), "yes");
	CHECK_STR(policy_accounting_name(ACCOUNTING_LITE), "lite");
	struct origin o = { (char *)"/etc/x.conf", 12 };
	CHECK_STR(origin(&o), "/etc/x.conf:12");
}

TEST(every_key)
{
	const char *text = "[policy]\n"                    /* 1 */
			   "mode = off\n"                  /* 2 */
			   "accounting = lite\n"           /* 3 */
			   "strict = yes\n"                /* 4 */
			   "\n"                            /* 5 */
			   "[auto]\n"                      /* 6 */
			   "needs-memcg = foo  bar\tbaz\n" /* 7 */
			   "needs-memcg-units = no\n"      /* 8 */
			   "min-ram = 512M\n"              /* 9 */
			   "assume-ram = 2G\n"             /* 10 */
			   "otherwise = kernel\n"          /* 11 */
			   "[bootloaders]\n"               /* 12 */
			   "grub = no\n"                   /* 13 */
			   "systemd-boot = yes\n"          /* 14 */
			   "kernel-cmdline = no\n"         /* 15 */
			   "rpi = yes\n"                   /* 16 */
			   "regenerate = no\n"             /* 17 */
			   "[kernel 6.6.*-v8+]\n"          /* 18 */
			   "mode = on\n"                   /* 19 */
			   "default = off\n"               /* 20 */
			   "accepts-cgroup-enable = yes\n";/* 21 */
	struct policy p;
	policy_init(&p);
	CHECK_INT(load(&p, text, "/etc/memcg-policy.conf"), 0);
	CHECK_INT(policy_last_error_line(), 0);
	CHECK_INT(p.mode, MODE_OFF);
	CHECK_INT(p.accounting, ACCOUNTING_LITE);
	CHECK(p.strict);
	CHECK_INT(p.n_needs_memcg, 3);
	CHECK_STR(p.needs_memcg[0], "foo");
	CHECK_STR(p.needs_memcg[1], "bar");
	CHECK_STR(p.needs_memcg[2], "baz");
	CHECK(p.needs_memcg[3] == NULL);
	CHECK(!p.needs_memcg_units);
	CHECK(p.has_min_ram);
	CHECK_INT(p.min_ram, 512ULL << 20);
	CHECK(p.has_assume_ram);
	CHECK_INT(p.assume_ram, 2ULL << 30);
	CHECK_INT(p.otherwise, OTHERWISE_KERNEL);
	CHECK_INT(p.grub, TRI_NO);
	CHECK_INT(p.systemd_boot, TRI_YES);
	CHECK_INT(p.kernel_cmdline, TRI_NO);
	CHECK_INT(p.rpi, TRI_YES);
	CHECK_INT(p.regenerate, TRI_NO);
	CHECK_INT(p.n_kernels, 1);
	if (p.n_kernels == 1) {
		const struct policy_kernel_section *k = &p.kernels[0];
		CHECK_STR(k->glob, "6.6.*-v8+");
		CHECK_INT(k->mode, MODE_ON);
		CHECK_INT(k->default_state, MEMCG_DEFAULT_OFF);
		CHECK_INT(k->accepts_enable, 1);
		CHECK_STR(origin(&k->origin), "/etc/memcg-policy.conf:18");
		CHECK_STR(origin(&k->mode_origin), "/etc/memcg-policy.conf:19");
		CHECK_STR(origin(&k->default_origin), "/etc/memcg-policy.conf:20");
		CHECK_STR(origin(&k->accepts_enable_origin), "/etc/memcg-policy.conf:21");
	}
	CHECK_STR(origin(&p.mode_origin), "/etc/memcg-policy.conf:2");
	CHECK_STR(origin(&p.accounting_origin), "/etc/memcg-policy.conf:3");
	CHECK_STR(origin(&p.strict_origin), "/etc/memcg-policy.conf:4");
	CHECK_STR(origin(&p.needs_memcg_origin), "/etc/memcg-policy.conf:7");
	CHECK_STR(origin(&p.needs_memcg_units_origin), "/etc/memcg-policy.conf:8");
	CHECK_STR(origin(&p.min_ram_origin), "/etc/memcg-policy.conf:9");
	CHECK_STR(origin(&p.assume_ram_origin), "/etc/memcg-policy.conf:10");
	CHECK_STR(origin(&p.otherwise_origin), "/etc/memcg-policy.conf:11");
	CHECK_STR(origin(&p.grub_origin), "/etc/memcg-policy.conf:13");
	CHECK_STR(origin(&p.systemd_boot_origin), "/etc/memcg-policy.conf:14");
	CHECK_STR(origin(&p.kernel_cmdline_origin), "/etc/memcg-policy.conf:15");
	CHECK_STR(origin(&p.rpi_origin), "/etc/memcg-policy.conf:16");
	CHECK_STR(origin(&p.regenerate_origin), "/etc/memcg-policy.conf:17");
	CHECK_INT(p.n_files, 1);
	CHECK_STR(p.files[0], "/etc/memcg-policy.conf");
	CHECK(p.mode_origin.file == p.files[0]); /* origins point at files[] */
	policy_free(&p);
}

TEST(value_spellings)
{
	struct policy p;
	policy_init(&p);
	capture_start();
	CHECK_INT(load(&p, "[policy]\nMODE = on\n", "a"), -EXIT_BADINPUT); /* keys are case-sensitive */
	free(capture_end());
	CHECK_INT(load(&p,
		       "[policy]\n"
		       "strict = TRUE\n"
		       "mode: ON\n"               /* ':' separates like '=' */
		       "[auto]\n"
		       "needs_memcg_units = 0\n" /* '_' for '-' */
		       "needs-memcg =\n"          /* empty list */
		       "min_ram = 1g\n"
		       "[bootloaders]\n"
		       "grub = false\n"
		       "rpi = 1\n",
		       "b"),
		  0);
	CHECK(p.strict);
	CHECK_INT(p.mode, MODE_ON);
	CHECK_STR(origin(&p.mode_origin), "b:3");
	CHECK(!p.needs_memcg_units);
	CHECK_INT(p.n_needs_memcg, 0);
	CHECK(p.needs_memcg && p.needs_memcg[0] == NULL);
	CHECK_INT(p.min_ram, 1ULL << 30);
	CHECK_INT(p.grub, TRI_NO);
	CHECK_INT(p.rpi, TRI_YES);
	policy_free(&p);
}

TEST(comments_and_indentation)
{
	struct policy p;
	policy_init(&p);
	const char *text = "# whole-line comment\n"                    /* 1 */
			   "; another\n"                               /* 2 */
			   "  [policy]   # header comment\n"           /* 3 */
			   "mode = on  # on | off | auto\n"            /* 4 */
			   "\taccounting = lite ; inline semicolon\n"  /* 5 */
			   "    strict = yes\n"                        /* 6 */
			   "   # indented comment\n"                   /* 7 */
			   "[auto]\n"                                  /* 8 */
			   "needs-memcg = a#b c;d # not e\n"           /* 9 */
			   "min-ram =   # no value\n";                 /* 10 */
	CHECK_INT(load(&p, text, "c.conf"), 0);
	CHECK_INT(p.mode, MODE_ON);
	CHECK_STR(origin(&p.mode_origin), "c.conf:4");
	CHECK_INT(p.accounting, ACCOUNTING_LITE);
	CHECK_STR(origin(&p.accounting_origin), "c.conf:5");
	/* indented: its own key, not a continuation of accounting */
	CHECK(p.strict);
	CHECK_STR(origin(&p.strict_origin), "c.conf:6");
	CHECK_INT(p.n_needs_memcg, 2);
	if (p.n_needs_memcg == 2) {
		CHECK_STR(p.needs_memcg[0], "a#b");
		CHECK_STR(p.needs_memcg[1], "c;d");
	}
	CHECK(!p.has_min_ram);
	CHECK_STR(origin(&p.min_ram_origin), "c.conf:10");
	policy_free(&p);
	/* '#' without whitespace before it belongs to the value */
	char *bad = xasprintf("%sotherwise = off#x\n", text);
	CHECK_INT(load_error(bad, NULL), 11);
	free(bad);
}

TEST(crlf_bom_and_last_line)
{
	struct policy p;
	policy_init(&p);
	CHECK_INT(load(&p, "\xef\xbb\xbf[policy]\r\nmode = off\r\n\r\n[auto]\r\notherwise = on", "w.conf"), 0);
	CHECK_INT(p.mode, MODE_OFF);
	CHECK_INT(p.otherwise, OTHERWISE_ON);
	CHECK_STR(origin(&p.otherwise_origin), "w.conf:5");
	policy_free(&p);
}

TEST(long_lines)
{
	/* 199 characters: the longest line, even one that fills inih's
	 * buffer without room for its line break, and the next line counts */
	struct strbuf sb = { 0 };
	sb_append(&sb, "[auto]\nneeds-memcg=");
	while (sb.len - 7 < 199)
		sb_appendc(&sb, 'x');
	sb_append(&sb, "\notherwise = off\n");
	struct policy p;
	policy_init(&p);
	CHECK_INT(load(&p, sb.s, "l.conf"), 0);
	CHECK_INT(p.n_needs_memcg, 1);
	if (p.n_needs_memcg == 1)
		CHECK_INT(strlen(p.needs_memcg[0]), 199 - strlen("needs-memcg="));
	CHECK_INT(p.otherwise, OTHERWISE_OFF);
	CHECK_STR(origin(&p.otherwise_origin), "l.conf:3");
	policy_free(&p);
	sb_free(&sb);

	/* a comment of 199 characters is fine, 200 (201 bytes with '\n') not */
	sb_append(&sb, "[policy]\n#");
	while (sb.len - 9 < 199)
		sb_appendc(&sb, '-');
	sb_append(&sb, "\nmode = on\n");
	policy_init(&p);
	CHECK_INT(load(&p, sb.s, "l.conf"), 0);
	CHECK_INT(p.mode, MODE_ON);
	policy_free(&p);
	sb_free(&sb);

	sb_append(&sb, "[policy]\nmode = on\n# ");
	while (sb.len - 19 < 200)
		sb_appendc(&sb, '-');
	sb_append(&sb, "\n");
	char *msg = NULL;
	CHECK_INT(load_error(sb.s, &msg), 3);
	CHECK(msg && strstr(msg, "memcg-policy: bad.conf:3: line too long"));
	free(msg);
	sb_free(&sb);

	/* a long value line on the last line, without a line break */
	sb_append(&sb, "[auto]\nneeds-memcg = ");
	while (sb.len - 7 < 300)
		sb_appendc(&sb, 'y');
	CHECK_INT(load_error(sb.s, NULL), 2);
	sb_free(&sb);
}

/* ---- errors ---------------------------------------------------------- */

TEST(error_lines)
{
	char *msg = NULL;
	CHECK_INT(load_error("[policy]\nmode = on\n\n[polcy]\n", &msg), 4);
	CHECK(msg && strstr(msg, "memcg-policy: bad.conf:4: unknown section [polcy]"));
	free(msg);
	CHECK_INT(load_error("[policy]\nmode = on\nmodes = on\n", &msg), 3);
	CHECK(msg && strstr(msg, "bad.conf:3: unknown key 'modes' in [policy]"));
	free(msg);
	/* a key valid in another section is unknown here */
	CHECK_INT(load_error("[auto]\nmode = on\n", NULL), 2);
	CHECK_INT(load_error("[kernel 6.*]\nstrict = yes\n", NULL), 2);
	CHECK_INT(load_error("mode = on\n", &msg), 1);
	CHECK(msg && strstr(msg, "outside of any section"));
	free(msg);
	CHECK_INT(load_error("[policy]\n# c\nmode on\n", &msg), 3);
	CHECK(msg && strstr(msg, "bad.conf:3: expected 'key = value'"));
	free(msg);
	CHECK_INT(load_error("[policy]\n = on\n", NULL), 2);
	CHECK_INT(load_error("[policy\nmode = on\n", NULL), 1);
	CHECK_INT(load_error("[policy] x\n", NULL), 1);
	CHECK_INT(load_error("[policy]\n[kernel]\nmode = on\n", &msg), 2);
	CHECK(msg && strstr(msg, "[kernel] needs a glob"));
	free(msg);
	CHECK_INT(load_error("[kernel  ]\n", NULL), 1);
	CHECK_INT(load_error("[kernel 6.1 6.2]\n", NULL), 1);
	CHECK_INT(load_error("[kernels 6.1]\n", NULL), 1);
	{
		struct policy p;
		policy_init(&p);
		static const char nul[] = "[policy]\nstrict = no\nmode = on\0x\n";
		capture_start();
		CHECK_INT(policy_load_buffer(&p, nul, sizeof(nul) - 1, "n.conf"), -EXIT_BADINPUT);
		free(capture_end());
		CHECK_INT(policy_last_error_line(), 3);
		policy_free(&p);
	}
}

TEST(bad_values)
{
	static const struct {
		const char *text;
		unsigned line;
	} cases[] = {
		{ "[policy]\nmode = yes\n", 2 },
		{ "[policy]\nmode =\n", 2 },
		{ "[policy]\naccounting = half\n", 2 },
		{ "[policy]\nstrict = maybe\n", 2 },
		{ "[auto]\nneeds-memcg-units = auto\n", 2 },
		{ "[auto]\nneeds-memcg = docker /usr/bin/podman\n", 2 },
		{ "[auto]\nneeds-memcg = dockerd, podman\n", 2 },
		{ "[auto]\nneeds-memcg = ..\n", 2 },
		{ "[auto]\nmin-ram = 1X\n", 2 },
		{ "[auto]\nmin-ram = lots\n", 2 },
		{ "[auto]\nassume-ram = -1G\n", 2 },
		{ "[auto]\notherwise = auto\n", 2 },
		{ "[kernel *]\nmode = default\n", 2 },
		{ "[kernel *]\ndefault = auto\n", 2 },
		{ "[kernel *]\naccepts-cgroup-enable = auto\n", 2 },
		{ "[bootloaders]\ngrub = maybe\n", 2 },
		{ "[bootloaders]\nsystemd-boot = on\n", 2 },
		{ "[bootloaders]\nkernel-cmdline = 2\n", 2 },
		{ "[bootloaders]\nrpi = off\n", 2 },
		{ "[bootloaders]\nregenerate = always\n", 2 },
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		unsigned got = load_error(cases[i].text, NULL);
		if (got != cases[i].line)
			printf("  case %zu: %s", i, cases[i].text);
		CHECK_INT(got, cases[i].line);
	}
	char *msg = NULL;
	CHECK_INT(load_error("[policy]\n\nmode = sometimes\n", &msg), 3);
	CHECK(msg && strstr(msg, "memcg-policy: bad.conf:3: bad value 'sometimes' for mode (expected on, off or auto)"));
	free(msg);
}

TEST(duplicates)
{
	char *msg = NULL;
	CHECK_INT(load_error("[policy]\nmode = on\nstrict = no\nmode = off\n", &msg), 4);
	CHECK(msg && strstr(msg, "bad.conf:4: duplicate key 'mode' in [policy] (already set at line 2)"));
	free(msg);
	/* the same section twice, and '_' / '-' spellings of one key */
	CHECK_INT(load_error("[auto]\nmin-ram = 1G\n[policy]\n[auto]\nmin_ram = 2G\n", NULL), 5);
	CHECK_INT(load_error("[kernel 6.*]\nmode = on\n[kernel 5.*]\nmode = on\n[kernel 6.*]\nmode = off\n", NULL), 6);
	/* only the first error is reported */
	CHECK_INT(load_error("[policy]\nmode = x\nmode = y\n[nope]\n", &msg), 2);
	CHECK(msg && strstr(msg, "bad.conf:2:") && !strstr(msg, "bad.conf:3:") && !strstr(msg, "bad.conf:4:"));
	free(msg);
	/* the same key in different [kernel] globs or in two files is fine */
	struct policy p;
	policy_init(&p);
	CHECK_INT(load(&p, "[kernel 6.*]\nmode = on\n[kernel 5.*]\nmode = on\n", "a"), 0);
	CHECK_INT(load(&p, "[policy]\nmode = on\n[kernel 6.*]\nmode = off\n", "b"), 0);
	CHECK_INT(load(&p, "[policy]\nmode = off\n", "c"), 0);
	CHECK_INT(p.mode, MODE_OFF);
	CHECK_INT(p.n_kernels, 3);
	policy_free(&p);
}

TEST(error_leaves_policy_unchanged)
{
	struct policy p;
	policy_init(&p);
	CHECK_INT(load(&p, "[policy]\nmode = on\n", "good"), 0);
	capture_start();
	int r = load(&p, "[policy]\nmode = off\naccounting = lite\n[kernel x]\nmode = on\n[auto]\nbogus = 1\n", "bad");
	free(capture_end());
	CHECK_INT(r, -EXIT_BADINPUT);
	CHECK_INT(policy_last_error_line(), 7);
	CHECK_INT(p.mode, MODE_ON);
	CHECK_STR(origin(&p.mode_origin), "good:2");
	CHECK_INT(p.accounting, ACCOUNTING_FULL);
	CHECK_INT(p.n_kernels, 0);
	CHECK_INT(p.n_files, 1);
	policy_free(&p);
}

/* ---- merging --------------------------------------------------------- */

TEST(merge_order)
{
	struct policy p;
	policy_init(&p);
	CHECK_INT(load(&p, "[policy]\nmode = on\naccounting = lite\n[auto]\nmin-ram = 1G\nneeds-memcg = a b\n",
		       "/usr/lib/memcg-policy.d/10-vendor.conf"), 0);
	CHECK_INT(load(&p, "# local\n[policy]\nmode = off\n[auto]\nmin-ram =\n", "/etc/memcg-policy.conf"), 0);
	CHECK_INT(load(&p, "[auto]\n\n\nneeds-memcg = c\n", "/etc/memcg-policy.d/50-x.conf"), 0);
	CHECK_INT(p.mode, MODE_OFF);
	CHECK_STR(origin(&p.mode_origin), "/etc/memcg-policy.conf:3");
	CHECK_INT(p.accounting, ACCOUNTING_LITE);
	CHECK_STR(origin(&p.accounting_origin), "/usr/lib/memcg-policy.d/10-vendor.conf:3");
	CHECK(!p.has_min_ram); /* an empty value unsets a vendor's value */
	CHECK_STR(origin(&p.min_ram_origin), "/etc/memcg-policy.conf:5");
	CHECK_INT(p.n_needs_memcg, 1);
	CHECK_STR(p.needs_memcg[0], "c");
	CHECK_STR(origin(&p.needs_memcg_origin), "/etc/memcg-policy.d/50-x.conf:4");
	CHECK_STR(origin(&p.strict_origin), "built-in default");
	CHECK_INT(p.n_files, 3);
	CHECK_STR(p.files[0], "/usr/lib/memcg-policy.d/10-vendor.conf");
	CHECK_STR(p.files[1], "/etc/memcg-policy.conf");
	CHECK_STR(p.files[2], "/etc/memcg-policy.d/50-x.conf");
	policy_free(&p);
}

TEST(kernel_globs)
{
	struct policy p;
	policy_init(&p);
	CHECK_INT(load(&p,
		       "[kernel 6.*]\n"            /* 1 */
		       "mode = on\n"               /* 2 */
		       "default = on\n"            /* 3 */
		       "[kernel 6.6.*-v8+]\n"      /* 4 */
		       "mode = off\n"              /* 5 */
		       "[kernel *-rpi-*]  # pi\n"  /* 6 */
		       "accepts-cgroup-enable = no\n", /* 7 */
		       "a.conf"),
		  0);
	CHECK_INT(load(&p, "[kernel 6.[0-5].*]\ndefault = off\n", "b.conf"), 0);
	CHECK_INT(p.n_kernels, 4);

	const struct policy_kernel_section *s = policy_kernel_mode(&p, "6.6.51-v8+");
	CHECK(s && s->mode == MODE_OFF);
	CHECK(s && streq(origin(&s->mode_origin), "a.conf:5"));
	s = policy_kernel_default(&p, "6.6.51-v8+"); /* the later section has no default */
	CHECK(s && s->default_state == MEMCG_DEFAULT_ON);
	CHECK(s && streq(s->glob, "6.*"));
	s = policy_kernel_mode(&p, "6.1.0-13-amd64");
	CHECK(s && s->mode == MODE_ON);
	s = policy_kernel_default(&p, "6.1.0-13-amd64"); /* from the later file */
	CHECK(s && s->default_state == MEMCG_DEFAULT_OFF);
	CHECK(s && streq(origin(&s->origin), "b.conf:1"));
	CHECK(s && streq(s->glob, "6.[0-5].*"));
	s = policy_kernel_accepts(&p, "6.12.25-rpi-2712");
	CHECK(s && s->accepts_enable == 0);
	CHECK(policy_kernel_accepts(&p, "6.1.0-13-amd64") == NULL);
	CHECK(policy_kernel_mode(&p, "5.10.0-30-amd64") == NULL);
	CHECK(policy_kernel_default(&p, "5.10.0-30-amd64") == NULL);
	CHECK(policy_kernel_mode(&p, NULL) == NULL);
	policy_free(&p);
}

/* ---- the shipped file ------------------------------------------------ */

static void check_defaults_equal(const struct policy *a, const struct policy *b)
{
	CHECK_INT(a->mode, b->mode);
	CHECK_INT(a->accounting, b->accounting);
	CHECK_INT(a->strict, b->strict);
	CHECK_INT(a->n_needs_memcg, b->n_needs_memcg);
	for (size_t i = 0; i < a->n_needs_memcg && i < b->n_needs_memcg; i++)
		CHECK_STR(a->needs_memcg[i], b->needs_memcg[i]);
	CHECK_INT(a->needs_memcg_units, b->needs_memcg_units);
	CHECK_INT(a->has_min_ram, b->has_min_ram);
	CHECK_INT(a->has_assume_ram, b->has_assume_ram);
	CHECK_INT(a->otherwise, b->otherwise);
	CHECK_INT(a->grub, b->grub);
	CHECK_INT(a->systemd_boot, b->systemd_boot);
	CHECK_INT(a->kernel_cmdline, b->kernel_cmdline);
	CHECK_INT(a->rpi, b->rpi);
	CHECK_INT(a->regenerate, b->regenerate);
}

TEST(shipped_conf)
{
	const char *top = getenv("TOP");
	char *path = xasprintf("%s/conf/memcg-policy.conf", top && *top ? top : ".");
	size_t len = 0;
	char *text = read_text(path, &len);
	CHECK(text != NULL);
	if (!text) {
		free(path);
		return;
	}
	struct policy def, p;
	policy_init(&def);
	policy_init(&p);
	capture_start();
	int r = policy_load_buffer(&p, text, len, path);
	char *err = capture_end();
	CHECK_INT(r, 0);
	CHECK_STR(err, ""); /* not a single message */
	check_defaults_equal(&p, &def);
	CHECK_INT(p.n_kernels, 0);
	CHECK(p.mode_origin.file == NULL); /* every key commented out */
	policy_free(&p);
	free(err);

	/* Uncommented, its keys must state exactly the built-in defaults. */
	struct strbuf sb = { 0 };
	unsigned uncommented = 0;
	for (const char *l = text; *l;) {
		const char *nl = strchr(l, '\n');
		size_t n = nl ? (size_t)(nl - l + 1) : strlen(l);
		if (n > 2 && l[0] == '#' && (l[1] == '[' || (l[1] >= 'a' && l[1] <= 'z' && memchr(l, '=', n)))) {
			sb_appendn(&sb, l + 1, n - 1);
			uncommented++;
		} else {
			sb_appendn(&sb, l, n);
		}
		l += n;
	}
	CHECK(uncommented >= 16);
	policy_init(&p);
	r = policy_load_buffer(&p, sb.s, sb.len, "uncommented");
	CHECK_INT(r, 0);
	check_defaults_equal(&p, &def);
	CHECK(p.mode_origin.file != NULL);
	CHECK(p.regenerate_origin.file != NULL);
	CHECK_INT(p.n_kernels, 1); /* the example */

	/* and set turns it into a valid file with the new mode */
	char *set = NULL;
	CHECK_INT(policy_set_mode_text(text, len, "off", &set), 0);
	struct policy q;
	policy_init(&q);
	CHECK_INT(policy_load_buffer(&q, set, strlen(set), "set"), 0);
	CHECK_INT(q.mode, MODE_OFF);
	CHECK_INT(strlen(set), len + strlen("mode = off\n"));
	policy_free(&q);
	free(set);

	sb_free(&sb);
	policy_free(&p);
	policy_free(&def);
	free(text);
	free(path);
}

/* ---- set mode= ------------------------------------------------------- */

static char *set_mode(const char *text, const char *mode)
{
	char *out = NULL;
	int r = policy_set_mode_text(text, strlen(text), mode, &out);
	if (r < 0)
		return xasprintf("error %d", r);
	return out;
}

#define CHECK_SET(text, mode, want)                \
	do {                                           \
		char *got_ = set_mode(text, mode);         \
		CHECK_STR(got_, want);                     \
		free(got_);                                \
	} while (0)

TEST(set_mode_text)
{
	/* replace, keeping comments and spacing */
	CHECK_SET("# top\n[policy]\nmode = auto  # on | off | auto\nstrict = no\n", "off",
		  "# top\n[policy]\nmode = off  # on | off | auto\nstrict = no\n");
	CHECK_SET("[policy]\n  mode=on\n", "auto", "[policy]\n  mode=auto\n");
	CHECK_SET("[policy]\r\nmode\t:\ton\r\n", "off", "[policy]\r\nmode\t:\toff\r\n");
	CHECK_SET("[policy]\nmode =\n", "on", "[policy]\nmode = on\n");
	CHECK_SET("[policy]\nmode =   # empty\n", "on", "[policy]\nmode = on   # empty\n");
	CHECK_SET("[policy]\nmode=", "on", "[policy]\nmode=on");
	/* only [policy]'s mode */
	CHECK_SET("[kernel 6.*]\nmode = on\n[policy]\nmode = on\n", "off",
		  "[kernel 6.*]\nmode = on\n[policy]\nmode = off\n");
	/* insert after the header; a commented-out key stays */
	CHECK_SET("# c\n[policy]  # main\n#mode = auto\n[auto]\n", "on",
		  "# c\n[policy]  # main\nmode = on\n#mode = auto\n[auto]\n");
	CHECK_SET("[auto]\nmode = x\n[ policy ]", "off", "[auto]\nmode = x\n[ policy ]\nmode = off\n");
	/* append */
	CHECK_SET("", "on", "[policy]\nmode = on\n");
	CHECK_SET("[auto]\notherwise = kernel", "off", "[auto]\notherwise = kernel\n[policy]\nmode = off\n");
	CHECK_SET("# nothing\n", "auto", "# nothing\n[policy]\nmode = auto\n");
	CHECK_SET("[policy-x]\nmode = on\n", "off", "[policy-x]\nmode = on\n[policy]\nmode = off\n");
	/* values are checked; the name is normalised */
	CHECK_SET("[policy]\n", "sometimes", "error -2");
	CHECK_SET("[policy]\n", "OFF", "[policy]\nmode = off\n");

	/* the result loads with the new mode */
	const char *orig = "[policy]\nmode = on # was\naccounting = lite\n";
	char *out = set_mode(orig, "off");
	struct policy p;
	policy_init(&p);
	CHECK_INT(load(&p, out, "s"), 0);
	CHECK_INT(p.mode, MODE_OFF);
	CHECK_INT(p.accounting, ACCOUNTING_LITE);
	policy_free(&p);
	free(out);
}

/* ---- files ----------------------------------------------------------- */

TEST(load_from_root)
{
	char *dir = make_tmpdir();
	char *d;
	d = xasprintf("%s/usr", dir); mkdir(d, 0755); free(d);
	d = xasprintf("%s/usr/lib", dir); mkdir(d, 0755); free(d);
	d = xasprintf("%s/usr/lib/memcg-policy.d", dir); mkdir(d, 0755); free(d);
	d = xasprintf("%s/etc", dir); mkdir(d, 0755); free(d);
	d = xasprintf("%s/etc/memcg-policy.d", dir); mkdir(d, 0755); free(d);

	struct root r;
	struct policy p;

	/* nothing there: defaults */
	CHECK_INT(root_open(&r, dir), 0);
	policy_init(&p);
	CHECK_INT(policy_load(&r, NULL, &p), 0);
	CHECK_INT(p.n_files, 0);
	CHECK_INT(p.mode, MODE_AUTO);
	policy_free(&p);

	char *f;
	f = xasprintf("%s/usr/lib/memcg-policy.d/20-b.conf", dir);
	write_file(f, "[policy]\naccounting = lite\nmode = off\n", 0644); free(f);
	f = xasprintf("%s/usr/lib/memcg-policy.d/10-a.conf", dir);
	write_file(f, "[policy]\nmode = on\nstrict = yes\n", 0644); free(f);
	f = xasprintf("%s/usr/lib/memcg-policy.d/.hidden.conf", dir);
	write_file(f, "[broken\n", 0644); free(f);
	f = xasprintf("%s/usr/lib/memcg-policy.d/README", dir);
	write_file(f, "not a policy\n", 0644); free(f);
	f = xasprintf("%s/etc/memcg-policy.conf", dir);
	write_file(f, "[policy]\nstrict = no\n", 0600); free(f);
	f = xasprintf("%s/etc/memcg-policy.d/local.conf", dir);
	write_file(f, "[auto]\notherwise = off\n[policy]\nmode = auto\n", 0444); free(f);

	policy_init(&p);
	CHECK_INT(policy_load(&r, NULL, &p), 0);
	CHECK_INT(p.n_files, 4);
	char *want = xasprintf("%s/usr/lib/memcg-policy.d/10-a.conf", dir);
	CHECK(p.n_files == 4 && streq(p.files[0], want));
	free(want);
	CHECK(p.n_files == 4 && endswith(p.files[1], "/usr/lib/memcg-policy.d/20-b.conf"));
	CHECK(p.n_files == 4 && endswith(p.files[2], "/etc/memcg-policy.conf"));
	CHECK(p.n_files == 4 && endswith(p.files[3], "/etc/memcg-policy.d/local.conf"));
	CHECK_INT(p.mode, MODE_AUTO);
	CHECK(endswith(origin(&p.mode_origin), "/etc/memcg-policy.d/local.conf:4"));
	CHECK_INT(p.accounting, ACCOUNTING_LITE);
	CHECK(!p.strict);
	CHECK(endswith(origin(&p.strict_origin), "/etc/memcg-policy.conf:2"));
	CHECK_INT(p.otherwise, OTHERWISE_OFF);
	policy_free(&p);

	/* a world-writable file is refused */
	f = xasprintf("%s/etc/memcg-policy.conf", dir);
	CHECK_INT(chmod(f, 0666), 0);
	policy_init(&p);
	capture_start();
	int rc = policy_load(&r, NULL, &p);
	char *msg = capture_end();
	CHECK_INT(rc, -EXIT_BADINPUT);
	CHECK(strstr(msg, "/etc/memcg-policy.conf: unsafe policy file") != NULL);
	free(msg);
	policy_free(&p);
	/* group-writable too */
	CHECK_INT(chmod(f, 0620), 0);
	policy_init(&p);
	capture_start();
	rc = policy_load(&r, NULL, &p);
	free(capture_end());
	CHECK_INT(rc, -EXIT_BADINPUT);
	policy_free(&p);
	CHECK_INT(chmod(f, 0644), 0);
	free(f);

	/* a directory in place of a drop-in */
	f = xasprintf("%s/etc/memcg-policy.d/sub.conf", dir);
	CHECK_INT(mkdir(f, 0755), 0);
	policy_init(&p);
	capture_start();
	rc = policy_load(&r, NULL, &p);
	msg = capture_end();
	CHECK_INT(rc, -EXIT_BADINPUT);
	CHECK(strstr(msg, "sub.conf: unsafe policy file: not a regular file") != NULL);
	free(msg);
	policy_free(&p);
	rmdir(f);
	free(f);

	/* an error in one file stops the load, with its name and line */
	f = xasprintf("%s/usr/lib/memcg-policy.d/20-b.conf", dir);
	write_file(f, "[policy]\n\nmode = maybe\n", 0644);
	free(f);
	policy_init(&p);
	capture_start();
	rc = policy_load(&r, NULL, &p);
	msg = capture_end();
	CHECK_INT(rc, -EXIT_BADINPUT);
	CHECK(strstr(msg, "/usr/lib/memcg-policy.d/20-b.conf:3: bad value 'maybe'") != NULL);
	CHECK_INT(p.n_files, 1);
	free(msg);
	policy_free(&p);

	root_close(&r);
	rm_rf(dir);
	free(dir);
}

TEST(load_config_file)
{
	char *dir = make_tmpdir();
	struct root r;
	CHECK_INT(root_open(&r, dir), 0);
	/* --config replaces the search: a policy in the root is not read */
	char *etc = xasprintf("%s/etc", dir);
	mkdir(etc, 0755);
	char *inroot = xasprintf("%s/etc/memcg-policy.conf", dir);
	write_file(inroot, "[policy]\naccounting = lite\n", 0644);

	char *f = xasprintf("%s/my.conf", dir);
	write_file(f, "[policy]\nmode = off\n", 0644);
	struct policy p;
	policy_init(&p);
	CHECK_INT(policy_load(&r, f, &p), 0);
	CHECK_INT(p.mode, MODE_OFF);
	CHECK_INT(p.accounting, ACCOUNTING_FULL);
	CHECK(p.n_files == 1 && streq(p.files[0], f));
	policy_free(&p);

	CHECK_INT(chmod(f, 0666), 0);
	policy_init(&p);
	capture_start();
	CHECK_INT(policy_load(&r, f, &p), -EXIT_BADINPUT);
	char *msg = capture_end();
	CHECK(strstr(msg, "unsafe policy file: writable by others") != NULL);
	free(msg);
	policy_free(&p);

	char *missing = xasprintf("%s/missing.conf", dir);
	policy_init(&p);
	capture_start();
	CHECK_INT(policy_load(&r, missing, &p), -EXIT_BADINPUT);
	msg = capture_end();
	CHECK(strstr(msg, missing) != NULL);
	free(msg);
	policy_free(&p);

	char *fifo = xasprintf("%s/fifo", dir);
	CHECK_INT(mkfifo(fifo, 0600), 0);
	policy_init(&p);
	capture_start();
	CHECK_INT(policy_load(&r, fifo, &p), -EXIT_BADINPUT); /* and does not hang */
	msg = capture_end();
	CHECK(strstr(msg, "not a regular file") != NULL);
	free(msg);
	policy_free(&p);

	policy_init(&p);
	capture_start();
	CHECK_INT(policy_load(&r, dir, &p), -EXIT_BADINPUT);
	free(capture_end());
	policy_free(&p);

	root_close(&r);
	rm_rf(dir);
	free(dir);
	free(etc);
	free(inroot);
	free(f);
	free(missing);
	free(fifo);
}

/* The context's loaders run once: a second call gives what the first
 * gave, a failure included (they said "loaded" before loading, and a
 * second call after a failure returned 0 with what was half read). */
TEST(context_loaders_give_their_first_result_again)
{
	char *dir = make_tmpdir();
	char *d = xasprintf("%s/etc", dir);
	mkdir(d, 0755);
	free(d);
	char *f = xasprintf("%s/etc/memcg-policy.conf", dir);
	write_file(f, "[policy]\nmode = sometimes\n", 0644);
	free(f);
	struct context ctx = { .lock_fd = -1 };
	CHECK_INT(root_open(&ctx.root, dir), 0);
	CHECK_INT(context_load_policy(&ctx), -EXIT_BADINPUT);
	CHECK_INT(context_load_policy(&ctx), -EXIT_BADINPUT);
	CHECK_INT(context_load_kernels(&ctx, NULL), -EXIT_BADINPUT);
	context_unload(&ctx);
	/* a good policy, no kernel in the root */
	f = xasprintf("%s/etc/memcg-policy.conf", dir);
	write_file(f, "[policy]\nmode = on\n", 0644);
	free(f);
	CHECK_INT(context_load_policy(&ctx), 0);
	CHECK_INT(context_load_kernels(&ctx, NULL), -EXIT_BADINPUT);
	CHECK_INT(context_load_kernels(&ctx, NULL), -EXIT_BADINPUT);
	context_free(&ctx);
	diag_reset();
	free(dir);
}

TEST_MAIN(T(defaults), T(names), T(every_key), T(value_spellings), T(comments_and_indentation),
	  T(crlf_bom_and_last_line), T(long_lines), T(error_lines), T(bad_values), T(duplicates),
	  T(error_leaves_policy_unchanged), T(merge_order), T(kernel_globs), T(shipped_conf),
	  T(set_mode_text), T(load_from_root), T(load_config_file), T(context_loaders_give_their_first_result_again))
