/* Sorted, cursor-local writes of a commit's puts (see wlist.h). */
#include <stdlib.h>
#include <string.h>

#include "store/wlist.h"
#include "util/alloc.h"
#include "util/err.h"

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

static int entry_cmp(const void *x, const void *y)
{
	const wl_entry *a = x, *b = y;
	size_t n;
	int c;

	if (a->db != b->db)
		return (int)a->db - (int)b->db;
	n = a->klen < b->klen ? a->klen : b->klen;
	c = memcmp(a->k, b->k, n);
	return c ? c : (a->klen > b->klen) - (a->klen < b->klen);
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
	cr_free(g);
	for (size_t a = 0, d = 0; d <= DB_COUNT; a += count[d++]) {
		size_t i = a + 1;

		while (i < a + count[d] && entry_cmp(&w->e[i - 1], &w->e[i]) <= 0)
			i++;
		if (i < a + count[d])
			qsort(w->e + a, count[d], sizeof(*w->e), entry_cmp);
	}
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
