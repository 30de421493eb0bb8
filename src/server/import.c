/*
 * POST /v1/domains/{d}/import: JSON Lines streamed in the request body. The
 * token is checked on the request's first call, before any body; the body
 * then flows through a pipe to an import of its own thread, which commits
 * batches as lines arrive, so that an import of any size takes no more
 * memory than a batch. The answer comes when the body has ended and the
 * last batch is durable.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "server/internal.h"
#include "base/alloc.h"
#include "base/err.h"

#define MAX_REPORTED 100 /* bad lines listed in the answer */

struct import_job {
	req *r;
	int fd[2];
	pthread_t thread;
	int started;
	cairn_import_options o;
	cairn_import_stats stats;
	int rc;
	char msg[1024];
	buf carry; /* the end of the body so far after its last newline: an unfinished line */
	buf bad; /* the bad lines' objects, comma-separated */
	unsigned n_bad;
	volatile int abort; /* the body was cut short: commit nothing more */
	char branch[CAIRN_MAX_BRANCH + 1], actor[300];
};

static void on_bad(void *ctx, const char *file, uint64_t line, int rc, const char *msg)
{
	struct import_job *ij = ctx;

	(void)file;
	if (ij->n_bad++ >= MAX_REPORTED)
		return;
	if (ij->bad.len)
		buf_put_u8(&ij->bad, ',');
	buf_printf(&ij->bad, "{\"line\":%llu,\"code\":", (unsigned long long)line);
	wire_cstr(&ij->bad, cairn_errname(rc));
	PUTS(&ij->bad, ",\"message\":");
	wire_cstr(&ij->bad, msg);
	buf_put_u8(&ij->bad, '}');
}

static void on_progress(void *ctx, const cairn_import_stats *s)
{
	((struct import_job *)ctx)->stats = *s; /* what is committed so far */
}

static void *import_main(void *arg)
{
	struct import_job *ij = arg;
	FILE *in = fdopen(ij->fd[0], "r");
	cairn_import *im = NULL;
	char sink[65536];
	int rc;

	if (!in) {
		ij->rc = CAIRN_EIO;
		snprintf(ij->msg, sizeof(ij->msg), "cannot read the request body");
		close(ij->fd[0]);
		return NULL;
	}
	rc = cairn_import_begin(ij->r->s->st, &ij->o, &im);
	if (!rc)
		rc = cairn_import_feed(im, "body", in);
	if (!rc && ij->abort) {
		cairn_import_abort(im); /* the batches committed so far stay */
		ij->rc = CAIRN_ELIMIT;
		snprintf(ij->msg, sizeof(ij->msg),
			 "the body was cut short: the last batch was not committed");
	} else if (!rc) {
		rc = cairn_import_end(im, &ij->stats);
	} else if (im) {
		cairn_import_abort(im); /* the batches committed so far stay */
	}
	if (rc) {
		const char *m = cairn_errmsg();

		ij->rc = rc;
		snprintf(ij->msg, sizeof(ij->msg), "%s", *m ? m : cairn_strerror(rc));
	}
	/* What the import did not read is read and dropped, so the body can end. */
	while (fread(sink, 1, sizeof(sink), in) > 0)
		;
	fclose(in);
	return NULL;
}

/*
 * The request's first call: check the route's token and arguments, then
 * start the import. Returns 0 (streaming) or -1 when r holds a refusal.
 */
int import_start(req *r, int (*allow_write)(req *r, const char *domain, const char *branch))
{
	struct import_job *ij;
	const char *branch = arg(r, "branch"), *batch = arg(r, "batch"), *onerr = arg(r, "on_error");
	const char *actor = arg(r, "actor");
	char *end;

	if (allow_write(r, r->seg[2], branch ? branch : "main"))
		return -1;
	ij = cr_calloc(1, sizeof(*ij));
	if (!ij) {
		reply_cairn(r, CAIRN_ENOMEM);
		return -1;
	}
	ij->r = r;
	ij->fd[0] = ij->fd[1] = -1;
	ij->o.commit.domain = r->seg[2];
	if (branch) {
		snprintf(ij->branch, sizeof(ij->branch), "%s", branch);
		ij->o.commit.branch = ij->branch;
	}
	snprintf(ij->actor, sizeof(ij->actor), "%s",
		 actor ? actor : api_identity(r));
	ij->o.commit.prov.actor = ij->actor;
	ij->o.commit.prov.source = "HTTP import";
	ij->o.on_bad_line = on_bad;
	ij->o.progress = on_progress;
	ij->o.ctx = ij;
	if (batch) {
		unsigned long b = strtoul(batch, &end, 10);

		if (*end || !*batch || b == 0 || b > r->s->cfg.max_batch) {
			cr_free(ij);
			reply_error(r, 400, cairn_errname(CAIRN_EINVAL), "batch is 1 to %u",
				    r->s->cfg.max_batch);
			return -1;
		}
		ij->o.batch = b;
	} else {
		ij->o.batch = r->s->cfg.max_batch < 10000 ? r->s->cfg.max_batch : 10000;
	}
	if (onerr && strcmp(onerr, "skip") != 0 && strcmp(onerr, "stop") != 0) {
		cr_free(ij);
		reply_error(r, 400, cairn_errname(CAIRN_EINVAL), "on_error is stop or skip");
		return -1;
	}
	ij->o.on_error = onerr && strcmp(onerr, "skip") == 0 ? CAIRN_ON_ERROR_SKIP
							     : CAIRN_ON_ERROR_STOP;
	if (pipe2(ij->fd, O_CLOEXEC) != 0) {
		cr_free(ij);
		reply_error(r, 503, cairn_errname(CAIRN_EIO), "no pipe for the import: %s",
			    strerror(errno));
		return -1;
	}
	if (pthread_create(&ij->thread, NULL, import_main, ij) != 0) {
		close(ij->fd[0]);
		close(ij->fd[1]);
		cr_free(ij);
		reply_error(r, 503, cairn_errname(CAIRN_ENOMEM), "no thread for the import");
		return -1;
	}
	ij->started = 1;
	r->import = ij;
	return 0;
}

static void pipe_write(struct import_job *ij, const char *p, size_t n)
{
	while (n && ij->fd[1] >= 0) {
		ssize_t w = write(ij->fd[1], p, n);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			close(ij->fd[1]); /* the import ended: the rest is dropped */
			ij->fd[1] = -1;
			break;
		}
		p += w;
		n -= (size_t)w;
	}
}

/*
 * A piece of the body, to the import: whole lines only, the unfinished one
 * kept until its end comes, so that a body cut short (too large, or the
 * client gone) never hands the import half a line.
 */
void import_feed(req *r, const char *p, size_t n)
{
	struct import_job *ij = r->import;
	const char *nl = memrchr(p, '\n', n);

	if (!nl) {
		buf_put(&ij->carry, p, n);
		return;
	}
	if (ij->carry.len) {
		pipe_write(ij, (const char *)ij->carry.p, ij->carry.len);
		buf_reset(&ij->carry);
	}
	pipe_write(ij, p, (size_t)(nl + 1 - p));
	buf_put(&ij->carry, nl + 1, n - (size_t)(nl + 1 - p));
}

/* The body ended (or the request ends): wait for the import and free it; answer if asked. */
void import_finish(req *r, int answer)
{
	struct import_job *ij = r->import;

	if (!ij)
		return;
	if (!answer || r->too_large)
		ij->abort = 1;
	else if (ij->carry.len) /* the body ended: its last line, without a newline */
		pipe_write(ij, (const char *)ij->carry.p, ij->carry.len);
	if (ij->fd[1] >= 0)
		close(ij->fd[1]);
	ij->fd[1] = -1;
	if (ij->started)
		pthread_join(ij->thread, NULL);
	if (answer) {
		buf *o = &r->out;

		buf_reset(o);
		buf_printf(o, "{\"lines\":%llu,\"records\":%llu,\"links\":%llu,\"unchanged\":%llu,"
			      "\"skipped\":%llu,\"commits\":%llu,\"bad_lines\":[",
			   (unsigned long long)ij->stats.lines, (unsigned long long)ij->stats.records,
			   (unsigned long long)ij->stats.links, (unsigned long long)ij->stats.unchanged,
			   (unsigned long long)ij->stats.skipped, (unsigned long long)ij->stats.commits);
		buf_put(o, ij->bad.p, ij->bad.len);
		buf_put_u8(o, ']');
		if (ij->rc) {
			PUTS(o, ",\"error\":{\"code\":");
			wire_cstr(o, cairn_errname(ij->rc));
			PUTS(o, ",\"message\":");
			wire_cstr(o, ij->msg);
			buf_put_u8(o, '}');
		}
		buf_put_u8(o, '}');
		reply_json(r, ij->rc ? status_of(ij->rc) : 200);
		if (r->too_large)
			r->status = 413;
	}
	buf_release(&ij->bad);
	buf_release(&ij->carry);
	cr_free(ij);
	r->import = NULL;
}
