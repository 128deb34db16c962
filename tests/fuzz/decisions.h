/* decisions.h - the token sets decide() produces (src/decide.c), for the
 * harnesses that edit command lines: every combination of mode, default
 * and accounting it can give. */
#pragma once

#include "lib/util.h"

struct fuzz_decision {
	const char *name;
	const char *add[3];
	const char *remove[4];
};

static const struct fuzz_decision fuzz_decisions[] = {
	{ "off", { "cgroup_disable=memory" }, { "cgroup_enable=memory" } },
	{ "off-default-off", { NULL }, { "cgroup_enable=memory" } },
	{ "on", { NULL }, { "cgroup_disable=memory", "cgroup.memory=nokmem", "cgroup.memory=nosocket" } },
	{ "on-default-off", { "cgroup_enable=memory" },
	  { "cgroup_disable=memory", "cgroup.memory=nokmem", "cgroup.memory=nosocket" } },
	{ "on-lite", { "cgroup.memory=nokmem,nosocket" }, { "cgroup_disable=memory" } },
	{ "on-lite-default-off", { "cgroup_enable=memory", "cgroup.memory=nokmem,nosocket" },
	  { "cgroup_disable=memory" } },
	{ "kernel", { NULL }, { "cgroup_disable=memory", "cgroup_enable=memory" } },
};

static inline void fuzz_decision_strv(const struct fuzz_decision *d, struct strv *add, struct strv *remove)
{
	*add = (struct strv){ 0 };
	*remove = (struct strv){ 0 };
	for (size_t i = 0; i < ARRAY_SIZE(d->add) && d->add[i]; i++)
		strv_pushdup(add, d->add[i]);
	for (size_t i = 0; i < ARRAY_SIZE(d->remove) && d->remove[i]; i++)
		strv_pushdup(remove, d->remove[i]);
}
