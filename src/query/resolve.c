/*
 * Resolution: which Records does a text name? (docs/resolve.md)
 *
 * Every Record Version has names entries (DB_NAMES): its key, its title
 * and the values of its naming attributes (unique strings and aliases),
 * each normalized (model/norm.h), followed by the vid. A name counts when
 * its vid is in the live set of the view, like any value index.
 *
 *   1. the text as a key of each Kind (the keys index, exact);
 *   2. the entries of the normalized text: exact when the stored name is
 *      the text byte for byte, else folded;
 *   3. names that start with the normalized text and a space (prefix);
 *   4. close spellings: a walk of the names in order, starting with the
 *      text's first byte, that keeps an edit-distance table per byte of the
 *      name and jumps past every name sharing a prefix once that prefix is
 *      too far from the text (no name below it can come within max_edits).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/norm.h"
#include "index/names/names.h"
#include "query/read.h"
#include "query/spell.h"
#include "base/alloc.h"
#include "base/err.h"
#include "base/hmap.h"
#include "base/text.h"

/* Budgets of the spelling walk: index seeks and entries read. */
#define SPELL_SEEKS 1500
#define SPELL_ENTRIES 20000
/* Entries read per exact or prefix name. */
#define NAME_ENTRIES 2000
/* Live Records taken from names that start with the text (the weakest matches). */
#define PREFIX_TAKEN 200

typedef struct cand {
	cairn_match m;
	uint64_t vid;
} cand;

typedef struct rctx {
	cairn_txn *t;
	const cairn_resolve_options *o;
	const char *text;
	size_t text_len;
	uint32_t kinds[64];
	size_t n_kinds;
	cand *c;
	size_t n, cap;
	hmap by_vid;		/* vid -> index + 1 in c */
	int truncated;
} rctx;

static const double base_score[] = {0, 1.0, 0.95, 0.98, 0.92};

static double score_of(int source, int match, unsigned edits)
{
	double s = base_score[source];

	switch (match) {
	case CAIRN_MATCH_FOLDED:
		return s - 0.1;
	case CAIRN_MATCH_SPELLING:
		return s - 0.2 - 0.1 * edits;
	case CAIRN_MATCH_PREFIX:
		return s - 0.45;
	}
	return s;
}

static int kind_ok(const rctx *r, uint32_t kind)
{
	if (!r->n_kinds)
		return 1;
	for (size_t i = 0; i < r->n_kinds; i++)
		if (r->kinds[i] == kind)
			return 1;
	return 0;
}

/* Does one of the attribute's values equal the text byte for byte? */
static int attr_exact(rctx *r, const vrec *v, const attr_def *a)
{
	arena tmp = ARENA_INIT;
	const jv *vals = jv_parse(&tmp, v->values, v->values_len, "stored values");
	const jv *val = vals ? jv_get(vals, a->name) : NULL;
	int eq = 0;

	for (size_t i = 0; val && i < (jv_is(val, JV_ARRAY) ? val->len : 1) && !eq; i++) {
		const jv *e = jv_is(val, JV_ARRAY) ? &val->u.items[i] : val;

		eq = e->type == JV_STRING && e->len == r->text_len &&
		     memcmp(e->u.s, r->text, r->text_len) == 0;
	}
	arena_release(&tmp);
	return eq;
}

/* Keep a candidate, or improve the one of its Record. */
static int offer(rctx *r, uint64_t vid, const vrec *v, const kind_def *k, int source, int match,
		 unsigned edits, const attr_def *a)
{
	double score = score_of(source, match, edits);
	uint8_t kb[8];
	uint64_t *slot;
	int isnew;
	cand *c;

	be64_put(kb, vid);
	if (!(slot = hmap_put(&r->by_vid, kb, 8, &isnew)))
		return err_set(CAIRN_ENOMEM, "out of memory");
	if (!isnew) {
		c = &r->c[*slot - 1];
		if (c->m.score >= score)
			return 0;
	} else {
		if (r->n == r->cap) {
			size_t cap = r->cap ? r->cap * 2 : 32;
			cand *nc = cr_reallocarray(r->c, cap, sizeof(*nc));

			if (!nc)
				return err_set(CAIRN_ENOMEM, "out of memory");
			r->c = nc;
			r->cap = cap;
		}
		*slot = r->n + 1;
		c = &r->c[r->n++];
		memset(c, 0, sizeof(*c));
		c->vid = vid;
		c->m.rec.kind = k->name;
		c->m.rec.key = v->key;
		c->m.rec.key_len = v->key_len;
		c->m.rec.title = v->title;
		c->m.rec.title_len = v->title_len;
		c->m.rec.values = v->values;
		c->m.rec.values_len = v->values_len;
		c->m.rec.vector_dim = txn_vector_dim(r->t, v->dim);
		c->m.rec.vid = vid;
		c->m.rec.revision = v->rev;
	}
	c->m.score = score;
	c->m.source = source;
	c->m.match = match;
	c->m.edits = edits;
	c->m.attr = a ? a->name : NULL;
	return 0;
}

/*
 * One names entry. It names the Version that brought the name to its Record
 * (storage.md, "Names"): the Record counts if the view sees it, of a wanted
 * Kind, and the Version the view sees still has the name. Then offer that
 * Version (1).
 */
static int take_entry(rctx *r, const name_entry *ne, int match, unsigned edits)
{
	dctx *d = &r->t->d;
	const kind_def *k;
	const attr_def *a = NULL;
	uint64_t vid = ne->vid;
	int live, rc, source;
	vrec v;

	if ((rc = version_get(d, vid, &v)))
		return rc == CAIRN_ENOTFOUND ? 0 : rc; /* cleared with its branch */
	if (v.type != V_REC || !(k = schema_kind_id(d->s, v.kr)))
		return err_set(CAIRN_ECORRUPT, "a names entry names Version %llu, not a Record",
			       (unsigned long long)vid);
	if (!kind_ok(r, k->id))
		return 0;
	if (ne->src == NS_ATTR && (!(a = kind_attr_id(k, ne->attr)) || !attr_names(a)))
		return 0; /* the attribute no longer names its Record */
	if ((rc = live_test(d, vid, &live)))
		return rc;
	if (!live) { /* the Record changed since, or the view does not see it */
		ident id;

		if ((rc = rec_lookup(d, k->id, v.key, v.key_len, &id)))
			return rc;
		if (!id.visible || id.vid == vid)
			return 0;
		vid = id.vid;
		if ((rc = version_get(d, vid, &v)))
			return rc;
		if (!version_has_name(k, &v, NULL, ne))
			return 0;
	}
	switch (ne->src) {
	case NS_KEY:
		source = CAIRN_NAME_KEY;
		if (match == CAIRN_MATCH_FOLDED && v.key_len == r->text_len &&
		    memcmp(v.key, r->text, r->text_len) == 0)
			match = CAIRN_MATCH_EXACT;
		break;
	case NS_TITLE:
		source = CAIRN_NAME_TITLE;
		if (match == CAIRN_MATCH_FOLDED && v.title_len == r->text_len &&
		    memcmp(v.title, r->text, r->text_len) == 0)
			match = CAIRN_MATCH_EXACT;
		break;
	default:
		source = (a->flags & AF_UNIQUE) ? CAIRN_NAME_UNIQUE : CAIRN_NAME_ALIAS;
		if (match == CAIRN_MATCH_FOLDED && attr_exact(r, &v, a))
			match = CAIRN_MATCH_EXACT;
		break;
	}
	return (rc = offer(r, vid, &v, k, source, match, edits, a)) ? rc : 1;
}

/*
 * The entries of the names that start with prefix p (p ends with the 0x00
 * of a whole name, or a space), until max of them named live Records.
 */
static int walk_names(rctx *r, MDB_cursor *cur, const kbuf *p, int match, size_t max)
{
	MDB_val k, v;
	size_t seen = 0, taken = 0;
	int mrc, rc = 0;

	k.mv_data = (void *)p->b;
	k.mv_size = p->n;
	r->t->d.stats.seeks++;
	for (mrc = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE); mrc == 0 && !rc;
	     mrc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
		name_entry ne;

		if (k.mv_size < p->n || memcmp(k.mv_data, p->b, p->n) != 0)
			break;
		r->t->d.stats.entries++;
		if (taken == max || ++seen > NAME_ENTRIES) {
			r->truncated = 1; /* more names than the budget reads */
			break;
		}
		if (name_entry_parse(k.mv_data, k.mv_size, &ne))
			return err_set(CAIRN_ECORRUPT, "names: malformed entry");
		if ((rc = take_entry(r, &ne, match, 0)) > 0) {
			taken++;
			rc = 0;
		}
	}
	if (!rc && mrc && mrc != MDB_NOTFOUND)
		rc = store_err(mrc, "names");
	return rc;
}

/* ------------------------------------------------------------ spellings -- */

/* A names entry of a close spelling (query/spell.h): offer its Record. */
static int spelt(void *ctx, const MDB_val *key, size_t len, unsigned d)
{
	rctx *r = ctx;
	name_entry ne;
	int rc;

	(void)len;
	if (d == 0) /* the text itself: found as folded already */
		return 0;
	if (name_entry_parse(key->mv_data, key->mv_size, &ne))
		return err_set(CAIRN_ECORRUPT, "names: malformed entry");
	return (rc = take_entry(r, &ne, CAIRN_MATCH_SPELLING, d)) > 0 ? 0 : rc;
}

/* Names within k edits of q, starting with its first byte. */
static int spell_names(rctx *r, MDB_cursor *cur, const char *q, size_t m, unsigned k)
{
	uint8_t p[4];
	spell_opts o;

	be32_put(p, r->t->d.dom);
	memset(&o, 0, sizeof(o));
	o.prefix = p;
	o.plen = 4;
	o.q = q;
	o.m = m;
	o.k = k;
	o.first_fixed = 1;
	o.max_seeks = SPELL_SEEKS;
	o.max_entries = SPELL_ENTRIES;
	o.fn = spelt;
	o.ctx = r;
	return spell_walk(cur, &r->t->d, &o, &r->truncated);
}

/* No space and a digit: "PL-3704", "DE123456789". */
static int identifier(const char *q, size_t n)
{
	int digit = 0;

	for (size_t i = 0; i < n; i++) {
		if (q[i] == ' ' || q[i] == '\t' || q[i] == '\n')
			return 0;
		digit |= q[i] >= '0' && q[i] <= '9';
	}
	return digit;
}

/* ------------------------------------------------------------------ API -- */

static int best_first(const void *x, const void *y)
{
	const cand *a = x, *b = y;
	size_t n;
	int r;

	if (a->m.score != b->m.score)
		return a->m.score > b->m.score ? -1 : 1;
	if ((r = strcmp(a->m.rec.kind, b->m.rec.kind)))
		return r;
	n = a->m.rec.key_len < b->m.rec.key_len ? a->m.rec.key_len : b->m.rec.key_len;
	if ((r = memcmp(a->m.rec.key, b->m.rec.key, n)))
		return r;
	return (a->m.rec.key_len > b->m.rec.key_len) - (a->m.rec.key_len < b->m.rec.key_len);
}

static const char *const source_word[] = {"", "key", "title", "unique", "alias"};

/* The reason in words, in the transaction's memory. */
static const char *reason(cairn_txn *t, const cairn_match *m)
{
	char text[256];

	snprintf(text, sizeof(text), "%s%s%s%s", source_word[m->source], m->attr ? " " : "",
		 m->attr ? m->attr : "",
		 m->match == CAIRN_MATCH_FOLDED	  ? ", ignoring case and accents"
		 : m->match == CAIRN_MATCH_PREFIX ? ", starts with the text"
		 : m->match == CAIRN_MATCH_SPELLING ? (m->edits == 1 ? ", 1 edit away"
							       : ", 2 edits away")
						    : "");
	return arena_strndup(&t->mem, text, strlen(text));
}

int cairn_resolve(cairn_txn *t, const cairn_resolve_options *o, cairn_match *out, size_t cap,
		  size_t *n, int *truncated)
{
	rctx r;
	char q[NAME_CAP];
	size_t qn, limit;
	MDB_cursor *cur = NULL;
	int rc = 0, mrc;

	if (!t || !o || !out || !n || !o->text)
		return err_set(CAIRN_EINVAL, "cairn_resolve: NULL argument");
	if ((rc = err_reserved(o->reserved, "cairn_resolve", "cairn_resolve_options")))
		return rc;
	*n = 0;
	if (truncated)
		*truncated = 0;
	memset(&r, 0, sizeof(r));
	r.t = t;
	r.o = o;
	r.text = o->text;
	r.text_len = o->text_len ? o->text_len : strlen(o->text);
	limit = o->limit ? o->limit : 10;
	if (limit > 100 || limit > cap)
		return err_set(CAIRN_EINVAL, "limit is 1 to 100 (and no more than out holds)");
	if (o->max_edits > 2)
		return err_set(CAIRN_EINVAL, "max_edits is 1 or 2");
	if (!r.text_len || r.text_len > 1024)
		return err_set(CAIRN_EINVAL, "the text to resolve is 1 to 1024 bytes");
	if (!utf8_valid(r.text, r.text_len))
		return err_set(CAIRN_EUTF8, "the text to resolve is not UTF-8");
	if (o->n_kinds > 64 || (o->n_kinds && !o->kinds))
		return err_set(CAIRN_EINVAL, "kinds: at most 64");
	for (size_t i = 0; i < o->n_kinds; i++) {
		const kind_def *k = o->kinds[i] ? schema_kind(t->d.s, o->kinds[i]) : NULL;

		if (!k)
			return err_set(CAIRN_EUNKNOWNKIND, "unknown Kind \"%s\"",
				       o->kinds[i] ? o->kinds[i] : "(null)");
		r.kinds[r.n_kinds++] = k->id;
	}
	/* 1. The text as a key. */
	for (size_t i = 0; i < t->d.s->n_kinds && !rc && r.text_len <= CAIRN_MAX_KEY; i++) {
		const kind_def *k = &t->d.s->kinds[i];
		ident id;
		vrec v;

		if (!kind_ok(&r, k->id))
			continue;
		if ((rc = rec_lookup(&t->d, k->id, r.text, r.text_len, &id)) || !id.visible)
			continue;
		if (!(rc = version_get(&t->d, id.vid, &v)))
			rc = offer(&r, id.vid, &v, k, CAIRN_NAME_KEY, CAIRN_MATCH_EXACT, 0, NULL);
	}
	qn = name_norm(r.text, r.text_len, q);
	if (!rc && qn && (mrc = mdb_cursor_open(t->txn, t->st->dbi[DB_NAMES], &cur)))
		rc = store_err(mrc, "names");
	if (!rc && qn) {
		kbuf p;

		/* 2. The names the text folds to. */
		key_name(&p, t->d.dom, q, qn);
		rc = walk_names(&r, cur, &p, CAIRN_MATCH_FOLDED, NAME_ENTRIES);
		/* 3. Names that start with its words. */
		if (!rc && !o->exact && qn < NAME_CAP) {
			p.n--;
			kb_u8(&p, ' ');
			rc = walk_names(&r, cur, &p, CAIRN_MATCH_PREFIX, PREFIX_TAKEN);
		}
		/*
		 * 4. Close spellings: none for 1 to 3 bytes, 1 edit up to 7, then
		 * max_edits; none for an identifier (its neighbors are other
		 * Records, not typos).
		 */
		if (!rc && !o->exact && qn >= 4 && !identifier(r.text, r.text_len))
			rc = spell_names(&r, cur, q, qn, qn < 8 ? 1 : o->max_edits ? o->max_edits : 1);
	}
	if (cur)
		mdb_cursor_close(cur);
	if (!rc) {
		if (r.n)
			qsort(r.c, r.n, sizeof(*r.c), best_first);
		for (size_t i = 0; i < r.n && i < limit && !rc; i++) {
			out[i] = r.c[i].m;
			if (!(out[i].reason = reason(t, &out[i])))
				rc = err_set(CAIRN_ENOMEM, "out of memory");
			*n = i + 1;
		}
		if (truncated)
			*truncated = r.truncated;
	}
	if (rc)
		*n = 0;
	cr_free(r.c);
	hmap_release(&r.by_vid);
	return rc;
}
