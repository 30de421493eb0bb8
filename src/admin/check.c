/*
 * cairn check: verify a Domain from its stored bytes. The hash chain of
 * every revision is recomputed from its Versions; every index entry is
 * checked against the Version it names; the live set and counts of every
 * branch are recomputed from the identity indexes and compared with the
 * stored cells.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/json.h"
#include "model/norm.h"
#include "base/alloc.h"
#include "base/err.h"
#include "base/hmap.h"
#include "base/text.h"
#include "admin/admin.h"
#include "version/index.h"
#include "version/version.h"

typedef struct chk {
	dctx d;
	void (*cb)(void *ctx, const char *problem);
	void *ctx;
	cairn_check_report rep;
	buf tmp;
	uint32_t vdim; /* the Domain's vector dimension: every vector's */
	uint64_t horizon; /* compaction's: cells before it may be gone */
	struct kseg_seen {
		uint32_t seg, blocks, entries, seen;
		const uint8_t *bloom;
	} ks[KSEG_MAX];	/* the keys segments met so far */
	unsigned n_ks;
	uint64_t erasures;	/* erase revisions met */
} chk;

static void problem(chk *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void problem(chk *c, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	c->rep.problems++;
	if (!c->cb)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	c->cb(c->ctx, msg);
}

/* Iterate the keys of db starting with the Domain prefix. */
typedef int (*entry_fn)(chk *c, const uint8_t *k, size_t kn, const uint8_t *v, size_t vn);

static int each_entry(chk *c, int db, entry_fn fn)
{
	MDB_cursor *cur;
	MDB_val k, v;
	uint8_t p[4];
	int mrc, rc = 0;

	be32_put(p, c->d.dom);
	mrc = mdb_cursor_open(c->d.txn, c->d.st->dbi[db], &cur);
	if (mrc)
		return store_err(mrc, db_names[db]);
	k.mv_data = p;
	k.mv_size = 4;
	for (mrc = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE); mrc == 0 && !rc;
	     mrc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
		if (k.mv_size < 4 || memcmp(k.mv_data, p, 4) != 0)
			break;
		rc = fn(c, k.mv_data, k.mv_size, v.mv_data, v.mv_size);
	}
	mdb_cursor_close(cur);
	if (rc)
		return rc;
	return mrc && mrc != MDB_NOTFOUND ? store_err(mrc, db_names[db]) : 0;
}

/* Fetch Version vid; a missing or undecodable one is a problem (returns 1). */
static int get_version(chk *c, uint64_t vid, vrec *v, const char *what)
{
	kbuf k;
	MDB_val val;
	int rc;

	key_u64(&k, c->d.dom, vid);
	rc = db_get(c->d.txn, c->d.st, DB_VERSIONS, k.b, k.n, &val);
	if (rc == CAIRN_ENOTFOUND) {
		problem(c, "%s names Version %llu, which does not exist", what,
			(unsigned long long)vid);
		return 1;
	}
	if (rc)
		return rc;
	if (vrec_decode(val.mv_data, val.mv_size, v)) {
		problem(c, "Version %llu does not decode: %s", (unsigned long long)vid, cairn_errmsg());
		return 1;
	}
	return 0;
}

/* ---------------------------------------------------------- revisions -- */

/* Is branch id deleted (cleared or being cleared)? */
static int branch_gone(chk *c, uint32_t id)
{
	branch_info b;
	int rc = branch_get(c->d.txn, c->d.st, c->d.dom, id, &b);

	return rc == CAIRN_ENOTFOUND || (!rc && b.state != BRANCH_LIVE);
}

/*
 * An erase revision's digest: the SHA-256 of the vids it erased (catalog
 * dom 'R' rev, be64 each, ascending); each of them a stub it erased, but
 * while that erase is pending (dom 'r') or its branch was deleted since.
 */
static int erase_digest(chk *c, uint64_t rev, sha256_ctx *sh)
{
	const uint8_t *p;
	uint64_t pending;
	size_t n;
	int rc;

	if ((rc = erase_pending(c->d.txn, c->d.st, c->d.dom, &pending)))
		return rc;
	rc = erase_list_get(c->d.txn, c->d.st, c->d.dom, rev, &p, &n);
	if (rc == CAIRN_ENOTFOUND) {
		problem(c, "revision %llu: the list of what it erased is missing",
			(unsigned long long)rev);
		return 0;
	}
	if (rc)
		return rc;
	sha256_update(sh, p, n * 8);
	for (size_t i = 0; i < n && pending != rev; i++) {
		uint64_t vid = be64_get(p + 8 * i);
		kbuf k;
		MDB_val v;
		vrec ver;

		key_u64(&k, c->d.dom, vid);
		rc = db_get(c->d.txn, c->d.st, DB_VERSIONS, k.b, k.n, &v);
		if (rc == CAIRN_ENOTFOUND)
			continue; /* (its branch was deleted and cleared) */
		if (rc)
			return rc;
		if (vrec_decode(v.mv_data, v.mv_size, &ver) || !ver.orig_hash ||
		    ver.erased_by != rev)
			problem(c, "revision %llu erased Version %llu, which is not its stub",
				(unsigned long long)rev, (unsigned long long)vid);
	}
	return 0;
}

static int check_revisions(chk *c)
{
	counters ctr;
	int rc = counters_get(c->d.txn, c->d.st, c->d.dom, &ctr);
	uint64_t expect_vid = 1;

	if (rc)
		return rc;
	for (uint64_t rev = 1; rev < ctr.next_rev; rev++) {
		kbuf k;
		MDB_val v;
		rrec r, pr;
		uint8_t h[32], ph[32] = {0};
		sha256_ctx sh;
		uint64_t stubs;
		int gone;

		key_u64(&k, c->d.dom, rev);
		rc = db_get(c->d.txn, c->d.st, DB_REVS, k.b, k.n, &v);
		if (rc == CAIRN_ENOTFOUND) {
			problem(c, "revision %llu is missing", (unsigned long long)rev);
			continue;
		}
		if (rc)
			return rc;
		if (rrec_decode(v.mv_data, v.mv_size, &r)) {
			problem(c, "revision %llu does not decode", (unsigned long long)rev);
			continue;
		}
		c->rep.revisions++;
		/* A deleted branch's Versions are cleared; its revisions stay, chained. */
		gone = branch_gone(c, r.branch);
		if (r.parent) {
			key_u64(&k, c->d.dom, r.parent);
			if (r.parent >= rev || db_get(c->d.txn, c->d.st, DB_REVS, k.b, k.n, &v) ||
			    rrec_decode(v.mv_data, v.mv_size, &pr)) {
				problem(c, "revision %llu: parent %llu is missing or later",
					(unsigned long long)rev, (unsigned long long)r.parent);
				continue;
			}
			memcpy(ph, pr.hash, 32);
		}
		if (memcmp(ph, r.parent_hash, 32) != 0)
			problem(c, "revision %llu: the parent hash does not match revision %llu",
				(unsigned long long)rev, (unsigned long long)r.parent);
		if (gone) {
			if (r.n_versions)
				expect_vid = r.first_vid + r.n_versions;
			rrec_hash(c->d.dom, rev, &r, h);
			if (memcmp(h, r.hash, 32) != 0)
				problem(c, "revision %llu: its hash does not match its contents",
					(unsigned long long)rev);
			continue;
		}
		if (sha256_init(&sh))
			return err_set(CAIRN_ENOMEM, "out of memory");
		if (r.type == CAIRN_REV_VECTORS) {
			uint8_t b[4];
			uint32_t d;
			char m[VEC_MODEL_MAX + 1];

			if ((rc = vec_reembed_get(c->d.txn, c->d.st, c->d.dom, rev, &d, m))) {
				sha256_final(&sh, h);
				if (rc != CAIRN_ENOTFOUND)
					return rc;
				problem(c, "revision %llu: the model it re-embedded with is missing",
					(unsigned long long)rev);
				continue;
			}
			be32_put(b, d);
			sha256_update(&sh, b, 4);
			sha256_update(&sh, m, strlen(m));
		}
		if (r.type == CAIRN_REV_SCHEMA) {
			const char *json;
			size_t len;

			if ((rc = schema_json_at(c->d.txn, c->d.st, c->d.dom, rev, &json, &len))) {
				sha256_final(&sh, h);
				return rc;
			}
			sha256_update(&sh, json, len);
		}
		if (r.first_vid != expect_vid && r.n_versions)
			problem(c, "revision %llu: Versions start at %llu, not %llu",
				(unsigned long long)rev, (unsigned long long)r.first_vid,
				(unsigned long long)expect_vid);
		c->erasures += r.type == CAIRN_REV_ERASE;
		if (r.type == CAIRN_REV_ERASE && (rc = erase_digest(c, rev, &sh))) {
			sha256_final(&sh, h);
			return rc;
		}
		stubs = 0;
		for (uint64_t vid = r.first_vid; vid < r.first_vid + r.n_versions; vid++) {
			uint8_t vb[8];
			vrec ver;

			key_u64(&k, c->d.dom, vid);
			rc = db_get(c->d.txn, c->d.st, DB_VERSIONS, k.b, k.n, &v);
			if (rc == CAIRN_ENOTFOUND) {
				problem(c, "revision %llu: Version %llu is missing",
					(unsigned long long)rev, (unsigned long long)vid);
				continue;
			}
			if (rc) {
				sha256_final(&sh, h);
				return rc;
			}
			c->rep.versions++;
			if (vrec_decode(v.mv_data, v.mv_size, &ver)) {
				problem(c, "Version %llu does not decode", (unsigned long long)vid);
				continue;
			}
			be64_put(vb, vid);
			sha256_update(&sh, vb, 8);
			if (ver.orig_hash) /* a stub keeps the hash of what it erased */
				sha256_update(&sh, ver.orig_hash, 32);
			else if (r.format == 1)
				sha256_update(&sh, v.mv_data, v.mv_size);
			else {
				uint8_t vh[32];

				sha256(v.mv_data, v.mv_size, vh);
				sha256_update(&sh, vh, 32);
			}
			stubs += ver.orig_hash != NULL;
			if (ver.rev != rev || ver.branch != r.branch)
				problem(c, "Version %llu claims revision %llu on branch %u",
					(unsigned long long)vid, (unsigned long long)ver.rev,
					ver.branch);
		}
		if (r.n_versions)
			expect_vid = r.first_vid + r.n_versions;
		sha256_final(&sh, h);
		if (stubs && r.format == 1)
			c->rep.unverifiable++; /* took the erased bytes: the chain alone is verified */
		else if (memcmp(h, r.digest, 32) != 0)
			problem(c, "revision %llu: its changes do not match their digest",
				(unsigned long long)rev);
		rrec_hash(c->d.dom, rev, &r, h);
		if (memcmp(h, r.hash, 32) != 0)
			problem(c, "revision %llu: its hash does not match its contents",
				(unsigned long long)rev);
	}
	if (expect_vid != ctr.next_vid)
		problem(c, "the Domain's next Version is %llu, but revisions end at %llu",
			(unsigned long long)ctr.next_vid, (unsigned long long)expect_vid);
	return 0;
}

/* ------------------------------------------------------------ indexes -- */

static int check_key_entry(chk *c, const uint8_t *k, size_t kn, const uint8_t *v, size_t vn)
{
	uint64_t vid;
	vrec ver;
	int rc;

	ventry e;

	c->rep.index_entries++;
	if (kn < 4 + 4 + 1 + 8 || k[kn - 9] != 0 || ventry_decode(v, vn, VE_KEYS, &e)) {
		problem(c, "keys: malformed entry");
		return 0;
	}
	vid = ~be64_get(k + kn - 8);
	if ((rc = get_version(c, vid, &ver, "a keys entry")))
		return rc > 0 ? 0 : rc;
	if (!vtype_rec(ver.type) || ver.kr != be32_get(k + 4) ||
	    !(e.flags & EF_ERASED) != (ver.type != V_REC_ERASED) ||
	    ver.key_len != kn - 17 || memcmp(ver.key, k + 8, ver.key_len) != 0 ||
	    ver.rid != e.rid || ver.branch != e.branch || ver.rev != e.rev ||
	    !(e.flags & EF_TOMBSTONE) != (ver.type == V_REC) ||
	    ((e.flags & EF_TITLE) &&
	     (e.title_len != ver.title_len || e.dim != ver.dim ||
	      memcmp(e.title, ver.title, e.title_len) != 0)))
		problem(c, "keys entry for Version %llu does not match it", (unsigned long long)vid);
	return 0;
}

/*
 * A keys segment: its descriptor comes first (dom 0 seg), then its entries,
 * each checked as a keys entry, in its segment's filter, of an identity
 * keys has (a Record's first entry stays there).
 */
static int check_kseg_entry(chk *c, const uint8_t *k, size_t kn, const uint8_t *v, size_t vn)
{
	uint8_t mk[4 + 4 + CAIRN_MAX_KEY + 1 + 8];
	struct kseg_seen *s = NULL;
	uint32_t seg;
	MDB_val mv;
	int rc;

	if (kn < 8) {
		problem(c, "kseg: malformed entry");
		return 0;
	}
	seg = be32_get(k + 4);
	if (seg == 0) {
		if (kn != 12 || c->n_ks == KSEG_MAX) {
			problem(c, "kseg: malformed descriptor or more than %u segments", KSEG_MAX);
			return 0;
		}
		s = &c->ks[c->n_ks];
		if (kseg_desc_decode(v, vn, &s->entries, &s->blocks, &s->bloom)) {
			problem(c, "kseg: segment %u: malformed descriptor", be32_get(k + 8));
			return 0;
		}
		s->seg = be32_get(k + 8);
		s->seen = 0;
		c->n_ks++;
		return 0;
	}
	for (unsigned i = 0; i < c->n_ks; i++)
		if (c->ks[i].seg == seg)
			s = &c->ks[i];
	if (!s) {
		problem(c, "kseg: entries of segment %u, which has no descriptor", seg);
		return 0;
	}
	s->seen++;
	if (kn < 4 + 4 + 4 + 1 + 8 || kn - 4 > sizeof(mk)) {
		problem(c, "kseg: malformed entry");
		return 0;
	}
	memcpy(mk, k, 4);
	memcpy(mk + 4, k + 8, kn - 8);
	if (!kseg_bloom_has(s->bloom, s->blocks, kseg_hash(mk, kn - 12)))
		problem(c, "kseg: segment %u: an entry its filter does not hold", seg);
	if ((rc = check_key_entry(c, mk, kn - 4, v, vn)))
		return rc;
	/* The identity's first entry in keys: any entry at or above ~vid's 0. */
	{
		MDB_cursor *cur;
		MDB_val kk = {kn - 12, mk};
		int mrc = mdb_cursor_open(c->d.txn, c->d.st->dbi[DB_KEYS], &cur);

		if (mrc)
			return store_err(mrc, "keys");
		mrc = mdb_cursor_get(cur, &kk, &mv, MDB_SET_RANGE);
		if (mrc == 0 && (kk.mv_size != kn - 4 || memcmp(kk.mv_data, mk, kn - 12) != 0))
			mrc = MDB_NOTFOUND;
		mdb_cursor_close(cur);
		if (mrc && mrc != MDB_NOTFOUND)
			return store_err(mrc, "keys");
		if (mrc)
			problem(c, "kseg: segment %u: an entry of a Record keys does not have", seg);
	}
	return 0;
}

static int kseg_counts(chk *c)
{
	for (unsigned i = 0; i < c->n_ks; i++)
		if (c->ks[i].seen != c->ks[i].entries)
			problem(c, "kseg: segment %u has %u entries, its descriptor says %u",
				c->ks[i].seg, c->ks[i].seen, c->ks[i].entries);
	return 0;
}

/*
 * Whether keys has an entry of Record rid under (kind, key): an adjacency
 * entry's copy of its other end, which reads of Links return as they are.
 * (A deleted branch's entries go in no set order while it is cleared.)
 */
static int names_record(chk *c, uint32_t kind, const char *key, size_t key_len, uint64_t rid)
{
	uint8_t p[4 + 4 + CAIRN_MAX_KEY + 1];
	MDB_cursor *cur;
	MDB_val k, v;
	int mrc, found = 0;

	if (key_len > CAIRN_MAX_KEY)
		return 0;
	be32_put(p, c->d.dom);
	be32_put(p + 4, kind);
	memcpy(p + 8, key, key_len);
	p[8 + key_len] = 0;
	if (mdb_cursor_open(c->d.txn, c->d.st->dbi[DB_KEYS], &cur))
		return 0;
	k.mv_data = p;
	k.mv_size = 9 + key_len;
	for (mrc = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE); mrc == 0 && !found;
	     mrc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
		ventry e;

		if (k.mv_size != 17 + key_len || memcmp(k.mv_data, p, 9 + key_len) != 0)
			break;
		found = ventry_decode(v.mv_data, v.mv_size, VE_KEYS, &e) == 0 && e.rid == rid;
	}
	mdb_cursor_close(cur);
	return found;
}

static int check_adj(chk *c, const uint8_t *k, size_t kn, const uint8_t *v, size_t vn, int rev)
{
	uint64_t vid, a, b;
	vrec ver;
	int rc;

	ventry e;

	c->rep.index_entries++;
	if (kn != 32 || ventry_decode(v, vn, VE_ADJ, &e)) {
		problem(c, "%s: malformed entry", rev ? "adj_rev" : "adj");
		return 0;
	}
	vid = ~be64_get(k + 24);
	if ((rc = get_version(c, vid, &ver, rev ? "an adj_rev entry" : "an adj entry")))
		return rc > 0 ? 0 : rc;
	a = be64_get(k + 4);
	b = be64_get(k + 16);
	if (!vtype_link(ver.type) || ver.kr != be32_get(k + 12) ||
	    !(e.flags & EF_ERASED) != (ver.type != V_LINK_ERASED) ||
	    ver.from_rid != (rev ? b : a) || ver.to_rid != (rev ? a : b) ||
	    ver.branch != e.branch || ver.rev != e.rev ||
	    !(e.flags & EF_TOMBSTONE) != (ver.type == V_LINK) ||
	    (!names_record(c, e.kind, e.key, e.key_len, b) && !branch_gone(c, e.branch)))
		problem(c, "%s entry for Version %llu does not match it", rev ? "adj_rev" : "adj",
			(unsigned long long)vid);
	return 0;
}

static int check_adj_entry(chk *c, const uint8_t *k, size_t kn, const uint8_t *v, size_t vn)
{
	return check_adj(c, k, kn, v, vn, 0);
}

static int check_adjr_entry(chk *c, const uint8_t *k, size_t kn, const uint8_t *v, size_t vn)
{
	return check_adj(c, k, kn, v, vn, 1);
}

static int check_attr_entry(chk *c, const uint8_t *k, size_t kn, const uint8_t *v, size_t vn)
{
	const kind_def *kd;
	const attr_def *a;
	arena tmp = ARENA_INIT;
	const jv *vals, *val;
	attr_entry ae;
	uint64_t vid;
	vrec ver;
	int rc, found = 0;

	(void)v;
	(void)vn;
	c->rep.index_entries++;
	kd = kn >= 12 ? schema_kind_id(c->d.s, be32_get(k + 4)) : NULL;
	a = kd ? kind_attr_id(kd, be32_get(k + 8)) : NULL;
	if (!a || attr_entry_parse(a, k, kn, &ae)) {
		problem(c, "attr: malformed entry");
		return 0;
	}
	vid = ae.vid;
	if ((rc = get_version(c, vid, &ver, "an attr entry")))
		return rc > 0 ? 0 : rc;
	if (ver.type != V_REC || ver.kr != kd->id || ver.key_len != ae.key_len ||
	    memcmp(ver.key, ae.key, ae.key_len) != 0) {
		problem(c, "attr entry for Version %llu does not match it", (unsigned long long)vid);
		return 0;
	}
	vals = jv_parse(&tmp, ver.values, ver.values_len, "values");
	if (!vals) {
		arena_release(&tmp);
		problem(c, "Version %llu: values do not parse", (unsigned long long)vid);
		return 0;
	}
	val = jv_get(vals, a->name);
	if (a->type == AT_STRINGS && !jv_is(val, JV_ARRAY))
		val = NULL;
	for (size_t i = 0; val && i < (a->type == AT_STRINGS ? val->len : 1); i++) {
		buf_reset(&c->tmp);
		if (attr_encode(a, a->type == AT_STRINGS ? &val->u.items[i] : val, &c->tmp))
			continue;
		if (c->tmp.len == ae.value_len && memcmp(c->tmp.p, ae.value, ae.value_len) == 0)
			found = 1;
	}
	arena_release(&tmp);
	if (!found)
		problem(c, "attr entry for Version %llu names a value it does not have",
			(unsigned long long)vid);
	return 0;
}



static int check_vector_entry(chk *c, const uint8_t *k, size_t kn, const uint8_t *v, size_t vn)
{
	uint64_t vid;
	vrec ver;
	int rc;

	(void)v;
	c->rep.index_entries++;
	if (kn != 12) {
		problem(c, "vectors: malformed entry");
		return 0;
	}
	vid = be64_get(k + 4);
	if ((rc = get_version(c, vid, &ver, "a vector")))
		return rc > 0 ? 0 : rc;
	if (ver.type != V_REC || !ver.dim || (size_t)c->vdim * sizeof(float) != vn)
		problem(c, "the vector of Version %llu does not match it", (unsigned long long)vid);
	return 0;
}


/* The secondary indexes, each through its own check (version/index.h). */
static void ix_problem(index_check *k, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void ix_problem(index_check *k, const char *fmt, ...)
{
	chk *c = k->ctx;
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	problem(c, "%s", msg);
}

static int ix_version(index_check *k, uint64_t vid, vrec *v, const char *what)
{
	return get_version(k->ctx, vid, v, what);
}

static int ix_branch_gone(index_check *k, uint32_t branch)
{
	return branch_gone(k->ctx, branch);
}

static int check_indexes(chk *c)
{
	index_check k = {&c->d, c->vdim, &c->rep.index_entries, ix_problem, ix_version,
			 ix_branch_gone, c};
	int rc = 0;

	for (const index_ops *const *ix = index_registry; *ix && !rc; ix++)
		if ((*ix)->check)
			rc = (*ix)->check(&k);
	return rc;
}

/* ---------------------------------------------------- live sets, counts -- */

struct live_calc {
	chk *c;
	hmap live;	/* chunk id -> index into bits */
	uint8_t *bits;
	size_t n_chunks;
	uint64_t *counts; /* per Kind */
	uint8_t last[4 + 8 + 4 + 8 + CAIRN_MAX_KEY + 8];
	size_t last_len;
};

/* The chunk of vid, made (empty) when new; its bit set when on. */
static int live_mark(struct live_calc *lc, uint64_t vid, int on)
{
	uint8_t mk[8];
	uint64_t *slot, id = vid >> LIVE_CHUNK_BITS;
	unsigned bit = (unsigned)(vid & ((1u << LIVE_CHUNK_BITS) - 1));
	int isnew;

	be64_put(mk, id);
	slot = hmap_put(&lc->live, mk, 8, &isnew);
	if (!slot)
		return err_set(CAIRN_ENOMEM, "out of memory");
	if (isnew) {
		uint8_t *nb = cr_realloc(lc->bits, (lc->n_chunks + 1) * LIVE_CHUNK_BYTES);

		if (!nb)
			return err_set(CAIRN_ENOMEM, "out of memory");
		lc->bits = nb;
		memset(nb + lc->n_chunks * LIVE_CHUNK_BYTES, 0, LIVE_CHUNK_BYTES);
		*slot = lc->n_chunks++;
	}
	if (on)
		lc->bits[*slot * LIVE_CHUNK_BYTES + (bit >> 3)] |= (uint8_t)(1u << (bit & 7));
	return 0;
}

static int live_add(struct live_calc *lc, uint64_t vid)
{
	return live_mark(lc, vid, 1);
}

/*
 * Every indexed value of a Record Version a branch sees has an attribute
 * entry of that value and Record: its own, or one an earlier Version wrote
 * that it relies on (storage.md, "The attribute index").
 */
static int attr_complete(chk *c, uint32_t kind, uint64_t vid)
{
	const kind_def *kd = schema_kind_id(c->d.s, kind);
	arena tmp = ARENA_INIT;
	MDB_cursor *cur = NULL;
	const jv *vals;
	vrec ver;
	int rc, mrc;

	if (!kd || (rc = get_version(c, vid, &ver, "a keys entry")) > 0)
		return 0;
	if (rc || ver.type != V_REC)
		return rc;
	if (!(vals = jv_parse(&tmp, ver.values, ver.values_len, "values"))) {
		arena_release(&tmp);
		return 0; /* reported by the entry checks */
	}
	for (size_t i = 0; i < kd->n_attrs && !rc; i++) {
		const attr_def *a = &kd->attrs[i];
		const jv *val = jv_get(vals, a->name);
		size_t n = val && a->type == AT_STRINGS ? (val->type == JV_ARRAY ? val->len : 0) : 1;

		if (!(a->flags & AF_INDEXED) || !val)
			continue;
		for (size_t j = 0; j < n && !rc; j++) {
			MDB_val k, v;
			kbuf p;

			if (attr_key(&p, c->d.dom, kind, a, a->type == AT_STRINGS ? &val->u.items[j] : val,
				     ver.key, ver.key_len, 0))
				continue;
			p.n -= 8; /* any Version's */
			if (!cur && (mrc = mdb_cursor_open(c->d.txn, c->d.st->dbi[DB_ATTR], &cur))) {
				rc = store_err(mrc, "attr");
				break;
			}
			k.mv_data = p.b;
			k.mv_size = p.n;
			mrc = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE);
			if (mrc && mrc != MDB_NOTFOUND)
				rc = store_err(mrc, "attr");
			else if (mrc || k.mv_size != p.n + 8 || memcmp(k.mv_data, p.b, p.n) != 0)
				problem(c, "branch %s: %s %.*s has a value of %s without an attribute "
					   "entry",
					c->d.br.name, kd->name, (int)ver.key_len, ver.key, a->name);
		}
	}
	if (cur)
		mdb_cursor_close(cur);
	arena_release(&tmp);
	return rc;
}

/* Identity-grouped entries: the first the view sees per identity decides. */
static int live_from(struct live_calc *lc, const uint8_t *k, size_t kn, const uint8_t *v,
		     size_t vn, int what, int count)
{
	size_t id_len = kn - 8;
	uint64_t vid;
	ventry e;
	int rc, newer;

	if (id_len > sizeof(lc->last) || ventry_decode(v, vn, what, &e))
		return 0; /* reported by the entry checks */
	if (lc->last_len == id_len && memcmp(lc->last, k, id_len) == 0)
		return 0;
	if (!view_sees(&lc->c->d.v, e.branch, e.rev))
		return 0;
	memcpy(lc->last, k, id_len);
	lc->last_len = id_len;
	vid = ~be64_get(k + kn - 8);
	if (what == VE_KEYS && (rc = kseg_newer(&lc->c->d, k, id_len, vid, &e, &vid, &newer)))
		return rc;
	if (e.flags & EF_TOMBSTONE)
		return 0;
	if (count) {
		uint32_t kind = be32_get(k + 4);

		if (kind && kind <= lc->c->d.s->n_kinds)
			lc->counts[kind]++;
		if ((rc = attr_complete(lc->c, kind, vid)))
			return rc;
	}
	return live_add(lc, vid);
}

static _Thread_local struct live_calc *cur_lc;

static int live_keys(chk *c, const uint8_t *k, size_t kn, const uint8_t *v, size_t vn)
{
	(void)c;
	return live_from(cur_lc, k, kn, v, vn, VE_KEYS, 1);
}

static int live_links(chk *c, const uint8_t *k, size_t kn, const uint8_t *v, size_t vn)
{
	(void)c;
	return live_from(cur_lc, k, kn, v, vn, VE_ADJ, 0);
}

/* Compare the stored live set of the branch with the computed one. */
static int live_compare(chk *c, struct live_calc *lc, const char *branch)
{
	MDB_cursor *cur;
	MDB_val k, v;
	kbuf p;
	uint64_t id = 0;
	int mrc;

	/* Every computed chunk must match the stored one. */
	for (size_t i = 0; i < lc->live.cap; i++) {
		const uint8_t *val;
		size_t len;
		int rc;

		if (!lc->live.slots[i].hash)
			continue;
		id = be64_get(lc->live.slots[i].key);
		rc = cell_get(&c->d, CELL_LIVE, id, &val, &len);
		if (rc && rc != CAIRN_ENOTFOUND)
			return rc;
		if (rc || len != LIVE_CHUNK_BYTES ||
		    memcmp(val, lc->bits + lc->live.slots[i].val * LIVE_CHUNK_BYTES,
			   LIVE_CHUNK_BYTES) != 0)
			problem(c, "branch %s: the live set differs from history in vids %llu..%llu",
				branch, (unsigned long long)(id << LIVE_CHUNK_BITS),
				(unsigned long long)((id + 1) << LIVE_CHUNK_BITS) - 1);
	}
	/* A stored chunk with live vids that history does not have. */
	for (int i = 0; i < c->d.v.n; i++) {
		key_cell(&p, c->d.dom, CELL_LIVE, c->d.v.lv[i].branch, 0);
		p.n -= 8;
		mrc = mdb_cursor_open(c->d.txn, c->d.st->dbi[DB_CELLS], &cur);
		if (mrc)
			return store_err(mrc, "cells");
		k.mv_data = p.b;
		k.mv_size = p.n;
		for (mrc = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE); mrc == 0;
		     mrc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
			uint8_t mk[8];
			const uint8_t *val;
			size_t len;
			int rc, nonzero = 0;

			if (k.mv_size != p.n + 16 || memcmp(k.mv_data, p.b, p.n) != 0)
				break;
			id = be64_get((uint8_t *)k.mv_data + p.n);
			memcpy(mk, (uint8_t *)k.mv_data + p.n, 8);
			if (hmap_get(&lc->live, mk, 8))
				continue;
			rc = cell_get(&c->d, CELL_LIVE, id, &val, &len);
			if (rc && rc != CAIRN_ENOTFOUND) {
				mdb_cursor_close(cur);
				return rc;
			}
			for (size_t j = 0; !rc && j < len; j++)
				nonzero |= val[j];
			if (nonzero)
				problem(c, "branch %s: the live set has vids in %llu..%llu that "
					   "history does not",
					branch, (unsigned long long)(id << LIVE_CHUNK_BITS),
					(unsigned long long)((id + 1) << LIVE_CHUNK_BITS) - 1);
		}
		mdb_cursor_close(cur);
	}
	return 0;
}

static int check_branch(chk *c, uint32_t id)
{
	struct live_calc lc;
	branch_info b;
	char name[CAIRN_MAX_BRANCH + 1];
	int rc;

	if ((rc = branch_get(c->d.txn, c->d.st, c->d.dom, id, &b)))
		return rc;
	if (b.state != BRANCH_LIVE)
		return 0; /* being cleared */
	snprintf(name, sizeof(name), "%s", b.name);
	{
		dctx bv;

		if ((rc = dctx_branch(&c->d, id, &bv)))
			return rc;
		c->d.br = bv.br;
		c->d.v = bv.v;
	}
	memset(&lc, 0, sizeof(lc));
	lc.c = c;
	lc.counts = cr_calloc(c->d.s->n_kinds + 1, sizeof(uint64_t));
	if (!lc.counts)
		return err_set(CAIRN_ENOMEM, "out of memory");
	cur_lc = &lc;
	rc = each_entry(c, DB_KEYS, live_keys);
	lc.last_len = 0;
	if (!rc)
		rc = each_entry(c, DB_ADJ, live_links);
	if (!rc)
		rc = live_compare(c, &lc, name);
	for (uint32_t k = 1; !rc && k <= c->d.s->n_kinds; k++) {
		uint64_t n;

		rc = count_get(&c->d, k, &n);
		if (!rc && n != lc.counts[k])
			problem(c, "branch %s: %s counts %llu Records, history has %llu", name,
				c->d.s->kinds[k - 1].name, (unsigned long long)n,
				(unsigned long long)lc.counts[k]);
	}
	hmap_release(&lc.live);
	cr_free(lc.bits);
	cr_free(lc.counts);
	return rc;
}

/*
 * Replay main's history: apply every Version in revision order to a live
 * set and counts of our own, and compare each cell the commits stored (at
 * the revision that wrote it) with the replayed state. This verifies the
 * live sets and counts at every past revision, which reads at that
 * revision rely on, not only at the head. The other branches are checked
 * at their heads (check_branch).
 */
static int prev_type(chk *c, uint64_t prev, int *type)
{
	vrec p;
	int rc;

	*type = 0;
	if (!prev)
		return 0;
	rc = get_version(c, prev, &p, "a previous-Version link");
	if (rc > 0)
		return 0;
	if (!rc)
		*type = p.type;
	return rc;
}

static int cell_at(chk *c, int type, uint64_t id, uint64_t rev, MDB_val *v)
{
	kbuf k;

	key_cell(&k, c->d.dom, type, MAIN_BRANCH_ID, id);
	kb_be64(&k, ~rev);
	return db_get(c->d.txn, c->d.st, DB_CELLS, k.b, k.n, v);
}

/*
 * Was the cell of main that revision rev wrote for (type, id) removed by a
 * compaction? Only if the horizon is past it and main wrote the chunk
 * again, before the horizon.
 */
static int cell_compacted(chk *c, int type, uint64_t id, uint64_t rev)
{
	MDB_cursor *cur;
	MDB_val k, v;
	kbuf p, s;
	int ok = 0;

	if (rev >= c->horizon || mdb_cursor_open(c->d.txn, c->d.st->dbi[DB_CELLS], &cur))
		return 0;
	key_cell(&p, c->d.dom, type, MAIN_BRANCH_ID, id);
	s = p;
	kb_be64(&s, ~c->horizon);
	k.mv_data = s.b;
	k.mv_size = s.n;
	if (mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE) == 0 && k.mv_size == s.n &&
	    memcmp(k.mv_data, p.b, p.n) == 0)
		ok = ~be64_get((const uint8_t *)k.mv_data + p.n) > rev;
	mdb_cursor_close(cur);
	return ok;
}

static int check_replay(chk *c)
{
	struct live_calc lc;
	counters ctr;
	int64_t *delta = NULL;
	int64_t *odelta = NULL; /* what the revision wrote, before any erasure */
	uint8_t *maybe = NULL;	/* Kinds whose count an erasure may have left a cell of */
	uint64_t *touched = NULL, expected = 0, stored = 0;
	size_t n_touched, cap_touched = 0;
	int rc;

	memset(&lc, 0, sizeof(lc));
	lc.c = c;
	if ((rc = counters_get(c->d.txn, c->d.st, c->d.dom, &ctr)))
		return rc;
	lc.counts = cr_calloc(c->d.s->n_kinds + 1, sizeof(uint64_t));
	delta = cr_calloc(c->d.s->n_kinds + 1, sizeof(int64_t));
	odelta = cr_calloc(c->d.s->n_kinds + 1, sizeof(int64_t));
	maybe = cr_calloc(c->d.s->n_kinds + 1, 1);
	if (!lc.counts || !delta || !odelta || !maybe) {
		rc = err_set(CAIRN_ENOMEM, "out of memory");
		goto out;
	}
	for (uint64_t rev = 1; rev < ctr.next_rev && !rc; rev++) {
		kbuf k;
		MDB_val v;
		rrec r;

		key_u64(&k, c->d.dom, rev);
		if (db_get(c->d.txn, c->d.st, DB_REVS, k.b, k.n, &v) ||
		    rrec_decode(v.mv_data, v.mv_size, &r) || r.branch != MAIN_BRANCH_ID)
			continue; /* missing revisions are reported by check_revisions */
		n_touched = 0;
		memset(delta, 0, (c->d.s->n_kinds + 1) * sizeof(int64_t));
		memset(odelta, 0, (c->d.s->n_kinds + 1) * sizeof(int64_t));
		memset(maybe, 0, c->d.s->n_kinds + 1);
		for (uint64_t vid = r.first_vid; vid < r.first_vid + r.n_versions && !rc; vid++) {
			uint64_t ids[2] = {vid >> LIVE_CHUNK_BITS, 0};
			int n_ids = 0, pt;
			vrec ver;

			if ((rc = get_version(c, vid, &ver, "a revision")) > 0) {
				rc = 0;
				continue;
			}
			if (rc || (rc = prev_type(c, ver.prev, &pt)))
				break;
			/*
			 * The cells a revision wrote follow the types it wrote (a
			 * stub's is the one it erased); the bits and counts in them
			 * follow what is left: a stub is not live nor counted.
			 */
			if (vtype_orig(ver.type) == V_REC || vtype_orig(ver.type) == V_LINK) {
				/* (a stub's chunk was written all the same) */
				rc = live_mark(&lc, vid, ver.type == V_REC || ver.type == V_LINK);
				n_ids = 1;
			}
			if (!rc && ((vtype_orig(pt) == V_REC && vtype_rec(ver.type)) ||
				    (vtype_orig(pt) == V_LINK && vtype_link(ver.type)))) {
				uint8_t mk[8];
				uint64_t *slot;
				unsigned bit = (unsigned)(ver.prev & ((1u << LIVE_CHUNK_BITS) - 1));

				be64_put(mk, ver.prev >> LIVE_CHUNK_BITS);
				slot = hmap_get(&lc.live, mk, 8);
				if (slot)
					lc.bits[*slot * LIVE_CHUNK_BYTES + (bit >> 3)] &=
						(uint8_t) ~(1u << (bit & 7));
				ids[n_ids++] = ver.prev >> LIVE_CHUNK_BITS;
			}
			if (ver.kr <= c->d.s->n_kinds && vtype_rec(ver.type)) {
				int o = vtype_orig(ver.type), op = vtype_orig(pt);

				/* A cell where the count changed then (odelta), or changes now. */
				delta[ver.kr] += (ver.type == V_REC) - (pt == V_REC);
				odelta[ver.kr] += (o == V_REC) - (op == V_REC);
				/*
				 * An erasure may leave a cell where the count came to
				 * change by nothing (two Records' corrections that
				 * cancel): kept, it must hold the count.
				 */
				maybe[ver.kr] |= c->erasures != 0;
			}
			for (int i = 0; i < n_ids && !rc; i++) {
				size_t j;

				for (j = 0; j < n_touched && touched[j] != ids[i]; j++)
					;
				if (j < n_touched)
					continue;
				if (n_touched == cap_touched) {
					size_t cap = cap_touched ? cap_touched * 2 : 16;
					uint64_t *t = cr_reallocarray(touched, cap, sizeof(*t));

					if (!t) {
						rc = err_set(CAIRN_ENOMEM, "out of memory");
						break;
					}
					touched = t;
					cap_touched = cap;
				}
				touched[n_touched++] = ids[i];
			}
		}
		/* The cells this revision must have written, exactly. */
		for (size_t i = 0; i < n_touched && !rc; i++) {
			uint8_t mk[8];
			uint64_t *slot;

			be64_put(mk, touched[i]);
			slot = hmap_get(&lc.live, mk, 8);
			rc = cell_at(c, CELL_LIVE, touched[i], rev, &v);
			if (rc == CAIRN_ENOTFOUND && cell_compacted(c, CELL_LIVE, touched[i], rev)) {
				rc = 0;
				continue;
			}
			if (rc == CAIRN_ENOTFOUND || (!rc && (!slot || v.mv_size != LIVE_CHUNK_BYTES ||
							      memcmp(v.mv_data,
								     lc.bits + *slot * LIVE_CHUNK_BYTES,
								     LIVE_CHUNK_BYTES) != 0)))
				problem(c, "revision %llu: the live set of vids %llu..%llu differs "
					   "from its Versions",
					(unsigned long long)rev,
					(unsigned long long)(touched[i] << LIVE_CHUNK_BITS),
					(unsigned long long)((touched[i] + 1) << LIVE_CHUNK_BITS) - 1);
			rc = rc == CAIRN_ENOTFOUND ? 0 : rc;
			expected++;
		}
		for (uint32_t kd = 1; kd <= c->d.s->n_kinds && !rc; kd++) {
			if (!delta[kd] && !odelta[kd]) {
				if (!maybe[kd] || cell_at(c, CELL_COUNT, kd, rev, &v))
					continue;
			}
			lc.counts[kd] = (uint64_t)((int64_t)lc.counts[kd] + delta[kd]);
			rc = cell_at(c, CELL_COUNT, kd, rev, &v);
			if (rc == CAIRN_ENOTFOUND && cell_compacted(c, CELL_COUNT, kd, rev)) {
				rc = 0;
				continue;
			}
			if (rc == CAIRN_ENOTFOUND || (!rc && (v.mv_size != 8 ||
							      be64_get(v.mv_data) != lc.counts[kd])))
				problem(c, "revision %llu: the count of %s differs from its Versions",
					(unsigned long long)rev, c->d.s->kinds[kd - 1].name);
			rc = rc == CAIRN_ENOTFOUND ? 0 : rc;
			expected++;
		}
	}
	/* No cell of main beyond those its revisions wrote. */
	if (!rc) {
		MDB_cursor *cur;
		MDB_val k, v;
		uint8_t p[4];
		int mrc;

		be32_put(p, c->d.dom);
		mrc = mdb_cursor_open(c->d.txn, c->d.st->dbi[DB_CELLS], &cur);
		if (mrc) {
			rc = store_err(mrc, "cells");
			goto out;
		}
		k.mv_data = p;
		k.mv_size = 4;
		for (mrc = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE); mrc == 0;
		     mrc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
			const uint8_t *kk = k.mv_data;

			if (k.mv_size < 9 || memcmp(kk, p, 4) != 0)
				break;
			if (be32_get(kk + 5) == MAIN_BRANCH_ID)
				stored++;
		}
		mdb_cursor_close(cur);
		if (stored != expected)
			problem(c, "main has %llu live-set and count cells; its revisions wrote %llu",
				(unsigned long long)stored, (unsigned long long)expected);
	}
out:
	hmap_release(&lc.live);
	cr_free(lc.bits);
	cr_free(lc.counts);
	cr_free(delta);
	cr_free(odelta);
	cr_free(maybe);
	cr_free(touched);
	return rc;
}

static int check_branches(chk *c)
{
	uint32_t *ids;
	size_t n;
	int rc = branch_ids(c->d.txn, c->d.st, c->d.dom, &ids, &n);

	for (size_t i = 0; i < n && !rc; i++)
		rc = check_branch(c, ids[i]);
	cr_free(ids);
	return rc;
}

int cairn_check(cairn_store *st, const char *domain, void (*cb)(void *ctx, const char *problem),
		void *ctx, cairn_check_report *out)
{
	MDB_txn *txn;
	chk c;
	int rc;

	if (!st || !domain)
		return err_set(CAIRN_EINVAL, "cairn_check: NULL argument");
	memset(&c, 0, sizeof(c));
	c.cb = cb;
	c.ctx = ctx;
	/* The structure first: the content checks read through the map, and trust it. */
	rc = store_check_pages(st, cb, ctx, &c.rep.problems);
	if (rc || c.rep.problems) {
		if (out)
			*out = c.rep;
		return rc ? rc : err_set(CAIRN_ECORRUPT, "the data file is damaged: %llu problem(s) "
							 "found; restore the store from a backup",
					 (unsigned long long)c.rep.problems);
	}
	rc = store_read_begin(st, &txn);
	if (rc)
		return rc;
	rc = dctx_open(&c.d, st, txn, domain, NULL);
	if (!rc) {
		char m[VEC_MODEL_MAX + 1];

		rc = vec_model_get(txn, st, c.d.dom, &c.vdim, m);
	}
	if (!rc)
		rc = horizon_get(txn, st, c.d.dom, &c.horizon);
	if (!rc)
		rc = check_revisions(&c);
	if (!rc)
		rc = each_entry(&c, DB_KEYS, check_key_entry);
	if (!rc)
		rc = each_entry(&c, DB_KSEG, check_kseg_entry);
	if (!rc)
		rc = kseg_counts(&c);
	if (!rc)
		rc = each_entry(&c, DB_ADJ, check_adj_entry);
	if (!rc)
		rc = each_entry(&c, DB_ADJR, check_adjr_entry);
	if (!rc)
		rc = each_entry(&c, DB_ATTR, check_attr_entry);
	if (!rc)
		rc = each_entry(&c, DB_VECTORS, check_vector_entry);
	if (!rc)
		rc = check_indexes(&c);
	if (!rc)
		rc = check_replay(&c);
	if (!rc)
		rc = check_branches(&c);
	dctx_close(&c.d);
	store_read_end(st, txn);
	buf_release(&c.tmp);
	if (out)
		*out = c.rep;
	if (!rc && c.rep.problems)
		rc = err_set(CAIRN_ECORRUPT, "%llu problem(s) found",
			     (unsigned long long)c.rep.problems);
	return rc;
}
