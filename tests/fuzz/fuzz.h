/* fuzz.h - shared by the libFuzzer harnesses (tests/fuzz/fuzz-*.c, built by
 * mk/fuzz.mk). A harness feeds one input to one parser or editor and checks
 * the properties its header promises; FUZZ_CHECK aborts (a finding) when
 * one does not hold. */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/diag.h"
#include "lib/util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

#define FUZZ_CHECK(cond)                                                                  \
	do {                                                                              \
		if (!(cond)) {                                                            \
			dprintf(2, "%s:%d: property does not hold: %s\n", __FILE__,      \
				__LINE__, #cond);                                         \
			abort();                                                          \
		}                                                                         \
	} while (0)

/* Equal byte strings (a with its length, b NUL-terminated or with one). */
static inline int fuzz_same(const char *a, size_t alen, const char *b, size_t blen)
{
	return alen == blen && (alen == 0 || memcmp(a, b, alen) == 0);
}

/* The tool's messages go to stderr through stdio: a harness collects them
 * per input (and checks them) instead of printing thousands of lines.
 * Sanitizer and libFuzzer reports do not use this stream. */
struct fuzz_capture {
	FILE *saved;
	char *text;
	size_t len;
};

static inline void fuzz_capture_begin(struct fuzz_capture *c)
{
	c->text = NULL;
	c->len = 0;
	c->saved = stderr;
	FILE *f = open_memstream(&c->text, &c->len);
	if (f)
		stderr = f;
}

/* Returns the collected text (owned by c until fuzz_capture_free). */
static inline const char *fuzz_capture_end(struct fuzz_capture *c)
{
	/* as the command layer does: what the code recorded, printed once */
	diag_print();
	diag_reset();
	if (stderr != c->saved) {
		fclose(stderr);
		stderr = c->saved;
	}
	return c->text ? c->text : "";
}

static inline void fuzz_capture_free(struct fuzz_capture *c)
{
	free(c->text);
	c->text = NULL;
}
