/* The JSON of the public types, for every client (wire.h). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/hmap.h"
#include "base/text.h"
#include "wire/wire.h"

/* Is v the string w (by its length: "out\u0000x" is not "out")? */
static int word_is(const jv *v, const char *w)
{
	return jv_is(v, JV_STRING) && v->len == strlen(w) && memcmp(v->u.s, w, v->len) == 0;
}

int wire_ref(arena *a, const jv *v, const char *what, cairn_ref *r, char *err, size_t errlen)
{
	const char *colon;

	memset(r, 0, sizeof(*r));
	if (jv_str_nul(v)) { /* the Kind goes on as a C string */
		snprintf(err, errlen, "%s " JSON_NUL_REFUSED, what);
		return -1;
	}
	if (!v || v->type != JV_STRING || !(colon = memchr(v->u.s, ':', v->len)) ||
	    colon == v->u.s || (size_t)(colon - v->u.s) + 1 == v->len) {
		snprintf(err, errlen, "%s is a Record as \"Kind:key\"", what);
		return -1;
	}
	if (!(r->kind = arena_strndup(a, v->u.s, (size_t)(colon - v->u.s)))) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	r->key = colon + 1;
	r->key_len = v->len - (size_t)(colon - v->u.s) - 1;
	return 0;
}

/* An array of names (NULL or null: none) into a list in a. */
static int names(arena *a, const jv *v, const char *what, const char *member,
		 const char *const **out, size_t *n, char *err, size_t errlen)
{
	const char **l;

	*out = NULL;
	*n = 0;
	if (!v || v->type == JV_NULL)
		return 0;
	if (v->type != JV_ARRAY || v->len > 64)
		goto bad;
	if (!v->len)
		return 0;
	if (!(l = arena_alloc(a, v->len * sizeof(*l)))) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (uint32_t i = 0; i < v->len; i++) {
		if (v->u.items[i].type != JV_STRING || !v->u.items[i].len)
			goto bad;
		if (jv_str_nul(&v->u.items[i])) {
			snprintf(err, errlen, "%s.%s[%u] " JSON_NUL_REFUSED, what, member, i);
			return -1;
		}
		l[i] = v->u.items[i].u.s;
	}
	*out = l;
	*n = v->len;
	return 0;
bad:
	snprintf(err, errlen, "%s.%s is an array of at most 64 names", what, member);
	return -1;
}

int wire_hop(arena *a, const jv *v, const char *what, cairn_hop *h, char *err, size_t errlen)
{
	memset(h, 0, sizeof(*h));
	h->dir = CAIRN_BOTH;
	if (!v || v->type == JV_NULL)
		return 0;
	if (v->type != JV_OBJECT) {
		snprintf(err, errlen, "%s is an object: dir, rels, kinds", what);
		return -1;
	}
	for (uint32_t i = 0; i < v->len; i++) {
		const char *k = v->u.items[i].key;

		if (strcmp(k, "dir") && strcmp(k, "rels") && strcmp(k, "kinds")) {
			snprintf(err, errlen, "%s: unknown member \"%s\" (dir, rels, kinds)", what,
				 k);
			return -1;
		}
	}
	return wire_hop_members(a, v, what, h, err, errlen);
}

int wire_hop_members(arena *a, const jv *v, const char *what, cairn_hop *h, char *err,
		     size_t errlen)
{
	const jv *dir;

	memset(h, 0, sizeof(*h));
	h->dir = CAIRN_BOTH;
	if ((dir = jv_get(v, "dir")) && dir->type != JV_NULL) {
		if (word_is(dir, "out"))
			h->dir = CAIRN_OUT;
		else if (word_is(dir, "in"))
			h->dir = CAIRN_IN;
		else if (!word_is(dir, "both")) {
			snprintf(err, errlen, "%s.dir is \"out\", \"in\" or \"both\"", what);
			return -1;
		}
	}
	return names(a, jv_get(v, "rels"), what, "rels", &h->rels, &h->n_rels, err, errlen) ||
			       names(a, jv_get(v, "kinds"), what, "kinds", &h->kinds, &h->n_kinds,
				     err, errlen)
		       ? -1
		       : 0;
}

void wire_endpoint(buf *b, const char *kind, const char *key, size_t key_len)
{
	json_quote_pair(b, kind, strlen(kind), ':', key, key_len);
}

void wire_record_open(buf *b, const cairn_record *r)
{
	buf_put(b, "{\"kind\":", 8);
	json_quote(b, r->kind, strlen(r->kind));
	buf_put(b, ",\"key\":", 7);
	json_quote(b, r->key, r->key_len);
	buf_put(b, ",\"title\":", 9);
	json_quote(b, r->title, r->title_len);
}

void wire_record(buf *b, const cairn_record *r)
{
	wire_record_open(b, r);
	buf_put(b, ",\"values\":", 10);
	buf_put(b, r->values, r->values_len);
	buf_printf(b, ",\"revision\":%llu", (unsigned long long)r->revision);
	if (r->vector_dim)
		buf_printf(b, ",\"vector_dim\":%zu", r->vector_dim);
	buf_put_u8(b, '}');
}

void wire_revision(buf *b, const cairn_revision *v)
{
	buf_printf(b, "{\"revision\":%llu,\"parent\":%llu", (unsigned long long)v->revision,
		   (unsigned long long)v->parent);
	if (v->parent2)
		buf_printf(b, ",\"parent2\":%llu", (unsigned long long)v->parent2);
	buf_printf(b, ",\"type\":\"%s\",\"branch\":", cairn_revision_type_name(v->type));
	wire_cstr(b, v->branch);
	PUTS(b, ",\"time\":");
	wire_time(b, v->time_ms);
	PUTS(b, ",\"actor\":");
	wire_str(b, v->actor, v->actor_len);
	PUTS(b, ",\"source\":");
	wire_str(b, v->source, v->source_len);
	PUTS(b, ",\"confidence\":");
	json_number(b, v->confidence);
	PUTS(b, ",\"message\":");
	wire_str(b, v->message, v->message_len);
	PUTS(b, ",\"trace_id\":");
	wire_str(b, v->trace_id, v->trace_id_len);
	buf_printf(b, ",\"changes\":%llu,\"hash\":", (unsigned long long)v->changes);
	wire_hash(b, v->hash);
	buf_put_u8(b, '}');
}

const char *wire_change_name(int change)
{
	static const char *const names[] = {"unchanged", "created", "updated", "deleted", "erased"};

	return change >= 0 && change <= CAIRN_ERASED ? names[change] : "?";
}

static const char *const proposal_status[] = {"?", "open", "merged", "rejected", "withdrawn"};

const char *wire_proposal_status(int status)
{
	return status >= 1 && status <= 4 ? proposal_status[status] : "?";
}

int wire_proposal_status_parse(const char *name)
{
	for (int i = 1; i <= 4; i++)
		if (strcmp(name, proposal_status[i]) == 0)
			return i;
	return 0;
}

/* "rel":REL,"from":"Kind:key","to":"Kind:key" */
static void link_ends(buf *b, const char *rel, const char *from_kind, const char *from_key,
		      size_t from_len, const char *to_kind, const char *to_key, size_t to_len)
{
	PUTS(b, "\"rel\":");
	wire_cstr(b, rel);
	PUTS(b, ",\"from\":");
	wire_endpoint(b, from_kind, from_key, from_len);
	PUTS(b, ",\"to\":");
	wire_endpoint(b, to_kind, to_key, to_len);
}

void wire_change_item(buf *b, const cairn_change_item *it, int two_sided)
{
	if (it->is_link) {
		PUTS(b, "{\"type\":\"link\",");
		link_ends(b, it->rel, it->from_kind, it->from_key, it->from_len, it->to_kind,
			  it->to_key, it->to_len);
	} else {
		PUTS(b, "{\"type\":\"record\",\"kind\":");
		wire_cstr(b, it->kind);
		PUTS(b, ",\"key\":");
		wire_str(b, it->key, it->key_len);
	}
	buf_printf(b, ",\"ours\":\"%s\"", wire_change_name(it->ours));
	if (two_sided)
		buf_printf(b, ",\"theirs\":\"%s\"", wire_change_name(it->theirs));
	buf_printf(b, ",\"conflicts\":%d,\"unresolved\":%d,\"diff\":", it->conflicts,
		   it->unresolved);
	buf_put(b, it->diff, it->diff_len);
	buf_put_u8(b, '}');
}

/* The open header of a Record, after a comma unless first. */
static void w_header(buf *b, const cairn_record *r, int first)
{
	if (!first)
		buf_put_u8(b, ',');
	wire_record_open(b, r);
}

int wire_link(buf *b, cairn_txn *t, const cairn_link *l, int values, cairn_revision *last)
{
	int rc;

	PUTS(b, "{");
	link_ends(b, l->rel, l->from_kind, l->from_key, l->from_key_len, l->to_kind, l->to_key,
		  l->to_key_len);
	if (values) {
		PUTS(b, ",\"values\":");
		buf_put(b, l->values, l->values_len);
	}
	buf_printf(b, ",\"revision\":%llu", (unsigned long long)l->revision);
	if (t) {
		if (last->revision != l->revision && (rc = cairn_revision_get(t, l->revision, last)))
			return rc;
		if (last->source_len) {
			PUTS(b, ",\"source\":");
			wire_str(b, last->source, last->source_len);
		}
		PUTS(b, ",\"confidence\":");
		json_number(b, last->confidence);
	}
	buf_put_u8(b, '}');
	return 0;
}

/* The position in nodes of a Link's end, from the map of "Kind\0key" to position + 1. */
static size_t end_pos(const hmap *m, buf *k, const char *kind, const char *key, size_t len)
{
	const uint64_t *p;

	k->len = 0;
	buf_put(k, kind, strlen(kind) + 1);
	buf_put(k, key, len);
	p = hmap_get(m, k->p, k->len);
	return p ? (size_t)*p - 1 : SIZE_MAX;
}

int wire_graph(buf *b, cairn_txn *t, const cairn_graph *g, int values, size_t from, size_t to)
{
	cairn_revision last = {0};
	hmap pos = HMAP_INIT;
	buf k = BUF_INIT;
	int rc = 0, paged;

	to = to < g->n_nodes ? to : g->n_nodes;
	from = from < to ? from : to;
	paged = from > 0 || to < g->n_nodes;
	PUTS(b, "\"nodes\":[");
	for (size_t i = 0; i < to && !rc; i++) {
		const cairn_record *r = &g->nodes[i].rec;
		uint64_t *p;
		int isnew;

		if (paged) {
			k.len = 0;
			buf_put(&k, r->kind, strlen(r->kind) + 1);
			buf_put(&k, r->key, r->key_len);
			if (k.oom || !(p = hmap_put(&pos, k.p, k.len, &isnew)))
				rc = CAIRN_ENOMEM;
			else
				*p = i + 1;
		}
		if (i < from)
			continue;
		w_header(b, r, i == from);
		buf_printf(b, ",\"depth\":%u", g->nodes[i].depth);
		if (values) {
			PUTS(b, ",\"values\":");
			buf_put(b, r->values, r->values_len);
		}
		buf_put_u8(b, '}');
	}
	PUTS(b, "],\"links\":[");
	for (size_t i = 0, n = 0; i < g->n_links && !rc; i++) {
		const cairn_link *l = &g->links[i];

		if (paged) {
			size_t a = end_pos(&pos, &k, l->from_kind, l->from_key, l->from_key_len);
			size_t z = end_pos(&pos, &k, l->to_kind, l->to_key, l->to_key_len);

			if (a == SIZE_MAX || z == SIZE_MAX || (a > z ? a : z) < from)
				continue;
		}
		if (n++)
			buf_put_u8(b, ',');
		rc = wire_link(b, t, l, values, &last);
	}
	buf_printf(b, "],\"truncated\":%s", g->truncated ? "true" : "false");
	hmap_release(&pos);
	buf_release(&k);
	return rc;
}

int wire_resolve_options(arena *a, const jv *o, cairn_resolve_options *r, char *err, size_t errlen)
{
	const jv *t = jv_get(o, "text"), *ed = jv_get(o, "max_edits");
	const jv *ex = jv_get(o, "exact");

	memset(r, 0, sizeof(*r));
	if (!jv_is(t, JV_STRING) || !t->len) {
		snprintf(err, errlen, "text is required, a non-empty string");
		return -1;
	}
	r->text = t->u.s;
	r->text_len = t->len;
	if (ed && ed->type != JV_NULL) {
		if (ed->type != JV_INT || ed->u.i < 1 || ed->u.i > 2) {
			snprintf(err, errlen, "max_edits is 1 or 2");
			return -1;
		}
		r->max_edits = (unsigned)ed->u.i;
	}
	if (ex && ex->type != JV_NULL && !jv_is_bool(ex)) {
		snprintf(err, errlen, "exact is true or false");
		return -1;
	}
	r->exact = jv_is(ex, JV_TRUE);
	return names(a, jv_get(o, "kinds"), "resolve", "kinds", &r->kinds, &r->n_kinds, err,
		     errlen);
}

static const char *const source_names[] = {"", "key", "title", "unique", "alias"};
static const char *const match_names[] = {"", "exact", "folded", "spelling", "prefix"};

void wire_matches(buf *b, const cairn_match *m, size_t n, int truncated, int values)
{
	buf_put(b, "\"matches\":[", 11);
	for (size_t i = 0; i < n; i++) {
		const cairn_record *r = &m[i].rec;

		w_header(b, r, i == 0);
		buf_printf(b, ",\"score\":%.2f,\"source\":\"%s\",\"match\":\"%s\"", m[i].score,
			   source_names[m[i].source], match_names[m[i].match]);
		if (m[i].match == CAIRN_MATCH_SPELLING)
			buf_printf(b, ",\"edits\":%u", m[i].edits);
		if (m[i].attr) {
			buf_put(b, ",\"attr\":", 8);
			json_quote(b, m[i].attr, strlen(m[i].attr));
		}
		buf_put(b, ",\"reason\":", 10);
		json_quote(b, m[i].reason, strlen(m[i].reason));
		if (values) {
			buf_put(b, ",\"values\":", 10);
			buf_put(b, r->values, r->values_len);
		}
		buf_put_u8(b, '}');
	}
	buf_printf(b, "],\"truncated\":%s", truncated ? "true" : "false");
}

/* A search's "where" member, if any, as canonical JSON text in a. */
static int where_member(arena *a, const jv *o, const char **where, size_t *len, char *err,
			size_t errlen)
{
	const jv *w = jv_get(o, "where");
	buf b = BUF_INIT;

	if (!w || w->type == JV_NULL)
		return 0;
	if (w->type != JV_OBJECT) {
		snprintf(err, errlen, "where: a filter is an object");
		return -1;
	}
	jv_canon(w, &b);
	*where = b.oom ? NULL : arena_strndup(a, (const char *)b.p, b.len);
	*len = b.len;
	buf_release(&b);
	if (!*where) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	return 0;
}

int wire_search_options(arena *a, const jv *o, cairn_search_options *s, char *err, size_t errlen)
{
	const jv *t = jv_get(o, "text");

	memset(s, 0, sizeof(*s));
	if (!jv_is(t, JV_STRING) || !t->len) {
		snprintf(err, errlen, "text is required, a non-empty string");
		return -1;
	}
	const jv *aw = jv_get(o, "all_words");

	s->text = t->u.s;
	s->text_len = t->len;
	if (aw && aw->type != JV_NULL && !jv_is_bool(aw)) {
		snprintf(err, errlen, "all_words is true or false");
		return -1;
	}
	s->all_words = jv_is(aw, JV_TRUE);
	aw = jv_get(o, "no_typos");
	if (aw && aw->type != JV_NULL && !jv_is_bool(aw)) {
		snprintf(err, errlen, "no_typos is true or false");
		return -1;
	}
	s->no_typos = jv_is(aw, JV_TRUE);
	aw = jv_get(o, "explain");
	if (aw && aw->type != JV_NULL && !jv_is_bool(aw)) {
		snprintf(err, errlen, "explain is true or false");
		return -1;
	}
	s->explain = jv_is(aw, JV_TRUE);
	if (where_member(a, o, &s->where, &s->where_len, err, errlen))
		return -1;
	return names(a, jv_get(o, "kinds"), "search", "kinds", &s->kinds, &s->n_kinds, err, errlen);
}

/* A JSON array of 1 to CAIRN_MAX_VECTOR_DIM numbers as floats allocated in a. */
static int vector_array(arena *a, const jv *v, const float **out, size_t *dim, char *err,
			size_t errlen)
{
	float *q;

	if (!jv_is(v, JV_ARRAY) || !v->len || v->len > CAIRN_MAX_VECTOR_DIM ||
	    !(q = arena_alloc(a, v->len * sizeof(float)))) {
		snprintf(err, errlen, "vector is an array of 1 to %d numbers",
			 CAIRN_MAX_VECTOR_DIM);
		return -1;
	}
	for (uint32_t i = 0; i < v->len; i++) {
		if (!jv_is_number(&v->u.items[i])) {
			snprintf(err, errlen, "vector is an array of numbers");
			return -1;
		}
		q[i] = (float)jv_number(&v->u.items[i]);
	}
	*out = q;
	*dim = v->len;
	return 0;
}

/* "probes": the vector index's lists, 1 to 65536 (absent or null: *out stays 0). */
static int probes_member(const jv *o, size_t *out, char *err, size_t errlen)
{
	const jv *p = jv_get(o, "probes");

	if (!p || p->type == JV_NULL)
		return 0;
	if (!jv_is_number(p) || jv_number(p) != floor(jv_number(p)) || jv_number(p) < 1 ||
	    jv_number(p) > 65536) {
		snprintf(err, errlen, "probes is an integer from 1 to 65536");
		return -1;
	}
	*out = (size_t)jv_number(p);
	return 0;
}

int wire_is_vsearch(const jv *o)
{
	return jv_get(o, "near") || jv_get(o, "vector");
}

int wire_vsearch_options(arena *a, const jv *o, cairn_vsearch_options *s, cairn_ref *near,
			 char *err, size_t errlen)
{
	const jv *n = jv_get(o, "near"), *v = jv_get(o, "vector"), *m = jv_get(o, "metric"), *e;

	memset(s, 0, sizeof(*s));
	if (jv_get(o, "text") || (n && v)) {
		snprintf(err, errlen,
			 "a search is by text, near a Record, or by vector: one of them");
		return -1;
	}
	if (n) {
		const jv *k = jv_get(n, "kind"), *key = jv_get(n, "key");

		if (!jv_is(k, JV_STRING) || !jv_is(key, JV_STRING) || !key->len) {
			snprintf(err, errlen, "near is {\"kind\": name, \"key\": key}");
			return -1;
		}
		if (jv_str_nul(k) || jv_str_nul(key)) {
			snprintf(err, errlen, "near.%s " JSON_NUL_REFUSED,
				 jv_str_nul(k) ? "kind" : "key");
			return -1;
		}
		near->kind = k->u.s;
		near->key = key->u.s;
		near->key_len = key->len;
		s->near = near;
	} else if (vector_array(a, v, &s->vector, &s->dim, err, errlen)) {
		return -1;
	}
	if (m && m->type != JV_NULL) {
		if (!word_is(m, "cosine") && !word_is(m, "dot") && !word_is(m, "l2")) {
			snprintf(err, errlen, "metric is \"cosine\", \"dot\" or \"l2\"");
			return -1;
		}
		s->metric = !strcmp(m->u.s, "cosine") ? CAIRN_COSINE
			    : !strcmp(m->u.s, "dot")  ? CAIRN_DOT
						      : CAIRN_L2;
	}
	if (probes_member(o, &s->probes, err, errlen))
		return -1;
	if ((e = jv_get(o, "exact")) && e->type != JV_NULL) {
		if (e->type != JV_TRUE && e->type != JV_FALSE) {
			snprintf(err, errlen, "exact is true or false");
			return -1;
		}
		s->exact = e->type == JV_TRUE;
	}
	if (where_member(a, o, &s->where, &s->where_len, err, errlen))
		return -1;
	return names(a, jv_get(o, "kinds"), "search", "kinds", &s->kinds, &s->n_kinds, err, errlen);
}

void wire_excluded(buf *b, const cairn_exclude *x)
{
	char when[48];

	if (!x)
		return;
	buf_puts(b, ",\"excluded\":{");
	if (x->attribute) {
		buf_puts(b, "\"attribute\":");
		json_quote(b, x->attribute, strlen(x->attribute));
		buf_puts(b, ",\"values\":[");
		for (size_t i = 0; i < x->n_values; i++) {
			if (i)
				buf_put_u8(b, ',');
			json_quote(b, x->values[i], strlen(x->values[i]));
		}
		buf_put_u8(b, ']');
	}
	if (x->valid_at_ms) {
		time_format_ms(x->valid_at_ms, when);
		buf_printf(b, "%s\"not_valid_at\":\"%s\"", x->attribute ? "," : "", when);
	}
	buf_put_u8(b, '}');
}

void wire_hits(buf *b, const cairn_hit *h, size_t n, const cairn_search_info *info, int values)
{
	wire_hits_as(b, h, n, info, values, "explain");
}

void wire_hits_as(buf *b, const cairn_hit *h, size_t n, const cairn_search_info *info, int values,
		  const char *explain)
{
	buf_put(b, "\"hits\":[", 8);
	for (size_t i = 0; i < n; i++) {
		w_header(b, &h[i].rec, i == 0);
		/* Fused scores are small: in full (the receipt adds up to them). */
		if (strcmp(explain, "receipt") == 0) {
			buf_puts(b, ",\"score\":");
			json_number(b, h[i].score);
			buf_printf(b, ",\"words\":%u", h[i].words);
		} else {
			buf_printf(b, ",\"score\":%.4f,\"words\":%u", h[i].score, h[i].words);
		}
		if (h[i].explain)
			buf_printf(b, ",\"%s\":%.*s", explain, (int)h[i].explain_len, h[i].explain);
		if (values) {
			buf_put(b, ",\"values\":", 10);
			buf_put(b, h[i].rec.values, h[i].rec.values_len);
		}
		buf_put_u8(b, '}');
	}
	buf_printf(b, "],\"words\":%zu,\"partial\":%zu,\"corrected\":%zu,\"stopped\":%llu",
		   info->words, info->partial, info->corrected, (unsigned long long)info->stopped);
}

/* A number member >= 0 (absent or null: leave *d). */
static int num_member(const jv *o, const char *name, double max, double *d, char *err,
		      size_t errlen)
{
	const jv *v = jv_get(o, name);

	if (!v || v->type == JV_NULL)
		return 0;
	if (!jv_is_number(v) || !(jv_number(v) >= 0) || jv_number(v) > max) {
		snprintf(err, errlen, "%s is a number from 0 to %g", name, max);
		return -1;
	}
	*d = jv_number(v);
	return 0;
}

static int str_member(const jv *o, const char *name, const char **s, char *err, size_t errlen)
{
	const jv *v = jv_get(o, name);

	if (!v || v->type == JV_NULL)
		return 0;
	if (v->type != JV_STRING || !v->len) {
		snprintf(err, errlen, "%s is a name", name);
		return -1;
	}
	if (jv_str_nul(v)) {
		snprintf(err, errlen, "rank.%s " JSON_NUL_REFUSED, name);
		return -1;
	}
	*s = v->u.s;
	return 0;
}

int wire_rank_options(arena *a, const jv *v, cairn_rank_options *r, char *err, size_t errlen)
{
	static const char *const known[] = {
		"confidence",	    "trust",   "half_life_days", "recency_weight", "time_attribute",
		"status_attribute", "exclude", "demote",	 "demote_factor",  NULL};
	const jv *c = jv_get(v, "confidence"), *t = jv_get(v, "trust");

	memset(r, 0, sizeof(*r));
	if (!jv_is(v, JV_OBJECT)) {
		snprintf(err, errlen, "rank is an object");
		return -1;
	}
	for (uint32_t i = 0; i < v->len; i++) {
		size_t k = 0;

		while (known[k] && strcmp(known[k], v->u.items[i].key) != 0)
			k++;
		if (!known[k]) {
			snprintf(err, errlen, "rank has no member \"%.64s\"", v->u.items[i].key);
			return -1;
		}
	}
	if (c && c->type != JV_NULL) {
		if (c->type != JV_TRUE && c->type != JV_FALSE) {
			snprintf(err, errlen, "rank.confidence is true or false");
			return -1;
		}
		r->confidence = c->type == JV_TRUE;
	}
	if (t && t->type != JV_NULL) {
		cairn_trust *w;

		if (t->type != JV_OBJECT || t->len > 256 ||
		    !(w = arena_alloc(a, (t->len ? t->len : 1) * sizeof(*w)))) {
			snprintf(err, errlen, "rank.trust is an object of at most 256 weights");
			return -1;
		}
		for (uint32_t i = 0; i < t->len; i++) {
			const jv *x = &t->u.items[i];

			if (!jv_is_number(x) || !(jv_number(x) >= 0) || !*t->u.items[i].key) {
				snprintf(err, errlen,
					 "rank.trust maps a source or an actor to a weight >= 0");
				return -1;
			}
			if (jv_key_nul(x)) {
				snprintf(err, errlen,
					 "rank.trust: a source or an actor " JSON_NUL_REFUSED);
				return -1;
			}
			w[i].name = t->u.items[i].key;
			w[i].weight = jv_number(x);
		}
		r->trust = w;
		r->n_trust = t->len;
	}
	if (num_member(v, "half_life_days", 1e9, &r->half_life_days, err, errlen) ||
	    num_member(v, "recency_weight", 1, &r->recency_weight, err, errlen) ||
	    num_member(v, "demote_factor", 1, &r->demote_factor, err, errlen) ||
	    str_member(v, "time_attribute", &r->time_attribute, err, errlen) ||
	    str_member(v, "status_attribute", &r->status_attribute, err, errlen) ||
	    names(a, jv_get(v, "exclude"), "rank", "exclude", &r->exclude, &r->n_exclude, err,
		  errlen) ||
	    names(a, jv_get(v, "demote"), "rank", "demote", &r->demote, &r->n_demote, err, errlen))
		return -1;
	if ((r->n_exclude || r->n_demote) && !r->status_attribute) {
		snprintf(err, errlen, "rank.exclude and rank.demote need rank.status_attribute");
		return -1;
	}
	return 0;
}

int wire_hybrid_options(arena *a, const jv *o, cairn_hybrid_options *h, cairn_rank_options *r,
			char *err, size_t errlen)
{
	const jv *t = jv_get(o, "text"), *v = jv_get(o, "vector"), *f = jv_get(o, "fusion");
	const jv *w = jv_get(o, "weights"), *nr = jv_get(o, "near_records"),
		 *rk = jv_get(o, "rank");
	memset(h, 0, sizeof(*h));
	if (t && t->type != JV_NULL) {
		if (t->type != JV_STRING || !t->len) {
			snprintf(err, errlen, "text is a string of words");
			return -1;
		}
		h->text = t->u.s;
		h->text_len = t->len;
	}
	if (v && v->type != JV_NULL && vector_array(a, v, &h->vector, &h->dim, err, errlen))
		return -1;
	if (f && f->type != JV_NULL) {
		if (!word_is(f, "rrf") && !word_is(f, "weighted")) {
			snprintf(err, errlen, "fusion is \"rrf\" or \"weighted\"");
			return -1;
		}
		h->fusion = strcmp(f->u.s, "rrf") == 0 ? CAIRN_FUSE_RRF : CAIRN_FUSE_WEIGHTED;
	}
	if (w && w->type != JV_NULL) {
		if (w->type != JV_OBJECT ||
		    num_member(w, "text", 1e6, &h->text_weight, err, errlen) ||
		    num_member(w, "vector", 1e6, &h->vector_weight, err, errlen)) {
			if (w->type != JV_OBJECT)
				snprintf(err, errlen,
					 "weights is {\"text\": number, \"vector\": number}");
			return -1;
		}
	}
	if (num_member(o, "rrf_k", 1e6, &h->rrf_k, err, errlen) ||
	    num_member(o, "graph_boost", 1e6, &h->graph_boost, err, errlen))
		return -1;
	if (nr && nr->type != JV_NULL) {
		cairn_ref *refs;

		if (nr->type != JV_ARRAY || nr->len > 64 ||
		    !(refs = arena_alloc(a, (nr->len ? nr->len : 1) * sizeof(*refs)))) {
			snprintf(err, errlen,
				 "near_records is an array of at most 64 \"Kind:key\"");
			return -1;
		}
		for (uint32_t i = 0; i < nr->len; i++)
			if (wire_ref(a, &nr->u.items[i], "near_records", &refs[i], err, errlen))
				return -1;
		h->near = refs;
		h->n_near = nr->len;
		if (!jv_get(o, "graph_boost"))
			h->graph_boost = 1;
	}
	if (probes_member(o, &h->probes, err, errlen))
		return -1;
	if (rk && rk->type != JV_NULL) {
		if (wire_rank_options(a, rk, r, err, errlen))
			return -1;
		h->rank = r;
	}
	if (where_member(a, o, &h->where, &h->where_len, err, errlen))
		return -1;
	return names(a, jv_get(o, "kinds"), "search", "kinds", &h->kinds, &h->n_kinds, err, errlen);
}

void wire_compact(buf *b, const cairn_compact_result *r)
{
	buf_printf(
		b,
		"{\"horizon\":%llu,\"versions\":%llu,\"attr_entries\":%llu,\"link_entries\":%llu,"
		"\"vectors\":%llu,\"vindex_entries\":%llu,\"postings\":%llu,\"segments\":%llu,"
		"\"cells\":%llu,\"transactions\":%llu,\"seconds\":%.3f}",
		(unsigned long long)r->horizon, (unsigned long long)r->versions,
		(unsigned long long)r->attr_entries, (unsigned long long)r->link_entries,
		(unsigned long long)r->vectors, (unsigned long long)r->vindex_entries,
		(unsigned long long)r->postings, (unsigned long long)r->segments,
		(unsigned long long)r->cells, (unsigned long long)r->transactions, r->seconds);
}

void wire_erase(buf *b, const cairn_erase_result *r)
{
	buf_printf(b,
		   "{\"revision\":%llu,\"records\":%llu,\"links\":%llu,\"versions\":%llu,"
		   "\"index_entries\":%llu,\"attr_entries\":%llu,\"postings\":%llu,"
		   "\"lexicon_words\":%llu,\"vectors\":%llu,\"vindex_entries\":%llu,"
		   "\"transactions\":%llu,\"resumed\":%s,\"seconds\":%.3f}",
		   (unsigned long long)r->revision, (unsigned long long)r->records,
		   (unsigned long long)r->links, (unsigned long long)r->versions,
		   (unsigned long long)r->index_entries, (unsigned long long)r->attr_entries,
		   (unsigned long long)r->postings, (unsigned long long)r->lexicon_words,
		   (unsigned long long)r->vectors, (unsigned long long)r->vindex_entries,
		   (unsigned long long)r->transactions, r->resumed ? "true" : "false", r->seconds);
}

/* -------------------------------------------------------------- scalars -- */

void wire_str(buf *b, const char *s, size_t n)
{
	json_quote(b, s, n);
}

void wire_cstr(buf *b, const char *s)
{
	if (s)
		json_quote(b, s, strlen(s));
	else
		buf_put(b, "null", 4);
}

void wire_time(buf *b, int64_t ms)
{
	char t[48];

	time_format_ms(ms, t);
	buf_printf(b, "\"%s\"", t);
}

void wire_hash(buf *b, const uint8_t h[32])
{
	static const char hx[] = "0123456789abcdef";

	buf_put_u8(b, '"');
	for (int i = 0; i < 32; i++) {
		buf_put_u8(b, (uint8_t)hx[h[i] >> 4]);
		buf_put_u8(b, (uint8_t)hx[h[i] & 15]);
	}
	buf_put_u8(b, '"');
}

/* ------------------------------------------------------------ memories -- */

/* A string member that holds no U+0000: its text, or NULL when absent (-1: refused). */
static int mem_str(const jv *o, const char *name, const char **out, size_t *len, char *err,
		   size_t errlen)
{
	const jv *v = jv_get(o, name);

	*out = NULL;
	if (len)
		*len = 0;
	if (!v || v->type == JV_NULL)
		return 0;
	if (v->type != JV_STRING || !v->len || strlen(v->u.s) != v->len) {
		snprintf(err, errlen, "%s is a non-empty string without U+0000", name);
		return -1;
	}
	*out = v->u.s;
	if (len)
		*len = v->len;
	return 0;
}

/* An object member as canonical JSON in a, or NULL when absent (-1: not an object). */
static int mem_obj(arena *a, const jv *o, const char *name, const char **out, size_t *len,
		   char *err, size_t errlen)
{
	const jv *v = jv_get(o, name);
	buf b = BUF_INIT;

	*out = NULL;
	*len = 0;
	if (!v || v->type == JV_NULL)
		return 0;
	if (v->type != JV_OBJECT) {
		snprintf(err, errlen, "%s is an object", name);
		return -1;
	}
	jv_canon(v, &b);
	if (b.oom || !(*out = arena_strndup(a, (const char *)b.p, b.len))) {
		buf_release(&b);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	*len = b.len;
	buf_release(&b);
	return 0;
}

/*
 * What a memory is about, or the subjects of a digest: a name or Kind:key,
 * or an array of up to CAIRN_MEMORY_MAX_ABOUT of them (absent or null:
 * none), non-empty and without U+0000.
 */
static int name_list(arena *a, const jv *v, const char *what, const char *const **out, size_t *n,
		     char *err, size_t errlen)
{
	uint32_t len;
	const char **names;

	*out = NULL;
	*n = 0;
	if (!v || v->type == JV_NULL)
		return 0;
	len = v->type == JV_ARRAY ? v->len : 1;
	if ((v->type != JV_ARRAY && v->type != JV_STRING) || len > CAIRN_MEMORY_MAX_ABOUT) {
		snprintf(err, errlen, "%s is a name or Kind:key, or an array of up to %d of them",
			 what, CAIRN_MEMORY_MAX_ABOUT);
		return -1;
	}
	if (!(names = arena_alloc(a, (len ? len : 1) * sizeof(*names)))) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (uint32_t i = 0; i < len; i++) {
		const jv *it = v->type == JV_ARRAY ? &v->u.items[i] : v;

		if (it->type != JV_STRING || !it->len || strlen(it->u.s) != it->len) {
			snprintf(err, errlen,
				 "%s holds names or Kind:key: non-empty strings without U+0000", what);
			return -1;
		}
		names[i] = it->u.s;
	}
	*out = names;
	*n = len;
	return 0;
}

int wire_memory_in(arena *a, const jv *v, cairn_memory_in *m, char *err, size_t errlen)
{
	static const char *const allowed[] = {"text",	    "kind",    "key",   "values", "append",
					      "about",	    "supersedes", "replace", "links", NULL};
	const jv *rp;

	memset(m, 0, sizeof(*m));
	if (!jv_is(v, JV_OBJECT)) {
		snprintf(err, errlen, "a memory is an object with a text");
		return -1;
	}
	for (uint32_t i = 0; i < v->len; i++) {
		size_t k;

		for (k = 0; allowed[k] && strcmp(allowed[k], v->u.items[i].key); k++)
			;
		if (!allowed[k]) {
			snprintf(err, errlen,
				 "a memory has no member \"%s\" (text, kind, key, values, append, "
				 "about, supersedes, replace, links)",
				 v->u.items[i].key);
			return -1;
		}
	}
	if (mem_str(v, "text", &m->text, &m->text_len, err, errlen) ||
	    mem_str(v, "kind", &m->kind, NULL, err, errlen) ||
	    mem_str(v, "key", &m->key, &m->key_len, err, errlen) ||
	    mem_str(v, "supersedes", &m->supersedes, NULL, err, errlen) ||
	    mem_obj(a, v, "values", &m->values, &m->values_len, err, errlen) ||
	    mem_obj(a, v, "append", &m->append, &m->append_len, err, errlen))
		return -1;
	{
		const jv *l = jv_get(v, "links");
		buf b = BUF_INIT;

		if (l && l->type != JV_NULL) {
			if (l->type != JV_ARRAY) {
				snprintf(err, errlen, "links is an array of {rel, from, to}");
				return -1;
			}
			jv_canon(l, &b);
			if (b.oom || !(m->links = arena_strndup(a, (const char *)b.p, b.len))) {
				buf_release(&b);
				snprintf(err, errlen, "out of memory");
				return -1;
			}
			m->links_len = b.len;
			buf_release(&b);
		}
	}
	rp = jv_get(v, "replace");
	if (rp && rp->type != JV_NULL) {
		if (!jv_is_bool(rp)) {
			snprintf(err, errlen, "replace is true or false");
			return -1;
		}
		m->flags |= rp->type == JV_TRUE ? CAIRN_REMEMBER_REPLACE : 0;
	}
	if (name_list(a, jv_get(v, "about"), "about", &m->about, &m->n_about, err, errlen))
		return -1;
	return 0;
}

void wire_memories(buf *b, const cairn_memory_out *m, size_t n, const cairn_commit_result *res)
{
	buf_printf(b, "\"revision\":%llu,\"memories\":[", (unsigned long long)res->revision);
	for (size_t i = 0; i < n; i++) {
		if (i)
			buf_put_u8(b, ',');
		PUTS(b, "{\"kind\":");
		wire_cstr(b, m[i].kind);
		PUTS(b, ",\"key\":");
		wire_cstr(b, m[i].key);
		buf_printf(b, ",\"created\":%s,\"written\":%s,\"why\":",
			   m[i].created ? "true" : "false", m[i].written ? "true" : "false");
		wire_cstr(b, m[i].why);
		if (m[i].n_about) {
			PUTS(b, ",\"about\":[");
			for (size_t j = 0; j < m[i].n_about; j++) {
				const cairn_subject *s = &m[i].about[j];

				if (j)
					buf_put_u8(b, ',');
				PUTS(b, "{\"record\":");
				wire_endpoint(b, s->kind, s->key, strlen(s->key));
				buf_printf(b, ",\"created\":%s,\"reason\":",
					   s->created ? "true" : "false");
				wire_cstr(b, s->reason);
				buf_put_u8(b, '}');
			}
			buf_put_u8(b, ']');
		}
		if (m[i].superseded)
			PUTS(b, ",\"superseded\":true");
		if (m[i].links_written || m[i].links_replaced)
			buf_printf(b, ",\"links_written\":%u,\"links_replaced\":%u", m[i].links_written,
				   m[i].links_replaced);
		buf_put_u8(b, '}');
	}
	buf_put_u8(b, ']');
}

/* -------------------------------------------------------------- digest -- */

#define DIGEST_PAGE 64 /* memories asked of the library per digest answer */

int wire_digest(buf *b, cairn_txn *t, const cairn_digest_options *o, size_t offset, size_t budget)
{
	cairn_digest_item it[DIGEST_PAGE];
	cairn_record subj[CAIRN_MEMORY_MAX_ABOUT];
	size_t n, total, start = b->len, shown = 0;
	int truncated, rc;

	if ((rc = cairn_digest(t, o, offset, it, DIGEST_PAGE, &n, &total, &truncated, subj)))
		return rc;
	PUTS(b, "{\"subjects\":[");
	for (size_t i = 0; i < o->n_subjects; i++) {
		if (i)
			buf_put_u8(b, ',');
		wire_endpoint(b, subj[i].kind, subj[i].key, subj[i].key_len);
	}
	PUTS(b, "],\"memories\":[");
	for (size_t i = 0; i < n; i++) {
		size_t mark = b->len;
		char num[32];

		if (i)
			buf_put_u8(b, ',');
		PUTS(b, "{\"record\":");
		wire_endpoint(b, it[i].rec.kind, it[i].rec.key, it[i].rec.key_len);
		PUTS(b, ",\"text\":");
		wire_str(b, it[i].rec.title, it[i].rec.title_len);
		snprintf(num, sizeof(num), "%.3g", it[i].score);
		buf_printf(b, ",\"score\":%s", num);
		snprintf(num, sizeof(num), "%.3g", it[i].confidence);
		buf_printf(b, ",\"confidence\":%s", num);
		snprintf(num, sizeof(num), "%.3g", it[i].trust);
		buf_printf(b, ",\"trust\":%s,\"source\":", num);
		wire_str(b, it[i].source, it[i].source_len);
		PUTS(b, ",\"time\":");
		wire_time(b, it[i].time_ms);
		if (*it[i].status) {
			PUTS(b, ",\"status\":");
			wire_cstr(b, it[i].status);
		}
		if (it[i].supersedes.kind) {
			PUTS(b, ",\"supersedes\":");
			wire_endpoint(b, it[i].supersedes.kind, it[i].supersedes.key,
				      it[i].supersedes.key_len);
		}
		buf_put_u8(b, '}');
		/* Room is kept for the end of the answer (about 80 bytes). */
		if (i && b->len - start + 80 > budget) {
			b->len = mark;
			break;
		}
		shown++;
	}
	buf_put_u8(b, ']');
	if (o->n_subjects) {
		cairn_link_cursor cur;
		cairn_link l[16];
		size_t nl = 0, k = 0;

		memset(&cur, 0, sizeof(cur));
		PUTS(b, ",\"related\":[");
		if (cairn_links(t, subj[0].kind, subj[0].key, subj[0].key_len, CAIRN_BOTH, NULL,
				&cur, l, 16, &nl) == 0)
			for (size_t i = 0; i < nl; i++) {
				size_t mark = b->len;
				int out = strcmp(l[i].from_kind, subj[0].kind) == 0 &&
					  l[i].from_key_len == subj[0].key_len &&
					  memcmp(l[i].from_key, subj[0].key, subj[0].key_len) == 0;
				const char *ok = out ? l[i].to_kind : l[i].from_kind;

				if (!out && strcmp(l[i].rel, "about") == 0 &&
				    strcmp(l[i].from_kind,
					   o->memory_kind ? o->memory_kind : "Memory") == 0)
					continue; /* its memories are above */
				if (k++)
					buf_put_u8(b, ',');
				PUTS(b, "{\"rel\":");
				wire_cstr(b, l[i].rel);
				buf_printf(b, ",\"dir\":\"%s\",\"record\":", out ? "out" : "in");
				if (out)
					wire_endpoint(b, ok, l[i].to_key, l[i].to_key_len);
				else
					wire_endpoint(b, ok, l[i].from_key, l[i].from_key_len);
				buf_put_u8(b, '}');
				if (b->len - start + 60 > budget) {
					b->len = mark;
					break;
				}
			}
		buf_put_u8(b, ']');
	}
	buf_printf(b, ",\"total\":%zu,\"next\":", total);
	if (offset + shown < total)
		buf_printf(b, "\"%zu\"", offset + shown);
	else
		PUTS(b, "null");
	if (truncated)
		PUTS(b, ",\"truncated\":true");
	buf_put_u8(b, '}');
	return 0;
}

int wire_no_vectors(cairn_txn *t, char *err, size_t errlen)
{
	char model[512];
	size_t dim = 0;

	if (cairn_vector_model(t, model, sizeof(model), &dim) || dim)
		return 0; /* an error of its own is the search's to meet */
	snprintf(err, errlen,
		 "this Domain has no vectors, so a search by meaning would find nothing: write "
		 "them with its Records (--embed on import and put) or all at once (cairn "
		 "reembed), or search by words");
	return -1;
}

int wire_valid_at(const jv *v, int64_t *ms, char *err, size_t errlen)
{
	const jv *va = jv_get(v, "valid_at");

	*ms = 0;
	if (va && va->type != JV_NULL &&
	    (va->type != JV_STRING || time_parse_rfc3339(va->u.s, va->len, ms))) {
		snprintf(err, errlen,
			 "valid_at is an RFC 3339 time, like \"2026-03-01T00:00:00Z\"");
		return -1;
	}
	return 0;
}

int wire_digest_options(arena *a, const jv *v, cairn_digest_options *o, char *err, size_t errlen)
{
	const jv *s = jv_get(v, "subjects"), *ia = jv_get(v, "include_inactive");
	const jv *hl = jv_get(v, "half_life_days");

	memset(o, 0, sizeof(*o));
	if (name_list(a, s, "subjects", &o->subjects, &o->n_subjects, err, errlen))
		return -1;
	if (ia && ia->type != JV_NULL) {
		if (!jv_is_bool(ia)) {
			snprintf(err, errlen, "include_inactive is true or false");
			return -1;
		}
		o->include_inactive = ia->type == JV_TRUE;
	}
	if (wire_valid_at(v, &o->valid_at_ms, err, errlen))
		return -1;
	if (hl && hl->type != JV_NULL) {
		if (!jv_is_number(hl) || jv_number(hl) <= 0 || jv_number(hl) > 36500) {
			snprintf(err, errlen, "half_life_days is a number above 0, at most 36500");
			return -1;
		}
		o->half_life_days = jv_number(hl);
	}
	return 0;
}

/* -------------------------------------------------------------- recall -- */

void wire_recall(buf *b, const cairn_hit *h, const double *trust, size_t n, int values,
		 int receipts)
{
	PUTS(b, "\"hits\":[");
	for (size_t i = 0; i < n; i++) {
		char num[32];

		w_header(b, &h[i].rec, i == 0);
		snprintf(num, sizeof(num), "%.3g", h[i].score);
		buf_printf(b, ",\"score\":%s", num);
		snprintf(num, sizeof(num), "%.3g", trust[i]);
		buf_printf(b, ",\"trust\":%s", num);
		if (values) {
			PUTS(b, ",\"values\":");
			buf_put(b, h[i].rec.values, h[i].rec.values_len);
		}
		if (receipts && h[i].explain)
			buf_printf(b, ",\"receipt\":%.*s", (int)h[i].explain_len, h[i].explain);
		buf_put_u8(b, '}');
	}
	PUTS(b, "],\"note\":\"" RECALL_NOTE "\"");
}

int wire_recall_options(arena *a, const jv *v, cairn_recall_options *o, char *err, size_t errlen)
{
	const jv *t = jv_get(v, "text"), *l = jv_get(v, "limit");
	cairn_digest_options d;

	memset(o, 0, sizeof(*o));
	if (!jv_is(t, JV_STRING) || !t->len) {
		snprintf(err, errlen, "text is required, a non-empty string");
		return -1;
	}
	o->text = t->u.s;
	o->text_len = t->len;
	if (l && l->type != JV_NULL) {
		if (l->type != JV_INT || l->u.i < 1 || l->u.i > 50) {
			snprintf(err, errlen, "limit is an integer from 1 to 50");
			return -1;
		}
		o->limit = (size_t)l->u.i;
	}
	/* include_inactive, valid_at and half_life_days read as a digest reads them. */
	if (jv_get(v, "subjects")) {
		snprintf(err, errlen, "a recall has no subjects: it searches by text");
		return -1;
	}
	if (wire_digest_options(a, v, &d, err, errlen))
		return -1;
	o->include_inactive = d.include_inactive;
	o->valid_at_ms = d.valid_at_ms;
	o->half_life_days = d.half_life_days;
	return names(a, jv_get(v, "kinds"), "recall", "kinds", &o->kinds, &o->n_kinds, err, errlen);
}

/* ------------------------------------------------------------ errors -- */

/*
 * Every error code's exit status in the CLI and status in HTTP: the one
 * table both interfaces answer from, printed by `cairn help errors` and
 * kept in docs/cli.md ("Exit codes") by a test.
 */
static const wire_error errors[] = {
	{CAIRN_EINVAL, 2, 400},	       {CAIRN_ENOMEM, 1, 503},	    {CAIRN_EIO, 1, 500},
	{CAIRN_ECORRUPT, 6, 500},      {CAIRN_EFORMAT, 1, 500},	    {CAIRN_ENOTFOUND, 3, 404},
	{CAIRN_EEXIST, 4, 409},	       {CAIRN_ENODOMAIN, 3, 404},   {CAIRN_ENOBRANCH, 3, 404},
	{CAIRN_ECONFLICT, 5, 409},     {CAIRN_EJSON, 4, 400},	    {CAIRN_ESCHEMA, 4, 422},
	{CAIRN_ESCHEMADATA, 4, 422},   {CAIRN_EUNKNOWNKIND, 4, 422}, {CAIRN_EUNKNOWNATTR, 4, 422},
	{CAIRN_EUNKNOWNREL, 4, 422},   {CAIRN_ETYPE, 4, 422},	    {CAIRN_EENUM, 4, 422},
	{CAIRN_EREQUIRED, 4, 422},     {CAIRN_EUNIQUE, 4, 409},	    {CAIRN_EREF, 4, 422},
	{CAIRN_ELINKEND, 4, 422},      {CAIRN_ELINKKIND, 4, 422},   {CAIRN_ECARDINALITY, 4, 422},
	{CAIRN_EKEYEMPTY, 4, 400},     {CAIRN_EKEYLONG, 4, 400},    {CAIRN_EUTF8, 4, 400},
	{CAIRN_EHASLINKS, 4, 409},     {CAIRN_ELIMIT, 4, 413},	    {CAIRN_EMAPFULL, 1, 507},
	{CAIRN_EREADONLY, 1, 503},     {CAIRN_ELOCKED, 1, 503},	    {CAIRN_EDIM, 4, 422},
	{CAIRN_EMERGE, 5, 409},	       {CAIRN_ECLOSED, 5, 409},	    {CAIRN_EAUTH, 4, 401},
	{CAIRN_EFORBIDDEN, 4, 403},    {CAIRN_EQUERY, 2, 400},	    {CAIRN_ECOMPACTED, 3, 410},
};

const wire_error *wire_error_of(int rc)
{
	static const wire_error unknown = {0, 4, 422};

	for (size_t i = 0; i < sizeof(errors) / sizeof(errors[0]); i++)
		if (errors[i].rc == rc)
			return &errors[i];
	return &unknown;
}

const wire_error *wire_errors(size_t *n)
{
	*n = sizeof(errors) / sizeof(errors[0]);
	return errors;
}
