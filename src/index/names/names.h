/* The names index (names.c): what resolution finds a Record by. */
#ifndef CAIRN_INDEX_NAMES_H
#define CAIRN_INDEX_NAMES_H

#include "version/index.h"
#include "version/version.h"

/* The names index's operations (index/registry.c). */
extern const index_ops names_index;

/* Where a name of a Record comes from (DB_NAMES entries). */
enum name_src {
	NS_KEY = 1,
	NS_TITLE = 2,
	NS_ATTR = 3,	/* a unique string or an alias attribute (its id in the entry) */
};

/* A names entry: dom, normalized name, 0x00, vid, source, attribute id. */
typedef struct name_entry {
	const char *norm;
	size_t norm_len;
	uint64_t vid;
	int src;
	uint32_t attr;
} name_entry;

/*
 * The names of a Record Version (its key, title and naming attributes,
 * attr_names; with all, the string values of every attribute, which the
 * names written under an earlier schema are among), normalized:
 * fn(ctx, norm, len, src, attr) for each that is not empty after
 * normalization. key, title and values may be NULL (none). With same, a
 * value the attribute also has in same is left out.
 */
int record_names(const kind_def *k, const char *key, size_t key_len, const char *title,
		 size_t title_len, const jv *values, const jv *same, int all,
		 int (*fn)(void *ctx, const char *norm, size_t len, int src, uint32_t attr), void *ctx);
/* Does Version v (of Kind k, values vals or NULL) have the name of entry ne? */
int version_has_name(const kind_def *k, const vrec *v, const jv *vals, const name_entry *ne);
/* The prefix dom, norm, 0x00 of the entries of one name. */
void key_name(kbuf *k, uint32_t dom, const char *norm, size_t len);
/* A whole entry key. */
void key_name_entry(kbuf *k, uint32_t dom, const char *norm, size_t len, uint64_t vid, int src,
		    uint32_t attr);
int name_entry_parse(const void *k, size_t kn, name_entry *out);
/*
 * Write (del 0) or delete (del 1) the names entries of a Record Version;
 * with its predecessor pv (values pvalues), only the names pv lacks.
 */
int names_entries_put(dctx *d, const kind_def *k, const vrec *v, const jv *values, uint64_t vid,
		      const vrec *pv, const jv *pvalues, int del);

#endif
