/* test-decide.c - decide() as a pure function: a table of every kernel kind
 * of DESIGN section 1 against every mode and every auto rule, with plain
 * structs (no files): the state the kernel will run with, the tokens to add
 * and to remove, keep, and the warnings that must (or must not) appear. */
#include <stdlib.h>

#include "decide/decide.h"
#include "test.h"

/* The kernel kinds of DESIGN section 1, as decide() sees them. */
static const struct decide_kernel K_MAINLINE = {
	.release = "6.1.0-41-amd64", .memcg_built = true, .default_state = MEMCG_DEFAULT_ON,
	.rule = RULE_DISABLE_WINS, .accepts_enable = false,
};
static const struct decide_kernel K_DEBIAN_OLD = {
	.release = "3.16.0-11-amd64", .memcg_built = true, .default_state = MEMCG_DEFAULT_OFF,
	.rule = RULE_LAST_WINS, .accepts_enable = true,
};
static const struct decide_kernel K_SUSE = {
	.release = "4.1.12-default", .memcg_built = true, .default_state = MEMCG_DEFAULT_OFF,
	.rule = RULE_LAST_WINS, .accepts_enable = true,
};
static const struct decide_kernel K_RPI_OLD = {
	.release = "6.6.51+rpt-rpi-v8", .memcg_built = true, .default_state = MEMCG_DEFAULT_OFF,
	.rule = RULE_ENABLE_WINS, .accepts_enable = true,
};
static const struct decide_kernel K_RPI_NEW = {
	.release = "6.12.25+rpt-rpi-v8", .memcg_built = true, .default_state = MEMCG_DEFAULT_OFF,
	.rule = RULE_LAST_WINS, .accepts_enable = true,
};
static const struct decide_kernel K_NOT_BUILT = {
	.release = "6.1.0-tiny", .memcg_built = false, .default_state = MEMCG_DEFAULT_ON,
	.rule = RULE_DISABLE_WINS,
};

#define D "cgroup_disable=memory"
#define E "cgroup_enable=memory"
#define LITE "cgroup.memory=nokmem,nosocket"
#define NOKMEM "cgroup.memory=nokmem"
#define NOSOCK "cgroup.memory=nosocket"

/* The system facts of an auto decision. */
enum sys_kind { SYS_NONE, SYS_PROGRAM, SYS_UNIT, SYS_SMALL_RAM, SYS_BIG_RAM };

struct row {
	const char *name;
	const struct decide_kernel *k;
	enum policy_mode mode;
	enum policy_otherwise otherwise;
	enum sys_kind sys;
	const char *configured;     /* the current command line (for keep) */
	enum memcg_state state;
	bool keep;
	const char *add;            /* space-separated, "" for none */
	const char *remove;
	const char *warning;        /* a substring one warning must have; NULL: no warning at all */
	const char *why;            /* how the deciding reason (status's headline) begins */
};

static const struct row rows[] = {
	/* mode = on / off on every kind */
	{ "mainline on", &K_MAINLINE, MODE_ON, 0, 0, NULL, STATE_ON, false, "", D " " NOKMEM " " NOSOCK, NULL , "mode = on" },
	{ "mainline off", &K_MAINLINE, MODE_OFF, 0, 0, NULL, STATE_OFF, false, D, E, NULL , "mode = off" },
	{ "debian 3.16 on", &K_DEBIAN_OLD, MODE_ON, 0, 0, NULL, STATE_ON, false, E, D " " NOKMEM " " NOSOCK, NULL , "mode = on" },
	{ "debian 3.16 off", &K_DEBIAN_OLD, MODE_OFF, 0, 0, NULL, STATE_OFF, false, "", E, NULL , "mode = off" },
	{ "suse proposal on", &K_SUSE, MODE_ON, 0, 0, NULL, STATE_ON, false, E, D " " NOKMEM " " NOSOCK, NULL , "mode = on" },
	{ "suse proposal off", &K_SUSE, MODE_OFF, 0, 0, NULL, STATE_OFF, false, "", E, NULL , "mode = off" },
	{ "rpi 6.6 on", &K_RPI_OLD, MODE_ON, 0, 0, NULL, STATE_ON, false, E, D " " NOKMEM " " NOSOCK, NULL , "mode = on" },
	{ "rpi 6.6 off", &K_RPI_OLD, MODE_OFF, 0, 0, NULL, STATE_OFF, false, "", E, NULL , "mode = off" },
	{ "rpi 6.12 on", &K_RPI_NEW, MODE_ON, 0, 0, NULL, STATE_ON, false, E, D " " NOKMEM " " NOSOCK, NULL , "mode = on" },
	{ "rpi 6.12 off", &K_RPI_NEW, MODE_OFF, 0, 0, NULL, STATE_OFF, false, "", E, NULL , "mode = off" },
	{ "not built on", &K_NOT_BUILT, MODE_ON, 0, 0, NULL, STATE_OFF, true, "", "", "not built" , "memcg not built into " },
	{ "not built off", &K_NOT_BUILT, MODE_OFF, 0, 0, NULL, STATE_OFF, true, "", "", "not built" , "memcg not built into " },
	{ "not built auto", &K_NOT_BUILT, MODE_AUTO, OTHERWISE_ON, SYS_PROGRAM, NULL, STATE_OFF, true, "", "", "not built" , "memcg not built into " },
	/* off while a program or a unit needs memcg: said */
	{ "mainline off, k3s installed", &K_MAINLINE, MODE_OFF, 0, SYS_PROGRAM, NULL, STATE_OFF, false, D, E,
	  "but k3s (/usr/local/bin/k3s) needs it", "mode = off" },
	{ "rpi 6.12 off, a unit with MemoryMax=", &K_RPI_NEW, MODE_OFF, 0, SYS_UNIT, NULL, STATE_OFF, false, "", E,
	  "web.service:4: MemoryMax= sets a memory limit", "mode = off" },
	{ "mainline on, k3s installed: no warning", &K_MAINLINE, MODE_ON, 0, SYS_PROGRAM, NULL, STATE_ON, false, "",
	  D " " NOKMEM " " NOSOCK, NULL, "mode = on" },
	/* auto: a program or a unit that needs memcg turns it on */
	{ "mainline auto program", &K_MAINLINE, MODE_AUTO, OTHERWISE_OFF, SYS_PROGRAM, D, STATE_ON, false, "",
	  D " " NOKMEM " " NOSOCK, NULL , "auto: a program that needs memcg" },
	{ "rpi 6.6 auto program", &K_RPI_OLD, MODE_AUTO, OTHERWISE_KEEP, SYS_PROGRAM, NULL, STATE_ON, false, E,
	  D " " NOKMEM " " NOSOCK, NULL , "auto: a program that needs memcg" },
	{ "debian 3.16 auto unit", &K_DEBIAN_OLD, MODE_AUTO, OTHERWISE_KEEP, SYS_UNIT, NULL, STATE_ON, false, E,
	  D " " NOKMEM " " NOSOCK, NULL , "auto: a systemd unit" },
	/* auto: RAM below min-ram turns it off; above falls through to otherwise */
	{ "mainline auto small ram", &K_MAINLINE, MODE_AUTO, OTHERWISE_ON, SYS_SMALL_RAM, NULL, STATE_OFF, false, D, E,
	  NULL , "auto: RAM 512M" },
	{ "rpi 6.12 auto small ram", &K_RPI_NEW, MODE_AUTO, OTHERWISE_ON, SYS_SMALL_RAM, NULL, STATE_OFF, false, "", E,
	  NULL , "auto: RAM 512M" },
	{ "mainline auto big ram otherwise off", &K_MAINLINE, MODE_AUTO, OTHERWISE_OFF, SYS_BIG_RAM, NULL, STATE_OFF,
	  false, D, E, NULL , "auto: otherwise = off" },
	{ "suse auto big ram otherwise on", &K_SUSE, MODE_AUTO, OTHERWISE_ON, SYS_BIG_RAM, NULL, STATE_ON, false, E,
	  D " " NOKMEM " " NOSOCK, NULL , "auto: otherwise = on" },
	/* auto: otherwise = keep: no opinion, the configured line's state */
	{ "mainline keep, configured off", &K_MAINLINE, MODE_AUTO, OTHERWISE_KEEP, SYS_NONE, "quiet " D, STATE_OFF, true,
	  "", "", NULL , "auto: otherwise = keep" },
	{ "mainline keep, configured nothing", &K_MAINLINE, MODE_AUTO, OTHERWISE_KEEP, SYS_NONE, "quiet", STATE_ON, true,
	  "", "", NULL , "auto: otherwise = keep" },
	{ "mainline keep, enable is not honoured", &K_MAINLINE, MODE_AUTO, OTHERWISE_KEEP, SYS_NONE, E, STATE_ON, true,
	  "", "", NULL , "auto: otherwise = keep" },
	{ "mainline keep, disable wins over a later enable", &K_MAINLINE, MODE_AUTO, OTHERWISE_KEEP, SYS_NONE, D " " E,
	  STATE_OFF, true, "", "", NULL , "auto: otherwise = keep" },
	{ "debian 3.16 keep, last wins", &K_DEBIAN_OLD, MODE_AUTO, OTHERWISE_KEEP, SYS_NONE, D " " E, STATE_ON, true, "",
	  "", NULL , "auto: otherwise = keep" },
	{ "rpi 6.6 keep, enable wins in any order", &K_RPI_OLD, MODE_AUTO, OTHERWISE_KEEP, SYS_NONE, E " " D, STATE_ON,
	  true, "", "", NULL , "auto: otherwise = keep" },
	{ "rpi 6.12 keep, last wins", &K_RPI_NEW, MODE_AUTO, OTHERWISE_KEEP, SYS_NONE, E " " D, STATE_OFF, true, "", "",
	  NULL , "auto: otherwise = keep" },
	{ "keep with an unknown configured line", &K_DEBIAN_OLD, MODE_AUTO, OTHERWISE_KEEP, SYS_NONE, NULL, STATE_OFF,
	  true, "", "", NULL , "auto: otherwise = keep" },
	/* auto: otherwise = kernel: the kernel's own default, ours removed */
	{ "mainline otherwise kernel", &K_MAINLINE, MODE_AUTO, OTHERWISE_KERNEL, SYS_NONE, D, STATE_ON, false, "", D " " E,
	  NULL , "auto: otherwise = kernel" },
	{ "rpi 6.6 otherwise kernel", &K_RPI_OLD, MODE_AUTO, OTHERWISE_KERNEL, SYS_NONE, E, STATE_OFF, false, "",
	  D " " E, NULL , "auto: otherwise = kernel" },
	/* unset mode behaves as auto (the built-in default) */
	{ "mainline unset mode = auto keep", &K_MAINLINE, MODE_UNSET, OTHERWISE_KEEP, SYS_NONE, "", STATE_ON, true, "",
	  "", NULL , "auto: otherwise = keep" },
	{ "rpi 6.6 unset mode, program", &K_RPI_OLD, MODE_UNSET, OTHERWISE_KEEP, SYS_PROGRAM, "", STATE_ON, false, E,
	  D " " NOKMEM " " NOSOCK, NULL , "auto: a program that needs memcg" },
};

static void split_words(const char *s, struct strv *out)
{
	memset(out, 0, sizeof(*out));
	char *copy = strdup(s), *save = NULL;
	for (char *w = strtok_r(copy, " ", &save); w; w = strtok_r(NULL, " ", &save))
		strv_pushdup(out, w);
	free(copy);
}

static bool strv_same(const struct strv *a, const struct strv *b)
{
	if (a->n != b->n)
		return false;
	for (size_t i = 0; i < a->n; i++)
		if (strcmp(a->v[i], b->v[i]) != 0)
			return false;
	return true;
}

static char *joined(const struct strv *v)
{
	size_t len = 1;
	for (size_t i = 0; i < v->n; i++)
		len += strlen(v->v[i]) + 1;
	char *s = calloc(1, len);
	for (size_t i = 0; i < v->n; i++) {
		if (i)
			strcat(s, " ");
		strcat(s, v->v[i]);
	}
	return s;
}

static void sys_facts(enum sys_kind kind, struct system_facts *sys)
{
	memset(sys, 0, sizeof(*sys));
	if (kind == SYS_PROGRAM)
		system_facts_add_program(sys, "k3s", "/usr/local/bin/k3s");
	if (kind == SYS_UNIT)
		system_facts_add_unit(sys, "web.service", "/etc/systemd/system/web.service", 4, "MemoryMax");
	if (kind == SYS_SMALL_RAM || kind == SYS_BIG_RAM) {
		sys->have_ram = true;
		sys->ram = (kind == SYS_SMALL_RAM ? 512ULL : 4096ULL) << 20;
		sys->ram_source = "assume-ram";
	}
}

static int check_row(const struct row *r)
{
	int before = test_failed_checks;
	struct policy p;
	policy_init(&p);
	p.mode = r->mode;
	p.otherwise = r->otherwise;
	p.has_min_ram = true;
	p.min_ram = 1ULL << 30;
	struct system_facts sys;
	sys_facts(r->sys, &sys);
	struct decision d;
	decide(&p, r->k, &sys, r->configured, &d);

	struct strv want_add, want_remove;
	split_words(r->add, &want_add);
	split_words(r->remove, &want_remove);
	_cleanup_free_ char *got_add = joined(&d.add), *got_remove = joined(&d.remove);
	if (d.state != r->state) {
		printf("  %s: state %s, expected %s\n", r->name, memcg_state_name(d.state), memcg_state_name(r->state));
		test_failed_checks++;
	}
	if (d.keep != r->keep) {
		printf("  %s: keep %d, expected %d\n", r->name, d.keep, r->keep);
		test_failed_checks++;
	}
	if (!strv_same(&d.add, &want_add)) {
		printf("  %s: add \"%s\", expected \"%s\"\n", r->name, got_add, r->add);
		test_failed_checks++;
	}
	if (!strv_same(&d.remove, &want_remove)) {
		printf("  %s: remove \"%s\", expected \"%s\"\n", r->name, got_remove, r->remove);
		test_failed_checks++;
	}
	bool found = false;
	for (size_t i = 0; i < d.warnings.n; i++)
		if (r->warning && strstr(d.warnings.v[i], r->warning))
			found = true;
	if (r->warning ? !found : d.warnings.n != 0) {
		printf("  %s: warnings (%zu) %s\n", r->name, d.warnings.n, d.warnings.n ? d.warnings.v[0] : "(none)");
		test_failed_checks++;
	}
	/* the reasons always start with the mode that applied */
	CHECK(d.reasons.n > 0 && strncmp(d.reasons.v[0], "mode = ", 7) == 0);
	/* the reason that decided, for status's headline */
	if (d.why >= d.reasons.n || strncmp(d.reasons.v[d.why], r->why, strlen(r->why)) != 0) {
		printf("  %s: deciding reason \"%s\", expected one beginning \"%s\"\n", r->name,
		       d.why < d.reasons.n ? d.reasons.v[d.why] : "(none)", r->why);
		test_failed_checks++;
	}
	/* every reason as data too (--json), the mode's first with the mode
	 * that applied, the deciding one named by a rule of the contract
	 * that fits how its line begins */
	CHECK_INT(d.n_info, d.reasons.n);
	if (d.n_info > 0 && d.why < d.n_info) {
		CHECK(streq(d.info[0].rule, "mode") || streq(d.info[0].rule, "kernel_mode"));
		CHECK(d.info[0].value && streq(d.info[0].value, policy_mode_name(d.mode)));
		static const struct {
			const char *begins, *rule;
		} rules[] = { { "mode = ", "mode" },
			      { "auto: otherwise", "otherwise" },
			      { "auto: RAM", "min_ram" },
			      { "auto: a program", "needs_memcg" },
			      { "auto: a systemd unit", "needs_memcg_units" },
			      { "memcg not built", "memcg_not_built" } };
		const char *w = d.reasons.v[d.why], *want = NULL;
		for (size_t i = 0; i < ARRAY_SIZE(rules); i++)
			if (startswith(w, rules[i].begins))
				want = rules[i].rule;
		if (strstr(w, ", but the kernel will still run"))
			want = "kernel_overrides";
		if (want && !(streq(d.info[d.why].rule, want) ||
			      (streq(want, "mode") && streq(d.info[d.why].rule, "kernel_mode")))) {
			printf("  %s: deciding reason's rule \"%s\", expected \"%s\"\n", r->name, d.info[d.why].rule,
			       want);
			test_failed_checks++;
		}
	}
	/* the decided tokens give the decided state on this kernel */
	if (!d.keep && r->k->memcg_built) {
		struct decide_kernel k = *r->k;
		CHECK_INT(cmdline_memcg_state(&k, got_add), d.state);
	}
	strv_free(&want_add);
	strv_free(&want_remove);
	system_facts_free(&sys);
	decision_free(&d);
	policy_free(&p);
	return test_failed_checks == before;
}

TEST(decide_table)
{
	for (size_t i = 0; i < ARRAY_SIZE(rows); i++)
		printf("%s: decide: %s\n", check_row(&rows[i]) ? "PASS" : "FAIL", rows[i].name);
}

/* mode = off on a kernel whose built-in line overrides the loader's (memcg
 * stays on): no warning that what needs memcg will fail, since it will
 * not; the override is warned of */
TEST(decide_off_but_stays_on_no_needs_warning)
{
	struct decide_kernel k = K_MAINLINE;
	k.builtin_cmdline = "root=/dev/vda1";
	k.builtin_mode = BUILTIN_OVERRIDE;
	struct policy p;
	policy_init(&p);
	p.mode = MODE_OFF;
	struct system_facts sys;
	sys_facts(SYS_PROGRAM, &sys);
	struct decision d;
	decide(&p, &k, &sys, NULL, &d);
	CHECK_INT(d.state, STATE_ON);
	bool needs = false, override = false;
	for (size_t i = 0; i < d.warnings.n; i++) {
		needs |= strstr(d.warnings.v[i], "needs it") != NULL;
		override |= strstr(d.warnings.v[i], "ignores the boot loader's arguments") != NULL;
	}
	CHECK(!needs);
	CHECK(override);
	decision_free(&d);
	system_facts_free(&sys);
	policy_free(&p);
}

/* accounting = lite adds the cheaper middle ground where memcg is turned on */
TEST(decide_lite)
{
	struct policy p;
	policy_init(&p);
	p.mode = MODE_ON;
	p.accounting = ACCOUNTING_LITE;
	struct decision d;
	decide(&p, &K_RPI_OLD, NULL, NULL, &d);
	_cleanup_free_ char *add = joined(&d.add);
	CHECK_STR(add, E " " LITE);
	CHECK_INT(d.state, STATE_ON);
	decision_free(&d);
	p.mode = MODE_OFF;
	decide(&p, &K_RPI_OLD, NULL, NULL, &d);
	CHECK_INT(d.add.n, 0);
	decision_free(&d);
	policy_free(&p);
}

/* A default-off kernel without cgroup_enable=: on cannot be reached. */
TEST(decide_cannot_turn_on)
{
	struct decide_kernel k = K_DEBIAN_OLD;
	k.accepts_enable = false;
	struct policy p;
	policy_init(&p);
	p.mode = MODE_ON;
	struct decision d;
	decide(&p, &k, NULL, NULL, &d);
	CHECK_INT(d.state, STATE_OFF);
	CHECK_INT(d.add.n, 0);
	CHECK(d.warnings.n == 1 && strstr(d.warnings.v[0], "cannot be turned on"));
	CHECK(d.unmeetable);
	decision_free(&d);
	/* the same kernel known to take cgroup_enable=: met */
	k.accepts_enable = true;
	decide(&p, &k, NULL, NULL, &d);
	CHECK_INT(d.state, STATE_ON);
	CHECK(!d.unmeetable);
	decision_free(&d);
	/* off asked: nothing to meet */
	k.accepts_enable = false;
	p.mode = MODE_OFF;
	decide(&p, &k, NULL, NULL, &d);
	CHECK(!d.unmeetable);
	decision_free(&d);
	policy_free(&p);
}

/* Built-in command lines: prepended, appended, override. */
TEST(decide_builtin_cmdline)
{
	struct policy p;
	policy_init(&p);
	struct decision d;

	struct decide_kernel k = K_MAINLINE;
	k.builtin_cmdline = D;
	k.builtin_mode = BUILTIN_PREPEND;
	p.mode = MODE_ON; /* mainline: cgroup_disable wins in any order, nothing turns it back on */
	decide(&p, &k, NULL, NULL, &d);
	CHECK_INT(d.state, STATE_OFF);
	CHECK_INT(d.add.n, 0);
	CHECK(d.warnings.n == 1 && strstr(d.warnings.v[0], "cannot be turned on"));
	CHECK(!d.unmeetable); /* a built-in line turns it off: no parameter would help */
	decision_free(&d);

	k = K_DEBIAN_OLD;
	k.builtin_cmdline = D;
	k.builtin_mode = BUILTIN_PREPEND; /* last wins: the boot loader's enable comes later */
	decide(&p, &k, NULL, NULL, &d);
	CHECK_INT(d.state, STATE_ON);
	CHECK_INT(d.warnings.n, 0);
	decision_free(&d);

	k.builtin_mode = BUILTIN_APPEND; /* appended last: it wins */
	decide(&p, &k, NULL, NULL, &d);
	CHECK_INT(d.state, STATE_OFF);
	CHECK(d.warnings.n == 1);
	decision_free(&d);

	k = K_MAINLINE;
	k.builtin_cmdline = "console=ttyS0";
	k.builtin_mode = BUILTIN_OVERRIDE;
	p.mode = MODE_OFF; /* the boot loader is ignored: off cannot be reached */
	decide(&p, &k, NULL, NULL, &d);
	CHECK_INT(d.state, STATE_ON);
	bool override = false;
	for (size_t i = 0; i < d.warnings.n; i++)
		override |= strstr(d.warnings.v[i], "ignores the boot loader") != NULL;
	CHECK(override);
	decision_free(&d);
	policy_free(&p);
}

/* [kernel GLOB] mode wins over [policy] mode; the last matching section. */
TEST(decide_kernel_section)
{
	struct policy p;
	policy_init(&p);
	p.mode = MODE_OFF;
	struct policy_kernel_section secs[2] = {
		{ .glob = (char *)"6.6.*", .mode = MODE_ON, .default_state = -1, .accepts_enable = -1,
		  .mode_origin = { .file = (char *)"/etc/memcg-policy.conf", .line = 7 } },
		{ .glob = (char *)"*-rpi-v8", .mode = MODE_OFF, .default_state = -1, .accepts_enable = -1,
		  .mode_origin = { .file = (char *)"/etc/memcg-policy.d/pi.conf", .line = 2 } },
	};
	p.kernels = secs;
	p.n_kernels = 1;
	struct decision d;
	decide(&p, &K_RPI_OLD, NULL, NULL, &d);
	CHECK_INT(d.state, STATE_ON);
	CHECK(d.reasons.n > 0 && strstr(d.reasons.v[0], "[kernel 6.6.*]") &&
	      strstr(d.reasons.v[0], "/etc/memcg-policy.conf:7"));
	decision_free(&d);
	p.n_kernels = 2;
	decide(&p, &K_RPI_OLD, NULL, NULL, &d);
	CHECK_INT(d.state, STATE_OFF);
	CHECK(d.reasons.n > 0 && strstr(d.reasons.v[0], "/etc/memcg-policy.d/pi.conf:2"));
	decision_free(&d);
	decide(&p, &K_MAINLINE, NULL, NULL, &d); /* no section matches: [policy] mode */
	CHECK_INT(d.state, STATE_OFF);
	CHECK_INT(d.mode, MODE_OFF);
	decision_free(&d);
	p.kernels = NULL;
	p.n_kernels = 0;
	policy_free(&p);
}

/* A long file name keeps its line number in the reasons (--explain). */
TEST(decide_long_origin)
{
	struct policy p;
	policy_init(&p);
	p.mode = MODE_OFF;
	char name[2048];
	memset(name, 'd', sizeof(name));
	memcpy(name, "/mnt/", 5);
	strcpy(name + sizeof(name) - 20, "/memcg-policy.conf");
	p.mode_origin.file = name;
	p.mode_origin.line = 42;
	struct decision d;
	decide(&p, &K_MAINLINE, NULL, NULL, &d);
	CHECK(d.reasons.n > 0 && strstr(d.reasons.v[0], "/memcg-policy.conf:42"));
	decision_free(&d);
	p.mode_origin.file = NULL;
	policy_free(&p);
}

int main(void)
{
	static const struct test_case cases[] = {
		{ "decide: table", decide_table },
		{ "decide: accounting = lite", decide_lite },
		{ "decide: default off without cgroup_enable=", decide_cannot_turn_on },
		{ "decide: built-in command lines", decide_builtin_cmdline },
		{ "decide: [kernel GLOB] sections", decide_kernel_section },
		{ "decide: long policy paths keep FILE:LINE", decide_long_origin },
		{ "decide: off on a kernel that stays on: no needs warning", decide_off_but_stays_on_no_needs_warning },
	};
	return test_run_all(cases, ARRAY_SIZE(cases));
}
