/*
 * The arguments of MCP tools (mcp_args.c): one C table per tool from which
 * both the published inputSchema and the check of a call's arguments come,
 * so that what a model is told and what the server accepts cannot differ.
 */
#ifndef CAIRN_SERVER_MCP_ARGS_H
#define CAIRN_SERVER_MCP_ARGS_H

#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "base/json.h"

/* An argument's type, as JSON Schema names it. */
enum mcp_type { MCP_STRING = 1, MCP_INTEGER, MCP_NUMBER, MCP_BOOLEAN, MCP_OBJECT, MCP_ARRAY };

/*
 * One argument. A table of them ends with an entry whose name is NULL.
 *
 * - required: must be given; a required string must not be empty.
 * - ranged: an integer or number from min to max (both included).
 * - def: the default, as JSON text, published as "default" and used by the
 *   tool when the argument is absent (mcp_arg_default); NULL for none.
 * - enums: the values a string may have (NULL-terminated), or NULL.
 * - items: the type of an array's items: MCP_STRING, or MCP_OBJECT whose
 *   members (members) are checked as an object's are.
 * - members: an object's members, checked like the arguments themselves;
 *   NULL for a free-form object (values, where), whose members are data.
 * - terse: the members are checked but published as a free-form object
 *   with the description, where their schema would cost the list of tools
 *   more than it tells a model (search's rank).
 */
typedef struct mcp_arg mcp_arg;
struct mcp_arg {
	const char *name;
	uint8_t type;
	uint8_t required;
	uint8_t ranged;
	uint8_t items;
	uint8_t terse;
	double min, max;
	const char *def;
	const char *const *enums;
	const mcp_arg *members;
	const char *description;
};

/*
 * Append the JSON Schema of an object with these members: "type":"object",
 * "properties", "required" (possibly empty) and "additionalProperties":false.
 * This function can't fail (an allocation failure sets b->oom).
 */
void mcp_schema_write(buf *b, const mcp_arg *args);

/*
 * Check the arguments o (an object) of tool `tool` against args: no
 * unknown name (the valid ones listed, the closest suggested), every
 * required one there, each of its type, in its range, among its enum's
 * values, and no string holding U+0000. Returns 0, or -1 with what to do
 * in err (NUL-terminated, cut to errlen).
 */
int mcp_args_check(const mcp_arg *args, const jv *o, const char *tool, char *err, size_t errlen);

/* The entry of args named name, or NULL. */
const mcp_arg *mcp_arg_find(const mcp_arg *args, const char *name);

/*
 * The length of s[0..n-1] without a UTF-8 sequence cut short at its end
 * (text truncated to fit a buffer must stay valid UTF-8 in an answer).
 */
size_t mcp_utf8_cut(const char *s, size_t n);

#endif
