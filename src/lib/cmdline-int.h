/* lib/cmdline-int.h - private to lib/cmdline.c (splitting, inspecting)
 * and lib/cmdline-edit.c (editing). */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* The parts of one token as next_arg() sees them, as offsets into the
 * token's bytes. */
struct tok_parts {
	size_t name_off, name_len;
	bool has_value;
	size_t val_off, val_len;
};

/* next_arg() on one token t[0..len) (lib/cmdline.c says how). */
void cmdline_tok_parse(const char *t, size_t len, struct tok_parts *p);

/* Does the comma list v[0..vlen) hold item[0..ilen) as one of its
 * elements? Empty items never match. */
bool cmdline_list_has(const char *v, size_t vlen, const char *item, size_t ilen);
