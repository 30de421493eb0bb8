/*
 * History and lineage of Records and Links.
 *
 * History follows the chain of Versions backwards: each Version names the
 * one it replaced on its branch, and a branch's first Version of a Record
 * names its parent's, so the chain crosses forks by itself. The newest
 * Version the view sees (a tombstone included) starts it; a cursor holds the
 * next vid, so a page costs the Versions it shows, however deep the history.
 *
 * Lineage needs no walk: every Version carries, for its title and each
 * value, the revision that set it, and the revision that created it.
 */
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "query/read.h"
#include "base/err.h"

static void values_of(const vrec *v, const char **p, size_t *n)
{
	if (v && (v->type == V_REC || v->type == V_LINK)) {
		*p = v->values;
		*n = v->values_len;
	} else {
		*p = "{}";
		*n = 2;
	}
}

static void put_side(buf *o, const char *what, size_t what_len, const jmember *m, int have)
{
	buf_put(o, what, what_len);
	if (have)
		buf_put(o, m->val, m->val_len);
	else
		buf_put(o, "null", 4);
}

/*
 * The diff of two stored values objects, walking their canonical text side
 * by side in key order: a member differs when its bytes do. Returns 1 when
 * the text cannot be walked (diff_values then parses it).
 */
static int diff_canonical(const char *bp, size_t bn, const char *ap, size_t an, buf *o)
{
	size_t bpos = 0, apos = 0;
	jmember bm, am;
	int hb = json_member_next(bp, bn, &bpos, &bm), ha = json_member_next(ap, an, &apos, &am);
	int first = 1;

	buf_put_u8(o, '{');
	while (hb == 1 || ha == 1) {
		int c;

		if (hb < 0 || ha < 0)
			return 1;
		if (hb != 1)
			c = 1;
		else if (ha != 1)
			c = -1;
		else {
			size_t l = bm.key_len < am.key_len ? bm.key_len : am.key_len;

			c = memcmp(bm.key, am.key, l);
			if (c == 0)
				c = (bm.key_len > am.key_len) - (bm.key_len < am.key_len);
		}
		if (c != 0 || bm.val_len != am.val_len || memcmp(bm.val, am.val, am.val_len) != 0) {
			const jmember *k = c <= 0 ? &bm : &am;

			if (!first)
				buf_put_u8(o, ',');
			first = 0;
			buf_put_u8(o, '"');
			buf_put(o, k->key, k->key_len);
			buf_put(o, "\":{", 3);
			put_side(o, "\"before\":", 9, &bm, c <= 0);
			put_side(o, ",\"after\":", 9, &am, c >= 0);
			buf_put_u8(o, '}');
		}
		if (c <= 0)
			hb = json_member_next(bp, bn, &bpos, &bm);
		if (c >= 0)
			ha = json_member_next(ap, an, &apos, &am);
	}
	if (hb < 0 || ha < 0)
		return 1;
	buf_put_u8(o, '}');
	return 0;
}

/*
 * The diff of two values objects (either may be absent), as JSON in the
 * transaction's arena; o is scratch space the caller reuses and releases.
 */
static int diff_values(cairn_txn *t, const vrec *before, const vrec *after, buf *o,
		       const char **out, size_t *len)
{
	const jv *b = NULL, *a = NULL;
	const char *names[256], *bp, *ap;
	size_t n = 0, bn, an;
	char *copy;

	buf_reset(o);
	values_of(before, &bp, &bn);
	values_of(after, &ap, &an);
	if (diff_canonical(bp, bn, ap, an, o) == 0)
		goto done;
	buf_reset(o);
	if (before && (before->type == V_REC || before->type == V_LINK) &&
	    !(b = jv_parse(&t->mem, before->values, before->values_len, "stored values")))
		return err_code() == CAIRN_ENOMEM ? CAIRN_ENOMEM
						  : err_set(CAIRN_ECORRUPT, "stored values do not parse");
	if (after && (after->type == V_REC || after->type == V_LINK) &&
	    !(a = jv_parse(&t->mem, after->values, after->values_len, "stored values")))
		return err_code() == CAIRN_ENOMEM ? CAIRN_ENOMEM
						  : err_set(CAIRN_ECORRUPT, "stored values do not parse");
	/* The names of the values that differ, in byte order. */
	for (int side = 0; side < 2; side++) {
		const jv *x = side ? b : a, *y = side ? a : b;

		for (uint32_t i = 0; x && i < x->len && n < 256; i++) {
			const jv *m = &x->u.items[i], *other = jv_getn(y, m->key, m->key_len);
			size_t j;

			if (other && jv_equal(m, other))
				continue;
			for (j = 0; j < n && strcmp(names[j], m->key) != 0; j++)
				;
			if (j == n)
				names[n++] = m->key;
		}
	}
	for (size_t i = 1; i < n; i++)
		for (size_t j = i; j > 0 && strcmp(names[j - 1], names[j]) > 0; j--) {
			const char *x = names[j];

			names[j] = names[j - 1];
			names[j - 1] = x;
		}
	buf_put_u8(o, '{');
	for (size_t i = 0; i < n; i++) {
		const jv *bv = jv_get(b, names[i]), *av = jv_get(a, names[i]);

		if (i)
			buf_put_u8(o, ',');
		json_quote(o, names[i], strlen(names[i]));
		buf_put(o, ":{\"before\":", 11);
		if (bv)
			jv_canon(bv, o);
		else
			buf_put(o, "null", 4);
		buf_put(o, ",\"after\":", 9);
		if (av)
			jv_canon(av, o);
		else
			buf_put(o, "null", 4);
		buf_put_u8(o, '}');
	}
	buf_put_u8(o, '}');
done:
	copy = o->oom ? NULL : arena_strndup(&t->mem, (const char *)o->p, o->len);
	*len = o->len;
	if (!copy)
		return err_set(CAIRN_ENOMEM, "out of memory");
	*out = copy;
	return 0;
}

/* Walk the chain from the cursor (or from start) and fill a page. */
static int walk(cairn_txn *t, uint64_t start, cairn_history_cursor *cur, cairn_history_entry *out,
		size_t cap, size_t *n)
{
	uint64_t vid = cur->next_vid ? cur->next_vid : start;
	vrec ver = {0}, prev = {0};
	buf scratch = BUF_INIT;
	int have_prev = 0, rc = 0;

	*n = 0;
	if (cap == 0 || cap > CAIRN_MAX_PAGE)
		return err_set(CAIRN_EINVAL, "a page holds 1 to %d entries", CAIRN_MAX_PAGE);
	if (cur->done)
		return 0;
	if (vid && (rc = version_get(&t->d, vid, &ver)))
		return rc;
	while (vid && *n < cap && !rc) {
		cairn_history_entry *e = &out[*n];
		int live = ver.type == V_REC || ver.type == V_LINK;

		have_prev = ver.prev && (rc = version_get(&t->d, ver.prev, &prev)) == 0;
		if (rc)
			break;
		memset(e, 0, sizeof(*e));
		e->vid = vid;
		if (ver.type == V_REC_ERASED || ver.type == V_LINK_ERASED) {
			/* No content: the erase revision says who erased it, when and why. */
			e->change = CAIRN_ERASED;
			if ((rc = revision_fill(t, ver.rev, &e->rev)) ||
			    (rc = revision_fill(t, ver.erased_by, &e->erased)))
				break;
			e->title = e->title_before = "";
			e->values = e->diff = "{}";
			e->values_len = e->diff_len = 2;
			(*n)++;
			vid = ver.prev;
			if (have_prev)
				ver = prev;
			continue;
		}
		if (!live)
			e->change = CAIRN_DELETED;
		else if (!have_prev || (prev.type != V_REC && prev.type != V_LINK))
			e->change = CAIRN_CREATED;
		else
			e->change = CAIRN_UPDATED;
		e->title = live ? ver.title : "";
		e->title_len = live ? ver.title_len : 0;
		e->title_before = have_prev && prev.type == V_REC ? prev.title : "";
		/* (a Version after an erased one: the erased title is not "before") */
		e->title_before_len = have_prev && prev.type == V_REC ? prev.title_len : 0;
		e->values = live ? ver.values : "{}";
		e->values_len = live ? ver.values_len : 2;
		if ((rc = revision_fill(t, ver.rev, &e->rev)) ||
		    (rc = diff_values(t, have_prev ? &prev : NULL, &ver, &scratch, &e->diff,
				       &e->diff_len)))
			break;
		(*n)++;
		vid = ver.prev;
		ver = prev;
	}
	buf_release(&scratch);
	cur->next_vid = vid;
	cur->done = vid == 0;
	return rc;
}

int cairn_history(cairn_txn *t, const char *kind, const char *key, size_t key_len,
		  cairn_history_cursor *cur, cairn_history_entry *out, size_t cap, size_t *n)
{
	const kind_def *k;
	ident id;
	int rc;

	if (!t || !key || !cur || !out || !n)
		return err_set(CAIRN_EINVAL, "cairn_history: NULL argument");
	*n = 0;
	if (!kind || !(k = schema_kind(t->d.s, kind)))
		return err_set(CAIRN_EUNKNOWNKIND, "unknown Kind \"%s\"", kind ? kind : "(null)");
	if (key_len == 0 || key_len > CAIRN_MAX_KEY)
		return err_set(CAIRN_ENOTFOUND, "%s:%.*s never existed", kind, (int)key_len, key);
	if ((rc = rec_lookup(&t->d, k->id, key, key_len, &id)))
		return rc;
	if (!id.vid)
		return err_set(CAIRN_ENOTFOUND, "%s:%.*s never existed here", kind, (int)key_len,
			       key);
	return walk(t, id.vid, cur, out, cap, n);
}

/* The newest Version of a Link the view sees (a tombstone included). */
static int link_find(cairn_txn *t, const char *rel, const char *fk, const char *fkey,
		     size_t flen, const char *tk, const char *tkey, size_t tlen, ident *out)
{
	const rel_def *r = rel ? schema_rel(t->d.s, rel) : NULL;
	const kind_def *f = fk ? schema_kind(t->d.s, fk) : NULL, *to = tk ? schema_kind(t->d.s, tk)
									      : NULL;
	ident a, b;
	int rc;

	if (!r)
		return err_set(CAIRN_EUNKNOWNREL, "unknown Relation \"%s\"", rel ? rel : "(null)");
	if (!f || !to)
		return err_set(CAIRN_EUNKNOWNKIND, "unknown Kind");
	if (flen == 0 || flen > CAIRN_MAX_KEY || tlen == 0 || tlen > CAIRN_MAX_KEY)
		return err_set(CAIRN_ENOTFOUND, "no such Link");
	if ((rc = rec_lookup(&t->d, f->id, fkey, flen, &a)) ||
	    (rc = rec_lookup(&t->d, to->id, tkey, tlen, &b)))
		return rc;
	if (!a.found || !b.found)
		return err_set(CAIRN_ENOTFOUND, "no Link %s from %s:%.*s to %s:%.*s", rel, fk,
			       (int)flen, fkey, tk, (int)tlen, tkey);
	if ((rc = link_lookup(&t->d, a.rid, r->id, b.rid, out)))
		return rc;
	if (!out->vid)
		return err_set(CAIRN_ENOTFOUND, "no Link %s from %s:%.*s to %s:%.*s", rel, fk,
			       (int)flen, fkey, tk, (int)tlen, tkey);
	return 0;
}

int cairn_link_history(cairn_txn *t, const char *rel, const char *from_kind, const char *from_key,
		       size_t from_len, const char *to_kind, const char *to_key, size_t to_len,
		       cairn_history_cursor *cur, cairn_history_entry *out, size_t cap, size_t *n)
{
	ident id;
	int rc;

	if (!t || !from_key || !to_key || !cur || !out || !n)
		return err_set(CAIRN_EINVAL, "cairn_link_history: NULL argument");
	*n = 0;
	if ((rc = link_find(t, rel, from_kind, from_key, from_len, to_kind, to_key, to_len, &id)))
		return rc;
	return walk(t, id.vid, cur, out, cap, n);
}

int cairn_lineage(cairn_txn *t, const char *kind, const char *key, size_t key_len,
		  cairn_lineage_entry *out, size_t cap, size_t *n, cairn_revision *created)
{
	const kind_def *k;
	ident id;
	vrec ver;
	rdr lr;
	int rc;

	if (!t || !key || !n || (cap && !out))
		return err_set(CAIRN_EINVAL, "cairn_lineage: NULL argument");
	*n = 0;
	if (!kind || !(k = schema_kind(t->d.s, kind)))
		return err_set(CAIRN_EUNKNOWNKIND, "unknown Kind \"%s\"", kind ? kind : "(null)");
	if (key_len == 0 || key_len > CAIRN_MAX_KEY)
		return err_set(CAIRN_ENOTFOUND, "%s:%.*s does not exist", kind, (int)key_len, key);
	if ((rc = rec_lookup(&t->d, k->id, key, key_len, &id)))
		return rc;
	if (!id.visible)
		return err_set(CAIRN_ENOTFOUND, "%s:%.*s does not exist", kind, (int)key_len, key);
	if ((rc = version_get(&t->d, id.vid, &ver)))
		return rc;
	if (created && (rc = revision_fill(t, ver.created, created)))
		return rc;
	rd_init(&lr, ver.lineage, ver.lineage_len);
	for (uint32_t i = 0; i < ver.n_lineage && *n < cap && !rc; i++) {
		uint64_t a = rd_varint(&lr), rev = rd_varint(&lr);
		const attr_def *ad = a ? kind_attr_id(k, (uint32_t)a) : NULL;

		if (lr.bad)
			return err_set(CAIRN_ECORRUPT, "Version %llu: bad lineage",
				       (unsigned long long)id.vid);
		if (a && !ad)
			continue;
		out[*n].attribute = ad ? ad->name : "";
		/* Revisions repeat across values: reuse the one already read. */
		for (size_t j = 0; j < *n; j++)
			if (out[j].rev.revision == rev) {
				out[*n].rev = out[j].rev;
				goto next;
			}
		if ((rc = revision_fill(t, rev, &out[*n].rev)))
			break;
next:
		(*n)++;
	}
	return rc;
}

int cairn_link_lineage(cairn_txn *t, const char *rel, const char *from_kind, const char *from_key,
		       size_t from_len, const char *to_kind, const char *to_key, size_t to_len,
		       cairn_lineage_entry *out, cairn_revision *created)
{
	ident id;
	vrec ver;
	rdr lr;
	uint64_t rev;
	int rc;

	if (!t || !from_key || !to_key || !out)
		return err_set(CAIRN_EINVAL, "cairn_link_lineage: NULL argument");
	if ((rc = link_find(t, rel, from_kind, from_key, from_len, to_kind, to_key, to_len, &id)))
		return rc;
	if (!id.visible)
		return err_set(CAIRN_ENOTFOUND, "no Link %s from %s:%.*s to %s:%.*s", rel, from_kind,
			       (int)from_len, from_key, to_kind, (int)to_len, to_key);
	if ((rc = version_get(&t->d, id.vid, &ver)))
		return rc;
	rd_init(&lr, ver.lineage, ver.lineage_len);
	rev = ver.n_lineage ? (rd_varint(&lr), rd_varint(&lr)) : ver.rev;
	out->attribute = "";
	if ((rc = revision_fill(t, rev, &out->rev)))
		return rc;
	return created ? revision_fill(t, ver.created, created) : 0;
}
