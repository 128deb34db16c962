/* io/fdt.h - the one thing the tool reads from a flattened device tree: a
 * blob's /chosen/bootargs, the line the Raspberry Pi firmware puts before
 * cmdline.txt. libfdt (libfdt1) is loaded with dlopen() when first needed
 * (io/dynlib.h); a blob is checked whole (fdt_check_full) before anything
 * is read from it: blobs come from images. */
#pragma once

#include <stddef.h>

/* *out: a copy of /chosen/bootargs of the blob (len bytes), or NULL when
 * it has no /chosen node or no bootargs. 0; -EINVAL: not a valid blob
 * (*why says what libfdt found); -ENOSYS: libfdt cannot be loaded. */
int fdt_chosen_bootargs(const void *blob, size_t len, char **out, const char **why);
