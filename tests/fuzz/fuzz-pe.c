/* fuzz-pe.c - the PE section reader of unified kernel images and addons
 * (io/pe.h): pe_open, pe_find, pe_section_text, pe_mangle_cmdline, on
 * the input as a file. Properties:
 *   - a table that opens has at most 96 sections; pe_find gives a
 *     section before the first .profile, with the name asked for;
 *     pe_find_in_profile a profile's own one after the first .profile
 *     (".profile" itself: never its own) or that base one;
 *   - a section's text is at most min(VirtualSize, SizeOfRawData) bytes,
 *     holds no NUL, and is the file's bytes at PointerToRawData;
 *   - the stub's reading of a line has no control character and no
 *     trailing space, is no longer than the text, and reading it again
 *     changes nothing. */
#include "fuzz.h"

#include <errno.h>
#include <sys/mman.h>
#include <unistd.h>

#include "io/pe.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int fd = memfd_create("pe", MFD_CLOEXEC);
	FUZZ_CHECK(fd >= 0);
	FUZZ_CHECK(write(fd, data, size) == (ssize_t)size);
	struct pe_file pe;
	const char *why = NULL;
	int e = pe_open(fd, size, &pe, &why);
	FUZZ_CHECK(e == 0 || (e == -EBADMSG && why));
	if (e == 0) {
		FUZZ_CHECK(pe.n <= 96 && pe.first_profile <= pe.n);
		static const char *const names[] = { ".cmdline", ".uname", ".linux", ".osrel", ".profile" };
		for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++) {
			const struct pe_section *f = pe_find(&pe, names[k]);
			if (f)
				FUZZ_CHECK(streq(f->name, names[k]) && (size_t)(f - pe.sec) < pe.first_profile);
			/* a profile's section: its own (after its .profile, before
			 * the next) or the base one; one past the last: the base */
			size_t np = pe_profiles(&pe);
			for (size_t p = 0; p <= np && p < 4; p++) {
				bool own = false;
				const struct pe_section *g = pe_find_in_profile(&pe, p, names[k], &own);
				FUZZ_CHECK(own ? g && streq(g->name, names[k]) && (size_t)(g - pe.sec) > pe.first_profile
					       : g == f);
				FUZZ_CHECK(p < np || !own);
			}
		}
		for (size_t i = 0; i < pe.n; i++) {
			const struct pe_section *s = &pe.sec[i];
			char *text;
			size_t len;
			int r = pe_section_text(fd, size, s, 1u << 16, &text, &len);
			size_t n = s->vsize < s->raw_size ? s->vsize : s->raw_size;
			if (r == -EFBIG) {
				FUZZ_CHECK(n > (1u << 16));
				continue;
			}
			if (r == -EBADMSG) {
				FUZZ_CHECK((uint64_t)s->raw_off + n > size);
				continue;
			}
			FUZZ_CHECK(r == 0);
			FUZZ_CHECK(len <= n && strlen(text) == len);
			FUZZ_CHECK(memcmp(text, data + s->raw_off, len) == 0);
			pe_mangle_cmdline(text);
			size_t m = strlen(text);
			FUZZ_CHECK(m <= len);
			for (size_t j = 0; j < m; j++)
				FUZZ_CHECK((unsigned char)text[j] >= 0x20);
			FUZZ_CHECK(m == 0 || text[m - 1] != ' ');
			char *again = xstrdup(text);
			pe_mangle_cmdline(again);
			FUZZ_CHECK(streq(again, text));
			free(again);
			free(text);
		}
		pe_free(&pe);
	}
	close(fd);
	return 0;
}
