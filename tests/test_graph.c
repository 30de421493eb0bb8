/*
 * Graph reads against a brute-force reference: a random graph of three Kinds
 * with hubs that 40% of the Links point to, mirrored in memory, and
 * cairn_neighborhood, cairn_follow and cairn_shortest_path compared with
 * breadth-first searches of this file's own, uncapped and capped, on main,
 * on a branch that diverged and at a past revision of main. Then small
 * graphs with known answers, values, and every argument error.
 */
#include <stdarg.h>
#include <stdlib.h>

#include "tests.h"

/* ------------------------------------------------------------ the model -- */

/* D has no Records and da no Links: filters that name them are valid and match nothing. */
static const char gschema[] = "{\"kinds\":["
			      "{\"name\":\"A\",\"attributes\":[{\"name\":\"n\",\"type\":\"int\"}]},"
			      "{\"name\":\"B\",\"attributes\":[{\"name\":\"n\",\"type\":\"int\"}]},"
			      "{\"name\":\"C\",\"attributes\":[{\"name\":\"n\",\"type\":\"int\"}]},"
			      "{\"name\":\"D\"}],"
			      "\"relations\":["
			      "{\"name\":\"ab\",\"from\":\"A\",\"to\":\"B\"},"
			      "{\"name\":\"bc\",\"from\":\"B\",\"to\":\"C\"},"
			      "{\"name\":\"ca\",\"from\":\"C\",\"to\":\"A\"},"
			      "{\"name\":\"aa\",\"from\":\"A\",\"to\":\"A\"},"
			      "{\"name\":\"da\",\"from\":\"D\",\"to\":\"A\"}]}";

enum { KA, KB, KC, KD, NKIND };
#define NREL 5
#define NSLOT 240  /* Record slots: slot s is of Kind s % 3 */
#define NINIT 200  /* the slots of the first commit */
#define NLINK0 600 /* its Links */
#define ALL_RELS ((1u << NREL) - 1)
#define ALL_KINDS ((1u << NKIND) - 1)

static const char *const kind_names[NKIND] = {"A", "B", "C", "D"};
static const char *const rel_names[NREL] = {"ab", "bc", "ca", "aa", "da"};
static const int rel_from[NREL] = {KA, KB, KC, KA, KD};
static const int rel_to[NREL] = {KB, KC, KA, KA, KA};
static const char *const key_prefix[5] = {"", "n-", "x:", "a key with spaces ", "Zz/"};

/* What a branch holds at one revision. Slots 0, 1 and 2 are the hubs of A, B and C. */
typedef struct model {
	int rec[NSLOT];				/* 0: absent; else n: {"n":n}, title tn */
	unsigned char link[NREL][NSLOT][NSLOT]; /* 0: absent; 1: no values; 1 + w: {"w":w} */
} model;

static int rnd(int n)
{
	return rand() % n;
}

static int slot_kind(int s)
{
	return s % 3;
}

static void slot_key(int s, char *buf, size_t cap)
{
	snprintf(buf, cap, "%s%d", key_prefix[s % 5], s);
}

static int kind_id(const char *name)
{
	for (int k = 0; name && k < NKIND; k++)
		if (strcmp(name, kind_names[k]) == 0)
			return k;
	return -1;
}

static int rel_id(const char *name)
{
	for (int r = 0; name && r < NREL; r++)
		if (strcmp(name, rel_names[r]) == 0)
			return r;
	return -1;
}

/* The slot a Kind and key name, or -1. */
static int key_slot(int kind, const char *key, size_t len)
{
	char want[64];
	size_t i = len;
	int s = 0;

	if (kind < 0 || !key)
		return -1;
	while (i > 0 && key[i - 1] >= '0' && key[i - 1] <= '9')
		i--;
	if (i == len || len - i > 3)
		return -1;
	for (size_t j = i; j < len; j++)
		s = s * 10 + (key[j] - '0');
	if (s >= NSLOT || slot_kind(s) != kind)
		return -1;
	slot_key(s, want, sizeof(want));
	return test_streq(key, len, want) ? s : -1;
}

/* A growing text of import lines. */
typedef struct sbuf {
	char *p;
	size_t n, cap;
	int oom;
} sbuf;

static void sb_printf(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void sb_printf(sbuf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (b->oom)
		return;
	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(b->p ? b->p + b->n : NULL, b->p ? b->cap - b->n : 0, fmt, ap);
		va_end(ap);
		if (n < 0) {
			b->oom = 1;
			return;
		}
		if (b->p && b->n + (size_t)n < b->cap) {
			b->n += (size_t)n;
			return;
		}
		{
			size_t cap = (b->cap ? b->cap * 2 : 4096) + (size_t)n;
			char *p = realloc(b->p, cap);

			if (!p) {
				b->oom = 1;
				return;
			}
			b->p = p;
			b->cap = cap;
		}
	}
}

static void ref_text(int s, char *buf, size_t cap)
{
	char k[64];

	slot_key(s, k, sizeof(k));
	snprintf(buf, cap, "%s:%s", kind_names[slot_kind(s)], k);
}

static void m_put(model *m, sbuf *b, int s)
{
	char k[64];

	m->rec[s] = 1 + rnd(100000);
	slot_key(s, k, sizeof(k));
	sb_printf(b, "{\"kind\":\"%s\",\"key\":\"%s\",\"title\":\"t%d\",\"values\":{\"n\":%d}}\n",
		  kind_names[slot_kind(s)], k, m->rec[s], m->rec[s]);
}

/* Delete with cascade: the Links that touch the Record go with it. */
static void m_delete(model *m, sbuf *b, int s)
{
	char k[64];

	m->rec[s] = 0;
	for (int r = 0; r < NREL; r++)
		for (int o = 0; o < NSLOT; o++)
			m->link[r][s][o] = m->link[r][o][s] = 0;
	slot_key(s, k, sizeof(k));
	sb_printf(b, "{\"kind\":\"%s\",\"key\":\"%s\",\"op\":\"delete\",\"cascade\":true}\n",
		  kind_names[slot_kind(s)], k);
}

/* Create or replace a Link; w > 0 gives it the values {"w":w}. */
static void m_link(model *m, sbuf *b, int r, int f, int t, int w)
{
	char fr[80], to[80];

	m->link[r][f][t] = (unsigned char)(1 + w);
	ref_text(f, fr, sizeof(fr));
	ref_text(t, to, sizeof(to));
	if (w)
		sb_printf(b,
			  "{\"rel\":\"%s\",\"from\":\"%s\",\"to\":\"%s\",\"values\":{\"w\":%d}}\n",
			  rel_names[r], fr, to, w);
	else
		sb_printf(b, "{\"rel\":\"%s\",\"from\":\"%s\",\"to\":\"%s\"}\n", rel_names[r], fr,
			  to);
}

static void m_unlink(model *m, sbuf *b, int r, int f, int t)
{
	char fr[80], to[80];

	m->link[r][f][t] = 0;
	ref_text(f, fr, sizeof(fr));
	ref_text(t, to, sizeof(to));
	sb_printf(b, "{\"rel\":\"%s\",\"from\":\"%s\",\"to\":\"%s\",\"op\":\"unlink\"}\n",
		  rel_names[r], fr, to);
}

/* A random existing Record of a Kind (there is always one). */
static int random_rec(const model *m, int kind)
{
	for (;;) {
		int s = rnd(NSLOT / 3) * 3 + kind;

		if (m->rec[s])
			return s;
	}
}

static int random_any(const model *m)
{
	return random_rec(m, rnd(3));
}

/* A random new Link, not a self-Link; 40% of them point to the hub of their `to` Kind. */
static void random_new_link(model *m, sbuf *b)
{
	for (;;) {
		int r = rnd(4), f = random_rec(m, rel_from[r]), t;

		t = rnd(100) < 40 && m->rec[rel_to[r]] ? rel_to[r] : random_rec(m, rel_to[r]);
		if (f == t || m->link[r][f][t])
			continue;
		m_link(m, b, r, f, t, rnd(10) < 3 ? 1 + rnd(99) : 0);
		return;
	}
}

/* A random existing Link (there is always one). */
static void random_old_link(const model *m, int *r, int *f, int *t)
{
	for (;;) {
		*r = rnd(4);
		*f = random_rec(m, rel_from[*r]);
		for (int i = 0; i < 8; i++) {
			*t = random_rec(m, rel_to[*r]);
			if (m->link[*r][*f][*t])
				return;
		}
		if (rnd(2) && m->link[*r][*f][rel_to[*r]]) {
			*t = rel_to[*r];
			return;
		}
	}
}

/* ------------------------------------------------------------- the views -- */

typedef struct edge {
	int r, f, t;
} edge;

/* A model as read on a branch at a revision, with its Links indexed both ways. */
typedef struct view {
	const model *m;
	const char *branch;
	uint64_t at;
	const char *name;
	edge *e;
	int ne;
	int off[2][NSLOT + 1]; /* edges out of slot s: ids[0][off[0][s] .. off[0][s + 1]) */
	int *ids[2];
	int *eidx;    /* [r][f][t]: edge index + 1 */
	int *scratch; /* 2 * ne + 2 ints */
} view;

static void view_free(view *v)
{
	free(v->e);
	free(v->ids[0]);
	free(v->ids[1]);
	free(v->eidx);
	free(v->scratch);
	memset(v, 0, sizeof(*v));
}

static int view_build(view *v, const model *m, const char *branch, uint64_t at, const char *name)
{
	int n = 0;

	memset(v, 0, sizeof(*v));
	v->m = m;
	v->branch = branch;
	v->at = at;
	v->name = name;
	for (int r = 0; r < NREL; r++)
		for (int f = 0; f < NSLOT; f++)
			for (int t = 0; t < NSLOT; t++)
				n += m->link[r][f][t] != 0;
	v->e = calloc((size_t)n + 1, sizeof(edge));
	v->ids[0] = calloc((size_t)n + 1, sizeof(int));
	v->ids[1] = calloc((size_t)n + 1, sizeof(int));
	v->eidx = calloc((size_t)NREL * NSLOT * NSLOT, sizeof(int));
	v->scratch = calloc(2 * (size_t)n + 2, sizeof(int));
	if (!v->e || !v->ids[0] || !v->ids[1] || !v->eidx || !v->scratch)
		return -1;
	for (int r = 0; r < NREL; r++)
		for (int f = 0; f < NSLOT; f++)
			for (int t = 0; t < NSLOT; t++)
				if (m->link[r][f][t]) {
					v->e[v->ne] = (edge){r, f, t};
					v->eidx[(r * NSLOT + f) * NSLOT + t] = ++v->ne;
				}
	for (int d = 0; d < 2; d++) {
		int fill[NSLOT];

		memset(v->off[d], 0, sizeof(v->off[d]));
		for (int i = 0; i < v->ne; i++)
			v->off[d][(d ? v->e[i].t : v->e[i].f) + 1]++;
		for (int s = 0; s < NSLOT; s++)
			v->off[d][s + 1] += v->off[d][s];
		memcpy(fill, v->off[d], sizeof(fill));
		for (int i = 0; i < v->ne; i++)
			v->ids[d][fill[d ? v->e[i].t : v->e[i].f]++] = i;
	}
	return 0;
}

/* A hop as the reference sees it. */
typedef struct rhop {
	int dir;		   /* as passed: 0 means both */
	unsigned rels, kinds;	   /* masks */
	int list_rels, list_kinds; /* pass them as lists (else NULL, and the mask is all) */
} rhop;

static const rhop hop_all = {0, ALL_RELS, ALL_KINDS, 0, 0};

static int hop_dir(const rhop *h)
{
	return h->dir ? h->dir : CAIRN_BOTH;
}

/* The API's hop for a reference hop; rn and kn hold the names. */
static void hop_make(const rhop *r, cairn_hop *h, const char **rn, const char **kn)
{
	memset(h, 0, sizeof(*h));
	h->dir = r->dir;
	if (r->list_rels) {
		for (int i = 0; i < NREL; i++)
			if (r->rels >> i & 1)
				rn[h->n_rels++] = rel_names[i];
		h->rels = rn;
	}
	if (r->list_kinds) {
		for (int i = 0; i < NKIND; i++)
			if (r->kinds >> i & 1)
				kn[h->n_kinds++] = kind_names[i];
		h->kinds = kn;
	}
}

static unsigned random_mask(int bits)
{
	unsigned m;

	do
		m = (unsigned)rnd(1 << bits);
	while (!m);
	return m;
}

static void random_hop(rhop *h)
{
	static const int dirs[] = {0, CAIRN_OUT, CAIRN_IN, CAIRN_BOTH};

	h->dir = dirs[rnd(4)];
	h->list_rels = rnd(5) >= 2;
	h->rels = h->list_rels ? random_mask(NREL) : ALL_RELS;
	h->list_kinds = rnd(2);
	h->kinds = h->list_kinds ? random_mask(NKIND) : ALL_KINDS;
}

/*
 * The Records hop h takes x to, into ys (and the edges into es): out first,
 * then in. A Record of a Kind h does not allow is not reached, unless it is
 * `exempt`. Returns how many.
 */
static int hop_from(const view *v, int x, const rhop *h, int exempt, int *ys, int *es)
{
	int n = 0;

	for (int d = 0; d < 2; d++) {
		if (!(hop_dir(h) & (d ? CAIRN_IN : CAIRN_OUT)))
			continue;
		for (int i = v->off[d][x]; i < v->off[d][x + 1]; i++) {
			const edge *e = &v->e[v->ids[d][i]];
			int y = d ? e->f : e->t;

			if (!(h->rels >> e->r & 1))
				continue;
			if (y != exempt && !(h->kinds >> slot_kind(y) & 1))
				continue;
			ys[n] = y;
			if (es)
				es[n] = v->ids[d][i];
			n++;
		}
	}
	return n;
}

static void describe_hops(char *buf, size_t cap, const rhop *h, int n)
{
	size_t len = strlen(buf);

	for (int i = 0; i < n && len < cap; i++)
		len += (size_t)snprintf(buf + len, cap - len, "[dir %d rels %s0x%x kinds %s0x%x]",
					h[i].dir, h[i].list_rels ? "" : "all ", h[i].rels,
					h[i].list_kinds ? "" : "all ", h[i].kinds);
}

static int begin(cairn_store *st, const view *v, cairn_txn **t)
{
	cairn_read_options ro = {0};

	ro.domain = "d";
	ro.branch = v->branch;
	ro.at_revision = v->at;
	if (cairn_txn_begin(st, &ro, t)) {
		fprintf(stderr, "    read %s: %s\n", v->name, cairn_errmsg());
		return 1;
	}
	return 0;
}

/* -------------------------------------------------------------- checks -- */

/* The slot of a returned Record, or -1 when the model has no such Record. */
static int rec_slot(const model *m, const cairn_record *r)
{
	int s = key_slot(kind_id(r->kind), r->key, r->key_len);

	return s >= 0 && m->rec[s] ? s : -1;
}

/* A returned Record's header and values (NULL without values) are the model's. */
static int rec_ok(const model *m, int s, const cairn_record *r, int values)
{
	char want[64];

	snprintf(want, sizeof(want), "t%d", m->rec[s]);
	if (!r->title || !test_streq(r->title, r->title_len, want) || !r->vid || !r->revision ||
	    r->vector_dim)
		return 0;
	if (!values)
		return r->values == NULL && r->values_len == 0;
	snprintf(want, sizeof(want), "{\"n\":%d}", m->rec[s]);
	return r->values && test_streq(r->values, r->values_len, want);
}

/* The view's edge a returned Link is, or -1. */
static int link_edge(const view *v, const cairn_link *l)
{
	int r = rel_id(l->rel), f, t;

	if (r < 0 || kind_id(l->from_kind) != rel_from[r] || kind_id(l->to_kind) != rel_to[r])
		return -1;
	f = key_slot(rel_from[r], l->from_key, l->from_key_len);
	t = key_slot(rel_to[r], l->to_key, l->to_key_len);
	if (f < 0 || t < 0)
		return -1;
	return v->eidx[(r * NSLOT + f) * NSLOT + t] - 1;
}

static int link_ok(const view *v, int e, const cairn_link *l, int values)
{
	int w = v->m->link[v->e[e].r][v->e[e].f][v->e[e].t] - 1;
	char want[32];

	if (!l->vid || !l->revision)
		return 0;
	if (!values)
		return l->values == NULL && l->values_len == 0;
	if (w)
		snprintf(want, sizeof(want), "{\"w\":%d}", w);
	else
		snprintf(want, sizeof(want), "{}");
	return l->values && test_streq(l->values, l->values_len, want);
}

#define FAIL(...)                                                                                  \
	do {                                                                                       \
		fprintf(stderr, "    %s: ", what);                                                 \
		fprintf(stderr, __VA_ARGS__);                                                      \
		fputc('\n', stderr);                                                               \
		bad = 1;                                                                           \
		goto out;                                                                          \
	} while (0)

/* ---------------------------------------------------- neighborhood, ref -- */

typedef struct rnb {
	int depth[NSLOT];	 /* -1: not reached */
	int n;			 /* Records reached */
	unsigned char *followed; /* per edge of the view */
	int nlinks;
} rnb;

/* Breadth first, a level at a time: level d is expanded with hop d + 1 (the last repeats). */
static void ref_neighborhood(const view *v, const int *start, int ns, int depth, const rhop *hops,
			     int nh, rnb *o)
{
	int order[NSLOT], level = 0, *ys = v->scratch, *es = v->scratch + v->ne + 1;

	for (int s = 0; s < NSLOT; s++)
		o->depth[s] = -1;
	memset(o->followed, 0, (size_t)v->ne + 1);
	o->n = o->nlinks = 0;
	for (int i = 0; i < ns; i++)
		if (o->depth[start[i]] < 0) {
			o->depth[start[i]] = 0;
			order[o->n++] = start[i];
		}
	for (int d = 0; d < depth; d++) {
		const rhop *h = nh ? &hops[d < nh ? d : nh - 1] : &hop_all;
		int end = o->n;

		for (int i = level; i < end; i++) {
			int k = hop_from(v, order[i], h, -1, ys, es);

			for (int j = 0; j < k; j++) {
				if (!o->followed[es[j]]) {
					o->followed[es[j]] = 1;
					o->nlinks++;
				}
				if (o->depth[ys[j]] < 0) {
					o->depth[ys[j]] = d + 1;
					order[o->n++] = ys[j];
				}
			}
		}
		level = end;
	}
}

/*
 * A neighborhood's answer against the reference: exactly; or with caps, as
 * a part of it (Records it has, no nearer than it has them; Links it
 * followed), and exactly when not truncated. Both ways: starts first, then
 * by depth; every Link between two returned Records; every Record past the
 * starts joined by a Link to one a level nearer.
 */
static int check_nb(const view *v, const rnb *ref, const int *start, int ns, int depth,
		    const cairn_graph *g, int values, int capped, size_t max_nodes,
		    const char *what)
{
	int pos[NSLOT], parent[NSLOT], nstart = 0, ndepth0 = 0, bad = 0;
	unsigned char *seen = calloc((size_t)v->ne + 1, 1);

	memset(pos, 0, sizeof(pos));
	memset(parent, 0, sizeof(parent));
	if (!seen)
		FAIL("out of memory");
	if (!capped && g->truncated)
		FAIL("truncated without a cap");
	if ((g->n_nodes && !g->nodes) || (g->n_links && !g->links))
		FAIL("NULL arrays");
	if (capped && g->n_nodes > max_nodes)
		FAIL("%zu Records, max_nodes %zu", g->n_nodes, max_nodes);
	for (size_t i = 0; i < g->n_nodes; i++) {
		const cairn_node *nd = &g->nodes[i];
		int s = rec_slot(v->m, &nd->rec);

		if (s < 0)
			FAIL("Record %zu (%s:%.*s) is not in the view", i,
			     nd->rec.kind ? nd->rec.kind : "?", (int)nd->rec.key_len,
			     nd->rec.key ? nd->rec.key : "");
		if (pos[s])
			FAIL("Record %s:%.*s returned twice", nd->rec.kind, (int)nd->rec.key_len,
			     nd->rec.key);
		pos[s] = (int)i + 1;
		if (!rec_ok(v->m, s, &nd->rec, values))
			FAIL("Record %s:%.*s: header or values differ (values=%d)", nd->rec.kind,
			     (int)nd->rec.key_len, nd->rec.key, values);
		if (ref->depth[s] < 0)
			FAIL("Record %s:%.*s (depth %u) is not in the reference answer",
			     nd->rec.kind, (int)nd->rec.key_len, nd->rec.key, nd->depth);
		if (capped ? nd->depth < (unsigned)ref->depth[s]
			   : nd->depth != (unsigned)ref->depth[s])
			FAIL("Record %s:%.*s at depth %u, the reference at %d", nd->rec.kind,
			     (int)nd->rec.key_len, nd->rec.key, nd->depth, ref->depth[s]);
		if (nd->depth > (unsigned)depth)
			FAIL("depth %u > %d", nd->depth, depth);
		if (i && nd->depth < g->nodes[i - 1].depth)
			FAIL("Record %zu at depth %u after one at depth %u", i, nd->depth,
			     g->nodes[i - 1].depth);
		ndepth0 += nd->depth == 0;
	}
	for (int i = 0; i < ns; i++) {
		int dup = 0;

		for (int j = 0; j < i; j++)
			dup |= start[j] == start[i];
		if (dup)
			continue;
		if (pos[start[i]] != nstart + 1 || g->nodes[nstart].depth != 0)
			FAIL("start %d is not Record %d at depth 0", i, nstart);
		nstart++;
	}
	if (ndepth0 != nstart)
		FAIL("%d Records at depth 0, %d starts", ndepth0, nstart);
	for (size_t i = 0; i < g->n_links; i++) {
		const cairn_link *l = &g->links[i];
		int e = link_edge(v, l), df, dt;

		if (e < 0)
			FAIL("Link %zu %s %s:%.*s -> %s:%.*s is not in the view", i,
			     l->rel ? l->rel : "?", l->from_kind ? l->from_kind : "?",
			     (int)l->from_key_len, l->from_key ? l->from_key : "",
			     l->to_kind ? l->to_kind : "?", (int)l->to_key_len,
			     l->to_key ? l->to_key : "");
		if (seen[e]++)
			FAIL("Link %s %s:%.*s -> %s:%.*s returned twice", l->rel, l->from_kind,
			     (int)l->from_key_len, l->from_key, l->to_kind, (int)l->to_key_len,
			     l->to_key);
		if (!pos[v->e[e].f] || !pos[v->e[e].t])
			FAIL("Link %s %s:%.*s -> %s:%.*s has an end not returned", l->rel,
			     l->from_kind, (int)l->from_key_len, l->from_key, l->to_kind,
			     (int)l->to_key_len, l->to_key);
		if (!ref->followed[e])
			FAIL("Link %s %s:%.*s -> %s:%.*s is not one the reference follows", l->rel,
			     l->from_kind, (int)l->from_key_len, l->from_key, l->to_kind,
			     (int)l->to_key_len, l->to_key);
		if (!link_ok(v, e, l, values))
			FAIL("Link %s %s:%.*s -> %s:%.*s: values or header differ (values=%d)",
			     l->rel, l->from_kind, (int)l->from_key_len, l->from_key, l->to_kind,
			     (int)l->to_key_len, l->to_key, values);
		df = (int)g->nodes[pos[v->e[e].f] - 1].depth;
		dt = (int)g->nodes[pos[v->e[e].t] - 1].depth;
		if (df >= depth && dt >= depth)
			FAIL("Link between two Records at depth %d", depth);
		if (df + 1 == dt)
			parent[v->e[e].t] = 1;
		if (dt + 1 == df)
			parent[v->e[e].f] = 1;
	}
	for (size_t i = 0; i < g->n_nodes; i++) {
		int s = rec_slot(v->m, &g->nodes[i].rec);

		if (g->nodes[i].depth > 0 && !parent[s])
			FAIL("Record %zu (depth %u) has no Link to a Record a level nearer", i,
			     g->nodes[i].depth);
	}
	if (!capped || !g->truncated) {
		if (g->n_nodes != (size_t)ref->n)
			FAIL("%zu Records, the reference %d (truncated %d)", g->n_nodes, ref->n,
			     g->truncated);
		if (g->n_links != (size_t)ref->nlinks)
			FAIL("%zu Links, the reference %d (truncated %d)", g->n_links, ref->nlinks,
			     g->truncated);
	}
out:
	free(seen);
	return bad;
}

/* A neighborhood query. */
typedef struct nbq {
	int start[3], ns;
	unsigned depth; /* as passed (0: 1) */
	rhop hops[3];
	int nh; /* 0: hops NULL */
	size_t fanout, max_nodes;
	int values;
} nbq;

static int nbq_depth(const nbq *q)
{
	return q->depth ? (int)q->depth : 1;
}

static void nbq_describe(char *buf, size_t cap, const view *v, const nbq *q)
{
	size_t len = (size_t)snprintf(buf, cap, "neighborhood on %s, start", v->name);

	for (int i = 0; i < q->ns && len < cap; i++) {
		char r[80];

		ref_text(q->start[i], r, sizeof(r));
		len += (size_t)snprintf(buf + len, cap - len, " %s", r);
	}
	if (len < cap)
		snprintf(buf + len, cap - len,
			 ", depth %u, fanout %zu, max_nodes %zu, values %d, hops ", q->depth,
			 q->fanout, q->max_nodes, q->values);
	describe_hops(buf, cap, q->hops, q->nh);
}

/* Run a neighborhood query on a view into g (in txn t). */
static int nb_call(cairn_txn *t, const nbq *q, cairn_graph *g)
{
	cairn_neighborhood_options o;
	cairn_ref refs[3];
	cairn_hop hh[3];
	const char *rn[3][NREL], *kn[3][NKIND];
	char keys[3][64];

	memset(&o, 0, sizeof(o));
	for (int i = 0; i < q->ns; i++) {
		slot_key(q->start[i], keys[i], sizeof(keys[i]));
		refs[i].kind = kind_names[slot_kind(q->start[i])];
		refs[i].key = keys[i];
		refs[i].key_len = i % 2 ? strlen(keys[i]) : 0; /* 0: strlen */
	}
	for (int i = 0; i < q->nh; i++)
		hop_make(&q->hops[i], &hh[i], rn[i], kn[i]);
	o.start = refs;
	o.n_start = (size_t)q->ns;
	o.depth = q->depth;
	o.hops = q->nh ? hh : NULL;
	o.n_hops = (size_t)q->nh;
	o.fanout = q->fanout;
	o.max_nodes = q->max_nodes;
	o.values = q->values;
	return cairn_neighborhood(t, &o, g);
}

static int run_nb(cairn_store *st, const view *v, const nbq *q, int capped, rnb *ref)
{
	char what[1024];
	cairn_graph g;
	cairn_txn *t;
	int bad = 0;

	nbq_describe(what, sizeof(what), v, q);
	ref_neighborhood(v, q->start, q->ns, nbq_depth(q), q->hops, q->nh, ref);
	if (begin(st, v, &t))
		return 1;
	if (nb_call(t, q, &g)) {
		fprintf(stderr, "    %s: %s\n", what, cairn_errmsg());
		bad = 1;
	} else {
		bad = check_nb(v, ref, q->start, q->ns, nbq_depth(q), &g, q->values, capped,
			       q->max_nodes, what);
	}
	cairn_txn_end(t);
	return bad;
}

static void random_starts(const model *m, nbq *q)
{
	q->ns = 1 + (rnd(4) == 0) + (rnd(8) == 0);
	for (int i = 0; i < q->ns; i++) {
		int again;

		do {
			q->start[i] = rnd(4) == 0 && m->rec[i % 3] ? i % 3 : random_any(m);
			again = 0;
			for (int j = 0; j < i; j++)
				again |= q->start[j] == q->start[i];
		} while (again);
	}
}

/* ----------------------------------------------------------- the world -- */

/* The random graph: main at rev1 (v1), main's head, and the head of branch b made at rev1. */
typedef struct world {
	cairn_store *st;
	model *v1, *main, *br;
	uint64_t rev1;
	view vv[3]; /* main head, branch b, main at rev1 */
	rnb ref;
} world;

static int commit_text(cairn_store *st, const char *branch, sbuf *b, uint64_t *rev)
{
	cairn_commit_options co = {0};
	cairn_commit_result res;
	cairn_changeset *cs;
	const char *p = b->p;
	int rc;

	if (b->oom || !p)
		return CAIRN_ENOMEM;
	if ((rc = cairn_changeset_new(&cs)))
		return rc;
	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);

		if (n && (rc = cairn_changeset_add_json(cs, p, n))) {
			fprintf(stderr, "    line %.*s: %s\n", (int)n, p, cairn_errmsg());
			cairn_changeset_free(cs);
			return rc;
		}
		p += n + (nl ? 1 : 0);
	}
	co.domain = "d";
	co.branch = branch;
	co.prov.actor = "test";
	rc = cairn_commit(st, &co, cs, &res);
	if (rc)
		fprintf(stderr, "    commit on %s: %s\n", branch ? branch : "main", cairn_errmsg());
	cairn_changeset_free(cs);
	if (!rc && rev)
		*rev = res.revision;
	b->n = 0;
	if (b->p)
		b->p[0] = '\0';
	return rc;
}

/* Deletes, unlinks, new Records (slots lo..hi-1) and Links, new values: one commit's worth. */
static void diverge(model *m, sbuf *b, int lo, int hi, int *deleted, int *nd)
{
	*nd = 0;
	for (int i = 0; i < 10; i++) {
		int s;

		do
			s = random_any(m);
		while (s < 3);
		m_delete(m, b, s);
		deleted[(*nd)++] = s;
	}
	for (int i = 0; i < 60; i++) {
		int r, f, t;

		random_old_link(m, &r, &f, &t);
		m_unlink(m, b, r, f, t);
	}
	for (int s = lo; s < hi; s++)
		m_put(m, b, s);
	for (int i = 0; i < 10; i++)
		m_put(m, b, random_any(m));
	for (int i = 0; i < 60; i++)
		random_new_link(m, b);
	for (int i = 0; i < 30; i++) { /* new values, or none */
		int r, f, t;

		random_old_link(m, &r, &f, &t);
		m_link(m, b, r, f, t, rnd(3) ? 100 + rnd(99) : 0);
	}
}

static void world_free(world *w)
{
	for (int i = 0; i < 3; i++)
		view_free(&w->vv[i]);
	free(w->ref.followed);
	free(w->v1);
	free(w->main);
	free(w->br);
	cairn_close(w->st);
	memset(w, 0, sizeof(*w));
}

static int world_build(world *w, unsigned seed)
{
	cairn_open_options oo = {.flags = CAIRN_OPEN_CREATE | CAIRN_OPEN_NOSYNC | CAIRN_OPEN_NO_BACKGROUND};
	cairn_commit_options co = {0};
	sbuf b = {0};
	int deleted[16], nd, rc = -1;

	memset(w, 0, sizeof(*w));
	w->v1 = calloc(1, sizeof(model));
	w->main = calloc(1, sizeof(model));
	w->br = calloc(1, sizeof(model));
	if (!w->v1 || !w->main || !w->br)
		goto out;
	srand(seed);
	if (cairn_open(test_path("store"), &oo, &w->st) || cairn_domain_create(w->st, "d"))
		goto out;
	co.domain = "d";
	co.prov.actor = "test";
	if (cairn_schema_apply(w->st, &co, gschema, strlen(gschema), NULL))
		goto out;
	/* rev1: 200 Records, 600 Links, a few self-Links. */
	for (int s = 0; s < NINIT; s++)
		m_put(w->v1, &b, s);
	for (int i = 0; i < NLINK0; i++)
		random_new_link(w->v1, &b);
	for (int i = 0; i < 4; i++) {
		int s;

		do
			s = random_rec(w->v1, KA);
		while (s == 0);
		m_link(w->v1, &b, 3, s, s, i);
	}
	if (commit_text(w->st, NULL, &b, &w->rev1) || cairn_branch_create(w->st, "d", "b", NULL))
		goto out;
	/* Main changes after the fork: two commits, the second brings back deleted Records. */
	memcpy(w->main, w->v1, sizeof(model));
	diverge(w->main, &b, 200, 220, deleted, &nd);
	if (commit_text(w->st, NULL, &b, NULL))
		goto out;
	for (int i = 0; i < 3; i++) {
		int s = deleted[i];

		m_put(w->main, &b, s);
		for (int j = 0; j < 4; j++) {
			int r = slot_kind(s) == KA ? 3 : slot_kind(s) == KB ? 0 : 1;
			int o = random_rec(w->main, rel_from[r]);

			if (o != s && !w->main->link[r][o][s])
				m_link(w->main, &b, r, o, s, j);
		}
	}
	if (commit_text(w->st, NULL, &b, NULL))
		goto out;
	/* The branch's own changes. */
	memcpy(w->br, w->v1, sizeof(model));
	diverge(w->br, &b, 220, 240, deleted, &nd);
	if (commit_text(w->st, "b", &b, NULL))
		goto out;
	if (view_build(&w->vv[0], w->main, NULL, 0, "main") ||
	    view_build(&w->vv[1], w->br, "b", 0, "branch b") ||
	    view_build(&w->vv[2], w->v1, NULL, w->rev1, "main at rev1"))
		goto out;
	w->ref.followed = calloc(NREL * NSLOT * NSLOT, 1);
	rc = w->ref.followed ? 0 : -1;
out:
	if (rc)
		fprintf(stderr, "    world_build: %s\n", cairn_errmsg());
	free(b.p);
	return rc;
}

/* ---------------------------------------------------- neighborhood tests -- */

/* Uncapped neighborhoods against the reference, on main, on the branch and in the past. */
void test_graph_neighborhood_reference(void)
{
	world w;
	int bad = 0, big = 0, filtered = 0;

	OK(world_build(&w, 4242));
	for (int i = 0; i < 2000 && !bad; i++) {
		view *v = &w.vv[i % 4 == 3 ? 1 : i % 4 == 2 ? 2 : 0];
		nbq q;

		memset(&q, 0, sizeof(q));
		random_starts(v->m, &q);
		q.depth = (unsigned)rnd(4);
		q.nh = rnd(nbq_depth(&q) + 1);
		for (int h = 0; h < q.nh; h++)
			random_hop(&q.hops[h]);
		q.fanout = CAIRN_MAX_NODES;
		q.max_nodes = rnd(2) ? CAIRN_MAX_NODES : NSLOT;
		q.values = rnd(2);
		bad |= run_nb(w.st, v, &q, 0, &w.ref);
		big += w.ref.n > 100;
		filtered += q.nh && (q.hops[0].list_kinds || q.hops[0].list_rels);
	}
	world_free(&w);
	CHECK(!bad);
	/* The queries did reach far and did filter. */
	CHECK(big > 20 && filtered > 100);
}

/*
 * Depth 1 from one Record with fanout k: the Links followed are the first k
 * in index order, out before in, by Relation: every group of (direction,
 * Relation) before the one the cap falls in whole, the rest none.
 */
static int check_fanout_order(cairn_store *st, const view *v, int s, const rhop *h, size_t k,
			      const char *what)
{
	int cnt[2][NREL], got[2][NREL], total = 0, bad = 0;
	size_t left = k;
	cairn_graph g;
	cairn_txn *t;
	nbq q;

	memset(cnt, 0, sizeof(cnt));
	memset(got, 0, sizeof(got));
	for (int d = 0; d < 2; d++) {
		if (!(hop_dir(h) & (d ? CAIRN_IN : CAIRN_OUT)))
			continue;
		for (int i = v->off[d][s]; i < v->off[d][s + 1]; i++) {
			const edge *e = &v->e[v->ids[d][i]];

			if ((h->rels >> e->r & 1) && (h->kinds >> slot_kind(d ? e->f : e->t) & 1)) {
				cnt[d][e->r]++;
				total++;
			}
		}
	}
	memset(&q, 0, sizeof(q));
	q.start[0] = s;
	q.ns = 1;
	q.depth = 1;
	q.hops[0] = *h;
	q.nh = 1;
	q.fanout = k;
	q.max_nodes = CAIRN_MAX_NODES;
	if (begin(st, v, &t))
		return 1;
	if (nb_call(t, &q, &g))
		FAIL("%s", cairn_errmsg());
	if (g.truncated != (total > (int)k))
		FAIL("truncated %d with %d Links and fanout %zu", g.truncated, total, k);
	if (g.n_links != (total > (int)k ? k : (size_t)total))
		FAIL("%zu Links with %d Links and fanout %zu", g.n_links, total, k);
	for (size_t i = 0; i < g.n_links; i++) {
		int e = link_edge(v, &g.links[i]);

		if (e < 0 || (v->e[e].f != s && v->e[e].t != s))
			FAIL("Link %zu does not touch the start", i);
		got[v->e[e].f == s ? 0 : 1][v->e[e].r]++;
	}
	for (int d = 0; d < 2; d++)
		for (int r = 0; r < NREL; r++) {
			size_t want = (size_t)cnt[d][r] < left ? (size_t)cnt[d][r] : left;

			if ((size_t)got[d][r] != want)
				FAIL("%d Links %s of %s, expected %zu of %d (fanout %zu)",
				     got[d][r], d ? "in" : "out", rel_names[r], want, cnt[d][r], k);
			left -= want;
		}
out:
	cairn_txn_end(t);
	return bad;
}

/* Small fanout and max_nodes around the hubs: a part of the uncapped answer, and flagged. */
void test_graph_neighborhood_caps(void)
{
	world w;
	int bad = 0, truncated = 0, whole = 0, in, out;

	OK(world_build(&w, 777));
	for (int i = 0; i < 1500 && !bad; i++) {
		view *v = &w.vv[i % 3];
		nbq q;

		memset(&q, 0, sizeof(q));
		random_starts(v->m, &q);
		if (rnd(2)) /* a hub */
			q.start[0] = v->m->rec[i % 3] ? i % 3 : q.start[0];
		for (int j = 1; j < q.ns; j++)
			if (q.start[j] == q.start[0])
				q.ns = j;
		q.depth = (unsigned)rnd(4);
		/* One hop for all levels: the capped walk is then part of the uncapped one. */
		q.nh = rnd(2);
		if (q.nh)
			random_hop(&q.hops[0]);
		q.fanout = 1 + (size_t)rnd(rnd(4) ? 6 : 100);
		q.max_nodes = rnd(3) ? (size_t)q.ns + (size_t)rnd(40) : CAIRN_MAX_NODES;
		q.values = rnd(2);
		bad |= run_nb(w.st, v, &q, 1, &w.ref);
		/* Count what the cases covered: run the query again for its flag. */
		if (!bad) {
			cairn_txn *t;
			cairn_graph g;

			bad = begin(w.st, v, &t);
			if (!bad) {
				bad = nb_call(t, &q, &g) != 0;
				truncated += !bad && g.truncated;
				whole += !bad && !g.truncated && w.ref.n > 1;
				cairn_txn_end(t);
			}
		}
	}
	/* Around a hub, both ways: into the hub of A there are many Links, out of it few. */
	for (int hub = 0; hub < 3 && !bad; hub++)
		for (int d = CAIRN_OUT; d <= CAIRN_BOTH && !bad; d++) {
			rhop h = hop_all;
			char what[128];

			h.dir = d;
			for (size_t k = 1; k <= 12 && !bad; k += 5) {
				snprintf(what, sizeof(what),
					 "fanout order, hub %d, dir %d, fanout %zu", hub, d, k);
				bad |= check_fanout_order(w.st, &w.vv[0], hub, &h, k, what);
			}
			snprintf(what, sizeof(what), "fanout order, hub %d, dir %d, fanout 300",
				 hub, d);
			bad |= check_fanout_order(w.st, &w.vv[0], hub, &h, 300, what);
		}
	/* The hub's in-degree is what makes the cap bite one way and not the other. */
	in = w.vv[0].off[1][1] - w.vv[0].off[1][0];
	out = w.vv[0].off[0][1] - w.vv[0].off[0][0];
	/* Random Records, filters and fanouts. */
	for (int i = 0; i < 600 && !bad; i++) {
		const view *v = &w.vv[i % 3];
		int s;
		rhop h;
		char what[256];

		do
			s = random_any(v->m);
		while (v->m->link[3][s][s]); /* a self-Link is met twice, out and in */
		random_hop(&h); /* hop_make lists Relations in id order: the order of the groups */
		snprintf(what, sizeof(what), "fanout order on %s, slot %d, ", v->name, s);
		describe_hops(what, sizeof(what), &h, 1);
		bad |= check_fanout_order(w.st, v, s, &h, 1 + (size_t)rnd(5), what);
	}
	/* fanout 0 is 50: the hub of A has more Links in than that. */
	if (!bad) {
		cairn_txn *t;
		cairn_graph g;
		nbq q;

		memset(&q, 0, sizeof(q));
		q.ns = 1;
		q.start[0] = 0;
		q.nh = 1;
		q.hops[0] = hop_all;
		q.hops[0].dir = CAIRN_IN;
		bad = begin(w.st, &w.vv[0], &t);
		if (!bad) {
			bad = nb_call(t, &q, &g) != 0 || g.n_links != 50 || g.truncated != 1 ||
			      g.n_nodes != 51;
			cairn_txn_end(t);
		}
	}
	world_free(&w);
	CHECK(!bad);
	CHECK(truncated > 100 && whole > 50);
	CHECK(in > 60 && out < 30);
}

/* ----------------------------------------------------------------- values -- */

/* Values: the Records' as cairn_get has them, the Links' as cairn_links has them; NULL unasked. */
void test_graph_values(void)
{
	world w;
	cairn_txn *t;
	cairn_graph g, g0;
	nbq q;
	int with_values = 0;

	OK(world_build(&w, 99));
	memset(&q, 0, sizeof(q));
	q.ns = 2;
	q.start[0] = 0;
	q.start[1] = 1;
	q.depth = 2;
	q.fanout = CAIRN_MAX_NODES;
	q.max_nodes = CAIRN_MAX_NODES;
	q.values = 1;
	OK(begin(w.st, &w.vv[0], &t));
	OK(nb_call(t, &q, &g));
	CHECK(g.n_nodes > 50 && g.n_links > 100 && !g.truncated && g.entries > 0);
	for (size_t i = 0; i < g.n_nodes; i++) {
		const cairn_record *r = &g.nodes[i].rec;
		cairn_record want;

		OK(cairn_get(t, r->kind, r->key, r->key_len, &want));
		CHECK(r->values && want.values && r->values_len == want.values_len &&
		      memcmp(r->values, want.values, r->values_len) == 0);
		CHECK(r->title_len == want.title_len &&
		      memcmp(r->title, want.title, r->title_len) == 0);
		CHECK(r->vid == want.vid && r->revision == want.revision &&
		      r->key_len == want.key_len && memcmp(r->key, want.key, r->key_len) == 0 &&
		      strcmp(r->kind, want.kind) == 0);
	}
	for (size_t i = 0; i < g.n_links; i++) {
		const cairn_link *l = &g.links[i];
		cairn_link_cursor cur;
		cairn_link page[CAIRN_MAX_PAGE];
		size_t n;
		int found = 0;

		memset(&cur, 0, sizeof(cur));
		OK(cairn_links(t, l->from_kind, l->from_key, l->from_key_len, CAIRN_OUT, l->rel,
			       &cur, page, CAIRN_MAX_PAGE, &n));
		for (size_t j = 0; j < n; j++) {
			const cairn_link *p = &page[j];

			if (strcmp(p->to_kind, l->to_kind) || p->to_key_len != l->to_key_len ||
			    memcmp(p->to_key, l->to_key, l->to_key_len))
				continue;
			found++;
			CHECK(l->values && l->values_len == p->values_len &&
			      memcmp(l->values, p->values, p->values_len) == 0);
			CHECK(l->vid == p->vid && l->revision == p->revision);
			with_values += !test_streq(l->values, l->values_len, "{}");
		}
		CHECK(found == 1);
	}
	CHECK(with_values > 10);
	/* Unasked: the same answer without values. */
	q.values = 0;
	OK(nb_call(t, &q, &g0));
	CHECK(g0.n_nodes == g.n_nodes && g0.n_links == g.n_links);
	for (size_t i = 0; i < g0.n_nodes; i++) {
		CHECK(g0.nodes[i].rec.values == NULL && g0.nodes[i].rec.values_len == 0);
		CHECK(g0.nodes[i].rec.vid == g.nodes[i].rec.vid &&
		      g0.nodes[i].depth == g.nodes[i].depth);
		CHECK(g0.nodes[i].rec.title_len == g.nodes[i].rec.title_len &&
		      memcmp(g0.nodes[i].rec.title, g.nodes[i].rec.title, g.nodes[i].rec.title_len) == 0 &&
		      g0.nodes[i].rec.revision == g.nodes[i].rec.revision &&
		      g0.nodes[i].rec.vector_dim == g.nodes[i].rec.vector_dim &&
		      g0.nodes[i].rec.key_len == g.nodes[i].rec.key_len &&
		      memcmp(g0.nodes[i].rec.key, g.nodes[i].rec.key, g.nodes[i].rec.key_len) == 0);
	}
	for (size_t i = 0; i < g0.n_links; i++) {
		CHECK(g0.links[i].values == NULL && g0.links[i].values_len == 0);
		CHECK(g0.links[i].vid == g.links[i].vid &&
		      strcmp(g0.links[i].rel, g.links[i].rel) == 0);
	}
	/* Follow and shortest path too. */
	{
		char kf[64], kt[64];
		cairn_ref from = {"A", kf, 0}, to = {"C", kt, 0};
		cairn_hop steps[2] = {{CAIRN_IN, NULL, 0, NULL, 0}, {CAIRN_OUT, NULL, 0, NULL, 0}};

		slot_key(0, kf, sizeof(kf));
		slot_key(2, kt, sizeof(kt));
		for (int values = 0; values < 2; values++) {
			OK(cairn_follow(t, &from, steps, 2, CAIRN_MAX_NODES, values, &g));
			CHECK(g.n_nodes > 0 && g.n_links == 0 && g.links == NULL);
			for (size_t i = 0; i < g.n_nodes; i++) {
				int s = rec_slot(w.main, &g.nodes[i].rec);

				CHECK(s >= 0 && rec_ok(w.main, s, &g.nodes[i].rec, values));
				CHECK(g.nodes[i].depth == 2);
			}
			OK(cairn_shortest_path(t, &from, &to, 0, NULL, values, &g));
			CHECK(g.found && g.n_nodes >= 2 && g.n_links == g.n_nodes - 1);
			for (size_t i = 0; i < g.n_nodes; i++) {
				int s = rec_slot(w.main, &g.nodes[i].rec);

				CHECK(s >= 0 && rec_ok(w.main, s, &g.nodes[i].rec, values));
			}
			for (size_t i = 0; i < g.n_links; i++) {
				int e = link_edge(&w.vv[0], &g.links[i]);

				CHECK(e >= 0 && link_ok(&w.vv[0], e, &g.links[i], values));
			}
		}
	}
	cairn_txn_end(t);
	/* In the past and on the branch: the values of then and there. */
	for (int i = 0; i < 60; i++) {
		view *v = &w.vv[1 + i % 2];

		memset(&q, 0, sizeof(q));
		random_starts(v->m, &q);
		q.depth = 2;
		q.fanout = CAIRN_MAX_NODES;
		q.max_nodes = CAIRN_MAX_NODES;
		q.values = 1;
		CHECK(!run_nb(w.st, v, &q, 0, &w.ref));
	}
	world_free(&w);
}

/* ----------------------------------------------------------------- follow -- */

/*
 * Per step, the set of Records the previous step's set reaches, each once.
 * Returns the size of the last one (in cur); *over: a step had more than
 * max_nodes.
 */
static int ref_follow(const view *v, int start, const rhop *steps, int n, size_t max_nodes,
		      unsigned char *cur, int *over)
{
	unsigned char next[NSLOT];
	int count = 1, *ys = v->scratch;

	memset(cur, 0, NSLOT);
	cur[start] = 1;
	*over = 0;
	for (int i = 0; i < n; i++) {
		memset(next, 0, sizeof(next));
		count = 0;
		for (int x = 0; x < NSLOT; x++) {
			int k = cur[x] ? hop_from(v, x, &steps[i], -1, ys, NULL) : 0;

			for (int j = 0; j < k; j++) {
				count += !next[ys[j]];
				next[ys[j]] = 1;
			}
		}
		if ((size_t)count > max_nodes)
			*over = 1;
		memcpy(cur, next, NSLOT);
	}
	return count;
}

typedef struct flq {
	int start;
	rhop steps[CAIRN_MAX_PATH];
	int n;
	size_t max_nodes;
	int values;
} flq;

static int run_follow(cairn_store *st, const view *v, const flq *q, int capped)
{
	unsigned char want[NSLOT], got[NSLOT];
	cairn_hop hh[CAIRN_MAX_PATH];
	const char *rn[CAIRN_MAX_PATH][NREL], *kn[CAIRN_MAX_PATH][NKIND];
	char key[64], what[1024], r[80];
	cairn_ref from;
	cairn_graph g;
	cairn_txn *t;
	int nwant, over, bad = 0;

	ref_text(q->start, r, sizeof(r));
	snprintf(what, sizeof(what), "follow on %s from %s, max_nodes %zu, steps ", v->name, r,
		 q->max_nodes);
	describe_hops(what, sizeof(what), q->steps, q->n);
	nwant = ref_follow(v, q->start, q->steps, q->n, q->max_nodes ? q->max_nodes : 500, want,
			   &over);
	slot_key(q->start, key, sizeof(key));
	from.kind = kind_names[slot_kind(q->start)];
	from.key = key;
	from.key_len = 0;
	for (int i = 0; i < q->n; i++)
		hop_make(&q->steps[i], &hh[i], rn[i], kn[i]);
	memset(got, 0, sizeof(got));
	if (begin(st, v, &t))
		return 1;
	if (cairn_follow(t, &from, hh, (size_t)q->n, q->max_nodes, q->values, &g))
		FAIL("%s", cairn_errmsg());
	if (g.n_links || g.links)
		FAIL("%zu Links", g.n_links);
	if (g.n_nodes && !g.nodes)
		FAIL("NULL nodes");
	for (size_t i = 0; i < g.n_nodes; i++) {
		int s = rec_slot(v->m, &g.nodes[i].rec);

		if (s < 0)
			FAIL("Record %zu is not in the view", i);
		if (got[s]++)
			FAIL("Record %s:%.*s twice", g.nodes[i].rec.kind,
			     (int)g.nodes[i].rec.key_len, g.nodes[i].rec.key);
		if (!want[s])
			FAIL("Record %s:%.*s is not in the reference's last step",
			     g.nodes[i].rec.kind, (int)g.nodes[i].rec.key_len, g.nodes[i].rec.key);
		if (g.nodes[i].depth != (unsigned)q->n)
			FAIL("depth %u, %d steps", g.nodes[i].depth, q->n);
		if (!rec_ok(v->m, s, &g.nodes[i].rec, q->values))
			FAIL("Record %s:%.*s: header or values differ", g.nodes[i].rec.kind,
			     (int)g.nodes[i].rec.key_len, g.nodes[i].rec.key);
	}
	if (!capped && g.truncated)
		FAIL("truncated without a cap");
	if (capped && g.n_nodes > q->max_nodes)
		FAIL("%zu Records, max_nodes %zu", g.n_nodes, q->max_nodes);
	if (capped && g.truncated != over)
		FAIL("truncated %d, but a step of the reference %s max_nodes "
		     "(its last step %d Records, returned %zu)",
		     g.truncated, over ? "exceeds" : "stays within", nwant, g.n_nodes);
	if (!g.truncated && g.n_nodes != (size_t)nwant)
		FAIL("%zu Records, the reference %d", g.n_nodes, nwant);
out:
	cairn_txn_end(t);
	return bad;
}

static void random_flq(const model *m, flq *q, int maxsteps)
{
	int hub = rnd(3);

	memset(q, 0, sizeof(*q));
	q->start = rnd(5) == 0 && m->rec[hub] ? hub : random_any(m);
	q->n = 1 + rnd(maxsteps);
	for (int i = 0; i < q->n; i++)
		random_hop(&q->steps[i]);
	q->values = rnd(2);
}

void test_graph_follow_reference(void)
{
	world w;
	int bad = 0, nonempty = 0;

	OK(world_build(&w, 31337));
	for (int i = 0; i < 1500 && !bad; i++) {
		view *v = &w.vv[i % 3];
		flq q;
		unsigned char tmp[NSLOT];
		int over;

		random_flq(v->m, &q, i % 10 == 0 ? CAIRN_MAX_PATH : 4);
		q.max_nodes = rnd(2) ? CAIRN_MAX_NODES : 0; /* 0: 500, more than there are */
		bad |= run_follow(w.st, v, &q, 0);
		nonempty += ref_follow(v, q.start, q.steps, q.n, CAIRN_MAX_NODES, tmp, &over) > 0;
	}
	world_free(&w);
	CHECK(!bad);
	CHECK(nonempty > 150);
}

/* The max_nodes cap of follow against the reference, at random. */
void test_graph_follow_cap_random(void)
{
	world w;
	int bad = 0, over_n = 0;

	OK(world_build(&w, 555));
	for (int i = 0; i < 1000; i++) {
		view *v = &w.vv[i % 3];
		unsigned char tmp[NSLOT];
		int over;
		flq q;

		random_flq(v->m, &q, 4);
		q.max_nodes = 1 + (size_t)rnd(30);
		bad |= run_follow(w.st, v, &q, 1);
		ref_follow(v, q.start, q.steps, q.n, q.max_nodes, tmp, &over);
		over_n += over;
	}
	world_free(&w);
	CHECK(!bad);
	CHECK(over_n > 50);
}

/* ---------------------------------------------------------- shortest path -- */

/* The length of a shortest path from `from` to `to` under hop h, or -1. */
static int ref_distance(const view *v, int from, int to, const rhop *h)
{
	int dist[NSLOT], queue[NSLOT], head = 0, tail = 0, *ys = v->scratch;

	for (int s = 0; s < NSLOT; s++)
		dist[s] = -1;
	dist[from] = 0;
	queue[tail++] = from;
	while (head < tail) {
		int x = queue[head++], k = hop_from(v, x, h, to, ys, NULL);

		for (int j = 0; j < k; j++)
			if (dist[ys[j]] < 0) {
				dist[ys[j]] = dist[x] + 1;
				queue[tail++] = ys[j];
			}
	}
	return dist[to];
}

static int check_path(const view *v, int from, int to, const rhop *h, unsigned max_depth,
		      const cairn_graph *g, int values, const char *what)
{
	int dist = ref_distance(v, from, to, h ? h : &hop_all), md = max_depth ? (int)max_depth : 4;
	int found = dist >= 0 && dist <= md, bad = 0, dir = h ? hop_dir(h) : CAIRN_BOTH;
	int slots[CAIRN_MAX_PATH + 2];

	if (g->truncated)
		FAIL("truncated");
	if (g->found != found)
		FAIL("found %d, the reference's distance %d, max_depth %u", g->found, dist,
		     max_depth);
	if (!found) {
		if (g->n_nodes || g->n_links)
			FAIL("not found, but %zu Records and %zu Links", g->n_nodes, g->n_links);
		goto out;
	}
	if (g->n_nodes != (size_t)dist + 1 || g->n_links != (size_t)dist || !g->nodes ||
	    (dist && !g->links))
		FAIL("%zu Records and %zu Links, distance %d", g->n_nodes, g->n_links, dist);
	for (int i = 0; i <= dist; i++) {
		const cairn_node *nd = &g->nodes[i];
		int s = rec_slot(v->m, &nd->rec);

		if (s < 0)
			FAIL("Record %d is not in the view", i);
		slots[i] = s;
		for (int j = 0; j < i; j++)
			if (slots[j] == s)
				FAIL("Record %d is Record %d again", i, j);
		if (nd->depth != (unsigned)i)
			FAIL("Record %d at depth %u", i, nd->depth);
		if (i > 0 && i < dist && h && !(h->kinds >> slot_kind(s) & 1))
			FAIL("Record %d (%s:%.*s) is of a Kind the hop does not allow", i,
			     nd->rec.kind, (int)nd->rec.key_len, nd->rec.key);
		if (!rec_ok(v->m, s, &nd->rec, values))
			FAIL("Record %d: header or values differ", i);
	}
	if (slots[0] != from || slots[dist] != to)
		FAIL("the path does not run from `from` to `to`");
	for (int i = 0; i < dist; i++) {
		const cairn_link *l = &g->links[i];
		int e = link_edge(v, l), fwd, back;

		if (e < 0)
			FAIL("Link %d is not in the view", i);
		fwd = v->e[e].f == slots[i] && v->e[e].t == slots[i + 1];
		back = v->e[e].t == slots[i] && v->e[e].f == slots[i + 1];
		if (!((fwd && (dir & CAIRN_OUT)) || (back && (dir & CAIRN_IN))))
			FAIL("Link %d (%s) does not join Records %d and %d the way the hop allows",
			     i, l->rel, i, i + 1);
		if (h && !(h->rels >> v->e[e].r & 1))
			FAIL("Link %d is of a Relation the hop does not allow", i);
		if (!link_ok(v, e, l, values))
			FAIL("Link %d: values or header differ", i);
	}
out:
	return bad;
}

void test_graph_shortest_path_reference(void)
{
	world w;
	int bad = 0, found = 0, missed = 0, hist[CAIRN_MAX_PATH + 2];

	memset(hist, 0, sizeof(hist));
	OK(world_build(&w, 2024));
	for (int i = 0; i < 2500 && !bad; i++) {
		view *v = &w.vv[i % 3];
		int from = random_any(v->m), to = rnd(10) == 0 ? from : random_any(v->m);
		unsigned md = (unsigned)rnd(CAIRN_MAX_PATH + 1);
		rhop h;
		cairn_hop hh;
		const char *rn[NREL], *kn[NKIND];
		char kf[64], kt[64], what[512], rf[80], rt[80];
		cairn_ref a, b;
		cairn_graph g;
		cairn_txn *t;
		int use_hop = rnd(4) != 0, dist;

		random_hop(&h);
		if (rnd(2)) { /* fewer Kinds allowed: longer paths, and none */
			h.kinds &= ~(1u << rnd(3));
			h.list_kinds = 1;
		}
		if (!h.kinds)
			h.kinds = 1u << KD;
		hop_make(&h, &hh, rn, kn);
		ref_text(from, rf, sizeof(rf));
		ref_text(to, rt, sizeof(rt));
		snprintf(what, sizeof(what),
			 "shortest path on %s from %s to %s, max_depth %u, hop ", v->name, rf, rt,
			 md);
		if (use_hop)
			describe_hops(what, sizeof(what), &h, 1);
		else
			snprintf(what + strlen(what), sizeof(what) - strlen(what), "NULL");
		slot_key(from, kf, sizeof(kf));
		slot_key(to, kt, sizeof(kt));
		a = (cairn_ref){kind_names[slot_kind(from)], kf, strlen(kf)};
		b = (cairn_ref){kind_names[slot_kind(to)], kt, 0};
		memset(&g, 0, sizeof(g));
		OK(begin(w.st, v, &t));
		if (cairn_shortest_path(t, &a, &b, md, use_hop ? &hh : NULL, i % 2, &g)) {
			fprintf(stderr, "    %s: %s\n", what, cairn_errmsg());
			bad = 1;
		} else {
			bad |= check_path(v, from, to, use_hop ? &h : NULL, md, &g, i % 2, what);
		}
		cairn_txn_end(t);
		dist = ref_distance(v, from, to, use_hop ? &h : &hop_all);
		if (dist >= 0 && dist <= CAIRN_MAX_PATH)
			hist[dist]++;
		found += g.found;
		missed += !g.found && dist > 0;
	}
	world_free(&w);
	CHECK(!bad);
	/* Paths of many lengths, and ones too long for max_depth. */
	CHECK(found > 200 && missed > 20 && hist[0] > 20 && hist[1] > 5 && hist[2] > 20 &&
	      hist[3] > 20 && hist[4] > 5 && hist[5] > 5);
}

/* -------------------------------------------------------- a small graph -- */

/*
 * A chain a0 -> a1 -> ... -> a9 (aa) with a self-Link a9 -> a9; a0 -ab->
 * b1 ({"w":7}) and b2; b1 -bc-> c1, c2 and b2 -bc-> c3, c4; A:gone -aa-> a0
 * at rev_gone, deleted (with its Link) after it.
 */
static cairn_store *small_store(uint64_t *rev_gone)
{
	cairn_open_options oo = {.flags = CAIRN_OPEN_CREATE | CAIRN_OPEN_NOSYNC | CAIRN_OPEN_NO_BACKGROUND};
	cairn_commit_options co = {0};
	cairn_commit_result res;
	cairn_store *st = NULL;
	sbuf b = {0};

	if (cairn_open(test_path("small"), &oo, &st) || cairn_domain_create(st, "d"))
		goto fail;
	co.domain = "d";
	co.prov.actor = "test";
	if (cairn_schema_apply(st, &co, gschema, strlen(gschema), NULL))
		goto fail;
	for (int i = 0; i < 10; i++)
		sb_printf(&b,
			  "{\"kind\":\"A\",\"key\":\"a%d\",\"title\":\"t%d\","
			  "\"values\":{\"n\":%d}}\n",
			  i, i, i);
	for (int i = 1; i <= 2; i++)
		sb_printf(&b, "{\"kind\":\"B\",\"key\":\"b%d\",\"values\":{\"n\":%d}}\n", i, i);
	for (int i = 1; i <= 4; i++)
		sb_printf(&b, "{\"kind\":\"C\",\"key\":\"c%d\",\"values\":{\"n\":%d}}\n", i, i);
	sb_printf(&b, "{\"kind\":\"A\",\"key\":\"gone\"}\n");
	for (int i = 0; i < 9; i++)
		sb_printf(&b, "{\"rel\":\"aa\",\"from\":\"A:a%d\",\"to\":\"A:a%d\"}\n", i, i + 1);
	sb_printf(&b, "{\"rel\":\"aa\",\"from\":\"A:a9\",\"to\":\"A:a9\"}\n"
		      "{\"rel\":\"ab\",\"from\":\"A:a0\",\"to\":\"B:b1\",\"values\":{\"w\":7}}\n"
		      "{\"rel\":\"ab\",\"from\":\"A:a0\",\"to\":\"B:b2\"}\n"
		      "{\"rel\":\"bc\",\"from\":\"B:b1\",\"to\":\"C:c1\"}\n"
		      "{\"rel\":\"bc\",\"from\":\"B:b1\",\"to\":\"C:c2\"}\n"
		      "{\"rel\":\"bc\",\"from\":\"B:b2\",\"to\":\"C:c3\"}\n"
		      "{\"rel\":\"bc\",\"from\":\"B:b2\",\"to\":\"C:c4\"}\n"
		      "{\"rel\":\"aa\",\"from\":\"A:gone\",\"to\":\"A:a0\"}\n");
	if (commit_text(st, NULL, &b, rev_gone))
		goto fail;
	sb_printf(&b, "{\"kind\":\"A\",\"key\":\"gone\",\"op\":\"delete\",\"cascade\":true}\n");
	if (test_commit(st, b.p, &res))
		goto fail;
	free(b.p);
	return st;
fail:
	fprintf(stderr, "    small_store: %s\n", cairn_errmsg());
	free(b.p);
	cairn_close(st);
	return NULL;
}

/* The answer as "kind:key@depth ..." in answer order, and its Links as "rel from>to ..." sorted. */
static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static void graph_text(const cairn_graph *g, char *nodes, size_t ncap, char *links, size_t lcap)
{
	char items[64][80];
	const char *p[64];
	size_t len = 0, n = g->n_links < 64 ? g->n_links : 64;

	nodes[0] = links[0] = '\0';
	for (size_t i = 0; i < g->n_nodes && len < ncap; i++)
		len += (size_t)snprintf(nodes + len, ncap - len, "%s%s:%.*s@%u", i ? " " : "",
					g->nodes[i].rec.kind, (int)g->nodes[i].rec.key_len,
					g->nodes[i].rec.key, g->nodes[i].depth);
	for (size_t i = 0; i < n; i++) {
		const cairn_link *l = &g->links[i];

		snprintf(items[i], sizeof(items[i]), "%s %.*s>%.*s", l->rel, (int)l->from_key_len,
			 l->from_key, (int)l->to_key_len, l->to_key);
		p[i] = items[i];
	}
	qsort(p, n, sizeof(p[0]), cmp_str);
	len = 0;
	for (size_t i = 0; i < n && len < lcap; i++)
		len += (size_t)snprintf(links + len, lcap - len, "%s%s", i ? ", " : "", p[i]);
}

/* The nodes' text with those of one depth sorted (their order within a level is the index's). */
static int nodes_are(const cairn_graph *g, const char *want)
{
	char nodes[2048], links[2048], sorted[2048] = "";
	const char *p[64];
	char items[64][80];
	size_t n = 0, len = 0;

	graph_text(g, nodes, sizeof(nodes), links, sizeof(links));
	for (size_t i = 0; i < g->n_nodes && i < 64; i++) {
		snprintf(items[i], sizeof(items[i]), "%u %s:%.*s@%u", g->nodes[i].depth,
			 g->nodes[i].rec.kind, (int)g->nodes[i].rec.key_len, g->nodes[i].rec.key,
			 g->nodes[i].depth);
		p[n++] = items[i];
	}
	/* Sorted by depth, then name; the answer's own order is checked below. */
	qsort(p, n, sizeof(p[0]), cmp_str);
	for (size_t i = 0; i < n; i++)
		len += (size_t)snprintf(sorted + len, sizeof(sorted) - len, "%s%s", i ? " " : "",
					strchr(p[i], ' ') + 1);
	if (strcmp(sorted, want) != 0) {
		fprintf(stderr,
			"    Records: got \"%s\" (in answer order \"%s\"), expected \"%s\"\n",
			sorted, nodes, want);
		return 0;
	}
	for (size_t i = 1; i < g->n_nodes; i++)
		if (g->nodes[i].depth < g->nodes[i - 1].depth) {
			fprintf(stderr, "    Records not by depth: %s\n", nodes);
			return 0;
		}
	return 1;
}

static int links_are(const cairn_graph *g, const char *want)
{
	char nodes[2048], links[2048];

	graph_text(g, nodes, sizeof(nodes), links, sizeof(links));
	if (strcmp(links, want) != 0) {
		fprintf(stderr, "    Links: got \"%s\", expected \"%s\"\n", links, want);
		return 0;
	}
	return 1;
}

/* A Link end is this Record (keys are not NUL-terminated). */
static int same_key(const char *key, size_t len, const cairn_record *r)
{
	return len == r->key_len && memcmp(key, r->key, len) == 0;
}

static int path_is(const cairn_graph *g, const char *want)
{
	char nodes[2048], links[2048];

	graph_text(g, nodes, sizeof(nodes), links, sizeof(links));
	if (strcmp(nodes, want) != 0) {
		fprintf(stderr, "    path: got \"%s\", expected \"%s\"\n", nodes, want);
		return 0;
	}
	return 1;
}

static const char *const only_ab[] = {"ab"}, *const only_bc[] = {"bc"}, *const only_aa[] = {"aa"};
static const char *const only_a[] = {"A"}, *const only_b[] = {"B"}, *const only_c[] = {"C"};
static const char *const kinds_ab[] = {"A", "B"};

/* Known answers on a small graph: hops, filters, self-Links, caps and their order. */
void test_graph_small_neighborhood(void)
{
	uint64_t rev_gone;
	cairn_store *st = small_store(&rev_gone);
	cairn_neighborhood_options o;
	cairn_ref a0 = {"A", "a0", 0}, a9 = {"A", "a9", 2}, b1 = {"B", "b1", 0}, two[2];
	cairn_hop h[2];
	cairn_graph g;
	cairn_txn *t;
	cairn_read_options ro = {0};

	CHECK(st);
	ro.domain = "d";
	OK(cairn_txn_begin(st, &ro, &t));
	memset(&o, 0, sizeof(o));
	o.start = &a0;
	o.n_start = 1;
	/* depth 0 is 1, every Link both ways; A:gone and its Link are gone. */
	OK(cairn_neighborhood(t, &o, &g));
	CHECK(nodes_are(&g, "A:a0@0 A:a1@1 B:b1@1 B:b2@1"));
	CHECK(links_are(&g, "aa a0>a1, ab a0>b1, ab a0>b2"));
	CHECK(g.nodes[0].rec.key_len == 2 && memcmp(g.nodes[0].rec.key, "a0", 2) == 0);
	CHECK(!g.truncated && !g.found);
	/* The second hop repeats: ab out, then bc out twice (C has no bc out). */
	memset(h, 0, sizeof(h));
	h[0] = (cairn_hop){CAIRN_OUT, only_ab, 1, NULL, 0};
	h[1] = (cairn_hop){CAIRN_OUT, only_bc, 1, NULL, 0};
	o.hops = h;
	o.n_hops = 2;
	o.depth = 3;
	OK(cairn_neighborhood(t, &o, &g));
	CHECK(nodes_are(&g, "A:a0@0 B:b1@1 B:b2@1 C:c1@2 C:c2@2 C:c3@2 C:c4@2"));
	CHECK(links_are(&g, "ab a0>b1, ab a0>b2, bc b1>c1, bc b1>c2, bc b2>c3, bc b2>c4"));
	/* One hop for all: out along aa, three levels. */
	h[0] = (cairn_hop){CAIRN_OUT, only_aa, 1, NULL, 0};
	o.n_hops = 1;
	OK(cairn_neighborhood(t, &o, &g));
	CHECK(nodes_are(&g, "A:a0@0 A:a1@1 A:a2@2 A:a3@3"));
	CHECK(links_are(&g, "aa a0>a1, aa a1>a2, aa a2>a3"));
	/* In: nothing comes into a0 now that A:gone is deleted... */
	h[0] = (cairn_hop){CAIRN_IN, NULL, 0, NULL, 0};
	OK(cairn_neighborhood(t, &o, &g));
	CHECK(nodes_are(&g, "A:a0@0") && g.n_links == 0);
	/* ...but at the revision before it was. */
	{
		cairn_txn *past;
		cairn_read_options rp = ro;

		rp.at_revision = rev_gone;
		OK(cairn_txn_begin(st, &rp, &past));
		OK(cairn_neighborhood(past, &o, &g));
		CHECK(nodes_are(&g, "A:a0@0 A:gone@1"));
		CHECK(links_are(&g, "aa gone>a0"));
		cairn_txn_end(past);
	}
	/* Kinds: hop 1 reaches only A, hop 2 only C: a1's Links lead to no C. */
	h[0] = (cairn_hop){CAIRN_BOTH, NULL, 0, only_a, 1};
	h[1] = (cairn_hop){CAIRN_BOTH, NULL, 0, only_c, 1};
	o.n_hops = 2;
	o.depth = 2;
	OK(cairn_neighborhood(t, &o, &g));
	CHECK(nodes_are(&g, "A:a0@0 A:a1@1"));
	CHECK(links_are(&g, "aa a0>a1"));
	h[0] = (cairn_hop){0, NULL, 0, only_b, 1}; /* dir 0: both */
	OK(cairn_neighborhood(t, &o, &g));
	CHECK(nodes_are(&g, "A:a0@0 B:b1@1 B:b2@1 C:c1@2 C:c2@2 C:c3@2 C:c4@2"));
	/* A Kind filter also keeps Links to Records already reached out. */
	h[0] = (cairn_hop){CAIRN_BOTH, NULL, 0, NULL, 0};
	h[1] = (cairn_hop){CAIRN_BOTH, NULL, 0, only_c, 1};
	OK(cairn_neighborhood(t, &o, &g));
	CHECK(nodes_are(&g, "A:a0@0 A:a1@1 B:b1@1 B:b2@1 C:c1@2 C:c2@2 C:c3@2 C:c4@2"));
	CHECK(links_are(&g,
			"aa a0>a1, ab a0>b1, ab a0>b2, bc b1>c1, bc b1>c2, bc b2>c3, bc b2>c4"));
	/* A self-Link is one Link, its Record reached once. */
	o.start = &a9;
	o.hops = NULL;
	o.n_hops = 0;
	o.depth = 1;
	OK(cairn_neighborhood(t, &o, &g));
	CHECK(nodes_are(&g, "A:a9@0 A:a8@1"));
	CHECK(links_are(&g, "aa a8>a9, aa a9>a9"));
	/* Two starts: both at depth 0, first, in order; a Link between them kept. */
	two[0] = b1;
	two[1] = a0;
	o.start = two;
	o.n_start = 2;
	OK(cairn_neighborhood(t, &o, &g));
	CHECK(g.n_nodes == 6 && g.nodes[0].depth == 0 && g.nodes[1].depth == 0);
	CHECK(test_streq(g.nodes[0].rec.key, g.nodes[0].rec.key_len, "b1") &&
	      test_streq(g.nodes[1].rec.key, g.nodes[1].rec.key_len, "a0"));
	CHECK(nodes_are(&g, "A:a0@0 B:b1@0 A:a1@1 B:b2@1 C:c1@1 C:c2@1"));
	CHECK(links_are(&g, "aa a0>a1, ab a0>b1, ab a0>b2, bc b1>c1, bc b1>c2"));
	/* Caps: fanout 2 from a0 takes the ab Links (by Relation: ab before aa), out before in. */
	o.start = &a0;
	o.n_start = 1;
	o.fanout = 2;
	OK(cairn_neighborhood(t, &o, &g));
	CHECK(nodes_are(&g, "A:a0@0 B:b1@1 B:b2@1"));
	CHECK(links_are(&g, "ab a0>b1, ab a0>b2"));
	CHECK(g.truncated == 1);
	o.fanout = 3; /* exactly as many as there are: not truncated */
	OK(cairn_neighborhood(t, &o, &g));
	CHECK(g.n_nodes == 4 && g.n_links == 3 && g.truncated == 0);
	o.fanout = 0;
	o.max_nodes = 2;
	OK(cairn_neighborhood(t, &o, &g));
	CHECK(g.n_nodes == 2 && g.n_links == 1 && g.truncated == 1);
	CHECK(strcmp(g.nodes[1].rec.kind, "B") == 0 && g.nodes[1].depth == 1); /* ab comes first */
	o.max_nodes = 4;
	OK(cairn_neighborhood(t, &o, &g));
	CHECK(g.n_nodes == 4 && g.n_links == 3 && g.truncated == 0);
	/* Depth 2 with max_nodes 4: no fifth Record, and no Link to a Record left out. */
	o.depth = 2;
	OK(cairn_neighborhood(t, &o, &g));
	CHECK(g.n_nodes == 4 && g.truncated == 1);
	CHECK(links_are(&g, "aa a0>a1, ab a0>b1, ab a0>b2"));
	cairn_txn_end(t);
	cairn_close(st);
}

void test_graph_small_follow(void)
{
	uint64_t rev_gone;
	cairn_store *st = small_store(&rev_gone);
	cairn_ref a0 = {"A", "a0", 0}, a9 = {"A", "a9", 0}, c1 = {"C", "c1", 0};
	cairn_hop s[CAIRN_MAX_PATH];
	cairn_graph g;
	cairn_txn *t;
	cairn_read_options ro = {0};

	CHECK(st);
	ro.domain = "d";
	OK(cairn_txn_begin(st, &ro, &t));
	s[0] = (cairn_hop){CAIRN_OUT, only_ab, 1, NULL, 0};
	s[1] = (cairn_hop){CAIRN_OUT, only_bc, 1, NULL, 0};
	OK(cairn_follow(t, &a0, s, 2, 0, 1, &g));
	CHECK(nodes_are(&g, "C:c1@2 C:c2@2 C:c3@2 C:c4@2") && g.n_links == 0 && !g.truncated);
	for (size_t i = 0; i < g.n_nodes; i++) {
		char want[32];

		snprintf(want, sizeof(want), "{\"n\":%c}", g.nodes[i].rec.key[1]);
		CHECK(test_streq(g.nodes[i].rec.values, g.nodes[i].rec.values_len, want));
	}
	/* Back where it started: a Record may come again in a later step. */
	s[1] = (cairn_hop){CAIRN_IN, only_ab, 1, NULL, 0};
	OK(cairn_follow(t, &a0, s, 2, 0, 0, &g));
	CHECK(nodes_are(&g, "A:a0@2") && g.nodes[0].rec.values == NULL);
	/* Kinds per step: both ways, reaching only B, then only C. */
	s[0] = (cairn_hop){CAIRN_BOTH, NULL, 0, only_b, 1};
	s[1] = (cairn_hop){CAIRN_BOTH, NULL, 0, only_c, 1};
	OK(cairn_follow(t, &a0, s, 2, 0, 0, &g));
	CHECK(nodes_are(&g, "C:c1@2 C:c2@2 C:c3@2 C:c4@2"));
	/* Each step deduplicated: c1 -> b1 -> {a0, c1, c2}. */
	s[0] = s[1] = (cairn_hop){CAIRN_BOTH, NULL, 0, NULL, 0};
	OK(cairn_follow(t, &c1, s, 2, 0, 0, &g));
	CHECK(nodes_are(&g, "A:a0@2 C:c1@2 C:c2@2"));
	/* Eight steps along the chain, and a self-Link. */
	for (int i = 0; i < CAIRN_MAX_PATH; i++)
		s[i] = (cairn_hop){CAIRN_OUT, only_aa, 1, NULL, 0};
	OK(cairn_follow(t, &a0, s, CAIRN_MAX_PATH, 0, 0, &g));
	CHECK(nodes_are(&g, "A:a8@8"));
	OK(cairn_follow(t, &a9, s, 3, 0, 0, &g));
	CHECK(nodes_are(&g, "A:a9@3"));
	/* A step that reaches nothing: an empty answer, not an error. */
	s[0] = (cairn_hop){CAIRN_IN, only_bc, 1, NULL, 0};
	OK(cairn_follow(t, &a0, s, 2, 0, 0, &g));
	CHECK(g.n_nodes == 0 && !g.truncated);
	cairn_txn_end(t);
	cairn_close(st);
}

/*
 * max_nodes of follow: a0 -ab-> {b1, b2}; b1 -bc-> {c1, c2}, b2 -bc-> {c3,
 * c4}. The second step has 4 Records: any max_nodes under 4 must leave some
 * out and say so.
 */
void test_graph_follow_cap(void)
{
	uint64_t rev_gone;
	cairn_store *st = small_store(&rev_gone);
	cairn_ref a0 = {"A", "a0", 0};
	cairn_hop s[2];
	cairn_graph g;
	cairn_txn *t;
	cairn_read_options ro = {0};
	int bad = 0;

	CHECK(st);
	ro.domain = "d";
	OK(cairn_txn_begin(st, &ro, &t));
	s[0] = (cairn_hop){CAIRN_OUT, only_ab, 1, NULL, 0};
	s[1] = (cairn_hop){CAIRN_OUT, only_bc, 1, NULL, 0};
	OK(cairn_follow(t, &a0, s, 2, 4, 0, &g));
	CHECK(g.n_nodes == 4 && !g.truncated);
	OK(cairn_follow(t, &a0, s, 1, 1, 0, &g)); /* the first step has 2 */
	CHECK(g.n_nodes == 1 && g.truncated == 1);
	for (size_t max = 1; max < 4; max++) {
		OK(cairn_follow(t, &a0, s, 2, max, 0, &g));
		if (g.n_nodes > max || g.truncated != 1) {
			fprintf(stderr,
				"    follow A:a0 [ab out][bc out], max_nodes %zu: %zu Records, "
				"truncated %d; expected at most %zu and truncated 1 (the last "
				"step has 4)\n",
				max, g.n_nodes, g.truncated, max);
			bad = 1;
		}
	}
	cairn_txn_end(t);
	cairn_close(st);
	CHECK(!bad);
}

void test_graph_small_path(void)
{
	uint64_t rev_gone;
	cairn_store *st = small_store(&rev_gone);
	cairn_ref a0 = {"A", "a0", 0}, a1 = {"A", "a1", 0}, a4 = {"A", "a4", 0},
		  a5 = {"A", "a5", 0};
	cairn_ref a8 = {"A", "a8", 0}, a9 = {"A", "a9", 0}, c1 = {"C", "c1", 0},
		  c4 = {"C", "c4", 0};
	cairn_ref gone = {"A", "gone", 0};
	cairn_hop out = {CAIRN_OUT, NULL, 0, NULL, 0}, in = {CAIRN_IN, NULL, 0, NULL, 0};
	cairn_hop hb = {CAIRN_OUT, NULL, 0, only_b, 1}, hc = {CAIRN_OUT, NULL, 0, only_c, 1};
	cairn_hop hab = {CAIRN_BOTH, NULL, 0, kinds_ab, 2}, hbb = {CAIRN_BOTH, NULL, 0, only_b, 1};
	cairn_hop haa = {CAIRN_BOTH, only_aa, 1, NULL, 0};
	cairn_graph g;
	cairn_txn *t;
	cairn_read_options ro = {0};

	CHECK(st);
	ro.domain = "d";
	OK(cairn_txn_begin(st, &ro, &t));
	/* max_depth 0 is 4. */
	OK(cairn_shortest_path(t, &a0, &a4, 0, &out, 0, &g));
	CHECK(g.found && path_is(&g, "A:a0@0 A:a1@1 A:a2@2 A:a3@3 A:a4@4") && g.n_links == 4);
	CHECK(links_are(&g, "aa a0>a1, aa a1>a2, aa a2>a3, aa a3>a4"));
	for (size_t i = 0; i < g.n_links; i++) /* in path order */
		CHECK(same_key(g.links[i].from_key, g.links[i].from_key_len, &g.nodes[i].rec) &&
		      same_key(g.links[i].to_key, g.links[i].to_key_len, &g.nodes[i + 1].rec));
	OK(cairn_shortest_path(t, &a0, &a5, 0, &out, 0, &g));
	CHECK(!g.found && g.n_nodes == 0 && g.n_links == 0 && !g.truncated);
	OK(cairn_shortest_path(t, &a0, &a5, 5, &out, 0, &g));
	CHECK(g.found && g.n_nodes == 6);
	OK(cairn_shortest_path(t, &a0, &a8, CAIRN_MAX_PATH, &out, 0, &g));
	CHECK(g.found && g.n_nodes == 9 && g.n_links == 8);
	OK(cairn_shortest_path(t, &a0, &a9, CAIRN_MAX_PATH, NULL, 0, &g));
	CHECK(!g.found && g.n_nodes == 0);
	/* Direction: in from a4 to a0, not out; both either way. */
	OK(cairn_shortest_path(t, &a4, &a0, 0, &out, 0, &g));
	CHECK(!g.found);
	OK(cairn_shortest_path(t, &a4, &a0, 0, &in, 0, &g));
	CHECK(g.found && path_is(&g, "A:a4@0 A:a3@1 A:a2@2 A:a1@3 A:a0@4"));
	CHECK(test_streq(g.links[0].from_key, g.links[0].from_key_len, "a3") &&
	      test_streq(g.links[0].to_key, g.links[0].to_key_len, "a4"));
	OK(cairn_shortest_path(t, &a4, &a0, 0, NULL, 0, &g));
	CHECK(g.found && g.n_nodes == 5);
	/* Kinds constrain the Records between, not the ends. */
	OK(cairn_shortest_path(t, &a0, &c1, 0, &hb, 1, &g));
	CHECK(g.found && path_is(&g, "A:a0@0 B:b1@1 C:c1@2"));
	CHECK(test_streq(g.links[0].values, g.links[0].values_len, "{\"w\":7}") &&
	      test_streq(g.links[1].values, g.links[1].values_len, "{}"));
	OK(cairn_shortest_path(t, &a0, &c1, 0, &hc, 0, &g));
	CHECK(!g.found);
	OK(cairn_shortest_path(t, &a1, &c4, 0, &hbb, 0, &g));
	CHECK(!g.found); /* a0 is between, and not a B */
	OK(cairn_shortest_path(t, &a1, &c4, 0, &hab, 0, &g));
	CHECK(g.found && path_is(&g, "A:a1@0 A:a0@1 B:b2@2 C:c4@3"));
	OK(cairn_shortest_path(t, &c1, &c4, 0, &hab, 0, &g));
	CHECK(g.found && path_is(&g, "C:c1@0 B:b1@1 A:a0@2 B:b2@3 C:c4@4"));
	OK(cairn_shortest_path(t, &c1, &c4, 3, &hab, 0, &g));
	CHECK(!g.found);
	/* Relations. */
	OK(cairn_shortest_path(t, &a0, &c1, 0, &haa, 0, &g));
	CHECK(!g.found);
	/* from == to: one Record, no Link, whatever the hop. */
	OK(cairn_shortest_path(t, &c1, &c1, 1, &hc, 1, &g));
	CHECK(g.found && g.n_nodes == 1 && g.n_links == 0 && g.nodes[0].depth == 0);
	CHECK(test_streq(g.nodes[0].rec.values, g.nodes[0].rec.values_len, "{\"n\":1}"));
	/* A self-Link is no shortcut. */
	OK(cairn_shortest_path(t, &a9, &a8, 1, NULL, 0, &g));
	CHECK(g.found && path_is(&g, "A:a9@0 A:a8@1"));
	/* A deleted Record is not an end, but was one in the past. */
	CHECK_RC(cairn_shortest_path(t, &gone, &a1, 0, NULL, 0, &g), CAIRN_ENOTFOUND);
	cairn_txn_end(t);
	ro.at_revision = rev_gone;
	OK(cairn_txn_begin(st, &ro, &t));
	OK(cairn_shortest_path(t, &gone, &a1, 0, &out, 0, &g));
	CHECK(g.found && path_is(&g, "A:gone@0 A:a0@1 A:a1@2"));
	cairn_txn_end(t);
	cairn_close(st);
}

/* ----------------------------------------------------------------- errors -- */

#define CHECK_ERR(expr, want)                                                                      \
	do {                                                                                       \
		CHECK_RC(expr, want);                                                              \
		CHECK(cairn_errmsg()[0] != '\0');                                                  \
	} while (0)

/* Every argument error, with its code; the store unchanged and the transaction still usable. */
void test_graph_errors(void)
{
	uint64_t rev_gone, head;
	cairn_store *st = small_store(&rev_gone);
	cairn_neighborhood_options o;
	cairn_ref a0 = {"A", "a0", 0}, a1 = {"A", "a1", 0}, nope = {"A", "nope", 0};
	cairn_ref gone = {"A", "gone", 0}, empty = {"A", "", 0}, nokey = {"A", NULL, 0};
	cairn_ref nokind = {NULL, "a0", 0}, two[2], badkind = {"Nope", "a0", 0};
	char longbuf[CAIRN_MAX_KEY + 2];
	cairn_ref longkey = {"A", longbuf, CAIRN_MAX_KEY + 1};
	const char *const bad_rel[] = {"ab", "nope"}, *const bad_kind[] = {"A", "Nope"};
	cairn_hop h[2], ok_steps[CAIRN_MAX_PATH + 1];
	cairn_graph g, g1;
	cairn_txn *t;
	cairn_read_options ro = {0};
	char *before, *after;

	CHECK(st);
	memset(longbuf, 'a', sizeof(longbuf) - 1);
	longbuf[sizeof(longbuf) - 1] = '\0';
	before = test_export(st, "d");
	head = test_head(st, "d");
	CHECK(before);
	ro.domain = "d";
	OK(cairn_txn_begin(st, &ro, &t));
	memset(&o, 0, sizeof(o));
	memset(h, 0, sizeof(h));
	for (int i = 0; i <= CAIRN_MAX_PATH; i++)
		ok_steps[i] = (cairn_hop){CAIRN_OUT, only_aa, 1, NULL, 0};
	o.start = &a0;
	o.n_start = 1;

	/* Neighborhood. */
	CHECK_ERR(cairn_neighborhood(NULL, &o, &g), CAIRN_EINVAL);
	CHECK_ERR(cairn_neighborhood(t, NULL, &g), CAIRN_EINVAL);
	CHECK_ERR(cairn_neighborhood(t, &o, NULL), CAIRN_EINVAL);
	o.start = NULL;
	CHECK_ERR(cairn_neighborhood(t, &o, &g), CAIRN_EINVAL);
	o.start = &a0;
	o.n_start = 0;
	CHECK_ERR(cairn_neighborhood(t, &o, &g), CAIRN_EINVAL);
	o.n_start = 1;
	o.start = &nokey;
	CHECK_ERR(cairn_neighborhood(t, &o, &g), CAIRN_EINVAL);
	o.start = &nokind;
	CHECK_ERR(cairn_neighborhood(t, &o, &g), CAIRN_EINVAL);
	o.start = &a0;
	o.depth = CAIRN_MAX_DEPTH + 1;
	CHECK_ERR(cairn_neighborhood(t, &o, &g), CAIRN_EINVAL);
	o.depth = 100;
	CHECK_ERR(cairn_neighborhood(t, &o, &g), CAIRN_EINVAL);
	o.depth = CAIRN_MAX_DEPTH;
	OK(cairn_neighborhood(t, &o, &g));
	CHECK(g.n_nodes > 4);
	o.depth = 0; /* 0 is 1 */
	OK(cairn_neighborhood(t, &o, &g));
	o.depth = 1;
	OK(cairn_neighborhood(t, &o, &g1));
	CHECK(g.n_nodes == 4 && g1.n_nodes == 4 && g.n_links == 3 && g1.n_links == 3);
	for (size_t i = 0; i < g.n_nodes; i++)
		CHECK(g.nodes[i].rec.vid == g1.nodes[i].rec.vid &&
		      g.nodes[i].depth == g1.nodes[i].depth);
	o.max_nodes = CAIRN_MAX_NODES + 1;
	CHECK_ERR(cairn_neighborhood(t, &o, &g), CAIRN_EINVAL);
	o.max_nodes = SIZE_MAX;
	CHECK_ERR(cairn_neighborhood(t, &o, &g), CAIRN_EINVAL);
	o.max_nodes = CAIRN_MAX_NODES;
	OK(cairn_neighborhood(t, &o, &g));
	o.max_nodes = 0;
	o.hops = h;
	o.n_hops = 1;
	h[0] = (cairn_hop){CAIRN_OUT, bad_rel, 2, NULL, 0};
	CHECK_ERR(cairn_neighborhood(t, &o, &g), CAIRN_EUNKNOWNREL);
	h[0] = (cairn_hop){CAIRN_OUT, NULL, 0, bad_kind, 2};
	CHECK_ERR(cairn_neighborhood(t, &o, &g), CAIRN_EUNKNOWNKIND);
	h[0] = (cairn_hop){7, NULL, 0, NULL, 0};
	CHECK_ERR(cairn_neighborhood(t, &o, &g), CAIRN_EINVAL);
	h[0] = (cairn_hop){-1, NULL, 0, NULL, 0};
	CHECK_ERR(cairn_neighborhood(t, &o, &g), CAIRN_EINVAL);
	h[0] = (cairn_hop){4, NULL, 0, NULL, 0};
	CHECK_ERR(cairn_neighborhood(t, &o, &g), CAIRN_EINVAL);
	/* ...in the second hop too, and in the last one repeated for the third. */
	h[0] = (cairn_hop){CAIRN_OUT, NULL, 0, NULL, 0};
	h[1] = (cairn_hop){CAIRN_BOTH, bad_rel, 2, NULL, 0};
	o.n_hops = 2;
	o.depth = 2;
	CHECK_ERR(cairn_neighborhood(t, &o, &g), CAIRN_EUNKNOWNREL);
	h[1] = (cairn_hop){CAIRN_BOTH, NULL, 0, bad_kind, 2};
	o.depth = 3;
	CHECK_ERR(cairn_neighborhood(t, &o, &g), CAIRN_EUNKNOWNKIND);
	h[1] = (cairn_hop){9, NULL, 0, NULL, 0};
	CHECK_ERR(cairn_neighborhood(t, &o, &g), CAIRN_EINVAL);
	o.hops = NULL;
	o.n_hops = 0;
	o.depth = 1;
	/* Starts that do not exist. */
	o.start = &nope;
	CHECK_ERR(cairn_neighborhood(t, &o, &g), CAIRN_ENOTFOUND);
	o.start = &gone;
	CHECK_ERR(cairn_neighborhood(t, &o, &g), CAIRN_ENOTFOUND);
	o.start = &empty;
	CHECK_ERR(cairn_neighborhood(t, &o, &g), CAIRN_ENOTFOUND);
	o.start = &longkey;
	CHECK_ERR(cairn_neighborhood(t, &o, &g), CAIRN_ENOTFOUND);
	o.start = &badkind; /* a Kind the schema lacks */
	CHECK(cairn_neighborhood(t, &o, &g) < 0);
	two[0] = a0;
	two[1] = nope;
	o.start = two;
	o.n_start = 2;
	CHECK_ERR(cairn_neighborhood(t, &o, &g), CAIRN_ENOTFOUND);
	two[1] = a1;
	OK(cairn_neighborhood(t, &o, &g));
	CHECK(g.n_nodes == 5);

	/* Follow. */
	CHECK_ERR(cairn_follow(NULL, &a0, ok_steps, 1, 0, 0, &g), CAIRN_EINVAL);
	CHECK_ERR(cairn_follow(t, NULL, ok_steps, 1, 0, 0, &g), CAIRN_EINVAL);
	CHECK_ERR(cairn_follow(t, &a0, NULL, 1, 0, 0, &g), CAIRN_EINVAL);
	CHECK_ERR(cairn_follow(t, &a0, ok_steps, 1, 0, 0, NULL), CAIRN_EINVAL);
	CHECK_ERR(cairn_follow(t, &a0, ok_steps, 0, 0, 0, &g), CAIRN_EINVAL);
	CHECK_ERR(cairn_follow(t, &a0, NULL, 0, 0, 0, &g), CAIRN_EINVAL);
	CHECK_ERR(cairn_follow(t, &a0, ok_steps, CAIRN_MAX_PATH + 1, 0, 0, &g), CAIRN_EINVAL);
	OK(cairn_follow(t, &a0, ok_steps, CAIRN_MAX_PATH, 0, 0, &g));
	CHECK(g.n_nodes == 1);
	CHECK_ERR(cairn_follow(t, &a0, ok_steps, 1, CAIRN_MAX_NODES + 1, 0, &g), CAIRN_EINVAL);
	OK(cairn_follow(t, &a0, ok_steps, 1, CAIRN_MAX_NODES, 0, &g));
	h[0] = (cairn_hop){CAIRN_OUT, NULL, 0, NULL, 0};
	h[1] = (cairn_hop){CAIRN_OUT, bad_rel, 2, NULL, 0};
	CHECK_ERR(cairn_follow(t, &a0, h, 2, 0, 0, &g), CAIRN_EUNKNOWNREL);
	h[1] = (cairn_hop){CAIRN_OUT, NULL, 0, bad_kind, 2};
	CHECK_ERR(cairn_follow(t, &a0, h, 2, 0, 0, &g), CAIRN_EUNKNOWNKIND);
	h[1] = (cairn_hop){7, NULL, 0, NULL, 0};
	CHECK_ERR(cairn_follow(t, &a0, h, 2, 0, 0, &g), CAIRN_EINVAL);
	CHECK_ERR(cairn_follow(t, &nope, ok_steps, 1, 0, 0, &g), CAIRN_ENOTFOUND);
	CHECK_ERR(cairn_follow(t, &gone, ok_steps, 1, 0, 0, &g), CAIRN_ENOTFOUND);
	CHECK_ERR(cairn_follow(t, &nokey, ok_steps, 1, 0, 0, &g), CAIRN_EINVAL);

	/* Shortest path. */
	CHECK_ERR(cairn_shortest_path(NULL, &a0, &a1, 0, NULL, 0, &g), CAIRN_EINVAL);
	CHECK_ERR(cairn_shortest_path(t, NULL, &a1, 0, NULL, 0, &g), CAIRN_EINVAL);
	CHECK_ERR(cairn_shortest_path(t, &a0, NULL, 0, NULL, 0, &g), CAIRN_EINVAL);
	CHECK_ERR(cairn_shortest_path(t, &a0, &a1, 0, NULL, 0, NULL), CAIRN_EINVAL);
	CHECK_ERR(cairn_shortest_path(t, &a0, &a1, CAIRN_MAX_PATH + 1, NULL, 0, &g), CAIRN_EINVAL);
	CHECK_ERR(cairn_shortest_path(t, &a0, &a1, 1000, NULL, 0, &g), CAIRN_EINVAL);
	OK(cairn_shortest_path(t, &a0, &a1, CAIRN_MAX_PATH, NULL, 0, &g));
	CHECK(g.found && g.n_nodes == 2);
	CHECK_ERR(cairn_shortest_path(t, &nope, &a1, 0, NULL, 0, &g), CAIRN_ENOTFOUND);
	CHECK_ERR(cairn_shortest_path(t, &a0, &nope, 0, NULL, 0, &g), CAIRN_ENOTFOUND);
	CHECK_ERR(cairn_shortest_path(t, &a0, &gone, 0, NULL, 0, &g), CAIRN_ENOTFOUND);
	CHECK_ERR(cairn_shortest_path(t, &a0, &nokey, 0, NULL, 0, &g), CAIRN_EINVAL);
	h[0] = (cairn_hop){CAIRN_OUT, bad_rel, 2, NULL, 0};
	CHECK_ERR(cairn_shortest_path(t, &a0, &a1, 0, h, 0, &g), CAIRN_EUNKNOWNREL);
	h[0] = (cairn_hop){CAIRN_OUT, NULL, 0, bad_kind, 2};
	CHECK_ERR(cairn_shortest_path(t, &a0, &a1, 0, h, 0, &g), CAIRN_EUNKNOWNKIND);
	h[0] = (cairn_hop){7, NULL, 0, NULL, 0};
	CHECK_ERR(cairn_shortest_path(t, &a0, &a1, 0, h, 0, &g), CAIRN_EINVAL);
	h[0] = (cairn_hop){-3, NULL, 0, NULL, 0};
	CHECK_ERR(cairn_shortest_path(t, &a0, &a1, 0, h, 0, &g), CAIRN_EINVAL);

	/* The transaction still reads, and the store is as it was. */
	o.start = &a0;
	o.n_start = 1;
	OK(cairn_neighborhood(t, &o, &g));
	CHECK(g.n_nodes == 4 && g.n_links == 3);
	cairn_txn_end(t);
	after = test_export(st, "d");
	CHECK(after && strcmp(before, after) == 0);
	CHECK(test_head(st, "d") == head);
	OK(cairn_check(st, "d", NULL, NULL, NULL));
	free(before);
	free(after);
	cairn_close(st);
}

/*
 * Headers without values come from the keys entry when it carries them (a
 * title of up to 240 bytes), else from the Version: the same either way,
 * after a rename and at the revision before it, with a vector.
 */
void test_graph_headers(void)
{
	cairn_store *st = test_store();
	char lines[2048], longt[301];
	cairn_commit_result r1;
	uint64_t at[2];

	CHECK(st);
	if (!st)
		return;
	memset(longt, 'L', 300);
	longt[300] = '\0';
	snprintf(lines, sizeof(lines),
		 "{\"kind\":\"Supplier\",\"key\":\"S1\",\"title\":\"Acme\",\"vector\":[1,0,0]}\n"
		 "{\"kind\":\"Supplier\",\"key\":\"S2\",\"title\":\"%s\"}\n"
		 "{\"kind\":\"Part\",\"key\":\"P1\",\"title\":\"bolt\",\"values\":{\"sku\":\"1\"}}\n"
		 "{\"rel\":\"supplied_by\",\"from\":\"Part:P1\",\"to\":\"Supplier:S1\"}\n"
		 "{\"rel\":\"supplied_by\",\"from\":\"Part:P1\",\"to\":\"Supplier:S2\"}",
		 longt);
	OK(test_commit(st, lines, &r1));
	OK(test_commit(st, "{\"kind\":\"Supplier\",\"key\":\"S1\",\"title\":\"Acme Two\"}", NULL));
	at[0] = r1.revision;
	at[1] = 0;
	for (int i = 0; i < 2; i++) {
		cairn_read_options ro = {0};
		cairn_neighborhood_options o = {0};
		cairn_ref p1 = {"Part", "P1", 0};
		cairn_graph g[2];
		cairn_txn *t;

		ro.domain = "d";
		ro.at_revision = at[i];
		OK(cairn_txn_begin(st, &ro, &t));
		o.start = &p1;
		o.n_start = 1;
		for (int v = 0; v < 2; v++) {
			o.values = v;
			OK(cairn_neighborhood(t, &o, &g[v]));
		}
		CHECK(g[0].n_nodes == 3 && g[1].n_nodes == 3);
		for (size_t j = 0; j < g[0].n_nodes && g[1].n_nodes == 3; j++) {
			const cairn_record *a = &g[0].nodes[j].rec, *b = &g[1].nodes[j].rec;
			cairn_record want;

			OK(cairn_get(t, a->kind, a->key, a->key_len, &want));
			CHECK(a->title_len == want.title_len &&
			      memcmp(a->title, want.title, a->title_len) == 0);
			CHECK(b->title_len == want.title_len &&
			      memcmp(b->title, want.title, b->title_len) == 0);
			CHECK(a->vector_dim == want.vector_dim && a->revision == want.revision &&
			      a->vid == want.vid);
			if (a->key_len == 2 && memcmp(a->key, "S1", 2) == 0)
				CHECK(a->vector_dim == 3 &&
				      test_streq(a->title, a->title_len, i ? "Acme Two" : "Acme"));
			if (a->key_len == 2 && memcmp(a->key, "S2", 2) == 0)
				CHECK(a->title_len == 300);
		}
		cairn_txn_end(t);
	}
	OK(cairn_check(st, "d", NULL, NULL, NULL));
	cairn_close(st);
}
