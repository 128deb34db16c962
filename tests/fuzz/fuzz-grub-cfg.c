/* fuzz-grub-cfg.c - the generated GRUB menu reader (src/slot-grub.c,
 * through slots/grub/grub.h): grub_cfg_state, which reads every linux line of the
 * menu's linux sections and checks it against the decision of its kernel,
 * and slot_cmdline (the first kernel command line), and
 * grub_release_from_path. Properties: the state is in-sync or drift; a
 * drift has a note that names the line; a menu in sync for a decision has
 * that decision's tokens on its first command line; a keep decision is
 * always in sync. */
#include "fuzz.h"
#include "decisions.h"

#include "lib/cmdline.h"
#include "slots/grub/grub.h"
#include "slots/table.h"

struct lookup {
	struct decision d;
	unsigned calls;
};

static const struct decision *lookup(void *data, const char *release, const struct kernel_decision **own)
{
	struct lookup *l = data;
	*own = NULL;
	l->calls++;
	if (release) {
		char *r = grub_release_from_path(release);
		free(r);
	}
	return &l->d;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = xstrndup((const char *)data, size);
	size_t len = strlen(text); /* a menu is read as text; NUL ends it here */
	struct slot s = { .kind = SLOT_GRUB_CFG, .content = text, .len = len, .exists = true };
	char *first = slot_cmdline(&s);

	for (size_t i = 0; i < ARRAY_SIZE(fuzz_decisions); i++) {
		struct lookup l = { 0 };
		fuzz_decision_strv(&fuzz_decisions[i], &l.d.add, &l.d.remove);
		s.note = NULL;
		enum slot_state st = grub_cfg_state(&s, lookup, &l, &s.note);
		FUZZ_CHECK(st == SLOT_IN_SYNC || st == SLOT_DRIFT);
		if (st == SLOT_DRIFT)
			FUZZ_CHECK(s.note && strncmp(s.note, "line ", 5) == 0);
		if (st == SLOT_IN_SYNC && first) {
			struct cmdline c;
			cmdline_split(first, strlen(first), &c);
			for (size_t k = 0; k < l.d.add.n; k++)
				FUZZ_CHECK(cmdline_has_arg(&c, l.d.add.v[k]));
			cmdline_free(&c);
		}
		free(s.note);
		s.note = NULL;

		l.d.keep = true;
		FUZZ_CHECK(grub_cfg_state(&s, lookup, &l, &s.note) == SLOT_IN_SYNC);
		free(s.note);
		s.note = NULL;
		strv_free(&l.d.add);
		strv_free(&l.d.remove);
	}
	free(first);
	free(text);
	return 0;
}
