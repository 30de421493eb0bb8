/*
 * The data file's structure, checked before LMDB trusts it.
 *
 * LMDB reads its B-trees straight from the map and believes what a page
 * says: a node offset past the page, a key longer than the page or a page
 * number past the file's end makes it read outside the map (SIGSEGV), past
 * the file's end (SIGBUS) or fail an assertion (SIGABRT). Here the file is
 * read with pread(), never through the map, and every page LMDB would follow
 * is checked first, so damage is a report, not a crash.
 *
 * LMDB's on-disk format (mdb.c, data version 1, native byte order, 64-bit):
 *
 *   page header, 16 bytes:  pgno u64 | pad u16 | flags u16 | lower u16 | upper u16
 *                            (an overflow page has u32 pages in place of lower, upper)
 *   then lower - 16 bytes of u16 node offsets, nodes at the offsets (upper .. psize)
 *   node, 8 bytes + key + data: lo u16 | hi u16 | flags u16 | ksize u16
 *     branch node: child page = lo | hi << 16 | flags << 32, then the key
 *     leaf node:   data size = lo | hi << 16; the key, then the data, or with
 *                  F_BIGDATA the u64 number of its first overflow page
 *   meta pages 0 and 1, after the header: magic u32 (0xBEEFC0DE) | version u32 |
 *     address u64 | mapsize u64 | free db (48) | main db (48) | last page u64 | txnid u64
 *   db record, 48 bytes:  pad u32 (the page size, in the free db's) | flags u16 |
 *     depth u16 | branch pages | leaf pages | overflow pages | entries | root (u64 each)
 *
 * The newest meta page whose magic and version are right is the current one,
 * as LMDB picks it. The main database's leaf nodes with F_SUBDATA hold the
 * named sub-databases' db records; the free database maps a transaction id
 * to a list of free pages (a u64 count, then the page numbers).
 *
 * LMDB does not write a page it allocated and freed in one transaction, so
 * the file may end before its last page: the pages past the end must then
 * all be on the free list, or the file was truncated.
 *
 * pages_check(full = 0), run by every open: the meta pages, the file's end,
 * the main database's tree and the db records in it, the meta and catalog
 * trees, which is what opening reads. full = 1, run by cairn_check: every
 * page of every tree and of the free list, each reached once, the counts of
 * each db record.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/alloc.h"
#include "base/err.h"
#include "store.h"

#define HDR 16u
#define NODE 8u
#define META_MAGIC 0xBEEFC0DEu
#define META_VERSION 1u
#define P_BRANCH 0x01u
#define P_LEAF 0x02u
#define P_OVERFLOW 0x04u
#define P_META 0x08u
#define F_BIGDATA 0x01u
#define F_SUBDATA 0x02u
#define F_DUPDATA 0x04u
#define DB_REC 48u
#define NO_PAGE UINT64_MAX
#define DEPTH_MAX 32u
#define PROBLEMS_MAX 50u

typedef struct {
	uint32_t flags, depth;
	uint64_t branch, leaf, overflow, entries, root;
} dbrec;

typedef struct {
	int fd;
	uint32_t psize;
	uint64_t last;	/* the last page in use */
	uint64_t file_pages; /* whole pages in the file: LMDB leaves free pages past its end unwritten */
	uint8_t *gap;	/* a bit per page from file_pages to last: seen on the free list */
	uint64_t gap_free;
	uint64_t txnid;
	int full;
	uint8_t *seen;	/* full: a bit per page reached */
	uint8_t *page;	/* psize bytes per level of the walk */
	pages_problem_fn cb;
	void *ctx;
	pages_report *rep;
	const char *db;	/* the tree being walked, for messages */
	int oom;
	int intkeys;	/* the free list: keys are native u64 transaction ids */
	uint64_t n_branch, n_leaf, n_overflow, n_entries;
	dbrec subs[DB_COUNT + 8];
	char sub_names[DB_COUNT + 8][32];
	size_t n_subs;
} walk;

static uint16_t u16_at(const uint8_t *p)
{
	uint16_t v;

	memcpy(&v, p, 2);
	return v;
}

static uint32_t u32_at(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

static uint64_t u64_at(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

static void problem(walk *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void problem(walk *w, const char *fmt, ...)
{
	char m[256];
	int n;
	va_list ap;

	if (++w->rep->problems > PROBLEMS_MAX)
		return;
	n = snprintf(m, sizeof(m), "data file, %s: ", w->db);
	va_start(ap, fmt);
	vsnprintf(m + n, sizeof(m) - (size_t)n, fmt, ap);
	va_end(ap);
	if (w->rep->problems == PROBLEMS_MAX)
		strncat(m, " (further problems are counted, not listed)", sizeof(m) - strlen(m) - 1);
	if (w->cb)
		w->cb(w->ctx, m);
}

/* Read page pgno into p; 0, or -1 after reporting why it cannot be read. */
static int read_page(walk *w, uint64_t pgno, uint8_t *p)
{
	ssize_t n;

	if (pgno < 2 || pgno > w->last) {
		problem(w, "page %llu is outside the file's pages (2 to %llu)",
			(unsigned long long)pgno, (unsigned long long)w->last);
		return -1;
	}
	if (pgno >= w->file_pages) {
		problem(w, "page %llu lies past the file's end: the file is truncated",
			(unsigned long long)pgno);
		return -1;
	}
	n = pread(w->fd, p, w->psize, (off_t)(pgno * w->psize));
	if (n != (ssize_t)w->psize) {
		problem(w, "page %llu cannot be read: %s", (unsigned long long)pgno,
			n < 0 ? strerror(errno) : "the file ends before it");
		return -1;
	}
	if (u64_at(p) != pgno) {
		problem(w, "page %llu says it is page %llu", (unsigned long long)pgno,
			(unsigned long long)u64_at(p));
		return -1;
	}
	return 0;
}

/* Mark pgno reached (full walks); 0, or -1 when it was reached before. */
static int mark(walk *w, uint64_t pgno)
{
	if (!w->seen)
		return 0;
	if (w->seen[pgno >> 3] & (1u << (pgno & 7))) {
		problem(w, "page %llu is reached twice", (unsigned long long)pgno);
		return -1;
	}
	w->seen[pgno >> 3] |= (uint8_t)(1u << (pgno & 7));
	return 0;
}

static int key_cmp(const walk *w, const uint8_t *a, size_t an, const uint8_t *b, size_t bn)
{
	int c;

	if (w->intkeys) {
		uint64_t x = an == 8 ? u64_at(a) : 0, y = bn == 8 ? u64_at(b) : 0;

		return x < y ? -1 : x > y;
	}
	c = memcmp(a, b, an < bn ? an : bn);
	return c ? c : an < bn ? -1 : an > bn;
}

static void db_decode(const uint8_t *p, dbrec *d)
{
	d->flags = u16_at(p + 4);
	d->depth = u16_at(p + 6);
	d->branch = u64_at(p + 8);
	d->leaf = u64_at(p + 16);
	d->overflow = u64_at(p + 24);
	d->entries = u64_at(p + 32);
	d->root = u64_at(p + 40);
}

static int check_db(walk *w, const dbrec *d)
{
	if (d->root == NO_PAGE)
		return d->depth || d->entries ? (problem(w, "an empty tree with depth %u and %llu "
							   "entries", d->depth,
						   (unsigned long long)d->entries), -1) : 0;
	if (d->root < 2 || d->root > w->last || d->depth < 1 || d->depth > DEPTH_MAX) {
		problem(w, "its root page %llu or depth %u is impossible",
			(unsigned long long)d->root, d->depth);
		return -1;
	}
	return 0;
}

/* The overflow pages of a big value: in the file, sized for it, reached once. */
static int check_overflow(walk *w, uint64_t pgno, uint64_t size, uint8_t *p)
{
	uint64_t need = (HDR - 1 + size) / w->psize + 1, n;

	if (read_page(w, pgno, p))
		return -1;
	n = u32_at(p + 12);
	if (!(u16_at(p + 10) & P_OVERFLOW) || n < need || pgno + n - 1 > w->last) {
		problem(w, "overflow page %llu does not hold a value of %llu bytes",
			(unsigned long long)pgno, (unsigned long long)size);
		return -1;
	}
	for (uint64_t i = 0; i < n; i++)
		if (mark(w, pgno + i))
			return -1;
	w->n_overflow += n;
	return 0;
}

static int walk_page(walk *w, uint64_t pgno, unsigned level, unsigned depth, int main_db);

/* The free list's value: a count, then that many page numbers in the file. */
static int check_free(walk *w, const uint8_t *v, uint64_t vn)
{
	uint64_t n;

	if (vn < 8 || (n = u64_at(v)) != vn / 8 - 1 || vn % 8) {
		problem(w, "a list of free pages of %llu bytes is malformed", (unsigned long long)vn);
		return -1;
	}
	for (uint64_t i = 1; i <= n; i++) {
		uint64_t pg = u64_at(v + 8 * i);

		if (pg < 2 || pg > w->last) {
			problem(w, "free page %llu is outside the file", (unsigned long long)pg);
			return -1;
		}
		if (mark(w, pg))
			return -1;
		w->rep->free_pages++;
		if (pg >= w->file_pages) {
			uint64_t b = pg - w->file_pages;

			if (!(w->gap[b >> 3] & (1u << (b & 7))))
				w->gap_free++;
			w->gap[b >> 3] |= (uint8_t)(1u << (b & 7));
		}
	}
	return 0;
}

/* A free list too long for its leaf: on its overflow pages, after the first one's header. */
static int check_free_at(walk *w, uint64_t pgno, uint64_t size)
{
	uint8_t *v = cr_malloc(size ? size : 1);
	int rc;

	if (!v) {
		w->oom = 1;
		return -1;
	}
	if (pread(w->fd, v, size, (off_t)(pgno * w->psize + HDR)) != (ssize_t)size) {
		problem(w, "the free list on page %llu cannot be read", (unsigned long long)pgno);
		rc = -1;
	} else {
		rc = check_free(w, v, size);
	}
	cr_free(v);
	return rc;
}

/* The nodes of one page, in bounds and in order; descends into branch children. */
static int walk_nodes(walk *w, uint8_t *p, uint64_t pgno, unsigned level, unsigned depth,
		      int leaf, int main_db)
{
	unsigned lower = u16_at(p + 12), upper = u16_at(p + 14), n;
	const uint8_t *prev = NULL;
	size_t prevn = 0;
	int rc = 0;

	if (lower < HDR || lower > upper || upper > w->psize || (lower - HDR) % 2) {
		problem(w, "page %llu has impossible bounds (%u, %u)", (unsigned long long)pgno,
			lower, upper);
		return -1;
	}
	n = (lower - HDR) / 2;
	if (n == 0 || (!leaf && n < 2 && level == 0 && depth > 1)) {
		problem(w, "page %llu has %u entries", (unsigned long long)pgno, n);
		return -1;
	}
	for (unsigned i = 0; i < n && !rc; i++) {
		unsigned off = u16_at(p + HDR + 2 * i);
		const uint8_t *nd = p + off, *key;
		unsigned ks, fl;
		uint64_t dsz, end;

		if (off < upper || off % 2 || off + NODE > w->psize) {
			problem(w, "page %llu, entry %u lies outside the page",
				(unsigned long long)pgno, i);
			return -1;
		}
		fl = u16_at(nd + 4);
		ks = u16_at(nd + 6);
		key = nd + NODE;
		dsz = (uint64_t)u16_at(nd) | (uint64_t)u16_at(nd + 2) << 16;
		end = (uint64_t)off + NODE + ks;
		if (leaf)
			end += (fl & F_BIGDATA) ? 8 : dsz;
		if (end > w->psize) {
			problem(w, "page %llu, entry %u runs past the page", (unsigned long long)pgno,
				i);
			return -1;
		}
		if ((leaf || i > 0) && prev && key_cmp(w, prev, prevn, key, ks) >= 0) {
			problem(w, "page %llu, entry %u is out of order", (unsigned long long)pgno, i);
			return -1;
		}
		if (leaf || i > 0) {
			prev = key;
			prevn = ks;
		}
		if (!leaf) {
			uint64_t child = dsz | (uint64_t)fl << 32;

			rc = walk_page(w, child, level + 1, depth, main_db);
			continue;
		}
		w->n_entries++;
		if (fl & ~(unsigned)(F_BIGDATA | F_SUBDATA | F_DUPDATA) ||
		    (fl & (F_SUBDATA | F_DUPDATA) && !main_db) || (fl & F_DUPDATA)) {
			problem(w, "page %llu, entry %u has flags %#x", (unsigned long long)pgno, i,
				fl);
			return -1;
		}
		if (fl & F_BIGDATA) {
			uint64_t at = u64_at(key + ks);

			if (w->full)
				rc = check_overflow(w, at, dsz,
						    w->page + (size_t)(level + 1) * w->psize);
			else if (at < 2 || at > w->last)
				rc = (problem(w, "page %llu, entry %u has its value outside the file",
					      (unsigned long long)pgno, i), -1);
			if (!rc && w->intkeys)
				rc = check_free_at(w, at, dsz);
			continue;
		}
		if (fl & F_SUBDATA) {
			dbrec d;

			if (dsz != DB_REC) {
				problem(w, "page %llu, entry %u is a sub-database of %llu bytes",
					(unsigned long long)pgno, i, (unsigned long long)dsz);
				return -1;
			}
			db_decode(key + ks, &d);
			if (w->n_subs < sizeof(w->subs) / sizeof(w->subs[0])) {
				size_t m = ks < sizeof(w->sub_names[0]) ? ks : sizeof(w->sub_names[0]) - 1;

				w->subs[w->n_subs] = d;
				memcpy(w->sub_names[w->n_subs], key, m);
				w->sub_names[w->n_subs][m] = 0;
				w->n_subs++;
			}
			continue;
		}
		if (w->intkeys)
			rc = check_free(w, key + ks, dsz);
	}
	return rc;
}

static int walk_page(walk *w, uint64_t pgno, unsigned level, unsigned depth, int main_db)
{
	uint8_t *p;
	unsigned fl;
	int leaf;

	if (level >= depth) {
		problem(w, "page %llu lies deeper than the tree's depth %u",
			(unsigned long long)pgno, depth);
		return -1;
	}
	p = w->page + (size_t)level * w->psize;
	if (read_page(w, pgno, p) || mark(w, pgno))
		return -1;
	fl = u16_at(p + 10);
	leaf = (fl & (P_BRANCH | P_LEAF | P_OVERFLOW | P_META)) == P_LEAF;
	if (!leaf && (fl & (P_BRANCH | P_LEAF | P_OVERFLOW | P_META)) != P_BRANCH) {
		problem(w, "page %llu is neither a branch nor a leaf (flags %#x)",
			(unsigned long long)pgno, fl);
		return -1;
	}
	if (leaf != (level == depth - 1)) {
		problem(w, "page %llu is a %s at level %u of a tree of depth %u",
			(unsigned long long)pgno, leaf ? "leaf" : "branch", level + 1, depth);
		return -1;
	}
	if (leaf)
		w->n_leaf++;
	else
		w->n_branch++;
	return walk_nodes(w, p, pgno, level, depth, leaf, main_db);
}

/* Walk one tree; with full, compare its counts with its db record. */
static int walk_tree(walk *w, const char *name, const dbrec *d, int main_db)
{
	int rc;

	w->db = name;
	if (check_db(w, d))
		return -1;
	if (d->root == NO_PAGE)
		return 0;
	w->n_branch = w->n_leaf = w->n_overflow = w->n_entries = 0;
	rc = walk_page(w, d->root, 0, d->depth, main_db);
	w->rep->pages += w->n_branch + w->n_leaf + w->n_overflow;
	if (!rc && w->full &&
	    (w->n_branch != d->branch || w->n_leaf != d->leaf ||
	     w->n_overflow != d->overflow || w->n_entries != d->entries)) {
		problem(w, "it counts %llu/%llu/%llu pages and %llu entries, its pages hold "
			   "%llu/%llu/%llu and %llu",
			(unsigned long long)d->branch, (unsigned long long)d->leaf,
			(unsigned long long)d->overflow, (unsigned long long)d->entries,
			(unsigned long long)w->n_branch, (unsigned long long)w->n_leaf,
			(unsigned long long)w->n_overflow, (unsigned long long)w->n_entries);
		rc = -1;
	}
	return rc;
}

/*
 * Read both meta pages and take the newer, as LMDB does; LMDB refuses a file
 * where either is invalid, and so does this.
 */
static int read_meta(walk *w, uint8_t *meta, off_t size)
{
	uint8_t m[2][HDR + 136];
	uint32_t ps = 0;
	int pick;

	w->db = "meta pages";
	for (int i = 0; i < 2; i++) {
		if (pread(w->fd, m[i], sizeof(m[i]), (off_t)i * ps) != (ssize_t)sizeof(m[i])) {
			problem(w, "meta page %d cannot be read: the file is truncated", i);
			return -1;
		}
		if (!(u16_at(m[i] + 10) & P_META) || u32_at(m[i] + HDR) != META_MAGIC ||
		    u32_at(m[i] + HDR + 4) != META_VERSION) {
			problem(w, "meta page %d is damaged (or this is not an LMDB file)", i);
			return -1;
		}
		ps = u32_at(m[i] + HDR + 24); /* the free db's pad: the page size */
		if (ps < 512 || ps > 65536 || (ps & (ps - 1))) {
			problem(w, "meta page %d gives an impossible page size %u", i, ps);
			return -1;
		}
	}
	pick = u64_at(m[1] + HDR + 128) > u64_at(m[0] + HDR + 128);
	memcpy(meta, m[pick], sizeof(m[pick]));
	w->psize = ps;
	w->last = u64_at(meta + HDR + 120);
	w->txnid = u64_at(meta + HDR + 128);
	if (w->last < 1 || w->last > (uint64_t)size / 512) {
		problem(w, "meta page %d gives an impossible last page %llu", pick,
			(unsigned long long)w->last);
		return -1;
	}
	w->file_pages = (uint64_t)size / w->psize;
	return 0;
}

int pages_check(int fd, int full, pages_problem_fn cb, void *ctx, pages_report *rep)
{
	walk w;
	uint8_t meta[HDR + 144];
	struct stat sb;
	dbrec free_db, main_db;
	int rc;

	memset(rep, 0, sizeof(*rep));
	memset(&w, 0, sizeof(w));
	w.fd = fd;
	w.full = full;
	w.cb = cb;
	w.ctx = ctx;
	w.rep = rep;
	if (fstat(fd, &sb) != 0)
		return err_set(CAIRN_EIO, "data file: %s", strerror(errno));
	if (read_meta(&w, meta, sb.st_size))
		return 0;
	rep->txnid = w.txnid;
	rep->last_page = w.last;
	db_decode(meta + HDR + 24, &free_db);
	db_decode(meta + HDR + 72, &main_db);
	w.page = cr_malloc((size_t)(DEPTH_MAX + 1) * w.psize);
	if (full)
		w.seen = cr_calloc(1, (size_t)(w.last / 8 + 1));
	if (w.file_pages <= w.last)
		w.gap = cr_calloc(1, (size_t)((w.last - w.file_pages) / 8 + 1));
	if (!w.page || (full && !w.seen) || (w.file_pages <= w.last && !w.gap)) {
		cr_free(w.page);
		cr_free(w.seen);
		cr_free(w.gap);
		return err_set(CAIRN_ENOMEM, "out of memory");
	}
	if (w.seen)
		w.seen[0] |= 3; /* the meta pages */
	rc = walk_tree(&w, "main database", &main_db, 1);
	for (size_t i = 0; !rc && i < w.n_subs; i++) {
		/* An open reads the store's meta and catalog: those it walks too. */
		int walk_it = full || strcmp(w.sub_names[i], db_names[DB_META]) == 0 ||
			      strcmp(w.sub_names[i], db_names[DB_CATALOG]) == 0;

		w.db = w.sub_names[i];
		rc = walk_it ? walk_tree(&w, w.sub_names[i], &w.subs[i], 0)
			     : check_db(&w, &w.subs[i]);
	}
	/*
	 * Pages past the file's end must all be free ones LMDB never wrote;
	 * with none there, an open need not read the free list.
	 */
	if (!rc && (full || w.file_pages <= w.last)) {
		w.intkeys = 1;
		rc = walk_tree(&w, "free list", &free_db, 0);
		if (!rc && w.file_pages <= w.last && w.gap_free < w.last + 1 - w.file_pages) {
			w.db = "meta pages";
			problem(&w, "the file is truncated: %lld bytes, where its pages in use need %llu",
				(long long)sb.st_size,
				(unsigned long long)((w.last + 1) * w.psize));
		}
	}
	cr_free(w.page);
	cr_free(w.gap);
	cr_free(w.seen);
	/* A problem was reported: the walk stops at the first broken tree. */
	return w.oom ? err_set(CAIRN_ENOMEM, "out of memory") : 0;
}
