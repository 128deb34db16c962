/* decide/decide.h - the decision for one kernel: a pure function of the policy,
 * the kernel's facts and the system facts (DESIGN section 4). No I/O. */
#pragma once

#include <stdbool.h>

#include "facts/kconfig.h"
#include "facts/kernels.h"
#include "facts/policy.h"
#include "facts/probe.h"
#include "lib/util.h"

enum memcg_state { STATE_OFF = 0, STATE_ON = 1 };

/* One reason of a decision as data (--json's reasons[]): the rule of the
 * contract that spoke (decide.c's list, the schema's enum), what it says,
 * and the policy line it comes from. */
struct reason_info {
	const char *rule; /* "mode", "kernel_mode", "otherwise", ... (static) */
	char *value;	  /* "off", "k3s", a command line; NULL: none */
	char *file;	  /* the policy file (or the blob) as displayed; NULL: none */
	unsigned line;	  /* 0: none */
};

/* The facts about one kernel the decision needs, after policy overrides. */
struct decide_kernel {
	const char *release;
	bool memcg_built;
	enum memcg_default default_state;
	const char *default_reason;   /* why: config marker, family, or policy override */
	const char *not_built_reason; /* memcg not built: the config's lines that show it */
	enum memcg_rule rule;
	bool accepts_enable;
	const char *accepts_reason;
	const char *builtin_cmdline; /* may be NULL */
	enum builtin_cmdline_mode builtin_mode;
	/* the Raspberry Pi firmware's device tree prefix, put before the
	 * boot loader's line (facts/rpi-firmware.h); NULL: none known */
	const char *fw_prefix;
	const char *fw_blob; /* the blob it is read from */
	const char *fw_note; /* boards that differ, a blob not read: NULL if none */
	/* other boards' prefixes, where they differ: the tokens are chosen
	 * to serve them too */
	char *const *fw_others;
	size_t fw_n_others;
};

struct decision {
	enum memcg_state state;	  /* what the kernel will run with */
	bool keep;		  /* no opinion: nothing added or removed */
	enum policy_mode mode;	  /* the mode that applied (after [kernel] sections) */
	struct strv add;	  /* tokens that must be present, "cgroup_disable=memory" */
	struct strv remove;	  /* "name=item" that must be absent */
	struct strv reasons;	  /* "rule: why (FILE:LINE)" lines for --explain */
	struct reason_info *info; /* reasons as data: info[i] is reasons.v[i]'s */
	size_t n_info;
	size_t why; /* the reason that decided: an index into reasons
				     * (status's headline); 0, the mode's, by default */
	struct strv warnings;
	size_t line_limit;  /* GRUB's: bytes of the line the menu's kernels
				     * keep (0 unknown; grub_decision) */
	bool unmeetable;    /* on asked, off by default, no cgroup_enable= known: the
				     * planner makes it an error naming accepts-cgroup-enable */
	bool unmeetable_fw; /* unmeetable because of the Raspberry Pi firmware's
				     * device tree prefix (decide_kernel.fw_blob) */
};

/* The decision's view of a kernel: its facts with the policy's
 * [kernel GLOB] default= and accepts-cgroup-enable= applied. */
/* Does a Raspberry Pi firmware's device tree prefix (any board's) turn
 * memcg off? */
bool fw_prefix_disables(const struct decide_kernel *k);

void decide_kernel_init(struct decide_kernel *dk, const struct kernel *k, const struct policy *p);

/* The memcg state a kernel gets from a bootloader command line (NULL or ""
 * for none), by its rule, default and built-in command line. */
enum memcg_state cmdline_memcg_state(const struct decide_kernel *k, const char *cmdline);

/* Decide. configured is the command line the current boot configuration
 * gives this kernel (used for otherwise=keep; NULL if unknown). */
void decide(const struct policy *p, const struct decide_kernel *k, const struct system_facts *sys,
	    const char *configured, struct decision *out);
void decision_free(struct decision *d);
/* Appends a reason: its line for --explain and its data (value and file
 * copied; file NULL or line 0 for none). */
void decision_add_reason(struct decision *d, const char *rule, const char *value, const char *file, unsigned line,
			 const char *fmt, ...) _printf_(6, 7);
const char *memcg_state_name(enum memcg_state s);

/* A kernel with its facts for decide() and the decision taken. */
struct kernel_decision {
	struct kernel *k; /* borrowed from ctx->kernels */
	struct decide_kernel dk;
	struct decision d;
	/* its config found nowhere (status only: context's
	 * configs_may_be_missing): nothing decided, d has no opinion */
	bool unknown;
};
