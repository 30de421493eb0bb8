/*
 * The writer: one thread takes every commit waiting at that moment (up to
 * group_max) and makes them one durable transaction (cairn_commit_group):
 * one sync for all, each commit validated on its own and failing alone.
 * A request's connection stays suspended until its commit is durable.
 */
#include <stdlib.h>
#include <string.h>

#include "server/internal.h"
#include "base/alloc.h"
#include "base/err.h"

static void *writer_main(void *arg)
{
	srv *s = arg;
	cairn_commit_req *reqs = cr_calloc(s->cfg.group_max, sizeof(*reqs));
	job **jobs = cr_calloc(s->cfg.group_max, sizeof(*jobs));

	if (!reqs || !jobs) {
		cr_free(reqs);
		cr_free(jobs);
		return NULL;
	}
	pthread_mutex_lock(&s->qlock);
	for (;;) {
		size_t n = 0;

		while (!s->qhead && !s->writer_quit)
			pthread_cond_wait(&s->qcond, &s->qlock);
		if (!s->qhead && s->writer_quit)
			break;
		while (s->qhead && n < s->cfg.group_max) {
			job *j = s->qhead;

			s->qhead = j->next;
			if (!s->qhead)
				s->qtail = NULL;
			jobs[n] = j;
			reqs[n].opts = &j->co;
			reqs[n].cs = j->cs;
			n++;
		}
		pthread_mutex_unlock(&s->qlock);
		cairn_commit_group(s->st, reqs, n);
		atomic_fetch_add(&s->commit_groups, 1);
		for (size_t i = 0; i < n; i++) {
			jobs[i]->cr = reqs[i];
			jobs[i]->done = 1;
			atomic_fetch_add(reqs[i].rc ? &s->commit_failed : &s->commits, 1);
			MHD_resume_connection(jobs[i]->r->conn);
		}
		pthread_mutex_lock(&s->qlock);
	}
	pthread_mutex_unlock(&s->qlock);
	cr_free(reqs);
	cr_free(jobs);
	return NULL;
}

int writer_start(srv *s)
{
	if (pthread_create(&s->writer, NULL, writer_main, s) != 0)
		return CAIRN_ENOMEM;
	s->writer_running = 1;
	return 0;
}

/* Stop once the queue is empty: every queued commit is made first. */
void writer_stop(srv *s)
{
	if (!s->writer_running)
		return;
	pthread_mutex_lock(&s->qlock);
	s->writer_quit = 1;
	pthread_cond_signal(&s->qcond);
	pthread_mutex_unlock(&s->qlock);
	pthread_join(s->writer, NULL);
	s->writer_running = 0;
}

void writer_submit(srv *s, job *j)
{
	req *r = j->r;

	r->job = j;
	MHD_suspend_connection(r->conn);
	pthread_mutex_lock(&s->qlock);
	if (s->qtail)
		s->qtail->next = j;
	else
		s->qhead = j;
	s->qtail = j;
	pthread_cond_signal(&s->qcond);
	pthread_mutex_unlock(&s->qlock);
}
