/* show/unmounted.c - records kept for a boot file system that is not
 * mounted, see show/report.h. */
#include "show/report.h"
#include "lib/diag.h"

void report_unmounted(const struct root *r, const struct strv *dirs)
{
	for (size_t i = 0; i < dirs->n; i++) {
		bool seen = false;
		for (size_t k = 0; k < i && !seen; k++)
			seen = streq(dirs->v[k], dirs->v[i]);
		if (seen)
			continue;
		size_t n = 0;
		for (size_t k = i; k < dirs->n; k++)
			n += streq(dirs->v[k], dirs->v[i]);
		_cleanup_free_ char *d = root_display(r, dirs->v[i]);
		diag_warn("%s: not mounted: %zu record%s kept (%s once it is mounted)", d, n, n == 1 ? "" : "s",
			  "its files are undone or forgotten");
	}
}
