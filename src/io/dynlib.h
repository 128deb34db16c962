/* io/dynlib.h - libraries loaded with dlopen() when first needed, not linked:
 * starting the program then costs no dynamic linking of libraries that
 * most runs never call (libblkid: only for the ESP checks; json-c: only
 * for the journal and --json; zlib: only for gzip-packed configs; the
 * decompressors of kernel images; libkmod). Their packages stay
 * dependencies of the distribution package.
 *
 * An API is a struct { int state; struct { pointers... } fn; }: */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* Loads soname and its n symbols into slots; *state: 0 not tried, 1
 * loaded, -1 failed (said once with log_verbose). True when loaded. */
bool dynlib_load(int *state, const char *soname, const char *const *names, void **slots, size_t n);

/* DYNLIB_LOAD(api, "libfoo.so.1", "foo_a", "foo_b"): one name per pointer
 * of api.fn, in order. */
#define DYNLIB_LOAD(api, soname, ...)                                                                                  \
	({                                                                                                             \
		static const char *const names_[] = { __VA_ARGS__ };                                                   \
		_Static_assert(sizeof(names_) / sizeof(names_[0]) == sizeof((api).fn) / sizeof(void *),                \
			       "one name per function");                                                               \
		dynlib_load(&(api).state, soname, names_, (void **)&(api).fn, sizeof(names_) / sizeof(names_[0]));     \
	})
