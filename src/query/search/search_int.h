/*
 * Full-text search's private header: what walk.c (the live set, the lists,
 * the best, the walks, cairn_search), query.c (the query text analyzed into
 * terms) and explain.c (why a hit was found) share.
 *
 * Full-text search (cairn_search, docs/search.md). The text's words become
 * groups of terms (the word as written; its stem, which counts for less;
 * for a word no Record has, its closest spellings in the lexicon; for
 * supp*, the lexicon's words that start so); a Record matches when it has
 * a term of every group. Each term's postings are read from every segment
 * into containers, its document frequency counted in the view's live set;
 * then the groups are walked together in vid order, the rarest leading,
 * and a Record that has them all, is live, of a wanted Kind and passes the
 * filter is scored with BM25F (title and values) and kept among the best.
 * Once limit Records are kept, a block of the leading group whose bound
 * cannot beat the worst of them is skipped whole. When too few have every
 * word, a walk of all the terms adds those with some (partial matches).
 */
#ifndef CAIRN_QUERY_SEARCH_INT_H
#define CAIRN_QUERY_SEARCH_INT_H

#include "index/text/text.h"
#include "query/read.h"

#define SEARCH_GROUPS_MAX 32 /* words of a text searched for */

/* How a term of the query stands for a word of the text. */
enum how { HOW_WORD, HOW_STEM, HOW_TYPO, HOW_PREFIX, HOW_PHRASE };

/* A term of the query. */
typedef struct qterm {
	char term[TEXT_TERM_MAX];
	size_t len;
	double weight;		/* in the query */
	uint8_t how, edits;	/* enum how; a correction's edits */
	uint8_t group;
	uint64_t df;		/* live postings in the view, every segment */
	double idf;
	double max_bound;	/* the highest block bound of its lists */
} qterm;

/* One term's postings in one segment, and where a walk is in them. */
typedef struct tlist {
	const qterm *q;
	tcont *c;
	size_t nc;
	uint64_t df;		/* its live postings */
	/* the walk */
	size_t ci;		/* container */
	uint32_t bi, j;		/* block, posting in the block */
	uint16_t lo[TEXT_BLOCK];
	int lo_ok;		/* lo holds block bi's vids */
	tpay pay;
	int pay_ok;
	uint64_t cur;		/* vid, END past the last */
	int positioned;		/* cur is set */
} tlist;

typedef struct group {
	size_t first, n;	/* its lists */
	size_t qfirst, qn;	/* its terms */
	uint64_t df;
	uint64_t cur;		/* the lowest vid of its lists, after group_seek */
	uint32_t pos;		/* the word's position in the text */
	char word[TOKEN_CAP];	/* the word, as analyzed */
	size_t word_len;
} group;

/* A quoted phrase: groups first..first+n-1, each a word as written, in that order. */
typedef struct phrase {
	size_t first, n;
} phrase;

/* The positions of one word of a phrase in the Record being scored. */
typedef struct pbuf {
	uint32_t *p;
	size_t n, cap;
} pbuf;

typedef struct hit {
	uint64_t vid;
	double score;
	unsigned words;		/* groups it matches */
	uint64_t groups;	/* which: a bit per group */
} hit;

/* The best so far: a heap, the worst on top. */
typedef struct heap {
	hit *h;
	size_t n, cap;
} heap;

typedef struct sctx {
	cairn_txn *t;
	dctx *d;
	search_conf conf;
	qterm *q;
	size_t nq, capq;
	tlist *l;
	size_t nl, capl;
	group g[SEARCH_GROUPS_MAX];
	size_t ng;
	phrase ph[SEARCH_GROUPS_MAX / 2];
	size_t nph;
	pbuf pos[SEARCH_GROUPS_MAX];	/* scratch of the phrase check */
	uint32_t kinds[64];
	size_t n_kinds;
	double n_docs, avg_title, avg_values;
	/* live-set chunks of the view, fetched when first needed */
	const uint8_t **chunk;
	uint8_t *fetched;	/* 0: not yet; 1: fetched; 2: fetched, every vid live */
	size_t n_chunks;
	MDB_cursor *cells;
	heap best;		/* Records with every word */
	size_t limit;
	const qfilter *filter[64]; /* the hits' filter, parsed for each of kinds (NULL: none) */
	const cairn_exclude *exclude; /* the values that leave a hit out (NULL: none) */
	cairn_search_info info;
	/* walk's shortcut (dense_next): the vids where every group is, in one container range */
	uint64_t mask_range;	/* vid >> 16 of the mask + 1; 0: none */
	uint64_t mask[TEXT_BITSET_BYTES / 8];
} sctx;

/* The reading of the query text: the search it fills, and where it is in the text. */
struct qctx {
	sctx *s;
	stemmer *stem;
	int no_typos;
	MDB_cursor *lex;	/* the lexicon, opened when first needed */
	const char *text;	/* the part of the text being read */
	size_t text_len;
	int in_phrase;		/* it is a quoted phrase: its words as written, nothing else */
	int skip_stop;		/* leave the stop words out (the text has other words) */
	size_t content;		/* words counted by search_count_content */
};

/* BM25F of one term in one Record. */
static inline double search_term_score(const sctx *s, const qterm *q, uint32_t tf_title,
				       uint32_t tf_values, uint32_t dl_title, uint32_t dl_values)
{
	double b = s->conf.b, tf = 0;

	if (tf_title)
		tf += s->conf.title_weight * tf_title /
		      (s->avg_title > 0 ? 1 - b + b * dl_title / s->avg_title : 1);
	if (tf_values)
		tf += (tf_values / 10.0) /
		      (s->avg_values > 0 ? 1 - b + b * dl_values / s->avg_values : 1);
	return q->weight * q->idf * tf / (s->conf.k1 + tf);
}

/* query.c */
/* An analyze callback: a word of the text becomes a group of terms (the word, its stem, ...). */
int search_on_query_token(void *ctx, const token *t);
/* An analyze callback: the words a search would keep without its stop words, in q->content. */
int search_count_content(void *ctx, const token *t);
/* Analyze the text part by part (outside quotes, a phrase, outside, ...), each token to fn. */
int search_analyze_query(struct qctx *q, const char *text, size_t len,
			 int (*fn)(void *ctx, const token *t));

/* explain.c */
/* Why hit h (Version v, of Kind k) was found: JSON in out->explain, in the transaction's memory. */
int search_explain_hit(sctx *s, stemmer *stm, const vrec *v, const kind_def *k, const hit *h,
		       cairn_hit *out);

#endif
