/* kconfig.c - a kernel's .config turned into the facts of DESIGN section 1.
 * Pure: works on buffers only (see kconfig.h). Here: gzip and the line
 * parser; what the parsed symbols mean is in kconfig-facts.c. */
#include "kconfig.h"
#include "kconfig-int.h"
#include "decompress.h"
#include "util.h"

#include <ctype.h>
#include <errno.h>
#include <stdint.h>

/* ---- gzip ---------------------------------------------------------------- */

static bool is_gzip(const char *data, size_t len)
{
	return len >= 2 && (unsigned char)data[0] == 0x1f && (unsigned char)data[1] == 0x8b;
}

/* Inflates every gzip member of data into a buffer of at most max bytes.
 * Bytes after the last complete member that do not start another member are
 * ignored, as gzip(1) does with trailing garbage. */
static int inflate_gzip(const char *data, size_t len, size_t max, char **out, size_t *out_len)
{
	const struct zlib_fns *zl = zlib_fns();
	if (!zl)
		return -ENOPKG;
	z_stream zs = {0};
	if (ZLIB_INFLATE_INIT2(zl, &zs, 16 + MAX_WBITS) != Z_OK)
		return -ENOMEM;

	/* room for one byte past max: producing it means "too large" */
	size_t limit = max < SIZE_MAX - 1 ? max + 1 : SIZE_MAX - 1;
	size_t cap = len < (SIZE_MAX / 4) ? len * 4 : limit;
	if (cap < 65536)
		cap = 65536;
	if (cap > limit)
		cap = limit;
	char *buf = xmalloc(cap + 1);
	size_t used = 0;
	const unsigned char *in = (const unsigned char *)data;
	size_t in_left = len;
	int r = 0;

	for (;;) {
		if (used > max) {
			r = -EFBIG;
			break;
		}
		if (used == cap) {
			cap = cap > limit / 2 ? limit : cap * 2;
			buf = xrealloc(buf, cap + 1);
		}
		/* zlib counts in uInt: at most 1 GiB each way per call */
		uInt in_chunk = in_left > (1u << 30) ? (1u << 30) : (uInt)in_left;
		uInt out_chunk = cap - used > (1u << 30) ? (1u << 30) : (uInt)(cap - used);
		zs.next_in = (Bytef *)(uintptr_t)in;
		zs.avail_in = in_chunk;
		zs.next_out = (Bytef *)(buf + used);
		zs.avail_out = out_chunk;
		int z = zl->inflate(&zs, Z_NO_FLUSH);
		used += out_chunk - zs.avail_out;
		in += in_chunk - zs.avail_in;
		in_left -= in_chunk - zs.avail_in;
		if (z == Z_OK)
			continue;
		if (z == Z_BUF_ERROR && zs.avail_out == 0)
			continue; /* output full: grow */
		if (z != Z_STREAM_END) {
			/* Z_BUF_ERROR with the input used up: truncated;
			 * Z_DATA_ERROR, Z_NEED_DICT: corrupt */
			r = z == Z_MEM_ERROR ? -ENOMEM : -EBADMSG;
			break;
		}
		/* end of a member (its CRC and length checked by zlib) */
		if (in_left >= 2 && in[0] == 0x1f && in[1] == 0x8b) {
			if (zl->inflate_reset(&zs) != Z_OK) {
				r = -EBADMSG;
				break;
			}
			continue;
		}
		if (used > max)
			r = -EFBIG;
		break;
	}
	zl->inflate_end(&zs);
	if (r < 0) {
		free(buf);
		return r;
	}
	buf[used] = '\0';
	*out = buf;
	if (out_len)
		*out_len = used;
	return 0;
}

int kconfig_inflate(const char *data, size_t len, size_t max, char **out, size_t *out_len)
{
	*out = NULL;
	if (is_gzip(data, len))
		return inflate_gzip(data, len, max, out, out_len);
	if (len > max)
		return -EFBIG;
	char *buf = xmalloc(len + 1);
	memcpy(buf, data, len);
	buf[len] = '\0';
	*out = buf;
	if (out_len)
		*out_len = len;
	return 0;
}

/* ---- config text --------------------------------------------------------- */

#define SYM(id, name) [id] = { name, sizeof(name) - 1 }
static const struct {
	const char *name;
	size_t len;
} sym_names[SYM_COUNT] = {
	SYM(SYM_CGROUPS, "CGROUPS"),
	SYM(SYM_MEMCG, "MEMCG"),
	SYM(SYM_CGROUP_MEM_RES_CTLR, "CGROUP_MEM_RES_CTLR"),
	SYM(SYM_MEMCG_DISABLED, "MEMCG_DISABLED"),
	SYM(SYM_CGROUP_MEM_RES_CTLR_DISABLED, "CGROUP_MEM_RES_CTLR_DISABLED"),
	SYM(SYM_MEMCG_DEFAULT_ENABLED, "MEMCG_DEFAULT_ENABLED"),
	SYM(SYM_MEMCG_V1, "MEMCG_V1"),
	SYM(SYM_CMDLINE, "CMDLINE"),
	SYM(SYM_CMDLINE_BOOL, "CMDLINE_BOOL"),
	SYM(SYM_CMDLINE_OVERRIDE, "CMDLINE_OVERRIDE"),
	SYM(SYM_CMDLINE_FORCE, "CMDLINE_FORCE"),
	SYM(SYM_CMDLINE_EXTEND, "CMDLINE_EXTEND"),
	SYM(SYM_CMDLINE_FROM_BOOTLOADER, "CMDLINE_FROM_BOOTLOADER"),
	SYM(SYM_CMDLINE_FALLBACK, "CMDLINE_FALLBACK"),
	SYM(SYM_BRCM_CHAR_DRIVERS, "BRCM_CHAR_DRIVERS"),
	SYM(SYM_BCM_VCIO, "BCM_VCIO"),
	SYM(SYM_USB_DWCOTG, "USB_DWCOTG"),
	SYM(SYM_X86, "X86"),
	SYM(SYM_OF, "OF"),
};
#undef SYM

static bool is_sym_char(char c)
{
	return isalnum((unsigned char)c) || c == '_';
}

static int lookup_sym(const char *name, size_t len)
{
	/* every name we track starts with one of these */
	if (!strchr("BCMOUX", name[0]))
		return -1;
	for (int i = 0; i < SYM_COUNT; i++)
		if (sym_names[i].len == len && memcmp(sym_names[i].name, name, len) == 0)
			return i;
	return -1;
}

/* A Kconfig string value: "..." with \" and \\ escaped. Returns false if
 * it is not one (no closing quote, or text after it). */
static bool string_value_ok(const char *v, size_t len)
{
	if (len < 2 || v[0] != '"')
		return false;
	size_t i = 1;
	while (i < len) {
		if (v[i] == '\\' && i + 1 < len) {
			i += 2;
			continue;
		}
		if (v[i] == '"')
			return i == len - 1;
		i++;
	}
	return false;
}

/* "# Linux/arm64 6.6.51 Kernel Configuration", or before 2.6.28/3.x
 * "# Linux kernel version: 2.6.32". */
static void parse_header(struct parse_state *ps, const char *p, const char *end)
{
	static const char slash_form[] = "# Linux/";
	static const char old_form[] = "# Linux kernel version: ";
	size_t n = (size_t)(end - p);
	if (n > sizeof(slash_form) - 1 && memcmp(p, slash_form, sizeof(slash_form) - 1) == 0) {
		const char *a = p + sizeof(slash_form) - 1;
		const char *a_end = a;
		while (a_end < end && *a_end != ' ')
			a_end++;
		if (a_end == a || a_end == end)
			return;
		const char *v = a_end + 1;
		const char *v_end = v;
		while (v_end < end && *v_end != ' ')
			v_end++;
		static const char tail[] = " Kernel Configuration";
		if (v_end == v || (size_t)(end - v_end) != sizeof(tail) - 1 ||
		    memcmp(v_end, tail, sizeof(tail) - 1) != 0)
			return;
		ps->header_arch = a;
		ps->header_arch_len = (size_t)(a_end - a);
		ps->header_ver = v;
		ps->header_ver_len = (size_t)(v_end - v);
		ps->have_header = true;
	} else if (n > sizeof(old_form) - 1 && memcmp(p, old_form, sizeof(old_form) - 1) == 0) {
		const char *v = p + sizeof(old_form) - 1;
		const char *v_end = v;
		while (v_end < end && *v_end != ' ')
			v_end++;
		if (v_end == v)
			return;
		ps->header_ver = v;
		ps->header_ver_len = (size_t)(v_end - v);
		ps->have_header = true;
	}
}

/* "# CONFIG_X is not set" */
static void parse_comment(struct parse_state *ps, const char *p, const char *end, unsigned lineno)
{
	static const char prefix[] = "# CONFIG_";
	static const char suffix[] = " is not set";
	size_t n = (size_t)(end - p);
	if (n > sizeof(prefix) - 1 && memcmp(p, prefix, sizeof(prefix) - 1) == 0) {
		const char *name = p + sizeof(prefix) - 1;
		const char *e = name;
		while (e < end && is_sym_char(*e))
			e++;
		if (e == name || (size_t)(end - e) != sizeof(suffix) - 1 ||
		    memcmp(e, suffix, sizeof(suffix) - 1) != 0)
			return;
		int s = lookup_sym(name, (size_t)(e - name));
		if (s >= 0) {
			ps->syms[s].state = SYM_NOT_SET;
			ps->syms[s].val = NULL;
			ps->syms[s].len = 0;
			ps->syms[s].line = lineno;
		}
		return;
	}
	if (!ps->have_header)
		parse_header(ps, p, end);
}

/* One line, without its newline. Returns false if it is not part of a
 * kernel config. */
static bool parse_line(struct parse_state *ps, const char *p, const char *end, unsigned lineno)
{
	/* trailing white space, including the \r of CRLF files */
	while (end > p && isspace((unsigned char)end[-1]))
		end--;
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	if (p == end)
		return true;
	if (*p == '#') {
		parse_comment(ps, p, end, lineno);
		return true;
	}
	static const char prefix[] = "CONFIG_";
	if ((size_t)(end - p) <= sizeof(prefix) - 1 || memcmp(p, prefix, sizeof(prefix) - 1) != 0)
		return false;
	const char *name = p + sizeof(prefix) - 1;
	const char *e = name;
	while (e < end && is_sym_char(*e))
		e++;
	if (e == name || e == end || *e != '=')
		return false;
	const char *val = e + 1;
	size_t vlen = (size_t)(end - val);
	if (vlen > 0 && val[0] == '"' && !string_value_ok(val, vlen))
		return false;
	ps->assignments++;
	int s = lookup_sym(name, (size_t)(e - name));
	if (s >= 0) {
		ps->syms[s].state = SYM_VALUE;
		ps->syms[s].val = val;
		ps->syms[s].len = vlen;
		ps->syms[s].line = lineno;
	}
	return true;
}

static unsigned line_of(const char *text, const char *at)
{
	unsigned n = 1;
	for (const char *p = text; p < at; p++)
		n += *p == '\n';
	return n;
}

int kconfig_parse(const char *text, size_t len, const char *release,
		  struct kconfig_facts *out, unsigned *bad_line)
{
	memset(out, 0, sizeof(*out));
	if (bad_line)
		*bad_line = 0;

	const char *nul = memchr(text, '\0', len);
	if (nul) {
		if (bad_line)
			*bad_line = line_of(text, nul);
		return -EBADMSG;
	}

	struct parse_state ps = {0};
	const char *p = text, *end = text + len;
	unsigned lineno = 0;
	while (p < end) {
		lineno++;
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *line_end = nl ? nl : end;
		if (!parse_line(&ps, p, line_end, lineno)) {
			if (bad_line)
				*bad_line = lineno;
			return -EBADMSG;
		}
		p = nl ? nl + 1 : end;
	}
	if (ps.assignments == 0)
		return -EBADMSG;

	derive_facts(&ps, release, out);
	return 0;
}
