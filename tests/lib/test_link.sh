#!/bin/sh
# The installed libraries link cleanly: libcairn.a and libcairn.so define no
# global symbol but cairn_*, a program with its own internal-sounding names
# (analyze, db_get, err_set, ...) links and runs against the static archive,
# and cairn_version() agrees with the header it was compiled with.
# Run as sh tests/lib/test_link.sh BUILD_DIR (build/san or build/rel).
set -u
B=${1:-build/san}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
ok() { echo "ok   $1"; }
bad() { echo "FAIL $1: $2"; }
LIBS="-llmdb -lcrypto -lxxhash -lutf8proc -lstemmer -lpthread -lm"
case "$B" in *san*) SAN="-fsanitize=address,undefined" ;; *) SAN="" ;; esac

# Every global symbol the archive defines, and every one the shared library exports.
nm -g --defined-only "$B/libcairn.a" 2>/dev/null | awk 'NF == 3 { print $3 }' | sort -u >"$T/a"
if [ ! -s "$T/a" ]; then
	bad "libcairn.a: global symbols" "none read (is $B/libcairn.a built?)"
elif grep -v '^cairn_' "$T/a" >"$T/a.bad"; then
	bad "libcairn.a: only cairn_* global" "$(wc -l <"$T/a.bad") others, e.g. $(head -3 "$T/a.bad" | tr '\n' ' ')"
else
	ok "libcairn.a: only cairn_* global ($(wc -l <"$T/a") symbols)"
fi
nm -D --defined-only "$B/libcairn.so" 2>/dev/null | awk 'NF == 3 && $2 ~ /[TDBRVW]/ { print $3 }' |
	grep -v '^_init$\|^_fini$' | sort -u >"$T/so"
if [ ! -s "$T/so" ]; then
	bad "libcairn.so: exported symbols" "none read (is $B/libcairn.so built?)"
elif grep -v '^cairn_' "$T/so" >"$T/so.bad"; then
	bad "libcairn.so: only cairn_* exported" "$(head -3 "$T/so.bad" | tr '\n' ' ')"
elif ! cmp -s "$T/a" "$T/so"; then
	bad "libcairn.so: the same symbols as libcairn.a" "$(diff "$T/a" "$T/so" | head -4 | tr '\n' ' ')"
else
	ok "libcairn.so: exports the same $(wc -l <"$T/so") cairn_* symbols"
fi

# A program whose own functions bear the engine's internal names.
cat >"$T/app.c" <<'C'
#include <stdio.h>
#include <string.h>
#include "cairn.h"

int analyze(void);
int db_get(void);
int err_set(void);
int store_open(void);
int jv_parse(void);
int analyze(void) { return 1; }
int db_get(void) { return 2; }
int err_set(void) { return 3; }
int store_open(void) { return 4; }
int jv_parse(void) { return 5; }

int main(int argc, char **argv)
{
	cairn_store *st;
	cairn_open_options o = {.flags = CAIRN_OPEN_CREATE | CAIRN_OPEN_NOSYNC};
	int rc;

	(void)argc;
	if (strcmp(cairn_version(), CAIRN_VERSION_STRING) != 0 ||
	    cairn_version_number() != CAIRN_VERSION_NUMBER) {
		printf("version %s (%d), header %s\n", cairn_version(), cairn_version_number(),
		       CAIRN_VERSION_STRING);
		return 1;
	}
	if ((rc = cairn_open(argv[1], &o, &st))) {
		printf("open: %s %s\n", cairn_errname(rc), cairn_errmsg());
		return 1;
	}
	rc = cairn_domain_create(st, "d");
	cairn_close(st);
	if (rc) {
		printf("domain: %s %s\n", cairn_errname(rc), cairn_errmsg());
		return 1;
	}
	printf("%d\n", analyze() + db_get() + err_set() + store_open() + jv_parse());
	return 0;
}
C
if ! cc -std=c11 -Wall -Wextra -Werror $SAN -Iinclude -o "$T/app" "$T/app.c" "$B/libcairn.a" \
	$LIBS >"$T/log" 2>&1; then
	bad "a program with its own analyze, db_get, err_set links with libcairn.a" "$(head -3 "$T/log")"
elif [ "$("$T/app" "$T/store" 2>&1)" != 15 ]; then
	bad "that program runs on its own functions and Cairn's" "$("$T/app" "$T/store" 2>&1 | head -2)"
else
	ok "a program with its own analyze, db_get, err_set links with libcairn.a and runs"
fi
V=$(sed -n 's/^#define CAIRN_VERSION_STRING "\(.*\)"/\1/p' include/cairn.h)
if grep -q "^Version: $V\$" "$B/cairn.pc" 2>/dev/null; then
	ok "cairn.pc: Version $V, from cairn.h"
else
	bad "cairn.pc: Version" "expected $V"
fi
