/* io/pe.c - the section table of a PE file, see io/pe.h. The layout is the
 * PE/COFF specification's: the DOS header's e_lfanew (offset 0x3c) points
 * at "PE\0\0", then the 20-byte COFF header (Machine, NumberOfSections,
 * ..., SizeOfOptionalHeader at 16), the optional header, and 40-byte
 * section headers (Name[8], VirtualSize, VirtualAddress, SizeOfRawData,
 * PointerToRawData, ...). All fields are little-endian. */
#include "io/pe.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/util.h"

#define PE_MAX_SECTIONS 96 /* the specification's limit for images */

static uint16_t le16(const unsigned char *p) { return (uint16_t)(p[0] | p[1] << 8); }
static uint32_t le32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Exactly len bytes at off, else -EBADMSG (past the end) or -errno. */
static int read_at(int fd, uint64_t size, uint64_t off, void *buf, size_t len)
{
	if (off > size || len > size - off)
		return -EBADMSG;
	size_t done = 0;
	while (done < len) {
		ssize_t n = pread(fd, (char *)buf + done, len - done, (off_t)(off + done));
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return -EBADMSG; /* shorter than fstat said: changed under us */
		done += (size_t)n;
	}
	return 0;
}

int pe_open(int fd, uint64_t size, struct pe_file *pe, const char **why)
{
	memset(pe, 0, sizeof(*pe));
	*why = NULL;
	unsigned char dos[64];
	int e = read_at(fd, size, 0, dos, sizeof(dos));
	if (e == -EBADMSG || (e == 0 && (dos[0] != 'M' || dos[1] != 'Z'))) {
		*why = "not a PE image (no MZ header)";
		return -EBADMSG;
	}
	if (e < 0)
		return e;
	uint32_t lfanew = le32(dos + 0x3c);
	unsigned char hdr[24];
	e = read_at(fd, size, lfanew, hdr, sizeof(hdr));
	if (e == -EBADMSG || (e == 0 && memcmp(hdr, "PE\0\0", 4) != 0)) {
		*why = "not a PE image (no PE signature where the MZ header points)";
		return -EBADMSG;
	}
	if (e < 0)
		return e;
	pe->machine = le16(hdr + 4);
	uint16_t nsec = le16(hdr + 6), optsize = le16(hdr + 20);
	if (nsec > PE_MAX_SECTIONS) {
		*why = "a PE image with more sections than the format allows";
		return -EBADMSG;
	}
	uint64_t table = (uint64_t)lfanew + sizeof(hdr) + optsize;
	unsigned char *raw = xmalloc((size_t)nsec * 40 + 1);
	e = read_at(fd, size, table, raw, (size_t)nsec * 40);
	if (e < 0) {
		free(raw);
		if (e == -EBADMSG)
			*why = "a PE image whose section table runs past the end of the file";
		return e;
	}
	pe->sec = xcalloc(nsec ? nsec : 1, sizeof(*pe->sec));
	pe->n = nsec;
	pe->first_profile = nsec;
	for (size_t i = 0; i < nsec; i++) {
		const unsigned char *h = raw + i * 40;
		struct pe_section *s = &pe->sec[i];
		memcpy(s->name, h, 8);
		s->name[8] = '\0';
		s->vsize = le32(h + 8);
		s->raw_size = le32(h + 16);
		s->raw_off = le32(h + 20);
		if (streq(s->name, ".profile") && pe->first_profile == nsec)
			pe->first_profile = i;
	}
	free(raw);
	return 0;
}

void pe_free(struct pe_file *pe)
{
	free(pe->sec);
	memset(pe, 0, sizeof(*pe));
}

const struct pe_section *pe_find(const struct pe_file *pe, const char *name)
{
	for (size_t i = 0; i < pe->first_profile; i++)
		if (streq(pe->sec[i].name, name))
			return &pe->sec[i];
	return NULL;
}

size_t pe_profiles(const struct pe_file *pe)
{
	size_t n = 0;
	for (size_t i = pe->first_profile; i < pe->n; i++)
		n += streq(pe->sec[i].name, ".profile");
	return n;
}

const struct pe_section *pe_find_in_profile(const struct pe_file *pe, size_t profile, const char *name, bool *own)
{
	*own = false;
	size_t seen = 0;
	for (size_t i = pe->first_profile; i < pe->n; i++) {
		if (!streq(pe->sec[i].name, ".profile"))
			continue;
		if (seen++ != profile)
			continue;
		for (size_t j = i + 1; j < pe->n && !streq(pe->sec[j].name, ".profile"); j++)
			if (streq(pe->sec[j].name, name)) {
				*own = true;
				return &pe->sec[j];
			}
		break;
	}
	return pe_find(pe, name);
}

int pe_section_text(int fd, uint64_t size, const struct pe_section *s, size_t max, char **out, size_t *len)
{
	*out = NULL;
	*len = 0;
	size_t n = s->vsize < s->raw_size ? s->vsize : s->raw_size;
	if (n > max)
		return -EFBIG;
	char *buf = xmalloc(n + 1);
	int e = read_at(fd, size, s->raw_off, buf, n);
	if (e < 0) {
		free(buf);
		return e;
	}
	buf[n] = '\0';
	*len = strlen(buf);
	*out = buf;
	return 0;
}

void pe_mangle_cmdline(char *s)
{
	size_t n = 0;
	for (; s[n]; n++)
		if ((unsigned char)s[n] < 0x20)
			s[n] = ' ';
	while (n > 0 && s[n - 1] == ' ')
		s[--n] = '\0';
}
