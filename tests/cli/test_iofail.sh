#!/bin/sh
# I/O errors at every write and sync of a commit: a preloaded shim
# (tests/shim/iofail.c) counts the calls a commit makes on the data file
# (write, pwrite, writev, fsync, fdatasync) and fails the one numbered
# CAIRN_IOFAIL_AT with EIO. For each in turn, through the CLI and through a
# running server: the commit fails with io_error (CLI exit 1, HTTP 500)
# saying the disk reported an error and nothing was kept; nothing of it is
# in the store; every commit acknowledged before is; the store checks
# clean; and the next commit works, in the same server, without a restart
# (LMDB's environment, dead after a failed meta page write, is opened again).
set -u
cd "$(dirname "$0")/../.." || exit 2
CAIRN=${CAIRN:-$PWD/build/san/cairn}
T=$(mktemp -d)
trap 'kill "$(cat "$T/serve.pid" 2>/dev/null)" 2>/dev/null; rm -rf "$T"' EXIT
fails=0
ok() { printf 'ok   %s\n' "$1"; }
bad() {
	printf 'FAIL %s: %s\n' "$1" "$2"
	fails=$((fails + 1))
}

if ! ${CC:-cc} -shared -fPIC -o "$T/iofail.so" tests/shim/iofail.c -ldl 2>"$T/cc"; then
	bad "the shim builds" "$(cat "$T/cc")"
	exit 1
fi
export ASAN_OPTIONS="${ASAN_OPTIONS:-}:verify_asan_link_order=0"
export CAIRN_STORE="$T/store" CAIRN_DOMAIN=d
echo '{"kinds":[{"name":"Note","attributes":[{"name":"n","type":"int"}]}]}' >"$T/schema.json"
{ "$CAIRN" init && "$CAIRN" schema apply "$T/schema.json" && "$CAIRN" put Note kept --values '{"n":1}'; } \
	>/dev/null 2>"$T/err" || bad "setup" "$(cat "$T/err")"

# How many calls one durable put makes on the data file.
CAIRN_IOFAIL_COUNT="$T/count" LD_PRELOAD="$T/iofail.so" "$CAIRN" put Note counted --values '{"n":2}' >/dev/null
calls=$(cat "$T/count" 2>/dev/null || echo 0)
[ "$calls" -ge 3 ] || bad "a put's calls are counted" "$calls"

refused=0 other=0
k=1
while [ "$k" -le "$calls" ]; do
	CAIRN_IOFAIL_AT=$k LD_PRELOAD="$T/iofail.so" "$CAIRN" put Note "f$k" --values '{"n":3}' >/dev/null 2>"$T/err"
	rc=$?
	if [ $rc = 1 ] && grep -q '"code":"io_error"' "$T/err" && grep -q 'the disk reported an I/O error' "$T/err" &&
		grep -q 'nothing of this write was kept' "$T/err"; then
		refused=$((refused + 1))
	else
		other=$((other + 1))
		bad "CLI, call $k of $calls fails" "exit $rc: $(cat "$T/err")"
	fi
	"$CAIRN" get Note "f$k" >/dev/null 2>&1 && bad "CLI, call $k" "the refused Record is there"
	"$CAIRN" get Note kept >/dev/null 2>&1 || bad "CLI, call $k" "an acknowledged Record is gone"
	"$CAIRN" check >"$T/out" 2>&1 || bad "CLI, call $k" "the store does not check clean: $(cat "$T/out")"
	k=$((k + 1))
done
[ $refused = "$calls" ] && ok "CLI: each of a put's $calls writes and syncs failing: io_error, exit 1, nothing kept, the store intact"

# A server: its start's calls counted, then each call of its first commit failed in turn.
TOKEN=$("$CAIRN" token create --role writer --domain d)
start() { # start [AT]: a server with the shim; sets PORT
	rm -f "$T/serve.fifo"
	mkfifo "$T/serve.fifo"
	CAIRN_IOFAIL_AT=${1:-0} CAIRN_IOFAIL_COUNT="$T/scount" LD_PRELOAD="$T/iofail.so" \
		"$CAIRN" serve --listen 127.0.0.1:0 --model none 2>"$T/serve.fifo" &
	echo "$!" >"$T/serve.pid"
	# The address it reports once it listens (the timeout guards a hang only).
	line=$(timeout 300 sh -c 'IFS= read -r l; printf "%s" "$l"' <"$T/serve.fifo")
	PORT=${line##*127.0.0.1:}
	PORT=${PORT%%/*}
	cat "$T/serve.fifo" >/dev/null &
}
halt() {
	kill "$(cat "$T/serve.pid")" 2>/dev/null
	wait "$(cat "$T/serve.pid")" 2>/dev/null
	rm -f "$T/serve.pid"
}
commit() {
	curl -s -o "$T/body" -w '%{http_code}' -H "Authorization: Bearer $TOKEN" \
		-d "{\"changes\":[{\"kind\":\"Note\",\"key\":\"$1\",\"values\":{\"n\":4}}]}" \
		"http://127.0.0.1:$PORT/v1/domains/d/commits"
}
start
halt
scalls=$(cat "$T/scount" 2>/dev/null || echo 0)
served=0
k=1
while [ "$k" -le "$calls" ]; do
	start $((scalls + k))
	first=$(commit "s$k")
	first_body=$(cat "$T/body")
	second=$(commit "t$k")
	halt
	if [ "$first" = 500 ] && printf '%s' "$first_body" | grep -q '"code":"io_error"' && [ "$second" = 201 ]; then
		served=$((served + 1))
	else
		bad "server, call $k of the commit fails" "$first ($first_body) then $second: $(cat "$T/body")"
	fi
	"$CAIRN" get Note "s$k" >/dev/null 2>&1 && bad "server, call $k" "the refused Record is there"
	"$CAIRN" get Note "t$k" >/dev/null 2>&1 || bad "server, call $k" "the next, acknowledged, Record is not there"
	k=$((k + 1))
done
"$CAIRN" check >"$T/out" 2>&1 || bad "server, after" "the store does not check clean: $(cat "$T/out")"
[ $served = "$calls" ] &&
	ok "server: each of a commit's $calls writes and syncs failing: 500 io_error, then the next commit 201 without a restart"
[ "$fails" = 0 ]
