/* The cairn command: access tokens for the server (docs/cli.md, "token"). Uses only cairn.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"

/* FILE for --out, readable by its owner only (0600 even if it was not); -1 after saying why. */
static int secret_file(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);

	if (fd < 0 || fchmod(fd, 0600)) {
		fprintf(stderr, "cairn: token: %s: %s (nothing was made)\n", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

static const char *const role_name[] = {"?", "reader", "writer", "admin"};

static int print_token(void *ctx, const cairn_token_info *t)
{
	cli *c = ctx;
	const char *role = t->role >= 1 && t->role <= 3 ? role_name[t->role] : "?";

	if (c->json) {
		printf("{\"id\":%llu,\"domain\":", (unsigned long long)t->id);
		if (*t->domain)
			out_str(stdout, t->domain, strlen(t->domain));
		else
			printf("null");
		printf(",\"role\":\"%s\",\"branches\":", role);
		if (*t->branches)
			out_str(stdout, t->branches, strlen(t->branches));
		else
			printf("null");
		printf(",\"label\":");
		out_str(stdout, t->label, strlen(t->label));
		printf(",\"created\":\"");
		out_time(stdout, t->created_ms);
		printf("\",\"revoked\":%s}\n", t->revoked ? "true" : "false");
	} else {
		printf("%-5llu %-8s %-20s %-24s %s%s\n", (unsigned long long)t->id, role,
		       *t->domain ? t->domain : "(every Domain)", *t->branches ? t->branches : "*",
		       t->label, t->revoked ? "  (revoked)" : "");
	}
	return 0;
}

/*
 * token create --role R [--domain D | --domain '*'] [--branches PATTERN] [--label TEXT]:
 * prints the new token's secret alone on stdout (it is not shown again).
 * token list; token revoke ID.
 */
int cmd_token(cli *c)
{
	const char *sub = c->nargs ? c->args[0] : "";
	cairn_store *st;
	int rc = 0, ex;

	if (strcmp(sub, "create") == 0 && c->nargs == 1) {
		char secret[CAIRN_TOKEN_MAX];
		int role = 0, fd = -1;
		uint64_t id;
		size_t len;

		for (int i = 1; i <= 3 && c->role; i++)
			if (strcmp(c->role, role_name[i]) == 0)
				role = i;
		if (!role)
			return cli_usage("token create --role reader|writer|admin [--domain D|'*'] "
					 "[--branches PATTERN] [--label TEXT] [--out FILE]");
		if ((ex = cli_open(c, 0, &st)))
			return ex;
		if (c->out && (fd = secret_file(c->out)) < 0) {
			cairn_close(st);
			return EXIT_FAIL;
		}
		rc = cairn_token_create(st, strcmp(c->domain, "*") == 0 ? NULL : c->domain, role,
					c->branches, c->label, secret, sizeof(secret), &id);
		cairn_close(st);
		if (rc) {
			if (fd >= 0) {
				close(fd);
				unlink(c->out);
			}
			return cli_fail(c, rc, "token");
		}
		if (fd >= 0) {
			len = strlen(secret);
			secret[len] = '\n';
			if (write(fd, secret, len + 1) != (ssize_t)(len + 1) || close(fd)) {
				fprintf(stderr,
					"cairn: token: %s: %s (token %llu was made: revoke it)\n",
					c->out, strerror(errno), (unsigned long long)id);
				memset(secret, 0, sizeof(secret));
				return EXIT_FAIL;
			}
			if (c->json)
				printf("{\"id\":%llu,\"out\":", (unsigned long long)id);
			else
				printf("token %llu: its secret is in ", (unsigned long long)id);
			out_str(stdout, c->out, strlen(c->out));
			printf(c->json ? "}\n" : " (readable by you alone)\n");
		} else {
			printf("%s\n", secret);
		}
		memset(secret, 0, sizeof(secret));
		if (c->tty_err)
			fprintf(stderr, "token %llu made; its secret is shown only this once\n",
				(unsigned long long)id);
		return 0;
	}
	if (strcmp(sub, "list") == 0 && c->nargs == 1) {
		if ((ex = cli_open(c, 0, &st)))
			return ex;
		rc = cairn_token_list(st, print_token, c);
		cairn_close(st);
		return rc ? cli_fail(c, rc, "token") : 0;
	}
	if (strcmp(sub, "revoke") == 0 && c->nargs == 2) {
		char *end;
		unsigned long long id = strtoull(c->args[1], &end, 10);

		if (!*c->args[1] || *end)
			return cli_usage("token revoke ID");
		if ((ex = cli_open(c, 0, &st)))
			return ex;
		rc = cairn_token_revoke(st, id);
		cairn_close(st);
		if (rc)
			return cli_fail(c, rc, "token");
		if (c->json)
			printf("{\"token\":%llu,\"revoked\":true}\n", id);
		else
			printf("token %llu revoked\n", id);
		return 0;
	}
	return cli_usage("token create --role R [--domain D|'*'] [--branches P] [--label T] | "
			 "token list | token revoke ID");
}
