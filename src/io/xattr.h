/* io/xattr.h - the extended attributes of a file (POSIX ACLs in
 * system.posix_acl_*, security.* labels, user.*, trusted.*), read from the
 * old file and put on its replacement, so that a rewrite keeps them. */
#pragma once

#include <stddef.h>

struct xattr {
	char *name;
	char *value;
	size_t len;
};

struct xattrs {
	struct xattr *v;
	size_t n;
};

/* Reads every attribute of fd. A file system without them gives none.
 * Returns 0 or -errno. */
int xattrs_read(int fd, struct xattrs *out);

/* Sets every attribute on fd (after its owner and mode: an ACL's mask
 * entry then stands as on the old file). A file system that keeps none
 * (vfat) is no error. Returns 0, or -errno with *failed the name that
 * could not be set. */
int xattrs_apply(int fd, const struct xattrs *x, const char **failed);

/* A deep copy of from in to (to's old content is not freed). */
void xattrs_copy(const struct xattrs *from, struct xattrs *to);

void xattrs_free(struct xattrs *x);
