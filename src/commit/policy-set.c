/* commit/policy-set.c - the set command's editor of mode= in a policy file's
 * text (policy_set_mode_text, see facts/policy.h): the value replaced in place,
 * or the line added to [policy], everything else kept as it was. */
#include "facts/policy.h"

#include <stddef.h>

#include "facts/policy-int.h"
#include "lib/util.h"

/* ---- editing mode= for the set command ------------------------------- */

int policy_set_mode_text(const char *text, size_t len, const char *mode, char **out)
{
	int m;
	*out = NULL;
	if (!mode || lookup_value(mode_values, mode, &m) < 0)
		return -EXIT_USAGE;
	mode = policy_mode_name((enum policy_mode)m);

	struct strbuf sb = { 0 };
	bool in_policy = false, replaced = false;
	size_t insert_at = (size_t)-1; /* after the first [policy] header line */
	bool header_has_nl = true;

	for (size_t pos = 0, lineno = 1; pos < len; lineno++) {
		const char *s = text + pos;
		const char *nl = memchr(s, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - s) : len - pos;
		size_t next = pos + n + (nl ? 1 : 0);

		size_t b = 0;
		if (lineno == 1 && n >= 3 && memcmp(s, "\xef\xbb\xbf", 3) == 0)
			b = 3;
		b = skip_blank(s, b, n);
		size_t e = b + content_end(s + b, n - b);

		if (e > b && s[b] == '[') {
			in_policy = false;
			if (s[e - 1] == ']') {
				size_t nb = skip_blank(s, b + 1, e - 1), ne = e - 1;
				while (ne > nb && is_blank(s[ne - 1]))
					ne--;
				in_policy = ne - nb == 6 && memcmp(s + nb, "policy", 6) == 0;
			}
			if (in_policy && insert_at == (size_t)-1) {
				insert_at = next;
				header_has_nl = nl != NULL;
			}
		} else if (in_policy && e > b) {
			size_t sep = b;
			while (sep < e && s[sep] != '=' && s[sep] != ':')
				sep++;
			size_t kend = sep;
			while (kend > b && is_blank(s[kend - 1]))
				kend--;
			if (sep < e && kend - b == 4 && memcmp(s + b, "mode", 4) == 0) {
				size_t vs = skip_blank(s, sep + 1, e);
				/* s[vs..e) is the old value; keep all around it */
				sb_appendn(&sb, text + pos, vs);
				/* An empty value ends right after the separator (the
				 * blanks and comment after it are kept behind it):
				 * "mode =  # c" becomes "mode = X  # c". */
				if (vs == e && is_blank(s[sep - 1]))
					sb_appendc(&sb, ' ');
				sb_append(&sb, mode);
				sb_appendn(&sb, s + e, next - pos - e);
				replaced = true;
				pos = next;
				continue;
			}
		}
		sb_appendn(&sb, s, next - pos);
		pos = next;
	}

	if (!replaced) {
		_cleanup_free_ char *line = xasprintf("mode = %s\n", mode);
		if (insert_at != (size_t)-1) {
			size_t done_len = sb.len;
			char *done = sb_take(&sb);
			sb_appendn(&sb, done, insert_at);
			if (!header_has_nl)
				sb_appendc(&sb, '\n');
			sb_append(&sb, line);
			sb_appendn(&sb, done + insert_at, done_len - insert_at);
			free(done);
		} else {
			if (sb.len > 0 && sb.s[sb.len - 1] != '\n')
				sb_appendc(&sb, '\n');
			sb_append(&sb, "[policy]\n");
			sb_append(&sb, line);
		}
	}
	*out = sb_take(&sb);
	return 0;
}
