/* Unit tests of src/model/schema.c, and schema changes on a populated store. */
#include <stdlib.h>

#include "model/schema.h"
#include "tests.h"

void test_schema_parse(void)
{
	schema *s = NULL;
	const kind_def *k;
	const attr_def *a;
	const rel_def *r;

	OK(schema_apply_json(NULL, test_schema, strlen(test_schema), &s, NULL));
	CHECK(s->n_kinds == 3 && s->n_rels == 3);
	k = schema_kind(s, "Part");
	CHECK(k && k->id == 2 && k->n_attrs == 4);
	a = kind_attr(k, "sku");
	CHECK(a && a->type == AT_STRING && (a->flags & AF_UNIQUE) && (a->flags & AF_INDEXED) &&
	      (a->flags & AF_REQUIRED));
	a = kind_attr(k, "supplier");
	CHECK(a && a->type == AT_REF && a->ref_kind == schema_kind(s, "Supplier")->id);
	a = kind_attr(schema_kind(s, "Supplier"), "country");
	CHECK(a && a->type == AT_ENUM && a->n_values == 3);
	r = schema_rel(s, "primary_plant");
	CHECK(r && r->one && r->from_kind == 2 && r->to_kind == 3);
	CHECK(!schema_rel(s, "stocked_at")->one);
	/* The canonical form loads back to the same canonical form. */
	{
		schema *t = NULL;

		OK(schema_load(s->json, s->json_len, 7, &t));
		CHECK(t->json_len == s->json_len && memcmp(t->json, s->json, s->json_len) == 0);
		CHECK(t->rev == 7);
		schema_free(t);
	}
	schema_free(s);
}

static int refused(const char *json, const char *needle)
{
	schema *s = NULL;
	int rc = schema_apply_json(NULL, json, strlen(json), &s, NULL);

	schema_free(s);
	if (rc == 0)
		return 0;
	if (needle && !strstr(cairn_errmsg(), needle)) {
		fprintf(stderr, "    message \"%s\" lacks \"%s\"\n", cairn_errmsg(), needle);
		return 0;
	}
	return rc == CAIRN_ESCHEMA || rc == CAIRN_EJSON;
}

void test_schema_errors(void)
{
	CHECK(refused("{\"kinds\":[{\"name\":\"A\",\"color\":1}]}", "color"));
	CHECK(refused("{\"kinds\":[],\"extra\":[]}", "extra"));
	CHECK(refused("{\"kinds\":[{\"name\":\"A\",\"attributes\":[{\"name\":\"x\",\"type\":\"blob\"}]}]}",
		      "blob"));
	CHECK(refused("{\"kinds\":[{\"name\":\"A\",\"attributes\":[{\"name\":\"x\",\"type\":\"enum\"}]}]}",
		      "values"));
	CHECK(refused("{\"kinds\":[{\"name\":\"A\",\"attributes\":[{\"name\":\"x\",\"type\":\"ref\"}]}]}",
		      "ref"));
	CHECK(refused("{\"kinds\":[{\"name\":\"A\",\"attributes\":[{\"name\":\"x\",\"type\":\"ref\",\"ref\":\"Nope\"}]}]}",
		      "Nope"));
	CHECK(refused("{\"kinds\":[{\"name\":\"A\"},{\"name\":\"A\"}]}", "twice"));
	CHECK(refused("{\"kinds\":[{\"name\":\"A\",\"attributes\":[{\"name\":\"x\",\"type\":\"int\"},{\"name\":\"x\",\"type\":\"int\"}]}]}",
		      "twice"));
	CHECK(refused("{\"kinds\":[{\"name\":\"bad name\"}]}", "bad name"));
	CHECK(refused("{\"relations\":[{\"name\":\"r\",\"from\":\"A\",\"to\":\"B\"}]}", "unknown Kind"));
	CHECK(refused("{\"kinds\":[{\"name\":\"A\"}],\"relations\":[{\"name\":\"r\",\"from\":\"A\",\"to\":\"A\",\"cardinality\":\"two\"}]}",
		      "cardinality"));
	CHECK(refused("{\"kinds\":[{\"name\":\"A\",\"attributes\":[{\"name\":\"x\",\"type\":\"int\",\"required\":\"yes\"}]}]}",
		      "required"));
	CHECK(refused("{\"kinds\":[{\"name\":\"A\",\"attributes\":[{\"name\":\"x\",\"type\":\"enum\",\"values\":[\"a\",\"a\"]}]}]}",
		      "twice"));
	CHECK(refused("[1,2]", NULL));
	CHECK(refused("{\"kinds\":", NULL));
}

void test_schema_merge(void)
{
	schema *a = NULL, *b = NULL;
	schema_delta d = {0};
	const char *more =
		"{\"kinds\":[{\"name\":\"Part\",\"attributes\":["
		"{\"name\":\"status\",\"type\":\"enum\",\"values\":[\"active\",\"eol\",\"draft\"],\"indexed\":true},"
		"{\"name\":\"weight\",\"type\":\"float\"}]},"
		"{\"name\":\"Contract\",\"attributes\":[{\"name\":\"supplier\",\"type\":\"ref\",\"ref\":\"Supplier\"}]}],"
		"\"relations\":[{\"name\":\"stocked_at\",\"from\":\"Part\",\"to\":\"Plant\",\"cardinality\":\"one\"}]}";

	OK(schema_apply_json(NULL, test_schema, strlen(test_schema), &a, NULL));
	OK(schema_apply_json(a, more, strlen(more), &b, &d));
	/* Ids are stable: old Kinds and Attributes keep their positions, new ones are appended. */
	CHECK(schema_kind(b, "Part")->id == schema_kind(a, "Part")->id);
	CHECK(schema_kind(b, "Contract")->id == 4);
	CHECK(kind_attr(schema_kind(b, "Part"), "status")->id == 3);
	CHECK(kind_attr(schema_kind(b, "Part"), "weight")->id == 5);
	CHECK(kind_attr(schema_kind(b, "Part"), "sku") != NULL); /* kept though not named */
	CHECK(kind_attr(schema_kind(b, "Part"), "status")->n_values == 3);
	/* The delta: an index added (status), a relation made one; widening an enum needs no check. */
	{
		int indexed = 0, card = 0, other = 0;

		for (size_t i = 0; i < d.n; i++) {
			if (d.items[i].what == DELTA_INDEXED)
				indexed++;
			else if (d.items[i].what == DELTA_CARD_ONE)
				card++;
			else
				other++;
		}
		CHECK(indexed == 1 && card == 1 && other == 0);
	}
	schema_delta_release(&d);
	/* Narrowing an enum is a delta to check. */
	{
		schema *c = NULL;
		const char *narrow = "{\"kinds\":[{\"name\":\"Part\",\"attributes\":[{\"name\":\"status\","
				     "\"type\":\"enum\",\"values\":[\"active\"]}]}]}";

		OK(schema_apply_json(b, narrow, strlen(narrow), &c, &d));
		CHECK(d.n == 1 && d.items[0].what == DELTA_ENUM);
		schema_delta_release(&d);
		schema_free(c);
	}
	schema_free(a);
	schema_free(b);
}

static int apply(cairn_store *st, const char *json)
{
	cairn_commit_options co = {0};

	co.domain = "d";
	return cairn_schema_apply(st, &co, json, strlen(json), NULL);
}

void test_schema_populated(void)
{
	cairn_store *st = test_store();
	uint64_t head;
	char *before, *after;

	CHECK(st);
	OK(test_commit(st,
		       "{\"kind\":\"Supplier\",\"key\":\"S1\",\"values\":{\"vat\":\"V1\",\"country\":\"DE\"}}\n"
		       "{\"kind\":\"Supplier\",\"key\":\"S2\",\"values\":{\"vat\":\"V2\",\"rating\":3}}\n"
		       "{\"kind\":\"Part\",\"key\":\"P1\",\"values\":{\"sku\":\"A\",\"status\":\"eol\"}}\n"
		       "{\"kind\":\"Part\",\"key\":\"P2\",\"values\":{\"sku\":\"B\",\"status\":\"eol\"}}\n"
		       "{\"kind\":\"Plant\",\"key\":\"L1\",\"values\":{\"city\":\"Lyon\"}}\n"
		       "{\"rel\":\"stocked_at\",\"from\":\"Part:P1\",\"to\":\"Plant:L1\"}\n"
		       "{\"kind\":\"Plant\",\"key\":\"L2\",\"values\":{\"city\":\"Lyon\"}}\n"
		       "{\"rel\":\"stocked_at\",\"from\":\"Part:P1\",\"to\":\"Plant:L2\"}",
		       NULL));
	head = test_head(st, "d");
	before = test_export(st, "d");
	CHECK(before);
	/* Refused, naming the offending Records, and nothing changes. */
	CHECK_RC(apply(st, "{\"kinds\":[{\"name\":\"Supplier\",\"attributes\":[{\"name\":\"rating\",\"type\":\"int\",\"required\":true}]}]}"),
		 CAIRN_ESCHEMADATA);
	CHECK(strstr(cairn_errmsg(), "Supplier:S1") != NULL);
	CHECK_RC(apply(st, "{\"kinds\":[{\"name\":\"Part\",\"attributes\":[{\"name\":\"status\",\"type\":\"enum\",\"values\":[\"active\"]}]}]}"),
		 CAIRN_ESCHEMADATA);
	CHECK(strstr(cairn_errmsg(), "Part:P1") && strstr(cairn_errmsg(), "Part:P2"));
	CHECK_RC(apply(st, "{\"kinds\":[{\"name\":\"Plant\",\"attributes\":[{\"name\":\"city\",\"type\":\"string\",\"unique\":true}]}]}"),
		 CAIRN_ESCHEMADATA);
	CHECK_RC(apply(st, "{\"kinds\":[{\"name\":\"Supplier\",\"attributes\":[{\"name\":\"vat\",\"type\":\"int\"}]}]}"),
		 CAIRN_ESCHEMADATA);
	CHECK_RC(apply(st, "{\"relations\":[{\"name\":\"stocked_at\",\"from\":\"Part\",\"to\":\"Plant\",\"cardinality\":\"one\"}]}"),
		 CAIRN_ESCHEMADATA);
	CHECK(strstr(cairn_errmsg(), "P1") != NULL);
	/* A string made a ref must name existing Records. */
	CHECK_RC(apply(st, "{\"kinds\":[{\"name\":\"Plant\",\"attributes\":[{\"name\":\"city\",\"type\":\"ref\",\"ref\":\"Supplier\"}]}]}"),
		 CAIRN_ESCHEMADATA);
	CHECK(strstr(cairn_errmsg(), "Supplier:Lyon") != NULL);
	CHECK(test_head(st, "d") == head);
	after = test_export(st, "d");
	CHECK(after && strcmp(before, after) == 0);
	free(after);
	/* Accepted on a populated store: a new Kind, Attribute, Relation, a wider enum, a new index. */
	OK(apply(st, "{\"kinds\":[{\"name\":\"Part\",\"attributes\":["
		     "{\"name\":\"status\",\"type\":\"enum\",\"values\":[\"active\",\"eol\",\"draft\"]},"
		     "{\"name\":\"weight\",\"type\":\"float\"}]},"
		     "{\"name\":\"Plant\",\"attributes\":[{\"name\":\"city\",\"type\":\"string\",\"indexed\":true}]},"
		     "{\"name\":\"Contract\"}],"
		     "\"relations\":[{\"name\":\"signed_with\",\"from\":\"Contract\",\"to\":\"Supplier\"}]}"));
	CHECK(test_head(st, "d") == head + 1);
	OK(test_commit(st, "{\"kind\":\"Part\",\"key\":\"P3\",\"values\":{\"sku\":\"C\",\"status\":\"draft\",\"weight\":2}}\n"
			   "{\"kind\":\"Contract\",\"key\":\"C1\"}\n"
			   "{\"rel\":\"signed_with\",\"from\":\"Contract:C1\",\"to\":\"Supplier:S1\"}",
		       NULL));
	/* The index built for existing Records passes the check of every entry. */
	OK(cairn_check(st, "d", NULL, NULL, NULL));
	/* A unique float: 4 and 4.0 are one value, in one commit as against the store. */
	OK(apply(st, "{\"kinds\":[{\"name\":\"Plant\",\"attributes\":[{\"name\":\"code\",\"type\":\"float\",\"unique\":true}]}]}"));
	CHECK_RC(test_commit(st, "{\"kind\":\"Plant\",\"key\":\"X1\",\"values\":{\"code\":4}}\n"
				 "{\"kind\":\"Plant\",\"key\":\"X2\",\"values\":{\"code\":4.0}}",
			     NULL),
		 CAIRN_EUNIQUE);
	OK(test_commit(st, "{\"kind\":\"Plant\",\"key\":\"X1\",\"values\":{\"code\":4}}", NULL));
	CHECK_RC(test_commit(st, "{\"kind\":\"Plant\",\"key\":\"X2\",\"values\":{\"code\":4.0}}", NULL),
		 CAIRN_EUNIQUE);
	/* The schema is versioned: as of the old revision, the old schema. */
	{
		cairn_read_options ro = {0};
		cairn_txn *t;
		const char *json;
		size_t len;

		ro.domain = "d";
		ro.at_revision = head;
		OK(cairn_txn_begin(st, &ro, &t));
		OK(cairn_schema_get(t, &json, &len));
		CHECK(memmem(json, len, "Contract", 8) == NULL);
		cairn_txn_end(t);
		ro.at_revision = 0;
		OK(cairn_txn_begin(st, &ro, &t));
		OK(cairn_schema_get(t, &json, &len));
		CHECK(memmem(json, len, "Contract", 8) != NULL);
		cairn_txn_end(t);
	}
	free(before);
	cairn_close(st);
}
