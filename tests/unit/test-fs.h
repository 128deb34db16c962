/* test-fs.h - file helpers the unit tests share: a fresh temporary
 * directory, removing a tree, and capturing what the code under test
 * prints on stderr. */
#pragma once

#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/diag.h"
#include "io/rootfs.h"
#include "lib/util.h"

/* A new directory /tmp/NAME.XXXXXX (aborts if it cannot be made). */
static inline char *test_mkdtemp(const char *name)
{
	char *tmpl = xasprintf("/tmp/%s.XXXXXX", name);
	if (!mkdtemp(tmpl)) {
		perror("mkdtemp");
		abort();
	}
	return tmpl;
}

static inline int test_rm_one(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	remove(p);
	return 0;
}

/* rm -rf, without following symbolic links. */
static inline void rm_rf(const char *dir) { nftw(dir, test_rm_one, 16, FTW_DEPTH | FTW_PHYS); }

/* err_begin() sends stderr to a file; err_end() puts it back and returns
 * what was written (never NULL). */
static int test_saved_stderr = -1;
static char test_err_path[64];

static inline void err_begin(void)
{
	snprintf(test_err_path, sizeof(test_err_path), "/tmp/test-err.%d", (int)getpid());
	fflush(stderr);
	test_saved_stderr = dup(2);
	int fd = open(test_err_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	dup2(fd, 2);
	close(fd);
}

static inline char *err_end(void)
{
	/* as the command layer does: what the code recorded, printed once */
	diag_print();
	diag_reset();
	fflush(stderr);
	dup2(test_saved_stderr, 2);
	close(test_saved_stderr);
	char *s = NULL;
	struct root r;
	if (root_open(&r, "/") == 0) {
		if (root_read_file(&r, test_err_path, 1 << 20, &s, NULL) < 0)
			s = NULL;
		root_close(&r);
	}
	unlink(test_err_path);
	return s ? s : xstrdup("");
}
