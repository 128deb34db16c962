/* io/extent.c - see io/extent.h. */
#include "io/extent.h"

#include <linux/fiemap.h>
#include <linux/fs.h>
#include <string.h>
#include <sys/ioctl.h>

uint64_t file_first_extent(int fd)
{
	/* a struct fiemap followed by room for one extent, as one buffer
	 * (a flexible array member cannot sit inside another struct) */
	union {
		struct fiemap map;
		unsigned char bytes[sizeof(struct fiemap) + sizeof(struct fiemap_extent)];
	} req;
	memset(&req, 0, sizeof(req));
	req.map.fm_start = 0;
	req.map.fm_length = FIEMAP_MAX_OFFSET;
	req.map.fm_flags = FIEMAP_FLAG_SYNC;
	req.map.fm_extent_count = 1;
	if (ioctl(fd, FS_IOC_FIEMAP, &req) == 0) {
		if (req.map.fm_mapped_extents == 0)
			return 0;
		const struct fiemap_extent *e = &req.map.fm_extents[0];
		if (e->fe_flags & (FIEMAP_EXTENT_UNKNOWN | FIEMAP_EXTENT_DATA_INLINE))
			return 0;
		return e->fe_physical;
	}
	/* FIBMAP (root only): the first block */
	int block = 0;
	if (ioctl(fd, FIBMAP, &block) == 0 && block > 0)
		return (uint64_t)block;
	return 0;
}
