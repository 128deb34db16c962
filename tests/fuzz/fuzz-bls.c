/* fuzz-bls.c - the BLS Type #1 entry reader and editor (src/slot-bls.c):
 * slot_text_check (what discovery refuses), bls_entry_describe (version,
 * linux path, unmanaged entries), bls_entry_check (entries it refuses),
 * bls_slot_cmdline and bls_slot_edit.
 * Properties, for an entry the reader accepts and the tool would edit:
 *   - for every decision: the edit is idempotent, its command line has
 *     every token to add and no item to remove (up to a "--"; unless the
 *     planner refuses the entry's command line, cmdline_edit_refused), and
 *     every line that is not an options line keeps its bytes;
 *   - to a decision and back: adding cgroup_disable=memory to an entry
 *     whose options lines lack it, then removing it, gives back the entry
 *     byte for byte. Not for an options line without any parameter
 *     ("options" and "options " both become "options cgroup_disable=memory":
 *     no edit can tell them apart afterwards); revert restores those from
 *     the journal's copy. */
#include "fuzz.h"
#include "decisions.h"

#include "lib/cmdline.h"
#include "slots/kinds.h"

static bool is_options_line(const char *l, size_t n)
{
	size_t k = 0;
	while (k < n && (l[k] == ' ' || l[k] == '\t'))
		k++;
	return n - k >= 7 && memcmp(l + k, "options", 7) == 0 &&
	       (n - k == 7 || strchr(" \t\r\v\f", l[k + 7]));
}

/* The lines of text that are not options lines, joined. */
static char *other_lines(const char *text, size_t len)
{
	struct strbuf sb = { 0 };
	sb_append(&sb, "");
	for (size_t i = 0; i < len;) {
		const char *nl = memchr(text + i, '\n', len - i);
		size_t e = nl ? (size_t)(nl - text) : len;
		if (!is_options_line(text + i, e - i)) {
			sb_appendn(&sb, text + i, e - i);
			sb_appendc(&sb, '\n');
		}
		i = e + 1;
	}
	return sb_take(&sb);
}

static bool options_have(const char *text, size_t len, const char *name, const char *item)
{
	struct slot s = { .kind = SLOT_BLS, .content = (char *)text, .len = len };
	char *joined = bls_slot_cmdline(&s);
	struct cmdline c;
	cmdline_split(joined, strlen(joined), &c);
	bool r = cmdline_has_item(&c, name, item);
	cmdline_free(&c);
	free(joined);
	return r;
}

/* Does some options line hold no parameter at all? */
static bool empty_options_line(const char *text, size_t len)
{
	for (size_t i = 0; i < len;) {
		const char *nl = memchr(text + i, '\n', len - i);
		size_t e = nl ? (size_t)(nl - text) : len;
		if (is_options_line(text + i, e - i)) {
			size_t k = i;
			while (k < e && (text[k] == ' ' || text[k] == '\t'))
				k++;
			k += 7;
			struct cmdline c;
			cmdline_split(text + k, e - k, &c);
			bool empty = c.n == 0;
			cmdline_free(&c);
			if (empty)
				return true;
		}
		i = e + 1;
	}
	return false;
}

static bool has_options_line(const char *text, size_t len)
{
	for (size_t i = 0; i < len;) {
		const char *nl = memchr(text + i, '\n', len - i);
		size_t e = nl ? (size_t)(nl - text) : len;
		if (is_options_line(text + i, e - i))
			return true;
		i = e + 1;
	}
	return false;
}

static char *edit(const char *text, size_t len, struct strv *add, struct strv *remove, size_t *new_len,
		  struct strv *added, struct strv *removed)
{
	struct slot s = { .kind = SLOT_BLS, .content = (char *)text, .len = len, .exists = true };
	struct decision d = { .add = *add, .remove = *remove };
	return bls_slot_edit(&s, &d, added, removed, new_len);
}

static void check_decision(const char *text, size_t len, const struct fuzz_decision *fd)
{
	struct strv add, remove, added = { 0 }, removed = { 0 };
	fuzz_decision_strv(fd, &add, &remove);
	size_t ylen, zlen;
	char *y = edit(text, len, &add, &remove, &ylen, &added, &removed);
	FUZZ_CHECK(strlen(y) == ylen);
	char *z = edit(y, ylen, &add, &remove, &zlen, NULL, NULL);
	FUZZ_CHECK(fuzz_same(z, zlen, y, ylen));
	free(z);

	struct slot s = { .kind = SLOT_BLS, .content = y, .len = ylen };
	char *joined = bls_slot_cmdline(&s);
	struct cmdline c;
	cmdline_split(joined, strlen(joined), &c);
	for (size_t i = 0; i < add.n; i++)
		FUZZ_CHECK(cmdline_has_arg(&c, add.v[i]));
	/* an item stays only in an entry whose command line the planner
	 * refuses (plan/plan.c: a token whose kept items no token reads as;
	 * exit 3, nothing written) */
	struct slot orig = { .kind = SLOT_BLS, .content = (char *)text, .len = len };
	char *orig_joined = bls_slot_cmdline(&orig);
	char *refused = cmdline_edit_refused(orig_joined, strlen(orig_joined), &remove);
	for (size_t i = 0; i < remove.n; i++) {
		char *spec = xstrdup(remove.v[i]);
		char *eq = strchr(spec, '=');
		*eq = '\0';
		FUZZ_CHECK(!cmdline_has_item(&c, spec, eq + 1) || refused);
		free(spec);
	}
	free(refused);
	free(orig_joined);
	cmdline_free(&c);
	free(joined);

	/* only options lines change (a new one may be appended) */
	if (has_options_line(text, len)) {
		char *a = other_lines(text, len), *b = other_lines(y, ylen);
		FUZZ_CHECK(strcmp(a, b) == 0);
		free(a);
		free(b);
	}
	free(y);
	strv_free(&add);
	strv_free(&remove);
	strv_free(&added);
	strv_free(&removed);
}

static void check_round_trip(const char *text, size_t len)
{
	if (!has_options_line(text, len) || empty_options_line(text, len) ||
	    options_have(text, len, "cgroup_disable", "memory"))
		return;
	struct strv one = { 0 }, none = { 0 }, added = { 0 }, removed = { 0 };
	strv_pushdup(&one, "cgroup_disable=memory");
	size_t ylen, zlen;
	char *y = edit(text, len, &one, &none, &ylen, &added, NULL);
	char *z = edit(y, ylen, &none, &one, &zlen, NULL, &removed);
	if (added.n == 1) {
		FUZZ_CHECK(removed.n == 1);
		if (!fuzz_same(z, zlen, text, len))
			dprintf(2, "round trip:\n[%.*s]\n[%s]\n[%s]\n", (int)len, text, y, z);
		FUZZ_CHECK(fuzz_same(z, zlen, text, len));
	}
	free(y);
	free(z);
	strv_free(&one);
	strv_free(&added);
	strv_free(&removed);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *in = (const char *)data;
	struct fuzz_capture cap;
	fuzz_capture_begin(&cap);
	int r = slot_text_check("entry.conf", in, size);
	const char *err = fuzz_capture_end(&cap);
	if (r < 0) {
		FUZZ_CHECK(r == -EXIT_BADINPUT);
		FUZZ_CHECK(strncmp(err, "memcg-policy: entry.conf:", 25) == 0);
		fuzz_capture_free(&cap);
		return 0;
	}
	fuzz_capture_free(&cap);

	/* entries the editor cannot handle are refused with FILE:LINE */
	fuzz_capture_begin(&cap);
	r = bls_entry_check("entry.conf", in, size);
	err = fuzz_capture_end(&cap);
	if (r < 0) {
		FUZZ_CHECK(r == -EXIT_BADINPUT);
		FUZZ_CHECK(strncmp(err, "memcg-policy: entry.conf:", 25) == 0);
		fuzz_capture_free(&cap);
		return 0;
	}
	fuzz_capture_free(&cap);

	/* what the reader makes of it (the content is NUL-terminated, as read) */
	char *text = xstrndup(in, size);
	struct slot s = { .kind = SLOT_BLS, .content = text, .len = size, .exists = true };
	bls_entry_describe(&s, NULL);
	FUZZ_CHECK(!s.unmanaged || s.note);
	bool editable = !s.unmanaged;
	free(s.kernel);
	free(s.note);
	free(bls_slot_cmdline(&s));

	if (editable) {
		for (size_t i = 0; i < ARRAY_SIZE(fuzz_decisions); i++)
			check_decision(text, size, &fuzz_decisions[i]);
		check_round_trip(text, size);
	}
	free(text);
	return 0;
}
