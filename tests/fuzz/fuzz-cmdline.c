/* fuzz-cmdline.c - the command-line tokenizer and editor (src/cmdline.c).
 * Properties, on any bytes:
 *   - tokens are non-empty, in order, inside the line, separated by
 *     whitespace; cmdline_join(cmdline_split(x)) == x;
 *   - for every decision's token sets: the edit is idempotent
 *     (edit(edit(x)) == edit(x)), the result has every token to add and no
 *     item to remove among the kernel's parameters unless the edit refuses
 *     a token (cmdline_edit_refused: then that token is kept as it was),
 *     and what follows a bare
 *     "--" keeps its bytes;
 *   - to a decision and back: adding one of our tokens to a line that does
 *     not have it, then removing it again, gives back the line byte for
 *     byte, and the removal reports exactly that token;
 *   - the one-line files (/etc/kernel/cmdline, cmdline.txt: line_slot_edit,
 *     src/slot.c): the edit is idempotent and its command line
 *     (line_slot_cmdline) has every token to add. */
#include "fuzz.h"
#include "decisions.h"

#include "lib/cmdline.h"
#include "slots/kinds.h"

static bool cl_space(unsigned char c)
{
	return c == ' ' || (c >= '\t' && c <= '\r') || c == 0xa0;
}

static void check_split(const char *line, size_t len)
{
	struct cmdline c;
	cmdline_split(line, len, &c);
	FUZZ_CHECK(c.n_kernel <= c.n);
	FUZZ_CHECK(c.has_dashdash == (c.n_kernel < c.n));
	size_t pos = 0;
	for (size_t i = 0; i < c.n; i++) {
		FUZZ_CHECK(c.tok[i].len > 0);
		FUZZ_CHECK(c.tok[i].start >= pos);
		FUZZ_CHECK(c.tok[i].start + c.tok[i].len <= len);
		for (size_t k = pos; k < c.tok[i].start; k++)
			FUZZ_CHECK(cl_space((unsigned char)line[k]));
		FUZZ_CHECK(i == 0 || c.tok[i].start > pos); /* a separator between tokens */
		FUZZ_CHECK(!cl_space((unsigned char)line[c.tok[i].start]));
		pos = c.tok[i].start + c.tok[i].len;
		free(cmdline_token_name(&c, i));
		free(cmdline_token_value(&c, i));
	}
	char *joined = cmdline_join(&c);
	if (!memchr(line, '\0', len))
		FUZZ_CHECK(fuzz_same(joined, strlen(joined), line, len));
	else /* NUL bytes inside: the same bytes (a shorter join is an ASan report) */
		FUZZ_CHECK(memcmp(joined, line, len) == 0 && joined[len] == '\0');
	free(joined);
	cmdline_free(&c);
}

/* The bytes from the bare "--" on (NULL if there is none). */
static const char *init_part(const char *line, size_t len, size_t *plen)
{
	struct cmdline c;
	cmdline_split(line, len, &c);
	const char *r = NULL;
	if (c.has_dashdash) {
		r = line + c.tok[c.n_kernel].start;
		*plen = len - c.tok[c.n_kernel].start;
	}
	cmdline_free(&c);
	return r;
}

static bool has_item_spec(const char *line, size_t len, const char *spec)
{
	const char *eq = strchr(spec, '=');
	char *name = xstrndup(spec, (size_t)(eq - spec));
	char *items = xstrdup(eq + 1);
	struct cmdline c;
	cmdline_split(line, len, &c);
	bool any = false;
	for (char *save = NULL, *it = strtok_r(items, ",", &save); it; it = strtok_r(NULL, ",", &save))
		any |= cmdline_has_item(&c, name, it);
	cmdline_free(&c);
	free(name);
	free(items);
	return any;
}

static void check_decision(const char *line, size_t len, const struct fuzz_decision *d)
{
	struct strv add, remove, removed = { 0 };
	fuzz_decision_strv(d, &add, &remove);
	char *y = cmdline_edit(line, len, &remove, &add, &removed);
	size_t ylen = strlen(y);
	if (!memchr(line, '\0', len)) {
		char *z = cmdline_edit(y, ylen, &remove, &add, NULL);
		FUZZ_CHECK(strcmp(z, y) == 0);
		free(z);
		struct cmdline c;
		cmdline_split(y, ylen, &c);
		for (size_t i = 0; i < add.n; i++)
			FUZZ_CHECK(cmdline_has_arg(&c, add.v[i]));
		cmdline_free(&c);
		/* an item stays only in a token the edit refuses to change (the
		 * kernel would read its kept items differently): such a token
		 * is one of the line's, left as it was */
		struct cmdline cy;
		cmdline_split(y, ylen, &cy);
		for (size_t k = 0; k < cy.n_kernel; k++) {
			const char *t = y + cy.tok[k].start;
			size_t tl = cy.tok[k].len;
			bool has = false;
			for (size_t i = 0; i < remove.n; i++)
				has |= has_item_spec(t, tl, remove.v[i]);
			if (!has)
				continue;
			char *refused = cmdline_edit_refused(t, tl, &remove);
			FUZZ_CHECK(refused != NULL);
			FUZZ_CHECK(memmem(line, len, t, tl) != NULL);
			free(refused);
		}
		cmdline_free(&cy);
		size_t a = 0, b = 0;
		const char *ia = init_part(line, len, &a), *ib = init_part(y, ylen, &b);
		FUZZ_CHECK(!ia == !ib);
		FUZZ_CHECK(!ia || fuzz_same(ia, a, ib, b));
	}
	free(y);
	strv_free(&add);
	strv_free(&remove);
	strv_free(&removed);
}

static void check_round_trip(const char *line, size_t len, const char *token)
{
	if (memchr(line, '\0', len) || has_item_spec(line, len, token))
		return;
	struct strv one = { 0 }, none = { 0 }, added = { 0 }, removed = { 0 };
	strv_pushdup(&one, token);
	char *y = cmdline_edit(line, len, &none, &one, &added);
	FUZZ_CHECK(added.n == 0); /* removed_out lists removals only */
	FUZZ_CHECK(has_item_spec(y, strlen(y), token));
	char *z = cmdline_edit(y, strlen(y), &one, &none, &removed);
	FUZZ_CHECK(fuzz_same(z, strlen(z), line, len));
	FUZZ_CHECK(removed.n == 1 && strcmp(removed.v[0], token) == 0);
	free(y);
	free(z);
	strv_free(&one);
	strv_free(&added);
	strv_free(&removed);
}

static void check_line_slot(const char *line, size_t len, const struct fuzz_decision *fd)
{
	if (memchr(line, '\0', len))
		return; /* the reader refuses those (slot_text_check) */
	struct strv add, remove;
	fuzz_decision_strv(fd, &add, &remove);
	struct decision d = { .add = add, .remove = remove };
	struct slot s = { .kind = SLOT_KERNEL_CMDLINE, .content = (char *)line, .len = len, .exists = len > 0 };
	size_t ylen, zlen;
	char *y = line_slot_edit(&s, &d, NULL, NULL, &ylen);
	FUZZ_CHECK(y && strlen(y) == ylen);
	struct slot s2 = s;
	s2.content = y;
	s2.len = ylen;
	s2.exists = true;
	char *z = line_slot_edit(&s2, &d, NULL, NULL, &zlen);
	FUZZ_CHECK(fuzz_same(z, zlen, y, ylen));
	char *joined = line_slot_cmdline(&s2);
	struct cmdline c;
	cmdline_split(joined, strlen(joined), &c);
	for (size_t i = 0; i < add.n; i++)
		FUZZ_CHECK(cmdline_has_arg(&c, add.v[i]));
	cmdline_free(&c);
	free(joined);
	free(y);
	free(z);
	strv_free(&add);
	strv_free(&remove);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *line = (const char *)data;
	check_split(line, size);
	for (size_t i = 0; i < ARRAY_SIZE(fuzz_decisions); i++)
		check_decision(line, size, &fuzz_decisions[i]);
	for (size_t i = 0; i < ARRAY_SIZE(fuzz_decisions); i++)
		check_line_slot(line, size, &fuzz_decisions[i]);
	check_round_trip(line, size, "cgroup_disable=memory");
	check_round_trip(line, size, "cgroup_enable=memory");
	check_round_trip(line, size, "cgroup.memory=nokmem,nosocket");
	return 0;
}
