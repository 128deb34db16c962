/* slots/grub/grubenv.c - GRUB's environment block (slots/grub/grub.h). Pure. */
#include <errno.h>

#include "slots/grub/grub.h"

char *grubenv_get(const char *text, size_t len, const char *name)
{
	size_t n = strlen(name);
	for (size_t i = 0; i < len;) {
		size_t e = i;
		/* a line ends at an unescaped '\n' */
		while (e < len && text[e] != '\n') {
			if (text[e] == '\\' && e + 1 < len)
				e++;
			e++;
		}
		if (e > len)
			e = len;
		if (e - i > n && memcmp(text + i, name, n) == 0 && text[i + n] == '=') {
			struct strbuf sb = { 0 };
			sb_append(&sb, "");
			for (size_t j = i + n + 1; j < e; j++) {
				if (text[j] == '\\' && j + 1 < e)
					j++;
				sb_appendc(&sb, text[j]);
			}
			return sb_take(&sb);
		}
		i = e + 1;
	}
	return NULL;
}

#define GRUBENV_SIGNATURE "# GRUB Environment Block\n"

/* The next line start after p, as GRUB reads the block: a backslash
 * escapes the byte after it, an escaped '\n' does not end the line. */
static size_t next_line(const char *text, size_t p, size_t end)
{
	while (p < end && text[p] != '\n')
		p += text[p] == '\\' ? 2 : 1;
	return p + 1;
}

int grubenv_set(const char *text, size_t len, const char *name, const char *value, char **out)
{
	*out = NULL;
	size_t sig = sizeof(GRUBENV_SIGNATURE) - 1;
	if (len < sig || memcmp(text, GRUBENV_SIGNATURE, sig) != 0)
		return -EINVAL;
	/* the variables end where the padding of '#' starts, after a '\n' */
	size_t space = len;
	while (space > 0 && text[space - 1] == '#')
		space--;
	if (space == 0 || text[space - 1] != '\n')
		return -EINVAL;
	size_t nl = strlen(name);
	struct strbuf esc = { 0 };
	sb_append(&esc, "");
	for (const char *p = value; *p; p++) {
		if (*p == '\\' || *p == '\n')
			sb_appendc(&esc, '\\');
		sb_appendc(&esc, *p);
	}
	size_t vl = esc.len;
	struct strbuf sb = { 0 };
	bool found = false;
	for (size_t p = sig; p + nl + 1 < space; p = next_line(text, p, len)) {
		if (memcmp(text + p, name, nl) != 0 || text[p + nl] != '=')
			continue;
		size_t v = p + nl + 1, cur = 0;
		while (v + cur < len && text[v + cur] != '\n')
			cur += text[v + cur] == '\\' ? 2 : 1;
		if (v + cur >= space) {
			free(esc.s);
			return -EINVAL;
		}
		sb_appendn(&sb, text, v);
		sb_appendn(&sb, esc.s, vl);
		sb_appendn(&sb, text + v + cur, space - (v + cur));
		found = true;
		break;
	}
	if (!found) {
		sb_appendn(&sb, text, space);
		sb_appendn(&sb, name, nl);
		sb_appendc(&sb, '=');
		sb_appendn(&sb, esc.s, vl);
		sb_appendc(&sb, '\n');
	}
	free(esc.s);
	if (sb.len > len) {
		free(sb.s);
		return -ENOSPC;
	}
	while (sb.len < len)
		sb_appendc(&sb, '#');
	*out = sb_take(&sb);
	return 0;
}
