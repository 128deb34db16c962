/* io/xattr.c - see io/xattr.h. */
#include "io/xattr.h"

#include <errno.h>
#include <string.h>
#include <sys/xattr.h>

#include "lib/util.h"

#define XATTR_LIST_MAX_BYTES (64u << 10)

static bool unsupported(int e) { return e == ENOTSUP || e == EOPNOTSUPP || e == ENOSYS; }

int xattrs_read(int fd, struct xattrs *out)
{
	memset(out, 0, sizeof(*out));
	for (int tries = 0; tries < 4; tries++) {
		ssize_t n = flistxattr(fd, NULL, 0);
		if (n < 0)
			return unsupported(errno) ? 0 : -errno;
		if (n == 0)
			return 0;
		if ((size_t)n > XATTR_LIST_MAX_BYTES)
			return -E2BIG;
		_cleanup_free_ char *names = xmalloc((size_t)n);
		ssize_t got = flistxattr(fd, names, (size_t)n);
		if (got < 0 && errno == ERANGE)
			continue; /* grew meanwhile */
		if (got < 0)
			return -errno;
		for (ssize_t i = 0; i < got; i += (ssize_t)strlen(names + i) + 1) {
			const char *name = names + i;
			ssize_t len = fgetxattr(fd, name, NULL, 0);
			if (len < 0 && errno == ENODATA)
				continue; /* removed meanwhile */
			if (len < 0) {
				int e = errno;
				xattrs_free(out);
				return -e;
			}
			char *value = xmalloc(len ? (size_t)len : 1);
			ssize_t vlen = len ? fgetxattr(fd, name, value, (size_t)len) : 0;
			if (vlen < 0) {
				int e = errno;
				free(value);
				xattrs_free(out);
				return -e;
			}
			out->v = xrealloc(out->v, (out->n + 1) * sizeof(*out->v));
			out->v[out->n++] = (struct xattr){ .name = xstrdup(name), .value = value, .len = (size_t)vlen };
		}
		return 0;
	}
	return -ERANGE;
}

int xattrs_apply(int fd, const struct xattrs *x, const char **failed)
{
	for (size_t i = 0; i < x->n; i++) {
		if (fsetxattr(fd, x->v[i].name, x->v[i].value, x->v[i].len, 0) == 0)
			continue;
		int e = errno;
		if (unsupported(e))
			return 0; /* the file system keeps none */
		*failed = x->v[i].name;
		return -e;
	}
	return 0;
}

void xattrs_copy(const struct xattrs *from, struct xattrs *to)
{
	to->n = from->n;
	to->v = from->n ? xmalloc(from->n * sizeof(*to->v)) : NULL;
	for (size_t i = 0; i < from->n; i++) {
		char *value = xmalloc(from->v[i].len ? from->v[i].len : 1);
		if (from->v[i].len)
			memcpy(value, from->v[i].value, from->v[i].len);
		to->v[i] = (struct xattr){ .name = xstrdup(from->v[i].name), .value = value, .len = from->v[i].len };
	}
}

void xattrs_free(struct xattrs *x)
{
	for (size_t i = 0; i < x->n; i++) {
		free(x->v[i].name);
		free(x->v[i].value);
	}
	free(x->v);
	x->v = NULL;
	x->n = 0;
}
