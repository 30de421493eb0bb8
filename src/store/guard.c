/*
 * cairn_exit_on_damage: a damaged data file ends the process with a message
 * instead of a crash.
 *
 * Opening checks what it reads (pages.c) and cairn_check every page, but a
 * read of a page no check has looked at still goes through LMDB, which
 * trusts the map: a broken page makes it fault or fail an assertion. With
 * the guard on, a SIGSEGV or SIGBUS whose address lies in a store's map (or
 * up to 4 GiB past it, where a broken length reaches) or whose instruction
 * is LMDB's, and an LMDB assertion, write one line saying the store is
 * damaged and what to do, and _exit. Any other fault goes to the handler
 * that was there before (the default, or a sanitizer's), as if the guard
 * were not.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <ucontext.h>
#include <unistd.h>

#include "store/store.h"

#define SLOTS 64
#define REACH ((uintptr_t)1 << 32)

static atomic_int guard_on;
static int guard_status;
static char guard_msg[512];
static size_t guard_len;
static uintptr_t lmdb_lo, lmdb_hi; /* LMDB's code */
static struct sigaction old_segv, old_bus;
static pthread_mutex_t slots_lock = PTHREAD_MUTEX_INITIALIZER; /* writers of slots */
static struct {
	_Atomic uintptr_t lo, hi;
	_Atomic(const cairn_store *) st;
} slots[SLOTS];

static uintptr_t fault_pc(const void *uc)
{
	const ucontext_t *u = uc;

#if defined(__x86_64__)
	return (uintptr_t)u->uc_mcontext.gregs[REG_RIP];
#elif defined(__aarch64__)
	return (uintptr_t)u->uc_mcontext.pc;
#else
	(void)u;
	return 0;
#endif
}

static void say_and_exit(void)
{
	ssize_t w = write(STDERR_FILENO, guard_msg, guard_len);

	(void)w;
	_exit(guard_status);
}

static void on_fault(int sig, siginfo_t *si, void *uc)
{
	uintptr_t a = (uintptr_t)si->si_addr, pc = fault_pc(uc);
	int damage = pc && pc >= lmdb_lo && pc < lmdb_hi;

	for (int i = 0; i < SLOTS && !damage; i++) {
		uintptr_t lo = atomic_load(&slots[i].lo), hi = atomic_load(&slots[i].hi);

		damage = hi && a >= lo && a < hi;
	}
	if (damage)
		say_and_exit();
	/* Not a store's: what was there before handles it when the access runs again. */
	sigaction(sig, sig == SIGBUS ? &old_bus : &old_segv, NULL);
}

void store_guard_assert(MDB_env *env, const char *msg)
{
	(void)env;
	(void)msg;
	if (atomic_load(&guard_on))
		say_and_exit();
}

/* The executable mapping of the file that holds LMDB's code. */
static void find_lmdb(void)
{
	Dl_info di;
	char line[4352];
	FILE *f;

	if (!dladdr((void *)mdb_cursor_get, &di) || !di.dli_fname || !(f = fopen("/proc/self/maps", "r")))
		return;
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;
		char perms[8];
		int at = 0;

		line[strcspn(line, "\n")] = '\0';
		if (sscanf(line, "%lx-%lx %7s %*s %*s %*s %n", &lo, &hi, perms, &at) < 3 || !at ||
		    !strchr(perms, 'x'))
			continue;
		if (strcmp(line + at, di.dli_fname) == 0 ||
		    (lo <= (uintptr_t)mdb_cursor_get && (uintptr_t)mdb_cursor_get < hi)) {
			lmdb_lo = lo;
			lmdb_hi = hi;
			break;
		}
	}
	fclose(f);
}

int cairn_exit_on_damage(int status, int json)
{
	struct sigaction sa;
	const char *m = "the store's data file is damaged: a read met a broken page. Run cairn "
			"check, then restore the store from a backup (docs/storage.md, section "
			"Damage)";

	if (atomic_load(&guard_on))
		return 0;
	guard_status = status;
	snprintf(guard_msg, sizeof(guard_msg),
		 json ? "{\"error\":{\"code\":\"corrupt\",\"message\":\"%s\"}}\n" : "cairn: %s (corrupt)\n", m);
	guard_len = strlen(guard_msg);
	find_lmdb();
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_fault;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGSEGV, &sa, &old_segv) || sigaction(SIGBUS, &sa, &old_bus))
		return CAIRN_EIO;
	atomic_store(&guard_on, 1);
	return 0;
}

void store_guard_track(cairn_store *st)
{
	uintptr_t lo;
	int free_slot = -1;

	if (!atomic_load(&guard_on) || !(lo = (uintptr_t)store_map_address(st)))
		return;
	pthread_mutex_lock(&slots_lock);
	for (int i = 0; i < SLOTS; i++) {
		const cairn_store *s = atomic_load(&slots[i].st);

		if (s == st) {
			free_slot = i;
			break;
		}
		if (!s && free_slot < 0)
			free_slot = i;
	}
	/* More stores open than slots: LMDB's own faults are still caught. */
	if (free_slot >= 0) {
		atomic_store(&slots[free_slot].st, st);
		atomic_store(&slots[free_slot].hi, 0);
		atomic_store(&slots[free_slot].lo, lo);
		atomic_store(&slots[free_slot].hi, lo + st->map_size + REACH);
	}
	pthread_mutex_unlock(&slots_lock);
}

void store_guard_untrack(cairn_store *st)
{
	pthread_mutex_lock(&slots_lock);
	for (int i = 0; i < SLOTS; i++)
		if (atomic_load(&slots[i].st) == st) {
			atomic_store(&slots[i].hi, 0);
			atomic_store(&slots[i].lo, 0);
			atomic_store(&slots[i].st, NULL);
		}
	pthread_mutex_unlock(&slots_lock);
}
