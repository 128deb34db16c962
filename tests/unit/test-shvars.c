/* test-shvars.c - plain shell assignments read without a shell
 * (src/lib/shvars.c).
 *
 * With no argument: the unit tests. With arguments (the differential test,
 * tests/cmd/shvars-diff.sh): test-shvars --dump NAME... -- FILE... sources
 * the files in order and prints, per NAME, "NAME=known:VALUE\0",
 * "NAME=unset\0" or "NAME=unknown\0", then ".code=yes\0" when some value
 * or statement needed code (which may fail and stop a `set -e` shell), else
 * ".code=no\0"; --dump-batch does many cases at once. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/shvars.h"
#include "lib/util.h"
#include "test.h"

static const char *val(const struct shvars *vs, const char *name)
{
	const char *v, *f, *why;
	unsigned line;
	if (!shvars_get(vs, name, &v, &f, &line, &why))
		return "<unknown>";
	return v ? v : "<unset>";
}

static void src(struct shvars *vs, const char *text)
{
	shvars_source(vs, "/etc/default/grub", text, strlen(text));
}

TEST(plain_forms)
{
	struct shvars vs = { 0 };
	src(&vs, "# comment\n\nA=1\nB='two words'\nC=\"x $A ${A}y\"\nD=a\\ b\nexport E=e\n"
		 "F=1 G=2; H=3\nI=\"q\\\"\\$\\\\\\`\"\nJ='it'\\''s'\nK=\"a\\\nb\"\nL=pre\\\npost\n");
	CHECK_STR(val(&vs, "A"), "1");
	CHECK_STR(val(&vs, "B"), "two words");
	CHECK_STR(val(&vs, "C"), "x 1 1y");
	CHECK_STR(val(&vs, "D"), "a b");
	CHECK_STR(val(&vs, "E"), "e");
	CHECK_STR(val(&vs, "F"), "1");
	CHECK_STR(val(&vs, "G"), "2");
	CHECK_STR(val(&vs, "H"), "3");
	CHECK_STR(val(&vs, "I"), "q\"$\\`");
	CHECK_STR(val(&vs, "J"), "it's");
	CHECK_STR(val(&vs, "K"), "ab");
	CHECK_STR(val(&vs, "L"), "prepost");
	CHECK_STR(val(&vs, "NOPE"), "<unset>");
	shvars_free(&vs);
}

TEST(debian_default_grub)
{
	/* the head of Debian 12's /usr/share/grub/default/grub (grub2-common) */
	struct shvars vs = { 0 };
	src(&vs, "# If you change this file, run 'update-grub' afterwards to update\n"
		 "# /boot/grub/grub.cfg.\n\nGRUB_DEFAULT=0\nGRUB_TIMEOUT=5\n"
		 "GRUB_DISTRIBUTOR=`lsb_release -i -s 2> /dev/null || echo Debian`\n"
		 "GRUB_CMDLINE_LINUX_DEFAULT=\"quiet\"\nGRUB_CMDLINE_LINUX=\"\"\n"
		 "#GRUB_BADRAM=\"0x01234567,0xfefefefe,0x89abcdef,0xefefefef\"\n");
	CHECK_STR(val(&vs, "GRUB_CMDLINE_LINUX_DEFAULT"), "quiet");
	CHECK_STR(val(&vs, "GRUB_CMDLINE_LINUX"), "");
	CHECK_STR(val(&vs, "GRUB_DISTRIBUTOR"), "<unknown>");
	const char *v, *f, *why;
	unsigned line;
	CHECK(!shvars_get(&vs, "GRUB_DISTRIBUTOR", &v, &f, &line, &why));
	CHECK_INT(line, 6);
	CHECK(why && strstr(why, "command substitution"));
	shvars_free(&vs);
}

TEST(code_makes_the_value_unknown)
{
	struct shvars vs = { 0 };
	src(&vs, "A=$(hostname)\nB=\"x`id`\"\nC=${A:-x}\nD=$1\nE=$A\nF=\"$((1+1))\"\nG=~/x\nH=ok\n");
	for (const char *n = "ABCDEFG"; *n; n++) {
		char name[2] = { *n, 0 };
		CHECK_STR(val(&vs, name), "<unknown>");
	}
	CHECK_STR(val(&vs, "H"), "ok");
	/* set again plainly: known again */
	src(&vs, "A=back\n");
	CHECK_STR(val(&vs, "A"), "back");
	shvars_free(&vs);
}

TEST(a_statement_that_runs_code_makes_everything_unknown)
{
	static const char *const code[] = {
		"touch /tmp/x\n", "A=1; echo hi\n", "A=1 cmd\n", ". /etc/x\n", "if true; then A=2; fi\n",
		"A=1 >/tmp/x\n", "A=1 && B=2\n", "f() { A=2; }\n", "A=\"open\n", "A='open\n",
		"(A=1)\n", "A=1 | cat\n", "readonly A\n", "unset -f \"$x\"\n",
	};
	for (size_t i = 0; i < ARRAY_SIZE(code); i++) {
		struct shvars vs = { 0 };
		src(&vs, "GRUB_CMDLINE_LINUX=quiet\n");
		src(&vs, code[i]);
		src(&vs, "GRUB_CMDLINE_LINUX=later\n");
		if (strcmp(val(&vs, "GRUB_CMDLINE_LINUX"), "<unknown>") != 0) {
			printf("  not unknown after: %s", code[i]);
			test_failed_checks++;
		}
		shvars_free(&vs);
	}
	/* where and why */
	struct shvars vs = { 0 };
	src(&vs, "A=1\n\n  touch /tmp/x\n");
	const char *v, *f, *why;
	unsigned line;
	CHECK(!shvars_get(&vs, "A", &v, &f, &line, &why));
	CHECK_STR(f, "/etc/default/grub");
	CHECK_INT(line, 3);
	CHECK_STR(why, "a command");
	shvars_free(&vs);
}

TEST(export_unset_and_filters)
{
	struct shvars vs = { 0 };
	src(&vs, "A=1\nexport A B\nexport C='c'\nunset A\nunset -v C\n");
	CHECK_STR(val(&vs, "A"), "<unset>");
	CHECK_STR(val(&vs, "C"), "<unset>");
	shvars_set(&vs, "A", "from the filter", "99-memcg-policy.cfg", 0);
	CHECK_STR(val(&vs, "A"), "from the filter");
	src(&vs, "B=\"$A and more\"\n");
	CHECK_STR(val(&vs, "B"), "from the filter and more");
	shvars_free(&vs);
}

TEST(nul_byte_is_code)
{
	struct shvars vs = { 0 };
	shvars_source(&vs, "f", "A=1\0B=2\n", 8);
	CHECK_STR(val(&vs, "A"), "<unknown>");
	shvars_free(&vs);
}

static int dump(int argc, char **argv)
{
	int i = 2;
	int names = i;
	while (i < argc && strcmp(argv[i], "--") != 0)
		i++;
	int names_end = i++;
	struct shvars vs = { 0 };
	for (; i < argc; i++) {
		FILE *f = fopen(argv[i], "rb");
		if (!f) {
			perror(argv[i]);
			return 2;
		}
		struct strbuf sb = { 0 };
		char buf[4096];
		size_t n;
		while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
			sb_appendn(&sb, buf, n);
		fclose(f);
		shvars_source(&vs, argv[i], sb.s ? sb.s : "", sb.len);
		sb_free(&sb);
	}
	for (int k = names; k < names_end; k++) {
		const char *v, *file, *why;
		unsigned line;
		if (!shvars_get(&vs, argv[k], &v, &file, &line, &why))
			printf("%s=unknown%c", argv[k], 0);
		else if (!v)
			printf("%s=unset%c", argv[k], 0);
		else
			printf("%s=known:%s%c", argv[k], v, 0);
	}
	bool code = vs.poisoned;
	for (size_t k = 0; k < vs.n; k++)
		code |= vs.v[k].unknown;
	printf(".code=%s%c", code ? "yes" : "no", 0);
	shvars_free(&vs);
	return 0;
}

/* --dump-batch MANIFEST NAME...: each line of MANIFEST is one case (its
 * files, tab-separated); each case's values as --dump prints them, then
 * \036. */
static int dump_batch(int argc, char **argv)
{
	FILE *m = fopen(argv[2], "r");
	if (!m) {
		perror(argv[2]);
		return 2;
	}
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	while ((n = getline(&line, &cap, m)) > 0) {
		if (line[n - 1] == '\n')
			line[n - 1] = '\0';
		struct shvars vs = { 0 };
		char *save = NULL;
		for (char *f = strtok_r(line, "\t", &save); f; f = strtok_r(NULL, "\t", &save)) {
			FILE *in = fopen(f, "rb");
			if (!in) {
				perror(f);
				return 2;
			}
			struct strbuf sb = { 0 };
			char buf[4096];
			size_t k;
			while ((k = fread(buf, 1, sizeof(buf), in)) > 0)
				sb_appendn(&sb, buf, k);
			fclose(in);
			shvars_source(&vs, f, sb.s ? sb.s : "", sb.len);
			sb_free(&sb);
		}
		for (int k = 3; k < argc; k++) {
			const char *v, *file, *why;
			unsigned ln;
			if (!shvars_get(&vs, argv[k], &v, &file, &ln, &why))
				printf("%s=unknown%c", argv[k], 0);
			else if (!v)
				printf("%s=unset%c", argv[k], 0);
			else
				printf("%s=known:%s%c", argv[k], v, 0);
		}
		bool code = vs.poisoned;
		for (size_t k = 0; k < vs.n; k++)
			code |= vs.v[k].unknown;
		printf(".code=%s%c\036", code ? "yes" : "no", 0);
		shvars_free(&vs);
	}
	free(line);
	fclose(m);
	return 0;
}

static const struct test_case cases[] = {
	T(plain_forms),
	T(debian_default_grub),
	T(code_makes_the_value_unknown),
	T(a_statement_that_runs_code_makes_everything_unknown),
	T(export_unset_and_filters),
	T(nul_byte_is_code),
};

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "--dump") == 0)
		return dump(argc, argv);
	if (argc > 2 && strcmp(argv[1], "--dump-batch") == 0)
		return dump_batch(argc, argv);
	return test_run_all(cases, ARRAY_SIZE(cases));
}
