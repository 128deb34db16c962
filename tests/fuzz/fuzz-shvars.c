/* fuzz-shvars.c - the shell-assignment reader (src/lib/shvars.c), which
 * reads /etc/default/grub and its drop-ins without running them.
 * Properties: it never crashes, leaks or reads out of bounds; a blank line
 * put before the text changes no value or reason (only line numbers);
 * a plain assignment appended after it is known unless the text ran code
 * (then everything is unknown, with the place and the reason given); a
 * value it knows holds no NUL. Its agreement with /bin/sh is the
 * differential test's (tests/cmd/shvars-diff.sh). */
#include "fuzz.h"

#include "lib/shvars.h"

static const char *const names[] = { "A", "B", "GRUB_CMDLINE_LINUX", "GRUB_CMDLINE_LINUX_DEFAULT", "PROBE" };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data;
	struct shvars a = { 0 }, b = { 0 };
	shvars_source(&a, "f", text, size);
	shvars_source(&a, "g", "PROBE=1\n", 8);
	char *shifted = xmalloc(size + 1);
	shifted[0] = '\n';
	memcpy(shifted + 1, text, size);
	shvars_source(&b, "f", shifted, size + 1);
	shvars_source(&b, "g", "PROBE=1\n", 8);
	free(shifted);
	for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
		const char *va, *fa, *wa, *vb, *fb, *wb;
		unsigned la, lb;
		bool ka = shvars_get(&a, names[i], &va, &fa, &la, &wa);
		bool kb = shvars_get(&b, names[i], &vb, &fb, &lb, &wb);
		FUZZ_CHECK(ka == kb);
		if (ka) {
			FUZZ_CHECK((va == NULL) == (vb == NULL));
			FUZZ_CHECK(!va || streq(va, vb));
		} else {
			FUZZ_CHECK(fa && fb && wa && wb && streq(wa, wb));
			FUZZ_CHECK(la >= 1 && (streq(fa, "g") || lb == la + 1));
		}
	}
	const char *v, *f, *why;
	unsigned line;
	bool known = shvars_get(&a, "PROBE", &v, &f, &line, &why);
	FUZZ_CHECK(known == !a.poisoned);
	FUZZ_CHECK(!known || (v && streq(v, "1")));
	shvars_free(&a);
	shvars_free(&b);
	return 0;
}
