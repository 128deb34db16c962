/* fuzz-grub-root.c - the GRUB readers that only run on a root
 * (src/slot-grub.c's grub_slots_find: /etc/default/grub and its drop-ins,
 * read for GRUB_CMDLINE_LINUX* assignments and the marked line, the
 * generated menu and grubenv), through a scratch root written per input.
 * The input is up to four files separated by a line "--8<--":
 * /etc/default/grub, /etc/default/grub.d/50-x.cfg, /boot/grub/grub.cfg,
 * /boot/grub/grubenv. Its first byte picks the layout: Debian (grub-mkconfig
 * that sources grub.d: the drop-in is the slot) or upstream (the marked
 * line in /etc/default/grub is). Properties: discovery returns 0 or a
 * bad-input error naming "FILE:LINE:"; every slot found is a GRUB kind (grub.tokens included);
 * the menu's state is in-sync or drift; edits of the inputs are
 * idempotent. */
#include "fuzz.h"
#include "decisions.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "slots/grub/grub.h"
#include "slots/table.h"
#include "slots/kinds.h"

static char rootdir[] = "/tmp/fuzz-grub-root.XXXXXX";
static struct root root;

static void put(const char *rel, const char *data, size_t len, mode_t mode)
{
	char *p = xasprintf("%s%s", rootdir, rel);
	if (!data) {
		unlink(p);
		free(p);
		return;
	}
	int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
	FUZZ_CHECK(fd >= 0);
	FUZZ_CHECK(write(fd, data, len) == (ssize_t)len);
	close(fd);
	free(p);
}

static void mkdirs(const char *rel)
{
	char *p = xasprintf("%s%s", rootdir, rel);
	for (char *s = p + strlen(rootdir) + 1; (s = strchr(s, '/')); s++) {
		*s = '\0';
		mkdir(p, 0755);
		*s = '/';
	}
	mkdir(p, 0755);
	free(p);
}

static const char *const all_files[] = { "/etc/default/grub", "/etc/default/grub.d/50-x.cfg", "/boot/grub/grub.cfg",
					 "/boot/grub/grubenv", "/usr/sbin/grub-mkconfig" };
static const char *const all_dirs[] = { "/etc/default/grub.d", "/etc/default", "/etc", "/boot/grub", "/boot",
					"/usr/sbin", "/usr", "" };

static void cleanup(void)
{
	for (size_t i = 0; i < ARRAY_SIZE(all_files); i++)
		put(all_files[i], NULL, 0, 0);
	for (size_t i = 0; i < ARRAY_SIZE(all_dirs); i++) {
		char *p = xasprintf("%s%s", rootdir, all_dirs[i]);
		rmdir(p);
		free(p);
	}
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	FUZZ_CHECK(mkdtemp(rootdir));
	mkdirs("/etc/default/grub.d");
	mkdirs("/boot/grub");
	mkdirs("/usr/sbin");
	FUZZ_CHECK(root_open(&root, rootdir) == 0);
	atexit(cleanup);
	return 0;
}

static const char debian_mkconfig[] =
	"#! /bin/sh\nfor x in ${sysconfdir}/default/grub.d/*.cfg ; do\n  . \"$x\"\ndone\n";
static const char upstream_mkconfig[] = "#! /bin/sh\nif test -f ${sysconfdir}/default/grub ; then\n"
					"  . ${sysconfdir}/default/grub\nfi\n";

static const struct decision *lookup(void *data, const char *release, const struct kernel_decision **own)
{
	(void)release;
	*own = NULL;
	return data;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	bool debian = data[0] & 1;
	put("/usr/sbin/grub-mkconfig", debian ? debian_mkconfig : upstream_mkconfig,
	    strlen(debian ? debian_mkconfig : upstream_mkconfig), 0755);
	static const char *const files[] = { "/etc/default/grub", "/etc/default/grub.d/50-x.cfg",
					     "/boot/grub/grub.cfg", "/boot/grub/grubenv" };
	const char *p = (const char *)data + 1, *end = (const char *)data + size;
	for (size_t i = 0; i < ARRAY_SIZE(files); i++) {
		if (!p) {
			put(files[i], NULL, 0, 0);
			continue;
		}
		const char *sep = memmem(p, (size_t)(end - p), "\n--8<--\n", 8);
		size_t len = sep ? (size_t)(sep - p) : (size_t)(end - p);
		put(files[i], p, len, 0644);
		p = sep ? sep + 8 : NULL;
	}

	struct slot_list l = { 0 };
	struct fuzz_capture cap;
	fuzz_capture_begin(&cap);
	int r = grub_slots_find(&root, NULL, &l);
	const char *err = fuzz_capture_end(&cap);
	if (r < 0) {
		FUZZ_CHECK(r == -EXIT_BADINPUT);
		char *want = xasprintf("memcg-policy: %s/", rootdir);
		FUZZ_CHECK(strncmp(err, want, strlen(want)) == 0);
		free(want);
	}
	fuzz_capture_free(&cap);

	struct decision d = { 0 };
	fuzz_decision_strv(&fuzz_decisions[(data[0] >> 1) % ARRAY_SIZE(fuzz_decisions)], &d.add, &d.remove);
	for (size_t i = 0; r == 0 && i < l.n; i++) {
		struct slot *s = &l.v[i];
		FUZZ_CHECK(s->kind == SLOT_GRUB_DROPIN || s->kind == SLOT_GRUB_DEFAULT || s->kind == SLOT_GRUB_CFG ||
			   s->kind == SLOT_GRUBENV || s->kind == SLOT_GRUB_TOKENS);
		if (s->kind == SLOT_GRUB_CFG) {
			char *why = NULL;
			enum slot_state st = grub_cfg_state(s, lookup, &d, &why);
			FUZZ_CHECK(st == SLOT_IN_SYNC || st == SLOT_DRIFT);
			FUZZ_CHECK((st == SLOT_DRIFT) == (why != NULL));
			free(why);
			free(slot_cmdline(s));
			continue;
		}
		size_t n1, n2;
		char *e1 = slot_edit(s, &d, NULL, NULL, &n1);
		if (!e1)
			continue;
		struct slot s2 = *s;
		s2.content = e1;
		s2.len = n1;
		s2.exists = true;
		char *e2 = slot_edit(&s2, &d, NULL, NULL, &n2);
		FUZZ_CHECK(e2 && fuzz_same(e1, n1, e2, n2));
		free(e1);
		free(e2);
	}
	strv_free(&d.add);
	strv_free(&d.remove);
	slots_free(&l);
	return 0;
}
