/* decide/decide.c - the decision for one kernel, see decide/decide.h. Pure. */
#include "decide/decide.h"

#include <stdio.h>
#include <stdlib.h>

#include "lib/cmdline.h"

#define TOK_DISABLE "cgroup_disable=memory"
#define TOK_ENABLE "cgroup_enable=memory"
#define TOK_LITE "cgroup.memory=nokmem,nosocket"

/* "FILE:LINE" of a policy value, whatever the length of the path (a long
 * --root must not cut the line number off). A few rotating strings so that
 * several can stand in one message; each is freed when its slot is reused. */
static const char *origin_str_static(const struct origin *o)
{
	static char *bufs[8];
	static unsigned next;
	char **b = &bufs[next++ % ARRAY_SIZE(bufs)];
	free(*b);
	*b = o->file ? xasprintf("%s:%u", o->file, o->line) : xstrdup("built-in default");
	return *b;
}

const char *memcg_state_name(enum memcg_state s) { return s == STATE_ON ? "on" : "off"; }

/* The command line the kernel really parses, built-in part included. */
static char *effective_cmdline(const struct decide_kernel *k, const char *cmdline)
{
	const char *b = k->builtin_cmdline ? k->builtin_cmdline : "";
	_cleanup_free_ char *joined =
		k->fw_prefix && *k->fw_prefix ? xasprintf("%s %s", k->fw_prefix, cmdline ? cmdline : "") : NULL;
	const char *c = joined ? joined : cmdline ? cmdline : "";
	switch (k->builtin_mode) {
	case BUILTIN_PREPEND: return xasprintf("%s %s", b, c);
	case BUILTIN_APPEND: return xasprintf("%s %s", c, b);
	case BUILTIN_OVERRIDE: return xstrdup(b);
	case BUILTIN_FALLBACK: return xstrdup(*c ? c : b);
	case BUILTIN_NONE: break;
	}
	return xstrdup(c);
}

enum memcg_state cmdline_memcg_state(const struct decide_kernel *k, const char *cmdline)
{
	if (!k->memcg_built)
		return STATE_OFF;
	_cleanup_free_ char *line = effective_cmdline(k, cmdline);
	struct cmdline c;
	cmdline_split(line, strlen(line), &c);
	enum memcg_state state = k->default_state == MEMCG_DEFAULT_ON ? STATE_ON : STATE_OFF;
	bool any_disable = false, any_enable = false;
	for (size_t i = 0; i < c.n_kernel; i++) {
		bool dis = cmdline_token_has_item(&c, i, "cgroup_disable", "memory");
		bool en = !dis && cmdline_token_has_item(&c, i, "cgroup_enable", "memory");
		if (!dis && !en)
			continue;
		if (dis) {
			any_disable = true;
			if (k->rule == RULE_LAST_WINS)
				state = STATE_OFF;
		} else {
			any_enable = true;
			if (k->rule == RULE_LAST_WINS)
				state = STATE_ON;
		}
	}
	cmdline_free(&c);
	switch (k->rule) {
	case RULE_DISABLE_WINS:
		if (any_disable)
			state = STATE_OFF;
		break;
	case RULE_ENABLE_WINS:
		if (any_enable)
			state = STATE_ON;
		else if (any_disable)
			state = STATE_OFF;
		break;
	case RULE_LAST_WINS: break;
	}
	return state;
}

static char *add_joined(const struct strv *add)
{
	struct strbuf sb = { 0 };
	for (size_t i = 0; i < add->n; i++) {
		if (i)
			sb_appendc(&sb, ' ');
		sb_append(&sb, add->v[i]);
	}
	return sb_take(&sb);
}

/* A formatted line ("?" where it cannot be made). */
static char *vline(const char *fmt, va_list ap) _printf_(1, 0);
static char *vline(const char *fmt, va_list ap)
{
	char *s;
	return vasprintf(&s, fmt, ap) < 0 ? xstrdup("?") : s;
}

/* Appends a formatted line to a decision's warnings. */
static void push_line(struct strv *sv, const char *fmt, ...) _printf_(2, 3);
static void push_line(struct strv *sv, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	strv_push(sv, vline(fmt, ap));
	va_end(ap);
}
void decision_add_reason(struct decision *d, const char *rule, const char *value, const char *file, unsigned line,
			 const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	strv_push(&d->reasons, vline(fmt, ap));
	va_end(ap);
	d->info = xrealloc(d->info, d->reasons.n * sizeof(*d->info));
	while (d->n_info + 1 < d->reasons.n) /* a line pushed without its data */
		d->info[d->n_info++] = (struct reason_info){ .rule = "other" };
	d->info[d->n_info++] = (struct reason_info){ .rule = rule,
						     .value = value ? xstrdup(value) : NULL,
						     .file = file ? xstrdup(file) : NULL,
						     .line = file ? line : 0 };
}
static const char *origin_file(const struct origin *o) { return o ? o->file : NULL; }
static unsigned origin_line(const struct origin *o) { return o ? o->line : 0; }
/* reason(d, RULE, VALUE, ORIGIN, FORMAT...): ORIGIN a struct origin * or
 * NULL */
#define reason(d, rule, value, o, ...) decision_add_reason(d, rule, value, origin_file(o), origin_line(o), __VA_ARGS__)
/* A reason that decides the state (decision.why) */
#define deciding(d, ...)                                                                                               \
	do {                                                                                                           \
		reason(d, __VA_ARGS__);                                                                                \
		(d)->why = (d)->reasons.n - 1;                                                                         \
	} while (0)
#define warning(d, ...) push_line(&(d)->warnings, __VA_ARGS__)

bool fw_prefix_disables(const struct decide_kernel *k)
{
	for (size_t i = 0; i <= k->fw_n_others; i++) {
		const char *pf = i ? k->fw_others[i - 1] : k->fw_prefix;
		if (!pf || !*pf)
			continue;
		struct cmdline c;
		cmdline_split(pf, strlen(pf), &c);
		bool dis = cmdline_has_item(&c, "cgroup_disable", "memory");
		cmdline_free(&c);
		if (dis)
			return true;
	}
	return false;
}

/* Does line give state s with the prefix of some board (the first, or
 * another whose blob differs)? */
static bool state_somewhere(const struct decide_kernel *k, const char *line, enum memcg_state s)
{
	if (cmdline_memcg_state(k, line) == s)
		return true;
	for (size_t i = 0; i < k->fw_n_others; i++) {
		struct decide_kernel o = *k;
		o.fw_prefix = k->fw_others[i];
		if (cmdline_memcg_state(&o, line) == s)
			return true;
	}
	return false;
}

/* Tokens for a wanted state. */
static void want_state(const struct policy *p, const struct decide_kernel *k, enum memcg_state want, struct decision *d)
{
	if (want == STATE_ON) {
		strv_pushdup(&d->remove, TOK_DISABLE);
		if (state_somewhere(k, "", STATE_OFF)) {
			if (k->accepts_enable)
				strv_pushdup(&d->add, TOK_ENABLE);
			else if (!fw_prefix_disables(k)) {
				warning(d,
					"%s: memcg is off by default and this kernel has no cgroup_enable= parameter: "
					"it cannot be turned on from the boot loader",
					k->release);
				/* off by its default (not by a built-in line, where
				 * no parameter could help): the parameter would */
				d->unmeetable = k->default_state == MEMCG_DEFAULT_OFF;
			}
		}
		_cleanup_free_ char *line = add_joined(&d->add);
		bool still_off = state_somewhere(k, line, STATE_OFF);
		if (still_off && fw_prefix_disables(k) && k->builtin_mode != BUILTIN_OVERRIDE) {
			warning(d,
				"%s: the Raspberry Pi firmware puts cgroup_disable=memory before cmdline.txt (%s: "
				"/chosen/bootargs) and this kernel cannot turn memcg back on after it (%s)",
				k->release, k->fw_blob ? k->fw_blob : "its device tree",
				k->accepts_enable ? "a cgroup_disable=memory wins" : "no cgroup_enable= parameter");
			/* no line of cmdline.txt can: a blob without it, or a
			 * kernel that takes the last switch, would */
			d->unmeetable = d->unmeetable_fw = true;
		} else if (k->accepts_enable && still_off && !(k->builtin_mode == BUILTIN_OVERRIDE)) {
			warning(d,
				"%s: the built-in command line turns memcg off and the boot loader cannot turn it back "
				"on",
				k->release);
		}
		if (p->accounting == ACCOUNTING_LITE) {
			strv_pushdup(&d->add, TOK_LITE);
			reason(d, "accounting", "lite", &p->accounting_origin, "accounting = lite: %s (%s)", TOK_LITE,
			       origin_str_static(&p->accounting_origin));
		} else {
			strv_pushdup(&d->remove, "cgroup.memory=nokmem");
			strv_pushdup(&d->remove, "cgroup.memory=nosocket");
		}
	} else {
		strv_pushdup(&d->remove, TOK_ENABLE);
		if (state_somewhere(k, "", STATE_ON))
			strv_pushdup(&d->add, TOK_DISABLE);
		_cleanup_free_ char *line = add_joined(&d->add);
		if (cmdline_memcg_state(k, line) == STATE_ON && k->builtin_mode != BUILTIN_OVERRIDE)
			warning(d,
				"%s: the built-in command line turns memcg on and the boot loader cannot turn it off",
				k->release);
	}
	if (k->builtin_mode == BUILTIN_OVERRIDE)
		warning(d,
			"%s ignores the boot loader's arguments (CONFIG_CMDLINE_OVERRIDE / CONFIG_CMDLINE_FORCE): "
			"only its built-in command line counts",
			k->release);
	_cleanup_free_ char *line = add_joined(&d->add);
	d->state = cmdline_memcg_state(k, line);
}

/* memcg off where a program or a unit of the system needs it: named, as
 * what fails after the next boot (the same words for every kernel: one
 * warning to the reader, whichever kernel boots). */
static void needs_warning(const struct system_facts *sys, struct decision *d)
{
	const struct strv *v = sys->programs.n ? &sys->programs : &sys->units;
	if (v->n == 0)
		return;
	struct strbuf sb = { 0 };
	for (size_t i = 0; i < v->n && i < 3; i++)
		sb_appendf(&sb, "%s%s", i ? ", " : "", v->v[i]);
	if (v->n > 3)
		sb_appendf(&sb, " and %zu more", v->n - 3);
	_cleanup_free_ char *what = sb_take(&sb);
	warning(d, "memcg off, but %s %s: %s after the next boot (status lists %s)", what,
		v == &sys->programs ? "needs it (needs-memcg)" : "sets a memory limit (needs-memcg-units)",
		v == &sys->programs ? "its containers or pods fail to start" : "systemd cannot enforce it",
		v == &sys->programs ? "the programs" : "the units");
}

void decide(const struct policy *p, const struct decide_kernel *k, const struct system_facts *sys,
	    const char *configured, struct decision *d)
{
	memset(d, 0, sizeof(*d));
	const struct policy_kernel_section *sec = policy_kernel_mode(p, k->release);
	enum policy_mode mode = sec ? sec->mode : p->mode;
	d->mode = mode;
	if (sec)
		reason(d, "kernel_mode", policy_mode_name(mode), &sec->mode_origin,
		       "mode = %s: [kernel %s] matches %s (%s)", policy_mode_name(mode), sec->glob, k->release,
		       origin_str_static(&sec->mode_origin));
	else
		reason(d, "mode", policy_mode_name(mode), &p->mode_origin, "mode = %s (%s)", policy_mode_name(mode),
		       origin_str_static(&p->mode_origin));

	const struct policy_kernel_section *ksec = policy_kernel_default(p, k->release);
	reason(d, "kernel_default", k->default_state == MEMCG_DEFAULT_ON ? "on" : "off",
	       ksec ? &ksec->default_origin : NULL, "kernel default: memcg %s (%s%s%s)",
	       k->default_state == MEMCG_DEFAULT_ON ? "on" : "off", k->default_reason ? k->default_reason : "config",
	       ksec ? ", " : "", ksec ? origin_str_static(&ksec->default_origin) : "");
	ksec = policy_kernel_accepts(p, k->release);
	reason(d, "accepts_cgroup_enable", k->accepts_enable ? "yes" : "no", ksec ? &ksec->accepts_enable_origin : NULL,
	       "cgroup_enable=memory: %s (%s%s%s)", k->accepts_enable ? "accepted" : "not accepted",
	       k->accepts_reason ? k->accepts_reason : "config", ksec ? ", " : "",
	       ksec ? origin_str_static(&ksec->accepts_enable_origin) : "");
	if (k->builtin_cmdline && k->builtin_mode != BUILTIN_NONE)
		reason(d, "builtin_cmdline", k->builtin_cmdline, NULL, "built-in command line: \"%s\" (%s)",
		       k->builtin_cmdline,
		       k->builtin_mode == BUILTIN_PREPEND    ? "before the boot loader's"
		       : k->builtin_mode == BUILTIN_APPEND   ? "after the boot loader's"
		       : k->builtin_mode == BUILTIN_OVERRIDE ? "the boot loader's is ignored"
							     : "used only when the boot loader passes none");
	if (k->fw_prefix)
		decision_add_reason(d, "firmware_prefix", k->fw_prefix, k->fw_blob, 0,
				    "Raspberry Pi firmware: %s's /chosen/bootargs comes before cmdline.txt: %s%s%s",
				    k->fw_blob, *k->fw_prefix ? "\"" : "", *k->fw_prefix ? k->fw_prefix : "(none)",
				    *k->fw_prefix ? "\"" : "");
	if (k->fw_note)
		warning(d, "%s: %s", k->release, k->fw_note);
	if (!k->memcg_built) {
		warning(d,
			"%s: memcg is not built into this kernel (%s): it is off whatever "
			"the command line says",
			k->release, k->not_built_reason ? k->not_built_reason : "# CONFIG_MEMCG is not set");
		deciding(d, "memcg_not_built", "off", NULL, "memcg not built into %s: off", k->release);
		d->state = STATE_OFF;
		d->keep = true;
		return;
	}

	enum memcg_state want = STATE_OFF;
	switch (mode) {
	case MODE_ON: want = STATE_ON; break;
	case MODE_OFF: want = STATE_OFF; break;
	case MODE_UNSET:
	case MODE_AUTO: {
		if (sys && sys->programs.n) {
			deciding(d, "needs_memcg", sys->found_programs ? sys->found_programs[0].name : NULL,
				 &p->needs_memcg_origin,
				 "auto: a program that needs memcg is installed: %s (needs-memcg, %s)",
				 sys->programs.v[0], origin_str_static(&p->needs_memcg_origin));
			want = STATE_ON;
			break;
		}
		if (sys && sys->units.n) {
			deciding(d, "needs_memcg_units", sys->found_units ? sys->found_units[0].name : NULL,
				 &p->needs_memcg_units_origin,
				 "auto: a systemd unit sets a memory directive: %s (needs-memcg-units, %s)",
				 sys->units.v[0], origin_str_static(&p->needs_memcg_units_origin));
			want = STATE_ON;
			break;
		}
		reason(d, "needs_memcg_none", NULL, NULL, "auto: no program in needs-memcg is installed%s",
		       p->needs_memcg_units ? " and no unit sets a memory directive" : "");
		if (p->has_min_ram) {
			if (sys && sys->have_ram) {
				if (sys->ram < p->min_ram) {
					deciding(d, "min_ram", "below", &p->min_ram_origin,
						 "auto: RAM %lluM (%s) is below min-ram %lluM (%s): off",
						 sys->ram >> 20, sys->ram_source, p->min_ram >> 20,
						 origin_str_static(&p->min_ram_origin));
					want = STATE_OFF;
					break;
				}
				reason(d, "min_ram", "not_below", &p->min_ram_origin,
				       "auto: RAM %lluM (%s) is not below min-ram %lluM (%s)", sys->ram >> 20,
				       sys->ram_source, p->min_ram >> 20, origin_str_static(&p->min_ram_origin));
			} else {
				reason(d, "min_ram", "unknown", &p->min_ram_origin,
				       "auto: min-ram is set (%s) but the RAM is unknown (set assume-ram for images)",
				       origin_str_static(&p->min_ram_origin));
			}
		}
		switch (p->otherwise) {
		case OTHERWISE_ON:
			deciding(d, "otherwise", "on", &p->otherwise_origin, "auto: otherwise = on (%s)",
				 origin_str_static(&p->otherwise_origin));
			want = STATE_ON;
			break;
		case OTHERWISE_OFF:
			deciding(d, "otherwise", "off", &p->otherwise_origin, "auto: otherwise = off (%s)",
				 origin_str_static(&p->otherwise_origin));
			want = STATE_OFF;
			break;
		case OTHERWISE_KERNEL:
			deciding(d, "otherwise", "kernel", &p->otherwise_origin,
				 "auto: otherwise = kernel (%s): the kernel's own default, without our arguments",
				 origin_str_static(&p->otherwise_origin));
			strv_pushdup(&d->remove, TOK_DISABLE);
			strv_pushdup(&d->remove, TOK_ENABLE);
			d->state = cmdline_memcg_state(k, "");
			return;
		case OTHERWISE_KEEP:
			deciding(d, "otherwise", "keep", &p->otherwise_origin,
				 "auto: otherwise = keep (%s): no opinion, the configured arguments stay as they are",
				 origin_str_static(&p->otherwise_origin));
			d->keep = true;
			d->state = cmdline_memcg_state(k, configured);
			return;
		}
		break;
	}
	}
	want_state(p, k, want, d);
	/* off as asked (a kernel that stays on all the same is warned of
	 * otherwise): what needs memcg fails after the next boot */
	if (want == STATE_OFF && mode == MODE_OFF && d->state == STATE_OFF && sys)
		needs_warning(sys, d);
	if (d->state != want) {
		const char *asked = d->reasons.v[d->why];
		deciding(d, "kernel_overrides", memcg_state_name(d->state), NULL,
			 "%s, but the kernel will still run with memcg %s", asked, memcg_state_name(d->state));
	}
}

void decide_kernel_init(struct decide_kernel *dk, const struct kernel *k, const struct policy *p)
{
	memset(dk, 0, sizeof(*dk));
	dk->release = k->version;
	dk->memcg_built = k->kc.memcg_built && k->kc.cgroups_built;
	dk->default_state = k->kc.default_state;
	dk->default_reason = k->kc.default_reason;
	dk->not_built_reason = k->kc.not_built_reason;
	dk->accepts_reason = k->accepts_enable_source;
	dk->rule = k->kc.rule;
	dk->accepts_enable = k->accepts_enable > 0;
	dk->builtin_cmdline = k->kc.builtin_cmdline;
	dk->builtin_mode = k->kc.builtin_mode;
	dk->fw_prefix = k->fw_prefix;
	dk->fw_blob = k->fw_blob;
	dk->fw_note = k->fw_note;
	dk->fw_others = k->fw_others.v;
	dk->fw_n_others = k->fw_others.n;
	if (k->fw_prefix && k->kc.family == FAMILY_RPI_FIRMWARE) {
		/* the blob is read: the kernel's own default, and the prefix
		 * joined before the line, in place of the assumption */
		dk->default_state = MEMCG_DEFAULT_ON;
		dk->default_reason = "Raspberry Pi kernel 6.12+: memcg on by default; a later cgroup_enable=memory "
				     "undoes the firmware's cgroup_disable=memory";
	}
	const struct policy_kernel_section *sec = policy_kernel_default(p, k->version);
	if (sec) {
		dk->default_state = (enum memcg_default)sec->default_state;
		dk->default_reason = "set by the policy's [kernel] default=";
		/* a kernel whose memcg default can be off has a patch that makes
		 * the two parameters combine last-wins */
		if (dk->default_state == MEMCG_DEFAULT_OFF && dk->rule == RULE_DISABLE_WINS)
			dk->rule = RULE_LAST_WINS;
	}
	sec = policy_kernel_accepts(p, k->version);
	if (sec) {
		dk->accepts_enable = sec->accepts_enable > 0;
		dk->accepts_reason = "set by the policy's [kernel] accepts-cgroup-enable=";
	}
}

void decision_free(struct decision *d)
{
	strv_free(&d->add);
	strv_free(&d->remove);
	for (size_t i = 0; i < d->n_info; i++) {
		free(d->info[i].value);
		free(d->info[i].file);
	}
	free(d->info);
	d->info = NULL;
	d->n_info = 0;
	strv_free(&d->reasons);
	strv_free(&d->warnings);
}
