/* io/jsonc.h - json-c, loaded with dlopen() when first called (io/dynlib.h):
 * include this instead of <json-c/json.h>. Each json-c function the tool
 * calls goes through a table filled on the first call; a run that never
 * writes the journal and prints no JSON (status, decide) never loads it.
 * json-c (libjson-c5) stays a dependency of the package: when it cannot be
 * loaded, the run stops with "memcg-policy: libjson-c.so.5 cannot be
 * loaded" and exit 4 at its first JSON call, which every command makes
 * before it writes anything (the journal is built before the first write;
 * --json starts at the beginning). A json-c function called here without
 * an entry in the list fails the link. */
#pragma once

#include <json-c/json.h>

/* the functions called, in rows (clang-format would pack them) */
/* clang-format off */
#define JSONC_FUNCTIONS(X)                                                                  \
	X(json_object_array_add) X(json_object_array_get_idx) X(json_object_array_length)       \
	X(json_object_get) X(json_object_get_boolean) X(json_object_get_int64)                  \
	X(json_object_get_string) X(json_object_get_string_len) X(json_object_is_type)          \
	X(json_object_new_array) X(json_object_new_boolean) X(json_object_new_double_s)         \
	X(json_object_new_int) X(json_object_new_int64) X(json_object_new_object)               \
	X(json_object_new_string) X(json_object_new_string_len) X(json_object_new_uint64)       \
	X(json_object_object_add) X(json_object_object_get_ex) X(json_object_put)               \
	X(json_object_to_json_string_ext) X(json_object_to_json_string_length)                  \
	X(json_tokener_free) X(json_tokener_get_error) X(json_tokener_get_parse_end)            \
	X(json_tokener_new) X(json_tokener_parse_ex)
/* clang-format on */

struct jsonc_fns {
#define JSONC_POINTER(f) __typeof__(&f) f;
	JSONC_FUNCTIONS(JSONC_POINTER)
#undef JSONC_POINTER
};

/* The table, loaded on the first call; never NULL (exits instead). */
const struct jsonc_fns *jsonc(void);

/* every call of a listed function goes through the table */
#define json_object_array_add (jsonc()->json_object_array_add)
#define json_object_array_get_idx (jsonc()->json_object_array_get_idx)
#define json_object_array_length (jsonc()->json_object_array_length)
#define json_object_get (jsonc()->json_object_get)
#define json_object_get_boolean (jsonc()->json_object_get_boolean)
#define json_object_get_int64 (jsonc()->json_object_get_int64)
#define json_object_get_string (jsonc()->json_object_get_string)
#define json_object_get_string_len (jsonc()->json_object_get_string_len)
#define json_object_is_type (jsonc()->json_object_is_type)
#define json_object_new_array (jsonc()->json_object_new_array)
#define json_object_new_boolean (jsonc()->json_object_new_boolean)
#define json_object_new_double_s (jsonc()->json_object_new_double_s)
#define json_object_new_int (jsonc()->json_object_new_int)
#define json_object_new_int64 (jsonc()->json_object_new_int64)
#define json_object_new_object (jsonc()->json_object_new_object)
#define json_object_new_string (jsonc()->json_object_new_string)
#define json_object_new_string_len (jsonc()->json_object_new_string_len)
#define json_object_new_uint64 (jsonc()->json_object_new_uint64)
#define json_object_object_add (jsonc()->json_object_object_add)
#define json_object_object_get_ex (jsonc()->json_object_object_get_ex)
#define json_object_put (jsonc()->json_object_put)
#define json_object_to_json_string_ext (jsonc()->json_object_to_json_string_ext)
#define json_object_to_json_string_length (jsonc()->json_object_to_json_string_length)
#define json_tokener_free (jsonc()->json_tokener_free)
#define json_tokener_get_error (jsonc()->json_tokener_get_error)
#define json_tokener_get_parse_end (jsonc()->json_tokener_get_parse_end)
#define json_tokener_new (jsonc()->json_tokener_new)
#define json_tokener_parse_ex (jsonc()->json_tokener_parse_ex)

/* A JSON number for d, written in its shortest form that reads back as d
 * (1509075.7561, not 1509075.7561000001; 1000, not 1000.0), as a JSON
 * reader in any language prints it again. d must be finite. */
struct json_object *json_number(double d);
