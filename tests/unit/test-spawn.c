/* test-spawn.c - child processes (io/spawn.c): captured output, exit codes
 * and signals, programs that cannot start, the clean environment, fds
 * passed in order (also when they overlap their new numbers) and nothing
 * else inherited, stdin from /dev/null, chroot (with busybox-static where
 * it is installed), and print_unified_diff's exact output. */
#include "io/spawn.h"
#include "lib/util.h"
#include "test.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define BUSYBOX "/bin/busybox"

static int memfd_text(const char *text)
{
	int fd = memfd_create("test", 0);
	if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text))
		abort();
	return fd;
}

static char *read_all_fd(int fd)
{
	struct strbuf sb = {0};
	char buf[4096];
	ssize_t n;
	lseek(fd, 0, SEEK_SET);
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		sb_appendn(&sb, buf, (size_t)n);
	return sb_take(&sb);
}

/* stdout into a memfd while fn runs */
static int saved_stdout = -1, capture_fd = -1;

static void out_begin(void)
{
	fflush(stdout);
	saved_stdout = dup(1);
	capture_fd = memfd_create("stdout", 0);
	dup2(capture_fd, 1);
}

static char *out_end(void)
{
	fflush(stdout);
	dup2(saved_stdout, 1);
	close(saved_stdout);
	char *s = read_all_fd(capture_fd);
	close(capture_fd);
	return s;
}

TEST(spawn_captures_output)
{
	unsigned before = spawn_count();
	const char *argv[] = {"echo", "hello", "world", NULL};
	char *out = NULL;
	CHECK_INT(spawn_run(argv, NULL, NULL, NULL, &out), 0);
	CHECK_STR(out, "hello world\n");
	free(out);
	CHECK_INT(spawn_count(), before + 1);
	/* stdout and stderr both */
	const char *argv2[] = {"sh", "-c", "echo out; echo err >&2", NULL};
	CHECK_INT(spawn_run(argv2, NULL, NULL, NULL, &out), 0);
	CHECK_STR(out, "out\nerr\n");
	free(out);
	/* a large output is read to the end (more than a pipe holds) */
	const char *argv3[] = {"head", "-c", "1000000", "/dev/zero", NULL};
	CHECK_INT(spawn_run(argv3, NULL, NULL, NULL, &out), 0);
	CHECK(out != NULL);
	free(out);
}

TEST(spawn_exit_codes)
{
	char *out = NULL;
	const char *f[] = {"false", NULL};
	CHECK_INT(spawn_run(f, NULL, NULL, NULL, &out), 1);
	free(out);
	const char *e3[] = {"sh", "-c", "exit 3", NULL};
	CHECK_INT(spawn_run(e3, NULL, NULL, NULL, NULL), 3);
	const char *e127[] = {"sh", "-c", "exit 127", NULL};
	CHECK_INT(spawn_run(e127, NULL, NULL, NULL, NULL), 127);
	const char *sig[] = {"sh", "-c", "kill -TERM $$", NULL};
	CHECK_INT(spawn_run(sig, NULL, NULL, NULL, NULL), 128 + SIGTERM);
}

TEST(spawn_cannot_start)
{
	char *out = (char *)"sentinel";
	const char *missing[] = {"memcg-policy-no-such-program", NULL};
	CHECK_INT(spawn_run(missing, NULL, NULL, NULL, &out), -ENOENT);
	CHECK(out == NULL);
	const char *abs_missing[] = {"/nonexistent/prog", NULL};
	CHECK_INT(spawn_run(abs_missing, NULL, NULL, NULL, NULL), -ENOENT);
	/* a file that is not executable */
	char tmpl[] = "/tmp/test-spawn.XXXXXX";
	int fd = mkstemp(tmpl);
	CHECK(fd >= 0);
	close(fd);
	const char *noexec[] = {tmpl, NULL};
	CHECK_INT(spawn_run(noexec, NULL, NULL, NULL, NULL), -EACCES);
	unlink(tmpl);
	const char *empty[] = {NULL};
	CHECK_INT(spawn_run(empty, NULL, NULL, NULL, NULL), -EINVAL);
}

TEST(spawn_clean_environment)
{
	setenv("MEMCG_POLICY_TEST_SECRET", "leak", 1);
	setenv("LD_PRELOAD", "", 1);
	const char *argv[] = {"/usr/bin/env", NULL};
	const char *extra[] = {"KERNEL_INSTALL_VERBOSE=1", "A=b c", NULL};
	char *out = NULL;
	CHECK_INT(spawn_run(argv, extra, NULL, NULL, &out), 0);
	CHECK_STR(out, "PATH=/usr/sbin:/usr/bin:/sbin:/bin\nLC_ALL=C\nKERNEL_INSTALL_VERBOSE=1\nA=b c\n");
	free(out);
	unsetenv("MEMCG_POLICY_TEST_SECRET");
	unsetenv("LD_PRELOAD");
	/* the search uses the clean PATH, not ours */
	setenv("PATH", "/nonexistent", 1);
	const char *env0[] = {"env", NULL};
	CHECK_INT(spawn_run(env0, NULL, NULL, NULL, &out), 0);
	CHECK_STR(out, "PATH=/usr/sbin:/usr/bin:/sbin:/bin\nLC_ALL=C\n");
	free(out);
	setenv("PATH", "/usr/sbin:/usr/bin:/sbin:/bin", 1);
}

TEST(spawn_passes_fds)
{
	/* put A at 4 and B at 3: the child must see A at 3 and B at 4 */
	int a = memfd_text("AAA"), b = memfd_text("BBB");
	int fa = 40, fb = 41;
	dup2(a, fa);
	dup2(b, fb);
	close(a);
	close(b);
	int saved3 = dup(3), saved4 = dup(4);
	dup2(fa, 4);
	dup2(fb, 3);
	int in[] = {4, 3, -1};
	/* and an fd without close-on-exec that must not reach the child */
	int leak = dup2(fa, 17);
	const char *argv[] = {"sh", "-c",
			      "cat /dev/fd/3; echo; cat /dev/fd/4; echo; "
			      "if [ -e /proc/self/fd/17 ] || [ -e /proc/$$/fd/17 ]; then echo leaked; else echo closed; fi; "
			      "[ -e /proc/$$/fd/5 ] && echo five || echo nofive",
			      NULL};
	char *out = NULL;
	CHECK_INT(spawn_run(argv, NULL, NULL, in, &out), 0);
	CHECK_STR(out, "AAA\nBBB\nclosed\nnofive\n");
	free(out);
	close(leak);
	dup2(saved3, 3);
	dup2(saved4, 4);
	close(saved3);
	close(saved4);
	close(fa);
	close(fb);
}

TEST(spawn_stdin_is_dev_null)
{
	const char *argv[] = {"cat", NULL};
	char *out = NULL;
	CHECK_INT(spawn_run(argv, NULL, NULL, NULL, &out), 0); /* would hang on a terminal or a pipe */
	CHECK_STR(out, "");
	free(out);
	const char *argv2[] = {"sh", "-c", "readlink /proc/self/fd/0", NULL};
	CHECK_INT(spawn_run(argv2, NULL, NULL, NULL, &out), 0);
	CHECK_STR(out, "/dev/null\n");
	free(out);
}

TEST(spawn_output_passed_through)
{
	const char *argv[] = {"echo", "through", NULL};
	out_begin();
	printf("before ");
	int r = spawn_run(argv, NULL, NULL, NULL, NULL);
	printf("after\n");
	_cleanup_free_ char *s = out_end();
	CHECK_INT(r, 0);
	CHECK_STR(s, "before through\nafter\n"); /* our buffer flushed first */
}

/* A bare chroot does not confine root: spawn refuses to start anything
 * chrooted, whether the directory exists or not, and starts no child. */
TEST(spawn_chroot_refused)
{
	char tmpl[] = "/tmp/test-spawn-root.XXXXXX";
	CHECK(mkdtemp(tmpl) != NULL);
	_cleanup_free_ char *bin = xasprintf("%s/bin", tmpl);
	_cleanup_free_ char *bb = xasprintf("%s/bin/busybox", tmpl);
	mkdir(bin, 0755);
	const char *cp[] = {"cp", BUSYBOX, bb, NULL};
	CHECK_INT(spawn_run(cp, NULL, NULL, NULL, NULL), 0);
	unsigned before = spawn_count();
	const char *argv[] = {"busybox", "sh", "-c", "echo ran >/ran", NULL};
	char *out = NULL;
	CHECK_INT(spawn_run(argv, NULL, tmpl, NULL, &out), -EPERM);
	CHECK(out == NULL);
	CHECK_INT(spawn_run(argv, NULL, "/nonexistent-chroot-dir", NULL, NULL), -EPERM);
	CHECK_INT(spawn_count(), before);
	_cleanup_free_ char *ran = xasprintf("%s/ran", tmpl);
	CHECK(access(ran, F_OK) < 0);
	unlink(bb);
	rmdir(bin);
	rmdir(tmpl);
}

TEST(diff_output)
{
	out_begin();
	const char *old = "title A\noptions root=/dev/sda1\n";
	const char *nw = "title A\noptions root=/dev/sda1 cgroup_disable=memory\n";
	int r = print_unified_diff("/boot/loader/entries/a.conf", old, strlen(old), nw, strlen(nw));
	_cleanup_free_ char *s = out_end();
	CHECK_INT(r, 0);
	CHECK_STR(s, "--- a/boot/loader/entries/a.conf\n"
		     "+++ b/boot/loader/entries/a.conf\n"
		     "@@ -1,2 +1,2 @@\n"
		     " title A\n"
		     "-options root=/dev/sda1\n"
		     "+options root=/dev/sda1 cgroup_disable=memory\n");

	out_begin();
	r = print_unified_diff("/etc/kernel/cmdline", "same\n", 5, "same\n", 5);
	_cleanup_free_ char *s2 = out_end();
	CHECK_INT(r, 0);
	CHECK_STR(s2, "");

	out_begin();
	r = print_unified_diff("/etc/kernel/cmdline", NULL, 0, "root=/dev/sda1\n", 15);
	_cleanup_free_ char *s3 = out_end();
	CHECK_INT(r, 0);
	CHECK_STR(s3, "--- /dev/null\n+++ b/etc/kernel/cmdline\n@@ -0,0 +1 @@\n+root=/dev/sda1\n");

	out_begin();
	r = print_unified_diff("/etc/kernel/cmdline", "root=/dev/sda1", 14, NULL, 0);
	_cleanup_free_ char *s4 = out_end();
	CHECK_INT(r, 0);
	CHECK_STR(s4, "--- a/etc/kernel/cmdline\n+++ /dev/null\n@@ -1 +0,0 @@\n-root=/dev/sda1\n\\ No newline at end of file\n");
}

int main(void)
{
	struct test_case cases[] = {
		T(spawn_captures_output),
		T(spawn_exit_codes),
		T(spawn_cannot_start),
		T(spawn_clean_environment),
		T(spawn_passes_fds),
		T(spawn_stdin_is_dev_null),
		T(spawn_output_passed_through),
		T(diff_output),
		T(spawn_chroot_refused),
	};
	size_t n = ARRAY_SIZE(cases);
	if (access(BUSYBOX, X_OK) < 0) {
		printf("SKIP: spawn_chroot (no %s to put in a root)\n", BUSYBOX);
		n--;
	}
	return test_run_all(cases, n);
}
