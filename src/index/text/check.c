/* The full-text index's check (cairn check, through version/index.h). */
#include <string.h>

#include "base/alloc.h"
#include "base/arena.h"
#include "base/err.h"
#include "index/text/text.h"

/* Every segment: its containers decode, each posting names a Record Version of its Kind. */
int text_check(index_check *c)
{
	tseg *segs;
	size_t n_segs;
	MDB_cursor *cur;
	arena a = ARENA_INIT;
	int rc = text_segments(c->d->txn, c->d->st, c->d->dom, &segs, &n_segs), mrc;

	if (rc)
		return rc;
	if ((mrc = mdb_cursor_open(c->d->txn, c->d->st->dbi[DB_POSTINGS], &cur))) {
		cr_free(segs);
		return store_err(mrc, "postings");
	}
	for (size_t i = 0; i < n_segs && !rc; i++) {
		uint64_t containers = 0, postings = 0, lo_vid = UINT64_MAX, hi_vid = 0;
		/* A deleted branch's Versions go before its segments: they are not looked for. */
		int gone = c->branch_gone(c, segs[i].branch);
		uint8_t p[8];
		MDB_val k, v;

		be32_put(p, c->d->dom);
		be32_put(p + 4, segs[i].id);
		k.mv_data = p;
		k.mv_size = 8;
		for (mrc = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE); mrc == 0 && !rc;
		     mrc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
			const uint8_t *kk = k.mv_data, *z;
			tcont tc;
			tpay pay;
			uint16_t lo[TEXT_BLOCK];

			if (k.mv_size < 8 || memcmp(kk, p, 8) != 0)
				break;
			(*c->entries)++;
			containers++;
			arena_reset(&a);
			z = k.mv_size > 8 ? memchr(kk + 8, 0, k.mv_size - 8) : NULL;
			if (!z || (size_t)(kk + k.mv_size - z) != 5 || z == kk + 8 ||
			    (kk[8] != TERM_WORD && kk[8] != TERM_STEM)) {
				c->problem(c, "postings: malformed key in segment %u", segs[i].id);
				continue;
			}
			if (tcont_decode(v.mv_data, v.mv_size, be32_get(z + 1), &a, &tc)) {
				c->problem(c, "postings: segment %u has a container that does not decode",
					segs[i].id);
				continue;
			}
			if (tc.positions != (kk[8] == TERM_WORD)) {
				c->problem(c, "postings: segment %u has a %s with%s positions", segs[i].id,
					kk[8] == TERM_WORD ? "word" : "stem", tc.positions ? "" : "out");
				continue;
			}
			for (uint32_t b = 0; b < tc.nb && !rc; b++) {
				if (tblock_read(&tc, b, lo, &pay)) {
					c->problem(c, "postings: segment %u has a block that does not decode",
						segs[i].id);
					break;
				}
				for (uint32_t j = 0; j < tc.b[b].n && !rc; j++) {
					uint64_t vid = tc.base + lo[j];
					vrec ver;
					size_t np;

					postings++;
					if (tc.positions &&
					    tpos_decode(pay.pos[j], pay.pos_len[j], NULL, 0, &np)) {
						err_clear();
						c->problem(c, "postings: segment %u has bad positions for "
							   "Version %llu",
							segs[i].id, (unsigned long long)vid);
					}
					lo_vid = vid < lo_vid ? vid : lo_vid;
					hi_vid = vid > hi_vid ? vid : hi_vid;
					if (gone)
						continue;
					if ((rc = c->version(c, vid, &ver, "a posting"))) {
						rc = rc > 0 ? 0 : rc;
						continue;
					}
					if (ver.type != V_REC || ver.kr != pay.kind[j] ||
					    ver.branch != segs[i].branch)
						c->problem(c, "postings: segment %u names Version %llu, not a "
							   "Record of its Kind and branch",
							segs[i].id, (unsigned long long)vid);
				}
			}
		}
		if (!rc && mrc && mrc != MDB_NOTFOUND)
			rc = store_err(mrc, "postings");
		if (!rc && (containers != segs[i].containers || postings != segs[i].postings ||
			    (postings && (lo_vid != segs[i].min_vid || hi_vid != segs[i].max_vid))))
			c->problem(c, "postings: segment %u does not hold what its descriptor says",
				segs[i].id);
	}
	mdb_cursor_close(cur);
	arena_release(&a);
	cr_free(segs);
	return rc;
}
