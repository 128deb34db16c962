/* fuzz-flash-kernel.c - flash-kernel's files (slots/grub/flashk.c, through
 * slots/grub/grub.h and slots/grub/grub-int.h): the editor of
 * /etc/default/flash-kernel's LINUX_KERNEL_CMDLINE and the reader of the
 * boot script's bootargs. Each input is read as both. Properties:
 *   - the edit never fails; a keep decision changes nothing; editing again
 *     changes nothing;
 *   - where the file is one the tool manages (flashk_value_problem says
 *     nothing), the edited file, as a shell sourcing it sees it, gives
 *     LINUX_KERNEL_CMDLINE a value with every token the decision adds,
 *     and none it removes where the old value allowed taking them out;
 *   - reverting the edit (the undo of a file as the tool left it) takes
 *     out every token it added;
 *   - a boot script gives at most one line, of text without line breaks. */
#include "fuzz.h"
#include "decisions.h"

#include "lib/cmdline.h"
#include "slots/grub/grub-int.h"
#include "slots/grub/grub.h"
#include "slots/table.h"

static bool has_all(const char *line, const struct strv *v)
{
	struct cmdline c;
	cmdline_split(line, strlen(line), &c);
	bool ok = true;
	for (size_t i = 0; i < v->n && ok; i++)
		ok = cmdline_has_arg(&c, v->v[i]);
	cmdline_free(&c);
	return ok;
}

static bool has_none(const char *line, const struct strv *v)
{
	struct cmdline c;
	cmdline_split(line, strlen(line), &c);
	bool ok = true;
	for (size_t i = 0; i < v->n && ok; i++)
		ok = !cmdline_has_arg(&c, v->v[i]);
	cmdline_free(&c);
	return ok;
}

static void check_default(const char *text, size_t len)
{
	char *problem = flashk_value_problem("F", text, len);
	for (size_t i = 0; i < ARRAY_SIZE(fuzz_decisions); i++) {
		struct strv add, remove, added = { 0 }, removed = { 0 };
		fuzz_decision_strv(&fuzz_decisions[i], &add, &remove);
		struct decision d = { .add = add, .remove = remove };
		struct slot sl = { .kind = SLOT_FLASHK_DEFAULT,
				   .path = (char *)"/etc/default/flash-kernel",
				   .content = (char *)text,
				   .len = len,
				   .exists = true };
		size_t elen, e2len;
		char *e = slot_edit(&sl, &d, &added, &removed, &elen);
		FUZZ_CHECK(e);
		struct slot s2 = sl;
		s2.content = e;
		s2.len = elen;
		char *e2 = slot_edit(&s2, &d, NULL, NULL, &e2len);
		FUZZ_CHECK(fuzz_same(e2, e2len, e, elen));
		free(e2);
		if (!problem) {
			char *old = flashk_default_cmdline(&sl);
			char *val = flashk_default_cmdline(&s2);
			FUZZ_CHECK(old && val);
			FUZZ_CHECK(has_all(val, &add));
			char *refused = cmdline_edit_refused(old, strlen(old), &remove);
			if (!refused)
				FUZZ_CHECK(has_none(val, &remove));
			free(refused);
			size_t ulen;
			char *u = flashk_default_undo(e, elen, text, len, &added, &removed, &ulen);
			struct slot s3 = sl;
			s3.content = u;
			s3.len = ulen;
			char *back = flashk_default_cmdline(&s3);
			FUZZ_CHECK(back && has_none(back, &added));
			free(back);
			free(u);
			free(old);
			free(val);
		}
		free(e);

		d.keep = true;
		e = slot_edit(&sl, &d, NULL, NULL, &elen);
		FUZZ_CHECK(fuzz_same(e, elen, text, len));
		free(e);
		strv_free(&add);
		strv_free(&remove);
		strv_free(&added);
		strv_free(&removed);
	}
	free(problem);
}

static bool one_line(void *data, const struct menu_line *m)
{
	unsigned *n = data;
	(*n)++;
	FUZZ_CHECK(m->cmdline && !strchr(m->cmdline, '\n'));
	FUZZ_CHECK(m->text && m->text_len <= MAX_INPUT_FILE);
	return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = xstrndup((const char *)data, size);
	size_t len = strlen(text);
	check_default(text, len);
	unsigned n = 0;
	boot_script_menu_lines((const char *)data, size, one_line, &n);
	FUZZ_CHECK(n <= 1);
	free(text);
	return 0;
}
