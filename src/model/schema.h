/*
 * Schemas: Kinds with typed Attributes, and Relations between Kinds. Parsed
 * from the JSON format of docs/schema.md, merged into the previous schema of
 * a Domain (nothing is ever removed, so ids are stable positions), and
 * serialized canonically for storage.
 */
#ifndef CAIRN_MODEL_SCHEMA_H
#define CAIRN_MODEL_SCHEMA_H

#include <stddef.h>
#include <stdint.h>


#include "base/json.h"
#include "base/buf.h"

enum attr_type {
	AT_STRING = 1,
	AT_INT,
	AT_FLOAT,
	AT_BOOL,
	AT_DATE,
	AT_DATETIME,
	AT_ENUM,
	AT_REF,
	AT_STRINGS, /* array of strings */
};

enum attr_flags {
	AF_REQUIRED = 1 << 0,
	AF_UNIQUE = 1 << 1,
	AF_INDEXED = 1 << 2,
	AF_ALIAS = 1 << 3, /* a string or strings that names the Record (resolution) */
};

typedef struct attr_def {
	char *name;
	uint32_t id;	/* position + 1 within its Kind; 0 stands for the title in lineage */
	int type;	/* attr_type */
	unsigned flags; /* attr_flags; unique implies indexed */
	char **values;	/* enum values */
	size_t n_values;
	char *ref;	/* referenced Kind name (AT_REF) */
	uint32_t ref_kind;
	char *description;
	double search;	/* full-text weight of its words (0: not searchable) */
} attr_def;

/* Do the attribute's values name the Record (resolution): an alias, or a unique string? */
static inline int attr_names(const attr_def *a)
{
	return (a->flags & AF_ALIAS) || ((a->flags & AF_UNIQUE) && a->type == AT_STRING);
}

typedef struct kind_def {
	char *name;
	uint32_t id; /* position + 1 */
	attr_def *attrs;
	size_t n_attrs;
	char *description;
} kind_def;

/* A Relation end of any Kind: "*" in the document, kind id 0 in the definition. */
#define REL_ANY "*"
#define REL_ANY_KIND 0u

typedef struct rel_def {
	char *name;
	uint32_t id; /* position + 1 */
	char *from, *to;
	uint32_t from_kind, to_kind; /* REL_ANY_KIND: any Kind */
	int one;     /* cardinality one: at most one Link per from-Record */
	char *inverse;
	char *description;
} rel_def;

#define SEARCH_STOP_BYTES 2048 /* the stop words, folded, each with its NUL */

/* Full-text search settings of a Domain (docs/search.md). */
typedef struct search_conf {
	char language[24]; /* Snowball language of the stems; "none": no stemming */
	double title_weight;
	double k1, b;	   /* BM25 */
	/*
	 * Typo tolerance: a word not found of typo_one letters or more is
	 * looked for 1 edit away, of typo_two or more 2 edits away (a change
	 * of its first letter counting two); 0: never.
	 */
	unsigned typo_one, typo_two;
	/* Words a search leaves out of its text (folded, each NUL-terminated, in order). */
	char stop[SEARCH_STOP_BYTES];
	size_t stop_len;
	int set;	   /* given in a schema (else the defaults) */
} search_conf;

#define SEARCH_LANGUAGE "english"
#define SEARCH_TITLE_WEIGHT 2.0
#define SEARCH_K1 1.2
#define SEARCH_B 0.75
#define SEARCH_WEIGHT_MAX 10.0
#define SEARCH_TYPO_ONE 5
#define SEARCH_TYPO_TWO 9

/* Is word w[0..n-1] (folded) one of the stop words of c? */
int search_stop_word(const search_conf *c, const char *w, size_t n);

typedef struct schema {
	search_conf search;
	kind_def *kinds;
	size_t n_kinds;
	rel_def *rels;
	size_t n_rels;
	uint64_t rev;	/* revision that set it */
	char *json;	/* canonical JSON */
	size_t json_len;
} schema;

/* What a merge changed that existing data must be checked against. */
enum delta_what {
	DELTA_TYPE = 1,	    /* attribute type changed (0 is no change: index_ops) */
	DELTA_REQUIRED,	    /* attribute became required */
	DELTA_UNIQUE,	    /* attribute became unique */
	DELTA_INDEXED,	    /* attribute became indexed: build its index */
	DELTA_NAMES,	    /* attribute became an alias or unique: add its names */
	DELTA_ENUM,	    /* enum lost values */
	DELTA_REF,	    /* ref target changed */
	DELTA_CARD_ONE,	    /* relation became cardinality one */
	DELTA_REL_ENDS,	    /* relation from/to changed */
	DELTA_SEARCH,	    /* what the full-text index holds changed: rebuild it */
};

typedef struct schema_delta_item {
	int what;
	uint32_t kind; /* kind id (attribute changes) */
	uint32_t attr; /* attribute id */
	uint32_t rel;  /* relation id */
} schema_delta_item;

typedef struct schema_delta {
	schema_delta_item *items;
	size_t n;
} schema_delta;

/* An empty schema. */
schema *schema_new(void);
void schema_free(schema *s);
/*
 * Parse a schema document and merge it into base (NULL: empty). On success
 * *out is the merged schema (with canonical JSON) and delta what needs
 * checking against data (may be NULL). Errors: CAIRN_EJSON, CAIRN_ESCHEMA
 * with a message naming the Kind, Attribute or Relation.
 */
int schema_apply_json(const schema *base, const char *json, size_t len, schema **out,
		      schema_delta *delta);
/* Load a stored canonical schema. CAIRN_ECORRUPT if it does not parse. */
int schema_load(const char *json, size_t len, uint64_t rev, schema **out);
void schema_delta_release(schema_delta *d);

const kind_def *schema_kind(const schema *s, const char *name);
/*
 * What follows a message naming an unknown Kind, Relation or Attribute of
 * Kind k (name[0..len-1]): ` (did you mean "X"?); the Kinds are A, B, ...`
 * (the first 32, then how many more), into out; returns out ("" when there
 * is none to name).
 */
const char *schema_hint_kind(const schema *s, const char *name, char *out, size_t cap);
const char *schema_hint_rel(const schema *s, const char *name, char *out, size_t cap);
const char *schema_hint_attr(const kind_def *k, const char *name, size_t len, char *out,
			     size_t cap);
/* ": the values are a, b, ..." for a value enum a does not have, into out. */
const char *schema_hint_enum(const attr_def *a, char *out, size_t cap);
const kind_def *schema_kind_n(const schema *s, const char *name, size_t n);
const kind_def *schema_kind_id(const schema *s, uint32_t id);
const attr_def *kind_attr(const kind_def *k, const char *name);
const attr_def *kind_attr_id(const kind_def *k, uint32_t id);
const rel_def *schema_rel(const schema *s, const char *name);
const rel_def *schema_rel_id(const schema *s, uint32_t id);

/* Whether a Record of Kind kind may be the end of a Relation whose end is end_kind. */
static inline int rel_end_ok(uint32_t end_kind, uint32_t kind)
{
	return end_kind == REL_ANY_KIND || end_kind == kind;
}
const char *attr_type_name(int type);
/*
 * Check a (non-null) value against its attribute's type and enum values.
 * Returns 0, or CAIRN_ETYPE / CAIRN_EENUM with what is wrong written to why.
 */
int attr_value_check(const attr_def *a, const jv *v, char *why, size_t whylen);

#endif
