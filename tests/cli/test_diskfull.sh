#!/bin/sh
# A full disk, for the CLI and a running server: a preloaded shim
# (tests/shim/nospace.c) makes the writes to the store's data file fail as a
# full disk makes them fail, with ENOSPC or with a short write while nothing
# is free, for as long as a flag file exists. Each refused write is
# store_full (exit 1, HTTP 507) saying the disk is full and what to do;
# nothing acknowledged is lost, nothing refused is there, the store checks
# clean, and writes work again once there is room, without a restart. An
# I/O error on a disk with room stays io_error.
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

if ! ${CC:-cc} -shared -fPIC -o "$T/nospace.so" tests/shim/nospace.c -ldl 2>"$T/cc"; then
	bad "the shim builds" "$(cat "$T/cc")"
	exit 1
fi
# The sanitizers' runtime comes first unless told it need not.
export ASAN_OPTIONS="${ASAN_OPTIONS:-}:verify_asan_link_order=0"
export CAIRN_STORE="$T/store" CAIRN_DOMAIN=d CAIRN_NOSPACE_FLAG="$T/full"
full() { printf '%s' "$1" >"$T/full"; }
room() { rm -f "$T/full"; }
shimmed() { LD_PRELOAD="$T/nospace.so" "$CAIRN" "$@" >"$T/out" 2>"$T/err"; rc=$?; }
plain() { "$CAIRN" "$@" >"$T/out" 2>"$T/err"; rc=$?; }

echo '{"kinds":[{"name":"Note","attributes":[{"name":"n","type":"int"}]}]}' >"$T/schema.json"
plain init && plain schema apply "$T/schema.json" && plain put Note kept --values '{"n":1}'
[ "$rc" = 0 ] || bad "setup" "$(cat "$T/err")"

for how in e:ENOSPC s:'a short write with nothing free'; do
	full "${how%%:*}"
	shimmed put Note lost --values '{"n":2}'
	if [ "$rc" = 1 ] && grep -q '"code":"store_full"' "$T/err" &&
		grep -q 'the disk holding the store is full' "$T/err" && grep -q 'free space there' "$T/err"; then
		ok "CLI, ${how#*:}: store_full, exit 1, saying the disk is full and what to do"
	else
		bad "CLI, ${how#*:}" "exit $rc: $(cat "$T/err")"
	fi
done
full i
shimmed put Note lost --values '{"n":3}'
if [ "$rc" = 1 ] && grep -q '"code":"io_error"' "$T/err"; then
	ok "CLI, an I/O error on a disk with room: io_error, not store_full"
else
	bad "CLI, an I/O error with room" "exit $rc: $(cat "$T/err")"
fi
room
plain get Note lost
lost_rc=$rc
plain check
if [ "$lost_rc" = 3 ] && [ "$rc" = 0 ] && grep -q '"problems":0' "$T/out"; then
	ok "after the refusals: nothing refused was written, the store checks clean"
else
	bad "after the refusals" "get exit $lost_rc, check exit $rc: $(cat "$T/out" "$T/err")"
fi

# A server: a commit acknowledged, then the disk full (507), then room again.
TOKEN=$("$CAIRN" token create --role writer --domain d)
mkfifo "$T/serve.fifo" && exec 3<>"$T/serve.fifo"
LD_PRELOAD="$T/nospace.so" "$CAIRN" serve --listen 127.0.0.1:0 2>"$T/serve.fifo" &
echo "$!" >"$T/serve.pid"
# The address it reports once it listens (the timeout guards a hang only).
line=$(timeout 300 sh -c 'IFS= read -r l; printf "%s" "$l"' <&3)
PORT=${line##*127.0.0.1:}
PORT=${PORT%%/*}
commit() {
	curl -s -o "$T/body" -w '%{http_code}' -H "Authorization: Bearer $TOKEN" \
		-d "{\"changes\":[{\"kind\":\"Note\",\"key\":\"$1\",\"values\":{\"n\":4}}]}" \
		"http://127.0.0.1:$PORT/v1/domains/d/commits"
}
first=$(commit before)
full s
during=$(commit during)
during_body=$(cat "$T/body")
room
after=$(commit after)
if [ "$first" = 201 ] && [ "$during" = 507 ] && [ "$after" = 201 ] &&
	printf '%s' "$during_body" | grep -q '"code":"store_full"'; then
	ok "server: 201, then 507 store_full while the disk is full, then 201 again without a restart"
else
	bad "server" "$first / $during ($during_body) / $after: $(cat "$T/body")"
fi
kill "$(cat "$T/serve.pid")" 2>/dev/null
wait "$(cat "$T/serve.pid")" 2>/dev/null
rm -f "$T/serve.pid"
plain export
if grep -q '"key":"before"' "$T/out" && grep -q '"key":"after"' "$T/out" &&
	! grep -q '"key":"during"' "$T/out" && "$CAIRN" check >/dev/null 2>&1; then
	ok "server: every acknowledged commit kept, the refused one absent, the store checks clean"
else
	bad "server, after" "$(cat "$T/out" "$T/err")"
fi
[ "$fails" = 0 ]
