/*
 * Stored records of the version layer: Versions and Revisions (encode,
 * decode, hash), index keys, identity lookups through a view, versioned cells
 * (live-set chunks and counts) and the order-preserving attribute encoding.
 * Decoders treat stored bytes as untrusted: a short or malformed record is
 * CAIRN_ECORRUPT, never a crash.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <xxhash.h>

#include "model/norm.h"
#include "base/alloc.h"
#include "base/assert.h"
#include "base/err.h"
#include "base/text.h"
#include "version/version.h"

/*
 * Version formats: 2, and 3 (written since store format 13): the same
 * fields, then the XXH3-64 of the bytes before it (8 bytes, little-endian),
 * checked by every decode, so that a read of a damaged Version is an error
 * naming it rather than wrong data.
 */
#define VREC_FORMAT 3
#define VREC_FORMAT_PLAIN 2
#define VREC_SUM 8u

/* ---------------------------------------------------------- Versions -- */

void vrec_encode(const vrec *v, buf *b)
{
	size_t start = b->len;

	buf_put_u8(b, (uint8_t)v->type);
	buf_put_u8(b, VREC_FORMAT);
	buf_put_varint(b, v->kr);
	buf_put_varint(b, v->branch);
	buf_put_varint(b, v->rev);
	buf_put_varint(b, v->prev);
	if (v->type != V_REC_DEL && v->type != V_LINK_DEL)
		buf_put_varint(b, v->created);
	if (vtype_rec(v->type)) {
		buf_put_varint(b, v->rid);
		buf_put_str(b, v->key, v->key_len);
	} else {
		buf_put_varint(b, v->from_rid);
		buf_put_varint(b, v->to_rid);
	}
	if (v->type == V_REC_ERASED || v->type == V_LINK_ERASED) {
		buf_put_varint(b, v->erased_by);
		buf_put(b, v->orig_hash, 32);
	}
	if (v->type == V_REC) {
		buf_put_str(b, v->title, v->title_len);
		buf_put_str(b, v->values, v->values_len);
		buf_put_varint(b, v->dim);
	} else if (v->type == V_LINK) {
		buf_put_str(b, v->values, v->values_len);
	}
	if (v->type != V_REC_DEL && v->type != V_LINK_DEL) {
		buf_put_varint(b, v->n_lineage);
		buf_put(b, v->lineage, v->lineage_len);
	}
	if (!b->oom) {
		uint64_t h = XXH3_64bits(b->p + start, b->len - start);
		uint8_t le[VREC_SUM];

		for (unsigned i = 0; i < VREC_SUM; i++)
			le[i] = (uint8_t)(h >> (8 * i));
		buf_put(b, le, VREC_SUM);
	}
}

void vrec_stub(const vrec *v, const void *bytes, size_t n, uint64_t erased_by, buf *b)
{
	uint8_t h[32];
	vrec s = *v;

	CR_ASSERT(v->type == V_REC || v->type == V_LINK);
	sha256(bytes, n, h);
	s.type = v->type == V_REC ? V_REC_ERASED : V_LINK_ERASED;
	s.erased_by = erased_by;
	s.orig_hash = h;
	vrec_encode(&s, b);
}

int vrec_decode(const void *p, size_t n, vrec *v)
{
	rdr r;

	const uint8_t *b = p;
	int format;

	memset(v, 0, sizeof(*v));
	format = n >= 2 ? b[1] : -1;
	if (format == VREC_FORMAT) {
		uint64_t h = 0;

		if (n < 2 + VREC_SUM)
			return err_set(CAIRN_ECORRUPT, "a Version is truncated");
		n -= VREC_SUM;
		for (unsigned i = 0; i < VREC_SUM; i++)
			h |= (uint64_t)b[n + i] << (8 * i);
		if (h != XXH3_64bits(b, n))
			return err_set(CAIRN_ECORRUPT, "a Version is damaged: its bytes do not match "
						       "their checksum (run cairn check; restore the "
						       "store from a backup)");
	}
	rd_init(&r, p, n);
	v->type = rd_u8(&r);
	if ((rd_u8(&r), format != VREC_FORMAT && format != VREC_FORMAT_PLAIN) ||
	    v->type < V_REC || v->type > V_LINK_ERASED)
		return err_set(CAIRN_ECORRUPT, "a Version has an unknown format");
	v->kr = (uint32_t)rd_varint(&r);
	v->branch = (uint32_t)rd_varint(&r);
	v->rev = rd_varint(&r);
	v->prev = rd_varint(&r);
	if (v->type != V_REC_DEL && v->type != V_LINK_DEL)
		v->created = rd_varint(&r);
	if (vtype_rec(v->type)) {
		v->rid = rd_varint(&r);
		v->key = (const char *)rd_str(&r, &v->key_len);
	} else {
		v->from_rid = rd_varint(&r);
		v->to_rid = rd_varint(&r);
	}
	if (v->type == V_REC_ERASED || v->type == V_LINK_ERASED) {
		v->erased_by = rd_varint(&r);
		v->orig_hash = rd_bytes(&r, 32);
	}
	if (v->type == V_REC) {
		v->title = (const char *)rd_str(&r, &v->title_len);
		v->values = (const char *)rd_str(&r, &v->values_len);
		v->dim = (uint32_t)rd_varint(&r);
	} else if (v->type == V_LINK) {
		v->values = (const char *)rd_str(&r, &v->values_len);
	}
	if (v->type != V_REC_DEL && v->type != V_LINK_DEL) {
		v->n_lineage = (uint32_t)rd_varint(&r);
		v->lineage = r.p;
		v->lineage_len = (size_t)(r.end - r.p);
	}
	if (r.bad || ((v->type == V_REC_ERASED || v->type == V_LINK_ERASED) && !v->orig_hash))
		return err_set(CAIRN_ECORRUPT, "a Version is truncated");
	if (!v->values) {
		v->values = "{}";
		v->values_len = 2;
	}
	if (!v->title) {
		v->title = "";
		v->title_len = 0;
	}
	return 0;
}

/* --------------------------------------------------------- Revisions -- */

void rrec_encode(const rrec *r, buf *b)
{
	uint64_t conf;

	memcpy(&conf, &r->confidence, 8);
	buf_put_u8(b, (uint8_t)(r->format ? r->format : RREC_FORMAT));
	buf_put_u8(b, (uint8_t)r->type);
	buf_put_varint(b, r->branch);
	buf_put_varint(b, r->parent);
	buf_put_varint(b, r->parent2);
	buf_put_be64(b, (uint64_t)r->time_ms);
	buf_put_be64(b, (uint64_t)r->client_time_ms);
	buf_put_be64(b, conf);
	buf_put_str(b, r->actor, r->actor_len);
	buf_put_str(b, r->source, r->source_len);
	buf_put_str(b, r->message, r->message_len);
	buf_put_str(b, r->trace, r->trace_len);
	buf_put_varint(b, r->first_vid);
	buf_put_varint(b, r->n_versions);
	buf_put(b, r->parent_hash, 32);
	buf_put(b, r->digest, 32);
	buf_put(b, r->hash, 32);
}

int rrec_decode(const void *p, size_t n, rrec *o)
{
	const uint8_t *h;
	uint64_t conf;
	rdr r;

	memset(o, 0, sizeof(*o));
	rd_init(&r, p, n);
	o->format = rd_u8(&r);
	if (o->format < 1 || o->format > RREC_FORMAT)
		return err_set(CAIRN_ECORRUPT, "a Revision has an unknown format");
	o->type = rd_u8(&r);
	o->branch = (uint32_t)rd_varint(&r);
	o->parent = rd_varint(&r);
	o->parent2 = rd_varint(&r);
	o->time_ms = (int64_t)rd_be64(&r);
	o->client_time_ms = (int64_t)rd_be64(&r);
	conf = rd_be64(&r);
	memcpy(&o->confidence, &conf, 8);
	o->actor = (const char *)rd_str(&r, &o->actor_len);
	o->source = (const char *)rd_str(&r, &o->source_len);
	o->message = (const char *)rd_str(&r, &o->message_len);
	o->trace = (const char *)rd_str(&r, &o->trace_len);
	o->first_vid = rd_varint(&r);
	o->n_versions = rd_varint(&r);
	if ((h = rd_bytes(&r, 32)))
		memcpy(o->parent_hash, h, 32);
	if ((h = rd_bytes(&r, 32)))
		memcpy(o->digest, h, 32);
	if ((h = rd_bytes(&r, 32)))
		memcpy(o->hash, h, 32);
	if (r.bad || r.p != r.end)
		return err_set(CAIRN_ECORRUPT, "a Revision is malformed");
	return 0;
}

static void hash_str(sha256_ctx *h, const char *s, size_t n)
{
	uint8_t len[8];

	be64_put(len, n);
	sha256_update(h, len, 8);
	sha256_update(h, s, n);
}

static void hash_u64(sha256_ctx *h, uint64_t v)
{
	uint8_t b[8];

	be64_put(b, v);
	sha256_update(h, b, 8);
}

void rrec_hash(uint32_t dom, uint64_t rev, const rrec *r, uint8_t out[32])
{
	sha256_ctx h;
	uint64_t conf;

	memcpy(&conf, &r->confidence, 8);
	if (sha256_init(&h)) {
		memset(out, 0, 32);
		return;
	}
	/* A format-2 revision's label differs: its digest is read another way. */
	sha256_update(&h, r->format == 1 ? "cairn-revision-1" : "cairn-revision-2", 16);
	hash_u64(&h, dom);
	hash_u64(&h, rev);
	hash_u64(&h, (uint64_t)r->type);
	hash_u64(&h, r->branch);
	hash_u64(&h, r->parent);
	hash_u64(&h, r->parent2);
	sha256_update(&h, r->parent_hash, 32);
	hash_u64(&h, (uint64_t)r->time_ms);
	hash_u64(&h, (uint64_t)r->client_time_ms);
	hash_u64(&h, conf);
	hash_str(&h, r->actor, r->actor_len);
	hash_str(&h, r->source, r->source_len);
	hash_str(&h, r->message, r->message_len);
	hash_str(&h, r->trace, r->trace_len);
	hash_u64(&h, r->first_vid);
	hash_u64(&h, r->n_versions);
	sha256_update(&h, r->digest, 32);
	sha256_final(&h, out);
}

void rrec_digest_version(sha256_ctx *h, uint64_t vid, const void *bytes, size_t n)
{
	uint8_t vb[8], vh[32];

	be64_put(vb, vid);
	sha256(bytes, n, vh);
	sha256_update(h, vb, 8);
	sha256_update(h, vh, 32);
}

/* -------------------------------------------------------------- keys -- */

void key_keys(kbuf *k, uint32_t dom, uint32_t kind, const char *key, size_t key_len)
{
	kb_init(k);
	kb_be32(k, dom);
	kb_be32(k, kind);
	kb_bytes(k, key, key_len);
	kb_u8(k, 0);
}

void key_rid(kbuf *k, uint32_t dom, uint64_t rid)
{
	kb_init(k);
	kb_be32(k, dom);
	kb_be64(k, rid);
}

void key_adj(kbuf *k, uint32_t dom, uint64_t a, uint32_t rel, uint64_t b)
{
	kb_init(k);
	kb_be32(k, dom);
	kb_be64(k, a);
	kb_be32(k, rel);
	kb_be64(k, b);
}

void key_cell(kbuf *k, uint32_t dom, int type, uint32_t branch, uint64_t id)
{
	kb_init(k);
	kb_be32(k, dom);
	kb_u8(k, (uint8_t)type);
	kb_be32(k, branch);
	kb_be64(k, id);
}

void key_u64(kbuf *k, uint32_t dom, uint64_t id)
{
	kb_init(k);
	kb_be32(k, dom);
	kb_be64(k, id);
}

/* ---------------------------------------------------- identity entries -- */

static size_t put_varint(uint8_t *o, uint64_t v)
{
	size_t n = 0;

	while (v >= 0x80) {
		o[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	o[n++] = (uint8_t)v;
	return n;
}

size_t ventry_encode(uint8_t *out, const ventry *e, int what)
{
	size_t n = 0;

	out[n++] = e->flags;
	n += put_varint(out + n, e->branch);
	n += put_varint(out + n, e->rev);
	if (what == VE_KEYS) {
		n += put_varint(out + n, e->rid);
		if (e->flags & EF_TITLE) {
			CR_ASSERT(e->title_len <= KEYS_TITLE_MAX);
			n += put_varint(out + n, e->dim);
			memcpy(out + n, e->title, e->title_len);
			n += e->title_len;
		}
	} else if (what == VE_ADJ) {
		CR_ASSERT(e->key_len <= CAIRN_MAX_KEY);
		n += put_varint(out + n, e->kind);
		memcpy(out + n, e->key, e->key_len);
		n += e->key_len;
	}
	CR_ASSERT(n <= VENTRY_MAX);
	return n;
}

int ventry_decode(const void *p, size_t n, int what, ventry *out)
{
	rdr r;

	rd_init(&r, p, n);
	out->flags = rd_u8(&r);
	out->branch = (uint32_t)rd_varint(&r);
	out->rev = rd_varint(&r);
	out->rid = 0;
	out->kind = 0;
	out->key = NULL;
	out->key_len = 0;
	out->title = NULL;
	out->title_len = 0;
	out->dim = 0;
	if (what == VE_KEYS) {
		out->rid = rd_varint(&r);
		if (out->flags & EF_TITLE) {
			uint64_t dim = rd_varint(&r);

			out->dim = (uint32_t)dim;
			out->title = (const char *)r.p;
			out->title_len = (size_t)(r.end - r.p);
			r.p = r.end;
			if (dim > UINT32_MAX || out->title_len > KEYS_TITLE_MAX ||
			    (out->flags & EF_TOMBSTONE))
				r.bad = 1;
		}
	} else if (what == VE_ADJ) {
		out->kind = (uint32_t)rd_varint(&r);
		out->key = (const char *)r.p;
		out->key_len = (size_t)(r.end - r.p);
		r.p = r.end;
		if (out->key_len == 0 || out->key_len > CAIRN_MAX_KEY)
			r.bad = 1;
	}
	if (r.bad || r.p != r.end)
		return err_set(CAIRN_ECORRUPT, "malformed index entry");
	return 0;
}

/* ----------------------------------------------------------- lookups -- */

static void ident_set(ident *out, uint64_t vid, const ventry *e)
{
	out->vid = vid;
	out->rev = e->rev;
	out->tomb = e->flags & EF_TOMBSTONE;
	out->visible = !out->tomb;
	out->has_title = (e->flags & EF_TITLE) != 0;
	out->title = e->title;
	out->title_len = e->title_len;
	out->dim = e->dim;
}

/*
 * Walk the entries of one identity (keys with prefix p, each followed by
 * ~vid) newest first, and stop at the first the view sees; for a Record,
 * then what the keys segments hold that is newer.
 */
static int ident_walk(dctx *c, int db, const kbuf *p, int what, ident *out)
{
	MDB_cursor *cur;
	MDB_val k = {p->n, (void *)p->b}, v;
	int rc;

	memset(out, 0, sizeof(*out));
	if (c->readonly && db == DB_KEYS && c->kcur) {
		cur = c->kcur;
	} else {
		rc = mdb_cursor_open(c->txn, c->st->dbi[db], &cur);
		if (rc)
			return store_err(rc, db_names[db]);
		if (c->readonly && db == DB_KEYS)
			c->kcur = cur;
	}
	c->stats.seeks++;
	for (rc = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE); rc == 0;
	     rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
		ventry e;

		c->stats.entries++;
		if (k.mv_size != p->n + 8 || memcmp(k.mv_data, p->b, p->n) != 0)
			break;
		if (ventry_decode(v.mv_data, v.mv_size, what, &e)) {
			if (cur != c->kcur)
				mdb_cursor_close(cur);
			return CAIRN_ECORRUPT;
		}
		if (!out->found && what == VE_KEYS)
			out->rid = e.rid;
		out->found = 1;
		if (!view_sees(&c->v, e.branch, e.rev))
			continue;
		ident_set(out, ~be64_get((const uint8_t *)k.mv_data + p->n), &e);
		break;
	}
	if (cur != c->kcur)
		mdb_cursor_close(cur);
	if (rc && rc != MDB_NOTFOUND)
		return store_err(rc, db_names[db]);
	if (db == DB_KEYS && out->found) {
		ventry e;
		uint64_t vid;
		int newer;

		if ((rc = kseg_newer(c, p->b, p->n, out->vid, &e, &vid, &newer)))
			return rc;
		if (newer)
			ident_set(out, vid, &e);
	}
	return 0;
}

int rec_lookup(dctx *c, uint32_t kind, const char *key, size_t key_len, ident *out)
{
	kbuf p;

	key_keys(&p, c->dom, kind, key, key_len);
	if (p.over)
		return err_set(CAIRN_EKEYLONG, "key too long");
	return ident_walk(c, DB_KEYS, &p, VE_KEYS, out);
}

/* What the view sees of the Link (from, rel, to). */
int link_lookup(dctx *d, uint64_t from, uint32_t rel, uint64_t to, ident *out)
{
	MDB_cursor *cur;
	MDB_val k, v;
	kbuf p;
	int rc;

	memset(out, 0, sizeof(*out));
	key_adj(&p, d->dom, from, rel, to);
	rc = mdb_cursor_open(d->txn, d->st->dbi[DB_ADJ], &cur);
	if (rc)
		return store_err(rc, "adj");
	k.mv_data = p.b;
	k.mv_size = p.n;
	for (rc = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE); rc == 0;
	     rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
		ventry e;

		if (k.mv_size != p.n + 8 || memcmp(k.mv_data, p.b, p.n) != 0)
			break;
		if (ventry_decode(v.mv_data, v.mv_size, VE_ADJ, &e)) {
			mdb_cursor_close(cur);
			return CAIRN_ECORRUPT;
		}
		out->found = 1;
		if (!view_sees(&d->v, e.branch, e.rev))
			continue;
		out->vid = ~be64_get((uint8_t *)k.mv_data + p.n);
		out->tomb = e.flags & EF_TOMBSTONE;
		out->visible = !out->tomb;
		break;
	}
	mdb_cursor_close(cur);
	return rc && rc != MDB_NOTFOUND ? store_err(rc, "adj") : 0;
}

int version_get(dctx *c, uint64_t vid, vrec *out)
{
	kbuf k;
	MDB_val v;
	int rc;

	key_u64(&k, c->dom, vid);
	c->stats.versions++;
	c->stats.seeks++;
	rc = db_get(c->txn, c->st, DB_VERSIONS, k.b, k.n, &v);
	if (rc == CAIRN_ENOTFOUND)
		return err_set(CAIRN_ECORRUPT, "Version %llu is missing", (unsigned long long)vid);
	if (rc)
		return rc;
	if (vrec_decode(v.mv_data, v.mv_size, out)) {
		char why[256];

		snprintf(why, sizeof(why), "%s", cairn_errmsg());
		return err_set(CAIRN_ECORRUPT, "Version %llu: %s", (unsigned long long)vid, why);
	}
	return 0;
}

/* ------------------------------------------------------------- cells -- */

int cell_get_cur(dctx *c, MDB_cursor *cur, int type, uint64_t id, const uint8_t **val,
		 size_t *len)
{
	*val = NULL;
	*len = 0;
	for (int i = 0; i < c->v.n; i++) {
		kbuf p, s;
		MDB_val k, v;
		int rc;

		key_cell(&p, c->dom, type, c->v.lv[i].branch, id);
		s = p;
		kb_be64(&s, ~c->v.lv[i].limit);
		k.mv_data = s.b;
		k.mv_size = s.n;
		c->stats.seeks++;
		c->stats.entries++;
		rc = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE);
		if (rc == MDB_NOTFOUND)
			continue;
		if (rc)
			return store_err(rc, "cells");
		if (k.mv_size == p.n + 8 && memcmp(k.mv_data, p.b, p.n) == 0) {
			*val = v.mv_data;
			*len = v.mv_size;
			return 0;
		}
	}
	return CAIRN_ENOTFOUND;
}

int cell_get(dctx *c, int type, uint64_t id, const uint8_t **val, size_t *len)
{
	MDB_cursor *cur;
	int rc = mdb_cursor_open(c->txn, c->st->dbi[DB_CELLS], &cur);

	*val = NULL;
	*len = 0;
	if (rc)
		return store_err(rc, "cells");
	rc = cell_get_cur(c, cur, type, id, val, len);
	mdb_cursor_close(cur);
	return rc;
}

static const uint8_t lcache_none[1]; /* a chunk without a cell: nothing live */

/* Remember chunk id of a read transaction's view (when memory allows: it is a cache). */
static void lcache_put(dctx *c, uint64_t id, const uint8_t *chunk)
{
	if (id >= c->lcache_n) {
		size_t n = c->lcache_n ? c->lcache_n : 64;
		const uint8_t **p;

		while (n <= id)
			n *= 2;
		if (!(p = cr_reallocarray(c->lcache, n, sizeof(*p))))
			return;
		memset(p + c->lcache_n, 0, (n - c->lcache_n) * sizeof(*p));
		c->lcache = p;
		c->lcache_n = n;
	}
	c->lcache[id] = chunk;
}

int live_test(dctx *c, uint64_t vid, int *live)
{
	uint64_t id = vid >> LIVE_CHUNK_BITS;
	unsigned bit = (unsigned)(vid & ((1u << LIVE_CHUNK_BITS) - 1));
	const uint8_t *chunk = id < c->lcache_n ? c->lcache[id] : NULL;

	*live = 0;
	if (!chunk) {
		size_t len;
		int rc = cell_get(c, CELL_LIVE, id, &chunk, &len);

		if (rc == CAIRN_ENOTFOUND)
			chunk = lcache_none;
		else if (rc)
			return rc;
		else if (len != LIVE_CHUNK_BYTES)
			return err_set(CAIRN_ECORRUPT, "live-set chunk of %zu bytes", len);
		if (c->readonly)
			lcache_put(c, id, chunk);
	}
	if (chunk != lcache_none)
		*live = (chunk[bit >> 3] >> (bit & 7)) & 1;
	return 0;
}

int count_get(dctx *c, uint32_t kind, uint64_t *n)
{
	const uint8_t *v;
	size_t len;
	int rc = cell_get(c, CELL_COUNT, kind, &v, &len);

	*n = 0;
	if (rc == CAIRN_ENOTFOUND)
		return 0;
	if (rc)
		return rc;
	if (len != 8)
		return err_set(CAIRN_ECORRUPT, "count cell of %zu bytes", len);
	*n = be64_get(v);
	return 0;
}

/* --------------------------------------------------- attribute index -- */

/* Strings: bytes with 0x00 escaped as 0x00 0xff, ended by 0x00 0x00, so prefixes sort first. */
static void enc_string(buf *b, const char *s, size_t n)
{
	size_t start = 0;

	if (n > ATTR_STRING_CAP)
		n = ATTR_STRING_CAP; /* the index keeps a prefix; equality is confirmed on the Version */
	for (size_t i = 0; i < n; i++) {
		if (s[i] != 0)
			continue;
		buf_put(b, s + start, i - start);
		buf_put(b, "\0\xff", 2);
		start = i + 1;
	}
	buf_put(b, s + start, n - start);
	buf_put(b, "\0\0", 2);
}

static void enc_int(buf *b, int64_t v)
{
	buf_put_be64(b, (uint64_t)v ^ 0x8000000000000000ull);
}

static void enc_float(buf *b, double d)
{
	uint64_t u;

	if (d == 0)
		d = 0; /* -0 sorts with 0 */
	memcpy(&u, &d, 8);
	u = (u & 0x8000000000000000ull) ? ~u : u | 0x8000000000000000ull;
	buf_put_be64(b, u);
}

int attr_encode(const attr_def *a, const jv *v, buf *b)
{
	int64_t t;

	switch (a->type) {
	case AT_STRING:
	case AT_ENUM:
	case AT_REF:
	case AT_STRINGS: /* each element is indexed on its own; the caller iterates the array */
		if (v->type != JV_STRING)
			return CAIRN_ETYPE;
		enc_string(b, v->u.s, v->len);
		return 0;
	case AT_INT:
		if (v->type != JV_INT)
			return CAIRN_ETYPE;
		enc_int(b, v->u.i);
		return 0;
	case AT_FLOAT:
		if (!jv_is_number(v))
			return CAIRN_ETYPE;
		enc_float(b, jv_number(v));
		return 0;
	case AT_BOOL:
		if (!jv_is_bool(v))
			return CAIRN_ETYPE;
		buf_put_u8(b, v->type == JV_TRUE);
		return 0;
	case AT_DATE:
		if (v->type != JV_STRING || date_parse(v->u.s, v->len, &t))
			return CAIRN_ETYPE;
		enc_int(b, t);
		return 0;
	case AT_DATETIME:
		if (v->type != JV_STRING || time_parse_rfc3339(v->u.s, v->len, &t))
			return CAIRN_ETYPE;
		enc_int(b, t);
		return 0;
	}
	return CAIRN_ETYPE;
}

size_t attr_value_len(const attr_def *a, const uint8_t *p, size_t n)
{
	switch (a->type) {
	case AT_BOOL:
		return n >= 1 ? 1 : 0;
	case AT_INT:
	case AT_FLOAT:
	case AT_DATE:
	case AT_DATETIME:
		return n >= 8 ? 8 : 0;
	default: /* strings: to the 00 00 that ends them (00 ff is an escaped NUL) */
		for (size_t i = 0; i + 1 < n; i++)
			if (p[i] == 0) {
				if (p[i + 1] == 0)
					return i + 2;
				i++;
			}
		return 0;
	}
}

void attr_prefix(kbuf *k, uint32_t dom, uint32_t kind, uint32_t attr)
{
	kb_init(k);
	kb_be32(k, dom);
	kb_be32(k, kind);
	kb_be32(k, attr);
}

int attr_key(kbuf *k, uint32_t dom, uint32_t kind, const attr_def *a, const jv *v,
	     const char *key, size_t key_len, uint64_t vid)
{
	/* Room for the longest encoding (every byte of the prefix an escaped NUL): it never grows. */
	uint8_t tmp[ATTR_STRING_CAP * 2 + 16];
	buf b = {tmp, 0, sizeof(tmp), 0};
	int rc;

	attr_prefix(k, dom, kind, a->id);
	if ((rc = attr_encode(a, v, &b)))
		return rc;
	kb_bytes(k, b.p, b.len);
	kb_bytes(k, key, key_len);
	kb_u8(k, 0);
	kb_be64(k, vid);
	return k->over ? err_set(CAIRN_ECORRUPT, "an attribute entry does not fit") : 0;
}

int attr_entry_parse(const attr_def *a, const uint8_t *k, size_t n, attr_entry *out)
{
	size_t vl, rest;
	const uint8_t *nul;

	if (n < 12 + 1 + 1 + 8)
		return -1;
	k += 12;
	n -= 12;
	if (!(vl = attr_value_len(a, k, n - 8)))
		return -1;
	out->value = k;
	out->value_len = vl;
	out->truncated = 0;
	if (vl > 8 || (a->type != AT_BOOL && a->type != AT_INT && a->type != AT_FLOAT &&
		       a->type != AT_DATE && a->type != AT_DATETIME)) {
		size_t raw = vl - 2; /* the string's bytes: escapes count once */

		for (size_t i = 0; i + 1 < vl - 2; i++)
			if (k[i] == 0 && k[i + 1] == 0xff) {
				raw--;
				i++;
			}
		out->truncated = raw >= ATTR_STRING_CAP;
	}
	rest = n - 8 - vl;
	nul = rest ? memchr(k + vl, 0, rest) : NULL;
	if (!nul || nul != k + vl + rest - 1)
		return -1;
	out->key = (const char *)(k + vl);
	out->key_len = rest - 1;
	out->vid = be64_get(k + n - 8);
	return 0;
}

/* Is enc the encoding of v, the attribute's value (or of one of its items)? */
static int value_has_encoded(const attr_def *a, const jv *v, const uint8_t *enc, size_t len)
{
	size_t n = v && a->type == AT_STRINGS ? (v->type == JV_ARRAY ? v->len : 0) : v ? 1 : 0;

	for (size_t i = 0; i < n; i++) {
		uint8_t tmp[ATTR_STRING_CAP * 2 + 16];
		buf b = {tmp, 0, sizeof(tmp), 0};

		if (!attr_encode(a, a->type == AT_STRINGS ? &v->u.items[i] : v, &b) && b.len == len &&
		    memcmp(b.p, enc, len) == 0)
			return 1;
	}
	return 0;
}

int attr_has_encoded(const attr_def *a, const jv *values, const uint8_t *enc, size_t len)
{
	return value_has_encoded(a, values ? jv_get(values, a->name) : NULL, enc, len);
}

int attr_entry_visible(dctx *d, const attr_def *a, uint32_t kind, const attr_entry *e,
		       uint64_t *vid, vrec *out)
{
	arena tmp = ARENA_INIT;
	const jv *val = NULL;
	jmember m;
	size_t pos = 0, an = strlen(a->name);
	ident id;
	int rc, r;

	*vid = 0;
	if ((rc = rec_lookup(d, kind, e->key, e->key_len, &id)) || !id.visible)
		return rc;
	if ((rc = version_get(d, id.vid, out)))
		return rc;
	if (id.vid == e->vid) {
		*vid = id.vid;
		return 0;
	}
	/* The attribute's member alone: stored values are canonical, the others are skipped. */
	while ((r = json_member_next(out->values, out->values_len, &pos, &m)) == 1)
		if (m.key_len == an && memcmp(m.key, a->name, an) == 0) {
			if (!(val = jv_parse(&tmp, m.val, m.val_len, "stored values")))
				rc = err_code() == CAIRN_ENOMEM
					     ? CAIRN_ENOMEM
					     : err_set(CAIRN_ECORRUPT, "stored values do not parse");
			break;
		}
	if (r < 0 && !rc) { /* members the walk cannot take: the whole object */
		const jv *all = jv_parse(&tmp, out->values, out->values_len, "stored values");

		if (!all)
			rc = err_code() == CAIRN_ENOMEM
				     ? CAIRN_ENOMEM
				     : err_set(CAIRN_ECORRUPT, "stored values do not parse");
		val = all ? jv_get(all, a->name) : NULL;
	}
	if (!rc && val && value_has_encoded(a, val, e->value, e->value_len))
		*vid = id.vid;
	arena_release(&tmp);
	return rc;
}
