/*
 * The cairn command: diffs, merges and proposals (docs/cli.md). Uses only
 * cairn.h, like the rest of the command.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/arena.h"
#include "base/json.h"
#include "cli/cli.h"
#include "wire/wire.h"


static const char *change_str(int ch)
{
	return wire_change_name(ch);
}

/* What an item callback prints: everything, or only conflicts. */
typedef struct item_out {
	cli *c;
	int conflicts_only;
	int two_sided;		/* branch diffs and merges: print "theirs" too */
	uint64_t shown;
} item_out;

static int print_item(void *ctx, const cairn_change_item *it)
{
	item_out *io = ctx;
	cli *c = io->c;

	if (io->conflicts_only && !it->conflicts)
		return 0;
	io->shown++;
	if (c->json) {
		buf b = BUF_INIT;

		wire_change_item(&b, it, io->two_sided);
		if (b.oom) {
			buf_release(&b);
			return CAIRN_ENOMEM;
		}
		printf("%.*s\n", (int)b.len, (const char *)b.p);
		buf_release(&b);
		return 0;
	}
	if (it->is_link)
		printf("link %s %s:%.*s -> %s:%.*s", it->rel, it->from_kind, (int)it->from_len,
		       it->from_key, it->to_kind, (int)it->to_len, it->to_key);
	else
		printf("%s:%.*s", it->kind, (int)it->key_len, it->key);
	if (io->two_sided)
		printf("  ours %s, theirs %s", change_str(it->ours), change_str(it->theirs));
	else
		printf("  %s", change_str(it->ours));
	if (it->conflicts)
		printf("  CONFLICT (%d attribute%s, %d unresolved)", it->conflicts,
		       it->conflicts == 1 ? "" : "s", it->unresolved);
	fputc('\n', stdout);
	out_diff_text(stdout, "    ", it->diff, it->diff_len);
	return 0;
}

static int parse_rev(const char *s, uint64_t *rev)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (!*s || *end || errno || v == 0 || *s == '-')
		return -1;
	*rev = v;
	return 0;
}

static int begin_txn(cli *c, cairn_store **st, cairn_txn **t)
{
	cairn_read_options ro;
	int rc, ex;

	*t = NULL;
	if ((ex = cli_read_options(c, &ro)))
		return ex;
	if ((ex = cli_open(c, 0, st)))
		return ex;
	if ((rc = cairn_txn_begin(*st, &ro, t))) {
		ex = cli_fail(c, rc, "read");
		cairn_close(*st);
	}
	return ex;
}

/*
 * diff B: --branch against branch B; diff A B: branch A against branch B;
 * diff REV REV (two numbers): what changed on --branch between two revisions.
 */
int cmd_diff(cli *c)
{
	item_out io = {c, 0, 0, 0};
	cairn_store *st;
	cairn_txn *t;
	uint64_t from, to;
	int rc, ex;

	if (c->nargs < 1 || c->nargs > 2)
		return cli_usage("diff BRANCH | diff A B | diff FROM_REV TO_REV");
	if (c->nargs == 1 || parse_rev(c->args[0], &from) || parse_rev(c->args[1], &to)) {
		const char *ours = c->nargs == 2 ? c->args[0] : c->branch;

		io.two_sided = 1;
		if ((ex = cli_open(c, 0, &st)))
			return ex;
		rc = cairn_branch_diff(st, c->domain, ours, c->args[c->nargs - 1], print_item, &io);
		ex = rc ? cli_fail(c, rc, "diff") : 0;
		cairn_close(st);
		return ex;
	}
	if ((ex = begin_txn(c, &st, &t)))
		return ex;
	rc = cairn_diff_revisions(t, from, to, print_item, &io);
	ex = rc ? cli_fail(c, rc, "diff") : 0;
	cairn_txn_end(t);
	cairn_close(st);
	return ex;
}

/* changes REV: what one revision changed. */
int cmd_changes(cli *c)
{
	item_out io = {c, 0, 0, 0};
	cairn_store *st;
	cairn_txn *t;
	uint64_t rev;
	int rc, ex;

	if (c->nargs != 1 || parse_rev(c->args[0], &rev))
		return cli_usage("changes REV");
	if ((ex = begin_txn(c, &st, &t)))
		return ex;
	rc = cairn_revision_changes(t, rev, print_item, &io);
	ex = rc ? cli_fail(c, rc, "changes") : 0;
	cairn_txn_end(t);
	cairn_close(st);
	return ex;
}

/* Read a whole file ("-": stdin) into a malloc'd buffer. */
static int slurp(const char *path, char **out, size_t *len)
{
	FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
	size_t cap = 1 << 16, n = 0, got;
	char *b = malloc(cap);

	if (!f || !b) {
		free(b);
		if (f && f != stdin)
			fclose(f);
		return -1;
	}
	while ((got = fread(b + n, 1, cap - n, f)) > 0) {
		n += got;
		if (n == cap) {
			char *nb = realloc(b, cap * 2);

			if (!nb)
				break;
			b = nb;
			cap *= 2;
		}
	}
	if (ferror(f) || n == cap) {
		free(b);
		if (f != stdin)
			fclose(f);
		return -1;
	}
	if (f != stdin)
		fclose(f);
	*out = b;
	*len = n;
	return 0;
}

/* Merge options from the command line; *file holds the resolutions file (free it). */
static int merge_options(cli *c, cairn_merge_options *o, char **file)
{
	memset(o, 0, sizeof(*o));
	*file = NULL;
	cli_commit_options(c, &o->commit);
	o->commit.create_domain = 0;
	o->dry_run = c->dry_run;
	if (!c->resolve || strcmp(c->resolve, "none") == 0)
		o->resolve = CAIRN_RESOLVE_NONE;
	else if (strcmp(c->resolve, "ours") == 0)
		o->resolve = CAIRN_RESOLVE_OURS;
	else if (strcmp(c->resolve, "theirs") == 0)
		o->resolve = CAIRN_RESOLVE_THEIRS;
	else
		return cli_usage("--resolve takes none, ours or theirs, not %s", c->resolve);
	if (c->resolutions) {
		if (slurp(c->resolutions, file, &o->resolutions_len)) {
			fprintf(stderr, "cairn: cannot read %s: %s\n", c->resolutions,
				strerror(errno ? errno : EIO));
			return EXIT_FAIL;
		}
		o->resolutions = *file;
	}
	return 0;
}

static void print_merge_result(cli *c, const cairn_merge_result *r, const char *what)
{
	if (c->json) {
		printf("{\"%s\":true,\"revision\":%llu,\"changes\":%llu,\"items\":%llu,"
		       "\"conflicts\":%llu,\"unresolved\":%llu",
		       what, (unsigned long long)r->revision, (unsigned long long)r->changes,
		       (unsigned long long)r->items, (unsigned long long)r->conflicts,
		       (unsigned long long)r->unresolved);
		if (r->revision) {
			printf(",\"hash\":\"");
			out_hash(stdout, r->hash);
			printf("\"");
		}
		if (r->schema_revision)
			printf(",\"schema_revision\":%llu", (unsigned long long)r->schema_revision);
		printf("}\n");
	} else if (r->revision || strcmp(what, "merged") == 0) {
		if (!r->revision)
			printf("nothing to merge: %llu item%s differ%s, changed on the target only\n",
			       (unsigned long long)r->items, r->items == 1 ? "" : "s",
			       r->items == 1 ? "s" : "");
		else
			printf("%s at revision %llu: %llu item%s, %llu change%s, %llu conflict%s "
			       "resolved\n",
			       what, (unsigned long long)r->revision, (unsigned long long)r->items,
			       r->items == 1 ? "" : "s", (unsigned long long)r->changes,
			       r->changes == 1 ? "" : "s", (unsigned long long)r->conflicts,
			       r->conflicts == 1 ? "" : "s");
		if (r->schema_revision)
			printf("the proposal's schema applied at revision %llu\n",
			       (unsigned long long)r->schema_revision);
	} else {
		printf("dry run: %llu item%s differ%s, %llu change%s to merge, %llu conflict%s, %llu "
		       "unresolved\n",
		       (unsigned long long)r->items, r->items == 1 ? "" : "s", r->items == 1 ? "s" : "",
		       (unsigned long long)r->changes, r->changes == 1 ? "" : "s",
		       (unsigned long long)r->conflicts, r->conflicts == 1 ? "" : "s",
		       (unsigned long long)r->unresolved);
	}
}

/*
 * merge SOURCE [--into T]: merge SOURCE into T (default --branch). Prints the conflicts (every
 * item with --dry-run), then a summary line. A dry run exits as the merge
 * would: EXIT_CONFLICT when conflicts are left unresolved.
 */
int cmd_merge(cli *c)
{
	cairn_merge_options o;
	cairn_merge_result r;
	item_out io = {c, 1, 1, 0};
	cairn_store *st;
	char *file;
	int rc, ex;

	if (c->nargs != 1)
		return cli_usage("merge SOURCE [--into T] [--resolve ours|theirs] [--resolutions FILE] "
				 "[--dry-run]");
	if ((ex = merge_options(c, &o, &file)))
		return ex;
	o.source = c->args[0];
	if (c->into)
		o.commit.branch = c->into;
	io.conflicts_only = !c->dry_run;
	if ((ex = cli_open(c, 0, &st))) {
		free(file);
		return ex;
	}
	memset(&r, 0, sizeof(r));
	rc = cairn_merge(st, &o, print_item, &io, &r);
	if (rc) {
		ex = cli_fail(c, rc, "merge");
	} else {
		print_merge_result(c, &r, c->dry_run ? "dry_run" : "merged");
		if (r.unresolved) /* a dry run that the merge itself would refuse */
			ex = EXIT_CONFLICT;
	}
	cairn_close(st);
	free(file);
	return ex;
}

/* propose SOURCE [--into T] [--title T] [--message TEXT]: offer SOURCE for merge into T. */
int cmd_propose(cli *c)
{
	cairn_proposal_options o = {0};
	cairn_store *st;
	char *schema = NULL;
	uint64_t id;
	int rc, ex;

	if (c->nargs != 1)
		return cli_usage("propose SOURCE [--into T] [--title T] [--message DESCRIPTION] "
				 "[--schema FILE]");
	if (c->schema) {
		if (slurp(c->schema, &schema, &o.schema_len)) {
			fprintf(stderr, "cairn: cannot read %s: %s\n", c->schema,
				strerror(errno ? errno : EIO));
			return EXIT_FAIL;
		}
		if (!o.schema_len) {
			free(schema);
			return cli_usage("--schema %s is empty: give a schema document", c->schema);
		}
		o.schema = schema;
	}
	if ((ex = cli_open(c, 0, &st))) {
		free(schema);
		return ex;
	}
	o.source = c->args[0];
	o.target = c->into ? c->into : c->branch;
	o.title = c->title;
	o.description = c->prov.message;
	o.author = c->prov.actor ? c->prov.actor : getenv("USER") ? getenv("USER") : "cli";
	rc = cairn_proposal_open(st, c->domain, &o, &id);
	if (rc)
		ex = cli_fail(c, rc, "propose");
	else if (c->json)
		printf("{\"proposal\":%llu%s}\n", (unsigned long long)id,
		       schema ? ",\"schema\":\"applied when accepted\"" : "");
	else
		printf("proposal %llu opened%s\n", (unsigned long long)id,
		       schema ? " (its schema is applied when it is accepted)" : "");
	cairn_close(st);
	free(schema);
	return ex;
}

typedef struct proposal_out {
	cli *c;
	cairn_txn *t;
	int detail; /* show: the description and the notes too, in text */
} proposal_out;

/* A proposal's notes (a JSON array of {"author","text","verdict","time"}) as text lines. */
static void print_notes(const char *notes, size_t len)
{
	arena a = ARENA_INIT;
	const jv *v = jv_parse(&a, notes, len, "notes");

	for (uint32_t i = 0; v && v->type == JV_ARRAY && i < v->len; i++) {
		const jv *n = &v->u.items[i], *au = jv_get(n, "author"), *tx = jv_get(n, "text"),
			 *vd = jv_get(n, "verdict"), *tm = jv_get(n, "time");

		printf("      note by %s", au && au->type == JV_STRING ? au->u.s : "?");
		if (vd && vd->type == JV_STRING && vd->len)
			printf(" (%s)", vd->u.s);
		if (tm && tm->type == JV_STRING)
			printf(", %s", tm->u.s);
		printf(": %s\n", tx && tx->type == JV_STRING ? tx->u.s : "");
	}
	if (v && v->type == JV_ARRAY && !v->len)
		printf("      no notes yet\n");
	arena_release(&a);
}

static int print_proposal(void *ctx, const cairn_proposal *p)
{
	proposal_out *po = ctx;
	cli *c = po->c;
	const char *st = wire_proposal_status(p->status), *schema = NULL;
	size_t schema_len = 0;

	if (cairn_proposal_schema(po->t, p->id, &schema, &schema_len))
		schema_len = 0;
	if (c->json) {
		printf("{\"id\":%llu,\"status\":\"%s\",\"source\":", (unsigned long long)p->id, st);
		out_str(stdout, p->source, strlen(p->source));
		printf(",\"target\":");
		out_str(stdout, p->target, strlen(p->target));
		printf(",\"title\":");
		out_str(stdout, p->title, p->title_len);
		printf(",\"description\":");
		out_str(stdout, p->description, p->description_len);
		printf(",\"author\":");
		out_str(stdout, p->author, p->author_len);
		printf(",\"created\":\"");
		out_time(stdout, p->created_ms);
		printf("\",\"updated\":\"");
		out_time(stdout, p->updated_ms);
		printf("\"");
		if (p->merged_revision)
			printf(",\"merged_revision\":%llu", (unsigned long long)p->merged_revision);
		printf(",\"notes\":%.*s", (int)p->notes_len, p->notes);
		if (schema_len)
			printf(",\"schema\":%.*s", (int)schema_len, schema);
		printf("}\n");
		return 0;
	}
	printf("#%-4llu %-9s %s -> %s  %.*s (%.*s, ", (unsigned long long)p->id, st, p->source,
	       p->target, (int)p->title_len, p->title, (int)p->author_len, p->author);
	out_time(stdout, p->created_ms);
	printf(")");
	if (p->merged_revision)
		printf(" merged at revision %llu", (unsigned long long)p->merged_revision);
	if (schema_len)
		printf("\n      offers a schema change: %.*s", (int)schema_len, schema);
	printf("\n");
	if (po->detail) {
		if (p->description_len)
			printf("      %.*s\n", (int)p->description_len, p->description);
		print_notes(p->notes, p->notes_len);
	}
	return 0;
}

static int proposal_status(const char *s)
{
	int st = wire_proposal_status_parse(s);

	return st ? st : -1;
}

/* proposal list|show|diff|note|accept|reject|withdraw */
int cmd_proposal(cli *c)
{
	static const char use[] =
		"proposal list [--status S] | show N | diff N | note N TEXT [--verdict V] |"
		" accept N [--resolve ours|theirs] [--resolutions FILE] | reject N [TEXT] |"
		" withdraw N [TEXT]";
	const char *sub = c->nargs ? c->args[0] : "list";
	const char *author = c->prov.actor ? c->prov.actor : getenv("USER") ? getenv("USER") : "cli";
	cairn_merge_options o;
	cairn_merge_result r;
	item_out io = {c, 0, 1, 0};
	cairn_proposal p;
	cairn_store *st;
	cairn_txn *t;
	uint64_t id = 0;
	char *file = NULL;
	int rc = 0, ex, status = 0;

	if (strcmp(sub, "list") == 0) {
		if (c->nargs > 1)
			return cli_usage(use);
		if (c->status && (status = proposal_status(c->status)) < 0)
			return cli_usage("--status takes open, merged, rejected or withdrawn");
	} else if (c->nargs < 2 || parse_rev(c->args[1], &id)) {
		return cli_usage(use);
	} else if ((strcmp(sub, "show") == 0 || strcmp(sub, "diff") == 0 ||
		    strcmp(sub, "accept") == 0)
			   ? c->nargs != 2
		   : strcmp(sub, "note") == 0 ? c->nargs != 3
		   : (strcmp(sub, "reject") == 0 || strcmp(sub, "withdraw") == 0) ? c->nargs > 3
										   : 1) {
		return cli_usage(use);
	}
	if (strcmp(sub, "list") == 0 || strcmp(sub, "show") == 0) {
		proposal_out po;

		if ((ex = begin_txn(c, &st, &t)))
			return ex;
		po.c = c;
		po.t = t;
		po.detail = strcmp(sub, "show") == 0;
		if (strcmp(sub, "list") == 0)
			rc = cairn_proposal_list(t, status, print_proposal, &po);
		else if (!(rc = cairn_proposal_get(t, id, &p)))
			print_proposal(&po, &p);
		ex = rc ? cli_fail(c, rc, "proposal") : 0;
		cairn_txn_end(t);
		cairn_close(st);
		return ex;
	}
	if (strcmp(sub, "accept") == 0 && (ex = merge_options(c, &o, &file)))
		return ex;
	if ((ex = cli_open(c, 0, &st))) {
		free(file);
		return ex;
	}
	memset(&r, 0, sizeof(r));
	if (strcmp(sub, "diff") == 0) {
		if (!(rc = cairn_proposal_diff(st, c->domain, id, print_item, &io, &r)))
			print_merge_result(c, &r, "dry_run");
		if (!rc && r.unresolved) /* as merge --dry-run: accepting would be refused */
			ex = EXIT_CONFLICT;
	} else if (strcmp(sub, "accept") == 0) {
		io.conflicts_only = 1;
		if (!(rc = cairn_proposal_accept(st, c->domain, id, &o, print_item, &io, &r)))
			print_merge_result(c, &r, "merged");
	} else if (strcmp(sub, "note") == 0) {
		rc = cairn_proposal_note(st, c->domain, id, author, c->args[2], c->verdict);
	} else {
		rc = cairn_proposal_close(st, c->domain, id,
					  strcmp(sub, "reject") == 0 ? CAIRN_PROPOSAL_REJECTED
								     : CAIRN_PROPOSAL_WITHDRAWN,
					  author, c->nargs == 3 ? c->args[2] : NULL);
	}
	if (rc) {
		ex = cli_fail(c, rc, "proposal");
	} else if (strcmp(sub, "diff") && strcmp(sub, "accept")) {
		const char *done = strcmp(sub, "note") == 0     ? "noted"
				   : strcmp(sub, "reject") == 0 ? "rejected"
								: "withdrawn";

		if (c->json)
			printf("{\"proposal\":%llu,\"%s\":true}\n", (unsigned long long)id, done);
		else
			printf("proposal %llu %s\n", (unsigned long long)id, done);
	}
	cairn_close(st);
	free(file);
	return ex;
}
