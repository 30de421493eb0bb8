/* Sorted, cursor-local writes of a commit's puts (see wlist.h). */
#include <stdlib.h>
#include <string.h>

#include "store/wlist.h"
#include "base/alloc.h"
#include "base/err.h"

int wl_add(wlist *w, int db, const void *k, size_t kn, const void *v, size_t vn)
{
	wl_entry *e;
	uint8_t *p;

	if (kn > UINT16_MAX || vn > UINT32_MAX)
		return err_set(CAIRN_ELIMIT, "an entry is too large");
	if (w->n == w->cap) {
		size_t cap = w->cap ? w->cap * 2 : 256;
		wl_entry *ne = cr_reallocarray(w->e, cap, sizeof(*ne));

		if (!ne)
			return err_set(CAIRN_ENOMEM, "out of memory");
		w->e = ne;
		w->cap = cap;
	}
	p = arena_alloc(&w->mem, kn + vn);
	if (!p)
		return err_set(CAIRN_ENOMEM, "out of memory");
	memcpy(p, k, kn);
	if (vn)
		memcpy(p + kn, v, vn);
	e = &w->e[w->n++];
	e->db = (uint8_t)db;
	e->k = p;
	e->klen = (uint16_t)kn;
	e->v = p + kn;
	e->vlen = (uint32_t)vn;
	return 0;
}

/* Keys from byte d on (the bytes before are equal). */
static int key_cmp_from(const wl_entry *a, const wl_entry *b, size_t d)
{
	size_t n = a->klen < b->klen ? a->klen : b->klen;
	int c = n > d ? memcmp(a->k + d, b->k + d, n - d) : 0;

	return c ? c : (a->klen > b->klen) - (a->klen < b->klen);
}

#define RADIX_SMALL 24 /* below this, insertion sort */

/*
 * Sort e[0..n-1], whose keys share their first d bytes, by key: a most
 * significant byte first radix sort (a key that ends at d first), tmp as
 * large as e. Keys of one sub-database share long prefixes (the Domain, a
 * Kind, an attribute): they cost a pass each instead of a memcmp per
 * comparison, which made the sort a tenth of an import's time.
 */
static void radix_sort(wl_entry *e, wl_entry *tmp, size_t n, size_t d)
{
	uint32_t end[257]; /* counts, then where each bucket ends (1 KiB a level of recursion) */

	for (;;) {
		size_t b;

		if (n < RADIX_SMALL) {
			for (size_t i = 1; i < n; i++) {
				wl_entry x = e[i];
				size_t j = i;

				for (; j > 0 && key_cmp_from(&e[j - 1], &x, d) > 0; j--)
					e[j] = e[j - 1];
				e[j] = x;
			}
			return;
		}
		memset(end, 0, sizeof(end));
		for (size_t i = 0; i < n; i++)
			end[e[i].klen > d ? e[i].k[d] + 1u : 0]++;
		for (b = 0; b < 257 && end[b] != n; b++)
			;
		if (b == 0)
			return; /* every key ends here: all equal */
		if (b < 257) { /* one byte for all: the next */
			d++;
			continue;
		}
		break;
	}
	/* Counts into starts; the scatter moves each start to its bucket's end. */
	for (uint32_t b = 0, sum = 0; b < 257; b++) {
		uint32_t c = end[b];

		end[b] = sum;
		sum += c;
	}
	for (size_t i = 0; i < n; i++)
		tmp[end[e[i].klen > d ? e[i].k[d] + 1u : 0]++] = e[i];
	memcpy(e, tmp, n * sizeof(*e));
	for (size_t b = 1; b < 257; b++)
		if (end[b] - end[b - 1] > 1)
			radix_sort(e + end[b - 1], tmp, end[b] - end[b - 1], d + 1);
}

/*
 * Sort the entries by sub-database and key: grouped by sub-database first
 * (stable, a counting pass), then each group sorted unless it already is
 * (Versions come in vid order; a bulk import's keys often in key order).
 */
int wl_sort(wlist *w)
{
	size_t count[DB_COUNT + 1] = {0}, at[DB_COUNT + 1];
	wl_entry *g;

	for (size_t i = 0; i < w->n; i++)
		count[w->e[i].db < DB_COUNT ? w->e[i].db : DB_COUNT]++;
	at[0] = 0;
	for (int d = 1; d <= DB_COUNT; d++)
		at[d] = at[d - 1] + count[d - 1];
	if (!(g = cr_reallocarray(NULL, w->n ? w->n : 1, sizeof(*g))))
		return err_set(CAIRN_ENOMEM, "out of memory");
	for (size_t i = 0; i < w->n; i++)
		g[at[w->e[i].db < DB_COUNT ? w->e[i].db : DB_COUNT]++] = w->e[i];
	memcpy(w->e, g, w->n * sizeof(*g));
	for (size_t a = 0, d = 0; d <= DB_COUNT; a += count[d++]) {
		size_t i = a + 1;

		while (i < a + count[d] && key_cmp_from(&w->e[i - 1], &w->e[i], 0) <= 0)
			i++;
		if (i < a + count[d])
			radix_sort(w->e + a, g, count[d], 0);
	}
	cr_free(g);
	return 0;
}

int wl_flush(wlist *w, MDB_txn *txn, cairn_store *st)
{
	size_t i = 0;
	int rc = wl_sort(w);

	while (i < w->n && !rc) {
		int db = w->e[i].db;
		unsigned flags = MDB_APPEND;
		MDB_cursor *cur;

		rc = mdb_cursor_open(txn, st->dbi[db], &cur);
		if (rc) {
			rc = store_err(rc, db_names[db]);
			break;
		}
		for (; i < w->n && w->e[i].db == db; i++) {
			MDB_val k = {w->e[i].klen, (void *)w->e[i].k};
			MDB_val v = {w->e[i].vlen, (void *)w->e[i].v};

			rc = mdb_cursor_put(cur, &k, &v, flags);
			if (rc == MDB_KEYEXIST && flags) {
				/* Not beyond the last key: put this run in place. */
				flags = 0;
				rc = mdb_cursor_put(cur, &k, &v, 0);
			}
			if (rc) {
				rc = store_err(rc, db_names[db]);
				break;
			}
		}
		mdb_cursor_close(cur);
	}
	w->n = 0;
	arena_release(&w->mem);
	return rc;
}

void wl_release(wlist *w)
{
	cr_free(w->e);
	w->e = NULL;
	w->n = w->cap = 0;
	arena_release(&w->mem);
}
