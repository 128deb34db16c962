/* io/fdt.c - /chosen/bootargs of a device tree blob, see io/fdt.h */
#include "io/fdt.h"

#include <errno.h>
#include <libfdt.h>
#include <string.h>

#include "io/dynlib.h"
#include "lib/util.h"

static struct {
	int state;
	struct {
		__typeof__(&fdt_check_full) check_full;
		__typeof__(&fdt_path_offset) path_offset;
		__typeof__(&fdt_getprop) getprop;
		__typeof__(&fdt_strerror) strerror;
	} fn;
} lib;

int fdt_chosen_bootargs(const void *blob, size_t len, char **out, const char **why)
{
	*out = NULL;
	*why = NULL;
	if (lib.state <= 0 &&
	    !DYNLIB_LOAD(lib, "libfdt.so.1", "fdt_check_full", "fdt_path_offset", "fdt_getprop", "fdt_strerror"))
		return -ENOSYS;
	int e = lib.fn.check_full(blob, len);
	if (e != 0) {
		*why = lib.fn.strerror(e);
		return -EINVAL;
	}
	int node = lib.fn.path_offset(blob, "/chosen");
	if (node == -FDT_ERR_NOTFOUND)
		return 0;
	if (node < 0) {
		*why = lib.fn.strerror(node);
		return -EINVAL;
	}
	int n = 0;
	const char *v = lib.fn.getprop(blob, node, "bootargs", &n);
	if (!v)
		return n == -FDT_ERR_NOTFOUND ? 0 : (*why = lib.fn.strerror(n), -EINVAL);
	/* a string property: up to its NUL (the firmware reads it so) */
	size_t sl = strnlen(v, (size_t)n);
	*out = xstrndup(v, sl);
	return 0;
}
