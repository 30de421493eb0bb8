/* Test runner: runs every registered test in its own process and scratch directory. */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests.h"

int test_failed;
static char scratch[512];
static char pathbuf[1024];

void test_fail(const char *file, int line, const char *expr)
{
	test_failed = 1;
	fprintf(stderr, "    %s:%d: check failed: %s\n", file, line, expr);
}

void test_fail_rc(const char *file, int line, const char *expr, int got, int want)
{
	test_failed = 1;
	fprintf(stderr, "    %s:%d: %s returned %s (%d), expected %s: %s\n", file, line, expr,
		cairn_errname(got), got, cairn_errname(want), cairn_errmsg());
}

const char *test_dir(void)
{
	return scratch;
}

const char *test_path(const char *name)
{
	snprintf(pathbuf, sizeof(pathbuf), "%s/%s", scratch, name);
	return pathbuf;
}

struct entry {
	const char *name;
	void (*fn)(void);
};

static const struct entry all[] = {
#define X(name) {#name, test_##name},
	TESTS(X)
#undef X
};

static int run_one(const struct entry *e, const char *base)
{
	pid_t pid;
	int status;
	char cmd[1200];

	snprintf(scratch, sizeof(scratch), "%s/%s", base, e->name);
	if (mkdir(scratch, 0755) != 0 && errno != EEXIST) {
		perror(scratch);
		return 1;
	}
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		e->fn();
		fflush(stderr);
		/* exit, not _exit: the leak checker runs at exit and fails the test on a leak. */
		exit(test_failed ? 1 : 0);
	}
	if (pid < 0 || waitpid(pid, &status, 0) < 0) {
		perror("fork");
		return 1;
	}
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", scratch);
	if (system(cmd) != 0)
		fprintf(stderr, "    could not remove %s\n", scratch);
	if (WIFSIGNALED(status)) {
		fprintf(stderr, "    killed by signal %d\n", WTERMSIG(status));
		return 1;
	}
	return WEXITSTATUS(status) != 0;
}

int main(int argc, char **argv)
{
	char base[] = "/tmp/cairn-test-XXXXXX";
	size_t n = sizeof(all) / sizeof(all[0]);
	int passed = 0, failed = 0;

	if (!mkdtemp(base)) {
		perror("mkdtemp");
		return 2;
	}
	for (size_t i = 0; i < n; i++) {
		int match = argc < 2;

		for (int a = 1; a < argc; a++)
			if (strstr(all[i].name, argv[a]))
				match = 1;
		if (!match)
			continue;
		if (run_one(&all[i], base)) {
			printf("FAIL %s\n", all[i].name);
			failed++;
		} else {
			printf("ok   %s\n", all[i].name);
			passed++;
		}
		fflush(stdout);
	}
	rmdir(base);
	printf("C tests: %d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
