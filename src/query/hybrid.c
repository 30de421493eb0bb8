/*
 * Hybrid search and memory-aware ranking (cairn_hybrid, docs/vectors.md):
 * the best Records by words (BM25, cairn_search) and by meaning
 * (cairn_vsearch, the query vector given or the text embedded), fused by
 * reciprocal rank or a weighted sum of normalized scores; then, inside that
 * pool, an optional boost for Records linked to given Records, and the
 * memory signals: the confidence of each Record's last change, a trust
 * weight for its source or actor, recency decay, and status values that
 * exclude or demote. Every hit carries a receipt (cairn_hit.explain): the
 * revision read, the Version, and each part of its score.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "query/read.h"
#include "base/alloc.h"
#include "base/err.h"
#include "base/hmap.h"
#include "base/text.h"

#define POOL 100 /* hits asked of each search: the pool the signals rank */

typedef struct cand {
	cairn_record rec;
	unsigned words;
	size_t trank, vrank; /* 1-based; 0: not found that way */
	double tscore, vscore, tpart, vpart, fused;
	double graph, conf, trust, recency, status, score;
	const char *trust_by, *trust_name; /* "source" or "actor", and which */
	size_t trust_name_len;
	double age_days;
	const char *status_val;
	size_t status_len;
	int dropped;
} cand;

static int cand_cmp(const void *a, const void *b)
{
	const cand *x = a, *y = b;

	if (x->score != y->score)
		return x->score > y->score ? -1 : 1;
	return (x->rec.vid > y->rec.vid) - (x->rec.vid < y->rec.vid);
}

static cand *cand_of(cand *c, size_t *n, uint64_t vid)
{
	for (size_t i = 0; i < *n; i++)
		if (c[i].rec.vid == vid)
			return &c[i];
	memset(&c[*n], 0, sizeof(c[0]));
	return &c[(*n)++];
}

/* "Kind\0key" identities of the Records linked to the given ones (either direction). */
static int near_set(cairn_txn *t, const cairn_ref *near, size_t n_near, hmap *set)
{
	cairn_link *l = cr_malloc(CAIRN_MAX_PAGE * sizeof(*l));
	int rc = 0;

	if (!l)
		return err_set(CAIRN_ENOMEM, "out of memory");
	for (size_t i = 0; i < n_near && !rc; i++) {
		cairn_link_cursor cur;
		size_t got, kl = near[i].key_len ? near[i].key_len : strlen(near[i].key);
		unsigned pages = 0;

		memset(&cur, 0, sizeof(cur));
		do {
			rc = cairn_links(t, near[i].kind, near[i].key, kl, CAIRN_BOTH, NULL, &cur, l,
					 CAIRN_MAX_PAGE, &got);
			for (size_t j = 0; j < got && !rc; j++) {
				int out = strcmp(l[j].from_kind, near[i].kind) == 0 &&
					  l[j].from_key_len == kl && memcmp(l[j].from_key, near[i].key, kl) == 0;
				const char *k = out ? l[j].to_kind : l[j].from_kind;
				const char *key = out ? l[j].to_key : l[j].from_key;
				size_t klen = out ? l[j].to_key_len : l[j].from_key_len;
				char id[CAIRN_MAX_NAME + 1 + CAIRN_MAX_KEY];
				size_t idn = strlen(k);
				int isnew;

				memcpy(id, k, idn);
				id[idn++] = '\0';
				memcpy(id + idn, key, klen);
				if (!hmap_put(set, id, idn + klen, &isnew))
					rc = err_set(CAIRN_ENOMEM, "out of memory");
			}
		} while (!rc && got == CAIRN_MAX_PAGE && ++pages < 10);
		if (rc == CAIRN_ENOTFOUND)
			rc = err_set(CAIRN_ENOTFOUND, "near: %s:%.*s does not exist", near[i].kind,
				     (int)kl, near[i].key);
	}
	cr_free(l);
	return rc;
}

static int in_set(const hmap *set, const cairn_record *r)
{
	char id[CAIRN_MAX_NAME + 1 + CAIRN_MAX_KEY];
	size_t n = strlen(r->kind);

	memcpy(id, r->kind, n);
	id[n++] = '\0';
	memcpy(id + n, r->key, r->key_len);
	return hmap_get(set, id, n + r->key_len) != NULL;
}

static int in_list(const char *const *list, size_t n, const char *s, size_t len)
{
	for (size_t i = 0; i < n; i++)
		if (list[i] && strlen(list[i]) == len && memcmp(list[i], s, len) == 0)
			return 1;
	return 0;
}

/* The memory signals of one candidate. */
static int signals(cairn_txn *t, const cairn_rank_options *r, int64_t now, cand *c)
{
	cairn_revision rev;
	const jv *vals = NULL;
	arena_mark mark = arena_mark_get(&t->scratch);
	int rc;

	c->conf = c->trust = c->recency = c->status = 1;
	if ((rc = cairn_revision_get(t, c->rec.revision, &rev)))
		return rc;
	if (r->confidence)
		c->conf = rev.confidence;
	for (size_t i = 0; i < r->n_trust; i++) {
		const char *name = r->trust[i].name;
		size_t len = name ? strlen(name) : 0;

		if (len && rev.source_len == len && memcmp(rev.source, name, len) == 0) {
			c->trust = r->trust[i].weight;
			c->trust_by = "source";
			break;
		}
		if (len && rev.actor_len == len && memcmp(rev.actor, name, len) == 0 && !c->trust_by) {
			c->trust = r->trust[i].weight;
			c->trust_by = "actor";
		}
	}
	if (c->trust_by) {
		c->trust_name = strcmp(c->trust_by, "source") == 0 ? rev.source : rev.actor;
		c->trust_name_len = strcmp(c->trust_by, "source") == 0 ? rev.source_len : rev.actor_len;
	}
	if ((r->time_attribute || r->status_attribute) &&
	    !(vals = jv_parse(&t->scratch, c->rec.values, c->rec.values_len, "values")))
		rc = err_set(CAIRN_ECORRUPT, "stored values do not parse");
	if (!rc && r->half_life_days > 0) {
		int64_t at = rev.time_ms, days;
		const jv *v = r->time_attribute ? jv_get(vals, r->time_attribute) : NULL;

		if (v && v->type == JV_STRING) {
			if (date_parse(v->u.s, v->len, &days) == 0)
				at = days * 86400000;
			else if (time_parse_rfc3339(v->u.s, v->len, &at) != 0)
				at = rev.time_ms;
		}
		c->age_days = (double)(now - at) / 86400000.0;
		if (c->age_days < 0)
			c->age_days = 0;
		c->recency = (1 - r->recency_weight) +
			     r->recency_weight * exp2(-c->age_days / r->half_life_days);
	}
	if (!rc && r->status_attribute) {
		const jv *v = jv_get(vals, r->status_attribute);

		if (v && v->type == JV_STRING) {
			if (in_list(r->exclude, r->n_exclude, v->u.s, v->len)) {
				c->dropped = 1;
			} else if (in_list(r->demote, r->n_demote, v->u.s, v->len)) {
				c->status = r->demote_factor;
			}
			if (c->dropped || c->status != 1) {
				c->status_val = arena_strndup(&t->mem, v->u.s, v->len);
				c->status_len = v->len;
			}
		}
	}
	arena_rewind(&t->scratch, mark);
	return rc;
}

/* One search's part of a receipt: the hit's rank and score there, and what it added. */
static void receipt_part(buf *b, const char *name, size_t rank, double score, double weight,
			 double part)
{
	if (!rank)
		return;
	buf_printf(b, ",\"%s\":{\"rank\":%zu,\"score\":", name, rank);
	json_number(b, score);
	buf_puts(b, ",\"weight\":");
	json_number(b, weight);
	buf_puts(b, ",\"part\":");
	json_number(b, part);
	buf_put_u8(b, '}');
}

/* The receipt: what was read and every part of the score. */
static int receipt(cairn_txn *t, const cairn_hybrid_options *o, const cairn_rank_options *r,
		   double wt, double wv, const cand *c, cairn_hit *h)
{
	buf b = BUF_INIT;
	char *copy;

	buf_printf(&b, "{\"read\":{\"revision\":%llu},\"version\":%llu,\"written\":%llu",
		   (unsigned long long)t->d.rev, (unsigned long long)c->rec.vid,
		   (unsigned long long)c->rec.revision);
	buf_printf(&b, ",\"fusion\":\"%s\"", o->fusion == CAIRN_FUSE_WEIGHTED ? "weighted" : "rrf");
	receipt_part(&b, "text", c->trank, c->tscore, wt, c->tpart);
	receipt_part(&b, "vector", c->vrank, c->vscore, wv, c->vpart);
	buf_puts(&b, ",\"fused\":");
	json_number(&b, c->fused);
	if (c->graph != 1) {
		buf_puts(&b, ",\"graph\":");
		json_number(&b, c->graph);
	}
	if (r && r->confidence) {
		buf_puts(&b, ",\"confidence\":");
		json_number(&b, c->conf);
	}
	if (c->trust_by) {
		buf_printf(&b, ",\"trust\":{\"%s\":", c->trust_by);
		json_quote(&b, c->trust_name, c->trust_name_len);
		buf_puts(&b, ",\"weight\":");
		json_number(&b, c->trust);
		buf_put_u8(&b, '}');
	}
	if (r && r->half_life_days > 0) {
		buf_puts(&b, ",\"recency\":{\"age_days\":");
		json_number(&b, round(c->age_days * 1000) / 1000);
		buf_puts(&b, ",\"factor\":");
		json_number(&b, c->recency);
		buf_put_u8(&b, '}');
	}
	if (c->status_val) {
		buf_puts(&b, ",\"status\":{\"value\":");
		json_quote(&b, c->status_val, c->status_len);
		buf_puts(&b, ",\"factor\":");
		json_number(&b, c->status);
		buf_put_u8(&b, '}');
	}
	buf_puts(&b, ",\"score\":");
	json_number(&b, c->score);
	buf_put_u8(&b, '}');
	if (b.oom || !(copy = arena_strndup(&t->mem, (const char *)b.p, b.len))) {
		buf_release(&b);
		return err_set(CAIRN_ENOMEM, "out of memory");
	}
	h->explain = copy;
	h->explain_len = b.len;
	buf_release(&b);
	return 0;
}

static int rank_check(const cairn_rank_options *r)
{
	if (r->n_trust && !r->trust)
		return err_set(CAIRN_EINVAL, "rank: trust is NULL");
	for (size_t i = 0; i < r->n_trust; i++)
		if (!r->trust[i].name || !r->trust[i].name[0] || !(r->trust[i].weight >= 0) ||
		    !isfinite(r->trust[i].weight))
			return err_set(CAIRN_EINVAL, "rank: a trust weight is a name and a number >= 0");
	if (!(r->half_life_days >= 0) || !isfinite(r->half_life_days))
		return err_set(CAIRN_EINVAL, "rank: half_life_days is a number >= 0");
	if (!(r->recency_weight >= 0 && r->recency_weight <= 1))
		return err_set(CAIRN_EINVAL, "rank: recency_weight is between 0 and 1");
	if (!(r->demote_factor >= 0 && r->demote_factor <= 1))
		return err_set(CAIRN_EINVAL, "rank: demote_factor is between 0 and 1");
	if ((r->n_exclude && !r->exclude) || (r->n_demote && !r->demote) ||
	    ((r->n_exclude || r->n_demote) && !r->status_attribute))
		return err_set(CAIRN_EINVAL, "rank: exclude and demote need status_attribute");
	return 0;
}

int cairn_hybrid(cairn_txn *t, const cairn_hybrid_options *o, cairn_hit *out, size_t cap,
		 size_t *n)
{
	cairn_hit *th = NULL, *vh = NULL;
	cand *c = NULL;
	float *qv = NULL;
	size_t tn = 0, vn = 0, nc = 0, limit;
	cairn_rank_options r;
	cairn_exclude ex = {0};
	const cairn_exclude *exclude = NULL;
	hmap near = HMAP_INIT;
	double k, wt, wv, tmax = 0, vmin = INFINITY, vmax = -INFINITY;
	int rc = 0, use_text, use_vector;

	if (!t || !o || !out || !n)
		return err_set(CAIRN_EINVAL, "cairn_hybrid: NULL argument");
	if ((rc = err_reserved(o->reserved, "cairn_hybrid", "cairn_hybrid_options")))
		return rc;
	if (o->rank && (rc = err_reserved(o->rank->reserved, "cairn_hybrid", "cairn_rank_options")))
		return rc;
	*n = 0;
	limit = o->limit ? o->limit : 20;
	if (limit > 100 || limit > cap)
		return err_set(CAIRN_EINVAL, "limit is 1 to 100 (and no more than out holds)");
	if (!o->text && !o->vector)
		return err_set(CAIRN_EINVAL, "a hybrid search needs a text, a vector, or both");
	if (o->fusion != CAIRN_FUSE_RRF && o->fusion != CAIRN_FUSE_WEIGHTED)
		return err_set(CAIRN_EINVAL, "fusion is CAIRN_FUSE_RRF or CAIRN_FUSE_WEIGHTED");
	if (!(o->rrf_k >= 0) || !(o->text_weight >= 0) || !(o->vector_weight >= 0) ||
	    !isfinite(o->rrf_k) || !isfinite(o->text_weight) || !isfinite(o->vector_weight) ||
	    !(o->graph_boost >= 0) || !isfinite(o->graph_boost))
		return err_set(CAIRN_EINVAL, "rrf_k, the weights and graph_boost are numbers >= 0");
	if (o->n_near && !o->near)
		return err_set(CAIRN_EINVAL, "near is NULL");
	memset(&r, 0, sizeof(r));
	if (o->rank) {
		r = *o->rank;
		if ((rc = rank_check(&r)))
			return rc;
		if (r.recency_weight == 0)
			r.recency_weight = 0.5;
		if (r.demote_factor == 0 && r.n_demote)
			r.demote_factor = 0.5;
		if (r.now_ms == 0) /* one clock reading for every candidate */
			r.now_ms = time_now_ms();
	}
	k = o->rrf_k > 0 ? o->rrf_k : 60;
	wt = o->text_weight;
	wv = o->vector_weight;
	/*
	 * Meaning has a tenth of the words' say by default (a fifth of the sum
	 * when weighted): the built-in model finds much less than words do, and
	 * an arm as weak given the same weight pulls the fused ranking below
	 * the strong one's (docs/vectors.md, "Hybrid search", has the figures).
	 */
	if (wt == 0 && wv == 0) {
		wt = o->fusion == CAIRN_FUSE_RRF ? 1 : 0.8;
		wv = o->fusion == CAIRN_FUSE_RRF ? 0.1 : 0.2;
	}
	/* A weight of 0 leaves its search out (the text may still be what is embedded). */
	use_text = o->text && wt > 0;
	use_vector = (o->vector || (o->embedder && o->text)) && wv > 0;
	if (!use_text && !use_vector)
		return err_set(CAIRN_EINVAL, "nothing to search by: a text, a vector or an embedder, "
					     "with a weight above 0");
	if (!(th = cr_calloc(POOL, sizeof(*th))) || !(vh = cr_calloc(POOL, sizeof(*vh))) ||
	    !(c = cr_calloc(2 * POOL, sizeof(*c)))) {
		rc = err_set(CAIRN_ENOMEM, "out of memory");
		goto out;
	}
	/*
	 * What is excluded is left out inside both searches, so it takes no
	 * place in the pools: o->exclude, or what rank excludes (where a Kind
	 * searched has its Attribute; a rank's exclusion is a factor).
	 */
	if (o->exclude || (o->rank && o->rank->status_attribute && o->rank->n_exclude)) {
		uint32_t ids[64];
		size_t n_ids = 0;

		for (size_t i = 0; o->kinds && i < o->n_kinds && n_ids < 64; i++) {
			const kind_def *kd = o->kinds[i] ? schema_kind(t->d.s, o->kinds[i]) : NULL;

			if (kd)
				ids[n_ids++] = kd->id;
		}
		if (o->exclude) {
			if ((rc = exclude_check(t, o->exclude, ids, n_ids, "cairn_hybrid")))
				goto out;
			exclude = o->exclude;
		} else {
			ex.attribute = o->rank->status_attribute;
			ex.values = o->rank->exclude;
			ex.n_values = o->rank->n_exclude;
			if (exclude_check(t, &ex, ids, n_ids, "cairn_hybrid") == 0)
				exclude = &ex;
			else
				err_clear();
		}
	}
	if (use_text) {
		cairn_search_options so = {0};

		so.text = o->text;
		so.text_len = o->text_len;
		so.kinds = o->kinds;
		so.n_kinds = o->n_kinds;
		so.where = o->where;
		so.where_len = o->where_len;
		so.limit = POOL;
		so.exclude = exclude;
		if ((rc = cairn_search(t, &so, th, POOL, &tn, NULL)))
			goto out;
	}
	if (use_vector) {
		cairn_vsearch_options vo = {0};
		size_t dim = o->dim, words = 1;

		if (!o->vector) {
			char model[VEC_MODEL_MAX + 1];
			size_t ddim;

			/* A query embedded by one model is never compared with another's vectors. */
			if ((rc = cairn_vector_model(t, model, sizeof(model), &ddim)))
				goto out;
			if (model[0] && strcmp(model, cairn_embedder_model(o->embedder)) != 0) {
				rc = err_set(CAIRN_EDIM, "the Domain's vectors are of model \"%s\", not "
							 "\"%s\"",
					     model, cairn_embedder_model(o->embedder));
				goto out;
			}
			dim = cairn_embedder_dim(o->embedder);
			if (!(qv = cr_malloc(dim * sizeof(float)))) {
				rc = err_set(CAIRN_ENOMEM, "out of memory");
				goto out;
			}
			if ((rc = cairn_embed(o->embedder, o->text,
					      o->text_len ? o->text_len : strlen(o->text), qv, dim,
					      &words)))
				goto out;
		}
		vo.vector = o->vector ? o->vector : qv;
		vo.dim = dim;
		vo.kinds = o->kinds;
		vo.n_kinds = o->n_kinds;
		vo.where = o->where;
		vo.where_len = o->where_len;
		vo.limit = POOL;
		vo.probes = o->probes;
		vo.exclude = exclude;
		/* A text of words the model does not know has no meaning to search by. */
		if (words && (rc = cairn_vsearch(t, &vo, vh, POOL, &vn)))
			goto out;
	}
	if (o->n_near && o->graph_boost > 0 && (rc = near_set(t, o->near, o->n_near, &near)))
		goto out;
	for (size_t i = 0; i < tn; i++) {
		cand *x = cand_of(c, &nc, th[i].rec.vid);

		x->rec = th[i].rec;
		x->words = th[i].words;
		x->trank = i + 1;
		x->tscore = th[i].score;
		if (th[i].score > tmax)
			tmax = th[i].score;
	}
	for (size_t i = 0; i < vn; i++) {
		cand *x = cand_of(c, &nc, vh[i].rec.vid);

		x->rec = vh[i].rec;
		x->vrank = i + 1;
		x->vscore = vh[i].score;
		vmin = vh[i].score < vmin ? vh[i].score : vmin;
		vmax = vh[i].score > vmax ? vh[i].score : vmax;
	}
	for (size_t i = 0; i < nc; i++) {
		cand *x = &c[i];

		if (o->fusion == CAIRN_FUSE_RRF) {
			x->tpart = x->trank ? wt / (k + (double)x->trank) : 0;
			x->vpart = x->vrank ? wv / (k + (double)x->vrank) : 0;
		} else {
			x->tpart = x->trank && tmax > 0 ? wt * x->tscore / tmax : 0;
			x->vpart = !x->vrank	    ? 0
				   : vmax > vmin ? wv * (x->vscore - vmin) / (vmax - vmin)
						 : wv;
		}
		x->fused = x->tpart + x->vpart;
		x->graph = near.n && in_set(&near, &x->rec) ? 1 + o->graph_boost : 1;
		x->conf = x->trust = x->recency = x->status = 1;
		if (o->rank && (rc = signals(t, &r, r.now_ms, x)))
			goto out;
		x->score = x->fused * x->graph * x->conf * x->trust * x->recency * x->status;
	}
	qsort(c, nc, sizeof(*c), cand_cmp);
	for (size_t i = 0; i < nc && *n < limit && !rc; i++) {
		if (c[i].dropped)
			continue;
		memset(&out[*n], 0, sizeof(out[0]));
		out[*n].rec = c[i].rec;
		out[*n].score = c[i].score;
		out[*n].words = c[i].words;
		if (!(rc = receipt(t, o, o->rank ? &r : NULL, wt, wv, &c[i], &out[*n])))
			(*n)++;
	}
out:
	if (rc)
		*n = 0;
	hmap_release(&near);
	cr_free(th);
	cr_free(vh);
	cr_free(c);
	cr_free(qv);
	return rc;
}
