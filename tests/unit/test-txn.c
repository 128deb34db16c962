/* test-txn.c - the atomic writer (io/txn.c) on temporary roots: create,
 * replace (mode, owner, new inode, other files untouched), delete, no
 * rewrite of unchanged files, symlinks that point out of the root, bad
 * targets, a failure injected at every step in turn and a crash at every
 * step in turn (each file old or new, no temp file left behind), and a
 * read-only file system (a read-only bind mount in a private mount
 * namespace: the tests run as root, so permission bits would not stop
 * anything). */
#include "io/readcache.h"
#include "io/rootfs.h"
#include "io/txn.h"
#include "io/txn-int.h"
#include "lib/util.h"
#include "test.h"
#include "test-fs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

/* ---- helpers ------------------------------------------------------------- */

/* Writes host file DIR/REL (parents created). */
static void put(const char *dir, const char *rel, const char *content)
{
	_cleanup_free_ char *p = path_join(dir, rel);
	for (char *s = strchr(p + 1, '/'); s; s = strchr(s + 1, '/')) {
		*s = '\0';
		mkdir(p, 0755);
		*s = '/';
	}
	FILE *f = fopen(p, "w");
	if (!f) {
		printf("  cannot write %s: %s\n", p, strerror(errno));
		abort();
	}
	fputs(content, f);
	fclose(f);
}

static void mkdirs(const char *dir, const char *rel)
{
	_cleanup_free_ char *p = path_join(dir, rel);
	for (char *s = strchr(p + 1, '/'); s; s = strchr(s + 1, '/')) {
		*s = '\0';
		mkdir(p, 0755);
		*s = '/';
	}
	mkdir(p, 0755);
}

/* Content of host file DIR/REL, NULL if it cannot be read. */
static char *get(const char *dir, const char *rel)
{
	_cleanup_free_ char *p = path_join(dir, rel);
	FILE *f = fopen(p, "r");
	if (!f)
		return NULL;
	struct strbuf sb = {0};
	char buf[4096];
	size_t n;
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		sb_appendn(&sb, buf, n);
	fclose(f);
	return sb_take(&sb);
}

static bool same(const char *dir, const char *rel, const char *want)
{
	_cleanup_free_ char *got = get(dir, rel);
	if (!got || !want)
		return !got && !want;
	return streq(got, want);
}

static struct stat lst(const char *dir, const char *rel)
{
	_cleanup_free_ char *p = path_join(dir, rel);
	struct stat st;
	memset(&st, 0, sizeof(st));
	if (lstat(p, &st) < 0)
		st.st_ino = 0;
	return st;
}

/* Number of files under dir whose name holds ".memcg-policy." (temp files). */
static int count_tmp(const char *dir)
{
	DIR *d = opendir(dir);
	if (!d)
		return 0;
	int n = 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (streq(de->d_name, ".") || streq(de->d_name, ".."))
			continue;
		if (strstr(de->d_name, ".memcg-policy."))
			n++;
		_cleanup_free_ char *sub = path_join(dir, de->d_name);
		struct stat st;
		if (lstat(sub, &st) == 0 && S_ISDIR(st.st_mode))
			n += count_tmp(sub);
	}
	closedir(d);
	return n;
}

/* stderr into a file while a test looks at messages. */
static void no_failpoints(void)
{
	unsetenv("MEMCG_POLICY_FAILPOINT");
	unsetenv("MEMCG_POLICY_CRASHPOINT");
	txn_failpoints_from_env();
}

/* ---- tests ------------------------------------------------------------- */

TEST(txn_create)
{
	_cleanup_free_ char *dir = test_mkdtemp("test-txn");
	struct root r;
	CHECK_INT(root_open(&r, dir), 0);
	mkdirs(dir, "etc/kernel");
	mode_t old_umask = umask(077);
	struct txn t;
	txn_init(&t, &r);
	txn_add(&t, "/etc/kernel/cmdline", "root=/dev/sda1 quiet\n", 21, 0);
	txn_add(&t, "/etc/secret.conf", "x\n", 2, 0600);
	txn_add(&t, "/var/lib/memcg-policy/journal.json", "{}\n", 3, 0644);
	CHECK_INT(txn_commit(&t), 0);
	umask(old_umask);
	CHECK_INT(t.written, 3);
	CHECK(same(dir, "etc/kernel/cmdline", "root=/dev/sda1 quiet\n"));
	CHECK_INT(lst(dir, "etc/kernel/cmdline").st_mode & 07777, 0644); /* not the umask's 0600 */
	CHECK_INT(lst(dir, "etc/secret.conf").st_mode & 07777, 0600);
	CHECK(same(dir, "var/lib/memcg-policy/journal.json", "{}\n"));
	CHECK(S_ISDIR(lst(dir, "var/lib/memcg-policy").st_mode));
	CHECK_INT(count_tmp(dir), 0);
	txn_free(&t);
	root_close(&r);
	rm_rf(dir);
}

TEST(txn_replace_keeps_mode_owner)
{
	_cleanup_free_ char *dir = test_mkdtemp("test-txn");
	struct root r;
	CHECK_INT(root_open(&r, dir), 0);
	put(dir, "boot/loader/entries/a.conf", "title A\noptions root=/dev/sda1\n");
	put(dir, "boot/loader/entries/b.conf", "title B\n");
	_cleanup_free_ char *a = path_join(dir, "boot/loader/entries/a.conf");
	CHECK_INT(chmod(a, 0600), 0);
	CHECK_INT(chown(a, 1234, 5678), 0);
	struct stat before = lst(dir, "boot/loader/entries/a.conf");
	struct stat before_b = lst(dir, "boot/loader/entries/b.conf");

	const char *nw = "title A\noptions root=/dev/sda1 cgroup_disable=memory\n";
	CHECK_INT(write_file_atomic(&r, "/boot/loader/entries/a.conf", nw, strlen(nw), 0644), 0);
	struct stat after = lst(dir, "boot/loader/entries/a.conf");
	CHECK(same(dir, "boot/loader/entries/a.conf", nw));
	CHECK_INT(after.st_mode & 07777, 0600);
	CHECK_INT(after.st_uid, 1234);
	CHECK_INT(after.st_gid, 5678);
	CHECK(after.st_ino != before.st_ino);
	CHECK_INT(lst(dir, "boot/loader/entries/b.conf").st_ino, before_b.st_ino);
	CHECK(same(dir, "boot/loader/entries/b.conf", "title B\n"));
	CHECK_INT(count_tmp(dir), 0);
	root_close(&r);
	rm_rf(dir);
}

TEST(txn_unchanged_not_written)
{
	_cleanup_free_ char *dir = test_mkdtemp("test-txn");
	struct root r;
	CHECK_INT(root_open(&r, dir), 0);
	put(dir, "etc/kernel/cmdline", "quiet\n");
	struct stat before = lst(dir, "etc/kernel/cmdline");
	no_failpoints();
	struct txn t;
	txn_init(&t, &r);
	txn_add(&t, "/etc/kernel/cmdline", "quiet\n", 6, 0);
	txn_delete(&t, "/etc/not-there");
	CHECK_INT(txn_commit(&t), 0);
	CHECK_INT(t.written, 0);
	CHECK_INT(txn_steps(), 0);
	CHECK_INT(lst(dir, "etc/kernel/cmdline").st_ino, before.st_ino);
	CHECK_INT(lst(dir, "etc/kernel/cmdline").st_mtim.tv_nsec, before.st_mtim.tv_nsec);
	txn_free(&t);
	root_close(&r);
	rm_rf(dir);
}

TEST(txn_delete_and_readd)
{
	_cleanup_free_ char *dir = test_mkdtemp("test-txn");
	struct root r;
	CHECK_INT(root_open(&r, dir), 0);
	put(dir, "etc/default/raspi-extra-cmdline", "cgroup_enable=memory\n");
	put(dir, "etc/keep", "keep\n");
	struct txn t;
	txn_init(&t, &r);
	txn_add(&t, "/etc/default/raspi-extra-cmdline", "x", 1, 0);
	txn_delete(&t, "/etc/default/raspi-extra-cmdline"); /* the later call wins */
	CHECK_INT(t.n, 1);
	CHECK_INT(txn_commit(&t), 0);
	CHECK_INT(t.written, 1);
	CHECK(get(dir, "etc/default/raspi-extra-cmdline") == NULL);
	CHECK(same(dir, "etc/keep", "keep\n"));
	txn_free(&t);
	root_close(&r);
	rm_rf(dir);
}

/* An image's absolute symlinks point into the image; a sentinel at the
 * same absolute path on the host must not change. */
TEST(txn_symlinks_stay_in_root)
{
	_cleanup_free_ char *dir = test_mkdtemp("test-txn");
	_cleanup_free_ char *outside = test_mkdtemp("test-txn"); /* absolute host path */
	put(outside, "cmdline", "host sentinel\n");
	put(outside, "entries/a.conf", "host entry\n");
	struct root r;
	CHECK_INT(root_open(&r, dir), 0);

	/* /etc/kernel/cmdline -> OUTSIDE/cmdline (absolute: inside the image) */
	mkdirs(dir, "etc/kernel");
	_cleanup_free_ char *img_target_rel = path_join(outside + 1, "cmdline");
	put(dir, img_target_rel, "image old\n");
	_cleanup_free_ char *link1 = path_join(dir, "etc/kernel/cmdline");
	_cleanup_free_ char *abs_target = path_join(outside, "cmdline");
	CHECK_INT(symlink(abs_target, link1), 0);

	/* /boot/loader/entries -> OUTSIDE/entries (a directory link) */
	_cleanup_free_ char *img_entries_rel = path_join(outside + 1, "entries");
	mkdirs(dir, img_entries_rel);
	_cleanup_free_ char *img_entry_rel = path_join(img_entries_rel, "a.conf");
	put(dir, img_entry_rel, "image entry\n");
	mkdirs(dir, "boot/loader");
	_cleanup_free_ char *link2 = path_join(dir, "boot/loader/entries");
	_cleanup_free_ char *abs_entries = path_join(outside, "entries");
	CHECK_INT(symlink(abs_entries, link2), 0);

	/* /boot/cmdline.txt -> ../../../../../../../cmdline (climbs to "/" of the image) */
	put(dir, "cmdline", "image top\n");
	_cleanup_free_ char *link3 = path_join(dir, "boot/cmdline.txt");
	CHECK_INT(symlink("../../../../../../../cmdline", link3), 0);

	struct txn t;
	txn_init(&t, &r);
	txn_add(&t, "/etc/kernel/cmdline", "image new\n", 10, 0);
	txn_add(&t, "/boot/loader/entries/a.conf", "entry new\n", 10, 0);
	txn_add(&t, "/boot/cmdline.txt", "top new\n", 8, 0);
	CHECK_INT(txn_commit(&t), 0);
	CHECK_INT(t.written, 3);
	txn_free(&t);

	CHECK(same(outside, "cmdline", "host sentinel\n"));
	CHECK(same(outside, "entries/a.conf", "host entry\n"));
	CHECK(same(dir, img_target_rel, "image new\n"));
	CHECK(same(dir, img_entry_rel, "entry new\n"));
	CHECK(same(dir, "cmdline", "top new\n"));
	CHECK(S_ISLNK(lst(dir, "etc/kernel/cmdline").st_mode));
	CHECK(S_ISLNK(lst(dir, "boot/loader/entries").st_mode));
	CHECK(S_ISLNK(lst(dir, "boot/cmdline.txt").st_mode));
	CHECK_INT(count_tmp(dir), 0);
	CHECK_INT(count_tmp(outside), 0);

	/* a dangling absolute link gets its target created inside the image */
	_cleanup_free_ char *link4 = path_join(dir, "etc/kernel/new");
	_cleanup_free_ char *abs_new = path_join(outside, "new");
	CHECK_INT(symlink(abs_new, link4), 0);
	CHECK_INT(write_file_atomic(&r, "/etc/kernel/new", "n\n", 2, 0), 0);
	_cleanup_free_ char *img_new_rel = path_join(outside + 1, "new");
	CHECK(same(dir, img_new_rel, "n\n"));
	CHECK(get(outside, "new") == NULL);

	root_close(&r);
	rm_rf(dir);
	rm_rf(outside);
}

TEST(txn_bad_targets)
{
	_cleanup_free_ char *dir = test_mkdtemp("test-txn");
	struct root r;
	CHECK_INT(root_open(&r, dir), 0);
	put(dir, "etc/ok", "old\n");
	struct stat ok_before = lst(dir, "etc/ok");
	mkdirs(dir, "boot/loader/entries/dir.conf");
	_cleanup_free_ char *fifo = path_join(dir, "boot/cmdline.txt");
	CHECK_INT(mkfifo(fifo, 0644), 0);

	struct txn t;
	txn_init(&t, &r);
	txn_add(&t, "/etc/ok", "new\n", 4, 0);
	txn_add(&t, "/boot/loader/entries/dir.conf", "x\n", 2, 0);
	err_begin();
	int ret = txn_commit(&t);
	_cleanup_free_ char *msg = err_end();
	CHECK_INT(ret, -EXIT_BADINPUT);
	CHECK(strstr(msg, "/boot/loader/entries/dir.conf: not a regular file") != NULL);
	txn_free(&t);

	txn_init(&t, &r);
	txn_add(&t, "/etc/ok", "new\n", 4, 0);
	txn_add(&t, "/boot/cmdline.txt", "x\n", 2, 0); /* a FIFO: must not hang either */
	err_begin();
	ret = txn_commit(&t);
	free(err_end());
	CHECK_INT(ret, -EXIT_BADINPUT);
	txn_free(&t);

	CHECK(same(dir, "etc/ok", "old\n"));
	CHECK_INT(lst(dir, "etc/ok").st_ino, ok_before.st_ino);
	CHECK_INT(count_tmp(dir), 0);
	root_close(&r);
	rm_rf(dir);
}

/* The 3-file (plus one delete) transaction used by the fault tests:
 * two replacements in two directories, one new file, one deletion. */
static void fault_setup(const char *dir)
{
	put(dir, "boot/loader/entries/a.conf", "title A\noptions root=/dev/sda1\n");
	put(dir, "etc/kernel/cmdline", "root=/dev/sda1\n");
	put(dir, "etc/kernel/gone", "to be deleted\n");
	_cleanup_free_ char *a = path_join(dir, "boot/loader/entries/a.conf");
	chmod(a, 0600);
}

static void fault_txn(struct txn *t, const struct root *r)
{
	txn_init(t, r);
	txn_add(t, "/boot/loader/entries/a.conf", "title A\noptions root=/dev/sda1 cgroup_disable=memory\n", 53, 0);
	txn_add(t, "/etc/kernel/cmdline", "root=/dev/sda1 cgroup_disable=memory\n", 37, 0);
	txn_add(t, "/etc/kernel/created", "new file\n", 9, 0);
	txn_delete(t, "/etc/kernel/gone");
}

static bool all_old(const char *dir)
{
	return same(dir, "boot/loader/entries/a.conf", "title A\noptions root=/dev/sda1\n") &&
	       same(dir, "etc/kernel/cmdline", "root=/dev/sda1\n") && same(dir, "etc/kernel/gone", "to be deleted\n") &&
	       get(dir, "etc/kernel/created") == NULL &&
	       (lst(dir, "boot/loader/entries/a.conf").st_mode & 07777) == 0600;
}

static bool all_new(const char *dir)
{
	return same(dir, "boot/loader/entries/a.conf", "title A\noptions root=/dev/sda1 cgroup_disable=memory\n") &&
	       same(dir, "etc/kernel/cmdline", "root=/dev/sda1 cgroup_disable=memory\n") &&
	       get(dir, "etc/kernel/gone") == NULL && same(dir, "etc/kernel/created", "new file\n") &&
	       (lst(dir, "boot/loader/entries/a.conf").st_mode & 07777) == 0600;
}

/* writes 3 + one syncfs (one file system) + renames 3 + unlink 1 +
 * directories 2 */
#define FAULT_STEPS 10

TEST(txn_steps_counted)
{
	_cleanup_free_ char *dir = test_mkdtemp("test-txn");
	fault_setup(dir);
	struct root r;
	CHECK_INT(root_open(&r, dir), 0);
	no_failpoints();
	struct txn t;
	fault_txn(&t, &r);
	CHECK_INT(txn_commit(&t), 0);
	CHECK_INT(txn_steps(), FAULT_STEPS);
	CHECK_INT(t.written, 4);
	CHECK(all_new(dir));
	CHECK_INT(count_tmp(dir), 0);
	txn_free(&t);
	root_close(&r);
	rm_rf(dir);
}

TEST(txn_failpoint_each_step)
{
	for (int n = 1; n <= FAULT_STEPS + 1; n++) {
		_cleanup_free_ char *dir = test_mkdtemp("test-txn");
		fault_setup(dir);
		struct stat cmd_before = lst(dir, "etc/kernel/cmdline");
		struct root r;
		CHECK_INT(root_open(&r, dir), 0);
		char v[16];
		snprintf(v, sizeof(v), "%d", n);
		setenv("MEMCG_POLICY_FAILPOINT", v, 1);
		txn_failpoints_from_env();
		struct txn t;
		fault_txn(&t, &r);
		err_begin();
		int ret = txn_commit(&t);
		_cleanup_free_ char *msg = err_end();
		if (n <= FAULT_STEPS) {
			if (ret != -EXIT_SYSTEM || !all_old(dir) || count_tmp(dir) != 0 || t.written != 0)
				printf("  failpoint %d: ret %d, old %d, temps %d\n", n, ret, all_old(dir), count_tmp(dir));
			CHECK_INT(ret, -EXIT_SYSTEM);
			CHECK(all_old(dir));
			CHECK_INT(t.written, 0);
			CHECK(strstr(msg, "Input/output error") != NULL);
			CHECK(strstr(msg, dir) != NULL); /* the display path */
			/* failing before any rename touches nothing at all */
			if (n <= 5)
				CHECK_INT(lst(dir, "etc/kernel/cmdline").st_ino, cmd_before.st_ino);
		} else {
			CHECK_INT(ret, 0);
			CHECK(all_new(dir));
		}
		if (n == 1)
			CHECK(strstr(msg, "/boot/loader/entries/a.conf: cannot write: Input/output error") != NULL);
		CHECK_INT(count_tmp(dir), 0);
		txn_free(&t);
		root_close(&r);
		rm_rf(dir);
	}
	no_failpoints();
}

/* A kill at each step: every file is old or new, never torn; a rerun
 * converges and clears the killed run's temp files. */
TEST(txn_crashpoint_each_step)
{
	for (int n = 1; n <= FAULT_STEPS; n++) {
		_cleanup_free_ char *dir = test_mkdtemp("test-txn");
		fault_setup(dir);
		struct root r;
		CHECK_INT(root_open(&r, dir), 0);
		pid_t pid = fork();
		if (pid == 0) {
			char v[16];
			snprintf(v, sizeof(v), "%d", n);
			setenv("MEMCG_POLICY_CRASHPOINT", v, 1);
			txn_failpoints_from_env();
			struct txn t;
			fault_txn(&t, &r);
			txn_commit(&t);
			_exit(0);
		}
		int status = 0;
		waitpid(pid, &status, 0);
		CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
		const char *a_old = "title A\noptions root=/dev/sda1\n";
		const char *a_new = "title A\noptions root=/dev/sda1 cgroup_disable=memory\n";
		const char *c_old = "root=/dev/sda1\n", *c_new = "root=/dev/sda1 cgroup_disable=memory\n";
		CHECK(same(dir, "boot/loader/entries/a.conf", a_old) || same(dir, "boot/loader/entries/a.conf", a_new));
		CHECK(same(dir, "etc/kernel/cmdline", c_old) || same(dir, "etc/kernel/cmdline", c_new));
		CHECK(same(dir, "etc/kernel/created", NULL) || same(dir, "etc/kernel/created", "new file\n"));
		/* steps: 1-3 writes, 4 syncfs, 5-7 renames, 8 unlink, 9-10 dirs;
		 * the kill comes right before step n */
		int temps = n <= 3 ? n : n <= 5 ? 3 : n <= 7 ? 8 - n : 0;
		CHECK_INT(count_tmp(dir), temps);
		if (n <= 5)
			CHECK(all_old(dir));
		if (n >= 9)
			CHECK(all_new(dir));

		no_failpoints();
		struct txn t;
		fault_txn(&t, &r);
		CHECK_INT(txn_commit(&t), 0);
		CHECK(all_new(dir));
		CHECK_INT(count_tmp(dir), 0);
		txn_free(&t);
		root_close(&r);
		rm_rf(dir);
	}
}

/* A temp file left by a kill holds the whole new content, its final mode
 * and a name no boot loader picks up. */
TEST(txn_temp_file_name)
{
	_cleanup_free_ char *dir = test_mkdtemp("test-txn");
	put(dir, "boot/loader/entries/a.conf", "old\n");
	_cleanup_free_ char *a = path_join(dir, "boot/loader/entries/a.conf");
	chmod(a, 0640);
	struct root r;
	CHECK_INT(root_open(&r, dir), 0);
	pid_t pid = fork();
	if (pid == 0) {
		setenv("MEMCG_POLICY_CRASHPOINT", "3", 1); /* write, syncfs, [rename] */
		txn_failpoints_from_env();
		write_file_atomic(&r, "/boot/loader/entries/a.conf", "new content\n", 12, 0);
		_exit(0);
	}
	int status = 0;
	waitpid(pid, &status, 0);
	CHECK(WIFSIGNALED(status));
	_cleanup_free_ char *edir = path_join(dir, "boot/loader/entries");
	DIR *d = opendir(edir);
	int found = 0;
	struct dirent *de;
	while (d && (de = readdir(d))) {
		if (!startswith(de->d_name, ".a.conf.memcg-policy."))
			continue;
		found++;
		CHECK_INT(strlen(de->d_name), strlen(".a.conf.memcg-policy.") + 6);
		CHECK(!endswith(de->d_name, ".conf"));
		_cleanup_free_ char *rel = xasprintf("boot/loader/entries/%s", de->d_name);
		CHECK(same(dir, rel, "new content\n"));
		CHECK_INT(lst(dir, rel).st_mode & 07777, 0640);
	}
	if (d)
		closedir(d);
	CHECK_INT(found, 1);
	CHECK(same(dir, "boot/loader/entries/a.conf", "old\n"));
	root_close(&r);
	rm_rf(dir);
}

/* On FAT a temp file is an upper case 8.3 name ("MPXXXXXX.MCG"), which vfat
 * keeps in one directory slot (the power loss tier checks that on a real
 * ESP); a FAT directory's leftovers of either form are removed, and no
 * other name, nor that form outside FAT. The directory here is on the test
 * file system: tmp_create and dir_clean are told it is FAT. */
TEST(txn_fat_temp_names)
{
	_cleanup_free_ char *dir = test_mkdtemp("test-txn");
	put(dir, "efi/loader/entries/a.conf", "entry\n");
	struct root r;
	CHECK_INT(root_open(&r, dir), 0);
	_cleanup_free_ char *edir = path_join(dir, "efi/loader/entries");
	int fd = open(edir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	CHECK(fd >= 0);
	for (int i = 0; i < 20; i++) {
		char *tn = NULL;
		int t = tmp_create(fd, true, "a.conf", 0644, &tn);
		CHECK(t >= 0 && tn);
		if (t < 0 || !tn)
			break;
		close(t);
		CHECK_INT(strlen(tn), 12);
		CHECK(startswith(tn, "MP") && endswith(tn, ".MCG"));
		for (int k = 2; k < 8; k++)
			CHECK((tn[k] >= 'A' && tn[k] <= 'Z') || (tn[k] >= '0' && tn[k] <= '9'));
		_cleanup_free_ char *rel = xasprintf("efi/loader/entries/%s", tn);
		mode_t um = umask(0);
		umask(um);
		CHECK_INT(lst(dir, rel).st_mode & 0777, 0644 & ~um);
		CHECK_INT(unlinkat(fd, tn, 0), 0);
		free(tn);
	}
	static const char *const ours[] = { "MPAB12CD.MCG", "mpzz09yy.mcg", "Mp0000aZ.McG",
					    ".a.conf.memcg-policy.Ab12Cd" };
	static const char *const theirs[] = { "MPAB12CD.TXT", "MPAB12C.MCG", "XPAB12CD.MCG", "MPAB-2CD.MCG",
					      "MPAB12CDE.MCG", "MPAB12CD.MCGX", "a.conf" };
	for (int pass = 0; pass < 2; pass++) {
		bool fat = pass == 1;
		for (size_t i = 0; i < ARRAY_SIZE(ours); i++) {
			_cleanup_free_ char *rel = xasprintf("efi/loader/entries/%s", ours[i]);
			put(dir, rel, "left\n");
		}
		for (size_t i = 0; i < ARRAY_SIZE(theirs); i++) {
			_cleanup_free_ char *rel = xasprintf("efi/loader/entries/%s", theirs[i]);
			put(dir, rel, "entry\n");
		}
		struct txn t;
		txn_init(&t, &r);
		struct txn_dir d = { .path = (char *)"/efi/loader/entries", .fd = fd, .fat = fat };
		dir_clean(&t, &d);
		for (size_t i = 0; i < ARRAY_SIZE(ours); i++) {
			_cleanup_free_ char *p = path_join(edir, ours[i]);
			/* the long form is a temp file everywhere, the 8.3 one only on FAT */
			bool want_gone = fat || ours[i][0] == '.';
			bool there = access(p, F_OK) == 0;
			if (there == want_gone)
				printf("  %s: %s after dir_clean (fat %d)\n", ours[i], there ? "still there" : "removed", fat);
			CHECK(there != want_gone);
		}
		for (size_t i = 0; i < ARRAY_SIZE(theirs); i++) {
			_cleanup_free_ char *rel = xasprintf("efi/loader/entries/%s", theirs[i]);
			CHECK(same(dir, rel, "entry\n"));
		}
		txn_free(&t);
	}
	close(fd);
	root_close(&r);
	rm_rf(dir);
}

/* A read-only file system: a read-only bind mount of the root's /etc in a
 * private mount namespace (a child process). */
static bool can_unshare_mounts(void)
{
	pid_t pid = fork();
	if (pid == 0)
		_exit(unshare(CLONE_NEWNS) == 0 ? 0 : 1);
	int status = 0;
	waitpid(pid, &status, 0);
	return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

TEST(txn_readonly_target)
{
	_cleanup_free_ char *dir = test_mkdtemp("test-txn");
	put(dir, "etc/kernel/cmdline", "root=/dev/sda1\n");
	put(dir, "boot/loader/entries/a.conf", "options root=/dev/sda1\n");
	err_begin();
	pid_t pid = fork();
	if (pid == 0) {
		_cleanup_free_ char *etc = path_join(dir, "etc");
		if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
		    mount(etc, etc, NULL, MS_BIND, NULL) < 0 ||
		    mount(NULL, etc, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY, NULL) < 0) {
			perror("  mount");
			_exit(99);
		}
		struct root r;
		if (root_open(&r, dir) < 0)
			_exit(98);
		struct txn t;
		txn_init(&t, &r);
		txn_add(&t, "/boot/loader/entries/a.conf", "options root=/dev/sda1 x\n", 25, 0);
		txn_add(&t, "/etc/kernel/cmdline", "root=/dev/sda1 x\n", 17, 0);
		int ret = txn_commit(&t);
		diag_print(); /* as the command layer does before it exits */
		_exit(ret < 0 ? -ret : 0);
	}
	int status = 0;
	waitpid(pid, &status, 0);
	_cleanup_free_ char *msg = err_end();
	CHECK(WIFEXITED(status));
	CHECK_INT(WEXITSTATUS(status), EXIT_SYSTEM);
	CHECK(strstr(msg, "/etc/kernel/cmdline: cannot create a temporary file: Read-only file system") != NULL);
	CHECK(same(dir, "etc/kernel/cmdline", "root=/dev/sda1\n"));
	CHECK(same(dir, "boot/loader/entries/a.conf", "options root=/dev/sda1\n"));
	CHECK_INT(count_tmp(dir), 0);
	rm_rf(dir);
}

/* Rollback after the renames puts back mode and owner too. */
TEST(txn_rollback_keeps_owner)
{
	_cleanup_free_ char *dir = test_mkdtemp("test-txn");
	put(dir, "etc/kernel/cmdline", "old\n");
	_cleanup_free_ char *p = path_join(dir, "etc/kernel/cmdline");
	CHECK_INT(chmod(p, 0604), 0);
	CHECK_INT(chown(p, 42, 43), 0);
	struct root r;
	CHECK_INT(root_open(&r, dir), 0);
	setenv("MEMCG_POLICY_FAILPOINT", "4", 1); /* write, syncfs, rename, [dir fsync] */
	txn_failpoints_from_env();
	err_begin();
	int ret = write_file_atomic(&r, "/etc/kernel/cmdline", "new\n", 4, 0);
	free(err_end());
	no_failpoints();
	CHECK_INT(ret, -EXIT_SYSTEM);
	CHECK(same(dir, "etc/kernel/cmdline", "old\n"));
	struct stat st = lst(dir, "etc/kernel/cmdline");
	CHECK_INT(st.st_mode & 07777, 0604);
	CHECK_INT(st.st_uid, 42);
	CHECK_INT(st.st_gid, 43);
	CHECK_INT(count_tmp(dir), 0);
	root_close(&r);
	rm_rf(dir);
}

/* A failed creation removes the parent directories it made. */
TEST(txn_rollback_removes_made_dirs)
{
	_cleanup_free_ char *dir = test_mkdtemp("test-txn");
	struct root r;
	CHECK_INT(root_open(&r, dir), 0);
	setenv("MEMCG_POLICY_FAILPOINT", "1", 1);
	txn_failpoints_from_env();
	err_begin();
	int ret = write_file_atomic(&r, "/var/lib/memcg-policy/journal.json", "{}\n", 3, 0);
	free(err_end());
	no_failpoints();
	CHECK_INT(ret, -EXIT_SYSTEM);
	CHECK_INT(lst(dir, "var").st_ino, 0);
	root_close(&r);
	rm_rf(dir);
}

/* Extended attributes of the old file are on its replacement: user.*,
 * security.* and trusted.* (as root), a POSIX ACL (system.posix_acl_access,
 * in the binary form the kernel keeps: a named user with rw-), also when
 * the commit is rolled back. */
static void set_acl(const char *path)
{
	/* version 2; entries (tag, perm, id): USER_OBJ rw, USER 4321 rw,
	 * GROUP_OBJ r, MASK rw, OTHER r */
	static const struct {
		unsigned short tag, perm;
		unsigned id;
	} acl[] = {
		{ 0x01, 6, 0xffffffffu }, { 0x02, 6, 4321 }, { 0x04, 4, 0xffffffffu },
		{ 0x10, 6, 0xffffffffu }, { 0x20, 4, 0xffffffffu },
	};
	unsigned char buf[4 + sizeof(acl)];
	const unsigned version = 2;
	memcpy(buf, &version, 4);
	memcpy(buf + 4, acl, sizeof(acl));
	CHECK_INT(setxattr(path, "system.posix_acl_access", buf, sizeof(buf), 0), 0);
}

static bool has_xattr(const char *path, const char *name, const char *want)
{
	char v[256];
	ssize_t n = getxattr(path, name, v, sizeof(v));
	return n == (ssize_t)strlen(want) && memcmp(v, want, (size_t)n) == 0;
}

TEST(txn_keeps_xattrs)
{
	_cleanup_free_ char *dir = test_mkdtemp("test-txn");
	struct root r;
	CHECK_INT(root_open(&r, dir), 0);
	put(dir, "etc/kernel/cmdline", "root=/dev/sda1\n");
	_cleanup_free_ char *p = path_join(dir, "etc/kernel/cmdline");
	if (setxattr(p, "user.memcg-test", "kept", 4, 0) < 0) {
		printf("# no user xattrs on this file system (%s): nothing to keep\n", strerror(errno));
		root_close(&r);
		rm_rf(dir);
		return;
	}
	bool root = geteuid() == 0;
	if (root) {
		CHECK_INT(setxattr(p, "security.memcg-test", "label", 5, 0), 0);
		CHECK_INT(setxattr(p, "trusted.memcg-test", "t", 1, 0), 0);
	}
	set_acl(p);
	char before_acl[256];
	ssize_t before_len = getxattr(p, "system.posix_acl_access", before_acl, sizeof(before_acl));
	CHECK(before_len > 0);
	mode_t before_mode = lst(dir, "etc/kernel/cmdline").st_mode & 07777;
	ino_t ino = lst(dir, "etc/kernel/cmdline").st_ino;

	const char *nw = "root=/dev/sda1 cgroup_disable=memory\n";
	CHECK_INT(write_file_atomic(&r, "/etc/kernel/cmdline", nw, strlen(nw), 0644), 0);
	CHECK(lst(dir, "etc/kernel/cmdline").st_ino != ino); /* a new file */
	CHECK(same(dir, "etc/kernel/cmdline", nw));
	CHECK(has_xattr(p, "user.memcg-test", "kept"));
	if (root) {
		CHECK(has_xattr(p, "security.memcg-test", "label"));
		CHECK(has_xattr(p, "trusted.memcg-test", "t"));
	}
	char after_acl[256];
	ssize_t after_len = getxattr(p, "system.posix_acl_access", after_acl, sizeof(after_acl));
	CHECK_INT(after_len, before_len);
	CHECK(after_len == before_len && memcmp(after_acl, before_acl, (size_t)before_len) == 0);
	CHECK_INT(lst(dir, "etc/kernel/cmdline").st_mode & 07777, before_mode); /* group: the mask, rw */

	/* a rollback puts the old content back with its attributes: the
	 * second rename (step 5: two writes, one syncfs, two renames) fails */
	put(dir, "etc/kernel/b", "x\n");
	struct txn t;
	txn_init(&t, &r);
	txn_add(&t, "/etc/kernel/cmdline", "root=/dev/sda1\n", 15, 0644);
	txn_add(&t, "/etc/kernel/b", "y\n", 2, 0644);
	setenv("MEMCG_POLICY_FAILPOINT", "5", 1);
	txn_failpoints_from_env();
	err_begin();
	int ret = txn_commit(&t);
	free(err_end());
	unsetenv("MEMCG_POLICY_FAILPOINT");
	txn_failpoints_from_env();
	txn_free(&t);
	CHECK_INT(ret, -EXIT_SYSTEM);
	CHECK(same(dir, "etc/kernel/cmdline", nw));
	CHECK(same(dir, "etc/kernel/b", "x\n"));
	CHECK(has_xattr(p, "user.memcg-test", "kept"));
	after_len = getxattr(p, "system.posix_acl_access", after_acl, sizeof(after_acl));
	CHECK(after_len == before_len && memcmp(after_acl, before_acl, (size_t)before_len) == 0);
	root_close(&r);
	rm_rf(dir);
}

/* A file this run read is known again by its identity: the commit takes
 * its bytes and attributes as read, and a change made since (an attribute,
 * the mode) moves its ctime, so the commit reads it again and keeps what it
 * has now, not what was read. */
TEST(txn_uses_what_was_read_only_while_unchanged)
{
	_cleanup_free_ char *dir = test_mkdtemp("test-txn");
	struct root r;
	CHECK_INT(root_open(&r, dir), 0);
	put(dir, "etc/kernel/cmdline", "root=/dev/sda1\n");
	_cleanup_free_ char *p = path_join(dir, "etc/kernel/cmdline");
	if (setxattr(p, "user.memcg-test", "one", 3, 0) < 0) {
		printf("# no user xattrs on this file system (%s): nothing to keep\n", strerror(errno));
		root_close(&r);
		rm_rf(dir);
		return;
	}
	CHECK_INT(chmod(p, 0640), 0);
	usleep(20000); /* older than the read by more than the granularity */
	_cleanup_free_ char *text = NULL;
	CHECK_INT(root_read_file(&r, "/etc/kernel/cmdline", 4096, &text, NULL), 0);
	const char *nw = "root=/dev/sda1 quiet\n";
	CHECK_INT(write_file_atomic(&r, "/etc/kernel/cmdline", nw, strlen(nw), 0644), 0);
	CHECK(same(dir, "etc/kernel/cmdline", nw));
	CHECK(has_xattr(p, "user.memcg-test", "one"));
	CHECK_INT(lst(dir, "etc/kernel/cmdline").st_mode & 07777, 0640);

	/* read again, then changed behind the tool's back */
	usleep(20000);
	free(text);
	text = NULL;
	CHECK_INT(root_read_file(&r, "/etc/kernel/cmdline", 4096, &text, NULL), 0);
	CHECK_INT(setxattr(p, "user.memcg-test", "two", 3, 0), 0);
	CHECK_INT(chmod(p, 0600), 0);
	const char *nw2 = "root=/dev/sda1 quiet splash\n";
	CHECK_INT(write_file_atomic(&r, "/etc/kernel/cmdline", nw2, strlen(nw2), 0644), 0);
	CHECK(same(dir, "etc/kernel/cmdline", nw2));
	CHECK(has_xattr(p, "user.memcg-test", "two"));
	CHECK_INT(lst(dir, "etc/kernel/cmdline").st_mode & 07777, 0600);
	readcache_clear();
	root_close(&r);
	rm_rf(dir);
}

int main(void)
{
	struct test_case cases[] = {
		T(txn_create),
		T(txn_replace_keeps_mode_owner),
		T(txn_unchanged_not_written),
		T(txn_delete_and_readd),
		T(txn_symlinks_stay_in_root),
		T(txn_bad_targets),
		T(txn_uses_what_was_read_only_while_unchanged),
		T(txn_steps_counted),
		T(txn_failpoint_each_step),
		T(txn_crashpoint_each_step),
		T(txn_temp_file_name),
		T(txn_fat_temp_names),
		T(txn_rollback_keeps_owner),
		T(txn_rollback_removes_made_dirs),
		T(txn_keeps_xattrs),
		T(txn_readonly_target),
	};
	size_t n = ARRAY_SIZE(cases);
	/* without mount namespaces the read-only test cannot run: it is
	 * reported as skipped, not as passed */
	if (!can_unshare_mounts()) {
		printf("SKIP: txn_readonly_target (no private mount namespace here)\n");
		n--;
	}
	return test_run_all(cases, n);
}
