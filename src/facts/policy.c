/* facts/policy.c - the policy files, see facts/policy.h and DESIGN section 4: the
 * built-in defaults, the names of values, the table of keys and the
 * parsing and storing of one value. Reading a file: facts/policy-ini.c; finding,
 * checking and merging the files: facts/policy-files.c; set's editor of mode=:
 * commit/policy-set.c. */
#include "facts/policy.h"

#include <ctype.h>
#include <fnmatch.h>
#include <stddef.h>

#include "facts/kconfig.h"
#include "facts/policy-int.h"
#include "lib/util.h"

static const char *const default_needs_memcg[] = {
	"dockerd", "containerd", "podman", "crio", "kubelet", "k3s", "lxd", "incusd",
};

/* ---- names and values ------------------------------------------------ */

const struct name_value mode_values[] = {
	{ "on", MODE_ON },
	{ "off", MODE_OFF },
	{ "auto", MODE_AUTO },
	{ NULL, 0 },
};
static const struct name_value accounting_values[] = {
	{ "full", ACCOUNTING_FULL },
	{ "lite", ACCOUNTING_LITE },
	{ NULL, 0 },
};
static const struct name_value bool_values[] = {
	{ "yes", 1 }, { "no", 0 }, { "true", 1 }, { "false", 0 }, { "1", 1 }, { "0", 0 }, { NULL, 0 },
};
static const struct name_value tristate_values[] = {
	{ "auto", TRI_AUTO }, { "yes", TRI_YES }, { "no", TRI_NO }, { "true", TRI_YES },
	{ "false", TRI_NO },  { "1", TRI_YES },	  { "0", TRI_NO },  { NULL, 0 },
};
static const struct name_value otherwise_values[] = {
	{ "keep", OTHERWISE_KEEP },
	{ "kernel", OTHERWISE_KERNEL },
	{ "on", OTHERWISE_ON },
	{ "off", OTHERWISE_OFF },
	{ NULL, 0 },
};
static const struct name_value default_values[] = {
	{ "on", MEMCG_DEFAULT_ON },
	{ "off", MEMCG_DEFAULT_OFF },
	{ NULL, 0 },
};

int lookup_value(const struct name_value *t, const char *s, int *out)
{
	for (; t->name; t++)
		if (strcasecmp(t->name, s) == 0) {
			*out = t->value;
			return 0;
		}
	return -1;
}

const char *policy_mode_name(enum policy_mode m)
{
	switch (m) {
	case MODE_ON: return "on";
	case MODE_OFF: return "off";
	case MODE_AUTO: return "auto";
	case MODE_UNSET: break;
	}
	return "unset";
}

const char *policy_otherwise_name(enum policy_otherwise o)
{
	switch (o) {
	case OTHERWISE_KEEP: return "keep";
	case OTHERWISE_KERNEL: return "kernel";
	case OTHERWISE_ON: return "on";
	case OTHERWISE_OFF: return "off";
	}
	return "?";
}

const char *tristate_name(enum tristate t)
{
	switch (t) {
	case TRI_AUTO: return "auto";
	case TRI_YES: return "yes";
	case TRI_NO: return "no";
	}
	return "?";
}

const char *policy_accounting_name(enum accounting a) { return a == ACCOUNTING_LITE ? "lite" : "full"; }

char *origin_str(const struct origin *o)
{
	if (!o->file)
		return xstrdup("built-in default");
	return xasprintf("%s:%u", o->file, o->line);
}

/* ---- the policy struct ----------------------------------------------- */

void policy_init(struct policy *p)
{
	*p = (struct policy){
		.mode = MODE_AUTO,
		.accounting = ACCOUNTING_FULL,
		.strict = false,
		.needs_memcg_units = true,
		.otherwise = OTHERWISE_KEEP,
		.grub = TRI_AUTO,
		.systemd_boot = TRI_AUTO,
		.kernel_cmdline = TRI_AUTO,
		.rpi = TRI_AUTO,
		.u_boot_menu = TRI_AUTO,
		.flash_kernel = TRI_AUTO,
		.regenerate = TRI_AUTO,
		.secure_boot = TRI_AUTO,
	};
	p->n_needs_memcg = ARRAY_SIZE(default_needs_memcg);
	p->needs_memcg = xcalloc(p->n_needs_memcg + 1, sizeof(char *));
	for (size_t i = 0; i < p->n_needs_memcg; i++)
		p->needs_memcg[i] = xstrdup(default_needs_memcg[i]);
}

static void free_words(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

void policy_free(struct policy *p)
{
	free(p->strict_despite);
	free_words(p->needs_memcg, p->n_needs_memcg);
	for (size_t i = 0; i < p->n_kernels; i++)
		free(p->kernels[i].glob);
	free(p->kernels);
	free_words(p->files, p->n_files);
	*p = (struct policy){ 0 };
}

/* ---- kernel sections ------------------------------------------------- */

enum kernel_field { KF_MODE, KF_DEFAULT, KF_ACCEPTS };

static bool kernel_field_set(const struct policy_kernel_section *s, enum kernel_field f)
{
	switch (f) {
	case KF_MODE: return s->mode != MODE_UNSET;
	case KF_DEFAULT: return s->default_state >= 0;
	case KF_ACCEPTS: return s->accepts_enable >= 0;
	}
	return false;
}

static const struct policy_kernel_section *kernel_lookup(const struct policy *p, const char *release,
							 enum kernel_field f)
{
	if (!release)
		return NULL;
	for (size_t i = p->n_kernels; i-- > 0;) {
		const struct policy_kernel_section *s = &p->kernels[i];
		if (kernel_field_set(s, f) && fnmatch(s->glob, release, 0) == 0)
			return s;
	}
	return NULL;
}

const struct policy_kernel_section *policy_kernel_mode(const struct policy *p, const char *release)
{
	return kernel_lookup(p, release, KF_MODE);
}

const struct policy_kernel_section *policy_kernel_default(const struct policy *p, const char *release)
{
	return kernel_lookup(p, release, KF_DEFAULT);
}

const struct policy_kernel_section *policy_kernel_accepts(const struct policy *p, const char *release)
{
	return kernel_lookup(p, release, KF_ACCEPTS);
}

/* ---- keys ------------------------------------------------------------ */

#define NO_OFFSET ((size_t)-1)

#define PKEY(sec, name, type, field, field2)                                                                           \
	{                                                                                                              \
		sec, name, type, offsetof(struct policy, field), field2, offsetof(struct policy, field##_origin)       \
	}
#define KKEY(name, type, field, origin_field)                                                                          \
	{                                                                                                              \
		SEC_KERNEL, name, type, offsetof(struct policy_kernel_section, field), NO_OFFSET,                      \
			offsetof(struct policy_kernel_section, origin_field)                                           \
	}

static const struct key_def keys[] = {
	PKEY(SEC_POLICY, "mode", V_MODE, mode, NO_OFFSET),
	PKEY(SEC_POLICY, "accounting", V_ACCOUNTING, accounting, NO_OFFSET),
	PKEY(SEC_POLICY, "strict", V_BOOL, strict, NO_OFFSET),
	PKEY(SEC_AUTO, "needs-memcg", V_WORDS, needs_memcg, offsetof(struct policy, n_needs_memcg)),
	PKEY(SEC_AUTO, "needs-memcg-units", V_BOOL, needs_memcg_units, NO_OFFSET),
	{ SEC_AUTO, "min-ram", V_SIZE, offsetof(struct policy, min_ram), offsetof(struct policy, has_min_ram),
	  offsetof(struct policy, min_ram_origin) },
	{ SEC_AUTO, "assume-ram", V_SIZE, offsetof(struct policy, assume_ram), offsetof(struct policy, has_assume_ram),
	  offsetof(struct policy, assume_ram_origin) },
	PKEY(SEC_AUTO, "otherwise", V_OTHERWISE, otherwise, NO_OFFSET),
	KKEY("mode", V_MODE, mode, mode_origin),
	KKEY("default", V_DEFAULT, default_state, default_origin),
	KKEY("accepts-cgroup-enable", V_INTBOOL, accepts_enable, accepts_enable_origin),
	PKEY(SEC_BOOTLOADERS, "grub", V_TRISTATE, grub, NO_OFFSET),
	PKEY(SEC_BOOTLOADERS, "systemd-boot", V_TRISTATE, systemd_boot, NO_OFFSET),
	PKEY(SEC_BOOTLOADERS, "kernel-cmdline", V_TRISTATE, kernel_cmdline, NO_OFFSET),
	PKEY(SEC_BOOTLOADERS, "rpi", V_TRISTATE, rpi, NO_OFFSET),
	PKEY(SEC_BOOTLOADERS, "u-boot-menu", V_TRISTATE, u_boot_menu, NO_OFFSET),
	PKEY(SEC_BOOTLOADERS, "flash-kernel", V_TRISTATE, flash_kernel, NO_OFFSET),
	PKEY(SEC_BOOTLOADERS, "regenerate", V_TRISTATE, regenerate, NO_OFFSET),
	PKEY(SEC_BOOTLOADERS, "secure-boot", V_TRISTATE, secure_boot, NO_OFFSET),
};

const struct key_def *find_key(enum section_kind sec, const char *canon)
{
	for (size_t i = 0; i < ARRAY_SIZE(keys); i++)
		if (keys[i].section == sec && streq(keys[i].name, canon))
			return &keys[i];
	return NULL;
}

const char *expected_values(enum value_type t)
{
	switch (t) {
	case V_MODE: return "on, off or auto";
	case V_ACCOUNTING: return "full or lite";
	case V_BOOL:
	case V_INTBOOL: return "yes or no";
	case V_WORDS: return "program names separated by spaces";
	case V_SIZE: return "a size such as 512M or 1G, or nothing";
	case V_OTHERWISE: return "keep, kernel, on or off";
	case V_DEFAULT: return "on or off";
	case V_TRISTATE: return "auto, yes or no";
	}
	return "?";
}

static bool valid_program_name(const char *w)
{
	if (streq(w, ".") || streq(w, ".."))
		return false;
	for (const char *c = w; *c; c++)
		if (*c == '/' || *c == ',' || (unsigned char)*c < 0x20 || *c == 0x7f)
			return false;
	return true;
}

int parse_value(enum value_type t, const char *s, struct value *v)
{
	switch (t) {
	case V_MODE: return lookup_value(mode_values, s, &v->i);
	case V_ACCOUNTING: return lookup_value(accounting_values, s, &v->i);
	case V_BOOL:
	case V_INTBOOL: return lookup_value(bool_values, s, &v->i);
	case V_OTHERWISE: return lookup_value(otherwise_values, s, &v->i);
	case V_DEFAULT: return lookup_value(default_values, s, &v->i);
	case V_TRISTATE: return lookup_value(tristate_values, s, &v->i);
	case V_SIZE: v->has = *s != '\0'; return v->has ? parse_size(s, &v->size) : 0;
	case V_WORDS: {
		const char *c = s;
		for (;;) {
			while (isspace((unsigned char)*c))
				c++;
			if (!*c)
				return 0;
			const char *e = c;
			while (*e && !isspace((unsigned char)*e))
				e++;
			char *w = xstrndup(c, (size_t)(e - c));
			strv_push(&v->words, w);
			if (!valid_program_name(w))
				return -1;
			c = e;
		}
	}
	}
	return -1;
}

#define FIELD(base, off, type) ((type *)(void *)((char *)(base) + (off)))

void store_value(void *base, const struct key_def *k, struct value *v, struct origin o)
{
	switch (k->type) {
	case V_MODE: *FIELD(base, k->off, enum policy_mode) = (enum policy_mode)v->i; break;
	case V_ACCOUNTING: *FIELD(base, k->off, enum accounting) = (enum accounting)v->i; break;
	case V_BOOL: *FIELD(base, k->off, bool) = v->i != 0; break;
	case V_INTBOOL:
	case V_DEFAULT: *FIELD(base, k->off, int) = v->i; break;
	case V_OTHERWISE: *FIELD(base, k->off, enum policy_otherwise) = (enum policy_otherwise)v->i; break;
	case V_TRISTATE: *FIELD(base, k->off, enum tristate) = (enum tristate)v->i; break;
	case V_SIZE:
		*FIELD(base, k->off, unsigned long long) = v->has ? v->size : 0;
		*FIELD(base, k->off2, bool) = v->has;
		break;
	case V_WORDS: {
		char ***words = FIELD(base, k->off, char **);
		size_t *n = FIELD(base, k->off2, size_t);
		free_words(*words, *n);
		*n = v->words.n;
		*words = v->words.v ? v->words.v : xcalloc(1, sizeof(char *));
		v->words = (struct strv){ 0 };
		break;
	}
	}
	*FIELD(base, k->origin, struct origin) = o;
}
