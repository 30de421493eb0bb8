/* The cairn command: shared options, output and error helpers. Uses only cairn.h. */
#ifndef CAIRN_CLI_H
#define CAIRN_CLI_H

#include <stdint.h>
#include <stdio.h>

#include "cairn.h"

/* Exit codes, documented in docs/cli.md. */
enum {
	EXIT_OK = 0,
	EXIT_FAIL = 1,	   /* I/O, memory, internal */
	EXIT_USAGE = 2,	   /* bad command line */
	EXIT_NOTFOUND = 3, /* no such Record, Domain, branch, revision, store */
	EXIT_INVALID = 4,  /* the input was refused: validation, JSON, schema */
	EXIT_CONFLICT = 5, /* the branch head moved, merge conflicts, a proposal no longer open */
	EXIT_CORRUPT = 6,  /* cairn check found problems, or the store is damaged */
};

struct cli_cmd;

/* The command line, parsed: the options of the command and its arguments. */
typedef struct cli {
	const struct cli_cmd *cmd; /* the command running */
	const char *store;
	const char *domain;
	const char *branch;
	const char *at;		/* --at REV or RFC 3339 time */
	cairn_provenance prov;
	int json;		/* 1: JSON output (stdout is not a terminal, or --json) */
	int tty_err;		/* stderr is a terminal */
	long limit;		/* --limit, -1 when not given */
	const char *after;	/* --after KEY */
	const char *dir;	/* --dir out|in|both */
	const char *rel;	/* --rel NAME */
	const char *on_error;	/* --on-error stop|skip */
	long batch;
	const char *title;	/* --title */
	const char *values;	/* --values JSON */
	int cascade;
	long expect;		/* --expect REV, -1 when not given */
	const char *out;	/* --out FILE */
	const char *from;	/* --from BRANCH */
	int nosync;		/* --no-sync */
	const char *resolve;	/* --resolve none|ours|theirs */
	const char *resolutions; /* --resolutions FILE */
	const char *schema;	/* --schema FILE (propose) */
	int dry_run;		/* --dry-run */
	const char *record;	/* --record Kind:key (erase) */
	const char *actor_as;	/* --actor-as NAME (erase: who erases; --actor is the target) */
	const char *verdict;	/* --verdict TEXT */
	const char *status;	/* --status open|merged|rejected|withdrawn */
	const char *into;	/* --into BRANCH: the target of merge and propose (default --branch) */
	const char *role;	/* --role reader|writer|admin */
	const char *branches;	/* --branches PATTERN */
	const char *label;	/* --label TEXT */
	cairn_store *st_mcp;	/* cairn mcp's store */
	const char *where;	/* --where JSON */
	const char *sort;	/* --sort ATTR */
	const char *fields;	/* --fields A,B */
	const char *group_by;	/* --group-by ATTR */
	int explain, count;	/* --explain, --count */
	const char *kind;	/* --kind K,.. (graph reads) */
	const char *hops[8];	/* --hop DIR[:RELS[:KINDS]], repeated */
	int n_hops;
	long depth, fanout;	/* --depth, --fanout; 0 when not given */
	int with_values;	/* --with-values */
	long edits;		/* --edits (resolve) */
	int exact;		/* --exact (resolve) */
	int all_words;		/* --all-words (search) */
	int no_typos;		/* --no-typos (search) */
	const char *model;	/* --model FILE (embed) */
	const char *model_id;	/* --id ID (model convert) */
	const char *pairs;	/* --pairs FILE (embed) */
	const char *near;	/* --near KIND:KEY (search) */
	const char *vector;	/* --vector JSON (search) */
	const char *metric;	/* --metric cosine|dot|l2 (search) */
	long probes, lists;	/* --probes (search), --lists (vindex); 0 when not given */
	int rebuild;		/* --rebuild (vindex) */
	const char *retain;	/* --retain DURATION (compact) */
	const char *horizon;	/* --horizon REV (compact) */
	const char *vectors_file; /* import --vectors FILE.f32 */
	int semantic, hybrid;	/* search --semantic | --hybrid TEXT */
	const char *rank;	/* --rank JSON (search --semantic, --hybrid) */
	const char *fusion;	/* --fusion rrf|weighted */
	const char *weights;	/* --weights TEXT,VECTOR */
	const char *boost_near; /* --boost-near KIND:KEY,... */
	double boost;		/* --boost N (default 1 with --boost-near) */
	int embed;		/* --embed: writes embed titles with the model (--model) */
	int atomic;		/* --atomic: an import all or nothing */
	const char *vector_model; /* --vector-model ID: the model of the vectors written */
	cairn_embedder *emb;	/* the model --embed opened */
	long dim;		/* --dim N (import --vectors) */
	int memory;		/* init --memory */
	const char *about[CAIRN_MEMORY_MAX_ABOUT]; /* remember --about, repeated */
	int n_about;
	const char *key;	/* remember --key */
	const char *append;	/* remember --append JSON */
	const char *supersedes; /* remember --supersedes KIND:KEY */
	int replace;		/* remember --replace */
	const char *links;	/* remember --links JSON */
	int include_inactive;	/* digest --include-inactive */
	const char *valid_at;	/* digest, recall, search --valid-at TIME */
	int64_t valid_at_ms;	/* search: valid_at parsed */
	long budget;		/* digest --budget BYTES, 0 when not given */
	char **args;		/* positional arguments */
	int nargs;
} cli;

/*
 * One command: its name, its handler, a line for `cairn help` and its usage
 * for `cairn NAME --help`. The usage names every option the command takes,
 * and the command takes exactly those (cli_parse reads them from it). An
 * entry without a name heads a group of the list.
 */
typedef struct cli_cmd {
	const char *name;
	int (*run)(cli *c);
	const char *summary;
	const char *usage;
	int own_options; /* serve, mcp: the handler parses c->args itself */
} cli_cmd;

/* The table of commands (commands.c), ending with an entry without a summary. */
extern const cli_cmd cli_commands[];
extern const char cli_serve_usage[], cli_mcp_usage[];
const cli_cmd *cli_command(const char *name);
/* The list of commands, with their summaries and the common options. */
void cli_help(FILE *f);
/*
 * Parse argv (argv[0] is the command's name) for c->cmd into c: its options,
 * then c->args. Returns 0, -1 after printing the usage for --help, or an
 * exit code after saying what was wrong.
 */
int cli_parse(cli *c, int argc, char **argv);

/* Print an error for rc and return its exit code. */
int cli_fail(cli *c, int rc, const char *what);
/* The same with the message msg instead of the library's (the server's reasons). */
int cli_fail_msg(cli *c, int rc, const char *what, const char *msg);
int cli_usage(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* --valid-at into *ms (0 without it); 0, or the exit code of a usage error. */
int cli_valid_at(cli *c, int64_t *ms);
int cli_exit_code(int rc);
/* Whether the Domain was named (--domain or $CAIRN_DOMAIN), not the default. */
int cli_domain_given(const cli *c);
/* Open the store (create: for init). */
int cli_open(cli *c, int create, cairn_store **st);
/* A duration: a number and a unit (s, m, h, d), or seconds, in ms; -1 if malformed. */
int64_t cli_parse_duration_ms(const char *s);
/* Fill read options from the command line (branch, --at). Returns 0 or an exit code. */
int cli_read_options(cli *c, cairn_read_options *ro);
void cli_commit_options(cli *c, cairn_commit_options *co);
/*
 * cli_commit_options for a write that may make its Domain: 0, or the exit
 * code after refusing a Domain that does not exist and is named so close
 * to one that does that it is taken for a typo (domain_not_found).
 */
int cli_write_options(cli *c, cairn_store *st, cairn_commit_options *co);
/* The most items a comma-separated option holds (--kind, --rel). */
#define LIST_MAX 64
/* "a,b,c" into out[0..*n-1], in place; an empty item or more than LIST_MAX is -1. */
int cli_split_list(char *s, const char **out, size_t *n);

/* JSON output helpers (stdout). */
void out_str(FILE *f, const char *s, size_t n);
/*
 * A diff (docs/api.md, "Diffs") for people, a line an attribute after
 * indent: `name: BEFORE -> AFTER`, or `name: base B, ours O, theirs T`
 * (then `  CONFLICT`, `, resolved R`); (none) for a value that is not there.
 */
void out_diff_text(FILE *f, const char *indent, const char *diff, size_t len);
/* JSON text s[0..n-1] (compact, as the store writes it) indented two spaces a level. */
void out_json_indented(FILE *f, const char *s, size_t n);
void out_hash(FILE *f, const uint8_t h[32]);
/* {"kind":..,"key":..,"title":.. of a Record, left open for more members. */
void out_header(FILE *f, const cairn_record *r);
/* "Kind:key" as a JSON string. */
void out_endpoint(FILE *f, const char *kind, const char *key, size_t key_len);
/* A Link as one JSON line (wire_link), with its revision's source and confidence. */
int out_link(FILE *f, cairn_txn *t, const cairn_link *l, int values, cairn_revision *last);
void out_time(FILE *f, int64_t ms);

int cmd_init(cli *c);
int cmd_domain(cli *c);
int cmd_schema(cli *c);
int cmd_import(cli *c);
/* put, patch, delete, link and unlink: c->cmd->name says which. */
int cmd_write(cli *c);
int cmd_get(cli *c);
int cmd_page(cli *c);
int cmd_links(cli *c);
int cmd_count(cli *c);
int cmd_log(cli *c);
int cmd_export(cli *c);
int cmd_check(cli *c);
int cmd_stats(cli *c);
int cmd_branch(cli *c);
int cmd_history(cli *c);
int cmd_lineage(cli *c);
int cmd_compact(cli *c);
int cmd_erase(cli *c);
int cmd_vacuum(cli *c);
int cmd_backup(cli *c);
int cmd_maintain(cli *c);
int cmd_diff(cli *c);
int cmd_changes(cli *c);
int cmd_merge(cli *c);
int cmd_propose(cli *c);
int cmd_proposal(cli *c);
int cmd_token(cli *c);
int cmd_query(cli *c);
int cmd_neighbors(cli *c);
int cmd_follow(cli *c);
int cmd_path(cli *c);
int cmd_resolve(cli *c);
int cmd_search(cli *c);
int cmd_model(cli *c);
int cmd_embed(cli *c);
int cmd_vindex(cli *c);
int cmd_reembed(cli *c);
/*
 * Open the embedder's model into *e: --model, else $CAIRN_MODEL, else the
 * first glove-6b-100d.cemb found where make model and make install put it
 * (docs/vectors.md, "The built-in embedder"). 0, or the exit code after
 * saying what is missing and how to make it.
 */
int cli_open_model(cli *c, cairn_embedder **e, const char *what);
/* The first of those places that has the model, into buf (PATH_MAX); NULL when none does. */
const char *cli_find_model(char *buf);
int cmd_remember(cli *c);
int cmd_retract(cli *c);
int cmd_digest(cli *c);
int cmd_recall(cli *c);
/* init --memory: the memory schema for c->domain on the open store st. */
int cli_memory_init(cli *c, cairn_store *st);
int cmd_serve(cli *c);
int cmd_mcp(cli *c);

#endif
