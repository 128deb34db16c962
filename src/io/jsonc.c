/* io/jsonc.c - json-c loaded on first use, see io/jsonc.h */
#include "io/jsonc.h"
#include "io/dynlib.h"
#include "lib/util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

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

struct json_object *json_number(double d)
{
	char buf[40];
	for (int prec = 1; prec <= 17; prec++) {
		snprintf(buf, sizeof(buf), "%.*g", prec, d);
		if (strtod(buf, NULL) == d)
			break;
	}
	/* %g writes 1e+06 for a million: a whole number within 2^53 is
	 * written as one */
	if (d == trunc(d) && fabs(d) < 9007199254740992.0)
		snprintf(buf, sizeof(buf), "%.0f", d);
	return json_object_new_double_s(d, buf);
}
