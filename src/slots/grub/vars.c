/* slots/grub/vars.c - the values GRUB_CMDLINE_LINUX and _DEFAULT have
 * three ways (as written, with the drop-in's filter as recorded now, and
 * as the change would record it): by the tool's own reader of shell
 * assignments (lib/shvars.h); on the live system, where that reader
 * cannot know a value, by sourcing the system's own files with /bin/sh
 * through the real drop-in, and then from the cache of what the shell
 * gave for the same files. No file of an image is run. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/spawn.h"
#include "lib/cmdline.h"
#include "lib/diag.h"
#include "lib/shvars.h"
#include "slots/grub/grub-int.h"

static int memfd_of(const char *data, size_t len)
{
	int fd = memfd_create("memcg-policy-grub", MFD_CLOEXEC);
	if (fd < 0)
		return -errno;
	for (size_t off = 0; off < len;) {
		ssize_t w = write(fd, data + off, len - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			int e = w < 0 ? -errno : -EIO;
			close(fd);
			return e;
		}
		off += (size_t)w;
	}
	return fd;
}

struct sources {
	int fds[64];
	size_t n;
	struct strbuf script;
};

/* Adds a file to source: ". /dev/fd/N" */
static int add_fd(struct sources *src, const char *data, size_t len)
{
	if (src->n + 1 >= ARRAY_SIZE(src->fds))
		return -E2BIG;
	int fd = memfd_of(data, len);
	if (fd < 0)
		return fd;
	src->fds[src->n++] = fd;
	src->fds[src->n] = -1;
	return (int)(src->n + 2); /* its number in the child */
}

/* Sources our drop-in where the data's path is given ($1 of memcg_eval). */
static void source_ours(struct strbuf *sc, int fd)
{
	sb_appendf(sc,
		   "\tif [ -n \"$1\" ]; then MEMCG_POLICY_GRUB_TOKENS=$1; export MEMCG_POLICY_GRUB_TOKENS; "
		   ". /dev/fd/%d; fi\n",
		   fd);
}

/* The values three ways: without the drop-in, with the data now, with
 * the data proposed. Returns 0 and out[3], or -errno / a shell error
 * (the output in *err). */
static int evaluate_vars(const struct root *r, const struct slot_list *l, const struct slot_change *ch,
			 struct vars out[3], char **err)
{
	struct sources src = { .fds = { -1 } };
	struct strbuf *sc = &src.script;
	int e = 0;
	const struct slot *in = NULL, *tok = NULL;
	const struct slot_change *in_ch = NULL, *tok_ch = NULL;
	for (size_t i = 0; i < l->n; i++) {
		if (l->v[i].kind == SLOT_GRUB_DROPIN || l->v[i].kind == SLOT_GRUB_DEFAULT) {
			in = &l->v[i];
			in_ch = &ch[i];
		} else if (l->v[i].kind == SLOT_GRUB_TOKENS) {
			tok = &l->v[i];
			tok_ch = &ch[i];
		}
	}
	if (!in || !tok)
		return -ENOENT;
	sb_append(sc, "sysconfdir=/etc\nmemcg_eval() {\n\t(\n\tset -e\n");
	_cleanup_free_ char *deftext = NULL;
	size_t deflen = 0;
	e = root_read_file(r, GRUB_DEFAULT_PATH, MAX_INPUT_FILE, &deftext, &deflen);
	if (e == 0) {
		size_t n;
		_cleanup_free_ char *unmarked = grub_default_unmark(deftext, deflen, &n);
		e = add_fd(&src, unmarked, n);
		if (e >= 0)
			sb_appendf(sc, "\t. /dev/fd/%d\n", e);
	} else if (e == -ENOENT) {
		e = 0;
	}
	/* our drop-in: as apply leaves it */
	const char *ours = in_ch->new_content && in->kind == SLOT_GRUB_DROPIN ? in_ch->new_content : NULL;
	size_t ours_len = ours ? in_ch->new_len : 0;
	if (!ours || !ours_len)
		ours = grub_dropin_builtin(&ours_len);
	int ours_fd = e >= 0 ? add_fd(&src, ours, ours_len) : e;
	if (ours_fd < 0)
		e = ours_fd;
	if (e >= 0 && in->kind == SLOT_GRUB_DROPIN) {
		char **names = NULL;
		int n = root_list_dir(r, "/etc/default/grub.d", ".cfg", &names);
		bool done = false;
		for (int i = 0; i < n && e >= 0; i++) {
			int c = strcmp(names[i], GRUB_DROPIN_NAME);
			if (c >= 0 && !done) {
				source_ours(sc, ours_fd);
				done = true;
			}
			if (c == 0)
				continue;
			_cleanup_free_ char *p = path_join("/etc/default/grub.d", names[i]);
			_cleanup_free_ char *text = NULL;
			size_t len;
			e = root_read_file(r, p, MAX_INPUT_FILE, &text, &len);
			if (e >= 0)
				e = add_fd(&src, text, len);
			if (e >= 0)
				sb_appendf(sc, "\t. /dev/fd/%d\n", e);
		}
		names_free(names, n > 0 ? n : 0);
		if (!done)
			source_ours(sc, ours_fd);
	} else if (e >= 0) {
		source_ours(sc, ours_fd); /* the marked line, at the end */
	}
	sb_append(sc, "\tprintf '\\036%s\\037%s\\036' \"${GRUB_CMDLINE_LINUX-}\" \"${GRUB_CMDLINE_LINUX_DEFAULT-}\"\n"
		      "\t)\n}\nmemcg_eval ''\n");
	int now = -1, next = -1;
	if (e >= 0 && tok->content)
		e = now = add_fd(&src, tok->content, tok->len);
	if (e >= 0 && tok_ch->new_content && (tok->exists || tok_ch->changed))
		e = next = add_fd(&src, tok_ch->new_content, tok_ch->new_len);
	if (e >= 0) {
		if (now >= 0)
			sb_appendf(sc, "memcg_eval /dev/fd/%d\n", now);
		else
			sb_append(sc, "memcg_eval ''\n");
		if (next >= 0)
			sb_appendf(sc, "memcg_eval /dev/fd/%d\n", next);
		else
			sb_append(sc, "memcg_eval ''\n");
	}
	_cleanup_free_ char *script = sb_take(sc);
	_cleanup_free_ char *output = NULL;
	if (e >= 0) {
		char self[4096];
		ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
		if (n < 0)
			e = -errno;
		else
			self[n] = '\0';
		_cleanup_free_ char *filter = n >= 0 ? xasprintf(ENV_GRUB_FILTER "=%s", self) : NULL;
		const char *env[] = { filter, NULL };
		const char *argv[] = { "/bin/sh", "-c", script, "sh", NULL };
		if (e >= 0) {
			e = spawn_run(argv, env, NULL, src.fds, &output);
			if (e > 0)
				e = 0; /* the values tell */
		}
	}
	for (size_t i = 0; i < src.n; i++)
		close(src.fds[i]);
	if (e < 0)
		return e;
	/* three \036LINUX\037DEFAULT\036 */
	size_t got = 0;
	const char *p = output ? output : "";
	while (got < 3 && (p = strchr(p, '\036'))) {
		const char *us = strchr(p + 1, '\037');
		const char *end = us ? strchr(us + 1, '\036') : NULL;
		if (!end)
			break;
		out[got].lin = xstrndup(p + 1, (size_t)(us - p - 1));
		out[got].def = xstrndup(us + 1, (size_t)(end - us - 1));
		got++;
		p = end + 1;
	}
	if (got < 3) {
		for (size_t i = 0; i < got; i++) {
			free(out[i].lin);
			free(out[i].def);
		}
		*err = TAKE_PTR(output);
		return -EINVAL;
	}
	return 0;
}

void grub_unknown_clear(struct unknown *u)
{
	free(u->where);
	*u = (struct unknown){ 0 };
}

static int source_root_file(struct shvars *vs, const struct root *r, const char *path)
{
	_cleanup_free_ char *text = NULL;
	size_t len = 0;
	int e = root_read_file(r, path, MAX_INPUT_FILE, &text, &len);
	if (e == -ENOENT)
		return 0;
	if (e < 0)
		return e;
	_cleanup_free_ char *disp = root_display(r, path);
	if (streq(path, GRUB_DEFAULT_PATH)) {
		size_t n;
		_cleanup_free_ char *unmarked = grub_default_unmark(text, len, &n);
		shvars_source(vs, disp, unmarked, n);
	} else {
		shvars_source(vs, disp, text, len);
	}
	return 0;
}

/* What the drop-in does where grub-mkconfig sources it, given the data
 * (tokens) it reads: both variables through grub_filter, or unchanged when
 * there is no data or the program refuses them. */
static void filter_as_dropin(struct shvars *vs, const char *tokens, size_t len)
{
	if (!tokens)
		return;
	struct grub_tokens t;
	unsigned bad;
	if (grub_tokens_parse(tokens, len, &t, &bad) < 0)
		return;
	const char *lin, *def, *f, *why;
	unsigned line;
	if (shvars_get(vs, "GRUB_CMDLINE_LINUX", &lin, &f, &line, &why) &&
	    shvars_get(vs, "GRUB_CMDLINE_LINUX_DEFAULT", &def, &f, &line, &why)) {
		_cleanup_free_ char *lo = NULL, *dout = NULL;
		if (grub_filter(&t, lin ? lin : "", def ? def : "", &lo, &dout) == 0) {
			shvars_set(vs, "GRUB_CMDLINE_LINUX", lo, GRUB_DROPIN_PATH, 0);
			shvars_set(vs, "GRUB_CMDLINE_LINUX_DEFAULT", dout, GRUB_DROPIN_PATH, 0);
		}
	}
	grub_tokens_free(&t);
}

/* One evaluation: /etc/default/grub, then (drop-in kind) every
 * /etc/default/grub.d/\*.cfg in name order with ours at its place, or
 * (marked-line kind) ours at the end; ours with the data given (NULL: as
 * if it were not there). */
static int read_vars_once(const struct root *r, bool dropins, const char *tokens, size_t tlen, struct vars *out,
			  struct unknown *u)
{
	struct shvars vs = { 0 };
	int e = source_root_file(&vs, r, GRUB_DEFAULT_PATH);
	if (e >= 0 && dropins) {
		char **names = NULL;
		int n = root_list_dir(r, "/etc/default/grub.d", ".cfg", &names);
		bool done = false;
		for (int i = 0; i < n && e >= 0; i++) {
			int c = strcmp(names[i], GRUB_DROPIN_NAME);
			if (c >= 0 && !done) {
				filter_as_dropin(&vs, tokens, tlen);
				done = true;
			}
			if (c == 0)
				continue;
			_cleanup_free_ char *p = path_join("/etc/default/grub.d", names[i]);
			e = source_root_file(&vs, r, p);
		}
		names_free(names, n > 0 ? n : 0);
		if (!done)
			filter_as_dropin(&vs, tokens, tlen);
	} else if (e >= 0) {
		filter_as_dropin(&vs, tokens, tlen); /* the marked line, at the end */
	}
	if (e >= 0) {
		const char *v[2], *f = NULL, *why = NULL;
		unsigned line = 0;
		static const char *const names[2] = { "GRUB_CMDLINE_LINUX", "GRUB_CMDLINE_LINUX_DEFAULT" };
		for (int k = 0; k < 2 && e >= 0; k++) {
			if (!shvars_get(&vs, names[k], &v[k], &f, &line, &why)) {
				grub_unknown_clear(u);
				u->where = xstrdup(f ? f : "?");
				u->line = line;
				u->why = why;
				e = -ENOEXEC;
			}
		}
		if (e >= 0) {
			out->lin = xstrdup(v[0] ? v[0] : "");
			out->def = xstrdup(v[1] ? v[1] : "");
			for (int k = 0; k < 2; k++) {
				shvars_get(&vs, names[k], &v[k], &f, &line, &why);
				if (f)
					*(k ? &out->def_at : &out->lin_at) = xasprintf("%s:%u", f, line);
			}
		}
	}
	shvars_free(&vs);
	return e;
}

void grub_vars_free(struct vars v[3])
{
	for (int i = 0; i < 3; i++) {
		free(v[i].lin);
		free(v[i].def);
		free(v[i].lin_at);
		free(v[i].def_at);
		v[i] = (struct vars){ 0 };
	}
}

/* The values three ways (as evaluate_vars) by the tool's own reader.
 * -ENOEXEC with *u: a value takes running code to know. */
int grub_read_vars(const struct root *r, const struct slot_list *l, const struct slot_change *ch, struct vars out[3],
		   struct unknown *u)
{
	const struct slot *in = NULL, *tok = NULL;
	const struct slot_change *tok_ch = NULL;
	for (size_t i = 0; i < l->n; i++) {
		if (l->v[i].kind == SLOT_GRUB_DROPIN || l->v[i].kind == SLOT_GRUB_DEFAULT) {
			in = &l->v[i];
		} else if (l->v[i].kind == SLOT_GRUB_TOKENS) {
			tok = &l->v[i];
			tok_ch = &ch[i];
		}
	}
	if (!in || !tok)
		return -ENOENT;
	bool dropins = in->kind == SLOT_GRUB_DROPIN;
	const char *now = tok->exists ? tok->content : NULL;
	size_t now_len = now ? tok->len : 0;
	const char *next = tok_ch->new_content && (tok->exists || tok_ch->changed) ? tok_ch->new_content : NULL;
	size_t next_len = next ? tok_ch->new_len : 0;
	int e = read_vars_once(r, dropins, NULL, 0, &out[0], u);
	if (e >= 0)
		e = read_vars_once(r, dropins, now, now_len, &out[1], u);
	if (e >= 0)
		e = read_vars_once(r, dropins, next, next_len, &out[2], u);
	if (e < 0)
		grub_vars_free(out);
	return e;
}

/* ---- the shell's values, cached (live system only) ----
 * Where the tool's reader cannot know the values, the live system's files
 * go through /bin/sh; what it gave is kept in GRUB_VARS_CACHE with the
 * identity (device, inode, size, change and modification times) of every
 * file it sourced and a hash of the data and drop-in texts it ran with.
 * A later status or decide whose inputs are all the same takes the values
 * from there and starts no shell. Never under --root; the file is
 * trusted only when it is root's (or ours) and not writable by others. */
#define GRUB_VARS_CACHE "/var/lib/memcg-policy/grub-vars.cache"
#define GRUB_VARS_MAGIC "memcg-policy grub-vars 1\n"

static uint64_t text_hash(const char *s, size_t n)
{
	uint64_t h = 1469598103934665603ull;
	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
	return h;
}

static void key_file(struct strbuf *sb, const struct root *r, const char *path)
{
	struct stat st;
	if (root_stat(r, path, &st) < 0) {
		sb_appendf(sb, "%s -\n", path);
		return;
	}
	sb_appendf(sb, "%s %llu %llu %lld %lld.%09ld %lld.%09ld\n", path, (unsigned long long)st.st_dev,
		   (unsigned long long)st.st_ino, (long long)st.st_size, (long long)st.st_mtim.tv_sec,
		   st.st_mtim.tv_nsec, (long long)st.st_ctim.tv_sec, st.st_ctim.tv_nsec);
}

/* What the shell's values depend on, as text; NULL where a file cannot
 * be listed. */
static char *vars_key(const struct root *r, const struct slot_list *l, const struct slot_change *ch)
{
	const struct slot *in = NULL, *tok = NULL;
	const struct slot_change *in_ch = NULL, *tok_ch = NULL;
	for (size_t i = 0; i < l->n; i++) {
		if (l->v[i].kind == SLOT_GRUB_DROPIN || l->v[i].kind == SLOT_GRUB_DEFAULT) {
			in = &l->v[i];
			in_ch = &ch[i];
		} else if (l->v[i].kind == SLOT_GRUB_TOKENS) {
			tok = &l->v[i];
			tok_ch = &ch[i];
		}
	}
	if (!in || !tok)
		return NULL;
	struct strbuf sb = { 0 };
	sb_appendf(&sb, "kind %d\n", (int)in->kind);
	key_file(&sb, r, GRUB_DEFAULT_PATH);
	if (in->kind == SLOT_GRUB_DROPIN) {
		char **names = NULL;
		int n = root_list_dir(r, "/etc/default/grub.d", ".cfg", &names);
		for (int i = 0; i < n; i++) {
			_cleanup_free_ char *p = path_join("/etc/default/grub.d", names[i]);
			key_file(&sb, r, p);
		}
		names_free(names, n > 0 ? n : 0);
	}
	size_t ol = 0;
	const char *ours = in_ch->new_content && in->kind == SLOT_GRUB_DROPIN ? in_ch->new_content : NULL;
	if (ours)
		ol = in_ch->new_len;
	if (!ours || !ol)
		ours = grub_dropin_builtin(&ol);
	sb_appendf(&sb, "dropin %016llx %zu\n", (unsigned long long)text_hash(ours, ol), ol);
	if (tok->content)
		sb_appendf(&sb, "data %016llx %zu\n", (unsigned long long)text_hash(tok->content, tok->len), tok->len);
	if (tok_ch->new_content && (tok->exists || tok_ch->changed))
		sb_appendf(&sb, "next %016llx %zu\n",
			   (unsigned long long)text_hash(tok_ch->new_content, tok_ch->new_len), tok_ch->new_len);
	return sb_take(&sb);
}

static void hex_line(struct strbuf *sb, const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		sb_appendf(sb, "%02x", *p);
	sb_appendc(sb, '\n');
}

static char *unhex(const char *s, size_t n)
{
	if (n % 2)
		return NULL;
	char *out = xmalloc(n / 2 + 1);
	for (size_t i = 0; i < n / 2; i++) {
		unsigned v;
		if (sscanf(s + 2 * i, "%2x", &v) != 1 || v == 0) {
			free(out);
			return NULL;
		}
		out[i] = (char)v;
	}
	out[n / 2] = '\0';
	return out;
}

/* The cached values for key, 0; else -ENOENT. */
static int cache_get(const struct root *r, const char *key, struct vars v[3])
{
	struct stat st;
	if (!r->live || root_stat(r, GRUB_VARS_CACHE, &st) < 0 || !S_ISREG(st.st_mode) ||
	    (st.st_uid != 0 && st.st_uid != geteuid()) || (st.st_mode & 022))
		return -ENOENT;
	_cleanup_free_ char *text = NULL;
	size_t len = 0;
	if (root_read_file(r, GRUB_VARS_CACHE, 1u << 20, &text, &len) < 0)
		return -ENOENT;
	size_t ml = strlen(GRUB_VARS_MAGIC), kl = strlen(key);
	if (len < ml + kl + 4 || memcmp(text, GRUB_VARS_MAGIC, ml) != 0 || memcmp(text + ml, key, kl) != 0 ||
	    memcmp(text + ml + kl, "--\n", 3) != 0)
		return -ENOENT;
	const char *p = text + ml + kl + 3, *end = text + len;
	char *got[6] = { NULL };
	int k = 0;
	for (; k < 6 && p < end; k++) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl || !(got[k] = unhex(p, (size_t)(nl - p))))
			break;
		p = nl + 1;
	}
	if (k < 6 || p != end) {
		for (int i = 0; i < 6; i++)
			free(got[i]);
		return -ENOENT;
	}
	for (int i = 0; i < 3; i++)
		v[i] = (struct vars){ .lin = got[2 * i], .def = got[2 * i + 1] };
	return 0;
}

/* Keeps the values for key where the tool's directory is (never creates
 * it); a failure only costs the next run a shell. */
static void cache_put(const struct root *r, const char *key, const struct vars v[3])
{
	if (!r->live || !streq(r->path, "/"))
		return;
	struct strbuf sb = { 0 };
	sb_append(&sb, GRUB_VARS_MAGIC);
	sb_append(&sb, key);
	sb_append(&sb, "--\n");
	for (int i = 0; i < 3; i++) {
		hex_line(&sb, v[i].lin);
		hex_line(&sb, v[i].def);
	}
	char tmp[] = "/var/lib/memcg-policy/.grub-vars.XXXXXX";
	int fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0) {
		sb_free(&sb);
		return;
	}
	bool ok = write(fd, sb.s, sb.len) == (ssize_t)sb.len;
	ok = close(fd) == 0 && ok;
	if (!ok || rename(tmp, GRUB_VARS_CACHE) < 0)
		unlink(tmp);
	sb_free(&sb);
}

/* The values: by the tool's reader; on the live system, where it cannot
 * know them, by the shell (the system's own files), or from what the shell
 * gave for the same inputs last time. *why_not says why neither could
 * (newly allocated). */
int grub_get_vars(const struct root *r, const struct slot_list *l, const struct slot_change *ch, struct vars v[3],
		  char **why_not)
{
	struct unknown u = { 0 };
	int e = grub_read_vars(r, l, ch, v, &u);
	_cleanup_free_ char *key = e == -ENOEXEC && r->live ? vars_key(r, l, ch) : NULL;
	if (key && cache_get(r, key, v) == 0) {
		log_verbose("%s:%u: %s: the GRUB variables as /bin/sh gave them for the same files (%s)", u.where,
			    u.line, u.why, GRUB_VARS_CACHE);
		e = 0;
	} else if (e == -ENOEXEC && r->live) {
		log_verbose("%s:%u: %s: the GRUB variables are read by sourcing the files with /bin/sh", u.where,
			    u.line, u.why);
		_cleanup_free_ char *err = NULL;
		e = evaluate_vars(r, l, ch, v, &err);
		if (e == 0 && key)
			cache_put(r, key, v);
		if (e < 0) {
			size_t n = err ? strlen(err) : 0;
			while (n > 0 && err[n - 1] == '\n')
				n--;
			*why_not = xasprintf("%s%s%.*s",
					     e == -EINVAL ? "sourcing the GRUB configuration failed" : strerror(-e),
					     n ? ": " : "", (int)n, n ? err : "");
		}
	} else if (e == -ENOEXEC) {
		*why_not =
			xasprintf("%s:%u: %s: knowing the value takes running the file, and no file of an image is run",
				  u.where, u.line, u.why);
	} else if (e < 0) {
		*why_not = xstrdup(strerror(-e));
	}
	grub_unknown_clear(&u);
	return e;
}
