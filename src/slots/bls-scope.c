/* slots/bls-scope.c - which BLS entries belong to this installation, and
 * which kernel an entry boots, as the tools that write them name them.
 *
 * Scope, the way bootctl and kernel-install tell installations apart on a
 * shared ESP / XBOOTLDR: an entry with a "machine-id" key is this
 * installation's when it is this root's machine id; otherwise its file
 * name "TOKEN-RELEASE[-SNAPSHOT][+TRIES[-DONE]].conf" (kernel-install,
 * 20-grub.install, sdbootutil with its "system-"/"snapper-" prefix) is
 * this installation's when TOKEN is one of this root's entry tokens
 * (/etc/kernel/entry-token, the machine id, os-release IMAGE_ID or ID).
 * An entry that has neither, or a root that names no token at all, stays
 * managed when it names a kernel release (a single-OS ESP; a release this
 * root does not have is left by the planner); one that names no release
 * either (a hand-written "arch.conf": linux /vmlinuz-linux) is this
 * installation's only if its image is a file of this root by that name
 * (bls_entry_unowned).
 *
 * Kernel: the release the linux path names where it names one (Fedora's
 * debug entries say "version 6.11.4-301.fc40.x86_64+debug-debug" for the
 * kernel /vmlinuz-6.11.4-301.fc40.x86_64+debug); else the version key,
 * without sdbootutil's snapshot prefix ("15@6.9.3-1-default"). */
#include "slots/kinds.h"

#include <ctype.h>
#include <errno.h>
#include <strings.h>
#include <sys/stat.h>

static bool is_machine_id(const char *s, size_t n)
{
	if (n != 32)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isxdigit((unsigned char)s[i]))
			return false;
	return true;
}

/* The first line of a small file of the root, trimmed; NULL if none. */
static char *first_line(const struct root *r, const char *path)
{
	char *text = NULL;
	size_t len = 0;
	if (root_read_file(r, path, 4096, &text, &len) < 0)
		return NULL;
	char *p = text;
	while (*p && isspace((unsigned char)*p))
		p++;
	size_t n = 0;
	while (p[n] && p[n] != '\n' && p[n] != '\r')
		n++;
	while (n > 0 && isspace((unsigned char)p[n - 1]))
		n--;
	char *v = n ? xstrndup(p, n) : NULL;
	free(text);
	return v;
}

/* KEY=value of os-release, unquoted; NULL if absent. */
static char *os_release_value(const char *text, const char *key)
{
	size_t kl = strlen(key);
	for (const char *p = text; p && *p;) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		if (n > kl && memcmp(p, key, kl) == 0 && p[kl] == '=') {
			const char *v = p + kl + 1;
			size_t vl = n - kl - 1;
			if (vl >= 2 && (v[0] == '"' || v[0] == '\'') && v[vl - 1] == v[0]) {
				v++;
				vl -= 2;
			}
			return vl ? xstrndup(v, vl) : NULL;
		}
		p = nl ? nl + 1 : NULL;
	}
	return NULL;
}

void bls_identity_load(const struct root *r, struct bls_identity *id)
{
	memset(id, 0, sizeof(*id));
	char *mid = first_line(r, "/etc/machine-id");
	if (mid && is_machine_id(mid, strlen(mid))) {
		for (char *c = mid; *c; c++)
			*c = (char)tolower((unsigned char)*c);
		id->machine_id = mid;
		strv_pushdup(&id->tokens, mid);
	} else {
		free(mid);
	}
	char *token = first_line(r, "/etc/kernel/entry-token");
	if (token && !strv_contains(&id->tokens, token))
		strv_push(&id->tokens, token);
	else
		free(token);
	char *osr = NULL;
	size_t len = 0;
	if (root_read_file(r, "/etc/os-release", 65536, &osr, &len) < 0)
		(void)root_read_file(r, "/usr/lib/os-release", 65536, &osr, &len);
	if (osr) {
		static const char *const keys[] = { "IMAGE_ID", "ID" };
		for (size_t i = 0; i < ARRAY_SIZE(keys); i++) {
			char *v = os_release_value(osr, keys[i]);
			if (v && !strv_contains(&id->tokens, v))
				strv_push(&id->tokens, v);
			else
				free(v);
		}
		free(osr);
	}
}

void bls_identity_free(struct bls_identity *id)
{
	free(id->machine_id);
	strv_free(&id->tokens);
	memset(id, 0, sizeof(*id));
}

char *bls_entry_kernel(const char *version, const char *linux_path)
{
	char *from_linux = bls_version_from_linux(linux_path);
	if (from_linux)
		return from_linux;
	if (!version || !*version)
		return NULL;
	/* sdbootutil: "SNAPSHOT@RELEASE" */
	const char *p = version;
	while (isdigit((unsigned char)*p))
		p++;
	if (p > version && *p == '@' && p[1])
		return xstrdup(p + 1);
	return xstrdup(version);
}

/* The file name without ".conf" (".efi") and a boot counter ("+3", "+2-1"). */
static char *name_stem(const char *path)
{
	const char *slash = strrchr(path, '/');
	const char *name = slash ? slash + 1 : path;
	size_t n = strlen(name);
	if (n > 5 && memcmp(name + n - 5, ".conf", 5) == 0)
		n -= 5;
	else if (n > 4 && strcasecmp(name + n - 4, ".efi") == 0)
		n -= 4; /* a UKI's: "TOKEN-RELEASE[+COUNTER].efi" */
	const char *plus = NULL;
	for (size_t i = 0; i < n; i++)
		if (name[i] == '+')
			plus = name + i;
	if (plus) {
		const char *c = plus + 1;
		while (c < name + n && isdigit((unsigned char)*c))
			c++;
		if (c > plus + 1 && c < name + n && *c == '-') {
			const char *d = ++c;
			while (c < name + n && isdigit((unsigned char)*c))
				c++;
			if (c == d)
				c = NULL;
		}
		if (c == name + n)
			n = (size_t)(plus - name);
	}
	return xstrndup(name, n);
}

/* The entry-token prefix of a file name "TOKEN-RELEASE[-SNAPSHOT]", given
 * the release the entry boots; NULL when the name is not of that form. */
static char *name_token(const char *stem, const char *release)
{
	if (!release)
		return NULL;
	/* sdbootutil orders GRUB's BLS menu by these prefixes */
	static const char *const prefixes[] = { "system-", "snapper-" };
	for (size_t i = 0; i < ARRAY_SIZE(prefixes); i++)
		if (startswith(stem, prefixes[i]) && strlen(stem) > strlen(prefixes[i]))
			stem += strlen(prefixes[i]);
	size_t rl = strlen(release);
	for (const char *p = strchr(stem, '-'); p; p = strchr(p + 1, '-')) {
		if (strncmp(p + 1, release, rl) != 0)
			continue;
		const char *rest = p + 1 + rl;
		bool snapshot = *rest == '-' && rest[1] && strspn(rest + 1, "0123456789") == strlen(rest + 1);
		if (*rest == '\0' || snapshot)
			return xstrndup(stem, (size_t)(p - stem));
	}
	return NULL;
}

char *bls_entry_foreign(const struct bls_identity *id, const char *path, const char *machine_id_key,
			const char *release)
{
	if (machine_id_key && *machine_id_key && id->machine_id) {
		if (strcasecmp(machine_id_key, id->machine_id) != 0)
			return xasprintf("another installation's entry (machine-id %s)", machine_id_key);
		return NULL;
	}
	if (id->tokens.n == 0)
		return NULL;
	_cleanup_free_ char *stem = name_stem(path);
	_cleanup_free_ char *token = name_token(stem, release);
	if (!token || strv_contains(&id->tokens, token))
		return NULL;
	for (size_t i = 0; i < id->tokens.n; i++)
		if (strcasecmp(id->tokens.v[i], token) == 0)
			return NULL;
	return xasprintf("another installation's entry (entry token %s)", token);
}

char *bls_entry_unowned(const struct root *r, const struct bls_identity *id, const char *path,
			const char *machine_id_key, const char *linux_path)
{
	if (machine_id_key && *machine_id_key && id->machine_id && strcasecmp(machine_id_key, id->machine_id) == 0)
		return NULL;
	_cleanup_free_ char *stem = name_stem(path);
	for (size_t i = 0; i < id->tokens.n; i++) {
		size_t tl = strlen(id->tokens.v[i]);
		if (strncasecmp(stem, id->tokens.v[i], tl) == 0 && (stem[tl] == '\0' || stem[tl] == '-'))
			return NULL;
	}
	/* a kernel image of this root by that name, in /boot (Arch's
	 * vmlinuz-linux) or at the top (Debian's /vmlinuz link) */
	const char *base = linux_path ? strrchr(linux_path, '/') : NULL;
	base = base ? base + 1 : linux_path;
	if (base && *base && !streq(base, ".") && !streq(base, "..")) {
		static const char *const dirs[] = { "/boot", "/" };
		for (size_t i = 0; i < ARRAY_SIZE(dirs); i++) {
			_cleanup_free_ char *p = path_join(dirs[i], base);
			struct stat st;
			if (root_stat(r, p, &st) == 0 && S_ISREG(st.st_mode))
				return NULL;
		}
	}
	return xasprintf("another installation's entry, it seems: no machine-id or entry token of this root, and "
			 "%s names no kernel it has",
			 linux_path ? linux_path : "its linux line");
}
