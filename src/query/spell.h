/*
 * Close spellings in a sorted set of words (resolution's names, search's
 * lexicon): a walk of the keys in order that keeps one row of an
 * edit-distance table (insertions, deletions, substitutions, transpositions
 * of adjacent bytes) per byte of the word, shares rows with the previous
 * word as far as the two share a prefix, and seeks past every word that
 * starts with a prefix already too far from the text.
 */
#ifndef CAIRN_QUERY_SPELL_H
#define CAIRN_QUERY_SPELL_H

#include <lmdb.h>
#include <stddef.h>

#include "version/version.h"

typedef struct spell_opts {
	const uint8_t *prefix;	/* every key starts with it; the word follows, then 0x00 */
	size_t plen;
	const char *q;		/* the text */
	size_t m;		/* its length, 1 to SPELL_MAX */
	unsigned k;		/* edits allowed */
	int first_fixed;	/* only words with the text's first byte */
	size_t max_seeks, max_entries;
	/* each key of a word within k edits (d 0 to k), in key order; nonzero stops */
	int (*fn)(void *ctx, const MDB_val *key, size_t word_len, unsigned d);
	void *ctx;
} spell_opts;

#define SPELL_MAX 255 /* the longest word or text walked */

/* Walk; *truncated set when a budget stopped it. Returns 0, an error, or fn's nonzero. */
int spell_walk(MDB_cursor *cur, dctx *d, const spell_opts *o, int *truncated);

/*
 * The words that differ from the text at its first byte alone, which a walk
 * with first_fixed never reaches: another byte in its place (c + q[1..]),
 * one before it (c + q), the first left out (q[1..]) or swapped with the
 * second (q[1] q[0] q[2..]). Each key of each goes to fn with d, not in key
 * order; o->k and the budgets are not read. A few seeks per first byte the
 * words of the set start with, whatever their number.
 */
int spell_first_changed(MDB_cursor *cur, dctx *d, const spell_opts *o, unsigned dist);

#endif
