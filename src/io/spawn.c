/* io/spawn.c - child processes with an argv and a clean environment, see
 * io/spawn.h.
 *
 * Everything that allocates is done before fork(); the child only calls
 * async-signal-safe functions: dup2, fcntl, close_range, chroot, chdir,
 * execve, write, _exit (and the caller's prepare function, held to the same
 * rule). A failed exec is told to the parent through a
 * close-on-exec pipe, so that "could not start" (-errno) is not confused
 * with a program that exits 127. */
#include "io/spawn.h"
#include "lib/diag.h"
#include "lib/util.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define CLEAN_PATH "/usr/sbin:/usr/bin:/sbin:/bin"

static unsigned children;

unsigned spawn_count(void) { return children; }

/* In the child: moves fd to a number >= min, close-on-exec; -1 on error. */
static int lift(int fd, int min) { return fd < 0 ? fd : fcntl(fd, F_DUPFD_CLOEXEC, min); }

/* In the child: marks every fd >= from close-on-exec. */
static void cloexec_from(int from)
{
	if (close_range((unsigned)from, ~0U, CLOSE_RANGE_CLOEXEC) == 0)
		return;
	long max = sysconf(_SC_OPEN_MAX);
	if (max < 0 || max > 65536)
		max = 65536;
	for (int fd = from; fd < max; fd++)
		(void)fcntl(fd, F_SETFD, FD_CLOEXEC);
}

static void child_fail(int errfd, int err)
{
	ssize_t _unused_ n = write(errfd, &err, sizeof(err));
	_exit(127);
}

/* The clean PATH search, as execvp does it but with our PATH; only stack
 * buffers (we are in the child). */
static int exec_search(const char *file, char *const argv[], char *const envp[])
{
	if (strchr(file, '/')) {
		execve(file, argv, envp);
		return errno;
	}
	size_t flen = strlen(file);
	int err = ENOENT;
	const char *p = CLEAN_PATH;
	while (*p) {
		const char *colon = strchr(p, ':');
		size_t dlen = colon ? (size_t)(colon - p) : strlen(p);
		char buf[PATH_MAX];
		if (dlen + 1 + flen + 1 <= sizeof(buf)) {
			memcpy(buf, p, dlen);
			buf[dlen] = '/';
			memcpy(buf + dlen + 1, file, flen + 1);
			execve(buf, argv, envp);
			if (errno == EACCES)
				err = EACCES;
			else if (errno != ENOENT && errno != ENOTDIR)
				return errno;
		}
		p += dlen;
		if (*p == ':')
			p++;
	}
	return err;
}

int spawn_run(const char *const *argv, const char *const *env, const char *chroot_dir, const int *in_fds, char **output)
{
	return spawn_run_prepared(argv, env, chroot_dir, in_fds, output, NULL, NULL);
}

static const char *stream_prog;

void spawn_stream_next(const char *prog) { stream_prog = prog; }

/* The complete lines of sb from *shown on, said as verbose lines (and
 * the rest too where all is true). */
static void stream_lines(const char *prog, const struct strbuf *sb, size_t *shown, bool all)
{
	while (*shown < sb->len) {
		const char *p = sb->s + *shown;
		const char *nl = memchr(p, '\n', sb->len - *shown);
		if (!nl && !all)
			return;
		size_t n = nl ? (size_t)(nl - p) : sb->len - *shown;
		log_verbose("%s: %.*s", prog, (int)n, p);
		*shown += n + (nl != NULL);
	}
}

int spawn_run_prepared(const char *const *argv, const char *const *env, const char *chroot_dir, const int *in_fds,
		       char **output, spawn_prepare_fn prepare, void *data)
{
	if (output)
		*output = NULL;
	const char *stream = log_verbosity > 0 ? stream_prog : NULL;
	stream_prog = NULL;
	if (!argv || !argv[0])
		return -EINVAL;
	/* a program of an image is never started by a plain chroot, which
	 * does not confine root: only apply --regenerate enters an image, in
	 * a private mount namespace of its own (slots/grub/image.c) */
	if (chroot_dir)
		return -EPERM;

	/* the environment */
	struct strv envp = { 0 };
	strv_pushdup(&envp, "PATH=" CLEAN_PATH);
	strv_pushdup(&envp, "LC_ALL=C");
	for (size_t i = 0; env && env[i]; i++)
		strv_pushdup(&envp, env[i]);

	int n_in = 0;
	while (in_fds && in_fds[n_in] >= 0)
		n_in++;
	int *lifted = xcalloc((size_t)n_in + 1, sizeof(int));

	int ret;
	int devnull = -1, errpipe[2] = { -1, -1 }, outpipe[2] = { -1, -1 };
	devnull = open("/dev/null", O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (devnull < 0 || pipe2(errpipe, O_CLOEXEC) < 0 || (output && pipe2(outpipe, O_CLOEXEC) < 0)) {
		ret = -errno;
		goto out;
	}

	/* what we buffered must come out before what the child writes */
	fflush(stdout);
	fflush(stderr);
	pid_t pid = fork();
	if (pid < 0) {
		ret = -errno;
		goto out;
	}
	if (pid == 0) {
		/* Lift every descriptor we need above 3+n_in, so that the dup2s
		 * below never overwrite one still to be moved. */
		int min = 3 + n_in;
		int errfd = lift(errpipe[1], min);
		if (errfd < 0)
			_exit(127);
		int nul = lift(devnull, min);
		int out = output ? lift(outpipe[1], min) : -2;
		if (nul < 0 || out == -1)
			child_fail(errfd, errno);
		for (int i = 0; i < n_in; i++)
			if ((lifted[i] = lift(in_fds[i], min)) < 0)
				child_fail(errfd, errno);
		if (dup2(nul, 0) < 0)
			child_fail(errfd, errno);
		if (output && (dup2(out, 1) < 0 || dup2(out, 2) < 0))
			child_fail(errfd, errno);
		for (int i = 0; i < n_in; i++)
			if (dup2(lifted[i], 3 + i) < 0)
				child_fail(errfd, errno);
		cloexec_from(min);

		sigset_t all;
		sigemptyset(&all);
		sigprocmask(SIG_SETMASK, &all, NULL);
		signal(SIGPIPE, SIG_DFL);

		if (prepare) {
			int pe = prepare(data);
			if (pe)
				child_fail(errfd, pe);
		}
		child_fail(errfd, exec_search(argv[0], (char *const *)argv, envp.v));
	}
	children++;

	close(errpipe[1]);
	errpipe[1] = -1;
	if (output) {
		close(outpipe[1]);
		outpipe[1] = -1;
	}

	/* exec succeeded when the error pipe closes empty */
	int child_err = 0;
	ssize_t n;
	do
		n = read(errpipe[0], &child_err, sizeof(child_err));
	while (n < 0 && errno == EINTR);
	if (n != (ssize_t)sizeof(child_err))
		child_err = 0;

	int read_err = 0;
	if (output) {
		struct strbuf sb = { 0 };
		char buf[65536];
		size_t shown = 0;
		for (;;) {
			ssize_t m = read(outpipe[0], buf, sizeof(buf));
			if (m < 0) {
				if (errno == EINTR)
					continue;
				read_err = errno;
				break;
			}
			if (m == 0)
				break;
			sb_appendn(&sb, buf, (size_t)m);
			if (stream)
				stream_lines(stream, &sb, &shown, false);
		}
		if (stream)
			stream_lines(stream, &sb, &shown, true);
		*output = sb_take(&sb);
	}

	int status;
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR) {
			ret = -errno;
			goto out;
		}
	}
	if (child_err)
		ret = -child_err;
	else if (read_err)
		ret = -read_err;
	else if (WIFEXITED(status))
		ret = WEXITSTATUS(status);
	else if (WIFSIGNALED(status))
		ret = 128 + WTERMSIG(status);
	else
		ret = -ECHILD;
out:
	if (ret < 0 && output) {
		free(*output);
		*output = NULL;
	}
	if (devnull >= 0)
		close(devnull);
	for (int i = 0; i < 2; i++) {
		if (errpipe[i] >= 0)
			close(errpipe[i]);
		if (outpipe[i] >= 0)
			close(outpipe[i]);
	}
	free(lifted);
	strv_free(&envp);
	return ret;
}

/* A memfd holding data, offset 0. */
static int memfd_with(const char *name, const char *data, size_t len)
{
	int fd = memfd_create(name, MFD_CLOEXEC);
	if (fd < 0)
		return -errno;
	while (len > 0) {
		ssize_t n = write(fd, data, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			int e = n < 0 ? -errno : -EIO;
			close(fd);
			return e;
		}
		data += n;
		len -= (size_t)n;
	}
	return fd;
}

/* Labels as git writes them: "a/boot/x" for "/boot/x", "/dev/null" for the
 * side of a file that is created or deleted. */
int print_unified_diff(const char *path, const char *old, size_t old_len, const char *new_content, size_t new_len)
{
	if (!old && !new_content)
		return 0;
	while (*path == '/')
		path++;
	/* the labels escaped here, the lines after them below */
	_cleanup_free_ char *label_a = old ? xasprintf("a/%s", esc(path)) : xstrdup("/dev/null");
	_cleanup_free_ char *label_b = new_content ? xasprintf("b/%s", esc(path)) : xstrdup("/dev/null");
	int fds[3] = { -1, -1, -1 };
	int nfd = 0;
	const char *file_a = "/dev/null", *file_b = "/dev/null";
	char name_a[16], name_b[16];
	_cleanup_free_ char *output = NULL;
	int ret;
	if (old) {
		int fd = memfd_with("memcg-policy-old", old, old_len);
		if (fd < 0) {
			ret = diag_error(EXIT_SYSTEM, "cannot create a memory file: %s", strerror(-fd));
			goto out;
		}
		snprintf(name_a, sizeof(name_a), "/dev/fd/%d", 3 + nfd);
		fds[nfd++] = fd;
		file_a = name_a;
	}
	if (new_content) {
		int fd = memfd_with("memcg-policy-new", new_content, new_len);
		if (fd < 0) {
			ret = diag_error(EXIT_SYSTEM, "cannot create a memory file: %s", strerror(-fd));
			goto out;
		}
		snprintf(name_b, sizeof(name_b), "/dev/fd/%d", 3 + nfd);
		fds[nfd++] = fd;
		file_b = name_b;
	}
	const char *argv[] = { "diff", "-u", "--label", label_a, "--label", label_b, file_a, file_b, NULL };
	int r = spawn_run(argv, NULL, NULL, fds, &output);
	if (r < 0) {
		ret = diag_error(EXIT_SYSTEM, "cannot run diff: %s", strerror(-r));
	} else if (r == 0 || r == 1) {
		/* the lines come from files of the root: escaped for a terminal,
		 * after the two header lines (their labels are escaped) */
		const char *body = output ? output : "";
		for (int h = 0; h < 2 && *body; h++) {
			const char *nl = strchr(body, '\n');
			body = nl ? nl + 1 : body + strlen(body);
		}
		fwrite(output ? output : "", 1, (size_t)(body - (output ? output : "")), stdout);
		/* each line: its first byte is diff's (' ', '+', '-', '@'; '\'
		 * only for its own "\ No newline at end of file") */
		while (*body) {
			const char *nl = strchr(body, '\n');
			size_t n = nl ? (size_t)(nl - body) + 1 : strlen(body);
			if (body[0] == '\\') {
				fwrite(body, 1, n, stdout);
			} else {
				_cleanup_free_ char *line = xstrndup(body, n);
				_cleanup_free_ char *safe = text_escape_lines(line);
				fputs(safe, stdout);
			}
			body += n;
		}
		ret = fflush(stdout) == 0 ? 0 : diag_error(EXIT_SYSTEM, "cannot write the diff: %s", strerror(errno));
	} else {
		size_t l = strlen(output);
		while (l > 0 && output[l - 1] == '\n')
			l--;
		ret = diag_error(EXIT_SYSTEM, "diff failed (exit %d)%s%.*s", r, l ? ": " : "", (int)l, output);
	}
out:
	for (int i = 0; i < nfd; i++)
		close(fds[i]);
	return ret;
}

int spawn_failed(const char *what, int rc, const char *output)
{
	size_t n = output ? strlen(output) : 0;
	while (n > 0 && output[n - 1] == '\n')
		n--;
	if (rc < 0)
		return diag_error(EXIT_SYSTEM, "%s: cannot run: %s", what, strerror(-rc));
	return diag_error(EXIT_SYSTEM, "%s failed (exit status %d)%s%.*s", what, rc, n ? ":\n" : "", (int)n,
			  n ? output : "");
}
