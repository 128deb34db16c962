/* edit-floor.c - the least code that does what memcg-policy's two hot
 * paths do, as the floor bench/tool-floor.sh measures the tool against:
 *
 *   edit-floor edit DIR TOKEN   every DIR/NAME.conf: read it, append TOKEN
 *                               to its options line, write DIR/.NAME.tmp;
 *                               one syncfs; rename them all over the
 *                               originals; one fsync of DIR
 *   edit-floor safe DIR TOKEN JOURNAL
 *                               the same edit with the safe work a tool
 *                               that never loses a file must do: first a
 *                               journal record naming every file and what
 *                               it gains, written to JOURNAL.tmp, fsynced,
 *                               renamed to JOURNAL and its directory
 *                               fsynced; then each entry opened O_PATH
 *                               without following links and its type
 *                               checked (fstat) before it is opened to be
 *                               read (through /proc/self/fd, as
 *                               O_PATH descriptors are reopened), its temp
 *                               file created O_EXCL with its mode, given
 *                               its owner where it is not ours and every
 *                               extended attribute it has; one syncfs;
 *                               the renames; one fsync of DIR
 *   edit-floor read FILE...     read each file whole, inflating it when it
 *                               is gzip (zlib's gzread), and drop it
 *
 * No parsing beyond finding the options line, no lock, no checks of the
 * content: what any correct tool must at least do. Build:
 *   cc -O2 -o edit-floor bench/edit-floor.c -lz */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>
#include <zlib.h>

static void die(const char *what)
{
	perror(what);
	exit(1);
}

static char *read_all(int dfd, const char *name, size_t *len)
{
	int fd = openat(dfd, name, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		die(name);
	size_t cap = 4096, n = 0;
	char *buf = malloc(cap);
	for (;;) {
		if (n == cap && !(buf = realloc(buf, cap *= 2)))
			die("realloc");
		ssize_t r = read(fd, buf + n, cap - n);
		if (r < 0)
			die(name);
		if (r == 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	*len = n;
	return buf;
}

/* The names of DIR's *.conf files. */
static char **conf_names(int dfd, size_t *count)
{
	DIR *d = fdopendir(dup(dfd));
	if (!d)
		die("fdopendir");
	char **names = NULL;
	size_t n = 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		size_t l = strlen(de->d_name);
		if (de->d_name[0] == '.' || l < 6 || strcmp(de->d_name + l - 5, ".conf") != 0)
			continue;
		names = realloc(names, (n + 1) * sizeof(*names));
		names[n++] = strdup(de->d_name);
	}
	closedir(d);
	*count = n;
	return names;
}

/* Where TOKEN goes: the end of the options line, else the end. */
static size_t insert_at(const char *text, size_t len)
{
	const char *opt = memmem(text, len, "\noptions", 8);
	if (!opt)
		return len;
	const char *eol = memchr(opt + 1, '\n', len - (size_t)(opt + 1 - text));
	return eol ? (size_t)(eol - text) : len;
}

static void write_all(int fd, const char *p, size_t n, const char *what)
{
	while (n) {
		ssize_t w = write(fd, p, n);
		if (w <= 0)
			die(what);
		p += w;
		n -= (size_t)w;
	}
}

static int edit_safe(const char *dir, const char *token, const char *journal)
{
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		die(dir);
	size_t n;
	char **names = conf_names(dfd, &n);
	size_t tl = strlen(token);

	/* 1. the journal record, durable before any change it describes */
	char jtmp[4096];
	snprintf(jtmp, sizeof(jtmp), "%s.tmp", journal);
	int jfd = open(jtmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (jfd < 0)
		die(jtmp);
	for (size_t i = 0; i < n; i++) {
		char line[1024];
		int l = snprintf(line, sizeof(line), "%s/%s added %s\n", dir, names[i], token);
		write_all(jfd, line, (size_t)l, jtmp);
	}
	if (fsync(jfd) < 0)
		die("fsync journal");
	close(jfd);
	if (rename(jtmp, journal) < 0)
		die(journal);
	char jdir[4096];
	snprintf(jdir, sizeof(jdir), "%s", journal);
	char *slash = strrchr(jdir, '/');
	if (slash)
		*slash = '\0';
	int jdfd = open(slash ? jdir : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (jdfd < 0 || fsync(jdfd) < 0)
		die("fsync journal directory");
	close(jdfd);

	/* 2. every temp file, the old file's mode, owner and xattrs kept */
	uid_t me = geteuid();
	gid_t mygid = getegid();
	static char names_buf[65536], value[65536];
	for (size_t i = 0; i < n; i++) {
		int pfd = openat(dfd, names[i], O_PATH | O_NOFOLLOW | O_CLOEXEC);
		struct stat st;
		if (pfd < 0 || fstat(pfd, &st) < 0 || !S_ISREG(st.st_mode))
			die(names[i]);
		char proc[64];
		snprintf(proc, sizeof(proc), "/proc/self/fd/%d", pfd);
		int fd = open(proc, O_RDONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
		if (fd < 0)
			die(names[i]);
		close(pfd);
		size_t len = (size_t)st.st_size, got = 0;
		char *text = malloc(len + 1);
		for (ssize_t r; got < len && (r = read(fd, text + got, len - got)) > 0;)
			got += (size_t)r;
		if (got != len)
			die(names[i]);
		ssize_t xl = flistxattr(fd, names_buf, sizeof(names_buf));
		char tmp[512];
		snprintf(tmp, sizeof(tmp), ".%s.tmp", names[i]);
		int out = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, st.st_mode & 07777);
		if (out < 0)
			die(tmp);
		if ((st.st_uid != me || st.st_gid != mygid) && fchown(out, st.st_uid, st.st_gid) < 0)
			die(tmp);
		for (ssize_t off = 0; xl > 0 && off < xl; off += (ssize_t)strlen(names_buf + off) + 1) {
			ssize_t vl = fgetxattr(fd, names_buf + off, value, sizeof(value));
			if (vl >= 0 && fsetxattr(out, names_buf + off, value, (size_t)vl, 0) < 0)
				die(tmp);
		}
		close(fd);
		/* the new content in one buffer, one write */
		size_t at = insert_at(text, len);
		char *buf = malloc(len + 1 + tl);
		memcpy(buf, text, at);
		buf[at] = ' ';
		memcpy(buf + at + 1, token, tl);
		memcpy(buf + at + 1 + tl, text + at, len - at);
		write_all(out, buf, len + 1 + tl, tmp);
		close(out);
		free(buf);
		free(text);
	}
	/* 3. one syncfs, the renames, one fsync of the directory */
	if (syncfs(dfd) < 0)
		die("syncfs");
	for (size_t i = 0; i < n; i++) {
		char tmp[512];
		snprintf(tmp, sizeof(tmp), ".%s.tmp", names[i]);
		if (renameat(dfd, tmp, dfd, names[i]) < 0)
			die(tmp);
		free(names[i]);
	}
	free(names);
	if (fsync(dfd) < 0)
		die("fsync");
	close(dfd);
	return 0;
}

static int edit(const char *dir, const char *token)
{
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = dfd < 0 ? NULL : fdopendir(dup(dfd));
	if (!d)
		die(dir);
	char **names = NULL;
	size_t n = 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		size_t l = strlen(de->d_name);
		if (de->d_name[0] == '.' || l < 6 || strcmp(de->d_name + l - 5, ".conf") != 0)
			continue;
		names = realloc(names, (n + 1) * sizeof(*names));
		names[n++] = strdup(de->d_name);
	}
	closedir(d);
	size_t tl = strlen(token);
	for (size_t i = 0; i < n; i++) {
		size_t len;
		char *text = read_all(dfd, names[i], &len);
		char *opt = memmem(text, len, "\noptions", 8);
		size_t at = len;
		if (opt) {
			char *eol = memchr(opt + 1, '\n', len - (size_t)(opt + 1 - text));
			at = eol ? (size_t)(eol - text) : len;
		}
		char tmp[512];
		snprintf(tmp, sizeof(tmp), ".%s.tmp", names[i]);
		int fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (fd < 0 || write(fd, text, at) != (ssize_t)at || write(fd, " ", 1) != 1 ||
		    write(fd, token, tl) != (ssize_t)tl || write(fd, text + at, len - at) != (ssize_t)(len - at))
			die(tmp);
		close(fd);
		free(text);
	}
	if (syncfs(dfd) < 0)
		die("syncfs");
	for (size_t i = 0; i < n; i++) {
		char tmp[512];
		snprintf(tmp, sizeof(tmp), ".%s.tmp", names[i]);
		if (renameat(dfd, tmp, dfd, names[i]) < 0)
			die(tmp);
		free(names[i]);
	}
	free(names);
	if (fsync(dfd) < 0)
		die("fsync");
	close(dfd);
	return 0;
}

static int read_files(int argc, char **argv)
{
	static char buf[1 << 16];
	for (int i = 0; i < argc; i++) {
		gzFile g = gzopen(argv[i], "rb");
		if (!g)
			die(argv[i]);
		int r;
		while ((r = gzread(g, buf, sizeof(buf))) > 0)
			;
		if (r < 0)
			die(argv[i]);
		gzclose(g);
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 4 && strcmp(argv[1], "edit") == 0)
		return edit(argv[2], argv[3]);
	if (argc == 5 && strcmp(argv[1], "safe") == 0)
		return edit_safe(argv[2], argv[3], argv[4]);
	if (argc >= 3 && strcmp(argv[1], "read") == 0)
		return read_files(argc - 2, argv + 2);
	fprintf(stderr, "usage: edit-floor edit DIR TOKEN | edit-floor safe DIR TOKEN JOURNAL | edit-floor read FILE...\n");
	return 2;
}
