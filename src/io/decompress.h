/* io/decompress.h - the compression formats a kernel image or module can be
 * packed with, detected by their magic bytes and inflated as a stream into
 * a caller's sink with a bound on the output. zlib is linked; the other
 * libraries (liblzma, libzstd, liblz4, libbz2, liblzo2) are loaded with
 * dlopen() the first time their format is met, so that commands that read
 * plain config files pay nothing for them. */
#pragma once

#include <zlib.h>

#include <stdbool.h>
#include <stddef.h>

enum comp_format {
	COMP_NONE,
	COMP_GZIP,  /* 1f 8b */
	COMP_XZ,    /* fd 37 7a 58 5a 00 */
	COMP_LZMA,  /* legacy .lzma: 5d, then a power-of-two dictionary size */
	COMP_ZSTD,  /* 28 b5 2f fd */
	COMP_LZ4,   /* the legacy frame the kernel uses: 02 21 4c 18 */
	COMP_BZIP2, /* "BZh" 1-9 then the block magic 31 41 59 26 53 59 */
	COMP_LZO,   /* lzop's framing: 89 4c 5a 4f 00 0d 0a 1a 0a */
	COMP_COUNT,
};

/* "gzip", "xz", ... ("plain" for COMP_NONE). */
const char *comp_name(enum comp_format f);

/* The format whose magic starts at p, or COMP_NONE. */
enum comp_format comp_detect(const unsigned char *p, size_t len);

/* Receives the output in pieces. Returns 0 to go on, 1 to stop early
 * (decompress_stream then returns 1), or a negative errno. */
typedef int (*comp_sink)(void *data, const unsigned char *buf, size_t len);

/* Inflates the stream of format f starting at in (bytes after its end are
 * ignored) into sink, at most max_out bytes in all. Returns 0 at the end of
 * the stream, 1 if the sink stopped it, -EBADMSG for corrupt or truncated
 * data, -EFBIG past max_out, -ENOPKG when the format's library cannot be
 * loaded, -ENOMEM, or the sink's error. *produced (may be NULL) receives
 * the bytes handed to the sink. */
int decompress_stream(enum comp_format f, const unsigned char *in, size_t len, size_t max_out, comp_sink sink,
		      void *data, size_t *produced);

/* Inflates a whole stream into a new NUL-terminated buffer (at most max
 * bytes). Same return values, without 1. */
int decompress_buffer(enum comp_format f, const unsigned char *in, size_t len, size_t max, char **out, size_t *out_len);

/* zlib, loaded on first use (io/dynlib.h); NULL when it cannot be. */
struct zlib_fns {
	int (*inflate_init2)(z_streamp strm, int window_bits, const char *version, int stream_size);
	int (*inflate)(z_streamp strm, int flush);
	int (*inflate_end)(z_streamp strm);
	int (*inflate_reset)(z_streamp strm);
};
const struct zlib_fns *zlib_fns(void);
/* inflateInit2() through it */
#define ZLIB_INFLATE_INIT2(z, strm, bits) ((z)->inflate_init2((strm), (bits), ZLIB_VERSION, (int)sizeof(z_stream)))
