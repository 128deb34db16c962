/* io/txn-one.c - one file written alone through a transaction of its own
 * (io/txn.h): inside a root, or at a path of the invoking system such as
 * check --prometheus's. */
#include "io/txn.h"

#include <errno.h>
#include <limits.h>
#include <string.h>
#include <unistd.h>

#include "lib/diag.h"

int write_file_atomic(const struct root *r, const char *path, const char *data, size_t len, mode_t new_mode)
{
	struct txn t;
	txn_init(&t, r);
	txn_add(&t, path, data, len, new_mode);
	int ret = txn_commit(&t);
	txn_free(&t);
	return ret;
}

/* The file a path of the invoking system names: symbolic links followed
 * as open(2) would follow them, also a last one whose target does not
 * exist yet (a link the admin made to where the file is to be). NULL and
 * errno on error. */
static char *host_target(const char *path)
{
	char *cur = xstrdup(path);
	for (int links = 0; links < 40; links++) {
		char buf[PATH_MAX];
		ssize_t n = readlink(cur, buf, sizeof(buf) - 1);
		if (n < 0) {
			if (errno == EINVAL || errno == ENOENT)
				return cur; /* not a link, or nothing there yet: this is the file */
			free(cur);
			return NULL;
		}
		buf[n] = '\0';
		char *next;
		if (buf[0] == '/') {
			next = xstrdup(buf);
		} else {
			char *slash = strrchr(cur, '/');
			next = slash ? xasprintf("%.*s/%s", (int)(slash - cur), cur, buf) : xstrdup(buf);
		}
		free(cur);
		cur = next;
	}
	free(cur);
	errno = ELOOP;
	return NULL;
}

int write_host_file_atomic(const char *path_given, const char *text, size_t len, mode_t mode)
{
	/* the admin's own file: a link on the way is the admin's, followed
	 * on the invoking system (the directory is then opened as a root:
	 * the new file replaces the target, not the link) */
	_cleanup_free_ char *path = host_target(path_given);
	if (!path)
		return diag_error(EXIT_SYSTEM, "%s: %s", path_given, strerror(errno));
	_cleanup_free_ char *dir = xstrdup(path);
	char *slash = strrchr(dir, '/');
	const char *name = path;
	if (slash) {
		name = slash + 1;
		if (slash == dir)
			dir[1] = '\0';
		else
			*slash = '\0';
	} else {
		free(dir);
		dir = xstrdup(".");
	}
	if (!*name)
		return diag_error(EXIT_USAGE, "%s: not a file name", path);
	struct root r;
	int e = root_open(&r, dir);
	if (e < 0)
		return diag_error(EXIT_SYSTEM, "%s: %s", dir, strerror(-e));
	_cleanup_free_ char *p = xasprintf("/%s", name);
	e = write_file_atomic(&r, p, text, len, mode);
	root_close(&r);
	return e;
}
