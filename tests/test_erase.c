/*
 * Erasure (cairn_erase) and vacuum (cairn_vacuum): a marker written in a
 * Record's title and values across Versions and a branch, indexed every
 * way, is gone after erase and vacuum from every read and every byte of
 * every file of the store; other Records stay found by every index; the
 * hash chain verifies and cairn check is clean; history tells who erased,
 * when and why. The same by source and by actor; the errors; a crash in the
 * middle of an erasure, completed by the next run; a vacuum refused while
 * the store is open.
 */
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests.h"
#include "admin/admin.h"
#include "base/text.h"
#include "version/version.h"

#define MARK "zqxmarker7731"
#define EN 40	/* other Records */

static const char eschema[] =
	"{\"kinds\":[{\"name\":\"Note\",\"attributes\":["
	"{\"name\":\"code\",\"type\":\"string\",\"unique\":true},"
	"{\"name\":\"tag\",\"type\":\"string\",\"indexed\":true},"
	"{\"name\":\"nick\",\"type\":\"string\",\"alias\":true},"
	"{\"name\":\"body\",\"type\":\"string\",\"search\":true}]},"
	"{\"name\":\"Topic\",\"attributes\":[]}],"
	"\"relations\":[{\"name\":\"about\",\"from\":\"Note\",\"to\":\"Topic\","
	"\"cardinality\":\"many\"}]}";

/* Commit lines on branch (NULL: main) as actor from source. */
static int commit_as(cairn_store *st, const char *branch, const char *actor, const char *source,
		     const char *lines, uint64_t *rev)
{
	cairn_commit_options co = {0};
	cairn_commit_result res;
	cairn_changeset *cs;
	const char *p = lines;
	int rc;

	if ((rc = cairn_changeset_new(&cs)))
		return rc;
	while (*p && !rc) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);

		if (n)
			rc = cairn_changeset_add_json(cs, p, n);
		p += n + (nl != NULL);
	}
	co.domain = "e";
	co.branch = branch;
	co.prov.actor = actor;
	co.prov.source = source;
	if (!rc)
		rc = cairn_commit(st, &co, cs, &res);
	cairn_changeset_free(cs);
	if (!rc && rev)
		*rev = res.revision;
	return rc;
}

static cairn_store *erase_store(void)
{
	cairn_open_options o = {.flags = CAIRN_OPEN_CREATE | CAIRN_OPEN_NOSYNC |
					 CAIRN_OPEN_NO_BACKGROUND};
	cairn_commit_options co = {.domain = "e", .prov = {.actor = "test"}};
	cairn_store *st = NULL;

	if (cairn_open(test_path("store"), &o, &st) || cairn_domain_create(st, "e") ||
	    cairn_schema_apply(st, &co, eschema, strlen(eschema), NULL)) {
		fprintf(stderr, "    erase_store: %s\n", cairn_errmsg());
		cairn_close(st);
		return NULL;
	}
	return st;
}

/* The other Records: n0..n(EN-1), each with words, names, a tag and a vector; topics. */
static int others(cairn_store *st, const char *source)
{
	char *lines = malloc(EN * 300 + 200);
	size_t n = 0;
	int rc;

	if (!lines)
		return CAIRN_ENOMEM;
	n += (size_t)sprintf(lines + n, "{\"kind\":\"Topic\",\"key\":\"t1\",\"title\":\"Topic one\"}\n");
	for (int i = 0; i < EN; i++)
		n += (size_t)sprintf(lines + n,
				     "{\"kind\":\"Note\",\"key\":\"n%d\",\"title\":\"Ordinary walnut %d\","
				     "\"values\":{\"code\":\"C-%d\",\"tag\":\"plain\",\"nick\":\"walnut "
				     "nick %d\",\"body\":\"harmless body\"},\"vector\":[%d,%d,1,%d]}\n",
				     i, i, i, i, i % 5, (i * 3) % 7, i % 2);
	n += (size_t)sprintf(lines + n, "{\"rel\":\"about\",\"from\":\"Note:n1\",\"to\":\"Topic:t1\"}\n");
	rc = commit_as(st, NULL, "writer", source, lines, NULL);
	free(lines);
	return rc;
}

/* The secret Record: three Versions (two on main, one on branch b) and a Link. */
static int secret(cairn_store *st, const char *key, const char *source, uint64_t *r1)
{
	char l[1024];
	int rc;

	snprintf(l, sizeof(l),
		 "{\"kind\":\"Note\",\"key\":\"%s\",\"title\":\"Secret " MARK " one\","
		 "\"values\":{\"code\":\"" MARK "-c\",\"tag\":\"" MARK "t\",\"nick\":\"" MARK
		 " nick\",\"body\":\"told " MARK " privately\"},\"vector\":[9,9,9,9]}\n"
		 "{\"rel\":\"about\",\"from\":\"Note:%s\",\"to\":\"Topic:t1\"}\n",
		 key, key);
	if ((rc = commit_as(st, NULL, "agent", source, l, r1)))
		return rc;
	snprintf(l, sizeof(l),
		 "{\"kind\":\"Note\",\"key\":\"%s\",\"title\":\"Secret " MARK " two\","
		 "\"values\":{\"code\":\"" MARK "-c\",\"tag\":\"" MARK "t\",\"nick\":\"" MARK
		 " nick\",\"body\":\"again " MARK "\"},\"vector\":[9,9,8,9]}\n",
		 key);
	if ((rc = commit_as(st, NULL, "agent", source, l, NULL)))
		return rc;
	if ((rc = cairn_branch_create(st, "e", "b", NULL)) && rc != CAIRN_EEXIST)
		return rc;
	snprintf(l, sizeof(l),
		 "{\"kind\":\"Note\",\"key\":\"%s\",\"title\":\"Secret " MARK " branch\","
		 "\"values\":{\"code\":\"" MARK "-b\",\"tag\":\"" MARK "t\",\"nick\":\"" MARK
		 " nick\",\"body\":\"branch " MARK "\"},\"vector\":[9,8,9,9]}\n",
		 key);
	return commit_as(st, "b", "agent", source, l, NULL);
}

/* Does any file under dir hold the bytes of s? */
static int dir_has(const char *dir, const char *s)
{
	size_t sn = strlen(s);
	DIR *d = opendir(dir);
	struct dirent *e;
	int found = 0;

	if (!d)
		return -1;
	while (!found && (e = readdir(d))) {
		char p[1024];
		struct stat sb;

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
		if (stat(p, &sb))
			continue;
		if (S_ISDIR(sb.st_mode)) {
			found = dir_has(p, s) == 1;
		} else {
			FILE *f = fopen(p, "rb");
			char *b = f ? malloc((size_t)sb.st_size + 1) : NULL;
			size_t n = b ? fread(b, 1, (size_t)sb.st_size, f) : 0;

			for (size_t i = 0; b && i + sn <= n && !found; i++)
				found = b[i] == s[0] && memcmp(b + i, s, sn) == 0;
			free(b);
			if (f)
				fclose(f);
		}
	}
	closedir(d);
	return found;
}

static int searched(cairn_txn *t, const char *text, const char *key)
{
	cairn_search_options so = {.text = text, .limit = 50};
	cairn_hit h[50];
	size_t n = 0;

	if (cairn_search(t, &so, h, 50, &n, NULL))
		return -1;
	for (size_t i = 0; i < n; i++)
		if (key && h[i].rec.key_len == strlen(key) && !memcmp(h[i].rec.key, key, h[i].rec.key_len))
			return 1;
	return key ? 0 : (int)n;
}

static int resolved(cairn_txn *t, const char *text, const char *key)
{
	cairn_resolve_options ro = {.text = text, .limit = 20};
	cairn_match m[20];
	size_t n = 0;

	if (cairn_resolve(t, &ro, m, 20, &n, NULL))
		return -1;
	for (size_t i = 0; i < n; i++)
		if (key && m[i].rec.key_len == strlen(key) && !memcmp(m[i].rec.key, key, m[i].rec.key_len))
			return 1;
	return key ? 0 : (int)n;
}

static int queried(cairn_txn *t, const char *where)
{
	cairn_query_options q = {.kind = "Note", .where = where, .where_len = strlen(where)};
	cairn_query_result res;
	cairn_record r[50];

	if (cairn_query(t, &q, r, 50, &res))
		return -1;
	return (int)res.n;
}

/* Is key among the nearest Notes of the vector? */
static int nearest(cairn_txn *t, const float *v, const char *key)
{
	cairn_vsearch_options vo = {.vector = v, .dim = 4, .limit = 10};
	cairn_hit h[10];
	size_t n = 0;

	if (cairn_vsearch(t, &vo, h, 10, &n))
		return -1;
	for (size_t i = 0; i < n; i++)
		if (h[i].rec.key_len == strlen(key) && !memcmp(h[i].rec.key, key, h[i].rec.key_len))
			return 1;
	return 0;
}

static cairn_txn *reader(cairn_store *st, const char *branch, uint64_t at)
{
	cairn_read_options ro = {.domain = "e", .branch = branch, .at_revision = at};
	cairn_txn *t = NULL;

	if (cairn_txn_begin(st, &ro, &t))
		fprintf(stderr, "    reader: %s\n", cairn_errmsg());
	return t;
}

static void problem_print(void *ctx, const char *p)
{
	(void)ctx;
	fprintf(stderr, "    check: %s\n", p);
}

/* What every read of the other Records still answers. */
static void others_found(cairn_store *st, const char *branch)
{
	const float near5[4] = {0, 1, 1, 1};
	cairn_txn *t = reader(st, branch, 0);
	cairn_record r;
	uint64_t cnt;

	CHECK(t);
	if (!t)
		return;
	OK(cairn_get(t, "Note", "n5", 2, &r));
	CHECK(test_streq(r.title, r.title_len, "Ordinary walnut 5"));
	OK(cairn_count(t, "Note", &cnt));
	CHECK(cnt == EN);
	CHECK(searched(t, "walnut", "n7") == 1);
	CHECK(resolved(t, "walnut nick 9", "n9") == 1);
	CHECK(queried(t, "{\"code\":\"C-3\"}") == 1);
	CHECK(queried(t, "{\"tag\":\"plain\"}") == EN);
	CHECK(nearest(t, near5, "n5") == 1);
	cairn_txn_end(t);
}

static void erase_opts(cairn_erase_options *o)
{
	memset(o, 0, sizeof(*o));
	o->commit.domain = "e";
	o->commit.prov.actor = "dpo";
	o->commit.prov.message = "the user asked to be forgotten";
}

/* The secret reads as absent everywhere; its history shows the erasure. */
static void secret_gone(cairn_store *st, const char *key, uint64_t r1, uint64_t erase_rev)
{
	const float v[4] = {9, 9, 9, 9};
	const char *br[2] = {NULL, "b"};
	cairn_history_cursor hc = {0, 0};
	cairn_history_entry h[8];
	cairn_link_cursor lc;
	cairn_link l[8];
	cairn_record r;
	size_t n;
	cairn_txn *t;
	char *ex;

	for (int b = 0; b < 2; b++) {
		CHECK((t = reader(st, br[b], 0)) != NULL);
		if (!t)
			return;
		CHECK_RC(cairn_get(t, "Note", key, strlen(key), &r), CAIRN_ENOTFOUND);
		CHECK(searched(t, MARK, NULL) == 0);
		CHECK(searched(t, "secret", NULL) == 0);
		CHECK(resolved(t, MARK " nick", key) == 0);
		CHECK(queried(t, "{\"code\":\"" MARK "-c\"}") == 0);
		CHECK(queried(t, "{\"tag\":\"" MARK "t\"}") == 0);
		CHECK(nearest(t, v, key) == 0);
		memset(&lc, 0, sizeof(lc));
		OK(cairn_links(t, "Topic", "t1", 2, CAIRN_IN, NULL, &lc, l, 8, &n));
		CHECK(n == 1 && test_streq(l[0].from_key, l[0].from_key_len, "n1"));
		cairn_txn_end(t);
	}
	/* At a past revision, when it existed. */
	CHECK(!r1 || (t = reader(st, NULL, r1)) != NULL);
	if (r1 && t) {
		CHECK_RC(cairn_get(t, "Note", key, strlen(key), &r), CAIRN_ENOTFOUND);
		cairn_txn_end(t);
	}
	ex = test_export(st, "e");
	CHECK(ex && !strstr(ex, MARK) && strstr(ex, "walnut"));
	free(ex);
	/* History: its Versions, erased, by whom, when and why. */
	CHECK((t = reader(st, NULL, 0)) != NULL);
	if (!t)
		return;
	OK(cairn_history(t, "Note", key, strlen(key), &hc, h, 8, &n));
	CHECK(n == 2);
	for (size_t i = 0; i < n; i++) {
		CHECK(h[i].change == CAIRN_ERASED);
		CHECK(h[i].title_len == 0 && !strstr(h[i].values, MARK));
		CHECK(h[i].erased.type == CAIRN_REV_ERASE);
		CHECK(!erase_rev || h[i].erased.revision == erase_rev);
		CHECK(test_streq(h[i].erased.actor, h[i].erased.actor_len, "dpo"));
		CHECK(test_streq(h[i].erased.message, h[i].erased.message_len,
				 "the user asked to be forgotten"));
		CHECK(h[i].erased.time_ms > 0);
	}
	{
		cairn_revision lg[2];

		OK(cairn_log(t, 0, lg, 2, &n));
		CHECK(n >= 1 && lg[0].type == CAIRN_REV_ERASE);
		CHECK(!erase_rev || lg[0].revision == erase_rev);
		CHECK(!strcmp(cairn_revision_type_name(lg[0].type), "erase"));
	}
	cairn_txn_end(t);
}

void test_erase_record(void)
{
	cairn_vindex_options vo = {.lists = 2};
	cairn_erase_options eo;
	cairn_erase_result er;
	cairn_vacuum_result vr;
	cairn_check_report rep;
	cairn_vindex_info vi;
	cairn_store *st = erase_store();
	uint64_t r1 = 0;
	char dir[512];

	CHECK(st);
	if (!st)
		return;
	snprintf(dir, sizeof(dir), "%s", test_path("store"));
	OK(others(st, "notes"));
	OK(secret(st, "s1", "chat", &r1));
	OK(cairn_vindex_update(st, "e", &vo, &vi));
	CHECK(vi.vectors > 0);
	/* The marker is there to be found, by every read. */
	{
		cairn_txn *t = reader(st, NULL, 0);

		CHECK(t);
		CHECK(searched(t, MARK, "s1") == 1);
		CHECK(resolved(t, MARK " nick", "s1") == 1);
		CHECK(queried(t, "{\"code\":\"" MARK "-c\"}") == 1);
		cairn_txn_end(t);
	}
	CHECK(dir_has(dir, MARK) == 1);
	/* A dry run counts and writes nothing. */
	erase_opts(&eo);
	eo.kind = "Note";
	eo.key = "s1";
	eo.key_len = 2;
	eo.dry_run = 1;
	OK(cairn_erase(st, &eo, &er));
	CHECK(er.revision == 0 && er.records == 1 && er.links == 1 && er.versions == 4);
	{
		cairn_txn *t = reader(st, NULL, 0);

		CHECK(t && searched(t, MARK, "s1") == 1);
		cairn_txn_end(t);
	}
	eo.dry_run = 0;
	OK(cairn_erase(st, &eo, &er));
	CHECK(er.revision > r1 && er.records == 1 && er.links == 1 && er.versions == 4);
	CHECK(er.postings > 0 && er.attr_entries > 0 && er.vectors == 3 && er.lexicon_words > 0);
	CHECK(er.vindex_entries > 0 && er.index_entries >= er.postings + er.vectors);
	CHECK(er.transactions >= 2);
	secret_gone(st, "s1", r1, er.revision);
	others_found(st, NULL);
	others_found(st, "b");
	memset(&rep, 0, sizeof(rep));
	OK(cairn_check(st, "e", problem_print, NULL, &rep));
	CHECK(rep.unverifiable == 0 && rep.revisions >= 6);
	/* Nothing left to erase: said so, and nothing written. */
	CHECK_RC(cairn_erase(st, &eo, &er), CAIRN_ENOTFOUND);
	/* Erase alone leaves free pages; the vacuum refuses while the store is open. */
	CHECK_RC(cairn_vacuum(dir, &vr), CAIRN_ELOCKED);
	CHECK(strstr(cairn_errmsg(), "close it") != NULL);
	cairn_close(st);
	OK(cairn_vacuum(dir, &vr));
	CHECK(vr.bytes_before > 0 && vr.bytes_after > 0);
	CHECK(dir_has(dir, MARK) == 0);
	CHECK(dir_has(dir, "walnut") == 1); /* (the scan finds what is there) */
	/* The vacuumed store opens, checks clean, answers as before and takes commits. */
	{
		cairn_open_options o = {.flags = CAIRN_OPEN_NO_BACKGROUND};

		OK(cairn_open(dir, &o, &st));
		OK(cairn_check(st, "e", problem_print, NULL, NULL));
		others_found(st, NULL);
		secret_gone(st, "s1", r1, er.revision);
		/* The key can be written again: a new Record. */
		OK(commit_as(st, NULL, "agent", "chat",
			     "{\"kind\":\"Note\",\"key\":\"s1\",\"title\":\"Fresh start\"}", NULL));
		OK(cairn_check(st, "e", problem_print, NULL, NULL));
		cairn_close(st);
	}
}

/* By source: what "chat" wrote goes; what "notes" wrote about the same subject stays. */
void test_erase_source(void)
{
	cairn_erase_options eo;
	cairn_erase_result er;
	cairn_vacuum_result vr;
	cairn_store *st = erase_store();
	uint64_t r1 = 0;
	char dir[512];

	CHECK(st);
	if (!st)
		return;
	snprintf(dir, sizeof(dir), "%s", test_path("store"));
	OK(others(st, "notes"));
	OK(secret(st, "s2", "chat", &r1));
	/* "chat" also changed n3's body (n3 by "notes" stays, without chat's value). */
	OK(commit_as(st, NULL, "agent", "chat",
		     "{\"kind\":\"Note\",\"key\":\"n3\",\"title\":\"Ordinary walnut 3\","
		     "\"values\":{\"code\":\"C-3\",\"tag\":\"plain\",\"nick\":\"walnut nick 3\","
		     "\"body\":\"" MARK " from chat\"},\"vector\":[3,2,1,1]}", NULL));
	/* ... which "notes" then replaced: the later Version keeps n3 found. */
	OK(commit_as(st, NULL, "writer", "notes",
		     "{\"kind\":\"Note\",\"key\":\"n3\",\"title\":\"Ordinary walnut 3\","
		     "\"values\":{\"code\":\"C-3\",\"tag\":\"plain\",\"nick\":\"walnut nick 3\","
		     "\"body\":\"rewritten\"},\"vector\":[3,2,1,1]}", NULL));
	/* A Version by "notes" that still carries chat's body is erased too. */
	OK(commit_as(st, NULL, "agent", "chat",
		     "{\"kind\":\"Note\",\"key\":\"n4\",\"title\":\"Ordinary walnut 4\","
		     "\"values\":{\"code\":\"C-4\",\"tag\":\"plain\",\"nick\":\"walnut nick 4\","
		     "\"body\":\"" MARK " four\"},\"vector\":[4,5,1,0]}", NULL));
	OK(commit_as(st, NULL, "writer", "notes",
		     "{\"kind\":\"Note\",\"key\":\"n4\",\"op\":\"patch\",\"values\":{\"tag\":\"later\"}}",
		     NULL));
	erase_opts(&eo);
	eo.source = "chat";
	OK(cairn_erase(st, &eo, &er));
	/* s2 (3 Versions), its Link, n3's and n4's chat Versions and n4's later one. */
	CHECK(er.records == 3 && er.links == 1 && er.versions == 7);
	secret_gone(st, "s2", r1, er.revision);
	OK(cairn_check(st, "e", problem_print, NULL, NULL));
	{
		cairn_txn *t = reader(st, NULL, 0);
		cairn_record r;
		uint64_t cnt;

		CHECK(t);
		OK(cairn_get(t, "Note", "n3", 2, &r));
		CHECK(test_streq(r.values, r.values_len,
				 "{\"body\":\"rewritten\",\"code\":\"C-3\",\"nick\":\"walnut nick 3\","
				 "\"tag\":\"plain\"}"));
		/* n3's names and attribute entries came from the erased Version: re-added. */
		CHECK(resolved(t, "walnut nick 3", "n3") == 1);
		CHECK(queried(t, "{\"code\":\"C-3\"}") == 1);
		/* n4's current Version carried chat's value: erased, so n4 reads as absent. */
		CHECK_RC(cairn_get(t, "Note", "n4", 2, &r), CAIRN_ENOTFOUND);
		OK(cairn_count(t, "Note", &cnt));
		CHECK(cnt == EN - 1);
		cairn_txn_end(t);
	}
	cairn_close(st);
	OK(cairn_vacuum(dir, &vr));
	CHECK(dir_has(dir, MARK) == 0);
	{
		cairn_open_options o = {.flags = CAIRN_OPEN_NO_BACKGROUND};

		OK(cairn_open(dir, &o, &st));
		OK(cairn_check(st, "e", problem_print, NULL, NULL));
		cairn_close(st);
	}
}

/* By actor: the same through the revisions' actor. */
void test_erase_actor(void)
{
	cairn_erase_options eo;
	cairn_erase_result er;
	cairn_store *st = erase_store();
	uint64_t r1 = 0;

	CHECK(st);
	if (!st)
		return;
	OK(others(st, "notes"));
	OK(secret(st, "s3", "somewhere", &r1));
	erase_opts(&eo);
	eo.actor = "agent";
	OK(cairn_erase(st, &eo, &er));
	CHECK(er.records == 1 && er.links == 1 && er.versions == 4);
	secret_gone(st, "s3", r1, er.revision);
	others_found(st, NULL);
	OK(cairn_check(st, "e", problem_print, NULL, NULL));
	cairn_close(st);
}

/* Every bad input: a clear error, and the store unchanged (no revision). */
void test_erase_errors(void)
{
	cairn_erase_options eo;
	cairn_erase_result er;
	cairn_store *st = erase_store();
	uint64_t head;

	CHECK(st);
	if (!st)
		return;
	OK(others(st, "notes"));
	head = test_head(st, "e");
	CHECK_RC(cairn_erase(NULL, &eo, &er), CAIRN_EINVAL);
	CHECK_RC(cairn_erase(st, NULL, &er), CAIRN_EINVAL);
	erase_opts(&eo);
	CHECK_RC(cairn_erase(st, &eo, &er), CAIRN_EINVAL); /* no target */
	CHECK(strstr(cairn_errmsg(), "one target"));
	eo.source = "notes";
	eo.actor = "writer";
	CHECK_RC(cairn_erase(st, &eo, &er), CAIRN_EINVAL); /* two */
	erase_opts(&eo);
	eo.source = "";
	CHECK_RC(cairn_erase(st, &eo, &er), CAIRN_EINVAL);
	CHECK(strstr(cairn_errmsg(), "empty"));
	erase_opts(&eo);
	eo.source = "nobody-wrote-this";
	CHECK_RC(cairn_erase(st, &eo, &er), CAIRN_ENOTFOUND);
	erase_opts(&eo);
	eo.kind = "Note";
	eo.key = "missing";
	eo.key_len = 7;
	CHECK_RC(cairn_erase(st, &eo, &er), CAIRN_ENOTFOUND);
	CHECK(strstr(cairn_errmsg(), "Note:missing"));
	eo.kind = "Nope";
	CHECK_RC(cairn_erase(st, &eo, &er), CAIRN_EUNKNOWNKIND);
	eo.kind = "Note";
	eo.key = "n1";
	eo.key_len = 2;
	eo.commit.prov.actor = NULL;
	CHECK_RC(cairn_erase(st, &eo, &er), CAIRN_EINVAL);
	CHECK(strstr(cairn_errmsg(), "actor"));
	eo.commit.prov.actor = "dpo";
	eo.commit.prov.message = "";
	CHECK_RC(cairn_erase(st, &eo, &er), CAIRN_EINVAL);
	CHECK(strstr(cairn_errmsg(), "message"));
	eo.commit.prov.message = "why";
	eo.commit.branch = "b";
	CHECK_RC(cairn_erase(st, &eo, &er), CAIRN_EINVAL);
	eo.commit.branch = NULL;
	eo.commit.domain = "nodomain";
	CHECK_RC(cairn_erase(st, &eo, &er), CAIRN_ENODOMAIN);
	eo.commit.domain = "e";
	eo.reserved[1] = 1;
	CHECK_RC(cairn_erase(st, &eo, &er), CAIRN_EINVAL);
	CHECK(test_head(st, "e") == head);
	OK(cairn_check(st, "e", problem_print, NULL, NULL));
	{
		cairn_txn *t = reader(st, NULL, 0);
		cairn_record r;

		CHECK(t);
		OK(cairn_get(t, "Note", "n1", 2, &r));
		cairn_txn_end(t);
	}
	CHECK_RC(cairn_vacuum(NULL, NULL), CAIRN_EINVAL);
	CHECK_RC(cairn_vacuum(test_path("nothing-here"), NULL), CAIRN_ENOTFOUND);
	cairn_close(st);
}

/* The child of the crash test: erase by source, reporting each durable step. */
static int crash_fd;
static volatile int crash_stop_at;

static void crash_hook(void *ctx, int phase, long step)
{
	char line[64];
	int n = snprintf(line, sizeof(line), "step %ld phase %d\n", step, phase);

	(void)ctx;
	if (write(crash_fd, line, (size_t)n) != n)
		_exit(100);
	if (step == crash_stop_at)
		for (;;)
			pause(); /* durable: the parent kills us here */
}

void test_erase_crash(void)
{
	cairn_store *st = erase_store();
	char dir[512];
	int stops[3] = {1, 2, 4}, fails = 0;

	CHECK(st);
	if (!st)
		return;
	snprintf(dir, sizeof(dir), "%s", test_path("store"));
	cairn_close(st);
	for (int round = 0; round < 3; round++) {
		cairn_open_options o = {.flags = CAIRN_OPEN_NO_BACKGROUND};
		cairn_erase_options eo;
		cairn_erase_result er;
		char out[4096];
		size_t got = 0;
		int fds[2], status;
		pid_t pid;

		OK(cairn_open(dir, &o, &st));
		{
			char key[16];

			snprintf(key, sizeof(key), "c%d", round);
			OK(others(st, "notes"));
			OK(secret(st, key, "chat", NULL));
		}
		cairn_close(st);
		CHECK(pipe(fds) == 0);
		fflush(stderr);
		pid = fork();
		if (pid == 0) {
			close(fds[0]);
			crash_fd = fds[1];
			crash_stop_at = stops[round];
			if (cairn_open(dir, &o, &st))
				_exit(3);
			erase_step_hook = crash_hook;
			erase_opts(&eo);
			eo.source = "chat";
			cairn_erase(st, &eo, &er);
			_exit(4); /* (finished before the step: the parent says so) */
		}
		close(fds[1]);
		/* Wait for the step's report, then kill: the step is durable, the next is not begun. */
		for (;;) {
			char want[32];
			ssize_t r = read(fds[0], out + got, sizeof(out) - 1 - got);

			if (r <= 0)
				break;
			got += (size_t)r;
			out[got] = 0;
			snprintf(want, sizeof(want), "step %d ", stops[round]);
			if (strstr(out, want))
				break;
		}
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		close(fds[0]);
		CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
		fails += !(WIFSIGNALED(status));
		/* Interrupted: the store checks clean; the next erase completes it first. */
		OK(cairn_open(dir, &o, &st));
		OK(cairn_check(st, "e", problem_print, NULL, NULL));
		{
			cairn_erase_result rr;

			OK(cairn_erase_resume(st, "e", &rr));
			CHECK(rr.resumed == 1 && rr.versions > 0);
			OK(cairn_erase_resume(st, "e", &rr));
			CHECK(rr.resumed == 0 && rr.versions == 0); /* nothing left */
		}
		OK(cairn_check(st, "e", problem_print, NULL, NULL));
		{
			char key[16];

			snprintf(key, sizeof(key), "c%d", round);
			secret_gone(st, key, 0, 0);
		}
		cairn_close(st);
		OK(cairn_vacuum(dir, NULL));
		CHECK(dir_has(dir, MARK) == 0);
		/* The next round starts over in a fresh Domain. */
		OK(cairn_open(dir, &o, &st));
		OK(cairn_domain_drop(st, "e"));
		OK(cairn_domain_create(st, "e"));
		{
			cairn_commit_options co = {.domain = "e", .prov = {.actor = "test"}};

			OK(cairn_schema_apply(st, &co, eschema, strlen(eschema), NULL));
		}
		cairn_close(st);
	}
	CHECK(fails == 0);
}

/*
 * Make revision rev (the branch head) of revision format 1, as a store
 * written before format 11 has: its digest over each Version's bytes.
 */
static int to_format1(cairn_store *st, uint64_t rev)
{
	MDB_txn *txn;
	MDB_val v;
	uint32_t dom;
	kbuf k;
	rrec r;
	buf b = BUF_INIT;
	sha256_ctx h;
	branch_info bi;
	char name[CAIRN_MAX_BRANCH + 1];
	int rc;

	if ((rc = store_write_begin(st, &txn)))
		return rc;
	if ((rc = domain_id(txn, st, "e", &dom)))
		goto fail;
	key_u64(&k, dom, rev);
	if ((rc = db_get(txn, st, DB_REVS, k.b, k.n, &v)) || (rc = rrec_decode(v.mv_data, v.mv_size, &r)))
		goto fail;
	if (sha256_init(&h)) {
		rc = CAIRN_ENOMEM;
		goto fail;
	}
	for (uint64_t vid = r.first_vid; vid < r.first_vid + r.n_versions; vid++) {
		uint8_t vb[8];
		kbuf vk;
		MDB_val x;

		key_u64(&vk, dom, vid);
		if ((rc = db_get(txn, st, DB_VERSIONS, vk.b, vk.n, &x)))
			goto fail;
		be64_put(vb, vid);
		sha256_update(&h, vb, 8);
		sha256_update(&h, x.mv_data, x.mv_size);
	}
	sha256_final(&h, r.digest);
	r.format = 1;
	rrec_hash(dom, rev, &r, r.hash);
	rrec_encode(&r, &b);
	if ((rc = db_put(txn, st, DB_REVS, k.b, k.n, b.p, b.len, 0)) ||
	    (rc = branch_get(txn, st, dom, r.branch, &bi)))
		goto fail;
	memcpy(bi.head_hash, r.hash, 32);
	snprintf(name, sizeof(name), "%s", bi.name);
	if ((rc = branch_put(txn, st, dom, &bi, name)))
		goto fail;
	buf_release(&b);
	return store_write_commit(st, txn);
fail:
	buf_release(&b);
	store_write_abort(st, txn);
	return rc;
}

/* A format-1 revision holding an erased Version: its chain verifies, its digest is counted. */
void test_erase_format1(void)
{
	cairn_check_report rep;
	cairn_erase_options eo;
	cairn_erase_result er;
	cairn_store *st = erase_store();
	uint64_t r1 = 0, r2 = 0;

	CHECK(st);
	if (!st)
		return;
	OK(others(st, "notes"));
	OK(commit_as(st, NULL, "agent", "chat",
		     "{\"kind\":\"Note\",\"key\":\"old\",\"title\":\"Old " MARK "\"}", &r1));
	OK(to_format1(st, r1));
	OK(commit_as(st, NULL, "agent", "chat",
		     "{\"kind\":\"Note\",\"key\":\"old\",\"title\":\"Newer " MARK "\"}", &r2));
	memset(&rep, 0, sizeof(rep));
	OK(cairn_check(st, "e", problem_print, NULL, &rep));
	CHECK(rep.unverifiable == 0);
	erase_opts(&eo);
	eo.kind = "Note";
	eo.key = "old";
	eo.key_len = 3;
	OK(cairn_erase(st, &eo, &er));
	CHECK(er.versions == 2);
	memset(&rep, 0, sizeof(rep));
	OK(cairn_check(st, "e", problem_print, NULL, &rep));
	CHECK(rep.unverifiable == 1 && rep.problems == 0); /* r1; r2 (format 2) verifies */
	/* A stub whose kept hash is changed breaks its format-2 revision's digest. */
	{
		MDB_txn *txn;
		MDB_val v;
		uint32_t dom;
		kbuf k;
		rrec r;
		uint8_t copy[512];

		OK(store_write_begin(st, &txn));
		OK(domain_id(txn, st, "e", &dom));
		key_u64(&k, dom, r2);
		OK(db_get(txn, st, DB_REVS, k.b, k.n, &v));
		OK(rrec_decode(v.mv_data, v.mv_size, &r));
		key_u64(&k, dom, r.first_vid);
		OK(db_get(txn, st, DB_VERSIONS, k.b, k.n, &v));
		CHECK(v.mv_size <= sizeof(copy));
		memcpy(copy, v.mv_data, v.mv_size);
		copy[v.mv_size - 4] ^= 1; /* (the hash's last byte: one lineage pair of small varints follows) */
		OK(db_put(txn, st, DB_VERSIONS, k.b, k.n, copy, v.mv_size, 0));
		OK(store_write_commit(st, txn));
		CHECK_RC(cairn_check(st, "e", NULL, NULL, &rep), CAIRN_ECORRUPT);
	}
	cairn_close(st);
}

/* A Record with Versions on a branch deleted but not yet cleared: erased there too; clearing goes on. */
void test_erase_deleted_branch(void)
{
	cairn_erase_options eo;
	cairn_erase_result er;
	cairn_store *st = erase_store();
	uint64_t r1 = 0;
	int pending = 1;

	CHECK(st);
	if (!st)
		return;
	OK(others(st, "notes"));
	OK(secret(st, "s4", "chat", &r1));
	OK(cairn_branch_delete(st, "e", "b"));
	erase_opts(&eo);
	eo.kind = "Note";
	eo.key = "s4";
	eo.key_len = 2;
	OK(cairn_erase(st, &eo, &er));
	CHECK(er.versions == 4 && er.links == 1);
	OK(cairn_check(st, "e", problem_print, NULL, NULL));
	for (int i = 0; i < 100 && pending; i++)
		OK(cairn_store_maintain(st, 1000, &pending));
	CHECK(!pending);
	OK(cairn_check(st, "e", problem_print, NULL, NULL));
	others_found(st, NULL);
	cairn_close(st);
	OK(cairn_vacuum(test_path("store"), NULL));
	CHECK(dir_has(test_path("store"), MARK) == 0);
}
