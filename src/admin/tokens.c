/*
 * Access tokens: the secrets a server checks, each scoped to one Domain (or
 * every Domain, for an admin) and a role, and optionally to the branches it
 * may write. Only a SHA-256 hash of each secret is stored.
 *
 * A secret reads "cairn_<id>_<43 characters of base64url>": the id finds
 * the entry in one lookup, the 32 random bytes after it are the secret
 * proper. Entries live in the catalog of Domain 0: (0, 'T', id) -> hash,
 * role, revoked, created, the Domain's id and name, the branch pattern and
 * a label; (0, 'U') holds the next id. A token names its Domain by id as
 * well as by name, so that a Domain dropped and created again under the
 * same name is not reached by the old Domain's tokens.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/rand.h>

#include "store/store.h"
#include "base/buf.h"
#include "base/err.h"
#include "base/text.h"
#include "admin/admin.h"
#include "version/version.h"


static void tkey(kbuf *k, uint64_t id)
{
	kb_init(k);
	kb_be32(k, 0);
	kb_u8(k, CAT_TOKEN);
	kb_be64(k, id);
}

typedef struct tok {
	uint8_t hash[32];
	cairn_token_info info;
	uint32_t dom; /* 0 for every Domain */
} tok;

static int tok_decode(const MDB_val *v, uint64_t id, tok *t)
{
	rdr r;
	const uint8_t *h, *s;
	size_t n;

	memset(t, 0, sizeof(*t));
	rd_init(&r, v->mv_data, v->mv_size);
	h = rd_bytes(&r, 32);
	if (h)
		memcpy(t->hash, h, 32);
	t->info.id = id;
	t->info.role = rd_u8(&r);
	t->info.revoked = rd_u8(&r);
	t->info.created_ms = (int64_t)rd_be64(&r);
	t->dom = rd_be32(&r);
	s = rd_str(&r, &n);
	if (s && n < sizeof(t->info.domain))
		memcpy(t->info.domain, s, n);
	s = rd_str(&r, &n);
	if (s && n < sizeof(t->info.branches))
		memcpy(t->info.branches, s, n);
	s = rd_str(&r, &n);
	if (s && n < sizeof(t->info.label))
		memcpy(t->info.label, s, n);
	if (r.bad || t->info.role < CAIRN_ROLE_READER || t->info.role > CAIRN_ROLE_ADMIN)
		return err_set(CAIRN_ECORRUPT, "token %llu: bad entry", (unsigned long long)id);
	return 0;
}

static int tok_put(MDB_txn *txn, cairn_store *st, const tok *t)
{
	buf b = BUF_INIT;
	kbuf k;
	int rc;

	buf_put(&b, t->hash, 32);
	buf_put_u8(&b, (uint8_t)t->info.role);
	buf_put_u8(&b, (uint8_t)t->info.revoked);
	buf_put_be64(&b, (uint64_t)t->info.created_ms);
	buf_put_be32(&b, t->dom);
	buf_put_str(&b, t->info.domain, strlen(t->info.domain));
	buf_put_str(&b, t->info.branches, strlen(t->info.branches));
	buf_put_str(&b, t->info.label, strlen(t->info.label));
	if (b.oom) {
		buf_release(&b);
		return err_set(CAIRN_ENOMEM, "out of memory");
	}
	tkey(&k, t->info.id);
	rc = db_put(txn, st, DB_CATALOG, k.b, k.n, b.p, b.len, 0);
	buf_release(&b);
	return rc;
}

static int sha256_of(const void *p, size_t n, uint8_t out[32])
{
	sha256_ctx c;

	if (sha256_init(&c))
		return err_set(CAIRN_ENOMEM, "out of memory");
	sha256_update(&c, p, n);
	sha256_final(&c, out);
	return 0;
}

static void b64url(const uint8_t *in, size_t n, char *out)
{
	static const char tab[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
	size_t o = 0;
	uint32_t acc = 0;
	int bits = 0;

	for (size_t i = 0; i < n; i++) {
		acc = acc << 8 | in[i];
		bits += 8;
		while (bits >= 6) {
			bits -= 6;
			out[o++] = tab[(acc >> bits) & 63];
		}
	}
	if (bits)
		out[o++] = tab[(acc << (6 - bits)) & 63];
	out[o] = '\0';
}

/* Only letters, digits and a few signs in a pattern; '*' matches any run of characters. */
static int pattern_ok(const char *p)
{
	size_t n = strlen(p);

	if (n > CAIRN_MAX_BRANCH)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!((p[i] >= 'a' && p[i] <= 'z') || (p[i] >= 'A' && p[i] <= 'Z') ||
		      (p[i] >= '0' && p[i] <= '9') || strchr("_.-/*", p[i])))
			return 0;
	return 1;
}

/* What a token's creation needs in its transaction. */
struct token_new {
	const char *domain;
	tok t;
	const uint8_t *rnd;
	size_t n_rnd;
	char *secret;
	size_t cap;
};

static int token_new_txn(MDB_txn *txn, cairn_store *st, void *arg)
{
	struct token_new *a = arg;
	tok *t = &a->t;
	char enc[48];
	uint64_t next = 1;
	MDB_val v;
	kbuf k;
	int rc = 0;

	if (a->domain) {
		rc = domain_id(txn, st, a->domain, &t->dom);
		snprintf(t->info.domain, sizeof(t->info.domain), "%s", a->domain);
	}
	kb_init(&k);
	kb_be32(&k, 0);
	kb_u8(&k, CAT_TOKENN);
	if (!rc) {
		rc = db_get(txn, st, DB_CATALOG, k.b, k.n, &v);
		next = rc == 0 && v.mv_size == 8 ? be64_get(v.mv_data) : 1;
		rc = rc == CAIRN_ENOTFOUND ? 0 : rc;
	}
	if (!rc) {
		uint8_t nb[8];

		t->info.id = next;
		be64_put(nb, next + 1);
		rc = db_put(txn, st, DB_CATALOG, k.b, k.n, nb, 8, 0);
	}
	if (!rc) {
		b64url(a->rnd, a->n_rnd, enc);
		snprintf(a->secret, a->cap, "cairn_%llu_%s", (unsigned long long)t->info.id, enc);
		rc = sha256_of(a->secret, strlen(a->secret), t->hash);
		if (!rc)
			rc = tok_put(txn, st, t);
	}
	return rc;
}

int cairn_token_create(cairn_store *st, const char *domain, int role, const char *branches,
		       const char *label, char *secret, size_t cap, uint64_t *id)
{
	struct token_new tn;
	uint8_t rnd[32];
	tok t;
	int rc;

	if (!st || !secret || !id)
		return err_set(CAIRN_EINVAL, "cairn_token_create: NULL argument");
	if (cap < CAIRN_TOKEN_MAX)
		return err_set(CAIRN_EINVAL, "cairn_token_create: a secret needs %d bytes",
			       CAIRN_TOKEN_MAX);
	if (role < CAIRN_ROLE_READER || role > CAIRN_ROLE_ADMIN)
		return err_set(CAIRN_EINVAL, "a role is reader, writer or admin");
	if (!domain && role != CAIRN_ROLE_ADMIN)
		return err_set(CAIRN_EINVAL, "only an admin token may reach every Domain");
	if (branches && *branches && !pattern_ok(branches))
		return err_set(CAIRN_EINVAL,
			       "a branch pattern is up to %d characters of letters, digits, '_', "
			       "'.', '-', '/' and '*'",
			       CAIRN_MAX_BRANCH);
	if (label && strlen(label) >= sizeof(t.info.label))
		return err_set(CAIRN_ELIMIT, "a token label is at most %zu bytes",
			       sizeof(t.info.label) - 1);
	if (label && !utf8_valid(label, strlen(label)))
		return err_set(CAIRN_EUTF8, "a token label is UTF-8");
	if (RAND_bytes(rnd, sizeof(rnd)) != 1)
		return err_set(CAIRN_EIO, "no random bytes for a token");
	memset(&t, 0, sizeof(t));
	t.info.role = role;
	t.info.created_ms = time_now_ms();
	snprintf(t.info.branches, sizeof(t.info.branches), "%s", branches ? branches : "");
	snprintf(t.info.label, sizeof(t.info.label), "%s", label ? label : "");
	tn = (struct token_new){domain, t, rnd, sizeof(rnd), secret, cap};
	rc = store_write(st, token_new_txn, &tn);
	t = tn.t;
	OPENSSL_cleanse(rnd, sizeof(rnd));
	if (rc) {
		OPENSSL_cleanse(secret, cap);
		return rc;
	}
	*id = t.info.id;
	return 0;
}

int cairn_token_check(cairn_store *st, const char *secret, size_t len, cairn_token_info *out)
{
	unsigned long long id;
	uint8_t h[32];
	char idtext[24];
	const char *us;
	MDB_txn *txn;
	MDB_val v;
	kbuf k;
	tok t;
	int rc;

	if (!st || !out || (!secret && len))
		return err_set(CAIRN_EINVAL, "cairn_token_check: NULL argument");
	/* "cairn_<id>_<secret>": the id up to the second underscore. */
	if (len < 8 || len >= CAIRN_TOKEN_MAX || memcmp(secret, "cairn_", 6) != 0 ||
	    !(us = memchr(secret + 6, '_', len - 6)) || us == secret + 6 ||
	    (size_t)(us - secret - 6) >= sizeof(idtext))
		return err_set(CAIRN_EAUTH, "not a Cairn token");
	memcpy(idtext, secret + 6, (size_t)(us - secret - 6));
	idtext[us - secret - 6] = '\0';
	if (strspn(idtext, "0123456789") != strlen(idtext) || sscanf(idtext, "%llu", &id) != 1)
		return err_set(CAIRN_EAUTH, "not a Cairn token");
	if ((rc = sha256_of(secret, len, h)) || (rc = store_read_begin(st, &txn)))
		return rc;
	tkey(&k, id);
	rc = db_get(txn, st, DB_CATALOG, k.b, k.n, &v);
	if (!rc)
		rc = tok_decode(&v, id, &t);
	/* The Domain must still be the one the token was made for. */
	if (!rc && t.dom) {
		uint32_t dom;

		if (domain_id(txn, st, t.info.domain, &dom) || dom != t.dom)
			t.info.revoked = 1;
	}
	store_read_end(st, txn);
	if (rc == CAIRN_ENOTFOUND)
		return err_set(CAIRN_EAUTH, "unknown token");
	if (rc)
		return rc;
	if (CRYPTO_memcmp(h, t.hash, 32) != 0)
		return err_set(CAIRN_EAUTH, "unknown token");
	if (t.info.revoked)
		return err_set(CAIRN_EAUTH, "the token was revoked, or its Domain dropped");
	*out = t.info;
	return 0;
}

static int revoke_txn(MDB_txn *txn, cairn_store *st, void *arg)
{
	uint64_t id = *(const uint64_t *)arg;
	MDB_val v;
	kbuf k;
	tok t;
	int rc;

	tkey(&k, id);
	rc = db_get(txn, st, DB_CATALOG, k.b, k.n, &v);
	if (rc == CAIRN_ENOTFOUND)
		return err_set(CAIRN_ENOTFOUND, "no token %llu", (unsigned long long)id);
	if (rc || (rc = tok_decode(&v, id, &t)))
		return rc;
	t.info.revoked = 1;
	return tok_put(txn, st, &t);
}

int cairn_token_revoke(cairn_store *st, uint64_t id)
{
	if (!st)
		return err_set(CAIRN_EINVAL, "cairn_token_revoke: NULL argument");
	return store_write(st, revoke_txn, &id);
}

int cairn_token_list(cairn_store *st, int (*cb)(void *ctx, const cairn_token_info *t), void *ctx)
{
	MDB_cursor *cur;
	MDB_txn *txn;
	MDB_val k, v;
	kbuf p;
	int mrc, rc = 0;

	if (!st || !cb)
		return err_set(CAIRN_EINVAL, "cairn_token_list: NULL argument");
	if ((rc = store_read_begin(st, &txn)))
		return rc;
	kb_init(&p);
	kb_be32(&p, 0);
	kb_u8(&p, CAT_TOKEN);
	mrc = mdb_cursor_open(txn, st->dbi[DB_CATALOG], &cur);
	if (mrc) {
		store_read_end(st, txn);
		return store_err(mrc, "catalog");
	}
	k.mv_data = p.b;
	k.mv_size = p.n;
	for (mrc = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE); mrc == 0 && !rc;
	     mrc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
		tok t;

		if (k.mv_size != p.n + 8 || memcmp(k.mv_data, p.b, p.n) != 0)
			break;
		rc = tok_decode(&v, be64_get((uint8_t *)k.mv_data + p.n), &t);
		if (!rc)
			rc = cb(ctx, &t.info);
	}
	mdb_cursor_close(cur);
	store_read_end(st, txn);
	if (rc)
		return rc;
	return mrc && mrc != MDB_NOTFOUND ? store_err(mrc, "catalog") : 0;
}
