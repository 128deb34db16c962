/* facts/policy-int.h - private to the policy modules (facts/policy.c: the key table and
 * the values; facts/policy-ini.c: reading the INI text; facts/policy-files.c: finding,
 * checking and merging the files; commit/policy-set.c: set's editor of mode=). */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "facts/policy.h"
#include "lib/util.h"

/* ---- names and values (facts/policy.c) ---- */

struct name_value {
	const char *name;
	int value;
};

extern const struct name_value mode_values[];

int lookup_value(const struct name_value *t, const char *s, int *out);

/* ---- keys (facts/policy.c) ---- */

enum section_kind { SEC_NONE, SEC_POLICY, SEC_AUTO, SEC_KERNEL, SEC_BOOTLOADERS };

enum value_type {
	V_MODE,	      /* enum policy_mode: on | off | auto */
	V_ACCOUNTING, /* enum accounting */
	V_BOOL,	      /* bool */
	V_INTBOOL,    /* int 0/1 (-1 unset) */
	V_WORDS,      /* char ** + size_t count */
	V_SIZE,	      /* unsigned long long + bool has; empty = unset */
	V_OTHERWISE,  /* enum policy_otherwise */
	V_DEFAULT,    /* int: enum memcg_default (-1 unset) */
	V_TRISTATE,   /* enum tristate */
};

/* off: the field; off2: the count (V_WORDS) or the has-flag (V_SIZE);
 * origin: its struct origin. Offsets into struct policy, or into struct
 * policy_kernel_section for SEC_KERNEL. */
struct key_def {
	enum section_kind section;
	const char *name;
	enum value_type type;
	size_t off, off2, origin;
};

/* A parsed value, before it is stored. */
struct value {
	int i;
	unsigned long long size;
	bool has;
	struct strv words;
};

const struct key_def *find_key(enum section_kind sec, const char *canon);
const char *expected_values(enum value_type t);
int parse_value(enum value_type t, const char *s, struct value *v);
void store_value(void *base, const struct key_def *k, struct value *v, struct origin o);

/* ---- lines (facts/policy-ini.c), also read by commit/policy-set.c ---- */

bool is_blank(char ch);
size_t content_end(const char *s, size_t n);
size_t skip_blank(const char *s, size_t i, size_t n);
