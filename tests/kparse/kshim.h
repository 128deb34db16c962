/* kshim.h - the least the kernel's command-line code (cut out by
 * extract.py into kernel-parse.c) needs to compile in user space: the
 * types, macros and helpers it uses, each doing what the kernel's does
 * for a command line (logging is dropped; no module parameters). */
#pragma once

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef int16_t s16;

#define __init
#define __initdata
#define __read_mostly
#define EXPORT_SYMBOL(x)
#define pr_debug(...) ((void)0)
#define pr_err(...) ((void)0)
#define pr_warn(...) ((void)0)
#define pr_notice(...) ((void)0)
#define irqs_disabled() 0
#define BUG() abort()
#define ERR_PTR(e) ((char *)(intptr_t)(e))
#define IS_ERR_OR_NULL(p) (!(p) || (uintptr_t)(p) >= (uintptr_t)-4095)

#ifndef KP_INIT_ENV_ARG_LIMIT
#error "KP_INIT_ENV_ARG_LIMIT: init/Kconfig's INIT_ENV_ARG_LIMIT default"
#endif
#define CONFIG_INIT_ENV_ARG_LIMIT KP_INIT_ENV_ARG_LIMIT

/* kernel/params.c: only parse_one()'s search of the (empty) table */
struct module;
struct kernel_param;
struct kernel_param_ops {
	unsigned int flags;
	int (*set)(const char *val, const struct kernel_param *kp);
};
#define KERNEL_PARAM_OPS_FL_NOARG 1
struct kernel_param {
	const char *name;
	struct module *mod;
	const struct kernel_param_ops *ops;
	s16 level;
};
static inline void kernel_param_lock(struct module *mod) { (void)mod; }
static inline void kernel_param_unlock(struct module *mod) { (void)mod; }
static inline bool param_check_unsafe(const struct kernel_param *kp) { (void)kp; return true; }

/* include/linux/init.h: one __setup()/early_param() entry */
struct obs_kernel_param {
	const char *str;
	int (*setup_func)(char *);
	int early;
};
/* the table the harness builds for the kernel being judged */
extern const struct obs_kernel_param *kp_setup_start, *kp_setup_end;
#define __setup_start kp_setup_start
#define __setup_end kp_setup_end

/* kernel/sysctl.c: no sysctl aliases (none of the generated names is one) */
static inline bool sysctl_is_alias(char *param) { (void)param; return false; }

/* include/linux/string.h, lib/string.c */
static inline bool strstarts(const char *str, const char *prefix)
{
	return strncmp(str, prefix, strlen(prefix)) == 0;
}
static inline char *strnchr(const char *s, size_t count, int c)
{
	return memchr(s, c, strnlen(s, count));
}
