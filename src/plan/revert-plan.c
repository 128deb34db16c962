/* plan/revert-plan.c - revert's plan from the journal's records, see plan/revert.h. */
#include "plan/revert.h"
#include "lib/diag.h"

static struct revert_item *item_new(struct revert_plan *p, const char *path, enum slot_kind k)
{
	p->v = xrealloc(p->v, (p->n + 1) * sizeof(*p->v));
	struct revert_item *it = &p->v[p->n++];
	*it = (struct revert_item){ .path = xstrdup(path), .kind = k };
	if (slot_kind_feeds_menu(k))
		p->feeds_menu = true;
	return it;
}

void revert_plan_record(struct revert_plan *p, const struct root *r, const struct journal_entry *e, const char *text,
			size_t len)
{
	strv_pushdup(&p->ended, e->path);
	enum slot_kind k;
	if (!text || !slot_kind_of_path(e->path, &k))
		return;
	struct slot_undo u;
	slot_undo(k, e, text, len, &u);
	if (u.why) {
		_cleanup_free_ char *d = root_display(r, e->path);
		diag_warn("%s: %s: nothing to revert there", d, u.why);
	}
	if (u.action == UNDO_NOTHING) {
		slot_undo_free(&u);
		return;
	}
	struct revert_item *it = item_new(p, e->path, k);
	it->u = u;
	strv_pushdup_all(&it->put_back, &e->removed);
	strv_pushdup_all(&it->taken, &e->added);
}

/* for plan/revert-copies.c: an entry's item (content taken) */
void revert_plan_copy_item(struct revert_plan *p, const struct slot *s, char *content, size_t len,
			   struct strv *put_back, struct strv *taken)
{
	struct revert_item *it = item_new(p, s->path, s->kind);
	it->u = (struct slot_undo){ .action = UNDO_WRITE,
				    .content = content,
				    .len = len,
				    .cur = xstrndup(s->content, s->len),
				    .cur_len = s->len };
	it->put_back = *put_back;
	it->taken = *taken;
	it->copy = true;
}

void revert_plan_free(struct revert_plan *p)
{
	for (size_t i = 0; i < p->n; i++) {
		free(p->v[i].path);
		slot_undo_free(&p->v[i].u);
		strv_free(&p->v[i].put_back);
		strv_free(&p->v[i].taken);
	}
	free(p->v);
	strv_free(&p->ended);
	*p = (struct revert_plan){ 0 };
}
