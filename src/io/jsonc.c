/* io/jsonc.c - json-c loaded on first use, see io/jsonc.h */
#include "io/jsonc.h"
#include "io/dynlib.h"
#include "lib/util.h"

#include <stdio.h>

static struct {
	int state;
	struct jsonc_fns fn;
} lib;

const struct jsonc_fns *jsonc(void)
{
#define JSONC_NAME(f) #f,
	if (lib.state <= 0 && !DYNLIB_LOAD(lib, "libjson-c.so.5", JSONC_FUNCTIONS(JSONC_NAME))) {
		fprintf(stderr, "memcg-policy: libjson-c.so.5 cannot be loaded (package libjson-c5)\n");
		exit(EXIT_SYSTEM);
	}
#undef JSONC_NAME
	return &lib.fn;
}
