/*
 * Memory for agents: the built-in memory schema and Relations of any Kind;
 * cairn_remember (subjects resolved or made once, the same text kept
 * once, keys assigned, existing keys refused without replace, lists
 * appended, batches in one commit, supersede in one commit) and
 * cairn_retract, with their errors leaving the store unchanged.
 */
#include <stdlib.h>
#include <time.h>

#include "tests.h"

static cairn_store *memory_store(void)
{
	cairn_open_options o = {.flags = CAIRN_OPEN_CREATE | CAIRN_OPEN_NOSYNC |
					 CAIRN_OPEN_NO_BACKGROUND};
	cairn_commit_options co = {0};
	cairn_store *st = NULL;
	const char *s = cairn_memory_schema();

	if (cairn_open(test_path("store"), &o, &st))
		return NULL;
	co.domain = "m";
	co.prov.actor = "test";
	co.create_domain = 1;
	if (cairn_schema_apply(st, &co, s, strlen(s), NULL)) {
		fprintf(stderr, "    memory schema: %s\n", cairn_errmsg());
		cairn_close(st);
		return NULL;
	}
	return st;
}

static cairn_commit_options wopts(void)
{
	cairn_commit_options co = {0};

	co.domain = "m";
	co.prov.actor = "agent";
	co.prov.source = "chat/1";
	return co;
}

/* The values of Kind:key on main, into a malloc'd string, or NULL. */
static char *values_of(cairn_store *st, const char *kind, const char *key)
{
	cairn_read_options ro = {0};
	cairn_record r;
	cairn_txn *t;
	char *s = NULL;

	ro.domain = "m";
	if (cairn_txn_begin(st, &ro, &t))
		return NULL;
	if (cairn_get(t, kind, key, strlen(key), &r) == 0 && (s = malloc(r.values_len + 1))) {
		memcpy(s, r.values, r.values_len);
		s[r.values_len] = '\0';
	}
	cairn_txn_end(t);
	return s;
}

static uint64_t count_of(cairn_store *st, const char *kind)
{
	cairn_read_options ro = {0};
	cairn_txn *t;
	uint64_t n = UINT64_MAX;

	ro.domain = "m";
	if (cairn_txn_begin(st, &ro, &t))
		return n;
	if (cairn_count(t, kind, &n))
		n = UINT64_MAX;
	cairn_txn_end(t);
	return n;
}

/* Whether the Link rel from Kind:key has an end to Kind:key. */
static int has_link(cairn_store *st, const char *fk, const char *fkey, const char *rel,
		    const char *tk, const char *tkey)
{
	cairn_read_options ro = {0};
	cairn_link_cursor cur;
	cairn_link l[16];
	cairn_txn *t;
	size_t n = 0;
	int yes = 0;

	ro.domain = "m";
	memset(&cur, 0, sizeof(cur));
	if (cairn_txn_begin(st, &ro, &t))
		return 0;
	if (cairn_links(t, fk, fkey, strlen(fkey), CAIRN_OUT, rel, &cur, l, 16, &n) == 0)
		for (size_t i = 0; i < n; i++)
			yes |= strcmp(l[i].to_kind, tk) == 0 &&
			       test_streq(l[i].to_key, l[i].to_key_len, tkey);
	cairn_txn_end(t);
	return yes;
}

void test_memory_schema(void)
{
	cairn_store *st = memory_store();
	cairn_commit_options co = {0};
	cairn_commit_result r;
	cairn_read_options ro = {0};
	const char *js;
	size_t n;
	cairn_txn *t;
	static const char user[] = "{\"kinds\":[{\"name\":\"Project\"}]}";
	static const char tighten[] =
		"{\"relations\":[{\"name\":\"about\",\"from\":\"Memory\",\"to\":\"Entity\"}]}";

	CHECK(st);
	co.domain = "m";
	co.prov.actor = "test";
	/* Users extend it; about reaches any Kind, theirs too. */
	OK(cairn_schema_apply(st, &co, user, strlen(user), NULL));
	OK(test_commit_in(
		st, "m",
		"{\"kind\":\"Project\",\"key\":\"apollo\",\"title\":\"Apollo\"}\n"
		"{\"kind\":\"Entity\",\"key\":\"dana\",\"title\":\"Dana\"}\n"
		"{\"kind\":\"Memory\",\"key\":\"m1\",\"title\":\"Dana leads Apollo\"}\n"
		"{\"rel\":\"about\",\"from\":\"Memory:m1\",\"to\":\"Project:apollo\"}\n"
		"{\"rel\":\"about\",\"from\":\"Memory:m1\",\"to\":\"Entity:dana\"}\n"
		"{\"rel\":\"related_to\",\"from\":\"Project:apollo\",\"to\":\"Entity:dana\"}",
		&r));
	/* An end narrowed to one Kind while Links of others exist is refused. */
	CHECK_RC(cairn_schema_apply(st, &co, tighten, strlen(tighten), NULL), CAIRN_ESCHEMADATA);
	ro.domain = "m";
	OK(cairn_txn_begin(st, &ro, &t));
	OK(cairn_schema_get(t, &js, &n));
	CHECK(strstr(js, "{\"name\":\"about\",\"from\":\"*\",\"to\":\"*\""));
	cairn_txn_end(t);
	cairn_close(st);
}

void test_memory_any_kind(void)
{
	cairn_store *st = test_store();
	cairn_commit_options co = {0};
	static const char wide[] =
		"{\"relations\":[{\"name\":\"supplied_by\",\"from\":\"Part\",\"to\":\"*\"}]}";
	static const char bad[] =
		"{\"relations\":[{\"name\":\"x\",\"from\":\"Nope\",\"to\":\"*\"}]}";

	CHECK(st);
	co.domain = "d";
	co.prov.actor = "test";
	OK(test_commit(st,
		       "{\"kind\":\"Supplier\",\"key\":\"S-1\",\"title\":\"Acme\",\"values\":{"
		       "\"country\":\"DE\"}}\n"
		       "{\"kind\":\"Plant\",\"key\":\"PL-1\",\"title\":\"Plant 1\"}\n"
		       "{\"kind\":\"Part\",\"key\":\"P-1\",\"title\":\"Bolt\",\"values\":{\"sku\":"
		       "\"B-1\",\"supplier\":\"S-1\"}}\n"
		       "{\"rel\":\"supplied_by\",\"from\":\"Part:P-1\",\"to\":\"Supplier:S-1\"}",
		       NULL));
	/* A Link to a Plant is refused until the end is widened to any Kind. */
	CHECK_RC(
		test_commit(st,
			    "{\"rel\":\"supplied_by\",\"from\":\"Part:P-1\",\"to\":\"Plant:PL-1\"}",
			    NULL),
		CAIRN_ELINKKIND);
	/* Widening is accepted with Links in place. */
	OK(cairn_schema_apply(st, &co, wide, strlen(wide), NULL));
	OK(test_commit(st, "{\"rel\":\"supplied_by\",\"from\":\"Part:P-1\",\"to\":\"Plant:PL-1\"}",
		       NULL));
	/* The from end still holds. */
	CHECK_RC(
		test_commit(st,
			    "{\"rel\":\"supplied_by\",\"from\":\"Plant:PL-1\",\"to\":\"Part:P-1\"}",
			    NULL),
		CAIRN_ELINKKIND);
	/* A Kind that does not exist is still an error, which names "*" as the way to any. */
	CHECK_RC(cairn_schema_apply(st, &co, bad, strlen(bad), NULL), CAIRN_ESCHEMA);
	CHECK(strstr(cairn_errmsg(), "Nope") && strstr(cairn_errmsg(), "\"*\""));
	cairn_close(st);
}

void test_memory_remember(void)
{
	cairn_store *st = memory_store();
	cairn_commit_options co = wopts();
	cairn_commit_result r;
	cairn_memory_in in[3];
	cairn_memory_out out[3];
	const char *about_dana[] = {"Dana"};
	const char *about_dana2[] = {"dana", "Apollo project"};
	char key1[CAIRN_MAX_KEY + 1], dana[CAIRN_MAX_KEY + 1];
	uint64_t head;
	char *v;

	CHECK(st);
	memset(in, 0, sizeof(in));
	in[0].text = "Dana prefers tea";
	in[0].about = about_dana;
	in[0].n_about = 1;
	in[0].values = "{\"type\":\"preference\",\"tags\":[\"drinks\"]}";
	in[0].values_len = strlen(in[0].values);
	co.prov.has_confidence = 1;
	co.prov.confidence = 0.8;
	OK(cairn_remember(st, &co, in, 1, out, &r));
	CHECK(r.revision > 0);
	CHECK(out[0].created && out[0].written);
	CHECK(strcmp(out[0].kind, "Memory") == 0);
	CHECK(strlen(out[0].key) == 26); /* assigned: a ULID */
	CHECK(out[0].n_about == 1 && out[0].about[0].created);
	CHECK(strcmp(out[0].about[0].kind, "Entity") == 0);
	strcpy(key1, out[0].key);
	strcpy(dana, out[0].about[0].key);
	CHECK(has_link(st, "Memory", key1, "about", "Entity", dana));
	v = values_of(st, "Memory", key1);
	CHECK(v && strstr(v, "\"status\":\"active\"") && strstr(v, "\"source\":\"chat/1\"") &&
	      strstr(v, "\"confidence\":0.8"));
	free(v);

	/* The same text again: the memory it is, nothing written. */
	head = test_head(st, "m");
	OK(cairn_remember(st, &co, in, 1, out, &r));
	CHECK(!out[0].created && !out[0].written && strcmp(out[0].key, key1) == 0);
	CHECK(r.revision == 0 && test_head(st, "m") == head);
	CHECK(strstr(out[0].why, "same text"));

	/* A key that exists is refused without replace, naming the Record; the store is unchanged.
	 */
	memset(&in[1], 0, sizeof(in[1]));
	in[1].key = key1;
	in[1].key_len = strlen(key1);
	in[1].text = "Dana prefers coffee";
	CHECK_RC(cairn_remember(st, &co, &in[1], 1, out, &r), CAIRN_EEXIST);
	CHECK(strstr(cairn_errmsg(), key1) && strstr(cairn_errmsg(), "replace"));
	CHECK(test_head(st, "m") == head);
	/* With replace it is an update, and append extends a list once per string. */
	in[1].flags = CAIRN_REMEMBER_REPLACE;
	in[1].append = "{\"tags\":[\"drinks\",\"mornings\"]}";
	in[1].append_len = strlen(in[1].append);
	OK(cairn_remember(st, &co, &in[1], 1, out, &r));
	CHECK(!out[0].created && out[0].written && strstr(out[0].why, "updated"));
	v = values_of(st, "Memory", key1);
	CHECK(v && strstr(v, "\"tags\":[\"drinks\",\"mornings\"]") &&
	      strstr(v, "\"type\":\"preference\""));
	free(v);

	/* A batch: one commit, one new Entity for two spellings of a name nothing has yet. */
	head = test_head(st, "m");
	memset(in, 0, sizeof(in));
	in[0].text = "Apollo ships in May";
	in[0].about = about_dana2 + 1;
	in[0].n_about = 1;
	in[1].text = "Dana runs the Apollo project";
	in[1].about = about_dana2;
	in[1].n_about = 2;
	in[2].text = "The Apollo project has a budget";
	in[2].about = (const char *[]){"apollo PROJECT"};
	in[2].n_about = 1;
	OK(cairn_remember(st, &co, in, 3, out, &r));
	CHECK(r.revision == head + 1);
	CHECK(out[0].about[0].created && strcmp(out[1].about[1].key, out[0].about[0].key) == 0);
	CHECK(strcmp(out[2].about[0].key, out[0].about[0].key) == 0);
	/* "dana" is the Entity made before, found ignoring case. */
	CHECK(!out[1].about[0].created && strcmp(out[1].about[0].key, dana) == 0);
	CHECK(count_of(st, "Entity") == 2);
	CHECK(count_of(st, "Memory") == 4);
	/* Keys made in order sort in order. */
	CHECK(strcmp(out[0].key, out[1].key) < 0 && strcmp(out[1].key, out[2].key) < 0);
	/*
	 * Two long texts alike for their first 200 bytes (what names keep) are
	 * two memories; the same long text is one.
	 */
	{
		char a[400], b[400];

		memset(a, 0, sizeof(a));
		for (int i = 0; i < 22; i++)
			strcat(a, "long words ");
		strcpy(b, a);
		strcat(a, "end one");
		strcat(b, "end two");
		memset(in, 0, sizeof(in));
		in[0].text = a;
		OK(cairn_remember(st, &co, in, 1, out, &r));
		CHECK(out[0].created);
		in[0].text = b;
		OK(cairn_remember(st, &co, in, 1, out, &r));
		CHECK(out[0].created);
		in[0].text = a;
		OK(cairn_remember(st, &co, in, 1, out, &r));
		CHECK(!out[0].created && !out[0].written);
	}
	cairn_close(st);
}

void test_memory_supersede(void)
{
	cairn_store *st = memory_store();
	cairn_commit_options co = wopts();
	cairn_commit_result r;
	cairn_memory_in in;
	cairn_memory_out out;
	const char *about[] = {"Dana"};
	char old[CAIRN_MAX_KEY + 1], ref[CAIRN_MAX_KEY + 8];
	uint64_t head;
	char *v;

	CHECK(st);
	memset(&in, 0, sizeof(in));
	in.text = "Dana lives in Lisbon";
	in.about = about;
	in.n_about = 1;
	OK(cairn_remember(st, &co, &in, 1, &out, &r));
	strcpy(old, out.key);
	snprintf(ref, sizeof(ref), "Memory:%s", old);
	head = test_head(st, "m");
	in.text = "Dana lives in Porto";
	in.supersedes = ref;
	OK(cairn_remember(st, &co, &in, 1, &out, &r));
	CHECK(r.revision == head + 1); /* one commit */
	CHECK(out.superseded && out.created);
	CHECK(!out.about[0].created); /* Dana is the Entity of the first memory */
	CHECK(has_link(st, "Memory", out.key, "supersedes", "Memory", old));
	v = values_of(st, "Memory", old);
	CHECK(v && strstr(v, "\"status\":\"superseded\"") && strstr(v, "\"valid_to\":\""));
	free(v);
	v = values_of(st, "Memory", out.key);
	CHECK(v && strstr(v, "\"status\":\"active\""));
	free(v);
	/* A superseded memory's text is not the active one: remembering it again makes a new one.
	 */
	in.text = "Dana lives in Lisbon";
	in.supersedes = NULL;
	OK(cairn_remember(st, &co, &in, 1, &out, &r));
	CHECK(out.created && strcmp(out.key, old) != 0);

	/* Errors, each leaving the store as it was. */
	head = test_head(st, "m");
	in.text = "x";
	in.supersedes = "Memory:nope";
	CHECK_RC(cairn_remember(st, &co, &in, 1, &out, &r), CAIRN_ENOTFOUND);
	CHECK(strstr(cairn_errmsg(), "memory 0"));
	in.supersedes = "nocolon";
	CHECK_RC(cairn_remember(st, &co, &in, 1, &out, &r), CAIRN_EINVAL);
	CHECK(test_head(st, "m") == head);
	cairn_close(st);
}

void test_memory_retract(void)
{
	cairn_store *st = memory_store();
	cairn_commit_options co = wopts();
	cairn_commit_result r;
	cairn_memory_in in;
	cairn_memory_out out;
	uint64_t head;
	char *v;

	CHECK(st);
	memset(&in, 0, sizeof(in));
	in.text = "The meeting is on Friday";
	OK(cairn_remember(st, &co, &in, 1, &out, &r));
	OK(cairn_retract(st, &co, "Memory", out.key, strlen(out.key), &r));
	CHECK(r.revision > 0);
	v = values_of(st, "Memory", out.key);
	CHECK(v && strstr(v, "\"status\":\"retracted\"") && strstr(v, "\"valid_to\""));
	free(v);
	head = test_head(st, "m");
	CHECK_RC(cairn_retract(st, &co, "Memory", "nope", 4, &r), CAIRN_ENOTFOUND);
	CHECK_RC(cairn_retract(st, &co, "Nope", "x", 1, &r), CAIRN_EUNKNOWNKIND);
	CHECK_RC(cairn_retract(st, &co, "Entity", "x", 1, &r), CAIRN_EUNKNOWNATTR);
	CHECK(strstr(cairn_errmsg(), "status"));
	CHECK(test_head(st, "m") == head);
	cairn_close(st);
}

void test_memory_errors(void)
{
	cairn_store *st = memory_store();
	cairn_store *plain = NULL;
	cairn_commit_options co = wopts();
	cairn_commit_result r;
	cairn_memory_in in[2];
	cairn_memory_out out[2];
	const char *about_missing[] = {"Entity:nope"};
	const char *about_empty[] = {""};
	uint64_t head;

	CHECK(st);
	head = test_head(st, "m");
	memset(in, 0, sizeof(in));
	CHECK_RC(cairn_remember(st, &co, in, 0, out, &r), CAIRN_EINVAL);
	CHECK_RC(cairn_remember(st, &co, in, CAIRN_MEMORY_MAX_BATCH + 1, out, &r), CAIRN_EINVAL);
	/* A new memory needs a text. */
	CHECK_RC(cairn_remember(st, &co, in, 1, out, &r), CAIRN_EINVAL);
	in[0].text = "ok";
	in[0].values = "{\"type\":\"nonsense\"}";
	in[0].values_len = strlen(in[0].values);
	CHECK_RC(cairn_remember(st, &co, in, 1, out, &r), CAIRN_EENUM);
	CHECK(strstr(cairn_errmsg(), "memory 0"));
	in[0].values = "{bad";
	in[0].values_len = 4;
	CHECK_RC(cairn_remember(st, &co, in, 1, out, &r), CAIRN_EJSON);
	in[0].values = NULL;
	in[0].append = "{\"type\":[\"x\"]}";
	in[0].append_len = strlen(in[0].append);
	CHECK_RC(cairn_remember(st, &co, in, 1, out, &r), CAIRN_EINVAL);
	CHECK(strstr(cairn_errmsg(), "not a list"));
	in[0].append = NULL;
	in[0].about = about_missing;
	in[0].n_about = 1;
	CHECK_RC(cairn_remember(st, &co, in, 1, out, &r), CAIRN_ENOTFOUND);
	in[0].about = about_empty;
	CHECK_RC(cairn_remember(st, &co, in, 1, out, &r), CAIRN_EINVAL);
	in[0].about = NULL;
	in[0].n_about = CAIRN_MEMORY_MAX_ABOUT + 1;
	CHECK_RC(cairn_remember(st, &co, in, 1, out, &r), CAIRN_EINVAL);
	in[0].n_about = 0;
	in[0].key = "a\0b";
	in[0].key_len = 3;
	CHECK_RC(cairn_remember(st, &co, in, 1, out, &r), CAIRN_EINVAL);
	CHECK(strstr(cairn_errmsg(), "U+0000"));
	in[0].key = NULL;
	in[0].kind = "Nope";
	CHECK_RC(cairn_remember(st, &co, in, 1, out, &r), CAIRN_EUNKNOWNKIND);
	in[0].kind = NULL;
	in[0].reserved[0] = 1;
	CHECK_RC(cairn_remember(st, &co, in, 1, out, &r), CAIRN_EINVAL);
	in[0].reserved[0] = 0;
	/* A batch with one bad memory writes none of them. */
	in[1].text = "also ok";
	in[1].values = "{\"confidence\":\"high\"}";
	in[1].values_len = strlen(in[1].values);
	CHECK_RC(cairn_remember(st, &co, in, 2, out, &r), CAIRN_ETYPE);
	CHECK(strstr(cairn_errmsg(), "memory 1"));
	CHECK(test_head(st, "m") == head);
	CHECK(count_of(st, "Memory") == 0);
	cairn_close(st);

	/* A Domain without the memory schema says how to get it. */
	CHECK((plain = test_store()));
	co.domain = "d";
	in[0].values = NULL;
	CHECK_RC(cairn_remember(plain, &co, in, 1, out, &r), CAIRN_EUNKNOWNKIND);
	CHECK(strstr(cairn_errmsg(), "cairn init --memory"));
	/* A digest or a recall of a Domain without memories finds none, and says so without error.
	 */
	{
		cairn_read_options ro = {.domain = "d"};
		cairn_digest_options dopt = {0};
		cairn_recall_options ropt = {0};
		cairn_digest_item it[4];
		cairn_hit h[4];
		size_t n = 9, total = 9;
		cairn_txn *t;

		OK(cairn_txn_begin(plain, &ro, &t));
		OK(cairn_digest(t, &dopt, 0, it, 4, &n, &total, NULL, NULL));
		CHECK(n == 0 && total == 0);
		ropt.text = "anything";
		OK(cairn_recall(t, &ropt, h, NULL, 4, &n));
		CHECK(n == 0);
		cairn_txn_end(t);
	}
	cairn_close(plain);
}

/* Remember text about subject with the commit's source and confidence; the key into key. */
static int remember_as(cairn_store *st, const char *text, const char *about, const char *source,
		       double confidence, const char *supersedes, char key[CAIRN_MAX_KEY + 1])
{
	cairn_commit_options co = wopts();
	cairn_memory_in in;
	cairn_memory_out out;
	const char *ab[1] = {about};
	int rc;

	memset(&in, 0, sizeof(in));
	in.text = text;
	in.about = ab;
	in.n_about = about ? 1 : 0;
	in.supersedes = supersedes;
	co.prov.source = source;
	co.prov.has_confidence = 1;
	co.prov.confidence = confidence;
	rc = cairn_remember(st, &co, &in, 1, &out, NULL);
	if (!rc && key)
		strcpy(key, out.key);
	return rc;
}

void test_memory_digest(void)
{
	cairn_store *st = memory_store();
	cairn_read_options ro = {0};
	cairn_digest_options o = {0};
	cairn_digest_item it[8];
	cairn_record subj[2];
	const char *dana[] = {"Dana"}, *nobody[] = {"Nobody at all"},
		   *both[] = {"Dana", "Entity:nope"};
	char k_tea[CAIRN_MAX_KEY + 1], k_porto[CAIRN_MAX_KEY + 1], k_lisbon[CAIRN_MAX_KEY + 1],
		k_rumor[CAIRN_MAX_KEY + 1], ref[CAIRN_MAX_KEY + 8];
	size_t n, total;
	int trunc;
	cairn_txn *t;

	CHECK(st);
	OK(remember_as(st, "Dana prefers tea", "Dana", "chat/1", 0.9, NULL, k_tea));
	OK(remember_as(st, "Dana lives in Lisbon", "Dana", "chat/1", 0.8, NULL, k_lisbon));
	snprintf(ref, sizeof(ref), "Memory:%s", k_lisbon);
	OK(remember_as(st, "Dana lives in Porto", "Dana", "chat/2", 0.7, ref, k_porto));
	OK(remember_as(st, "Dana is secretly a spy", "Dana", "rumor", 1.0, NULL, k_rumor));
	OK(remember_as(st, "Sam likes chess", "Sam", "chat/1", 1.0, NULL, NULL));
	/* Sources are trusted per Domain by Records of the Kind Source. */
	OK(test_commit_in(st, "m",
			  "{\"kind\":\"Source\",\"key\":\"rumor\",\"values\":{\"trust\":0.2}}",
			  NULL));

	ro.domain = "m";
	OK(cairn_txn_begin(st, &ro, &t));
	o.subjects = dana;
	o.n_subjects = 1;
	o.now_ms = 0;
	OK(cairn_digest(t, &o, 0, it, 8, &n, &total, &trunc, subj));
	/* Active memories only, by confidence x trust: tea 0.9, Porto 0.7, the rumor 1.0 x 0.2. */
	CHECK(n == 3 && total == 3 && !trunc);
	CHECK(test_streq(it[0].rec.key, it[0].rec.key_len, k_tea));
	CHECK(test_streq(it[1].rec.key, it[1].rec.key_len, k_porto));
	CHECK(test_streq(it[2].rec.key, it[2].rec.key_len, k_rumor));
	CHECK(it[2].trust == 0.2 && it[0].trust == 1 && it[0].confidence == 0.9);
	CHECK(test_streq(it[0].source, it[0].source_len, "chat/1"));
	CHECK(strcmp(it[0].status, "active") == 0);
	CHECK(it[1].supersedes.kind &&
	      test_streq(it[1].supersedes.key, it[1].supersedes.key_len, k_lisbon));
	CHECK(!it[0].supersedes.kind);
	CHECK(strcmp(subj[0].kind, "Entity") == 0 &&
	      test_streq(subj[0].title, subj[0].title_len, "Dana"));
	/* A cursor: the ranking from an offset. */
	OK(cairn_digest(t, &o, 1, it, 1, &n, &total, NULL, NULL));
	CHECK(n == 1 && total == 3 && test_streq(it[0].rec.key, it[0].rec.key_len, k_porto));
	OK(cairn_digest(t, &o, 3, it, 8, &n, &total, NULL, NULL));
	CHECK(n == 0 && total == 3);
	/* Superseded memories when asked. */
	o.include_inactive = 1;
	OK(cairn_digest(t, &o, 0, it, 8, &n, &total, NULL, NULL));
	CHECK(n == 4);
	o.include_inactive = 0;
	/*
	 * What was true at a time, superseded memories included: long ago all
	 * four were (none says when it began), tomorrow all but Lisbon, whose
	 * valid_to the supersede set to now.
	 */
	o.include_inactive = 1;
	o.valid_at_ms = 1;
	OK(cairn_digest(t, &o, 0, it, 8, &n, &total, NULL, NULL));
	CHECK(n == 4);
	o.valid_at_ms = time(NULL) * 1000LL + 86400000LL;
	OK(cairn_digest(t, &o, 0, it, 8, &n, &total, NULL, NULL));
	CHECK(n == 3);
	for (size_t i = 0; i < n; i++)
		CHECK(!test_streq(it[i].rec.key, it[i].rec.key_len, k_lisbon));
	o.valid_at_ms = 0;
	o.include_inactive = 0;
	/* The Domain's latest memories, without a subject. */
	o.subjects = NULL;
	o.n_subjects = 0;
	OK(cairn_digest(t, &o, 0, it, 8, &n, &total, NULL, NULL));
	CHECK(n == 4); /* tea, Porto, rumor, chess: Lisbon is superseded */
	/* Errors. */
	o.subjects = nobody;
	o.n_subjects = 1;
	CHECK_RC(cairn_digest(t, &o, 0, it, 8, &n, &total, NULL, NULL), CAIRN_ENOTFOUND);
	CHECK(strstr(cairn_errmsg(), "Nobody at all"));
	o.subjects = both;
	o.n_subjects = 2;
	CHECK_RC(cairn_digest(t, &o, 0, it, 8, &n, &total, NULL, NULL), CAIRN_ENOTFOUND);
	o.n_subjects = CAIRN_MEMORY_MAX_ABOUT + 1;
	CHECK_RC(cairn_digest(t, &o, 0, it, 8, &n, &total, NULL, NULL), CAIRN_EINVAL);
	o.n_subjects = 1;
	o.half_life_days = -1;
	CHECK_RC(cairn_digest(t, &o, 0, it, 8, &n, &total, NULL, NULL), CAIRN_EINVAL);
	o.half_life_days = 0;
	o.reserved[0] = 1;
	CHECK_RC(cairn_digest(t, &o, 0, it, 8, &n, &total, NULL, NULL), CAIRN_EINVAL);
	cairn_txn_end(t);
	cairn_close(st);
}

/*
 * Valid time in every search: 30 memories of a Rome trip that ended in
 * 2020 (written first, so they win every tie), 5 that began in 2021, an
 * Episode with no valid time and a Trip whose dates bound it. At 2022 a
 * search of limit 5 still finds 5, none of the ended ones, by words and
 * hybrid; at 2019 the ended ones and not the begun; the bounds are
 * valid_from <= t < valid_to; a date counts from its midnight; Attributes
 * of other names are read when named; a search of Kinds without valid
 * time is refused, saying so.
 */
void test_memory_valid_time(void)
{
	cairn_store *st = memory_store();
	static const char trip[] =
		"{\"name\":\"Trip\",\"attributes\":[{\"name\":\"start\",\"type\":\"date\"},"
		"{\"name\":\"end\",\"type\":\"date\"}]},";
	cairn_read_options ro = {0};
	cairn_search_options o = {0};
	cairn_hybrid_options ho = {0};
	cairn_commit_options co = {0};
	cairn_exclude x, named;
	const cairn_exclude *ex;
	const char *s = cairn_memory_schema();
	char line[300], *schema = malloc(strlen(s) + sizeof(trip));
	int64_t y2019 = 1546300800000LL, y2020 = 1577836800000LL, y2021 = 1609459200000LL,
		y2022 = 1640995200000LL;
	cairn_hit h[40];
	size_t n;
	cairn_txn *t;

	CHECK(st && schema);
	if (!st || !schema) {
		free(schema);
		cairn_close(st);
		return;
	}
	/* The memory schema extended by a Kind with dates. */
	memcpy(schema, s, 10); /* {"kinds":[ */
	memcpy(schema + 10, trip, sizeof(trip) - 1);
	strcpy(schema + 10 + sizeof(trip) - 1, s + 10);
	co.domain = "m";
	co.prov.actor = "test";
	OK(cairn_schema_apply(st, &co, schema, strlen(schema), NULL));
	free(schema);
	for (int i = 0; i < 35; i++) {
		snprintf(line, sizeof(line),
			 "{\"kind\":\"Memory\",\"key\":\"m%02d\",\"title\":\"Rome trip\","
			 "\"values\":{\"status\":\"active\",\"%s\":\"%s\"}}",
			 i, i < 30 ? "valid_to" : "valid_from",
			 i < 30 ? "2020-01-01T00:00:00Z" : "2021-01-01T00:00:00Z");
		OK(test_commit_in(st, "m", line, NULL));
	}
	OK(test_commit_in(st, "m",
			  "{\"kind\":\"Episode\",\"key\":\"e\",\"title\":\"Rome trip\","
			  "\"values\":{\"at\":\"2023-05-01T00:00:00Z\"}}\n"
			  "{\"kind\":\"Trip\",\"key\":\"t\",\"title\":\"Rome trip\","
			  "\"values\":{\"start\":\"2021-06-01\",\"end\":\"2021-06-10\"}}",
			  NULL));
	ro.domain = "m";
	OK(cairn_txn_begin(st, &ro, &t));
	/* What cairn_memory_exclude gives. */
	CHECK(cairn_memory_exclude(t, NULL, 0, 1, 0, &x) == NULL);
	ex = cairn_memory_exclude(t, NULL, 0, 0, 0, &x);
	CHECK(ex == &x && x.attribute && strcmp(x.attribute, "status") == 0 && x.n_values == 2 &&
	      !x.valid_at_ms);
	ex = cairn_memory_exclude(t, NULL, 0, 1, y2022, &x);
	CHECK(ex == &x && !x.attribute && !x.n_values && x.valid_at_ms == y2022);
	ex = cairn_memory_exclude(t, (const char *[]){"Memory"}, 1, 0, y2022, &x);
	CHECK(ex && x.attribute && x.valid_at_ms == y2022);
	/* By words, at 2022: the five begun, though the ended win every tie. */
	o.text = "Rome trip";
	o.kinds = (const char *[]){"Memory"};
	o.n_kinds = 1;
	o.limit = 5;
	OK(cairn_search(t, &o, h, 40, &n, NULL));
	CHECK(n == 5 && test_streq(h[0].rec.key, h[0].rec.key_len, "m00"));
	o.exclude = ex;
	OK(cairn_search(t, &o, h, 40, &n, NULL));
	CHECK(n == 5);
	for (size_t i = 0; i < n; i++)
		CHECK(h[i].rec.key_len == 3 && memcmp(h[i].rec.key, "m3", 2) == 0);
	/* Hybrid (by words alone here) leaves them out inside its pool as well. */
	ho.text = "Rome trip";
	ho.kinds = o.kinds;
	ho.n_kinds = 1;
	ho.text_weight = 1;
	ho.limit = 5;
	ho.exclude = ex;
	OK(cairn_hybrid(t, &ho, h, 40, &n));
	CHECK(n == 5);
	for (size_t i = 0; i < n; i++)
		CHECK(h[i].rec.key_len == 3 && memcmp(h[i].rec.key, "m3", 2) == 0);
	/* Every Kind: the Episode and the Trip kept (no valid_from or valid_to). */
	o.kinds = NULL;
	o.n_kinds = 0;
	o.limit = 40;
	o.exclude = cairn_memory_exclude(t, NULL, 0, 1, y2022, &x);
	OK(cairn_search(t, &o, h, 40, &n, NULL));
	CHECK(n == 7);
	/* At 2019: the thirty that ended in 2020, the Episode and the Trip. */
	x.valid_at_ms = y2019;
	OK(cairn_search(t, &o, h, 40, &n, NULL));
	CHECK(n == 32);
	/* The bounds: valid_to is the first instant it is not true, valid_from the first it is. */
	x.valid_at_ms = y2020;
	OK(cairn_search(t, &o, h, 40, &n, NULL));
	CHECK(n == 2 && strcmp(h[0].rec.kind, "Memory") != 0 && strcmp(h[1].rec.kind, "Memory") != 0);
	x.valid_at_ms = y2021;
	OK(cairn_search(t, &o, h, 40, &n, NULL));
	CHECK(n == 7);
	x.valid_at_ms = y2021 - 1;
	OK(cairn_search(t, &o, h, 40, &n, NULL));
	CHECK(n == 2);
	/* Dates, named: the Trip is true from its first day's midnight to its end's. */
	memset(&named, 0, sizeof(named));
	named.valid_from = "start";
	named.valid_to = "end";
	named.valid_at_ms = 1622505600000LL; /* 2021-06-01T00:00:00Z */
	o.exclude = &named;
	o.kinds = (const char *[]){"Trip"};
	o.n_kinds = 1;
	OK(cairn_search(t, &o, h, 40, &n, NULL));
	CHECK(n == 1 && test_streq(h[0].rec.key, h[0].rec.key_len, "t"));
	named.valid_at_ms -= 1;
	OK(cairn_search(t, &o, h, 40, &n, NULL));
	CHECK(n == 0);
	named.valid_at_ms = 1623283200000LL; /* 2021-06-10: its end */
	OK(cairn_search(t, &o, h, 40, &n, NULL));
	CHECK(n == 0);
	named.valid_at_ms -= 1;
	OK(cairn_search(t, &o, h, 40, &n, NULL));
	CHECK(n == 1);
	/* Episode's "at" read as when it began: true from 2023. */
	o.kinds = (const char *[]){"Episode"};
	named.valid_from = "at";
	named.valid_to = NULL;
	named.valid_at_ms = y2022;
	OK(cairn_search(t, &o, h, 40, &n, NULL));
	CHECK(n == 0);
	/* Kinds without valid time, or a misspelled name: refused, naming what is missing. */
	o.exclude = cairn_memory_exclude(t, o.kinds, 1, 1, y2022, &x);
	CHECK_RC(cairn_search(t, &o, h, 40, &n, NULL), CAIRN_EINVAL);
	CHECK(strstr(cairn_errmsg(), "\"valid_from\"") && strstr(cairn_errmsg(), "valid time"));
	o.kinds = (const char *[]){"Memory"};
	named.valid_from = "valid_form";
	named.valid_to = "valid_too";
	o.exclude = &named;
	CHECK_RC(cairn_search(t, &o, h, 40, &n, NULL), CAIRN_EINVAL);
	CHECK(strstr(cairn_errmsg(), "\"valid_form\""));
	named.valid_from = "status"; /* an enum, not a time */
	named.valid_to = NULL;
	OK(cairn_search(t, &o, h, 40, &n, NULL)); /* valid_to is one */
	named.valid_to = "confidence";
	CHECK_RC(cairn_search(t, &o, h, 40, &n, NULL), CAIRN_EINVAL);
	memset(&named, 0, sizeof(named)); /* neither a value nor a time */
	CHECK_RC(cairn_search(t, &o, h, 40, &n, NULL), CAIRN_EINVAL);
	named.n_values = 1; /* values without an Attribute */
	named.valid_at_ms = y2022;
	CHECK_RC(cairn_search(t, &o, h, 40, &n, NULL), CAIRN_EINVAL);
	/*
	 * Reads: a Record not true then is not found, saying why; a page
	 * reads on until it is full, and its pages follow each other.
	 */
	cairn_memory_exclude(t, NULL, 0, 1, y2022, &x);
	OK(cairn_get_excluding(t, "Memory", "m31", 3, &x, &h[0].rec));
	CHECK(test_streq(h[0].rec.key, h[0].rec.key_len, "m31"));
	CHECK_RC(cairn_get_excluding(t, "Memory", "m01", 3, &x, &h[0].rec), CAIRN_ENOTFOUND);
	CHECK(strstr(cairn_errmsg(), "Memory:m01 was not true at 2022-01-01T00:00:00.000Z"));
	CHECK_RC(cairn_get_excluding(t, "Memory", "m99", 3, &x, &h[0].rec), CAIRN_ENOTFOUND);
	CHECK_RC(cairn_get_excluding(t, "Episode", "e", 1, &x, &h[0].rec), CAIRN_EINVAL);
	CHECK_RC(cairn_get_excluding(t, "Nope", "e", 1, &x, &h[0].rec), CAIRN_EUNKNOWNKIND);
	OK(cairn_get_excluding(t, "Episode", "e", 1, NULL, &h[0].rec)); /* NULL: cairn_get */
	x.valid_at_ms = y2022;
	{
		cairn_record pg[CAIRN_MAX_PAGE];
		size_t total = 0;

		OK(cairn_page_excluding(t, "Memory", NULL, 0, &x, pg, 3, &n));
		CHECK(n == 3 && test_streq(pg[0].key, pg[0].key_len, "m30") &&
		      test_streq(pg[2].key, pg[2].key_len, "m32"));
		OK(cairn_page_excluding(t, "Memory", "m32", 3, &x, pg, 3, &n));
		CHECK(n == 2 && test_streq(pg[0].key, pg[0].key_len, "m33") &&
		      test_streq(pg[1].key, pg[1].key_len, "m34"));
		x.valid_at_ms = y2019; /* the first thirty, in pages of 7 and the rest */
		OK(cairn_page_excluding(t, "Memory", NULL, 0, &x, pg, 7, &n));
		CHECK(n == 7 && test_streq(pg[6].key, pg[6].key_len, "m06"));
		total += n;
		OK(cairn_page_excluding(t, "Memory", pg[6].key, pg[6].key_len, &x, pg,
					CAIRN_MAX_PAGE, &n));
		total += n;
		CHECK(total == 30 && test_streq(pg[n - 1].key, pg[n - 1].key_len, "m29"));
		CHECK_RC(cairn_page_excluding(t, "Memory", NULL, 0, &x, pg, 0, &n), CAIRN_EINVAL);
		CHECK_RC(cairn_page_excluding(t, "Episode", NULL, 0, &x, pg, 5, &n), CAIRN_EINVAL);
		OK(cairn_page_excluding(t, "Episode", NULL, 0, NULL, pg, 5, &n));
		CHECK(n == 1);
	}
	/* A status is left out by name. */
	cairn_memory_exclude(t, NULL, 0, 0, 0, &x);
	OK(test_commit_in(st, "m",
			  "{\"kind\":\"Memory\",\"key\":\"gone\",\"title\":\"x\","
			  "\"values\":{\"status\":\"retracted\"}}",
			  NULL));
	cairn_txn_end(t);
	OK(cairn_txn_begin(st, &ro, &t));
	CHECK_RC(cairn_get_excluding(t, "Memory", "gone", 4, &x, &h[0].rec), CAIRN_ENOTFOUND);
	CHECK(strstr(cairn_errmsg(), "left out by its status"));
	cairn_txn_end(t);
	cairn_close(st);
}

void test_memory_recall(void)
{
	cairn_store *st = memory_store();
	cairn_read_options ro = {0};
	cairn_recall_options o = {0};
	cairn_hit h[10];
	double tr[10];
	char k_tea[CAIRN_MAX_KEY + 1], k_coffee[CAIRN_MAX_KEY + 1], k_juice[CAIRN_MAX_KEY + 1],
		ref[CAIRN_MAX_KEY + 8];
	size_t n;
	cairn_txn *t;
	int has_tea = 0;

	CHECK(st);
	OK(remember_as(st, "Dana prefers tea in the morning", "Dana", "chat/1", 0.9, NULL, k_tea));
	snprintf(ref, sizeof(ref), "Memory:%s", k_tea);
	OK(remember_as(st, "Dana prefers coffee in the morning", "Dana", "chat/2", 0.9, ref,
		       k_coffee));
	OK(remember_as(st, "Dana prefers juice in the morning", "Dana", "rumor", 1.0, NULL,
		       k_juice));
	OK(test_commit_in(st, "m",
			  "{\"kind\":\"Source\",\"key\":\"rumor\",\"values\":{\"trust\":0.1}}",
			  NULL));
	ro.domain = "m";
	OK(cairn_txn_begin(st, &ro, &t));
	o.text = "Dana prefers in the morning";
	o.kinds = (const char *[]){"Memory"};
	o.n_kinds = 1;
	OK(cairn_recall(t, &o, h, tr, 10, &n));
	/* The superseded memory is left out; the rumor's trust puts it last. */
	CHECK(n == 2);
	CHECK(test_streq(h[0].rec.key, h[0].rec.key_len, k_coffee) && tr[0] == 1);
	CHECK(test_streq(h[1].rec.key, h[1].rec.key_len, k_juice) && tr[1] == 0.1);
	CHECK(h[0].explain && h[0].score > h[1].score);
	/* When asked, the superseded memory too. */
	o.include_inactive = 1;
	OK(cairn_recall(t, &o, h, NULL, 10, &n));
	CHECK(n == 3);
	for (size_t i = 0; i < n; i++)
		has_tea |= test_streq(h[i].rec.key, h[i].rec.key_len, k_tea);
	CHECK(has_tea);
	/* What was true tomorrow: tea ended when coffee began. */
	o.valid_at_ms = time(NULL) * 1000LL + 86400000LL;
	OK(cairn_recall(t, &o, h, NULL, 10, &n));
	CHECK(n == 2);
	o.valid_at_ms = 0;
	o.include_inactive = 0;
	/* Kinds narrow it; the limit holds. */
	o.kinds = (const char *[]){"Entity"};
	o.n_kinds = 1;
	OK(cairn_recall(t, &o, h, NULL, 10, &n));
	CHECK(n == 1 && strcmp(h[0].rec.kind, "Entity") == 0);
	o.kinds = NULL;
	o.n_kinds = 0;
	o.limit = 1;
	OK(cairn_recall(t, &o, h, NULL, 10, &n));
	CHECK(n == 1);
	/* Errors. */
	o.limit = 51;
	CHECK_RC(cairn_recall(t, &o, h, NULL, 100, &n), CAIRN_EINVAL);
	o.limit = 0;
	o.half_life_days = -2;
	CHECK_RC(cairn_recall(t, &o, h, NULL, 10, &n), CAIRN_EINVAL);
	o.half_life_days = 0;
	o.text = NULL;
	CHECK_RC(cairn_recall(t, &o, h, NULL, 10, &n), CAIRN_EINVAL);
	cairn_txn_end(t);
	cairn_close(st);
}

/* A Relation of cardinality one: a new value replaces the old by itself, in the same commit. */
void test_memory_single_valued(void)
{
	cairn_store *st = memory_store();
	cairn_commit_options co = wopts();
	cairn_commit_options so = {0};
	cairn_commit_result r;
	cairn_memory_in in;
	cairn_memory_out out;
	cairn_read_options ro = {0};
	cairn_link_cursor cur;
	cairn_link l[4];
	cairn_txn *t;
	size_t n;
	uint64_t head;
	static const char rel[] =
		"{\"relations\":[{\"name\":\"works_at\",\"from\":\"Entity\",\"to\":\"Entity\","
		"\"cardinality\":\"one\"}]}";
	static const char acme[] = "[{\"rel\":\"works_at\",\"from\":\"Dana\",\"to\":\"Acme\"}]";
	static const char globex[] = "[{\"rel\":\"works_at\",\"from\":\"Dana\",\"to\":\"Globex\"}]";

	CHECK(st);
	so.domain = "m";
	so.prov.actor = "test";
	OK(cairn_schema_apply(st, &so, rel, strlen(rel), NULL));
	memset(&in, 0, sizeof(in));
	in.text = "Dana works at Acme";
	in.about = (const char *[]){"Dana"};
	in.n_about = 1;
	in.links = acme;
	in.links_len = strlen(acme);
	OK(cairn_remember(st, &co, &in, 1, &out, &r));
	CHECK(out.links_written == 1 && out.links_replaced == 0);
	/* The same Link again is not written again. */
	in.text = "Dana is employed by Acme";
	OK(cairn_remember(st, &co, &in, 1, &out, &r));
	CHECK(out.links_written == 0 && out.links_replaced == 0);
	/* A new employer replaces the old in the same commit as the memory. */
	head = test_head(st, "m");
	in.text = "Dana works at Globex now";
	in.links = globex;
	in.links_len = strlen(globex);
	OK(cairn_remember(st, &co, &in, 1, &out, &r));
	CHECK(r.revision == head + 1 && out.links_written == 1 && out.links_replaced == 1);
	ro.domain = "m";
	OK(cairn_txn_begin(st, &ro, &t));
	{
		cairn_resolve_options rs = {.text = "Dana", .exact = 1, .limit = 4};
		cairn_match mt[4];
		size_t nm;

		OK(cairn_resolve(t, &rs, mt, 4, &nm, NULL));
		CHECK(nm >= 1);
		memset(&cur, 0, sizeof(cur));
		OK(cairn_links(t, "Entity", mt[0].rec.key, mt[0].rec.key_len, CAIRN_OUT, "works_at", &cur,
			       l, 4, &n));
		CHECK(n == 1);
	}
	cairn_txn_end(t);
	/* Bad links: refused, nothing written. */
	head = test_head(st, "m");
	in.text = "something else entirely";
	in.links = "[{\"rel\":\"works_at\",\"from\":\"Dana\"}]";
	in.links_len = strlen(in.links);
	CHECK_RC(cairn_remember(st, &co, &in, 1, &out, &r), CAIRN_EINVAL);
	in.links = "[{\"rel\":\"nope\",\"from\":\"Dana\",\"to\":\"Acme\"}]";
	in.links_len = strlen(in.links);
	CHECK_RC(cairn_remember(st, &co, &in, 1, &out, &r), CAIRN_EUNKNOWNREL);
	in.links = "{}";
	in.links_len = 2;
	CHECK_RC(cairn_remember(st, &co, &in, 1, &out, &r), CAIRN_EINVAL);
	CHECK(test_head(st, "m") == head);
	cairn_close(st);
}
