/* Export of a branch as import lines: every Record (Kinds in schema order, keys in byte order), then every Link. */
#include <stdio.h>
#include <string.h>

#include "base/json.h"
#include "query/read.h"
#include "base/alloc.h"
#include "base/err.h"

#define EXPORT_PAGE 512

static int put_line(FILE *out, buf *b)
{
	buf_put_u8(b, '\n');
	if (b->oom)
		return err_set(CAIRN_ENOMEM, "out of memory");
	if (fwrite(b->p, 1, b->len, out) != b->len)
		return err_set(CAIRN_EIO, "export: write failed");
	return 0;
}

static int export_records(cairn_txn *t, const kind_def *k, FILE *out, buf *b)
{
	cairn_record *recs = cr_calloc(EXPORT_PAGE, sizeof(*recs));
	float *vec = NULL;
	size_t vcap = 0, n;
	char *after = NULL;
	size_t after_len = 0;
	int rc;

	if (!recs)
		return err_set(CAIRN_ENOMEM, "out of memory");
	do {
		rc = cairn_page(t, k->name, after, after_len, recs, EXPORT_PAGE, &n);
		for (size_t i = 0; i < n && !rc; i++) {
			cairn_record *r = &recs[i];

			buf_reset(b);
			buf_put(b, "{\"kind\":", 8);
			json_quote(b, k->name, strlen(k->name));
			buf_put(b, ",\"key\":", 7);
			json_quote(b, r->key, r->key_len);
			buf_put(b, ",\"title\":", 9);
			json_quote(b, r->title, r->title_len);
			buf_put(b, ",\"values\":", 10);
			buf_put(b, r->values, r->values_len);
			if (r->vector_dim) {
				size_t dim;

				if (vcap < r->vector_dim) {
					float *nv = cr_reallocarray(vec, r->vector_dim, sizeof(float));

					if (!nv) {
						rc = err_set(CAIRN_ENOMEM, "out of memory");
						break;
					}
					vec = nv;
					vcap = r->vector_dim;
				}
				rc = cairn_vector_get(t, r->vid, vec, vcap, &dim);
				if (rc)
					break;
				buf_put(b, ",\"vector\":[", 11);
				for (size_t j = 0; j < dim; j++)
					buf_printf(b, "%s%.9g", j ? "," : "", (double)vec[j]);
				buf_put_u8(b, ']');
			}
			buf_put_u8(b, '}');
			rc = put_line(out, b);
		}
		if (!rc && n) {
			char *a = cr_strndup(recs[n - 1].key, recs[n - 1].key_len);

			if (!a) {
				rc = err_set(CAIRN_ENOMEM, "out of memory");
				break;
			}
			cr_free(after);
			after = a;
			after_len = recs[n - 1].key_len;
		}
	} while (!rc && n == EXPORT_PAGE);
	cr_free(after);
	cr_free(vec);
	cr_free(recs);
	return rc;
}

static int export_links(cairn_txn *t, const kind_def *k, FILE *out, buf *b)
{
	cairn_record *recs = cr_calloc(EXPORT_PAGE, sizeof(*recs));
	cairn_link *links = cr_calloc(EXPORT_PAGE, sizeof(*links));
	char *after = NULL;
	size_t after_len = 0, n;
	int rc;

	if (!recs || !links) {
		cr_free(recs);
		cr_free(links);
		return err_set(CAIRN_ENOMEM, "out of memory");
	}
	do {
		rc = cairn_page(t, k->name, after, after_len, recs, EXPORT_PAGE, &n);
		for (size_t i = 0; i < n && !rc; i++) {
			cairn_link_cursor lc;
			size_t nl;

			memset(&lc, 0, sizeof(lc));
			do {
				rc = cairn_links(t, k->name, recs[i].key, recs[i].key_len, CAIRN_OUT,
						 NULL, &lc, links, EXPORT_PAGE, &nl);
				for (size_t j = 0; j < nl && !rc; j++) {
					cairn_link *l = &links[j];

					buf_reset(b);
					buf_put(b, "{\"rel\":", 7);
					json_quote(b, l->rel, strlen(l->rel));
					buf_put(b, ",\"from\":", 8);
					json_quote_pair(b, l->from_kind, strlen(l->from_kind), ':', l->from_key,
							l->from_key_len);
					buf_put(b, ",\"to\":", 6);
					json_quote_pair(b, l->to_kind, strlen(l->to_kind), ':', l->to_key,
							l->to_key_len);
					if (l->values_len > 2) {
						buf_put(b, ",\"values\":", 10);
						buf_put(b, l->values, l->values_len);
					}
					buf_put_u8(b, '}');
					rc = put_line(out, b);
				}
			} while (!rc && nl == EXPORT_PAGE);
		}
		if (!rc && n) {
			char *a = cr_strndup(recs[n - 1].key, recs[n - 1].key_len);

			if (!a) {
				rc = err_set(CAIRN_ENOMEM, "out of memory");
				break;
			}
			cr_free(after);
			after = a;
			after_len = recs[n - 1].key_len;
		}
	} while (!rc && n == EXPORT_PAGE);
	cr_free(after);
	cr_free(recs);
	cr_free(links);
	return rc;
}

int cairn_export(cairn_txn *t, FILE *out)
{
	buf b = BUF_INIT;
	int rc = 0;

	if (!t || !out)
		return err_set(CAIRN_EINVAL, "cairn_export: NULL argument");
	for (size_t i = 0; i < t->d.s->n_kinds && !rc; i++)
		rc = export_records(t, &t->d.s->kinds[i], out, &b);
	for (size_t i = 0; i < t->d.s->n_kinds && !rc; i++)
		rc = export_links(t, &t->d.s->kinds[i], out, &b);
	buf_release(&b);
	if (!rc && fflush(out) != 0)
		rc = err_set(CAIRN_EIO, "export: write failed");
	return rc;
}
