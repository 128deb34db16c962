/* kconfig.c - a kernel's .config turned into the facts of DESIGN section 1.
 * Pure: works on buffers only (see kconfig.h). */
#include "kconfig.h"
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

/* ---- releases ------------------------------------------------------------ */

bool release_is_rpi(const char *release)
{
	if (!release || !*release)
		return false;
	/* Raspberry Pi OS packages: 6.6.51+rpt-rpi-v8, 6.12.25+rpt-rpi-2712 */
	if (strstr(release, "+rpt-rpi-"))
		return true;
	/* Raspberry Pi OS bookworm's first packages: 6.1.0-rpi7-rpi-v8 ...
	 * (Debian's own Pi kernel is "6.1.0-50-rpi": no flavour after -rpi) */
	static const char *const rpi_flavours[] = {
		"-rpi-v6", "-rpi-v7", "-rpi-v7l", "-rpi-v8", "-rpi-2712",
	};
	for (size_t i = 0; i < ARRAY_SIZE(rpi_flavours); i++)
		if (endswith(release, rpi_flavours[i]))
			return true;
	/* the Foundation's own builds (rpi-update, firmware repository):
	 * LOCALVERSION plus the "+" of a tree ahead of its tag */
	static const char *const fw_suffixes[] = {
		"-v6+", "-v7+", "-v7l+", "-v8+", "-v8-16k", "-v8-16k+", "-2712", "-2712+",
	};
	for (size_t i = 0; i < ARRAY_SIZE(fw_suffixes); i++)
		if (endswith(release, fw_suffixes[i]))
			return true;
	return false;
}

unsigned release_major_minor(const char *release)
{
	if (!release || !isdigit((unsigned char)release[0]))
		return 0;
	unsigned long major = 0, minor = 0;
	const char *p = release;
	while (isdigit((unsigned char)*p)) {
		major = major * 10 + (unsigned)(*p++ - '0');
		if (major > 999)
			return 0;
	}
	if (*p != '.' || !isdigit((unsigned char)p[1]))
		return 0;
	p++;
	while (isdigit((unsigned char)*p)) {
		minor = minor * 10 + (unsigned)(*p++ - '0');
		if (minor > 999)
			return 0;
	}
	return (unsigned)(major * 1000 + minor);
}

/* dpkg's character order: '~' before everything, even the end of the
 * string; then letters; then other characters. */
static int ver_order(char c)
{
	if (isdigit((unsigned char)c))
		return 0;
	if (isalpha((unsigned char)c))
		return (unsigned char)c;
	if (c == '~')
		return -1;
	if (c)
		return (unsigned char)c + 256;
	return 0;
}

int release_compare(const char *a, const char *b)
{
	if (!a)
		a = "";
	if (!b)
		b = "";
	while (*a || *b) {
		while ((*a && !isdigit((unsigned char)*a)) || (*b && !isdigit((unsigned char)*b))) {
			int ac = ver_order(*a), bc = ver_order(*b);
			if (ac != bc)
				return ac < bc ? -1 : 1;
			if (*a)
				a++;
			if (*b)
				b++;
		}
		while (*a == '0')
			a++;
		while (*b == '0')
			b++;
		int first_diff = 0;
		while (isdigit((unsigned char)*a) && isdigit((unsigned char)*b)) {
			if (!first_diff)
				first_diff = *a - *b;
			a++;
			b++;
		}
		if (isdigit((unsigned char)*a))
			return 1;
		if (isdigit((unsigned char)*b))
			return -1;
		if (first_diff)
			return first_diff < 0 ? -1 : 1;
	}
	return 0;
}

/* ---- config text --------------------------------------------------------- */

/* The symbols the facts are made of, without the CONFIG_ prefix. */
enum sym {
	SYM_CGROUPS,
	SYM_MEMCG,
	SYM_CGROUP_MEM_RES_CTLR,
	SYM_MEMCG_DISABLED,
	SYM_CGROUP_MEM_RES_CTLR_DISABLED,
	SYM_MEMCG_DEFAULT_ENABLED,
	SYM_MEMCG_V1,
	SYM_CMDLINE,
	SYM_CMDLINE_BOOL,
	SYM_CMDLINE_OVERRIDE,
	SYM_CMDLINE_FORCE,
	SYM_CMDLINE_EXTEND,
	SYM_CMDLINE_FROM_BOOTLOADER,
	SYM_CMDLINE_FALLBACK,
	SYM_BRCM_CHAR_DRIVERS,
	SYM_BCM_VCIO,
	SYM_USB_DWCOTG,
	SYM_X86,
	SYM_OF,
	SYM_COUNT,
};

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

enum sym_state {
	SYM_ABSENT,  /* no line names it */
	SYM_NOT_SET, /* "# CONFIG_X is not set" */
	SYM_VALUE,   /* CONFIG_X=value (the last one wins, as in Kconfig) */
};

struct sym_value {
	enum sym_state state;
	const char *val; /* into the text, not terminated */
	size_t len;
	unsigned line;
};

struct parse_state {
	struct sym_value syms[SYM_COUNT];
	const char *header_arch, *header_ver;
	size_t header_arch_len, header_ver_len;
	bool have_header;
	unsigned assignments;
};

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

static bool sym_is_y(const struct parse_state *ps, enum sym s)
{
	const struct sym_value *v = &ps->syms[s];
	return v->state == SYM_VALUE && v->len == 1 && v->val[0] == 'y';
}

static bool sym_not_set(const struct parse_state *ps, enum sym s)
{
	return ps->syms[s].state == SYM_NOT_SET;
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

static char *unquote(const char *v, size_t len)
{
	struct strbuf sb = {0};
	for (size_t i = 1; i + 1 < len; i++) {
		if (v[i] == '\\' && i + 2 < len)
			i++;
		sb_appendc(&sb, v[i]);
	}
	return sb_take(&sb);
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

/* Architectures whose built-in command line follows the Device Tree
 * conventions (CMDLINE_FROM_BOOTLOADER / _EXTEND / _FORCE, or riscv's
 * CMDLINE_FALLBACK): with no mode chosen the built-in line is a fallback. */
static bool arch_is_dt(const char *arch, const struct parse_state *ps)
{
	static const char *const x86[] = { "x86", "x86_64", "i386" };
	static const char *const dt[] = {
		"arm", "arm64", "riscv", "powerpc", "mips", "loongarch", "microblaze",
		"nios2", "openrisc", "xtensa", "sh", "arc", "csky",
	};
	if (arch) {
		for (size_t i = 0; i < ARRAY_SIZE(x86); i++)
			if (streq(arch, x86[i]))
				return false;
		for (size_t i = 0; i < ARRAY_SIZE(dt); i++)
			if (streq(arch, dt[i]))
				return true;
	}
	if (sym_is_y(ps, SYM_X86))
		return false;
	return sym_is_y(ps, SYM_OF);
}

static void set_family(struct kconfig_facts *f, enum kernel_family family,
		       enum memcg_default def, enum memcg_rule rule, int accepts, const char *reason)
{
	f->family = family;
	f->default_state = def;
	f->rule = rule;
	f->accepts_enable = accepts;
	f->default_reason = reason;
}

static void derive_facts(const struct parse_state *ps, const char *release, struct kconfig_facts *f)
{
	if (ps->header_arch)
		f->arch = xstrndup(ps->header_arch, ps->header_arch_len);
	if (ps->header_ver)
		f->header_version = xstrndup(ps->header_ver, ps->header_ver_len);

	unsigned version = release_major_minor(release);
	if (!version)
		version = release_major_minor(f->header_version);

	f->cgroups_built = sym_is_y(ps, SYM_CGROUPS);
	f->memcg_built = f->cgroups_built &&
			 (sym_is_y(ps, SYM_MEMCG) || sym_is_y(ps, SYM_CGROUP_MEM_RES_CTLR));

	/* CONFIG_MEMCG_V1 appeared in 6.12; a full config of 6.12+ with memcg
	 * always names it, so only a trimmed one leaves it out there. */
	if (sym_is_y(ps, SYM_MEMCG_V1))
		f->memcg_v1 = true;
	else if (ps->syms[SYM_MEMCG_V1].state != SYM_ABSENT)
		f->memcg_v1 = false;
	else
		f->memcg_v1 = version < 6012; /* 0: unknown, an old kernel */
	f->memcg_v1 = f->memcg_v1 && f->memcg_built;

	f->rpi_symbols = sym_is_y(ps, SYM_BRCM_CHAR_DRIVERS) || sym_is_y(ps, SYM_BCM_VCIO) ||
			 sym_is_y(ps, SYM_USB_DWCOTG);

	if (sym_is_y(ps, SYM_MEMCG_DISABLED)) {
		set_family(f, FAMILY_DEBIAN_OLD, MEMCG_DEFAULT_OFF, RULE_LAST_WINS, 1,
			   "CONFIG_MEMCG_DISABLED=y (Debian 3.6-4.6: memcg off unless cgroup_enable=memory)");
	} else if (sym_is_y(ps, SYM_CGROUP_MEM_RES_CTLR_DISABLED)) {
		set_family(f, FAMILY_DEBIAN_OLD, MEMCG_DEFAULT_OFF, RULE_LAST_WINS, 1,
			   "CONFIG_CGROUP_MEM_RES_CTLR_DISABLED=y (Debian 2.6.39-3.5: memcg off unless cgroup_enable=memory)");
	} else if (sym_not_set(ps, SYM_MEMCG_DEFAULT_ENABLED)) {
		set_family(f, FAMILY_SUSE, MEMCG_DEFAULT_OFF, RULE_LAST_WINS, 1,
			   "# CONFIG_MEMCG_DEFAULT_ENABLED is not set (SUSE proposal: memcg off unless cgroup_enable=memory)");
	} else if (sym_is_y(ps, SYM_MEMCG_DEFAULT_ENABLED)) {
		set_family(f, FAMILY_SUSE, MEMCG_DEFAULT_ON, RULE_LAST_WINS, 1,
			   "CONFIG_MEMCG_DEFAULT_ENABLED=y (SUSE proposal: memcg on unless cgroup_disable=memory)");
	} else if (release_is_rpi(release) || f->rpi_symbols) {
		/* 6.7 to 6.11 were never Raspberry Pi OS kernels; the firmware
		 * change came with 6.12, so treat them like it. An unknown
		 * version counts as the older tree. */
		if (version >= 6007)
			set_family(f, FAMILY_RPI_FIRMWARE, MEMCG_DEFAULT_OFF, RULE_LAST_WINS, 1,
				   "Raspberry Pi kernel 6.12+: the firmware adds cgroup_disable=memory; a later cgroup_enable=memory enables");
		else
			set_family(f, FAMILY_RPI, MEMCG_DEFAULT_OFF, RULE_ENABLE_WINS, 1,
				   "Raspberry Pi kernel up to 6.6: memcg off unless cgroup_enable=memory");
	} else {
		set_family(f, FAMILY_MAINLINE, MEMCG_DEFAULT_ON, RULE_DISABLE_WINS, 0,
			   "CONFIG_MEMCG=y (mainline: memcg on unless cgroup_disable=memory)");
	}
	if (!f->memcg_built) {
		bool memcg_y = sym_is_y(ps, SYM_MEMCG) || sym_is_y(ps, SYM_CGROUP_MEM_RES_CTLR);
		f->default_state = MEMCG_DEFAULT_OFF;
		if (!f->cgroups_built && memcg_y)
			f->not_built_reason = sym_not_set(ps, SYM_CGROUPS)
						      ? "CONFIG_MEMCG=y, but # CONFIG_CGROUPS is not set"
						      : "CONFIG_MEMCG=y, but no CONFIG_CGROUPS=y line: a trimmed config or a defconfig?";
		else if (!f->cgroups_built)
			f->not_built_reason = sym_not_set(ps, SYM_CGROUPS) ? "# CONFIG_CGROUPS is not set"
									   : "no CONFIG_CGROUPS=y line";
		else if (sym_not_set(ps, SYM_MEMCG) || sym_not_set(ps, SYM_CGROUP_MEM_RES_CTLR))
			f->not_built_reason = "# CONFIG_MEMCG is not set";
		else
			f->not_built_reason = "no CONFIG_MEMCG=y line";
		f->default_reason = !f->cgroups_built ? "memcg not built (no cgroups)" : "memcg not built (# CONFIG_MEMCG is not set)";
	}

	/* built-in command line */
	const struct sym_value *cl = &ps->syms[SYM_CMDLINE];
	if (cl->state == SYM_VALUE && cl->len >= 2 && cl->val[0] == '"') {
		char *s = unquote(cl->val, cl->len);
		if (*s)
			f->builtin_cmdline = s;
		else
			free(s);
	}
	if (sym_is_y(ps, SYM_CMDLINE_OVERRIDE) || sym_is_y(ps, SYM_CMDLINE_FORCE))
		f->builtin_mode = BUILTIN_OVERRIDE;
	else if (sym_is_y(ps, SYM_CMDLINE_EXTEND))
		f->builtin_mode = BUILTIN_APPEND;
	else if (sym_is_y(ps, SYM_CMDLINE_BOOL))
		f->builtin_mode = BUILTIN_PREPEND;
	else if (sym_is_y(ps, SYM_CMDLINE_FROM_BOOTLOADER) || sym_is_y(ps, SYM_CMDLINE_FALLBACK) ||
		 (f->builtin_cmdline && arch_is_dt(f->arch, ps)))
		f->builtin_mode = BUILTIN_FALLBACK;
	else
		f->builtin_mode = BUILTIN_NONE;
	/* An empty built-in line changes nothing unless it replaces the boot
	 * loader's: keep OVERRIDE (the kernel then ignores the boot loader). */
	if (!f->builtin_cmdline && f->builtin_mode != BUILTIN_OVERRIDE)
		f->builtin_mode = BUILTIN_NONE;
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

void kconfig_facts_free(struct kconfig_facts *f)
{
	if (!f)
		return;
	free(f->builtin_cmdline);
	free(f->arch);
	free(f->header_version);
	memset(f, 0, sizeof(*f));
}
