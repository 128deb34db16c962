/* io/pe.h - the sections of a PE file (a unified kernel image, an addon)
 * as an EFI loader maps them: systemd-stub reads its .cmdline, .uname and
 * .osrel from the image's memory, VirtualSize bytes at the section's
 * address, of which SizeOfRawData come from the file (the rest is zero).
 *
 * Only the section table and the sections asked for are read (pread on a
 * descriptor): a UKI of 100 MB costs a few small reads. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct pe_section {
	char name[9];	   /* NUL-terminated, at most 8 bytes */
	uint32_t vsize;	   /* VirtualSize: the bytes the loader maps */
	uint32_t raw_size; /* SizeOfRawData: of which this many are in the file */
	uint32_t raw_off;  /* PointerToRawData */
};

struct pe_file {
	uint16_t machine; /* IMAGE_FILE_MACHINE_* of the COFF header */
	struct pe_section *sec;
	size_t n;
	/* the index of the first ".profile" section (a multi-profile UKI:
	 * the sections before it are the base every profile shares), n if
	 * there is none */
	size_t first_profile;
};

/* Reads the headers and the section table of the PE file open on fd,
 * whose size is size. 0; -EBADMSG where it is not a PE image (no "MZ", no
 * "PE\0\0", a table past the end of the file), with *why saying what (a
 * static string); -errno for a read error. */
int pe_open(int fd, uint64_t size, struct pe_file *pe, const char **why);
void pe_free(struct pe_file *pe);

/* The first section called name among the base sections (before the first
 * .profile), NULL if none. */
const struct pe_section *pe_find(const struct pe_file *pe, const char *name);

/* How many profiles a multi-profile UKI has (its .profile sections); 0
 * for one without. */
size_t pe_profiles(const struct pe_file *pe);

/* The section called name that profile (0, 1, ...) gives the stub: the
 * profile's own (the sections after its .profile, up to the next), else
 * the base one; *own says which. NULL if neither. A UKI without profiles
 * has the base only. */
const struct pe_section *pe_find_in_profile(const struct pe_file *pe, size_t profile, const char *name, bool *own);

/* A section's text as the loader maps it: its first min(VirtualSize,
 * SizeOfRawData) bytes of the file, cut at the first NUL (the loader's
 * zero fill and C-string reading end there). More than max bytes:
 * -EFBIG. A section whose bytes lie past the end of the file: -EBADMSG.
 * *out is NUL-terminated. */
int pe_section_text(int fd, uint64_t size, const struct pe_section *s, size_t max, char **out, size_t *len);

/* systemd-stub's reading of a command line section: every control
 * character (below 0x20: newlines, tabs) a space, trailing spaces gone.
 * In place. */
void pe_mangle_cmdline(char *s);
