/*
 * Graph reads: the neighborhood of Records (1 to 3 hops, breadth first),
 * the Records reached along a sequence of steps, and a shortest path
 * between two Records. All walk the adjacency indexes (adj for Links out
 * of a Record, adj_rev for Links into it), whose keys name the other
 * Record's rid and whose entries carry its Kind and key, so a walk learns
 * where to go next without reading a Version; only the Records returned are
 * looked up (keys, then versions) for their headers.
 *
 * A Link counts when the view sees a live entry of it (identity index
 * rule: the newest entry the view sees); a live Link's ends exist, since a
 * delete takes its Links with it.
 */
#include <stdlib.h>
#include <string.h>

#include "query/read.h"
#include "base/alloc.h"
#include "base/err.h"
#include "base/hmap.h"

#define FILTER_MAX 64

/* A cairn_hop with its names resolved to ids. */
typedef struct hopf {
	int dir;
	uint32_t rels[FILTER_MAX], kinds[FILTER_MAX];
	size_t n_rels, n_kinds;
} hopf;

/* One live Link met from a Record. */
typedef struct glink {
	int out;		/* a Link out of the Record (else into it) */
	uint32_t rel;
	uint64_t other;		/* the other Record's rid */
	uint32_t other_kind;
	const char *other_key;
	size_t other_key_len;
	uint64_t vid, rev;
	int has_values;
} glink;

/* A Record the walk reached. */
typedef struct gnode {
	uint64_t rid;
	uint32_t kind;
	const char *key;
	size_t key_len;
	uint64_t vid;		/* its Version (0 until looked up) */
	unsigned depth;
	/* shortest path: how the search reached it */
	int64_t parent;		/* -1: an end */
	glink via;
} gnode;

/* A Link kept for the answer, between two nodes. */
typedef struct gedge {
	size_t from, to;	/* node indexes */
	uint32_t rel;
	uint64_t vid, rev;
	int has_values;
} gedge;

typedef struct gwalk {
	cairn_txn *t;
	MDB_cursor *cur[2];	/* adj, adj_rev */
	gnode *n;
	size_t nn, capn;
	hmap idx;		/* rid -> node index + 1 */
	gedge *e;
	size_t ne, cape;
	hmap seen_links;	/* from rid, rel, to rid */
	uint64_t entries;
	int truncated;
} gwalk;

static int walk_open(gwalk *w, cairn_txn *t)
{
	int mrc;

	memset(w, 0, sizeof(*w));
	w->t = t;
	if ((mrc = mdb_cursor_open(t->txn, t->st->dbi[DB_ADJ], &w->cur[0])) ||
	    (mrc = mdb_cursor_open(t->txn, t->st->dbi[DB_ADJR], &w->cur[1])))
		return store_err(mrc, "adj");
	return 0;
}

static void walk_close(gwalk *w)
{
	for (int i = 0; i < 2; i++)
		if (w->cur[i])
			mdb_cursor_close(w->cur[i]);
	cr_free(w->n);
	cr_free(w->e);
	hmap_release(&w->idx);
	hmap_release(&w->seen_links);
}

static int resolve_hop(cairn_txn *t, const cairn_hop *h, hopf *out)
{
	memset(out, 0, sizeof(*out));
	out->dir = h && h->dir ? h->dir : CAIRN_BOTH;
	if (out->dir < CAIRN_OUT || out->dir > CAIRN_BOTH)
		return err_set(CAIRN_EINVAL, "direction must be out, in or both");
	if (!h)
		return 0;
	if (h->n_rels > FILTER_MAX || h->n_kinds > FILTER_MAX)
		return err_set(CAIRN_EINVAL, "a hop names at most %d Relations and %d Kinds", FILTER_MAX,
			       FILTER_MAX);
	for (size_t i = 0; h->rels && i < h->n_rels; i++) {
		const rel_def *r = h->rels[i] ? schema_rel(t->d.s, h->rels[i]) : NULL;

		if (!r)
			return err_set(CAIRN_EUNKNOWNREL, "unknown Relation \"%s\"",
				       h->rels[i] ? h->rels[i] : "(null)");
		out->rels[out->n_rels++] = r->id;
	}
	for (size_t i = 0; h->kinds && i < h->n_kinds; i++) {
		const kind_def *k = h->kinds[i] ? schema_kind(t->d.s, h->kinds[i]) : NULL;

		if (!k)
			return err_set(CAIRN_EUNKNOWNKIND, "unknown Kind \"%s\"",
				       h->kinds[i] ? h->kinds[i] : "(null)");
		out->kinds[out->n_kinds++] = k->id;
	}
	return 0;
}

static int kind_allowed(const hopf *h, uint32_t kind)
{
	if (!h->n_kinds)
		return 1;
	for (size_t i = 0; i < h->n_kinds; i++)
		if (h->kinds[i] == kind)
			return 1;
	return 0;
}

/*
 * Call fn on each live Link of Record rid that hop h allows: out first,
 * then in; per Relation in h's order (or all, by Relation id); by the other
 * Record's rid. fn returns 0 to go on, >0 to stop, <0 for an error.
 */
static int each_link(gwalk *w, uint64_t rid, const hopf *h,
		     int (*fn)(gwalk *w, const glink *l, void *arg), void *arg)
{
	cairn_txn *t = w->t;

	for (int phase = 0; phase < 2; phase++) {
		if (!(h->dir & (phase ? CAIRN_IN : CAIRN_OUT)))
			continue;
		for (size_t r = 0; r < (h->n_rels ? h->n_rels : 1); r++) {
			MDB_val kv, vv;
			kbuf p;
			uint8_t last[24];
			int have_last = 0, mrc;

			key_rid(&p, t->d.dom, rid);
			if (h->n_rels)
				kb_be32(&p, h->rels[r]);
			kv.mv_data = p.b;
			kv.mv_size = p.n;
			t->d.stats.seeks++;
			for (mrc = mdb_cursor_get(w->cur[phase], &kv, &vv, MDB_SET_RANGE); mrc == 0;
			     mrc = mdb_cursor_get(w->cur[phase], &kv, &vv, MDB_NEXT)) {
				const uint8_t *kk = kv.mv_data;
				ventry e;
				glink l;
				int rc;

				if (kv.mv_size != 32 || memcmp(kk, p.b, p.n) != 0)
					break;
				w->entries++;
				t->d.stats.entries++;
				if (have_last && memcmp(last, kk, 24) == 0)
					continue; /* an older entry of a Link already decided */
				if (ventry_decode(vv.mv_data, vv.mv_size, VE_ADJ, &e))
					return err_set(CAIRN_ECORRUPT, "adj: malformed entry");
				if (!view_sees(&t->d.v, e.branch, e.rev))
					continue;
				memcpy(last, kk, 24);
				have_last = 1;
				if ((e.flags & EF_TOMBSTONE) || !kind_allowed(h, e.kind))
					continue;
				l.out = !phase;
				l.rel = be32_get(kk + 12);
				l.other = be64_get(kk + 16);
				l.other_kind = e.kind;
				l.other_key = e.key;
				l.other_key_len = e.key_len;
				l.vid = ~be64_get(kk + 24);
				l.rev = e.rev;
				l.has_values = (e.flags & EF_VALUES) != 0;
				if ((rc = fn(w, &l, arg)))
					return rc < 0 ? rc : 0;
			}
			if (mrc && mrc != MDB_NOTFOUND)
				return store_err(mrc, "adj");
		}
	}
	return 0;
}

/* The node of rid, or a new one (*isnew); NULL when out of memory. */
static gnode *node_put(gwalk *w, uint64_t rid, int *isnew, size_t *at)
{
	uint8_t kb[8];
	uint64_t *slot;

	be64_put(kb, rid);
	if (!(slot = hmap_put(&w->idx, kb, 8, isnew)))
		return NULL;
	if (!*isnew) {
		*at = (size_t)*slot - 1;
		return &w->n[*at];
	}
	if (w->nn == w->capn) {
		size_t cap = w->capn ? w->capn * 2 : 64;
		gnode *n = cr_reallocarray(w->n, cap, sizeof(*n));

		if (!n)
			return NULL;
		w->n = n;
		w->capn = cap;
	}
	*slot = w->nn + 1;
	*at = w->nn;
	memset(&w->n[w->nn], 0, sizeof(gnode));
	w->n[w->nn].rid = rid;
	w->n[w->nn].parent = -1;
	return &w->n[w->nn++];
}

static int64_t node_find(const gwalk *w, uint64_t rid)
{
	uint8_t kb[8];
	const uint64_t *slot;

	be64_put(kb, rid);
	slot = hmap_get(&w->idx, kb, 8);
	return slot ? (int64_t)*slot - 1 : -1;
}

/*
 * Keep the Link between nodes a and b (a the Record it was met from), once:
 * with dedupe, unless it was kept before (a Link is met again when its
 * other end is expanded too).
 */
static int edge_add(gwalk *w, size_t a, size_t b, const glink *l, int dedupe)
{
	size_t from = l->out ? a : b, to = l->out ? b : a;
	uint8_t kb[20];
	int isnew;

	be64_put(kb, w->n[from].rid);
	be32_put(kb + 8, l->rel);
	be64_put(kb + 12, w->n[to].rid);
	if (dedupe && !hmap_put(&w->seen_links, kb, 20, &isnew))
		return err_set(CAIRN_ENOMEM, "out of memory");
	if (dedupe && !isnew)
		return 0;
	if (w->ne == w->cape) {
		size_t cap = w->cape ? w->cape * 2 : 64;
		gedge *e = cr_reallocarray(w->e, cap, sizeof(*e));

		if (!e)
			return err_set(CAIRN_ENOMEM, "out of memory");
		w->e = e;
		w->cape = cap;
	}
	w->e[w->ne].from = from;
	w->e[w->ne].to = to;
	w->e[w->ne].rel = l->rel;
	w->e[w->ne].vid = l->vid;
	w->e[w->ne].rev = l->rev;
	w->e[w->ne].has_values = l->has_values;
	w->ne++;
	return 0;
}

/* A start Record: its rid and Version, or CAIRN_ENOTFOUND. */
static int start_node(gwalk *w, const cairn_ref *r, size_t *at)
{
	const kind_def *k;
	size_t len;
	ident id;
	gnode *g;
	int isnew, rc;

	if (!r || !r->kind || !r->key)
		return err_set(CAIRN_EINVAL, "a start Record needs a Kind and a key");
	if (!(k = schema_kind(w->t->d.s, r->kind)))
		return err_set(CAIRN_EUNKNOWNKIND, "unknown Kind \"%s\"", r->kind);
	len = r->key_len ? r->key_len : strlen(r->key);
	if (len == 0 || len > CAIRN_MAX_KEY)
		return err_set(CAIRN_ENOTFOUND, "%s:%.*s does not exist", r->kind, (int)len, r->key);
	if ((rc = rec_lookup(&w->t->d, k->id, r->key, len, &id)))
		return rc;
	if (!id.visible)
		return err_set(CAIRN_ENOTFOUND, "%s:%.*s does not exist", r->kind, (int)len, r->key);
	if (!(g = node_put(w, id.rid, &isnew, at)))
		return err_set(CAIRN_ENOMEM, "out of memory");
	g->kind = k->id;
	g->key = r->key;
	g->key_len = len;
	g->vid = id.vid;
	return 0;
}

static int by_kind_key(const void *x, const void *y, void *arg)
{
	const gnode *a = &((const gnode *)arg)[*(const size_t *)x];
	const gnode *b = &((const gnode *)arg)[*(const size_t *)y];
	size_t n = a->key_len < b->key_len ? a->key_len : b->key_len;
	int r;

	if (a->kind != b->kind)
		return a->kind < b->kind ? -1 : 1;
	if ((r = memcmp(a->key, b->key, n)))
		return r;
	return (a->key_len > b->key_len) - (a->key_len < b->key_len);
}

static int by_vid(const void *x, const void *y, void *arg)
{
	const gnode *a = &((const gnode *)arg)[*(const size_t *)x];
	const gnode *b = &((const gnode *)arg)[*(const size_t *)y];

	return (a->vid > b->vid) - (a->vid < b->vid);
}

/*
 * The Versions of nodes sel[0..n-1]: their keys looked up in key order and
 * their Versions read in vid order, so that neighbors in the indexes share
 * B-tree pages (a positioned LMDB cursor finds a key on its current page
 * without descending again). Without values, a keys entry that carries the
 * header (EF_TITLE) is enough: its Version is not read.
 */
static int lookup(gwalk *w, const size_t *sel, size_t n, int values, vrec *v /* by node index */)
{
	cairn_txn *t = w->t;
	size_t *ord = cr_malloc((n ? n : 1) * sizeof(*ord));
	uint8_t *have = cr_calloc(w->nn ? w->nn : 1, 1);
	MDB_cursor *vc = NULL;
	int rc = 0, mrc;

	if (!ord || !have) {
		cr_free(ord);
		cr_free(have);
		return err_set(CAIRN_ENOMEM, "out of memory");
	}
	for (size_t i = 0; i < n; i++)
		ord[i] = sel ? sel[i] : i;
	qsort_r(ord, n, sizeof(*ord), by_kind_key, w->n);
	for (size_t i = 0; i < n && !rc; i++) {
		gnode *g = &w->n[ord[i]];
		ident id;

		if (g->vid)
			continue;
		if ((rc = rec_lookup(&t->d, g->kind, g->key, g->key_len, &id)))
			break;
		if (!id.visible)
			rc = err_set(CAIRN_ECORRUPT, "a live Link names a Record that does not exist");
		g->vid = id.vid;
		if (!values && id.has_title) {
			vrec *x = &v[ord[i]];

			memset(x, 0, sizeof(*x));
			x->type = V_REC;
			x->kr = g->kind;
			x->key = g->key;
			x->key_len = g->key_len;
			x->title = id.title;
			x->title_len = id.title_len;
			x->dim = id.dim;
			x->rev = id.rev;
			x->values = "{}";
			x->values_len = 2;
			have[ord[i]] = 1;
		}
	}
	if (!rc && (mrc = mdb_cursor_open(t->txn, t->st->dbi[DB_VERSIONS], &vc)))
		rc = store_err(mrc, "versions");
	if (!rc)
		qsort_r(ord, n, sizeof(*ord), by_vid, w->n);
	for (size_t i = 0; i < n && !rc; i++) {
		size_t at = ord[i];
		MDB_val k, val;
		kbuf kb;

		if (have[at])
			continue;
		key_u64(&kb, t->d.dom, w->n[at].vid);
		k.mv_data = kb.b;
		k.mv_size = kb.n;
		t->d.stats.versions++;
		t->d.stats.seeks++;
		if ((mrc = mdb_cursor_get(vc, &k, &val, MDB_SET)))
			rc = mrc == MDB_NOTFOUND ? err_set(CAIRN_ECORRUPT, "a Version is missing")
						 : store_err(mrc, "versions");
		else
			rc = vrec_decode(val.mv_data, val.mv_size, &v[at]);
	}
	if (vc)
		mdb_cursor_close(vc);
	cr_free(ord);
	cr_free(have);
	return rc;
}

/* The answer: nodes sel[0..n-1] (all when sel is NULL) looked up, and the kept Links. */
static int answer(gwalk *w, const size_t *sel, size_t n, int values, cairn_graph *out)
{
	cairn_txn *t = w->t;
	size_t *pos = NULL;
	vrec *vr;
	int rc = 0;

	out->nodes = n ? arena_alloc(&t->mem, n * sizeof(cairn_node)) : NULL;
	out->links = w->ne ? arena_alloc(&t->mem, w->ne * sizeof(cairn_link)) : NULL;
	if ((n && !out->nodes) || (w->ne && !out->links))
		return err_set(CAIRN_ENOMEM, "out of memory");
	if (!(vr = cr_malloc((w->nn ? w->nn : 1) * sizeof(*vr))))
		return err_set(CAIRN_ENOMEM, "out of memory");
	if (w->ne && !(pos = cr_calloc(w->nn, sizeof(*pos)))) {
		cr_free(vr);
		return err_set(CAIRN_ENOMEM, "out of memory");
	}
	rc = lookup(w, sel, n, values, vr);
	for (size_t i = 0; i < n && !rc; i++) {
		size_t at = sel ? sel[i] : i;
		gnode *g = &w->n[at];
		const kind_def *k = schema_kind_id(t->d.s, g->kind);
		cairn_node *o = &out->nodes[i];
		const vrec v = vr[at];

		if (!k || v.type != V_REC || v.kr != g->kind) {
			rc = err_set(CAIRN_ECORRUPT, "a Link names a Record of an unknown Kind");
			break;
		}
		memset(o, 0, sizeof(*o));
		o->rec.kind = k->name;
		o->rec.key = v.key;
		o->rec.key_len = v.key_len;
		o->rec.title = v.title;
		o->rec.title_len = v.title_len;
		if (values) {
			o->rec.values = v.values;
			o->rec.values_len = v.values_len;
		}
		o->rec.vector_dim = txn_vector_dim(t, v.dim);
		o->rec.vid = g->vid;
		o->rec.revision = v.rev;
		o->depth = g->depth;
		g->key = v.key; /* the stored key, for the Links below */
		g->key_len = v.key_len;
		if (pos)
			pos[at] = i + 1;
	}
	out->n_nodes = rc ? 0 : n;
	for (size_t i = 0; i < w->ne && !rc; i++) {
		const gedge *e = &w->e[i];
		const gnode *a = &w->n[e->from], *b = &w->n[e->to];
		const rel_def *rd = schema_rel_id(t->d.s, e->rel);
		cairn_link *l = &out->links[out->n_links];

		if (!pos[e->from] || !pos[e->to])
			continue;
		if (!rd) {
			rc = err_set(CAIRN_ECORRUPT, "a Link names an unknown Relation");
			break;
		}
		memset(l, 0, sizeof(*l));
		l->rel = rd->name;
		l->from_kind = out->nodes[pos[e->from] - 1].rec.kind;
		l->from_key = a->key;
		l->from_key_len = a->key_len;
		l->to_kind = out->nodes[pos[e->to] - 1].rec.kind;
		l->to_key = b->key;
		l->to_key_len = b->key_len;
		l->vid = e->vid;
		l->revision = e->rev;
		if (values) {
			l->values = "{}";
			l->values_len = 2;
			if (e->has_values) {
				vrec lv;

				if ((rc = version_get(&t->d, e->vid, &lv)))
					break;
				l->values = lv.values;
				l->values_len = lv.values_len;
			}
		}
		out->n_links++;
	}
	cr_free(pos);
	cr_free(vr);
	out->entries = w->entries;
	out->truncated = w->truncated;
	return rc;
}

/* ------------------------------------------------------------ neighborhood -- */

typedef struct nb_step {
	size_t from;		/* the node expanded */
	unsigned depth;		/* of the nodes it reaches */
	int last;		/* the last hop: Records it reaches are not expanded */
	size_t fanout, followed, max_nodes;
} nb_step;

static int nb_link(gwalk *w, const glink *l, void *arg)
{
	nb_step *s = arg;
	size_t at;
	int isnew;
	gnode *g;

	if (s->followed == s->fanout) {
		w->truncated = 1;
		return 1;
	}
	if (w->nn >= s->max_nodes && node_find(w, l->other) < 0) {
		w->truncated = 1;
		return 1;
	}
	if (!(g = node_put(w, l->other, &isnew, &at)))
		return err_set(CAIRN_ENOMEM, "out of memory");
	if (isnew) {
		g->kind = l->other_kind;
		g->key = l->other_key;
		g->key_len = l->other_key_len;
		g->depth = s->depth;
	}
	s->followed++;
	/* Met once only when the other end is never expanded: reached by the last hop. */
	return edge_add(w, s->from, at, l, !(s->last && g->depth == s->depth));
}

int cairn_neighborhood(cairn_txn *t, const cairn_neighborhood_options *o, cairn_graph *out)
{
	hopf hops[CAIRN_MAX_DEPTH];
	unsigned depth;
	size_t max_nodes, fanout, level = 0;
	gwalk w;
	int rc;

	if (!t || !o || !out || (!o->start && o->n_start))
		return err_set(CAIRN_EINVAL, "cairn_neighborhood: NULL argument");
	if ((rc = err_reserved(o->reserved, "cairn_neighborhood", "cairn_neighborhood_options")))
		return rc;
	memset(out, 0, sizeof(*out));
	depth = o->depth ? o->depth : 1;
	if (depth > CAIRN_MAX_DEPTH)
		return err_set(CAIRN_EINVAL, "depth is 1 to %d", CAIRN_MAX_DEPTH);
	if (!o->n_start)
		return err_set(CAIRN_EINVAL, "a neighborhood needs at least one start Record");
	max_nodes = o->max_nodes ? o->max_nodes : 500;
	if (max_nodes > CAIRN_MAX_NODES)
		return err_set(CAIRN_EINVAL, "max_nodes is at most %d", CAIRN_MAX_NODES);
	if (o->n_start > max_nodes)
		return err_set(CAIRN_EINVAL, "more start Records than max_nodes");
	fanout = o->fanout ? o->fanout : 50;
	for (unsigned d = 0; d < depth; d++) {
		const cairn_hop *h = !o->hops || !o->n_hops ? NULL
				     : &o->hops[d < o->n_hops ? d : o->n_hops - 1];

		if ((rc = resolve_hop(t, h, &hops[d])))
			return rc;
	}
	if ((rc = walk_open(&w, t)))
		goto out;
	for (size_t i = 0; i < o->n_start; i++) {
		size_t at;

		if ((rc = start_node(&w, &o->start[i], &at)))
			goto out;
	}
	for (unsigned d = 0; d < depth; d++) {
		size_t end = w.nn;

		for (size_t i = level; i < end; i++) {
			nb_step s = {i, d + 1, d + 1 == depth, fanout, 0, max_nodes};

			if ((rc = each_link(&w, w.n[i].rid, &hops[d], nb_link, &s)))
				goto out;
		}
		level = end;
	}
	rc = answer(&w, NULL, w.nn, o->values, out);
out:
	walk_close(&w);
	if (rc)
		memset(out, 0, sizeof(*out));
	return rc;
}

/* ----------------------------------------------------------------- follow -- */

typedef struct fl_step {
	hmap *next;		/* rids of the next step */
	size_t **sel, *n, *cap;
	size_t max_nodes;
} fl_step;

static int fl_link(gwalk *w, const glink *l, void *arg)
{
	fl_step *s = arg;
	uint8_t kb[8];
	size_t at;
	int isnew;
	gnode *g;

	be64_put(kb, l->other);
	if (hmap_get(s->next, kb, 8))
		return 0;
	if (*s->n >= s->max_nodes) {
		w->truncated = 1;
		return 1;
	}
	if (!hmap_put(s->next, kb, 8, &isnew) || !(g = node_put(w, l->other, &isnew, &at)))
		return err_set(CAIRN_ENOMEM, "out of memory");
	if (isnew) {
		g->kind = l->other_kind;
		g->key = l->other_key;
		g->key_len = l->other_key_len;
	}
	if (*s->n == *s->cap) {
		size_t cap = *s->cap ? *s->cap * 2 : 64;
		size_t *v = cr_reallocarray(*s->sel, cap, sizeof(*v));

		if (!v)
			return err_set(CAIRN_ENOMEM, "out of memory");
		*s->sel = v;
		*s->cap = cap;
	}
	(*s->sel)[(*s->n)++] = at;
	return 0;
}

int cairn_follow(cairn_txn *t, const cairn_ref *start, const cairn_hop *steps, size_t n_steps,
		 size_t max_nodes, int values, cairn_graph *out)
{
	hopf h[CAIRN_MAX_PATH];
	size_t *cur = NULL, *next = NULL, ncur = 0, nnext = 0, capcur = 0, capnext = 0;
	gwalk w;
	int rc;

	if (!t || !start || !out || (!steps && n_steps))
		return err_set(CAIRN_EINVAL, "cairn_follow: NULL argument");
	memset(out, 0, sizeof(*out));
	if (n_steps < 1 || n_steps > CAIRN_MAX_PATH)
		return err_set(CAIRN_EINVAL, "a follow has 1 to %d steps", CAIRN_MAX_PATH);
	max_nodes = max_nodes ? max_nodes : 500;
	if (max_nodes > CAIRN_MAX_NODES)
		return err_set(CAIRN_EINVAL, "max_nodes is at most %d", CAIRN_MAX_NODES);
	for (size_t i = 0; i < n_steps; i++)
		if ((rc = resolve_hop(t, &steps[i], &h[i])))
			return rc;
	if ((rc = walk_open(&w, t)))
		goto out;
	if (!(cur = cr_malloc(sizeof(*cur)))) {
		rc = err_set(CAIRN_ENOMEM, "out of memory");
		goto out;
	}
	capcur = 1;
	if ((rc = start_node(&w, start, &cur[0])))
		goto out;
	ncur = 1;
	for (size_t i = 0; i < n_steps && ncur; i++) {
		hmap seen = HMAP_INIT;
		fl_step s = {&seen, &next, &nnext, &capnext, max_nodes};
		size_t *swap;

		size_t swapcap;

		nnext = 0;
		for (size_t j = 0; j < ncur && !rc && !w.truncated; j++)
			rc = each_link(&w, w.n[cur[j]].rid, &h[i], fl_link, &s);
		hmap_release(&seen);
		if (rc)
			goto out;
		/* The next step's Records become the current ones. */
		swap = cur;
		cur = next;
		next = swap;
		swapcap = capcur;
		capcur = capnext;
		capnext = swapcap;
		ncur = nnext;
	}
	for (size_t j = 0; j < ncur; j++)
		w.n[cur[j]].depth = (unsigned)n_steps;
	rc = answer(&w, cur, ncur, values, out);
out:
	cr_free(cur);
	cr_free(next);
	walk_close(&w);
	if (rc)
		memset(out, 0, sizeof(*out));
	return rc;
}

/* ---------------------------------------------------------- shortest path -- */

/*
 * Breadth first from both ends, a level at a time, always from the side
 * with the smaller frontier, until the two meet. Each side keeps its own
 * nodes: side 0 walks the hop's direction from `from`, side 1 the reverse
 * from `to`.
 */
typedef struct sp_side {
	gwalk w;
	hopf h;
	size_t level, end;	/* the frontier: nodes [level, end) */
	unsigned depth;
} sp_side;

typedef struct sp_step {
	sp_side *me, *other;
	const hopf *h;		/* the hop, for its Kinds (the ends need not be of them) */
	size_t from;
	int64_t meet_me, meet_other; /* where the sides met, the shortest way so far */
	size_t budget;
} sp_step;

static int sp_link(gwalk *w, const glink *l, void *arg)
{
	sp_step *s = arg;
	int64_t there;
	size_t at;
	int isnew;
	gnode *g;

	there = node_find(&s->other->w, l->other);
	if (node_find(w, l->other) >= 0 || (there != 0 && !kind_allowed(s->h, l->other_kind)))
		return 0;
	if (w->nn >= s->budget) {
		w->truncated = 1;
		return 1;
	}
	if (!(g = node_put(w, l->other, &isnew, &at)))
		return err_set(CAIRN_ENOMEM, "out of memory");
	g->kind = l->other_kind;
	g->key = l->other_key;
	g->key_len = l->other_key_len;
	g->depth = s->me->depth + 1;
	g->parent = (int64_t)s->from;
	g->via = *l;
	if (there >= 0 && (s->meet_me < 0 || s->other->w.n[there].depth <
						 s->other->w.n[s->meet_other].depth)) {
		s->meet_me = (int64_t)at;
		s->meet_other = there;
	}
	return 0;
}

/* Move node i of side s (and its Link to its parent) into the answer walk a. */
static int sp_take(gwalk *a, const gwalk *s, size_t i, size_t *at)
{
	const gnode *src = &s->n[i];
	int isnew;
	gnode *g = node_put(a, src->rid, &isnew, at);

	if (!g)
		return err_set(CAIRN_ENOMEM, "out of memory");
	if (isnew) {
		int64_t p = g->parent;

		*g = *src;
		g->parent = p;
	}
	return 0;
}

int cairn_shortest_path(cairn_txn *t, const cairn_ref *from, const cairn_ref *to, unsigned max_depth,
			const cairn_hop *hop, int values, cairn_graph *out)
{
	sp_side sd[2];
	hopf kinds;
	sp_step s = {NULL, NULL, NULL, 0, -1, -1, 0};
	gwalk a;
	size_t at0, at1, chain[2][CAIRN_MAX_PATH + 1], nchain[2] = {0, 0};
	int rc;

	if (!t || !from || !to || !out)
		return err_set(CAIRN_EINVAL, "cairn_shortest_path: NULL argument");
	memset(out, 0, sizeof(*out));
	memset(sd, 0, sizeof(sd));
	memset(&a, 0, sizeof(a));
	max_depth = max_depth ? max_depth : 4;
	if (max_depth > CAIRN_MAX_PATH)
		return err_set(CAIRN_EINVAL, "max_depth is 1 to %d", CAIRN_MAX_PATH);
	if ((rc = resolve_hop(t, hop, &kinds)))
		return rc;
	sd[0].h = kinds;
	sd[0].h.n_kinds = 0; /* checked in sp_link */
	sd[1].h = sd[0].h;
	s.h = &kinds;
	if (sd[0].h.dir != CAIRN_BOTH)
		sd[1].h.dir = sd[0].h.dir == CAIRN_OUT ? CAIRN_IN : CAIRN_OUT;
	if ((rc = walk_open(&sd[0].w, t)) || (rc = walk_open(&sd[1].w, t)) ||
	    (rc = walk_open(&a, t)) || (rc = start_node(&sd[0].w, from, &at0)) ||
	    (rc = start_node(&sd[1].w, to, &at1)))
		goto out;
	sd[0].end = sd[1].end = 1;
	s.budget = (size_t)CAIRN_MAX_NODES * 10;
	if (sd[0].w.n[0].rid == sd[1].w.n[0].rid) {
		s.meet_me = s.meet_other = 0;
		s.me = &sd[0];
		s.other = &sd[1];
	}
	while (s.meet_me < 0 && sd[0].depth + sd[1].depth < max_depth) {
		int side = sd[0].end - sd[0].level <= sd[1].end - sd[1].level ? 0 : 1;
		sp_side *me = &sd[side];

		if (me->level == me->end)
			break; /* this side has nowhere left to go: no path */
		s.me = me;
		s.other = &sd[!side];
		/* The whole level, keeping the meeting nearest the other end. */
		for (size_t i = me->level; i < me->end && !me->w.truncated; i++) {
			s.from = i;
			if ((rc = each_link(&me->w, me->w.n[i].rid, &me->h, sp_link, &s)))
				goto out;
		}
		me->level = me->end;
		me->end = me->w.nn;
		me->depth++;
		if (me->w.truncated)
			break;
	}
	out->truncated = sd[0].w.truncated || sd[1].w.truncated;
	if (s.meet_me < 0) {
		out->entries = sd[0].w.entries + sd[1].w.entries;
		goto out;
	}
	/* The chains from the meeting point back to each end. */
	for (int k = 0; k < 2; k++) {
		const gwalk *w = k == (s.me == &sd[0] ? 0 : 1) ? &s.me->w : &s.other->w;
		int64_t i = k == (s.me == &sd[0] ? 0 : 1) ? s.meet_me : s.meet_other;

		for (; i >= 0; i = w->n[i].parent)
			chain[k][nchain[k]++] = (size_t)i;
	}
	/* from .. meeting point (side 0, reversed), then on to `to` (side 1). */
	for (size_t j = nchain[0]; j-- > 0;) {
		size_t at;

		if ((rc = sp_take(&a, &sd[0].w, chain[0][j], &at)))
			goto out;
		a.n[at].depth = (unsigned)(nchain[0] - 1 - j);
		if (j + 1 < nchain[0]) { /* the Link from its parent, as met going out from it */
			glink l = sd[0].w.n[chain[0][j]].via;

			if ((rc = edge_add(&a, at - 1, at, &l, 1)))
				goto out;
		}
	}
	for (size_t j = 1; j < nchain[1]; j++) {
		size_t at;
		/* chain[1][j - 1] was reached from chain[1][j]: the Link, seen from the other end */
		glink l = sd[1].w.n[chain[1][j - 1]].via;

		if ((rc = sp_take(&a, &sd[1].w, chain[1][j], &at)))
			goto out;
		a.n[at].depth = (unsigned)(nchain[0] - 1 + j);
		l.out = !l.out;
		if ((rc = edge_add(&a, at - 1, at, &l, 1)))
			goto out;
	}
	a.entries = sd[0].w.entries + sd[1].w.entries;
	/* Stopped inside a level after the sides met: a path, maybe not the shortest. */
	a.truncated = sd[0].w.truncated || sd[1].w.truncated;
	rc = answer(&a, NULL, a.nn, values, out);
	out->found = !rc;
out:
	walk_close(&sd[0].w);
	walk_close(&sd[1].w);
	walk_close(&a);
	if (rc)
		memset(out, 0, sizeof(*out));
	return rc;
}
