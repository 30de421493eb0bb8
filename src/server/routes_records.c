/*
 * The routes of Records: a Record, pages of a Kind, Links and counts;
 * revisions and their changes; the history and lineage of Records and
 * Links; the export.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "server/internal.h"

/* ------------------------------------------------------------ pieces -- */


/* "Kind:key" into its parts (in the request's arena); -1 when malformed. */
static int split_endpoint(req *r, const char *s, const char **kind, const char **key)
{
	const char *colon = strchr(s, ':');
	char *k;

	if (!colon || colon == s)
		return -1;
	k = arena_strndup(&r->mem, s, (size_t)(colon - s));
	if (!k)
		return -1;
	*kind = k;
	*key = colon + 1;
	return 0;
}

static void hex_cursor(buf *b, const uint8_t *p, size_t n)
{
	static const char hx[] = "0123456789abcdef";

	buf_put_u8(b, '"');
	for (size_t i = 0; i < n; i++) {
		buf_put_u8(b, (uint8_t)hx[p[i] >> 4]);
		buf_put_u8(b, (uint8_t)hx[p[i] & 15]);
	}
	buf_put_u8(b, '"');
}

static int unhex_cursor(const char *s, uint8_t *p, size_t n)
{
	if (strlen(s) != 2 * n)
		return -1;
	for (size_t i = 0; i < n; i++) {
		int h = 0, l = 0;

		if (sscanf(s + 2 * i, "%1x%1x", &h, &l) != 2)
			return -1;
		p[i] = (uint8_t)(h << 4 | l);
	}
	return 0;
}

/* ------------------------------------------------------------ records -- */

void h_record(req *r)
{
	const char *d = r->seg[2], *kind = r->seg[4], *key = r->seg[5];
	const cairn_exclude *ex;
	cairn_exclude when;
	cairn_record rec;
	cairn_revision rv;
	cairn_txn *t;
	int rc;

	if (api_allow(r, d, NEED_READ, NULL) || api_valid_at_arg(r, &when, &ex) ||
	    api_begin(r, d, &t))
		return;
	rc = cairn_get_excluding(t, kind, key, strlen(key), ex, &rec);
	if (!rc)
		rc = cairn_revision_get(t, rec.revision, &rv);
	if (rc) {
		cairn_txn_end(t);
		return reply_cairn(r, rc);
	}
	wire_record(&r->out, &rec);
	r->out.len--; /* reopen the object */
	PUTS(&r->out, ",\"provenance\":");
	wire_revision(&r->out, &rv);
	buf_put_u8(&r->out, '}');
	api_reply_read(r, t);
	cairn_txn_end(t);
}

void h_page(req *r)
{
	const char *d = r->seg[2], *kind = r->seg[4], *after = arg(r, "after");
	long limit;
	const cairn_exclude *ex;
	cairn_exclude when;
	cairn_record *recs;
	cairn_txn *t;
	size_t n;
	int rc;

	if (api_allow(r, d, NEED_READ, NULL) || (limit = api_limit_arg(r, 50)) < 0 ||
	    api_valid_at_arg(r, &when, &ex) || api_begin(r, d, &t))
		return;
	recs = arena_alloc(&r->mem, (size_t)limit * sizeof(*recs));
	rc = recs ? cairn_page_excluding(t, kind, after, after ? strlen(after) : 0, ex, recs,
					 (size_t)limit, &n)
		  : CAIRN_ENOMEM;
	if (rc) {
		cairn_txn_end(t);
		return reply_cairn(r, rc);
	}
	PUTS(&r->out, "{\"items\":[");
	for (size_t i = 0; i < n; i++) {
		if (i)
			buf_put_u8(&r->out, ',');
		wire_record(&r->out, &recs[i]);
	}
	PUTS(&r->out, "],\"next\":");
	if (n == (size_t)limit)
		wire_str(&r->out, recs[n - 1].key, recs[n - 1].key_len);
	else
		PUTS(&r->out, "null");
	buf_put_u8(&r->out, '}');
	api_reply_read(r, t);
	cairn_txn_end(t);
}

void h_links(req *r)
{
	const char *d = r->seg[2], *kind = r->seg[4], *key = r->seg[5];
	const char *dir = arg(r, "dir"), *rel = arg(r, "rel"), *cursor = arg(r, "cursor");
	cairn_link_cursor cur;
	cairn_link *l;
	cairn_revision last = {0};
	cairn_txn *t;
	long limit;
	size_t n;
	int rc, dv;

	memset(&cur, 0, sizeof(cur));
	dv = !dir || strcmp(dir, "both") == 0 ? CAIRN_BOTH
	     : strcmp(dir, "out") == 0	       ? CAIRN_OUT
	     : strcmp(dir, "in") == 0	       ? CAIRN_IN
						: -1;
	if (api_allow(r, d, NEED_READ, NULL) || (limit = api_limit_arg(r, 100)) < 0)
		return;
	if (dv < 0)
		return reply_error(r, 400, cairn_errname(CAIRN_EINVAL), "dir is out, in or both");
	if (cursor && unhex_cursor(cursor, cur.state, sizeof(cur.state)))
		return reply_error(r, 400, cairn_errname(CAIRN_EINVAL), "not a cursor of this route");
	if (api_begin(r, d, &t))
		return;
	l = arena_alloc(&r->mem, (size_t)limit * sizeof(*l));
	rc = l ? cairn_links(t, kind, key, strlen(key), dv, rel, &cur, l, (size_t)limit, &n)
	       : CAIRN_ENOMEM;
	if (rc) {
		cairn_txn_end(t);
		return reply_cairn(r, rc);
	}
	PUTS(&r->out, "{\"items\":[");
	for (size_t i = 0; i < n && !rc; i++) {
		if (i)
			buf_put_u8(&r->out, ',');
		rc = wire_link(&r->out, t, &l[i], 1, &last);
	}
	if (rc) {
		cairn_txn_end(t);
		return reply_cairn(r, rc);
	}
	PUTS(&r->out, "],\"next\":");
	if (n == (size_t)limit)
		hex_cursor(&r->out, cur.state, sizeof(cur.state));
	else
		PUTS(&r->out, "null");
	buf_put_u8(&r->out, '}');
	api_reply_read(r, t);
	cairn_txn_end(t);
}

void h_counts(req *r)
{
	const char *d = r->seg[2], *kinds[1024];
	cairn_txn *t;
	size_t n;
	int rc;

	if (api_allow(r, d, NEED_READ, NULL) || api_begin(r, d, &t))
		return;
	PUTS(&r->out, "{\"counts\":{");
	rc = cairn_kind_list(t, kinds, 1024, &n);
	for (size_t i = 0; i < n && !rc; i++) {
		uint64_t c;

		if ((rc = cairn_count(t, kinds[i], &c)))
			break;
		if (i)
			buf_put_u8(&r->out, ',');
		wire_cstr(&r->out, kinds[i]);
		buf_printf(&r->out, ":%llu", (unsigned long long)c);
	}
	if (rc) {
		cairn_txn_end(t);
		return reply_cairn(r, rc);
	}
	PUTS(&r->out, "}}");
	api_reply_read(r, t);
	cairn_txn_end(t);
}

/* ---------------------------------------------------------- revisions -- */

void h_revisions(req *r)
{
	const char *d = r->seg[2], *before = arg(r, "before");
	cairn_revision *revs;
	uint64_t b = 0;
	cairn_txn *t;
	long limit;
	size_t n;
	int rc;

	if (api_allow(r, d, NEED_READ, NULL) || (limit = api_limit_arg(r, 20)) < 0)
		return;
	if (before && api_parse_u64(before, &b))
		return reply_error(r, 400, cairn_errname(CAIRN_EINVAL), "before is a revision number");
	if (api_begin(r, d, &t))
		return;
	revs = arena_alloc(&r->mem, (size_t)limit * sizeof(*revs));
	rc = revs ? cairn_log(t, b, revs, (size_t)limit, &n) : CAIRN_ENOMEM;
	if (rc) {
		cairn_txn_end(t);
		return reply_cairn(r, rc);
	}
	PUTS(&r->out, "{\"items\":[");
	for (size_t i = 0; i < n; i++) {
		if (i)
			buf_put_u8(&r->out, ',');
		wire_revision(&r->out, &revs[i]);
	}
	PUTS(&r->out, "],\"next\":");
	if (n == (size_t)limit && revs[n - 1].revision > 1)
		buf_printf(&r->out, "%llu", (unsigned long long)revs[n - 1].revision);
	else
		PUTS(&r->out, "null");
	buf_put_u8(&r->out, '}');
	api_reply_read(r, t);
	cairn_txn_end(t);
}

void h_revision(req *r)
{
	const char *d = r->seg[2];
	cairn_revision rv;
	uint64_t rev;
	cairn_txn *t;
	int rc;

	if (api_allow(r, d, NEED_READ, NULL))
		return;
	if (api_parse_u64(r->seg[4], &rev))
		return reply_error(r, 404, cairn_errname(CAIRN_ENOTFOUND), "not a revision number");
	if (api_begin(r, d, &t))
		return;
	if ((rc = cairn_revision_get(t, rev, &rv))) {
		cairn_txn_end(t);
		return reply_cairn(r, rc);
	}
	wire_revision(&r->out, &rv);
	api_reply_read(r, t);
	cairn_txn_end(t);
}

void h_revision_changes(req *r)
{
	const char *d = r->seg[2];
	struct items_out io = {r, 1, 0, 1};
	uint64_t rev;
	cairn_txn *t;
	int rc;

	if (api_allow(r, d, NEED_READ, NULL))
		return;
	if (api_parse_u64(r->seg[4], &rev))
		return reply_error(r, 404, cairn_errname(CAIRN_ENOTFOUND), "not a revision number");
	if (api_begin(r, d, &t))
		return;
	PUTS(&r->out, "{\"items\":[");
	if ((rc = cairn_revision_changes(t, rev, api_w_item, &io))) {
		cairn_txn_end(t);
		return api_past_deadline(r) ? api_reply_timeout(r) : reply_cairn(r, rc);
	}
	PUTS(&r->out, "]}");
	api_reply_read(r, t);
	cairn_txn_end(t);
}

/* ---------------------------------------------------- history, lineage -- */

static void w_history(req *r, const cairn_history_entry *h, size_t n, const cairn_history_cursor *c)
{
	PUTS(&r->out, "{\"items\":[");
	for (size_t i = 0; i < n; i++) {
		if (i)
			buf_put_u8(&r->out, ',');
		buf_printf(&r->out, "{\"change\":\"%s\",\"vid\":%llu,\"title\":",
			   wire_change_name(h[i].change), (unsigned long long)h[i].vid);
		wire_str(&r->out, h[i].title, h[i].title_len);
		PUTS(&r->out, ",\"values\":");
		buf_put(&r->out, h[i].values, h[i].values_len);
		PUTS(&r->out, ",\"diff\":");
		buf_put(&r->out, h[i].diff, h[i].diff_len);
		PUTS(&r->out, ",\"provenance\":");
		wire_revision(&r->out, &h[i].rev);
		if (h[i].change == CAIRN_ERASED) {
			PUTS(&r->out, ",\"erased\":");
			wire_revision(&r->out, &h[i].erased);
		}
		buf_put_u8(&r->out, '}');
	}
	PUTS(&r->out, "],\"next\":");
	if (c->done)
		PUTS(&r->out, "null");
	else
		buf_printf(&r->out, "\"%llu\"", (unsigned long long)c->next_vid);
	buf_put_u8(&r->out, '}');
}

/* ?cursor= of a history page: the next vid. */
static int history_cursor(req *r, cairn_history_cursor *c)
{
	const char *s = arg(r, "cursor");

	memset(c, 0, sizeof(*c));
	if (s && api_parse_u64(s, &c->next_vid)) {
		reply_error(r, 400, cairn_errname(CAIRN_EINVAL), "not a cursor of this route");
		return -1;
	}
	return 0;
}

void h_history(req *r)
{
	const char *d = r->seg[2], *kind = r->seg[4], *key = r->seg[5];
	cairn_history_cursor c;
	cairn_history_entry *h;
	cairn_txn *t;
	long limit;
	size_t n;
	int rc;

	if (api_allow(r, d, NEED_READ, NULL) || (limit = api_limit_arg(r, 20)) < 0 ||
	    history_cursor(r, &c) || api_begin(r, d, &t))
		return;
	h = arena_alloc(&r->mem, (size_t)limit * sizeof(*h));
	rc = h ? cairn_history(t, kind, key, strlen(key), &c, h, (size_t)limit, &n) : CAIRN_ENOMEM;
	if (rc) {
		cairn_txn_end(t);
		return reply_cairn(r, rc);
	}
	w_history(r, h, n, &c);
	api_reply_read(r, t);
	cairn_txn_end(t);
}

static void w_lineage_entry(buf *b, const char *attr, const cairn_revision *rv)
{
	PUTS(b, "{\"attribute\":");
	wire_cstr(b, attr);
	PUTS(b, ",\"provenance\":");
	wire_revision(b, rv);
	buf_put_u8(b, '}');
}

void h_lineage(req *r)
{
	const char *d = r->seg[2], *kind = r->seg[4], *key = r->seg[5];
	cairn_lineage_entry *le;
	cairn_revision created;
	cairn_txn *t;
	size_t n;
	int rc;

	if (api_allow(r, d, NEED_READ, NULL) || api_begin(r, d, &t))
		return;
	le = arena_alloc(&r->mem, 257 * sizeof(*le));
	rc = le ? cairn_lineage(t, kind, key, strlen(key), le, 257, &n, &created) : CAIRN_ENOMEM;
	if (rc) {
		cairn_txn_end(t);
		return reply_cairn(r, rc);
	}
	PUTS(&r->out, "{\"created\":");
	wire_revision(&r->out, &created);
	PUTS(&r->out, ",\"values\":[");
	for (size_t i = 0; i < n; i++) {
		if (i)
			buf_put_u8(&r->out, ',');
		w_lineage_entry(&r->out, *le[i].attribute ? le[i].attribute : "(title)", &le[i].rev);
	}
	PUTS(&r->out, "]}");
	api_reply_read(r, t);
	cairn_txn_end(t);
}

/* /links/{rel}/{from}/{to}/history|lineage: from and to are "Kind:key". */
void h_link_history(req *r)
{
	const char *d = r->seg[2], *rel = r->seg[4], *fk, *fkey, *tk, *tkey;
	int lineage = strcmp(r->seg[7], "lineage") == 0;
	cairn_history_cursor c;
	cairn_txn *t;
	long limit = 20;
	int rc;

	if (api_allow(r, d, NEED_READ, NULL))
		return;
	if (split_endpoint(r, r->seg[5], &fk, &fkey) || split_endpoint(r, r->seg[6], &tk, &tkey))
		return reply_error(r, 400, cairn_errname(CAIRN_EINVAL),
				   "a Link's ends are Kind:key, percent-encoded");
	if (!lineage && ((limit = api_limit_arg(r, 20)) < 0 || history_cursor(r, &c)))
		return;
	if (api_begin(r, d, &t))
		return;
	if (lineage) {
		cairn_lineage_entry le;
		cairn_revision created;

		rc = cairn_link_lineage(t, rel, fk, fkey, strlen(fkey), tk, tkey, strlen(tkey), &le,
					&created);
		if (!rc) {
			PUTS(&r->out, "{\"created\":");
			wire_revision(&r->out, &created);
			PUTS(&r->out, ",\"values\":[");
			w_lineage_entry(&r->out, "(values)", &le.rev);
			PUTS(&r->out, "]}");
		}
	} else {
		cairn_history_entry *h = arena_alloc(&r->mem, (size_t)limit * sizeof(*h));
		size_t n;

		rc = h ? cairn_link_history(t, rel, fk, fkey, strlen(fkey), tk, tkey, strlen(tkey), &c,
					    h, (size_t)limit, &n)
		       : CAIRN_ENOMEM;
		if (!rc)
			w_history(r, h, n, &c);
	}
	if (rc) {
		cairn_txn_end(t);
		return reply_cairn(r, rc);
	}
	api_reply_read(r, t);
	cairn_txn_end(t);
}

/* ------------------------------------------------------------- export -- */

/* The export's output, into the answer, until the request's deadline. */
static ssize_t export_write(void *cookie, const char *p, size_t n)
{
	req *r = cookie;

	if (api_past_deadline(r) || r->out.oom) {
		errno = r->out.oom ? ENOMEM : ETIMEDOUT;
		return -1;
	}
	buf_put(&r->out, p, n);
	return (ssize_t)n;
}

void h_export(req *r)
{
	const char *d = r->seg[2];
	cairn_txn *t;
	FILE *m;
	int rc;

	if (api_allow(r, d, NEED_READ, NULL) || api_begin(r, d, &t))
		return;
	m = fopencookie(r, "w", (cookie_io_functions_t){NULL, export_write, NULL, NULL});
	rc = m ? cairn_export(t, m) : CAIRN_ENOMEM;
	if (m && fclose(m) && !rc)
		rc = CAIRN_EIO;
	if (rc) {
		cairn_txn_end(t);
		return api_past_deadline(r) ? api_reply_timeout(r) : reply_cairn(r, rc);
	}
	api_reply_read(r, t);
	r->ctype = "application/x-ndjson";
	cairn_txn_end(t);
}
