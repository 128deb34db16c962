/* slots/find-boot.c - $BOOT: the ESP and XBOOTLDR, verified as bootctl does,
 * see slots/find-boot.h */
#include "slots/find-boot.h"
#include "io/dynlib.h"

#include <blkid.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

bool trust_boot_env(void)
{
	const char *v = getenv(ENV_TRUST_BOOT);
	return v && *v && !streq(v, "0");
}

void boot_dirs_free(struct boot_dirs *b)
{
	for (size_t i = 0; i < b->n; i++)
		free(b->v[i].path);
	free(b->v);
	b->v = NULL;
	b->n = 0;
}

static void push_dir(struct boot_dirs *b, const char *path, enum boot_role role, bool entries, bool ukis)
{
	b->v = xrealloc(b->v, (b->n + 1) * sizeof(*b->v));
	b->v[b->n++] = (struct boot_dir){
		.path = xstrdup(path),
		.role = role,
		.has_entries = entries,
		.has_ukis = ukis,
	};
}

static bool file_has_blscfg(const struct root *r, const char *path)
{
	_cleanup_free_ char *text = NULL;
	size_t len;
	if (root_read_file(r, path, MAX_INPUT_FILE, &text, &len) < 0)
		return false;
	return memmem(text, len, "blscfg", 6) != NULL;
}

bool grub_uses_blscfg(const struct root *r)
{
	if (file_has_blscfg(r, "/boot/grub2/grub.cfg") || file_has_blscfg(r, "/boot/grub/grub.cfg"))
		return true;
	_cleanup_free_ char *text = NULL;
	size_t len;
	if (root_read_file(r, "/etc/default/grub", MAX_INPUT_FILE, &text, &len) < 0)
		return false;
	/* the last assignment at the start of a line wins, as in sh */
	bool on = false;
	for (char *line = text; line && *line;) {
		char *nl = strchr(line, '\n');
		if (nl)
			*nl = '\0';
		char *p = line + strspn(line, " \t");
		if (startswith(p, "GRUB_ENABLE_BLSCFG=")) {
			p += strlen("GRUB_ENABLE_BLSCFG=");
			p += strspn(p, "\"'");
			on = startswith(p, "true");
		}
		line = nl ? nl + 1 : NULL;
	}
	return on;
}

/* Is the directory behind fd the root of a mounted file system? */
static bool is_mount_root(int fd)
{
	struct statx sx;
	if (statx(fd, "", AT_EMPTY_PATH, STATX_TYPE | STATX_INO, &sx) == 0 &&
	    (sx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT))
		return (sx.stx_attributes & STATX_ATTR_MOUNT_ROOT) != 0;
	/* older kernels: compare with the parent directory */
	struct stat a, b;
	_cleanup_close_ int parent = openat(fd, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (parent < 0 || fstat(fd, &a) < 0 || fstat(parent, &b) < 0)
		return false;
	return a.st_dev != b.st_dev || a.st_ino == b.st_ino;
}

/* Probes the partition behind dev. Returns NULL if it is of the wanted
 * type, else why not (newly allocated). */
/* The device node of a block device number, on the live system: the
 * /dev/block/MAJ:MIN link, else DEVNAME from sysfs. */
static char *devnode(dev_t dev)
{
	char *node = xasprintf("/dev/block/%u:%u", major(dev), minor(dev));
	if (access(node, F_OK) == 0)
		return node;
	_cleanup_free_ char *uevent = xasprintf("/sys/dev/block/%u:%u/uevent", major(dev), minor(dev));
	FILE *f = fopen(uevent, "re");
	if (!f)
		return node;
	char line[512];
	while (fgets(line, sizeof(line), f)) {
		if (startswith(line, "DEVNAME=")) {
			line[strcspn(line, "\n")] = '\0';
			free(node);
			node = xasprintf("/dev/%s", line + 8);
			break;
		}
	}
	fclose(f);
	return node;
}

/* libblkid, loaded when a partition is first probed (io/dynlib.h) */
static struct {
	int state;
	struct {
		__typeof__(&blkid_new_probe_from_filename) new_probe_from_filename;
		__typeof__(&blkid_free_probe) free_probe;
		__typeof__(&blkid_probe_enable_superblocks) enable_superblocks;
		__typeof__(&blkid_probe_set_superblocks_flags) set_superblocks_flags;
		__typeof__(&blkid_probe_enable_partitions) enable_partitions;
		__typeof__(&blkid_probe_set_partitions_flags) set_partitions_flags;
		__typeof__(&blkid_do_safeprobe) do_safeprobe;
		__typeof__(&blkid_probe_lookup_value) lookup_value;
	} fn;
} blkid;

static char *probe_partition(dev_t dev, bool want_vfat, const char *gpt_type, const char *mbr_type, const char *what)
{
	if (!DYNLIB_LOAD(blkid, "libblkid.so.1", "blkid_new_probe_from_filename", "blkid_free_probe",
			 "blkid_probe_enable_superblocks", "blkid_probe_set_superblocks_flags",
			 "blkid_probe_enable_partitions", "blkid_probe_set_partitions_flags", "blkid_do_safeprobe",
			 "blkid_probe_lookup_value"))
		return xstrdup("cannot probe: libblkid.so.1 cannot be loaded");
	_cleanup_free_ char *node = devnode(dev);
	errno = 0;
	blkid_probe b = blkid.fn.new_probe_from_filename(node);
	if (!b) {
		if (errno == EACCES || errno == EPERM)
			return xstrdup("cannot probe (not root?)");
		return xasprintf("cannot probe %s: %s", node, errno ? strerror(errno) : "failed");
	}
	char *why = NULL;
	const char *v = NULL;
	blkid.fn.enable_superblocks(b, 1);
	blkid.fn.set_superblocks_flags(b, BLKID_SUBLKS_TYPE);
	blkid.fn.enable_partitions(b, 1);
	blkid.fn.set_partitions_flags(b, BLKID_PARTS_ENTRY_DETAILS);
	errno = 0;
	int rc = blkid.fn.do_safeprobe(b);
	if (rc == -2) {
		why = xasprintf("%s: ambiguous probe result", node);
		goto out;
	}
	if (rc < 0) {
		why = xasprintf("cannot probe %s: %s", node, errno ? strerror(errno) : "failed");
		goto out;
	}
	if (want_vfat) {
		if (rc == 1 || blkid.fn.lookup_value(b, "TYPE", &v, NULL) != 0) {
			why = xstrdup("no file system found on its device");
			goto out;
		}
		if (!streq(v, "vfat")) {
			why = xasprintf("file system is %s, not vfat", v);
			goto out;
		}
	}
	if (blkid.fn.lookup_value(b, "PART_ENTRY_SCHEME", &v, NULL) != 0) {
		why = xasprintf("%s is not a partition", node);
		goto out;
	}
	const char *want = NULL;
	if (streq(v, "gpt"))
		want = gpt_type;
	else if (streq(v, "dos"))
		want = mbr_type;
	if (!want) {
		why = xasprintf("partition table %s is neither GPT nor MBR", v);
		goto out;
	}
	if (blkid.fn.lookup_value(b, "PART_ENTRY_TYPE", &v, NULL) != 0) {
		why = xasprintf("cannot read the partition type of %s", node);
		goto out;
	}
	if (strcasecmp(v, want) != 0)
		why = xasprintf("partition type %s is not %s", v, what);
out:
	blkid.fn.free_probe(b);
	return why;
}

/* NULL if path is an ESP, else why not. */
static char *verify_esp(int fd)
{
	struct statfs sfs;
	if (fstatfs(fd, &sfs) < 0)
		return xasprintf("cannot statfs: %s", strerror(errno));
	if (sfs.f_type != MSDOS_SUPER_MAGIC)
		return xstrdup("not a vfat file system");
	if (!is_mount_root(fd))
		return xstrdup("not the root of a file system");
	struct stat st;
	if (fstat(fd, &st) < 0)
		return xasprintf("cannot stat: %s", strerror(errno));
	return probe_partition(st.st_dev, true, ESP_GPT_TYPE, "0xef", "ESP");
}

static char *verify_xbootldr(int fd)
{
	if (!is_mount_root(fd))
		return xstrdup("not the root of a file system");
	struct stat st;
	if (fstat(fd, &st) < 0)
		return xasprintf("cannot stat: %s", strerror(errno));
	if (major(st.st_dev) == 0)
		return xstrdup("no block device behind it");
	return probe_partition(st.st_dev, false, XBOOTLDR_GPT_TYPE, "0xea", "XBOOTLDR");
}

struct cand {
	const char *path;
	bool entries, ukis;
	int fd;
	struct stat st;
};

static bool same_dir(const struct cand *a, const struct cand *b)
{
	return a->st.st_dev == b->st.st_dev && a->st.st_ino == b->st.st_ino;
}

void find_boot_dirs(const struct root *r, bool trust, struct boot_dirs *out, struct strv *rejected)
{
	/* bootctl's order for the ESP; /boot comes first when trusted, as
	 * XBOOTLDR (or Fedora's GRUB /boot) is $BOOT where there is one */
	struct cand c[] = { { .path = "/efi" }, { .path = "/boot" }, { .path = "/boot/efi" } };
	enum { EFI, BOOT, BOOT_EFI };
	memset(out, 0, sizeof(*out));
	if (!r->live)
		trust = true;

	for (size_t i = 0; i < ARRAY_SIZE(c); i++) {
		c[i].fd = -1;
		_cleanup_free_ char *e = path_join(c[i].path, "loader/entries");
		_cleanup_free_ char *u = path_join(c[i].path, "EFI/Linux");
		c[i].entries = root_is_dir(r, e);
		c[i].ukis = root_is_dir(r, u);
		if (!c[i].entries && !c[i].ukis)
			continue;
		c[i].fd = root_openat(r, c[i].path, O_PATH | O_DIRECTORY, 0);
		if (c[i].fd < 0 || fstat(c[i].fd, &c[i].st) < 0) {
			if (c[i].fd >= 0)
				close(c[i].fd);
			c[i].fd = -1;
		}
	}

	if (trust) {
		static const int order[] = { BOOT, EFI, BOOT_EFI };
		for (size_t k = 0; k < ARRAY_SIZE(order); k++) {
			struct cand *x = &c[order[k]];
			if (x->fd < 0)
				continue;
			bool dup = false;
			for (size_t j = 0; j < k; j++)
				if (c[order[j]].fd >= 0 && same_dir(x, &c[order[j]]))
					dup = true;
			if (!dup)
				push_dir(out, x->path, BOOT_PLAIN, x->entries, x->ukis);
		}
		goto done;
	}

	int esp = -1;
	char *why_esp[ARRAY_SIZE(c)] = { NULL };
	for (size_t i = 0; i < ARRAY_SIZE(c); i++) {
		if (c[i].fd < 0)
			continue;
		if (esp >= 0 && c[i].st.st_dev == c[esp].st.st_dev)
			continue; /* the same file system seen again */
		why_esp[i] = verify_esp(c[i].fd);
		if (!why_esp[i] && esp < 0)
			esp = (int)i;
		else if (!why_esp[i])
			why_esp[i] = xasprintf("another ESP is in use (%s)", c[esp].path);
	}

	int xbl = -1;
	char *why_xbl = NULL;
	if (c[BOOT].fd >= 0 && esp != BOOT) {
		if (esp >= 0 && c[BOOT].st.st_dev == c[esp].st.st_dev) {
			/* /boot lies on the ESP: seen through it */
		} else {
			why_xbl = verify_xbootldr(c[BOOT].fd);
			if (!why_xbl)
				xbl = BOOT;
		}
	}

	if (xbl >= 0)
		push_dir(out, c[xbl].path, BOOT_XBOOTLDR, c[xbl].entries, c[xbl].ukis);
	if (esp >= 0)
		push_dir(out, c[esp].path, BOOT_ESP, c[esp].entries, c[esp].ukis);

	for (size_t i = 0; i < ARRAY_SIZE(c); i++) {
		if (!why_esp[i] || (int)i == xbl)
			continue;
		if (i == BOOT && why_xbl && c[BOOT].entries && grub_uses_blscfg(r)) {
			/* GRUB's blscfg reads /boot/loader/entries on any file system */
			log_verbose("%s: not an ESP or XBOOTLDR, but GRUB reads its BLS entries", c[i].path);
			push_dir(out, c[i].path, BOOT_PLAIN, c[i].entries, c[i].ukis);
			continue;
		}
		_cleanup_free_ char *disp = root_display(r, c[i].path);
		if (i == BOOT && why_xbl && !streq(why_xbl, why_esp[i]))
			strv_push(rejected, xasprintf("%s: %s; as XBOOTLDR: %s", disp, why_esp[i], why_xbl));
		else
			strv_push(rejected, xasprintf("%s: %s", disp, why_esp[i]));
	}
	for (size_t i = 0; i < ARRAY_SIZE(c); i++)
		free(why_esp[i]);
	free(why_xbl);
done:
	for (size_t i = 0; i < ARRAY_SIZE(c); i++)
		if (c[i].fd >= 0)
			close(c[i].fd);
}
