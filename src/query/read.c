/*
 * Reads: get by key, pages of a Kind in key order, the Links of a Record,
 * counts, schemas and vectors, at a branch head or at any
 * past revision. Every result points into the memory map (zero-copy) and
 * stays valid until the read transaction ends.
 */
#include <string.h>

#include "query/read.h"
#include "base/alloc.h"
#include "base/err.h"
#include "base/text.h"

uint32_t txn_vector_dim(cairn_txn *t, uint32_t written)
{
	char m[VEC_MODEL_MAX + 1];

	if (!written)
		return 0;
	if (!t->vdim_read) {
		if (vec_model_get(t->txn, t->st, t->d.dom, &t->vdim, m))
			t->vdim = 0;
		t->vdim_read = 1;
	}
	return t->vdim ? t->vdim : written;
}

int record_fill(cairn_txn *t, const kind_def *k, uint64_t vid, cairn_record *out, vrec *vout)
{
	vrec v;
	int rc = version_get(&t->d, vid, &v);

	if (rc)
		return rc;
	if (!k && v.type == V_REC)
		k = schema_kind_id(t->d.s, v.kr);
	if (v.type != V_REC || !k || v.kr != k->id)
		return err_set(CAIRN_ECORRUPT, "Version %llu is not a Record%s%s",
			       (unsigned long long)vid, k ? " of " : " of a known Kind",
			       k ? k->name : "");
	memset(out, 0, sizeof(*out));
	if (vout)
		*vout = v;
	out->kind = k->name;
	out->key = v.key;
	out->key_len = v.key_len;
	out->title = v.title;
	out->title_len = v.title_len;
	out->values = v.values;
	out->values_len = v.values_len;
	out->vector_dim = txn_vector_dim(t, v.dim);
	out->vid = vid;
	out->revision = v.rev;
	return 0;
}

static int kind_lookup(cairn_txn *t, const char *kind, const kind_def **k)
{
	if (!kind)
		return err_set(CAIRN_EINVAL, "no Kind given");
	char hint[1024];

	*k = schema_kind(t->d.s, kind);
	if (!*k)
		return err_set(CAIRN_EUNKNOWNKIND, "unknown Kind \"%s\"%s", kind,
			       schema_hint_kind(t->d.s, kind, hint, sizeof(hint)));
	return 0;
}

int cairn_get(cairn_txn *t, const char *kind, const char *key, size_t key_len, cairn_record *out)
{
	const kind_def *k;
	ident id;
	int rc;

	if (!t || !key || !out)
		return err_set(CAIRN_EINVAL, "cairn_get: NULL argument");
	if ((rc = kind_lookup(t, kind, &k)))
		return rc;
	if (key_len == 0 || key_len > CAIRN_MAX_KEY)
		return err_set(CAIRN_ENOTFOUND, "%s:%.*s does not exist", kind, (int)key_len, key);
	if ((rc = rec_lookup(&t->d, k->id, key, key_len, &id)))
		return rc;
	if (!id.visible)
		return err_set(CAIRN_ENOTFOUND, "%s:%.*s does not exist", kind, (int)key_len, key);
	return record_fill(t, k, id.vid, out, NULL);
}

int cairn_page(cairn_txn *t, const char *kind, const char *after, size_t after_len,
	       cairn_record *out, size_t cap, size_t *n)
{
	const kind_def *k;
	MDB_cursor *cur;
	MDB_val key, val;
	kbuf p, s;
	uint8_t last[4 + 4 + CAIRN_MAX_KEY + 1];
	size_t last_len = 0;
	int mrc, rc = 0;

	if (!t || !out || !n)
		return err_set(CAIRN_EINVAL, "cairn_page: NULL argument");
	*n = 0;
	if (cap == 0 || cap > CAIRN_MAX_PAGE)
		return err_set(CAIRN_EINVAL, "a page holds 1 to %d Records", CAIRN_MAX_PAGE);
	if ((rc = kind_lookup(t, kind, &k)))
		return rc;
	kb_init(&p);
	kb_be32(&p, t->d.dom);
	kb_be32(&p, k->id);
	s = p;
	if (after) {
		if (after_len > CAIRN_MAX_KEY)
			return err_set(CAIRN_EKEYLONG, "the cursor key is too long");
		kb_bytes(&s, after, after_len);
		kb_u8(&s, 1); /* just above every entry of key `after` */
	}
	mrc = mdb_cursor_open(t->txn, t->st->dbi[DB_KEYS], &cur);
	if (mrc)
		return store_err(mrc, "keys");
	key.mv_data = s.b;
	key.mv_size = s.n;
	t->d.stats.seeks++;
	for (mrc = mdb_cursor_get(cur, &key, &val, MDB_SET_RANGE); mrc == 0 && *n < cap;
	     mrc = mdb_cursor_get(cur, &key, &val, MDB_NEXT)) {
		const uint8_t *kk = key.mv_data;
		size_t ident_len = key.mv_size - 8;
		uint64_t vid;
		ventry e;
		int newer;

		t->d.stats.entries++;
		if (key.mv_size < p.n + 9 || memcmp(kk, p.b, p.n) != 0)
			break;
		if (ident_len > sizeof(last) || ventry_decode(val.mv_data, val.mv_size, VE_KEYS, &e)) {
			rc = err_set(CAIRN_ECORRUPT, "keys: malformed entry");
			break;
		}
		if (last_len == ident_len && memcmp(last, kk, ident_len) == 0)
			continue;
		if (!view_sees(&t->d.v, e.branch, e.rev))
			continue;
		memcpy(last, kk, ident_len);
		last_len = ident_len;
		vid = ~be64_get(kk + ident_len);
		if ((rc = kseg_newer(&t->d, kk, ident_len, vid, &e, &vid, &newer)))
			break;
		if (e.flags & EF_TOMBSTONE)
			continue;
		rc = record_fill(t, k, vid, &out[*n], NULL);
		if (rc)
			break;
		(*n)++;
	}
	mdb_cursor_close(cur);
	if (rc)
		return rc;
	return mrc && mrc != MDB_NOTFOUND ? store_err(mrc, "keys") : 0;
}

int cairn_kind_list(cairn_txn *t, const char **names, size_t cap, size_t *n)
{
	if (!t || !n || (cap && !names))
		return err_set(CAIRN_EINVAL, "cairn_kind_list: NULL argument");
	*n = 0;
	for (size_t i = 0; i < t->d.s->n_kinds && *n < cap; i++)
		names[(*n)++] = t->d.s->kinds[i].name;
	return 0;
}

int cairn_count(cairn_txn *t, const char *kind, uint64_t *n)
{
	const kind_def *k;
	int rc;

	if (!t || !n)
		return err_set(CAIRN_EINVAL, "cairn_count: NULL argument");
	if ((rc = kind_lookup(t, kind, &k)))
		return rc;
	return count_get(&t->d, k->id, n);
}

/*
 * Link cursor state: [0] phase (0 start, 1 out, 2 in, 3 done), [1..4] Relation
 * of the last Link returned, [5..12] rid of its other end, [13] 1 when a Link
 * of the phase was returned.
 */
int cairn_links(cairn_txn *t, const char *kind, const char *key, size_t key_len, int dir,
		const char *rel, cairn_link_cursor *lc, cairn_link *out, size_t cap, size_t *n)
{
	const kind_def *k;
	const rel_def *rd = NULL;
	cairn_link_cursor zero = {{0}};
	ident id;
	vrec self;
	int rc = 0;

	if (!t || !key || !out || !n)
		return err_set(CAIRN_EINVAL, "cairn_links: NULL argument");
	*n = 0;
	if (!lc)
		lc = &zero;
	if (cap == 0 || cap > CAIRN_MAX_PAGE)
		return err_set(CAIRN_EINVAL, "a page holds 1 to %d Links", CAIRN_MAX_PAGE);
	if (dir < CAIRN_OUT || dir > CAIRN_BOTH)
		return err_set(CAIRN_EINVAL, "direction must be out, in or both");
	if ((rc = kind_lookup(t, kind, &k)))
		return rc;
	if (rel && !(rd = schema_rel(t->d.s, rel)))
		return err_set(CAIRN_EUNKNOWNREL, "unknown Relation \"%s\"", rel);
	if (key_len == 0 || key_len > CAIRN_MAX_KEY)
		return err_set(CAIRN_ENOTFOUND, "%s:%.*s does not exist", kind, (int)key_len, key);
	if ((rc = rec_lookup(&t->d, k->id, key, key_len, &id)))
		return rc;
	if (!id.visible)
		return err_set(CAIRN_ENOTFOUND, "%s:%.*s does not exist", kind, (int)key_len, key);
	if ((rc = version_get(&t->d, id.vid, &self)))
		return rc;
	if (lc->state[0] == 0)
		lc->state[0] = (dir & CAIRN_OUT) ? 1 : 2;
	while (lc->state[0] == 1 || lc->state[0] == 2) {
		int out_phase = lc->state[0] == 1;
		MDB_cursor *cur;
		MDB_val kv, vv;
		kbuf p, s;
		uint8_t last[24];
		int have_last = 0, mrc;

		key_rid(&p, t->d.dom, id.rid);
		if (rd)
			kb_be32(&p, rd->id);
		if (lc->state[13]) {
			uint32_t lrel = be32_get(lc->state + 1);
			uint64_t lother = be64_get(lc->state + 5);

			key_rid(&s, t->d.dom, id.rid);
			if (lother == UINT64_MAX) {
				kb_be32(&s, lrel + 1);
				kb_be64(&s, 0);
			} else {
				kb_be32(&s, lrel);
				kb_be64(&s, lother + 1);
			}
		} else {
			s = p;
		}
		mrc = mdb_cursor_open(t->txn, t->st->dbi[out_phase ? DB_ADJ : DB_ADJR], &cur);
		if (mrc)
			return store_err(mrc, "adj");
		kv.mv_data = s.b;
		kv.mv_size = s.n;
		t->d.stats.seeks++;
		for (mrc = mdb_cursor_get(cur, &kv, &vv, MDB_SET_RANGE); mrc == 0 && *n < cap;
		     mrc = mdb_cursor_get(cur, &kv, &vv, MDB_NEXT)) {
			const uint8_t *kk = kv.mv_data;
			cairn_link *l;
			const rel_def *lr;
			const kind_def *ok;
			ventry e;

			t->d.stats.entries++;
			if (kv.mv_size != 32 || memcmp(kk, p.b, p.n) != 0)
				break;
			if (ventry_decode(vv.mv_data, vv.mv_size, VE_ADJ, &e)) {
				rc = CAIRN_ECORRUPT;
				break;
			}
			if (have_last && memcmp(last, kk, 24) == 0)
				continue;
			if (!view_sees(&t->d.v, e.branch, e.rev))
				continue;
			memcpy(last, kk, 24);
			have_last = 1;
			if (e.flags & EF_TOMBSTONE)
				continue;
			lr = schema_rel_id(t->d.s, be32_get(kk + 12));
			ok = schema_kind_id(t->d.s, e.kind);
			if (!lr || !ok) {
				rc = err_set(CAIRN_ECORRUPT, "a Link names an unknown Relation or Kind");
				break;
			}
			l = &out[*n];
			memset(l, 0, sizeof(*l));
			l->rel = lr->name;
			if (out_phase) {
				l->from_kind = k->name;
				l->from_key = self.key;
				l->from_key_len = self.key_len;
				l->to_kind = ok->name;
				l->to_key = e.key;
				l->to_key_len = e.key_len;
			} else {
				l->from_kind = ok->name;
				l->from_key = e.key;
				l->from_key_len = e.key_len;
				l->to_kind = k->name;
				l->to_key = self.key;
				l->to_key_len = self.key_len;
			}
			l->vid = ~be64_get(kk + 24);
			l->revision = e.rev;
			l->values = "{}";
			l->values_len = 2;
			if (e.flags & EF_VALUES) {
				vrec lv;

				if ((rc = version_get(&t->d, l->vid, &lv)))
					break;
				l->values = lv.values;
				l->values_len = lv.values_len;
			}
			memcpy(lc->state + 1, kk + 12, 4);
			memcpy(lc->state + 5, kk + 16, 8);
			lc->state[13] = 1;
			(*n)++;
		}
		mdb_cursor_close(cur);
		if (rc)
			return rc;
		if (mrc && mrc != MDB_NOTFOUND)
			return store_err(mrc, "adj");
		if (*n == cap)
			break;
		/* This phase is exhausted. */
		lc->state[0] = (out_phase && (dir & CAIRN_IN)) ? 2 : 3;
		lc->state[13] = 0;
	}
	return 0;
}

int cairn_schema_get(cairn_txn *t, const char **json, size_t *len)
{
	if (!t || !json || !len)
		return err_set(CAIRN_EINVAL, "cairn_schema_get: NULL argument");
	/* At a head, the Domain's schema (every branch reads with it); back in time, the one then. */
	return schema_json_at(t->txn, t->st, t->d.dom, t->past ? t->d.rev : UINT64_MAX, json, len);
}

int cairn_vector_get(cairn_txn *t, uint64_t vid, float *out, size_t cap, size_t *dim)
{
	kbuf k;
	MDB_val v;
	int rc;

	if (!t || !dim || (cap && !out))
		return err_set(CAIRN_EINVAL, "cairn_vector_get: NULL argument");
	*dim = 0;
	key_u64(&k, t->d.dom, vid);
	rc = db_get(t->txn, t->st, DB_VECTORS, k.b, k.n, &v);
	if (rc == CAIRN_ENOTFOUND)
		return 0;
	if (rc)
		return rc;
	if (v.mv_size % sizeof(float))
		return err_set(CAIRN_ECORRUPT, "vector of %zu bytes", v.mv_size);
	*dim = v.mv_size / sizeof(float);
	if (cap < *dim)
		return err_set(CAIRN_ELIMIT, "the vector has %zu dimensions, more than %zu", *dim,
			       cap);
	memcpy(out, v.mv_data, v.mv_size);
	return 0;
}

int cairn_vector_model(cairn_txn *t, char *model, size_t cap, size_t *dim)
{
	char m[VEC_MODEL_MAX + 1];
	uint32_t d;
	int rc;

	if (!t || !dim || (cap && !model))
		return err_set(CAIRN_EINVAL, "cairn_vector_model: NULL argument");
	*dim = 0;
	if (cap)
		model[0] = '\0';
	if ((rc = vec_model_get(t->txn, t->st, t->d.dom, &d, m)))
		return rc;
	if (cap < strlen(m) + 1)
		return err_set(CAIRN_ELIMIT, "the model id has %zu bytes", strlen(m));
	*dim = d;
	memcpy(model, m, strlen(m) + 1);
	return 0;
}
