/* io/rootfs.h - every path the tool reads or writes is opened through here,
 * confined to the root directory (--root, or "/" on a live system):
 * openat2(RESOLVE_IN_ROOT) where the kernel has it, an equivalent
 * component walk elsewhere. An absolute symlink inside an image points into
 * the image, ".." cannot climb above it.
 *
 * Paths given to these functions are absolute within the root ("/boot/x").
 * Functions return a file descriptor, 0, or -errno. */
#pragma once

#include <dirent.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>

struct root {
	int fd;	     /* O_PATH descriptor of the root directory */
	char *path;  /* as given, for messages and for child processes */
	bool live;   /* no --root, not in a chroot: the running system ("/") */
	bool chroot; /* no --root, in a chroot (io/chroot.h): "/" as an offline root */
};

/* Opens the root directory. path NULL means "/": the live system, or, in
 * a chroot, an offline root like any --root (not live, chroot set). */
int root_open(struct root *r, const char *path);
void root_close(struct root *r);

/* Open a path inside the root. flags as for openat(2) (O_CREAT allowed).
 * The path is first opened O_PATH and its type checked on that descriptor:
 * without O_DIRECTORY or O_PATH only a regular file is opened (-EISDIR for
 * a directory, -EINVAL for a FIFO, socket or device, which are never
 * opened, so nothing blocks). With --root, a file on a pseudo file system
 * of the running kernel (proc, sysfs, devtmpfs, debugfs...) gives -EXDEV. */
int root_openat(const struct root *r, const char *path, int flags, mode_t mode);
/* The same, with the file's stat in *st (the type check's: one fstat). */
int root_openat_st(const struct root *r, const char *path, int flags, mode_t mode, struct stat *st);

/* The f_type (statfs(2)) of the file system holding fd, whose st_dev is
 * dev: one fstatfs per file system and run. -1 if it cannot be told. */
long root_fs_type(int fd, dev_t dev);

/* For an error of root_openat/root_read_file: the text to print ("not a
 * regular file", "on the running kernel's proc file system: refused with
 * --root", else strerror) and the exit code (EXIT_BADINPUT for what the
 * tree holds, EXIT_SYSTEM for the rest). */
const char *root_strerror(int e);
int root_error_exit(int e);

/* openat2 is retried on EAGAIN (64 times, then the component walk
 * resolves the path); how often EAGAIN was met (for tests). */
unsigned long root_openat2_eagain_count(void);
/* Tests only: the next n openat2 calls fail with EAGAIN. */
void root_openat2_inject_eagain(unsigned n);

/* Does every path noted since inputs_start (io/inputs.h) resolve to the same
 * file, unchanged, or give the same error as then? false also when the
 * noted set cannot be trusted. Called after inputs_stop. */
bool root_inputs_unchanged(const struct root *r);

/* Path for messages: "ROOT/path" with --root, "path" on a live system. */
char *root_display(const struct root *r, const char *path);

/* Reads a whole regular file (at most max bytes, else -EFBIG; a FIFO,
 * device or directory gives -EINVAL / -EISDIR). *out is NUL-terminated.
 * Bytes read before from the same unchanged file are taken again without
 * reading it (io/readcache.h); the path is resolved and checked all the same. */
int root_read_file(const struct root *r, const char *path, size_t max, char **out, size_t *len);
/* Same, for a file a run reads once (a kernel config, image or module):
 * its bytes are neither looked up in nor kept by io/readcache.h. */
int root_read_file_once(const struct root *r, const char *path, size_t max, char **out, size_t *len);
/* Same, from an open descriptor (fstat checks it is a regular file). */
int read_fd_all(int fd, size_t max, char **out, size_t *len);
/* Same, with fd's fstat already in st, taken after t (readcache_clock()). */
int read_fd_stat(int fd, const struct stat *st, struct timespec t, size_t max, char **out, size_t *len);
/* Same, for a path on the invoking system, outside any root: a file named
 * on the command line (--config), or the host's /proc on a live system. */
int read_host_file(const char *path, size_t max, char **out, size_t *len);

int root_stat(const struct root *r, const char *path, struct stat *st); /* follows links in root */
int root_lstat(const struct root *r, const char *path, struct stat *st);
bool root_exists(const struct root *r, const char *path);
bool root_is_dir(const struct root *r, const char *path);
bool root_is_reg(const struct root *r, const char *path);

/* Appends the names in the directory fd (open O_RDONLY|O_DIRECTORY, at
 * its start; not closed), but "." and "..", to out in the directory's
 * order. 0 or -errno. */
struct strv;
int dir_fd_names(int fd, struct strv *out);

/* Sorted names of the entries of a directory (no "." and ".."), optionally
 * only those ending with suffix. Returns count or -errno. */
int root_list_dir(const struct root *r, const char *path, const char *suffix, char ***names);
void names_free(char **names, int n);

/* Creates a directory and its missing parents inside the root (mode for
 * the new ones). Returns 0 or -errno. */
int root_mkdir_p(const struct root *r, const char *path, mode_t mode);

/* Joins "a" and "b" with exactly one '/'. */
char *path_join(const char *a, const char *b);

/* Largest file the tool ever reads (boot files, configs, policies). */
#define MAX_INPUT_FILE (64u << 20)
