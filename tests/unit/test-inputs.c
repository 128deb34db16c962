/* test-inputs.c - what apply's first look notes (src/inputs.c, and
 * root_inputs_unchanged in src/rootfs.c): on a real temporary root, which
 * changes between the look and the lock make the first plan unusable and
 * which do not. */
#include "test.h"
#include "test-fs.h"

#include <linux/magic.h>
#include <time.h>

#include "io/inputs.h"
#include "io/readcache.h"

static void put(const char *root, const char *rel, const char *text)
{
	_cleanup_free_ char *p = path_join(root, rel);
	FILE *f = fopen(p, "w");
	if (!f)
		abort();
	fputs(text, f);
	fclose(f);
}

static void sub(const char *root, const char *rel)
{
	_cleanup_free_ char *p = path_join(root, rel);
	if (mkdir(p, 0755) < 0)
		abort();
}

static void settle(void)
{
	/* older than the look by more than a nanosecond clock's margin */
	struct timespec ts = { 0, 20 * 1000 * 1000 };
	nanosleep(&ts, NULL);
}

/* A root with etc/policy, a directory boot/entries with one entry, and a
 * look at them: the file read, the directory listed, a missing path, a
 * directory only resolved through. */
static char *look(struct root *r)
{
	char *dir = test_mkdtemp("memcg-inputs");
	sub(dir, "etc");
	sub(dir, "boot");
	sub(dir, "boot/entries");
	put(dir, "etc/policy", "mode = off\n");
	put(dir, "boot/entries/a.conf", "options quiet\n");
	settle();
	if (root_open(r, dir) < 0)
		abort();
	inputs_start();
	char *text = NULL;
	size_t len;
	CHECK_INT(root_read_file(r, "/etc/policy", 4096, &text, &len), 0);
	free(text);
	char **names;
	int n = root_list_dir(r, "/boot/entries", ".conf", &names);
	CHECK_INT(n, 1);
	if (n > 0)
		names_free(names, n);
	CHECK(!root_exists(r, "/etc/missing"));
	CHECK(root_is_dir(r, "/etc"));
	inputs_stop();
	return dir;
}

static void done(struct root *r, char *dir)
{
	inputs_clear();
	readcache_clear();
	root_close(r);
	rm_rf(dir);
	free(dir);
}

TEST(nothing_changed_stands)
{
	struct root r;
	char *dir = look(&r);
	size_t n;
	bool usable;
	inputs_list(&n, &usable);
	CHECK_INT(n, 4); /* the file, the listed directory, the missing path, /etc */
	CHECK(usable);
	CHECK(root_inputs_unchanged(&r));
	done(&r, dir);
}

/* After the look, put a file at rel (text): does the look still stand? */
static bool stands_after_put(const char *rel, const char *text)
{
	struct root r;
	char *dir = look(&r);
	put(dir, rel, text);
	bool unchanged = root_inputs_unchanged(&r);
	done(&r, dir);
	return unchanged;
}

TEST(a_file_read_rewritten)
{
	CHECK(!stands_after_put("etc/policy", "mode = on\n"));
}

TEST(a_missing_path_appears)
{
	CHECK(!stands_after_put("etc/missing", ""));
}

TEST(a_listed_directory_gets_an_entry)
{
	CHECK(!stands_after_put("boot/entries/b.conf", "options quiet\n"));
}

TEST(a_directory_only_resolved_through_may_change)
{
	/* the lock file's /run appearing under / changes only the mtime of a
	 * directory no listing read: the plan stands */
	CHECK(stands_after_put("etc/other", ""));
}

TEST(a_directory_replaced)
{
	struct root r;
	char *dir = look(&r);
	_cleanup_free_ char *etc = path_join(dir, "etc"), *old = path_join(dir, "etc.old");
	CHECK_INT(rename(etc, old), 0);
	sub(dir, "etc");
	put(dir, "etc/policy", "mode = off\n");
	CHECK(!root_inputs_unchanged(&r));
	done(&r, dir);
}

TEST(a_file_changed_during_the_look_is_not_trusted)
{
	/* a ctime newer than the start of the look: its stat cannot show a
	 * change made in the same tick, so the set is not usable */
	char *dir = test_mkdtemp("memcg-inputs");
	sub(dir, "etc");
	struct root r;
	if (root_open(&r, dir) < 0)
		abort();
	inputs_start();
	put(dir, "etc/policy", "mode = off\n");
	char *text = NULL;
	size_t len;
	CHECK_INT(root_read_file(&r, "/etc/policy", 4096, &text, &len), 0);
	free(text);
	inputs_stop();
	size_t n;
	bool usable;
	inputs_list(&n, &usable);
	CHECK(!usable);
	CHECK(!root_inputs_unchanged(&r));
	done(&r, dir);
}

/* one path noted with a stat whose times are those of the look */
static bool usable_after_noting(const char *path, long fs_type)
{
	struct stat st = { .st_mode = S_IFREG | 0444, .st_size = 4096 };
	inputs_start();
	clock_gettime(CLOCK_REALTIME, &st.st_ctim);
	st.st_mtim = st.st_ctim;
	inputs_note(path, 0, 0, &st, fs_type, false);
	inputs_stop();
	size_t n;
	bool usable;
	inputs_list(&n, &usable);
	inputs_clear();
	return n == 1 && usable;
}

TEST(the_running_kernels_config_is_trusted)
{
	/* a live system's /proc/config.gz has an inode made when it was
	 * looked up, yet its bytes are fixed while the kernel runs: a first
	 * run since boot (no lock file) that read it keeps its plan */
	CHECK(usable_after_noting("/proc/config.gz", PROC_SUPER_MAGIC));
	/* nothing else of /proc, and no file of that name elsewhere */
	CHECK(!usable_after_noting("/proc/self/mountinfo", PROC_SUPER_MAGIC));
	CHECK(!usable_after_noting("/proc/config.gz", EXT4_SUPER_MAGIC));
	CHECK(!usable_after_noting("/proc/config.gz", SYSFS_MAGIC));
}

static bool trusted_at(long fs_type, long long sec, long nsec, struct timespec since)
{
	struct stat st = { .st_mode = S_IFREG | 0644 };
	st.st_ctim.tv_sec = (time_t)sec;
	st.st_ctim.tv_nsec = nsec;
	return readcache_trusted(fs_type, &st, since);
}

TEST(timestamp_granularity)
{
	struct timespec since = { 1700000000, 500000000 };
	/* nanosecond file systems: older than the look by more than 1 ms,
	 * whatever its digits (one ctime in a thousand ends in 000) */
	CHECK(trusted_at(EXT4_SUPER_MAGIC, 1700000000, 400123456, since));
	CHECK(trusted_at(EXT4_SUPER_MAGIC, 1700000000, 498123000, since));
	CHECK(trusted_at(XFS_SUPER_MAGIC, 1700000000, 498000000, since));
	CHECK(!trusted_at(EXT4_SUPER_MAGIC, 1700000000, 499500001, since));
	CHECK(!trusted_at(EXT4_SUPER_MAGIC, 1700000000, 500000001, since));
	/* whole seconds (ext4 with 128-byte inodes): 2 s */
	CHECK(!trusted_at(EXT4_SUPER_MAGIC, 1699999999, 0, since));
	CHECK(trusted_at(EXT4_SUPER_MAGIC, 1699999998, 0, since));
	/* FAT and exFAT: 2 s, fraction or not */
	CHECK(!trusted_at(MSDOS_SUPER_MAGIC, 1699999999, 10000000, since));
	CHECK(!trusted_at(0x2011BAB0 /* exFAT */, 1699999999, 10000000, since));
	CHECK(trusted_at(MSDOS_SUPER_MAGIC, 1699999998, 0, since));
	/* a file system whose stat may be a cached copy: never */
	CHECK(!trusted_at(NFS_SUPER_MAGIC, 1600000000, 123456789, since));
}

TEST(nothing_noted_is_not_usable)
{
	inputs_start();
	inputs_stop();
	size_t n;
	bool usable;
	inputs_list(&n, &usable);
	CHECK_INT(n, 0);
	CHECK(!usable);
	inputs_clear();
}

TEST(not_noting_notes_nothing)
{
	struct root r;
	char *dir = look(&r);
	size_t before, n;
	bool usable;
	inputs_list(&before, &usable);
	CHECK(root_exists(&r, "/etc/policy")); /* after inputs_stop */
	inputs_list(&n, &usable);
	CHECK_INT(n, before);
	done(&r, dir);
}

int main(void)
{
	static const struct test_case cases[] = {
		T(nothing_changed_stands),
		T(a_file_read_rewritten),
		T(a_missing_path_appears),
		T(a_listed_directory_gets_an_entry),
		T(a_directory_only_resolved_through_may_change),
		T(a_directory_replaced),
		T(a_file_changed_during_the_look_is_not_trusted),
		T(the_running_kernels_config_is_trusted),
		T(timestamp_granularity),
		T(nothing_noted_is_not_usable),
		T(not_noting_notes_nothing),
	};
	return test_run_all(cases, ARRAY_SIZE(cases));
}
