/* Change sets: the changes of one commit as the caller gave them, checked for form but not yet against a store. */
#ifndef CAIRN_MODEL_CHANGESET_H
#define CAIRN_MODEL_CHANGESET_H

#include <stddef.h>
#include <stdint.h>

#include "cairn.h"
#include "base/json.h"
#include "base/arena.h"

enum change_op {
	OP_PUT = 1,
	OP_PATCH,
	OP_DELETE,
	OP_LINK,
	OP_UNLINK,
};

/* One change. Everything it points to lives in its own arena, so a change can move between sets. */
typedef struct cs_change {
	int op;
	const char *kind;   /* Record Kind, or NULL for Links */
	const char *key;
	size_t key_len;
	const char *title;  /* OP_PUT; NULL means "" */
	size_t title_len;
	const jv *values;   /* OP_PUT values / OP_PATCH merge patch / OP_LINK values (object or NULL) */
	unsigned flags;	    /* cairn_delete_flags */
	const char *rel;    /* Links */
	const char *from_kind, *from_key, *to_kind, *to_key;
	size_t from_len, to_len;
	const float *vec;
	size_t dim;
	uint64_t tag;	    /* caller's tag (the importer's line number) */
	uint64_t src_vid;   /* a merge: the merged Version whose lineage values taken from it keep */
	arena mem;
} cs_change;

struct cairn_changeset {
	cs_change *v;
	size_t n, cap;
};

/* Parse "Kind:key" into its parts (pointers into s). Returns 0 or -1. */
int endpoint_split(const char *s, size_t n, const char **kind, size_t *kind_len,
		   const char **key, size_t *key_len);
/* Check a Record key: CAIRN_EKEYEMPTY, CAIRN_EKEYLONG, CAIRN_EUTF8 (records the message). */
int key_check(const char *key, size_t len, long idx);
/* Remove change i (shifting the rest down). */
void changeset_remove(cairn_changeset *cs, size_t i);
/*
 * In one pass: the changes marked 1 go to the end of dst in their order,
 * those marked 2 are released, the others stay in their order.
 */
int changeset_split(cairn_changeset *cs, cairn_changeset *dst, const uint8_t *mark);
/* Move every change of src, in order, to the end of dst; src is left empty. */
int changeset_take_all(cairn_changeset *dst, cairn_changeset *src);

#endif
