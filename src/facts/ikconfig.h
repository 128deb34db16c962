/* facts/ikconfig.h - the kernel config a kernel carries inside itself
 * (CONFIG_IKCONFIG): the gzip data between the markers "IKCFG_ST" and
 * "IKCFG_ED", found in a kernel image (bzImage, arm/arm64 Image or zImage,
 * EFI zboot, a gzip-packed Image, vmlinux) or in the configs.ko module
 * (CONFIG_IKCONFIG=m; plain or packed with xz, zstd or gzip). Pure: works
 * on buffers. */
#pragma once

#include <stddef.h>

#include "io/decompress.h"

struct ikconfig {
	char *text; /* the config, NUL-terminated */
	size_t len;
	enum comp_format packing; /* what the image's payload was packed with */
	const char *container;	  /* "bzImage", "zboot", "Image", "module", ... (static) */
};

/* Finds and inflates the config in a kernel image. Returns 0 with *out
 * filled, -ENOENT when the payload was inflated and holds no config block
 * (out->packing and out->container still say what was read), -ENOMSG when
 * no payload of a known format was found, -EBADMSG for corrupt data (the
 * block or the payload), -EFBIG past the size bounds, -ENOPKG when a
 * decompression library is missing. */
int ikconfig_from_image(const unsigned char *img, size_t len, struct ikconfig *out);

/* The same for configs.ko (or configs.ko.xz/.zst/.gz: detected by
 * content). */
int ikconfig_from_module(const unsigned char *ko, size_t len, struct ikconfig *out);

void ikconfig_free(struct ikconfig *c);
