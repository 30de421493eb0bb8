/*
 * Segments of the keys index (docs/storage.md, "Keys segments").
 *
 * A Record Version's keys entry sits beside the entries of its Record, so a
 * commit that updates 1,000 Records at random places dirties one keys page
 * (and the branch pages above it) per Record. A commit with many entries of
 * Records its branch already had writes them instead as a segment of their
 * own: the same entries under a key that starts with the segment's number,
 * in key order, on pages of their own. A descriptor per segment holds a
 * blocked Bloom filter of its identities (Kind and key).
 *
 * A lookup reads the keys index as before, then asks each segment whose
 * filter may hold the identity for a newer entry the view sees. The Record's
 * first Version always stays in keys (a Record the branch did not have goes
 * there), so an identity keys does not have is in no segment either, and a
 * walk of keys meets every Record. The commit that would bring a Domain's
 * segments (or their entries) to the fold threshold writes to keys and
 * moves them all there: 32 commits' entries share the pages each one would have dirtied
 * alone.
 */
#include <string.h>

#include <xxhash.h>

#include "store/wlist.h"
#include "base/err.h"
#include "version/version.h"

#define BLOOM_BLOCK 64	  /* bytes: one cache line per lookup */
#define BLOOM_BITS_PER 10 /* bits per entry: about 1% false positives */
#define BLOOM_PROBES 7

uint64_t kseg_hash(const uint8_t *id, size_t n)
{
	return XXH3_64bits(id + 4, n - 4); /* Kind, key and its 0: not the Domain */
}

uint32_t kseg_blocks(size_t entries)
{
	size_t b = (entries * BLOOM_BITS_PER + BLOOM_BLOCK * 8 - 1) / (BLOOM_BLOCK * 8);

	return b ? (uint32_t)b : 1;
}

void kseg_bloom_add(uint8_t *bloom, uint32_t blocks, uint64_t h)
{
	uint8_t *b = bloom + (((h >> 32) * blocks) >> 32) * BLOOM_BLOCK;
	uint64_t m = h * 0x9e3779b97f4a7c15ull;

	for (int i = 0; i < BLOOM_PROBES; i++, m >>= 9)
		b[(m & 511) >> 3] |= (uint8_t)(1u << (m & 7));
}

int kseg_bloom_has(const uint8_t *bloom, uint32_t blocks, uint64_t h)
{
	const uint8_t *b = bloom + (((h >> 32) * blocks) >> 32) * BLOOM_BLOCK;
	uint64_t m = h * 0x9e3779b97f4a7c15ull;

	for (int i = 0; i < BLOOM_PROBES; i++, m >>= 9)
		if (!(b[(m & 511) >> 3] & (1u << (m & 7))))
			return 0;
	return 1;
}

void kseg_key(kbuf *k, uint32_t dom, uint32_t seg, const uint8_t *id, size_t n)
{
	kb_init(k);
	kb_be32(k, dom);
	kb_be32(k, seg);
	kb_bytes(k, id + 4, n - 4);
}

void kseg_desc_key(kbuf *k, uint32_t dom, uint32_t seg)
{
	kb_init(k);
	kb_be32(k, dom);
	kb_be32(k, 0);
	kb_be32(k, seg);
}

int kseg_desc_decode(const void *p, size_t n, uint32_t *entries, uint32_t *blocks,
		     const uint8_t **bloom)
{
	const uint8_t *b = p;

	if (n < 8 || be32_get(b + 4) == 0 || n - 8 != (size_t)be32_get(b + 4) * BLOOM_BLOCK)
		return err_set(CAIRN_ECORRUPT, "kseg: malformed segment descriptor");
	*entries = be32_get(b);
	*blocks = be32_get(b + 4);
	*bloom = b + 8;
	return 0;
}

/* The Domain's segments, oldest first, into c (once per transaction). */
static int kseg_load(dctx *c)
{
	MDB_cursor *cur;
	MDB_val k, v;
	kbuf p;
	int mrc, rc = 0;

	c->kseg_n = 0;
	c->kseg_entries = 0;
	kseg_desc_key(&p, c->dom, 0);
	p.n -= 4;
	if ((mrc = mdb_cursor_open(c->txn, c->st->dbi[DB_KSEG], &cur)))
		return store_err(mrc, "kseg");
	k.mv_data = p.b;
	k.mv_size = p.n;
	for (mrc = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE); mrc == 0 && !rc;
	     mrc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
		kseg_ref *s = &c->kseg[c->kseg_n];
		uint32_t entries;

		if (k.mv_size != p.n + 4 || memcmp(k.mv_data, p.b, p.n) != 0)
			break;
		if (c->kseg_n == KSEG_MAX)
			rc = err_set(CAIRN_ECORRUPT, "kseg: more than %u segments", KSEG_MAX);
		else if (!(rc = kseg_desc_decode(v.mv_data, v.mv_size, &entries, &s->blocks,
						 &s->bloom))) {
			s->seg = be32_get((uint8_t *)k.mv_data + p.n);
			c->kseg_entries += entries;
			c->kseg_n++;
		}
	}
	mdb_cursor_close(cur);
	if (rc)
		return rc;
	if (mrc && mrc != MDB_NOTFOUND)
		return store_err(mrc, "kseg");
	c->kseg_loaded = 1;
	return 0;
}

int kseg_next(dctx *c, uint32_t *seg, unsigned *n, uint64_t *entries)
{
	int rc;

	if (!c->kseg_loaded && (rc = kseg_load(c)))
		return rc;
	*n = c->kseg_n;
	*entries = c->kseg_entries;
	*seg = c->kseg_n ? c->kseg[c->kseg_n - 1].seg + 1 : 1;
	return 0;
}

int kseg_newer(dctx *c, const uint8_t *id, size_t n, uint64_t after, ventry *e, uint64_t *vid,
	       int *found)
{
	MDB_cursor *cur = NULL;
	uint64_t h;
	int rc = 0, mrc = 0, decided = 0;

	*found = 0;
	if (!c->kseg_loaded && (rc = kseg_load(c)))
		return rc;
	if (!c->kseg_n)
		return 0;
	h = kseg_hash(id, n);
	/* Newest first: a newer segment's vids are all above an older one's. */
	for (unsigned i = c->kseg_n; i-- > 0 && !decided && !rc;) {
		MDB_val k, v;
		kbuf p;

		if (!kseg_bloom_has(c->kseg[i].bloom, c->kseg[i].blocks, h))
			continue;
		kseg_key(&p, c->dom, c->kseg[i].seg, id, n);
		if (!cur && (mrc = mdb_cursor_open(c->txn, c->st->dbi[DB_KSEG], &cur)))
			return store_err(mrc, "kseg");
		k.mv_data = p.b;
		k.mv_size = p.n;
		c->stats.seeks++;
		for (mrc = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE); mrc == 0;
		     mrc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
			uint64_t x;
			ventry se;

			c->stats.entries++;
			if (k.mv_size != p.n + 8 || memcmp(k.mv_data, p.b, p.n) != 0)
				break;
			if (ventry_decode(v.mv_data, v.mv_size, VE_KEYS, &se)) {
				rc = CAIRN_ECORRUPT;
				break;
			}
			if (!view_sees(&c->v, se.branch, se.rev))
				continue;
			x = ~be64_get((const uint8_t *)k.mv_data + p.n);
			if (x > after) {
				*e = se;
				*vid = x;
				*found = 1;
			}
			decided = 1;
			break;
		}
		if (mrc && mrc != MDB_NOTFOUND && !rc)
			rc = store_err(mrc, "kseg");
	}
	if (cur)
		mdb_cursor_close(cur);
	return rc;
}

int kseg_fold(MDB_txn *txn, cairn_store *st, uint32_t dom, uint64_t *moved)
{
	MDB_cursor *cur;
	MDB_val k, v;
	uint8_t p[4], mk[4 + 4 + CAIRN_MAX_KEY + 1 + 8];
	wlist w;
	int mrc, rc = 0, any = 0;

	memset(&w, 0, sizeof(w));
	if (moved)
		*moved = 0;
	be32_put(p, dom);
	if ((mrc = mdb_cursor_open(txn, st->dbi[DB_KSEG], &cur)))
		return store_err(mrc, "kseg");
	k.mv_data = p;
	k.mv_size = 4;
	for (mrc = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE); mrc == 0 && !rc;
	     mrc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
		const uint8_t *kk = k.mv_data;

		if (k.mv_size < 4 || memcmp(kk, p, 4) != 0)
			break;
		any = 1;
		if (be32_get(kk + 4) == 0)
			continue; /* a descriptor */
		if (k.mv_size < 4 + 4 + 4 + 1 + 8 || k.mv_size - 4 > sizeof(mk)) {
			rc = err_set(CAIRN_ECORRUPT, "kseg: malformed entry");
			break;
		}
		memcpy(mk, p, 4);
		memcpy(mk + 4, kk + 8, k.mv_size - 8);
		rc = wl_add(&w, DB_KEYS, mk, k.mv_size - 4, v.mv_data, v.mv_size);
		if (!rc && moved)
			(*moved)++;
	}
	mdb_cursor_close(cur);
	if (!rc && mrc && mrc != MDB_NOTFOUND)
		rc = store_err(mrc, "kseg");
	if (!rc && any)
		rc = db_del_prefix(txn, st, DB_KSEG, p, 4, NULL);
	if (!rc && w.n)
		rc = wl_flush(&w, txn, st);
	wl_release(&w);
	return rc;
}
