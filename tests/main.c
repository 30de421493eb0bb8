/*
 * Test runner: runs every registered test (or those whose names contain one
 * of the arguments) in a process of its own with a scratch directory of its
 * own, up to CAIRN_TEST_JOBS tests at once (default: the number of online
 * CPUs; 1 runs them one after the other). What a test writes goes to a file
 * of its own, printed to stderr, whole, when the test ends, followed by its
 * line "ok   NAME" or "FAIL NAME" on stdout; tests end in any order. The
 * last line is "C tests: N passed, N failed". The tests that take longest
 * (slow[] below) start first, so that none of them is left running alone at
 * the end.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
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

/* The tests that take longest (a third of the time is the first), in the order they start. */
static const char *const slow[] = {"search_reference", "timetravel_reference", "timetravel_kseg",
				   "timetravel_compact", "query_reference", "crash_vindex",
				   "vindex_recall"};

/* A test that runs: its process, and the file its output goes to. */
struct job {
	const struct entry *e;
	pid_t pid;
	char dir[512], out[600];
};

/* The number of tests to run at once: CAIRN_TEST_JOBS, else the online CPUs; 0 if invalid. */
static int jobs_wanted(void)
{
	const char *v = getenv("CAIRN_TEST_JOBS");
	long n;

	if (v && *v) {
		char *end;

		errno = 0;
		n = strtol(v, &end, 10);
		return *end || errno || n < 1 || n > 1024 ? 0 : (int)n;
	}
	n = sysconf(_SC_NPROCESSORS_ONLN);
	return n < 1 ? 1 : n > 1024 ? 1024 : (int)n;
}

static int remove_one(const char *path, const struct stat *sb, int type, struct FTW *ftw)
{
	(void)sb;
	(void)type;
	(void)ftw;
	return remove(path);
}

/* Remove a directory and everything in it: 0, or -1 (errno set). */
static int remove_tree(const char *dir)
{
	return nftw(dir, remove_one, 16, FTW_DEPTH | FTW_PHYS);
}

/*
 * Start test e in a child process, its scratch directory base/NAME and its
 * output (stdout and stderr) in base/NAME.out: 0, or -1 with the reason
 * printed.
 */
static int start(struct job *j, const struct entry *e, const char *base)
{
	int fd;

	j->e = e;
	snprintf(j->dir, sizeof(j->dir), "%s/%s", base, e->name);
	snprintf(j->out, sizeof(j->out), "%s.out", j->dir);
	if (mkdir(j->dir, 0755) != 0 && errno != EEXIST) {
		perror(j->dir);
		return -1;
	}
	fd = open(j->out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		perror(j->out);
		return -1;
	}
	fflush(stdout);
	fflush(stderr);
	j->pid = fork();
	if (j->pid == 0) {
		if (dup2(fd, 1) < 0 || dup2(fd, 2) < 0)
			_exit(2);
		snprintf(scratch, sizeof(scratch), "%s", j->dir);
		e->fn();
		fflush(stdout);
		fflush(stderr);
		/* exit, not _exit: the leak checker runs at exit and fails the test on a leak. */
		exit(test_failed ? 1 : 0);
	}
	close(fd);
	if (j->pid < 0) {
		perror("fork");
		j->pid = 0;
		remove_tree(j->dir);
		remove(j->out);
		return -1;
	}
	return 0;
}

/*
 * Test j's process ended with status: print its output and how it ended to
 * stderr, remove its files, and return 1 if it failed.
 */
static int finish(struct job *j, int status)
{
	char buf[8192];
	size_t n;
	FILE *f = fopen(j->out, "r");

	if (f) {
		while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
			fwrite(buf, 1, n, stderr);
		fclose(f);
	} else {
		fprintf(stderr, "    could not read the output of %s\n", j->e->name);
	}
	if (WIFSIGNALED(status))
		fprintf(stderr, "    killed by signal %d\n", WTERMSIG(status));
	fflush(stderr);
	if (remove_tree(j->dir) != 0 || remove(j->out) != 0)
		fprintf(stderr, "    could not remove %s\n", j->dir);
	return WIFSIGNALED(status) || WEXITSTATUS(status) != 0;
}

/*
 * Fill order[] with the indexes of all[]: the tests of slow[] first, then the
 * others in the order of the list.
 */
static void start_order(size_t *order, size_t n)
{
	size_t k = 0, ns = sizeof(slow) / sizeof(slow[0]);

	for (size_t s = 0; s < ns; s++)
		for (size_t i = 0; i < n; i++)
			if (strcmp(all[i].name, slow[s]) == 0)
				order[k++] = i;
	for (size_t i = 0; i < n; i++) {
		size_t s = 0;

		while (s < ns && strcmp(all[i].name, slow[s]) != 0)
			s++;
		if (s == ns)
			order[k++] = i;
	}
}

/* 1 if test e is to run: no arguments, or its name contains one of them. */
static int selected(const struct entry *e, int argc, char **argv)
{
	for (int a = 1; a < argc; a++)
		if (strstr(e->name, argv[a]))
			return 1;
	return argc < 2;
}

int main(int argc, char **argv)
{
	char base[] = "/tmp/cairn-test-XXXXXX";
	size_t n = sizeof(all) / sizeof(all[0]), next = 0;
	int passed = 0, failed = 0, running = 0, jobs = jobs_wanted();
	size_t order[sizeof(all) / sizeof(all[0])];
	struct job *slot;

	if (jobs == 0) {
		fprintf(stderr, "CAIRN_TEST_JOBS: a number of tests from 1 to 1024, not \"%s\"\n",
			getenv("CAIRN_TEST_JOBS"));
		return 2;
	}
	slot = calloc((size_t)jobs, sizeof(*slot));
	if (!slot || !mkdtemp(base)) {
		perror(slot ? "mkdtemp" : "calloc");
		free(slot);
		return 2;
	}
	start_order(order, n);
	while (next < n || running) {
		int status, k;
		pid_t pid;

		/* Fill the free slots with the next tests selected. */
		for (k = 0; k < jobs && next < n; k++) {
			if (slot[k].pid)
				continue;
			while (next < n && !selected(&all[order[next]], argc, argv))
				next++;
			if (next == n)
				break;
			if (start(&slot[k], &all[order[next]], base) == 0) {
				running++;
			} else {
				printf("FAIL %s\n", all[order[next]].name);
				failed++;
			}
			next++;
		}
		if (!running)
			continue;
		pid = waitpid(-1, &status, 0);
		if (pid < 0) {
			if (errno == EINTR)
				continue;
			perror("waitpid");
			break;
		}
		for (k = 0; k < jobs && slot[k].pid != pid; k++)
			;
		if (k == jobs)
			continue; /* not a test's process */
		if (finish(&slot[k], status)) {
			printf("FAIL %s\n", slot[k].e->name);
			failed++;
		} else {
			printf("ok   %s\n", slot[k].e->name);
			passed++;
		}
		fflush(stdout);
		slot[k].pid = 0;
		running--;
	}
	free(slot);
	if (rmdir(base) != 0)
		fprintf(stderr, "could not remove %s\n", base);
	printf("C tests: %d passed, %d failed\n", passed, failed);
	return failed || running ? 1 : 0;
}
