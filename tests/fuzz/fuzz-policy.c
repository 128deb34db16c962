/* fuzz-policy.c - the policy reader (policy_load_buffer) and the set
 * command's editor (policy_set_mode_text), src/policy.c. Properties:
 *   - a file that fails leaves the policy as it was, and the error names
 *     "FILE:LINE:" with a line inside the file (policy_last_error_line);
 *     the one exception is strict = yes in its [policy] section, which is
 *     honoured despite the error (so that a hook fails): then strict is on
 *     and strict_despite names that FILE:LINE;
 *   - a file that loads loads again on top of itself (later files win;
 *     duplicates count within one file only);
 *   - set on/off/auto of a file that loads gives a file that loads, with
 *     that mode in [policy], and setting it again changes nothing. */
#include "fuzz.h"

#include "facts/policy.h"

#define NAME "fuzz.conf"

static unsigned count_lines(const char *text, size_t len)
{
	unsigned n = 1;
	for (size_t i = 0; i < len; i++)
		n += text[i] == '\n';
	return n;
}

/* A few fields that must not move when a file is refused. */
struct snapshot {
	enum policy_mode mode;
	enum accounting accounting;
	bool strict;
	size_t n_needs, n_kernels, n_files;
	enum policy_otherwise otherwise;
	bool has_min_ram;
	enum tristate grub, regenerate;
};

static struct snapshot snap(const struct policy *p)
{
	return (struct snapshot){ p->mode, p->accounting, p->strict, p->n_needs_memcg, p->n_kernels, p->n_files,
				  p->otherwise, p->has_min_ram, p->grub, p->regenerate };
}

static int load(struct policy *p, const char *text, size_t len, const char **err, struct fuzz_capture *cap)
{
	fuzz_capture_begin(cap);
	int r = policy_load_buffer(p, text, len, NAME);
	*err = fuzz_capture_end(cap);
	return r;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data;
	struct policy p;
	policy_init(&p);
	struct snapshot before = snap(&p);
	struct fuzz_capture cap;
	const char *err;
	int r = load(&p, text, size, &err, &cap);
	if (r < 0) {
		FUZZ_CHECK(r == -EXIT_BADINPUT);
		struct snapshot after = snap(&p);
		FUZZ_CHECK(before.mode == after.mode && before.accounting == after.accounting &&
			   before.n_needs == after.n_needs &&
			   before.n_kernels == after.n_kernels && before.n_files == after.n_files &&
			   before.otherwise == after.otherwise && before.has_min_ram == after.has_min_ram &&
			   before.grub == after.grub && before.regenerate == after.regenerate);
		if (after.strict != before.strict) {
			FUZZ_CHECK(after.strict && p.strict_despite);
			unsigned sl = 0;
			FUZZ_CHECK(sscanf(p.strict_despite, NAME ":%u", &sl) == 1);
			FUZZ_CHECK(sl >= 1 && sl <= count_lines(text, size));
		}
		unsigned line = policy_last_error_line();
		FUZZ_CHECK(line >= 1 && line <= count_lines(text, size));
		char *want = xasprintf("memcg-policy: " NAME ":%u: ", line);
		FUZZ_CHECK(strncmp(err, want, strlen(want)) == 0);
		free(want);
		fuzz_capture_free(&cap);
		policy_free(&p);
		return 0;
	}
	FUZZ_CHECK(r == 0 && policy_last_error_line() == 0);
	fuzz_capture_free(&cap);

	/* the same file again, merged on top */
	r = load(&p, text, size, &err, &cap);
	FUZZ_CHECK(r == 0);
	fuzz_capture_free(&cap);
	policy_free(&p);

	static const char *const modes[] = { "on", "off", "auto" };
	static const enum policy_mode want[] = { MODE_ON, MODE_OFF, MODE_AUTO };
	for (size_t m = 0; m < 3; m++) {
		char *out = NULL;
		FUZZ_CHECK(policy_set_mode_text(text, size, modes[m], &out) == 0);
		size_t olen = strlen(out);
		if (!memchr(text, '\0', size)) {
			policy_init(&p);
			r = load(&p, out, olen, &err, &cap);
			if (r != 0)
				dprintf(2, "set %s gives a file that does not load: %s\n", modes[m], err);
			FUZZ_CHECK(r == 0);
			FUZZ_CHECK(p.mode == want[m]);
			fuzz_capture_free(&cap);
			policy_free(&p);
			char *again = NULL;
			FUZZ_CHECK(policy_set_mode_text(out, olen, modes[m], &again) == 0);
			FUZZ_CHECK(strcmp(again, out) == 0);
			free(again);
		}
		free(out);
	}
	return 0;
}
