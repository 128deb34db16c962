/* lib/cmdline.h - kernel command lines, split and rebuilt by the kernel's own
 * rules (lib/cmdline.c, next_arg()): tokens are separated by whitespace
 * outside double quotes, `param="a b"` is one token, there are no backslash
 * escapes, and a bare `--` ends the kernel's parameters (what follows goes
 * to init). In parameter names `-` and `_` are the same character.
 * Whitespace is the kernel's isspace(): space, \t \n \v \f \r and the
 * byte 0xa0. Any bytes are accepted; lengths are explicit.
 *
 * Pure code: no I/O, no globals. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "lib/util.h"

struct cmdline_token {
	size_t start; /* byte offset of the token in the line */
	size_t len;   /* its length, quotes included */
};

struct cmdline {
	const char *line; /* borrowed; not NUL-terminated necessarily */
	size_t line_len;
	struct cmdline_token *tok;
	size_t n;
	size_t n_kernel;   /* tokens before a bare "--" (== n if there is none) */
	bool has_dashdash; /* tok[n_kernel] is the bare "--" (the first token
			    * named "--" without '=': `"--"` counts too, as
			    * the kernel strips the quotes before comparing) */
};

/* Splits line[0..len). Never fails on any input (an unterminated quote runs
 * to the end of the line, as in the kernel). */
void cmdline_split(const char *line, size_t len, struct cmdline *out);
void cmdline_free(struct cmdline *c);

/* Name of a token: the part before its first '=' (as in next_arg(): a
 * leading '"' of the token is skipped, an '=' at the very start does not
 * count, and quotes do not hide an '='). Value: after that '=', with a
 * leading '"' and then a trailing '"' removed (a token that starts with '"'
 * loses its trailing '"' too); NULL if no '='. `"a=b"`, `a="b"`: name a,
 * value b. `foo="cgroup_disable=memory"`: name foo. Both returned as newly
 * allocated strings; NULL when i is out of range. */
char *cmdline_token_name(const struct cmdline *c, size_t i);
char *cmdline_token_value(const struct cmdline *c, size_t i);

/* True if two parameter names are equal with '-' == '_'. */
bool param_name_eq(const char *a, size_t alen, const char *b, size_t blen);

/* A managed argument, written "name=item": e.g. "cgroup_disable=memory",
 * "cgroup_enable=memory", "cgroup.memory=nokmem". name matches with '-'=='_';
 * value is a comma list and item is matched against its elements. */

/* Does token i carry this item: is it named name, with item among the
 * elements of its value's comma list? False when i is out of range. */
bool cmdline_token_has_item(const struct cmdline *c, size_t i, const char *name, const char *item);

/* Does a kernel token (before --) with this name carry this item? */
bool cmdline_has_item(const struct cmdline *c, const char *name, const char *item);

/* Is the token "name=v1,v2" present: some kernel token with that name whose
 * list has every one of the items (in any order, among others)? arg is read
 * as a token (quotes as above); an arg without '=' asks for a token with
 * that name and no '='. Empty items are ignored. */
bool cmdline_has_arg(const struct cmdline *c, const char *arg);

/* What a whole command line lacks and has against tokens to add and
 * remove ("name=item" or "name=a,b", as cmdline_edit reads them): each add
 * token it lacks goes to missing, each remove item it has to unwanted (as
 * "name=item"). */
void cmdline_faults(const char *line, const struct strv *add, const struct strv *remove, struct strv *missing,
		    struct strv *unwanted);

/* The edit: the rebuilt line, given
 *   remove: "name=item" strings (or "name=item1,item2": each item): from
 *           every kernel token with that name, every copy of the item is
 *           taken out of its comma list, with one adjacent comma; when no
 *           non-empty item is left the whole token goes, with one adjacent
 *           run of whitespace (the one after it when a kept token follows,
 *           else the one before, so a trailing newline stays). Items that
 *           contain '"' are never removed. If the kernel would read the
 *           remaining list differently (a quote inside it, e.g. removing
 *           memory from `x=memory,"a",b` would leave `x="a",b`, read as
 *           `a",b`), the kept list is written `x=""a",b"`, which the kernel
 *           reads as `"a",b`; where no token reads as the kept items
 *           (`x=memory,"a b",c`), the token is left as it is and
 *           cmdline_edit_refused() names it;
 *   add:    "name=value" tokens inserted in order, each after the last
 *           kernel token (before trailing whitespace or newline) with one
 *           space, or as "token " right before a bare "--", or at the start
 *           of a line without tokens, unless cmdline_has_arg() already holds for
 *           them (checked on the line as edited so far). A token that is not
 *           exactly one parameter (empty, whitespace outside quotes,
 *           unbalanced quotes, "--") is skipped. If the last kernel token has
 *           an unterminated quote, the new one goes just before it.
 * Removing and adding the same things again changes nothing more.
 * Tokens inside double quotes are values, never matched: `foo="cgroup_disable=memory"`
 * and anything after "--" are left alone. Every byte not part of a removed
 * item is kept as it was. removed_out (optional) receives the exact text of
 * each token that was changed or dropped, as it was before the edit.
 * Returns a newly allocated string. */
char *cmdline_edit(const char *line, size_t len, const struct strv *remove, const struct strv *add,
		   struct strv *removed_out);

/* cmdline_edit() without removed_out, where each token added that like
 * (the line as it was before, for revert) has among its kernel tokens
 * goes back where it was there: right after the nearest token before it
 * in like that the line still has (same bytes), else right before the
 * nearest one after it; else, and for every token like does not have,
 * as cmdline_edit() adds it. like NULL: cmdline_edit(). */
char *cmdline_edit_like(const char *line, size_t len, const struct strv *remove, const struct strv *add,
			const char *like, size_t like_len);

/* The first kernel token from which cmdline_edit() cannot take the
 * remove items out without changing how the kernel reads the items it
 * keeps (it leaves such a token as it is), as a new string; NULL if
 * there is none. */
char *cmdline_edit_refused(const char *line, size_t len, const struct strv *remove);

/* How many variables of init the kernel tokens of a line could make: the
 * distinct names of its name=value tokens without a '.', but
 * cgroup_disable (a kernel passes
 * such a token to init's environment when no parameter of its has the
 * name; which names it has is not known here, so every one counts). Init
 * gets at most CMDLINE_INIT_ENVS of them (MAX_INIT_ENVS, with HOME= and
 * TERM= set by the kernel itself): one more is a panic at boot. */
size_t cmdline_init_env_names(const char *line, size_t len);
#define CMDLINE_INIT_ENVS 30

/* The kernel's COMMAND_LINE_SIZE for an architecture as a kernel config
 * names it ("x86", "arm64", "arm", "riscv", "mips", ...; each arch's
 * asm/setup.h, else asm-generic's 512; s390: its Kconfig default): it
 * keeps at most that minus one byte of the line. 0 when arch is NULL or
 * not known. */
size_t cmdline_size_for_arch(const char *arch);

/* Joining all tokens' bytes with the original separators gives back the
 * line: exposed for tests (tokenize then join is identity). */
char *cmdline_join(const struct cmdline *c);
