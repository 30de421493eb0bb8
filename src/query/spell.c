/* Close spellings by a pruned walk of sorted words (spell.h). */
#include <string.h>

#include "query/spell.h"
#include "base/alloc.h"
#include "base/err.h"

typedef struct spell {
	const char *q;
	size_t m;
	unsigned *rows;		/* row i (m + 1 cells): distances of the word's first i bytes */
	char prev[SPELL_MAX];	/* the word the rows were computed for */
	size_t prev_len;
} spell;

#define ROW(s, i) ((s)->rows + (i) * ((s)->m + 1))

/* Row i (1-based) of the table, for word byte n[i - 1]; returns its minimum. */
static unsigned spell_row(spell *s, const char *n, size_t i)
{
	unsigned *cur = ROW(s, i), *up = ROW(s, i - 1), low;

	cur[0] = (unsigned)i;
	low = cur[0];
	for (size_t j = 1; j <= s->m; j++) {
		unsigned v = up[j - 1] + (n[i - 1] != s->q[j - 1]);

		if (up[j] + 1 < v)
			v = up[j] + 1;
		if (cur[j - 1] + 1 < v)
			v = cur[j - 1] + 1;
		if (i > 1 && j > 1 && n[i - 1] == s->q[j - 2] && n[i - 2] == s->q[j - 1] &&
		    ROW(s, i - 2)[j - 2] + 1 < v)
			v = ROW(s, i - 2)[j - 2] + 1;
		cur[j] = v;
		if (v < low)
			low = v;
	}
	return low;
}

/* Does key start with the prefix (and the first byte, when fixed)? */
static int in_range(const spell_opts *o, const MDB_val *k)
{
	const uint8_t *kk = k->mv_data;

	return k->mv_size > o->plen && memcmp(kk, o->prefix, o->plen) == 0 &&
	       (!o->first_fixed || kk[o->plen] == (uint8_t)o->q[0]);
}

int spell_walk(MDB_cursor *cur, dctx *d, const spell_opts *o, int *truncated)
{
	spell s;
	uint8_t seek[511];
	size_t seek_n, seeks = 0, entries = 0;
	MDB_val kv, vv;
	int mrc, rc = 0;

	if (!o->m || o->m > SPELL_MAX || o->plen + SPELL_MAX + 1 > sizeof(seek))
		return err_set(CAIRN_EINVAL, "spell_walk: a text of 1 to %d bytes", SPELL_MAX);
	memset(&s, 0, sizeof(s));
	s.q = o->q;
	s.m = o->m;
	if (!(s.rows = cr_malloc((SPELL_MAX + 1) * (o->m + 1) * sizeof(*s.rows))))
		return err_set(CAIRN_ENOMEM, "out of memory");
	for (size_t j = 0; j <= o->m; j++)
		s.rows[j] = (unsigned)j;
	memcpy(seek, o->prefix, o->plen);
	seek_n = o->plen;
	if (o->first_fixed)
		seek[seek_n++] = (uint8_t)o->q[0];
	kv.mv_data = seek;
	kv.mv_size = seek_n;
	d->stats.seeks++;
	seeks++;
	mrc = mdb_cursor_get(cur, &kv, &vv, MDB_SET_RANGE);
	while (mrc == 0 && !rc && in_range(o, &kv)) {
		const uint8_t *kk = kv.mv_data;
		const uint8_t *z = memchr(kk + o->plen, 0, kv.mv_size - o->plen);
		const char *n = (const char *)kk + o->plen;
		size_t len, lcp = 0, i;
		int pruned = 0;

		if (seeks > o->max_seeks || entries > o->max_entries) {
			*truncated = 1;
			break;
		}
		if (!z) {
			rc = err_set(CAIRN_ECORRUPT, "a word without its end");
			break;
		}
		len = (size_t)(z - kk) - o->plen;
		if (len > SPELL_MAX) {
			rc = err_set(CAIRN_ECORRUPT, "a word of more than %d bytes", SPELL_MAX);
			break;
		}
		while (lcp < len && lcp < s.prev_len && n[lcp] == s.prev[lcp])
			lcp++;
		for (i = lcp + 1; i <= len; i++)
			if (spell_row(&s, n, i) > o->k) {
				pruned = 1;
				break;
			}
		memcpy(s.prev, n, len < i ? len : i);
		s.prev_len = len < i ? len : i;
		if (pruned) {
			/* No word starting with n[0..i-1] comes within k: past all of them. */
			size_t p = i;

			while (p > 1 && (uint8_t)n[p - 1] == 0xff)
				p--;
			memcpy(seek, kk, o->plen + p);
			seek_n = o->plen + p;
			seek[seek_n - 1]++;
			s.prev_len = s.prev_len < p - 1 ? s.prev_len : p - 1;
			kv.mv_data = seek;
			kv.mv_size = seek_n;
			d->stats.seeks++;
			seeks++;
			mrc = mdb_cursor_get(cur, &kv, &vv, MDB_SET_RANGE);
			continue;
		}
		/* The whole word is within reach: its keys, if it is close enough. */
		{
			unsigned dist = ROW(&s, len)[o->m];
			char word[SPELL_MAX];

			memcpy(word, n, len);
			do {
				entries++;
				d->stats.entries++;
				if (dist <= o->k && (rc = o->fn(o->ctx, &kv, len, dist)))
					break;
				mrc = mdb_cursor_get(cur, &kv, &vv, MDB_NEXT);
			} while (mrc == 0 && kv.mv_size > o->plen + len &&
				 memcmp(kv.mv_data, o->prefix, o->plen) == 0 &&
				 memcmp((const uint8_t *)kv.mv_data + o->plen, word, len) == 0 &&
				 ((const uint8_t *)kv.mv_data)[o->plen + len] == 0);
		}
	}
	cr_free(s.rows);
	if (!rc && mrc && mrc != MDB_NOTFOUND)
		rc = store_err(mrc, "a word index");
	return rc;
}

/* Every key of the word w[0..n-1] (the prefix before it, 0x00 after it) to fn. */
static int each_key(MDB_cursor *cur, dctx *d, const spell_opts *o, const uint8_t *w, size_t n,
		    unsigned dist)
{
	uint8_t seek[4 + SPELL_MAX + 2];
	size_t seek_n = o->plen + n + 1;
	MDB_val kv, vv;
	int mrc, rc = 0;

	if (!n || seek_n > sizeof(seek))
		return 0;
	memcpy(seek, o->prefix, o->plen);
	memcpy(seek + o->plen, w, n);
	seek[seek_n - 1] = 0;
	kv.mv_data = seek;
	kv.mv_size = seek_n;
	d->stats.seeks++;
	for (mrc = mdb_cursor_get(cur, &kv, &vv, MDB_SET_RANGE); mrc == 0;
	     mrc = mdb_cursor_get(cur, &kv, &vv, MDB_NEXT)) {
		if (kv.mv_size < seek_n || memcmp(kv.mv_data, seek, seek_n) != 0)
			break;
		d->stats.entries++;
		if ((rc = o->fn(o->ctx, &kv, n, dist)))
			return rc;
	}
	return mrc && mrc != MDB_NOTFOUND ? store_err(mrc, "a word index") : 0;
}

int spell_first_changed(MDB_cursor *cur, dctx *d, const spell_opts *o, unsigned dist)
{
	const uint8_t *q = (const uint8_t *)o->q;
	uint8_t w[SPELL_MAX + 1], seek[4 + 1];
	size_t m = o->m;
	MDB_val kv, vv;
	int mrc, rc = 0;

	if (!m || m > SPELL_MAX || o->plen > 4)
		return err_set(CAIRN_EINVAL, "spell_first_changed: a text of 1 to %d bytes", SPELL_MAX);
	if (m >= 2 && q[1] != q[0]) {
		/* q[1..] and q[1] q[0] q[2..]; with q[1] == q[0] both start with q[0] */
		if ((rc = each_key(cur, d, o, q + 1, m - 1, dist)))
			return rc;
		w[0] = q[1];
		w[1] = q[0];
		memcpy(w + 2, q + 2, m - 2);
		if ((rc = each_key(cur, d, o, w, m, dist)))
			return rc;
	}
	/* Each first byte c the words start with, but q[0]: c + q[1..] and c + q. */
	memcpy(seek, o->prefix, o->plen);
	seek[o->plen] = 0;
	for (;;) {
		unsigned c;

		kv.mv_data = seek;
		kv.mv_size = o->plen + 1;
		d->stats.seeks++;
		if ((mrc = mdb_cursor_get(cur, &kv, &vv, MDB_SET_RANGE)))
			break;
		if (kv.mv_size <= o->plen || memcmp(kv.mv_data, o->prefix, o->plen) != 0)
			break;
		c = ((const uint8_t *)kv.mv_data)[o->plen];
		if (c != q[0]) {
			w[0] = (uint8_t)c;
			memcpy(w + 1, q + 1, m - 1);
			if ((rc = each_key(cur, d, o, w, m, dist)))
				return rc;
			memcpy(w + 1, q, m);
			if ((rc = each_key(cur, d, o, w, m + 1, dist)))
				return rc;
		}
		if (c == 0xff)
			return 0;
		seek[o->plen] = (uint8_t)(c + 1);
	}
	return mrc && mrc != MDB_NOTFOUND ? store_err(mrc, "a word index") : 0;
}
