/* test-journal.c - the journal (facts/journal.c): load of a missing journal,
 * exact round trip of odd contents, the token bookkeeping of
 * journal_record, corrupt journals, and the lock between two processes. */
#include "facts/journal.h"
#include "io/rootfs.h"
#include "slots/slot.h"
#include "lib/util.h"
#include "test.h"
#include "test-fs.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* ---- helpers ------------------------------------------------------------- */

static void put_bytes(const char *dir, const char *rel, const char *content, size_t len)
{
	_cleanup_free_ char *p = path_join(dir, rel);
	for (char *s = strchr(p + 1, '/'); s; s = strchr(s + 1, '/')) {
		*s = '\0';
		mkdir(p, 0755);
		*s = '/';
	}
	FILE *f = fopen(p, "w");
	if (!f)
		abort();
	fwrite(content, 1, len, f);
	fclose(f);
}

static void put(const char *dir, const char *rel, const char *content)
{
	put_bytes(dir, rel, content, strlen(content));
}

static struct strv toks(const char *a, const char *b)
{
	struct strv sv = {0};
	if (a)
		strv_pushdup(&sv, a);
	if (b)
		strv_pushdup(&sv, b);
	return sv;
}

static bool bytes_eq(const char *a, size_t alen, const char *b, size_t blen)
{
	return a && b && alen == blen && memcmp(a, b, alen) == 0;
}

/* ---- tests ------------------------------------------------------------- */

TEST(journal_missing_is_empty)
{
	_cleanup_free_ char *dir = test_mkdtemp("test-journal");
	struct root r;
	CHECK_INT(root_open(&r, dir), 0);
	struct journal j;
	CHECK_INT(journal_load(&r, &j), 0);
	CHECK_INT(j.n, 0);
	size_t len;
	_cleanup_free_ char *text = journal_serialize(&j, &len);
	CHECK_INT(len, strlen(text));
	CHECK(endswith(text, "\n"));
	CHECK(strstr(text, "\"version\": 1") != NULL);
	journal_free(&j);
	root_close(&r);
	rm_rf(dir);
}

TEST(journal_round_trip)
{
	_cleanup_free_ char *dir = test_mkdtemp("test-journal");
	struct root r;
	CHECK_INT(root_open(&r, dir), 0);
	struct journal j = {0};
	/* contents with quotes, backslashes, tabs, a control byte, a non-UTF-8
	 * byte and a NUL must come back byte for byte */
	static const char orig[] = "title \"A\"\\\toptions root=/dev/sda1 \x01\xff\n\0tail";
	size_t orig_len = sizeof(orig) - 1;
	const char *written = "title \"A\"\\\toptions root=/dev/sda1 cgroup_disable=memory\n";
	struct strv add = toks("cgroup_disable=memory", NULL), rem = toks("cgroup_enable=memory", NULL);
	journal_record(&j, "/boot/loader/entries/a.conf", "6.1.0-13-amd64", true, orig, orig_len, written,
		       strlen(written), &add, &rem);
	journal_record(&j, "/etc/kernel/cmdline", NULL, false, NULL, 0, "root=/dev/sda1 x\n", 17, &add, NULL);
	strv_free(&add);
	strv_free(&rem);
	CHECK_INT(j.n, 2);

	size_t len;
	_cleanup_free_ char *text = journal_serialize(&j, &len);
	CHECK(endswith(text, "\n"));
	CHECK(strstr(text, "\"/boot/loader/entries/a.conf\"") != NULL); /* no "\/" */
	CHECK(strstr(text, "\"kernel\": null") != NULL);
	/* the files are listed by path */
	CHECK(strstr(text, "/boot/loader") < strstr(text, "/etc/kernel/cmdline"));
	put_bytes(dir, JOURNAL_PATH, text, len);

	struct journal k;
	CHECK_INT(journal_load(&r, &k), 0);
	CHECK_INT(k.n, 2);
	struct journal_entry *e = journal_find(&k, "/boot/loader/entries/a.conf");
	CHECK(e != NULL);
	if (e) {
		CHECK_STR(e->kernel, "6.1.0-13-amd64");
		CHECK(e->had_original);
		CHECK(bytes_eq(e->original, e->original_len, orig, orig_len));
		CHECK(bytes_eq(e->written, e->written_len, written, strlen(written)));
		CHECK_INT(e->added.n, 1);
		CHECK_INT(e->removed.n, 1);
		CHECK_STR(e->removed.n ? e->removed.v[0] : NULL, "cgroup_enable=memory");
		/* before, the original's bytes, written as true and read back whole */
		CHECK(bytes_eq(e->before, e->before_len, orig, orig_len));
	}
	CHECK(strstr(text, "\"before\": true") != NULL);
	e = journal_find(&k, "/etc/kernel/cmdline");
	CHECK(e != NULL);
	if (e) {
		CHECK(e->kernel == NULL);
		CHECK(!e->had_original);
		CHECK(e->original == NULL);
		CHECK(bytes_eq(e->written, e->written_len, "root=/dev/sda1 x\n", 17));
	}
	/* the same journal serializes to the same bytes */
	size_t len2;
	_cleanup_free_ char *text2 = journal_serialize(&k, &len2);
	CHECK(bytes_eq(text, len, text2, len2));
	journal_free(&k);
	journal_free(&j);
	root_close(&r);
	rm_rf(dir);
}

/* A write on a file someone changed since the tool's last write rebases
 * the record: the original becomes that change without the tool's tokens
 * (and with the admin's it had removed), so revert keeps it. */
/* the journal is written by hand and read by json-c: every byte value,
 * in every string it writes, comes back as it was */
TEST(journal_every_byte_round_trips)
{
	_cleanup_free_ char *dir = test_mkdtemp("test-journal");
	struct root r;
	CHECK_INT(root_open(&r, dir), 0);
	struct journal j = { 0 };
	char all[512];
	for (size_t i = 0; i < 256; i++) {
		all[i] = (char)i;
		all[511 - i] = (char)i;
	}
	struct strv add = toks("a\"b\\c\x01\x7f\xc3\xa9", NULL);
	journal_record(&j, "/boot/loader/entries/\"q\\\x1f\xff.conf", "6.1\t", true, all, sizeof(all), all + 1,
		       sizeof(all) - 2, &add, NULL);
	strv_free(&add);
	size_t len;
	_cleanup_free_ char *text = journal_serialize(&j, &len);
	CHECK_INT(len, strlen(text));
	put_bytes(dir, JOURNAL_PATH, text, len);
	struct journal k;
	CHECK_INT(journal_load(&r, &k), 0);
	CHECK_INT(k.n, 1);
	struct journal_entry *e = k.n ? &k.v[0] : NULL;
	if (e) {
		CHECK_STR(e->path, "/boot/loader/entries/\"q\\\x1f\xff.conf");
		CHECK_STR(e->kernel, "6.1\t");
		CHECK(bytes_eq(e->original, e->original_len, all, sizeof(all)));
		CHECK(bytes_eq(e->written, e->written_len, all + 1, sizeof(all) - 2));
		CHECK_INT(e->added.n, 1);
		CHECK_STR(e->added.n ? e->added.v[0] : NULL, "a\"b\\c\x01\x7f\xc3\xa9");
	}
	size_t len2;
	_cleanup_free_ char *text2 = journal_serialize(&k, &len2);
	CHECK(bytes_eq(text, len, text2, len2));
	journal_free(&k);
	journal_free(&j);
	root_close(&r);
	rm_rf(dir);
}

TEST(journal_record_rebase)
{
	struct journal j = {0};
	const char *p = "/boot/cmdline.txt";
	struct strv add = toks("cgroup_disable=memory", NULL);
	journal_record(&j, p, NULL, true, "root=/dev/a quiet\n", 18, "root=/dev/a quiet cgroup_disable=memory\n", 40,
		       &add, NULL);
	/* the admin moves root= and drops the token; the tool adds it again */
	journal_record(&j, p, NULL, true, "root=/dev/b quiet\n", 18, "root=/dev/b quiet cgroup_disable=memory\n", 40,
		       &add, NULL);
	struct journal_entry *e = journal_find(&j, p);
	CHECK(e && e->had_original);
	CHECK(e && bytes_eq(e->original, e->original_len, "root=/dev/b quiet\n", 18));
	/* the same, with the token kept by the admin: taken out of the original */
	journal_record(&j, p, NULL, true, "root=/dev/c cgroup_disable=memory\n", 34,
		       "root=/dev/c cgroup_disable=memory x\n", 36, NULL, NULL);
	e = journal_find(&j, p);
	CHECK(e && bytes_eq(e->original, e->original_len, "root=/dev/c\n", 12));
	/* a write that never landed (the file as before it) is no change */
	journal_record(&j, p, NULL, true, "root=/dev/c cgroup_disable=memory\n", 34, "w\n", 2, NULL, NULL);
	e = journal_find(&j, p);
	CHECK(e && bytes_eq(e->original, e->original_len, "root=/dev/c\n", 12));
	/* a file the tool created and the admin then changed is the admin's */
	journal_record(&j, "/etc/kernel/cmdline", NULL, false, NULL, 0, "root=x cgroup_disable=memory\n", 29, &add,
		       NULL);
	journal_record(&j, "/etc/kernel/cmdline", NULL, true, "root=y\n", 7, "root=y cgroup_disable=memory\n", 29,
		       &add, NULL);
	e = journal_find(&j, "/etc/kernel/cmdline");
	CHECK(e && e->had_original);
	CHECK(e && bytes_eq(e->original, e->original_len, "root=y\n", 7));
	strv_free(&add);
	journal_free(&j);
}

TEST(journal_record_semantics)
{
	struct journal j = {0};
	const char *p = "/boot/cmdline.txt";
	struct strv add = toks("cgroup_enable=memory", NULL), rem = toks("cgroup_disable=memory", NULL);
	/* run 1 (on): admin's cgroup_disable=memory removed, ours added */
	journal_record(&j, p, NULL, true, "quiet cgroup_disable=memory\n", 28, "quiet cgroup_enable=memory\n", 27, &add,
		       &rem);
	strv_free(&add);
	strv_free(&rem);
	/* run 2 (off): ours taken out again, the admin's token put back */
	add = toks("cgroup_disable=memory", NULL);
	rem = toks("cgroup_enable=memory", NULL);
	journal_record(&j, p, NULL, true, "quiet cgroup_enable=memory\n", 27, "quiet cgroup_disable=memory x\n", 30,
		       &add, &rem);
	strv_free(&add);
	strv_free(&rem);
	struct journal_entry *e = journal_find(&j, p);
	CHECK(e != NULL);
	if (e) {
		/* the first original is kept, written is the last */
		CHECK(bytes_eq(e->original, e->original_len, "quiet cgroup_disable=memory\n", 28));
		CHECK(bytes_eq(e->written, e->written_len, "quiet cgroup_disable=memory x\n", 30));
		/* the tool's own token left `added` and did not enter `removed`;
		 * the admin's token came back and left `removed` */
		CHECK_INT(e->added.n, 0);
		CHECK_INT(e->removed.n, 0);
	}

	/* tokens accumulate without duplicates (each write made on the last) */
	add = toks("cgroup_disable=memory", "foo=1");
	journal_record(&j, p, NULL, true, "quiet cgroup_disable=memory x\n", 30, "y\n", 2, &add, NULL);
	journal_record(&j, p, NULL, true, "y\n", 2, "z\n", 2, &add, NULL);
	strv_free(&add);
	e = journal_find(&j, p);
	CHECK(e && e->added.n == 2);

	/* back to the original bytes: recorded (write-ahead: the change may
	 * not land), with what the file had before it; forgotten only once the
	 * file is seen as written */
	journal_record(&j, p, NULL, true, "z\n", 2, "quiet cgroup_disable=memory\n", 28, NULL, NULL);
	e = journal_find(&j, p);
	CHECK(e && bytes_eq(e->written, e->written_len, "quiet cgroup_disable=memory\n", 28));
	CHECK(e && bytes_eq(e->before, e->before_len, "z\n", 2));
	journal_prune(&j, p, "z\n", 2); /* the change did not land */
	CHECK(journal_find(&j, p) != NULL);
	journal_prune(&j, p, NULL, 0); /* nor is the file gone as written */
	CHECK(journal_find(&j, p) != NULL);
	journal_prune(&j, p, "quiet cgroup_disable=memory\n", 28); /* landed */
	CHECK(journal_find(&j, p) == NULL);
	CHECK_INT(j.n, 0);
	/* a record that is not back to the original is never pruned */
	journal_record(&j, p, NULL, true, "a\n", 2, "b\n", 2, NULL, NULL);
	journal_prune(&j, p, "b\n", 2);
	CHECK(journal_find(&j, p) != NULL);
	journal_forget(&j, p);

	/* a file the tool created and then deleted: forgotten once it is gone */
	journal_record(&j, "/etc/kernel/cmdline", NULL, false, NULL, 0, "root=x\n", 7, NULL, NULL);
	CHECK_INT(j.n, 1);
	e = journal_find(&j, "/etc/kernel/cmdline");
	CHECK(e && e->before == NULL);
	journal_record(&j, "/etc/kernel/cmdline", NULL, true, "root=x\n", 7, NULL, 0, NULL, NULL);
	CHECK_INT(j.n, 1);
	journal_prune(&j, "/etc/kernel/cmdline", "root=x\n", 7);
	CHECK_INT(j.n, 1);
	journal_prune(&j, "/etc/kernel/cmdline", NULL, 0);
	CHECK_INT(j.n, 0);

	/* forget and find */
	journal_record(&j, "/a", "1.0", true, "a", 1, "b", 1, NULL, NULL);
	journal_record(&j, "/b", "2.0", true, "a", 1, "c", 1, NULL, NULL);
	journal_record(&j, "/c", NULL, true, "a", 1, "d", 1, NULL, NULL);
	journal_forget(&j, "/b");
	CHECK_INT(j.n, 2);
	CHECK(journal_find(&j, "/b") == NULL);
	CHECK(journal_find(&j, "/c") != NULL && journal_find(&j, "/a") != NULL);
	CHECK_STR(journal_find(&j, "/a") ? journal_find(&j, "/a")->kernel : NULL, "1.0");
	journal_free(&j);
}

static const char *const corrupt[] = {
	"not json",
	"",
	"{\"version\": 1, \"files\": []} trailing",
	"[1, 2]",
	"{\"version\": 2, \"files\": []}",
	"{\"version\": \"1\", \"files\": []}",
	"{\"version\": 1, \"files\": {}}",
	"{\"version\": 1, \"files\": [{\"had_original\": false, \"written\": \"x\"}]}",
	"{\"version\": 1, \"files\": [{\"path\": \"rel\", \"had_original\": false, \"written\": \"x\"}]}",
	"{\"version\": 1, \"files\": [{\"path\": \"/etc/kernel/cmdline\", \"had_original\": true, \"written\": \"x\"}]}",
	"{\"version\": 1, \"files\": [{\"path\": \"/etc/kernel/cmdline\", \"had_original\": false, \"written\": \"x\", \"added\": [1]}]}",
	"{\"version\": 1, \"files\": [{\"path\": \"/etc/kernel/cmdline\", \"had_original\": false, \"written\": \"x\"},"
	" {\"path\": \"/etc/kernel/cmdline\", \"had_original\": false, \"written\": \"y\"}]}",
	"{\"version\": 1, \"files\": [{\"path\": \"/etc/kernel/cmdline\", \"had_original\": false, \"written\": \"x\"",
	/* paths that are no boot file the tool manages: revert would write them */
	"{\"version\": 1, \"files\": [{\"path\": \"/etc/passwd\", \"had_original\": false, \"written\": \"x\"}]}",
	"{\"version\": 1, \"files\": [{\"path\": \"/boot/loader/entries/../../etc/passwd.conf\", \"had_original\": false, \"written\": \"x\"}]}",
	"{\"version\": 1, \"files\": [{\"path\": \"/boot/loader/entries/.x.conf\", \"had_original\": false, \"written\": \"x\"}]}",
	"{\"version\": 1, \"files\": [{\"path\": \"/boot/loader/entries/a.txt\", \"had_original\": false, \"written\": \"x\"}]}",
	"{\"version\": 1, \"files\": [{\"path\": \"//etc/kernel/cmdline\", \"had_original\": false, \"written\": \"x\"}]}",
	"{\"version\": 1, \"files\": [{\"path\": \"/etc/kernel/../kernel/cmdline\", \"had_original\": false, \"written\": \"x\"}]}",
	"{\"version\": 1, \"files\": [{\"path\": \"/var/lib/memcg-policy/journal.json\", \"had_original\": false, \"written\": \"x\"}]}",
	/* before: true stands for the original; false, or true without one, means nothing */
	"{\"version\": 1, \"files\": [{\"path\": \"/etc/kernel/cmdline\", \"had_original\": true, \"original\": \"o\", \"written\": \"x\", \"before\": false}]}",
	"{\"version\": 1, \"files\": [{\"path\": \"/etc/kernel/cmdline\", \"had_original\": false, \"written\": \"x\", \"before\": true}]}",
};

TEST(journal_corrupt)
{
	_cleanup_free_ char *dir = test_mkdtemp("test-journal");
	struct root r;
	CHECK_INT(root_open(&r, dir), 0);
	_cleanup_free_ char *disp = path_join(dir, JOURNAL_PATH);
	_cleanup_free_ char *want = xasprintf("memcg-policy: %s: corrupt journal", disp);
	for (size_t i = 0; i < ARRAY_SIZE(corrupt); i++) {
		put(dir, JOURNAL_PATH, corrupt[i]);
		struct journal j;
		err_begin();
		int ret = journal_load(&r, &j);
		_cleanup_free_ char *msg = err_end();
		if (ret != -EXIT_BADINPUT)
			printf("  journal %zu (%s) gave %d\n", i, corrupt[i], ret);
		CHECK_INT(ret, -EXIT_BADINPUT);
		CHECK(strstr(msg, want) != NULL);
		CHECK_INT(j.n, 0);
		journal_free(&j);
	}
	/* a valid one with an unknown key and trailing whitespace loads */
	put(dir, JOURNAL_PATH,
	    "{\"version\": 1, \"later\": true, \"files\": [{\"path\": \"/etc/kernel/cmdline\", \"had_original\": false,"
	    " \"written\": \"x\"}]}\n\n");
	struct journal j;
	CHECK_INT(journal_load(&r, &j), 0);
	CHECK_INT(j.n, 1);
	journal_free(&j);
	/* a directory where the journal should be */
	_cleanup_free_ char *jp = path_join(dir, JOURNAL_PATH);
	unlink(jp);
	mkdir(jp, 0755);
	err_begin();
	int ret = journal_load(&r, &j);
	free(err_end());
	CHECK_INT(ret, -EXIT_BADINPUT);
	root_close(&r);
	rm_rf(dir);
}

/* The journal says what revert writes: one that someone other than root
 * could have written is refused (exit 3), whatever it holds. */
TEST(journal_untrusted_owner_or_mode)
{
	_cleanup_free_ char *dir = test_mkdtemp("test-journal");
	struct root r;
	CHECK_INT(root_open(&r, dir), 0);
	const char *good = "{\"version\": 1, \"files\": []}\n";
	put(dir, JOURNAL_PATH, good);
	_cleanup_free_ char *jp = path_join(dir, JOURNAL_PATH);
	static const mode_t modes[] = { 0620, 0602, 0666, 0660, 0622 };
	for (size_t i = 0; i < ARRAY_SIZE(modes); i++) {
		CHECK_INT(chmod(jp, modes[i]), 0);
		struct journal j;
		err_begin();
		int ret = journal_load(&r, &j);
		_cleanup_free_ char *msg = err_end();
		CHECK_INT(ret, -EXIT_BADINPUT);
		CHECK(msg && strstr(msg, "unsafe journal: writable by") != NULL);
		journal_free(&j);
	}
	/* readable by others is no reason to refuse (an older journal was
	 * 0644); written again it becomes 0600 */
	CHECK_INT(chmod(jp, 0644), 0);
	struct journal j;
	CHECK_INT(journal_load(&r, &j), 0);
	journal_free(&j);
	if (geteuid() == 0) {
		CHECK_INT(chown(jp, 12345, 0), 0);
		err_begin();
		int ret = journal_load(&r, &j);
		_cleanup_free_ char *msg = err_end();
		CHECK_INT(ret, -EXIT_BADINPUT);
		CHECK(msg && strstr(msg, "unsafe journal: owned by uid 12345") != NULL);
		journal_free(&j);
	} else {
		printf("# not root: no journal of another owner\n");
	}
	root_close(&r);
	rm_rf(dir);
}

TEST(journal_paths_are_slots)
{
	static const char *const yes[] = { "/etc/kernel/cmdline", "/boot/loader/entries/a-6.1.conf",
					   "/efi/loader/entries/x.conf", "/boot/efi/loader/entries/x.conf",
					   "/etc/default/grub", "/boot/grub2/grubenv", "/boot/firmware/cmdline.txt" };
	static const char *const no[] = { "/etc/passwd", "/boot/loader/entries/.a.conf", "/boot/loader/entries/",
					  "/boot/loader/entries/a/b.conf", "/boot/loader/entries/../x.conf",
					  "/etc/kernel/cmdline/", "/etc/kernel//cmdline", "/boot/loader/entries/a.conf.bak",
					  JOURNAL_PATH, "" };
	for (size_t i = 0; i < ARRAY_SIZE(yes); i++)
		CHECK(slot_kind_of_path(yes[i], NULL));
	for (size_t i = 0; i < ARRAY_SIZE(no); i++)
		CHECK(!slot_kind_of_path(no[i], NULL));
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A child holds the lock for a while; the parent says it waits, once, and
 * gets the lock when the child is gone. */
static void lock_contended(int verbosity, bool expect_message)
{
	_cleanup_free_ char *dir = test_mkdtemp("test-journal");
	struct root r;
	CHECK_INT(root_open(&r, dir), 0);
	int sync_pipe[2];
	CHECK_INT(pipe(sync_pipe), 0);
	pid_t pid = fork();
	if (pid == 0) {
		close(sync_pipe[0]);
		int fd = lock_take(&r);
		if (fd < 0)
			_exit(1);
		char c = 'x';
		if (write(sync_pipe[1], &c, 1) != 1)
			_exit(2);
		usleep(300 * 1000);
		_exit(0);
	}
	close(sync_pipe[1]);
	char c;
	CHECK_INT(read(sync_pipe[0], &c, 1), 1);
	close(sync_pipe[0]);
	int saved = log_verbosity;
	log_verbosity = verbosity;
	double t0 = now();
	err_begin();
	int fd = lock_take(&r);
	_cleanup_free_ char *msg = err_end();
	double waited = now() - t0;
	log_verbosity = saved;
	CHECK(fd >= 0);
	/* the lock is only ours once the child let it go (it holds it 300 ms) */
	CHECK(waited > 0.2);
	int status = 0;
	CHECK_INT(waitpid(pid, &status, 0), pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	_cleanup_free_ char *disp = path_join(dir, "/run/memcg-policy.lock");
	_cleanup_free_ char *want =
		xasprintf("memcg-policy: waiting for the lock held by another memcg-policy (%s)\n", disp);
	if (expect_message)
		CHECK_STR(msg, want);
	else
		CHECK_STR(msg, "");
	if (fd >= 0)
		close(fd);
	root_close(&r);
	rm_rf(dir);
}

TEST(lock_waits_for_holder) { lock_contended(0, true); }
TEST(lock_waits_quietly_with_q) { lock_contended(-1, false); }

TEST(lock_creates_run)
{
	_cleanup_free_ char *dir = test_mkdtemp("test-journal");
	struct root r;
	CHECK_INT(root_open(&r, dir), 0);
	err_begin();
	int fd = lock_take(&r);
	_cleanup_free_ char *msg = err_end();
	CHECK(fd >= 0);
	CHECK_STR(msg, ""); /* nobody else holds it: no message */
	_cleanup_free_ char *lp = path_join(dir, "run/memcg-policy.lock");
	struct stat st;
	CHECK_INT(lstat(lp, &st), 0);
	CHECK(S_ISREG(st.st_mode));
	CHECK_INT(st.st_mode & 07777, 0600);
	/* taken again through another descriptor in the same process: the
	 * first holds it, so a non-blocking attempt fails */
	int fd2 = open(lp, O_RDWR | O_CLOEXEC);
	CHECK(fd2 >= 0);
	CHECK(flock(fd2, LOCK_EX | LOCK_NB) < 0 && errno == EWOULDBLOCK);
	close(fd2);
	if (fd >= 0)
		close(fd);

	/* a symlinked /run inside an image stays inside it */
	_cleanup_free_ char *dir2 = test_mkdtemp("test-journal");
	_cleanup_free_ char *outside = test_mkdtemp("test-journal");
	_cleanup_free_ char *run2 = path_join(dir2, "run");
	CHECK_INT(symlink(outside, run2), 0);
	_cleanup_free_ char *inner = path_join(dir2, outside);
	for (char *s = strchr(inner + 1, '/'); s; s = strchr(s + 1, '/')) {
		*s = '\0';
		mkdir(inner, 0755);
		*s = '/';
	}
	mkdir(inner, 0755);
	struct root r2;
	CHECK_INT(root_open(&r2, dir2), 0);
	fd = lock_take(&r2);
	CHECK(fd >= 0);
	_cleanup_free_ char *host_lock = path_join(outside, "memcg-policy.lock");
	_cleanup_free_ char *img_lock = path_join(inner, "memcg-policy.lock");
	CHECK(access(host_lock, F_OK) < 0);
	CHECK(access(img_lock, F_OK) == 0);
	if (fd >= 0)
		close(fd);
	root_close(&r2);
	root_close(&r);
	rm_rf(dir);
	rm_rf(dir2);
	rm_rf(outside);
}

/* lib/util.h's str_index, as the journal and the transaction look paths
 * up with it: the first of equal strings, growing, after a reset. */
static const char *nth(const void *ctx, size_t i)
{
	return ((char *const *)ctx)[i];
}

TEST(str_index_finds_paths)
{
	enum { N = 3000 };
	static char *v[N + 1];
	for (size_t i = 0; i < N; i++)
		v[i] = xasprintf("/boot/loader/entries/e-%zu.conf", i % 2000); /* 1000 repeated */
	struct str_index x = {0};
	CHECK(str_index_find(&x, "/boot/loader/entries/e-1.conf", 0, nth, v) == SIZE_MAX);
	/* grown one at a time, as entries are recorded */
	size_t bad = 0;
	for (size_t n = 1; n <= 40; n++)
		bad += str_index_find(&x, v[n - 1], n, nth, v) != n - 1;
	CHECK_INT((int)bad, 0);
	bad = 0;
	for (size_t i = 0; i < N; i++)
		bad += str_index_find(&x, v[i], N, nth, v) != i % 2000; /* the first of equal ones */
	CHECK_INT((int)bad, 0);
	CHECK(str_index_find(&x, "/boot/loader/entries/e-2000.conf", N, nth, v) == SIZE_MAX);
	/* one taken out (the caller resets): the next find sees the change */
	free(v[5]);
	v[5] = xstrdup("/boot/loader/entries/renamed.conf");
	str_index_reset(&x);
	CHECK(str_index_find(&x, "/boot/loader/entries/renamed.conf", N, nth, v) == 5);
	CHECK(str_index_find(&x, "/boot/loader/entries/e-5.conf", N, nth, v) == 2005);
	/* fewer than indexed: built again from what is there */
	CHECK(str_index_find(&x, v[2500], 10, nth, v) == SIZE_MAX);
	CHECK(str_index_find(&x, v[7], 10, nth, v) == 7);
	str_index_reset(&x);
	for (size_t i = 0; i < N; i++)
		free(v[i]);
}

TEST_MAIN(T(str_index_finds_paths), T(journal_missing_is_empty), T(journal_round_trip), T(journal_every_byte_round_trips), T(journal_record_semantics), T(journal_record_rebase), T(journal_corrupt), T(journal_untrusted_owner_or_mode), T(journal_paths_are_slots),
	  T(lock_creates_run), T(lock_waits_for_holder), T(lock_waits_quietly_with_q))
