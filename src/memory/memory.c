/*
 * Memory for agents (docs/memory.md): the built-in memory schema, and
 * remembering and retracting memories as validated commits.
 *
 * This folder is built on the public API alone (cairn.h) and base: a
 * memory operation is a read (resolution, the Records that exist) and then
 * one commit of ordinary changes, made again on the new head when another
 * writer came in between. Nothing here knows how Versions are stored.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include <openssl/rand.h>

#include "base/alloc.h"
#include "base/arena.h"
#include "base/buf.h"
#include "base/err.h"
#include "base/json.h"
#include "base/text.h"
#include "memory/memory.h"

/* ------------------------------------------------------------- schema -- */

static const char memory_schema[] =
	"{\"kinds\":["
	"{\"name\":\"Entity\",\"description\":\"What memories are about\",\"attributes\":["
	"{\"name\":\"type\",\"type\":\"string\",\"indexed\":true},"
	"{\"name\":\"aliases\",\"type\":\"strings\",\"alias\":true,\"search\":true},"
	"{\"name\":\"summary\",\"type\":\"string\",\"search\":true}]},"
	"{\"name\":\"Memory\",\"description\":\"Something learned (the title)\","
	"\"attributes\":["
	"{\"name\":\"type\",\"type\":\"enum\",\"values\":[\"fact\",\"preference\",\"event\","
	"\"plan\",\"instruction\",\"observation\",\"belief\"],\"indexed\":true},"
	"{\"name\":\"status\",\"type\":\"enum\",\"values\":[\"active\",\"superseded\","
	"\"retracted\"],\"indexed\":true},"
	"{\"name\":\"confidence\",\"type\":\"float\",\"indexed\":true},"
	"{\"name\":\"valid_from\",\"type\":\"datetime\",\"indexed\":true},"
	"{\"name\":\"valid_to\",\"type\":\"datetime\",\"indexed\":true},"
	"{\"name\":\"source\",\"type\":\"string\",\"indexed\":true},"
	"{\"name\":\"tags\",\"type\":\"strings\",\"indexed\":true,\"search\":true},"
	"{\"name\":\"detail\",\"type\":\"string\",\"search\":true}]},"
	"{\"name\":\"Episode\",\"description\":\"A raw turn or message (the title)\",\"attributes\":["
	"{\"name\":\"speaker\",\"type\":\"string\",\"indexed\":true,\"search\":true},"
	"{\"name\":\"session\",\"type\":\"string\",\"indexed\":true},"
	"{\"name\":\"at\",\"type\":\"datetime\",\"indexed\":true},"
	"{\"name\":\"source\",\"type\":\"string\",\"indexed\":true}]},"
	"{\"name\":\"Source\",\"description\":\"The trust of a source or actor (the key)\",\"attributes\":["
	"{\"name\":\"trust\",\"type\":\"float\"}]}],"
	"\"relations\":["
	"{\"name\":\"about\",\"from\":\"*\",\"to\":\"*\"},"
	"{\"name\":\"mentions\",\"from\":\"*\",\"to\":\"*\"},"
	"{\"name\":\"supersedes\",\"from\":\"*\",\"to\":\"*\",\"inverse\":\"superseded_by\"},"
	"{\"name\":\"derived_from\",\"from\":\"*\",\"to\":\"*\"},"
	"{\"name\":\"related_to\",\"from\":\"*\",\"to\":\"*\"}]}";

const char *cairn_memory_schema(void)
{
	return memory_schema;
}

#define DEFAULT_KIND "Memory"
#define ENTITY_KIND "Entity"
#define MAX_TRIES 8
/* Texts up to this long are the same text ignoring case and accents (names keep 200 bytes). */
#define SAME_TEXT_FOLDED 150

/* ---------------------------------------------------------------- keys -- */

/*
 * A new key: 26 characters of Crockford's base32, the time in ms (48 bits)
 * then 80 random bits, as a ULID, so keys sort by when they were made. In
 * one process keys made in the same millisecond count up from the first.
 */
static pthread_mutex_t key_lock = PTHREAD_MUTEX_INITIALIZER;

static int key_new(char out[27])
{
	static const char b32[] = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
	static uint64_t last_ms;
	static uint8_t last[10];
	uint8_t r[10];
	uint64_t ms = (uint64_t)time_now_ms();
	int i;

	pthread_mutex_lock(&key_lock);
	if (ms <= last_ms) {
		ms = last_ms;
		memcpy(r, last, sizeof(r));
		for (i = 9; i >= 0 && ++r[i] == 0; i--)
			;
	} else if (RAND_bytes(r, sizeof(r)) != 1) {
		pthread_mutex_unlock(&key_lock);
		return err_set(CAIRN_EIO, "no random bytes for a new key");
	}
	last_ms = ms;
	memcpy(last, r, sizeof(r));
	pthread_mutex_unlock(&key_lock);
	for (i = 9; i >= 0; i--, ms >>= 5)
		out[i] = b32[ms & 31];
	/* 80 bits, 5 at a time, from the most significant. */
	for (i = 0; i < 16; i++) {
		unsigned bit = (unsigned)i * 5, byte = bit / 8, sh = bit % 8;
		unsigned v = (unsigned)r[byte] << 8 | (byte + 1 < 10 ? r[byte + 1] : 0);

		out[10 + i] = b32[(v >> (11 - sh)) & 31];
	}
	out[26] = '\0';
	return 0;
}

/* ------------------------------------------------------------- context -- */

typedef struct made {
	char name[CAIRN_MAX_TITLE + 1 > 256 ? 256 : CAIRN_MAX_TITLE + 1];
	char key[27];
} made;

typedef struct mctx {
	cairn_store *st;
	const cairn_commit_options *opts;
	cairn_txn *t;
	arena mem;
	const jv *schema; /* the Domain's schema document */
	cairn_changeset *cs;
	made *made; /* Entities this batch makes, by name */
	size_t n_made, cap_made;
} mctx;

static const jv *schema_kind(const mctx *m, const char *kind)
{
	const jv *ks = jv_get(m->schema, "kinds");

	for (uint32_t i = 0; ks && ks->type == JV_ARRAY && i < ks->len; i++) {
		const jv *n = jv_get(&ks->u.items[i], "name");

		if (n && n->type == JV_STRING && strcmp(n->u.s, kind) == 0)
			return &ks->u.items[i];
	}
	return NULL;
}

/* The type of Attribute attr of Kind kind ("string", "strings", ...), or NULL. */
static const char *attr_type(const mctx *m, const char *kind, const char *attr)
{
	const jv *k = schema_kind(m, kind), *as = k ? jv_get(k, "attributes") : NULL;

	for (uint32_t i = 0; as && as->type == JV_ARRAY && i < as->len; i++) {
		const jv *n = jv_get(&as->u.items[i], "name"),
			 *ty = jv_get(&as->u.items[i], "type");

		if (n && n->type == JV_STRING && strcmp(n->u.s, attr) == 0)
			return ty && ty->type == JV_STRING ? ty->u.s : NULL;
	}
	return NULL;
}

static int has_rel(const mctx *m, const char *rel)
{
	const jv *rs = jv_get(m->schema, "relations");

	for (uint32_t i = 0; rs && rs->type == JV_ARRAY && i < rs->len; i++) {
		const jv *n = jv_get(&rs->u.items[i], "name");

		if (n && n->type == JV_STRING && strcmp(n->u.s, rel) == 0)
			return 1;
	}
	return 0;
}

static int need_rel(const mctx *m, size_t i, const char *rel)
{
	if (has_rel(m, rel))
		return 0;
	return err_change(CAIRN_EUNKNOWNREL, (long)i,
			  "memory %zu: the Domain has no Relation %s: apply the memory schema "
			  "(cairn init --memory, docs/memory.md) or add one",
			  i, rel);
}

int mem_subject_kind(const char *kind, const char *memkind)
{
	return strcmp(kind, memkind) && strcmp(kind, "Episode") && strcmp(kind, "Source");
}

int mem_split_ref(const char *s, char kind[CAIRN_MAX_NAME + 1], const char **key, size_t *key_len)
{
	const char *c = strchr(s, ':');

	if (!c || c == s || (size_t)(c - s) > CAIRN_MAX_NAME || !c[1])
		return -1;
	memcpy(kind, s, (size_t)(c - s));
	kind[c - s] = '\0';
	*key = c + 1;
	*key_len = strlen(c + 1);
	return 0;
}

static void copy_key(char out[CAIRN_MAX_KEY + 1], const char *k, size_t n)
{
	n = n > CAIRN_MAX_KEY ? CAIRN_MAX_KEY : n;
	memcpy(out, k, n);
	out[n] = '\0';
}

static void copy_name(char out[CAIRN_MAX_NAME + 1], const char *s)
{
	size_t n = strlen(s);

	n = n > CAIRN_MAX_NAME ? CAIRN_MAX_NAME : n;
	memcpy(out, s, n);
	out[n] = '\0';
}

/* The library's error rc, said of memory i. */
static int at(size_t i, int rc)
{
	err_prefix("memory %zu: ", i);
	err_set_index((long)i);
	return rc;
}

/* ------------------------------------------------------------ subjects -- */

/* An Entity this batch already makes for the same name (compared ignoring ASCII case). */
static const made *made_find(const mctx *m, const char *name)
{
	for (size_t i = 0; i < m->n_made; i++)
		if (strcasecmp(m->made[i].name, name) == 0)
			return &m->made[i];
	return NULL;
}

/*
 * What about[j] of memory i names: a Record given as Kind:key (it must
 * exist), else the Record the name resolves to (an exact or folded name,
 * memories and episodes left out), else a new Entity.
 */
static int subject(mctx *m, size_t i, const char *memkind, const char *name, cairn_subject *s)
{
	char kind[CAIRN_MAX_NAME + 1];
	const char *key;
	size_t key_len, n = 0;
	cairn_record r;
	cairn_resolve_options ro;
	cairn_match mt[8];
	int rc;

	memset(s, 0, sizeof(*s));
	if (!*name)
		return err_change(CAIRN_EINVAL, (long)i, "memory %zu: an about is empty", i);
	if (mem_split_ref(name, kind, &key, &key_len) == 0 && schema_kind(m, kind)) {
		if ((rc = cairn_get(m->t, kind, key, key_len, &r)) == CAIRN_ENOTFOUND)
			return err_change(
				CAIRN_ENOTFOUND, (long)i,
				"memory %zu: about names %s, which does not exist (give a "
				"name instead to find or make it)",
				i, name);
		if (rc)
			return rc;
		copy_name(s->kind, kind);
		copy_key(s->key, key, key_len);
		snprintf(s->reason, sizeof(s->reason), "named as Kind:key");
		return 0;
	}
	memset(&ro, 0, sizeof(ro));
	ro.text = name;
	ro.exact = 1;
	ro.limit = 8;
	if ((rc = cairn_resolve(m->t, &ro, mt, 8, &n, NULL)))
		return rc;
	for (size_t j = 0; j < n; j++) {
		if (!mem_subject_kind(mt[j].rec.kind, memkind))
			continue;
		copy_name(s->kind, mt[j].rec.kind);
		copy_key(s->key, mt[j].rec.key, mt[j].rec.key_len);
		snprintf(s->reason, sizeof(s->reason), "%s", mt[j].reason ? mt[j].reason : "name");
		return 0;
	}
	{
		const made *md = made_find(m, name);

		if (md) {
			copy_name(s->kind, ENTITY_KIND);
			copy_key(s->key, md->key, strlen(md->key));
			s->created = 1;
			snprintf(s->reason, sizeof(s->reason),
				 "new, made for another memory of this call");
			return 0;
		}
	}
	if (!schema_kind(m, ENTITY_KIND))
		return err_change(
			CAIRN_ENOTFOUND, (long)i,
			"memory %zu: no Record is named \"%s\", and the Domain has no Kind "
			"Entity to make one: name a Record as Kind:key, or apply the memory "
			"schema (docs/memory.md)",
			i, name);
	if (strlen(name) > CAIRN_MAX_TITLE)
		return err_change(CAIRN_ELIMIT, (long)i,
				  "memory %zu: an about name is over %d bytes", i, CAIRN_MAX_TITLE);
	if (m->n_made == m->cap_made) {
		size_t cap = m->cap_made ? 2 * m->cap_made : 16;
		made *nm = arena_alloc(&m->mem, cap * sizeof(*nm));

		if (!nm)
			return err_set(CAIRN_ENOMEM, "out of memory");
		if (m->n_made)
			memcpy(nm, m->made, m->n_made * sizeof(*nm));
		m->made = nm;
		m->cap_made = cap;
	}
	{
		made *md = &m->made[m->n_made];

		snprintf(md->name, sizeof(md->name), "%s", name);
		if ((rc = key_new(md->key)) ||
		    (rc = cairn_changeset_put(m->cs, ENTITY_KIND, md->key, strlen(md->key), name,
					      strlen(name), NULL, 0)))
			return rc;
		m->n_made++;
		copy_name(s->kind, ENTITY_KIND);
		copy_key(s->key, md->key, strlen(md->key));
		s->created = 1;
		snprintf(s->reason, sizeof(s->reason), "new: no Record has the name");
	}
	return 0;
}

/* --------------------------------------------------------------- values -- */

/* Whether string array arr holds the string s. */
static int arr_has(const jv *arr, const jv *s)
{
	for (uint32_t i = 0; arr && i < arr->len; i++)
		if (jv_equal(&arr->u.items[i], s))
			return 1;
	return 0;
}

/*
 * The values to write: cur (the Record's, or NULL) merged with the given
 * values, list Attributes extended by append, defaults for a new memory.
 */
static int compose(mctx *m, size_t i, const char *kind, const cairn_memory_in *in, const jv *cur,
		   int is_new, buf *out)
{
	const cairn_commit_options *o = m->opts;
	const jv *vals = NULL, *app = NULL;
	jv *v, *extra;
	size_t ne = 0;

	if (in->values && !(vals = jv_parse(&m->mem, in->values, in->values_len, "values")))
		return at(i, err_code());
	if (vals && vals->type != JV_OBJECT)
		return err_change(CAIRN_EINVAL, (long)i, "memory %zu: values is a JSON object", i);
	if (in->append && !(app = jv_parse(&m->mem, in->append, in->append_len, "append")))
		return at(i, err_code());
	if (app && app->type != JV_OBJECT)
		return err_change(CAIRN_EINVAL, (long)i,
				  "memory %zu: append is a JSON object of list Attributes", i);
	v = jv_merge_patch(&m->mem, cur, vals ? vals : jv_object(&m->mem, 0));
	/* Room for the appended lists and the defaults, replacing or adding members. */
	extra = jv_object(&m->mem, (app ? app->len : 0) + 3);
	if (!v || !extra)
		return err_set(CAIRN_ENOMEM, "out of memory");
	for (uint32_t a = 0; app && a < app->len; a++) {
		const jv *add = &app->u.items[a], *old = jv_getn(v, add->key, add->key_len);
		const char *ty = attr_type(m, kind, add->key);
		uint32_t nadd = add->type == JV_ARRAY ? add->len : 1, nn = 0;
		jv *list;

		if (!ty || strcmp(ty, "strings"))
			return err_change(
				CAIRN_EINVAL, (long)i,
				"memory %zu: append names %s, which is not a list (strings) "
				"Attribute of %s",
				i, add->key, kind);
		if (add->type != JV_STRING && add->type != JV_ARRAY)
			return err_change(
				CAIRN_ETYPE, (long)i,
				"memory %zu: append.%s is a string or an array of strings", i,
				add->key);
		list = arena_alloc(&m->mem, sizeof(*list));
		if (!list ||
		    !(list->u.items = arena_alloc(
			      &m->mem, ((old && old->type == JV_ARRAY ? old->len : 0) + nadd + 1) *
					       sizeof(jv))))
			return err_set(CAIRN_ENOMEM, "out of memory");
		list->type = JV_ARRAY;
		for (uint32_t e = 0; old && old->type == JV_ARRAY && e < old->len; e++)
			list->u.items[nn++] = old->u.items[e];
		for (uint32_t e = 0; e < nadd; e++) {
			const jv *it = add->type == JV_ARRAY ? &add->u.items[e] : add;

			list->len = nn;
			if (it->type != JV_STRING)
				return err_change(
					CAIRN_ETYPE, (long)i,
					"memory %zu: append.%s holds a value that is not a "
					"string",
					i, add->key);
			if (!arr_has(list, it))
				list->u.items[nn++] = *it;
		}
		list->len = nn;
		list->key = add->key;
		list->key_len = add->key_len;
		extra->u.items[ne++] = *list;
	}
	if (is_new) {
		struct {
			const char *name, *type;
			jv val;
		} def[3];
		size_t nd = 0;

		memset(def, 0, sizeof(def));
		if (attr_type(m, kind, "status") && !jv_get(v, "status")) {
			def[nd].name = "status";
			def[nd].val.type = JV_STRING;
			def[nd].val.u.s = "active";
			def[nd++].val.len = 6;
		}
		if (o->prov.source && *o->prov.source && attr_type(m, kind, "source") &&
		    !strcmp(attr_type(m, kind, "source"), "string") && !jv_get(v, "source")) {
			def[nd].name = "source";
			def[nd].val.type = JV_STRING;
			def[nd].val.u.s = o->prov.source;
			def[nd++].val.len = (uint32_t)strlen(o->prov.source);
		}
		if (o->prov.has_confidence && attr_type(m, kind, "confidence") &&
		    !strcmp(attr_type(m, kind, "confidence"), "float") &&
		    !jv_get(v, "confidence")) {
			def[nd].name = "confidence";
			def[nd].val.type = JV_REAL;
			def[nd++].val.u.d = o->prov.confidence;
		}
		for (size_t d = 0; d < nd; d++) {
			def[d].val.key = def[d].name;
			def[d].val.key_len = (uint32_t)strlen(def[d].name);
			extra->u.items[ne++] = def[d].val;
		}
	}
	extra->len = (uint32_t)ne;
	if (ne && !(v = jv_merge_patch(&m->mem, v, extra)))
		return err_set(CAIRN_ENOMEM, "out of memory");
	jv_canon(v, out);
	return out->oom ? err_set(CAIRN_ENOMEM, "out of memory") : 0;
}

/* Whether the Link rel from (kind, key) to s exists. */
static int linked(mctx *m, const char *kind, const char *key, const char *rel, const char *tk,
		  const char *tkey, int *yes)
{
	cairn_link_cursor cur;
	cairn_link l[64];
	size_t n;
	int rc;

	*yes = 0;
	memset(&cur, 0, sizeof(cur));
	do {
		rc = cairn_links(m->t, kind, key, strlen(key), CAIRN_OUT, rel, &cur, l, 64, &n);
		if (rc == CAIRN_ENOTFOUND)
			return 0;
		if (rc)
			return rc;
		for (size_t i = 0; i < n; i++)
			if (strcmp(l[i].to_kind, tk) == 0 && l[i].to_key_len == strlen(tkey) &&
			    memcmp(l[i].to_key, tkey, l[i].to_key_len) == 0) {
				*yes = 1;
				return 0;
			}
	} while (n == 64);
	return 0;
}

/* An active memory of kind whose title is text exactly, or folded; 1 with r filled, else 0. */
static int same_text(mctx *m, const char *kind, const char *text, size_t len, cairn_record *r)
{
	cairn_resolve_options ro;
	cairn_match mt[8];
	const char *kinds[1] = {kind};
	size_t n = 0;

	memset(&ro, 0, sizeof(ro));
	ro.text = text;
	ro.text_len = len;
	ro.kinds = kinds;
	ro.n_kinds = 1;
	ro.exact = 1;
	ro.limit = 8;
	if (cairn_resolve(m->t, &ro, mt, 8, &n, NULL))
		return 0; /* a text too long to be a name, say: it is then new */
	for (size_t j = 0; j < n; j++) {
		const jv *v, *st;

		if (mt[j].source != CAIRN_NAME_TITLE)
			continue;
		/*
		 * Names are cut at SAME_TEXT_FOLDED bytes: past it only the text
		 * itself, byte for byte, is the same text.
		 */
		if (!(mt[j].rec.title_len == len && memcmp(mt[j].rec.title, text, len) == 0) &&
		    (len > SAME_TEXT_FOLDED || mt[j].rec.title_len > SAME_TEXT_FOLDED))
			continue;
		v = jv_parse(&m->mem, mt[j].rec.values, mt[j].rec.values_len, "values");
		st = v ? jv_get(v, "status") : NULL;
		if (st && st->type == JV_STRING && strcmp(st->u.s, "active") != 0)
			continue;
		*r = mt[j].rec;
		return 1;
	}
	return 0;
}

/* Whether Relation rel has cardinality one (0 also when it does not exist). */
static int rel_one(const mctx *m, const char *rel)
{
	const jv *rs = jv_get(m->schema, "relations");

	for (uint32_t i = 0; rs && rs->type == JV_ARRAY && i < rs->len; i++) {
		const jv *n = jv_get(&rs->u.items[i], "name"), *c = jv_get(&rs->u.items[i], "cardinality");

		if (n && n->type == JV_STRING && strcmp(n->u.s, rel) == 0)
			return c && c->type == JV_STRING && strcmp(c->u.s, "one") == 0;
	}
	return 0;
}

/*
 * The Links of memory i: each end resolved as about is; a Link there is
 * already is not written again; a new Link of a Relation of cardinality
 * one first removes the one its from Record has (the single value it
 * replaces, kept in the Link's history).
 */
static int links(mctx *m, size_t i, const cairn_memory_in *in, cairn_memory_out *out)
{
	const jv *ls = jv_parse(&m->mem, in->links, in->links_len, "links");
	const char *kind = in->kind ? in->kind : DEFAULT_KIND;
	int rc;

	if (!ls)
		return at(i, err_code());
	if (ls->type != JV_ARRAY || ls->len > CAIRN_MEMORY_MAX_ABOUT)
		return err_change(CAIRN_EINVAL, (long)i,
				  "memory %zu: links is an array of up to %d {rel, from, to}", i,
				  CAIRN_MEMORY_MAX_ABOUT);
	for (uint32_t j = 0; j < ls->len; j++) {
		static const char *const names[] = {"rel", "from", "to", NULL};
		const jv *l = &ls->u.items[j], *rel = jv_get(l, "rel"), *f = jv_get(l, "from"),
			 *t = jv_get(l, "to");
		cairn_subject from, to;
		cairn_link_cursor cur;
		cairn_link old[64];
		size_t n = 0;
		int there = 0;

		if (l->type != JV_OBJECT || jv_only(l, names, CAIRN_EINVAL, "a link") ||
		    !jv_is(rel, JV_STRING) || !jv_is(f, JV_STRING) || !jv_is(t, JV_STRING) ||
		    jv_str_nul(rel) || jv_str_nul(f) || jv_str_nul(t))
			return err_change(CAIRN_EINVAL, (long)i,
					  "memory %zu: links[%u] is {\"rel\", \"from\", \"to\"}: names "
					  "or Kind:key, without U+0000",
					  i, j);
		if ((rc = need_rel(m, i, rel->u.s)) || (rc = subject(m, i, kind, f->u.s, &from)) ||
		    (rc = subject(m, i, kind, t->u.s, &to)))
			return rc;
		memset(&cur, 0, sizeof(cur));
		if (!from.created) {
			rc = cairn_links(m->t, from.kind, from.key, strlen(from.key), CAIRN_OUT, rel->u.s,
					 &cur, old, 64, &n);
			if (rc && rc != CAIRN_ENOTFOUND)
				return rc;
		}
		for (size_t o = 0; o < n; o++) {
			int same = strcmp(old[o].to_kind, to.kind) == 0 &&
				   old[o].to_key_len == strlen(to.key) &&
				   memcmp(old[o].to_key, to.key, old[o].to_key_len) == 0;

			there |= same;
			if (!same && rel_one(m, rel->u.s)) {
				if ((rc = cairn_changeset_unlink(m->cs, rel->u.s, from.kind, from.key,
								 strlen(from.key), old[o].to_kind,
								 old[o].to_key, old[o].to_key_len)))
					return at(i, rc);
				out->links_replaced++;
			}
		}
		if (there)
			continue;
		if ((rc = cairn_changeset_link(m->cs, rel->u.s, from.kind, from.key, strlen(from.key),
					       to.kind, to.key, strlen(to.key), NULL, 0)))
			return at(i, rc);
		out->links_written++;
	}
	return 0;
}

/* The changes of memory i, added to m->cs; out says what it becomes. */
static int one(mctx *m, size_t i, const cairn_memory_in *in, cairn_memory_out *out)
{
	const char *kind = in->kind ? in->kind : DEFAULT_KIND;
	size_t text_len = in->text ? (in->text_len ? in->text_len : strlen(in->text)) : 0;
	size_t before = cairn_changeset_count(m->cs);
	cairn_record cur;
	const jv *curv = NULL;
	char key[CAIRN_MAX_KEY + 1];
	size_t key_len;
	int exists = 0, rc, skip_put = 0;
	buf v = BUF_INIT;

	memset(out, 0, sizeof(*out));
	if ((rc = err_reserved(in->reserved, "cairn_remember", "cairn_memory_in")))
		return at(i, rc);
	if (!schema_kind(m, kind))
		return err_change(
			CAIRN_EUNKNOWNKIND, (long)i, "memory %zu: unknown Kind \"%s\"%s", i, kind,
			in->kind ? ""
				 : " (the Domain has no memory schema: cairn init --memory, "
				   "docs/memory.md)");
	if (in->n_about > CAIRN_MEMORY_MAX_ABOUT || (in->n_about && !in->about))
		return err_change(CAIRN_EINVAL, (long)i, "memory %zu: about names 0 to %d Records",
				  i, CAIRN_MEMORY_MAX_ABOUT);
	copy_name(out->kind, kind);
	if (in->key) {
		if (!in->key_len || in->key_len > CAIRN_MAX_KEY || memchr(in->key, 0, in->key_len))
			return err_change(in->key_len ? CAIRN_EINVAL : CAIRN_EKEYEMPTY, (long)i,
					  "memory %zu: a key is 1 to %d bytes without U+0000", i,
					  CAIRN_MAX_KEY);
		memcpy(key, in->key, in->key_len);
		key[in->key_len] = '\0';
		key_len = in->key_len;
		rc = cairn_get(m->t, kind, key, key_len, &cur);
		if (rc && rc != CAIRN_ENOTFOUND)
			return rc;
		exists = rc == 0;
		if (exists && !(in->flags & CAIRN_REMEMBER_REPLACE))
			return err_change(
				CAIRN_EEXIST, (long)i,
				"memory %zu: %s:%s exists (\"%.*s\", revision %llu): set "
				"replace to update it, or leave the key out for a new memory",
				i, kind, key, (int)(cur.title_len > 80 ? 80 : cur.title_len),
				cur.title, (unsigned long long)cur.revision);
	} else {
		if (!text_len)
			return err_change(CAIRN_EINVAL, (long)i,
					  "memory %zu: a new memory needs a text (its title)", i);
		if (same_text(m, kind, in->text, text_len, &cur)) {
			exists = 1;
			text_len = 0; /* the memory keeps its own wording */
			copy_key(key, cur.key, cur.key_len);
			key_len = cur.key_len;
		} else {
			char k[27];

			if ((rc = key_new(k)))
				return rc;
			memcpy(key, k, 27);
			key_len = 26;
		}
	}
	if (!exists && !text_len)
		return err_change(CAIRN_EINVAL, (long)i,
				  "memory %zu: a new memory needs a text (its title)", i);
	copy_key(out->key, key, key_len);
	out->created = !exists;

	/* The subjects first: a new Entity is put before the Links that reach it. */
	for (size_t j = 0; j < in->n_about; j++)
		if ((rc = subject(m, i, kind, in->about[j], &out->about[j])))
			return rc;
	out->n_about = in->n_about;
	if (!skip_put) {
		if (exists && !(curv = jv_parse(&m->mem, cur.values, cur.values_len, "values")))
			return err_code();
		rc = compose(m, i, kind, in, curv, !exists, &v);
		/* What the Record already is, title and values, is not written again. */
		if (!rc && exists && v.len == cur.values_len && !memcmp(v.p, cur.values, v.len) &&
		    (!text_len ||
		     (text_len == cur.title_len && !memcmp(in->text, cur.title, text_len))))
			skip_put = 1;
		else if (!rc && (rc = cairn_changeset_put(
					 m->cs, kind, key, key_len, text_len ? in->text : cur.title,
					 text_len ? text_len : cur.title_len, (const char *)v.p, v.len)))
			rc = at(i, rc); /* compose's own errors name the memory already */
		buf_release(&v);
		if (rc)
			return rc;
	}
	snprintf(out->why, sizeof(out->why), "%s",
		 !exists    ? "new"
		 : skip_put ? (in->key ? "unchanged: the Record already has these values"
				       : "the same text as an active memory: kept, not made again")
		 : in->key  ? "updated: the key exists, and replace was set"
			    : "the same text as an active memory: its values updated");
	if (in->n_about && (rc = need_rel(m, i, "about")))
		return rc;
	for (size_t j = 0; j < in->n_about; j++) {
		const cairn_subject *s = &out->about[j];
		int yes = 0;

		if (exists && !s->created &&
		    (rc = linked(m, kind, key, "about", s->kind, s->key, &yes)))
			return rc;
		if (!yes && (rc = cairn_changeset_link(m->cs, "about", kind, key, key_len, s->kind,
						       s->key, strlen(s->key), NULL, 0)))
			return rc;
	}
	if (in->supersedes) {
		char ok[CAIRN_MAX_NAME + 1];
		const char *okey;
		size_t okey_len;
		cairn_record old;
		char now[48];
		buf p = BUF_INIT;

		if ((rc = need_rel(m, i, "supersedes")))
			return rc;
		if (mem_split_ref(in->supersedes, ok, &okey, &okey_len))
			return err_change(CAIRN_EINVAL, (long)i,
					  "memory %zu: supersedes names a memory as Kind:key", i);
		if ((rc = cairn_get(m->t, ok, okey, okey_len, &old)))
			return at(i, rc);
		if (strcmp(ok, kind) == 0 && okey_len == key_len && !memcmp(okey, key, key_len))
			return err_change(CAIRN_EINVAL, (long)i,
					  "memory %zu: a memory cannot supersede itself", i);
		if ((rc = cairn_changeset_link(m->cs, "supersedes", kind, key, key_len, ok, okey,
					       okey_len, NULL, 0)))
			return rc;
		time_format_ms(time_now_ms(), now);
		buf_puts(&p, "{");
		if (attr_type(m, ok, "status"))
			buf_puts(&p, "\"status\":\"superseded\"");
		if (attr_type(m, ok, "valid_to")) {
			const jv *ov = jv_parse(&m->mem, old.values, old.values_len, "values");

			if (!ov || !jv_get(ov, "valid_to"))
				buf_printf(&p, "%s\"valid_to\":\"%s\"", p.len > 1 ? "," : "", now);
		}
		buf_puts(&p, "}");
		rc = p.oom	 ? CAIRN_ENOMEM
		     : p.len > 2 ? cairn_changeset_patch(m->cs, ok, okey, okey_len,
							 (const char *)p.p, p.len)
				 : 0;
		buf_release(&p);
		if (rc)
			return rc;
		out->superseded = 1;
	}
	if (in->links && (rc = links(m, i, in, out)))
		return rc;
	out->written = cairn_changeset_count(m->cs) > before;
	return 0;
}

static int begin(mctx *m)
{
	cairn_read_options ro;
	const char *js;
	size_t n;
	int rc;

	memset(&ro, 0, sizeof(ro));
	ro.domain = m->opts->domain;
	ro.branch = m->opts->branch;
	if ((rc = cairn_txn_begin(m->st, &ro, &m->t)))
		return rc;
	if ((rc = cairn_schema_get(m->t, &js, &n)))
		return rc;
	if (!(m->schema = jv_parse(&m->mem, js, n, "schema")))
		return err_code();
	return 0;
}

static void end(mctx *m)
{
	if (m->t)
		cairn_txn_end(m->t);
	m->t = NULL;
	cairn_changeset_free(m->cs);
	m->cs = NULL;
	arena_reset(&m->mem);
	m->made = NULL;
	m->n_made = m->cap_made = 0;
}

int cairn_remember(cairn_store *st, const cairn_commit_options *opts, const cairn_memory_in *in,
		   size_t n, cairn_memory_out *out, cairn_commit_result *res)
{
	cairn_commit_options co;
	cairn_commit_result r;
	size_t *first;
	mctx m;
	int rc = CAIRN_ECONFLICT;

	if (res)
		memset(res, 0, sizeof(*res));
	if (!st || !opts || !in || !out)
		return err_set(CAIRN_EINVAL, "cairn_remember: NULL argument");
	if (!n || n > CAIRN_MEMORY_MAX_BATCH)
		return err_set(CAIRN_EINVAL, "cairn_remember: 1 to %d memories at a time, not %zu",
			       CAIRN_MEMORY_MAX_BATCH, n);
	if (!(first = cr_calloc(n, sizeof(*first))))
		return err_set(CAIRN_ENOMEM, "out of memory");
	memset(&m, 0, sizeof(m));
	m.st = st;
	m.opts = opts;
	co = *opts;
	for (int tries = 0; rc == CAIRN_ECONFLICT && tries < MAX_TRIES; tries++) {
		size_t i;

		if ((rc = cairn_changeset_new(&m.cs)) || (rc = begin(&m)))
			goto next;
		if (!opts->has_expect) {
			co.has_expect = 1;
			co.expect_revision = cairn_txn_revision(m.t);
		}
		for (i = 0; i < n && !rc; i++) {
			first[i] = cairn_changeset_count(m.cs);
			rc = one(&m, i, &in[i], &out[i]);
		}
		cairn_txn_end(m.t);
		m.t = NULL;
		if (!rc && cairn_changeset_count(m.cs)) {
			rc = cairn_commit(st, &co, m.cs, &r);
			/* A change the commit refused is said of the memory it belongs to. */
			if (rc && rc != CAIRN_ECONFLICT && cairn_errchange() >= 0) {
				size_t ch = (size_t)cairn_errchange();

				for (i = n; i-- > 0;)
					if (first[i] <= ch) {
						at(i, rc);
						break;
					}
			}
		} else if (!rc) {
			memset(&r, 0, sizeof(r));
		}
	next:
		end(&m);
		if (opts->has_expect)
			break;
	}
	arena_release(&m.mem);
	cr_free(first);
	if (rc)
		return rc;
	if (res)
		*res = r;
	return 0;
}

int cairn_retract(cairn_store *st, const cairn_commit_options *opts, const char *kind,
		  const char *key, size_t key_len, cairn_commit_result *res)
{
	cairn_commit_options co;
	cairn_record cur;
	mctx m;
	char now[48];
	buf p = BUF_INIT;
	int rc = CAIRN_ECONFLICT;

	if (res)
		memset(res, 0, sizeof(*res));
	if (!st || !opts || !kind || !key)
		return err_set(CAIRN_EINVAL, "cairn_retract: NULL argument");
	memset(&m, 0, sizeof(m));
	m.st = st;
	m.opts = opts;
	co = *opts;
	for (int tries = 0; rc == CAIRN_ECONFLICT && tries < MAX_TRIES; tries++) {
		const jv *cv;

		if ((rc = cairn_changeset_new(&m.cs)) || (rc = begin(&m)))
			goto next;
		if (!opts->has_expect) {
			co.has_expect = 1;
			co.expect_revision = cairn_txn_revision(m.t);
		}
		if (!schema_kind(&m, kind)) {
			rc = err_set(CAIRN_EUNKNOWNKIND, "unknown Kind \"%s\"", kind);
			goto next;
		}
		if (!attr_type(&m, kind, "status")) {
			rc = err_set(
				CAIRN_EUNKNOWNATTR,
				"%s has no status Attribute to retract with: add one whose "
				"values include \"retracted\" (the memory schema's Memory has it), "
				"or delete the Record",
				kind);
			goto next;
		}
		if ((rc = cairn_get(m.t, kind, key, key_len, &cur)))
			goto next;
		cv = jv_parse(&m.mem, cur.values, cur.values_len, "values");
		time_format_ms(time_now_ms(), now);
		buf_reset(&p);
		buf_puts(&p, "{\"status\":\"retracted\"");
		if (attr_type(&m, kind, "valid_to") && !(cv && jv_get(cv, "valid_to")))
			buf_printf(&p, ",\"valid_to\":\"%s\"", now);
		buf_puts(&p, "}");
		cairn_txn_end(m.t);
		m.t = NULL;
		rc = p.oom ? CAIRN_ENOMEM
			   : cairn_changeset_patch(m.cs, kind, key, key_len, (const char *)p.p,
						   p.len);
		if (!rc)
			rc = cairn_commit(st, &co, m.cs, res);
	next:
		end(&m);
		if (opts->has_expect)
			break;
	}
	buf_release(&p);
	arena_release(&m.mem);
	return rc;
}
