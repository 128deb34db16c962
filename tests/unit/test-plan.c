/* test-plan.c - the plan of one slot (plan/plan.h plan_slot), as a table:
 * a slot's kind, kernel and content, the decision of its kernel, the
 * kernels the evaluation knows, --kernel; the state, whether it changes,
 * its new content, the tokens added and removed, the note, or the
 * refusal. No file is read: the slot's bytes are in the row. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/diag.h"
#include "lib/util.h"
#include "plan/plan.h"
#include "test.h"

#define V1 "6.1.0-18-amd64"
#define V2 "6.1.0-21-amd64"
#define RPI "6.12.25+rpt-rpi-2712"
#define DIS "cgroup_disable=memory"
#define ENA "cgroup_enable=memory"

enum want_d { D_OFF, D_ON, D_KEEP };

struct row {
	const char *name;
	enum slot_kind kind;
	const char *slot_kernel; /* NULL: a global slot (the default kernel's) */
	bool exists, create, unmanaged;
	const char *content;
	enum want_d d;	    /* the decision of the slot's kernel */
	const char *arch;   /* the kernel's, for COMMAND_LINE_SIZE; NULL unknown */
	const char *prefix; /* the Raspberry Pi firmware's device tree prefix */
	const char *only;   /* --kernel */
	/* expected */
	int rc;
	enum slot_state state;
	bool changed;
	const char *new_content; /* NULL: none (unmanaged, read-only) */
	const char *added, *removed; /* space-separated; "" none */
	const char *note;	     /* the start of c.note; NULL: none */
};

#define ENTRY(opts) "title Debian\nversion " V1 "\nlinux /vmlinuz-" V1 "\noptions " opts "\n"
#define LONG_A "a=" /* a line near arm64's 2048 bytes, built at run time */

static char long_line[2100];

static const struct row rows[] = {
	{ "bls, off: the token added", SLOT_BLS, V1, true, false, false, ENTRY("root=/dev/sda1 ro"), D_OFF,
	  "x86_64", NULL, NULL, 0, SLOT_DRIFT, true, ENTRY("root=/dev/sda1 ro " DIS), DIS, "", NULL },
	{ "bls, off, already there: in sync", SLOT_BLS, V1, true, false, false, ENTRY("root=/dev/sda1 ro " DIS),
	  D_OFF, "x86_64", NULL, NULL, 0, SLOT_IN_SYNC, false, ENTRY("root=/dev/sda1 ro " DIS), "", "", NULL },
	{ "bls, off over the admin's cgroup_enable=memory", SLOT_BLS, V1, true, false, false,
	  ENTRY("root=/dev/sda1 " ENA " ro"), D_OFF, "x86_64", NULL, NULL, 0, SLOT_DRIFT, true,
	  ENTRY("root=/dev/sda1 ro " DIS), DIS, ENA, NULL },
	{ "bls, on: the admin's cgroup_disable=memory taken out", SLOT_BLS, V1, true, false, false,
	  ENTRY(DIS " root=/dev/sda1 ro"), D_ON, "x86_64", NULL, NULL, 0, SLOT_DRIFT, true,
	  ENTRY("root=/dev/sda1 ro"), "", DIS, NULL },
	{ "bls, keep: nothing changes whatever it says", SLOT_BLS, V1, true, false, false,
	  ENTRY(DIS " root=/dev/sda1 " ENA), D_KEEP, "x86_64", NULL, NULL, 0, SLOT_IN_SYNC, false,
	  ENTRY(DIS " root=/dev/sda1 " ENA), "", "", NULL },
	{ "kernel-cmdline, a global slot: the default kernel's decision", SLOT_KERNEL_CMDLINE, NULL, true, false,
	  false, "root=/dev/sda1 quiet\n", D_OFF, "x86_64", NULL, NULL, 0, SLOT_DRIFT, true,
	  "root=/dev/sda1 quiet " DIS "\n", DIS, "", NULL },
	{ "kernel-cmdline missing, on: nothing to put in it, not created", SLOT_KERNEL_CMDLINE, NULL, false, true,
	  false, "root=/dev/sda1\n", D_ON, "x86_64", NULL, NULL, 0, SLOT_MISSING, false, "root=/dev/sda1\n", "", "",
	  "not there, and not needed" },
	{ "kernel-cmdline missing, off: created with the token", SLOT_KERNEL_CMDLINE, NULL, false, true, false,
	  "root=/dev/sda1\n", D_OFF, "x86_64", NULL, NULL, 0, SLOT_MISSING, true, "root=/dev/sda1 " DIS "\n", DIS,
	  "", NULL },
	{ "an unmanaged slot is never edited", SLOT_BLS, V1, true, false, true, ENTRY("root=/dev/sda1"), D_OFF,
	  "x86_64", NULL, NULL, 0, SLOT_UNMANAGED, false, NULL, "", "", NULL },
	{ "a slot of a kernel not installed", SLOT_BLS, "5.10.0-9-amd64", true, false, false,
	  ENTRY("root=/dev/sda1"), D_OFF, "x86_64", NULL, NULL, 0, SLOT_UNMANAGED, false, NULL, "", "",
	  "kernel 5.10.0-9-amd64 is not installed in the root" },
	{ "--kernel: another kernel's slot is left", SLOT_BLS, "5.10.0-9-amd64", true, false, false,
	  ENTRY("root=/dev/sda1"), D_OFF, "x86_64", NULL, V1, 0, SLOT_UNMANAGED, false, NULL, "", "",
	  "belongs to kernel 5.10.0-9-amd64, not to " V1 " (--kernel)" },
	{ "an item that cannot be taken out of its list exactly: refused", SLOT_KERNEL_CMDLINE, NULL, true, false,
	  false, "root=/dev/sda1 cgroup_disable=memory,\"a b\",c\n", D_ON, "x86_64", NULL, NULL, -EXIT_BADINPUT,
	  SLOT_DRIFT, false, NULL, "", "", NULL },
	{ "cmdline.txt whose line fits alone but not after the firmware's prefix: refused", SLOT_RPI, RPI, true,
	  false, false, LONG_A, D_OFF, "arm64", "reboot=w coherent_pool=1M 8250.nr_uarts=1 pci=pcie_bus_safe", NULL,
	  -EXIT_BADINPUT, SLOT_DRIFT, false, NULL, "", "", NULL },
	{ "cmdline.txt, the same line without a prefix: edited", SLOT_RPI, RPI, true, false, false, LONG_A, D_OFF,
	  "arm64", NULL, NULL, 0, SLOT_DRIFT, true, NULL, DIS, "", NULL },
	{ "cmdline.txt, a kernel of unknown architecture: no limit known, edited", SLOT_RPI, RPI, true, false,
	  false, LONG_A, D_OFF, NULL, "reboot=w coherent_pool=1M 8250.nr_uarts=1 pci=pcie_bus_safe", NULL, 0,
	  SLOT_DRIFT, true, NULL, DIS, "", NULL },
};

static void decision_for(enum want_d w, struct decision *d)
{
	memset(d, 0, sizeof(*d));
	if (w == D_KEEP) {
		d->keep = true;
		return;
	}
	d->state = w == D_OFF ? STATE_OFF : STATE_ON;
	d->mode = w == D_OFF ? MODE_OFF : MODE_ON;
	if (w == D_OFF)
		strv_pushdup(&d->add, DIS);
	strv_pushdup(&d->remove, w == D_OFF ? ENA : DIS);
}

static char *joined(const struct strv *v)
{
	struct strbuf sb = { 0 };
	for (size_t i = 0; i < v->n; i++)
		sb_appendf(&sb, "%s%s", i ? " " : "", v->v[i]);
	return sb_take(&sb);
}

static bool run_row(const struct row *r)
{
	int before = test_failed_checks;
	/* the evaluation: V1 (the default), V2 and the Pi kernel installed;
	 * the row's decision is its slot's kernel's, the others keep */
	struct kernel k[3] = { { .version = (char *)V1 }, { .version = (char *)V2 }, { .version = (char *)RPI } };
	struct kernel_decision kd[3] = { { .k = &k[0] }, { .k = &k[1] }, { .k = &k[2] } };
	const char *mine = r->slot_kernel ? r->slot_kernel : V1;
	for (size_t i = 0; i < 3; i++) {
		k[i].kc.arch = (char *)r->arch;
		k[i].fw_prefix = (char *)r->prefix;
		decision_for(streq(k[i].version, mine) ? r->d : D_KEEP, &kd[i].d);
	}
	struct evaluation ev = { .kd = kd, .n_kd = 3, .def = &kd[0] };
	const char *content = r->content == (const char *)LONG_A ? long_line : r->content;
	struct slot s = { .kind = r->kind,
			  .path = (char *)"/x",
			  .kernel = (char *)r->slot_kernel,
			  .exists = r->exists,
			  .create = r->create,
			  .unmanaged = r->unmanaged,
			  .content = (char *)content,
			  .len = content ? strlen(content) : 0 };
	struct slot_change c = { 0 };
	int rc = plan_slot(&ev, &s, &c, r->only);
	if (rc != r->rc) {
		printf("  %s: returned %d, expected %d\n", r->name, rc, r->rc);
		test_failed_checks++;
	}
	if (rc == 0) {
		if (c.state != r->state || c.changed != r->changed) {
			printf("  %s: state %s changed %d, expected %s %d\n", r->name, slot_state_name(c.state), c.changed,
			       slot_state_name(r->state), r->changed);
			test_failed_checks++;
		}
		if (r->new_content && !(c.new_content && streq(c.new_content, r->new_content))) {
			printf("  %s: new content \"%s\", expected \"%s\"\n", r->name,
			       c.new_content ? c.new_content : "(none)", r->new_content);
			test_failed_checks++;
		}
		if (r->state == SLOT_UNMANAGED)
			CHECK(c.new_content == NULL);
		if (c.new_content && r->changed && r->state != SLOT_MISSING) {
			/* what it says it added and took out, and nothing else */
			_cleanup_free_ char *a = joined(&c.added), *m = joined(&c.removed);
			if (!streq(a, r->added) || !streq(m, r->removed)) {
				printf("  %s: added \"%s\" removed \"%s\", expected \"%s\" and \"%s\"\n", r->name, a, m,
				       r->added, r->removed);
				test_failed_checks++;
			}
		}
		const char *note = c.note;
		if (r->note ? !(note && startswith(note, r->note)) : note != NULL) {
			printf("  %s: note \"%s\", expected \"%s\"\n", r->name, note ? note : "(none)",
			       r->note ? r->note : "(none)");
			test_failed_checks++;
		}
	} else {
		/* a refusal is said, with the slot's path */
		const struct diagnostic *e = diag_first_error();
		CHECK(e && strstr(e->message, "/x") != NULL);
	}
	diag_reset();
	free(c.new_content);
	free(c.note);
	strv_free(&c.added);
	strv_free(&c.removed);
	for (size_t i = 0; i < 3; i++)
		decision_free(&kd[i].d);
	return test_failed_checks == before;
}

TEST(plan_table)
{
	/* a cmdline.txt of 2000 bytes: 2047 is what an arm64 kernel keeps;
	 * with the token (22) it fits, with a prefix of 61 and its space
	 * before it too, it does not */
	memset(long_line, 'x', 2000 - 1);
	memcpy(long_line, LONG_A, 2);
	long_line[2000 - 1] = '\n';
	long_line[2000] = '\0';
	for (size_t i = 0; i < ARRAY_SIZE(rows); i++)
		printf("%s: plan: %s\n", run_row(&rows[i]) ? "PASS" : "FAIL", rows[i].name);
}

TEST_MAIN(T(plan_table))
