/* io/dynlib.c - libraries loaded on first use, see io/dynlib.h */
#include "io/dynlib.h"
#include "lib/util.h"

#include <dlfcn.h>

bool dynlib_load(int *state, const char *soname, const char *const *names, void **slots, size_t n)
{
	if (*state == 0) {
		*state = -1;
		void *h = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
		if (!h) {
			log_verbose("%s: %s", soname, dlerror());
			return false;
		}
		size_t i = 0;
		while (i < n && (slots[i] = dlsym(h, names[i])))
			i++;
		if (i < n) {
			log_verbose("%s: no symbol %s", soname, names[i]);
			return false;
		}
		*state = 1;
	}
	return *state > 0;
}
