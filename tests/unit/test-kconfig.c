/* test-kconfig.c - kernel config parsing (facts/kconfig.c) and the kernels of a
 * root (facts/kernels.c): facts of every fixture config, gzip, bad input,
 * release names and order, and kernels_load on fixture roots. */
#include "facts/kconfig.h"
#include "facts/kernels.h"
#include "io/rootfs.h"
#include "lib/util.h"
#include "test.h"
#include "test-fs.h"
#include "../fuzz/kconfig-ref.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

/* ---- helpers ------------------------------------------------------------- */

static char *fixture_text(const char *name, size_t *len)
{
	const char *top = getenv("TOP");
	_cleanup_free_ char *path = xasprintf("%s/tests/fixtures/configs/%s", top ? top : ".", name);
	FILE *f = fopen(path, "rb");
	if (!f) {
		printf("  cannot open %s: %s\n", path, strerror(errno));
		return NULL;
	}
	struct strbuf sb = {0};
	char buf[8192];
	size_t n;
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		sb_appendn(&sb, buf, n);
	fclose(f);
	*len = sb.len;
	return sb_take(&sb);
}

/* Parses a fixture; returns kconfig_parse's result (-ENOENT if missing). */
static int parse_fixture(const char *name, const char *release, struct kconfig_facts *f)
{
	size_t len;
	_cleanup_free_ char *text = fixture_text(name, &len);
	memset(f, 0, sizeof(*f));
	if (!text)
		return -ENOENT;
	unsigned line = 0;
	int r = kconfig_parse(text, len, release, f, &line);
	if (r < 0)
		printf("  %s: parse failed %d at line %u\n", name, r, line);
	return r;
}

static int parse_str(const char *text, const char *release, struct kconfig_facts *f, unsigned *line)
{
	unsigned dummy;
	return kconfig_parse(text, strlen(text), release, f, line ? line : &dummy);
}

/* gzip-compresses with zlib (a gzip member, not a zlib stream). */
static char *gzip_buf(const char *data, size_t len, size_t *out_len)
{
	z_stream zs = {0};
	if (deflateInit2(&zs, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		abort();
	size_t cap = deflateBound(&zs, (uLong)len) + 64;
	char *out = xmalloc(cap);
	zs.next_in = (Bytef *)(uintptr_t)data;
	zs.avail_in = (uInt)len;
	zs.next_out = (Bytef *)out;
	zs.avail_out = (uInt)cap;
	if (deflate(&zs, Z_FINISH) != Z_STREAM_END)
		abort();
	*out_len = zs.total_out;
	deflateEnd(&zs);
	return out;
}

/* ---- fixtures: the facts of DESIGN section 1 ----------------------------- */

TEST(debian12_amd64)
{
	struct kconfig_facts f;
	CHECK_INT(parse_fixture("debian12-amd64.config", "6.1.0-40-amd64", &f), 0);
	CHECK(f.cgroups_built);
	CHECK(f.memcg_built);
	CHECK(f.memcg_v1);
	CHECK_INT(f.family, FAMILY_MAINLINE);
	CHECK_INT(f.default_state, MEMCG_DEFAULT_ON);
	CHECK_INT(f.rule, RULE_DISABLE_WINS);
	CHECK_INT(f.accepts_enable, 0);
	CHECK(f.builtin_cmdline == NULL);
	CHECK_INT(f.builtin_mode, BUILTIN_NONE);
	CHECK_STR(f.arch, "x86");
	CHECK_STR(f.header_version, "6.1.192");
	CHECK(!f.rpi_symbols);
	kconfig_facts_free(&f);
	CHECK(f.arch == NULL);
}

TEST(debian12_cloud_amd64)
{
	struct kconfig_facts f;
	CHECK_INT(parse_fixture("debian12-cloud-amd64.config", NULL, &f), 0);
	CHECK(f.memcg_built);
	CHECK_INT(f.family, FAMILY_MAINLINE);
	CHECK_INT(f.default_state, MEMCG_DEFAULT_ON);
	CHECK_INT(f.rule, RULE_DISABLE_WINS);
	CHECK_INT(f.builtin_mode, BUILTIN_NONE);
	CHECK(f.memcg_v1);
	kconfig_facts_free(&f);
}

TEST(debian12_bpo_612)
{
	struct kconfig_facts f;
	CHECK_INT(parse_fixture("debian12-bpo-6.12-amd64.config", "6.12.12+bpo-amd64", &f), 0);
	CHECK(f.memcg_built);
	CHECK(!f.memcg_v1); /* # CONFIG_MEMCG_V1 is not set */
	CHECK_INT(f.family, FAMILY_MAINLINE);
	CHECK_INT(f.default_state, MEMCG_DEFAULT_ON);
	CHECK_STR(f.header_version, "6.12.117");
	kconfig_facts_free(&f);
}

TEST(debian12_arm64_is_mainline)
{
	/* ARCH_BCM2835 and RASPBERRYPI_FIRMWARE do not make a Pi kernel */
	struct kconfig_facts f;
	CHECK_INT(parse_fixture("debian12-arm64.config", "6.1.0-53-arm64", &f), 0);
	CHECK(f.memcg_built);
	CHECK(!f.rpi_symbols);
	CHECK_INT(f.family, FAMILY_MAINLINE);
	CHECK_INT(f.default_state, MEMCG_DEFAULT_ON);
	CHECK_INT(f.accepts_enable, 0);
	CHECK_STR(f.arch, "arm64");
	CHECK(f.builtin_cmdline == NULL); /* CONFIG_CMDLINE="" */
	CHECK_INT(f.builtin_mode, BUILTIN_NONE);
	kconfig_facts_free(&f);
}

TEST(debian12_rpi_armel_is_mainline)
{
	struct kconfig_facts f;
	CHECK_INT(parse_fixture("debian12-rpi-armel.config", "6.1.0-50-rpi", &f), 0);
	CHECK(f.memcg_built);
	CHECK(!f.rpi_symbols);
	CHECK_INT(f.family, FAMILY_MAINLINE);
	CHECK_INT(f.rule, RULE_DISABLE_WINS);
	CHECK_INT(f.accepts_enable, 0);
	CHECK_STR(f.arch, "arm");
	kconfig_facts_free(&f);
}

TEST(debian_old_316)
{
	struct kconfig_facts f;
	CHECK_INT(parse_fixture("debian8-3.16-amd64.config", "3.16.0-11-amd64", &f), 0);
	CHECK(f.memcg_built);
	CHECK(f.memcg_v1);
	CHECK_INT(f.family, FAMILY_DEBIAN_OLD);
	CHECK_INT(f.default_state, MEMCG_DEFAULT_OFF);
	CHECK_INT(f.rule, RULE_LAST_WINS);
	CHECK_INT(f.accepts_enable, 1);
	CHECK_STR(f.default_reason, "CONFIG_MEMCG_DISABLED=y (Debian 3.6-4.6: memcg off unless cgroup_enable=memory)");
	kconfig_facts_free(&f);
}

TEST(debian_old_32)
{
	struct kconfig_facts f;
	CHECK_INT(parse_fixture("debian7-3.2-amd64.config", NULL, &f), 0);
	CHECK(f.memcg_built); /* CONFIG_CGROUP_MEM_RES_CTLR=y */
	CHECK_INT(f.family, FAMILY_DEBIAN_OLD);
	CHECK_INT(f.default_state, MEMCG_DEFAULT_OFF);
	CHECK_INT(f.rule, RULE_LAST_WINS);
	CHECK_INT(f.accepts_enable, 1);
	CHECK_STR(f.arch, "x86_64");
	CHECK_STR(f.header_version, "3.2.102");
	CHECK(f.default_reason && strstr(f.default_reason, "CONFIG_CGROUP_MEM_RES_CTLR_DISABLED=y"));
	kconfig_facts_free(&f);
}

TEST(suse_proposal_off)
{
	struct kconfig_facts f;
	CHECK_INT(parse_fixture("suse-proposal-4.1-x86_64.config", "4.1.12-1-default", &f), 0);
	CHECK_INT(f.family, FAMILY_SUSE);
	CHECK_INT(f.default_state, MEMCG_DEFAULT_OFF);
	CHECK_INT(f.rule, RULE_LAST_WINS);
	CHECK_INT(f.accepts_enable, 1);
	kconfig_facts_free(&f);
}

TEST(suse_proposal_on)
{
	/* the patch present but the default left on */
	struct kconfig_facts f;
	CHECK_INT(parse_str("CONFIG_CGROUPS=y\nCONFIG_MEMCG=y\nCONFIG_MEMCG_DEFAULT_ENABLED=y\n",
			    "4.4.0", &f, NULL), 0);
	CHECK_INT(f.default_state, MEMCG_DEFAULT_ON);
	CHECK_INT(f.rule, RULE_LAST_WINS);
	CHECK_INT(f.accepts_enable, 1);
	kconfig_facts_free(&f);
}

TEST(rpi_66_by_symbols)
{
	struct kconfig_facts f;
	CHECK_INT(parse_fixture("rpi-6.6-bcm2712.config", NULL, &f), 0);
	CHECK(f.rpi_symbols);
	CHECK(f.memcg_built);
	CHECK(f.memcg_v1);
	CHECK_INT(f.family, FAMILY_RPI);
	CHECK_INT(f.default_state, MEMCG_DEFAULT_OFF);
	CHECK_INT(f.rule, RULE_ENABLE_WINS);
	CHECK_INT(f.accepts_enable, 1);
	CHECK_STR(f.builtin_cmdline, "console=ttyAMA0,115200 kgdboc=ttyAMA0,115200");
	CHECK_INT(f.builtin_mode, BUILTIN_FALLBACK);
	kconfig_facts_free(&f);
}

TEST(rpi_version_from_release)
{
	/* the release decides the version over the header */
	struct kconfig_facts f;
	CHECK_INT(parse_fixture("rpi-6.6-bcm2712.config", "6.12.25+rpt-rpi-2712", &f), 0);
	CHECK_INT(f.family, FAMILY_RPI_FIRMWARE);
	kconfig_facts_free(&f);
	CHECK_INT(parse_fixture("rpi-6.12-bcm2712.config", "6.6.51-v8-16k+", &f), 0);
	CHECK_INT(f.family, FAMILY_RPI);
	kconfig_facts_free(&f);
}

TEST(rpi_612)
{
	struct kconfig_facts f;
	CHECK_INT(parse_fixture("rpi-6.12-bcm2712.config", "6.12.25+rpt-rpi-2712", &f), 0);
	CHECK_INT(f.family, FAMILY_RPI_FIRMWARE);
	CHECK_INT(f.default_state, MEMCG_DEFAULT_OFF);
	CHECK_INT(f.rule, RULE_LAST_WINS);
	CHECK_INT(f.accepts_enable, 1);
	CHECK(!f.memcg_v1);
	kconfig_facts_free(&f);
}

TEST(rpi_by_release_alone)
{
	/* a config without downstream symbols, named like a Pi OS kernel */
	struct kconfig_facts f;
	CHECK_INT(parse_fixture("debian12-arm64.config", "6.6.51+rpt-rpi-v8", &f), 0);
	CHECK_INT(f.family, FAMILY_RPI);
	CHECK_INT(f.rule, RULE_ENABLE_WINS);
	kconfig_facts_free(&f);
	/* 6.7 .. 6.11 count as 6.12 */
	CHECK_INT(parse_fixture("debian12-arm64.config", "6.9.1-v8+", &f), 0);
	CHECK_INT(f.family, FAMILY_RPI_FIRMWARE);
	kconfig_facts_free(&f);
	/* Debian's own Pi kernel name does not count */
	CHECK_INT(parse_fixture("debian12-arm64.config", "6.1.0-50-rpi", &f), 0);
	CHECK_INT(f.family, FAMILY_MAINLINE);
	kconfig_facts_free(&f);
}

TEST(no_memcg)
{
	struct kconfig_facts f;
	CHECK_INT(parse_fixture("no-memcg-x86.config", NULL, &f), 0);
	CHECK(f.cgroups_built);
	CHECK(!f.memcg_built);
	CHECK(!f.memcg_v1);
	CHECK_INT(f.default_state, MEMCG_DEFAULT_OFF);
	CHECK_STR(f.default_reason, "memcg not built (# CONFIG_MEMCG is not set)");
	kconfig_facts_free(&f);
}

TEST(no_cgroups)
{
	/* memcg needs cgroups too */
	struct kconfig_facts f;
	CHECK_INT(parse_str("# CONFIG_CGROUPS is not set\nCONFIG_MEMCG=y\n", NULL, &f, NULL), 0);
	CHECK(!f.cgroups_built);
	CHECK(!f.memcg_built);
	CHECK_INT(f.default_state, MEMCG_DEFAULT_OFF);
	CHECK_STR(f.not_built_reason, "CONFIG_MEMCG=y, but # CONFIG_CGROUPS is not set");
	kconfig_facts_free(&f);
	/* a defconfig names CONFIG_MEMCG=y and leaves CONFIG_CGROUPS out */
	CHECK_INT(parse_str("CONFIG_MEMCG=y\n", NULL, &f, NULL), 0);
	CHECK(!f.memcg_built);
	CHECK_STR(f.not_built_reason, "CONFIG_MEMCG=y, but no CONFIG_CGROUPS=y line: a trimmed config or a defconfig?");
	kconfig_facts_free(&f);
	CHECK_INT(parse_fixture("no-memcg-x86.config", NULL, &f), 0);
	CHECK_STR(f.not_built_reason, "# CONFIG_MEMCG is not set");
	kconfig_facts_free(&f);
}

TEST(cmdline_x86_bool)
{
	struct kconfig_facts f;
	CHECK_INT(parse_fixture("x86-cmdline-bool.config", NULL, &f), 0);
	CHECK_INT(f.builtin_mode, BUILTIN_PREPEND);
	CHECK_STR(f.builtin_cmdline, "quiet cgroup_disable=memory");
	CHECK_INT(f.family, FAMILY_MAINLINE);
	kconfig_facts_free(&f);
}

TEST(cmdline_x86_override)
{
	struct kconfig_facts f;
	CHECK_INT(parse_fixture("x86-cmdline-override.config", NULL, &f), 0);
	CHECK_INT(f.builtin_mode, BUILTIN_OVERRIDE);
	CHECK_STR(f.builtin_cmdline, "root=/dev/vda1 console=ttyS0 dyndbg=\"file init.c +p\"");
	kconfig_facts_free(&f);
}

TEST(cmdline_arm64_force)
{
	struct kconfig_facts f;
	CHECK_INT(parse_fixture("arm64-cmdline-force.config", NULL, &f), 0);
	CHECK_INT(f.builtin_mode, BUILTIN_OVERRIDE);
	CHECK_STR(f.builtin_cmdline, "console=ttyAMA0 cgroup_disable=memory");
	kconfig_facts_free(&f);
}

TEST(cmdline_arm64_extend)
{
	struct kconfig_facts f;
	CHECK_INT(parse_fixture("arm64-cmdline-extend.config", NULL, &f), 0);
	CHECK_INT(f.builtin_mode, BUILTIN_APPEND);
	CHECK_STR(f.builtin_cmdline, "console=ttyAMA0 cgroup.memory=nokmem");
	CHECK_STR(f.header_version, "5.10.209");
	kconfig_facts_free(&f);
}

TEST(cmdline_dt_without_mode)
{
	/* a DT arch with a built-in line and no mode: fallback */
	struct kconfig_facts f;
	CHECK_INT(parse_str("# Linux/arm 5.4.0 Kernel Configuration\nCONFIG_CMDLINE=\"console=ttyS0\"\n",
			    NULL, &f, NULL), 0);
	CHECK_INT(f.builtin_mode, BUILTIN_FALLBACK);
	CHECK_STR(f.arch, "arm");
	kconfig_facts_free(&f);
	/* x86 with CMDLINE_BOOL set but an empty line: nothing built in */
	CHECK_INT(parse_str("# Linux/x86 6.1.0 Kernel Configuration\nCONFIG_CMDLINE_BOOL=y\nCONFIG_CMDLINE=\"\"\n",
			    NULL, &f, NULL), 0);
	CHECK(f.builtin_cmdline == NULL);
	CHECK_INT(f.builtin_mode, BUILTIN_NONE);
	kconfig_facts_free(&f);
}

TEST(cmdline_escapes_and_last_wins)
{
	struct kconfig_facts f;
	CHECK_INT(parse_str("CONFIG_CMDLINE_BOOL=y\nCONFIG_CMDLINE=\"a=\\\\x b=\\\"c d\\\"\"\n",
			    NULL, &f, NULL), 0);
	CHECK_STR(f.builtin_cmdline, "a=\\x b=\"c d\"");
	kconfig_facts_free(&f);
	/* the last assignment of a symbol wins, as in Kconfig */
	CHECK_INT(parse_str("CONFIG_CMDLINE_BOOL=y\nCONFIG_CMDLINE=\"x\"\n# CONFIG_CMDLINE_BOOL is not set\n",
			    NULL, &f, NULL), 0);
	CHECK_INT(f.builtin_mode, BUILTIN_NONE);
	kconfig_facts_free(&f);
}

TEST(memcg_v1_by_version)
{
	struct kconfig_facts f;
	const char *cfg = "CONFIG_CGROUPS=y\nCONFIG_MEMCG=y\n";
	CHECK_INT(parse_str(cfg, "6.6.0", &f, NULL), 0);
	CHECK(f.memcg_v1);
	kconfig_facts_free(&f);
	CHECK_INT(parse_str(cfg, "6.12.0", &f, NULL), 0);
	CHECK(!f.memcg_v1);
	kconfig_facts_free(&f);
	CHECK_INT(parse_str("CONFIG_CGROUPS=y\nCONFIG_MEMCG=y\nCONFIG_MEMCG_V1=y\n", "6.12.0", &f, NULL), 0);
	CHECK(f.memcg_v1);
	kconfig_facts_free(&f);
}

/* ---- bad input ----------------------------------------------------------- */

TEST(bad_line_reported)
{
	struct kconfig_facts f;
	unsigned line = 99;
	CHECK_INT(parse_str("CONFIG_A=y\nhello world\nCONFIG_B=y\n", NULL, &f, &line), -EBADMSG);
	CHECK_INT(line, 2);
	line = 0;
	CHECK_INT(parse_str("CONFIG_A=y\nCONFIG_B y\n", NULL, &f, &line), -EBADMSG);
	CHECK_INT(line, 2);
	CHECK(f.arch == NULL && f.builtin_cmdline == NULL);
}

TEST(bad_no_config_line)
{
	struct kconfig_facts f;
	unsigned line = 99;
	CHECK_INT(parse_str("# only a comment\n\n", NULL, &f, &line), -EBADMSG);
	CHECK_INT(line, 0);
	line = 99;
	CHECK_INT(parse_str("", NULL, &f, &line), -EBADMSG);
	CHECK_INT(line, 0);
}

TEST(bad_unterminated_string)
{
	struct kconfig_facts f;
	unsigned line = 0;
	CHECK_INT(parse_str("CONFIG_A=y\nCONFIG_CMDLINE=\"unterminated\n", NULL, &f, &line), -EBADMSG);
	CHECK_INT(line, 2);
}

/* The line reader's fast paths ("CONFIG_X=V" with a one-byte value, "#
 * CONFIG_X is not set", names scanned 16 and 8 bytes at a time) against
 * the plain reader of tests/fuzz/kconfig-ref.h, which reads a character at
 * a time: every byte value at every place of a name, tracked names and
 * long ones, in each form of line, with more lines after it or at the very
 * end of the text. Same result, same refused line, same facts. */
static bool facts_equal(const struct kconfig_facts *f, const struct kconfig_facts *g)
{
	return f->memcg_built == g->memcg_built && f->cgroups_built == g->cgroups_built &&
	       f->memcg_v1 == g->memcg_v1 && f->rpi_symbols == g->rpi_symbols &&
	       f->default_state == g->default_state && f->rule == g->rule && f->family == g->family &&
	       f->accepts_enable == g->accepts_enable && f->builtin_mode == g->builtin_mode &&
	       streq_ptr(f->default_reason, g->default_reason) &&
	       streq_ptr(f->not_built_reason, g->not_built_reason) &&
	       streq_ptr(f->builtin_cmdline, g->builtin_cmdline) && streq_ptr(f->arch, g->arch) &&
	       streq_ptr(f->header_version, g->header_version);
}

struct sweep {
	unsigned long cases, differ, refused;
};

/* text read by kconfig_parse and by the plain reader: the same result,
 * the same refused line, the same facts */
static void against_plain_reader(struct sweep *sw, const char *text, int len, const char *release)
{
	struct kconfig_facts f, ref;
	unsigned bad = 0, bad_ref = 0;
	int r = kconfig_parse(text, (size_t)len, release, &f, &bad);
	int rr = ref_parse(text, (size_t)len, release, &ref, &bad_ref);
	sw->cases++;
	sw->refused += r < 0;
	if (r != rr || bad != bad_ref || (r == 0 && !facts_equal(&f, &ref))) {
		if (sw->differ++ < 5)
			printf("  differs from the plain reader (%d/%u vs %d/%u): %s\n", r, bad, rr, bad_ref,
			       esc(text));
	}
	kconfig_facts_free(&f);
	kconfig_facts_free(&ref);
}

TEST(fast_paths_match_plain_reader)
{
	static const char *const names[] = { "MEMCG", "MEMCG_DISABLED", "CMDLINE", "CMDLINE_BOOL", "X86", "OF",
					     "CGROUP_MEM_RES_CTLR_DISABLED", "A",
					     "SOME_VERY_LONG_SYMBOL_NAME_abc_0123456789_XYZ" };
	static const char *const forms[][2] = {
		{ "CONFIG_", "=y\n" },	       { "# CONFIG_", " is not set\n" }, { "CONFIG_", "=m" },
		{ "CONFIG_", "=\"a b\"\n" }, { "CONFIG_", "=y \n" },		  { " CONFIG_", "=y\n" },
		{ "# CONFIG_", " is not set" }, { "CONFIG_", "=1\r\n" },
	};
	static const char *const after[] = { "", "CONFIG_CGROUPS=y\n# CONFIG_MEMCG_V1 is not set\n" };
	static const char *const releases[] = { NULL, "6.6.51+rpt-rpi-v8" };
	struct sweep sweep = {0};
	char name[64], text[256];
	for (size_t n = 0; n < ARRAY_SIZE(names); n++) {
		size_t nl = strlen(names[n]);
		for (size_t at = 0; at <= nl; at++) {
			for (int b = 1; b < 256; b++) {
				for (int replace = 0; replace < 2; replace++) {
					if (replace && at == nl)
						continue;
					/* the name with byte b put in at, or in place of the byte there */
					memcpy(name, names[n], at);
					name[at] = (char)b;
					strcpy(name + at + 1, names[n] + at + replace);
					for (size_t fm = 0; fm < ARRAY_SIZE(forms); fm++) {
						for (size_t a = 0; a < ARRAY_SIZE(after); a++) {
							int len = snprintf(text, sizeof(text),
									   "# Linux/arm64 6.6.51 Kernel Configuration\n"
									   "CONFIG_CGROUPS=y\nCONFIG_MEMCG=y\n%s%s%s%s",
									   forms[fm][0], name, forms[fm][1], after[a]);
							against_plain_reader(&sweep, text, len, releases[(fm + a) % 2]);
						}
					}
				}
			}
		}
	}
	/* and every one- and two-byte value, with what ends the line after it */
	static const char *const ends[] = { "\n", "", "\r\n", " \n" };
	for (size_t n = 0; n < 3; n++)
		for (int b = 1; b < 256; b++)
			for (int c = 0; c < 256; c += (c < 40 || c > 120) ? 1 : 17)
				for (size_t e = 0; e < ARRAY_SIZE(ends); e++) {
					char v[3] = { (char)b, (char)c, 0 };
					int len = snprintf(text, sizeof(text),
							   "CONFIG_CGROUPS=y\nCONFIG_%s=%s%s%s", names[n], v, ends[e],
							   e % 2 ? "" : "CONFIG_MEMCG_V1=y\n");
					against_plain_reader(&sweep, text, len, NULL);
				}
	CHECK_INT(sweep.differ, 0);
	/* both outcomes were exercised: most bytes make a bad line, some not */
	CHECK(sweep.refused > 0 && sweep.refused < sweep.cases);
}

TEST(bad_nul_bytes)
{
	struct kconfig_facts f;
	static const char with_nul[] = "CONFIG_A=y\nCONFIG_B=y\nCONFIG_C=\0y\n";
	unsigned line = 0;
	CHECK_INT(kconfig_parse(with_nul, sizeof(with_nul) - 1, NULL, &f, &line), -EBADMSG);
	CHECK_INT(line, 3);
}

TEST(crlf_and_blank_lines)
{
	struct kconfig_facts f;
	unsigned line = 0;
	CHECK_INT(parse_str("\r\n# Linux/x86 6.1.0 Kernel Configuration\r\nCONFIG_CGROUPS=y\r\nCONFIG_MEMCG=y\r\n",
			    NULL, &f, &line), 0);
	CHECK(f.memcg_built);
	CHECK_STR(f.header_version, "6.1.0");
	kconfig_facts_free(&f);
}

/* ---- gzip ---------------------------------------------------------------- */

TEST(gzip_round_trip)
{
	size_t len;
	_cleanup_free_ char *text = fixture_text("debian12-amd64.config", &len);
	CHECK(text != NULL);
	if (!text)
		return;
	size_t gz_len;
	_cleanup_free_ char *gz = gzip_buf(text, len, &gz_len);
	char *out = NULL;
	size_t out_len = 0;
	CHECK_INT(kconfig_inflate(gz, gz_len, 64 << 20, &out, &out_len), 0);
	CHECK_INT(out_len, len);
	CHECK(out && memcmp(out, text, len) == 0 && out[len] == '\0');
	if (!out)
		return;
	struct kconfig_facts f;
	CHECK_INT(kconfig_parse(out, out_len, NULL, &f, NULL), 0);
	CHECK(f.memcg_built && f.default_state == MEMCG_DEFAULT_ON);
	kconfig_facts_free(&f);
	free(out);
}

TEST(gzip_plain_copied)
{
	static const char text[] = "CONFIG_A=y\n";
	char *out = NULL;
	size_t out_len = 0;
	CHECK_INT(kconfig_inflate(text, sizeof(text) - 1, 1024, &out, &out_len), 0);
	CHECK_INT(out_len, sizeof(text) - 1);
	CHECK_STR(out, text);
	free(out);
	out = NULL;
	CHECK_INT(kconfig_inflate(text, sizeof(text) - 1, 4, &out, &out_len), -EFBIG);
	CHECK(out == NULL);
}

TEST(gzip_limit)
{
	size_t len;
	_cleanup_free_ char *text = fixture_text("debian12-cloud-amd64.config", &len);
	if (!text) {
		CHECK(text != NULL);
		return;
	}
	size_t gz_len;
	_cleanup_free_ char *gz = gzip_buf(text, len, &gz_len);
	char *out = NULL;
	size_t out_len;
	/* exactly max is fine, one byte less is too small */
	CHECK_INT(kconfig_inflate(gz, gz_len, len, &out, &out_len), 0);
	CHECK_INT(out_len, len);
	free(out);
	out = NULL;
	CHECK_INT(kconfig_inflate(gz, gz_len, len - 1, &out, &out_len), -EFBIG);
	CHECK(out == NULL);
}

TEST(gzip_concatenated_members)
{
	/* two members, as `cat a.gz b.gz` makes */
	static const char a[] = "CONFIG_A=y\n", b[] = "CONFIG_B=m\n";
	size_t la, lb;
	_cleanup_free_ char *ga = gzip_buf(a, sizeof(a) - 1, &la);
	_cleanup_free_ char *gb = gzip_buf(b, sizeof(b) - 1, &lb);
	struct strbuf two = {0};
	sb_appendn(&two, ga, la);
	sb_appendn(&two, gb, lb);
	char *out = NULL;
	size_t out_len;
	CHECK_INT(kconfig_inflate(two.s, two.len, 1024, &out, &out_len), 0);
	CHECK_STR(out, "CONFIG_A=y\nCONFIG_B=m\n");
	free(out);
	sb_free(&two);
}

TEST(gzip_bomb_limited)
{
	/* 32 MiB of zeros compress to a few KiB: the limit must stop it */
	size_t big = 32u << 20;
	char *zeros = xcalloc(1, big);
	size_t gz_len;
	_cleanup_free_ char *gz = gzip_buf(zeros, big, &gz_len);
	free(zeros);
	CHECK(gz_len < (1u << 20));
	char *out = NULL;
	size_t out_len;
	CHECK_INT(kconfig_inflate(gz, gz_len, 1u << 20, &out, &out_len), -EFBIG);
	CHECK(out == NULL);
}

TEST(gzip_truncated)
{
	size_t len;
	_cleanup_free_ char *text = fixture_text("debian12-arm64.config", &len);
	if (!text) {
		CHECK(text != NULL);
		return;
	}
	size_t gz_len;
	_cleanup_free_ char *gz = gzip_buf(text, len, &gz_len);
	char *out = NULL;
	size_t out_len;
	/* cut in the header, in the data, and in the 8-byte trailer */
	size_t cuts[] = { 2, 5, gz_len / 2, gz_len - 9, gz_len - 4, gz_len - 1 };
	for (size_t i = 0; i < ARRAY_SIZE(cuts); i++) {
		int r = kconfig_inflate(gz, cuts[i], 64 << 20, &out, &out_len);
		if (r != -EBADMSG)
			printf("  cut at %zu of %zu: %d\n", cuts[i], gz_len, r);
		CHECK_INT(r, -EBADMSG);
	}
	CHECK(out == NULL);
}

TEST(gzip_corrupt)
{
	size_t len;
	_cleanup_free_ char *text = fixture_text("debian12-arm64.config", &len);
	if (!text) {
		CHECK(text != NULL);
		return;
	}
	size_t gz_len;
	_cleanup_free_ char *gz = gzip_buf(text, len, &gz_len);
	char *out = NULL;
	size_t out_len;
	/* a flipped byte in the deflate data: bad data or a CRC mismatch */
	_cleanup_free_ char *bad = xmalloc(gz_len);
	memcpy(bad, gz, gz_len);
	bad[gz_len / 2] ^= 0x55;
	CHECK_INT(kconfig_inflate(bad, gz_len, 64 << 20, &out, &out_len), -EBADMSG);
	/* a wrong CRC in the trailer */
	memcpy(bad, gz, gz_len);
	bad[gz_len - 8] ^= 0x01;
	CHECK_INT(kconfig_inflate(bad, gz_len, 64 << 20, &out, &out_len), -EBADMSG);
	/* the magic then garbage */
	CHECK_INT(kconfig_inflate("\x1f\x8bthis is not deflate", 21, 1024, &out, &out_len), -EBADMSG);
	CHECK(out == NULL);
}

/* ---- releases ------------------------------------------------------------ */

TEST(release_rpi_names)
{
	static const struct {
		const char *release;
		bool rpi;
	} cases[] = {
		{ "6.6.51+rpt-rpi-v8", true },
		{ "6.6.51+rpt-rpi-2712", true },
		{ "6.12.25+rpt-rpi-2712", true },
		{ "6.12.25+rpt-rpi-v7l", true },
		{ "6.1.0-rpi7-rpi-v8", true },
		{ "5.10.103-v7l+", true },
		{ "5.10.103-v7+", true },
		{ "6.1.21-v8+", true },
		{ "5.10.92-v6+", true },
		{ "6.6.51-v8-16k", true },
		{ "6.6.51-v8-16k+", true },
		{ "6.6.51-2712", true },
		{ "6.1.0-50-rpi", false },
		{ "6.1.0-53-arm64", false },
		{ "6.1.0-10-amd64", false },
		{ "5.10.103+", false },
		{ "6.6.51-v8-16k-custom", false },
		{ "", false },
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		bool got = release_is_rpi(cases[i].release);
		if (got != cases[i].rpi)
			printf("  release_is_rpi(\"%s\") = %d\n", cases[i].release, got);
		CHECK(got == cases[i].rpi);
	}
	CHECK(!release_is_rpi(NULL));
}

TEST(release_order)
{
	static const struct {
		const char *a, *b;
		int sign;
	} cases[] = {
		{ "6.1.0-10-amd64", "6.1.0-9-amd64", 1 },
		{ "6.1.0-10", "6.1.0-9", 1 },
		{ "6.12.1", "6.6.51", 1 },
		{ "6.6.51", "6.12.1", -1 },
		{ "6.1.0", "6.1.0", 0 },
		{ "6.1.0~rc1", "6.1.0", -1 },
		{ "6.1.0", "6.1.0~rc1", 1 },
		{ "6.1.0-rc1", "6.1.0", 1 }, /* '-' is text: after the end, as dpkg sorts */
		{ "5.10.0-28-amd64", "6.1.0-9-amd64", -1 },
		{ "6.1.010", "6.1.10", 0 },
		{ "6.12.25+rpt-rpi-2712", "6.6.51+rpt-rpi-2712", 1 },
		{ "3.16.0-4-amd64", "3.2.0-4-amd64", 1 },
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		int c = release_compare(cases[i].a, cases[i].b);
		int sign = (c > 0) - (c < 0);
		if (sign != cases[i].sign)
			printf("  release_compare(\"%s\", \"%s\") = %d\n", cases[i].a, cases[i].b, c);
		CHECK_INT(sign, cases[i].sign);
	}
}

TEST(release_version_numbers)
{
	CHECK_INT(release_major_minor("6.12.3-amd64"), 6012);
	CHECK_INT(release_major_minor("6.6.51+rpt-rpi-v8"), 6006);
	CHECK_INT(release_major_minor("2.6.32"), 2006);
	CHECK_INT(release_major_minor("6"), 0);
	CHECK_INT(release_major_minor("linux"), 0);
	CHECK_INT(release_major_minor(NULL), 0);
}

/* ---- kernels_load on fixture roots --------------------------------------- */

static void mkdirs(const char *root, const char *rel)
{
	_cleanup_free_ char *path = path_join(root, rel);
	for (char *p = path + strlen(root) + 1; *p; p++) {
		if (*p == '/') {
			*p = '\0';
			mkdir(path, 0755);
			*p = '/';
		}
	}
	mkdir(path, 0755);
}

static void write_file(const char *root, const char *rel, const char *data, size_t len)
{
	_cleanup_free_ char *path = path_join(root, rel);
	_cleanup_free_ char *dir = xstrdup(rel);
	char *slash = strrchr(dir, '/');
	if (slash && slash != dir) {
		*slash = '\0';
		mkdirs(root, dir);
	}
	FILE *f = fopen(path, "wb");
	if (!f || fwrite(data, 1, len, f) != len || fclose(f) != 0) {
		printf("  cannot write %s\n", path);
		abort();
	}
}

static void write_str(const char *root, const char *rel, const char *s)
{
	write_file(root, rel, s, strlen(s));
}

static void copy_fixture(const char *root, const char *rel, const char *fixture, bool gzip)
{
	size_t len;
	_cleanup_free_ char *text = fixture_text(fixture, &len);
	if (!text)
		abort();
	if (gzip) {
		size_t gz_len;
		_cleanup_free_ char *gz = gzip_buf(text, len, &gz_len);
		write_file(root, rel, gz, gz_len);
	} else {
		write_file(root, rel, text, len);
	}
}

/* The module indexes depmod writes: a header (magic, version 2.1, root
 * offset) is what libkmod checks when it opens them. */
static void fake_depmod(const char *root, const char *ver)
{
	static const unsigned char hdr[12] = { 0xb0, 0x07, 0xf4, 0x57, 0x00, 0x02, 0x00, 0x01,
					       0x00, 0x00, 0x00, 0x0c };
	static const char *const idx[] = { "modules.dep.bin", "modules.alias.bin",
					   "modules.symbols.bin", "modules.builtin.bin",
					   "modules.builtin.alias.bin" };
	for (size_t i = 0; i < ARRAY_SIZE(idx); i++) {
		_cleanup_free_ char *rel = xasprintf("lib/modules/%s/%s", ver, idx[i]);
		write_file(root, rel, (const char *)hdr, sizeof(hdr));
	}
}

static const char system_map_with[] = "ffffffff81000000 T _stext\n"
				      "ffffffff83000000 T start_kernel\n"
				      "ffffffff837b2910 t cgroup_disable\n"
				      "ffffffff837b2950 t cgroup_enable\n"
				      "ffffffff837b2cd0 T cgroup_init_early\n";
static const char system_map_without[] = "ffffffff81000000 T _stext\n"
					 "ffffffff83000000 T start_kernel\n"
					 "ffffffff837b2910 t cgroup_disable\n"
					 "ffffffff837b2960 t cgroup_enable_x\n"
					 "ffffffff837b2cd0 T cgroup_init_early";
static const char system_map_placeholder[] =
	"ffffffffffffffff B The real System.map is in the linux-image-<version>-dbg package\n";

/* One fixture root for the kernels_load tests, built on first use and
 * removed at exit. */
static char fixture_root[] = "/tmp/test-kconfig.XXXXXX";
static bool fixture_ready;

static void remove_fixture_root(void)
{
	rm_rf(fixture_root);
}

static const char *kernels_fixture(void)
{
	if (fixture_ready)
		return fixture_root;
	if (!mkdtemp(fixture_root)) {
		printf("  mkdtemp: %s\n", strerror(errno));
		abort();
	}
	atexit(remove_fixture_root);
	fixture_ready = true;
	const char *d = fixture_root;

	/* 6.1.0-9: module tree with indexes, config in boot (plain), and a
	 * System.map with cgroup_enable although the config is mainline */
	fake_depmod(d, "6.1.0-9-amd64");
	copy_fixture(d, "boot/config-6.1.0-9-amd64", "debian12-amd64.config", false);
	write_str(d, "boot/System.map-6.1.0-9-amd64", system_map_with);
	/* 6.1.0-10: module tree; a config in boot (old Debian) and one in the
	 * module tree (mainline, gzip): boot comes first */
	fake_depmod(d, "6.1.0-10-amd64");
	copy_fixture(d, "boot/config-6.1.0-10-amd64", "debian8-3.16-amd64.config", false);
	copy_fixture(d, "lib/modules/6.1.0-10-amd64/config", "debian12-amd64.config", true);
	write_str(d, "boot/System.map-6.1.0-10-amd64", system_map_without);
	/* 6.12.1: only a vmlinuz; config in lib/modules (gzip) and in
	 * usr/lib/modules: lib comes first; a placeholder System.map */
	write_str(d, "boot/vmlinuz-6.12.1-amd64", "MZ");
	copy_fixture(d, "lib/modules/6.12.1-amd64/config", "debian8-3.16-amd64.config", true);
	copy_fixture(d, "usr/lib/modules/6.12.1-amd64/config", "debian12-amd64.config", false);
	write_str(d, "boot/System.map-6.12.1-amd64", system_map_placeholder);
	/* 6.11.0-1: only a vmlinuz; config only in usr/lib/modules */
	write_str(d, "boot/vmlinuz-6.11.0-1-amd64", "MZ");
	copy_fixture(d, "usr/lib/modules/6.11.0-1-amd64/config", "suse-proposal-4.1-x86_64.config", false);
	/* 6.2.0-1: vmlinuz, no config anywhere */
	write_str(d, "boot/vmlinuz-6.2.0-1-amd64", "MZ");
	/* 6.3.0-1: config corrupt (gzip cut short) */
	write_str(d, "boot/vmlinuz-6.3.0-1-amd64", "MZ");
	write_file(d, "boot/config-6.3.0-1-amd64", "\x1f\x8b\x08\x00\x00\x00", 6);
	/* 6.4.0-1: not a config */
	write_str(d, "boot/vmlinuz-6.4.0-1-amd64", "MZ");
	write_str(d, "boot/config-6.4.0-1-amd64", "CONFIG_A=y\nrubbish here\n");
	/* not kernels: a module tree left behind without indexes, a rescue
	 * image, a vmlinuz named after no release */
	mkdirs(d, "lib/modules/5.10.0-30-amd64/updates/dkms");
	write_str(d, "lib/modules/5.10.0-30-amd64/modules.order", "");
	write_str(d, "boot/vmlinuz-0-rescue-0123456789abcdef", "MZ");
	write_str(d, "boot/vmlinuz-linux", "MZ");
	return d;
}

/* Loads the fixture root's kernels (only: as kernels_load). */
static int load_fixture(const char *only, struct kernel_list *l)
{
	struct root r;
	int rc = root_open(&r, kernels_fixture());
	if (rc < 0) {
		printf("  root_open: %s\n", strerror(-rc));
		memset(l, 0, sizeof(*l));
		return rc;
	}
	rc = kernels_load(&r, only, l);
	root_close(&r);
	return rc;
}

static char *in_fixture(const char *rel)
{
	return path_join(kernels_fixture(), rel);
}

static struct kernel *find_kernel(struct kernel_list *l, const char *ver)
{
	for (size_t i = 0; i < l->n; i++)
		if (streq(l->k[i].version, ver))
			return &l->k[i];
	return NULL;
}

TEST(kernels_listed_newest_first)
{
	struct kernel_list l;
	CHECK_INT(load_fixture(NULL, &l), 0);
	CHECK(l.running_release == NULL);
	static const char *const order[] = { "6.12.1-amd64", "6.11.0-1-amd64", "6.4.0-1-amd64",
					     "6.3.0-1-amd64", "6.2.0-1-amd64", "6.1.0-10-amd64",
					     "6.1.0-9-amd64" };
	CHECK_INT(l.n, ARRAY_SIZE(order));
	for (size_t i = 0; i < ARRAY_SIZE(order) && i < l.n; i++) {
		CHECK_STR(l.k[i].version, order[i]);
		CHECK(l.k[i].installed && !l.k[i].running);
	}
	kernels_free(&l);
	CHECK(l.n == 0 && l.k == NULL);
}

TEST(kernels_installed_by_libkmod)
{
	/* 6.1.0-9 and -10 have no vmlinuz: their module indexes count; the
	 * tree without indexes, the rescue image and "linux" do not */
	struct kernel_list l;
	CHECK_INT(load_fixture(NULL, &l), 0);
	CHECK(find_kernel(&l, "6.1.0-9-amd64") != NULL);
	CHECK(find_kernel(&l, "6.1.0-10-amd64") != NULL);
	CHECK(find_kernel(&l, "5.10.0-30-amd64") == NULL);
	CHECK(find_kernel(&l, "0-rescue-0123456789abcdef") == NULL);
	CHECK(find_kernel(&l, "linux") == NULL);
	kernels_free(&l);
}

TEST(kernels_config_boot_first)
{
	struct kernel_list l;
	CHECK_INT(load_fixture(NULL, &l), 0);
	struct kernel *k = find_kernel(&l, "6.1.0-10-amd64");
	CHECK(k != NULL);
	if (k) {
		_cleanup_free_ char *want = in_fixture("boot/config-6.1.0-10-amd64");
		CHECK_STR(k->config_path, want);
		CHECK_INT(k->config_error, 0);
		CHECK_INT(k->kc.family, FAMILY_DEBIAN_OLD);
	}
	k = find_kernel(&l, "6.1.0-9-amd64");
	if (k) {
		_cleanup_free_ char *want = in_fixture("boot/config-6.1.0-9-amd64");
		CHECK_STR(k->config_path, want);
		CHECK_INT(k->kc.family, FAMILY_MAINLINE);
	}
	CHECK(k != NULL);
	kernels_free(&l);
}

TEST(kernels_config_module_trees)
{
	struct kernel_list l;
	CHECK_INT(load_fixture(NULL, &l), 0);
	/* lib/modules (gzip) before usr/lib/modules */
	struct kernel *k = find_kernel(&l, "6.12.1-amd64");
	CHECK(k != NULL);
	if (k) {
		_cleanup_free_ char *want = in_fixture("lib/modules/6.12.1-amd64/config");
		CHECK_STR(k->config_path, want);
		CHECK_INT(k->config_error, 0);
		CHECK_INT(k->kc.family, FAMILY_DEBIAN_OLD);
	}
	k = find_kernel(&l, "6.11.0-1-amd64");
	CHECK(k != NULL);
	if (k) {
		_cleanup_free_ char *want = in_fixture("usr/lib/modules/6.11.0-1-amd64/config");
		CHECK_STR(k->config_path, want);
		CHECK_INT(k->kc.family, FAMILY_SUSE);
	}
	kernels_free(&l);
}

TEST(kernels_system_map)
{
	struct kernel_list l;
	CHECK_INT(load_fixture(NULL, &l), 0);
	/* cgroup_enable in System.map outranks a mainline config */
	struct kernel *k = find_kernel(&l, "6.1.0-9-amd64");
	CHECK(k != NULL);
	if (k) {
		CHECK_INT(k->kc.accepts_enable, 0);
		CHECK_INT(k->accepts_enable, 1);
		CHECK_STR(k->accepts_enable_source, "System.map-6.1.0-9-amd64");
		_cleanup_free_ char *map = in_fixture("boot/System.map-6.1.0-9-amd64");
		CHECK_STR(k->system_map, map);
	}
	/* no cgroup_enable (only a longer name) outranks an old-Debian config */
	k = find_kernel(&l, "6.1.0-10-amd64");
	CHECK(k != NULL);
	if (k) {
		CHECK_INT(k->kc.accepts_enable, 1);
		CHECK_INT(k->accepts_enable, 0);
		CHECK_STR(k->accepts_enable_source, "System.map-6.1.0-10-amd64");
	}
	kernels_free(&l);
}

TEST(kernels_system_map_placeholder)
{
	/* a System.map without kernel symbols (Ubuntu's placeholder) or none
	 * at all: the config's markers decide */
	struct kernel_list l;
	CHECK_INT(load_fixture(NULL, &l), 0);
	struct kernel *k = find_kernel(&l, "6.12.1-amd64");
	CHECK(k != NULL);
	if (k) {
		CHECK_INT(k->accepts_enable, 1);
		CHECK_STR(k->accepts_enable_source, "config");
		CHECK(k->system_map == NULL);
	}
	k = find_kernel(&l, "6.11.0-1-amd64");
	CHECK(k != NULL);
	if (k) {
		CHECK_INT(k->accepts_enable, 1);
		CHECK_STR(k->accepts_enable_source, "config");
	}
	kernels_free(&l);
}

TEST(kernels_config_missing)
{
	struct kernel_list l;
	CHECK_INT(load_fixture(NULL, &l), 0);
	struct kernel *k = find_kernel(&l, "6.2.0-1-amd64");
	CHECK(k != NULL);
	if (k) {
		CHECK_INT(k->config_error, -EXIT_BADINPUT);
		CHECK(k->config_path == NULL);
		CHECK(!k->kc.memcg_built);
		CHECK_INT(k->accepts_enable, 0);
		CHECK_STR(k->accepts_enable_source, "config");
	}
	kernels_free(&l);
}

TEST(kernels_config_corrupt)
{
	struct kernel_list l;
	CHECK_INT(load_fixture(NULL, &l), 0);
	struct kernel *k = find_kernel(&l, "6.3.0-1-amd64");
	CHECK(k && k->config_error == -EXIT_BADINPUT);
	if (k) {
		_cleanup_free_ char *want = in_fixture("boot/config-6.3.0-1-amd64");
		CHECK_STR(k->config_path, want);
	}
	k = find_kernel(&l, "6.4.0-1-amd64");
	CHECK(k && k->config_error == -EXIT_BADINPUT);
	kernels_free(&l);
}

TEST(kernels_default_newest)
{
	struct kernel_list l;
	CHECK_INT(load_fixture(NULL, &l), 0);
	struct kernel *def = kernels_default(&l);
	CHECK(def && streq(def->version, "6.12.1-amd64"));
	kernels_free(&l);
}

TEST(kernels_only_one)
{
	struct kernel_list l;
	CHECK_INT(load_fixture("6.1.0-10-amd64", &l), 0);
	CHECK_INT(l.n, 1);
	CHECK(l.n == 1 && l.k[0].installed && l.k[0].kc.family == FAMILY_DEBIAN_OLD);
	struct kernel *def = kernels_default(&l);
	CHECK(def && streq(def->version, "6.1.0-10-amd64"));
	kernels_free(&l);

	/* a version that is not installed still gets its entry (and the
	 * default), with the config error */
	CHECK_INT(load_fixture("7.0.0-1-amd64", &l), 0);
	CHECK(l.n == 1 && !l.k[0].installed && l.k[0].config_error == -EXIT_BADINPUT);
	def = kernels_default(&l);
	CHECK(def && streq(def->version, "7.0.0-1-amd64"));
	kernels_free(&l);
}

TEST(kernels_bad_release)
{
	struct kernel_list l;
	CHECK_INT(load_fixture("../../etc", &l), -EXIT_USAGE);
	CHECK(l.n == 0);
	kernels_free(&l);
}

TEST(kernels_confined_to_root)
{
	/* an absolute symlink to the host's /proc/config.gz resolves inside
	 * the root, where there is none */
	const char *d = kernels_fixture();
	_cleanup_free_ char *link = path_join(d, "boot/config-6.5.0-1-amd64");
	write_str(d, "boot/vmlinuz-6.5.0-1-amd64", "MZ");
	CHECK_INT(symlink("/../../../../proc/config.gz", link), 0);
	struct kernel_list l;
	CHECK_INT(load_fixture("6.5.0-1-amd64", &l), 0);
	CHECK(l.n == 1 && l.k[0].config_error == -EXIT_BADINPUT && l.k[0].config_path == NULL);
	kernels_free(&l);
	unlink(link);
	_cleanup_free_ char *vmlinuz = path_join(d, "boot/vmlinuz-6.5.0-1-amd64");
	unlink(vmlinuz);
}

TEST(kernels_empty_root)
{
	char tmpl[] = "/tmp/test-kconfig.XXXXXX";
	char *empty = mkdtemp(tmpl);
	CHECK(empty != NULL);
	if (!empty)
		return;
	struct root r;
	struct kernel_list l;
	CHECK_INT(root_open(&r, empty), 0);
	CHECK_INT(kernels_load(&r, NULL, &l), 0);
	CHECK_INT(l.n, 0);
	CHECK(kernels_default(&l) == NULL);
	kernels_free(&l);
	root_close(&r);
	rm_rf(empty);
}

/* The live system: what it holds depends on the machine, so each check is
 * made where the machine has the thing checked. */
TEST(kernels_live)
{
	struct root r;
	CHECK_INT(root_open(&r, NULL), 0);
	struct kernel_list l;
	CHECK_INT(kernels_load(&r, NULL, &l), 0);
	struct utsname u;
	uname(&u);
	CHECK_STR(l.running_release, u.release);
	size_t running = 0;
	struct kernel *rk = NULL;
	for (size_t i = 0; i < l.n; i++) {
		if (l.k[i].running) {
			running++;
			rk = &l.k[i];
		}
	}
	CHECK_INT(running, 1);
	CHECK(kernels_default(&l) != NULL);
	if (rk && access("/proc/config.gz", R_OK) == 0) {
		CHECK_STR(rk->config_path, "/proc/config.gz");
		CHECK_INT(rk->config_error, 0);
		CHECK(rk->kc.header_version != NULL);
	}
	if (rk && access("/proc/kallsyms", R_OK) == 0)
		CHECK_STR(rk->accepts_enable_source, "/proc/kallsyms");
	kernels_free(&l);
	root_close(&r);
}

TEST_MAIN(T(debian12_amd64), T(debian12_cloud_amd64), T(debian12_bpo_612),
	  T(debian12_arm64_is_mainline), T(debian12_rpi_armel_is_mainline), T(debian_old_316),
	  T(debian_old_32), T(suse_proposal_off), T(suse_proposal_on), T(rpi_66_by_symbols),
	  T(rpi_version_from_release), T(rpi_612), T(rpi_by_release_alone), T(no_memcg),
	  T(no_cgroups), T(cmdline_x86_bool), T(cmdline_x86_override), T(cmdline_arm64_force),
	  T(cmdline_arm64_extend), T(cmdline_dt_without_mode), T(cmdline_escapes_and_last_wins),
	  T(memcg_v1_by_version), T(bad_line_reported), T(bad_no_config_line),
	  T(bad_unterminated_string), T(bad_nul_bytes), T(fast_paths_match_plain_reader), T(crlf_and_blank_lines), T(gzip_round_trip),
	  T(gzip_plain_copied), T(gzip_limit), T(gzip_concatenated_members), T(gzip_bomb_limited),
	  T(gzip_truncated), T(gzip_corrupt), T(release_rpi_names), T(release_order),
	  T(release_version_numbers), T(kernels_listed_newest_first),
	  T(kernels_installed_by_libkmod), T(kernels_config_boot_first),
	  T(kernels_config_module_trees), T(kernels_system_map), T(kernels_system_map_placeholder),
	  T(kernels_config_missing), T(kernels_config_corrupt), T(kernels_default_newest),
	  T(kernels_only_one), T(kernels_bad_release), T(kernels_confined_to_root),
	  T(kernels_empty_root), T(kernels_live))
