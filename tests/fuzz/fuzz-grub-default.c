/* fuzz-grub-default.c - the /etc/default/grub reader and editor and the
 * grubenv reader (src/slot-grub.c, through slots/grub/grub.h): grub_default_unmark,
 * slot_edit for SLOT_GRUB_DEFAULT and SLOT_GRUBENV, grubenv_get,
 * grub_split_words. Properties:
 *   - unmark takes out exactly the marked lines: every other line keeps
 *     its bytes, and unmarking again changes nothing;
 *   - the edit leaves the file's own lines as they were and ends it with
 *     exactly one marked line; editing again changes nothing; a keep
 *     decision changes nothing at all; unmarking the edit gives the
 *     unmarked file back (with a line break added after its last line);
 *   - kernelopts edits (grubenv) are idempotent. */
#include "fuzz.h"
#include "decisions.h"

#include "lib/cmdline.h"
#include "slots/grub/grub.h"
#include "slots/table.h"

#define MARK "# added by memcg-policy"

static bool marked(const char *l, size_t n)
{
	while (n > 0 && (l[n - 1] == ' ' || l[n - 1] == '\t' || l[n - 1] == '\r'))
		n--;
	size_t m = strlen(MARK);
	return n >= m && memcmp(l + n - m, MARK, m) == 0;
}

/* The text without its marked lines, computed here independently. */
static char *strip(const char *t, size_t len, size_t *out_len, unsigned *n_marked)
{
	struct strbuf sb = { 0 };
	sb_append(&sb, "");
	*n_marked = 0;
	for (size_t i = 0; i < len;) {
		const char *nl = memchr(t + i, '\n', len - i);
		size_t e = nl ? (size_t)(nl - t) + 1 : len;
		size_t n = nl ? e - i - 1 : e - i;
		if (marked(t + i, n))
			(*n_marked)++;
		else
			sb_appendn(&sb, t + i, e - i);
		i = e;
	}
	*out_len = sb.len;
	return sb_take(&sb);
}

static void check_default(const char *text, size_t len)
{
	size_t ulen, slen, u2len;
	unsigned nm;
	char *u = grub_default_unmark(text, len, &ulen);
	char *s = strip(text, len, &slen, &nm);
	FUZZ_CHECK(fuzz_same(u, ulen, s, slen));
	char *u2 = grub_default_unmark(u, ulen, &u2len);
	FUZZ_CHECK(fuzz_same(u2, u2len, u, ulen));
	free(u2);

	for (size_t i = 0; i < ARRAY_SIZE(fuzz_decisions); i++) {
		struct strv add, remove;
		fuzz_decision_strv(&fuzz_decisions[i], &add, &remove);
		struct decision d = { .add = add, .remove = remove };
		struct slot sl = { .kind = SLOT_GRUB_DEFAULT, .content = (char *)text, .len = len, .exists = true,
				   /* an image's drop-in where its package put it, or this build's */
				   .source = i % 2 ? "/usr/share/memcg-policy/99-memcg-policy.cfg" : NULL };
		size_t elen, e2len;
		char *e = slot_edit(&sl, &d, NULL, NULL, &elen);
		FUZZ_CHECK(e);
		/* the line names the drop-in the image has, or this build's */
		char *ml = grub_marked_line(sl.source);
		size_t mll = strlen(ml);
		FUZZ_CHECK(elen >= mll + 1 && memcmp(e + elen - mll - 1, ml, mll) == 0 && e[elen - 1] == '\n');
		free(ml);
		size_t eslen;
		unsigned enm;
		char *es = strip(e, elen, &eslen, &enm);
		FUZZ_CHECK(enm == 1);
		bool nl = ulen == 0 || u[ulen - 1] == '\n';
		FUZZ_CHECK(eslen == ulen + !nl && memcmp(es, u, ulen) == 0);
		free(es);
		struct slot s2 = sl;
		s2.content = e;
		s2.len = elen;
		char *e2 = slot_edit(&s2, &d, NULL, NULL, &e2len);
		FUZZ_CHECK(fuzz_same(e2, e2len, e, elen));
		free(e2);
		free(e);

		d.keep = true;
		e = slot_edit(&sl, &d, NULL, NULL, &elen);
		FUZZ_CHECK(fuzz_same(e, elen, text, len));
		free(e);
		strv_free(&add);
		strv_free(&remove);
	}
	free(u);
	free(s);
}

static void check_grubenv(const char *text, size_t len)
{
	char *v = grubenv_get(text, len, "kernelopts");
	if (!v)
		return;
	for (size_t i = 0; i < ARRAY_SIZE(fuzz_decisions); i++) {
		struct strv add, remove, added = { 0 }, removed = { 0 };
		fuzz_decision_strv(&fuzz_decisions[i], &add, &remove);
		struct decision d = { .add = add, .remove = remove };
		struct slot sl = { .kind = SLOT_GRUBENV, .content = v, .len = strlen(v), .exists = true };
		size_t elen, e2len;
		char *e = slot_edit(&sl, &d, &added, &removed, &elen);
		FUZZ_CHECK(e && strlen(e) == elen);
		struct slot s2 = sl;
		s2.content = e;
		s2.len = elen;
		char *e2 = slot_edit(&s2, &d, NULL, NULL, &e2len);
		FUZZ_CHECK(fuzz_same(e2, e2len, e, elen));
		free(e2);
		free(e);
		strv_free(&add);
		strv_free(&remove);
		strv_free(&added);
		strv_free(&removed);
	}
	free(v);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data;
	check_default(text, size);
	check_grubenv(text, size);
	for (size_t i = 0; i < size;) {
		const char *nl = memchr(text + i, '\n', size - i);
		size_t e = nl ? (size_t)(nl - text) : size;
		struct strv w = { 0 };
		grub_split_words(text + i, e - i, &w);
		for (size_t k = 0; k < w.n; k++)
			FUZZ_CHECK(w.v[k] != NULL);
		strv_free(&w);
		i = e + 1;
	}
	return 0;
}
