/* The full-text index: collecting postings, segments, containers (text.h). */
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/arena.h"
#include "base/assert.h"
#include "base/err.h"
#include "base/text.h"
#include "index/text/text.h"

int textw_init(textw *w, const schema *s)
{
	memset(w, 0, sizeof(*w));
	w->s = s;
	if (strcmp(s->search.language, "none") != 0 && !(w->stem = stemmer_new(s->search.language)))
		return err_set(CAIRN_ENOMEM, "no stemmer for \"%s\"", s->search.language);
	return 0;
}

void textw_release(textw *w)
{
	stemmer_free(w->stem);
	hmap_release(&w->terms);
	cr_free(w->t);
	buf_release(&w->bytes);
	cr_free(w->p);
	cr_free(w->doc_terms);
	cr_free(w->dpos);
	buf_release(&w->posb);
	buf_release(&w->prep);
	cr_free(w->order);
	memset(w, 0, sizeof(*w));
}

/* ------------------------------------------------------------ analysis -- */

struct dctx_text {
	textw *w;
	uint64_t vid;
	uint32_t weight;	/* tenths, for values; 0 while in the title */
	uint32_t words;		/* word positions seen in the field */
};

/* Count one occurrence of term t in the document being added. */
static int term_count(struct dctx_text *x, uint32_t ti)
{
	textw *w = x->w;
	struct tterm *t = &w->t[ti];

	if (t->doc != x->vid + 1) { /* first in this document */
		if (w->n_doc_terms == w->cap_doc_terms) {
			size_t cap = w->cap_doc_terms ? w->cap_doc_terms * 2 : 64;
			uint32_t *nd = cr_reallocarray(w->doc_terms, cap, sizeof(*nd));

			if (!nd)
				return err_set(CAIRN_ENOMEM, "out of memory");
			w->doc_terms = nd;
			w->cap_doc_terms = cap;
		}
		w->doc_terms[w->n_doc_terms++] = ti;
		t->doc = x->vid + 1;
		t->doc_tf_title = t->doc_tf_values = 0;
		t->doc_pos_head = t->doc_pos_tail = 0;
	}
	if (x->weight)
		t->doc_tf_values += x->weight;
	else
		t->doc_tf_title++;
	return 0;
}

/* The index of term (tag, s), added when new. */
static int term_find(textw *w, char tag, const char *s, size_t n, uint32_t *ti)
{
	char key[TEXT_TERM_MAX];
	uint64_t *slot;
	int isnew;

	if (n > TOKEN_CAP)
		n = TOKEN_CAP;
	key[0] = tag;
	memcpy(key + 1, s, n);
	if (!(slot = hmap_put(&w->terms, key, n + 1, &isnew)))
		return err_set(CAIRN_ENOMEM, "out of memory");
	if (isnew) {
		struct tterm *t;

		if (w->n_terms == w->cap_terms) {
			size_t cap = w->cap_terms ? w->cap_terms * 2 : 256;
			struct tterm *nt = cr_reallocarray(w->t, cap, sizeof(*nt));

			if (!nt)
				return err_set(CAIRN_ENOMEM, "out of memory");
			w->t = nt;
			w->cap_terms = cap;
		}
		t = &w->t[w->n_terms];
		memset(t, 0, sizeof(*t));
		t->off = (uint32_t)w->bytes.len;
		t->len = (uint32_t)(n + 1);
		buf_put(&w->bytes, key, n + 1);
		if (w->bytes.oom)
			return err_set(CAIRN_ENOMEM, "out of memory");
		*slot = ++w->n_terms;
	}
	*ti = (uint32_t)(*slot - 1);
	return 0;
}

/* One more position of word term ti in the document being added. */
static int term_pos(textw *w, uint32_t ti, uint32_t pos)
{
	struct tterm *t = &w->t[ti];

	if (w->n_dpos == w->cap_dpos) {
		size_t cap = w->cap_dpos ? w->cap_dpos * 2 : 256;
		struct dpos *nd = cr_reallocarray(w->dpos, cap, sizeof(*nd));

		if (!nd || cap > UINT32_MAX)
			return err_set(CAIRN_ENOMEM, "out of memory");
		w->dpos = nd;
		w->cap_dpos = cap;
	}
	w->dpos[w->n_dpos].pos = pos;
	w->dpos[w->n_dpos].next = 0;
	if (t->doc_pos_tail)
		w->dpos[t->doc_pos_tail - 1].next = (uint32_t)w->n_dpos + 1;
	else
		t->doc_pos_head = (uint32_t)w->n_dpos + 1;
	t->doc_pos_tail = (uint32_t)++w->n_dpos;
	return 0;
}

static int on_token(void *ctx, const token *t)
{
	struct dctx_text *x = ctx;
	textw *w = x->w;
	uint32_t ti;
	int rc;

	if (t->kind != TK_WHOLE)
		x->words++;
	if ((rc = term_find(w, TERM_WORD, t->s, t->len, &ti)) || (rc = term_count(x, ti)) ||
	    (rc = term_pos(w, ti, t->pos)))
		return rc;
	if (t->kind != TK_WORD || t->digits)
		return 0;
	w->t[ti].lex = 1;
	if (!w->stem)
		return 0;
	if (!w->t[ti].stem_done) { /* a word's stem, once per segment */
		const char *st;
		size_t sn = stem(w->stem, t->s, t->len, &st);
		uint32_t si;

		w->t[ti].stem_done = 1;
		if (sn) {
			if ((rc = term_find(w, TERM_STEM, st, sn, &si)))
				return rc;
			w->t[ti].stem = si + 1;
		}
	}
	return w->t[ti].stem ? term_count(x, w->t[ti].stem - 1) : 0;
}

/* Analyze the title and the searchable values of a document. */
static int analyze_doc(struct dctx_text *x, const kind_def *k, const char *title, size_t title_len,
		       const jv *values, uint32_t *dl_title, uint32_t *dl_values)
{
	uint32_t pos = 0;
	int rc;

	x->weight = 0;
	x->words = 0;
	if ((rc = analyze(title, title_len, &pos, on_token, x)))
		return rc;
	*dl_title = x->words;
	x->words = 0;
	for (size_t i = 0; values && i < k->n_attrs; i++) {
		const attr_def *a = &k->attrs[i];
		const jv *v = a->search > 0 ? jv_get(values, a->name) : NULL;
		size_t m = jv_is(v, JV_ARRAY) ? v->len : 1;

		x->weight = (uint32_t)(a->search * 10 + 0.5);
		for (size_t j = 0; v && j < m; j++) {
			const jv *e = jv_is(v, JV_ARRAY) ? &v->u.items[j] : v;

			if (e->type != JV_STRING)
				continue;
			pos += TEXT_FIELD_GAP;
			if ((rc = analyze(e->u.s, e->len, &pos, on_token, x)))
				return rc;
		}
	}
	*dl_values = x->words;
	return 0;
}

/* A new posting at the end of w->p (NULL, the error set, when there is no room). */
static tpost *post_new(textw *w)
{
	if (w->n_p >= UINT32_MAX - 1) {
		err_set(CAIRN_ELIMIT, "too many words in one commit");
		return NULL;
	}
	if (w->n_p == w->cap_p) {
		size_t cap = w->cap_p ? w->cap_p * 2 : 1024;
		tpost *np = cr_reallocarray(w->p, cap, sizeof(*np));

		if (!np) {
			err_set(CAIRN_ENOMEM, "out of memory");
			return NULL;
		}
		w->p = np;
		w->cap_p = cap;
	}
	return &w->p[w->n_p++];
}

int textw_doc(textw *w, const kind_def *k, uint64_t vid, const char *title, size_t title_len,
	      const jv *values, uint32_t *dl_title, uint32_t *dl_values)
{
	struct dctx_text x = {w, vid, 0, 0};
	int rc;

	CR_ASSERT(!w->docs || vid > w->last_vid); /* postings are appended in vid order */
	w->last_vid = vid;
	w->n_doc_terms = 0;
	w->n_dpos = 0;
	if ((rc = analyze_doc(&x, k, title, title_len, values, dl_title, dl_values)))
		return rc;
	w->docs++;
	w->sum_title += *dl_title;
	w->sum_values += *dl_values;
	for (size_t i = 0; i < w->n_doc_terms; i++) {
		struct tterm *t = &w->t[w->doc_terms[i]];
		tpost *p;

		if (!(p = post_new(w)))
			return err_code();
		p->vid = vid;
		p->term = w->doc_terms[i];
		p->kind = k->id;
		p->tf_title = t->doc_tf_title;
		p->tf_values = t->doc_tf_values;
		p->dl_title = *dl_title;
		p->dl_values = *dl_values;
		p->pos_off = p->pos_len = 0;
		if (t->doc_pos_head) { /* a word as written: its positions, ascending */
			uint32_t last = 0;

			if (w->posb.len > UINT32_MAX - 4096)
				return err_set(CAIRN_ELIMIT, "too many words in one commit");
			p->pos_off = (uint32_t)w->posb.len;
			for (uint32_t d = t->doc_pos_head; d; d = w->dpos[d - 1].next) {
				buf_put_varint(&w->posb, w->dpos[d - 1].pos - last);
				last = w->dpos[d - 1].pos;
			}
			if (w->posb.oom)
				return err_set(CAIRN_ENOMEM, "out of memory");
			p->pos_len = (uint32_t)(w->posb.len - p->pos_off);
		}
		t->count++;
	}
	return 0;
}

/* ------------------------------------------------------------- writing -- */

void key_tseg(kbuf *k, uint32_t dom, uint32_t seg)
{
	kb_init(k);
	kb_be32(k, dom);
	kb_be32(k, 0);
	kb_be32(k, seg);
}

void key_tterm(kbuf *k, uint32_t dom, uint32_t seg, const char *term, size_t len)
{
	kb_init(k);
	kb_be32(k, dom);
	kb_be32(k, seg);
	kb_bytes(k, term, len);
	kb_u8(k, 0);
}

static int term_cmp(const void *x, const void *y, void *ctx)
{
	const textw *w = ctx;
	const struct tterm *a = &w->t[*(const uint32_t *)x], *b = &w->t[*(const uint32_t *)y];
	size_t n = a->len < b->len ? a->len : b->len;
	int r = memcmp(w->bytes.p + a->off, w->bytes.p + b->off, n);

	return r ? r : (a->len > b->len) - (a->len < b->len);
}

/*
 * Encode the postings first.. (those of the same vid >> 16) of a term into
 * out; returns the posting after them (+ 1, 0 at the end).
 *
 *   varint n, u8 repr (bit 0: a bitset of the 65,536 vids, else vids per
 *   block; bit 1: the postings carry positions)
 *   [bit 0: the bitset, 8 KiB]
 *   per block of TEXT_BLOCK postings:
 *     varint first, last (vid & 0xffff), max tf_title, max tf_values,
 *     min dl_title, min dl_values
 *     [no bitset: each posting's vid & 0xffff, 2 bytes little-endian]
 *     varint bytes, the offsets in those bytes of postings 16, 32, ... (4
 *     bytes big-endian each), then per posting varints kind, tf_title,
 *     tf_values, dl_title, dl_values, and with positions (bit 1: the
 *     postings of a word as written) a varint byte count and the word's
 *     positions in the Record, ascending, as varint deltas from 0
 *
 * pos: the bytes tpost.pos_off names, or NULL for a term without positions.
 */
static size_t encode_container(const tpost *p, size_t n_run, const uint8_t *pos, buf *out,
			       uint32_t *count)
{
	uint64_t hi = p[0].vid >> TEXT_CONTAINER_BITS;
	size_t n = 0;
	buf pay = BUF_INIT, vids = BUF_INIT, skips = BUF_INIT;
	int bitset;

	while (n < n_run && (p[n].vid >> TEXT_CONTAINER_BITS) == hi)
		n++;
	bitset = n >= TEXT_BITSET_MIN;
	buf_put_varint(out, n);
	buf_put_u8(out, (uint8_t)(bitset | (pos ? 2 : 0)));
	if (bitset) {
		uint8_t *bits = cr_calloc(1, TEXT_BITSET_BYTES);

		if (!bits) {
			out->oom = 1;
			return n;
		}
		for (size_t i = 0; i < n; i++) {
			unsigned lo = (unsigned)(p[i].vid & 0xffff);

			bits[lo >> 3] |= (uint8_t)(1u << (lo & 7));
		}
		buf_put(out, bits, TEXT_BITSET_BYTES);
		cr_free(bits);
	}
	for (size_t i = 0; i < n;) {
		uint32_t mt = 0, mv = 0, lt = UINT32_MAX, lv = UINT32_MAX, j = 0;
		uint64_t lo0 = p[i].vid & 0xffff, last = lo0;

		buf_reset(&pay);
		buf_reset(&vids);
		buf_reset(&skips);
		for (; i < n && j < TEXT_BLOCK; i++, j++) {
			const tpost *q = &p[i];
			uint64_t lo = q->vid & 0xffff;
			uint8_t le[2] = {(uint8_t)lo, (uint8_t)(lo >> 8)};

			buf_put(&vids, le, 2);
			if (j && j % TEXT_SKIP == 0) {
				uint8_t off[4];

				be32_put(off, (uint32_t)pay.len);
				buf_put(&skips, off, 4);
			}
			last = lo;
			mt = q->tf_title > mt ? q->tf_title : mt;
			mv = q->tf_values > mv ? q->tf_values : mv;
			lt = q->dl_title < lt ? q->dl_title : lt;
			lv = q->dl_values < lv ? q->dl_values : lv;
			buf_put_varint(&pay, q->kind);
			buf_put_varint(&pay, q->tf_title);
			buf_put_varint(&pay, q->tf_values);
			buf_put_varint(&pay, q->dl_title);
			buf_put_varint(&pay, q->dl_values);
			if (pos) {
				buf_put_varint(&pay, q->pos_len);
				buf_put(&pay, pos + q->pos_off, q->pos_len);
			}
		}
		buf_put_varint(out, lo0);
		buf_put_varint(out, last);
		buf_put_varint(out, mt);
		buf_put_varint(out, mv);
		buf_put_varint(out, lt);
		buf_put_varint(out, lv);
		if (!bitset)
			buf_put(out, vids.p, vids.len);
		buf_put_varint(out, pay.len);
		buf_put(out, skips.p, skips.len);
		buf_put(out, pay.p, pay.len);
	}
	out->oom |= pay.oom | vids.oom | skips.oom;
	buf_release(&skips);
	buf_release(&pay);
	buf_release(&vids);
	*count = (uint32_t)n;
	return n;
}

void key_lexicon(kbuf *k, uint32_t dom, const char *word, size_t len)
{
	kb_init(k);
	kb_be32(k, dom);
	if (len) {
		kb_bytes(k, word, len);
		kb_u8(k, 0);
	}
}

/* Put the segment's words of letters the lexicon lacks (in word order). */
static int lexicon_add(textw *w, MDB_txn *txn, cairn_store *st, uint32_t dom,
		       const uint32_t *order)
{
	int rc = 0;

	for (size_t i = 0; i < w->n_terms && !rc; i++) {
		const struct tterm *t = &w->t[order[i]];
		MDB_val v;
		kbuf k;

		if (!t->lex)
			continue;
		key_lexicon(&k, dom, (const char *)w->bytes.p + t->off + 1, t->len - 1);
		if ((rc = db_get(txn, st, DB_LEXICON, k.b, k.n, &v)) == CAIRN_ENOTFOUND)
			rc = db_put(txn, st, DB_LEXICON, k.b, k.n, "", 0, 0);
	}
	return rc;
}

int textw_prepare(textw *w, uint32_t dom, uint32_t seg, uint32_t branch)
{
	size_t *start = NULL;
	tpost *sorted = NULL;
	uint64_t containers = 0, postings = 0, min_vid = UINT64_MAX, max_vid = 0;
	buf val = BUF_INIT;
	kbuf k;
	int rc = 0;

	w->prepared = 1;
	w->seg = seg;
	buf_reset(&w->prep);
	if (!w->docs)
		return 0;
	cr_free(w->order);
	if (w->n_terms && !(w->order = cr_reallocarray(NULL, w->n_terms, sizeof(*w->order))))
		return err_set(CAIRN_ENOMEM, "out of memory");
	for (size_t i = 0; i < w->n_terms; i++)
		w->order[i] = (uint32_t)i;
	if (w->n_terms)
		qsort_r(w->order, w->n_terms, sizeof(*w->order), term_cmp, w);
	/* The postings grouped by term, in term order (each term's in vid order). */
	if (w->n_p && !(sorted = cr_reallocarray(NULL, w->n_p, sizeof(*sorted))))
		rc = err_set(CAIRN_ENOMEM, "out of memory");
	if (!rc && w->n_terms && !(start = cr_reallocarray(NULL, w->n_terms, sizeof(*start))))
		rc = err_set(CAIRN_ENOMEM, "out of memory");
	for (size_t i = 0, at = 0; !rc && i < w->n_terms; i++) {
		start[w->order[i]] = at;
		at += w->t[w->order[i]].count;
	}
	for (size_t i = 0; !rc && i < w->n_p; i++)
		sorted[start[w->p[i].term]++] = w->p[i];
	/* Each container as a key and a value: u16 key length, key, u32 value length, value. */
	for (size_t i = 0, at = 0; i < w->n_terms && !rc; i++) {
		const struct tterm *t = &w->t[w->order[i]];
		size_t end = at + t->count;

		while (at < end && !rc) {
			uint64_t hi = sorted[at].vid >> TEXT_CONTAINER_BITS;
			uint32_t n;
			uint8_t len[4];

			if (sorted[at].vid < min_vid)
				min_vid = sorted[at].vid;
			buf_reset(&val);
			at += encode_container(sorted + at, end - at,
					       w->bytes.p[t->off] == TERM_WORD ? w->posb.p : NULL,
					       &val, &n);
			key_tterm(&k, dom, seg, (const char *)w->bytes.p + t->off, t->len);
			kb_be32(&k, (uint32_t)hi);
			if (val.oom || val.len > UINT32_MAX) {
				rc = err_set(CAIRN_ENOMEM, "out of memory");
				break;
			}
			if (k.over) {
				rc = err_set(CAIRN_ELIMIT, "postings key too long");
				break;
			}
			len[0] = (uint8_t)(k.n >> 8);
			len[1] = (uint8_t)k.n;
			buf_put(&w->prep, len, 2);
			buf_put(&w->prep, k.b, k.n);
			be32_put(len, (uint32_t)val.len);
			buf_put(&w->prep, len, 4);
			buf_put(&w->prep, val.p, val.len);
			containers++;
			postings += n;
		}
		if (t->count && sorted[end - 1].vid > max_vid)
			max_vid = sorted[end - 1].vid;
	}
	if (!rc && w->prep.oom)
		rc = err_set(CAIRN_ENOMEM, "out of memory");
	be64_put(w->desc, containers);
	be64_put(w->desc + 8, postings);
	be64_put(w->desc + 16, min_vid == UINT64_MAX ? 0 : min_vid);
	be64_put(w->desc + 24, max_vid);
	be64_put(w->desc + 32, w->docs);
	be64_put(w->desc + 40, w->sum_title);
	be64_put(w->desc + 48, w->sum_values);
	be32_put(w->desc + 56, branch);
	cr_free(start);
	cr_free(sorted);
	buf_release(&val);
	return rc;
}

int textw_flush(textw *w, MDB_txn *txn, cairn_store *st, uint32_t dom, uint32_t seg,
		uint32_t branch)
{
	kbuf k;
	int rc = 0;

	if (!w->docs)
		return 0;
	if (!w->prepared || w->seg != seg)
		rc = textw_prepare(w, dom, seg, branch);
	for (size_t at = 0; !rc && at < w->prep.len;) {
		const uint8_t *p = w->prep.p + at;
		size_t kn = (size_t)p[0] << 8 | p[1], vn = be32_get(p + 2 + kn);

		rc = db_put(txn, st, DB_POSTINGS, p + 2, kn, p + 6 + kn, vn, 0);
		at += 6 + kn + vn;
	}
	if (!rc) {
		key_tseg(&k, dom, seg);
		rc = db_put(txn, st, DB_POSTINGS, k.b, k.n, w->desc, sizeof(w->desc), 0);
	}
	if (!rc)
		rc = lexicon_add(w, txn, st, dom, w->order);
	/* Emptied for the next segment; the stemmer stays. */
	hmap_clear(&w->terms);
	w->n_terms = w->n_p = w->n_doc_terms = w->n_dpos = 0;
	w->docs = w->sum_title = w->sum_values = 0;
	w->prepared = 0;
	buf_reset(&w->bytes);
	buf_reset(&w->posb);
	buf_reset(&w->prep);
	return rc;
}

/* ------------------------------------------------------------ segments -- */

int text_segment_next(MDB_txn *txn, cairn_store *st, uint32_t dom, uint32_t *id)
{
	MDB_cursor *cur;
	MDB_val k, v;
	kbuf p;
	int mrc;

	*id = 1;
	if ((mrc = mdb_cursor_open(txn, st->dbi[DB_POSTINGS], &cur)))
		return store_err(mrc, "postings");
	kb_init(&p);
	kb_be32(&p, dom);
	kb_be32(&p, 1);
	k.mv_data = p.b;
	k.mv_size = p.n;
	mrc = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE);
	mrc = mrc == 0 ? mdb_cursor_get(cur, &k, &v, MDB_PREV)
	      : mrc == MDB_NOTFOUND ? mdb_cursor_get(cur, &k, &v, MDB_LAST)
				    : mrc;
	if (mrc == 0 && k.mv_size == 12 && memcmp(k.mv_data, p.b, 4) == 0 &&
	    be32_get((const uint8_t *)k.mv_data + 4) == 0)
		*id = be32_get((const uint8_t *)k.mv_data + 8) + 1;
	mdb_cursor_close(cur);
	return mrc && mrc != MDB_NOTFOUND ? store_err(mrc, "postings") : 0;
}

int text_segments(MDB_txn *txn, cairn_store *st, uint32_t dom, tseg **out, size_t *n)
{
	MDB_cursor *cur;
	MDB_val k, v;
	kbuf p;
	tseg *s = NULL;
	size_t cap = 0;
	int mrc, rc = 0;

	*out = NULL;
	*n = 0;
	if ((mrc = mdb_cursor_open(txn, st->dbi[DB_POSTINGS], &cur)))
		return store_err(mrc, "postings");
	kb_init(&p);
	kb_be32(&p, dom);
	kb_be32(&p, 0);
	k.mv_data = p.b;
	k.mv_size = p.n;
	for (mrc = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE); mrc == 0;
	     mrc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
		const uint8_t *kk = k.mv_data, *vv = v.mv_data;

		if (k.mv_size < 8 || memcmp(kk, p.b, 8) != 0)
			break;
		if (k.mv_size != 12 || v.mv_size != TSEG_BYTES) {
			rc = err_set(CAIRN_ECORRUPT, "postings: malformed segment descriptor");
			break;
		}
		if (*n == cap) {
			size_t nc = cap ? cap * 2 : 16;
			tseg *ns = cr_reallocarray(s, nc, sizeof(*ns));

			if (!ns) {
				rc = err_set(CAIRN_ENOMEM, "out of memory");
				break;
			}
			s = ns;
			cap = nc;
		}
		s[*n].id = be32_get(kk + 8);
		s[*n].containers = be64_get(vv);
		s[*n].postings = be64_get(vv + 8);
		s[*n].min_vid = be64_get(vv + 16);
		s[*n].max_vid = be64_get(vv + 24);
		s[*n].docs = be64_get(vv + 32);
		s[*n].sum_title = be64_get(vv + 40);
		s[*n].sum_values = be64_get(vv + 48);
		s[*n].branch = be32_get(vv + 56);
		++*n;
	}
	mdb_cursor_close(cur);
	if (!rc && mrc && mrc != MDB_NOTFOUND)
		rc = store_err(mrc, "postings");
	if (rc) {
		cr_free(s);
		*n = 0;
		return rc;
	}
	*out = s;
	return 0;
}

/* ---------------------------------------------------------- containers -- */

int tcont_decode(const void *v, size_t n, uint64_t hi, arena *a, tcont *out)
{
	rdr r;
	uint64_t cnt;
	uint32_t left;
	uint8_t repr;

	rd_init(&r, v, n);
	memset(out, 0, sizeof(*out));
	out->base = hi << TEXT_CONTAINER_BITS;
	cnt = rd_varint(&r);
	if (r.bad || cnt == 0 || cnt > (1u << TEXT_CONTAINER_BITS))
		return err_set(CAIRN_ECORRUPT, "postings: bad container");
	out->n = (uint32_t)cnt;
	out->nb = (uint32_t)((cnt + TEXT_BLOCK - 1) / TEXT_BLOCK);
	repr = rd_u8(&r);
	if (repr > 3)
		return err_set(CAIRN_ECORRUPT, "postings: bad container");
	out->positions = (repr & 2) != 0;
	if ((repr & 1) && !(out->bits = rd_bytes(&r, TEXT_BITSET_BYTES)))
		return err_set(CAIRN_ECORRUPT, "postings: bad container bitset");
	if (!(out->b = arena_alloc(a, out->nb * sizeof(*out->b))))
		return err_set(CAIRN_ENOMEM, "out of memory");
	left = out->n;
	for (uint32_t i = 0; i < out->nb; i++) {
		struct tblock *b = &out->b[i];
		uint64_t len;

		b->n = left < TEXT_BLOCK ? left : TEXT_BLOCK;
		left -= b->n;
		b->first = (uint32_t)rd_varint(&r);
		b->last = (uint32_t)rd_varint(&r);
		b->max_tf_title = (uint32_t)rd_varint(&r);
		b->max_tf_values = (uint32_t)rd_varint(&r);
		b->min_dl_title = (uint32_t)rd_varint(&r);
		b->min_dl_values = (uint32_t)rd_varint(&r);
		if (!out->bits)
			b->vids = rd_bytes(&r, 2 * (size_t)b->n);
		len = rd_varint(&r);
		b->skips = rd_bytes(&r, 4 * (size_t)((b->n - 1) / TEXT_SKIP));
		b->payload = rd_bytes(&r, len);
		b->payload_len = len;
		if (r.bad || !b->payload || (b->n > TEXT_SKIP && !b->skips) || b->first > b->last ||
		    b->last > 0xffff ||
		    (i && b->first <= out->b[i - 1].last))
			return err_set(CAIRN_ECORRUPT, "postings: bad container block");
	}
	return r.p == r.end ? 0 : err_set(CAIRN_ECORRUPT, "postings: bytes after a container");
}

int tblock_vids(const tcont *c, uint32_t bi, uint16_t *lo)
{
	const struct tblock *b = &c->b[bi];
	uint32_t j = 0;

	if (c->bits) { /* the set bits from first on, a byte at a time */
		for (uint32_t x = b->first >> 3; x <= (b->last >> 3) && j < b->n; x++) {
			unsigned byte = c->bits[x];

			if (x == b->first >> 3)
				byte &= 0xffu << (b->first & 7);
			while (byte && j < b->n) {
				lo[j++] = (uint16_t)(x * 8 + (unsigned)__builtin_ctz(byte));
				byte &= byte - 1;
			}
		}
	} else {
		for (; j < b->n; j++) {
			lo[j] = (uint16_t)(b->vids[2 * j] | b->vids[2 * j + 1] << 8);
			if (j ? lo[j] <= lo[j - 1] : lo[j] != b->first)
				break;
		}
	}
	return j == b->n && lo[j - 1] == b->last
		       ? 0
		       : err_set(CAIRN_ECORRUPT, "postings: a block's vids do not add up");
}

int tblock_read(const tcont *c, uint32_t bi, uint16_t *lo, tpay *p)
{
	int rc = tblock_vids(c, bi, lo);

	tpay_begin(c, bi, p);
	for (uint32_t j = 0; j < c->b[bi].n && !rc; j++) /* in order: no skip is taken */
		rc = tpay_upto(p, j);
	return rc;
}

void tpay_begin(const tcont *c, uint32_t bi, tpay *p)
{
	rd_init(&p->r, c->b[bi].payload, c->b[bi].payload_len);
	p->base = c->b[bi].payload;
	p->skips = c->b[bi].skips;
	p->n = c->b[bi].n;
	p->done = 0;
	p->positions = c->positions;
}

int tpay_upto(tpay *p, uint32_t j)
{
	if (j >= p->done + TEXT_SKIP && j < p->n) { /* enter at the last skip at or before j */
		uint32_t k = j / TEXT_SKIP;
		size_t off = be32_get(p->skips + 4 * (k - 1));

		if (off > (size_t)(p->r.end - p->base))
			return err_set(CAIRN_ECORRUPT, "postings: bad block skip");
		p->r.p = p->base + off;
		p->done = k * TEXT_SKIP;
	}
	for (; p->done <= j && p->done < p->n; p->done++) {
		uint32_t x = p->done;

		p->kind[x] = (uint32_t)rd_varint(&p->r);
		p->tf_title[x] = (uint32_t)rd_varint(&p->r);
		p->tf_values[x] = (uint32_t)rd_varint(&p->r);
		p->dl_title[x] = (uint32_t)rd_varint(&p->r);
		p->dl_values[x] = (uint32_t)rd_varint(&p->r);
		if (p->positions) {
			uint64_t len = rd_varint(&p->r);

			p->pos_len[x] = (uint32_t)len;
			if (len > UINT32_MAX || !(p->pos[x] = rd_bytes(&p->r, (size_t)len)))
				return err_set(CAIRN_ECORRUPT, "postings: bad block payload");
		}
	}
	if (p->r.bad || j >= p->n || (p->done == p->n && p->r.p != p->r.end))
		return err_set(CAIRN_ECORRUPT, "postings: bad block payload");
	return 0;
}

int tpos_decode(const uint8_t *p, size_t len, uint32_t *out, size_t cap, size_t *n)
{
	rdr r;
	uint64_t at = 0;

	*n = 0;
	rd_init(&r, p, len);
	while (r.p < r.end) {
		uint64_t d = rd_varint(&r);

		if (r.bad || (*n && d == 0) || (at += d) > UINT32_MAX)
			return err_set(CAIRN_ECORRUPT, "postings: bad positions");
		if (*n < cap)
			out[*n] = (uint32_t)at;
		++*n;
	}
	return *n ? 0 : err_set(CAIRN_ECORRUPT, "postings: a word without positions");
}

/* ------------------------------------------------------------- rebuild -- */

#define REBUILD_DOCS 100000 /* Versions per segment of a rebuild */

/* A rebuild's writer for one branch. */
struct bw {
	uint32_t branch;
	textw w;
};

int text_rebuild(dctx *d, const schema *s)
{
	MDB_cursor *cur = NULL;
	MDB_val k, v;
	uint8_t p[4];
	uint32_t seg = 1;
	struct bw *bw = NULL;
	size_t nbw = 0;
	int mrc, rc;

	be32_put(p, d->dom);
	if ((rc = db_del_prefix(d->txn, d->st, DB_POSTINGS, p, 4, NULL)))
		return rc;
	if ((mrc = mdb_cursor_open(d->txn, d->st->dbi[DB_VERSIONS], &cur)))
		return store_err(mrc, "versions");
	k.mv_data = p;
	k.mv_size = 4;
	for (mrc = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE); mrc == 0 && !rc;
	     mrc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
		const kind_def *kd;
		arena tmp = ARENA_INIT;
		const jv *vals;
		uint32_t dt, dv;
		vrec ver;
		size_t b;

		if (k.mv_size != 12 || memcmp(k.mv_data, p, 4) != 0)
			break;
		if (vrec_decode(v.mv_data, v.mv_size, &ver)) {
			rc = err_set(CAIRN_ECORRUPT, "a Version does not decode");
			break;
		}
		if (ver.type != V_REC || !(kd = schema_kind_id(s, ver.kr)))
			continue;
		for (b = 0; b < nbw && bw[b].branch != ver.branch; b++)
			;
		if (b == nbw) {
			struct bw *n = cr_reallocarray(bw, nbw + 1, sizeof(*bw));

			if (!n) {
				rc = err_set(CAIRN_ENOMEM, "out of memory");
				break;
			}
			bw = n;
			bw[b].branch = ver.branch;
			if ((rc = textw_init(&bw[b].w, s)))
				break;
			nbw++;
		}
		vals = jv_parse(&tmp, ver.values, ver.values_len, "stored values");
		rc = vals ? textw_doc(&bw[b].w, kd, be64_get((const uint8_t *)k.mv_data + 4),
				      ver.title, ver.title_len, vals, &dt, &dv)
			  : err_set(CAIRN_ECORRUPT, "stored values do not parse");
		arena_release(&tmp);
		if (!rc && bw[b].w.docs >= REBUILD_DOCS)
			rc = textw_flush(&bw[b].w, d->txn, d->st, d->dom, seg++, ver.branch);
	}
	mdb_cursor_close(cur);
	if (!rc && mrc && mrc != MDB_NOTFOUND)
		rc = store_err(mrc, "versions");
	for (size_t b = 0; b < nbw; b++) {
		if (!rc)
			rc = textw_flush(&bw[b].w, d->txn, d->st, d->dom, seg++, bw[b].branch);
		textw_release(&bw[b].w);
	}
	cr_free(bw);
	return rc;
}

int text_drop_branch(MDB_txn *txn, cairn_store *st, uint32_t dom, uint32_t branch)
{
	tseg *segs;
	size_t n;
	int rc = text_segments(txn, st, dom, &segs, &n);

	for (size_t i = 0; i < n && !rc; i++) {
		kbuf k;
		uint8_t p[8];

		if (segs[i].branch != branch)
			continue;
		be32_put(p, dom);
		be32_put(p + 4, segs[i].id);
		if ((rc = db_del_prefix(txn, st, DB_POSTINGS, p, 8, NULL)))
			break;
		key_tseg(&k, dom, segs[i].id);
		if ((rc = db_del(txn, st, DB_POSTINGS, k.b, k.n)) == CAIRN_ENOTFOUND)
			rc = 0;
	}
	cr_free(segs);
	return rc;
}

/* --------------------------------------------------------------- merges -- */

static int by_branch_vid(const void *x, const void *y)
{
	const tseg *a = x, *b = y;

	if (a->branch != b->branch)
		return a->branch < b->branch ? -1 : 1;
	return (a->min_vid > b->min_vid) - (a->min_vid < b->min_vid);
}

/*
 * The segments to merge next, if any: of a branch with TEXT_MERGE_MIN
 * segments or more, TEXT_MERGE_FANIN neighbours in vid order whose largest
 * is at most TEXT_MERGE_RATIO times the others together, the fewest postings
 * between them (of every branch). Small segments merge among themselves, and
 * a large one (an import's) only once enough has gathered beside it, so that
 * a merge, which holds the writer, costs at most a few times what it brings
 * together. segs is sorted by branch and vid; *n 0 when there is nothing to
 * do.
 */
static int merge_pick(tseg *segs, size_t n_segs, size_t *first, size_t *n)
{
	uint64_t best = UINT64_MAX;

	*n = 0;
	if (n_segs)
		qsort(segs, n_segs, sizeof(*segs), by_branch_vid);
	for (size_t a = 0, z; a < n_segs; a = z) {
		for (z = a; z < n_segs && segs[z].branch == segs[a].branch; z++)
			;
		for (size_t i = a; z - a >= TEXT_MERGE_MIN && i + TEXT_MERGE_FANIN <= z; i++) {
			uint64_t sum = 0, hi = 0;

			for (size_t j = i; j < i + TEXT_MERGE_FANIN; j++) {
				sum += segs[j].postings;
				hi = segs[j].postings > hi ? segs[j].postings : hi;
			}
			if (hi <= TEXT_MERGE_RATIO * (sum - hi) && sum < best) {
				best = sum;
				*first = i;
				*n = TEXT_MERGE_FANIN;
			}
		}
	}
	return 0;
}

/* One input of a merge: a cursor on a segment's containers. */
struct min {
	MDB_cursor *cur;
	MDB_val k, v;
	int more;
	size_t plen;	/* the key prefix: dom, segment */
};

/* The term of the input's current key (its bytes after the prefix, 0-terminated). */
static size_t min_term(const struct min *in, const uint8_t **t)
{
	const uint8_t *k = in->k.mv_data;

	*t = k + in->plen;
	return in->k.mv_size - in->plen - 5;
}

static int min_next(struct min *in, const uint8_t *prefix)
{
	int mrc = mdb_cursor_get(in->cur, &in->k, &in->v, MDB_NEXT);

	in->more = mrc == 0 && in->k.mv_size > in->plen + 5 &&
		   memcmp(in->k.mv_data, prefix, in->plen) == 0;
	return mrc && mrc != MDB_NOTFOUND ? store_err(mrc, "postings") : 0;
}

/* Append the postings of one container to w->p (kind, frequencies, lengths as stored), but drop's. */
static int take_container(textw *w, const void *v, size_t vn, uint64_t hi, arena *a,
			  tdrop *drop)
{
	tcont c;
	int rc;

	if ((rc = tcont_decode(v, vn, hi, a, &c)))
		return rc;
	for (uint32_t b = 0; b < c.nb; b++) {
		uint16_t lo[TEXT_BLOCK];
		tpay pay;

		if ((rc = tblock_read(&c, b, lo, &pay)))
			return rc;
		for (uint32_t j = 0; j < c.b[b].n; j++) {
			uint64_t vid = c.base + lo[j];
			tpost *p;

			if (drop && vid < drop->nbits && (drop->bits[vid >> 3] >> (vid & 7)) & 1) {
				uint64_t at = vid - drop->seen_base;

				/* Its document's share of the segment's totals, once. */
				if (at < drop->seen_bits && !((drop->seen[at >> 3] >> (at & 7)) & 1)) {
					drop->seen[at >> 3] |= (uint8_t)(1u << (at & 7));
					drop->docs++;
					drop->sum_title += pay.dl_title[j];
					drop->sum_values += pay.dl_values[j];
				}
				drop->postings++;
				continue;
			}
			if (!(p = post_new(w)))
				return err_code();
			p->vid = vid;
			p->term = 0;
			p->kind = pay.kind[j];
			p->tf_title = pay.tf_title[j];
			p->tf_values = pay.tf_values[j];
			p->dl_title = pay.dl_title[j];
			p->dl_values = pay.dl_values[j];
			p->pos_off = (uint32_t)w->posb.len;
			p->pos_len = c.positions ? pay.pos_len[j] : 0;
			if (c.positions)
				buf_put(&w->posb, pay.pos[j], pay.pos_len[j]);
			if (w->posb.oom || w->posb.len > UINT32_MAX)
				return err_set(CAIRN_ENOMEM, "out of memory");
		}
	}
	return 0;
}

/*
 * Merge segs[0..n-1] (one branch, in vid order) into a new segment, without
 * the postings of the Versions drop names (NULL: none).
 */
static int merge(MDB_txn *txn, cairn_store *st, uint32_t dom, const tseg *segs, size_t n,
		 tdrop *drop)
{
	struct min in[TEXT_MERGE_FANIN];
	uint8_t prefix[TEXT_MERGE_FANIN][8], desc[TSEG_BYTES];
	uint64_t containers = 0, postings = 0, docs = 0, sum_t = 0, sum_v = 0;
	uint64_t min_vid = UINT64_MAX, max_vid = 0;
	arena a = ARENA_INIT;
	buf val = BUF_INIT;
	textw w;
	uint32_t seg;
	kbuf k;
	int rc, mrc;

	memset(in, 0, sizeof(in));
	memset(&w, 0, sizeof(w));
	if ((rc = text_segment_next(txn, st, dom, &seg)))
		return rc;
	if (drop)
		drop->seg = seg;
	for (size_t i = 0; i < n && !rc; i++) {
		be32_put(prefix[i], dom);
		be32_put(prefix[i] + 4, segs[i].id);
		in[i].plen = 8;
		if ((mrc = mdb_cursor_open(txn, st->dbi[DB_POSTINGS], &in[i].cur))) {
			rc = store_err(mrc, "postings");
			break;
		}
		in[i].k.mv_data = prefix[i];
		in[i].k.mv_size = 8;
		mrc = mdb_cursor_get(in[i].cur, &in[i].k, &in[i].v, MDB_SET_RANGE);
		in[i].more = mrc == 0 && in[i].k.mv_size > 13 && memcmp(in[i].k.mv_data, prefix[i], 8) == 0;
		if (mrc && mrc != MDB_NOTFOUND)
			rc = store_err(mrc, "postings");
		docs += segs[i].docs;
		sum_t += segs[i].sum_title;
		sum_v += segs[i].sum_values;
	}
	for (;;) {
		const uint8_t *t = NULL, *u;
		size_t tn = 0, un;

		if (rc)
			break;
		/* The least term among the inputs (keys read again: the puts may move pages). */
		for (size_t i = 0; i < n && !rc; i++) {
			if (!in[i].more)
				continue;
			if ((mrc = mdb_cursor_get(in[i].cur, &in[i].k, &in[i].v, MDB_GET_CURRENT))) {
				rc = store_err(mrc, "postings");
				break;
			}
			un = min_term(&in[i], &u);
			if (!t || memcmp(u, t, un < tn ? un : tn) < 0 ||
			    (memcmp(u, t, un < tn ? un : tn) == 0 && un < tn)) {
				t = u;
				tn = un;
			}
		}
		if (!t)
			break;
		{
			char term[TEXT_TERM_MAX + 1];

			if (tn > TEXT_TERM_MAX) {
				rc = err_set(CAIRN_ECORRUPT, "postings: a term too long");
				break;
			}
			memcpy(term, t, tn);
			/* Its postings, input after input (their vids ascend). */
			w.n_p = 0;
			buf_reset(&w.posb);
			arena_reset(&a);
			for (size_t i = 0; i < n && !rc; i++)
				while (!rc && in[i].more && (un = min_term(&in[i], &u)) == tn &&
				       memcmp(u, term, tn) == 0) {
					rc = take_container(&w, in[i].v.mv_data, in[i].v.mv_size,
							    be32_get(u + tn + 1), &a, drop);
					if (!rc)
						rc = min_next(&in[i], prefix[i]);
				}
			for (size_t at = 0; at < w.n_p && !rc;) {
				uint64_t hi = w.p[at].vid >> TEXT_CONTAINER_BITS;
				uint32_t cn;

				if (w.p[at].vid < min_vid)
					min_vid = w.p[at].vid;
				if (w.p[w.n_p - 1].vid > max_vid)
					max_vid = w.p[w.n_p - 1].vid;
				buf_reset(&val);
				at += encode_container(w.p + at, w.n_p - at,
						       term[0] == TERM_WORD ? w.posb.p : NULL, &val, &cn);
				key_tterm(&k, dom, seg, term, tn);
				kb_be32(&k, (uint32_t)hi);
				rc = val.oom ? err_set(CAIRN_ENOMEM, "out of memory")
					     : db_put(txn, st, DB_POSTINGS, k.b, k.n, val.p, val.len, 0);
				containers++;
				postings += cn;
			}
		}
	}
	for (size_t i = 0; i < n; i++)
		if (in[i].cur)
			mdb_cursor_close(in[i].cur);
	/* The inputs go; the new segment says what it holds. */
	for (size_t i = 0; i < n && !rc; i++) {
		if ((rc = db_del_prefix(txn, st, DB_POSTINGS, prefix[i], 8, NULL)))
			break;
		key_tseg(&k, dom, segs[i].id);
		if ((rc = db_del(txn, st, DB_POSTINGS, k.b, k.n)) == CAIRN_ENOTFOUND)
			rc = 0;
	}
	if (drop) {
		docs -= drop->docs < docs ? drop->docs : docs;
		sum_t -= drop->sum_title < sum_t ? drop->sum_title : sum_t;
		sum_v -= drop->sum_values < sum_v ? drop->sum_values : sum_v;
	}
	/* A segment left without postings goes with its inputs. */
	if (!rc && postings) {
		be64_put(desc, containers);
		be64_put(desc + 8, postings);
		be64_put(desc + 16, min_vid == UINT64_MAX ? 0 : min_vid);
		be64_put(desc + 24, max_vid);
		be64_put(desc + 32, docs);
		be64_put(desc + 40, sum_t);
		be64_put(desc + 48, sum_v);
		be32_put(desc + 56, segs[0].branch);
		key_tseg(&k, dom, seg);
		rc = db_put(txn, st, DB_POSTINGS, k.b, k.n, desc, sizeof(desc), 0);
	}
	cr_free(w.p);
	buf_release(&w.posb);
	buf_release(&val);
	arena_release(&a);
	return rc;
}

int text_merge_step(MDB_txn *txn, cairn_store *st, uint32_t dom, int dry, int *found)
{
	tseg *segs;
	size_t n_segs, first = 0, n = 0;
	int rc = text_segments(txn, st, dom, &segs, &n_segs);

	*found = 0;
	if (!rc)
		rc = merge_pick(segs, n_segs, &first, &n);
	if (!rc && n) {
		*found = 1;
		if (!dry)
			rc = merge(txn, st, dom, segs + first, n, NULL);
	}
	cr_free(segs);
	return rc;
}

int text_compact_segment(MDB_txn *txn, cairn_store *st, uint32_t dom, const tseg *seg,
			 tdrop *drop)
{
	int rc;

	drop->seen_base = seg->min_vid;
	drop->seen_bits = seg->max_vid - seg->min_vid + 1;
	drop->docs = drop->sum_title = drop->sum_values = drop->postings = 0;
	if (!(drop->seen = cr_calloc(drop->seen_bits / 8 + 1, 1)))
		return err_set(CAIRN_ENOMEM, "out of memory");
	rc = merge(txn, st, dom, seg, 1, drop);
	cr_free(drop->seen);
	drop->seen = NULL;
	return rc;
}
