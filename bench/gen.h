/*
 * gen.h - the deterministic generator of the "supply" benchmark workload
 * (Kinds, shares, Links, text and vectors as the workload document describes).
 *
 * One call writes a whole dataset into a directory, streaming: memory stays
 * O(vocabulary) whatever the size. The same seed and size give byte-identical
 * files on every machine, since every random draw comes from the generator's
 * own PRNG, values are built from integers, and floats are printed by our own
 * formatter (see gen.c for the one caveat, libm's log/sin/cos).
 *
 * Files written in the output directory:
 *   schema.json         the Domain's schema (Kinds, Attributes, Relations)
 *   records.jsonl       one Record per line, Kinds in dependency order
 *   links.jsonl         one Link per line, about 3 per Record, no duplicates
 *   q_keys.txt          "Kind<TAB>key"
 *   q_title_words.txt   a word of some title (not one of the 20 most common)
 *   q_common_words.txt  one of the 20 words found in the most titles
 *   q_two_common.txt    two of them, space separated
 *   q_typos.txt         "typo<TAB>word": a title word of 5+ letters with two
 *                       adjacent middle letters swapped, and the word
 *   q_partial.txt       three rare title words, space separated
 *   q_filters.txt       "Kind<TAB>attribute<TAB>value" (equality) or
 *                       "Kind<TAB>attribute<TAB>low<TAB>high" (inclusive range)
 *   q_vectors.txt       (with vectors) 384 comma-separated floats per line
 *   vectors.f32         (with GEN_VECTORS_F32) the Records' vectors, float32 rows
 * Query files hold GEN_QUERIES lines each, drawn from the generated data.
 */
#ifndef CAIRN_BENCH_GEN_H
#define CAIRN_BENCH_GEN_H

#include <stdint.h>

#define GEN_MIN_RECORDS 10000ull
#define GEN_MAX_RECORDS 10000000ull
#define GEN_VECTOR_DIM 384 /* dimensions of a Record's vector */
#define GEN_CLUSTERS 400   /* cluster centres the vectors are drawn around */
#define GEN_VOCAB 40000	   /* words of the title vocabulary */
#define GEN_QUERIES 1000   /* lines per query file */

/* What a run produced, filled on success. */
typedef struct gen_stats {
	uint64_t records;	  /* Records written */
	uint64_t links;		  /* Links written */
	uint64_t per_kind[6];	  /* Records per Kind, in write order (see gen_kind_name) */
	uint32_t vocab;		  /* words in the vocabulary (GEN_VOCAB) */
	uint32_t vocab_from_file; /* of which taken from the word list; the rest synthetic */
} gen_stats;

#define GEN_VECTORS_F32 2

typedef struct gen_options {
	uint64_t records; /* total Records, GEN_MIN_RECORDS .. GEN_MAX_RECORDS */
	uint64_t seed;	  /* same seed + size => byte-identical output */
	const char *dir;  /* output directory (created, with its parents, if missing) */
	int vectors;	  /* nonzero: Record lines carry "vector":[384 floats]; GEN_VECTORS_F32:
			   * the vectors go to vectors.f32 instead, float32 rows in Record order */
	/* Word list, one word a line; NULL: /usr/share/dict/words if it exists,
	 * else synthetic words. A named file that cannot be read is an error. */
	const char *words;
	/* Called every 65,536 Records and once at the end; may be NULL. */
	void (*progress)(void *ctx, uint64_t done, uint64_t total);
	void *ctx;
	gen_stats *stats; /* may be NULL */
} gen_options;

/*
 * Generate the workload into o->dir, overwriting the files named above.
 * Prints nothing to stdout. Returns 0, or -1 after printing the reason to
 * stderr (bad options, out of memory, a file that cannot be written); files
 * may then be partly written. Not thread-safe only in that two runs must not
 * share a directory.
 */
int gen_run(const gen_options *o);

/* A Part category (the enum's values, i modulo their number). */
const char *gen_category(unsigned i);
/* Name of the ith Kind in write order (0 .. 5), or NULL. */
const char *gen_kind_name(int i);
/* The prefix of its keys: Record n (0-based) of Kind i is PREFIX-(1001 + n). */
const char *gen_key_prefix(int i);

/*
 * The attributes a store indexes for this schema, as (Kind, attribute, type):
 * those marked indexed or unique, and every ref (Cairn always indexes refs).
 * Fills out[0..n-1] and returns n (at most cap). For peers of the benchmark,
 * so they keep the same indexes.
 */
size_t gen_indexed_attrs(const char *out[][3], size_t cap);

/*
 * For the peers: one SQL statement for the 2-hop neighborhood of the Record
 * (p1, p2) = (Kind, key) placeholders, both directions, no cap: rows
 * ('n', kind, key, title, values) for the Records and ('l', rel, from, to,
 * values) for the Links followed from the Record and its neighbors. vals is
 * the values column as the peer returns it as text; values NULL unless asked.
 */
void gen_hood_sql(char *out, size_t n, const char *p1, const char *p2, const char *vals, int values);

/* Relation names (0 .. n-1), or NULL past the last. */
const char *gen_relation_name(int i);

#endif
