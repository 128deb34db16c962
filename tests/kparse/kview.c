/* kview.c - the kernel's view of command lines, by the kernel's own code.
 *
 * kernel-parse.c (cut out of linux-source at test time by extract.py) is
 * included after kshim.h. For each input line "PROFILE HEX" (PROFILE:
 * "mainline", whose kernel has no cgroup_enable=, or "enable", whose kernel
 * has it; HEX: the command line as the kernel gets it, hex-encoded) this
 * runs what start_kernel() does with a command line: parse_args() with
 * unknown_bootoption() (obsolete_checksetup() against a table of real
 * __setup()/early_param() names), and for what follows "--",
 * parse_args() with set_init_arg(). It prints one JSON line, every string
 * hex-encoded:
 *   {"p":[[NAME,VAL|null],...],   every parameter parse_args() handed on
 *    "s":[[SETUP,ARG],...],        calls of the cgroup_disable=/cgroup_enable= handlers
 *    "a":[...], "e":[...],         init's arguments (after "init") and
 *                                  environment (after HOME=/ TERM=linux)
 *    "x":PANIC|null}               panic_later: "env"/"init" when over the limits
 */
#include "kshim.h"

#include <stdio.h>

#include "kernel-parse.c"

const struct obs_kernel_param *kp_setup_start, *kp_setup_end;

struct rec {
	char name[64];
	char *arg;
};
static struct rec setup_calls[4096];
static size_t n_setup_calls;

static void record(const char *name, const char *arg)
{
	if (n_setup_calls == sizeof(setup_calls) / sizeof(setup_calls[0]))
		abort();
	struct rec *r = &setup_calls[n_setup_calls++];
	snprintf(r->name, sizeof(r->name), "%s", name);
	r->arg = strdup(arg);
}

static int cgroup_disable_setup(char *str) { record("cgroup_disable=", str); return 1; }
static int cgroup_enable_setup(char *str) { record("cgroup_enable=", str); return 1; }
/* handlers of the others: a "name=" takes any value; a flag only itself
 * (as readonly() for "ro": "root=..." goes on to "root=") */
static int value_setup(char *str) { (void)str; return 1; }
static int flag_setup(char *str) { return *str == '\0'; }

#define VALUE(s) { s, value_setup, 0 }
#define FLAG(s) { s, flag_setup, 0 }
#define EARLY(s) { s, flag_setup, 1 }
#define COMMON_SETUPS                                                                      \
	VALUE("root="), FLAG("ro"), FLAG("rw"), VALUE("rootfstype="), VALUE("rootflags="),  \
	FLAG("rootwait"), VALUE("rootdelay="), VALUE("resume="), FLAG("noresume"),          \
	{ "init=", init_setup, 0 }, { "rdinit=", rdinit_setup, 0 }, VALUE("console="),      \
	{ "cgroup_disable=", cgroup_disable_setup, 0 }, VALUE("cgroup.memory="),            \
	VALUE("cgroup_no_v1="), VALUE("apparmor="), VALUE("security="), VALUE("selinux="),  \
	FLAG("nomodeset"), VALUE("fsck.mode="), VALUE("ip="), VALUE("nfsroot="),            \
	EARLY("quiet"), EARLY("debug"), EARLY("loglevel"), EARLY("earlyprintk"),            \
	EARLY("mitigations"), EARLY("nokaslr"), EARLY("mem"), EARLY("memmap"),              \
	EARLY("crashkernel"), EARLY("iommu"), EARLY("intel_iommu"), EARLY("nosmt")

static const struct obs_kernel_param setups_mainline[] = { COMMON_SETUPS };
static const struct obs_kernel_param setups_enable[] = { COMMON_SETUPS,
							 { "cgroup_enable=", cgroup_enable_setup, 0 } };

static void put_hex(const char *s)
{
	if (!s) {
		fputs("null", stdout);
		return;
	}
	putchar('"');
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		printf("%02x", *p);
	putchar('"');
}

static size_t n_params;

/* unknown_bootoption(), with what parse_args() handed it printed first */
static int recording_unknown(char *param, char *val, const char *doing, void *arg)
{
	fputs(n_params++ ? ",[" : "[", stdout);
	put_hex(param);
	putchar(',');
	put_hex(val);
	putchar(']');
	return unknown_bootoption(param, val, doing, arg);
}

static int unhex(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

int main(void)
{
	static const char *const argv0[MAX_INIT_ARGS + 2] = { "init", NULL };
	static const char *const envp0[MAX_INIT_ENVS + 2] = { "HOME=/", "TERM=linux", NULL };
	char *in = NULL;
	size_t cap = 0;
	ssize_t n;

	while ((n = getline(&in, &cap, stdin)) > 0) {
		char *sp = strchr(in, ' ');
		if (!sp)
			return 2;
		*sp = '\0';
		if (strcmp(in, "mainline") == 0) {
			kp_setup_start = setups_mainline;
			kp_setup_end = setups_mainline + sizeof(setups_mainline) / sizeof(setups_mainline[0]);
		} else if (strcmp(in, "enable") == 0) {
			kp_setup_start = setups_enable;
			kp_setup_end = setups_enable + sizeof(setups_enable) / sizeof(setups_enable[0]);
		} else {
			return 2;
		}
		char *hex = sp + 1;
		size_t hl = strcspn(hex, "\n");
		char *line = malloc(hl / 2 + 1);
		size_t len = 0;
		for (size_t i = 0; i + 1 < hl; i += 2) {
			int a = unhex(hex[i]), b = unhex(hex[i + 1]);
			if (a < 0 || b < 0)
				return 2;
			line[len++] = (char)(a * 16 + b);
		}
		line[len] = '\0';

		memcpy(argv_init, argv0, sizeof(argv0));
		memcpy(envp_init, envp0, sizeof(envp0));
		panic_later = panic_param = NULL;
		execute_command = NULL;
		n_params = n_setup_calls = 0;

		fputs("{\"p\":[", stdout);
		char *after = parse_args("Booting kernel", line, NULL, 0, -1, -1, NULL, recording_unknown);
		if (!IS_ERR_OR_NULL(after))
			parse_args("Setting init args", after, NULL, 0, -1, -1, NULL, set_init_arg);
		fputs("],\"s\":[", stdout);
		for (size_t i = 0; i < n_setup_calls; i++) {
			printf("%s[", i ? "," : "");
			put_hex(setup_calls[i].name);
			putchar(',');
			put_hex(setup_calls[i].arg);
			putchar(']');
			free(setup_calls[i].arg);
		}
		fputs("],\"a\":[", stdout);
		for (size_t i = 1; argv_init[i]; i++) {
			if (i > 1)
				putchar(',');
			put_hex(argv_init[i]);
		}
		fputs("],\"e\":[", stdout);
		for (size_t i = 2; envp_init[i]; i++) {
			if (i > 2)
				putchar(',');
			put_hex(envp_init[i]);
		}
		fputs("],\"x\":", stdout);
		put_hex(panic_later);
		fputs("}\n", stdout);
		fflush(stdout);
		free(line);
	}
	free(in);
	return 0;
}
