/* facts/kconfig.c - a kernel's .config turned into the facts of DESIGN section 1.
 * Pure: works on buffers only (see facts/kconfig.h). Here: gzip and the line
 * parser; what the parsed symbols mean is in facts/kconfig-facts.c. */
#include "facts/kconfig.h"
#include "facts/kconfig-int.h"
#include "io/decompress.h"
#include "lib/util.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

/* ---- gzip ---------------------------------------------------------------- */

bool kconfig_is_gzip(const char *data, size_t len)
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
	z_stream zs = { 0 };
	if (ZLIB_INFLATE_INIT2(zl, &zs, 16 + MAX_WBITS) != Z_OK)
		return -ENOMEM;

	/* room for one byte past max: producing it means "too large" */
	size_t limit = max < SIZE_MAX - 1 ? max + 1 : SIZE_MAX - 1;
	size_t cap = len < (SIZE_MAX / 4) ? len * 4 : limit;
	/* a one-member file says its size in its last four bytes (ISIZE,
	 * little-endian, modulo 2^32): one byte more holds it without
	 * growing; a wrong hint only costs a realloc */
	if (len >= 18) {
		const unsigned char *t = (const unsigned char *)data + len - 4;
		size_t isize = (size_t)t[0] | (size_t)t[1] << 8 | (size_t)t[2] << 16 | (size_t)t[3] << 24;
		if (isize >= len / 2 && isize < limit)
			cap = isize + 1;
	}
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
	if (kconfig_is_gzip(data, len))
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

/* Byte classes of the line scanner: a table is a load where isalnum() is a
 * call per byte, and a config is some 10,000 lines (260 KB on Debian). */
enum { CH_SYM = 1, CH_SPACE = 2 };
static const unsigned char ch_class[256] = {
	['\t'] = CH_SPACE, ['\n'] = CH_SPACE, ['\v'] = CH_SPACE, ['\f'] = CH_SPACE, ['\r'] = CH_SPACE, [' '] = CH_SPACE,
	['0'] = CH_SYM,	   ['1'] = CH_SYM,    ['2'] = CH_SYM,	 ['3'] = CH_SYM,    ['4'] = CH_SYM,    ['5'] = CH_SYM,
	['6'] = CH_SYM,	   ['7'] = CH_SYM,    ['8'] = CH_SYM,	 ['9'] = CH_SYM,    ['A'] = CH_SYM,    ['B'] = CH_SYM,
	['C'] = CH_SYM,	   ['D'] = CH_SYM,    ['E'] = CH_SYM,	 ['F'] = CH_SYM,    ['G'] = CH_SYM,    ['H'] = CH_SYM,
	['I'] = CH_SYM,	   ['J'] = CH_SYM,    ['K'] = CH_SYM,	 ['L'] = CH_SYM,    ['M'] = CH_SYM,    ['N'] = CH_SYM,
	['O'] = CH_SYM,	   ['P'] = CH_SYM,    ['Q'] = CH_SYM,	 ['R'] = CH_SYM,    ['S'] = CH_SYM,    ['T'] = CH_SYM,
	['U'] = CH_SYM,	   ['V'] = CH_SYM,    ['W'] = CH_SYM,	 ['X'] = CH_SYM,    ['Y'] = CH_SYM,    ['Z'] = CH_SYM,
	['_'] = CH_SYM,	   ['a'] = CH_SYM,    ['b'] = CH_SYM,	 ['c'] = CH_SYM,    ['d'] = CH_SYM,    ['e'] = CH_SYM,
	['f'] = CH_SYM,	   ['g'] = CH_SYM,    ['h'] = CH_SYM,	 ['i'] = CH_SYM,    ['j'] = CH_SYM,    ['k'] = CH_SYM,
	['l'] = CH_SYM,	   ['m'] = CH_SYM,    ['n'] = CH_SYM,	 ['o'] = CH_SYM,    ['p'] = CH_SYM,    ['q'] = CH_SYM,
	['r'] = CH_SYM,	   ['s'] = CH_SYM,    ['t'] = CH_SYM,	 ['u'] = CH_SYM,    ['v'] = CH_SYM,    ['w'] = CH_SYM,
	['x'] = CH_SYM,	   ['y'] = CH_SYM,    ['z'] = CH_SYM,
};

static bool is_sym_char(char c) { return ch_class[(unsigned char)c] & CH_SYM; }

/* Eight bytes at a time: the bytes of x in [lo, hi] get their high bit
 * set (every byte of x below 0x80, so no sum carries into the next). */
#define ONES 0x0101010101010101ull
#define HIGHS 0x8080808080808080ull
static inline uint64_t in_range(uint64_t x, unsigned lo, unsigned hi)
{
	return (x + ONES * (0x80 - lo)) & ~(x + ONES * (0x7f - hi)) & HIGHS;
}

static inline bool word_sym(const char *p)
{
	uint64_t x;
	memcpy(&x, p, 8);
	return !(x & HIGHS) &&
	       (in_range(x, '0', '9') | in_range(x, 'A', 'Z') | in_range(x, 'a', 'z') | in_range(x, '_', '_')) == HIGHS;
}

/* Are all n bytes at p symbol characters ([A-Za-z0-9_])? Eight at a time,
 * the last eight overlapping the ones before where n is not a multiple. */
static bool all_sym(const char *p, size_t n)
{
	if (n < 8) {
		for (size_t i = 0; i < n; i++)
			if (!is_sym_char(p[i]))
				return false;
		return true;
	}
	for (size_t i = 0; i + 8 < n; i += 8)
		if (!word_sym(p + i))
			return false;
	return word_sym(p + n - 8);
}

/* The tracked names grouped by length, and for each first letter the
 * lengths of the names that start with it: almost every name of a config
 * is turned away by one bit of that before any compare. */
#define SYM_MAX_LEN 31
static signed char by_len[SYM_MAX_LEN + 1][SYM_COUNT + 1];
static uint32_t len_mask[256];
static bool by_len_built;

static void by_len_build(void)
{
	if (by_len_built)
		return;
	by_len_built = true;
	for (size_t l = 0; l <= SYM_MAX_LEN; l++)
		memset(by_len[l], -1, sizeof(by_len[l]));
	for (int i = 0; i < SYM_COUNT; i++) {
		signed char *slot = by_len[sym_names[i].len];
		while (*slot >= 0)
			slot++;
		*slot = (signed char)i;
		len_mask[(unsigned char)sym_names[i].name[0]] |= 1u << sym_names[i].len;
	}
}

static inline int lookup_sym(const char *name, size_t len)
{
	if (len > SYM_MAX_LEN || !(len_mask[(unsigned char)name[0]] & (1u << len)))
		return -1;
	for (const signed char *i = by_len[len]; *i >= 0; i++)
		if (memcmp(sym_names[*i].name, name, len) == 0)
			return *i;
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

static void set_sym(struct parse_state *ps, int s, enum sym_state state, const char *val, size_t len, unsigned lineno)
{
	ps->syms[s].state = state;
	ps->syms[s].val = val;
	ps->syms[s].len = len;
	ps->syms[s].line = lineno;
}

/* A comment: "# CONFIG_X is not set", or the header. Only a tracked X
 * matters, and a tracked name is all symbol characters: comparing the text
 * between prefix and suffix with it is the whole check. */
static void parse_comment(struct parse_state *ps, const char *p, const char *end, unsigned lineno)
{
	static const char prefix[] = "# CONFIG_";
	static const char suffix[] = " is not set";
	const size_t pl = sizeof(prefix) - 1, sl = sizeof(suffix) - 1;
	size_t n = (size_t)(end - p);
	if (n > pl && memcmp(p, prefix, pl) == 0) {
		if (n > pl + sl && memcmp(end - sl, suffix, sl) == 0) {
			int s = lookup_sym(p + pl, n - pl - sl);
			if (s >= 0)
				set_sym(ps, s, SYM_NOT_SET, NULL, 0, lineno);
		}
		return;
	}
	if (!ps->have_header)
		parse_header(ps, p, end);
}

/* One line, without its newline. Returns false if it is not part of a
 * kernel config. */
static inline bool parse_line(struct parse_state *ps, const char *p, const char *end, unsigned lineno)
{
	/* trailing white space, including the \r of CRLF files */
	while (end > p && (ch_class[(unsigned char)end[-1]] & CH_SPACE))
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
	/* the name runs to the first '=' and is all symbol characters */
	const char *name = p + sizeof(prefix) - 1;
	const char *e = memchr(name, '=', (size_t)(end - name));
	if (!e || e == name || !all_sym(name, (size_t)(e - name)))
		return false;
	const char *val = e + 1;
	size_t vlen = (size_t)(end - val);
	if (vlen > 0 && val[0] == '"' && !string_value_ok(val, vlen))
		return false;
	ps->assignments++;
	int s = lookup_sym(name, (size_t)(e - name));
	if (s >= 0)
		set_sym(ps, s, SYM_VALUE, val, vlen, lineno);
	return true;
}

/* The first byte in [p, end) that is not a symbol character, or end.
 * Sixteen bytes at a time with SSE2 (every x86-64 has it): letters are the
 * bytes that OR 0x20 puts in 'a'..'z', compared signed, so that a byte of
 * 0x80 or more is none. Else eight at a time (the high bit of each byte
 * taken out first, so that in_range sees bytes below 0x80 only; a byte
 * with it is never a symbol character), and byte by byte at the end and
 * on big-endian machines, where the lowest address is not the lowest bit. */
static inline const char *sym_end(const char *p, const char *end)
{
#ifdef __SSE2__
	const __m128i lo_letter = _mm_set1_epi8('a' - 1), hi_letter = _mm_set1_epi8('z' + 1);
	const __m128i lo_digit = _mm_set1_epi8('0' - 1), hi_digit = _mm_set1_epi8('9' + 1);
	const __m128i underscore = _mm_set1_epi8('_'), case_bit = _mm_set1_epi8(0x20);
	while (end - p >= 16) {
		__m128i c = _mm_loadu_si128((const __m128i *)(const void *)p);
		__m128i l = _mm_or_si128(c, case_bit);
		__m128i sym = _mm_or_si128(
			_mm_and_si128(_mm_cmpgt_epi8(l, lo_letter), _mm_cmplt_epi8(l, hi_letter)),
			_mm_or_si128(_mm_and_si128(_mm_cmpgt_epi8(c, lo_digit), _mm_cmplt_epi8(c, hi_digit)),
				     _mm_cmpeq_epi8(c, underscore)));
		unsigned other = ~(unsigned)_mm_movemask_epi8(sym) & 0xffffu;
		if (other)
			return p + __builtin_ctz(other);
		p += 16;
	}
#endif
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	while (end - p >= 8) {
		uint64_t x;
		memcpy(&x, p, 8);
		uint64_t low = x & ~HIGHS;
		uint64_t sym = (in_range(low, '0', '9') | in_range(low, 'A', 'Z') | in_range(low, 'a', 'z') |
				in_range(low, '_', '_')) &
			       ~(x & HIGHS);
		uint64_t other = ~sym & HIGHS;
		if (other)
			return p + (__builtin_ctzll(other) >> 3);
		p += 8;
	}
#endif
	while (p < end && is_sym_char(*p))
		p++;
	return p;
}

/* "CONFIG_NAME=V" at the start of a line, V one byte that is not blank nor
 * a quote ("y", "m", a digit), then the newline: two lines of three in a
 * distribution's config. Read in one pass, with no search for the line's
 * end; returns the start of the next line, or NULL for a line of any
 * other form, which parse_line then reads (with the result it gives this
 * form too: name all symbol characters up to the first '=', value as
 * is). */
static inline const char *short_assignment(struct parse_state *ps, const char *p, const char *end, unsigned lineno)
{
	static const char prefix[] = "CONFIG_";
	const size_t pl = sizeof(prefix) - 1;
	if ((size_t)(end - p) < pl + 4 || memcmp(p, prefix, pl) != 0)
		return NULL;
	const char *name = p + pl;
	const char *e = sym_end(name, end);
	if (e == name || end - e < 3 || e[0] != '=' || e[2] != '\n' || e[1] == '"' ||
	    (ch_class[(unsigned char)e[1]] & CH_SPACE))
		return NULL;
	ps->assignments++;
	int s = lookup_sym(name, (size_t)(e - name));
	if (s >= 0)
		set_sym(ps, s, SYM_VALUE, e + 1, 1, lineno);
	return e + 3;
}

/* "# CONFIG_NAME is not set" and its newline, NAME all symbol characters:
 * most of the other lines. Returns the start of the next line, or NULL for
 * any other line (parse_comment gives this form the same reading). */
static inline const char *not_set_line(struct parse_state *ps, const char *p, const char *end, unsigned lineno)
{
	static const char prefix[] = "# CONFIG_";
	static const char suffix[] = " is not set\n";
	const size_t pl = sizeof(prefix) - 1, sl = sizeof(suffix) - 1;
	if ((size_t)(end - p) < pl + 1 + sl || memcmp(p, prefix, pl) != 0)
		return NULL;
	const char *name = p + pl;
	const char *e = sym_end(name, end);
	if (e == name || (size_t)(end - e) < sl || memcmp(e, suffix, sl) != 0)
		return NULL;
	int s = lookup_sym(name, (size_t)(e - name));
	if (s >= 0)
		set_sym(ps, s, SYM_NOT_SET, NULL, 0, lineno);
	return e + sl;
}

static unsigned line_of(const char *text, const char *at)
{
	unsigned n = 1;
	for (const char *p = text; p < at; p++)
		n += *p == '\n';
	return n;
}

int kconfig_parse(const char *text, size_t len, const char *release, struct kconfig_facts *out, unsigned *bad_line)
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

	by_len_build();
	struct parse_state ps = { 0 };
	const char *p = text, *end = text + len;
	unsigned lineno = 0;
	while (p < end) {
		lineno++;
		const char *next = *p == 'C'   ? short_assignment(&ps, p, end, lineno)
				   : *p == '#' ? not_set_line(&ps, p, end, lineno)
					       : NULL;
		if (next) {
			p = next;
			continue;
		}
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
