/* fuzz-ikconfig.c - the config a kernel carries (src/ikconfig.c: the image
 * payload finder, the IKCFG block, configs.ko) and the decompressors'
 * framing under it (src/decompress.c). The first byte chooses:
 *   0  the rest is a kernel image: ikconfig_from_image;
 *   1  the rest is a configs.ko (plain or packed): ikconfig_from_module;
 *   2  the rest is a compressed stream of the format the second byte
 *      names: decompress_stream and decompress_buffer;
 *   3  the rest is a config: it is put in an IKCFG block (gzip, as the
 *      kernel build does) inside an uncompressed image, a gzip-packed
 *      image and a gzip-packed module, and must come back byte for byte.
 * Properties: only the documented return values; a found config is
 * NUL-terminated, within the bound, with a container; the same input
 * gives the same answer; streaming and whole-buffer inflation agree;
 * nothing is printed. */
#include "fuzz.h"

#include <errno.h>
#include <zlib.h>

#include "facts/ikconfig.h"

#define MAX_OUT ((size_t)4 << 20)

static bool documented(int rc)
{
	return rc == 0 || rc == -ENOENT || rc == -ENOMSG || rc == -EBADMSG || rc == -EFBIG || rc == -ENOPKG ||
	       rc == -ENOMEM;
}

static unsigned char *gzip_of(const unsigned char *data, size_t len, size_t *out_len)
{
	z_stream zs = { 0 };
	FUZZ_CHECK(deflateInit2(&zs, 9, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) == Z_OK);
	size_t cap = deflateBound(&zs, (uLong)len) + 64;
	unsigned char *out = xmalloc(cap);
	zs.next_in = (Bytef *)(uintptr_t)data;
	zs.avail_in = (uInt)len;
	zs.next_out = out;
	zs.avail_out = (uInt)cap;
	FUZZ_CHECK(deflate(&zs, Z_FINISH) == Z_STREAM_END);
	*out_len = cap - zs.avail_out;
	deflateEnd(&zs);
	return out;
}

static void check_found(int rc, const struct ikconfig *c)
{
	FUZZ_CHECK(documented(rc));
	if (rc == 0) {
		FUZZ_CHECK(c->text != NULL && c->text[c->len] == '\0');
		FUZZ_CHECK(c->container != NULL);
		FUZZ_CHECK(c->len <= ((size_t)16 << 20));
	}
}

typedef int (*reader)(const unsigned char *, size_t, struct ikconfig *);

static void read_twice(reader fn, const unsigned char *p, size_t len)
{
	struct ikconfig a, b;
	int ra = fn(p, len, &a);
	check_found(ra, &a);
	int rb = fn(p, len, &b);
	FUZZ_CHECK(ra == rb);
	if (ra == 0)
		FUZZ_CHECK(fuzz_same(a.text, a.len, b.text, b.len) && a.packing == b.packing);
	ikconfig_free(&a);
	ikconfig_free(&b);
}

struct collect {
	unsigned char *buf;
	size_t len;
};

static int collect_sink(void *data, const unsigned char *buf, size_t len)
{
	struct collect *c = data;
	c->buf = xrealloc(c->buf, c->len + len + 1);
	memcpy(c->buf + c->len, buf, len);
	c->len += len;
	return 0;
}

static void check_stream(enum comp_format f, const unsigned char *p, size_t len)
{
	struct collect c = { 0 };
	size_t produced = 0;
	int rs = decompress_stream(f, p, len, MAX_OUT, collect_sink, &c, &produced);
	FUZZ_CHECK(rs == 0 || rs == -EBADMSG || rs == -EFBIG || rs == -ENOPKG || rs == -ENOMEM);
	FUZZ_CHECK(produced == c.len && produced <= MAX_OUT);
	char *out = NULL;
	size_t out_len = 0;
	int rb = decompress_buffer(f, p, len, MAX_OUT, &out, &out_len);
	FUZZ_CHECK(rb == rs);
	if (rb == 0) {
		FUZZ_CHECK(out[out_len] == '\0');
		FUZZ_CHECK(fuzz_same(out, out_len, (const char *)c.buf, c.len));
	}
	free(out);
	free(c.buf);
}

/* zeros, the block holding cfg, zeros */
static unsigned char *image_with(const unsigned char *cfg, size_t len, size_t *img_len)
{
	size_t gz_len;
	_cleanup_free_ unsigned char *gz = gzip_of(cfg, len, &gz_len);
	size_t n = 64 + 8 + gz_len + 8 + 64;
	unsigned char *img = xcalloc(n, 1);
	memcpy(img + 64, "IKCFG_ST", 8);
	memcpy(img + 72, gz, gz_len);
	memcpy(img + 72 + gz_len, "IKCFG_ED", 8);
	*img_len = n;
	return img;
}

static void check_comes_back(reader fn, const unsigned char *img, size_t len, const unsigned char *cfg,
			     size_t cfg_len, enum comp_format packing)
{
	struct ikconfig c;
	int rc = fn(img, len, &c);
	FUZZ_CHECK(rc == 0);
	if (rc == 0) {
		FUZZ_CHECK(fuzz_same(c.text, c.len, (const char *)cfg, cfg_len));
		FUZZ_CHECK(c.packing == packing);
	}
	ikconfig_free(&c);
}

static void check_round_trip(const unsigned char *cfg, size_t len)
{
	if (memmem(cfg, len, "IKCFG_", 6))
		return; /* the config's own text would hold a marker */
	size_t img_len, packed_len;
	_cleanup_free_ unsigned char *img = image_with(cfg, len, &img_len);
	/* the compressed block itself could show a marker by chance */
	if (memmem(img + 72, img_len - 72 - 72, "IKCFG_", 6))
		return;
	check_comes_back(ikconfig_from_image, img, img_len, cfg, len, COMP_NONE);
	check_comes_back(ikconfig_from_module, img, img_len, cfg, len, COMP_NONE);
	_cleanup_free_ unsigned char *packed = gzip_of(img, img_len, &packed_len);
	check_comes_back(ikconfig_from_image, packed, packed_len, cfg, len, COMP_GZIP);
	check_comes_back(ikconfig_from_module, packed, packed_len, cfg, len, COMP_GZIP);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	struct fuzz_capture cap;
	fuzz_capture_begin(&cap);
	const unsigned char *p = data + 1;
	size_t len = size - 1;
	switch (data[0] % 4) {
	case 0:
		read_twice(ikconfig_from_image, p, len);
		break;
	case 1:
		read_twice(ikconfig_from_module, p, len);
		break;
	case 2:
		if (len >= 1)
			check_stream((enum comp_format)(1 + p[0] % (COMP_COUNT - 1)), p + 1, len - 1);
		break;
	default:
		check_round_trip(p, len);
		break;
	}
	/* pure readers: the caller says what went wrong, they print nothing */
	FUZZ_CHECK(*fuzz_capture_end(&cap) == '\0');
	fuzz_capture_free(&cap);
	return 0;
}
