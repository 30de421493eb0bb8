/* Access tokens: made, checked, revoked, listed; scoped to a Domain that still exists; never stored. */
#include <stdio.h>
#include <stdlib.h>

#include "tests.h"

static int count_tokens(void *ctx, const cairn_token_info *t)
{
	(void)t;
	(*(int *)ctx)++;
	return 0;
}

/* 1 if the bytes of s occur in the file. */
static int file_has(const char *path, const char *s)
{
	FILE *f = fopen(path, "rb");
	size_t n = strlen(s), len = 0, cap = 1 << 20;
	char *b = malloc(cap);
	int found = 0;

	if (!f || !b) {
		free(b);
		if (f)
			fclose(f);
		return -1;
	}
	for (;;) {
		size_t got = fread(b + len, 1, cap - len, f);

		len += got;
		if (len < cap)
			break;
		cap *= 2;
		b = realloc(b, cap);
		if (!b) {
			fclose(f);
			return -1;
		}
	}
	fclose(f);
	for (size_t i = 0; i + n <= len && !found; i++)
		found = memcmp(b + i, s, n) == 0;
	free(b);
	return found;
}

void test_tokens(void)
{
	cairn_store *st = test_store();
	char w[CAIRN_TOKEN_MAX], a[CAIRN_TOKEN_MAX], path[600];
	cairn_token_info ti;
	uint64_t wid, aid;
	int n = 0;

	CHECK(st);
	OK(cairn_token_create(st, "d", CAIRN_ROLE_WRITER, "agent/p7/*", "planner", w, sizeof(w), &wid));
	OK(cairn_token_create(st, NULL, CAIRN_ROLE_ADMIN, NULL, NULL, a, sizeof(a), &aid));
	CHECK(wid != aid && strncmp(w, "cairn_", 6) == 0 && strlen(w) > 40);
	OK(cairn_token_check(st, w, strlen(w), &ti));
	CHECK(ti.id == wid && ti.role == CAIRN_ROLE_WRITER && strcmp(ti.domain, "d") == 0 &&
	      strcmp(ti.branches, "agent/p7/*") == 0 && strcmp(ti.label, "planner") == 0 && !ti.revoked);
	OK(cairn_token_check(st, a, strlen(a), &ti));
	CHECK(ti.role == CAIRN_ROLE_ADMIN && ti.domain[0] == '\0');
	/* Anything else is unauthorized: a changed byte, a cut, another id, junk. */
	{
		char bad[CAIRN_TOKEN_MAX];

		snprintf(bad, sizeof(bad), "%s", w);
		bad[strlen(bad) - 1] ^= 1;
		CHECK_RC(cairn_token_check(st, bad, strlen(bad), &ti), CAIRN_EAUTH);
		CHECK_RC(cairn_token_check(st, w, strlen(w) - 1, &ti), CAIRN_EAUTH);
		snprintf(bad, sizeof(bad), "cairn_999_%s", strchr(w + 6, '_') + 1);
		CHECK_RC(cairn_token_check(st, bad, strlen(bad), &ti), CAIRN_EAUTH);
		CHECK_RC(cairn_token_check(st, "", 0, &ti), CAIRN_EAUTH);
		CHECK_RC(cairn_token_check(st, "cairn__x", 8, &ti), CAIRN_EAUTH);
		CHECK_RC(cairn_token_check(st, "Bearer x", 8, &ti), CAIRN_EAUTH);
	}
	/* Bad requests are refused. */
	CHECK_RC(cairn_token_create(st, "d", 0, NULL, NULL, w + 0, sizeof(w), &wid), CAIRN_EINVAL);
	CHECK_RC(cairn_token_create(st, NULL, CAIRN_ROLE_WRITER, NULL, NULL, w, sizeof(w), &wid), CAIRN_EINVAL);
	CHECK_RC(cairn_token_create(st, "d", CAIRN_ROLE_READER, "a b", NULL, w, sizeof(w), &wid), CAIRN_EINVAL);
	CHECK_RC(cairn_token_create(st, "nope", CAIRN_ROLE_READER, NULL, NULL, w, sizeof(w), &wid), CAIRN_ENODOMAIN);
	CHECK_RC(cairn_token_create(st, "d", CAIRN_ROLE_READER, NULL, NULL, w, 10, &wid), CAIRN_EINVAL);
	/* The secrets are not in the store's file: only their hashes are. */
	snprintf(path, sizeof(path), "%s/data.mdb", test_path("store"));
	OK(cairn_token_create(st, "d", CAIRN_ROLE_READER, NULL, NULL, w, sizeof(w), &wid));
	CHECK(file_has(path, strchr(w + 6, '_') + 1) == 0);
	CHECK(file_has(path, "planner") == 1); /* the check can find what is there */
	/* Revoked: refused, still listed. */
	OK(cairn_token_revoke(st, wid));
	CHECK_RC(cairn_token_check(st, w, strlen(w), &ti), CAIRN_EAUTH);
	CHECK_RC(cairn_token_revoke(st, 12345), CAIRN_ENOTFOUND);
	OK(cairn_token_list(st, count_tokens, &n));
	CHECK(n == 3);
	/* A token of a dropped Domain does not reach a new Domain of the same name. */
	OK(cairn_token_create(st, "d", CAIRN_ROLE_READER, NULL, NULL, w, sizeof(w), &wid));
	OK(cairn_domain_drop(st, "d"));
	OK(cairn_domain_create(st, "d"));
	CHECK_RC(cairn_token_check(st, w, strlen(w), &ti), CAIRN_EAUTH);
	OK(cairn_token_check(st, a, strlen(a), &ti)); /* the admin of every Domain still is */
	cairn_close(st);
}
