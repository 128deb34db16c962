/* io/inputs.c - the paths an evaluation looked at, see io/inputs.h */
#include "io/inputs.h"
#include "io/readcache.h"
#include "lib/util.h"

#include <linux/magic.h>
#include <stdint.h>

static struct {
	struct input *v;
	size_t n, cap;
	bool noting, untrusted;
	struct timespec since;
	/* open addressing over v's indices + 1, by path and flags */
	uint32_t *slots;
	size_t nslots;
} in;

static uint32_t hash_of(const char *path, int flags)
{
	uint32_t h = 2166136261u ^ (uint32_t)flags;
	for (const unsigned char *p = (const unsigned char *)path; *p; p++)
		h = (h ^ *p) * 16777619u;
	return h;
}

void inputs_clear(void)
{
	for (size_t i = 0; i < in.n; i++)
		free(in.v[i].path);
	free(in.v);
	free(in.slots);
	memset(&in, 0, sizeof(in));
}

void inputs_start(void)
{
	inputs_clear();
	in.noting = true;
	in.since = readcache_clock();
}

void inputs_stop(void) { in.noting = false; }
bool inputs_noting(void) { return in.noting; }

static void rehash(size_t nslots)
{
	free(in.slots);
	in.slots = xcalloc(nslots, sizeof(*in.slots));
	in.nslots = nslots;
	for (size_t i = 0; i < in.n; i++) {
		size_t s = hash_of(in.v[i].path, in.v[i].flags) & (nslots - 1);
		while (in.slots[s])
			s = (s + 1) & (nslots - 1);
		in.slots[s] = (uint32_t)(i + 1);
	}
}

/* The running kernel's own config (/proc/config.gz on a live system)
 * cannot change while that kernel runs, however new its inode's times. */
static bool fixed_while_running(const char *path, long fs_type)
{
	return (unsigned long)fs_type == PROC_SUPER_MAGIC && streq(path, "/proc/config.gz");
}

void inputs_note(const char *path, int flags, int err, const struct stat *st, long fs_type, bool listed)
{
	if (!in.noting)
		return;
	bool content = err == 0 && (S_ISREG(st->st_mode) || (listed && S_ISDIR(st->st_mode)));
	if (content && !fixed_while_running(path, fs_type) && !readcache_trusted(fs_type, st, in.since))
		in.untrusted = true;
	if (2 * (in.n + 1) > in.nslots)
		rehash(in.nslots ? in.nslots * 2 : 256);
	size_t s = hash_of(path, flags) & (in.nslots - 1);
	for (; in.slots[s]; s = (s + 1) & (in.nslots - 1)) {
		struct input *old = &in.v[in.slots[s] - 1];
		if (old->flags == flags && streq(old->path, path)) {
			/* looked at twice in one evaluation: it must have
			 * said the same both times */
			if (!input_same(old, err, st))
				in.untrusted = true;
			return;
		}
	}
	if (in.n == in.cap) {
		in.cap = in.cap ? in.cap * 2 : 64;
		in.v = xrealloc(in.v, in.cap * sizeof(*in.v));
	}
	struct input *n = &in.v[in.n];
	*n = (struct input){ .path = xstrdup(path), .flags = flags, .err = err, .content = content };
	if (err == 0) {
		n->dev = st->st_dev;
		n->ino = st->st_ino;
		n->mode = st->st_mode;
		n->uid = st->st_uid;
		n->gid = st->st_gid;
		n->size = st->st_size;
		n->mtime = st->st_mtim;
		n->ctime = st->st_ctim;
	}
	in.slots[s] = (uint32_t)(++in.n);
}

bool input_same(const struct input *i, int err, const struct stat *st)
{
	if (i->err || err)
		return i->err == err;
	if (i->dev != st->st_dev || i->ino != st->st_ino || i->mode != st->st_mode || i->uid != st->st_uid ||
	    i->gid != st->st_gid)
		return false;
	return !i->content ||
	       (i->size == st->st_size && timespec_eq(i->mtime, st->st_mtim) && timespec_eq(i->ctime, st->st_ctim));
}

const struct input *inputs_list(size_t *n, bool *usable)
{
	*n = in.n;
	*usable = in.n > 0 && !in.untrusted;
	return in.v;
}
