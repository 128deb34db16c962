/* fuzz-journal.c - the journal reader (journal_load, src/journal.c), on a
 * scratch root holding the input as /var/lib/memcg-policy/journal.json.
 * Properties: it loads, or is refused as a corrupt journal naming its path
 * (exit 3), never anything else; a journal that loads serializes to text
 * that loads again and serializes to the same bytes; recording a change and
 * forgetting it keeps it loadable. */
#include "fuzz.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "facts/journal.h"

static char rootdir[] = "/tmp/fuzz-journal.XXXXXX";
static char *path;
static struct root root;

static void cleanup(void)
{
	unlink(path);
	char *d = xasprintf("%s/var/lib/memcg-policy", rootdir);
	rmdir(d);
	free(d);
	static const char *const up[] = { "/var/lib", "/var", "" };
	for (size_t i = 0; i < ARRAY_SIZE(up); i++) {
		d = xasprintf("%s%s", rootdir, up[i]);
		rmdir(d);
		free(d);
	}
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	FUZZ_CHECK(mkdtemp(rootdir));
	char *d = xasprintf("%s/var/lib/memcg-policy", rootdir);
	char *v = xasprintf("%s/var", rootdir), *vl = xasprintf("%s/var/lib", rootdir);
	mkdir(v, 0755);
	mkdir(vl, 0755);
	mkdir(d, 0755);
	free(v);
	free(vl);
	free(d);
	path = xasprintf("%s" JOURNAL_PATH, rootdir);
	FUZZ_CHECK(root_open(&root, rootdir) == 0);
	atexit(cleanup);
	return 0;
}

static void write_journal(const char *data, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	FUZZ_CHECK(fd >= 0);
	FUZZ_CHECK(write(fd, data, len) == (ssize_t)len);
	close(fd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	write_journal((const char *)data, size);
	struct journal j;
	struct fuzz_capture cap;
	fuzz_capture_begin(&cap);
	int r = journal_load(&root, &j);
	const char *err = fuzz_capture_end(&cap);
	if (r < 0) {
		FUZZ_CHECK(r == -EXIT_BADINPUT);
		char *want = xasprintf("memcg-policy: %s: corrupt journal: ", path);
		FUZZ_CHECK(strncmp(err, want, strlen(want)) == 0);
		free(want);
		fuzz_capture_free(&cap);
		return 0;
	}
	fuzz_capture_free(&cap);

	size_t len1, len2;
	char *t1 = journal_serialize(&j, &len1);
	write_journal(t1, len1);
	struct journal j2;
	FUZZ_CHECK(journal_load(&root, &j2) == 0);
	FUZZ_CHECK(j2.n == j.n);
	char *t2 = journal_serialize(&j2, &len2);
	FUZZ_CHECK(fuzz_same(t1, len1, t2, len2));

	/* a change recorded on top, then forgotten */
	struct strv added = { 0 };
	strv_pushdup(&added, "cgroup_disable=memory");
	journal_record(&j2, "/etc/kernel/cmdline", NULL, true, "a\n", 2, "a cgroup_disable=memory\n", 24, &added, NULL);
	FUZZ_CHECK(journal_find(&j2, "/etc/kernel/cmdline") != NULL);
	size_t len3;
	char *t3 = journal_serialize(&j2, &len3);
	write_journal(t3, len3);
	struct journal j3;
	FUZZ_CHECK(journal_load(&root, &j3) == 0);
	journal_forget(&j3, "/etc/kernel/cmdline");
	FUZZ_CHECK(journal_find(&j3, "/etc/kernel/cmdline") == NULL);
	strv_free(&added);
	free(t1);
	free(t2);
	free(t3);
	journal_free(&j);
	journal_free(&j2);
	journal_free(&j3);
	return 0;
}
