/*
 * Import of JSON Lines in batches, one commit per batch.
 *
 * A line may name a Record that comes later in the import (a Part naming a
 * Plant further down, a Link file after the Record file). Its change cannot
 * be committed yet, so it waits: it is taken out of its batch and kept with
 * the name of the Record it needs. Whenever a batch commits a Record some
 * changes wait for, they join the next batch. At the end, everything still
 * waiting is tried together in one last commit (which resolves cycles, such
 * as two Records naming each other); what still fails names its line.
 *
 * A change that waits blocks the later changes of the same Record or Link:
 * they wait behind it, so the import's order is what the store ends with.
 *
 * A batch is validated in collect mode, so every bad line of a batch is found
 * at once; the bad lines are reported in line order (and the import stops at
 * the first, or skips them) and the rest of the batch is committed.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/changeset.h"
#include "base/alloc.h"
#include "base/err.h"
#include "base/hmap.h"
#include "admin/admin.h"
#include "version/version.h"

/*
 * Large batches: a batch's index entries at random places (names,
 * attributes) share pages the larger it is; at 1M Records, batches of 100,000
 * import twice as fast as batches of 10,000 (performance.md). A batch also
 * ends at BATCH_BYTES of lines, which bounds its memory.
 */
#define DEFAULT_BATCH 100000
#define BATCH_BYTES (64u << 20)
#define TAG_LINE_BITS 40
#define TAG_LINE_MASK ((1ull << TAG_LINE_BITS) - 1)

struct cairn_import {
	cairn_store *st;
	cairn_import_options o;
	char *domain, *branch; /* copies of the option strings */
	cairn_changeset *batch;
	size_t batch_bytes;	   /* bytes of the lines in batch */
	cairn_changeset *waiting;  /* changes waiting for a Record */
	char **awaits;		   /* awaits[i]: "Kind:key" waiting[i] needs */
	hmap wanted;		   /* "Kind:key" -> 1 waited for, 2 committed since */
	hmap blocked;		   /* identity of a waiting change -> waiting changes with it */
	buf ident;		   /* scratch for identities */
	int released;		   /* some waited-for Record was committed */
	char **files;
	size_t n_files;
	cairn_import_stats stats;
	int rc;			   /* a stopping error, once one happened */
	uint64_t vec_rows;	   /* rows taken from o.vectors */
	int counted;		   /* in st->importing */
	float *vec;		   /* one row */
};

static void tag_where(cairn_import *im, uint64_t tag, const char **file, uint64_t *line)
{
	size_t f = (size_t)(tag >> TAG_LINE_BITS);

	*file = f < im->n_files ? im->files[f] : "?";
	*line = tag & TAG_LINE_MASK;
}

int cairn_import_begin(cairn_store *st, const cairn_import_options *opts, cairn_import **out)
{
	cairn_import *im;
	int rc;

	if (!out)
		return err_set(CAIRN_EINVAL, "cairn_import_begin: out is NULL");
	*out = NULL;
	if (!st || !opts || !opts->commit.domain)
		return err_set(CAIRN_EINVAL, "cairn_import_begin: a store and a Domain are required");
	if ((rc = err_reserved(opts->reserved, "cairn_import_begin", "cairn_import_options")))
		return rc;
	if ((rc = err_reserved(opts->commit.reserved, "cairn_import_begin", "cairn_import_options.commit")))
		return rc;
	if (opts->on_error != CAIRN_ON_ERROR_STOP && opts->on_error != CAIRN_ON_ERROR_SKIP)
		return err_set(CAIRN_EINVAL, "on_error must be stop or skip");
	if (opts->vectors && (!opts->vector_dim || opts->vector_dim > CAIRN_MAX_VECTOR_DIM))
		return err_set(CAIRN_EINVAL, "a vectors file needs its dimension, 1 to %d",
			       CAIRN_MAX_VECTOR_DIM);
	im = cr_calloc(1, sizeof(*im));
	if (!im)
		return err_set(CAIRN_ENOMEM, "out of memory");
	if (opts->vectors && !(im->vec = cr_malloc(opts->vector_dim * sizeof(float)))) {
		cr_free(im);
		return err_set(CAIRN_ENOMEM, "out of memory");
	}
	im->st = st;
	im->o = *opts;
	/* The vector index is built after a bulk import, not while it competes for the cores. */
	atomic_fetch_add(&st->importing, 1);
	im->counted = 1;
	if (!im->o.batch)
		im->o.batch = DEFAULT_BATCH;
	im->domain = cr_strdup(opts->commit.domain);
	im->branch = opts->commit.branch ? cr_strdup(opts->commit.branch) : NULL;
	if (!im->domain || (opts->commit.branch && !im->branch)) {
		cairn_import_abort(im);
		return err_set(CAIRN_ENOMEM, "out of memory");
	}
	im->o.commit.domain = im->domain;
	im->o.commit.branch = im->branch;
	if ((rc = cairn_changeset_new(&im->batch)) || (rc = cairn_changeset_new(&im->waiting))) {
		cairn_import_abort(im);
		return rc;
	}
	*out = im;
	return 0;
}

void cairn_import_abort(cairn_import *im)
{
	if (!im)
		return;
	if (im->awaits)
		for (size_t i = 0; i < (im->waiting ? im->waiting->n : 0); i++)
			cr_free(im->awaits[i]);
	cr_free(im->awaits);
	cairn_changeset_free(im->batch);
	cairn_changeset_free(im->waiting);
	hmap_release(&im->wanted);
	hmap_release(&im->blocked);
	buf_release(&im->ident);
	for (size_t i = 0; i < im->n_files; i++)
		cr_free(im->files[i]);
	cr_free(im->files);
	cr_free(im->domain);
	cr_free(im->branch);
	cr_free(im->vec);
	if (im->counted) {
		atomic_fetch_sub(&im->st->importing, 1);
		store_wake(im->st);
	}
	cr_free(im);
}

/* Report a bad line; returns the error to stop with, or 0 to skip it. */
static int bad_line(cairn_import *im, uint64_t tag, int code, const char *msg)
{
	const char *file;
	uint64_t line;

	tag_where(im, tag, &file, &line);
	/* Within an import the line is what matters, not the change's place in its batch. */
	if (strncmp(msg, "change ", 7) == 0 && msg[7] >= '0' && msg[7] <= '9') {
		const char *p = msg + 7;

		while (*p >= '0' && *p <= '9')
			p++;
		if (p[0] == ':' && p[1] == ' ')
			p += 2;
		else if (p[0] == ' ')
			p++;
		msg = p;
	}
	if (im->o.on_bad_line)
		im->o.on_bad_line(im->o.ctx, file, line, code, msg);
	if (im->o.on_error == CAIRN_ON_ERROR_SKIP) {
		im->stats.skipped++;
		return 0;
	}
	return err_set(code, "%s:%llu: %s", file, (unsigned long long)line, msg);
}

/* The identity of a change: its Record, or its Link (Relation and both ends). */
static int identity(const cs_change *c, buf *b)
{
	buf_reset(b);
	if (c->kind) {
		buf_put_u8(b, 'R');
		buf_put_str(b, c->kind, strlen(c->kind));
		buf_put_str(b, c->key, c->key_len);
	} else {
		buf_put_u8(b, 'L');
		buf_put_str(b, c->rel, strlen(c->rel));
		buf_put_str(b, c->from_kind, strlen(c->from_kind));
		buf_put_str(b, c->from_key, c->from_len);
		buf_put_str(b, c->to_kind, strlen(c->to_kind));
		buf_put_str(b, c->to_key, c->to_len);
	}
	return b->oom ? err_set(CAIRN_ENOMEM, "out of memory") : 0;
}

/* Count a waiting change of this identity in or out of the blocked set. */
static int block(cairn_import *im, const cs_change *c, int delta)
{
	uint64_t *slot;
	int rc = identity(c, &im->ident);

	if (rc)
		return rc;
	slot = hmap_put(&im->blocked, im->ident.p, im->ident.len, NULL);
	if (!slot)
		return err_set(CAIRN_ENOMEM, "out of memory");
	*slot = (uint64_t)((int64_t)*slot + delta);
	return 0;
}

enum { KEEP = 0, DEFER, REMOVE }; /* changeset_split's marks */

/*
 * Set the batch's changes marked DEFER aside, each waiting for the Record
 * awaited[i] names, and drop those marked REMOVE; the rest stay in order.
 * Linear in the batch.
 */
static int defer_marked(cairn_import *im, const uint8_t *mark, const char *const *awaited)
{
	size_t nd = 0, w = im->waiting->n;
	char **a = im->awaits;
	int rc = 0;

	for (size_t i = 0; i < im->batch->n; i++)
		nd += mark[i] == DEFER;
	if (nd && !(a = cr_reallocarray(im->awaits, w + nd, sizeof(char *))))
		return err_set(CAIRN_ENOMEM, "out of memory");
	im->awaits = a;
	for (size_t i = 0; i < im->batch->n && !rc; i++) {
		uint64_t *slot;
		char *m;

		if (mark[i] != DEFER)
			continue;
		if (!(m = cr_strdup(awaited[i])) || !(slot = hmap_put(&im->wanted, awaited[i], strlen(awaited[i]), NULL))) {
			cr_free(m);
			rc = err_set(CAIRN_ENOMEM, "out of memory");
			break;
		}
		*slot = 1;
		a[w++] = m;
		rc = block(im, &im->batch->v[i], 1);
	}
	if (!rc)
		rc = changeset_split(im->batch, im->waiting, mark);
	if (rc) { /* out of memory: the import stops; what was copied goes */
		for (size_t j = im->waiting->n; j < w; j++)
			cr_free(a[j]);
		return rc;
	}
	im->stats.deferred += nd;
	return 0;
}

/*
 * Changes of the batch whose Record or Link has an earlier change waiting
 * wait too, for the same Record, so they are applied after it.
 */
static int wait_behind(cairn_import *im)
{
	size_t n = im->batch->n;
	uint8_t *mark = NULL;
	const char **awaited = NULL;
	hmap last = HMAP_INIT;
	buf id = BUF_INIT;
	int rc = 0;

	if (im->waiting->n == 0)
		return 0;
	for (size_t i = 0; i < n && !rc; i++) {
		uint64_t *slot;

		if ((rc = identity(&im->batch->v[i], &id)))
			break;
		slot = hmap_get(&im->blocked, id.p, id.len);
		if (!slot || *slot == 0)
			continue;
		if (!mark && (!(mark = cr_calloc(n, 1)) || !(awaited = cr_calloc(n, sizeof(*awaited))))) {
			rc = err_set(CAIRN_ENOMEM, "out of memory");
			break;
		}
		mark[i] = DEFER;
	}
	if (rc || !mark)
		goto out;
	/* What the last waiting change of each identity waits for. */
	for (size_t w = 0; w < im->waiting->n && !rc; w++) {
		uint64_t *slot;

		if (!(rc = identity(&im->waiting->v[w], &id)) &&
		    !(slot = hmap_put(&last, id.p, id.len, NULL)))
			rc = err_set(CAIRN_ENOMEM, "out of memory");
		if (!rc)
			*slot = w + 1;
	}
	for (size_t i = 0; i < n && !rc; i++) {
		uint64_t *slot;

		if (mark[i] != DEFER || (rc = identity(&im->batch->v[i], &id)))
			continue;
		if ((slot = hmap_get(&last, id.p, id.len)))
			awaited[i] = im->awaits[*slot - 1];
		else
			mark[i] = KEEP;
	}
	if (!rc)
		rc = defer_marked(im, mark, awaited);
out:
	cr_free(mark);
	cr_free(awaited);
	hmap_release(&last);
	buf_release(&id);
	return rc;
}

/* After a commit: note the Records it created that changes wait for. */
static void note_committed(cairn_import *im, const cairn_changeset *cs)
{
	char name[CAIRN_MAX_NAME + 1 + CAIRN_MAX_KEY + 1];

	if (im->wanted.n == 0)
		return;
	for (size_t i = 0; i < cs->n; i++) {
		const cs_change *c = &cs->v[i];
		size_t kn;
		uint64_t *slot;

		if (c->op != OP_PUT)
			continue;
		kn = strlen(c->kind);
		memcpy(name, c->kind, kn);
		name[kn] = ':';
		memcpy(name + kn + 1, c->key, c->key_len);
		slot = hmap_get(&im->wanted, name, kn + 1 + c->key_len);
		if (slot && *slot == 1) {
			*slot = 2;
			im->released = 1;
		}
	}
}

/* Move the waiting changes whose Record was committed into the batch, in order. Linear. */
static int release_waiting(cairn_import *im, int all)
{
	size_t n = im->waiting->n, kept = 0;
	uint8_t *mark;
	int rc = 0;

	if (!all && !im->released)
		return 0;
	im->released = 0;
	if (n == 0)
		return 0;
	if (!(mark = cr_calloc(n, 1)))
		return err_set(CAIRN_ENOMEM, "out of memory");
	for (size_t i = 0; i < n && !rc; i++) {
		uint64_t *slot = hmap_get(&im->wanted, im->awaits[i], strlen(im->awaits[i]));

		if (all || (slot && *slot == 2)) {
			mark[i] = 1;
			rc = block(im, &im->waiting->v[i], -1);
		}
	}
	if (!rc)
		rc = changeset_split(im->waiting, im->batch, mark);
	for (size_t i = 0; i < n && !rc; i++) {
		if (mark[i]) {
			cr_free(im->awaits[i]);
			im->stats.deferred--;
		} else {
			im->awaits[kept++] = im->awaits[i];
		}
	}
	cr_free(mark);
	return rc;
}

/*
 * The changes of the batch by identity: *next chains the indexes of one
 * identity (each entry the next index + 1, 0 at the end) from the map's
 * value (the first index + 1). Linear in the batch.
 */
static int index_batch(cairn_import *im, hmap *by_id, size_t *next, buf *b)
{
	for (size_t i = im->batch->n; i-- > 0;) {
		uint64_t *slot;
		int isnew, rc;

		if ((rc = identity(&im->batch->v[i], b)))
			return rc;
		if (!(slot = hmap_put(by_id, b->p, b->len, &isnew)))
			return err_set(CAIRN_ENOMEM, "out of memory");
		next[i] = (size_t)*slot;
		*slot = i + 1;
	}
	return 0;
}

static int set_aside(cairn_import *im, commit_fail *fails, size_t n_fails, int final)
{
	size_t n = im->batch->n;
	uint8_t *mark = cr_calloc(n, 1);
	const char **awaited = cr_calloc(n, sizeof(char *));
	size_t *next = NULL;
	hmap by_id = HMAP_INIT;
	buf a = BUF_INIT;
	int rc = 0;

	if (!mark || !awaited) {
		rc = err_set(CAIRN_ENOMEM, "out of memory");
		goto out;
	}
	for (size_t j = 0; j < n_fails; j++) {
		size_t idx = (size_t)fails[j].change;
		uint64_t *head;

		if (idx >= n || mark[idx])
			continue;
		if (!fails[j].missing || final) {
			mark[idx] = REMOVE;
			continue;
		}
		/* Every change of the failed one's identity waits with it. */
		if (!next && (!(next = cr_calloc(n, sizeof(*next))) ||
			      (rc = index_batch(im, &by_id, next, &a)))) {
			rc = rc ? rc : err_set(CAIRN_ENOMEM, "out of memory");
			goto out;
		}
		if ((rc = identity(&im->batch->v[idx], &a)))
			goto out;
		head = hmap_get(&by_id, a.p, a.len);
		for (size_t i = head ? (size_t)*head : 0; i; i = next[i - 1]) {
			if (mark[i - 1] == REMOVE)
				continue;
			mark[i - 1] = DEFER;
			awaited[i - 1] = fails[j].missing;
		}
	}
	rc = defer_marked(im, mark, awaited);
out:
	cr_free(mark);
	cr_free(awaited);
	cr_free(next);
	hmap_release(&by_id);
	buf_release(&a);
	return rc;
}

/* Commit the batch; bad changes are reported and removed, needy ones wait (unless final). */
static int flush(cairn_import *im, int final)
{
	while (im->batch->n) {
		cairn_commit_result res;
		commit_fail *fails = NULL;
		size_t n_fails = 0;
		int rc;

		if (!final && (rc = wait_behind(im)))
			return rc;
		if (im->batch->n == 0)
			break;
		rc = commit_run(im->st, &im->o.commit, im->batch, COMMIT_COLLECT, &res, &fails,
				&n_fails);
		if (rc == 0) {
			for (size_t i = 0; i < im->batch->n; i++) {
				if (im->batch->v[i].kind)
					im->stats.records++;
				else
					im->stats.links++;
			}
			im->stats.unchanged += res.unchanged;
			if (res.changes || !res.unchanged) /* a batch of what was there writes nothing */
				im->stats.commits++;
			/* The next batch expects the head this one made. */
			if (im->o.commit.has_expect)
				im->o.commit.expect_revision = res.revision;
			note_committed(im, im->batch);
			cairn_changeset_clear(im->batch);
			if (im->o.progress)
				im->o.progress(im->o.ctx, &im->stats);
			return 0;
		}
		if (!fails)
			return rc; /* not a validation failure: I/O, memory, no Domain... */
		/* Report the bad changes in line order; stopping, the first one stops. */
		rc = 0;
		for (size_t j = 0; j < n_fails && !rc; j++) {
			commit_fail *f = &fails[j];
			size_t idx = (size_t)f->change;

			if (idx >= im->batch->n || (j > 0 && fails[j - 1].change == f->change))
				continue; /* one report per change */
			if (f->missing && !final)
				continue;
			rc = bad_line(im, im->batch->v[idx].tag, f->code, f->msg);
		}
		/*
		 * Then set the waiting ones aside and remove the bad ones, in order. A
		 * change that must wait takes every change of the same Record or Link
		 * in the batch with it: a failure found on the final state of a Record
		 * names the Record's last change, but all of them depend on it.
		 */
		if (!rc)
			rc = set_aside(im, fails, n_fails, final);
		commit_fails_free(fails, n_fails);
		if (rc)
			return rc;
	}
	return 0;
}

static int batch_done(cairn_import *im)
{
	int rc = flush(im, 0);

	im->batch_bytes = 0;
	if (!rc)
		rc = release_waiting(im, 0);
	return rc;
}

static int add_file(cairn_import *im, const char *name, size_t *idx)
{
	char **f = cr_reallocarray(im->files, im->n_files + 1, sizeof(char *));

	if (!f)
		return err_set(CAIRN_ENOMEM, "out of memory");
	im->files = f;
	f[im->n_files] = cr_strdup(name ? name : "-");
	if (!f[im->n_files])
		return err_set(CAIRN_ENOMEM, "out of memory");
	*idx = im->n_files++;
	return 0;
}

/*
 * The lines of a file are read and parsed on a thread of their own, a
 * batch ahead: while the importer commits one batch, the next is parsed.
 * The reader hands over a batch when it has o.batch changes or
 * BATCH_BYTES of lines, at a line that does not parse (with its error, so
 * that the lines before it are judged first), and at the end of the file.
 */
typedef struct reader {
	cairn_import *im;
	FILE *in;
	size_t fidx;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	cairn_changeset *cs;	/* the batch being handed over */
	int ready;		/* cs is full and waits for the importer */
	atomic_int stop;	/* the importer wants no more (read between lines too) */
	int eof, io_error;	/* after this batch, the file ended (or could not be read: errno) */
	uint64_t lines, bytes, batch_bytes; /* of this batch */
	int bad_rc;		/* this batch ends at a line that does not parse: */
	uint64_t bad_tag;
	char bad_msg[1024];
	char *line;
	size_t line_cap;
	uint64_t line_no;
} reader;

/*
 * The next row of the vectors stream for the change just added, when it
 * puts a Record (else nothing); on an error the change is taken back out.
 */
static int take_vector(cairn_import *im, cairn_changeset *cs)
{
	cs_change *c = &cs->v[cs->n - 1];
	int rc = 0;

	if (!c->kind || c->op != OP_PUT)
		return 0;
	if (c->vec)
		rc = err_set(CAIRN_EINVAL, "the line has a vector, and the vectors file gives "
					   "Record lines theirs");
	else if (fread(im->vec, sizeof(float), im->o.vector_dim, im->o.vectors) !=
		 im->o.vector_dim)
		rc = err_set(ferror(im->o.vectors) ? CAIRN_EIO : CAIRN_EINVAL,
			     "the vectors file has no row %llu for this Record line (%zu float32s "
			     "a row)",
			     (unsigned long long)im->vec_rows + 1, im->o.vector_dim);
	else if ((rc = cairn_changeset_vector(cs, im->vec, im->o.vector_dim)) == 0)
		im->vec_rows++;
	if (rc)
		changeset_remove(cs, cs->n - 1);
	return rc;
}

static void *reader_main(void *arg)
{
	reader *r = arg;
	cairn_import *im = r->im;
	int done = 0;

	while (!done) {
		ssize_t n;

		pthread_mutex_lock(&r->mu);
		while (r->ready && !r->stop)
			pthread_cond_wait(&r->cv, &r->mu);
		done = r->stop;
		pthread_mutex_unlock(&r->mu);
		if (done)
			break;
		r->lines = r->bytes = r->batch_bytes = 0;
		r->bad_rc = 0;
		while (!r->bad_rc && r->cs->n < im->o.batch && r->batch_bytes < BATCH_BYTES &&
		       !atomic_load(&r->stop) && (n = getline(&r->line, &r->line_cap, r->in)) >= 0) {
			size_t len = (size_t)n, s = 0;
			int rc;

			r->line_no++;
			r->lines++;
			r->bytes += len;
			while (len > 0 && (r->line[len - 1] == '\n' || r->line[len - 1] == '\r'))
				len--;
			while (s < len && (r->line[s] == ' ' || r->line[s] == '\t'))
				s++;
			if (s == len)
				continue; /* blank lines are allowed */
			if ((rc = cairn_changeset_add_json(r->cs, r->line + s, len - s)) ||
			    (im->o.vectors && (rc = take_vector(im, r->cs)))) {
				r->bad_rc = rc;
				r->bad_tag = (uint64_t)r->fidx << TAG_LINE_BITS | r->line_no;
				snprintf(r->bad_msg, sizeof(r->bad_msg), "%s", cairn_errmsg());
				break;
			}
			r->cs->v[r->cs->n - 1].tag = (uint64_t)r->fidx << TAG_LINE_BITS | r->line_no;
			r->batch_bytes += len;
		}
		if (!r->bad_rc && r->cs->n < im->o.batch && r->batch_bytes < BATCH_BYTES &&
		    !atomic_load(&r->stop)) {
			r->eof = 1;
			r->io_error = ferror(r->in) ? (errno ? errno : EIO) : 0;
			done = 1;
		}
		pthread_mutex_lock(&r->mu);
		r->ready = 1;
		pthread_cond_broadcast(&r->cv);
		pthread_mutex_unlock(&r->mu);
	}
	return NULL;
}

int cairn_import_feed(cairn_import *im, const char *name, FILE *in)
{
	reader r;
	pthread_t th;
	size_t fidx = 0;
	int rc = 0, started;

	if (!im || !in)
		return err_set(CAIRN_EINVAL, "cairn_import_feed: NULL argument");
	if (im->rc)
		return err_set(im->rc, "the import already stopped");
	if ((rc = add_file(im, name, &fidx)))
		return im->rc = rc;
	memset(&r, 0, sizeof(r));
	r.im = im;
	r.in = in;
	r.fidx = fidx;
	if ((rc = cairn_changeset_new(&r.cs)))
		return im->rc = rc;
	pthread_mutex_init(&r.mu, NULL);
	pthread_cond_init(&r.cv, NULL);
	started = pthread_create(&th, NULL, reader_main, &r) == 0;
	if (!started) {
		rc = err_set(CAIRN_ENOMEM, "cannot start the reader of %s", im->files[fidx]);
		goto out;
	}
	for (;;) {
		int eof, bad_rc, io_error;
		uint64_t bad_tag;
		char msg[1024];

		pthread_mutex_lock(&r.mu);
		while (!r.ready)
			pthread_cond_wait(&r.cv, &r.mu);
		im->stats.lines += r.lines;
		im->stats.bytes += r.bytes;
		im->batch_bytes += r.batch_bytes;
		rc = changeset_take_all(im->batch, r.cs);
		eof = r.eof;
		io_error = r.io_error;
		bad_rc = r.bad_rc;
		bad_tag = r.bad_tag;
		memcpy(msg, r.bad_msg, sizeof(msg));
		/* The next batch is read while this one commits. */
		r.ready = 0;
		pthread_cond_broadcast(&r.cv);
		pthread_mutex_unlock(&r.mu);
		if (rc)
			break;
		if (bad_rc == CAIRN_ENOMEM) {
			rc = bad_rc;
			break;
		}
		if (bad_rc) {
			/* The lines before this one are judged first, so reports keep line order. */
			if ((rc = batch_done(im)) || (rc = bad_line(im, bad_tag, bad_rc, msg)))
				break;
			/* Skipped, it would leave the vectors file's rows a line out of step. */
			if (im->o.vectors) {
				const char *file;
				uint64_t line;

				tag_where(im, bad_tag, &file, &line);
				rc = err_set(bad_rc, "%s line %llu: %s (with a vectors file, a line that "
						     "cannot be read stops the import)",
					     file, (unsigned long long)line, msg);
				break;
			}
		} else if ((im->batch->n >= im->o.batch || im->batch_bytes >= BATCH_BYTES) &&
			   (rc = batch_done(im))) {
			break;
		}
		if (eof) {
			if (io_error)
				rc = err_set(CAIRN_EIO, "%s: %s", im->files[fidx],
					     io_error == EISDIR ? "is a directory: import reads files of "
								  "JSON Lines"
								: "read error");
			break;
		}
	}
out:
	if (started) {
		pthread_mutex_lock(&r.mu);
		r.stop = 1;
		pthread_cond_broadcast(&r.cv);
		pthread_mutex_unlock(&r.mu);
		pthread_join(th, NULL);
	}
	pthread_mutex_destroy(&r.mu);
	pthread_cond_destroy(&r.cv);
	cairn_changeset_free(r.cs);
	free(r.line);
	return rc ? (im->rc = rc) : 0;
}

int cairn_import_end(cairn_import *im, cairn_import_stats *stats)
{
	int rc;

	if (!im)
		return err_set(CAIRN_EINVAL, "cairn_import_end: NULL argument");
	rc = im->rc;
	if (!rc)
		rc = batch_done(im);
	/* Whatever still waits is tried together once; what fails now fails for good. */
	while (!rc && (im->batch->n || im->waiting->n)) {
		rc = flush(im, 0);
		if (!rc)
			rc = release_waiting(im, 0);
		if (!rc && im->batch->n == 0 && im->waiting->n) {
			rc = release_waiting(im, 1);
			if (!rc)
				rc = flush(im, 1);
		}
	}
	/* Rows no Record line took: the file does not go with these lines. */
	if (!rc && im->o.vectors && fgetc(im->o.vectors) != EOF)
		rc = err_set(CAIRN_EINVAL, "the vectors file has more rows than the %llu Record lines",
			     (unsigned long long)im->vec_rows);
	if (stats)
		*stats = im->stats;
	cairn_import_abort(im);
	return rc;
}
