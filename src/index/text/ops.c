/*
 * The full-text index's operations (version/index.h): a commit collects the
 * postings of its Record Versions and writes them as one segment of their
 * own (on a thread of its own for a large commit); schema changes rebuild
 * it; the maintenance thread merges segments and drops a deleted branch's.
 */
#include "base/alloc.h"
#include "base/err.h"
#include "index/text/text.h"

/* Record Versions a commit needs for its postings to be collected on a thread of their own. */
#define TEXT_THREAD_MIN 512

struct text_commit {
	textw w;
	int on;		/* w is initialised (at the first put) */
	int have_seg;	/* seg was read at begin (an asynchronous commit) */
	uint32_t seg;
};

static int text_begin(index_commit *ic)
{
	struct text_commit *t = cr_calloc(1, sizeof(*t));

	if (!t)
		return err_set(CAIRN_ENOMEM, "out of memory");
	ic->state = t;
	/* The thread never touches the transaction: the segment's id is read first. */
	if (ic->async) {
		t->have_seg = 1;
		return text_segment_next(ic->d->txn, ic->d->st, ic->d->dom, &t->seg);
	}
	return 0;
}

static int text_put(index_commit *ic, const index_rec *r)
{
	struct text_commit *t = ic->state;
	uint32_t dt, dv;
	int rc;

	if (!t->on) {
		if ((rc = textw_init(&t->w, ic->d->s)))
			return rc;
		t->on = 1;
	}
	return textw_doc(&t->w, r->k, r->vid, r->v->title, r->v->title_len, r->values, &dt, &dv);
}

/* Encode the segment where the postings were collected (the thread's last step). */
static int text_prepare(index_commit *ic)
{
	struct text_commit *t = ic->state;

	if (!t->on || !t->have_seg)
		return 0;
	return textw_prepare(&t->w, ic->d->dom, t->seg, ic->d->br.id);
}

/* The commit's postings segment, if it has Record Versions: already in key order. */
static int text_finish(index_commit *ic)
{
	struct text_commit *t = ic->state;
	int rc;

	if (!t->on || textw_empty(&t->w))
		return 0;
	if (!t->have_seg && (rc = text_segment_next(ic->d->txn, ic->d->st, ic->d->dom, &t->seg)))
		return rc;
	if (t->seg % TEXT_MERGE_MIN == 0) /* now and then, segments to merge (in the background) */
		store_wake(ic->d->st);
	return textw_flush(&t->w, ic->d->txn, ic->d->st, ic->d->dom, t->seg, ic->d->br.id);
}

static void text_release(index_commit *ic)
{
	struct text_commit *t = ic->state;

	if (!t)
		return;
	if (t->on)
		textw_release(&t->w);
	cr_free(t);
	ic->state = NULL;
}

const index_ops text_index = {
	.name = "text",
	.async_min = TEXT_THREAD_MIN,
	.begin = text_begin,
	.put = text_put,
	.prepare = text_prepare,
	.finish = text_finish,
	.release = text_release,
	.delta_all = DELTA_SEARCH,
	.format = 7,
	.rebuild = text_rebuild,
	.check = text_check,
	.drop_branch = text_drop_branch,
	.maintain = text_merge_step,
};
