/* kconfig-ref.h - the reference for fuzz-kconfig.c's differential check: a
 * kernel config read the plainest way, a character at a time, with the
 * rules facts/kconfig.h states (every line blank, a comment, or CONFIG_NAME=VALUE
 * with a whole Kconfig string where VALUE is quoted; "# CONFIG_X is not
 * set"; the header; the last line of a symbol wins). src/kconfig.c does the
 * same work with tables and eight bytes at a time; both must give the same
 * result, refused line and facts for every input. This is the reader as it
 * was before that rewrite, kept as it was: its string and header checks are
 * still the same lines as facts/kconfig.c's (they were not rewritten), the line
 * splitting, name checks and symbol lookup are the plain ones. */
#pragma once

#include <ctype.h>
#include <errno.h>

#include "facts/kconfig-int.h"

static const char *const ref_names[SYM_COUNT] = {
	[SYM_CGROUPS] = "CGROUPS", [SYM_MEMCG] = "MEMCG", [SYM_CGROUP_MEM_RES_CTLR] = "CGROUP_MEM_RES_CTLR",
	[SYM_MEMCG_DISABLED] = "MEMCG_DISABLED", [SYM_CGROUP_MEM_RES_CTLR_DISABLED] = "CGROUP_MEM_RES_CTLR_DISABLED",
	[SYM_MEMCG_DEFAULT_ENABLED] = "MEMCG_DEFAULT_ENABLED", [SYM_MEMCG_V1] = "MEMCG_V1",
	[SYM_CMDLINE] = "CMDLINE", [SYM_CMDLINE_BOOL] = "CMDLINE_BOOL", [SYM_CMDLINE_OVERRIDE] = "CMDLINE_OVERRIDE",
	[SYM_CMDLINE_FORCE] = "CMDLINE_FORCE", [SYM_CMDLINE_EXTEND] = "CMDLINE_EXTEND",
	[SYM_CMDLINE_FROM_BOOTLOADER] = "CMDLINE_FROM_BOOTLOADER", [SYM_CMDLINE_FALLBACK] = "CMDLINE_FALLBACK",
	[SYM_BRCM_CHAR_DRIVERS] = "BRCM_CHAR_DRIVERS", [SYM_BCM_VCIO] = "BCM_VCIO", [SYM_USB_DWCOTG] = "USB_DWCOTG",
	[SYM_X86] = "X86", [SYM_OF] = "OF",
};

static bool ref_sym_char(char c)
{
	return isalnum((unsigned char)c) || c == '_';
}

static int ref_lookup(const char *name, size_t len)
{
	for (int i = 0; i < SYM_COUNT; i++)
		if (strlen(ref_names[i]) == len && memcmp(ref_names[i], name, len) == 0)
			return i;
	return -1;
}

static bool ref_string_ok(const char *v, size_t len)
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
static void ref_header(struct parse_state *ps, const char *p, const char *end)
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
static void ref_comment(struct parse_state *ps, const char *p, const char *end, unsigned lineno)
{
	static const char prefix[] = "# CONFIG_";
	static const char suffix[] = " is not set";
	size_t n = (size_t)(end - p);
	if (n > sizeof(prefix) - 1 && memcmp(p, prefix, sizeof(prefix) - 1) == 0) {
		const char *name = p + sizeof(prefix) - 1;
		const char *e = name;
		while (e < end && ref_sym_char(*e))
			e++;
		if (e == name || (size_t)(end - e) != sizeof(suffix) - 1 ||
		    memcmp(e, suffix, sizeof(suffix) - 1) != 0)
			return;
		int s = ref_lookup(name, (size_t)(e - name));
		if (s >= 0) {
			ps->syms[s].state = SYM_NOT_SET;
			ps->syms[s].val = NULL;
			ps->syms[s].len = 0;
			ps->syms[s].line = lineno;
		}
		return;
	}
	if (!ps->have_header)
		ref_header(ps, p, end);
}

/* One line, without its newline. Returns false if it is not part of a
 * kernel config. */
static bool ref_line(struct parse_state *ps, const char *p, const char *end, unsigned lineno)
{
	/* trailing white space, including the \r of CRLF files */
	while (end > p && isspace((unsigned char)end[-1]))
		end--;
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	if (p == end)
		return true;
	if (*p == '#') {
		ref_comment(ps, p, end, lineno);
		return true;
	}
	static const char prefix[] = "CONFIG_";
	if ((size_t)(end - p) <= sizeof(prefix) - 1 || memcmp(p, prefix, sizeof(prefix) - 1) != 0)
		return false;
	const char *name = p + sizeof(prefix) - 1;
	const char *e = name;
	while (e < end && ref_sym_char(*e))
		e++;
	if (e == name || e == end || *e != '=')
		return false;
	const char *val = e + 1;
	size_t vlen = (size_t)(end - val);
	if (vlen > 0 && val[0] == '"' && !ref_string_ok(val, vlen))
		return false;
	ps->assignments++;
	int s = ref_lookup(name, (size_t)(e - name));
	if (s >= 0) {
		ps->syms[s].state = SYM_VALUE;
		ps->syms[s].val = val;
		ps->syms[s].len = vlen;
		ps->syms[s].line = lineno;
	}
	return true;
}


/* kconfig_parse's contract, the plain way. */
static int ref_parse(const char *text, size_t len, const char *release, struct kconfig_facts *out,
		     unsigned *bad_line)
{
	memset(out, 0, sizeof(*out));
	*bad_line = 0;
	unsigned lineno = 1;
	for (size_t i = 0; i < len; i++) {
		if (text[i] == '\0') {
			*bad_line = lineno;
			return -EBADMSG;
		}
		lineno += text[i] == '\n';
	}
	struct parse_state ps = { 0 };
	const char *p = text, *end = text + len;
	lineno = 0;
	while (p < end) {
		lineno++;
		const char *nl = p;
		while (nl < end && *nl != '\n')
			nl++;
		if (!ref_line(&ps, p, nl, lineno)) {
			*bad_line = lineno;
			return -EBADMSG;
		}
		p = nl < end ? nl + 1 : end;
	}
	if (ps.assignments == 0)
		return -EBADMSG;
	derive_facts(&ps, release, out);
	return 0;
}
