/*
 * The arguments of MCP tools (mcp_args.h): the published JSON Schema and
 * the check of a call against it, both from one C table per tool.
 *
 * The check refuses, before a tool runs, what the schema refuses: a name
 * the tool does not take, a required argument missing, a value of another
 * type, a number out of its range, a string outside its enum, and any
 * string holding U+0000 (a jv string carries its length, so a NUL inside
 * one is seen by comparing it with strlen). Nothing is brought into range
 * or ignored: a model that sent something wrong is told what, and what
 * would be right, so that its next call can be.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/text.h"
#include "server/mcp_args.h"

#define NAME_CAP 64 /* longer names get no suggestion */

/* ------------------------------------------------------------ schema -- */

static void w_num(buf *b, double d)
{
	if (d == floor(d) && fabs(d) < 1e15)
		buf_printf(b, "%lld", (long long)d);
	else
		json_number(b, d);
}

static const char *const type_names[] = {"",	    "string", "integer", "number",
					 "boolean", "object", "array"};

static void w_prop(buf *b, const mcp_arg *a)
{
	if (a->type == MCP_OBJECT && a->members && !a->terse) {
		mcp_schema_write(b, a->members);
		/* The description goes inside the object: reopen it. */
		if (a->description) {
			b->len--;
			PUTS(b, ",\"description\":");
			json_quote(b, a->description, strlen(a->description));
			buf_put_u8(b, '}');
		}
		return;
	}
	buf_printf(b, "{\"type\":\"%s\"", type_names[a->type]);
	if (a->type == MCP_STRING && a->required)
		PUTS(b, ",\"minLength\":1");
	if (a->enums) {
		PUTS(b, ",\"enum\":[");
		for (size_t i = 0; a->enums[i]; i++) {
			if (i)
				buf_put_u8(b, ',');
			json_quote(b, a->enums[i], strlen(a->enums[i]));
		}
		buf_put_u8(b, ']');
	}
	if (a->type == MCP_ARRAY)
		buf_printf(b, ",\"items\":{\"type\":\"%s\"}", type_names[a->items]);
	if (a->ranged) {
		PUTS(b, ",\"minimum\":");
		w_num(b, a->min);
		PUTS(b, ",\"maximum\":");
		w_num(b, a->max);
	}
	if (a->def) {
		PUTS(b, ",\"default\":");
		buf_puts(b, a->def);
	}
	if (a->description) {
		PUTS(b, ",\"description\":");
		json_quote(b, a->description, strlen(a->description));
	}
	buf_put_u8(b, '}');
}

void mcp_schema_write(buf *b, const mcp_arg *args)
{
	int first = 1;

	PUTS(b, "{\"type\":\"object\",\"properties\":{");
	for (const mcp_arg *a = args; a->name; a++) {
		if (a != args)
			buf_put_u8(b, ',');
		json_quote(b, a->name, strlen(a->name));
		buf_put_u8(b, ':');
		w_prop(b, a);
	}
	PUTS(b, "},\"required\":[");
	for (const mcp_arg *a = args; a->name; a++) {
		if (!a->required)
			continue;
		if (!first)
			buf_put_u8(b, ',');
		first = 0;
		json_quote(b, a->name, strlen(a->name));
	}
	PUTS(b, "],\"additionalProperties\":false}");
}

/* ------------------------------------------------------------- names -- */

size_t mcp_utf8_cut(const char *s, size_t n)
{
	size_t i = n, cont = 0;

	/* Back over continuation bytes to the lead byte of the last sequence. */
	while (i > 0 && ((unsigned char)s[i - 1] & 0xC0) == 0x80 && cont < 3) {
		i--;
		cont++;
	}
	if (i > 0 && (unsigned char)s[i - 1] >= 0xC0) {
		unsigned char c = (unsigned char)s[i - 1];
		size_t need = c >= 0xF0 ? 3 : c >= 0xE0 ? 2 : 1;

		return cont >= need ? n : i - 1;
	}
	return n;
}

const mcp_arg *mcp_arg_find(const mcp_arg *args, const char *name)
{
	for (const mcp_arg *a = args; a && a->name; a++)
		if (strcmp(a->name, name) == 0)
			return a;
	return NULL;
}

/* ------------------------------------------------------------- check -- */

/* What a value of a must be, in words: "an integer from 1 to 3". */
static void expect(buf *b, const mcp_arg *a)
{
	switch (a->type) {
	case MCP_STRING:
		if (a->enums) {
			PUTS(b, "one of ");
			for (size_t i = 0; a->enums[i]; i++) {
				if (i)
					buf_puts(b, a->enums[i + 1] ? ", " : " or ");
				json_quote(b, a->enums[i], strlen(a->enums[i]));
			}
		} else {
			buf_puts(b, a->required ? "a non-empty string" : "a string");
		}
		return;
	case MCP_INTEGER:
	case MCP_NUMBER:
		buf_puts(b, a->type == MCP_INTEGER ? "an integer" : "a number");
		if (a->ranged) {
			PUTS(b, " from ");
			w_num(b, a->min);
			PUTS(b, " to ");
			w_num(b, a->max);
		}
		return;
	case MCP_BOOLEAN:
		PUTS(b, "true or false");
		return;
	case MCP_ARRAY:
		buf_printf(b, "an array of %ss", type_names[a->items]);
		return;
	default:
		PUTS(b, "an object");
		if (a->members) {
			PUTS(b, " with ");
			for (const mcp_arg *m = a->members; m->name; m++)
				buf_printf(b, "%s%s", m == a->members ? "" : ", ", m->name);
		}
		return;
	}
}

/* What a value is, in words: "a string", "10", "null". */
static void given(buf *b, const jv *v)
{
	switch (v->type) {
	case JV_NULL:
		PUTS(b, "null");
		return;
	case JV_TRUE:
	case JV_FALSE:
		PUTS(b, "a boolean");
		return;
	case JV_INT:
		buf_printf(b, "%lld", (long long)v->u.i);
		return;
	case JV_REAL:
		json_number(b, v->u.d);
		return;
	case JV_STRING:
		if (v->len <= NAME_CAP && strlen(v->u.s) == v->len)
			json_quote(b, v->u.s, v->len);
		else
			PUTS(b, "a string");
		return;
	case JV_ARRAY:
		PUTS(b, "an array");
		return;
	default:
		PUTS(b, "an object");
		return;
	}
}

/* "PATH is EXPECTED, not GIVEN", and -1. */
static int refuse(buf *c, const char *path, const mcp_arg *a, const jv *v)
{
	buf_printf(c, "\"%s\" is ", path);
	expect(c, a);
	PUTS(c, ", not ");
	given(c, v);
	return -1;
}

static int check_object(buf *c, const mcp_arg *args, const jv *o, const char *path,
			const char *owner);

/* The string v, of path: no NUL inside. */
static int check_string(buf *c, const char *path, const jv *v)
{
	if (strlen(v->u.s) == v->len)
		return 0;
	buf_printf(c, "\"%s\" holds U+0000 (a NUL character), which no argument may hold", path);
	return -1;
}

static int check_value(buf *c, const mcp_arg *a, const jv *v, const char *path)
{
	char sub[160];

	switch (a->type) {
	case MCP_STRING:
		if (v->type != JV_STRING)
			return refuse(c, path, a, v);
		if (check_string(c, path, v))
			return -1;
		if (a->required && !v->len)
			return refuse(c, path, a, v);
		if (a->enums) {
			size_t n = 0;
			const char *near;

			for (; a->enums[n]; n++)
				if (strcmp(a->enums[n], v->u.s) == 0)
					return 0;
			refuse(c, path, a, v);
			if ((near = text_closest(v->u.s, v->len, a->enums, n)))
				buf_printf(c, ": did you mean \"%s\"?", near);
			return -1;
		}
		return 0;
	case MCP_INTEGER:
	case MCP_NUMBER: {
		double d;

		if (v->type != JV_INT && v->type != JV_REAL)
			return refuse(c, path, a, v);
		d = jv_number(v);
		/* 2.0 is an integer, as JSON Schema has it; 2.5 is not. */
		if (a->type == MCP_INTEGER && (d != floor(d) || fabs(d) > 9007199254740992.0))
			return refuse(c, path, a, v);
		if (a->ranged && !(d >= a->min && d <= a->max))
			return refuse(c, path, a, v);
		return 0;
	}
	case MCP_BOOLEAN:
		return v->type == JV_TRUE || v->type == JV_FALSE ? 0 : refuse(c, path, a, v);
	case MCP_ARRAY:
		if (v->type != JV_ARRAY)
			return refuse(c, path, a, v);
		for (uint32_t i = 0; i < v->len; i++) {
			const jv *it = &v->u.items[i];
			mcp_arg item = {.name = "",
					.type = a->items,
					.members = a->items == MCP_OBJECT ? a->members : NULL};

			snprintf(sub, sizeof(sub), "%s[%u]", path, i);
			if (check_value(c, &item, it, sub))
				return -1;
		}
		return 0;
	default:
		if (v->type != JV_OBJECT)
			return refuse(c, path, a, v);
		return a->members ? check_object(c, a->members, v, path, path) : 0;
	}
}

static void list_names(buf *b, const mcp_arg *args)
{
	for (const mcp_arg *a = args; a->name; a++)
		buf_printf(b, "%s%s", a == args ? "" : ", ", a->name);
}

/*
 * The members of o against args. path is "" for a tool's arguments, else
 * the object's own path ("near"); owner names the tool or the object in
 * messages.
 */
static int check_object(buf *c, const mcp_arg *args, const jv *o, const char *path,
			const char *owner)
{
	const char *names[64];
	size_t n = 0;
	char sub[160];

	for (const mcp_arg *a = args; a->name && n < 64; a++)
		names[n++] = a->name;
	for (uint32_t i = 0; i < o->len; i++) {
		const jv *m = &o->u.items[i];
		const mcp_arg *a = strlen(m->key) == m->key_len ? mcp_arg_find(args, m->key) : NULL;
		const char *near;

		if (a)
			continue;
		buf_printf(c, "unknown %s \"%.*s\"", *path ? "member" : "argument",
			   (int)mcp_utf8_cut(m->key, m->key_len > NAME_CAP ? NAME_CAP : m->key_len),
			   m->key);
		if (strlen(m->key) != m->key_len)
			PUTS(c, " (it holds U+0000)");
		else if ((near = text_closest(m->key, m->key_len, names, n)))
			buf_printf(c, " (did you mean \"%s\"?)", near);
		buf_printf(c, ": %s takes ", owner);
		list_names(c, args);
		return -1;
	}
	for (const mcp_arg *a = args; a->name; a++) {
		const jv *v = jv_get(o, a->name);

		snprintf(sub, sizeof(sub), "%s%s%s", path, *path ? "." : "", a->name);
		if (!v) {
			if (!a->required)
				continue;
			buf_printf(c, "\"%s\" is required, ", sub);
			expect(c, a);
			return -1;
		}
		if (check_value(c, a, v, sub))
			return -1;
	}
	return 0;
}

int mcp_args_check(const mcp_arg *args, const jv *o, const char *tool, char *err, size_t errlen)
{
	buf c = BUF_INIT;
	int rc;

	if (!o || o->type != JV_OBJECT) {
		snprintf(err, errlen, "the arguments are an object");
		return -1;
	}
	rc = check_object(&c, args, o, "", tool);
	if (rc) {
		if (c.oom)
			snprintf(err, errlen, "out of memory");
		else
			snprintf(err, errlen, "%.*s",
				 (int)mcp_utf8_cut((const char *)c.p,
						   c.len < errlen ? c.len : errlen - 1),
				 (const char *)c.p);
	}
	buf_release(&c);
	return rc;
}
