/* io/spawn.h - child processes with an argv (never a shell string) and a clean
 * environment (PATH=/usr/sbin:/usr/bin:/sbin:/bin, LC_ALL=C, plus what the
 * caller passes). */
#pragma once

#include <stddef.h>

/* Runs argv[0] (absolute path, or searched in the clean PATH) with argv.
 * env: extra "NAME=value" strings (NULL-terminated, may be NULL).
 * chroot_dir: must be NULL; anything else is refused (-EPERM, no child
 * started): a program of an image is never run under a bare chroot, which
 * does not confine root (apply --regenerate enters an image in a private
 * mount namespace, through prepare). in_fds: fds to keep open in the child (dup'ed to 3, 4, ... in
 * order; -1 terminated, may be NULL). Captures stdout+stderr into *output
 * (may be NULL to pass them through). Returns the exit status (0..255),
 * 128+signal, or -errno if it could not start. */
int spawn_run(const char *const *argv, const char *const *env, const char *chroot_dir, const int *in_fds,
	      char **output);

/* The same, with prepare(data) called in the child after its descriptors
 * are set up and before the chroot and exec: it may only make system calls
 * (no allocation, no stdio) and returns 0 or an errno value, which fails the
 * start (-errno). */
typedef int (*spawn_prepare_fn)(void *data);
int spawn_run_prepared(const char *const *argv, const char *const *env, const char *chroot_dir, const int *in_fds,
		       char **output, spawn_prepare_fn prepare, void *data);

/* The next spawn_run with an output: each line of it also said as it
 * comes, on stderr as a verbose line "PROG: LINE" (-v only), not only
 * when the child is done. Cleared by that run. */
void spawn_stream_next(const char *prog);
/* A child's failure as an error (EXIT_SYSTEM): rc from spawn_run, below 0
 * "WHAT: cannot run: ERROR", else "WHAT failed (exit status N)" and its
 * output without its last line breaks. Returns -EXIT_SYSTEM. */
int spawn_failed(const char *what, int rc, const char *output);

/* Counts children started by this process (for the bench: a no-op apply
 * starts none). */
unsigned spawn_count(void);

/* Prints a unified diff of old and new content to stdout with labels
 * a/PATH and b/PATH (the contents are handed to `diff -u` through memfds:
 * nothing is written to any file system). A missing old or new file is
 * given as NULL. Returns 0 or -EXIT_SYSTEM. */
int print_unified_diff(const char *path, const char *old, size_t old_len, const char *new_content, size_t new_len);
