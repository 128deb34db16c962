/* edit-floor.c - the least code that does what memcg-policy's two hot
 * paths do, as the floor bench/tool-floor.sh measures the tool against:
 *
 *   edit-floor edit DIR TOKEN   every DIR/NAME.conf: read it, append TOKEN
 *                               to its options line, write DIR/.NAME.tmp;
 *                               one syncfs; rename them all over the
 *                               originals; one fsync of DIR
 *   edit-floor read FILE...     read each file whole, inflating it when it
 *                               is gzip (zlib's gzread), and drop it
 *
 * No parsing beyond finding the options line, no journal, no lock, no
 * checks: what any correct tool must at least do. Build:
 *   cc -O2 -o edit-floor bench/edit-floor.c -lz */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
	if (argc >= 3 && strcmp(argv[1], "read") == 0)
		return read_files(argc - 2, argv + 2);
	fprintf(stderr, "usage: edit-floor edit DIR TOKEN | edit-floor read FILE...\n");
	return 2;
}
