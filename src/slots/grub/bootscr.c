/* slots/grub/bootscr.c - reading a U-Boot boot script (flash-kernel's,
 * slots/grub/flashk.c): its text out of the legacy U-Boot image mkimage
 * wraps it in, and the bootargs its setenv lines build. Pure. */
#include "slots/grub/grub.h"

#include <stdint.h>

#include "lib/cmdline.h"
#include "slots/grub/grub-int.h"

/* a legacy U-Boot image: its magic, its header's size, a script's type */
#define UIMAGE_MAGIC 0x27051956u
#define UIMAGE_HEADER 64u
#define UIMAGE_NAME_AT 32u
#define UIMAGE_TYPE_AT 30u
#define UIMAGE_TYPE_SCRIPT 6u

static uint32_t be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* see slots/grub/grub-int.h */
bool boot_script_text(const char *content, size_t len, const char **text, size_t *tlen, char name[UIMAGE_NAME_LEN + 1])
{
	const unsigned char *u = (const unsigned char *)content;
	name[0] = '\0';
	if (len < 4 || be32(u) != UIMAGE_MAGIC) {
		*text = content;
		*tlen = len;
		return true;
	}
	if (len < UIMAGE_HEADER + 8 || u[UIMAGE_TYPE_AT] != UIMAGE_TYPE_SCRIPT)
		return false;
	memcpy(name, content + UIMAGE_NAME_AT, UIMAGE_NAME_LEN);
	name[UIMAGE_NAME_LEN] = '\0';
	size_t at = UIMAGE_HEADER;
	uint32_t first = be32(u + at);
	while (at + 4 <= len && be32(u + at) != 0)
		at += 4;
	at += 4;
	if (at > len || first > len - at)
		return false;
	*text = content + at;
	*tlen = first;
	return true;
}

/* "setenv NAME VALUE": the value (quotes off) when the line is one. */
static char *setenv_value(const char *l, size_t n, const char *name)
{
	size_t a, b;
	if (!menu_keyword(l, n, "setenv", &a) || !menu_keyword(l + a, n - a, name, &b))
		return NULL;
	size_t i = a + b, e = n;
	while (e > i && (l[e - 1] == ' ' || l[e - 1] == '\t' || l[e - 1] == '\r'))
		e--;
	if (e - i >= 2 && (l[i] == '"' || l[i] == '\'') && l[e - 1] == l[i]) {
		i++;
		e--;
	}
	return xstrndup(l + i, e - i);
}

/* The words of a bootargs value with the line before it in place of
 * ${bootargs} (or $bootargs), and without the words that name another
 * variable of the environment (their values are the board's, unknown). */
static char *compose(const char *prev, const char *value)
{
	struct strbuf sb = { 0 };
	sb_append(&sb, "");
	struct cmdline c;
	cmdline_split(value, strlen(value), &c);
	for (size_t i = 0; i < c.n; i++) {
		const char *w = value + c.tok[i].start;
		size_t wl = c.tok[i].len;
		const char *piece = NULL;
		size_t plen = 0;
		if ((wl == 11 && memcmp(w, "${bootargs}", 11) == 0) || (wl == 9 && memcmp(w, "$bootargs", 9) == 0)) {
			piece = prev;
			plen = strlen(prev);
		} else if (!memchr(w, '$', wl)) {
			piece = w;
			plen = wl;
		}
		if (piece && plen)
			sb_appendf(&sb, "%s%.*s", sb.len ? " " : "", (int)plen, piece);
	}
	cmdline_free(&c);
	return sb_take(&sb);
}

void boot_script_menu_lines(const char *content, size_t len, menu_line_fn fn, void *data)
{
	const char *text;
	size_t tlen;
	char name[UIMAGE_NAME_LEN + 1];
	if (!boot_script_text(content, len, &text, &tlen, name))
		return;
	_cleanup_free_ char *args = xstrdup("");
	_cleanup_free_ char *release = NULL;
	const char *at = NULL;
	size_t at_len = 0;
	unsigned at_line = 0, ln = 0;
	const char *l;
	size_t n;
	for (size_t pos = 0; text_next_line(text, tlen, &pos, &l, &n);) {
		ln++;
		char *v = setenv_value(l, n, "bootargs");
		if (v) {
			char *next = compose(args, v);
			free(v);
			free(args);
			args = next;
			at = l;
			at_len = n;
			at_line = ln;
		} else if ((v = setenv_value(l, n, "fk_kvers")) && !release) {
			release = v;
		} else {
			free(v);
		}
	}
	if (!at)
		return;
	struct menu_line m = {
		.line = at_line, .release = release, .cmdline = args, .is_linux = true, .text = at, .text_len = at_len
	};
	fn(data, &m);
}

static bool take_text(void *data, const struct menu_line *m)
{
	*(char **)data = xstrndup(m->text, m->text_len);
	return false;
}

char *boot_script_bootargs(const struct slot *s)
{
	char *out = NULL;
	if (s->kind == SLOT_BOOT_SCRIPT && s->content)
		boot_script_menu_lines(s->content, s->len, take_text, &out);
	return out;
}
