/* commit/commit.c - the one commit, see commit/commit.h. */
#include "commit/commit.h"
#include "slots/grub/grub.h"
#include "facts/journal.h"
#include "slots/table.h"

int commit_changes(const struct root *r, const struct file_change *changes, size_t n, const char *journal_text,
		   size_t journal_len, enum txn_order when)
{
	struct txn t;
	txn_init(&t, r);
	txn_add_record(&t, JOURNAL_PATH, journal_text, journal_len, when);
	int e = 0;
	for (size_t i = 0; i < n && e >= 0; i++) {
		const struct file_change *c = &changes[i];
		if (!c->data) {
			txn_delete(&t, c->path);
			continue;
		}
		switch (slot_kind_writes(c->kind)) {
		case SLOT_WRITES_FILE: txn_add(&t, c->path, c->data, c->len, c->mode ? c->mode : 0644); break;
		case SLOT_WRITES_KERNELOPTS: {
			size_t blen;
			_cleanup_free_ char *block = grub_kernelopts_block(r, c->path, c->data, &blen, &e);
			if (block)
				txn_add(&t, c->path, block, blen, 0644);
			break;
		}
		case SLOT_WRITES_NOTHING: break;
		}
	}
	if (e >= 0)
		e = txn_commit(&t);
	txn_free(&t);
	return e;
}
