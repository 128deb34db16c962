/* io/chroot.c - is this process in a chroot? see io/chroot.h */
#include "io/chroot.h"
#include "io/rootfs.h"
#include "lib/util.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/statfs.h>

#ifndef STATX_MNT_ID
#define STATX_MNT_ID 0x00001000U
#endif

#define MAX_MOUNTINFO (16U << 20)

/* In the mount table at path (a /proc/PID/mountinfo), the mount point of
 * the mount whose ID is id: 1 and *at_root (is it "/"?) if the table has
 * it, 0 if not, -errno if the table cannot be read. Fields: ID, parent ID,
 * MAJ:MIN, root, mount point (octal escapes: "/" is never escaped). */
static int mount_at_root(const char *path, uint64_t id, bool *at_root)
{
	_cleanup_free_ char *text = NULL;
	int r = read_host_file(path, MAX_MOUNTINFO, &text, NULL);
	if (r < 0)
		return r;
	for (char *line = text; line && *line;) {
		char *next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		uint64_t mid;
		char point[3];
		/* the mount point's first two bytes tell "/" from the rest */
		if (sscanf(line, "%" SCNu64 " %*u %*u:%*u %*s %2s", &mid, point) == 2 && mid == id) {
			/* at most two bytes read: "/" alone, not "/x" */
			*at_root = streq(point, "/");
			return 1;
		}
		line = next;
	}
	return 0;
}

/* Where init's root cannot be read: the mount tables. */
static int chroot_by_mounts(void)
{
	struct statx sx;
	if (statx(AT_FDCWD, "/", 0, STATX_MNT_ID, &sx) < 0)
		return -errno;
	if (!(sx.stx_mask & STATX_MNT_ID))
		return -EOPNOTSUPP;
	/* a root that is a directory inside a mount: this process's table
	 * leaves out every mount whose root it cannot reach, so the mount
	 * holding "/" is not in it, or not at "/" */
	bool at_root = false;
	int r = mount_at_root("/proc/self/mountinfo", sx.stx_mnt_id, &at_root);
	if (r < 0)
		return r;
	if (r == 0 || !at_root)
		return 1;
	/* a root that is a mount's root (an image mounted and chrooted into):
	 * init, in the same mount namespace, sees that mount elsewhere. In
	 * another namespace (mount IDs are not shared) it cannot be told. */
	r = mount_at_root("/proc/1/mountinfo", sx.stx_mnt_id, &at_root);
	if (r <= 0)
		return r < 0 ? r : -ENOENT;
	return !at_root;
}

int running_in_chroot(void)
{
	const char *e = getenv("MEMCG_POLICY_IGNORE_CHROOT");
	if (e && *e && !streq(e, "0"))
		return 0;
	struct stat self, init;
	if (stat("/", &self) < 0)
		return -errno;
	if (stat("/proc/1/root", &init) == 0)
		return self.st_dev != init.st_dev || self.st_ino != init.st_ino;
	if (errno == ENOENT) {
		/* no /proc: init mounts it, so only a chroot lacks it */
		struct statfs sf;
		if (statfs("/proc", &sf) < 0 || (unsigned long)sf.f_type != PROC_SUPER_MAGIC)
			return 1;
		return -ENOENT;
	}
	return chroot_by_mounts();
}
