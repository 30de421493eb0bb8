/*
 * The digest (docs/memory.md, "Digest"): what is known about some subjects,
 * or what the Domain learned last, ranked by confidence, trust and recency.
 *
 * A subject's memories are the Records of the memory Kind that link to it
 * by about; without subjects, those the latest revisions wrote. Each is
 * read in the view, filtered (status, valid time), and scored with its
 * lineage: the least trusted source or actor any of its current values
 * came from, and the time of its last change.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/arena.h"
#include "base/err.h"
#include "base/hmap.h"
#include "base/json.h"
#include "base/text.h"
#include "memory/memory.h"

#define SOURCE_KIND "Source"
#define LOG_REVISIONS 1000 /* revisions a session digest reads back */
#define MAX_LINEAGE 257	   /* the title and up to 256 values */

typedef struct trust_entry {
	const char *name;
	size_t len;
	double w;
} trust_entry;

typedef struct dctx {
	cairn_txn *t;
	const cairn_digest_options *o;
	const char *kind;
	arena mem;
	hmap seen;   /* candidate keys */
	char **keys; /* candidates, in arena */
	size_t *key_lens;
	size_t n, cap;
	int truncated;
	trust_entry trust[64];
	size_t n_trust;
	cairn_lineage_entry *le;
} dctx;

static int add_candidate(dctx *d, const char *key, size_t len)
{
	int isnew;
	uint64_t *slot;

	if (d->n == CAIRN_DIGEST_MAX_MEMORIES) {
		d->truncated = 1;
		return 0;
	}
	if (!(slot = hmap_put(&d->seen, key, len, &isnew)))
		return err_set(CAIRN_ENOMEM, "out of memory");
	if (!isnew)
		return 0;
	if (d->n == d->cap) {
		size_t cap = d->cap ? 2 * d->cap : 64;
		char **k = arena_alloc(&d->mem, cap * sizeof(*k));
		size_t *l = arena_alloc(&d->mem, cap * sizeof(*l));

		if (!k || !l)
			return err_set(CAIRN_ENOMEM, "out of memory");
		if (d->n) {
			memcpy(k, d->keys, d->n * sizeof(*k));
			memcpy(l, d->key_lens, d->n * sizeof(*l));
		}
		d->keys = k;
		d->key_lens = l;
		d->cap = cap;
	}
	if (!(d->keys[d->n] = arena_strndup(&d->mem, key, len)))
		return err_set(CAIRN_ENOMEM, "out of memory");
	d->key_lens[d->n++] = len;
	return 0;
}

/* The memories that link to subject s by about. */
static int subject_memories(dctx *d, const cairn_record *s)
{
	cairn_link_cursor cur;
	cairn_link l[256];
	size_t n;
	int rc;

	memset(&cur, 0, sizeof(cur));
	do {
		if ((rc = cairn_links(d->t, s->kind, s->key, s->key_len, CAIRN_IN, "about", &cur, l,
				      256, &n)))
			return rc == CAIRN_EUNKNOWNREL ? 0 : rc;
		for (size_t i = 0; i < n && !d->truncated; i++)
			if (strcmp(l[i].from_kind, d->kind) == 0 &&
			    (rc = add_candidate(d, l[i].from_key, l[i].from_key_len)))
				return rc;
	} while (n == 256 && !d->truncated);
	return 0;
}

static int log_item(void *ctx, const cairn_change_item *it)
{
	dctx *d = ctx;

	if (it->is_link || strcmp(it->kind, d->kind) != 0 || it->ours == CAIRN_DELETED)
		return 0;
	return add_candidate(d, it->key, it->key_len);
}

/* The memories the latest revisions of the branch wrote. */
static int latest_memories(dctx *d, size_t want)
{
	cairn_revision rv[64];
	uint64_t before = 0;
	size_t n, read = 0;
	int rc;

	do {
		if ((rc = cairn_log(d->t, before, rv, 64, &n)))
			return rc;
		for (size_t i = 0; i < n && read < LOG_REVISIONS && d->n < want; i++, read++)
			if (rv[i].type == CAIRN_REV_DATA &&
			    (rc = cairn_revision_changes(d->t, rv[i].revision, log_item, d)))
				return rc;
		if (n)
			before = rv[n - 1].revision;
	} while (n == 64 && read < LOG_REVISIONS && d->n < want);
	if (read == LOG_REVISIONS && d->n < want)
		d->truncated = 1;
	return 0;
}

/* The trust of a source or actor name: its Source Record's trust, else 1. */
static double trust_of(dctx *d, const char *name, size_t len)
{
	cairn_record r;
	double w = 1;

	if (!len || len > CAIRN_MAX_KEY)
		return 1;
	for (size_t i = 0; i < d->n_trust; i++)
		if (d->trust[i].len == len && memcmp(d->trust[i].name, name, len) == 0)
			return d->trust[i].w;
	if (cairn_get(d->t, SOURCE_KIND, name, len, &r) == 0) {
		const jv *v = jv_parse(&d->mem, r.values, r.values_len, "values");
		const jv *tr = v ? jv_get(v, "trust") : NULL;

		if (tr && jv_is_number(tr))
			w = jv_number(tr) < 0 ? 0 : jv_number(tr) > 1 ? 1 : jv_number(tr);
	}
	err_clear();
	if (d->n_trust < sizeof(d->trust) / sizeof(d->trust[0])) {
		d->trust[d->n_trust].name = arena_strndup(&d->mem, name, len);
		d->trust[d->n_trust].len = len;
		d->trust[d->n_trust].w = w;
		if (d->trust[d->n_trust].name)
			d->n_trust++;
	}
	return w;
}

/* A datetime value of v, in ms; 0 with *has 0 when absent or not one. */
static int64_t time_value(const jv *v, const char *name, int *has)
{
	const jv *x = jv_get(v, name);
	int64_t ms = 0;

	*has = x && x->type == JV_STRING && time_parse_rfc3339(x->u.s, x->len, &ms) == 0;
	return *has ? ms : 0;
}

/* Read, filter and score candidate i into it; 1 when it belongs in the digest. */
static int score(dctx *d, size_t i, int64_t now, cairn_digest_item *it, int *rc)
{
	const cairn_digest_options *o = d->o;
	const jv *v, *st, *cf;
	cairn_revision created;
	size_t nl = 0, nlinks = 0;
	double hl = o->half_life_days > 0 ? o->half_life_days : 30, age;
	int has_from, has_to;
	int64_t from, to;
	cairn_link_cursor cur;
	cairn_link sup;

	*rc = 0;
	memset(it, 0, sizeof(*it));
	if ((*rc = cairn_get(d->t, d->kind, d->keys[i], d->key_lens[i], &it->rec))) {
		if (*rc == CAIRN_ENOTFOUND) /* deleted since: not a memory any more */
			*rc = 0;
		err_clear();
		return 0;
	}
	if (!(v = jv_parse(&d->mem, it->rec.values, it->rec.values_len, "values"))) {
		*rc = err_code();
		return 0;
	}
	st = jv_get(v, "status");
	if (st && st->type == JV_STRING)
		snprintf(it->status, sizeof(it->status), "%s", st->u.s);
	if (!o->include_inactive && *it->status && strcmp(it->status, "active") != 0)
		return 0;
	from = time_value(v, "valid_from", &has_from);
	to = time_value(v, "valid_to", &has_to);
	if (o->valid_at_ms &&
	    ((has_from && o->valid_at_ms < from) || (has_to && o->valid_at_ms >= to)))
		return 0;
	if ((*rc = cairn_lineage(d->t, d->kind, d->keys[i], d->key_lens[i], d->le, MAX_LINEAGE, &nl,
				 &created)))
		return 0;
	it->trust = 1;
	it->time_ms = created.time_ms;
	it->source = created.source_len ? created.source : created.actor;
	it->source_len = created.source_len ? created.source_len : created.actor_len;
	it->confidence = created.confidence;
	for (size_t j = 0; j < nl; j++) {
		const cairn_revision *r = &d->le[j].rev;
		double w = r->source_len ? trust_of(d, r->source, r->source_len)
					 : trust_of(d, r->actor, r->actor_len);

		if (r->source_len && r->actor_len)
			w = fmin(w, trust_of(d, r->actor, r->actor_len));
		it->trust = fmin(it->trust, w);
		if (r->time_ms > it->time_ms)
			it->time_ms = r->time_ms;
		/* Who said it: the change that set its text (a supersede patches only its status). */
		if (!*d->le[j].attribute) {
			it->source = r->source_len ? r->source : r->actor;
			it->source_len = r->source_len ? r->source_len : r->actor_len;
			it->confidence = r->confidence;
		}
	}
	cf = jv_get(v, "confidence");
	if (cf && jv_is_number(cf))
		it->confidence = jv_number(cf);
	age = (double)(now - it->time_ms) / 86400000.0;
	it->score = it->confidence * it->trust * (0.5 + 0.5 * exp2(-(age > 0 ? age : 0) / hl));
	memset(&cur, 0, sizeof(cur));
	if (cairn_links(d->t, d->kind, d->keys[i], d->key_lens[i], CAIRN_OUT, "supersedes", &cur,
			&sup, 1, &nlinks) == 0 &&
	    nlinks) {
		it->supersedes.kind = sup.to_kind;
		it->supersedes.key = sup.to_key;
		it->supersedes.key_len = sup.to_key_len;
	}
	err_clear();
	return 1;
}

static int by_score(const void *a, const void *b)
{
	const cairn_digest_item *x = a, *y = b;
	size_t n;
	int c;

	if (x->score != y->score)
		return x->score < y->score ? 1 : -1;
	if (x->time_ms != y->time_ms)
		return x->time_ms < y->time_ms ? 1 : -1;
	n = x->rec.key_len < y->rec.key_len ? x->rec.key_len : y->rec.key_len;
	c = memcmp(x->rec.key, y->rec.key, n);
	return c ? c : (x->rec.key_len > y->rec.key_len) - (x->rec.key_len < y->rec.key_len);
}

/* The Record subject s names: Kind:key, else the best exact or folded name. */
static int find_subject(dctx *d, const char *s, cairn_record *out)
{
	char kind[CAIRN_MAX_NAME + 1];
	const char *key;
	size_t key_len, n = 0;
	cairn_resolve_options ro;
	cairn_match mt[8];
	int rc;

	if (mem_split_ref(s, kind, &key, &key_len) == 0) {
		rc = cairn_get(d->t, kind, key, key_len, out);
		if (rc != CAIRN_EUNKNOWNKIND)
			return rc == CAIRN_ENOTFOUND ? err_set(rc, "subject %s does not exist", s)
						     : rc;
	}
	memset(&ro, 0, sizeof(ro));
	ro.text = s;
	ro.exact = 1;
	ro.limit = 8;
	if ((rc = cairn_resolve(d->t, &ro, mt, 8, &n, NULL)))
		return rc;
	for (size_t j = 0; j < n; j++)
		if (mem_subject_kind(mt[j].rec.kind, d->kind)) {
			*out = mt[j].rec;
			return 0;
		}
	return err_set(CAIRN_ENOTFOUND,
		       "no Record is named \"%s\" (resolve it, or name it as Kind:key)", s);
}

int cairn_digest(cairn_txn *t, const cairn_digest_options *o, size_t offset, cairn_digest_item *out,
		 size_t cap, size_t *n, size_t *total, int *truncated, cairn_record *subjects_out)
{
	cairn_digest_item *items = NULL;
	size_t m = 0;
	int64_t now;
	dctx d;
	int rc = 0;

	if (n)
		*n = 0;
	if (total)
		*total = 0;
	if (truncated)
		*truncated = 0;
	if (!t || !o || !n || (cap && !out) || (o->n_subjects && !o->subjects))
		return err_set(CAIRN_EINVAL, "cairn_digest: NULL argument");
	if ((rc = err_reserved(o->reserved, "cairn_digest", "cairn_digest_options")))
		return rc;
	if (o->n_subjects > CAIRN_MEMORY_MAX_ABOUT)
		return err_set(CAIRN_EINVAL, "cairn_digest: 0 to %d subjects",
			       CAIRN_MEMORY_MAX_ABOUT);
	if (o->half_life_days < 0 || !isfinite(o->half_life_days))
		return err_set(CAIRN_EINVAL, "cairn_digest: half_life_days is 0 (30) or more");
	memset(&d, 0, sizeof(d));
	d.t = t;
	d.o = o;
	d.kind = o->memory_kind ? o->memory_kind : "Memory";
	now = o->now_ms ? o->now_ms : time_now_ms();
	if (!(d.le = cr_calloc(MAX_LINEAGE, sizeof(*d.le)))) {
		rc = err_set(CAIRN_ENOMEM, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < o->n_subjects && !rc; i++) {
		cairn_record s;

		if (!o->subjects[i] || !*o->subjects[i]) {
			rc = err_set(CAIRN_EINVAL, "cairn_digest: subject %zu is empty", i);
			break;
		}
		if (!(rc = find_subject(&d, o->subjects[i], &s))) {
			if (subjects_out)
				subjects_out[i] = s;
			rc = subject_memories(&d, &s);
		}
	}
	if (!rc && !o->n_subjects) {
		size_t max = CAIRN_DIGEST_MAX_MEMORIES,
		       want = offset < max && cap < max ? offset + cap + 64 : max;

		rc = latest_memories(&d, want < max ? want : max);
	}
	if (rc)
		goto out;
	if (d.n && !(items = cr_calloc(d.n, sizeof(*items)))) {
		rc = err_set(CAIRN_ENOMEM, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < d.n && !rc; i++)
		if (score(&d, i, now, &items[m], &rc))
			m++;
	if (rc)
		goto out;
	if (m)
		qsort(items, m, sizeof(*items), by_score);
	for (size_t i = offset; i < m && *n < cap; i++)
		out[(*n)++] = items[i];
	if (total)
		*total = m;
	if (truncated)
		*truncated = d.truncated;
out:
	cr_free(items);
	cr_free(d.le);
	hmap_release(&d.seen);
	arena_release(&d.mem);
	return rc;
}

/* ------------------------------------------------------------- recall -- */

#define RECALL_POOL 100 /* hits asked of the hybrid search: the pool recall filters and ranks */

/* The trust of a Record: the least of the sources and actors its lineage names. */
static int lineage_trust(dctx *d, const cairn_record *r, double *w)
{
	cairn_revision created;
	size_t nl = 0;
	int rc;

	*w = 1;
	if ((rc = cairn_lineage(d->t, r->kind, r->key, r->key_len, d->le, MAX_LINEAGE, &nl,
				&created)))
		return rc;
	for (size_t j = 0; j < nl; j++) {
		const cairn_revision *v = &d->le[j].rev;

		if (v->source_len)
			*w = fmin(*w, trust_of(d, v->source, v->source_len));
		if (v->actor_len)
			*w = fmin(*w, trust_of(d, v->actor, v->actor_len));
	}
	return 0;
}

typedef struct ranked {
	cairn_hit h;
	double trust;
} ranked;

static int by_hit_score(const void *a, const void *b)
{
	const ranked *x = a, *y = b;

	return (x->h.score < y->h.score) - (x->h.score > y->h.score);
}

int cairn_recall(cairn_txn *t, const cairn_recall_options *o, cairn_hit *out, double *trust,
		 size_t cap, size_t *n)
{
	static const char *const inactive[] = {"superseded", "retracted"};
	cairn_hybrid_options ho;
	cairn_rank_options rk;
	cairn_exclude ex;
	ranked *pool = NULL;
	cairn_hit *hits = NULL;
	size_t limit, nh = 0, m = 0;
	dctx d;
	int rc;

	if (n)
		*n = 0;
	if (!t || !o || !out || !n || !o->text)
		return err_set(CAIRN_EINVAL, "cairn_recall: NULL argument");
	if ((rc = err_reserved(o->reserved, "cairn_recall", "cairn_recall_options")))
		return rc;
	limit = o->limit ? o->limit : cap < 10 ? cap : 10;
	if (!limit || limit > 50 || limit > cap)
		return err_set(CAIRN_EINVAL,
			       "cairn_recall: limit is 1 to 50 (and no more than out holds)");
	if (o->half_life_days < 0 || !isfinite(o->half_life_days))
		return err_set(CAIRN_EINVAL, "cairn_recall: half_life_days is 0 (30) or more");
	memset(&d, 0, sizeof(d));
	d.t = t;
	memset(&ho, 0, sizeof(ho));
	memset(&rk, 0, sizeof(rk));
	rk.confidence = 1;
	rk.half_life_days = o->half_life_days > 0 ? o->half_life_days : 30;
	rk.status_attribute = "status";
	if (!o->include_inactive) {
		rk.exclude = inactive;
		rk.n_exclude = 2;
	}
	ho.text = o->text;
	ho.text_len = o->text_len;
	ho.embedder = o->embedder;
	ho.kinds = o->kinds;
	ho.n_kinds = o->n_kinds;
	ho.limit = RECALL_POOL;
	ho.rank = &rk;
	/* What was not true at valid_at is left out inside the search, not after it. */
	if (o->valid_at_ms)
		ho.exclude = cairn_memory_exclude(t, o->kinds, o->n_kinds, o->include_inactive,
						  o->valid_at_ms, &ex);
	if (!o->embedder)
		ho.text_weight = 1;
	if (!(hits = cr_calloc(RECALL_POOL, sizeof(*hits))) ||
	    !(pool = cr_calloc(RECALL_POOL, sizeof(*pool))) ||
	    !(d.le = cr_calloc(MAX_LINEAGE, sizeof(*d.le)))) {
		rc = err_set(CAIRN_ENOMEM, "out of memory");
		goto out;
	}
	rc = cairn_hybrid(t, &ho, hits, RECALL_POOL, &nh);
	if (rc == CAIRN_EDIM && o->embedder) { /* vectors of another model: by words */
		ho.embedder = NULL;
		ho.text_weight = 1;
		rc = cairn_hybrid(t, &ho, hits, RECALL_POOL, &nh);
	}
	if (rc)
		goto out;
	for (size_t i = 0; i < nh; i++) {
		pool[m].h = hits[i];
		if ((rc = lineage_trust(&d, &hits[i].rec, &pool[m].trust)))
			goto out;
		pool[m].h.score *= pool[m].trust;
		m++;
	}
	qsort(pool, m, sizeof(*pool), by_hit_score);
	for (size_t i = 0; i < m && *n < limit; i++) {
		out[*n] = pool[i].h;
		if (trust)
			trust[*n] = pool[i].trust;
		(*n)++;
	}
out:
	cr_free(hits);
	cr_free(pool);
	cr_free(d.le);
	arena_release(&d.mem);
	return rc;
}
