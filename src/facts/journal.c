/* facts/journal.c - what the tool changed (for revert), and the lock; see
 * facts/journal.h. The journal is JSON written and read with json-c:
 *
 *   {"version": 1,
 *    "files": [{"path": "/boot/loader/entries/x.conf", "kernel": "6.1.0" | null,
 *               "had_original": true, "original": "...", "written": "...",
 *               "before": "..." | true | null,
 *               "added": ["cgroup_disable=memory"], "removed": [...]}]}
 *
 * "before": true stands for the original's bytes (the first write of a
 * file: a third less to escape). Contents are stored with their exact length (json-c escapes what JSON
 * needs, NUL bytes included); files are listed sorted by path, so that the
 * same journal always serializes to the same bytes. Unknown keys are
 * ignored (a later version may add some); a missing or wrong-typed known
 * key, a duplicate path or another version makes the journal corrupt. */
#include "facts/journal.h"

#include <errno.h>
#include <fcntl.h>
#include "io/jsonc.h"
#include <stdio.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <stdint.h>
#include <unistd.h>

#include "lib/diag.h"
#include "slots/slot.h"
#include "slots/table.h"

#define JOURNAL_VERSION 1
#define LOCK_DIR "/run"
#define LOCK_PATH "/run/memcg-policy.lock"

_Noreturn static void json_oom(void)
{
	fputs("memcg-policy: out of memory\n", stderr);
	abort();
}

static void entry_free(struct journal_entry *e)
{
	free(e->path);
	free(e->kernel);
	free(e->original);
	free(e->written);
	free(e->before);
	strv_free(&e->added);
	strv_free(&e->removed);
	memset(e, 0, sizeof(*e));
}

void journal_free(struct journal *j)
{
	for (size_t i = 0; i < j->n; i++)
		entry_free(&j->v[i]);
	free(j->v);
	j->v = NULL;
	j->n = j->cap = 0;
	if (j->by_path)
		str_index_reset(j->by_path);
	free(j->by_path);
	j->by_path = NULL;
}

static const char *entry_path(const void *ctx, size_t i) { return ((const struct journal *)ctx)->v[i].path; }

const struct journal_entry *journal_get(const struct journal *j, const char *path)
{
	if (!j->by_path) {
		for (size_t i = 0; i < j->n; i++)
			if (streq(j->v[i].path, path))
				return &j->v[i];
		return NULL;
	}
	size_t i = str_index_find(j->by_path, path, j->n, entry_path, j);
	return i == SIZE_MAX ? NULL : &j->v[i];
}

struct journal_entry *journal_find(struct journal *j, const char *path)
{
	const struct journal_entry *e = journal_get(j, path);
	return e ? &j->v[e - j->v] : NULL;
}

void journal_forget(struct journal *j, const char *path)
{
	struct journal_entry *e = journal_find(j, path);
	if (!e)
		return;
	size_t i = (size_t)(e - j->v);
	entry_free(e);
	memmove(&j->v[i], &j->v[i + 1], (j->n - i - 1) * sizeof(*j->v));
	j->n--;
	if (j->by_path)
		str_index_reset(j->by_path);
}

static struct journal_entry *entry_new(struct journal *j, const char *path)
{
	if (!j->v || j->n == j->cap) {
		j->cap = j->n < 8 ? 16 : j->n * 2;
		j->v = xrealloc(j->v, j->cap * sizeof(*j->v));
	}
	if (!j->by_path)
		j->by_path = xcalloc(1, sizeof(*j->by_path));
	struct journal_entry *e = &j->v[j->n++];
	memset(e, 0, sizeof(*e));
	e->path = xstrdup(path);
	return e;
}

static char *dup_bytes(const char *s, size_t len)
{
	char *p = xmalloc(len + 1);
	if (len)
		memcpy(p, s, len);
	p[len] = '\0';
	return p;
}

/* Takes one occurrence of s out of sv; true if there was one. */
static bool strv_take_out(struct strv *sv, const char *s)
{
	for (size_t i = 0; i < sv->n; i++)
		if (streq(sv->v[i], s)) {
			free(sv->v[i]);
			memmove(&sv->v[i], &sv->v[i + 1], (sv->n - i) * sizeof(char *)); /* with the NULL */
			sv->n--;
			return true;
		}
	return false;
}

/* The file was changed since the tool's last write (an admin's edit, a
 * config manager, a distribution tool): that change is the admin's, and
 * revert must keep it. The original becomes the content as changed,
 * without the tool's tokens and with the admin's it had removed; a file
 * the tool created and someone then changed is the admin's from now on
 * (revert takes only the tool's tokens out of it); a file someone removed
 * is one the tool creates anew. */
static void rebase(struct journal_entry *e, const char *cur, size_t cur_len)
{
	enum slot_kind k;
	if (!slot_kind_of_path(e->path, &k))
		return;
	if (!cur) {
		free(e->original);
		e->original = NULL;
		e->original_len = 0;
		e->had_original = false;
		return;
	}
	size_t len = 0;
	char *o = slot_unedit(k, e, cur, cur_len, &len);
	if (!o)
		return;
	free(e->original);
	e->original = o;
	e->original_len = len;
	e->had_original = true;
}

void journal_record(struct journal *j, const char *path, const char *kernel, bool existed, const char *old,
		    size_t old_len, const char *new_content, size_t new_len, const struct strv *added,
		    const struct strv *removed)
{
	struct journal_entry *e = journal_find(j, path);
	if (e && !bytes_same(old, old_len, e->written, e->written_len) &&
	    !bytes_same(old, old_len, e->before, e->before_len))
		rebase(e, existed ? old : NULL, old_len);
	if (!e) {
		e = entry_new(j, path);
		e->had_original = existed;
		if (existed) {
			e->original = dup_bytes(old ? old : "", old ? old_len : 0);
			e->original_len = old ? old_len : 0;
		}
	}
	free(e->kernel);
	e->kernel = kernel ? xstrdup(kernel) : NULL;
	free(e->before);
	e->before = existed ? dup_bytes(old ? old : "", old ? old_len : 0) : NULL;
	e->before_len = existed && old ? old_len : 0;
	free(e->written);
	e->written = new_content ? dup_bytes(new_content, new_len) : NULL;
	e->written_len = new_content ? new_len : 0;

	/* Tokens: a token the tool adds now that it had removed before is the
	 * admin's own coming back, and one it removes now that it had added
	 * is its own going away; neither needs undoing any more. */
	for (size_t i = 0; added && i < added->n; i++) {
		if (strv_take_out(&e->removed, added->v[i]))
			continue;
		if (!strv_contains(&e->added, added->v[i]))
			strv_pushdup(&e->added, added->v[i]);
	}
	for (size_t i = 0; removed && i < removed->n; i++) {
		if (strv_take_out(&e->added, removed->v[i]))
			continue;
		if (!strv_contains(&e->removed, removed->v[i]))
			strv_pushdup(&e->removed, removed->v[i]);
	}
}

void journal_prune(struct journal *j, const char *path, const char *cur, size_t cur_len)
{
	const struct journal_entry *e = journal_get(j, path);
	if (!e)
		return;
	bool landed = bytes_same(cur, cur_len, e->written, e->written_len);
	bool back = e->had_original ? e->written && bytes_same(e->written, e->written_len, e->original, e->original_len)
				    : !e->written;
	if (landed && back)
		journal_forget(j, path);
}

/* ---- serialization ---- */

/* The journal is written by hand, read back with json-c (journal_load):
 * its copies of files are most of it, and json-c's writer escapes them a
 * character at a time (a fifth of apply's instructions on 100 entries).
 * Here runs of plain bytes are copied whole. A string's bytes as they
 * are, but for '"', '\\' and the control bytes, escaped as JSON has them;
 * bytes of no valid UTF-8 sequence stay raw, as json-c writes and reads
 * them. */
/* The end of the run of bytes from i on that stand in a JSON string as
 * they are (not a control byte, '"' or '\\'): eight at a time, each
 * eight tested at once. A byte below 0x20, or equal to either of the two,
 * sets its high bit in the mask (all three are below 0x80, so ~x keeps
 * them and drops the bytes from 0x80 up); a byte above one that does may
 * be set too (a borrow), which only ends the fast path early. */
static size_t plain_run(const char *s, size_t i, size_t n)
{
	const uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
	for (; i + 8 <= n; i += 8) {
		uint64_t x;
		memcpy(&x, s + i, 8);
		uint64_t q = x ^ (ones * '"'), b = x ^ (ones * '\\');
		uint64_t m = ((x - ones * 0x20) | (q - ones) | (b - ones)) & ~x & highs;
		if (m)
			break;
	}
	while (i < n) {
		unsigned char c = (unsigned char)s[i];
		if (c < 0x20 || c == '"' || c == '\\')
			break;
		i++;
	}
	return i;
}

static void put_string(struct strbuf *sb, const char *s, size_t n)
{
	/* the escape of each byte that needs one ("" for none) */
	static const char *const esc[32] = {
		[0] = "", ['\b'] = "\\b", ['\t'] = "\\t", ['\n'] = "\\n", ['\f'] = "\\f", ['\r'] = "\\r"
	};
	sb_appendc(sb, '"');
	for (size_t i = 0; i < n;) {
		size_t j = plain_run(s, i, n);
		unsigned char c = j < n ? (unsigned char)s[j] : 0;
		sb_appendn(sb, s + i, j - i);
		if (j == n)
			break;
		if (c == '"' || c == '\\') {
			char e[2] = { '\\', (char)c };
			sb_appendn(sb, e, 2);
		} else if (esc[c] && esc[c][0]) {
			sb_appendn(sb, esc[c], 2);
		} else {
			static const char hex[] = "0123456789abcdef";
			char e[6] = { '\\', 'u', '0', '0', hex[c >> 4], hex[c & 15] };
			sb_appendn(sb, e, 6);
		}
		i = j + 1;
	}
	sb_appendc(sb, '"');
}

/* "KEY": with the indent of a file's members */
static void put_key(struct strbuf *sb, const char *key, bool first)
{
	sb_append(sb, first ? "\n      \"" : ",\n      \"");
	sb_append(sb, key);
	sb_append(sb, "\": ");
}

static void put_bytes_or_null(struct strbuf *sb, const char *s, size_t len)
{
	if (s)
		put_string(sb, s, len);
	else
		sb_append(sb, "null");
}

static void put_strv(struct strbuf *sb, const struct strv *sv)
{
	sb_appendc(sb, '[');
	for (size_t i = 0; i < sv->n; i++) {
		if (i)
			sb_append(sb, ", ");
		put_string(sb, sv->v[i], strlen(sv->v[i]));
	}
	sb_appendc(sb, ']');
}

/* qsort_r's: entry indexes by path */
static int cmp_entry(const void *a, const void *b, void *journal)
{
	const struct journal *j = journal;
	return strcmp(j->v[*(const size_t *)a].path, j->v[*(const size_t *)b].path);
}

char *journal_serialize(const struct journal *j, size_t *len)
{
	struct strbuf sb = { 0 };
	size_t guess = 64;
	for (size_t i = 0; i < j->n; i++)
		guess += 256 + strlen(j->v[i].path) + j->v[i].original_len + j->v[i].written_len;
	sb.s = xmalloc(guess);
	sb.cap = guess;
	sb.s[0] = '\0';
	sb_appendf(&sb, "{\n  \"version\": %d,\n  \"files\": [", JOURNAL_VERSION);
	size_t *idx = xcalloc(j->n, sizeof(size_t));
	for (size_t i = 0; i < j->n; i++)
		idx[i] = i;
	if (j->n)
		qsort_r(idx, j->n, sizeof(size_t), cmp_entry, (void *)j);
	for (size_t k = 0; k < j->n; k++) {
		const struct journal_entry *e = &j->v[idx[k]];
		sb_append(&sb, k ? ",\n    {" : "\n    {");
		put_key(&sb, "path", true);
		put_string(&sb, e->path, strlen(e->path));
		put_key(&sb, "kernel", false);
		put_bytes_or_null(&sb, e->kernel, e->kernel ? strlen(e->kernel) : 0);
		put_key(&sb, "had_original", false);
		sb_append(&sb, e->had_original ? "true" : "false");
		put_key(&sb, "original", false);
		if (e->had_original && e->original)
			put_string(&sb, e->original, e->original_len);
		else
			put_string(&sb, "", 0);
		put_key(&sb, "written", false);
		put_bytes_or_null(&sb, e->written, e->written_len);
		put_key(&sb, "before", false);
		if (e->before && e->had_original && bytes_same(e->before, e->before_len, e->original, e->original_len))
			sb_append(&sb, "true");
		else
			put_bytes_or_null(&sb, e->before, e->before_len);
		put_key(&sb, "added", false);
		put_strv(&sb, &e->added);
		put_key(&sb, "removed", false);
		put_strv(&sb, &e->removed);
		sb_append(&sb, "\n    }");
	}
	free(idx);
	sb_append(&sb, j->n ? "\n  ]\n}\n" : "]\n}\n");
	if (len)
		*len = sb.len;
	return sb_take(&sb);
}

/* ---- loading ---- */

/* A string member: copies it (with its length). Missing: ok only if
 * optional; null: ok only if nullable (gives NULL). */
static bool get_bytes(json_object *o, const char *key, bool optional, bool nullable, char **out, size_t *len)
{
	json_object *v;
	*out = NULL;
	if (len)
		*len = 0;
	if (!json_object_object_get_ex(o, key, &v))
		return optional;
	if (!v)
		return nullable;
	if (!json_object_is_type(v, json_type_string))
		return false;
	int n = json_object_get_string_len(v);
	if (n < 0)
		return false;
	*out = dup_bytes(json_object_get_string(v), (size_t)n);
	if (len)
		*len = (size_t)n;
	return true;
}

static bool get_tokens(json_object *o, const char *key, struct strv *sv)
{
	json_object *a;
	if (!json_object_object_get_ex(o, key, &a))
		return true;
	if (!a || !json_object_is_type(a, json_type_array))
		return false;
	size_t n = json_object_array_length(a);
	for (size_t i = 0; i < n; i++) {
		json_object *s = json_object_array_get_idx(a, i);
		if (!s || !json_object_is_type(s, json_type_string))
			return false;
		const char *str = json_object_get_string(s);
		if (strlen(str) != (size_t)json_object_get_string_len(s) || !*str)
			return false; /* a token is never empty and holds no NUL */
		strv_pushdup(sv, str);
	}
	return true;
}

/* Fills j from the parsed document; NULL or why it is corrupt. */
static const char *from_json(json_object *root, struct journal *j)
{
	json_object *v;
	if (!json_object_is_type(root, json_type_object))
		return "not a JSON object";
	if (!json_object_object_get_ex(root, "version", &v) || !json_object_is_type(v, json_type_int))
		return "no version";
	if (json_object_get_int64(v) != JOURNAL_VERSION)
		return "unknown version";
	json_object *files;
	if (!json_object_object_get_ex(root, "files", &files) || !json_object_is_type(files, json_type_array))
		return "no list of files";
	size_t n = json_object_array_length(files);
	for (size_t i = 0; i < n; i++) {
		json_object *o = json_object_array_get_idx(files, i);
		if (!json_object_is_type(o, json_type_object))
			return "a file is not an object";
		json_object *p;
		if (!json_object_object_get_ex(o, "path", &p) || !json_object_is_type(p, json_type_string))
			return "a file without a path";
		const char *path = json_object_get_string(p);
		if (path[0] != '/' || strlen(path) != (size_t)json_object_get_string_len(p))
			return "a path that is not absolute";
		if (journal_find(j, path))
			return "a path listed twice";
		if (!slot_kind_of_path(path, NULL))
			return "a path that is no boot file the tool manages";
		struct journal_entry *e = entry_new(j, path);
		json_object *b;
		if (!json_object_object_get_ex(o, "had_original", &b) || !json_object_is_type(b, json_type_boolean))
			return "a file without had_original";
		e->had_original = json_object_get_boolean(b);
		if (!get_bytes(o, "kernel", true, true, &e->kernel, NULL))
			return "a kernel that is not a string";
		if (e->kernel && (!*e->kernel || strchr(e->kernel, '/')))
			return "a bad kernel release";
		if (!get_bytes(o, "original", !e->had_original, !e->had_original, &e->original, &e->original_len))
			return "a file without its original content";
		if (!e->had_original) {
			free(e->original);
			e->original = NULL;
			e->original_len = 0;
		}
		if (!get_bytes(o, "written", false, true, &e->written, &e->written_len))
			return "a file without its written content";
		json_object *bf;
		if (json_object_object_get_ex(o, "before", &bf) && json_object_is_type(bf, json_type_boolean)) {
			/* true: the original's bytes */
			if (!json_object_get_boolean(bf) || !e->had_original)
				return "a file whose content before the last write is not a string";
			e->before = dup_bytes(e->original, e->original_len);
			e->before_len = e->original_len;
		} else if (!get_bytes(o, "before", true, true, &e->before, &e->before_len)) {
			return "a file whose content before the last write is not a string";
		}
		if (!get_tokens(o, "added", &e->added) || !get_tokens(o, "removed", &e->removed))
			return "a token list that is not a list of strings";
	}
	return NULL;
}

int journal_load(const struct root *r, struct journal *j)
{
	memset(j, 0, sizeof(*j));
	_cleanup_free_ char *disp = root_display(r, JOURNAL_PATH);
	_cleanup_free_ char *text = NULL;
	size_t len = 0;
	_cleanup_close_ int fd = root_openat(r, JOURNAL_PATH, O_RDONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC, 0);
	if (fd == -ENOENT)
		return 0;
	if (fd == -EISDIR || fd == -EINVAL)
		return diag_error(EXIT_BADINPUT, "%s: corrupt journal: not a regular file", disp);
	if (fd < 0)
		return diag_error(root_error_exit(fd), "%s: cannot read: %s", disp, root_strerror(fd));
	/* revert writes what the journal says: only one that nobody but root
	 * (or the user running the tool) could have written is trusted */
	struct stat st;
	if (fstat(fd, &st) < 0)
		return diag_error(EXIT_SYSTEM, "%s: %s", disp, strerror(errno));
	if (st.st_uid != 0 && st.st_uid != geteuid())
		return diag_error(EXIT_BADINPUT, "%s: unsafe journal: owned by uid %u, not by root", disp,
				  (unsigned)st.st_uid);
	if (st.st_mode & (S_IWGRP | S_IWOTH))
		return diag_error(EXIT_BADINPUT, "%s: unsafe journal: writable by %s (mode %04o)", disp,
				  (st.st_mode & S_IWOTH) ? "others" : "group", (unsigned)(st.st_mode & 07777));
	int ret = read_fd_all(fd, MAX_INPUT_FILE, &text, &len);
	if (ret == -EISDIR || ret == -EINVAL)
		return diag_error(EXIT_BADINPUT, "%s: corrupt journal: not a regular file", disp);
	if (ret == -EFBIG)
		return diag_error(EXIT_BADINPUT, "%s: corrupt journal: too large", disp);
	if (ret < 0)
		return diag_error(root_error_exit(ret), "%s: cannot read: %s", disp, root_strerror(ret));

	json_tokener *tok = json_tokener_new();
	if (!tok)
		json_oom();
	json_object *root = json_tokener_parse_ex(tok, text, (int)len);
	bool ok = root && json_tokener_get_error(tok) == json_tokener_success;
	size_t end = ok ? json_tokener_get_parse_end(tok) : 0;
	json_tokener_free(tok);
	for (size_t i = end; ok && i < len; i++)
		if (!strchr(" \t\r\n", text[i]) || !text[i])
			ok = false;
	const char *why = ok ? from_json(root, j) : "not valid JSON";
	json_object_put(root);
	if (why) {
		journal_free(j);
		return diag_error(EXIT_BADINPUT, "%s: corrupt journal: %s", disp, why);
	}
	return 0;
}

/* ---- the lock ---- */

/* The "waiting" line is printed unless -q: a run that seems to hang should
 * say why, but -q asks for errors only. */
/* Opens the lock file (created with its directory when create is set) and
 * takes the lock, waiting for another run if need be. Without create, a
 * missing lock file or directory is -ENOENT, silently. */
static int lock_open_take(const struct root *r, bool create)
{
	_cleanup_free_ char *disp = root_display(r, LOCK_PATH);
	if (create) {
		int dfd = root_openat(r, LOCK_DIR, O_PATH | O_DIRECTORY, 0);
		if (dfd == -ENOENT) {
			_cleanup_close_ int rootfd = root_openat(r, "/", O_RDONLY | O_DIRECTORY, 0);
			if (rootfd < 0)
				return diag_error(EXIT_SYSTEM, "%s: cannot open the root: %s", disp, strerror(-rootfd));
			if (mkdirat(rootfd, &LOCK_DIR[1], 0755) < 0 && errno != EEXIST)
				return diag_error(EXIT_SYSTEM, "%s: cannot create the directory: %s", disp,
						  strerror(errno));
			dfd = root_openat(r, LOCK_DIR, O_PATH | O_DIRECTORY, 0);
		}
		if (dfd < 0)
			return diag_error(EXIT_SYSTEM, "%s: cannot open the directory: %s", disp, strerror(-dfd));
		close(dfd);
	}

	int fd = root_openat(r, LOCK_PATH, O_RDWR | (create ? O_CREAT : 0) | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC, 0600);
	if (fd < 0 && !create && (fd == -ENOENT || fd == -EROFS || fd == -EACCES))
		return -ENOENT;
	if (fd < 0)
		return diag_error(EXIT_SYSTEM, "%s: cannot open the lock: %s", disp, strerror(-fd));
	struct stat st;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return diag_error(EXIT_SYSTEM, "%s: the lock is not a regular file", disp);
	}
	if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
		test_hold("MEMCG_POLICY_LOCK_HOLD_MS");
		return fd;
	}
	if (errno != EWOULDBLOCK) {
		int e = errno;
		close(fd);
		return diag_error(EXIT_SYSTEM, "%s: cannot take the lock: %s", disp, strerror(e));
	}
	if (log_verbosity >= 0) {
		fprintf(stderr, "%s: waiting for the lock held by another memcg-policy (%s)\n", program_name, disp);
		fflush(stderr);
	}
	while (flock(fd, LOCK_EX) < 0) {
		if (errno == EINTR)
			continue;
		int e = errno;
		close(fd);
		return diag_error(EXIT_SYSTEM, "%s: cannot take the lock: %s", disp, strerror(e));
	}
	test_hold("MEMCG_POLICY_LOCK_HOLD_MS");
	return fd;
}

int lock_take(const struct root *r) { return lock_open_take(r, true); }

int lock_take_if_present(const struct root *r) { return lock_open_take(r, false); }
