#!/bin/sh
# Run every test of a build (default build/san): the C tests, the CLI tests, the
# server tests and the fuzz corpora, then print one line "N passed, N failed".
B=${1:-build/san}
cd "$(dirname "$0")/.." || exit 2
pass=0
fail=0
out=$(mktemp)

count() { # count "ok"/"FAIL" lines of a log
	p=$(grep -c '^ok ' "$1")
	f=$(grep -c '^FAIL ' "$1")
	pass=$((pass + p))
	fail=$((fail + f))
}

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

echo "== C tests"
"$B/test_cairn" >"$out" 2>&1
cat "$out"
count "$out"
if ! grep -q '^C tests:' "$out"; then
	echo "FAIL test runner did not finish"
	fail=$((fail + 1))
fi

echo "== library"
sh tests/lib/test_link.sh "$B" >"$out" 2>&1
cat "$out"
count "$out"

echo "== CLI tests"
for t in tests/cli/*.sh; do
	[ -f "$t" ] || continue
	CAIRN="$PWD/$B/cairn" CAIRN_BENCH="$PWD/$B/cairn-bench" sh "$t" >"$out" 2>&1
	rc=$?
	cat "$out"
	count "$out"
	if [ $rc -ne 0 ] && ! grep -q '^FAIL ' "$out"; then
		echo "FAIL $t exited with $rc"
		fail=$((fail + 1))
	fi
done

echo "== server tests"
for t in tests/server/test_*.mjs; do
	[ -f "$t" ] || continue
	if ! command -v node >/dev/null 2>&1; then
		echo "FAIL $t: node is not installed (make check installs it when run as root)"
		fail=$((fail + 1))
		continue
	fi
	CAIRN="$PWD/$B/cairn" timeout 300 node "$t" >"$out" 2>&1
	rc=$?
	cat "$out"
	count "$out"
	if [ $rc -ne 0 ] && ! grep -q '^FAIL ' "$out"; then
		echo "FAIL $t exited with $rc"
		fail=$((fail + 1))
	fi
done

echo "== MCP tests (the official client SDK)"
if [ ! -d tests/mcp/node_modules/@modelcontextprotocol/sdk ] && command -v npm >/dev/null 2>&1; then
	(cd tests/mcp && npm ci --no-audit --no-fund --silent) >"$out" 2>&1 || cat "$out"
fi
for t in tests/mcp/test_*.mjs; do
	[ -f "$t" ] || continue
	if [ ! -d tests/mcp/node_modules/@modelcontextprotocol/sdk ]; then
		echo "FAIL $t: the MCP SDK is not installed (npm ci in tests/mcp)"
		fail=$((fail + 1))
		continue
	fi
	CAIRN="$PWD/$B/cairn" timeout 300 node "$t" >"$out" 2>&1
	rc=$?
	cat "$out"
	count "$out"
	if [ $rc -ne 0 ] && ! grep -q '^FAIL ' "$out"; then
		echo "FAIL $t exited with $rc"
		fail=$((fail + 1))
	fi
done

echo "== fuzz corpora"
for r in "$B"/fuzz/replay_*; do
	[ -x "$r" ] || continue
	name=${r##*/replay_}
	if [ -d "fuzz/corpus/$name" ] && "$r" "fuzz/corpus/$name" >"$out" 2>&1; then
		echo "ok   fuzz corpus $name ($(ls "fuzz/corpus/$name" | wc -l) inputs)"
		pass=$((pass + 1))
	else
		cat "$out"
		echo "FAIL fuzz corpus $name"
		fail=$((fail + 1))
	fi
done
rm -f "$out"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
