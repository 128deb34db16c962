/* test-slots.c - slot discovery on the fixture roots (tests/fixtures/roots)
 * and the pure edits of BLS entries, /etc/kernel/cmdline and cmdline.txt. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "slots/grub/grub.h"
#include "slots/kinds.h"
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

#define FED_MID "6a9857a393724b7a981ebb5b8495b9ea"
#define FED_UUID "8f2b7c1e-4d3a-4b8e-9c1f-2a6d5e7f8a9b"
#define SDB_MID "0f5e2c8d7a6b4c3e9d1f2a3b4c5d6e7f"
#define SDB_UUID "3b1d9f4e-7c2a-4e5b-8d6f-1a2b3c4d5e6f"

/* ---- helpers ---- */

static char *fixture(const char *name)
{
	const char *top = getenv("TOP");
	return xasprintf("%s/tests/fixtures/roots/%s", top && *top ? top : ".", name);
}

static struct strv tmpdirs;

/* A new empty directory, removed by the last test (owned by tmpdirs). */
static char *tmp_root(void)
{
	char *d = xstrdup("/tmp/memcg-slots.XXXXXX");
	if (!mkdtemp(d))
		abort();
	strv_push(&tmpdirs, d);
	return d;
}

/* A writable copy of a fixture root. */
static char *copy_root(const char *name)
{
	char *d = tmp_root();
	_cleanup_free_ char *src = fixture(name);
	_cleanup_free_ char *cmd = xasprintf("cp -a '%s/.' '%s/'", src, d);
	if (system(cmd) != 0)
		abort();
	return d;
}

static void write_file(const char *root, const char *path, const char *text, size_t len)
{
	_cleanup_free_ char *full = path_join(root, path);
	_cleanup_free_ char *dir = xstrdup(full);
	*strrchr(dir, '/') = '\0';
	_cleanup_free_ char *cmd = xasprintf("mkdir -p '%s'", dir);
	if (system(cmd) != 0)
		abort();
	FILE *f = fopen(full, "w");
	if (!f || fwrite(text, 1, len, f) != len || fclose(f) != 0)
		abort();
}

static void write_str(const char *root, const char *path, const char *text)
{
	write_file(root, path, text, strlen(text));
}

static void remove_path(const char *root, const char *path)
{
	_cleanup_free_ char *cmd = xasprintf("rm -rf '%s/%s'", root, path);
	if (system(cmd) != 0)
		abort();
}

/* slots_find on a root directory with a default policy (or p). */
static int find(const char *dir, const struct policy *p, const char *defk, struct slot_list *l)
{
	struct root r;
	if (root_open(&r, dir) < 0)
		abort();
	struct policy def = { 0 }; /* TRI_AUTO everywhere */
	int e = slots_find(&r, p ? p : &def, defk, l);
	root_close(&r);
	return e;
}

static const struct slot *by_path(const struct slot_list *l, const char *path)
{
	for (size_t i = 0; i < l->n; i++)
		if (streq(l->v[i].path, path))
			return &l->v[i];
	return NULL;
}

static size_t count_kind(const struct slot_list *l, enum slot_kind k)
{
	size_t n = 0;
	for (size_t i = 0; i < l->n; i++)
		n += l->v[i].kind == k;
	return n;
}

static void dec_init(struct decision *d, const char *add, const char *remove)
{
	memset(d, 0, sizeof(*d));
	if (add)
		strv_pushdup(&d->add, add);
	if (remove)
		strv_pushdup(&d->remove, remove);
}

static void dec_free(struct decision *d)
{
	strv_free(&d->add);
	strv_free(&d->remove);
	strv_free(&d->reasons);
	strv_free(&d->warnings);
}

/* "off": cgroup_disable=memory in, cgroup_enable=memory out; "on" the reverse. */
static void dec_off(struct decision *d) { dec_init(d, "cgroup_disable=memory", "cgroup_enable=memory"); }
static void dec_on(struct decision *d) { dec_init(d, "cgroup_enable=memory", "cgroup_disable=memory"); }

static char *edit_text(enum slot_kind kind, const char *text, const struct decision *d, struct strv *added,
		       struct strv *removed)
{
	struct slot s = { .kind = kind, .path = (char *)"/x", .exists = true,
			  .content = (char *)text, .len = strlen(text) };
	size_t n = 0;
	char *out = slot_edit(&s, d, added, removed, &n);
	if (out && n != strlen(out))
		return xstrdup("(length mismatch)");
	return out;
}

/* Edits, checks the result, then checks that a second edit of the result
 * changes nothing and reports nothing. */
static void check_edit(enum slot_kind kind, const char *in, const struct decision *d, const char *want,
		       const char *want_added, const char *want_removed)
{
	struct strv added = { 0 }, removed = { 0 };
	_cleanup_free_ char *out = edit_text(kind, in, d, &added, &removed);
	CHECK_STR(out, want);
	CHECK_INT(added.n, want_added ? 1 : 0);
	if (want_added && added.n)
		CHECK_STR(added.v[0], want_added);
	CHECK_INT(removed.n, want_removed ? 1 : 0);
	if (want_removed && removed.n)
		CHECK_STR(removed.v[0], want_removed);
	strv_free(&added);
	strv_free(&removed);
	if (!out)
		return;
	_cleanup_free_ char *again = edit_text(kind, out, d, &added, &removed);
	CHECK_STR(again, out);
	CHECK_INT(added.n, 0);
	CHECK_INT(removed.n, 0);
	strv_free(&added);
	strv_free(&removed);
}

/* ---- discovery on the fixture roots ---- */

TEST(fedora_discovery)
{
	_cleanup_free_ char *dir = fixture("fedora");
	struct slot_list l;
	CHECK_INT(find(dir, NULL, "6.7.4-200.fc39.x86_64", &l), 0);
	CHECK_INT(count_kind(&l, SLOT_BLS), 3);
	CHECK_INT(count_kind(&l, SLOT_KERNEL_CMDLINE), 1);
	CHECK_INT(count_kind(&l, SLOT_RPI) + count_kind(&l, SLOT_RPI_EXTRA) + count_kind(&l, SLOT_UKI), 0);
	CHECK_STR(l.boot_dir, "/boot");
	CHECK_INT(l.rejected.n, 0);
	CHECK(l.uses_kernel_install);
	static const char *const vers[] = { "6.5.6-300.fc39.x86_64", "6.6.8-200.fc39.x86_64", "6.7.4-200.fc39.x86_64" };
	for (size_t i = 0; i < ARRAY_SIZE(vers); i++) {
		_cleanup_free_ char *p = xasprintf("/boot/loader/entries/" FED_MID "-%s.conf", vers[i]);
		const struct slot *s = by_path(&l, p);
		CHECK(s && s->kind == SLOT_BLS && s->exists && !s->unmanaged && !s->create);
		if (s)
			CHECK_STR(s->kernel, vers[i]);
	}
	const struct slot *k = by_path(&l, "/etc/kernel/cmdline");
	CHECK(k && k->exists && !k->create && !k->unmanaged && k->kernel == NULL);
	if (k) {
		CHECK_STR(k->content, "root=UUID=" FED_UUID " ro rootflags=subvol=root rhgb quiet\n");
		_cleanup_free_ char *line = slot_cmdline(k);
		CHECK_STR(line, "root=UUID=" FED_UUID " ro rootflags=subvol=root rhgb quiet");
	}
	const struct slot *s = by_path(&l, "/boot/loader/entries/" FED_MID "-6.5.6-300.fc39.x86_64.conf");
	if (s) {
		_cleanup_free_ char *line = slot_cmdline(s);
		CHECK_STR(line, "root=UUID=" FED_UUID "  ro rootflags=subvol=root rhgb quiet");
	}
	slots_free(&l);
}

TEST(fedora_edit_on_keeps_other_items)
{
	_cleanup_free_ char *dir = fixture("fedora");
	struct slot_list l;
	CHECK_INT(find(dir, NULL, "6.7.4-200.fc39.x86_64", &l), 0);
	const struct slot *s = by_path(&l, "/boot/loader/entries/" FED_MID "-6.6.8-200.fc39.x86_64.conf");
	CHECK(s != NULL);
	if (s) {
		/* "on" for a kernel that is on by default: nothing to add */
		struct decision d;
		dec_init(&d, NULL, "cgroup_disable=memory");
		const char *want = "title Fedora Linux (6.6.8-200.fc39.x86_64) 39 (Workstation Edition)\n"
				   "version 6.6.8-200.fc39.x86_64\n"
				   "linux /vmlinuz-6.6.8-200.fc39.x86_64\n"
				   "initrd /initramfs-6.6.8-200.fc39.x86_64.img\n"
				   "options root=UUID=" FED_UUID " ro rootflags=subvol=root cgroup_disable=pressure rhgb quiet\n"
				   "grub_users $grub_users\n"
				   "grub_arg --unrestricted\n"
				   "grub_class fedora\n";
		check_edit(SLOT_BLS, s->content, &d, want, NULL, "cgroup_disable=memory,pressure");
		dec_free(&d);
	}
	slots_free(&l);
}

TEST(fedora_edit_off_keeps_comments_and_spacing)
{
	_cleanup_free_ char *dir = fixture("fedora");
	struct slot_list l;
	CHECK_INT(find(dir, NULL, "6.7.4-200.fc39.x86_64", &l), 0);
	const struct slot *s = by_path(&l, "/boot/loader/entries/" FED_MID "-6.5.6-300.fc39.x86_64.conf");
	CHECK(s != NULL);
	if (s) {
		struct decision d;
		dec_off(&d);
		const char *want = "# edited by hand to debug a boot problem\n"
				   "title Fedora Linux (6.5.6-300.fc39.x86_64) 39 (Workstation Edition)\n"
				   "version 6.5.6-300.fc39.x86_64\n"
				   "linux /vmlinuz-6.5.6-300.fc39.x86_64\n"
				   "initrd /initramfs-6.5.6-300.fc39.x86_64.img\n"
				   "options\troot=UUID=" FED_UUID "  ro rootflags=subvol=root rhgb quiet cgroup_disable=memory\n"
				   "grub_users $grub_users\n"
				   "grub_arg --unrestricted\n"
				   "grub_class fedora\n"
				   "\n";
		check_edit(SLOT_BLS, s->content, &d, want, "cgroup_disable=memory", NULL);
		dec_free(&d);
	}
	slots_free(&l);
}

TEST(xbootldr_discovery)
{
	_cleanup_free_ char *dir = fixture("systemd-boot-xbootldr");
	struct slot_list l;
	CHECK_INT(find(dir, NULL, "6.9.7-200.fc40.x86_64", &l), 0);
	CHECK_STR(l.boot_dir, "/boot");
	CHECK_INT(count_kind(&l, SLOT_BLS), 2);
	CHECK(l.uses_kernel_install);
	const struct slot *e = by_path(&l, "/boot/loader/entries/" SDB_MID "-6.8.11-300.fc40.x86_64.conf");
	CHECK(e && !e->unmanaged);
	if (e)
		CHECK_STR(e->kernel, "6.8.11-300.fc40.x86_64");
	const struct slot *u = by_path(&l, "/efi/EFI/Linux/" SDB_MID "-6.8.9-300.fc40.x86_64.efi");
	CHECK(u && u->kind == SLOT_UKI && u->unmanaged && u->exists);
	if (u) {
		/* a placeholder, not a PE image: read as the stub would not
		 * boot it, its kernel from its name (real UKIs: tests/cmd/uki.sh) */
		CHECK_STR(u->kernel, "6.8.9-300.fc40.x86_64");
		CHECK(u->note && strstr(u->note, "not a PE image"));
		CHECK(slot_edit(u, NULL, NULL, NULL, NULL) == NULL);
		CHECK(slot_cmdline(u) == NULL);
	}
	/* /etc/kernel/cmdline is missing: created from the default entry */
	const struct slot *k = by_path(&l, "/etc/kernel/cmdline");
	CHECK(k && k->create && !k->exists && !k->unmanaged && k->kernel == NULL);
	if (k) {
		CHECK_STR(k->content, "root=UUID=" SDB_UUID " ro quiet\n");
		CHECK_INT(k->len, strlen(k->content));
		struct decision d;
		dec_off(&d);
		check_edit(SLOT_KERNEL_CMDLINE, k->content, &d, "root=UUID=" SDB_UUID " ro quiet cgroup_disable=memory\n",
			   "cgroup_disable=memory", NULL);
		dec_free(&d);
	}
	slots_free(&l);
}

TEST(arch_hand_written_entries)
{
	_cleanup_free_ char *dir = fixture("arch");
	struct slot_list l;
	CHECK_INT(find(dir, NULL, "6.6.1-arch1-1", &l), 0);
	CHECK_INT(count_kind(&l, SLOT_BLS), 2);
	/* kernel-install is there but did not write these entries */
	CHECK(!l.uses_kernel_install);
	CHECK_INT(count_kind(&l, SLOT_KERNEL_CMDLINE), 0);
	const struct slot *s = by_path(&l, "/boot/loader/entries/arch.conf");
	CHECK(s && s->kernel == NULL && !s->unmanaged);
	if (s) {
		_cleanup_free_ char *line = slot_cmdline(s);
		CHECK_STR(line, "root=PARTUUID=5c9e2f7a-01 rw\tloglevel=3   quiet");
		struct decision d;
		dec_off(&d);
		const char *want = "# written by hand, see the ArchWiki's systemd-boot page\n"
				   "title   Arch Linux\n"
				   "linux   /vmlinuz-linux\n"
				   "initrd  /intel-ucode.img\n"
				   "initrd  /initramfs-linux.img\n"
				   "\n"
				   "options root=PARTUUID=5c9e2f7a-01 rw\tloglevel=3   quiet cgroup_disable=memory\n";
		check_edit(SLOT_BLS, s->content, &d, want, "cgroup_disable=memory", NULL);
		dec_free(&d);
	}
	const struct slot *f = by_path(&l, "/boot/loader/entries/arch-fallback.conf");
	CHECK(f && f->kernel == NULL);
	slots_free(&l);
}

TEST(arch_kernel_cmdline_yes_creates)
{
	_cleanup_free_ char *dir = fixture("arch");
	struct policy p = { 0 };
	p.kernel_cmdline = TRI_YES;
	struct slot_list l;
	CHECK_INT(find(dir, &p, "6.6.1-arch1-1", &l), 0);
	const struct slot *k = by_path(&l, "/etc/kernel/cmdline");
	CHECK(k && k->create);
	/* from the default kernel's entries (no version: the default's), the first one */
	if (k)
		CHECK_STR(k->content, "root=PARTUUID=5c9e2f7a-01 rw\n");
	slots_free(&l);
}

TEST(version_from_linux_path)
{
	static const struct {
		const char *path, *want;
	} cases[] = {
		{ "/vmlinuz-6.5.6-300.fc39.x86_64", "6.5.6-300.fc39.x86_64" },
		{ "/" SDB_MID "/6.9.7-200.fc40.x86_64/linux", "6.9.7-200.fc40.x86_64" },
		{ "/vmlinuz-linux", NULL },
		{ "/vmlinuz-linux-lts", NULL },
		{ "/EFI/debian/vmlinuz-6.1.0-18-amd64", "6.1.0-18-amd64" },
		{ "/Image-6.6.20+rpt-rpi-v8", "6.6.20+rpt-rpi-v8" },
		{ "/" SDB_MID "/linux", NULL },
		{ "/vmlinuz-0-rescue-" SDB_MID, NULL },
		{ "vmlinuz", NULL },
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		char *v = bls_version_from_linux(cases[i].path);
		if (cases[i].want)
			CHECK_STR(v, cases[i].want);
		else
			CHECK(v == NULL);
		free(v);
	}
	/* an entry without a version key gets its kernel from the linux path */
	char *d = tmp_root();
	write_str(d, "/boot/loader/entries/a.conf", "title a\nlinux /" SDB_MID "/6.9.7-200.fc40.x86_64/linux\noptions root=/dev/vda2\n");
	struct slot_list l;
	CHECK_INT(find(d, NULL, "6.9.7-200.fc40.x86_64", &l), 0);
	const struct slot *s = by_path(&l, "/boot/loader/entries/a.conf");
	CHECK(s != NULL);
	if (s)
		CHECK_STR(s->kernel, "6.9.7-200.fc40.x86_64");
	slots_free(&l);
}

TEST(rpios_cmdline_txt)
{
	_cleanup_free_ char *dir = fixture("rpios");
	struct slot_list l;
	CHECK_INT(find(dir, NULL, "6.6.31+rpt-rpi-v8", &l), 0);
	CHECK_INT(count_kind(&l, SLOT_RPI), 1);
	CHECK_INT(count_kind(&l, SLOT_RPI_EXTRA) + count_kind(&l, SLOT_BLS), 0);
	CHECK(by_path(&l, "/boot/cmdline.txt") == NULL);
	const struct slot *s = by_path(&l, "/boot/firmware/cmdline.txt");
	CHECK(s && s->exists && !s->unmanaged && s->kernel == NULL);
	if (s) {
		struct decision d;
		dec_on(&d);
		const char *base = "console=serial0,115200 console=tty1 root=PARTUUID=4e639091-02 rootfstype=ext4 "
				   "fsck.repair=yes rootwait quiet splash plymouth.ignore-serial-consoles "
				   "cfg80211.ieee80211_regdom=GB";
		_cleanup_free_ char *want = xasprintf("%s cgroup_enable=memory\n", base);
		check_edit(SLOT_RPI, s->content, &d, want, "cgroup_enable=memory", NULL);
		_cleanup_free_ char *line = slot_cmdline(s);
		CHECK_STR(line, base);
		dec_free(&d);
	}
	slots_free(&l);
}

TEST(rpios_multiline_is_bad_input)
{
	char *d = copy_root("rpios");
	write_str(d, "/boot/firmware/cmdline.txt", "console=tty1 root=/dev/mmcblk0p2\nquiet\n");
	struct slot_list l;
	CHECK_INT(find(d, NULL, NULL, &l), -EXIT_BADINPUT);
	/* blank lines after the one line are fine */
	write_str(d, "/boot/firmware/cmdline.txt", "console=tty1 root=/dev/mmcblk0p2\n\n \n");
	CHECK_INT(find(d, NULL, NULL, &l), 0);
	CHECK_INT(count_kind(&l, SLOT_RPI), 1);
	slots_free(&l);
	/* older layout: /boot/cmdline.txt when there is no /boot/firmware */
	remove_path(d, "boot/firmware");
	write_str(d, "/boot/cmdline.txt", "root=/dev/mmcblk0p2 rootwait");
	CHECK_INT(find(d, NULL, NULL, &l), 0);
	const struct slot *s = by_path(&l, "/boot/cmdline.txt");
	CHECK(s != NULL);
	if (s) {
		struct decision dd;
		dec_on(&dd);
		/* no trailing newline: none added */
		check_edit(SLOT_RPI, s->content, &dd, "root=/dev/mmcblk0p2 rootwait cgroup_enable=memory",
			   "cgroup_enable=memory", NULL);
		dec_free(&dd);
	}
	slots_free(&l);
}

TEST(raspi_firmware_extra_file)
{
	_cleanup_free_ char *dir = fixture("raspi-firmware");
	struct slot_list l;
	CHECK_INT(find(dir, NULL, "6.1.0-21-arm64", &l), 0);
	/* cmdline.txt, what the firmware reads, carries the decision too: the
	 * hook appends the extra file to its own arguments, so both end with
	 * the same tokens */
	const struct slot *t = by_path(&l, "/boot/firmware/cmdline.txt");
	CHECK(t && t->kind == SLOT_RPI && t->exists && !t->unmanaged);
	if (t) {
		struct decision d;
		dec_on(&d);
		check_edit(SLOT_RPI, t->content, &d,
			   " console=tty0 console=ttyS1,115200 root=/dev/mmcblk0p2 rw fsck.repair=yes net.ifnames=0 "
			   "cma=64M rootwait quiet cgroup_enable=memory\n",
			   "cgroup_enable=memory", NULL);
		dec_free(&d);
	}
	const struct slot *x = by_path(&l, "/etc/default/raspi-extra-cmdline");
	CHECK(x && x->kind == SLOT_RPI_EXTRA && x->exists && !x->unmanaged);
	if (x) {
		struct decision d;
		dec_on(&d);
		check_edit(SLOT_RPI_EXTRA, x->content, &d, "quiet cgroup_enable=memory\n", "cgroup_enable=memory", NULL);
		dec_free(&d);
	}
	slots_free(&l);

	/* missing: created with just our tokens */
	char *c = copy_root("raspi-firmware");
	remove_path(c, "etc/default/raspi-extra-cmdline");
	CHECK_INT(find(c, NULL, NULL, &l), 0);
	x = by_path(&l, "/etc/default/raspi-extra-cmdline");
	CHECK(x && x->create && !x->exists && x->content && x->len == 0);
	if (x) {
		struct decision d;
		dec_on(&d);
		struct slot s = *x;
		size_t n;
		struct strv added = { 0 };
		_cleanup_free_ char *out = slot_edit(&s, &d, &added, NULL, &n);
		CHECK_STR(out, "cgroup_enable=memory\n");
		CHECK_INT(added.n, 1);
		strv_free(&added);
		dec_free(&d);
		/* no opinion: nothing to write */
		d.keep = true;
		_cleanup_free_ char *same = slot_edit(&s, &d, NULL, NULL, &n);
		CHECK_STR(same, "");
	}
	slots_free(&l);
}

/* ---- special entries ---- */

TEST(kernelopts_and_policy_off)
{
	char *d = tmp_root();
	write_str(d, "/boot/loader/entries/r.conf",
		  "title Red Hat Enterprise Linux\nversion 4.18.0-513.el8.x86_64\nlinux /vmlinuz-4.18.0-513.el8.x86_64\n"
		  "options $kernelopts $tuned_params\n");
	write_str(d, "/boot/loader/entries/s.conf", "title s\nlinux /vmlinuz-5.14.0\noptions root=/dev/sda1\n");
	struct slot_list l;
	CHECK_INT(find(d, NULL, "4.18.0-513.el8.x86_64", &l), 0);
	const struct slot *r = by_path(&l, "/boot/loader/entries/r.conf");
	CHECK(r && r->unmanaged);
	if (r) {
		CHECK_STR(r->note, "options use $kernelopts: grubenv is the slot");
		struct decision dd;
		dec_off(&dd);
		CHECK(slot_edit(r, &dd, NULL, NULL, NULL) == NULL);
		dec_free(&dd);
	}
	const struct slot *s = by_path(&l, "/boot/loader/entries/s.conf");
	CHECK(s && !s->unmanaged);
	slots_free(&l);

	struct policy p = { 0 };
	p.systemd_boot = TRI_NO;
	p.systemd_boot_origin = (struct origin){ .file = (char *)"/etc/memcg-policy.conf", .line = 12 };
	CHECK_INT(find(d, &p, NULL, &l), 0);
	s = by_path(&l, "/boot/loader/entries/s.conf");
	CHECK(s && s->unmanaged);
	if (s)
		CHECK_STR(s->note, "bootloaders: systemd-boot = no (/etc/memcg-policy.conf:12)");
	slots_free(&l);

	_cleanup_free_ char *rp = fixture("rpios");
	struct policy q = { 0 };
	q.rpi = TRI_NO;
	CHECK_INT(find(rp, &q, NULL, &l), 0);
	const struct slot *t = by_path(&l, "/boot/firmware/cmdline.txt");
	CHECK(t && t->unmanaged && t->note && strstr(t->note, "rpi = no"));
	slots_free(&l);
}

TEST(bad_entries)
{
	struct slot_list l;
	char *d = tmp_root();
	write_file(d, "/boot/loader/entries/nul.conf", "options a\0b\n", 12);
	CHECK_INT(find(d, NULL, NULL, &l), -EXIT_BADINPUT);
	remove_path(d, "boot/loader/entries/nul.conf");

	size_t big = (64u << 10) + 10;
	char *line = xmalloc(big + 1);
	memcpy(line, "options ", 8);
	memset(line + 8, 'x', big - 9);
	line[big - 1] = '\n';
	line[big] = '\0';
	write_str(d, "/boot/loader/entries/long.conf", line);
	free(line);
	CHECK_INT(find(d, NULL, NULL, &l), -EXIT_BADINPUT);
	remove_path(d, "boot/loader/entries/long.conf");

	/* a directory named like an entry */
	_cleanup_free_ char *dir = path_join(d, "boot/loader/entries/x.conf");
	CHECK_INT(mkdir(dir, 0755), 0);
	CHECK_INT(find(d, NULL, NULL, &l), -EXIT_BADINPUT);
	remove_path(d, "boot/loader/entries/x.conf");

	/* a FIFO: refused without blocking */
	_cleanup_free_ char *fifo = path_join(d, "boot/loader/entries/f.conf");
	CHECK_INT(mkfifo(fifo, 0644), 0);
	CHECK_INT(find(d, NULL, NULL, &l), -EXIT_BADINPUT);
	remove_path(d, "boot/loader/entries/f.conf");

	/* larger than MAX_INPUT_FILE (sparse) */
	_cleanup_free_ char *huge = path_join(d, "boot/loader/entries/huge.conf");
	int fd = open(huge, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0 && ftruncate(fd, (off_t)MAX_INPUT_FILE + 1) == 0);
	if (fd >= 0)
		close(fd);
	CHECK_INT(find(d, NULL, NULL, &l), -EXIT_BADINPUT);
	remove_path(d, "boot/loader/entries/huge.conf");

	write_str(d, "/boot/loader/entries/ok.conf", "options root=/dev/sda1\n");
	CHECK_INT(find(d, NULL, NULL, &l), 0);
	CHECK_INT(count_kind(&l, SLOT_BLS), 1);
	slots_free(&l);
}

TEST(symlinked_entry_stays_in_root)
{
	/* a host file and a root file at the same absolute path: the
	 * entry's absolute symlink must resolve to the root's */
	char *d = tmp_root();
	char *host = tmp_root();
	_cleanup_free_ char *target = xasprintf("%s/real.conf", host);
	write_str(host, "/real.conf", "options HOST\n");
	write_str(d, target, "options INROOT\n");
	_cleanup_free_ char *entries = path_join(d, "boot/loader/entries");
	_cleanup_free_ char *cmd = xasprintf("mkdir -p '%s' && ln -s '%s' '%s/a.conf'", entries, target, entries);
	CHECK_INT(system(cmd), 0);
	struct slot_list l;
	CHECK_INT(find(d, NULL, NULL, &l), 0);
	const struct slot *s = by_path(&l, "/boot/loader/entries/a.conf");
	CHECK(s != NULL);
	if (s)
		CHECK_STR(s->content, "options INROOT\n");
	slots_free(&l);
}

TEST(kernel_cmdline_creation_rule)
{
	struct slot_list l;
	char *d = tmp_root();
	write_str(d, "/etc/kernel/install.conf", "layout=bls\n");
	write_str(d, "/boot/loader/entries/m-1.0.conf", "version 1.0\nlinux /vmlinuz-1.0\noptions root=/dev/old quiet\n");
	write_str(d, "/boot/loader/entries/m-2.0.conf",
		  "version 2.0\nlinux /vmlinuz-2.0\n"
		  "options initrd=\\initrd.img BOOT_IMAGE=/vmlinuz-2.0 root=/dev/sda2 ro\n"
		  "options systemd.machine_id=0123 systemd.machine-id=4567 quiet\n");
	CHECK_INT(find(d, NULL, "2.0", &l), 0);
	CHECK(l.uses_kernel_install);
	const struct slot *k = by_path(&l, "/etc/kernel/cmdline");
	CHECK(k && k->create && !k->unmanaged);
	if (k)
		CHECK_STR(k->content, "root=/dev/sda2 ro quiet\n");
	slots_free(&l);

	/* the default entry lacks root=: not created (reported) */
	write_str(d, "/boot/loader/entries/m-2.0.conf", "version 2.0\nlinux /vmlinuz-2.0\noptions quiet\n");
	CHECK_INT(find(d, NULL, "2.0", &l), 0);
	k = by_path(&l, "/etc/kernel/cmdline");
	CHECK(k && !k->create && k->unmanaged && !k->exists);
	slots_free(&l);

	/* another layout: kernel-install does not use it */
	write_str(d, "/etc/kernel/install.conf", "layout=other\n");
	CHECK_INT(find(d, NULL, "1.0", &l), 0);
	CHECK(!l.uses_kernel_install);
	CHECK(by_path(&l, "/etc/kernel/cmdline") == NULL);
	slots_free(&l);

	/* present: edited, whatever the layout; several lines are one line */
	write_str(d, "/etc/kernel/cmdline", "root=/dev/sda2\nquiet\n");
	CHECK_INT(find(d, NULL, "1.0", &l), 0);
	k = by_path(&l, "/etc/kernel/cmdline");
	CHECK(k && k->exists && !k->create);
	if (k) {
		_cleanup_free_ char *line = slot_cmdline(k);
		CHECK_STR(line, "root=/dev/sda2 quiet");
		struct decision dd;
		dec_off(&dd);
		check_edit(SLOT_KERNEL_CMDLINE, k->content, &dd, "root=/dev/sda2\nquiet cgroup_disable=memory\n",
			   "cgroup_disable=memory", NULL);
		dec_free(&dd);
	}
	slots_free(&l);
}

TEST(live_checks_and_trust)
{
	char *d = copy_root("arch");
	unsetenv(ENV_TRUST_BOOT);
	struct root r;
	CHECK_INT(root_open(&r, d), 0);
	r.live = true; /* as if it were the running system: checks apply */
	struct policy p = { 0 };
	struct slot_list l;
	CHECK_INT(slots_find(&r, &p, NULL, &l), 0);
	CHECK_INT(count_kind(&l, SLOT_BLS), 0);
	CHECK_INT(l.rejected.n, 1);
	if (l.rejected.n)
		CHECK_STR(l.rejected.v[0], "/boot: not a vfat file system; as XBOOTLDR: not the root of a file system");
	slots_free(&l);

	setenv(ENV_TRUST_BOOT, "1", 1);
	CHECK_INT(slots_find(&r, &p, NULL, &l), 0);
	CHECK_INT(count_kind(&l, SLOT_BLS), 2);
	CHECK_INT(l.rejected.n, 0);
	slots_free(&l);
	unsetenv(ENV_TRUST_BOOT);

	/* systemd-boot = yes trusts the directories too */
	p.systemd_boot = TRI_YES;
	CHECK_INT(slots_find(&r, &p, NULL, &l), 0);
	CHECK_INT(count_kind(&l, SLOT_BLS), 2);
	slots_free(&l);
	p.systemd_boot = TRI_AUTO;

	/* GRUB reading BLS entries from /boot: used on any file system */
	write_str(d, "/boot/grub2/grub.cfg", "insmod blscfg\nblscfg\n");
	CHECK_INT(slots_find(&r, &p, NULL, &l), 0);
	CHECK_INT(count_kind(&l, SLOT_BLS), 2);
	CHECK_INT(l.rejected.n, 0);
	slots_free(&l);
	root_close(&r);
}

/* ---- pure BLS edits ---- */

TEST(bls_edit_cases)
{
	struct decision off, on;
	dec_off(&off);
	dec_on(&on);
	/* several options lines: removal in each, addition at the end of the last */
	check_edit(SLOT_BLS, "options a cgroup_enable=memory\noptions b\n", &off,
		   "options a\noptions b cgroup_disable=memory\n", "cgroup_disable=memory", "cgroup_enable=memory");
	/* present in an earlier line: the kernel sees the lines joined */
	check_edit(SLOT_BLS, "options cgroup_disable=memory\noptions quiet\n", &off,
		   "options cgroup_disable=memory\noptions quiet\n", NULL, NULL);
	/* no options line */
	check_edit(SLOT_BLS, "title x\nlinux /vmlinuz-1\n", &off,
		   "title x\nlinux /vmlinuz-1\noptions cgroup_disable=memory\n", "cgroup_disable=memory", NULL);
	check_edit(SLOT_BLS, "title x\nlinux /vmlinuz-1", &off,
		   "title x\nlinux /vmlinuz-1\noptions cgroup_disable=memory\n", "cgroup_disable=memory", NULL);
	check_edit(SLOT_BLS, "title x\r\nlinux /vmlinuz-1\r\n", &off,
		   "title x\r\nlinux /vmlinuz-1\r\noptions cgroup_disable=memory\r\n", "cgroup_disable=memory", NULL);
	check_edit(SLOT_BLS, "", &off, "options cgroup_disable=memory\n", "cgroup_disable=memory", NULL);
	/* "--": new arguments go before it; after it, nothing is touched */
	check_edit(SLOT_BLS, "options root=/dev/sda -- single\n", &off,
		   "options root=/dev/sda cgroup_disable=memory -- single\n", "cgroup_disable=memory", NULL);
	check_edit(SLOT_BLS, "options a -- b\noptions c\n", &off, "options a cgroup_disable=memory -- b\noptions c\n",
		   "cgroup_disable=memory", NULL);
	check_edit(SLOT_BLS, "options a -- cgroup_disable=memory\noptions cgroup_disable=memory\n", &on,
		   "options a cgroup_enable=memory -- cgroup_disable=memory\noptions cgroup_disable=memory\n",
		   "cgroup_enable=memory", NULL);
	/* a quoted value that contains the token is a value */
	check_edit(SLOT_BLS, "options foo=\"cgroup_disable=memory\" quiet\n", &on,
		   "options foo=\"cgroup_disable=memory\" quiet cgroup_enable=memory\n", "cgroup_enable=memory", NULL);
	/* comma lists keep their other items */
	check_edit(SLOT_BLS, "options cgroup_disable=memory,pressure quiet\n", &on,
		   "options cgroup_disable=pressure quiet cgroup_enable=memory\n", "cgroup_enable=memory",
		   "cgroup_disable=memory,pressure");
	/* odd spacing, comments and blank lines survive */
	check_edit(SLOT_BLS, "# c\n\n  options   a\t\tb   \n#options x\n\n", &off,
		   "# c\n\n  options   a\t\tb cgroup_disable=memory   \n#options x\n\n", "cgroup_disable=memory", NULL);
	/* CRLF lines keep their line ends */
	check_edit(SLOT_BLS, "title x\r\noptions a\r\n", &off, "title x\r\noptions a cgroup_disable=memory\r\n",
		   "cgroup_disable=memory", NULL);
	/* a bare options key */
	check_edit(SLOT_BLS, "options\n", &off, "options cgroup_disable=memory\n", "cgroup_disable=memory", NULL);
	/* optionsX is another key */
	check_edit(SLOT_BLS, "optionsx a\n", &off, "optionsx a\noptions cgroup_disable=memory\n",
		   "cgroup_disable=memory", NULL);
	/* keep: the bytes as they are */
	struct decision keep = { .keep = true };
	check_edit(SLOT_BLS, "options cgroup_enable=memory\n", &keep, "options cgroup_enable=memory\n", NULL, NULL);
	dec_free(&off);
	dec_free(&on);
}

/* The plan of every slot kind, as a table: (kind, content, decision) ->
 * new content, through the table of slot kinds (slot_edit). NULL content:
 * a missing file; NULL want: the kind is read only (or unmanaged). */
enum table_decision { T_OFF, T_ON, T_KEEP, T_NONE };
struct plan_row {
	enum slot_kind kind;
	const char *in;
	bool unmanaged;
	enum table_decision d;
	const char *want;
};

TEST(plan_every_kind)
{
	static const struct plan_row rows[] = {
		{ SLOT_BLS, "title x\noptions root=/dev/sda1 quiet\n", false, T_OFF,
		  "title x\noptions root=/dev/sda1 quiet cgroup_disable=memory\n" },
		{ SLOT_BLS, "options root=/dev/sda1 cgroup_disable=memory\n", false, T_ON,
		  "options root=/dev/sda1 cgroup_enable=memory\n" },
		{ SLOT_BLS, "options root=/dev/sda1 cgroup_disable=memory\n", false, T_KEEP,
		  "options root=/dev/sda1 cgroup_disable=memory\n" },
		{ SLOT_BLS, "options root=/dev/sda1\n", true, T_OFF, NULL },
		{ SLOT_KERNEL_CMDLINE, "root=/dev/sda1 quiet\n", false, T_OFF, "root=/dev/sda1 quiet cgroup_disable=memory\n" },
		{ SLOT_KERNEL_CMDLINE, "root=/dev/sda1 cgroup_enable=memory\n", false, T_OFF,
		  "root=/dev/sda1 cgroup_disable=memory\n" },
		{ SLOT_KERNEL_CMDLINE, "root=/dev/sda1\n", false, T_NONE, "root=/dev/sda1\n" },
		{ SLOT_RPI, "console=serial0,115200 root=PARTUUID=1-02 rootwait\n", false, T_ON,
		  "console=serial0,115200 root=PARTUUID=1-02 rootwait cgroup_enable=memory\n" },
		{ SLOT_RPI, "console=tty1 cgroup_disable=memory rootwait\n", false, T_KEEP,
		  "console=tty1 cgroup_disable=memory rootwait\n" },
		{ SLOT_RPI_EXTRA, "cgroup_disable=memory\n", false, T_ON, "cgroup_enable=memory\n" },
		{ SLOT_GRUBENV, "root=/dev/sda1 ro", false, T_OFF, "root=/dev/sda1 ro cgroup_disable=memory" },
		{ SLOT_GRUBENV, "root=/dev/sda1 ro", false, T_KEEP, "root=/dev/sda1 ro" },
		{ SLOT_GRUB_DROPIN, "# the admin's copy\n", false, T_OFF, "# the admin's copy\n" },
		{ SLOT_GRUB_DEFAULT, "GRUB_CMDLINE_LINUX=\"quiet\"\n", false, T_KEEP, "GRUB_CMDLINE_LINUX=\"quiet\"\n" },
		{ SLOT_GRUB_TOKENS, NULL, false, T_KEEP, "" },
		{ SLOT_GRUB_CFG, "linux /vmlinuz-1 root=/dev/sda1\n", false, T_OFF, NULL },
		{ SLOT_UKI, "", false, T_OFF, NULL },
	};
	struct decision off, on, keep = { .keep = true };
	dec_off(&off);
	dec_on(&on);
	const struct decision *ds[] = { [T_OFF] = &off, [T_ON] = &on, [T_KEEP] = &keep, [T_NONE] = NULL };
	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		const struct plan_row *row = &rows[i];
		struct slot sl = { .kind = row->kind, .path = (char *)"/x", .exists = row->in != NULL,
				   .content = (char *)row->in, .len = row->in ? strlen(row->in) : 0,
				   .unmanaged = row->unmanaged };
		size_t n = 0;
		_cleanup_free_ char *out = slot_edit(&sl, ds[row->d], NULL, NULL, &n);
		if (!row->want) {
			CHECK(out == NULL);
			continue;
		}
		CHECK_STR(out, row->want);
		CHECK_INT((long)n, (long)strlen(row->want));
	}

	/* the kinds that write what the tool owns: the drop-in and the marked
	 * line where missing, the recorded tokens */
	struct slot dropin = { .kind = SLOT_GRUB_DROPIN, .path = (char *)"/x", .create = true };
	size_t n = 0;
	_cleanup_free_ char *text = slot_edit(&dropin, &off, NULL, NULL, &n);
	CHECK(text && n > 0 && strstr(text, "grub-cmdline"));
	const char *adm = "GRUB_CMDLINE_LINUX=\"quiet\"\n";
	struct slot def = { .kind = SLOT_GRUB_DEFAULT, .path = (char *)"/x", .exists = true, .content = (char *)adm,
			    .len = strlen(adm) };
	_cleanup_free_ char *marked = slot_edit(&def, &off, NULL, NULL, &n);
	CHECK(marked && startswith(marked, adm) && strstr(marked + strlen(adm), marked_line()));
	struct slot tok = { .kind = SLOT_GRUB_TOKENS, .path = (char *)"/x", .create = true };
	_cleanup_free_ char *data = slot_edit(&tok, &off, NULL, NULL, &n);
	struct grub_tokens t = { 0 };
	unsigned bad = 0;
	CHECK(data && grub_tokens_parse(data, n, &t, &bad) == 0);
	CHECK(t.add.n == 1 && streq(t.add.v[0], "cgroup_disable=memory"));
	CHECK(t.remove.n == 1 && streq(t.remove.v[0], "cgroup_enable=memory"));
	grub_tokens_free(&t);
	decision_free(&off);
	decision_free(&on);
}

TEST(names)
{
	CHECK_STR(slot_kind_name(SLOT_BLS), "bls");
	CHECK_STR(slot_kind_name(SLOT_KERNEL_CMDLINE), "kernel-cmdline");
	CHECK_STR(slot_kind_name(SLOT_RPI), "rpi");
	CHECK_STR(slot_kind_name(SLOT_RPI_EXTRA), "rpi-extra");
	CHECK_STR(slot_kind_name(SLOT_GRUB_DROPIN), "grub-dropin");
	CHECK_STR(slot_kind_name(SLOT_GRUB_DEFAULT), "grub-default");
	CHECK_STR(slot_kind_name(SLOT_GRUB_CFG), "grub-cfg");
	CHECK_STR(slot_kind_name(SLOT_GRUBENV), "grubenv");
	CHECK_STR(slot_kind_name(SLOT_UKI), "uki");
	CHECK_STR(slot_state_name(SLOT_IN_SYNC), "in-sync");
	CHECK_STR(slot_state_name(SLOT_DRIFT), "drift");
	CHECK_STR(slot_state_name(SLOT_MISSING), "missing");
	CHECK_STR(slot_state_name(SLOT_UNMANAGED), "unmanaged");
}

TEST(cleanup)
{
	for (size_t i = 0; i < tmpdirs.n; i++) {
		_cleanup_free_ char *cmd = xasprintf("rm -rf '%s'", tmpdirs.v[i]);
		CHECK_INT(system(cmd), 0);
	}
	strv_free(&tmpdirs);
}

TEST_MAIN(T(fedora_discovery), T(fedora_edit_on_keeps_other_items), T(fedora_edit_off_keeps_comments_and_spacing),
	  T(xbootldr_discovery), T(arch_hand_written_entries), T(arch_kernel_cmdline_yes_creates),
	  T(version_from_linux_path), T(rpios_cmdline_txt), T(rpios_multiline_is_bad_input),
	  T(raspi_firmware_extra_file), T(kernelopts_and_policy_off), T(bad_entries), T(symlinked_entry_stays_in_root),
	  T(kernel_cmdline_creation_rule), T(live_checks_and_trust), T(bls_edit_cases), T(plan_every_kind), T(names), T(cleanup))
