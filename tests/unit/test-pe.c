/* test-pe.c - the section table of a PE file (io/pe.c) on images made
 * here byte by byte: the base sections, and a multi-profile UKI's
 * profiles as systemd-stub reads them (the selected profile's own
 * section, else the base one). ukify 257 makes profile @0 of the base
 * sections only; a @0 with sections of its own is built here. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "io/pe.h"
#include "lib/util.h"
#include "test.h"

struct sec {
	const char *name, *text;
};

/* A PE image in a memfd: MZ, e_lfanew 64, "PE\0\0", a COFF header without
 * an optional header, the section table, then each section's text. */
static int image(const struct sec *s, size_t n, uint64_t *size)
{
	unsigned char buf[4096] = { 0 };
	buf[0] = 'M', buf[1] = 'Z';
	buf[0x3c] = 64;
	memcpy(buf + 64, "PE\0\0", 4);
	buf[64 + 4] = 0x64, buf[64 + 5] = 0x86; /* x86-64 */
	buf[64 + 6] = (unsigned char)n;
	size_t table = 64 + 24, data = table + n * 40;
	for (size_t i = 0; i < n; i++) {
		unsigned char *h = buf + table + i * 40;
		size_t len = strlen(s[i].text);
		memcpy(h, s[i].name, strlen(s[i].name));
		h[8] = (unsigned char)len;  /* VirtualSize */
		h[16] = (unsigned char)len; /* SizeOfRawData */
		h[20] = (unsigned char)(data & 0xff), h[21] = (unsigned char)(data >> 8);
		memcpy(buf + data, s[i].text, len);
		data += len;
	}
	int fd = memfd_create("pe", MFD_CLOEXEC);
	if (fd < 0 || write(fd, buf, data) != (ssize_t)data)
		return -1;
	*size = data;
	return fd;
}

static char *text_of(int fd, uint64_t size, const struct pe_section *s)
{
	char *out = NULL;
	size_t len;
	return s && pe_section_text(fd, size, s, 4096, &out, &len) == 0 ? out : NULL;
}

TEST(pe_profiles_and_their_sections)
{
	static const struct sec secs[] = {
		{ ".linux", "kernel" },	       { ".cmdline", "base line" }, { ".uname", "6.12.57+deb13-amd64" },
		{ ".profile", "ID=default" },  { ".cmdline", "own @0" },   { ".profile", "ID=factory" },
		{ ".profile", "ID=rescue" },   { ".cmdline", "own @2" },   { ".uname", "other" },
	};
	uint64_t size;
	int fd = image(secs, ARRAY_SIZE(secs), &size);
	CHECK(fd >= 0);
	struct pe_file pe;
	const char *why = NULL;
	CHECK_INT(pe_open(fd, size, &pe, &why), 0);
	CHECK_INT((int)pe_profiles(&pe), 3);
	bool own = true;
	char *t = text_of(fd, size, pe_find(&pe, ".cmdline"));
	CHECK_STR(t, "base line");
	free(t);
	t = text_of(fd, size, pe_find_in_profile(&pe, 0, ".cmdline", &own));
	CHECK_STR(t, "own @0");
	CHECK(own);
	free(t);
	t = text_of(fd, size, pe_find_in_profile(&pe, 1, ".cmdline", &own));
	CHECK_STR(t, "base line"); /* @1 has none: the base one */
	CHECK(!own);
	free(t);
	t = text_of(fd, size, pe_find_in_profile(&pe, 2, ".cmdline", &own));
	CHECK_STR(t, "own @2");
	CHECK(own);
	free(t);
	t = text_of(fd, size, pe_find_in_profile(&pe, 0, ".uname", &own));
	CHECK_STR(t, "6.12.57+deb13-amd64"); /* the next profile's .uname is not @0's */
	CHECK(!own);
	free(t);
	CHECK(pe_find_in_profile(&pe, 3, ".cmdline", &own) == pe_find(&pe, ".cmdline")); /* no @3: the base */
	pe_free(&pe);
	close(fd);
}

TEST(pe_without_profiles)
{
	static const struct sec secs[] = { { ".linux", "k" }, { ".cmdline", "only line" } };
	uint64_t size;
	int fd = image(secs, ARRAY_SIZE(secs), &size);
	CHECK(fd >= 0);
	struct pe_file pe;
	const char *why = NULL;
	CHECK_INT(pe_open(fd, size, &pe, &why), 0);
	CHECK_INT((int)pe_profiles(&pe), 0);
	bool own = true;
	char *t = text_of(fd, size, pe_find_in_profile(&pe, 0, ".cmdline", &own));
	CHECK_STR(t, "only line");
	CHECK(!own);
	free(t);
	pe_free(&pe);
	close(fd);
}

int main(void)
{
	struct test_case cases[] = {
		T(pe_profiles_and_their_sections),
		T(pe_without_profiles),
	};
	return test_run_all(cases, ARRAY_SIZE(cases));
}
