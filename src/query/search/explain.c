/*
 * Full-text search's explain: the terms a hit has, in which fields, what
 * each adds to its score, and snippets of its fields with the matches marked.
 */
#include <string.h>

#include "base/alloc.h"
#include "base/err.h"
#include "query/search/search_int.h"

/* ------------------------------------------------------------- explain -- */

#define SNIPPET_BEFORE 4	/* words shown before a value's first match */
#define SNIPPET_WORDS 16	/* words of a value's snippet */
#define SNIPPET_TITLE 48	/* ... of the title's */
#define SNIPPETS_MAX 4		/* value snippets per hit */

/* A word of the field being explained: where it is, and whether a term matched it. */
typedef struct etok {
	size_t start, end;
	int hit;
} etok;

typedef struct ectx {
	sctx *s;
	stemmer *stem;
	uint64_t groups;	/* the hit's */
	uint32_t weight;	/* tenths, for values; 0 in the title */
	uint32_t words;
	uint32_t *tf_title, *tf_values; /* per term, as the index counts them */
	uint64_t *fields;	/* per term: bit 0 the title, bit 1 + i the searched Attribute i */
	unsigned field;
	etok *tok;
	size_t ntok, captok;
	int hits;		/* words matched in the field */
} ectx;

static int explain_token(void *ctx, const token *t)
{
	ectx *e = ctx;
	const char *st = NULL;
	size_t sn = 0;
	int matched = 0;

	if (t->kind != TK_WHOLE)
		e->words++;
	if (e->stem && t->kind == TK_WORD && !t->digits)
		sn = stem(e->stem, t->s, t->len, &st);
	for (size_t qi = 0; qi < e->s->nq; qi++) {
		const qterm *q = &e->s->q[qi];
		int is = q->term[0] == TERM_STEM ? sn && q->len == sn + 1 && !memcmp(q->term + 1, st, sn)
						  : q->len == t->len + 1 && !memcmp(q->term + 1, t->s, t->len);

		if (!is || !(e->groups >> q->group & 1))
			continue;
		if (e->weight)
			e->tf_values[qi] += e->weight;
		else
			e->tf_title[qi]++;
		e->fields[qi] |= 1ull << e->field;
		matched = 1;
	}
	if (t->kind == TK_WHOLE) { /* an identifier kept whole: its parts came before it */
		for (size_t i = e->ntok; matched && i > 0 && e->tok[i - 1].start >= t->start; i--)
			e->tok[i - 1].hit = 1;
		e->hits += matched;
		return 0;
	}
	if (e->ntok == e->captok) {
		size_t cap = e->captok ? e->captok * 2 : 64;
		etok *n = cr_reallocarray(e->tok, cap, sizeof(*n));

		if (!n)
			return err_set(CAIRN_ENOMEM, "out of memory");
		e->tok = n;
		e->captok = cap;
	}
	e->tok[e->ntok++] = (etok){t->start, t->end, matched};
	e->hits += matched;
	return 0;
}

/*
 * The snippet of a field: from a few words before its first match, some
 * words, each match between <em> and </em>, "…" where the text goes on.
 */
static void snippet(buf *b, const char *field, const char *text, size_t len, const etok *tok,
		    size_t ntok, size_t words)
{
	size_t f = 0, a, z, at;
	buf t = BUF_INIT;

	while (f < ntok && !tok[f].hit)
		f++;
	a = f > SNIPPET_BEFORE ? f - SNIPPET_BEFORE : 0;
	z = a + words < ntok ? a + words : ntok;
	at = a ? tok[a].start : 0;
	if (at)
		buf_puts(&t, "\xe2\x80\xa6");
	for (size_t i = a; i < z; i++) {
		buf_put(&t, text + at, tok[i].start - at);
		if (tok[i].hit)
			buf_puts(&t, "<em>");
		buf_put(&t, text + tok[i].start, tok[i].end - tok[i].start);
		if (tok[i].hit)
			buf_puts(&t, "</em>");
		at = tok[i].end;
	}
	if (z == ntok) {
		buf_put(&t, text + at, len - at);
	} else {
		buf_puts(&t, "\xe2\x80\xa6");
	}
	buf_puts(b, b->len && b->p[b->len - 1] != '[' ? ",{\"field\":" : "{\"field\":");
	json_quote(b, field, strlen(field));
	buf_puts(b, ",\"text\":");
	json_quote(b, (const char *)t.p, t.len);
	buf_put_u8(b, '}');
	b->oom |= t.oom;
	buf_release(&t);
}

/* Analyze one field of the hit; its snippet into snips (if not NULL) when a term matched it. */
static int explain_field(ectx *e, buf *snips, const char *name, const char *text, size_t len,
			 size_t words)
{
	uint32_t pos = 0;
	int rc;

	e->ntok = 0;
	e->hits = 0;
	if ((rc = analyze(text, len, &pos, explain_token, e)))
		return rc;
	if (e->hits && snips)
		snippet(snips, name, text, len, e->tok, e->ntok, words);
	return 0;
}

static const char *const how_name[] = {"word", "stem", "typo", "prefix", "phrase"};

/*
 * Why hit h (Version v, of Kind k) was found: the terms it has, in which
 * fields, what each adds to the score (they add up to it), and snippets.
 * The JSON goes to out->explain, in the transaction's memory.
 */
int search_explain_hit(sctx *s, stemmer *stm, const vrec *v, const kind_def *k, const hit *h,
		       cairn_hit *out)
{
	ectx e;
	buf b = BUF_INIT, snips = BUF_INIT;
	arena_mark mark = arena_mark_get(&s->t->scratch);
	const jv *vals = NULL;
	uint32_t dl_title, n_snips = 0;
	int rc = 0, first = 1;
	char *copy;

	memset(&e, 0, sizeof(e));
	e.s = s;
	e.stem = stm;
	e.groups = h->groups;
	e.tf_title = cr_calloc(s->nq ? s->nq : 1, sizeof(*e.tf_title));
	e.tf_values = cr_calloc(s->nq ? s->nq : 1, sizeof(*e.tf_values));
	e.fields = cr_calloc(s->nq ? s->nq : 1, sizeof(*e.fields));
	if (!e.tf_title || !e.tf_values || !e.fields)
		rc = err_set(CAIRN_ENOMEM, "out of memory");
	buf_put_u8(&snips, '[');
	if (!rc)
		rc = explain_field(&e, &snips, "title", v->title, v->title_len, SNIPPET_TITLE);
	dl_title = e.words;
	e.words = 0;
	if (!rc && v->values_len &&
	    !(vals = jv_parse(&s->t->scratch, v->values, v->values_len, "stored values")))
		rc = err_set(CAIRN_ECORRUPT, "stored values do not parse");
	/* The searched values as the index reads them (text.c, analyze_doc). */
	for (size_t i = 0; !rc && vals && i < k->n_attrs && i < 63; i++) {
		const attr_def *a = &k->attrs[i];
		const jv *x = a->search > 0 ? jv_get(vals, a->name) : NULL;
		size_t m = jv_is(x, JV_ARRAY) ? x->len : 1;

		e.weight = (uint32_t)(a->search * 10 + 0.5);
		e.field = (unsigned)i + 1;
		for (size_t j = 0; x && j < m && !rc; j++) {
			const jv *el = jv_is(x, JV_ARRAY) ? &x->u.items[j] : x;
			size_t before = snips.len;

			if (el->type != JV_STRING)
				continue;
			rc = explain_field(&e, n_snips < SNIPPETS_MAX ? &snips : NULL, a->name,
					   el->u.s, el->len, SNIPPET_WORDS);
			n_snips += snips.len > before;
		}
	}
	buf_puts(&snips, "]");
	buf_puts(&b, "{\"terms\":[");
	for (size_t qi = 0; qi < s->nq && !rc; qi++) {
		const qterm *q = &s->q[qi];
		const group *g = &s->g[q->group];

		if (!e.fields[qi])
			continue;
		buf_puts(&b, first ? "{\"word\":" : ",{\"word\":");
		first = 0;
		json_quote(&b, g->word, g->word_len);
		buf_puts(&b, ",\"term\":");
		json_quote(&b, q->term + 1, q->len - 1);
		buf_puts(&b, ",\"match\":\"");
		buf_puts(&b, how_name[q->how]);
		buf_put_u8(&b, '"');
		if (q->how == HOW_TYPO) {
			buf_puts(&b, ",\"edits\":");
			json_number(&b, q->edits);
		}
		buf_puts(&b, ",\"fields\":[");
		for (unsigned f = 0, nf = 0; f < 64; f++) {
			if (!(e.fields[qi] >> f & 1))
				continue;
			buf_puts(&b, nf++ ? "," : "");
			json_quote(&b, f ? k->attrs[f - 1].name : "title",
				   strlen(f ? k->attrs[f - 1].name : "title"));
		}
		buf_puts(&b, "],\"score\":");
		json_number(&b, search_term_score(s, q, e.tf_title[qi], e.tf_values[qi], dl_title,
						  e.words));
		buf_put_u8(&b, '}');
	}
	buf_puts(&b, "],\"snippets\":");
	buf_put(&b, snips.p, snips.len);
	buf_put_u8(&b, '}');
	if (!rc && (b.oom || snips.oom))
		rc = err_set(CAIRN_ENOMEM, "out of memory");
	if (!rc && !(copy = arena_strndup(&s->t->mem, (const char *)b.p, b.len)))
		rc = err_set(CAIRN_ENOMEM, "out of memory");
	if (!rc) {
		out->explain = copy;
		out->explain_len = b.len;
	}
	cr_free(e.tf_title);
	cr_free(e.tf_values);
	cr_free(e.fields);
	cr_free(e.tok);
	buf_release(&b);
	buf_release(&snips);
	arena_rewind(&s->t->scratch, mark);
	return rc;
}
