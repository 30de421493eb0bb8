/* MCP (mcp.c): the JSON-RPC handler behind cairn mcp (stdio) and POST /mcp. */
#ifndef CAIRN_SERVER_MCP_H
#define CAIRN_SERVER_MCP_H

#include "cairn.h"
#include "base/json.h"
#include "base/buf.h"

typedef struct mcp_ctx {
	cairn_store *st;
	const char *domain;
	const char *actor;	/* who the writes are by: the token's label, or --actor */
	int writes;		/* write tools listed and callable */
	const cairn_embedder *emb; /* the model search embeds texts with (NULL: words only) */
	/* Whether the caller may write to a branch (NULL: any). */
	int (*branch_ok)(void *ctx, const char *branch);
	void *branch_ctx;
	/* Levels of nesting a message may have (the server's --max-depth); 0: the reader's own. */
	unsigned max_depth;
	/*
	 * The pattern branch_ok holds to ('*' matches any run of characters),
	 * named in the instructions and in refusals so that the model knows
	 * where it may write; NULL: any branch.
	 */
	const char *branches;
	int may_erase;		/* the erase of forget: an admin token, or writes without --branches */
	int schema_checked;	/* an empty Domain of a write session was given the memory schema */
	int initialized;
} mcp_ctx;

/*
 * Answer one JSON-RPC message (msg[0..len-1]): appends the response to out
 * and returns 1, or returns 0 for a message that needs none (a notification
 * or a response). A message that does not parse, or nests deeper than
 * max_depth, is answered with an error that carries its "id" whenever the
 * top-level member can still be read, so that the caller's request ends.
 */
int mcp_handle(mcp_ctx *c, const char *msg, size_t len, buf *out);

#endif
