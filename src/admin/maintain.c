/*
 * Upkeep of a writable store: clearing deleted branches, merging segments of
 * postings (cairn_store_maintain), and the maintenance thread that runs
 * them, catches the vector indexes up and compacts to a retention.
 *
 * Deleting a branch removes its name and marks it at once; its Versions and
 * their index entries are cleared here, a bounded number of Versions per
 * write transaction, so the writer is never held long. The progress is kept
 * in the branch's catalog entry, so a crash or a close resumes it.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "admin/admin.h"
#include "base/alloc.h"
#include "base/err.h"
#include "base/knob.h"
#include "base/text.h"
#include "version/index.h"
#include "version/version.h"

/* ------------------------------------------------------------ clearing -- */

/* Remove one Version of a deleted branch and its index entries. */
static int clear_version(MDB_txn *txn, cairn_store *st, const schema *s, uint32_t dom,
			 uint64_t vid)
{
	kbuf k;
	MDB_val v;
	vrec ver;
	int rc;

	key_u64(&k, dom, vid);
	rc = db_get(txn, st, DB_VERSIONS, k.b, k.n, &v);
	if (rc == CAIRN_ENOTFOUND)
		return 0; /* already cleared */
	if (rc || (rc = vrec_decode(v.mv_data, v.mv_size, &ver)))
		return rc;
	if (vtype_rec(ver.type)) {
		key_keys(&k, dom, ver.kr, ver.key, ver.key_len);
		kb_be64(&k, ~vid);
		if ((rc = db_del(txn, st, DB_KEYS, k.b, k.n)) && rc != CAIRN_ENOTFOUND)
			return rc;
	}
	if ((rc = version_entries_drop(txn, st, s, dom, vid, &ver, NULL, NULL)))
		return rc;
	key_u64(&k, dom, vid);
	rc = db_del(txn, st, DB_VERSIONS, k.b, k.n);
	return rc == CAIRN_ENOTFOUND ? 0 : rc;
}

struct pending {
	uint32_t dom;
	branch_info b;
	int found;
	char name[CAIRN_MAX_BRANCH + 1];
};

static int find_deleting(const branch_info *b, void *arg)
{
	struct pending *p = arg;

	if (b->state != BRANCH_DELETING)
		return 0;
	p->b = *b;
	snprintf(p->name, sizeof(p->name), "%s", b->name);
	p->found = 1;
	return 1;
}

/* Find a branch being deleted in any Domain. */
static int next_pending(MDB_txn *txn, cairn_store *st, struct pending *p)
{
	uint64_t next;
	int rc;

	p->found = 0;
	if ((rc = meta_get_u64(txn, st, "next_domain", &next)))
		return rc;
	for (uint32_t dom = 1; dom < next && !p->found; dom++) {
		p->dom = dom;
		rc = each_branch(txn, st, dom, find_deleting, p);
		if (rc < 0)
			return rc;
	}
	return 0;
}

/*
 * Clear a deleted branch's Versions in revision order, one unit of the
 * budget per Version cleared and per revision looked at, stopping within a
 * revision when the budget is spent (the next vid is kept under 'c'). *done
 * is set when the branch is entirely gone.
 */
static int clear_step(MDB_txn *txn, cairn_store *st, struct pending *p, unsigned budget,
		      int *done_branch)
{
	counters ctr;
	schema *s = NULL;
	unsigned done = 0;
	uint64_t resume = 0;
	kbuf ck;
	MDB_val v;
	int rc;

	*done_branch = 0;
	/* clear_version deletes keys entries where keys has them: the segments go there first. */
	if ((rc = kseg_fold(txn, st, p->dom, NULL)) || (rc = counters_get(txn, st, p->dom, &ctr)) ||
	    (rc = schema_current(txn, st, p->dom, &s)))
		return rc;
	branch_cat_key(&ck, p->dom, CAT_CLEARING, NULL);
	kb_be32(&ck, p->b.id);
	rc = db_get(txn, st, DB_CATALOG, ck.b, ck.n, &v);
	if (rc == 0 && v.mv_size == 8)
		resume = be64_get(v.mv_data);
	else if (rc && rc != CAIRN_ENOTFOUND)
		goto out;
	rc = 0;
	while (p->b.progress < ctr.next_rev && done < budget && !rc) {
		kbuf k;
		rrec r;

		done++;
		key_u64(&k, p->dom, p->b.progress);
		rc = db_get(txn, st, DB_REVS, k.b, k.n, &v);
		if (rc == CAIRN_ENOTFOUND) {
			rc = 0;
		} else if (!rc && !(rc = rrec_decode(v.mv_data, v.mv_size, &r)) &&
			   r.branch == p->b.id) {
			uint64_t vid = resume > r.first_vid ? resume : r.first_vid;

			for (; vid < r.first_vid + r.n_versions && done < budget && !rc; vid++, done++)
				rc = clear_version(txn, st, s, p->dom, vid);
			if (!rc && vid < r.first_vid + r.n_versions) {
				/* The budget ran out within the revision: resume at vid. */
				uint8_t vb[8];

				be64_put(vb, vid);
				rc = db_put(txn, st, DB_CATALOG, ck.b, ck.n, vb, 8, 0);
				goto save;
			}
		}
		if (!rc) {
			p->b.progress++;
			resume = 0;
		}
	}
	if (!rc && (rc = db_del(txn, st, DB_CATALOG, ck.b, ck.n)) == CAIRN_ENOTFOUND)
		rc = 0;
	if (!rc && p->b.progress >= ctr.next_rev) {
		/* Everything of the branch is gone but its cells, catalog entry and revisions. */
		uint8_t pre[4 + 1 + 4];
		kbuf k;

		for (int type = CELL_LIVE; type <= CELL_COUNT && !rc; type++) {
			be32_put(pre, p->dom);
			pre[4] = (uint8_t)type;
			be32_put(pre + 5, p->b.id);
			rc = db_del_prefix(txn, st, DB_CELLS, pre, sizeof(pre), NULL);
		}
		for (const index_ops *const *ix = index_registry; *ix && !rc; ix++)
			if ((*ix)->drop_branch)
				rc = (*ix)->drop_branch(txn, st, p->dom, p->b.id);
		branch_cat_key(&k, p->dom, CAT_BRANCH, NULL);
		kb_be32(&k, p->b.id);
		if (!rc)
			rc = db_del(txn, st, DB_CATALOG, k.b, k.n);
		branch_cat_key(&k, p->dom, CAT_GONE, NULL);
		kb_be32(&k, p->b.id);
		if (!rc)
			rc = db_put(txn, st, DB_CATALOG, k.b, k.n, "", 0, 0);
		*done_branch = !rc;
		goto out;
	}
save:
	if (!rc)
		rc = branch_put(txn, st, p->dom, &p->b, p->name);
out:
	schema_free(s);
	return rc;
}

/* One step of an index's background work (merging segments of postings) in the first Domain
 * that has some (dry: only look). */
static int merge_any(MDB_txn *txn, cairn_store *st, int dry, int *found)
{
	uint64_t next;
	int rc;

	*found = 0;
	if ((rc = meta_get_u64(txn, st, "next_domain", &next)))
		return rc;
	for (uint32_t dom = 1; dom < next && !rc && !*found; dom++)
		for (const index_ops *const *ix = index_registry; *ix && !rc && !*found; ix++)
			if ((*ix)->maintain)
				rc = (*ix)->maintain(txn, st, dom, dry, found);
	return rc;
}

/* With nothing else to do, the indexes that work in transactions of their own (vectors). */
static int catch_up(cairn_store *st, const volatile int *stop)
{
	int rc = 0;

	for (const index_ops *const *ix = index_registry; *ix && !rc && !*stop; ix++)
		if ((*ix)->catch_up)
			rc = (*ix)->catch_up(st, stop);
	return rc;
}

/* One step of upkeep, as store_write runs it. */
struct maintain_txn {
	unsigned budget;
	int pending;	/* work remains */
};

static int maintain_txn(MDB_txn *txn, cairn_store *st, void *arg)
{
	struct maintain_txn *a = arg;
	struct pending p;
	int rc, done_branch = 0, merged = 0;

	a->pending = 0;
	rc = next_pending(txn, st, &p);
	if (!rc && p.found)
		rc = clear_step(txn, st, &p, a->budget, &done_branch);
	/* With no branch to clear, an index's background work (segments to merge), a step. */
	else if (!rc && (rc = merge_any(txn, st, 0, &merged)) == 0 && merged)
		a->pending = 1;
	/* Work remains unless that was the last of the last branch. */
	if (!rc && p.found && done_branch && (rc = next_pending(txn, st, &p)) == 0)
		a->pending = p.found;
	else if (!rc && p.found)
		a->pending = 1;
	if (rc)
		a->pending = 0;
	return rc || p.found || done_branch || merged ? rc : STORE_DISCARD;
}

int cairn_store_maintain(cairn_store *st, unsigned budget, int *pending)
{
	struct maintain_txn a;
	struct pending p;
	MDB_txn *txn;
	int rc;

	if (!st || !pending)
		return err_set(CAIRN_EINVAL, "cairn_store_maintain: NULL argument");
	*pending = 0;
	if (budget == 0) { /* only ask */
		int merge = 0;

		if ((rc = store_read_begin(st, &txn)))
			return rc;
		rc = next_pending(txn, st, &p);
		if (!rc && !p.found)
			rc = merge_any(txn, st, 1, &merge);
		store_read_end(st, txn);
		*pending = !rc && (p.found || merge);
		return rc;
	}
	if (st->flags & CAIRN_OPEN_RDONLY)
		return 0;
	a = (struct maintain_txn){budget, 0};
	rc = store_write(st, maintain_txn, &a);
	*pending = a.pending;
	if (rc)
		*pending = 0;
	return rc;
}

/* ----------------------------------------------------- maintenance thread -- */

struct maint {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;	/* on CLOCK_MONOTONIC */
	pthread_cond_t idle;	/* broadcast when work turns 0 and when a compaction pass ends */
	int running, work;
	volatile int stop;
	int64_t retain_ms;	/* > 0: compact every Domain to it, every KNOB_COMPACT_EVERY_MS */
	uint64_t next_compact;	/* when, in time_mono_ns */
	uint64_t wakes;		/* maint_wake calls so far */
	uint64_t compactions;	/* passes of compaction finished since the open */
};

static int add_domain_name(void *ctx, const cairn_domain_info *d)
{
	struct { char **names; size_t n, cap; } *l = ctx;

	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 8;
		char **nn = cr_reallocarray(l->names, cap, sizeof(*nn));

		if (!nn)
			return err_set(CAIRN_ENOMEM, "out of memory");
		l->names = nn;
		l->cap = cap;
	}
	if (!(l->names[l->n] = cr_malloc(strlen(d->name) + 1)))
		return err_set(CAIRN_ENOMEM, "out of memory");
	strcpy(l->names[l->n++], d->name);
	return 0;
}

/* Compact every Domain of the store to the retention (the thread's timed work). */
static void compact_all(cairn_store *st, struct maint *m)
{
	struct { char **names; size_t n, cap; } l = {NULL, 0, 0};
	cairn_compact_options o = {.retain_ms = m->retain_ms};

	/* An error leaves what it could not do to the next time: nothing is lost. */
	if (cairn_domain_list(st, add_domain_name, &l) == 0)
		for (size_t i = 0; i < l.n && !m->stop; i++)
			cairn_compact(st, l.names[i], &o, NULL);
	for (size_t i = 0; i < l.n; i++)
		cr_free(l.names[i]);
	cr_free(l.names);
}

static void *maint_main(void *arg)
{
	cairn_store *st = arg;
	struct maint *m = st->maint;

	pthread_mutex_lock(&m->lock);
	while (!m->stop) {
		uint64_t wakes;
		int pending = 0, rc;

		if (!m->work && m->retain_ms > 0 && time_mono_ns() >= m->next_compact) {
			pthread_mutex_unlock(&m->lock);
			compact_all(st, m);
			pthread_mutex_lock(&m->lock);
			m->next_compact = time_mono_ns() + knob(KNOB_COMPACT_EVERY_MS) * 1000000u;
			m->compactions++;
			pthread_cond_broadcast(&m->idle);
			continue;
		}
		if (!m->work && m->retain_ms > 0) {
			struct timespec ts = {(time_t)(m->next_compact / 1000000000u),
					      (long)(m->next_compact % 1000000000u)};

			pthread_cond_timedwait(&m->cond, &m->lock, &ts);
			continue;
		}
		if (!m->work) {
			pthread_cond_wait(&m->cond, &m->lock);
			continue;
		}
		wakes = m->wakes;
		pthread_mutex_unlock(&m->lock);
		rc = cairn_store_maintain(st, 2000, &pending);
		if (!rc && !pending)
			rc = catch_up(st, &m->stop);
		pthread_mutex_lock(&m->lock);
		/*
		 * Done (an error waits for the next wake-up or open), unless woken
		 * during the pass: what woke it may have come after the pass looked.
		 */
		if ((rc || !pending) && m->wakes == wakes) {
			m->work = 0;
			pthread_cond_broadcast(&m->idle);
		}
	}
	pthread_mutex_unlock(&m->lock);
	return NULL;
}

static void maint_wake(cairn_store *st)
{
	struct maint *m = st->maint;

	if (!m)
		return;
	pthread_mutex_lock(&m->lock);
	m->work = 1;
	m->wakes++;
	pthread_cond_signal(&m->cond);
	pthread_mutex_unlock(&m->lock);
}

uint64_t maint_compactions(cairn_store *st)
{
	struct maint *m = st->maint;
	uint64_t n;

	if (!m)
		return 0;
	pthread_mutex_lock(&m->lock);
	n = m->compactions;
	pthread_mutex_unlock(&m->lock);
	return n;
}

int maint_wait(cairn_store *st, uint64_t compactions, int64_t timeout_ms)
{
	struct maint *m = st->maint;
	uint64_t end = time_mono_ns() + (uint64_t)timeout_ms * 1000000u;
	struct timespec ts = {(time_t)(end / 1000000000u), (long)(end % 1000000000u)};
	int rc = 0;

	if (!m || !m->running)
		return err_set(CAIRN_EINVAL, "maint_wait: the store has no maintenance thread");
	pthread_mutex_lock(&m->lock);
	while ((m->work || m->compactions < compactions) && rc == 0)
		if (pthread_cond_timedwait(&m->idle, &m->lock, &ts) == ETIMEDOUT)
			rc = err_set(CAIRN_ELIMIT, "maint_wait: still busy after %lld ms",
				     (long long)timeout_ms);
	pthread_mutex_unlock(&m->lock);
	return rc;
}

void maint_stop(cairn_store *st)
{
	struct maint *m = st->maint;

	if (!m)
		return;
	pthread_mutex_lock(&m->lock);
	m->stop = 1;
	pthread_cond_signal(&m->cond);
	pthread_mutex_unlock(&m->lock);
	if (m->running)
		pthread_join(m->thread, NULL);
	pthread_mutex_destroy(&m->lock);
	pthread_cond_destroy(&m->cond);
	pthread_cond_destroy(&m->idle);
	cr_free(m);
	st->maint = NULL;
	st->wake = NULL;
}

int maint_start(cairn_store *st, int64_t retain_ms)
{
	struct maint *m = cr_calloc(1, sizeof(*m));

	if (!m)
		return err_set(CAIRN_ENOMEM, "out of memory");
	pthread_mutex_init(&m->lock, NULL);
	{
		pthread_condattr_t ca;

		pthread_condattr_init(&ca);
		pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
		pthread_cond_init(&m->cond, &ca);
		pthread_cond_init(&m->idle, &ca);
		pthread_condattr_destroy(&ca);
	}
	m->work = 1; /* look for work left by an earlier process */
	m->retain_ms = retain_ms;
	m->next_compact = time_mono_ns(); /* the first right away */
	st->maint = m;
	st->wake = maint_wake;
	if (pthread_create(&m->thread, NULL, maint_main, st) == 0)
		m->running = 1;
	return 0;
}
