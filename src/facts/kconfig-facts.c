/* facts/kconfig-facts.c - what the symbols of a parsed kernel config (facts/kconfig.c)
 * mean for the decision (DESIGN section 1): the kernel family and its memcg
 * default, whether memcg is built, the built-in command line; and the
 * release strings (Raspberry Pi kernels, major.minor, dpkg's order).
 * Pure (see facts/kconfig.h). */
#include "facts/kconfig.h"
#include "facts/kconfig-int.h"
#include "lib/util.h"

#include <ctype.h>

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

static bool sym_is_y(const struct parse_state *ps, enum sym s)
{
	const struct sym_value *v = &ps->syms[s];
	return v->state == SYM_VALUE && v->len == 1 && v->val[0] == 'y';
}

static bool sym_not_set(const struct parse_state *ps, enum sym s) { return ps->syms[s].state == SYM_NOT_SET; }

static char *unquote(const char *v, size_t len)
{
	struct strbuf sb = { 0 };
	for (size_t i = 1; i + 1 < len; i++) {
		if (v[i] == '\\' && i + 2 < len)
			i++;
		sb_appendc(&sb, v[i]);
	}
	return sb_take(&sb);
}

/* Architectures whose built-in command line follows the Device Tree
 * conventions (CMDLINE_FROM_BOOTLOADER / _EXTEND / _FORCE, or riscv's
 * CMDLINE_FALLBACK): with no mode chosen the built-in line is a fallback. */
static bool arch_is_dt(const char *arch, const struct parse_state *ps)
{
	static const char *const x86[] = { "x86", "x86_64", "i386" };
	static const char *const dt[] = {
		"arm",	 "arm64",    "riscv",  "powerpc", "mips", "loongarch", "microblaze",
		"nios2", "openrisc", "xtensa", "sh",	  "arc",  "csky",
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

static void set_family(struct kconfig_facts *f, enum kernel_family family, enum memcg_default def, enum memcg_rule rule,
		       int accepts, const char *reason)
{
	f->family = family;
	f->default_state = def;
	f->rule = rule;
	f->accepts_enable = accepts;
	f->default_reason = reason;
}

void derive_facts(const struct parse_state *ps, const char *release, struct kconfig_facts *f)
{
	if (ps->header_arch)
		f->arch = xstrndup(ps->header_arch, ps->header_arch_len);
	if (ps->header_ver)
		f->header_version = xstrndup(ps->header_ver, ps->header_ver_len);

	unsigned version = release_major_minor(release);
	if (!version)
		version = release_major_minor(f->header_version);

	f->cgroups_built = sym_is_y(ps, SYM_CGROUPS);
	f->memcg_built = f->cgroups_built && (sym_is_y(ps, SYM_MEMCG) || sym_is_y(ps, SYM_CGROUP_MEM_RES_CTLR));

	/* CONFIG_MEMCG_V1 appeared in 6.12; a full config of 6.12+ with memcg
	 * always names it, so only a trimmed one leaves it out there. */
	if (sym_is_y(ps, SYM_MEMCG_V1))
		f->memcg_v1 = true;
	else if (ps->syms[SYM_MEMCG_V1].state != SYM_ABSENT)
		f->memcg_v1 = false;
	else
		f->memcg_v1 = version < 6012; /* 0: unknown, an old kernel */
	f->memcg_v1 = f->memcg_v1 && f->memcg_built;

	f->rpi_symbols =
		sym_is_y(ps, SYM_BRCM_CHAR_DRIVERS) || sym_is_y(ps, SYM_BCM_VCIO) || sym_is_y(ps, SYM_USB_DWCOTG);

	if (sym_is_y(ps, SYM_MEMCG_DISABLED)) {
		set_family(f, FAMILY_DEBIAN_OLD, MEMCG_DEFAULT_OFF, RULE_LAST_WINS, 1,
			   "CONFIG_MEMCG_DISABLED=y (Debian 3.6-4.6: memcg off unless cgroup_enable=memory)");
	} else if (sym_is_y(ps, SYM_CGROUP_MEM_RES_CTLR_DISABLED)) {
		set_family(f, FAMILY_DEBIAN_OLD, MEMCG_DEFAULT_OFF, RULE_LAST_WINS, 1,
			   "CONFIG_CGROUP_MEM_RES_CTLR_DISABLED=y (Debian 2.6.39-3.5: memcg off unless "
			   "cgroup_enable=memory)");
	} else if (sym_not_set(ps, SYM_MEMCG_DEFAULT_ENABLED)) {
		set_family(f, FAMILY_SUSE, MEMCG_DEFAULT_OFF, RULE_LAST_WINS, 1,
			   "# CONFIG_MEMCG_DEFAULT_ENABLED is not set (SUSE proposal: memcg off unless "
			   "cgroup_enable=memory)");
	} else if (sym_is_y(ps, SYM_MEMCG_DEFAULT_ENABLED)) {
		set_family(f, FAMILY_SUSE, MEMCG_DEFAULT_ON, RULE_LAST_WINS, 1,
			   "CONFIG_MEMCG_DEFAULT_ENABLED=y (SUSE proposal: memcg on unless cgroup_disable=memory)");
	} else if (release_is_rpi(release) || f->rpi_symbols) {
		/* 6.7 to 6.11 were never Raspberry Pi OS kernels; the firmware
		 * change came with 6.12, so treat them like it. An unknown
		 * version counts as the older tree. */
		if (version >= 6007)
			set_family(f, FAMILY_RPI_FIRMWARE, MEMCG_DEFAULT_OFF, RULE_LAST_WINS, 1,
				   "Raspberry Pi kernel 6.12+: the firmware adds cgroup_disable=memory; a later "
				   "cgroup_enable=memory enables");
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
						      : "CONFIG_MEMCG=y, but no CONFIG_CGROUPS=y line: a trimmed "
							"config or a defconfig?";
		else if (!f->cgroups_built)
			f->not_built_reason = sym_not_set(ps, SYM_CGROUPS) ? "# CONFIG_CGROUPS is not set"
									   : "no CONFIG_CGROUPS=y line";
		else if (sym_not_set(ps, SYM_MEMCG) || sym_not_set(ps, SYM_CGROUP_MEM_RES_CTLR))
			f->not_built_reason = "# CONFIG_MEMCG is not set";
		else
			f->not_built_reason = "no CONFIG_MEMCG=y line";
		f->default_reason = !f->cgroups_built ? "memcg not built (no cgroups)"
						      : "memcg not built (# CONFIG_MEMCG is not set)";
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

void kconfig_facts_free(struct kconfig_facts *f)
{
	if (!f)
		return;
	free(f->builtin_cmdline);
	free(f->arch);
	free(f->header_version);
	memset(f, 0, sizeof(*f));
}
