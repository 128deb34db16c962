/* io/decompress.c - streaming decompression of the formats a kernel image can
 * be packed with (io/decompress.h). Each decoder hands its output to the sink
 * in chunks of at most CHUNK bytes and stops at the end of its stream: a
 * kernel's payload is followed by other bytes (the 4-byte size the kernel's
 * build appends, the rest of a zImage). */
#include "io/decompress.h"
#include "io/dynlib.h"
#include "lib/util.h"

#include <bzlib.h>
#include <dlfcn.h>
#include <errno.h>
#include <lz4.h>
#include <lzma.h>
#include <lzo/lzo1x.h>
#include <stdint.h>
#include <zstd.h>

#define CHUNK ((size_t)256 << 10)

const char *comp_name(enum comp_format f)
{
	static const char *const names[COMP_COUNT] = {
		[COMP_NONE] = "plain", [COMP_GZIP] = "gzip", [COMP_XZ] = "xz",	     [COMP_LZMA] = "lzma",
		[COMP_ZSTD] = "zstd",  [COMP_LZ4] = "lz4",   [COMP_BZIP2] = "bzip2", [COMP_LZO] = "lzo",
	};
	return (unsigned)f < COMP_COUNT ? names[f] : "?";
}

static uint32_t le32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint32_t be32(const unsigned char *p)
{
	return (uint32_t)p[3] | (uint32_t)p[2] << 8 | (uint32_t)p[1] << 16 | (uint32_t)p[0] << 24;
}

static bool has(const unsigned char *p, size_t len, const char *magic, size_t n)
{
	return len >= n && memcmp(p, magic, n) == 0;
}

enum comp_format comp_detect(const unsigned char *p, size_t len)
{
	if (has(p, len, "\x1f\x8b\x08", 3))
		return COMP_GZIP;
	if (has(p, len,
		"\xfd"
		"7zXZ\0",
		6))
		return COMP_XZ;
	if (has(p, len, "\x28\xb5\x2f\xfd", 4))
		return COMP_ZSTD;
	if (has(p, len, "\x02\x21\x4c\x18", 4))
		return COMP_LZ4;
	if (len >= 10 && has(p, len, "BZh", 3) && p[3] >= '1' && p[3] <= '9' &&
	    memcmp(p + 4, "\x31\x41\x59\x26\x53\x59", 6) == 0)
		return COMP_BZIP2;
	if (has(p, len, "\x89LZO\0\r\n\x1a\n", 9))
		return COMP_LZO;
	/* .lzma: properties 0x5d (lc=3 lp=0 pb=2, what every lzma tool
	 * writes by default), a power-of-two dictionary of 64 KiB..1 GiB, and
	 * the uncompressed size (all ones when the tool did not know it) */
	if (len >= 13 && p[0] == 0x5d) {
		uint32_t dict = le32(p + 1);
		if (dict >= (1u << 16) && dict <= (1u << 30) && (dict & (dict - 1)) == 0)
			return COMP_LZMA;
	}
	return COMP_NONE;
}

/* ---- libraries loaded on first use --------------------------------------- */

static struct {
	int state;
	struct zlib_fns fn;
} zlib;

const struct zlib_fns *zlib_fns(void)
{
	if (!DYNLIB_LOAD(zlib, "libz.so.1", "inflateInit2_", "inflate", "inflateEnd", "inflateReset"))
		return NULL;
	return &zlib.fn;
}

static struct {
	int state;
	struct {
		__typeof__(&lzma_stream_decoder) stream_decoder;
		__typeof__(&lzma_alone_decoder) alone_decoder;
		__typeof__(&lzma_code) code;
		__typeof__(&lzma_end) end;
	} fn;
} xzlib;

static struct {
	int state;
	struct {
		__typeof__(&ZSTD_createDStream) create;
		__typeof__(&ZSTD_freeDStream) free;
		__typeof__(&ZSTD_decompressStream) decompress;
		__typeof__(&ZSTD_isError) is_error;
	} fn;
} zstdlib;

static struct {
	int state;
	struct {
		__typeof__(&LZ4_decompress_safe) decompress_safe;
	} fn;
} lz4lib;

static struct {
	int state;
	struct {
		__typeof__(&BZ2_bzDecompressInit) init;
		__typeof__(&BZ2_bzDecompress) decompress;
		__typeof__(&BZ2_bzDecompressEnd) end;
	} fn;
} bz2lib;

static struct {
	int state;
	struct {
		__typeof__(&__lzo_init_v2) init;
		__typeof__(&lzo1x_decompress_safe) decompress_safe;
	} fn;
} lzolib;

/* ---- output accounting --------------------------------------------------- */

struct out {
	comp_sink sink;
	void *data;
	size_t produced, max;
};

/* Returns 0, 1 (sink stopped), -EFBIG or the sink's error. */
static int emit(struct out *o, const unsigned char *buf, size_t n)
{
	if (n == 0)
		return 0;
	if (n > o->max - o->produced)
		return -EFBIG;
	o->produced += n;
	return o->sink(o->data, buf, n);
}

/* ---- one decoder per format ---------------------------------------------- */

static int run_gzip(const unsigned char *in, size_t len, struct out *o, unsigned char *buf)
{
	const struct zlib_fns *z = zlib_fns();
	if (!z)
		return -ENOPKG;
	z_stream zs = { 0 };
	if (ZLIB_INFLATE_INIT2(z, &zs, 16 + MAX_WBITS) != Z_OK)
		return -ENOMEM;
	zs.next_in = (Bytef *)(uintptr_t)in;
	zs.avail_in = len > UINT32_MAX ? UINT32_MAX : (uInt)len;
	int r;
	for (;;) {
		zs.next_out = buf;
		zs.avail_out = (uInt)CHUNK;
		int zr = z->inflate(&zs, Z_NO_FLUSH);
		r = emit(o, buf, CHUNK - zs.avail_out);
		if (r)
			break;
		if (zr == Z_STREAM_END)
			break;
		if (zr == Z_OK)
			continue;
		r = zr == Z_MEM_ERROR ? -ENOMEM : -EBADMSG; /* truncated, corrupt */
		break;
	}
	z->inflate_end(&zs);
	return r;
}

static int run_xz(enum comp_format f, const unsigned char *in, size_t len, struct out *o, unsigned char *buf)
{
	if (!DYNLIB_LOAD(xzlib, "liblzma.so.5", "lzma_stream_decoder", "lzma_alone_decoder", "lzma_code", "lzma_end"))
		return -ENOPKG;
	lzma_stream s = LZMA_STREAM_INIT;
	lzma_ret z = f == COMP_XZ ? xzlib.fn.stream_decoder(&s, UINT64_MAX, 0) : xzlib.fn.alone_decoder(&s, UINT64_MAX);
	if (z != LZMA_OK)
		return z == LZMA_MEM_ERROR ? -ENOMEM : -EBADMSG;
	s.next_in = in;
	s.avail_in = len;
	int r;
	for (;;) {
		s.next_out = buf;
		s.avail_out = CHUNK;
		z = xzlib.fn.code(&s, LZMA_FINISH);
		r = emit(o, buf, CHUNK - s.avail_out);
		if (r || z == LZMA_STREAM_END)
			break;
		if (z == LZMA_OK)
			continue;
		r = z == LZMA_MEM_ERROR ? -ENOMEM : -EBADMSG;
		break;
	}
	xzlib.fn.end(&s);
	return r;
}

static int run_zstd(const unsigned char *in, size_t len, struct out *o, unsigned char *buf)
{
	if (!DYNLIB_LOAD(zstdlib, "libzstd.so.1", "ZSTD_createDStream", "ZSTD_freeDStream", "ZSTD_decompressStream",
			 "ZSTD_isError"))
		return -ENOPKG;
	ZSTD_DStream *ds = zstdlib.fn.create();
	if (!ds)
		return -ENOMEM;
	ZSTD_inBuffer zin = { in, len, 0 };
	int r;
	for (;;) {
		ZSTD_outBuffer zout = { buf, CHUNK, 0 };
		size_t before = zin.pos;
		size_t z = zstdlib.fn.decompress(ds, &zout, &zin);
		if (zstdlib.fn.is_error(z)) {
			r = -EBADMSG;
			break;
		}
		r = emit(o, buf, zout.pos);
		if (r || z == 0) /* 0: the frame is complete */
			break;
		if (zin.pos == before && zout.pos < CHUNK) {
			r = -EBADMSG; /* no progress: the input ended inside the frame */
			break;
		}
	}
	zstdlib.fn.free(ds);
	return r;
}

#define LZ4_LEGACY_BLOCK ((size_t)8 << 20)

/* The legacy frame of `lz4 -l`: the magic, then blocks of a 32-bit size
 * and data, each inflating to at most 8 MiB. It has no end mark: the input
 * ends, another stream's magic follows, or a word that cannot be a block
 * size (the kernel's build appends the uncompressed size). */
static int run_lz4(const unsigned char *in, size_t len, struct out *o)
{
	if (!DYNLIB_LOAD(lz4lib, "liblz4.so.1", "LZ4_decompress_safe"))
		return -ENOPKG;
	_cleanup_free_ unsigned char *block = xmalloc(LZ4_LEGACY_BLOCK);
	size_t pos = 4, blocks = 0;
	const size_t bound = (size_t)LZ4_COMPRESSBOUND(LZ4_LEGACY_BLOCK);
	while (len - pos >= 4) {
		uint32_t size = le32(in + pos);
		if (size == 0x184c2102) {
			pos += 4;
			continue;
		}
		if (size == 0 || size > bound || size > len - pos - 4) {
			if (blocks)
				return 0;
			return -EBADMSG;
		}
		int n = lz4lib.fn.decompress_safe((const char *)in + pos + 4, (char *)block, (int)size,
						  (int)LZ4_LEGACY_BLOCK);
		if (n < 0)
			return blocks && pos + 4 + size == len ? 0 : -EBADMSG;
		int r = emit(o, block, (size_t)n);
		if (r)
			return r;
		pos += 4 + size;
		blocks++;
	}
	return blocks ? 0 : -EBADMSG;
}

static int run_bzip2(const unsigned char *in, size_t len, struct out *o, unsigned char *buf)
{
	if (!DYNLIB_LOAD(bz2lib, "libbz2.so.1.0", "BZ2_bzDecompressInit", "BZ2_bzDecompress", "BZ2_bzDecompressEnd"))
		return -ENOPKG;
	bz_stream s = { 0 };
	if (bz2lib.fn.init(&s, 0, 0) != BZ_OK)
		return -ENOMEM;
	s.next_in = (char *)(uintptr_t)in;
	s.avail_in = len > UINT32_MAX ? UINT32_MAX : (unsigned)len;
	int r;
	for (;;) {
		s.next_out = (char *)buf;
		s.avail_out = (unsigned)CHUNK;
		unsigned in_before = s.avail_in;
		int z = bz2lib.fn.decompress(&s);
		r = emit(o, buf, CHUNK - s.avail_out);
		if (r || z == BZ_STREAM_END)
			break;
		if (z == BZ_OK && (s.avail_in < in_before || s.avail_out == 0))
			continue;
		r = z == BZ_MEM_ERROR ? -ENOMEM : -EBADMSG; /* corrupt, or truncated */
		break;
	}
	bz2lib.fn.end(&s);
	return r;
}

/* lzop's flags (its file format, as lzop 1.04 writes it) */
#define LZOP_ADLER32_D 0x1u
#define LZOP_ADLER32_C 0x2u
#define LZOP_EXTRA_FIELD 0x40u
#define LZOP_CRC32_D 0x100u
#define LZOP_CRC32_C 0x200u
#define LZOP_FILTER 0x800u
#define LZOP_BLOCK_MAX ((size_t)64 << 20)

struct cursor {
	const unsigned char *p;
	size_t left;
	bool short_read;
};

static const unsigned char *take(struct cursor *c, size_t n)
{
	if (c->short_read || c->left < n) {
		c->short_read = true;
		return NULL;
	}
	const unsigned char *p = c->p;
	c->p += n;
	c->left -= n;
	return p;
}

static uint32_t take_be32(struct cursor *c)
{
	const unsigned char *p = take(c, 4);
	return p ? be32(p) : 0;
}

static unsigned take_be16(struct cursor *c)
{
	const unsigned char *p = take(c, 2);
	return p ? (unsigned)p[0] << 8 | p[1] : 0;
}

static int run_lzo(const unsigned char *in, size_t len, struct out *o)
{
	if (!DYNLIB_LOAD(lzolib, "liblzo2.so.2", "__lzo_init_v2", "lzo1x_decompress_safe"))
		return -ENOPKG;
	if (lzolib.fn.init(LZO_VERSION, (int)sizeof(short), (int)sizeof(int), (int)sizeof(long),
			   (int)sizeof(lzo_uint32_t), (int)sizeof(lzo_uint), (int)lzo_sizeof_dict_t,
			   (int)sizeof(char *), (int)sizeof(lzo_voidp), (int)sizeof(lzo_callback_t)) != LZO_E_OK)
		return -ENOPKG;
	struct cursor c = { in, len, false };
	take(&c, 9); /* magic */
	unsigned version = take_be16(&c);
	take(&c, 2); /* library version */
	if (version >= 0x0940)
		take(&c, 2); /* version needed to extract */
	const unsigned char *method = take(&c, 1);
	if (version >= 0x0940)
		take(&c, 1); /* level */
	uint32_t flags = take_be32(&c);
	if (flags & LZOP_FILTER)
		take(&c, 4);
	take(&c, 8); /* mode, mtime */
	if (version >= 0x0940)
		take(&c, 4); /* mtime, high bits */
	const unsigned char *name_len = take(&c, 1);
	if (name_len)
		take(&c, *name_len);
	take(&c, 4); /* header checksum */
	if (flags & LZOP_EXTRA_FIELD) {
		uint32_t extra = take_be32(&c);
		take(&c, extra);
		take(&c, 4);
	}
	if (c.short_read || version < 0x0900 || !method || *method < 1 || *method > 3)
		return -EBADMSG; /* 1..3: the LZO1X methods */
	_cleanup_free_ unsigned char *block = NULL;
	size_t block_cap = 0;
	for (;;) {
		uint32_t dst_len = take_be32(&c);
		if (c.short_read)
			return -EBADMSG;
		if (dst_len == 0)
			return 0; /* end of the stream */
		uint32_t src_len = take_be32(&c);
		take(&c, 4u * (!!(flags & LZOP_ADLER32_D) + !!(flags & LZOP_CRC32_D)));
		if (src_len < dst_len)
			take(&c, 4u * (!!(flags & LZOP_ADLER32_C) + !!(flags & LZOP_CRC32_C)));
		const unsigned char *data = take(&c, src_len);
		if (c.short_read || dst_len > LZOP_BLOCK_MAX || src_len > dst_len || src_len == 0)
			return -EBADMSG;
		int r;
		if (src_len == dst_len) {
			r = emit(o, data, dst_len); /* stored */
		} else {
			if (block_cap < dst_len) {
				free(block);
				block = xmalloc(dst_len);
				block_cap = dst_len;
			}
			lzo_uint n = dst_len;
			if (lzolib.fn.decompress_safe(data, src_len, block, &n, NULL) != LZO_E_OK || n != dst_len)
				return -EBADMSG;
			r = emit(o, block, n);
		}
		if (r)
			return r;
	}
}

int decompress_stream(enum comp_format f, const unsigned char *in, size_t len, size_t max_out, comp_sink sink,
		      void *data, size_t *produced)
{
	struct out o = { sink, data, 0, max_out };
	int r;
	if (comp_detect(in, len) != f)
		r = -EBADMSG;
	else if (f == COMP_LZ4)
		r = run_lz4(in, len, &o);
	else if (f == COMP_LZO)
		r = run_lzo(in, len, &o);
	else {
		_cleanup_free_ unsigned char *buf = xmalloc(CHUNK);
		switch (f) {
		case COMP_GZIP: r = run_gzip(in, len, &o, buf); break;
		case COMP_XZ:
		case COMP_LZMA: r = run_xz(f, in, len, &o, buf); break;
		case COMP_ZSTD: r = run_zstd(in, len, &o, buf); break;
		case COMP_BZIP2: r = run_bzip2(in, len, &o, buf); break;
		default: r = -EBADMSG; break;
		}
	}
	if (produced)
		*produced = o.produced;
	return r;
}

static int append_sink(void *data, const unsigned char *buf, size_t len)
{
	sb_appendn(data, (const char *)buf, len);
	return 0;
}

int decompress_buffer(enum comp_format f, const unsigned char *in, size_t len, size_t max, char **out, size_t *out_len)
{
	struct strbuf sb = { 0 };
	*out = NULL;
	int r = decompress_stream(f, in, len, max, append_sink, &sb, NULL);
	if (r < 0) {
		sb_free(&sb);
		return r;
	}
	if (out_len)
		*out_len = sb.len;
	*out = sb_take(&sb);
	return 0;
}
