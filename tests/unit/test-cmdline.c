/* test-cmdline.c - splitting and editing kernel command lines. */
#include <stdint.h>

#include "lib/cmdline.h"
#include "test.h"

/* NULL-terminated list of literals to a strv. */
static void strv_from(struct strv *sv, const char *const *list)
{
	*sv = (struct strv){ 0 };
	for (size_t i = 0; list && list[i]; i++)
		strv_pushdup(sv, list[i]);
}

/* cmdline_edit() on a C string with literal lists; removed_out optional. */
static char *ed(const char *line, const char *const *rm, const char *const *add,
		struct strv *removed)
{
	struct strv r, a;
	strv_from(&r, rm);
	strv_from(&a, add);
	char *out = cmdline_edit(line, strlen(line), &r, &a, removed);
	strv_free(&r);
	strv_free(&a);
	return out;
}

static const char *const RM_DISABLE[] = { "cgroup_disable=memory", NULL };
static const char *const ADD_ENABLE[] = { "cgroup_enable=memory", NULL };

/* Removes cgroup_disable=memory and returns the line, freed by the caller. */
static char *rm_disable(const char *line)
{
	return ed(line, RM_DISABLE, NULL, NULL);
}

static char *add_enable(const char *line)
{
	return ed(line, NULL, ADD_ENABLE, NULL);
}

/* Text of token i of c, for comparisons. */
static char *tok_text(const struct cmdline *c, size_t i)
{
	return xstrndup(c->line + c->tok[i].start, c->tok[i].len);
}

TEST(split_whitespace)
{
	const char *l = "  root=/dev/sda1\tro \n quiet  ";
	struct cmdline c;
	cmdline_split(l, strlen(l), &c);
	CHECK_INT(c.n, 3);
	CHECK_INT(c.n_kernel, 3);
	CHECK(!c.has_dashdash);
	CHECK_INT(c.tok[0].start, 2);
	CHECK_INT(c.tok[0].len, strlen("root=/dev/sda1"));
	_cleanup_free_ char *t1 = tok_text(&c, 1);
	_cleanup_free_ char *t2 = tok_text(&c, 2);
	CHECK_STR(t1, "ro");
	CHECK_STR(t2, "quiet");
	cmdline_free(&c);

	/* The kernel's isspace() includes \v, \f, \r and 0xa0. */
	const char l2[] = "a\vb\fc\rd\xa0" "e";
	cmdline_split(l2, sizeof(l2) - 1, &c);
	CHECK_INT(c.n, 5);
	cmdline_free(&c);

	cmdline_split("", 0, &c);
	CHECK_INT(c.n, 0);
	CHECK_INT(c.n_kernel, 0);
	CHECK(!c.has_dashdash);
	cmdline_free(&c);

	cmdline_split(" \t\n", 3, &c);
	CHECK_INT(c.n, 0);
	cmdline_free(&c);

	/* Only len bytes are read: the 'x' after them is not a token. */
	cmdline_split("a bx", 3, &c);
	CHECK_INT(c.n, 2);
	CHECK_INT(c.tok[1].len, 1);
	cmdline_free(&c);
}

TEST(split_quotes)
{
	const char *l = "a param=\"x y\" \"c d\" e\"f g\"h i";
	struct cmdline c;
	cmdline_split(l, strlen(l), &c);
	CHECK_INT(c.n, 5);
	_cleanup_free_ char *t1 = tok_text(&c, 1);
	_cleanup_free_ char *t2 = tok_text(&c, 2);
	_cleanup_free_ char *t3 = tok_text(&c, 3);
	CHECK_STR(t1, "param=\"x y\"");
	CHECK_STR(t2, "\"c d\"");
	CHECK_STR(t3, "e\"f g\"h");
	_cleanup_free_ char *n1 = cmdline_token_name(&c, 1);
	_cleanup_free_ char *v1 = cmdline_token_value(&c, 1);
	_cleanup_free_ char *n2 = cmdline_token_name(&c, 2);
	_cleanup_free_ char *v2 = cmdline_token_value(&c, 2);
	CHECK_STR(n1, "param");
	CHECK_STR(v1, "x y");
	CHECK_STR(n2, "c d");
	CHECK(v2 == NULL);
	cmdline_free(&c);

	/* No backslash escapes; an unterminated quote runs to the end. */
	l = "a b=\"x\\\" y -- z";
	cmdline_split(l, strlen(l), &c);
	CHECK_INT(c.n, 5);
	CHECK_INT(c.n_kernel, 3);
	CHECK(c.has_dashdash);
	_cleanup_free_ char *u = tok_text(&c, 1);
	CHECK_STR(u, "b=\"x\\\"");
	_cleanup_free_ char *u2 = tok_text(&c, 2);
	CHECK_STR(u2, "y");
	cmdline_free(&c);

	l = "a b=\"x y -- z";
	cmdline_split(l, strlen(l), &c);
	CHECK_INT(c.n, 2);
	CHECK(!c.has_dashdash); /* the "--" is inside the quote */
	CHECK_INT(c.tok[1].start + c.tok[1].len, strlen(l));
	cmdline_free(&c);
}

TEST(token_name_value)
{
	const char *l = "\"cgroup_disable=memory\" foo=\"cgroup_disable=memory\" =x a= "
			"b=\"\" \"q\" c=d=e a\"b=c\"";
	struct cmdline c;
	cmdline_split(l, strlen(l), &c);
	CHECK_INT(c.n, 8);
	const char *names[] = { "cgroup_disable", "foo", "=x", "a", "b", "q", "c", "a\"b" };
	const char *values[] = { "memory", "cgroup_disable=memory", NULL, "", "", NULL, "d=e", "c\"" };
	for (size_t i = 0; i < 8 && i < c.n; i++) {
		_cleanup_free_ char *n = cmdline_token_name(&c, i);
		_cleanup_free_ char *v = cmdline_token_value(&c, i);
		CHECK_STR(n, names[i]);
		if (values[i])
			CHECK_STR(v, values[i]);
		else
			CHECK(v == NULL);
	}
	CHECK(cmdline_token_name(&c, 8) == NULL);
	CHECK(cmdline_token_value(&c, 99) == NULL);
	cmdline_free(&c);
}

TEST(dashdash)
{
	const char *l = "ro quiet -- single cgroup_disable=memory --";
	struct cmdline c;
	cmdline_split(l, strlen(l), &c);
	CHECK_INT(c.n, 6);
	CHECK_INT(c.n_kernel, 2);
	CHECK(c.has_dashdash);
	CHECK(!cmdline_has_item(&c, "cgroup_disable", "memory"));
	cmdline_free(&c);

	cmdline_split("--", 2, &c);
	CHECK_INT(c.n, 1);
	CHECK_INT(c.n_kernel, 0);
	CHECK(c.has_dashdash);
	cmdline_free(&c);

	/* Quotes are stripped before the kernel compares with "--". */
	cmdline_split("a \"--\" b", 8, &c);
	CHECK(c.has_dashdash);
	CHECK_INT(c.n_kernel, 1);
	cmdline_free(&c);

	/* Not a bare "--". */
	const char *l2 = "--foo --=x --- -";
	cmdline_split(l2, strlen(l2), &c);
	CHECK(!c.has_dashdash);
	CHECK_INT(c.n_kernel, 4);
	cmdline_free(&c);
}

TEST(names)
{
	CHECK(param_name_eq("cgroup-disable", 14, "cgroup_disable", 14));
	CHECK(param_name_eq("cgroup_disable", 14, "cgroup-disable", 14));
	CHECK(param_name_eq("cgroup.memory", 13, "cgroup.memory", 13));
	CHECK(!param_name_eq("cgroup.memory", 13, "cgroup_memory", 13));
	CHECK(!param_name_eq("cgroup-memory", 13, "cgroup.memory", 13));
	CHECK(!param_name_eq("cgroup_disable", 14, "cgroup_disabl", 13));
	CHECK(!param_name_eq("Cgroup_disable", 14, "cgroup_disable", 14));
	CHECK(param_name_eq("", 0, "", 0));

	_cleanup_free_ char *a = rm_disable("ro cgroup-disable=memory quiet");
	CHECK_STR(a, "ro quiet");
	_cleanup_free_ char *b = ed("x cgroup-disable=memory", (const char *const[]){ "cgroup-disable=memory", NULL }, NULL, NULL);
	CHECK_STR(b, "x");
	_cleanup_free_ char *d = rm_disable("cgroup_disablex=memory cgroup.disable=memory");
	CHECK_STR(d, "cgroup_disablex=memory cgroup.disable=memory");
}

TEST(has_item_and_arg)
{
	const char *l = "cgroup.memory=nosocket,nobpf,nokmem cgroup-enable=memory "
			"foo=\"cgroup_disable=memory\" cgroup_disable=\"pressure,cpu\" flag -- cgroup_disable=memory";
	struct cmdline c;
	cmdline_split(l, strlen(l), &c);
	CHECK(cmdline_has_arg(&c, "cgroup.memory=nokmem,nosocket"));
	CHECK(cmdline_has_arg(&c, "cgroup.memory=nosocket"));
	CHECK(cmdline_has_arg(&c, "cgroup.memory=nobpf,nokmem,nosocket"));
	CHECK(!cmdline_has_arg(&c, "cgroup.memory=nokmem,nofoo"));
	CHECK(!cmdline_has_arg(&c, "cgroup_memory=nokmem"));
	CHECK(cmdline_has_arg(&c, "cgroup_enable=memory"));
	CHECK(cmdline_has_item(&c, "cgroup_enable", "memory"));
	CHECK(cmdline_has_item(&c, "cgroup-enable", "memory"));
	CHECK(!cmdline_has_item(&c, "cgroup_enable", "mem"));
	CHECK(!cmdline_has_item(&c, "cgroup_disable", "memory")); /* only in foo= and after -- */
	CHECK(cmdline_has_item(&c, "cgroup_disable", "cpu"));       /* quoted value */
	CHECK(cmdline_has_arg(&c, "cgroup_disable=cpu,pressure"));
	CHECK(cmdline_has_arg(&c, "cgroup_disable=\"cpu,pressure\""));
	CHECK(cmdline_has_arg(&c, "flag"));
	CHECK(!cmdline_has_arg(&c, "flag=1"));
	CHECK(!cmdline_has_arg(&c, "cgroup_enable"));
	CHECK(!cmdline_has_item(&c, "cgroup_enable", ""));
	cmdline_free(&c);

	/* Items spread over two tokens do not make one token. */
	l = "cgroup.memory=nokmem cgroup.memory=nosocket";
	cmdline_split(l, strlen(l), &c);
	CHECK(!cmdline_has_arg(&c, "cgroup.memory=nokmem,nosocket"));
	CHECK(cmdline_has_arg(&c, "cgroup.memory=nosocket"));
	cmdline_free(&c);
}

TEST(remove_comma_lists)
{
	_cleanup_free_ char *a = rm_disable("cgroup_disable=memory,pressure");
	CHECK_STR(a, "cgroup_disable=pressure");
	_cleanup_free_ char *b = rm_disable("cgroup_disable=pressure,memory");
	CHECK_STR(b, "cgroup_disable=pressure");
	_cleanup_free_ char *c = rm_disable("ro cgroup_disable=cpu,memory,pressure quiet");
	CHECK_STR(c, "ro cgroup_disable=cpu,pressure quiet");
	_cleanup_free_ char *d = rm_disable("cgroup_disable=memory,memory ro");
	CHECK_STR(d, "ro");
	_cleanup_free_ char *e = rm_disable("cgroup_disable=memory,pressure,memory");
	CHECK_STR(e, "cgroup_disable=pressure");
	_cleanup_free_ char *f = rm_disable("cgroup_disable=memoryx,xmemory");
	CHECK_STR(f, "cgroup_disable=memoryx,xmemory");
	/* Several tokens. */
	_cleanup_free_ char *g = rm_disable("cgroup_disable=memory a cgroup-disable=cpu,memory b cgroup_disable=memory");
	CHECK_STR(g, "a cgroup-disable=cpu b");
	/* Other items' bytes stay, even empty ones. */
	_cleanup_free_ char *h = rm_disable("cgroup_disable=memory,,Pressure");
	CHECK_STR(h, "cgroup_disable=,Pressure");
	/* Nothing but empty items left: the token goes. */
	_cleanup_free_ char *i = rm_disable("a cgroup_disable=memory, b");
	CHECK_STR(i, "a b");
	/* Several items in one spec. */
	_cleanup_free_ char *j = ed("cgroup.memory=nokmem,nosocket,nobpf x",
				    (const char *const[]){ "cgroup.memory=nosocket,nokmem", NULL }, NULL, NULL);
	CHECK_STR(j, "cgroup.memory=nobpf x");
}

TEST(remove_quoted)
{
	_cleanup_free_ char *a = rm_disable("a cgroup_disable=\"memory,pressure\" b");
	CHECK_STR(a, "a cgroup_disable=\"pressure\" b");
	_cleanup_free_ char *b = rm_disable("a cgroup_disable=\"memory\" b");
	CHECK_STR(b, "a b");
	_cleanup_free_ char *c = rm_disable("a \"cgroup_disable=pressure,memory\" b");
	CHECK_STR(c, "a \"cgroup_disable=pressure\" b");
	_cleanup_free_ char *d = rm_disable("\"cgroup_disable=memory\"");
	CHECK_STR(d, "");
	/* A different parameter whose value mentions ours. */
	const char *l = "foo=\"cgroup_disable=memory\" bar=\"x cgroup_disable=memory\"";
	_cleanup_free_ char *e = rm_disable(l);
	CHECK_STR(e, l);
	/* A leftover list the kernel would read differently (value
	 * `"x,memory"` read as `x,memory`): the kept items are wrapped in
	 * quotes, which the kernel strips, so it reads them as they were. */
	struct strv removed = { 0 };
	_cleanup_free_ char *f = ed("a cgroup_disable=memory,\"x,memory\" b", RM_DISABLE, NULL, &removed);
	CHECK_STR(f, "a cgroup_disable=\"\"x,memory\"\" b");
	CHECK_INT(removed.n, 1);
	strv_free(&removed);
	_cleanup_free_ char *f2 = rm_disable("cgroup_disable=memory,\"x\",cpu");
	CHECK_STR(f2, "cgroup_disable=\"\"x\",cpu\"");
	/* No token reads as `"a b",cpu` (wrapping quotes would split it):
	 * left as it is, and named by cmdline_edit_refused(). */
	const char *h_in = "ro cgroup_disable=memory,\"a b\",cpu quiet";
	_cleanup_free_ char *h = rm_disable(h_in);
	CHECK_STR(h, h_in);
	struct strv rm = { 0 };
	strv_pushdup(&rm, "cgroup_disable=memory");
	_cleanup_free_ char *bad = cmdline_edit_refused(h_in, strlen(h_in), &rm);
	CHECK_STR(bad, "cgroup_disable=memory,\"a b\",cpu");
	_cleanup_free_ char *none = cmdline_edit_refused("ro cgroup_disable=memory,\"x\",cpu", 31, &rm);
	CHECK(none == NULL);
	strv_free(&rm);
	/* Items with quotes are never taken out. */
	const char *g_in = "a x=m\"m,y\" b";
	_cleanup_free_ char *g = ed(g_in, (const char *const[]){ "x=m\"m", NULL }, NULL, NULL);
	CHECK_STR(g, g_in);
}

TEST(remove_spacing)
{
	_cleanup_free_ char *a = rm_disable("cgroup_disable=memory");
	CHECK_STR(a, "");
	_cleanup_free_ char *b = rm_disable("cgroup_disable=memory quiet");
	CHECK_STR(b, "quiet");
	_cleanup_free_ char *c = rm_disable("quiet cgroup_disable=memory");
	CHECK_STR(c, "quiet");
	_cleanup_free_ char *d = rm_disable("ro\t\tcgroup_disable=memory  quiet\n");
	CHECK_STR(d, "ro\t\tquiet\n");
	_cleanup_free_ char *e = rm_disable("ro  quiet\tcgroup_disable=memory\n");
	CHECK_STR(e, "ro  quiet\n");
	_cleanup_free_ char *f = rm_disable("  cgroup_disable=memory  ro  ");
	CHECK_STR(f, "  ro  ");
	_cleanup_free_ char *g = rm_disable("ro cgroup_disable=memory cgroup_disable=memory\tcgroup-disable=memory quiet");
	CHECK_STR(g, "ro quiet");
	_cleanup_free_ char *h = rm_disable("ro cgroup_disable=memory cgroup_disable=memory");
	CHECK_STR(h, "ro");
	_cleanup_free_ char *i = rm_disable("cgroup_disable=memory\n");
	CHECK_STR(i, "\n");
	_cleanup_free_ char *j = rm_disable("ro cgroup_disable=memory -- x cgroup_disable=memory");
	CHECK_STR(j, "ro -- x cgroup_disable=memory");
	_cleanup_free_ char *k = rm_disable("cgroup_disable=memory -- cgroup_disable=memory\n");
	CHECK_STR(k, "-- cgroup_disable=memory\n");
	_cleanup_free_ char *l = rm_disable("--");
	CHECK_STR(l, "--");
}

TEST(add)
{
	_cleanup_free_ char *a = add_enable("");
	CHECK_STR(a, "cgroup_enable=memory");
	_cleanup_free_ char *b = add_enable("ro quiet");
	CHECK_STR(b, "ro quiet cgroup_enable=memory");
	_cleanup_free_ char *c = add_enable("ro quiet\n");
	CHECK_STR(c, "ro quiet cgroup_enable=memory\n");
	_cleanup_free_ char *d = add_enable("ro  quiet \t\n");
	CHECK_STR(d, "ro  quiet cgroup_enable=memory \t\n");
	_cleanup_free_ char *e = add_enable("\n");
	CHECK_STR(e, "cgroup_enable=memory\n");
	/* Already there, with '-' for '_', quoted, or among other items. */
	_cleanup_free_ char *f = add_enable("ro cgroup-enable=memory");
	CHECK_STR(f, "ro cgroup-enable=memory");
	_cleanup_free_ char *g = add_enable("ro \"cgroup_enable=memory\"");
	CHECK_STR(g, "ro \"cgroup_enable=memory\"");
	_cleanup_free_ char *h = add_enable("cgroup_enable=cpu,memory");
	CHECK_STR(h, "cgroup_enable=cpu,memory");
	/* Several, in order; one already there is skipped. */
	_cleanup_free_ char *i = ed("ro\n", NULL,
				    (const char *const[]){ "cgroup.memory=nokmem,nosocket", "ro", "cgroup_enable=memory", NULL }, NULL);
	CHECK_STR(i, "ro cgroup.memory=nokmem,nosocket cgroup_enable=memory\n");
	/* Not one parameter: skipped. */
	_cleanup_free_ char *j = ed("ro", NULL, (const char *const[]){ "", "a b", "x=\"y", "--", " ", NULL }, NULL);
	CHECK_STR(j, "ro");
	/* A value with spaces, quoted, is one parameter. */
	_cleanup_free_ char *k = ed("ro", NULL, (const char *const[]){ "x=\"a b\"", NULL }, NULL);
	CHECK_STR(k, "ro x=\"a b\"");
	/* An unterminated quote at the end would swallow it: goes before. */
	_cleanup_free_ char *l = add_enable("ro x=\"a b");
	CHECK_STR(l, "ro cgroup_enable=memory x=\"a b");
	struct cmdline cl;
	cmdline_split(l, strlen(l), &cl);
	CHECK(cmdline_has_arg(&cl, "cgroup_enable=memory"));
	cmdline_free(&cl);
}

TEST(add_dashdash)
{
	_cleanup_free_ char *a = add_enable("ro -- single");
	CHECK_STR(a, "ro cgroup_enable=memory -- single");
	_cleanup_free_ char *b = add_enable("--");
	CHECK_STR(b, "cgroup_enable=memory --");
	_cleanup_free_ char *c = add_enable("ro\t--\tx\n");
	CHECK_STR(c, "ro\tcgroup_enable=memory --\tx\n");
	/* After "--" it is init's, so it does not count as present. */
	_cleanup_free_ char *d = add_enable("-- cgroup_enable=memory");
	CHECK_STR(d, "cgroup_enable=memory -- cgroup_enable=memory");
	_cleanup_free_ char *e = ed("ro -- a", NULL, (const char *const[]){ "x=1", "y=2", NULL }, NULL);
	CHECK_STR(e, "ro x=1 y=2 -- a");
	_cleanup_free_ char *f = ed("  -- a", NULL, (const char *const[]){ "x=1", NULL }, NULL);
	CHECK_STR(f, "  x=1 -- a");
}

TEST(remove_and_add)
{
	struct strv removed = { 0 };
	_cleanup_free_ char *a = ed("BOOT_IMAGE=/vmlinuz root=UUID=1 ro cgroup_disable=memory,pressure quiet "
				    "cgroup_disable=memory splash -- cgroup_disable=memory\n",
				    RM_DISABLE, ADD_ENABLE, &removed);
	CHECK_STR(a, "BOOT_IMAGE=/vmlinuz root=UUID=1 ro cgroup_disable=pressure quiet splash "
		     "cgroup_enable=memory -- cgroup_disable=memory\n");
	CHECK_INT(removed.n, 2);
	if (removed.n == 2) {
		CHECK_STR(removed.v[0], "cgroup_disable=memory,pressure");
		CHECK_STR(removed.v[1], "cgroup_disable=memory");
	}
	strv_free(&removed);

	_cleanup_free_ char *b = ed("cgroup_disable=memory\n", RM_DISABLE, ADD_ENABLE, &removed);
	CHECK_STR(b, "cgroup_enable=memory\n");
	CHECK_INT(removed.n, 1);
	strv_free(&removed);

	/* Nothing to do: removed_out stays empty and the line is the same. */
	_cleanup_free_ char *c = ed("ro cgroup_enable=memory\n", RM_DISABLE, ADD_ENABLE, &removed);
	CHECK_STR(c, "ro cgroup_enable=memory\n");
	CHECK_INT(removed.n, 0);
	strv_free(&removed);

	/* The opposite direction. */
	_cleanup_free_ char *d = ed("ro \"cgroup_enable=memory\" q", (const char *const[]){ "cgroup_enable=memory", NULL },
				    RM_DISABLE, &removed);
	CHECK_STR(d, "ro q cgroup_disable=memory");
	CHECK_INT(removed.n, 1);
	if (removed.n == 1)
		CHECK_STR(removed.v[0], "\"cgroup_enable=memory\"");
	strv_free(&removed);
}

static const char *const SAMPLE_LINES[] = {
	"",
	" ",
	"\n",
	"--",
	" -- ",
	"ro quiet",
	"  ro\t\tquiet  \n",
	"a param=\"x y\" \"c d\" e",
	"a b=\"unterminated -- c",
	"cgroup_disable=memory,pressure cgroup-disable=memory -- cgroup_disable=memory",
	"foo=\"cgroup_disable=memory\" cgroup_disable=\"memory,cpu\" \"cgroup_disable=memory\"",
	"\"\" \" \" \"\"\"\" = == =\" \"=",
	"x=\"a\"b\"c\" cgroup_disable=memory,\"x,memory\" y",
	"ro\v\f\r cgroup_disable=memory\xa0quiet",
	"-- --",
	"cgroup_disable=memory,,memory, ,",
};

TEST(join_identity)
{
	for (size_t i = 0; i < ARRAY_SIZE(SAMPLE_LINES); i++) {
		const char *l = SAMPLE_LINES[i];
		struct cmdline c;
		cmdline_split(l, strlen(l), &c);
		_cleanup_free_ char *j = cmdline_join(&c);
		CHECK_STR(j, l);
		cmdline_free(&c);
	}
}

/* Editing twice is editing once, for removal, addition and both. */
TEST(idempotent)
{
	const char *const *ops[][2] = {
		{ RM_DISABLE, NULL },
		{ NULL, ADD_ENABLE },
		{ RM_DISABLE, ADD_ENABLE },
		{ (const char *const[]){ "cgroup.memory=nobpf", NULL },
		  (const char *const[]){ "cgroup.memory=nosocket,nokmem", "cgroup_enable=memory", NULL } },
	};
	for (size_t i = 0; i < ARRAY_SIZE(SAMPLE_LINES); i++)
		for (size_t k = 0; k < ARRAY_SIZE(ops); k++) {
			_cleanup_free_ char *once = ed(SAMPLE_LINES[i], ops[k][0], ops[k][1], NULL);
			struct strv removed = { 0 };
			_cleanup_free_ char *twice = ed(once, ops[k][0], ops[k][1], &removed);
			CHECK_STR(twice, once);
			CHECK_INT(removed.n, 0);
			strv_free(&removed);
		}
}

/* A small deterministic generator of lines made of the pieces that matter. */
static uint32_t rng_state = 12345;
static uint32_t rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 17;
	rng_state ^= rng_state << 5;
	return rng_state;
}

static const char *const PIECES[] = {
	" ", " ", "\t", "\n", "\"", "=", ",", "--", "-", "_", "memory", "pressure",
	"cgroup_disable", "cgroup-disable", "cgroup_enable", "cgroup.memory", "nokmem",
	"\xa0", "a", "\\", "\r",
};

/* Random lines: split/join is identity, tokens lie inside the line, removal
 * leaves no cgroup_disable=memory among kernel tokens, additions are then
 * present, and a second edit changes nothing. */
TEST(random_lines)
{
	for (int round = 0; round < 3000; round++) {
		struct strbuf sb = { 0 };
		sb_appendn(&sb, "", 0);
		int pieces = (int)(rng() % 24);
		for (int p = 0; p < pieces; p++)
			sb_append(&sb, PIECES[rng() % ARRAY_SIZE(PIECES)]);

		struct cmdline c;
		cmdline_split(sb.s, sb.len, &c);
		bool inside = true;
		for (size_t i = 0; i < c.n; i++)
			inside = inside && c.tok[i].len > 0 && c.tok[i].start + c.tok[i].len <= sb.len;
		CHECK(inside);
		CHECK(c.n_kernel <= c.n);
		_cleanup_free_ char *j = cmdline_join(&c);
		CHECK(memcmp(j, sb.s, sb.len) == 0);
		cmdline_free(&c);

		_cleanup_free_ char *once = cmdline_edit(sb.s, sb.len, &(struct strv){
			(char *[]){ (char *)"cgroup_disable=memory", NULL }, 1 }, &(struct strv){
			(char *[]){ (char *)"cgroup_enable=memory", NULL }, 1 }, NULL);
		struct cmdline e;
		cmdline_split(once, strlen(once), &e);
		bool gone = !cmdline_has_item(&e, "cgroup_disable", "memory");
		bool added = cmdline_has_arg(&e, "cgroup_enable=memory");
		CHECK(gone);
		CHECK(added);
		cmdline_free(&e);

		_cleanup_free_ char *twice = cmdline_edit(once, strlen(once), &(struct strv){
			(char *[]){ (char *)"cgroup_disable=memory", NULL }, 1 }, &(struct strv){
			(char *[]){ (char *)"cgroup_enable=memory", NULL }, 1 }, NULL);
		CHECK(strcmp(once, twice) == 0);
		if (!gone || !added || strcmp(once, twice) != 0) {
			printf("  line: \"%s\"\n  once: \"%s\"\n  twice: \"%s\"\n", sb.s, once, twice);
			sb_free(&sb);
			break;
		}
		sb_free(&sb);
	}
}

TEST(null_and_empty)
{
	struct cmdline c;
	cmdline_split(NULL, 0, &c);
	CHECK_INT(c.n, 0);
	_cleanup_free_ char *j = cmdline_join(&c);
	CHECK_STR(j, "");
	cmdline_free(&c);
	_cleanup_free_ char *e = cmdline_edit(NULL, 0, NULL, NULL, NULL);
	CHECK_STR(e, "");
	_cleanup_free_ char *f = cmdline_edit("ro", 2, NULL, NULL, NULL);
	CHECK_STR(f, "ro");
}

TEST(size_for_arch)
{
	/* each arch's asm/setup.h COMMAND_LINE_SIZE (linux 6.1) */
	CHECK_INT(cmdline_size_for_arch("x86"), 2048);
	CHECK_INT(cmdline_size_for_arch("arm64"), 2048);
	CHECK_INT(cmdline_size_for_arch("arm"), 1024);
	CHECK_INT(cmdline_size_for_arch("riscv"), 1024);
	CHECK_INT(cmdline_size_for_arch("mips"), 4096);
	CHECK_INT(cmdline_size_for_arch("loongarch"), 512);
	CHECK_INT(cmdline_size_for_arch("m68k"), 256);
	CHECK_INT(cmdline_size_for_arch("vax"), 0);
	CHECK_INT(cmdline_size_for_arch(NULL), 0);
}


/* cmdline_edit_like: tokens put back where the earlier line had them. */
static char *like(const char *line, const char *before)
{
	struct strv r, a;
	strv_from(&r, RM_DISABLE);
	strv_from(&a, ADD_ENABLE);
	char *out = cmdline_edit_like(line, strlen(line), &r, &a, before, before ? strlen(before) : 0);
	strv_free(&r);
	strv_free(&a);
	return out;
}

TEST(edit_like)
{
	char *s;
	/* after the token before it */
	s = like("root=/dev/b ro quiet cgroup_disable=memory", "root=/dev/a cgroup_enable=memory ro quiet");
	CHECK_STR(s, "root=/dev/b cgroup_enable=memory ro quiet");
	free(s);
	/* that token gone: after the one before that, else before the one
	 * after it */
	s = like("x=1 quiet", "x=1 ro cgroup_enable=memory quiet");
	CHECK_STR(s, "x=1 cgroup_enable=memory quiet");
	free(s);
	s = like("quiet splash", "root=/dev/a cgroup_enable=memory quiet splash");
	CHECK_STR(s, "cgroup_enable=memory quiet splash");
	free(s);
	/* first in the earlier line: first again */
	s = like("root=/dev/b ro", "cgroup_enable=memory root=/dev/a ro");
	CHECK_STR(s, "root=/dev/b cgroup_enable=memory ro");
	free(s);
	/* no neighbour left, or not in the earlier line: as cmdline_edit */
	s = like("a=1 b=2", "cgroup_enable=memory");
	CHECK_STR(s, "a=1 b=2 cgroup_enable=memory");
	free(s);
	s = like("a=1 -- single", "a=1 quiet");
	CHECK_STR(s, "a=1 cgroup_enable=memory -- single");
	free(s);
	/* already there: nothing added; NULL like: cmdline_edit */
	s = like("cgroup_enable=memory a=1", "a=1 cgroup_enable=memory");
	CHECK_STR(s, "cgroup_enable=memory a=1");
	free(s);
	s = like("a=1 cgroup_disable=memory b=2", NULL);
	CHECK_STR(s, "a=1 b=2 cgroup_enable=memory");
	free(s);
}

TEST_MAIN(T(split_whitespace), T(split_quotes), T(token_name_value), T(dashdash), T(names),
	  T(has_item_and_arg), T(remove_comma_lists), T(remove_quoted), T(remove_spacing), T(add),
	  T(add_dashdash), T(remove_and_add), T(join_identity), T(idempotent), T(random_lines),
	  T(null_and_empty), T(size_for_arch), T(edit_like))
