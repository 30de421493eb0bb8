#!/bin/sh
# A write that waits for another process's: while a helper
# (tests/shim/holdwriter.c) holds the store's writer lock, as a server or an
# import does while it writes, `cairn put` says it is waiting for another
# writer (after a second, once), then completes when the lock is let go.
# The test waits on what the two processes report, not on a clock.
set -u
cd "$(dirname "$0")/../.." || exit 2
CAIRN=${CAIRN:-$PWD/build/san/cairn}
T=$(mktemp -d)
trap 'exec 3>&- 2>/dev/null; kill "$put" "$hold" 2>/dev/null; rm -rf "$T"' EXIT
put= hold=
fails=0
ok() { printf 'ok   %s\n' "$1"; }
bad() {
	printf 'FAIL %s: %s\n' "$1" "$2"
	fails=$((fails + 1))
}

if ! ${CC:-cc} -o "$T/holdwriter" tests/shim/holdwriter.c -llmdb 2>"$T/cc"; then
	bad "the helper builds" "$(cat "$T/cc")"
	exit 1
fi
export CAIRN_STORE="$T/store" CAIRN_DOMAIN=d
echo '{"kinds":[{"name":"Note"}]}' >"$T/schema.json"
"$CAIRN" init >/dev/null && "$CAIRN" schema apply "$T/schema.json" >/dev/null || bad "setup" "init"

mkfifo "$T/in" "$T/said"
"$T/holdwriter" "$T/store" <"$T/in" >"$T/said" &
hold=$!
exec 3>"$T/in"
said=$(timeout 300 sh -c 'IFS= read -r l; printf "%s" "$l"' <"$T/said")
[ "$said" = holding ] || bad "the helper holds the lock" "it said '$said'"
"$CAIRN" put Note waited --title W 3>&- >"$T/out" 2>"$T/err" &
put=$!
# Until the waiting command says so (each look is a read of its stderr).
i=0
until grep -q '"waiting":{"for":"another writer"' "$T/err" 2>/dev/null || [ $i -ge 200000 ]; do
	i=$((i + 1))
	kill -0 "$put" 2>/dev/null || break
done
if grep -q '"waiting":{"for":"another writer","since":"' "$T/err" && [ ! -s "$T/out" ]; then
	ok "a write that waits for another writer says so, and has not written"
else
	bad "the waiting write" "stdout: $(cat "$T/out") stderr: $(cat "$T/err")"
fi
exec 3>&- # the helper lets go of the lock
wait "$hold"
wait "$put"
rc=$?
if [ "$rc" = 0 ] && grep -q '"revision"' "$T/out" && [ "$(grep -c waiting "$T/err")" = 1 ] &&
	"$CAIRN" get Note waited >/dev/null 2>&1; then
	ok "once the other writer lets go, the write completes; it said it waited once"
else
	bad "after the wait" "exit $rc, stdout: $(cat "$T/out") stderr: $(cat "$T/err")"
fi
put= hold=
[ "$fails" = 0 ]
