/* facts/kernels.c - the kernels of a root and the facts about each (facts/kernels.h).
 * Every file is opened through io/rootfs.h. The host's /proc is read only on
 * the live system, for the running kernel (config.gz, kallsyms), and
 * /proc/self/fd only names our own descriptors.
 *
 * "Installed" (DESIGN section 3): lib/modules/VER or usr/lib/modules/VER
 * opens with libkmod, or boot/vmlinuz-VER is a file. kmod_new() alone
 * accepts any directory name without looking at it, so "opens" means
 * kmod_new() and kmod_load_resources() both succeed: the module indexes
 * depmod writes (modules.dep.bin, modules.alias.bin, ...) are there and
 * valid. A directory left behind by a removed kernel (a few stray DKMS
 * files, no indexes) therefore does not count. With --root and in a
 * chroot, libkmod is not used (it opens files by name): modules.dep.bin
 * must carry the index header (module_tree_opens).
 *
 * Cost: /proc/kallsyms is formatted by the kernel as it is read; a
 * distribution kernel's (120,000 lines, 5 MB) takes about 20 ms, ten times
 * inflating /proc/config.gz. It is read once, for the running kernel only,
 * and the reading stops at the first module symbol. */
#include "facts/kernels.h"
#include "lib/diag.h"
#include "lib/util.h"

#include <ctype.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <libkmod.h>
#include <stdio.h>
#include <sys/utsname.h>
#include <unistd.h>

/* ---- which kernels ------------------------------------------------------- */

/* A name that can be a kernel release: starts with a digit, no '/', no
 * white space or control characters. */
static bool release_name_ok(const char *s)
{
	if (!s || !isdigit((unsigned char)s[0]) || strlen(s) > 255)
		return false;
	for (const char *p = s; *p; p++)
		if (*p == '/' || isspace((unsigned char)*p) || iscntrl((unsigned char)*p))
			return false;
	return true;
}

static void kmod_silent(void *data _unused_, int priority _unused_, const char *file _unused_, int line _unused_,
			const char *fn _unused_, const char *format _unused_, va_list args _unused_)
{
}

/* Is one of the index files of the module tree DIR ("modules.*") not a
 * regular file (a symbolic link, FIFO, device, directory)? libkmod opens
 * them by name, would follow such a link itself, out of the root, and
 * would block on a FIFO. */
static bool index_has_links(const struct root *r, const char *dir)
{
	char **names;
	int n = root_list_dir(r, dir, NULL, &names);
	if (n < 0)
		return true;
	bool links = false;
	for (int i = 0; i < n && !links; i++) {
		if (!startswith(names[i], "modules."))
			continue;
		_cleanup_free_ char *p = path_join(dir, names[i]);
		struct stat st;
		/* a FIFO would block libkmod, a device it would open */
		links = root_lstat(r, p, &st) < 0 || !S_ISREG(st.st_mode);
	}
	names_free(names, n);
	return links;
}

/* libkmod is loaded when a module tree is first looked at, not at start:
 * most kernels are found by their boot/vmlinuz-VER, and linking libkmod
 * (with the compression libraries it pulls in) costs every command about
 * as much as inflating /proc/config.gz. */
struct kmod_api {
	__typeof__(&kmod_new) new_ctx;
	__typeof__(&kmod_set_log_fn) set_log_fn;
	__typeof__(&kmod_load_resources) load_resources;
	__typeof__(&kmod_unref) unref;
};

static const struct kmod_api *kmod_api(void)
{
	static struct kmod_api api;
	static int state; /* 0 not tried, 1 loaded, -1 failed */
	if (state == 0) {
		void *h = dlopen("libkmod.so.2", RTLD_NOW | RTLD_LOCAL);
		state = -1;
		if (h) {
			*(void **)&api.new_ctx = dlsym(h, "kmod_new");
			*(void **)&api.set_log_fn = dlsym(h, "kmod_set_log_fn");
			*(void **)&api.load_resources = dlsym(h, "kmod_load_resources");
			*(void **)&api.unref = dlsym(h, "kmod_unref");
			if (api.new_ctx && api.set_log_fn && api.load_resources && api.unref)
				state = 1;
		}
		if (state < 0)
			log_verbose("libkmod.so.2: %s; module trees are judged by modules.dep.bin",
				    h ? "incomplete" : dlerror());
	}
	return state > 0 ? &api : NULL;
}

/* Is DIR/modules.dep.bin, opened confined to the root (a regular file,
 * nothing that blocks), a module index as depmod writes it: the magic
 * 0xB007F457 and format version 2 (big-endian), what libkmod checks first
 * when it opens one? */
static bool dep_index_ok(const struct root *r, const char *dir)
{
	_cleanup_free_ char *dep = xasprintf("%s/modules.dep.bin", dir);
	_cleanup_close_ int fd = root_openat(r, dep, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC, 0);
	unsigned char h[8];
	if (fd < 0 || pread(fd, h, sizeof(h), 0) != (ssize_t)sizeof(h))
		return false;
	return h[0] == 0xb0 && h[1] == 0x07 && h[2] == 0xf4 && h[3] == 0x57 && h[4] == 0x00 && h[5] == 0x02;
}

/* Does the module tree DIR (inside the root) open with libkmod? Only on
 * the live system: libkmod opens the index files by name, and a file of an
 * image could be swapped between the tool's checks and libkmod's open (a
 * FIFO that blocks it, a link out of the root). With --root and in a
 * chroot, and where libkmod or /proc is missing or an index is no regular
 * file, the index libkmod needs first is checked by the tool itself,
 * opened confined to the root. On the live system the directory is handed
 * to libkmod as /proc/self/fd/N, so that its lookups start inside it. */
static bool module_tree_opens(const struct root *r, const char *dir)
{
	/* opened to be read, not only resolved: a change of its entries
	 * shows in its identity (io/inputs.h) */
	_cleanup_close_ int fd = root_openat(r, dir, O_RDONLY | O_DIRECTORY, 0);
	if (fd < 0)
		return false;
	char path[64];
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	const struct kmod_api *k = r->live ? kmod_api() : NULL;
	if (!k || access(path, F_OK) < 0 || index_has_links(r, dir))
		return dep_index_ok(r, dir);
	static const char *const no_config[] = { NULL }; /* never read the host's modprobe.d */
	struct kmod_ctx *ctx = k->new_ctx(path, no_config);
	if (!ctx)
		return false;
	k->set_log_fn(ctx, kmod_silent, NULL);
	bool ok = k->load_resources(ctx) == 0;
	k->unref(ctx);
	return ok;
}

static bool kernel_installed(const struct root *r, const char *ver)
{
	_cleanup_free_ char *vmlinuz = xasprintf("/boot/vmlinuz-%s", ver);
	if (root_is_reg(r, vmlinuz))
		return true;
	for (size_t i = 0; i < ARRAY_SIZE(kernel_module_trees); i++) {
		/* kernel-install's layout: the image in the module tree */
		_cleanup_free_ char *image = xasprintf("%s/%s/vmlinuz", kernel_module_trees[i], ver);
		if (root_is_reg(r, image))
			return true;
	}
	for (size_t i = 0; i < ARRAY_SIZE(kernel_module_trees); i++) {
		_cleanup_free_ char *dir = xasprintf("%s/%s", kernel_module_trees[i], ver);
		if (module_tree_opens(r, dir))
			return true;
		/* Raspberry Pi OS: a module tree and its flavour's image */
		if (root_is_dir(r, dir)) {
			_cleanup_free_ char *img = kernel_rpi_image(r, ver);
			if (img)
				return true;
		}
	}
	return false;
}

/* Adds the release-like names of one directory (optionally only those
 * with prefix, which is stripped) to sv. */
static int collect_names(const struct root *r, const char *dir, const char *prefix, struct strv *sv)
{
	char **names;
	int n = root_list_dir(r, dir, NULL, &names);
	if (n == -ENOENT || n == -ENOTDIR)
		return 0;
	if (n < 0) {
		_cleanup_free_ char *disp = root_display(r, dir);
		return diag_error(root_error_exit(n), "%s: %s", disp, root_strerror(n));
	}
	for (int i = 0; i < n; i++) {
		const char *v = names[i];
		if (prefix) {
			if (!startswith(v, prefix))
				continue;
			v += strlen(prefix);
		}
		/* Fedora's rescue image (vmlinuz-0-rescue-MACHINEID) is no release */
		if (!release_name_ok(v) || strstr(v, "-rescue-"))
			continue;
		if (!strv_contains(sv, v))
			strv_pushdup(sv, v);
	}
	names_free(names, n);
	return 0;
}

static int cmp_kernels(const void *a, const void *b)
{
	const struct kernel *ka = a, *kb = b;
	int c = release_compare(kb->version, ka->version); /* newest first */
	return c ? c : strcmp(ka->version, kb->version);
}

static bool errno_is_absent(int e) { return e == -ENOENT || e == -ENOTDIR; }

/* ---- cgroup_enable in the symbol table ----------------------------------- */

#define SYMBOLS_MAX ((size_t)1 << 30) /* /proc/kallsyms reports size 0: cap what we read */
#define SYMBOLS_BUF ((size_t)1 << 20)

struct symbol_scan {
	bool found_enable;
	bool found_start_kernel; /* proves it is a real symbol table */
	bool done;
};

static bool name_is(const char *name, size_t len, const char *want)
{
	size_t wl = strlen(want);
	/* also "cgroup_enable.llvm.123" and other compiler-suffixed copies */
	return len >= wl && memcmp(name, want, wl) == 0 && (len == wl || name[wl] == '.');
}

/* "ADDRESS TYPE NAME" or, for a module's symbol in kallsyms,
 * "ADDRESS TYPE NAME\t[MODULE]". */
static void scan_line(struct symbol_scan *s, const char *p, const char *end)
{
	const char *sp = memchr(p, ' ', (size_t)(end - p));
	if (!sp || end - sp < 4 || sp[2] != ' ')
		return;
	const char *name = sp + 3;
	const char *ne = name;
	while (ne < end && *ne != '\t' && *ne != ' ' && *ne != '\r')
		ne++;
	if (ne < end && *ne == '\t') {
		/* module symbols follow the kernel's own: cgroup_enable is
		 * built-in only, so stop here */
		s->done = true;
		return;
	}
	size_t len = (size_t)(ne - name);
	if (name_is(name, len, "cgroup_enable"))
		s->found_enable = true;
	else if (len == strlen("start_kernel") && memcmp(name, "start_kernel", len) == 0)
		s->found_start_kernel = true;
	if (s->found_enable && s->found_start_kernel)
		s->done = true;
}

/* Reads a symbol table (System.map or /proc/kallsyms) streaming to its end.
 * Returns 1 if it has cgroup_enable, 0 if not, -ENODATA if it does not look
 * like a symbol table, or -errno. */
static int symbols_have_cgroup_enable(int fd)
{
	struct symbol_scan s = { 0 };
	_cleanup_free_ char *buf = xmalloc(SYMBOLS_BUF);
	size_t have = 0, total = 0;
	for (;;) {
		ssize_t n = read(fd, buf + have, SYMBOLS_BUF - have);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		total += (size_t)n;
		if (total > SYMBOLS_MAX)
			return -EFBIG;
		have += (size_t)n;
		const char *p = buf, *end = buf + have;
		const char *nl;
		while (!s.done && (nl = memchr(p, '\n', (size_t)(end - p)))) {
			scan_line(&s, p, nl);
			p = nl + 1;
		}
		if (n == 0 && !s.done && p < end)
			scan_line(&s, p, end); /* last line without newline */
		if (s.done || n == 0)
			break;
		have = (size_t)(end - p);
		if (have == SYMBOLS_BUF)
			return -ENODATA; /* a 1 MiB line: not a symbol table */
		memmove(buf, p, have);
	}
	if (!s.found_start_kernel)
		return -ENODATA;
	return s.found_enable;
}

static int scan_symbol_file(const struct root *r, const char *path, bool need_regular)
{
	_cleanup_close_ int fd = root_openat(r, path, O_RDONLY | O_NONBLOCK | O_NOCTTY, 0);
	if (fd < 0)
		return fd;
	if (need_regular) {
		struct stat st;
		if (fstat(fd, &st) < 0)
			return -errno;
		if (!S_ISREG(st.st_mode))
			return -EINVAL;
	}
	return symbols_have_cgroup_enable(fd);
}

static bool symbols_when_irrelevant = true;

void kernels_read_symbols_always(bool always) { symbols_when_irrelevant = always; }

static void load_accepts_enable(const struct root *r, struct kernel *k)
{
	/* A mainline kernel runs with memcg on unless told cgroup_disable=,
	 * which always wins: whether it also knows cgroup_enable= changes no
	 * decision, so the symbol tables are not read for it unless asked. */
	if (!symbols_when_irrelevant && !k->config_error && !k->config_missing && k->kc.family == FAMILY_MAINLINE &&
	    k->kc.default_state == MEMCG_DEFAULT_ON) {
		k->accepts_enable = k->kc.accepts_enable;
		k->accepts_enable_source = "config (symbol tables not read: memcg is on by default)";
		return;
	}
	if (r->live && k->running) {
		int rc = scan_symbol_file(r, "/proc/kallsyms", false);
		if (rc >= 0) {
			k->accepts_enable = rc;
			k->accepts_enable_source = "/proc/kallsyms";
			return;
		}
		log_verbose("/proc/kallsyms: %s; trying System.map", strerror(-rc));
	}
	_cleanup_free_ char *map = xasprintf("/boot/System.map-%s", k->version);
	int rc = scan_symbol_file(r, map, true);
	if (rc >= 0) {
		k->system_map = root_display(r, map);
		k->accepts_enable = rc;
		const char *slash = strrchr(k->system_map, '/');
		k->accepts_enable_source = slash ? slash + 1 : k->system_map; /* "System.map-VER" */
		return;
	}
	if (!errno_is_absent(rc)) {
		_cleanup_free_ char *disp = root_display(r, map);
		log_verbose("%s: %s; using the config's markers", disp,
			    rc == -ENODATA ? "no kernel symbols in it" : strerror(-rc));
	}
	k->accepts_enable = k->config_error || k->config_missing ? 0 : k->kc.accepts_enable;
	k->accepts_enable_source = "config";
}

/* ---- the list ------------------------------------------------------------ */

static void kernel_free_one(struct kernel *k);

static struct kernel *add_kernel(struct kernel_list *l, const char *version)
{
	l->k = xrealloc(l->k, (l->n + 1) * sizeof(*l->k));
	struct kernel *k = &l->k[l->n++];
	memset(k, 0, sizeof(*k));
	k->version = xstrdup(version);
	return k;
}

int kernels_load(const struct root *r, const char *only, struct kernel_list *out)
{
	memset(out, 0, sizeof(*out));
	if (only && !release_name_ok(only))
		return diag_error(EXIT_USAGE, "not a kernel release: %s", only);

	if (r->live) {
		struct utsname u;
		if (uname(&u) < 0)
			return diag_error(EXIT_SYSTEM, "uname: %s", strerror(errno));
		out->running_release = xstrdup(u.release);
	}

	if (only) {
		out->only = true;
		struct kernel *k = add_kernel(out, only);
		k->installed = kernel_installed(r, only);
		k->running = streq_ptr(only, out->running_release);
	} else {
		struct strv names = { 0 };
		int rc = collect_names(r, "/lib/modules", NULL, &names);
		if (rc >= 0)
			rc = collect_names(r, "/usr/lib/modules", NULL, &names);
		if (rc >= 0)
			rc = collect_names(r, "/boot", "vmlinuz-", &names);
		if (rc < 0) {
			strv_free(&names);
			kernels_free(out);
			return rc;
		}
		for (size_t i = 0; i < names.n; i++) {
			if (!kernel_installed(r, names.v[i]))
				continue;
			struct kernel *k = add_kernel(out, names.v[i]);
			k->installed = true;
			k->running = streq_ptr(k->version, out->running_release);
		}
		strv_free(&names);
		if (out->running_release) {
			bool listed = false;
			for (size_t i = 0; i < out->n; i++)
				listed = listed || out->k[i].running;
			if (!listed)
				add_kernel(out, out->running_release)->running = true;
		}
		if (out->n > 1)
			qsort(out->k, out->n, sizeof(*out->k), cmp_kernels);
	}

	for (size_t i = 0; i < out->n; i++) {
		struct kernel *k = &out->k[i];
		/* The running kernel whose package is gone (its config with it)
		 * is no input when other kernels are installed: it boots no
		 * more, and it must not make every command fail. */
		bool optional = !only && !k->installed && out->n > 1;
		if (!kernel_load_config(r, k)) {
			if (optional) {
				log_verbose("no kernel config for %s (looked in %s)", k->version, k->config_looked);
				kernel_free_one(k);
				memmove(k, k + 1, (out->n - i - 1) * sizeof(*k));
				out->n--;
				i--;
				continue;
			}
		}
		load_accepts_enable(r, k);
	}
	return 0;
}

static void kernel_free_one(struct kernel *k)
{
	free(k->version);
	free(k->config_path);
	free(k->config_looked);
	free(k->config_note);
	kconfig_facts_free(&k->kc);
	free(k->system_map);
	free(k->fw_prefix);
	free(k->fw_blob);
	free(k->fw_note);
	strv_free(&k->fw_others);
}

void kernels_free(struct kernel_list *l)
{
	if (!l)
		return;
	for (size_t i = 0; i < l->n; i++)
		kernel_free_one(&l->k[i]);
	free(l->k);
	free(l->running_release);
	memset(l, 0, sizeof(*l));
}

struct kernel *kernels_default(struct kernel_list *l)
{
	if (!l || l->n == 0)
		return NULL;
	if (l->only)
		return &l->k[0];
	for (size_t i = 0; i < l->n; i++)
		if (l->k[i].installed)
			return &l->k[i];
	for (size_t i = 0; i < l->n; i++)
		if (l->k[i].running)
			return &l->k[i];
	return NULL;
}
