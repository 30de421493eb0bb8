/*
 * Resolution: name_norm and name_distance against their contracts and a
 * reference edit distance; cairn_resolve on stores built here (exact,
 * folded, close spellings, prefixes, order, limit, Kinds, branches, past
 * revisions, deletes, Domains) and against a brute-force reading of its
 * rules on random titles; the alias schema flag and its backfill, branch
 * clearing and cairn_check of the names index; argument errors; and the
 * upgrade of a format 4 store.
 */
#include <lmdb.h>
#include <math.h>
#include <stdlib.h>

#include "model/norm.h"
#include "tests.h"
#include "base/text.h"

/* ------------------------------------------------------ name_norm -- */

/* Does name_norm(in) give want (both NUL-terminated)? Prints the difference. */
static int norm_is(const char *in, const char *want)
{
	char out[NAME_CAP + 8];
	size_t n;

	memset(out, 0x5a, sizeof(out));
	n = name_norm(in, strlen(in), out);
	if (n == strlen(want) && memcmp(out, want, n) == 0)
		return 1;
	fprintf(stderr, "    name_norm(\"%s\") gave \"%.*s\" (%zu bytes), expected \"%s\"\n", in,
		(int)(n <= NAME_CAP ? n : NAME_CAP), out, n, want);
	return 0;
}

void test_resolve_norm(void)
{
	char out[NAME_CAP + 8];

	/* Case. */
	CHECK(norm_is("HELLO", "hello"));
	CHECK(norm_is("HeLLo WoRLD", "hello world"));
	CHECK(norm_is("already lower", "already lower"));
	/* Accents, precomposed or combining. */
	CHECK(norm_is("Café", "cafe"));
	CHECK(norm_is("Cafe\xcc\x81", "cafe"));
	CHECK(norm_is("ÉRIC naïve", "eric naive"));
	CHECK(norm_is("Müller-Lüdenscheidt GmbH.", "muller ludenscheidt gmbh"));
	CHECK(norm_is("Straße", "strasse"));
	CHECK(norm_is("STRASSE", "strasse"));
	CHECK(norm_is("Ångström", "angstrom"));
	CHECK(norm_is("Øresund", "øresund")); /* Ø has no decomposition: it stays, lowercased */
	CHECK(norm_is("İstanbul", "istanbul"));
	/* Ligatures and compatibility forms. */
	CHECK(norm_is("\xef\xac\x81nance", "finance")); /* ﬁ */
	CHECK(norm_is("\xef\xbc\xa1\xef\xbc\xa2\xef\xbc\xa3\xef\xbc\x91\xef\xbc\x92",
		      "abc12"));			   /* ＡＢＣ１２ */
	CHECK(norm_is("Louis \xe2\x85\xab", "louis xii")); /* Ⅻ */
	CHECK(norm_is("x\xc2\xb2", "x2"));		   /* x² */
	CHECK(norm_is("Acme\xe2\x84\xa2", "acmetm"));	   /* ™ is T M */
	CHECK(norm_is("\xef\xbd\xb6", "\xe3\x82\xab"));	   /* half-width ｶ -> カ */
	/* Punctuation, spacing runs, trimming; ignorable characters vanish. */
	CHECK(norm_is("  --Hello,,   World!!  ", "hello world"));
	CHECK(norm_is("a\tb\nc", "a b c"));
	CHECK(norm_is("a_b.c/d", "a b c d"));
	CHECK(norm_is("PL-3704", "pl 3704"));
	CHECK(norm_is("\xe2\x80\x94\xc2\xa0x\xe2\x80\x94\xc2\xa0", "x")); /* em dash, NBSP */
	CHECK(norm_is("M\xc3\xbcl\xc2\xadler", "muller"));		  /* soft hyphen */
	/* Other scripts are kept, lowercased where they have case. */
	CHECK(norm_is("ΑΘΗΝΑ", "αθηνα"));
	CHECK(norm_is("Ἀθῆναι", "αθηναι"));
	CHECK(norm_is("ΟΔΟΣ", "οδοσ"));
	CHECK(norm_is("οδός", "οδοσ"));
	CHECK(norm_is("МОСКВА", "москва"));
	CHECK(norm_is("Санкт-Петербург", "санкт петербург"));
	CHECK(norm_is("東京", "東京"));
	CHECK(norm_is("北京市 東京", "北京市 東京"));
	CHECK(norm_is("שלום", "שלום"));
	CHECK(norm_is("مرحبا", "مرحبا"));
	CHECK(norm_is("\xf0\xa0\x80\x80x", "\xf0\xa0\x80\x80x")); /* U+20000, 4 bytes */
	/* Nothing left. */
	CHECK(norm_is("", ""));
	CHECK(norm_is("!!!", ""));
	CHECK(norm_is("   ", ""));
	CHECK(norm_is("\xcc\x81", ""));			       /* a lone combining accent */
	CHECK(norm_is("\xc2\xad", ""));			       /* a soft hyphen */
	CHECK(norm_is("\xe2\x82\xac + \xf0\x9f\x98\x80", "")); /* symbols: €, +, an emoji */
	CHECK(name_norm("abc", 0, out) == 0);
	/* Invalid UTF-8: the bad bytes are skipped. */
	CHECK(norm_is("a\xff\x62", "ab")); /* a, 0xff, b */
	CHECK(norm_is("ab\xc3", "ab"));
	CHECK(norm_is("\xc3(x", "x"));
	CHECK(norm_is("a\xc3(b", "a b"));
	CHECK(norm_is("\xed\xa0\x80z", "z"));	      /* an encoded surrogate */
	CHECK(norm_is("\xc0\xafx", "x"));	      /* an overlong '/' */
	CHECK(norm_is("\xf8\x88\x80\x80\x80y", "y")); /* a 5-byte form */
	/* The length given is honored, NULs included. */
	CHECK(name_norm("ab\0cd", 5, out) == 5 && memcmp(out, "ab cd", 5) == 0);
	CHECK(name_norm("abcdef", 3, out) == 3 && memcmp(out, "abc", 3) == 0);

	/* NAME_CAP: the cut is at a character boundary and keeps a prefix. */
	{
		char in[600], want[NAME_CAP + 1];
		size_t n;

		memset(in, 'A', 250);
		in[250] = '\0';
		memset(want, 'a', NAME_CAP);
		want[NAME_CAP] = '\0';
		CHECK(norm_is(in, want));
		/* 199 letters, then é (1 byte once stripped) fits exactly. */
		memset(in, 'a', 199);
		strcpy(in + 199, "\xc3\xa9xyz");
		memset(want, 'a', 199);
		strcpy(want + 199, "e");
		CHECK(norm_is(in, want));
		/* 199 letters, then ж (2 bytes): not cut in the middle of it. */
		memset(in, 'a', 199);
		strcpy(in + 199, "\xd0\xb6");
		memset(want, 'a', 199);
		want[199] = '\0';
		CHECK(norm_is(in, want));
		/* 198 letters, a separator, then a letter: the space would be the last byte. */
		memset(in, 'a', 198);
		strcpy(in + 198, "--x");
		memset(want, 'a', 198);
		want[198] = ' ';
		want[199] = 'x';
		want[200] = '\0';
		CHECK(norm_is(in, want));
		memset(in, 'a', 199);
		strcpy(in + 199, "--x");
		memset(want, 'a', 199);
		want[199] = '\0';
		CHECK(norm_is(in, want));
		/* A long run of separators is one space. */
		strcpy(in, "a");
		memset(in + 1, '.', 400);
		strcpy(in + 401, "b");
		CHECK(norm_is(in, "a b"));
		/* 3-byte letters: 66 fit (198 bytes), the 67th does not. */
		in[0] = '\0';
		for (int i = 0; i < 80; i++)
			strcat(in, "\xe6\x9d\xb1"); /* 東 */
		n = name_norm(in, strlen(in), out);
		CHECK(n == 198 && memcmp(out, in, 198) == 0);
	}

	/* Whatever the input, at most NAME_CAP bytes of valid UTF-8. */
	{
		static const char *const pieces[] = {"a",
						     "Z",
						     "7",
						     " ",
						     "-",
						     "\xd0\x96",
						     "\xce\xb1",
						     "\xc3\xa9",
						     "\xe6\x9d\xb1",
						     "\xef\xac\x83",
						     "\xf0\xa0\x80\x80",
						     "\xff",
						     "\xcc\x81"};
		char in[1200];

		srand(5);
		for (int iter = 0; iter < 300; iter++) {
			size_t len = 0, n;

			while (len < 300) {
				const char *p = pieces[rand() % 13];

				memcpy(in + len, p, strlen(p));
				len += strlen(p);
			}
			memset(out, 0x5a, sizeof(out));
			n = name_norm(in, len, out);
			CHECK(n <= NAME_CAP && utf8_valid(out, n) &&
			      (unsigned char)out[NAME_CAP] == 0x5a);
			CHECK(n == 0 || (out[0] != ' ' && out[n - 1] != ' '));
			CHECK(!memmem(out, n, "  ", 2));
		}
	}
}

/*
 * The cut at NAME_CAP keeps a prefix of the whole normalized name: a
 * character that does not fit ends the name, and nothing after it is kept.
 */
void test_resolve_norm_cap(void)
{
	char in[1200], want[NAME_CAP + 1], out[NAME_CAP + 8];

	memset(in, 'a', 199);
	strcpy(in + 199, "\xd0\xb6\x62"); /* ж, b */
	memset(want, 'a', 199);
	want[199] = '\0';
	CHECK(norm_is(in, want));

	/*
	 * Random strings of letters that normalize to themselves (1 to 4 bytes
	 * each), longer than the cap: the result is always the longest whole
	 * prefix that fits.
	 */
	{
		static const char *const letters[] = {"a",
						      "z",
						      "7",
						      "\xd0\xb6",
						      "\xce\xb1",
						      "\xe6\x9d\xb1",
						      "\xe3\x82\xab",
						      "\xf0\xa0\x80\x80"};

		srand(7);
		for (int iter = 0; iter < 300; iter++) {
			size_t len = 0, whole = 0, n;

			while (len < 260) {
				const char *l = letters[rand() % 8];
				size_t ln = strlen(l);

				memcpy(in + len, l, ln);
				len += ln;
				if (len <= NAME_CAP)
					whole = len;
			}
			n = name_norm(in, len, out);
			CHECK(n <= NAME_CAP && utf8_valid(out, n));
			if (n != whole || memcmp(out, in, n) != 0) {
				fprintf(stderr,
					"    iteration %d: %zu bytes kept, expected the first "
					"%zu\n",
					iter, n, whole);
				CHECK(n == whole && memcmp(out, in, n) == 0);
			}
		}
	}
}

/* -------------------------------------------------- name_distance -- */

static unsigned dist(const char *a, const char *b, unsigned max)
{
	return name_distance(a, strlen(a), b, strlen(b), max);
}

void test_resolve_distance(void)
{
	/* Each kind of edit. */
	CHECK(dist("", "", 2) == 0);
	CHECK(dist("abc", "abc", 0) == 0);
	CHECK(dist("abc", "abxc", 2) == 1);  /* insertion */
	CHECK(dist("abcd", "abd", 2) == 1);  /* deletion */
	CHECK(dist("abc", "abd", 2) == 1);   /* substitution */
	CHECK(dist("abcd", "abdc", 2) == 1); /* transposition */
	CHECK(dist("ca", "ac", 2) == 1);
	CHECK(dist("lindqvist", "lindqvsit", 2) == 1);
	CHECK(dist("abcdef", "badcfe", 5) == 3);
	CHECK(dist("kitten", "sitting", 5) == 3);
	CHECK(dist("", "abc", 5) == 3);
	CHECK(dist("abc", "", 5) == 3);
	CHECK(dist("flaw", "lawn", 5) == 2);
	/* Symmetric. */
	CHECK(dist("sitting", "kitten", 5) == 3);
	CHECK(dist("abdc", "abcd", 2) == 1);
	/* The cap: max + 1 whenever the distance is over it. */
	CHECK(dist("abcdef", "uvwxyz", 2) == 3);
	CHECK(dist("abcdef", "uvwxyz", 6) == 6);
	CHECK(dist("abc", "abcdef", 2) == 3); /* lengths alone are too far apart */
	CHECK(dist("abc", "abcde", 2) == 2);
	CHECK(dist("a", "b", 0) == 1);
	CHECK(dist("kitten", "sitting", 2) == 3);
	CHECK(dist("kitten", "sitting", 1) == 2);
	CHECK(dist("kitten", "sitting", 3) == 3);
	/* Bytes: an accent that is not stripped counts by its bytes. */
	CHECK(dist("\xd0\xb6", "\xd0\xb7", 2) == 1);
	/* Against the reference, on short strings of a small alphabet and every cap. */
	srand(11);
	for (int iter = 0; iter < 4000; iter++) {
		char a[16], b[16];
		size_t an = (size_t)(rand() % 13), bn = (size_t)(rand() % 13);
		unsigned max = (unsigned)(rand() % 5), want, got;

		for (size_t i = 0; i < an; i++)
			a[i] = (char)('a' + rand() % 3);
		for (size_t i = 0; i < bn; i++)
			b[i] = (char)('a' + rand() % 3);
		want = test_osa(a, an, b, bn);
		if (want > max)
			want = max + 1;
		got = name_distance(a, an, b, bn, max);
		if (got != want) {
			fprintf(stderr, "    \"%.*s\" \"%.*s\" max %u: %u, expected %u\n", (int)an,
				a, (int)bn, b, max, got, want);
			CHECK(got == want);
		}
	}
	/* Names as long as the cap. */
	{
		char a[NAME_CAP], b[NAME_CAP];

		memset(a, 'q', sizeof(a));
		memcpy(b, a, sizeof(b));
		CHECK(name_distance(a, sizeof(a), b, sizeof(b), 2) == 0);
		b[100] = 'r';
		b[150] = 's';
		CHECK(name_distance(a, sizeof(a), b, sizeof(b), 2) == 2);
		CHECK(name_distance(a, sizeof(a), b, sizeof(b), 1) == 2);
		CHECK(name_distance(a, sizeof(a), b, sizeof(b) - 1, 2) == 3);
	}
}

/* ------------------------------------------------------- the store -- */

static const char rschema[] =
	"{\"kinds\":["
	"{\"name\":\"Supplier\",\"attributes\":["
	"{\"name\":\"vat\",\"type\":\"string\",\"unique\":true},"
	"{\"name\":\"aka\",\"type\":\"strings\",\"alias\":true},"
	"{\"name\":\"nick\",\"type\":\"string\",\"alias\":true},"
	"{\"name\":\"note\",\"type\":\"string\"},"
	"{\"name\":\"code\",\"type\":\"string\"},"
	"{\"name\":\"tags\",\"type\":\"strings\"},"
	"{\"name\":\"rating\",\"type\":\"int\"}]},"
	"{\"name\":\"Part\",\"attributes\":["
	"{\"name\":\"sku\",\"type\":\"string\",\"unique\":true}]},"
	"{\"name\":\"Plant\",\"attributes\":[{\"name\":\"city\",\"type\":\"string\"}]}],"
	"\"relations\":[{\"name\":\"supplied_by\",\"from\":\"Part\",\"to\":\"Supplier\"}]}";

static int open_store(unsigned flags, cairn_store **st)
{
	cairn_open_options o = {.flags = flags | CAIRN_OPEN_NOSYNC | CAIRN_OPEN_NO_BACKGROUND};

	return cairn_open(test_path("store"), &o, st);
}

static int apply_schema(cairn_store *st, const char *json)
{
	cairn_commit_options co = {0};

	co.domain = "d";
	co.prov.actor = "test";
	return cairn_schema_apply(st, &co, json, strlen(json), NULL);
}

/* A new store with Domain d and rschema, or NULL (the reason printed). */
static cairn_store *rstore(void)
{
	cairn_store *st = NULL;

	if (open_store(CAIRN_OPEN_CREATE, &st) || cairn_domain_create(st, "d") ||
	    apply_schema(st, rschema)) {
		fprintf(stderr, "    rstore: %s\n", cairn_errmsg());
		cairn_close(st);
		return NULL;
	}
	return st;
}

/* Commit import lines on a branch of Domain d (NULL: main); *rev gets the revision. */
static int put_on(cairn_store *st, const char *branch, const char *lines, uint64_t *rev)
{
	cairn_commit_result res;
	int rc = test_commit_on(st, "d", branch, lines, &res);

	if (!rc && rev)
		*rev = res.revision;
	return rc;
}

/* What a resolution returned, copied out of its transaction. */
typedef struct hit {
	char kind[CAIRN_MAX_NAME + 1];
	char key[CAIRN_MAX_KEY + 1];
	char title[512];
	char attr[CAIRN_MAX_NAME + 1];
	int has_attr;
	char reason[256];
	double score;
	int source, match;
	unsigned edits;
	uint64_t vid, revision;
} hit;

typedef struct answer {
	size_t n;
	int truncated;
	int sane; /* the invariants every answer keeps held */
	hit h[100];
} answer;

static answer R;

/* Does Record b come after a: by Kind name, then key bytes (a shorter one first)? */
static int ref_after(const cairn_record *a, const cairn_record *b)
{
	size_t n = a->key_len < b->key_len ? a->key_len : b->key_len;
	int c = strcmp(a->kind, b->kind);

	if (c)
		return c < 0;
	c = memcmp(a->key, b->key, n);
	return c ? c < 0 : a->key_len < b->key_len;
}

/* Copy the answer and check what holds for every answer. */
static void take(answer *r, const cairn_match *m, size_t n)
{
	r->n = n;
	r->sane = 1;
	for (size_t i = 0; i < n && i < 100; i++) {
		hit *h = &r->h[i];
		const char *why = NULL;

		memset(h, 0, sizeof(*h));
		snprintf(h->kind, sizeof(h->kind), "%s", m[i].rec.kind ? m[i].rec.kind : "(null)");
		snprintf(h->key, sizeof(h->key), "%.*s", (int)m[i].rec.key_len, m[i].rec.key);
		snprintf(h->title, sizeof(h->title), "%.*s", (int)m[i].rec.title_len,
			 m[i].rec.title ? m[i].rec.title : "");
		h->has_attr = m[i].attr != NULL;
		snprintf(h->attr, sizeof(h->attr), "%s", m[i].attr ? m[i].attr : "");
		snprintf(h->reason, sizeof(h->reason), "%s", m[i].reason ? m[i].reason : "(null)");
		h->score = m[i].score;
		h->source = m[i].source;
		h->match = m[i].match;
		h->edits = m[i].edits;
		h->vid = m[i].rec.vid;
		h->revision = m[i].rec.revision;
		if (!(m[i].score > 0 && m[i].score <= 1))
			why = "score outside (0, 1]";
		else if (i && m[i].score > m[i - 1].score)
			why = "not best first";
		else if (i && m[i].score == m[i - 1].score && !ref_after(&m[i - 1].rec, &m[i].rec))
			why = "equal scores not by Kind, then key";
		else if (!m[i].reason)
			why = "no reason";
		else if (m[i].source < CAIRN_NAME_KEY || m[i].source > CAIRN_NAME_ALIAS ||
			 m[i].match < CAIRN_MATCH_EXACT || m[i].match > CAIRN_MATCH_PREFIX)
			why = "source or match out of range";
		else if ((m[i].attr != NULL) !=
			 (m[i].source == CAIRN_NAME_UNIQUE || m[i].source == CAIRN_NAME_ALIAS))
			why = "attr set for a key or title, or missing for an attribute";
		else if ((m[i].match == CAIRN_MATCH_SPELLING) != (m[i].edits > 0) || m[i].edits > 2)
			why = "edits do not go with the match";
		for (size_t j = 0; j < i && !why; j++)
			if (m[j].rec.vid == m[i].rec.vid)
				why = "a Record comes twice";
		if (why) {
			fprintf(stderr, "    answer %zu (%s:%s, \"%s\"): %s\n", i, h->kind, h->key,
				h->reason, why);
			r->sane = 0;
		}
	}
}

/* Resolve with options o on a branch (NULL: main) at a revision (0: head). */
static int resolve_at(cairn_store *st, const char *branch, uint64_t at,
		      const cairn_resolve_options *o, answer *r)
{
	cairn_read_options ro = {0};
	cairn_match m[100];
	cairn_txn *t;
	size_t n = 12345;
	int rc, tr = 7;

	memset(r, 0, sizeof(*r));
	ro.domain = "d";
	ro.branch = branch;
	ro.at_revision = at;
	if ((rc = cairn_txn_begin(st, &ro, &t)))
		return rc;
	rc = cairn_resolve(t, o, m, 100, &n, &tr);
	if (!rc) {
		take(r, m, n);
		r->truncated = tr;
		if (tr != 0 && tr != 1) {
			fprintf(stderr, "    truncated is %d\n", tr);
			r->sane = 0;
		}
	} else if (n != 0) {
		fprintf(stderr, "    *n is %zu after an error\n", n);
		rc = -1000;
	}
	cairn_txn_end(t);
	return rc;
}

/* Resolve text with the default options. */
static int resolve_text(cairn_store *st, const char *branch, uint64_t at, const char *text,
			answer *r)
{
	cairn_resolve_options o = {0};

	o.text = text;
	return resolve_at(st, branch, at, &o, r);
}

#define RESOLVE(st, text)                                                                          \
	do {                                                                                       \
		OK(resolve_text((st), NULL, 0, (text), &R));                                       \
		CHECK(R.sane);                                                                     \
	} while (0)

#define RESOLVE_IN(st, branch, at, text)                                                           \
	do {                                                                                       \
		OK(resolve_text((st), (branch), (at), (text), &R));                                \
		CHECK(R.sane);                                                                     \
	} while (0)

#define RESOLVE_O(st, o)                                                                           \
	do {                                                                                       \
		OK(resolve_at((st), NULL, 0, (o), &R));                                            \
		CHECK(R.sane);                                                                     \
	} while (0)

/* Index of Record kind:key in the answer, or -1. */
static int at_of(const answer *r, const char *kind, const char *key)
{
	for (size_t i = 0; i < r->n; i++)
		if (strcmp(r->h[i].kind, kind) == 0 && strcmp(r->h[i].key, key) == 0)
			return (int)i;
	return -1;
}

/* Is answer i Record kind:key, matched this way? */
static int is_hit(const answer *r, size_t i, const char *kind, const char *key, int source,
		  int match, const char *attr)
{
	const hit *h = &r->h[i];

	if (i < r->n && strcmp(h->kind, kind) == 0 && strcmp(h->key, key) == 0 &&
	    h->source == source && h->match == match &&
	    (attr ? h->has_attr && strcmp(h->attr, attr) == 0 : !h->has_attr))
		return 1;
	fprintf(stderr,
		"    answer %zu of %zu: %s:%s source %d match %d attr %s (\"%s\"), expected %s:%s "
		"source %d match %d attr %s\n",
		i, r->n, i < r->n ? h->kind : "-", i < r->n ? h->key : "-",
		i < r->n ? h->source : 0, i < r->n ? h->match : 0,
		i < r->n && h->has_attr ? h->attr : "NULL", i < r->n ? h->reason : "", kind, key,
		source, match, attr ? attr : "NULL");
	return 0;
}

static void dump(const answer *r)
{
	for (size_t i = 0; i < r->n; i++)
		fprintf(stderr, "      %zu: %s:%s \"%s\" %.3f %s\n", i, r->h[i].kind, r->h[i].key,
			r->h[i].title, r->h[i].score, r->h[i].reason);
}

/* The answer has exactly n Records (dumped when not). */
static int count_is(const answer *r, size_t n)
{
	if (r->n == n)
		return 1;
	fprintf(stderr, "    %zu answers, expected %zu:\n", r->n, n);
	dump(r);
	return 0;
}

static int reason_is(const answer *r, size_t i, const char *want)
{
	if (i < r->n && strcmp(r->h[i].reason, want) == 0)
		return 1;
	fprintf(stderr, "    reason of answer %zu: \"%s\", expected \"%s\"\n", i,
		i < r->n ? r->h[i].reason : "-", want);
	return 0;
}

static int feq(double a, double b)
{
	return fabs(a - b) < 1e-9;
}

/* ---------------------------------------------------------- exact -- */

static const char exact_data[] =
	"{\"kind\":\"Supplier\",\"key\":\"mueller\",\"title\":\"Müller-Lüdenscheidt GmbH\","
	"\"values\":{\"vat\":\"DE123456789\",\"aka\":[\"Muller Group\",\"MLG Holding\"],"
	"\"nick\":\"Mülli\",\"note\":\"Secret Name\",\"tags\":[\"zebra crossing\"]}}\n"
	"{\"kind\":\"Part\",\"key\":\"P-100\",\"title\":\"Hex Bolt "
	"M8\",\"values\":{\"sku\":\"HB-M8-100\"}}\n"
	"{\"kind\":\"Plant\",\"key\":\"berlin\",\"title\":\"Werk "
	"Spandau\",\"values\":{\"city\":\"Hamburg\"}}\n"
	"{\"kind\":\"Supplier\",\"key\":\"a-4\",\"title\":\"Acme\",\"values\":{\"aka\":[\"ACME\","
	"\"Acme Inc\"]}}\n"
	"{\"kind\":\"Plant\",\"key\":\"Nord\",\"title\":\"Werk Eins\"}\n"
	"{\"kind\":\"Supplier\",\"key\":\"n-2\",\"title\":\"nord\"}\n"
	"{\"kind\":\"Supplier\",\"key\":\"n-3\",\"title\":\"Werk "
	"Drei\",\"values\":{\"aka\":[\"NORD\"]}}\n"
	"{\"kind\":\"Supplier\",\"key\":\"v-1\",\"title\":\"Vega\",\"values\":{\"vat\":\"Orion\"}}"
	"\n"
	"{\"kind\":\"Supplier\",\"key\":\"v-2\",\"title\":\"Orion\"}";

void test_resolve_exact(void)
{
	cairn_store *st = rstore();
	double key_exact, key_folded, title_exact, title_folded, uniq_exact, uniq_folded,
		alias_exact, alias_folded;

	CHECK(st);
	OK(put_on(st, NULL, exact_data, NULL));

	/* The key, byte for byte. */
	RESOLVE(st, "mueller");
	CHECK(count_is(&R, 1));
	CHECK(is_hit(&R, 0, "Supplier", "mueller", CAIRN_NAME_KEY, CAIRN_MATCH_EXACT, NULL));
	CHECK(feq(R.h[0].score, 1.0) && R.h[0].edits == 0);
	CHECK(reason_is(&R, 0, "key"));
	CHECK(strcmp(R.h[0].title, "Müller-Lüdenscheidt GmbH") == 0 && R.h[0].vid &&
	      R.h[0].revision);
	CHECK(R.truncated == 0);
	key_exact = R.h[0].score;
	/* The key, folded. */
	RESOLVE(st, "MUELLER");
	CHECK(count_is(&R, 1));
	CHECK(is_hit(&R, 0, "Supplier", "mueller", CAIRN_NAME_KEY, CAIRN_MATCH_FOLDED, NULL));
	CHECK(reason_is(&R, 0, "key, ignoring case and accents"));
	key_folded = R.h[0].score;
	CHECK(key_folded < key_exact);
	RESOLVE(st, "Berlin"); /* a key; the Plant's city is not a name */
	CHECK(count_is(&R, 1));
	CHECK(is_hit(&R, 0, "Plant", "berlin", CAIRN_NAME_KEY, CAIRN_MATCH_FOLDED, NULL));

	/* The title. */
	RESOLVE(st, "Müller-Lüdenscheidt GmbH");
	CHECK(count_is(&R, 1));
	CHECK(is_hit(&R, 0, "Supplier", "mueller", CAIRN_NAME_TITLE, CAIRN_MATCH_EXACT, NULL));
	CHECK(reason_is(&R, 0, "title"));
	title_exact = R.h[0].score;
	RESOLVE(st, "muller ludenscheidt gmbh");
	CHECK(count_is(&R, 1));
	CHECK(is_hit(&R, 0, "Supplier", "mueller", CAIRN_NAME_TITLE, CAIRN_MATCH_FOLDED, NULL));
	CHECK(reason_is(&R, 0, "title, ignoring case and accents"));
	title_folded = R.h[0].score;
	RESOLVE(st, "  MÜLLER lüdenscheidt, GMBH!");
	CHECK(count_is(&R, 1) && feq(R.h[0].score, title_folded));

	/* A unique string attribute. */
	RESOLVE(st, "DE123456789");
	CHECK(count_is(&R, 1));
	CHECK(is_hit(&R, 0, "Supplier", "mueller", CAIRN_NAME_UNIQUE, CAIRN_MATCH_EXACT, "vat"));
	CHECK(reason_is(&R, 0, "unique vat"));
	uniq_exact = R.h[0].score;
	RESOLVE(st, "de123456789");
	CHECK(count_is(&R, 1));
	CHECK(is_hit(&R, 0, "Supplier", "mueller", CAIRN_NAME_UNIQUE, CAIRN_MATCH_FOLDED, "vat"));
	CHECK(reason_is(&R, 0, "unique vat, ignoring case and accents"));
	uniq_folded = R.h[0].score;
	RESOLVE(st, "HB-M8-100");
	CHECK(count_is(&R, 1));
	CHECK(is_hit(&R, 0, "Part", "P-100", CAIRN_NAME_UNIQUE, CAIRN_MATCH_EXACT, "sku"));
	RESOLVE(st, "hb m8 100");
	CHECK(count_is(&R, 1));
	CHECK(is_hit(&R, 0, "Part", "P-100", CAIRN_NAME_UNIQUE, CAIRN_MATCH_FOLDED, "sku"));

	/* Aliases: every value of a strings alias, and a string alias. */
	RESOLVE(st, "MLG Holding");
	CHECK(count_is(&R, 1));
	CHECK(is_hit(&R, 0, "Supplier", "mueller", CAIRN_NAME_ALIAS, CAIRN_MATCH_EXACT, "aka"));
	CHECK(reason_is(&R, 0, "alias aka"));
	alias_exact = R.h[0].score;
	RESOLVE(st, "Muller Group");
	CHECK(count_is(&R, 1));
	CHECK(is_hit(&R, 0, "Supplier", "mueller", CAIRN_NAME_ALIAS, CAIRN_MATCH_EXACT, "aka"));
	RESOLVE(st, "mlg-holding");
	CHECK(count_is(&R, 1));
	CHECK(is_hit(&R, 0, "Supplier", "mueller", CAIRN_NAME_ALIAS, CAIRN_MATCH_FOLDED, "aka"));
	CHECK(reason_is(&R, 0, "alias aka, ignoring case and accents"));
	alias_folded = R.h[0].score;
	RESOLVE(st, "Mülli");
	CHECK(count_is(&R, 1));
	CHECK(is_hit(&R, 0, "Supplier", "mueller", CAIRN_NAME_ALIAS, CAIRN_MATCH_EXACT, "nick"));
	CHECK(reason_is(&R, 0, "alias nick"));
	RESOLVE(st, "MULLI");
	CHECK(count_is(&R, 1));
	CHECK(is_hit(&R, 0, "Supplier", "mueller", CAIRN_NAME_ALIAS, CAIRN_MATCH_FOLDED, "nick"));

	/* Values of attributes that are not names resolve nothing. */
	RESOLVE(st, "Secret Name");
	CHECK(count_is(&R, 0));
	RESOLVE(st, "zebra crossing");
	CHECK(count_is(&R, 0));
	RESOLVE(st, "Hamburg");
	CHECK(count_is(&R, 0));

	/* The documented order: exact (key, unique, title, alias), then folded. */
	CHECK(key_exact > uniq_exact && uniq_exact > title_exact && title_exact > alias_exact);
	CHECK(alias_exact > key_folded);
	CHECK(key_folded > uniq_folded && uniq_folded > title_folded &&
	      title_folded > alias_folded);
	CHECK(uniq_folded < uniq_exact && title_folded < title_exact && alias_folded < alias_exact);

	/* A Record comes once, with its best reason. */
	RESOLVE(st, "ACME"); /* alias exact beats title folded */
	CHECK(count_is(&R, 1));
	CHECK(is_hit(&R, 0, "Supplier", "a-4", CAIRN_NAME_ALIAS, CAIRN_MATCH_EXACT, "aka"));
	RESOLVE(st, "Acme"); /* title exact beats alias folded and a prefix of "Acme Inc" */
	CHECK(count_is(&R, 1));
	CHECK(is_hit(&R, 0, "Supplier", "a-4", CAIRN_NAME_TITLE, CAIRN_MATCH_EXACT, NULL));
	RESOLVE(st, "acme"); /* title folded beats alias folded */
	CHECK(count_is(&R, 1));
	CHECK(is_hit(&R, 0, "Supplier", "a-4", CAIRN_NAME_TITLE, CAIRN_MATCH_FOLDED, NULL));
	RESOLVE(st, "a-4"); /* the key beats everything */
	CHECK(is_hit(&R, 0, "Supplier", "a-4", CAIRN_NAME_KEY, CAIRN_MATCH_EXACT, NULL));
	CHECK(at_of(&R, "Supplier", "a-4") == 0);

	/* Several Records, each by its own reason, best first. */
	RESOLVE(st, "Nord");
	CHECK(count_is(&R, 3));
	CHECK(is_hit(&R, 0, "Plant", "Nord", CAIRN_NAME_KEY, CAIRN_MATCH_EXACT, NULL));
	CHECK(is_hit(&R, 1, "Supplier", "n-2", CAIRN_NAME_TITLE, CAIRN_MATCH_FOLDED, NULL));
	CHECK(is_hit(&R, 2, "Supplier", "n-3", CAIRN_NAME_ALIAS, CAIRN_MATCH_FOLDED, "aka"));
	CHECK(R.h[0].score > R.h[1].score && R.h[1].score > R.h[2].score);
	/* A unique value beats another Record's title. */
	RESOLVE(st, "Orion");
	CHECK(count_is(&R, 2));
	CHECK(is_hit(&R, 0, "Supplier", "v-1", CAIRN_NAME_UNIQUE, CAIRN_MATCH_EXACT, "vat"));
	CHECK(is_hit(&R, 1, "Supplier", "v-2", CAIRN_NAME_TITLE, CAIRN_MATCH_EXACT, NULL));

	/* text_len: only the bytes given. */
	{
		cairn_resolve_options o = {0};

		o.text = "MLG Holding and more";
		o.text_len = 11;
		RESOLVE_O(st, &o);
		CHECK(count_is(&R, 1));
		CHECK(is_hit(&R, 0, "Supplier", "mueller", CAIRN_NAME_ALIAS, CAIRN_MATCH_EXACT,
			     "aka"));
	}
	/* Text that folds to nothing matches no name (and a key only if it is one). */
	RESOLVE(st, "!!!");
	CHECK(count_is(&R, 0));
	OK(put_on(st, NULL,
		  "{\"kind\":\"Plant\",\"key\":\"!!\"}\n"
		  "{\"kind\":\"Plant\",\"key\":\"untitled-7\"}\n"
		  "{\"kind\":\"Supplier\",\"key\":\"dup\",\"title\":\"Dupe\","
		  "\"values\":{\"aka\":[\"Twin Name\",\"TWIN NAME\",\"twin-name\",\"Twin Name\"]}}",
		  NULL));
	RESOLVE(st, "!!");
	CHECK(count_is(&R, 1));
	CHECK(is_hit(&R, 0, "Plant", "!!", CAIRN_NAME_KEY, CAIRN_MATCH_EXACT, NULL));
	/* No title: the key alone names it. */
	RESOLVE(st, "untitled-7");
	CHECK(count_is(&R, 1));
	CHECK(is_hit(&R, 0, "Plant", "untitled-7", CAIRN_NAME_KEY, CAIRN_MATCH_EXACT, NULL));
	RESOLVE(st, "Untitled 7");
	CHECK(count_is(&R, 1));
	CHECK(is_hit(&R, 0, "Plant", "untitled-7", CAIRN_NAME_KEY, CAIRN_MATCH_FOLDED, NULL));
	/* Values of an alias that fold alike: one Record, exact for the value given. */
	RESOLVE(st, "TWIN NAME");
	CHECK(count_is(&R, 1));
	CHECK(is_hit(&R, 0, "Supplier", "dup", CAIRN_NAME_ALIAS, CAIRN_MATCH_EXACT, "aka"));
	RESOLVE(st, "twin  NAME");
	CHECK(count_is(&R, 1));
	CHECK(is_hit(&R, 0, "Supplier", "dup", CAIRN_NAME_ALIAS, CAIRN_MATCH_FOLDED, "aka"));
	/* A title longer than NAME_CAP once normalized: exact by its bytes, prefix by its words. */
	{
		char line[2048], title[1200], text[400];
		size_t tl = 0;

		for (int i = 0; i < 60; i++)
			tl += (size_t)snprintf(title + tl, sizeof(title) - tl, "%sWord%02d",
					       i ? " " : "", i);
		snprintf(line, sizeof(line),
			 "{\"kind\":\"Plant\",\"key\":\"long\",\"title\":\"%s\"}", title);
		OK(put_on(st, NULL, line, NULL));
		RESOLVE(st, title);
		CHECK(count_is(&R, 1));
		CHECK(is_hit(&R, 0, "Plant", "long", CAIRN_NAME_TITLE, CAIRN_MATCH_EXACT, NULL));
		memcpy(text, title, 20 * 7 - 1); /* Word00 ... Word19 */
		text[20 * 7 - 1] = '\0';
		RESOLVE(st, text);
		CHECK(count_is(&R, 1));
		CHECK(is_hit(&R, 0, "Plant", "long", CAIRN_NAME_TITLE, CAIRN_MATCH_PREFIX, NULL));
	}
	OK(cairn_check(st, "d", NULL, NULL, NULL));
	cairn_close(st);
}

/* ------------------------------------------------- spelling, prefix -- */

static const char spell_data[] =
	"{\"kind\":\"Supplier\",\"key\":\"s1\",\"title\":\"Lindqvist Trading\"}\n"
	"{\"kind\":\"Supplier\",\"key\":\"s2\",\"title\":\"Acme Widgets\"}\n"
	"{\"kind\":\"Supplier\",\"key\":\"s3\",\"title\":\"Acme Widget\"}\n"
	"{\"kind\":\"Supplier\",\"key\":\"s4\",\"title\":\"Nordwind Logistik GmbH\"}\n"
	"{\"kind\":\"Supplier\",\"key\":\"s5\",\"title\":\"Borken\"}\n"
	"{\"kind\":\"Supplier\",\"key\":\"s6\",\"title\":\"Ulm\"}\n"
	"{\"kind\":\"Supplier\",\"key\":\"s7\",\"title\":\"Oslo\"}\n"
	"{\"kind\":\"Supplier\",\"key\":\"s8\",\"title\":\"Quartz\",\"values\":{\"aka\":["
	"\"Hohenzollern Quarz\"]}}\n"
	"{\"kind\":\"Supplier\",\"key\":\"s9\",\"title\":\"Plant "
	"Alpha\",\"values\":{\"vat\":\"Tessaract Unique\"}}\n"
	"{\"kind\":\"Part\",\"key\":\"p1\",\"title\":\"Gear\",\"values\":{\"sku\":\"PL-3704\"}}\n"
	"{\"kind\":\"Part\",\"key\":\"wingnut-assembly\",\"title\":\"Nut\"}";

void test_resolve_spelling(void)
{
	cairn_store *st = rstore();
	cairn_resolve_options o = {0};
	double folded, one, two, prefix;

	CHECK(st);
	OK(put_on(st, NULL, spell_data, NULL));
	RESOLVE(st, "LINDQVIST TRADING");
	CHECK(count_is(&R, 1));
	folded = R.h[0].score;

	/* One edit of each kind. */
	RESOLVE(st, "Lindqvsit Trading"); /* transposition */
	CHECK(count_is(&R, 1));
	CHECK(is_hit(&R, 0, "Supplier", "s1", CAIRN_NAME_TITLE, CAIRN_MATCH_SPELLING, NULL));
	CHECK(R.h[0].edits == 1);
	CHECK(reason_is(&R, 0, "title, 1 edit away"));
	one = R.h[0].score;
	CHECK(one < folded);
	RESOLVE(st, "Lindqvist Tradin"); /* deletion */
	CHECK(count_is(&R, 1) && R.h[0].match == CAIRN_MATCH_SPELLING && R.h[0].edits == 1);
	RESOLVE(st, "Lindqvist Tradingg"); /* insertion */
	CHECK(count_is(&R, 1) && R.h[0].match == CAIRN_MATCH_SPELLING && R.h[0].edits == 1);
	RESOLVE(st, "Lindqvist Trafing"); /* substitution */
	CHECK(count_is(&R, 1) && R.h[0].match == CAIRN_MATCH_SPELLING && R.h[0].edits == 1);
	RESOLVE(st, "LINDQVÌST-TRADNG"); /* folded first, then 1 edit */
	CHECK(count_is(&R, 1) && R.h[0].match == CAIRN_MATCH_SPELLING && R.h[0].edits == 1);
	/* Aliases, unique values and keys are spelled too. */
	RESOLVE(st, "Hohenzolern Quarz");
	CHECK(count_is(&R, 1));
	CHECK(is_hit(&R, 0, "Supplier", "s8", CAIRN_NAME_ALIAS, CAIRN_MATCH_SPELLING, "aka"));
	CHECK(reason_is(&R, 0, "alias aka, 1 edit away"));
	RESOLVE(st, "Tessaract Uniqeu");
	CHECK(count_is(&R, 1));
	CHECK(is_hit(&R, 0, "Supplier", "s9", CAIRN_NAME_UNIQUE, CAIRN_MATCH_SPELLING, "vat"));
	RESOLVE(st, "wingnut-asembly");
	CHECK(count_is(&R, 1));
	CHECK(is_hit(&R, 0, "Part", "wingnut-assembly", CAIRN_NAME_KEY, CAIRN_MATCH_SPELLING,
		     NULL));

	/* Two edits: only with max_edits 2, and only for texts of 8 bytes or more. */
	RESOLVE(st, "Lindqvst Tradng");
	CHECK(count_is(&R, 0));
	o.text = "Lindqvst Tradng";
	o.max_edits = 2;
	RESOLVE_O(st, &o);
	CHECK(count_is(&R, 1));
	CHECK(is_hit(&R, 0, "Supplier", "s1", CAIRN_NAME_TITLE, CAIRN_MATCH_SPELLING, NULL));
	CHECK(R.h[0].edits == 2);
	CHECK(reason_is(&R, 0, "title, 2 edits away"));
	two = R.h[0].score;
	CHECK(two < one);
	o.text = "Lindqvist Trafing"; /* 1 edit stays 1 edit with max_edits 2 */
	RESOLVE_O(st, &o);
	CHECK(count_is(&R, 1) && R.h[0].edits == 1 && feq(R.h[0].score, one));
	o.text = "Barkan"; /* 6 bytes, 2 edits from Borken */
	RESOLVE_O(st, &o);
	CHECK(count_is(&R, 0));
	o.max_edits = 1;
	o.text = "Barken";
	RESOLVE_O(st, &o);
	CHECK(count_is(&R, 1) &&
	      is_hit(&R, 0, "Supplier", "s5", CAIRN_NAME_TITLE, CAIRN_MATCH_SPELLING, NULL));
	/* No spellings for texts under 4 bytes. */
	RESOLVE(st, "Ulx");
	CHECK(count_is(&R, 0));
	RESOLVE(st, "Ulmm");
	CHECK(count_is(&R, 1) &&
	      is_hit(&R, 0, "Supplier", "s6", CAIRN_NAME_TITLE, CAIRN_MATCH_SPELLING, NULL));
	RESOLVE(st, "Olso");
	CHECK(count_is(&R, 1) &&
	      is_hit(&R, 0, "Supplier", "s7", CAIRN_NAME_TITLE, CAIRN_MATCH_SPELLING, NULL));
	/* No spellings of identifiers: another number is another Record. */
	RESOLVE(st, "PL-3704");
	CHECK(count_is(&R, 1));
	CHECK(is_hit(&R, 0, "Part", "p1", CAIRN_NAME_UNIQUE, CAIRN_MATCH_EXACT, "sku"));
	RESOLVE(st, "PL-3705");
	CHECK(count_is(&R, 0));
	RESOLVE(st, "pl3704");
	CHECK(count_is(&R, 0));
	RESOLVE(st, "Plant Alphx"); /* a phrase is spelled */
	CHECK(count_is(&R, 1) &&
	      is_hit(&R, 0, "Supplier", "s9", CAIRN_NAME_TITLE, CAIRN_MATCH_SPELLING, NULL));

	/* Names that start with the text's words. */
	RESOLVE(st, "nordwind");
	CHECK(count_is(&R, 1));
	CHECK(is_hit(&R, 0, "Supplier", "s4", CAIRN_NAME_TITLE, CAIRN_MATCH_PREFIX, NULL));
	CHECK(reason_is(&R, 0, "title, starts with the text"));
	prefix = R.h[0].score;
	CHECK(prefix < folded && prefix < one);
	RESOLVE(st, "Nordwind Logistik");
	CHECK(count_is(&R, 1));
	CHECK(is_hit(&R, 0, "Supplier", "s4", CAIRN_NAME_TITLE, CAIRN_MATCH_PREFIX, NULL));
	RESOLVE(st, "Nordwin"); /* not whole words */
	CHECK(count_is(&R, 0));
	RESOLVE(st, "Logistik GmbH"); /* not the start */
	CHECK(count_is(&R, 0));
	RESOLVE(st, "Hohenzollern");
	CHECK(count_is(&R, 1));
	CHECK(is_hit(&R, 0, "Supplier", "s8", CAIRN_NAME_ALIAS, CAIRN_MATCH_PREFIX, "aka"));

	/* Near-duplicates: both come, the exact one first. */
	RESOLVE(st, "Acme Widgets");
	CHECK(count_is(&R, 2));
	CHECK(is_hit(&R, 0, "Supplier", "s2", CAIRN_NAME_TITLE, CAIRN_MATCH_EXACT, NULL));
	CHECK(is_hit(&R, 1, "Supplier", "s3", CAIRN_NAME_TITLE, CAIRN_MATCH_SPELLING, NULL));
	RESOLVE(st, "Acme Widget");
	CHECK(count_is(&R, 2));
	CHECK(is_hit(&R, 0, "Supplier", "s3", CAIRN_NAME_TITLE, CAIRN_MATCH_EXACT, NULL));
	CHECK(is_hit(&R, 1, "Supplier", "s2", CAIRN_NAME_TITLE, CAIRN_MATCH_SPELLING, NULL));
	RESOLVE(st, "acme widget");
	CHECK(count_is(&R, 2));
	CHECK(is_hit(&R, 0, "Supplier", "s3", CAIRN_NAME_TITLE, CAIRN_MATCH_FOLDED, NULL));
	RESOLVE(st, "Acme"); /* both start with it: same score, by key */
	CHECK(count_is(&R, 2));
	CHECK(is_hit(&R, 0, "Supplier", "s2", CAIRN_NAME_TITLE, CAIRN_MATCH_PREFIX, NULL));
	CHECK(is_hit(&R, 1, "Supplier", "s3", CAIRN_NAME_TITLE, CAIRN_MATCH_PREFIX, NULL));

	/* exact: no spellings, no prefixes; folded still. */
	memset(&o, 0, sizeof(o));
	o.exact = 1;
	o.text = "Lindqvsit Trading";
	RESOLVE_O(st, &o);
	CHECK(count_is(&R, 0));
	o.text = "nordwind";
	RESOLVE_O(st, &o);
	CHECK(count_is(&R, 0));
	o.text = "Acme Widgets";
	RESOLVE_O(st, &o);
	CHECK(count_is(&R, 1) &&
	      is_hit(&R, 0, "Supplier", "s2", CAIRN_NAME_TITLE, CAIRN_MATCH_EXACT, NULL));
	o.text = "LINDQVIST trading";
	RESOLVE_O(st, &o);
	CHECK(count_is(&R, 1) &&
	      is_hit(&R, 0, "Supplier", "s1", CAIRN_NAME_TITLE, CAIRN_MATCH_FOLDED, NULL));
	OK(cairn_check(st, "d", NULL, NULL, NULL));
	cairn_close(st);
}

/* ---------------------------------------------- order, limit, Kinds -- */

void test_resolve_order(void)
{
	cairn_store *st = rstore();
	cairn_resolve_options o = {0};
	char lines[4096];
	size_t len = 0;

	CHECK(st);
	OK(put_on(st, NULL,
		  "{\"kind\":\"Supplier\",\"key\":\"L2\",\"title\":\"Lindenhof\"}\n"
		  "{\"kind\":\"Supplier\",\"key\":\"L10\",\"title\":\"Lindenhof\"}\n"
		  "{\"kind\":\"Supplier\",\"key\":\"L1\",\"title\":\"Lindenhof\"}\n"
		  "{\"kind\":\"Plant\",\"key\":\"x9\",\"title\":\"Lindenhof\"}\n"
		  "{\"kind\":\"Part\",\"key\":\"q\",\"title\":\"lindenhof\",\"values\":{\"sku\":"
		  "\"Q\"}}",
		  NULL));
	for (int i = 0; i < 12; i++)
		len += (size_t)snprintf(
			lines + len, sizeof(lines) - len,
			"{\"kind\":\"Plant\",\"key\":\"k%02d\",\"title\":\"Same Place\"}\n",
			11 - i);
	OK(put_on(st, NULL, lines, NULL));

	/* Equal scores: by Kind, then by key (bytes, shorter first). */
	RESOLVE(st, "Lindenhof");
	CHECK(count_is(&R, 5));
	CHECK(is_hit(&R, 0, "Plant", "x9", CAIRN_NAME_TITLE, CAIRN_MATCH_EXACT, NULL));
	CHECK(is_hit(&R, 1, "Supplier", "L1", CAIRN_NAME_TITLE, CAIRN_MATCH_EXACT, NULL));
	CHECK(is_hit(&R, 2, "Supplier", "L10", CAIRN_NAME_TITLE, CAIRN_MATCH_EXACT, NULL));
	CHECK(is_hit(&R, 3, "Supplier", "L2", CAIRN_NAME_TITLE, CAIRN_MATCH_EXACT, NULL));
	CHECK(is_hit(&R, 4, "Part", "q", CAIRN_NAME_TITLE, CAIRN_MATCH_FOLDED, NULL));
	CHECK(feq(R.h[0].score, R.h[3].score) && R.h[3].score > R.h[4].score);

	/* limit: the first of the same order. */
	o.text = "Lindenhof";
	o.limit = 2;
	RESOLVE_O(st, &o);
	CHECK(count_is(&R, 2));
	CHECK(strcmp(R.h[0].key, "x9") == 0 && strcmp(R.h[1].key, "L1") == 0);
	o.limit = 1;
	RESOLVE_O(st, &o);
	CHECK(count_is(&R, 1) && strcmp(R.h[0].key, "x9") == 0);
	/* limit 0 is 10. */
	RESOLVE(st, "Same Place");
	CHECK(count_is(&R, 10));
	for (int i = 0; i < 10; i++) {
		char k[16];

		snprintf(k, sizeof(k), "k%02d", i);
		CHECK(is_hit(&R, (size_t)i, "Plant", k, CAIRN_NAME_TITLE, CAIRN_MATCH_EXACT, NULL));
	}
	o.text = "Same Place";
	o.limit = 100;
	RESOLVE_O(st, &o);
	CHECK(count_is(&R, 12));

	/* Kinds. */
	{
		const char *sup[] = {"Supplier"};
		const char *pp[] = {"Plant", "Part"};

		memset(&o, 0, sizeof(o));
		o.text = "Lindenhof";
		o.kinds = sup;
		o.n_kinds = 1;
		RESOLVE_O(st, &o);
		CHECK(count_is(&R, 3));
		CHECK(strcmp(R.h[0].key, "L1") == 0 && strcmp(R.h[2].key, "L2") == 0);
		for (size_t i = 0; i < R.n; i++)
			CHECK(strcmp(R.h[i].kind, "Supplier") == 0);
		o.kinds = pp;
		o.n_kinds = 2;
		RESOLVE_O(st, &o);
		CHECK(count_is(&R, 2));
		CHECK(is_hit(&R, 0, "Plant", "x9", CAIRN_NAME_TITLE, CAIRN_MATCH_EXACT, NULL));
		CHECK(is_hit(&R, 1, "Part", "q", CAIRN_NAME_TITLE, CAIRN_MATCH_FOLDED, NULL));
		/* The key step is filtered too. */
		o.text = "x9";
		o.kinds = sup;
		o.n_kinds = 1;
		RESOLVE_O(st, &o);
		CHECK(count_is(&R, 0));
		o.kinds = pp;
		o.n_kinds = 1; /* Plant */
		RESOLVE_O(st, &o);
		CHECK(count_is(&R, 1));
		CHECK(is_hit(&R, 0, "Plant", "x9", CAIRN_NAME_KEY, CAIRN_MATCH_EXACT, NULL));
		/* Spellings and prefixes too. */
		o.text = "Lindenhfo";
		o.kinds = sup;
		RESOLVE_O(st, &o);
		CHECK(count_is(&R, 3));
		CHECK(R.h[0].match == CAIRN_MATCH_SPELLING && strcmp(R.h[0].kind, "Supplier") == 0);
		o.text = "Same";
		RESOLVE_O(st, &o);
		CHECK(count_is(&R, 0));
	}
	OK(cairn_check(st, "d", NULL, NULL, NULL));
	cairn_close(st);
}

/*
 * The answer with a limit is the start of the answer without one: the
 * best prefix match comes first even when many names that start with the
 * text sort before it.
 */
void test_resolve_limit_prefix(void)
{
	cairn_store *st = rstore();
	cairn_resolve_options o = {0};
	static answer full;
	char lines[4096];
	size_t len = 0;

	CHECK(st);
	for (int i = 0; i < 12; i++)
		len += (size_t)snprintf(
			lines + len, sizeof(lines) - len,
			"{\"kind\":\"Plant\",\"key\":\"p%02d\",\"title\":\"Acme %c\"}\n", i,
			'a' + i);
	len += (size_t)snprintf(lines + len, sizeof(lines) - len,
				"{\"kind\":\"Supplier\",\"key\":\"acme-zz\",\"title\":\"Zed\"}\n"
				"{\"kind\":\"Supplier\",\"key\":\"s2\",\"title\":\"Yo\",\"values\":"
				"{\"vat\":\"Acme Zy\"}}");
	OK(put_on(st, NULL, lines, NULL));
	o.text = "Acme";
	o.limit = 100;
	RESOLVE_O(st, &o);
	CHECK(count_is(&R, 14));
	CHECK(is_hit(&R, 0, "Supplier", "acme-zz", CAIRN_NAME_KEY, CAIRN_MATCH_PREFIX, NULL));
	CHECK(is_hit(&R, 1, "Supplier", "s2", CAIRN_NAME_UNIQUE, CAIRN_MATCH_PREFIX, "vat"));
	CHECK(is_hit(&R, 2, "Plant", "p00", CAIRN_NAME_TITLE, CAIRN_MATCH_PREFIX, NULL));
	full = R;
	for (size_t l = 1; l <= 14; l++) {
		o.limit = l;
		RESOLVE_O(st, &o);
		if (R.n != l)
			fprintf(stderr, "    limit %zu: %zu answers\n", l, R.n);
		CHECK(R.n == l);
		for (size_t i = 0; i < l; i++) {
			if (strcmp(R.h[i].key, full.h[i].key) != 0) {
				fprintf(stderr,
					"    limit %zu: answer %zu is %s (%s), without a limit %s "
					"(%s)\n",
					l, i, R.h[i].key, R.h[i].reason, full.h[i].key,
					full.h[i].reason);
				CHECK(strcmp(R.h[i].key, full.h[i].key) == 0);
			}
		}
	}
	cairn_close(st);
}

/* ------------------------------------------ branches, revisions, deletes -- */

void test_resolve_history(void)
{
	cairn_store *st = rstore();
	uint64_t r1, r2, r3, r4;

	CHECK(st);
	OK(put_on(st, NULL,
		  "{\"kind\":\"Supplier\",\"key\":\"h1\",\"title\":\"Old Name AG\","
		  "\"values\":{\"aka\":[\"Oldie\"]}}\n"
		  "{\"kind\":\"Supplier\",\"key\":\"gone\",\"title\":\"Vanishing Point\"}",
		  &r1));
	OK(cairn_branch_create(st, "d", "b", NULL));
	OK(put_on(st, "b",
		  "{\"kind\":\"Supplier\",\"key\":\"h1\",\"title\":\"New Name AG\","
		  "\"values\":{\"aka\":[\"Newbie\"]}}",
		  NULL));
	OK(put_on(st, "b", "{\"kind\":\"Supplier\",\"key\":\"onb\",\"title\":\"Branch Only\"}",
		  NULL));

	/* The branch sees its rename; main does not. */
	RESOLVE_IN(st, "b", 0, "New Name AG");
	CHECK(count_is(&R, 1));
	CHECK(is_hit(&R, 0, "Supplier", "h1", CAIRN_NAME_TITLE, CAIRN_MATCH_EXACT, NULL));
	RESOLVE_IN(st, "b", 0, "Newbie");
	CHECK(count_is(&R, 1) && R.h[0].source == CAIRN_NAME_ALIAS);
	RESOLVE_IN(st, "b", 0, "Old Name AG");
	CHECK(count_is(&R, 0));
	RESOLVE_IN(st, "b", 0, "Oldie");
	CHECK(count_is(&R, 0));
	RESOLVE_IN(st, "b", 0, "Branch Only");
	CHECK(count_is(&R, 1));
	RESOLVE_IN(st, "b", 0, "Vanishing Point"); /* inherited from main */
	CHECK(count_is(&R, 1));
	RESOLVE(st, "Old Name AG");
	CHECK(count_is(&R, 1));
	CHECK(is_hit(&R, 0, "Supplier", "h1", CAIRN_NAME_TITLE, CAIRN_MATCH_EXACT, NULL));
	CHECK(R.h[0].revision == r1);
	RESOLVE(st, "New Name AG");
	CHECK(count_is(&R, 0));
	RESOLVE(st, "Branch Only");
	CHECK(count_is(&R, 0));

	/* A title change on main: the old title is gone at head, there at the old revision. */
	OK(put_on(st, NULL, "{\"kind\":\"Supplier\",\"key\":\"h1\",\"title\":\"Fresh Title SE\"}",
		  &r2));
	RESOLVE(st, "Fresh Title SE");
	CHECK(count_is(&R, 1) && R.h[0].revision == r2);
	RESOLVE(st, "Old Name AG");
	CHECK(count_is(&R, 0));
	RESOLVE(st, "Oldie"); /* the new Version has no aliases */
	CHECK(count_is(&R, 0));
	RESOLVE_IN(st, NULL, r1, "Old Name AG");
	CHECK(count_is(&R, 1));
	CHECK(is_hit(&R, 0, "Supplier", "h1", CAIRN_NAME_TITLE, CAIRN_MATCH_EXACT, NULL));
	CHECK(R.h[0].revision == r1);
	RESOLVE_IN(st, NULL, r1, "Oldie");
	CHECK(count_is(&R, 1));
	RESOLVE_IN(st, NULL, r1, "Fresh Title SE");
	CHECK(count_is(&R, 0));
	RESOLVE_IN(st, "b", 0, "Fresh Title SE"); /* the branch forked before it */
	CHECK(count_is(&R, 0));

	/* A deleted Record resolves no more, by any name; before the delete it did. */
	OK(put_on(st, NULL, "{\"kind\":\"Supplier\",\"key\":\"gone\",\"op\":\"delete\"}", &r3));
	RESOLVE(st, "Vanishing Point");
	CHECK(count_is(&R, 0));
	RESOLVE(st, "gone");
	CHECK(count_is(&R, 0));
	RESOLVE(st, "Vanishing Pont");
	CHECK(count_is(&R, 0));
	RESOLVE(st, "Vanishing");
	CHECK(count_is(&R, 0));
	RESOLVE_IN(st, NULL, r3, "Vanishing Point");
	CHECK(count_is(&R, 0));
	RESOLVE_IN(st, NULL, r2, "Vanishing Point");
	CHECK(count_is(&R, 1));
	RESOLVE_IN(st, NULL, r2, "gone");
	CHECK(count_is(&R, 1));
	CHECK(is_hit(&R, 0, "Supplier", "gone", CAIRN_NAME_KEY, CAIRN_MATCH_EXACT, NULL));
	RESOLVE_IN(st, "b", 0, "Vanishing Point"); /* still on the branch */
	CHECK(count_is(&R, 1));
	/* Put back under the same key with another title: the new title only. */
	OK(put_on(st, NULL, "{\"kind\":\"Supplier\",\"key\":\"gone\",\"title\":\"Returned\"}",
		  &r4));
	RESOLVE(st, "Vanishing Point");
	CHECK(count_is(&R, 0));
	RESOLVE(st, "Returned");
	CHECK(count_is(&R, 1) && R.h[0].revision == r4);
	RESOLVE(st, "gone");
	CHECK(count_is(&R, 1));
	/* A patch of values keeps the title and takes the new aliases. */
	OK(put_on(st, NULL,
		  "{\"kind\":\"Supplier\",\"key\":\"h1\",\"op\":\"patch\",\"values\":{\"aka\":["
		  "\"Patchy\"]}}",
		  NULL));
	RESOLVE(st, "Patchy");
	CHECK(count_is(&R, 1));
	CHECK(is_hit(&R, 0, "Supplier", "h1", CAIRN_NAME_ALIAS, CAIRN_MATCH_EXACT, "aka"));
	RESOLVE(st, "Fresh Title SE");
	CHECK(count_is(&R, 1));
	OK(cairn_check(st, "d", NULL, NULL, NULL));
	cairn_close(st);
}

/* ----------------------------------------------------------- schema -- */

static void count_problem(void *ctx, const char *problem)
{
	fprintf(stderr, "    check: %s\n", problem);
	(*(int *)ctx)++;
}

static void count_quiet(void *ctx, const char *problem)
{
	(void)problem;
	(*(int *)ctx)++;
}

/* cairn_check finds nothing wrong (problems printed). */
static int check_clean(cairn_store *st)
{
	cairn_check_report rep;
	int problems = 0, rc;

	memset(&rep, 0, sizeof(rep));
	rc = cairn_check(st, "d", count_problem, &problems, &rep);
	if (rc || problems || rep.problems) {
		fprintf(stderr, "    cairn_check: %s, %d problems\n", cairn_errname(rc), problems);
		return 0;
	}
	return rep.index_entries > 0;
}

static uint64_t names_entries(cairn_store *st)
{
	return test_db_entries(st, "names");
}

static int clear_deleted(cairn_store *st)
{
	int pending = 1, rc = 0;

	for (int i = 0; i < 10000 && pending && !rc; i++)
		rc = cairn_store_maintain(st, 7, &pending);
	return rc ? rc : pending ? CAIRN_ELIMIT : 0;
}

/* A Version writes names entries only for the names its predecessor lacked. */
void test_resolve_names_on_change(void)
{
	cairn_store *st = rstore();
	uint64_t n0, r1, r2, r3, r4, r5;

	CHECK(st);
	OK(put_on(st, NULL,
		  "{\"kind\":\"Supplier\",\"key\":\"k1\",\"title\":\"Quiet Mill GmbH\","
		  "\"values\":{\"vat\":\"DE1\",\"aka\":[\"Mill\",\"QM\"],\"rating\":1}}",
		  &r1));
	n0 = names_entries(st);
	CHECK(n0 == 5); /* key, title, vat, two aliases */

	/* Other values change, the names stay: no entry, and every name finds the new Version. */
	OK(put_on(st, NULL,
		  "{\"kind\":\"Supplier\",\"key\":\"k1\",\"title\":\"Quiet Mill GmbH\","
		  "\"values\":{\"vat\":\"DE1\",\"aka\":[\"Mill\",\"QM\"],\"rating\":2}}",
		  &r2));
	CHECK(names_entries(st) == n0);
	RESOLVE(st, "Quiet Mill GmbH");
	CHECK(count_is(&R, 1) && R.h[0].revision == r2);
	CHECK(is_hit(&R, 0, "Supplier", "k1", CAIRN_NAME_TITLE, CAIRN_MATCH_EXACT, NULL));
	RESOLVE(st, "de1");
	CHECK(count_is(&R, 1) && R.h[0].revision == r2);
	CHECK(is_hit(&R, 0, "Supplier", "k1", CAIRN_NAME_UNIQUE, CAIRN_MATCH_FOLDED, "vat"));
	RESOLVE(st, "QM");
	CHECK(count_is(&R, 1) && R.h[0].revision == r2);
	RESOLVE(st, "k1");
	CHECK(count_is(&R, 1) && R.h[0].revision == r2);
	RESOLVE(st, "Quiet Mil GmbH");
	CHECK(count_is(&R, 1) && R.h[0].revision == r2 && R.h[0].match == CAIRN_MATCH_SPELLING);
	RESOLVE_IN(st, NULL, r1, "Quiet Mill GmbH");
	CHECK(count_is(&R, 1) && R.h[0].revision == r1);

	/* One alias more: one entry. A rename: one entry; the old title is gone. */
	OK(put_on(st, NULL,
		  "{\"kind\":\"Supplier\",\"key\":\"k1\",\"op\":\"patch\",\"values\":{\"aka\":["
		  "\"Mill\",\"QM\",\"M\xc3\xbchle\"]}}",
		  &r3));
	CHECK(names_entries(st) == n0 + 1);
	RESOLVE(st, "muhle");
	CHECK(count_is(&R, 1) && R.h[0].revision == r3);
	OK(put_on(st, NULL,
		  "{\"kind\":\"Supplier\",\"key\":\"k1\",\"title\":\"Loud Mill AG\","
		  "\"values\":{\"vat\":\"DE1\",\"aka\":[\"QM\"]}}",
		  &r4));
	CHECK(names_entries(st) == n0 + 2);
	RESOLVE(st, "Quiet Mill GmbH");
	CHECK(count_is(&R, 0));
	RESOLVE(st, "Mill");
	CHECK(count_is(&R, 0));
	RESOLVE(st, "Loud Mill AG");
	CHECK(count_is(&R, 1) && R.h[0].revision == r4);
	RESOLVE_IN(st, NULL, r3, "Mill");
	CHECK(count_is(&R, 1) && R.h[0].revision == r3);

	/* The old title back: an entry again, and one answer for the Record. */
	OK(put_on(st, NULL,
		  "{\"kind\":\"Supplier\",\"key\":\"k1\",\"title\":\"Quiet Mill GmbH\","
		  "\"values\":{\"vat\":\"DE1\",\"aka\":[\"QM\"]}}",
		  &r5));
	CHECK(names_entries(st) == n0 + 3);
	RESOLVE(st, "Quiet Mill GmbH");
	CHECK(count_is(&R, 1) && R.h[0].revision == r5);
	RESOLVE_IN(st, NULL, r4, "Quiet Mill GmbH");
	CHECK(count_is(&R, 0));

	/* A branch changes a value: no entry; its names find the branch's Version. */
	OK(cairn_branch_create(st, "d", "b", NULL));
	OK(put_on(st, "b",
		  "{\"kind\":\"Supplier\",\"key\":\"k1\",\"op\":\"patch\",\"values\":{\"rating\":9}}",
		  NULL));
	CHECK(names_entries(st) == n0 + 3);
	RESOLVE_IN(st, "b", 0, "QM");
	CHECK(count_is(&R, 1) && R.h[0].revision > r5);
	RESOLVE(st, "QM");
	CHECK(count_is(&R, 1) && R.h[0].revision == r5);
	OK(cairn_branch_delete(st, "d", "b"));
	OK(clear_deleted(st));
	RESOLVE(st, "QM");
	CHECK(count_is(&R, 1) && R.h[0].revision == r5);

	/* Deleted and put back: every name again. */
	OK(put_on(st, NULL, "{\"kind\":\"Supplier\",\"key\":\"k1\",\"op\":\"delete\"}", NULL));
	CHECK(names_entries(st) == n0 + 3);
	OK(put_on(st, NULL,
		  "{\"kind\":\"Supplier\",\"key\":\"k1\",\"title\":\"Quiet Mill GmbH\","
		  "\"values\":{\"aka\":[\"QM\"]}}",
		  NULL));
	CHECK(names_entries(st) == n0 + 6);
	RESOLVE(st, "QM");
	CHECK(count_is(&R, 1));
	RESOLVE(st, "DE1");
	CHECK(count_is(&R, 0));
	CHECK(check_clean(st));
	cairn_close(st);
}

void test_resolve_schema(void)
{
	cairn_store *st;
	cairn_txn *t;
	cairn_read_options ro = {0};
	uint64_t head, before;

	/* alias: only for string and strings. */
	{
		static const char *const bad[] = {
			"{\"kinds\":[{\"name\":\"K\",\"attributes\":[{\"name\":\"n\",\"type\":"
			"\"int\",\"alias\":true}]}]}",
			"{\"kinds\":[{\"name\":\"K\",\"attributes\":[{\"name\":\"n\",\"type\":"
			"\"float\",\"alias\":true}]}]}",
			"{\"kinds\":[{\"name\":\"K\",\"attributes\":[{\"name\":\"n\",\"type\":"
			"\"bool\",\"alias\":true}]}]}",
			"{\"kinds\":[{\"name\":\"K\",\"attributes\":[{\"name\":\"n\",\"type\":"
			"\"enum\",\"values\":[\"a\"],\"alias\":true}]}]}",
			"{\"kinds\":[{\"name\":\"K\",\"attributes\":[{\"name\":\"n\",\"type\":"
			"\"string\",\"alias\":1}]}]}",
			"{\"kinds\":[{\"name\":\"K\",\"attributes\":[{\"name\":\"n\",\"type\":"
			"\"string\",\"alias\":\"yes\"}]}]}",
		};

		CHECK((st = rstore()));
		head = test_head(st, "d");
		for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			int rc = apply_schema(st, bad[i]);

			if (rc != CAIRN_ESCHEMA)
				fprintf(stderr, "    schema %zu: %s\n", i, cairn_errname(rc));
			CHECK_RC(rc, CAIRN_ESCHEMA);
			CHECK(strlen(cairn_errmsg()) > 0);
		}
		/* Nor on an existing int attribute; nothing is written. */
		CHECK_RC(apply_schema(st,
				      "{\"kinds\":[{\"name\":\"Supplier\",\"attributes\":["
				      "{\"name\":\"rating\",\"type\":\"int\",\"alias\":true}]}]}"),
			 CAIRN_ESCHEMA);
		CHECK(test_head(st, "d") == head);
		OK(apply_schema(st, "{\"kinds\":[{\"name\":\"K2\",\"attributes\":["
				    "{\"name\":\"a\",\"type\":\"string\",\"alias\":false},"
				    "{\"name\":\"b\",\"type\":\"strings\",\"alias\":true}]}]}"));
	}
	/* The flag is in the canonical schema. */
	{
		const char *json;
		size_t len;

		ro.domain = "d";
		OK(cairn_txn_begin(st, &ro, &t));
		OK(cairn_schema_get(t, &json, &len));
		CHECK(memmem(json, len, "\"alias\":true", 12) != NULL);
		{
			/* Exactly the three aliases: aka, nick and K2.b. */
			int n = 0;
			const char *p = json, *end = json + len;

			while ((p = memmem(p, (size_t)(end - p), "\"alias\":true", 12))) {
				n++;
				p += 12;
			}
			CHECK(n == 3);
		}
		cairn_txn_end(t);
	}

	/* Records stored before their attribute became a name. */
	OK(put_on(st, NULL,
		  "{\"kind\":\"Supplier\",\"key\":\"b1\",\"title\":\"Backfill One\","
		  "\"values\":{\"note\":\"Secret Name\",\"tags\":[\"Red Fox\",\"Blue "
		  "Jay\"],\"code\":\"C-77\"}}\n"
		  "{\"kind\":\"Supplier\",\"key\":\"b2\",\"title\":\"Backfill "
		  "Two\",\"values\":{\"note\":\"Other Note\"}}",
		  NULL));
	OK(put_on(st, NULL,
		  "{\"kind\":\"Supplier\",\"key\":\"b2\",\"op\":\"patch\",\"values\":{\"note\":"
		  "\"Second Note\"}}",
		  &before));
	OK(cairn_branch_create(st, "d", "side", NULL));
	OK(put_on(st, "side",
		  "{\"kind\":\"Supplier\",\"key\":\"b3\",\"title\":\"Side "
		  "Record\",\"values\":{\"note\":\"Side Note\"}}",
		  NULL));
	RESOLVE(st, "Secret Name");
	CHECK(count_is(&R, 0));
	RESOLVE(st, "Blue Jay");
	CHECK(count_is(&R, 0));
	RESOLVE(st, "C-77");
	CHECK(count_is(&R, 0));
	OK(apply_schema(st, "{\"kinds\":[{\"name\":\"Supplier\",\"attributes\":["
			    "{\"name\":\"note\",\"type\":\"string\",\"alias\":true},"
			    "{\"name\":\"tags\",\"type\":\"strings\",\"alias\":true},"
			    "{\"name\":\"code\",\"type\":\"string\",\"unique\":true}]}]}"));
	RESOLVE(st, "Secret Name");
	CHECK(count_is(&R, 1));
	CHECK(is_hit(&R, 0, "Supplier", "b1", CAIRN_NAME_ALIAS, CAIRN_MATCH_EXACT, "note"));
	RESOLVE(st, "blue jay");
	CHECK(count_is(&R, 1));
	CHECK(is_hit(&R, 0, "Supplier", "b1", CAIRN_NAME_ALIAS, CAIRN_MATCH_FOLDED, "tags"));
	RESOLVE(st, "Red Fox");
	CHECK(count_is(&R, 1) && R.h[0].source == CAIRN_NAME_ALIAS);
	RESOLVE(st, "C-77");
	CHECK(count_is(&R, 1));
	CHECK(is_hit(&R, 0, "Supplier", "b1", CAIRN_NAME_UNIQUE, CAIRN_MATCH_EXACT, "code"));
	RESOLVE(st, "Second Note");
	CHECK(count_is(&R, 1) && strcmp(R.h[0].key, "b2") == 0);
	RESOLVE(st, "Other Note"); /* b2's earlier value is not a name at head */
	CHECK(count_is(&R, 0));
	RESOLVE(st, "Side Note");
	CHECK(count_is(&R, 0));
	RESOLVE_IN(st, "side", 0, "Side Note"); /* the backfill covers branches */
	CHECK(count_is(&R, 1));
	CHECK(is_hit(&R, 0, "Supplier", "b3", CAIRN_NAME_ALIAS, CAIRN_MATCH_EXACT, "note"));
	RESOLVE_IN(st, "side", 0, "Second Note");
	CHECK(count_is(&R, 1));
	/* New Records are named by the new aliases as they are written. */
	OK(put_on(st, NULL,
		  "{\"kind\":\"Supplier\",\"key\":\"b4\",\"title\":\"After\",\"values\":{\"tags\":["
		  "\"Green Owl\"]}}",
		  NULL));
	RESOLVE(st, "Green Owl");
	CHECK(count_is(&R, 1) && strcmp(R.h[0].key, "b4") == 0);
	CHECK(check_clean(st));

	/* A branch with names of its own, deleted and cleared: its names go with it. */
	before = names_entries(st);
	CHECK(before != UINT64_MAX && before > 0);
	OK(cairn_branch_create(st, "d", "tmp", NULL));
	OK(put_on(st, "tmp",
		  "{\"kind\":\"Supplier\",\"key\":\"t1\",\"title\":\"Temporary Thing\","
		  "\"values\":{\"aka\":[\"Temp Alias\",\"TEMP alias\",\"Tmp Two\",\"Temp Alias\"],"
		  "\"note\":\"Temp Note\",\"vat\":\"TMP-1\"}}\n"
		  "{\"kind\":\"Supplier\",\"key\":\"b1\",\"title\":\"Backfill One Renamed\"}",
		  NULL));
	OK(put_on(st, "tmp",
		  "{\"kind\":\"Supplier\",\"key\":\"t1\",\"op\":\"patch\",\"values\":{\"nick\":"
		  "\"Tempo\"}}",
		  NULL));
	RESOLVE_IN(st, "tmp", 0, "Temp Alias");
	CHECK(count_is(&R, 1));
	RESOLVE_IN(st, "tmp", 0, "Tempo");
	CHECK(count_is(&R, 1));
	CHECK(names_entries(st) > before);
	OK(cairn_branch_delete(st, "d", "tmp"));
	CHECK(check_clean(st)); /* before it is cleared */
	OK(clear_deleted(st));
	CHECK(check_clean(st));
	if (names_entries(st) != before)
		fprintf(stderr, "    names: %llu entries, %llu before the branch\n",
			(unsigned long long)names_entries(st), (unsigned long long)before);
	CHECK(names_entries(st) == before);
	RESOLVE(st, "Backfill One");
	CHECK(count_is(&R, 1) && strcmp(R.h[0].key, "b1") == 0);
	RESOLVE(st, "Temp Alias");
	CHECK(count_is(&R, 0));
	/* The name is free again, and the new branch starts from main. */
	OK(cairn_branch_create(st, "d", "tmp", NULL));
	RESOLVE_IN(st, "tmp", 0, "Temporary Thing");
	CHECK(count_is(&R, 0));
	CHECK(check_clean(st));
	cairn_close(st);
}

/*
 * An alias that stops being one: its values name nothing from then on, and
 * a branch deleted afterwards still clears every names entry it wrote.
 */
void test_resolve_alias_dropped(void)
{
	cairn_store *st = rstore();
	uint64_t before;

	CHECK(st);
	OK(put_on(st, NULL,
		  "{\"kind\":\"Supplier\",\"key\":\"m1\",\"title\":\"Main "
		  "One\",\"values\":{\"nick\":\"Main Nick\"}}",
		  NULL));
	before = names_entries(st);
	OK(cairn_branch_create(st, "d", "tmp", NULL));
	OK(put_on(st, "tmp",
		  "{\"kind\":\"Supplier\",\"key\":\"t1\",\"title\":\"Temp "
		  "One\",\"values\":{\"nick\":\"Temp Nick\"}}",
		  NULL));
	RESOLVE_IN(st, "tmp", 0, "Temp Nick");
	CHECK(count_is(&R, 1));
	/* nick named without "alias": the flag is dropped. */
	OK(apply_schema(st, "{\"kinds\":[{\"name\":\"Supplier\",\"attributes\":["
			    "{\"name\":\"nick\",\"type\":\"string\"}]}]}"));
	RESOLVE(st, "Main Nick");
	CHECK(count_is(&R, 0));
	RESOLVE_IN(st, "tmp", 0, "Temp Nick");
	CHECK(count_is(&R, 0));
	RESOLVE(st, "Main One");
	CHECK(count_is(&R, 1));
	CHECK(check_clean(st));
	OK(cairn_branch_delete(st, "d", "tmp"));
	OK(clear_deleted(st));
	CHECK(check_clean(st));
	if (names_entries(st) != before)
		fprintf(stderr, "    names: %llu entries, %llu before the branch\n",
			(unsigned long long)names_entries(st), (unsigned long long)before);
	CHECK(names_entries(st) == before);
	cairn_close(st);
}

/* --------------------------------------------------------- no match -- */

/* Nothing to find: an empty Domain, and a text that names nothing. */
void test_resolve_nothing(void)
{
	cairn_store *st = rstore();

	CHECK(st);
	RESOLVE(st, "Acme");
	CHECK(count_is(&R, 0) && R.truncated == 0);
	OK(put_on(st, NULL, "{\"kind\":\"Supplier\",\"key\":\"s1\",\"title\":\"Acme\"}", NULL));
	RESOLVE(st, "Globex Corporation");
	CHECK(count_is(&R, 0) && R.truncated == 0);
	RESOLVE(st, "Acme");
	CHECK(count_is(&R, 1));
	cairn_close(st);
}

/* ---------------------------------------------------------- Domains -- */

/*
 * Names never cross Domains: the same names in the next Domain (whose
 * entries follow this one's in the index) are not matched, by any step,
 * and a dropped Domain leaves no names behind.
 */
void test_resolve_domains(void)
{
	cairn_store *st = rstore();
	cairn_commit_options co = {0};
	cairn_read_options ro = {0};
	cairn_resolve_options o = {0};
	cairn_match m[20];
	cairn_txn *t;
	size_t n;

	CHECK(st);
	OK(put_on(st, NULL,
		  "{\"kind\":\"Supplier\",\"key\":\"a0\",\"title\":\"Alpha One\"}\n"
		  "{\"kind\":\"Supplier\",\"key\":\"a1\",\"title\":\"Alpha Two\"}\n"
		  "{\"kind\":\"Supplier\",\"key\":\"s1\",\"title\":\"Zeta Mart\"}",
		  NULL));
	OK(cairn_domain_create(st, "d2"));
	co.domain = "d2";
	OK(cairn_schema_apply(st, &co, rschema, strlen(rschema), NULL));
	/* d2's first names sort right after d's last one, and are the same. */
	OK(test_commit_in(st, "d2",
			  "{\"kind\":\"Supplier\",\"key\":\"zz1\",\"title\":\"Zeta Mart\"}\n"
			  "{\"kind\":\"Supplier\",\"key\":\"zz2\",\"title\":\"Zeta Mart\"}\n"
			  "{\"kind\":\"Supplier\",\"key\":\"zz3\",\"title\":\"Zeta Mart Two\"}",
			  NULL));
	RESOLVE(st, "Zeta Marx"); /* spelling */
	CHECK(count_is(&R, 1));
	CHECK(is_hit(&R, 0, "Supplier", "s1", CAIRN_NAME_TITLE, CAIRN_MATCH_SPELLING, NULL));
	RESOLVE(st, "Zeta Mart"); /* exact */
	CHECK(count_is(&R, 1));
	CHECK(is_hit(&R, 0, "Supplier", "s1", CAIRN_NAME_TITLE, CAIRN_MATCH_EXACT, NULL));
	RESOLVE(st, "zeta"); /* prefix */
	CHECK(count_is(&R, 1) && strcmp(R.h[0].key, "s1") == 0);
	RESOLVE(st, "Alpha"); /* prefix */
	CHECK(count_is(&R, 2));
	CHECK(strcmp(R.h[0].key, "a0") == 0 && strcmp(R.h[1].key, "a1") == 0);
	RESOLVE(st, "zz1"); /* a key of the other Domain */
	CHECK(count_is(&R, 0));
	/* And the other way round. */
	ro.domain = "d2";
	OK(cairn_txn_begin(st, &ro, &t));
	o.text = "Zeta Marx";
	OK(cairn_resolve(t, &o, m, 20, &n, NULL));
	CHECK(n == 2 && test_streq(m[0].rec.key, m[0].rec.key_len, "zz1") &&
	      test_streq(m[1].rec.key, m[1].rec.key_len, "zz2"));
	o.text = "Alpha One";
	OK(cairn_resolve(t, &o, m, 20, &n, NULL));
	CHECK(n == 0);
	cairn_txn_end(t);

	/* A dropped Domain's names are gone, also under a Domain of the same name. */
	OK(cairn_domain_create(st, "d3"));
	co.domain = "d3";
	OK(cairn_schema_apply(st, &co, rschema, strlen(rschema), NULL));
	OK(test_commit_in(st, "d3", "{\"kind\":\"Plant\",\"key\":\"g\",\"title\":\"Ghost Name\"}",
			  NULL));
	OK(cairn_domain_drop(st, "d3"));
	OK(cairn_domain_create(st, "d3"));
	OK(cairn_schema_apply(st, &co, rschema, strlen(rschema), NULL));
	ro.domain = "d3";
	OK(cairn_txn_begin(st, &ro, &t));
	o.text = "Ghost Name";
	OK(cairn_resolve(t, &o, m, 20, &n, NULL));
	cairn_txn_end(t);
	CHECK(n == 0);
	CHECK(check_clean(st));
	OK(cairn_check(st, "d2", NULL, NULL, NULL));
	OK(cairn_check(st, "d3", NULL, NULL, NULL));
	cairn_close(st);
}

/* -------------------------------------------------------- reference -- */

/*
 * Random titles over a small alphabet (so that many are close to each
 * other, and many are the same), on main, on a branch that diverged and at
 * a past revision, resolved with random texts and options and compared with
 * a brute-force reading of the rules: exact, folded, prefix of whole words,
 * close spellings from the same first byte (none under 4 bytes, 1 edit under
 * 8, else max_edits).
 */
#define NSLOT 160

typedef struct tmodel {
	char title[NSLOT][64]; /* "" : no Record */
} tmodel;

enum { C_EXACT = 1, C_FOLDED = 2, C_SP1 = 4, C_SP2 = 8, C_PREFIX = 16 };

static void random_title(char *buf, size_t cap)
{
	static const char *const forms[] = {"a", "b", "c", "A", "B", "\xc3\xa1", "c", "b"};
	static const char *const seps[] = {" ", "-", ", ", "  "};
	int words = 1 + rand() % 4;
	size_t len = 0;

	buf[0] = '\0';
	for (int w = 0; w < words; w++) {
		int wl = 1 + rand() % 6;

		if (w)
			len += (size_t)snprintf(buf + len, cap - len, "%s", seps[rand() % 4]);
		for (int i = 0; i < wl; i++)
			len += (size_t)snprintf(buf + len, cap - len, "%s", forms[rand() % 8]);
	}
}

static void slot_key(int s, char *key)
{
	snprintf(key, 8, "z%03d", s);
}

static void random_edit(char *t)
{
	size_t n = strlen(t), p = n ? (size_t)rand() % n : 0;
	char c = "abc "[rand() % 4];

	switch (rand() % 4) {
	case 0: /* insert */
		memmove(t + p + 1, t + p, n - p + 1);
		t[p] = c;
		break;
	case 1: /* delete */
		if (n)
			memmove(t + p, t + p + 1, n - p);
		break;
	case 2: /* substitute */
		if (n)
			t[p] = c;
		break;
	default: /* transpose */
		if (p + 1 < n) {
			char x = t[p];

			t[p] = t[p + 1];
			t[p + 1] = x;
		}
	}
}

static void random_text(const tmodel *m, char *buf, size_t cap)
{
	const char *title = NULL;
	char tn[NAME_CAP + 1];
	size_t tl;

	for (int tries = 0; tries < 1000 && !title; tries++) {
		int s = rand() % NSLOT;

		if (m->title[s][0])
			title = m->title[s];
	}
	if (!title || rand() % 6 == 5) {
		int len = 1 + rand() % 12;

		for (int i = 0; i < len; i++)
			buf[i] = "abc "[rand() % 4];
		buf[len] = '\0';
		return;
	}
	tl = name_norm(title, strlen(title), tn);
	if (tl >= cap)
		tl = cap - 1;
	tn[tl] = '\0';
	switch (rand() % 5) {
	case 0:
		snprintf(buf, cap, "%s", title);
		break;
	case 1:
		memcpy(buf, tn, tl + 1);
		for (size_t i = 0; buf[i]; i++)
			if (rand() % 3 == 0 && buf[i] != ' ')
				buf[i] = (char)(buf[i] - 'a' + 'A');
		break;
	case 2:
	case 3: /* one edit, or two */
		memcpy(buf, tn, tl + 1);
		random_edit(buf);
		if (rand() % 3)
			random_edit(buf);
		break;
	default: { /* the first words */
		char *sp;

		memcpy(buf, tn, tl + 1);
		sp = strrchr(buf, ' ');
		if (sp && sp != buf)
			*sp = '\0';
		else if (tl > 1)
			buf[1 + (size_t)rand() % (tl - 1)] = '\0';
	}
	}
	if (!buf[0])
		strcpy(buf, "a");
}

/* How the text may match a title under the rules; 0 when not at all. */
static unsigned title_cands(const char *text, const char *q, size_t qn, const char *title,
			    unsigned k, int exact)
{
	char tn[NAME_CAP];
	size_t tl = name_norm(title, strlen(title), tn);
	unsigned c = 0;

	if (!qn || !tl)
		return 0;
	if (strcmp(title, text) == 0)
		c |= C_EXACT;
	else if (tl == qn && memcmp(tn, q, qn) == 0)
		c |= C_FOLDED;
	if (exact)
		return c;
	if (qn < NAME_CAP && tl > qn && memcmp(tn, q, qn) == 0 && tn[qn] == ' ')
		c |= C_PREFIX;
	if (qn >= 4 && tn[0] == q[0] && !(tl == qn && memcmp(tn, q, qn) == 0)) {
		unsigned d = test_osa(q, qn, tn, tl);

		if (d >= 1 && d <= k)
			c |= d == 1 ? C_SP1 : C_SP2;
	}
	return c;
}

/* Resolve random texts in one view and compare with the model. */
static int compare_view(cairn_store *st, const char *branch, uint64_t at, const tmodel *m,
			int texts)
{
	for (int it = 0; it < texts; it++) {
		cairn_resolve_options o = {0};
		unsigned cand[NSLOT];
		char text[128], q[NAME_CAP];
		size_t qn, expected = 0;
		unsigned k;
		int rc;

		random_text(m, text, sizeof(text));
		o.text = text;
		o.limit = 100;
		o.max_edits = rand() % 2 ? 2 : (unsigned)(rand() % 2);
		o.exact = rand() % 8 == 0;
		qn = name_norm(text, strlen(text), q);
		k = qn < 8 ? 1 : o.max_edits ? o.max_edits : 1;
		for (int s = 0; s < NSLOT; s++) {
			cand[s] = m->title[s][0] ? title_cands(text, q, qn, m->title[s], k, o.exact)
						 : 0;
			expected += cand[s] != 0;
		}
		if ((rc = resolve_at(st, branch, at, &o, &R))) {
			fprintf(stderr, "    \"%s\": %s\n", text, cairn_errname(rc));
			return 0;
		}
		if (!R.sane || R.truncated || R.n != (expected < 100 ? expected : 100)) {
			fprintf(stderr,
				"    %s@%llu \"%s\" (max_edits %u, exact %d): %zu answers, "
				"expected %zu%s\n",
				branch ? branch : "main", (unsigned long long)at, text, o.max_edits,
				o.exact, R.n, expected, R.truncated ? ", truncated" : "");
			dump(&R);
			for (int s = 0; s < NSLOT; s++)
				if (cand[s])
					fprintf(stderr, "      expected z%03d \"%s\" (%u)\n", s,
						m->title[s], cand[s]);
			return 0;
		}
		for (size_t i = 0; i < R.n; i++) {
			const hit *h = &R.h[i];
			int s = atoi(h->key + 1);
			unsigned want = 0;

			if (s >= 0 && s < NSLOT && h->source == CAIRN_NAME_TITLE) {
				switch (h->match) {
				case CAIRN_MATCH_EXACT:
					want = C_EXACT;
					break;
				case CAIRN_MATCH_FOLDED:
					want = C_FOLDED;
					break;
				case CAIRN_MATCH_PREFIX:
					want = C_PREFIX;
					break;
				default:
					want = h->edits == 1 ? C_SP1 : C_SP2;
				}
			}
			/* A reason the rules allow, and the best one when exact or folded. */
			if (!want || !(cand[s] & want) || strcmp(h->title, m->title[s]) != 0 ||
			    ((cand[s] & C_EXACT) && want != C_EXACT) ||
			    ((cand[s] & C_FOLDED) && want != C_FOLDED)) {
				fprintf(stderr,
					"    %s@%llu \"%s\": answer %s \"%s\" (%s) is not expected "
					"(%u)\n",
					branch ? branch : "main", (unsigned long long)at, text,
					h->key, h->title, h->reason,
					s >= 0 && s < NSLOT ? cand[s] : 0);
				return 0;
			}
		}
	}
	return 1;
}

static int commit_cs(cairn_store *st, const char *branch, cairn_changeset *cs, uint64_t *rev)
{
	cairn_commit_options co = {0};
	cairn_commit_result res;
	int rc;

	co.domain = "d";
	co.branch = branch;
	rc = cairn_commit(st, &co, cs, &res);
	cairn_changeset_clear(cs);
	if (!rc && rev)
		*rev = res.revision;
	return rc;
}

/* Put (title) or delete ("") slot s in a change set and in the model. */
static int change_slot(cairn_changeset *cs, tmodel *m, int s, int del)
{
	char key[8];

	slot_key(s, key);
	if (del) {
		m->title[s][0] = '\0';
		return cairn_changeset_delete(cs, "Plant", key, strlen(key), 0);
	}
	random_title(m->title[s], sizeof(m->title[s]));
	return cairn_changeset_put(cs, "Plant", key, strlen(key), m->title[s], strlen(m->title[s]), NULL,
				   0);
}

void test_resolve_reference(void)
{
	static tmodel past, br, cur;
	cairn_store *st = rstore();
	cairn_changeset *cs;
	uint64_t rev_past;

	CHECK(st);
	srand(2024);
	OK(cairn_changeset_new(&cs));
	memset(&past, 0, sizeof(past));
	for (int s = 0; s < NSLOT - 30; s++)
		OK(change_slot(cs, &past, s, 0));
	OK(commit_cs(st, NULL, cs, &rev_past));
	br = past;
	cur = past;
	OK(cairn_branch_create(st, "d", "b", NULL));
	/* The branch: 30 renamed, 15 deleted, 20 new. */
	for (int i = 0; i < 30; i++)
		OK(change_slot(cs, &br, rand() % (NSLOT - 30), 0));
	OK(commit_cs(st, "b", cs, NULL));
	for (int i = 0; i < 15; i++) {
		int s = rand() % (NSLOT - 30);

		if (br.title[s][0])
			OK(change_slot(cs, &br, s, 1));
	}
	for (int s = NSLOT - 30; s < NSLOT - 10; s++)
		OK(change_slot(cs, &br, s, 0));
	OK(commit_cs(st, "b", cs, NULL));
	/* main goes on: 30 renamed, 10 deleted, 5 new. */
	for (int i = 0; i < 30; i++)
		OK(change_slot(cs, &cur, rand() % (NSLOT - 30), 0));
	OK(commit_cs(st, NULL, cs, NULL));
	for (int i = 0; i < 10; i++) {
		int s = rand() % (NSLOT - 30);

		if (cur.title[s][0])
			OK(change_slot(cs, &cur, s, 1));
	}
	for (int s = NSLOT - 5; s < NSLOT; s++)
		OK(change_slot(cs, &cur, s, 0));
	OK(commit_cs(st, NULL, cs, NULL));
	cairn_changeset_free(cs);

	CHECK(compare_view(st, NULL, 0, &cur, 300));
	CHECK(compare_view(st, "b", 0, &br, 300));
	CHECK(compare_view(st, NULL, rev_past, &past, 300));
	CHECK(check_clean(st));
	cairn_close(st);
}

/* ----------------------------------------------------------- errors -- */

void test_resolve_errors(void)
{
	cairn_store *st = rstore();
	cairn_read_options ro = {0};
	cairn_resolve_options o = {0};
	cairn_match m[128];
	cairn_txn *t;
	size_t n;
	char big[1100];

	CHECK(st);
	OK(put_on(st, NULL, "{\"kind\":\"Supplier\",\"key\":\"s1\",\"title\":\"Acme\"}", NULL));
	ro.domain = "d";
	OK(cairn_txn_begin(st, &ro, &t));
	o.text = "Acme";

	/* NULL arguments. */
	CHECK_RC(cairn_resolve(NULL, &o, m, 128, &n, NULL), CAIRN_EINVAL);
	CHECK_RC(cairn_resolve(t, NULL, m, 128, &n, NULL), CAIRN_EINVAL);
	CHECK_RC(cairn_resolve(t, &o, NULL, 128, &n, NULL), CAIRN_EINVAL);
	CHECK_RC(cairn_resolve(t, &o, m, 128, NULL, NULL), CAIRN_EINVAL);
	o.text = NULL;
	n = 9;
	CHECK_RC(cairn_resolve(t, &o, m, 128, &n, NULL), CAIRN_EINVAL);
	CHECK(strlen(cairn_errmsg()) > 0);
	o.text = NULL;
	o.text_len = 4;
	CHECK_RC(cairn_resolve(t, &o, m, 128, &n, NULL), CAIRN_EINVAL);
	o.text_len = 0;
	/* truncated may be NULL. */
	o.text = "Acme";
	n = 9;
	OK(cairn_resolve(t, &o, m, 128, &n, NULL));
	CHECK(n == 1);

	/* The text: 1 to 1024 bytes of UTF-8. */
	o.text = "";
	n = 9;
	CHECK_RC(cairn_resolve(t, &o, m, 128, &n, NULL), CAIRN_EINVAL);
	CHECK(n == 0);
	memset(big, 'a', sizeof(big));
	o.text = big;
	o.text_len = 1025;
	CHECK_RC(cairn_resolve(t, &o, m, 128, &n, NULL), CAIRN_EINVAL);
	o.text_len = 1024;
	OK(cairn_resolve(t, &o, m, 128, &n, NULL));
	CHECK(n == 0);
	big[1024] = '\0';
	o.text_len = 0; /* strlen: 1024 */
	OK(cairn_resolve(t, &o, m, 128, &n, NULL));
	big[1024] = 'a';
	big[1025] = '\0';
	CHECK_RC(cairn_resolve(t, &o, m, 128, &n, NULL), CAIRN_EINVAL); /* strlen: 1025 */
	o.text = "Acm\xff";
	n = 9;
	CHECK_RC(cairn_resolve(t, &o, m, 128, &n, NULL), CAIRN_EUTF8);
	CHECK(n == 0);
	o.text = "\xc3";
	CHECK_RC(cairn_resolve(t, &o, m, 128, &n, NULL), CAIRN_EUTF8);
	o.text = "Acme \xed\xa0\x80";
	CHECK_RC(cairn_resolve(t, &o, m, 128, &n, NULL), CAIRN_EUTF8);
	o.text = "Acme";
	o.text_len = 0;

	/* limit: 0 is 10, then 1 to 100, and no more than out holds. */
	o.limit = 0;
	OK(cairn_resolve(t, &o, m, 10, &n, NULL));
	CHECK_RC(cairn_resolve(t, &o, m, 9, &n, NULL), CAIRN_EINVAL);
	o.limit = 100;
	OK(cairn_resolve(t, &o, m, 100, &n, NULL));
	o.limit = 101;
	n = 9;
	CHECK_RC(cairn_resolve(t, &o, m, 128, &n, NULL), CAIRN_EINVAL);
	CHECK(n == 0);
	o.limit = 5;
	CHECK_RC(cairn_resolve(t, &o, m, 4, &n, NULL), CAIRN_EINVAL);
	CHECK_RC(cairn_resolve(t, &o, m, 0, &n, NULL), CAIRN_EINVAL);
	OK(cairn_resolve(t, &o, m, 5, &n, NULL));
	o.limit = 0;

	/* max_edits: 0, 1 or 2. */
	o.max_edits = 3;
	CHECK_RC(cairn_resolve(t, &o, m, 128, &n, NULL), CAIRN_EINVAL);
	o.max_edits = 100;
	CHECK_RC(cairn_resolve(t, &o, m, 128, &n, NULL), CAIRN_EINVAL);
	o.max_edits = 2;
	OK(cairn_resolve(t, &o, m, 128, &n, NULL));
	o.max_edits = 0;

	/* Kinds. */
	{
		const char *unknown[] = {"Supplier", "Nope"};
		const char *null_kind[] = {NULL};
		const char *many[65];

		o.kinds = unknown;
		o.n_kinds = 2;
		n = 9;
		CHECK_RC(cairn_resolve(t, &o, m, 128, &n, NULL), CAIRN_EUNKNOWNKIND);
		CHECK(n == 0 && strstr(cairn_errmsg(), "Nope"));
		o.n_kinds = 1;
		OK(cairn_resolve(t, &o, m, 128, &n, NULL));
		CHECK(n == 1);
		o.kinds = null_kind;
		CHECK_RC(cairn_resolve(t, &o, m, 128, &n, NULL), CAIRN_EUNKNOWNKIND);
		o.kinds = NULL;
		o.n_kinds = 1;
		CHECK_RC(cairn_resolve(t, &o, m, 128, &n, NULL), CAIRN_EINVAL);
		for (int i = 0; i < 65; i++)
			many[i] = "Supplier";
		o.kinds = many;
		o.n_kinds = 65;
		CHECK_RC(cairn_resolve(t, &o, m, 128, &n, NULL), CAIRN_EINVAL);
		o.n_kinds = 64;
		OK(cairn_resolve(t, &o, m, 128, &n, NULL));
		CHECK(n == 1);
		o.kinds = NULL;
		o.n_kinds = 0;
	}
	/* The transaction is still good after all of that. */
	{
		int tr = 5;

		OK(cairn_resolve(t, &o, m, 128, &n, &tr));
		CHECK(n == 1 && tr == 0 && m[0].score > 0 &&
		      test_streq(m[0].rec.key, m[0].rec.key_len, "s1"));
	}
	cairn_txn_end(t);
	cairn_close(st);
}

/* --------------------------------------------------------- the budget -- */

/*
 * So many names that start like the text, each ruled out only after a
 * seek of its own, that the spelling walk stops at its budget: truncated
 * is set, and the exact answer still comes first.
 */
void test_resolve_truncated(void)
{
	static const char alpha[] = "0123456789ijklmnopqrstuvwxyz";
	static const char *const lead[] = {"a", "ab", "abc"};
	cairn_store *st = rstore();
	cairn_resolve_options o = {0};
	cairn_changeset *cs;
	cairn_commit_options co = {0};
	size_t na = strlen(alpha);

	CHECK(st);
	OK(cairn_changeset_new(&cs));
	for (size_t l = 0; l < 3; l++)
		for (size_t x = 0; x < na; x++)
			for (size_t y = 0; y < na; y++) {
				char key[16];
				int len = snprintf(key, sizeof(key), "%s%c%cq", lead[l], alpha[x],
						   alpha[y]);

				if (cairn_changeset_put(cs, "Plant", key, (size_t)len, NULL, 0, NULL, 0)) {
					cairn_changeset_free(cs);
					CHECK(!"cairn_changeset_put");
				}
			}
	if (cairn_changeset_put(cs, "Plant", "target", 6, "abcdefgh", 8, NULL, 0)) {
		cairn_changeset_free(cs);
		CHECK(!"cairn_changeset_put");
	}
	co.domain = "d";
	{
		int rc = cairn_commit(st, &co, cs, NULL);

		cairn_changeset_free(cs);
		OK(rc);
	}
	o.text = "abcdefgh";
	RESOLVE_O(st, &o);
	CHECK(R.truncated == 1);
	CHECK(R.n >= 1);
	CHECK(is_hit(&R, 0, "Plant", "target", CAIRN_NAME_TITLE, CAIRN_MATCH_EXACT, NULL));
	/* Without the spelling walk, nothing is cut short. */
	o.exact = 1;
	RESOLVE_O(st, &o);
	CHECK(R.truncated == 0 && count_is(&R, 1));
	/* A text whose neighborhood is small is not truncated. */
	o.exact = 0;
	o.text = "zzzzzzzz";
	RESOLVE_O(st, &o);
	CHECK(R.truncated == 0 && count_is(&R, 0));
	cairn_close(st);
}

/* ---------------------------------------------------------- upgrade -- */

/*
 * Set the store's format marker (and drop the names sub-database when
 * drop), with LMDB directly, the store closed. *was gets the format found.
 */
static int lmdb_format(unsigned format, int drop, unsigned *was)
{
	MDB_env *env;
	MDB_txn *txn;
	MDB_dbi meta, names;
	MDB_val k, v;
	uint8_t mark[16];
	int rc;

	if ((rc = mdb_env_create(&env)))
		return rc;
	mdb_env_set_maxdbs(env, 32);
	mdb_env_set_mapsize(env, (size_t)1 << 30);
	if ((rc = mdb_env_open(env, test_path("store"), 0, 0644)))
		goto out_env;
	if ((rc = mdb_txn_begin(env, NULL, 0, &txn)))
		goto out_env;
	if ((rc = mdb_dbi_open(txn, "meta", 0, &meta)))
		goto out_txn;
	k.mv_data = "format";
	k.mv_size = 6;
	if ((rc = mdb_get(txn, meta, &k, &v)))
		goto out_txn;
	if (v.mv_size != 16 || memcmp(v.mv_data, "CAIRN-STORE\0", 12) != 0) {
		fprintf(stderr, "    the format marker is not CAIRN-STORE\\0 + 4 bytes\n");
		rc = MDB_INCOMPATIBLE;
		goto out_txn;
	}
	if (was) {
		const uint8_t *p = (const uint8_t *)v.mv_data + 12;

		*was = (unsigned)p[0] << 24 | (unsigned)p[1] << 16 | (unsigned)p[2] << 8 | p[3];
	}
	if (drop) { /* the sub-databases later formats brought */
		if (format < 5 &&
		    ((rc = mdb_dbi_open(txn, "names", 0, &names)) || (rc = mdb_drop(txn, names, 1))))
			goto out_txn;
		if (format < 7 &&
		    ((rc = mdb_dbi_open(txn, "postings", 0, &names)) || (rc = mdb_drop(txn, names, 1))))
			goto out_txn;
		if (format < 10 &&
		    ((rc = mdb_dbi_open(txn, "kseg", 0, &names)) || (rc = mdb_drop(txn, names, 1))))
			goto out_txn;
	}
	if (format) {
		memcpy(mark, "CAIRN-STORE\0", 12);
		mark[12] = (uint8_t)(format >> 24);
		mark[13] = (uint8_t)(format >> 16);
		mark[14] = (uint8_t)(format >> 8);
		mark[15] = (uint8_t)format;
		v.mv_data = mark;
		v.mv_size = 16;
		if ((rc = mdb_put(txn, meta, &k, &v, 0)))
			goto out_txn;
	}
	rc = mdb_txn_commit(txn);
	mdb_env_close(env);
	return rc;
out_txn:
	mdb_txn_abort(txn);
out_env:
	mdb_env_close(env);
	return rc;
}

/* Is there a names sub-database (and how many entries)? -1 when not. */
static long lmdb_names(void)
{
	MDB_env *env;
	MDB_txn *txn;
	MDB_dbi names;
	MDB_stat s;
	long n = -1;

	if (mdb_env_create(&env))
		return -2;
	mdb_env_set_maxdbs(env, 32);
	if (mdb_env_open(env, test_path("store"), MDB_RDONLY, 0644) == 0 &&
	    mdb_txn_begin(env, NULL, MDB_RDONLY, &txn) == 0) {
		if (mdb_dbi_open(txn, "names", 0, &names) == 0 && mdb_stat(txn, names, &s) == 0)
			n = (long)s.ms_entries;
		mdb_txn_abort(txn);
	}
	mdb_env_close(env);
	return n;
}

/*
 * Put names entries with LMDB directly (the store closed): one for name
 * with the dom, vid and source of the first entry found for `like`, and
 * with source byte src (0: keep it).
 */
static int lmdb_put_name(const char *like, const char *name, uint8_t src)
{
	MDB_env *env;
	MDB_txn *txn;
	MDB_dbi names;
	MDB_cursor *cur;
	MDB_val k, v;
	uint8_t key[300];
	size_t ln = strlen(like), nn = strlen(name);
	int rc;

	if ((rc = mdb_env_create(&env)))
		return rc;
	mdb_env_set_maxdbs(env, 32);
	mdb_env_set_mapsize(env, (size_t)1 << 30);
	if ((rc = mdb_env_open(env, test_path("store"), 0, 0644)) ||
	    (rc = mdb_txn_begin(env, NULL, 0, &txn))) {
		mdb_env_close(env);
		return rc;
	}
	if ((rc = mdb_dbi_open(txn, "names", 0, &names)) ||
	    (rc = mdb_cursor_open(txn, names, &cur)))
		goto out;
	rc = MDB_NOTFOUND;
	while (mdb_cursor_get(cur, &k, &v, rc == MDB_NOTFOUND ? MDB_FIRST : MDB_NEXT) == 0) {
		const uint8_t *kk = k.mv_data;

		rc = MDB_NOTFOUND + 1; /* walking */
		if (k.mv_size == 4 + ln + 14 && memcmp(kk + 4, like, ln) == 0 && kk[4 + ln] == 0) {
			memcpy(key, kk, 4);
			memcpy(key + 4, name, nn);
			memcpy(key + 4 + nn, kk + 4 + ln, 14);
			if (src)
				key[4 + nn + 9] = src;
			rc = 0;
			break;
		}
	}
	mdb_cursor_close(cur);
	if (rc) {
		rc = MDB_NOTFOUND;
		goto out;
	}
	k.mv_data = key;
	k.mv_size = 4 + nn + 14;
	v.mv_data = "";
	v.mv_size = 0;
	if ((rc = mdb_put(txn, names, &k, &v, 0)))
		goto out;
	rc = mdb_txn_commit(txn);
	mdb_env_close(env);
	return rc;
out:
	mdb_txn_abort(txn);
	mdb_env_close(env);
	return rc;
}

/* cairn_check looks at names entries: a wrong name, a malformed entry. */
void test_resolve_check_detects(void)
{
	cairn_store *st = rstore();
	int problems = 0;

	CHECK(st);
	OK(put_on(st, NULL,
		  "{\"kind\":\"Supplier\",\"key\":\"c1\",\"title\":\"Checked Title\","
		  "\"values\":{\"aka\":[\"Checked Alias\"]}}",
		  NULL));
	CHECK(check_clean(st));
	cairn_close(st);
	/* An entry whose Version does not have that name. */
	OK(lmdb_put_name("checked title", "wrong name", 0));
	OK(open_store(0, &st));
	CHECK_RC(cairn_check(st, "d", count_quiet, &problems, NULL), CAIRN_ECORRUPT);
	CHECK(problems == 1);
	cairn_close(st);
	/* An entry with a source that does not exist: check reports it, resolve refuses it. */
	OK(lmdb_put_name("checked alias", "bad source", 9));
	OK(open_store(0, &st));
	problems = 0;
	CHECK_RC(cairn_check(st, "d", count_quiet, &problems, NULL), CAIRN_ECORRUPT);
	CHECK(problems == 2);
	CHECK_RC(resolve_text(st, NULL, 0, "bad source", &R), CAIRN_ECORRUPT);
	RESOLVE(st, "Checked Title"); /* the rest still reads */
	CHECK(count_is(&R, 1));
	cairn_close(st);
}

void test_resolve_upgrade(void)
{
	cairn_store *st = rstore();
	uint64_t r1, entries;
	unsigned was = 0;
	long on_disk;

	CHECK(st);
	OK(cairn_domain_create(st, "empty")); /* a Domain without a schema */
	OK(cairn_domain_create(st, "gone"));
	OK(cairn_domain_drop(st, "gone"));
	{
		cairn_commit_options co = {0};

		co.domain = "d2";
		OK(cairn_domain_create(st, "d2"));
		OK(cairn_schema_apply(st, &co, rschema, strlen(rschema), NULL));
		OK(test_commit_in(st, "d2",
				  "{\"kind\":\"Plant\",\"key\":\"p\",\"title\":\"Other Domain\"}",
				  NULL));
	}
	OK(put_on(st, NULL,
		  "{\"kind\":\"Supplier\",\"key\":\"u1\",\"title\":\"Upgrade Me GmbH\","
		  "\"values\":{\"vat\":\"UP-1\",\"aka\":[\"Upgradable\"]}}",
		  &r1));
	OK(put_on(st, NULL,
		  "{\"kind\":\"Supplier\",\"key\":\"u1\",\"title\":\"Upgraded GmbH\","
		  "\"values\":{\"vat\":\"UP-1\"}}",
		  NULL));
	OK(cairn_branch_create(st, "d", "b", NULL));
	OK(put_on(st, "b", "{\"kind\":\"Supplier\",\"key\":\"u2\",\"title\":\"On The Branch\"}",
		  NULL));
	/* A branch deleted but not yet cleared when the store is upgraded. */
	OK(cairn_branch_create(st, "d", "del", NULL));
	OK(put_on(st, "del",
		  "{\"kind\":\"Supplier\",\"key\":\"u9\",\"title\":\"Deleted Branch Thing\","
		  "\"values\":{\"aka\":[\"Deleted Alias\"]}}",
		  NULL));
	OK(cairn_branch_delete(st, "d", "del"));
	entries = names_entries(st);
	CHECK(entries > 0 && entries != UINT64_MAX);
	cairn_close(st);
	st = NULL;

	/* A new store is of format 13. */
	OK(lmdb_format(0, 0, &was));
	CHECK(was == 13);
	/* Make it a format 4 store: no names sub-database. */
	OK(lmdb_format(4, 1, NULL));
	CHECK(lmdb_names() == -1);

	/* Read-only, it cannot be upgraded: refused, with a word on what to do. */
	CHECK_RC(open_store(CAIRN_OPEN_RDONLY, &st), CAIRN_EFORMAT);
	CHECK(st == NULL);
	CHECK(strstr(cairn_errmsg(), "read-write") != NULL);
	CHECK(lmdb_names() == -1);
	OK(lmdb_format(0, 0, &was));
	CHECK(was == 4);

	/* Read-write, it is upgraded as it opens. */
	OK(open_store(0, &st));
	RESOLVE(st, "Upgraded GmbH");
	CHECK(count_is(&R, 1));
	CHECK(is_hit(&R, 0, "Supplier", "u1", CAIRN_NAME_TITLE, CAIRN_MATCH_EXACT, NULL));
	RESOLVE(st, "UP-1");
	CHECK(count_is(&R, 1));
	CHECK(is_hit(&R, 0, "Supplier", "u1", CAIRN_NAME_UNIQUE, CAIRN_MATCH_EXACT, "vat"));
	RESOLVE(st, "upgraded");
	CHECK(count_is(&R, 1) && R.h[0].match == CAIRN_MATCH_PREFIX);
	RESOLVE(st, "Upgrade Me GmbH");
	CHECK(count_is(&R, 0));
	RESOLVE_IN(st, NULL, r1, "Upgrade Me GmbH"); /* every Version, not only the live ones */
	CHECK(count_is(&R, 1));
	RESOLVE_IN(st, NULL, r1, "Upgradable");
	CHECK(count_is(&R, 1) && R.h[0].source == CAIRN_NAME_ALIAS);
	RESOLVE_IN(st, "b", 0, "On The Branch");
	CHECK(count_is(&R, 1));
	{
		cairn_read_options ro = {0};
		cairn_resolve_options o = {0};
		cairn_match m[10];
		cairn_txn *t;
		size_t n;

		ro.domain = "d2";
		OK(cairn_txn_begin(st, &ro, &t));
		o.text = "Other Domain";
		OK(cairn_resolve(t, &o, m, 10, &n, NULL));
		cairn_txn_end(t);
		CHECK(n == 1);
	}
	CHECK(names_entries(st) == entries);
	CHECK(check_clean(st));
	OK(cairn_check(st, "d2", NULL, NULL, NULL));
	/* The deleted branch is cleared, names and all. */
	OK(clear_deleted(st));
	CHECK(check_clean(st));
	CHECK(names_entries(st) == entries - 3); /* its key, title and alias */
	/* And it goes on: new commits, and opening again changes nothing. */
	OK(put_on(st, NULL, "{\"kind\":\"Supplier\",\"key\":\"u3\",\"title\":\"After Upgrade\"}",
		  NULL));
	cairn_close(st);
	st = NULL;
	OK(lmdb_format(0, 0, &was));
	CHECK(was == 13);
	on_disk = lmdb_names();
	CHECK(on_disk > 0);
	OK(open_store(CAIRN_OPEN_RDONLY, &st));
	RESOLVE(st, "After Upgrade");
	CHECK(count_is(&R, 1));
	RESOLVE(st, "Upgraded GmbH");
	CHECK(count_is(&R, 1));
	cairn_close(st);
	st = NULL;
	CHECK(lmdb_names() == on_disk);

	/* A format 4 store that still has a names sub-database upgrades the same. */
	OK(lmdb_format(4, 0, NULL));
	OK(open_store(0, &st));
	CHECK(check_clean(st));
	RESOLVE(st, "After Upgrade");
	CHECK(count_is(&R, 1));
	cairn_close(st);
	st = NULL;
	CHECK(lmdb_names() == on_disk);

	/* A format 5 store: no postings; upgraded, its words are found. */
	OK(lmdb_format(5, 1, NULL));
	CHECK_RC(open_store(CAIRN_OPEN_RDONLY, &st), CAIRN_EFORMAT);
	OK(open_store(0, &st));
	CHECK(check_clean(st));
	{
		cairn_read_options ro = {0};
		cairn_search_options so = {0};
		cairn_hit h[5];
		cairn_txn *t;
		size_t n;

		ro.domain = "d";
		OK(cairn_txn_begin(st, &ro, &t));
		so.text = "upgraded";
		so.limit = 5;
		OK(cairn_search(t, &so, h, 5, &n, NULL));
		/* Upgraded GmbH as written, After Upgrade by its stem */
		CHECK(n == 2 && h[0].rec.key_len == 2 && memcmp(h[0].rec.key, "u1", 2) == 0);
		CHECK(h[1].rec.key_len == 2 && memcmp(h[1].rec.key, "u3", 2) == 0);
		so.text = "after upgrade";
		so.all_words = 1;
		OK(cairn_search(t, &so, h, 5, &n, NULL));
		CHECK(n == 1 && h[0].rec.key_len == 2 && memcmp(h[0].rec.key, "u3", 2) == 0);
		cairn_txn_end(t);
	}
	cairn_close(st);
	st = NULL;
	OK(lmdb_format(0, 0, &was));
	CHECK(was == 13);

	/* Format 6 (postings without positions, here none at all): rebuilt, phrases work. */
	OK(lmdb_format(6, 1, NULL));
	OK(open_store(0, &st));
	CHECK(check_clean(st));
	{
		cairn_read_options ro = {0};
		cairn_search_options so = {0};
		cairn_hit h[5];
		cairn_txn *t;
		size_t n;

		ro.domain = "d";
		OK(cairn_txn_begin(st, &ro, &t));
		so.text = "\"after upgrade\"";
		so.limit = 5;
		OK(cairn_search(t, &so, h, 5, &n, NULL));
		CHECK(n == 1 && h[0].rec.key_len == 2 && memcmp(h[0].rec.key, "u3", 2) == 0);
		so.text = "\"upgrade after\"";
		OK(cairn_search(t, &so, h, 5, &n, NULL));
		CHECK(n == 0);
		cairn_txn_end(t);
	}
	cairn_close(st);
	st = NULL;
	OK(lmdb_format(0, 0, &was));
	CHECK(was == 13);

	/* Format 3 (and anything else but 4 to 13) is refused, both ways. */
	OK(lmdb_format(3, 0, NULL));
	CHECK_RC(open_store(0, &st), CAIRN_EFORMAT);
	CHECK(st == NULL);
	CHECK_RC(open_store(CAIRN_OPEN_RDONLY, &st), CAIRN_EFORMAT);
	OK(lmdb_format(0, 0, &was));
	CHECK(was == 3); /* untouched */
	OK(lmdb_format(14, 0, NULL));
	CHECK_RC(open_store(0, &st), CAIRN_EFORMAT);
	OK(lmdb_format(3, 1, NULL));
	CHECK_RC(open_store(0, &st), CAIRN_EFORMAT);
	CHECK(st == NULL);
}
