/*
 * The full-text index's operations (version/index.h): a commit collects the
 * postings of its Record Versions and writes them as one segment of their
 * own (on a thread of its own for a large commit); schema changes rebuild
 * it; the maintenance thread merges segments and drops a deleted branch's.
 */
#include <string.h>

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

/* ------------------------------------------------------------ compaction -- */

/* The segments rewritten, so that a walk does each once. */
typedef struct segdone {
	uint32_t *ids;
	size_t n, cap;
} segdone;

static int seg_is_done(const segdone *d, uint32_t id)
{
	for (size_t i = 0; i < d->n; i++)
		if (d->ids[i] == id)
			return 1;
	return 0;
}

static int any_dead(const index_compact *c, uint64_t lo, uint64_t hi)
{
	if (hi >= c->nbits)
		hi = c->nbits ? c->nbits - 1 : 0;
	for (uint64_t v = lo; v <= hi && v < c->nbits; v++) {
		if (!(v & 7) && v + 8 <= hi + 1 && !c->dead[v >> 3]) {
			v += 7;
			continue;
		}
		if ((c->dead[v >> 3] >> (v & 7)) & 1)
			return 1;
	}
	return 0;
}

/*
 * Compaction: rewrite segments that hold postings of unreachable Versions,
 * up to the step's budget of postings (at least one segment), if any is left.
 */
static int text_compact(index_compact *c)
{
	segdone *sd = *c->state;
	tseg *segs;
	size_t n;
	uint64_t looked = 0;
	int rc;

	if (!sd && !(sd = *c->state = cr_calloc(1, sizeof(*sd))))
		return err_set(CAIRN_ENOMEM, "out of memory");
	if ((rc = text_segments(c->txn, c->st, c->dom, &segs, &n)))
		return rc;
	*c->done = 1;
	for (size_t i = 0; i < n && !rc; i++) {
		tdrop drop;
		if (seg_is_done(sd, segs[i].id) || !any_dead(c, segs[i].min_vid, segs[i].max_vid))
			continue;
		memset(&drop, 0, sizeof(drop));
		drop.bits = c->dead;
		drop.nbits = c->nbits;
		if ((rc = text_compact_segment(c->txn, c->st, c->dom, &segs[i], &drop)))
			break;
		if (sd->n == sd->cap) {
			size_t cap = sd->cap ? sd->cap * 2 : 16;
			uint32_t *ids = cr_reallocarray(sd->ids, cap, sizeof(*ids));

			if (!ids) {
				rc = err_set(CAIRN_ENOMEM, "out of memory");
				break;
			}
			sd->ids = ids;
			sd->cap = cap;
		}
		if (!drop.postings) {
			/*
			 * Nothing of it was unreachable (a segment another compaction
			 * wrote): the step is thrown away, so that two compactions never
			 * rewrite each other's segments in turn, and it stays as it is.
			 */
			sd->ids[sd->n++] = segs[i].id;
			*c->discard = 1;
			*c->done = 0;
			break;
		}
		/* The rewrite's id is done; a dry run writes nothing: the segment is. */
		sd->ids[sd->n++] = c->dry ? segs[i].id : drop.seg;
		c->res->postings += drop.postings;
		c->res->segments++;
		if ((looked += segs[i].postings) >= c->budget) {
			*c->done = 0; /* more in the next transaction */
			break;
		}
	}
	cr_free(segs);
	return rc;
}


/* Does any segment of the Domain hold the term (tag and word)? */
static int term_anywhere(MDB_cursor *cur, uint32_t dom, const tseg *segs, size_t n,
			 const char *term, size_t len, int *found)
{
	*found = 0;
	for (size_t i = 0; i < n && !*found; i++) {
		MDB_val k, v;
		kbuf p;
		int mrc;

		key_tterm(&p, dom, segs[i].id, term, len);
		k.mv_data = p.b;
		k.mv_size = p.n;
		mrc = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE);
		if (mrc && mrc != MDB_NOTFOUND)
			return store_err(mrc, "postings");
		*found = mrc == 0 && k.mv_size == p.n + 4 && memcmp(k.mv_data, p.b, p.n) == 0;
	}
	return 0;
}

/*
 * Erasure: the words of letters of Version v that no segment holds any more
 * (the compaction pass removed v's postings) leave the lexicon, so that
 * typo correction neither suggests them nor keeps their bytes.
 */
static int text_forget(dctx *d, const kind_def *k, const vrec *v, const jv *values, uint64_t vid,
		       uint64_t *removed)
{
	MDB_cursor *cur = NULL;
	tseg *segs = NULL;
	size_t n = 0;
	uint32_t dt, dv;
	textw w;
	int rc, mrc;

	if (!k || (rc = textw_init(&w, d->s)))
		return k ? rc : 0;
	if ((rc = textw_doc(&w, k, vid, v->title, v->title_len, values, &dt, &dv)) ||
	    (rc = text_segments(d->txn, d->st, d->dom, &segs, &n)))
		goto out;
	if ((mrc = mdb_cursor_open(d->txn, d->st->dbi[DB_POSTINGS], &cur))) {
		rc = store_err(mrc, "postings");
		goto out;
	}
	for (size_t i = 0; i < w.n_terms && !rc; i++) {
		const struct tterm *t = &w.t[i];
		const char *term = (const char *)w.bytes.p + t->off;
		int found;
		kbuf lk;

		if (!t->lex || (rc = term_anywhere(cur, d->dom, segs, n, term, t->len, &found)) ||
		    found)
			continue;
		key_lexicon(&lk, d->dom, term + 1, t->len - 1);
		rc = db_del(d->txn, d->st, DB_LEXICON, lk.b, lk.n);
		if (rc == CAIRN_ENOTFOUND)
			rc = 0;
		else if (!rc)
			++*removed;
	}
out:
	if (cur)
		mdb_cursor_close(cur);
	cr_free(segs);
	textw_release(&w);
	return rc;
}

static void text_compact_release(void *state)
{
	segdone *sd = state;

	cr_free(sd->ids);
	cr_free(sd);
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
	.compact = text_compact,
	.compact_release = text_compact_release,
	.forget = text_forget,
	.drop_branch = text_drop_branch,
	.maintain = text_merge_step,
};
