/* fuzz-kconfig.c - the kernel config reader: kconfig_inflate (gzip by its
 * magic bytes, else plain) and kconfig_parse, src/kconfig.c; and the
 * release helpers. The first byte chooses:
 *   bit 0      the rest is gzip-compressed here first: inflate must give it
 *              back exactly, and every truncation of the gzip data must be
 *              refused (-EBADMSG), never read as a shorter config;
 *   bits 1-3   the kernel release the config is parsed for.
 * Properties: inflate returns 0, -EBADMSG or -EFBIG; a refused config names
 * a line inside the text (or 0); parsing is deterministic and gives what
 * the plain character-at-a-time reader of kconfig-ref.h gives (result,
 * refused line, every fact); release_compare is antisymmetric on the first
 * two lines. */
#include "fuzz.h"

#include <errno.h>
#include <zlib.h>

#include "facts/kconfig.h"
#include "kconfig-ref.h"

#define MAX_TEXT (1u << 20)

static const char *const releases[8] = {
	NULL, "6.1.0-13-amd64", "6.6.51+rpt-rpi-v8", "6.12.25+rpt-rpi-2712",
	"3.16.0-4-amd64", "4.1.12-1-default", "6.1.0-50-rpi", "5.10.103-v7l+",
};

static char *gzip_of(const char *data, size_t len, size_t *out_len)
{
	z_stream zs = { 0 };
	FUZZ_CHECK(deflateInit2(&zs, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) == Z_OK);
	size_t cap = deflateBound(&zs, (uLong)len) + 64;
	char *out = xmalloc(cap);
	zs.next_in = (Bytef *)(uintptr_t)data;
	zs.avail_in = (uInt)len;
	zs.next_out = (Bytef *)out;
	zs.avail_out = (uInt)cap;
	FUZZ_CHECK(deflate(&zs, Z_FINISH) == Z_STREAM_END);
	*out_len = cap - zs.avail_out;
	deflateEnd(&zs);
	return out;
}

static unsigned count_lines(const char *text, size_t len)
{
	unsigned n = 1;
	for (size_t i = 0; i < len; i++)
		n += text[i] == '\n';
	return n;
}

static int sign(int v) { return (v > 0) - (v < 0); }

static void check_releases(const char *text, size_t len)
{
	const char *nl = memchr(text, '\n', len);
	if (!nl)
		return;
	const char *nl2 = memchr(nl + 1, '\n', len - (size_t)(nl + 1 - text));
	if (!nl2)
		return;
	char *a = xstrndup(text, (size_t)(nl - text));
	char *b = xstrndup(nl + 1, (size_t)(nl2 - nl - 1));
	FUZZ_CHECK(release_compare(a, a) == 0);
	FUZZ_CHECK(sign(release_compare(a, b)) == -sign(release_compare(b, a)));
	(void)release_is_rpi(a);
	(void)release_major_minor(a);
	free(a);
	free(b);
}

static void same_facts(const struct kconfig_facts *f, const struct kconfig_facts *g)
{
	FUZZ_CHECK(f->memcg_built == g->memcg_built && f->cgroups_built == g->cgroups_built);
	FUZZ_CHECK(f->memcg_v1 == g->memcg_v1 && f->rpi_symbols == g->rpi_symbols);
	FUZZ_CHECK(f->default_state == g->default_state && f->rule == g->rule && f->family == g->family);
	FUZZ_CHECK(f->accepts_enable == g->accepts_enable && f->builtin_mode == g->builtin_mode);
	FUZZ_CHECK(streq_ptr(f->default_reason, g->default_reason));
	FUZZ_CHECK(streq_ptr(f->not_built_reason, g->not_built_reason));
	FUZZ_CHECK(streq_ptr(f->builtin_cmdline, g->builtin_cmdline));
	FUZZ_CHECK(streq_ptr(f->arch, g->arch) && streq_ptr(f->header_version, g->header_version));
}

static void parse(const char *text, size_t len, const char *release)
{
	struct kconfig_facts f, g, ref;
	unsigned bad = 0, bad2 = 0, bad_ref = 0;
	int r = kconfig_parse(text, len, release, &f, &bad);
	FUZZ_CHECK(r == 0 || r == -EBADMSG);
	if (r < 0)
		FUZZ_CHECK(bad <= count_lines(text, len));
	int r2 = kconfig_parse(text, len, release, &g, &bad2);
	FUZZ_CHECK(r2 == r && bad2 == bad);
	int rr = ref_parse(text, len, release, &ref, &bad_ref);
	FUZZ_CHECK(rr == r && bad_ref == bad);
	if (r == 0) {
		same_facts(&f, &g);
		same_facts(&f, &ref);
		FUZZ_CHECK(f.builtin_cmdline == NULL || *f.builtin_cmdline);
	}
	kconfig_facts_free(&f);
	kconfig_facts_free(&g);
	kconfig_facts_free(&ref);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	unsigned sel = data[0];
	const char *in = (const char *)data + 1;
	size_t in_len = size - 1;
	const char *release = releases[(sel >> 1) & 7];

	char *text = NULL;
	size_t len = 0;
	if (sel & 1) {
		size_t glen;
		char *gz = gzip_of(in, in_len, &glen);
		FUZZ_CHECK(kconfig_inflate(gz, glen, MAX_TEXT, &text, &len) == (in_len > MAX_TEXT ? -EFBIG : 0));
		if (text) {
			FUZZ_CHECK(fuzz_same(text, len, in, in_len) && text[len] == '\0');
		}
		/* a truncated file is refused; where it is cut comes from the data */
		size_t cut = in_len ? (unsigned char)in[in_len - 1] % glen : 0;
		char *t2 = NULL;
		size_t l2 = 0;
		int r = kconfig_inflate(gz, cut < 2 ? 2 : cut, MAX_TEXT, &t2, &l2);
		FUZZ_CHECK(r == -EBADMSG);
		free(t2);
		free(gz);
	} else {
		int r = kconfig_inflate(in, in_len, MAX_TEXT, &text, &len);
		FUZZ_CHECK(r == 0 || r == -EBADMSG || r == -EFBIG);
		if (r == 0)
			FUZZ_CHECK(text[len] == '\0');
	}
	if (text)
		parse(text, len, release);
	free(text);
	check_releases(in, in_len);
	return 0;
}
