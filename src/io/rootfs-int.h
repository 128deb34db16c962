/* io/rootfs-int.h - private to io/rootfs.c (the confined opens) and
 * io/rootfs-files.c (reading, stat and listing through them). */
#pragma once

#include <sys/stat.h>

#include "io/rootfs.h"

/* The O_PATH descriptor of path (flags: O_NOFOLLOW, O_DIRECTORY), its stat
 * in *st, refused with -EXDEV on a pseudo file system with --root. */
int root_open_path(const struct root *r, const char *path, int flags, struct stat *st);

/* Opens the file that the O_PATH descriptor pfd (of path, whose stat is
 * st) names with flags, without resolving its path again where /proc is
 * there; -EAGAIN when it was replaced meanwhile. */
int root_reopen(const struct root *r, int pfd, const struct stat *st, const char *path, int flags);

/* -EISDIR, -EINVAL or 0: what a regular-file open says of the type. */
int root_regular_only(const struct stat *st);
