/* test-revert.c - revert's plan as pure functions: the kind of a journaled
 * path, each kind's undo of a record (slot_undo), the plan of a journal
 * (revert_plan_record) and of the entries copied from /etc/kernel/cmdline
 * (revert_plan_copies), with plain structs and no files. */
#include <stdlib.h>
#include <string.h>

#include "lib/diag.h"
#include "slots/grub/grub.h"
#include "facts/journal.h"
#include "plan/revert.h"
#include "slots/slot.h"
#include "slots/table.h"
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

static struct journal_entry entry(const char *path, const char *original, const char *written, const char *added,
				  const char *removed)
{
	struct journal_entry e = { .path = (char *)path, .had_original = original != NULL,
				   .original = (char *)original, .original_len = original ? strlen(original) : 0,
				   .written = (char *)written, .written_len = strlen(written) };
	if (added)
		strv_pushdup(&e.added, added);
	if (removed)
		strv_pushdup(&e.removed, removed);
	return e;
}

static void entry_free(struct journal_entry *e)
{
	strv_free(&e->added);
	strv_free(&e->removed);
}

TEST(path_kinds)
{
	static const struct {
		const char *path;
		enum slot_kind kind;
	} cases[] = {
		{ "/etc/kernel/cmdline", SLOT_KERNEL_CMDLINE },
		{ "/boot/loader/entries/a-6.1.conf", SLOT_BLS },
		{ "/efi/loader/entries/x.conf", SLOT_BLS },
		{ "/boot/efi/loader/entries/x.conf", SLOT_BLS },
		{ "/etc/default/grub", SLOT_GRUB_DEFAULT },
		{ "/etc/default/grub.d/99-memcg-policy.cfg", SLOT_GRUB_DROPIN },
		{ "/var/lib/memcg-policy/grub.tokens", SLOT_GRUB_TOKENS },
		{ "/boot/grub2/grubenv", SLOT_GRUBENV },
		{ "/boot/grub/grubenv", SLOT_GRUBENV },
		{ "/boot/firmware/cmdline.txt", SLOT_RPI },
		{ "/boot/cmdline.txt", SLOT_RPI },
		{ "/etc/default/raspi-extra-cmdline", SLOT_RPI_EXTRA },
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		enum slot_kind k = SLOT_UKI;
		CHECK(slot_kind_of_path(cases[i].path, &k));
		CHECK_STR(slot_kind_name(k), slot_kind_name(cases[i].kind));
	}
	CHECK(!slot_kind_of_path("/etc/default/grub.d/50-other.cfg", NULL));
	CHECK(!slot_kind_of_path("/boot/grub/grub.cfg", NULL));
	/* the menu inputs are GRUB's, the others are not */
	CHECK(slot_kind_feeds_menu(SLOT_GRUB_DEFAULT) && slot_kind_feeds_menu(SLOT_GRUB_DROPIN));
	CHECK(slot_kind_feeds_menu(SLOT_GRUB_TOKENS) && slot_kind_feeds_menu(SLOT_GRUBENV));
	CHECK(!slot_kind_feeds_menu(SLOT_BLS) && !slot_kind_feeds_menu(SLOT_KERNEL_CMDLINE) &&
	      !slot_kind_feeds_menu(SLOT_RPI));
	CHECK(slot_kind_writes(SLOT_GRUBENV) == SLOT_WRITES_KERNELOPTS);
	CHECK(slot_kind_writes(SLOT_GRUB_CFG) == SLOT_WRITES_NOTHING && slot_kind_writes(SLOT_UKI) == SLOT_WRITES_NOTHING);
	CHECK(slot_kind_writes(SLOT_BLS) == SLOT_WRITES_FILE);
}

/* Every kind that writes a file: as the tool wrote it, the original comes
 * back byte for byte; changed since, the tool's token goes and the
 * admin's comes back, every other byte kept. */
TEST(undo_text_kinds)
{
	static const struct {
		enum slot_kind kind;
		const char *original, *written, *now, *want_now;
	} cases[] = {
		{ SLOT_KERNEL_CMDLINE, "root=/dev/sda1 ro  quiet\n", "root=/dev/sda1 ro  quiet cgroup_disable=memory\n",
		  "root=/dev/sda1 ro  quiet cgroup_disable=memory splash\n", "root=/dev/sda1 ro  quiet splash\n" },
		{ SLOT_RPI, "console=serial0,115200 rootwait\n", "console=serial0,115200 rootwait cgroup_disable=memory\n",
		  "console=tty1 rootwait cgroup_disable=memory\n", "console=tty1 rootwait\n" },
		{ SLOT_BLS, "title A\noptions root=UUID=x ro\n", "title A\noptions root=UUID=x ro cgroup_disable=memory\n",
		  "title B\noptions root=UUID=x ro cgroup_disable=memory\n", "title B\noptions root=UUID=x ro\n" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct journal_entry e = entry("/x", cases[i].original, cases[i].written, "cgroup_disable=memory", NULL);
		struct slot_undo u;
		slot_undo(cases[i].kind, &e, cases[i].written, strlen(cases[i].written), &u);
		CHECK(u.action == UNDO_WRITE);
		CHECK_STR(u.content, cases[i].original);
		CHECK_INT((long)u.len, (long)strlen(cases[i].original));
		CHECK_STR(u.cur, cases[i].written);
		slot_undo_free(&u);
		slot_undo(cases[i].kind, &e, cases[i].now, strlen(cases[i].now), &u);
		CHECK(u.action == UNDO_WRITE);
		CHECK_STR(u.content, cases[i].want_now);
		slot_undo_free(&u);
		/* already without the tool's token: nothing to do */
		slot_undo(cases[i].kind, &e, cases[i].want_now, strlen(cases[i].want_now), &u);
		CHECK(u.action == UNDO_NOTHING && !u.why);
		slot_undo_free(&u);
		/* gone: nothing */
		slot_undo(cases[i].kind, &e, NULL, 0, &u);
		CHECK(u.action == UNDO_NOTHING);
		slot_undo_free(&u);
		entry_free(&e);
	}
}

TEST(undo_puts_back_the_admins_token)
{
	struct journal_entry e = entry("/etc/kernel/cmdline", "root=/dev/sda1 cgroup_disable=memory quiet\n",
				       "root=/dev/sda1 quiet\n", NULL, "cgroup_disable=memory");
	struct slot_undo u;
	const char *now = "root=/dev/sda1 quiet splash\n";
	slot_undo(SLOT_KERNEL_CMDLINE, &e, now, strlen(now), &u);
	CHECK(u.action == UNDO_WRITE);
	CHECK(strstr(u.content, "cgroup_disable=memory") != NULL);
	CHECK(strstr(u.content, "splash") != NULL);
	slot_undo_free(&u);
	entry_free(&e);
}

TEST(undo_created_file_is_deleted)
{
	const char *w = "root=/dev/sda1 cgroup_disable=memory\n";
	struct journal_entry e = entry("/etc/kernel/cmdline", NULL, w, "cgroup_disable=memory", NULL);
	struct slot_undo u;
	slot_undo(SLOT_KERNEL_CMDLINE, &e, w, strlen(w), &u);
	CHECK(u.action == UNDO_DELETE);
	slot_undo_free(&u);
	/* changed since: the admin's edit stays, the tool's token goes */
	const char *now = "root=/dev/sda2 cgroup_disable=memory\n";
	slot_undo(SLOT_KERNEL_CMDLINE, &e, now, strlen(now), &u);
	CHECK(u.action == UNDO_WRITE);
	CHECK_STR(u.content, "root=/dev/sda2\n");
	slot_undo_free(&u);
	entry_free(&e);
}

/* A power cut after the journal, before the file: the record says the
 * tool wrote the original back (and took its token out of `added`), the
 * file still has what the tool left before. That is the tool's too: the
 * original comes back. */
TEST(undo_write_that_never_landed)
{
	const char *orig = "options root=x ro\n", *before = "options root=x ro cgroup_disable=memory\n";
	struct journal_entry e = entry("/boot/loader/entries/a.conf", orig, orig, NULL, NULL);
	e.before = (char *)before;
	e.before_len = strlen(before);
	struct slot_undo u;
	slot_undo(SLOT_BLS, &e, before, strlen(before), &u);
	CHECK(u.action == UNDO_WRITE);
	CHECK_STR(u.content, orig);
	slot_undo_free(&u);
	/* without the content before, the token would stay: the test can fail */
	e.before = NULL;
	e.before_len = 0;
	slot_undo(SLOT_BLS, &e, before, strlen(before), &u);
	CHECK(u.action == UNDO_NOTHING);
	slot_undo_free(&u);
	entry_free(&e);
}

/* grub.tokens is the tool's own: it goes whatever it holds. */
TEST(undo_grub_tokens_goes)
{
	struct journal_entry e = entry(GRUB_TOKENS_PATH, NULL, "add cgroup_disable=memory\n", NULL, NULL);
	struct slot_undo u;
	const char *now = "add cgroup_enable=memory\n";
	slot_undo(SLOT_GRUB_TOKENS, &e, now, strlen(now), &u);
	CHECK(u.action == UNDO_DELETE);
	slot_undo_free(&u);
	entry_free(&e);
}

/* /etc/default/grub changed since: only the marked line goes. */
TEST(undo_grub_default_unmarks)
{
	const char *orig = "GRUB_TIMEOUT=5\nGRUB_CMDLINE_LINUX=\"quiet\"\n";
	char *written = xasprintf("%s%s\n", orig, marked_line());
	char *now = xasprintf("GRUB_TIMEOUT=0\nGRUB_CMDLINE_LINUX=\"quiet\"\n%s\n# the admin's\n", marked_line());
	struct journal_entry e = entry(GRUB_DEFAULT_PATH, orig, written, NULL, NULL);
	struct slot_undo u;
	slot_undo(SLOT_GRUB_DEFAULT, &e, written, strlen(written), &u);
	CHECK(u.action == UNDO_WRITE);
	CHECK_STR(u.content, orig);
	slot_undo_free(&u);
	slot_undo(SLOT_GRUB_DEFAULT, &e, now, strlen(now), &u);
	CHECK(u.action == UNDO_WRITE);
	CHECK_STR(u.content, "GRUB_TIMEOUT=0\nGRUB_CMDLINE_LINUX=\"quiet\"\n# the admin's\n");
	slot_undo_free(&u);
	entry_free(&e);
	free(written);
	free(now);
}

static char *grubenv(const char *kernelopts)
{
	struct strbuf b = { 0 };
	sb_append(&b, "# GRUB Environment Block\n");
	if (kernelopts)
		sb_appendf(&b, "kernelopts=%s\n", kernelopts);
	sb_append(&b, "saved_entry=x\n");
	while (b.len < 1024)
		sb_appendc(&b, '#');
	return sb_take(&b);
}

/* grubenv: the record holds kernelopts values; the undo is a value. */
TEST(undo_grubenv_value)
{
	struct journal_entry e = entry("/boot/grub2/grubenv", "root=/dev/vda2 ro rhgb",
				       "root=/dev/vda2 ro rhgb cgroup_disable=memory", "cgroup_disable=memory", NULL);
	char *env = grubenv("root=/dev/vda2 ro rhgb cgroup_disable=memory");
	struct slot_undo u;
	slot_undo(SLOT_GRUBENV, &e, env, strlen(env), &u);
	CHECK(u.action == UNDO_WRITE);
	CHECK_STR(u.content, "root=/dev/vda2 ro rhgb");
	CHECK_STR(u.cur, "root=/dev/vda2 ro rhgb cgroup_disable=memory");
	slot_undo_free(&u);
	free(env);
	env = grubenv("root=/dev/vda3 ro cgroup_disable=memory quiet");
	slot_undo(SLOT_GRUBENV, &e, env, strlen(env), &u);
	CHECK(u.action == UNDO_WRITE);
	CHECK_STR(u.content, "root=/dev/vda3 ro quiet");
	slot_undo_free(&u);
	free(env);
	env = grubenv(NULL);
	slot_undo(SLOT_GRUBENV, &e, env, strlen(env), &u);
	CHECK(u.action == UNDO_NOTHING);
	CHECK(u.why != NULL);
	slot_undo_free(&u);
	free(env);
	entry_free(&e);
}

/* The plan of a journal: one item per file that changes, every record
 * ends, a GRUB input asks for a regeneration. */
TEST(plan_of_records)
{
	struct root r = { .live = true, .path = (char *)"/" };
	struct journal_entry a = entry("/etc/kernel/cmdline", "root=x\n", "root=x cgroup_disable=memory\n",
				       "cgroup_disable=memory", NULL);
	struct journal_entry b = entry("/boot/loader/entries/gone.conf", "options a\n", "options a b\n", "b", NULL);
	struct journal_entry c = entry(GRUB_TOKENS_PATH, NULL, "add cgroup_disable=memory\n", NULL, NULL);
	struct revert_plan p = { 0 };
	revert_plan_record(&p, &r, &a, a.written, a.written_len);
	CHECK(!p.feeds_menu);
	revert_plan_record(&p, &r, &b, NULL, 0);
	revert_plan_record(&p, &r, &c, c.written, c.written_len);
	CHECK_INT((long)p.n, 2);
	CHECK_INT((long)p.ended.n, 3);
	CHECK(p.feeds_menu);
	CHECK_STR(p.v[0].path, "/etc/kernel/cmdline");
	CHECK(p.v[0].u.action == UNDO_WRITE);
	CHECK_STR(p.v[0].u.content, "root=x\n");
	CHECK(p.v[0].taken.n == 1 && streq(p.v[0].taken.v[0], "cgroup_disable=memory"));
	CHECK(p.v[1].u.action == UNDO_DELETE && p.v[1].kind == SLOT_GRUB_TOKENS);
	revert_plan_free(&p);
	entry_free(&a);
	entry_free(&b);
	entry_free(&c);
}

/* Entries written from /etc/kernel/cmdline after the tool edited it lose
 * the tool's tokens; an entry with other options is left alone. */
TEST(plan_of_copies)
{
	struct root r = { .live = true, .path = (char *)"/" };
	struct journal_entry k = entry("/etc/kernel/cmdline", "root=x ro\n", "root=x ro cgroup_disable=memory\n",
				       "cgroup_disable=memory", NULL);
	struct journal j = { .v = &k, .n = 1 };
	CHECK(revert_needs_copies(&j));
	const char *copy = "title Debian\noptions root=x ro cgroup_disable=memory systemd.machine_id=abc\nlinux /v\n";
	const char *other = "title Mine\noptions root=y cgroup_disable=memory\nlinux /v\n";
	struct slot s[2] = {
		{ .kind = SLOT_BLS, .path = (char *)"/boot/loader/entries/abc-6.1.conf", .exists = true,
		  .content = (char *)copy, .len = strlen(copy) },
		{ .kind = SLOT_BLS, .path = (char *)"/boot/loader/entries/mine.conf", .exists = true,
		  .content = (char *)other, .len = strlen(other) },
	};
	struct slot_list l = { .v = s, .n = 2 };
	struct revert_plan p = { 0 };
	diag_reset();
	revert_plan_copies(&p, &r, &j, &l);
	CHECK_INT((long)p.n, 1);
	CHECK_INT((long)diag_count(), 1);
	CHECK(diag_count() == 1 && diag_at(0)->level == DIAG_WARNING &&
	      strstr(diag_at(0)->message, "/boot/loader/entries/mine.conf has the tool's arguments") != NULL);
	CHECK(p.n == 1 && p.v[0].copy);
	CHECK(p.n == 1 && strstr(p.v[0].u.content, "cgroup_disable") == NULL);
	CHECK(p.n == 1 && strstr(p.v[0].u.content, "options root=x ro systemd.machine_id=abc\n") != NULL);
	CHECK_INT((long)p.ended.n, 0);
	revert_plan_free(&p);
	diag_reset();
	entry_free(&k);
}

TEST_MAIN(T(path_kinds), T(undo_text_kinds), T(undo_puts_back_the_admins_token), T(undo_created_file_is_deleted), T(undo_write_that_never_landed),
	  T(undo_grub_tokens_goes), T(undo_grub_default_unmarks), T(undo_grubenv_value), T(plan_of_records),
	  T(plan_of_copies))
