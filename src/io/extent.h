/* io/extent.h - where a file's data starts on its device (FIEMAP), to tell
 * two names that share their data: what a power cut in the middle of a
 * rename leaves on FAT, where both directory entries then point at one
 * cluster chain (see io/txn-tmp.c, cleanup of leftover temp files). */
#pragma once

#include <stdint.h>

/* The physical byte offset of the first extent of fd's data: 0 when the
 * file has none (empty) or the file system cannot say (then nothing can be
 * told to be shared). */
uint64_t file_first_extent(int fd);
