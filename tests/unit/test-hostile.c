/* test-hostile.c - regression tests for the bugs that fuzzing and the
 * hostile-input tests (tests/fuzz/, tests/cmd/crash.sh, confine.sh,
 * concurrency.sh, badinput.sh) found: one TEST per bug, named after it. */
#include "test.h"

#include "cmdline.h"
#include "slot-kinds.h"

static char *bls_edit(const char *text, const char *add, const char *remove)
{
	struct slot s = { .kind = SLOT_BLS, .content = (char *)text, .len = strlen(text), .exists = true };
	struct decision d = { 0 };
	if (add)
		strv_pushdup(&d.add, add);
	if (remove)
		strv_pushdup(&d.remove, remove);
	size_t len;
	char *out = bls_slot_edit(&s, &d, NULL, NULL, &len);
	decision_free(&d);
	return out;
}

/* fuzz-bls: an options line with an unterminated quote swallows the lines
 * after it (they are joined with spaces), so a token added to the last line
 * was never seen by the kernel, and check said in sync. The token goes
 * before the quote; the swallowed lines are left alone. */
TEST(bls_unterminated_quote_takes_the_token)
{
	const char *in = "title x\nlinux /vmlinuz-6.1.0\noptions root=/dev/sda1 \"unterminated\noptions quiet\n";
	char *out = bls_edit(in, "cgroup_disable=memory", "cgroup_enable=memory");
	CHECK_STR(out, "title x\nlinux /vmlinuz-6.1.0\noptions root=/dev/sda1 cgroup_disable=memory \"unterminated\n"
		       "options quiet\n");
	struct slot s = { .kind = SLOT_BLS, .content = out, .len = strlen(out) };
	char *joined = bls_slot_cmdline(&s);
	struct cmdline c;
	cmdline_split(joined, strlen(joined), &c);
	CHECK(cmdline_has_arg(&c, "cgroup_disable=memory"));
	cmdline_free(&c);
	char *again = bls_edit(out, "cgroup_disable=memory", "cgroup_enable=memory");
	CHECK_STR(again, out);
	char *back = bls_edit(out, NULL, "cgroup_disable=memory");
	CHECK_STR(back, in);
	free(back);
	free(again);
	free(joined);
	free(out);
	/* a swallowed line's tokens are a quoted value, not parameters */
	out = bls_edit("linux /vmlinuz\noptions a=\"b\noptions cgroup_enable=memory\n", NULL, "cgroup_enable=memory");
	CHECK_STR(out, "linux /vmlinuz\noptions a=\"b\noptions cgroup_enable=memory\n");
	free(out);
}

/* fuzz-bls: a quote that a later options line closes makes that line's
 * tail real parameters, which neither the per-line edit nor the joined view
 * saw consistently. The reader refuses such an entry as bad input. */
static int entry_check(const char *text)
{
	return bls_entry_check("e.conf", text, strlen(text));
}

TEST(bls_quote_across_options_lines_is_bad_input)
{
	CHECK_INT(entry_check("linux /v\noptions a=\"b\noptions c\" cgroup_enable=memory\n"), -EXIT_BADINPUT);
	CHECK_INT(entry_check("linux /v\noptions a=\"b c\"\noptions d\n"), 0);
	/* the last options line may end in an unterminated quote (the kernel
	 * reads it to the end; new tokens go before it) */
	CHECK_INT(entry_check("linux /v\noptions a\noptions b=\"c\n"), 0);
	/* after a bare "--" the rest belongs to init */
	CHECK_INT(entry_check("linux /v\noptions a -- x=\"y\noptions z\"\n"), 0);
}

/* fuzz-bls: "options" followed by a \r (or \v, \f) and then tokens got a
 * space inserted after the key on every edit, so adding a token and taking
 * it out again left a byte more. */
TEST(bls_options_key_with_cr_separator_round_trips)
{
	const char *in = "linux /v\noptions\rroot=/dev/sda1 quiet\n";
	char *out = bls_edit(in, "cgroup_disable=memory", NULL);
	CHECK_STR(out, "linux /v\noptions\rroot=/dev/sda1 quiet cgroup_disable=memory\n");
	char *back = bls_edit(out, NULL, "cgroup_disable=memory");
	CHECK_STR(back, in);
	free(out);
	free(back);
}

TEST_MAIN(T(bls_unterminated_quote_takes_the_token), T(bls_quote_across_options_lines_is_bad_input),
	  T(bls_options_key_with_cr_separator_round_trips))
