/* facts/policy-files.c - where the policy files are found and how they are
 * checked before they are read (see facts/policy.h and DESIGN section 4): the
 * search path inside the root or --config, owner and mode of every file and
 * of every directory on the way, and the files read in order, later ones
 * winning (facts/policy-ini.c merges each). */
#include "facts/policy.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/readcache.h"
#include "io/rootfs.h"
#include "lib/diag.h"
#include "lib/util.h"

/* ---- files ----------------------------------------------------------- */

/* Checks and reads one opened policy file. Takes the descriptor. */
static int load_fd(struct policy *p, int fd_in, const char *display)
{
	_cleanup_close_ int fd = fd_in;
	struct timespec since = readcache_clock();
	struct stat st;
	if (fstat(fd, &st) < 0) {
		int e = errno;
		return diag_error(EXIT_SYSTEM, "%s: cannot stat policy file: %s", display, strerror(e));
	}
	if (!S_ISREG(st.st_mode))
		return diag_error(EXIT_BADINPUT, "%s: unsafe policy file: not a regular file", display);
	if (st.st_uid != 0 && st.st_uid != getuid())
		return diag_error(EXIT_BADINPUT,
				  "%s: unsafe policy file: owned by uid %u, not by root or the invoking user", display,
				  (unsigned)st.st_uid);
	if (st.st_mode & (S_IWGRP | S_IWOTH))
		return diag_error(EXIT_BADINPUT, "%s: unsafe policy file: writable by %s (mode %04o)", display,
				  (st.st_mode & S_IWOTH) ? "others" : "group", (unsigned)(st.st_mode & 07777));

	_cleanup_free_ char *text = NULL;
	size_t len = 0;
	int r = read_fd_stat(fd, &st, since, MAX_INPUT_FILE, &text, &len);
	if (r == -EFBIG)
		return diag_error(EXIT_BADINPUT, "%s: policy file too large", display);
	if (r < 0)
		return diag_error(EXIT_SYSTEM, "%s: cannot read policy file: %s", display, strerror(-r));
	return policy_load_buffer(p, text, len, display);
}

/* One file inside the root; a missing one is skipped. */
static int load_root_file(const struct root *r, const char *path, struct policy *p)
{
	_cleanup_free_ char *display = root_display(r, path);
	int fd = root_openat(r, path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK, 0);
	if (fd == -ENOENT)
		return 0;
	if (fd == -EINVAL || fd == -EISDIR)
		return diag_error(EXIT_BADINPUT, "%s: unsafe policy file: not a regular file", display);
	if (fd < 0)
		return diag_error(root_error_exit(fd), "%s: cannot open policy file: %s", display, root_strerror(fd));
	log_verbose("reading policy %s", display);
	return load_fd(p, fd, display);
}

/* A directory on the policy search path: owned by root or the invoking
 * user; not writable by group or others, except (for a directory whose
 * files are named, not listed) a sticky one such as /tmp, where nobody else
 * can replace or remove the policy file. A directory whose *.conf files are
 * all read (listed) may not be writable by others at all. */
static int check_dir_st(const struct stat *st, const char *display, bool listed)
{
	if (st->st_uid != 0 && st->st_uid != getuid())
		return diag_error(EXIT_BADINPUT,
				  "%s: unsafe policy directory: owned by uid %u, not by root or the invoking user",
				  display, (unsigned)st->st_uid);
	if ((st->st_mode & (S_IWGRP | S_IWOTH)) && (listed || !(st->st_mode & S_ISVTX)))
		return diag_error(EXIT_BADINPUT, "%s: unsafe policy directory: writable by %s (mode %04o)", display,
				  (st->st_mode & S_IWOTH) ? "others" : "group", (unsigned)(st->st_mode & 07777));
	return 0;
}

/* Checks every directory from the root down to dir (inside the root); the
 * walk stops at the first that is not there (1: dir is not there; 0: it
 * is, and safe; or the error). seen (may be NULL) holds the
 * directories one load has checked already ("L" before a listed one), so
 * that "/" and "/etc" are looked at once, not once per place. */
static int check_root_dirs(const struct root *r, const char *dir, bool listed, struct strv *seen)
{
	size_t len = strlen(dir);
	for (size_t end = 0; end <= len; end++) {
		if (end < len && dir[end] != '/')
			continue;
		if (end == len && len == 1)
			break; /* dir is "/": checked at end 0 */
		_cleanup_free_ char *prefix = end ? xstrndup(dir, end) : xstrdup("/");
		bool strict = listed && end == len;
		_cleanup_free_ char *key = xasprintf("%s%s", strict ? "L" : "", prefix);
		if (seen && strv_contains(seen, key))
			continue;
		_cleanup_free_ char *display = root_display(r, prefix);
		struct stat st;
		int e = root_stat(r, prefix, &st);
		if (e == -ENOENT || e == -ENOTDIR || (e == 0 && !S_ISDIR(st.st_mode) && end < len))
			return 1;
		if (e == 0 && !S_ISDIR(st.st_mode))
			return 0; /* the directory itself is something else: listing it says so */
		if (e < 0)
			return diag_error(root_error_exit(e), "%s: cannot open policy directory: %s", display,
					  root_strerror(e));
		int rc = check_dir_st(&st, display, strict);
		if (rc < 0)
			return rc;
		if (seen)
			strv_push(seen, TAKE_PTR(key));
	}
	return 0;
}

int policy_check_host_dirs(const char *file)
{
	_cleanup_free_ char *copy = xstrdup(file);
	char *slash = strrchr(copy, '/');
	_cleanup_free_ char *dir = NULL;
	if (!slash) {
		dir = getcwd(NULL, 0);
		if (!dir)
			return diag_error(EXIT_SYSTEM, "%s: cannot find the current directory: %s", file,
					  strerror(errno));
	} else {
		*slash = '\0';
		dir = xstrdup(*copy ? copy : "/");
	}
	char *real = realpath(dir, NULL);
	if (!real)
		return diag_error(EXIT_BADINPUT, "%s: cannot open policy directory: %s", dir, strerror(errno));
	struct root host;
	int r = root_open(&host, NULL);
	if (r < 0) {
		free(real);
		return diag_error(EXIT_SYSTEM, "/: %s", strerror(-r));
	}
	r = check_root_dirs(&host, real, false, NULL);
	root_close(&host);
	free(real);
	return r < 0 ? r : 0;
}

/* DIR/ *.conf inside the root, sorted by name; hidden files are skipped. */
static int load_root_dir(const struct root *r, const char *dir, struct policy *p, struct strv *seen)
{
	int rc = check_root_dirs(r, dir, true, seen);
	if (rc != 0)
		return rc < 0 ? rc : 0; /* not there: nothing to list */
	char **names = NULL;
	int n = root_list_dir(r, dir, ".conf", &names);
	if (n == -ENOENT)
		return 0;
	if (n < 0) {
		_cleanup_free_ char *display = root_display(r, dir);
		return diag_error(root_error_exit(n), "%s: cannot list policy directory: %s", display,
				  root_strerror(n));
	}
	int ret = 0;
	for (int i = 0; i < n && ret == 0; i++) {
		if (names[i][0] == '.')
			continue;
		_cleanup_free_ char *path = path_join(dir, names[i]);
		ret = load_root_file(r, path, p);
	}
	names_free(names, n);
	return ret;
}

int policy_load(const struct root *r, const char *config_file, struct policy *p)
{
	return policy_load_as_if(r, config_file, NULL, 0, p);
}

int policy_load_as_if(const struct root *r, const char *config_file, const char *text, size_t len, struct policy *p)
{
	if (config_file && text)
		return policy_load_buffer(p, text, len, config_file);
	if (config_file) {
		int fd = open(config_file, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
		if (fd < 0) {
			int e = errno;
			return diag_error(EXIT_BADINPUT, "%s: cannot open policy file: %s", config_file, strerror(e));
		}
		int rc = policy_check_host_dirs(config_file);
		if (rc < 0) {
			close(fd);
			return rc;
		}
		return load_fd(p, fd, config_file);
	}
	_cleanup_strv_ struct strv seen = { 0 };
	int ret = load_root_dir(r, "/usr/lib/memcg-policy.d", p, &seen);
	if (ret == 0) {
		ret = check_root_dirs(r, "/etc", false, &seen);
		if (ret > 0)
			ret = 0; /* no /etc: no policy file either */
	}
	if (ret == 0 && text) {
		_cleanup_free_ char *display = root_display(r, "/etc/memcg-policy.conf");
		ret = policy_load_buffer(p, text, len, display);
	} else if (ret == 0) {
		ret = load_root_file(r, "/etc/memcg-policy.conf", p);
	}
	if (ret == 0)
		ret = load_root_dir(r, "/etc/memcg-policy.d", p, &seen);
	return ret;
}
