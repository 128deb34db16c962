/* lib/cmdline-edit.c - kernel command lines edited by the kernel's own
 * rules (lib/cmdline.h has the contract): items taken out of comma lists
 * and whole tokens removed, tokens added where they read as meant, and the
 * admin's removed tokens put back where they were. Every byte an edit does
 * not mean to touch is kept. */
#include "lib/cmdline.h"
#include "lib/cmdline-int.h"

#include <stdint.h>
#include <string.h>

/* Is item[0..ilen) of a parameter called name[0..nlen) to be removed?
 * remove holds "name=item[,item...]"; items holding '"' are never removed
 * (taking a quote out would change how the rest of the line splits). */
static bool item_removed(const struct strv *remove, const char *name, size_t nlen, const char *item, size_t ilen)
{
	if (!remove || ilen == 0 || memchr(item, '"', ilen))
		return false;
	for (size_t s = 0; s < remove->n; s++) {
		const char *spec = remove->v[s];
		const char *eq = spec ? strchr(spec, '=') : NULL;
		if (!eq || eq == spec || !param_name_eq(spec, (size_t)(eq - spec), name, nlen))
			continue;
		if (cmdline_list_has(eq + 1, strlen(eq + 1), item, ilen))
			return true;
	}
	return false;
}

enum tok_edit { TOK_KEEP, TOK_CHANGED, TOK_DROP, TOK_REFUSE };

/* Does remove name a parameter called name (item_removed can say yes only
 * then)? Most tokens of a line are not, and are kept without a look at
 * their items. */
static bool name_in_remove(const struct strv *remove, const char *name, size_t nlen)
{
	for (size_t s = 0; remove && s < remove->n; s++) {
		const char *spec = remove->v[s];
		const char *eq = spec ? strchr(spec, '=') : NULL;
		if (eq && eq != spec && param_name_eq(spec, (size_t)(eq - spec), name, nlen))
			return true;
	}
	return false;
}

static size_t count_quotes(const char *t, size_t len)
{
	size_t q = 0;
	for (size_t i = 0; i < len; i++)
		q += t[i] == '"';
	return q;
}

/* Does the kernel read the token nt[0..nlen) as one parameter named like
 * the original (p, from t) with exactly the value val, and split the rest
 * of the line as it did (same parity of quotes)? */
static bool reads_as(const char *t, size_t len, const struct tok_parts *p, const char *nt, size_t nlen,
		     const struct strbuf *val)
{
	if (count_quotes(nt, nlen) % 2 != count_quotes(t, len) % 2)
		return false;
	struct cmdline c;
	cmdline_split(nt, nlen, &c);
	bool one = c.n == 1 && c.tok[0].start == 0 && c.tok[0].len == nlen && !c.has_dashdash;
	cmdline_free(&c);
	if (!one)
		return false;
	struct tok_parts q;
	cmdline_tok_parse(nt, nlen, &q);
	return q.has_value && q.name_len == p->name_len && memcmp(nt + q.name_off, t + p->name_off, p->name_len) == 0 &&
	       q.val_len == val->len && memcmp(nt + q.val_off, val->s, val->len) == 0;
}

/* Takes the removed items out of the token t[0..len). On TOK_CHANGED, out
 * holds the new token: the original bytes without the removed items and
 * one comma each; where the kernel would read that differently (quotes
 * inside the list: `x=memory,"a",b` would turn into `x="a",b`, whose value
 * the kernel reads as `a",b`), the kept list is wrapped in quotes instead
 * (`x=""a",b"`, read as `"a",b`). The token goes (TOK_DROP) when no
 * non-empty item is left. TOK_REFUSE: no token reads as the kept items
 * (`x=memory,"a b",c`: the wrapping quotes would split it); the token is
 * then left as it is. */
static enum tok_edit edit_token(const char *t, size_t len, const struct strv *remove, struct strbuf *out)
{
	struct tok_parts p;
	cmdline_tok_parse(t, len, &p);
	if (!p.has_value || !name_in_remove(remove, t + p.name_off, p.name_len))
		return TOK_KEEP;

	const char *name = t + p.name_off, *v = t + p.val_off;
	struct strbuf val = { 0 };
	bool any = false, first = true;
	size_t kept = 0;

	sb_appendn(&val, "", 0);
	for (size_t i = 0;;) {
		size_t j = i;
		while (j < p.val_len && v[j] != ',')
			j++;
		if (item_removed(remove, name, p.name_len, v + i, j - i)) {
			any = true;
		} else {
			if (!first)
				sb_appendc(&val, ',');
			sb_appendn(&val, v + i, j - i);
			first = false;
			kept += j > i;
		}
		if (j >= p.val_len)
			break;
		i = j + 1;
	}

	if (!any) {
		sb_free(&val);
		return TOK_KEEP;
	}
	if (kept == 0) {
		sb_free(&val);
		return TOK_DROP;
	}

	struct strbuf nt = { 0 };
	sb_appendn(&nt, t, p.val_off);
	sb_appendn(&nt, val.s, val.len);
	sb_appendn(&nt, t + p.val_off + p.val_len, len - p.val_off - p.val_len);
	if (!reads_as(t, len, &p, nt.s, nt.len, &val)) {
		/* name="kept": the kernel strips the value's leading quote and
		 * then the token's last one */
		sb_free(&nt);
		sb_appendn(&nt, t, p.name_off + p.name_len + 1);
		sb_appendc(&nt, '"');
		sb_appendn(&nt, val.s, val.len);
		sb_appendc(&nt, '"');
		if (!reads_as(t, len, &p, nt.s, nt.len, &val)) {
			sb_free(&nt);
			sb_free(&val);
			return TOK_REFUSE;
		}
	}
	sb_free(&val);
	*out = nt;
	return TOK_CHANGED;
}

char *cmdline_edit_refused(const char *line, size_t len, const struct strv *remove)
{
	struct cmdline c;
	cmdline_split(line, len, &c);
	char *bad = NULL;
	for (size_t k = 0; k < c.n_kernel && !bad; k++) {
		const char *t = c.line + c.tok[k].start;
		struct strbuf nt = { 0 };
		if (edit_token(t, c.tok[k].len, remove, &nt) == TOK_REFUSE)
			bad = xstrndup(t, c.tok[k].len);
		sb_free(&nt);
	}
	cmdline_free(&c);
	return bad;
}

/* A token to add must be exactly one kernel parameter: non-empty, no
 * whitespace outside quotes, balanced quotes, and not "--". */
static bool add_token_ok(const char *a, size_t alen)
{
	if (alen == 0)
		return false;
	size_t quotes = 0;
	for (size_t i = 0; i < alen; i++)
		quotes += a[i] == '"';
	if (quotes % 2)
		return false;
	struct cmdline c;
	cmdline_split(a, alen, &c);
	bool ok = c.n == 1 && c.tok[0].start == 0 && c.tok[0].len == alen && !c.has_dashdash;
	cmdline_free(&c);
	return ok;
}

static bool token_unterminated(const char *t, size_t len) { return count_quotes(t, len) % 2; }

/* Inserts the parameter a into the line sb: before a "--", else after the
 * last kernel parameter (before trailing whitespace such as a newline),
 * else at the start of a blank line. A last parameter with an unterminated
 * quote would swallow anything after it, so then a goes before it. */
static void insert_token(struct strbuf *sb, const char *a)
{
	struct cmdline c;
	cmdline_split(sb->s, sb->len, &c);

	size_t pos;
	bool space_before;
	if (c.has_dashdash) {
		pos = c.tok[c.n_kernel].start;
		space_before = false;
	} else if (c.n_kernel > 0) {
		const struct cmdline_token *last = &c.tok[c.n_kernel - 1];
		if (token_unterminated(sb->s + last->start, last->len)) {
			pos = last->start;
			space_before = false;
		} else {
			pos = last->start + last->len;
			space_before = true;
		}
	} else {
		pos = 0;
		space_before = true; /* nothing to separate from */
	}
	cmdline_free(&c);

	struct strbuf r = { 0 };
	sb_appendn(&r, sb->s, pos);
	if (space_before) {
		if (pos > 0)
			sb_appendc(&r, ' ');
		sb_append(&r, a);
	} else {
		sb_append(&r, a);
		sb_appendc(&r, ' ');
	}
	sb_appendn(&r, sb->s + pos, sb->len - pos);
	sb_free(sb);
	*sb = r;
}

/* The removal half of cmdline_edit: a new line (sb) without the items of
 * remove. */
static void remove_items(const char *line, size_t len, const struct strv *remove, struct strv *removed_out,
			 struct strbuf *out)
{
	struct cmdline c;
	cmdline_split(line, len, &c);
	line = c.line;
	len = c.line_len;
	size_t n = c.n;

	struct strbuf *newtok = xcalloc(n + 1, sizeof(*newtok));
	bool *drop = xcalloc(n + 1, sizeof(*drop));
	bool *drop_gap = xcalloc(n + 1, sizeof(*drop_gap));

	for (size_t k = 0; k < c.n_kernel; k++) {
		const char *t = line + c.tok[k].start;
		enum tok_edit r = edit_token(t, c.tok[k].len, remove, &newtok[k]);
		if (r == TOK_KEEP || r == TOK_REFUSE)
			continue;
		if (removed_out)
			strv_push(removed_out, xstrndup(t, c.tok[k].len));
		drop[k] = r == TOK_DROP;
	}

	/* Gap g is the whitespace before token g (gap n: after the last one).
	 * A run of dropped tokens i..j takes the gaps between them, and one
	 * more: the gap after it when a kept token follows, else the one
	 * before (so a trailing newline stays). */
	for (size_t i = 0; i < n;) {
		if (!drop[i]) {
			i++;
			continue;
		}
		size_t j = i;
		while (j + 1 < n && drop[j + 1])
			j++;
		for (size_t g = i + 1; g <= j; g++)
			drop_gap[g] = true;
		if (j + 1 < n)
			drop_gap[j + 1] = true;
		else
			drop_gap[i] = true;
		i = j + 1;
	}

	struct strbuf sb = { 0 };
	sb_appendn(&sb, "", 0);
	for (size_t g = 0; g <= n; g++) {
		size_t gs = g == 0 ? 0 : c.tok[g - 1].start + c.tok[g - 1].len;
		size_t ge = g == n ? len : c.tok[g].start;
		if (!drop_gap[g])
			sb_appendn(&sb, line + gs, ge - gs);
		if (g == n || drop[g])
			continue;
		if (newtok[g].s)
			sb_appendn(&sb, newtok[g].s, newtok[g].len);
		else
			sb_appendn(&sb, line + c.tok[g].start, c.tok[g].len);
	}
	for (size_t k = 0; k < n; k++)
		sb_free(&newtok[k]);
	free(newtok);
	free(drop);
	free(drop_gap);
	cmdline_free(&c);
	*out = sb;
}

/* Is token i of c the bytes t[0..tl)? */
static bool token_is(const struct cmdline *c, size_t i, const char *t, size_t tl)
{
	return c->tok[i].len == tl && memcmp(c->line + c->tok[i].start, t, tl) == 0;
}

/* Inserts the parameter a into sb where like has it (see
 * cmdline_edit_like). false where it cannot tell: insert_token then. */
static bool insert_like(struct strbuf *sb, const char *a, const struct cmdline *lk)
{
	size_t alen = strlen(a), j;
	for (j = 0; j < lk->n_kernel && !token_is(lk, j, a, alen); j++)
		;
	if (j == lk->n_kernel)
		return false;
	struct cmdline c;
	cmdline_split(sb->s, sb->len, &c);
	size_t pos = SIZE_MAX;
	bool after = true;
	/* the nearest token before it in like that the line still has */
	for (size_t k = j; k-- > 0 && pos == SIZE_MAX;) {
		const char *nt = lk->line + lk->tok[k].start;
		size_t nl = lk->tok[k].len;
		for (size_t i = 0; i < c.n_kernel && pos == SIZE_MAX; i++)
			if (token_is(&c, i, nt, nl) && !token_unterminated(nt, nl))
				pos = c.tok[i].start + c.tok[i].len;
	}
	/* else the nearest one after it */
	for (size_t k = j + 1; k < lk->n_kernel && pos == SIZE_MAX; k++) {
		const char *nt = lk->line + lk->tok[k].start;
		size_t nl = lk->tok[k].len;
		for (size_t i = 0; i < c.n_kernel && pos == SIZE_MAX; i++)
			if (token_is(&c, i, nt, nl)) {
				pos = c.tok[i].start;
				after = false;
			}
	}
	cmdline_free(&c);
	if (pos == SIZE_MAX)
		return false;
	struct strbuf r = { 0 };
	sb_appendn(&r, sb->s, pos);
	if (after) {
		sb_appendc(&r, ' ');
		sb_append(&r, a);
	} else {
		sb_append(&r, a);
		sb_appendc(&r, ' ');
	}
	sb_appendn(&r, sb->s + pos, sb->len - pos);
	sb_free(sb);
	*sb = r;
	return true;
}

char *cmdline_edit_like(const char *line, size_t len, const struct strv *remove, const struct strv *add,
			const char *like, size_t like_len)
{
	if (!like)
		return cmdline_edit(line, len, remove, add, NULL);
	char *removed = cmdline_edit(line, len, remove, NULL, NULL);
	struct strbuf sb = { 0 };
	sb_append(&sb, removed);
	free(removed);
	struct cmdline lk;
	cmdline_split(like, like_len, &lk);
	for (size_t i = 0; add && i < add->n; i++) {
		const char *a = add->v[i];
		if (!a || !add_token_ok(a, strlen(a)))
			continue;
		struct cmdline cur;
		cmdline_split(sb.s, sb.len, &cur);
		bool present = cmdline_has_arg(&cur, a);
		cmdline_free(&cur);
		if (!present && !insert_like(&sb, a, &lk))
			insert_token(&sb, a);
	}
	cmdline_free(&lk);
	return sb_take(&sb);
}

char *cmdline_edit(const char *line, size_t len, const struct strv *remove, const struct strv *add,
		   struct strv *removed_out)
{
	struct strbuf sb = { 0 };
	if (remove && remove->n) {
		remove_items(line, len, remove, removed_out, &sb);
	} else {
		/* nothing to remove: the line as it is */
		sb_appendn(&sb, line ? line : "", line ? len : 0);
	}

	for (size_t i = 0; add && i < add->n; i++) {
		const char *a = add->v[i];
		if (!a || !add_token_ok(a, strlen(a)))
			continue;
		struct cmdline cur;
		cmdline_split(sb.s, sb.len, &cur);
		bool present = cmdline_has_arg(&cur, a);
		cmdline_free(&cur);
		if (!present)
			insert_token(&sb, a);
	}

	return sb_take(&sb);
}
