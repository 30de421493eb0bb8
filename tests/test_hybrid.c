/*
 * Hybrid search and memory-aware ranking on small hand-checked data: the
 * fusion arithmetic against the ranks of the two searches, weights, the
 * graph boost, confidence, trust, recency, status (excluded and demoted),
 * the receipts, the built-in embedder as the query's meaning, and errors.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests.h"
#include "store/store.h"
#include "version/version.h"

static const char hschema[] =
	"{\"kinds\":[{\"name\":\"Note\",\"attributes\":[{\"name\":\"status\",\"type\":\"string\"},"
	"{\"name\":\"seen\",\"type\":\"date\"}]}],"
	"\"relations\":[{\"name\":\"about\",\"from\":\"Note\",\"to\":\"Note\",\"cardinality\":\"many\"}]}";

static int commit_as(cairn_store *st, const char *source, double confidence, const char *lines)
{
	cairn_commit_options co = {0};
	cairn_changeset *cs;
	const char *p = lines;
	int rc;

	co.domain = "d";
	co.prov.actor = "agent";
	co.prov.source = source;
	co.prov.confidence = confidence;
	co.prov.has_confidence = confidence < 1;
	if ((rc = cairn_changeset_new(&cs)))
		return rc;
	while (!rc && *p) {
		size_t n = strcspn(p, "\n");

		rc = cairn_changeset_add_json(cs, p, n);
		p += n + (p[n] == '\n');
	}
	if (!rc)
		rc = cairn_commit(st, &co, cs, NULL);
	cairn_changeset_free(cs);
	return rc;
}

static cairn_store *hstore(void)
{
	cairn_store *st;
	cairn_open_options oo = {.flags = CAIRN_OPEN_CREATE | CAIRN_OPEN_NOSYNC | CAIRN_OPEN_NO_BACKGROUND};
	cairn_commit_options co = {0};

	if (cairn_open(test_path("hstore"), &oo, &st) || cairn_domain_create(st, "d"))
		return NULL;
	co.domain = "d";
	co.prov.actor = "test";
	if (cairn_schema_apply(st, &co, hschema, strlen(hschema), NULL) ||
	    commit_as(st, "catalog", 1,
		      "{\"kind\":\"Note\",\"key\":\"A\",\"title\":\"alpha steel\",\"values\":{\"seen\":\"2026-01-01\"},\"vector\":[1,0,0]}\n"
		      "{\"kind\":\"Note\",\"key\":\"B\",\"title\":\"beta steel steel\",\"values\":{\"seen\":\"2025-01-01\"},\"vector\":[0,1,0]}\n"
		      "{\"kind\":\"Note\",\"key\":\"X\",\"title\":\"epsilon\"}") ||
	    commit_as(st, "catalog", 0.1,
		      "{\"kind\":\"Note\",\"key\":\"C\",\"title\":\"gamma\",\"vector\":[0.9,0.1,0]}") ||
	    commit_as(st, "rumor", 1,
		      "{\"kind\":\"Note\",\"key\":\"D\",\"title\":\"delta\",\"vector\":[0,0,1]}\n"
		      "{\"rel\":\"about\",\"from\":\"Note:X\",\"to\":\"Note:D\"}")) {
		cairn_close(st);
		return NULL;
	}
	return st;
}

static int key_is(const cairn_hit *h, const char *key)
{
	return h->rec.key_len == strlen(key) && memcmp(h->rec.key, key, h->rec.key_len) == 0;
}

static const cairn_hit *find(const cairn_hit *h, size_t n, const char *key)
{
	for (size_t i = 0; i < n; i++)
		if (key_is(&h[i], key))
			return &h[i];
	return NULL;
}

static int has(const cairn_hit *h, const char *s)
{
	return h && h->explain && strstr(h->explain, s) != NULL;
}

/* The rank (1-based) of key among the hits, 0 if absent. */
static size_t rank_of(const cairn_hit *h, size_t n, const char *key)
{
	for (size_t i = 0; i < n; i++)
		if (key_is(&h[i], key))
			return i + 1;
	return 0;
}

void test_hybrid_fusion(void)
{
	cairn_store *st = hstore();
	cairn_read_options ro = {0};
	cairn_hybrid_options o = {0};
	cairn_search_options so = {0};
	cairn_vsearch_options vo = {0};
	cairn_hit h[20], th[20], vh[20];
	const char *keys[] = {"A", "B", "C", "D"};
	float q[3] = {1, 0, 0};
	size_t n, tn, vn;
	cairn_txn *t;

	CHECK(st);
	if (!st)
		return;
	ro.domain = "d";
	OK(cairn_txn_begin(st, &ro, &t));
	so.text = "steel";
	OK(cairn_search(t, &so, th, 20, &tn, NULL));
	vo.vector = q;
	vo.dim = 3;
	OK(cairn_vsearch(t, &vo, vh, 20, &vn));
	CHECK(tn == 2 && vn == 4);
	/*
	 * RRF (k = 60), weights 1 and 1: each score is the sum of 1 / (60 +
	 * rank) over the searches that found it.
	 */
	o.text = "steel";
	o.vector = q;
	o.dim = 3;
	o.text_weight = o.vector_weight = 1;
	OK(cairn_hybrid(t, &o, h, 20, &n));
	CHECK(n == 4 && key_is(&h[0], "A") && key_is(&h[1], "B"));
	for (int i = 0; i < 4; i++) {
		const cairn_hit *x = find(h, n, keys[i]);
		size_t tr = rank_of(th, tn, keys[i]), vr = rank_of(vh, vn, keys[i]);
		double want = (tr ? 1.0 / (60 + tr) : 0) + (vr ? 1.0 / (60 + vr) : 0);

		CHECK(x && fabs(x->score - want) < 1e-12);
		CHECK(has(x, "\"fusion\":\"rrf\"") && has(x, "\"version\":") && has(x, "\"read\":"));
		CHECK(!tr || has(x, "\"text\":{\"rank\":"));
		CHECK(!vr || has(x, "\"vector\":{\"rank\":"));
	}
	CHECK(h[0].words == 1 && h[2].words == 0);
	/* By default meaning weighs a tenth of words: 1 / (60 + rank) and 0.1 / (60 + rank). */
	o.text_weight = o.vector_weight = 0;
	OK(cairn_hybrid(t, &o, h, 20, &n));
	CHECK(n == 4);
	for (int i = 0; i < 4; i++) {
		const cairn_hit *x = find(h, n, keys[i]);
		size_t tr = rank_of(th, tn, keys[i]), vr = rank_of(vh, vn, keys[i]);
		double want = (tr ? 1.0 / (60 + tr) : 0) + (vr ? 0.1 / (60 + vr) : 0);

		CHECK(x && fabs(x->score - want) < 1e-12);
		/* the receipt says each search's weight */
		CHECK(!tr || has(x, "\"weight\":1.0,\"part\":"));
		CHECK(!vr || has(x, "\"weight\":0.1,\"part\":"));
	}
	CHECK(rank_of(h, n, "A") <= 2 && rank_of(h, n, "B") <= 2); /* the words' hits first */
	/* Weighted: each score scaled to [0, 1] in its list; half each, then 0.8 and 0.2 by default. */
	o.fusion = CAIRN_FUSE_WEIGHTED;
	for (int dflt = 0; dflt < 2; dflt++) {
		const cairn_hit *a;
		size_t tr = rank_of(th, tn, "A");
		double wt = dflt ? 0.8 : 0.5, wv = dflt ? 0.2 : 0.5;

		o.text_weight = o.vector_weight = dflt ? 0 : 0.5;
		OK(cairn_hybrid(t, &o, h, 20, &n));
		a = find(h, n, "A");
		CHECK(n == 4 && a && fabs(a->score - (wt * th[tr - 1].score / th[0].score + wv)) < 1e-12 &&
		      has(a, "\"fusion\":\"weighted\""));
	}
	/* A weight of 0 leaves its search out: words alone, then meaning alone. */
	o.text_weight = 1;
	o.vector_weight = 0;
	OK(cairn_hybrid(t, &o, h, 20, &n));
	CHECK(n == 2 && key_is(&h[0], th[0].rec.key[0] == 'A' ? "A" : "B") && h[0].score == 1 &&
	      !has(&h[0], "\"vector\""));
	o.text_weight = 0;
	o.vector_weight = 1;
	OK(cairn_hybrid(t, &o, h, 20, &n));
	CHECK(n == 4 && key_is(&h[0], "A") && key_is(&h[1], "C") && h[0].score == 1);
	CHECK(fabs(h[1].score - (vh[1].score - vh[3].score) / (vh[0].score - vh[3].score)) < 1e-12);
	/* Text only, vector only. */
	o.fusion = CAIRN_FUSE_RRF;
	o.vector_weight = 0;
	o.vector = NULL;
	OK(cairn_hybrid(t, &o, h, 20, &n));
	CHECK(n == 2 && !has(&h[0], "\"vector\""));
	o.text = NULL;
	o.vector = q;
	o.limit = 2;
	OK(cairn_hybrid(t, &o, h, 2, &n));
	CHECK(n == 2 && key_is(&h[0], "A") && key_is(&h[1], "C") && !has(&h[0], "\"text\""));
	/* Records linked to X get 1 + 10 times the score. */
	{
		cairn_ref x = {"Note", "X", 0};

		o.text = "steel";
		o.limit = 0;
		o.near = &x;
		o.n_near = 1;
		o.graph_boost = 10;
		o.text_weight = o.vector_weight = 1;
		OK(cairn_hybrid(t, &o, h, 20, &n));
		CHECK(n == 4 && key_is(&h[0], "D") && fabs(h[0].score - 11.0 / 64) < 1e-12 &&
		      has(&h[0], "\"graph\":11"));
		x.key = "nope";
		CHECK_RC(cairn_hybrid(t, &o, h, 20, &n), CAIRN_ENOTFOUND);
		o.n_near = 0;
	}
	cairn_txn_end(t);
	cairn_close(st);
}

void test_hybrid_ranking(void)
{
	cairn_store *st = hstore();
	cairn_read_options ro = {0};
	cairn_hybrid_options o = {0};
	cairn_rank_options r = {0};
	cairn_trust trust[] = {{"rumor", 0.25}, {"agent", 0.9}};
	const char *ex[] = {"retracted"}, *dm[] = {"superseded"};
	cairn_hit h[20], base[20];
	float q[3] = {1, 0, 0};
	size_t n, nb;
	cairn_txn *t;

	CHECK(st);
	if (!st)
		return;
	ro.domain = "d";
	OK(cairn_txn_begin(st, &ro, &t));
	o.text = "steel";
	o.vector = q;
	o.dim = 3;
	OK(cairn_hybrid(t, &o, base, 20, &nb));
	o.rank = &r;
	/* Confidence: C was written with 0.1, the others with 1. */
	r.confidence = 1;
	OK(cairn_hybrid(t, &o, h, 20, &n));
	CHECK(n == 4 && fabs(find(h, n, "C")->score - find(base, nb, "C")->score * 0.1) < 1e-12 &&
	      find(h, n, "A")->score == find(base, nb, "A")->score);
	CHECK(has(find(h, n, "C"), "\"confidence\":0.1"));
	/* Trust: D's source is rumor (0.25); the others' actor is agent (0.9). */
	r.confidence = 0;
	r.trust = trust;
	r.n_trust = 2;
	OK(cairn_hybrid(t, &o, h, 20, &n));
	CHECK(fabs(find(h, n, "D")->score - find(base, nb, "D")->score * 0.25) < 1e-12);
	CHECK(fabs(find(h, n, "A")->score - find(base, nb, "A")->score * 0.9) < 1e-12);
	CHECK(has(find(h, n, "D"), "\"trust\":{\"source\":\"rumor\",\"weight\":0.25}"));
	CHECK(has(find(h, n, "A"), "\"trust\":{\"actor\":\"agent\",\"weight\":0.9}"));
	/* Recency on seen, half-life 365 days, all of the score: B (a year older) halves. */
	r.n_trust = 0;
	r.half_life_days = 365;
	r.recency_weight = 1;
	r.time_attribute = "seen";
	r.now_ms = 1767225600000; /* 2026-01-01 */
	OK(cairn_hybrid(t, &o, h, 20, &n));
	CHECK(fabs(find(h, n, "A")->score - find(base, nb, "A")->score) < 1e-12);
	CHECK(fabs(find(h, n, "B")->score - find(base, nb, "B")->score * 0.5) < 1e-12);
	CHECK(has(find(h, n, "B"), "\"recency\":{\"age_days\":365.0,\"factor\":0.5}"));
	/* Half the score decays (the default share). */
	r.recency_weight = 0;
	OK(cairn_hybrid(t, &o, h, 20, &n));
	CHECK(fabs(find(h, n, "B")->score - find(base, nb, "B")->score * 0.75) < 1e-12);
	r.half_life_days = 0;
	/* Status: A retracted is left out, C superseded counts half. */
	OK(commit_as(st, "catalog", 1,
		     "{\"kind\":\"Note\",\"key\":\"A\",\"op\":\"patch\",\"values\":{\"status\":\"retracted\"}}\n"
		     "{\"kind\":\"Note\",\"key\":\"C\",\"op\":\"patch\",\"values\":{\"status\":\"superseded\"}}"));
	cairn_txn_end(t);
	OK(cairn_txn_begin(st, &ro, &t));
	r.status_attribute = "status";
	r.exclude = ex;
	r.n_exclude = 1;
	r.demote = dm;
	r.n_demote = 1;
	OK(cairn_hybrid(t, &o, h, 20, &n));
	CHECK(n == 3 && !find(h, n, "A"));
	CHECK(find(h, n, "C") && has(find(h, n, "C"), "\"status\":{\"value\":\"superseded\",\"factor\":0.5}"));
	/* Errors. */
	r.demote_factor = 2;
	CHECK_RC(cairn_hybrid(t, &o, h, 20, &n), CAIRN_EINVAL);
	r.demote_factor = 0;
	r.status_attribute = NULL;
	CHECK_RC(cairn_hybrid(t, &o, h, 20, &n), CAIRN_EINVAL); /* exclude without a status */
	memset(&r, 0, sizeof(r));
	trust[0].weight = -1;
	r.trust = trust;
	r.n_trust = 1;
	CHECK_RC(cairn_hybrid(t, &o, h, 20, &n), CAIRN_EINVAL);
	o.rank = NULL;
	o.fusion = 7;
	CHECK_RC(cairn_hybrid(t, &o, h, 20, &n), CAIRN_EINVAL);
	o.fusion = CAIRN_FUSE_RRF;
	o.text_weight = -1;
	CHECK_RC(cairn_hybrid(t, &o, h, 20, &n), CAIRN_EINVAL);
	o.text_weight = 0;
	o.limit = 101;
	CHECK_RC(cairn_hybrid(t, &o, h, 20, &n), CAIRN_EINVAL);
	o.limit = 0;
	o.text = NULL;
	o.vector = NULL;
	CHECK_RC(cairn_hybrid(t, &o, h, 20, &n), CAIRN_EINVAL);
	o.vector = q;
	o.dim = 2;
	CHECK_RC(cairn_hybrid(t, &o, h, 20, &n), CAIRN_EDIM);
	cairn_txn_end(t);
	cairn_close(st);
}

/*
 * What rank excludes is left out inside both searches, not after them: 120
 * retracted Notes of steel written first (they win every tie, by words and
 * by meaning) and 3 active ones; the pools hold 100, yet the 3 come back,
 * from cairn_hybrid and from cairn_vsearch given the same exclude.
 */
void test_hybrid_exclude_pool(void)
{
	static const char *const gone[] = {"retracted"};
	cairn_store *st = hstore();
	cairn_read_options ro = {.domain = "d"};
	cairn_rank_options r = {0};
	cairn_hybrid_options o = {0};
	cairn_vsearch_options vo = {0};
	cairn_exclude ex = {"status", gone, 1, 0, NULL, NULL};
	const float q[3] = {1, 0, 0};
	cairn_hit *h = calloc(100, sizeof(*h));
	size_t len = 0, n;
	cairn_txn *t;
	char *lines = malloc(123 * 120);

	CHECK(st && h && lines);
	if (!st || !h || !lines)
		goto out;
	for (int i = 0; i < 123; i++)
		len += (size_t)sprintf(lines + len,
				       "{\"kind\":\"Note\",\"key\":\"p%03d\",\"title\":\"steel\","
				       "\"values\":{\"status\":\"%s\"},\"vector\":[1,0,0]}\n",
				       i, i < 120 ? "retracted" : "active");
	lines[len - 1] = '\0';
	OK(commit_as(st, "catalog", 1, lines));
	OK(cairn_txn_begin(st, &ro, &t));
	o.text = "steel";
	o.vector = q;
	o.dim = 3;
	o.limit = 10;
	o.rank = &r;
	r.status_attribute = "status";
	r.exclude = gone;
	r.n_exclude = 1;
	OK(cairn_hybrid(t, &o, h, 10, &n));
	CHECK(find(h, n, "p120") && find(h, n, "p121") && find(h, n, "p122"));
	for (size_t i = 0; i < n; i++) /* none retracted: p000..p119 */
		CHECK(h[i].rec.key_len != 4 || memcmp(h[i].rec.key, "p12", 3) == 0);
	vo.vector = q;
	vo.dim = 3;
	vo.limit = 10;
	OK(cairn_vsearch(t, &vo, h, 10, &n));
	CHECK(n == 10 && key_is(&h[0], "A")); /* A, then the retracted ones */
	vo.exclude = &ex;
	OK(cairn_vsearch(t, &vo, h, 10, &n));
	CHECK(n >= 4 && key_is(&h[0], "A") && key_is(&h[1], "p120") && key_is(&h[3], "p122"));
	for (size_t i = 0; i < n; i++)
		CHECK(h[i].rec.key_len != 4 || memcmp(h[i].rec.key, "p12", 3) == 0);
	vo.exact = 1;
	OK(cairn_vsearch(t, &vo, h, 10, &n));
	CHECK(n >= 4 && key_is(&h[1], "p120") && key_is(&h[3], "p122"));
	ex.attribute = "seen"; /* a date: no status */
	CHECK_RC(cairn_vsearch(t, &vo, h, 10, &n), CAIRN_EINVAL);
	cairn_txn_end(t);
out:
	free(lines);
	free(h);
	if (st)
		cairn_close(st);
}

/* The query's meaning from the built-in embedder (the committed mini table). */
void test_hybrid_embedder(void)
{
	cairn_store *st = hstore();
	cairn_embedder *e;
	cairn_read_options ro = {0};
	cairn_hybrid_options o = {0};
	cairn_changeset *cs;
	cairn_commit_options co = {0};
	const char *titles[] = {"the government said", "people of the world", "new year"};
	float v[128];
	cairn_hit h[20];
	size_t n, words;
	cairn_txn *t;

	CHECK(st);
	if (!st)
		return;
	OK(cairn_embedder_convert("tests/data/glove-mini.json", test_path("mini.cemb"), "glove-mini/1"));
	OK(cairn_embedder_open(test_path("mini.cemb"), &e));
	OK(cairn_domain_create(st, "e"));
	co.domain = "e";
	co.prov.actor = "test";
	OK(cairn_schema_apply(st, &co, hschema, strlen(hschema), NULL));
	OK(cairn_changeset_new(&cs));
	for (int i = 0; i < 3; i++) {
		char key[16];

		snprintf(key, sizeof(key), "t%d", i);
		OK(cairn_embed(e, titles[i], strlen(titles[i]), v, 128, &words));
		OK(cairn_changeset_put(cs, "Note", key, strlen(key), titles[i], strlen(titles[i]), NULL, 0));
		OK(cairn_changeset_vector(cs, v, cairn_embedder_dim(e)));
	}
	OK(cairn_commit(st, &co, cs, NULL));
	cairn_changeset_free(cs);
	ro.domain = "e";
	OK(cairn_txn_begin(st, &ro, &t));
	/* The first title has the word and the nearest meaning. */
	o.text = "government";
	o.embedder = e;
	o.limit = 3;
	OK(cairn_hybrid(t, &o, h, 3, &n));
	CHECK(n == 3 && key_is(&h[0], "t0") && has(&h[0], "\"text\":{\"rank\":1") &&
	      has(&h[0], "\"vector\":{\"rank\":1"));
	o.text = "world people";
	OK(cairn_hybrid(t, &o, h, 3, &n));
	CHECK(n >= 1 && key_is(&h[0], "t1"));
	/* A text the model does not know: words only. */
	o.text = "zzzqqq";
	OK(cairn_hybrid(t, &o, h, 3, &n));
	CHECK(n == 0);
	cairn_txn_end(t);
	/* The model's dimension (the mini table's) is not Domain d's (3). */
	ro.domain = "d";
	OK(cairn_txn_begin(st, &ro, &t));
	o.text = "government";
	CHECK_RC(cairn_hybrid(t, &o, h, 3, &n), CAIRN_EDIM);
	cairn_txn_end(t);
	cairn_embedder_close(e);
	cairn_close(st);
}

/* A change set putting Note title (its key too), with a 3-dimension vector when vec is not NULL. */
static int put_vec(cairn_changeset **cs, const char *title, const float *vec)
{
	int rc = cairn_changeset_new(cs);

	if (!rc)
		rc = cairn_changeset_put(*cs, "Note", title, strlen(title), title, strlen(title), NULL, 0);
	if (!rc && vec)
		rc = cairn_changeset_vector(*cs, vec, 3);
	return rc;
}

/* The model of a Domain's vectors: set by the first, never mixed; embedding on write. */
void test_hybrid_vector_model(void)
{
	cairn_store *st = hstore();
	cairn_embedder *e;
	cairn_commit_options co = {0};
	cairn_read_options ro = {0};
	cairn_hybrid_options o = {0};
	cairn_changeset *cs;
	cairn_record rec;
	cairn_hit h[5];
	cairn_txn *t;
	char model[VEC_MODEL_MAX + 1], longid[200];
	float v3[3] = {1, 0, 0}, back[128];
	size_t dim, n;
	uint64_t vid;

	CHECK(st);
	if (!st)
		return;
	OK(cairn_embedder_convert("tests/data/glove-mini.json", test_path("mini.cemb"), "glove-mini/1"));
	OK(cairn_embedder_open(test_path("mini.cemb"), &e));
	OK(cairn_domain_create(st, "m"));
	OK(cairn_domain_create(st, "w"));
	co.domain = "m";
	co.prov.actor = "test";
	OK(cairn_schema_apply(st, &co, hschema, strlen(hschema), NULL));
#define PUT(title, vec) OK(put_vec(&cs, title, vec))
	co.vector_model = "m1/1";
	PUT("a", v3);
	OK(cairn_commit(st, &co, cs, NULL));
	cairn_changeset_free(cs);
	ro.domain = "m";
	OK(cairn_txn_begin(st, &ro, &t));
	OK(cairn_vector_model(t, model, sizeof(model), &dim));
	CHECK(strcmp(model, "m1/1") == 0 && dim == 3);
	CHECK_RC(cairn_vector_model(t, model, 4, &dim), CAIRN_ELIMIT);
	/* A query the mini model embeds is not compared with m1's vectors. */
	o.text = "government";
	o.embedder = e;
	o.limit = 5;
	CHECK_RC(cairn_hybrid(t, &o, h, 5, &n), CAIRN_EDIM);
	cairn_txn_end(t);
	/* Vectors of another model, or of none named, are refused; no vector, no question. */
	co.vector_model = NULL;
	PUT("b", v3);
	CHECK_RC(cairn_commit(st, &co, cs, NULL), CAIRN_EDIM);
	CHECK(strstr(cairn_errmsg(), "model") != NULL);
	co.vector_model = "m2/1";
	CHECK_RC(cairn_commit(st, &co, cs, NULL), CAIRN_EDIM);
	co.vector_model = "m1/1";
	OK(cairn_commit(st, &co, cs, NULL));
	cairn_changeset_free(cs);
	co.vector_model = NULL;
	PUT("c", NULL);
	OK(cairn_commit(st, &co, cs, NULL));
	cairn_changeset_free(cs);
	memset(longid, 'x', sizeof(longid) - 1);
	longid[sizeof(longid) - 1] = '\0';
	co.vector_model = longid;
	PUT("d", v3);
	CHECK_RC(cairn_commit(st, &co, cs, NULL), CAIRN_EINVAL);
	cairn_changeset_free(cs);
	/* Embedding on write: a title of known words gets its vector, by the model named. */
	co.domain = "w";
	co.vector_model = NULL;
	co.embedder = e;
	OK(cairn_schema_apply(st, &co, hschema, strlen(hschema), NULL));
	OK(cairn_changeset_new(&cs));
	OK(cairn_changeset_put(cs, "Note", "g", 1, "the government said", 19, NULL, 0));
	OK(cairn_changeset_put(cs, "Note", "z", 1, "zzqq xxvv", 9, NULL, 0));
	OK(cairn_commit(st, &co, cs, NULL));
	cairn_changeset_free(cs);
	ro.domain = "w";
	OK(cairn_txn_begin(st, &ro, &t));
	OK(cairn_vector_model(t, model, sizeof(model), &dim));
	CHECK(strcmp(model, "glove-mini/1") == 0 && dim == cairn_embedder_dim(e));
	OK(cairn_get(t, "Note", "g", 1, &rec));
	CHECK(rec.vector_dim == dim);
	vid = rec.vid;
	OK(cairn_vector_get(t, vid, back, 128, &n));
	{
		float want[128];
		size_t words;

		OK(cairn_embed(e, "the government said", 19, want, 128, &words));
		CHECK(n == dim && memcmp(want, back, dim * sizeof(float)) == 0);
	}
	OK(cairn_get(t, "Note", "z", 1, &rec));
	CHECK(rec.vector_dim == 0);
	o.text = "government";
	o.embedder = e;
	OK(cairn_hybrid(t, &o, h, 5, &n));
	CHECK(n >= 1 && key_is(&h[0], "g") && has(&h[0], "\"vector\":{\"rank\":1"));
	cairn_txn_end(t);
	/* A put that keeps its title keeps its vector; a new title is embedded anew. */
	OK(cairn_changeset_new(&cs));
	OK(cairn_changeset_put(cs, "Note", "g", 1, "the government said", 19, "{\"status\":\"x\"}", 14));
	OK(cairn_commit(st, &co, cs, NULL));
	cairn_changeset_free(cs);
	OK(cairn_txn_begin(st, &ro, &t));
	OK(cairn_get(t, "Note", "g", 1, &rec));
	OK(cairn_vector_get(t, rec.vid, back, 128, &n));
	CHECK(rec.vid != vid && n == dim);
	cairn_txn_end(t);
	OK(cairn_changeset_new(&cs));
	OK(cairn_changeset_put(cs, "Note", "g", 1, "people of the world", 19, NULL, 0));
	OK(cairn_commit(st, &co, cs, NULL));
	cairn_changeset_free(cs);
	OK(cairn_txn_begin(st, &ro, &t));
	OK(cairn_get(t, "Note", "g", 1, &rec));
	{
		float now[128];

		OK(cairn_vector_get(t, rec.vid, now, 128, &n));
		CHECK(n == dim && memcmp(now, back, dim * sizeof(float)) != 0);
	}
	cairn_txn_end(t);
	/* Client vectors into an embedded Domain say they are of its model, or are refused. */
	co.embedder = NULL;
	OK(cairn_changeset_new(&cs));
	OK(cairn_changeset_put(cs, "Note", "k", 1, "k", 1, NULL, 0));
	OK(cairn_changeset_vector(cs, back, dim));
	CHECK_RC(cairn_commit(st, &co, cs, NULL), CAIRN_EDIM);
	co.vector_model = "glove-mini/1";
	OK(cairn_commit(st, &co, cs, NULL));
	cairn_changeset_free(cs);
#undef PUT
	cairn_embedder_close(e);
	cairn_close(st);
}

static int vec_is(cairn_txn *t, uint64_t vid, const cairn_embedder *e, const char *title)
{
	float want[128], got[128];
	size_t words, n;

	if (cairn_embed(e, title, strlen(title), want, 128, &words) ||
	    cairn_vector_get(t, vid, got, 128, &n))
		return 0;
	return n == cairn_embedder_dim(e) && memcmp(want, got, n * sizeof(float)) == 0;
}

/* The revision of domain's last re-embedding (0: none), as an index build reads it. */
static uint64_t generation(cairn_store *st, const char *domain)
{
	MDB_txn *txn;
	dctx d;
	uint64_t gen = UINT64_MAX;

	if (store_read_begin(st, &txn))
		return gen;
	if (!dctx_open(&d, st, txn, domain, NULL)) {
		if (vec_generation(txn, st, d.dom, &gen))
			gen = UINT64_MAX;
		dctx_close(&d);
	}
	store_read_end(st, txn);
	return gen;
}

static void count_problem(void *ctx, const char *p)
{
	(void)p;
	++*(int *)ctx;
}

/*
 * Re-embedding a Domain with another model: every vector of every Version
 * on every branch anew, the model and dimension changed at once, the index
 * dropped, nothing else changed; refused without a model, on a branch, with
 * no vectors, or against an expected revision that moved.
 */
void test_hybrid_reembed(void)
{
	cairn_store *st = hstore();
	cairn_embedder *e;
	cairn_commit_options co = {0};
	cairn_read_options ro = {0};
	cairn_reembed_result r;
	cairn_vindex_info vi;
	cairn_revision log[4];
	cairn_changeset *cs;
	cairn_record rec;
	cairn_hit h[5];
	cairn_txn *t;
	char model[VEC_MODEL_MAX + 1];
	float v3[3] = {1, 0, 0}, v3b[3] = {0, 1, 0};
	size_t dim, n;
	uint64_t old_vid, head;
	int problems = 0;

	CHECK(st);
	if (!st)
		return;
	OK(cairn_embedder_convert("tests/data/glove-mini.json", test_path("mini.cemb"), "glove-mini/1"));
	OK(cairn_embedder_open(test_path("mini.cemb"), &e));
	co.domain = "d";
	co.prov.actor = "test";
	/* Errors first: the store stays as it was. */
	CHECK_RC(cairn_reembed(st, &co, &r), CAIRN_EINVAL); /* no model */
	co.embedder = e;
	co.branch = "b";
	CHECK_RC(cairn_reembed(st, &co, &r), CAIRN_EINVAL);
	co.branch = NULL;
	co.domain = "nope";
	CHECK_RC(cairn_reembed(st, &co, &r), CAIRN_ENODOMAIN);
	OK(cairn_domain_create(st, "empty"));
	co.domain = "empty";
	CHECK_RC(cairn_reembed(st, &co, &r), CAIRN_EINVAL);
	CHECK(strstr(cairn_errmsg(), "no vectors") != NULL);
	/* Domain d: 3-dimension vectors of the unnamed model, on main and a branch. */
	co.domain = "d";
	co.embedder = NULL;
	OK(cairn_branch_create(st, "d", "b", NULL));
	OK(put_vec(&cs, "the government said", v3));
	OK(cairn_commit(st, &co, cs, NULL));
	cairn_changeset_free(cs);
	OK(put_vec(&cs, "zzqq xxvv", v3b)); /* no word the model knows */
	OK(cairn_commit(st, &co, cs, NULL));
	cairn_changeset_free(cs);
	co.branch = "b";
	OK(put_vec(&cs, "people of the world", v3b));
	OK(cairn_commit(st, &co, cs, NULL));
	cairn_changeset_free(cs);
	co.branch = NULL;
	ro.domain = "d";
	OK(cairn_txn_begin(st, &ro, &t));
	OK(cairn_get(t, "Note", "A", 1, &rec));
	old_vid = rec.vid;
	head = cairn_txn_revision(t);
	cairn_txn_end(t);
	{
		cairn_vindex_options vo = {0};

		vo.lists = 2;
		OK(cairn_vindex_update(st, "d", &vo, &vi));
		OK(cairn_vindex_stat(st, "d", &vi));
		CHECK(vi.vectors == 7 && vi.dim == 3);
	}
	CHECK(generation(st, "d") == 0 && generation(st, "empty") == 0);
	co.embedder = e;
	co.has_expect = 1;
	co.expect_revision = head - 1;
	CHECK_RC(cairn_reembed(st, &co, &r), CAIRN_ECONFLICT);
	co.expect_revision = head;
	co.prov.message = "a better model";
	OK(cairn_reembed(st, &co, &r));
	co.has_expect = 0;
	/*
	 * A, B, C, D, the government, zzqq on main; people of the world on b.
	 * The mini model knows no word of gamma (C), delta (D) and zzqq.
	 */
	CHECK(r.vectors == 7 && r.empty == 3 && r.commit.revision == head + 2 &&
	      r.commit.changes == 0); /* revisions count in the Domain: b's was head + 1 */
	CHECK(generation(st, "d") == r.commit.revision && generation(st, "empty") == 0);
	OK(cairn_vindex_stat(st, "d", &vi));
	CHECK(vi.vectors == 0 && vi.tail == 7);
	OK(cairn_txn_begin(st, &ro, &t));
	OK(cairn_vector_model(t, model, sizeof(model), &dim));
	CHECK(strcmp(model, "glove-mini/1") == 0 && dim == cairn_embedder_dim(e));
	OK(cairn_get(t, "Note", "the government said", 19, &rec));
	CHECK(rec.vector_dim == dim && vec_is(t, rec.vid, e, "the government said"));
	OK(cairn_get(t, "Note", "X", 1, &rec));
	CHECK(rec.vector_dim == 0); /* it had none: it has none */
	OK(cairn_get(t, "Note", "A", 1, &rec));
	CHECK(rec.vid == old_vid && rec.vector_dim == dim && vec_is(t, rec.vid, e, "alpha steel"));
	OK(cairn_log(t, 0, log, 4, &n));
	CHECK(n >= 1 && log[0].type == CAIRN_REV_VECTORS && log[0].revision == head + 2 &&
	      strcmp(cairn_revision_type_name(log[0].type), "vectors") == 0 &&
	      log[0].message_len == 14);
	/* Searched by the new model's meaning; the zero vector is found by nothing. */
	{
		cairn_hybrid_options o = {0};

		o.text = "government";
		o.embedder = e;
		o.limit = 5;
		o.text_weight = 0;
		o.vector_weight = 1;
		OK(cairn_hybrid(t, &o, h, 5, &n));
		CHECK(n == 3 && key_is(&h[0], "the government said") && !find(h, n, "zzqq xxvv") &&
		      !find(h, n, "C") && !find(h, n, "D"));
	}
	cairn_txn_end(t);
	/* The branch's vectors too. */
	ro.branch = "b";
	OK(cairn_txn_begin(st, &ro, &t));
	OK(cairn_get(t, "Note", "people of the world", 19, &rec));
	CHECK(rec.vector_dim == dim && vec_is(t, rec.vid, e, "people of the world"));
	cairn_txn_end(t);
	ro.branch = NULL;
	/* Back in time, the vectors are the new model's as well. */
	ro.at_revision = head - 2;
	OK(cairn_txn_begin(st, &ro, &t));
	OK(cairn_get(t, "Note", "C", 1, &rec));
	CHECK(rec.vector_dim == dim && vec_is(t, rec.vid, e, "gamma"));
	cairn_txn_end(t);
	ro.at_revision = 0;
	/* Later commits: the old model's vectors are refused, a kept title keeps its new vector. */
	co.embedder = NULL;
	OK(put_vec(&cs, "more", v3));
	CHECK_RC(cairn_commit(st, &co, cs, NULL), CAIRN_EDIM);
	cairn_changeset_free(cs);
	OK(cairn_changeset_new(&cs));
	OK(cairn_changeset_put(cs, "Note", "A", 1, "alpha steel", 11, "{\"status\":\"kept\"}", 17));
	OK(cairn_commit(st, &co, cs, NULL));
	cairn_changeset_free(cs);
	OK(cairn_txn_begin(st, &ro, &t));
	OK(cairn_get(t, "Note", "A", 1, &rec));
	CHECK(rec.vid != old_vid && rec.vector_dim == dim && vec_is(t, rec.vid, e, "alpha steel"));
	cairn_txn_end(t);
	/* The branch merges, its vector of the new model with it; the store checks clean. */
	{
		cairn_merge_options mo = {0};

		mo.commit.domain = "d";
		mo.commit.prov.actor = "test";
		mo.source = "b";
		OK(cairn_merge(st, &mo, NULL, NULL, NULL));
	}
	OK(cairn_txn_begin(st, &ro, &t));
	OK(cairn_get(t, "Note", "people of the world", 19, &rec));
	CHECK(rec.vector_dim == dim && vec_is(t, rec.vid, e, "people of the world"));
	cairn_txn_end(t);
	OK(cairn_vindex_update(st, "d", NULL, &vi));
	CHECK(vi.built == 1 && vi.dim == dim);
	OK(cairn_check(st, "d", count_problem, &problems, NULL));
	CHECK(problems == 0);
	/* Re-embedding again with the same model is allowed and changes nothing but the log. */
	co.embedder = e;
	OK(cairn_reembed(st, &co, &r));
	CHECK(r.vectors == 9 && r.empty == 3);
	CHECK(generation(st, "d") == r.commit.revision);
	OK(cairn_check(st, "d", count_problem, &problems, NULL));
	CHECK(problems == 0);
	cairn_embedder_close(e);
	cairn_close(st);
}
