#!/bin/sh
# Run every test of a build (default build/san): the C tests, the library and
# layering checks (tests/lib), the CLI tests, the
# server tests, the MCP tests and the fuzz corpora, then print one line
# "N passed, N failed".
#
# The parts run at the same time, each with its output in a file of its own,
# printed part by part, in that order, once all have ended. The C tests run up
# to CAIRN_TEST_JOBS tests at once (default: the number of online CPUs, see
# tests/main.c); CAIRN_TEST_JOBS=1 also runs the parts one after the other.
B=${1:-build/san}
cd "$(dirname "$0")/.." || exit 2
pass=0
fail=0
T=$(mktemp -d) || exit 2
trap 'rm -rf "$T"' EXIT

count() { # count "ok"/"FAIL" lines of a log
	p=$(grep -c '^ok ' "$1")
	f=$(grep -c '^FAIL ' "$1")
	pass=$((pass + p))
	fail=$((fail + f))
}

# launch LOG COMMAND...: run COMMAND, its output in LOG and its exit status in
# LOG.rc, in the background (in the foreground with CAIRN_TEST_JOBS=1).
launch() {
	log=$1
	shift
	if [ "${CAIRN_TEST_JOBS:-}" = 1 ]; then
		"$@" >"$log" 2>&1
		echo $? >"$log.rc"
	else
		{
			"$@" >"$log" 2>&1
			echo $? >"$log.rc"
		} &
	fi
}

# show LOG NAME: print a finished part's log and count it; a part that failed
# without a FAIL line of its own counts as one failure.
show() {
	cat "$1"
	count "$1"
	rc=$(cat "$1.rc" 2>/dev/null || echo 127)
	if [ "$rc" -ne 0 ] && ! grep -q '^FAIL ' "$1"; then
		echo "FAIL $2 exited with $rc"
		fail=$((fail + 1))
	fi
}

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
CAIRN="$PWD/$B/cairn"
CAIRN_BENCH="$PWD/$B/cairn-bench"
export CAIRN CAIRN_BENCH
have_node=0
command -v node >/dev/null 2>&1 && have_node=1

launch "$T/c" "$B/test_cairn"
# The library links cleanly, and every include follows the layers.
launch "$T/lib" sh -c 'sh tests/lib/test_link.sh "$1"; a=$?; sh tests/lib/test_layers.sh; [ $a = 0 ]' sh "$B"
i=0
for t in tests/cli/*.sh; do
	[ -f "$t" ] || continue
	i=$((i + 1))
	launch "$T/cli$i" sh "$t"
done
i=0
for t in tests/server/test_*.mjs; do
	[ -f "$t" ] && [ $have_node = 1 ] || continue
	i=$((i + 1))
	# The timeout only guards against a hang.
	launch "$T/server$i" timeout 1800 node "$t"
done
: >"$T/npm"
if [ ! -d tests/mcp/node_modules/@modelcontextprotocol/sdk ] && command -v npm >/dev/null 2>&1; then
	# Its output is shown (under the MCP tests) only when it fails.
	(cd tests/mcp && npm ci --no-audit --no-fund --silent) >"$T/npm" 2>&1 && : >"$T/npm"
fi
i=0
for t in tests/mcp/test_*.mjs; do
	[ -f "$t" ] && [ -d tests/mcp/node_modules/@modelcontextprotocol/sdk ] || continue
	i=$((i + 1))
	launch "$T/mcp$i" timeout 1800 node "$t"
done
i=0
for r in "$B"/fuzz/replay_*; do
	[ -x "$r" ] || continue
	name=${r##*/replay_}
	[ -d "fuzz/corpus/$name" ] || continue
	i=$((i + 1))
	launch "$T/fuzz$i" "$r" "fuzz/corpus/$name"
done
wait

echo "== C tests"
cat "$T/c"
count "$T/c"
if ! grep -q '^C tests:' "$T/c"; then
	echo "FAIL test runner did not finish"
	fail=$((fail + 1))
fi

echo "== library and layers"
show "$T/lib" tests/lib

echo "== CLI tests"
i=0
for t in tests/cli/*.sh; do
	[ -f "$t" ] || continue
	i=$((i + 1))
	show "$T/cli$i" "$t"
done

echo "== server tests"
i=0
for t in tests/server/test_*.mjs; do
	[ -f "$t" ] || continue
	if [ $have_node = 0 ]; then
		echo "FAIL $t: node is not installed (make check installs it when run as root)"
		fail=$((fail + 1))
		continue
	fi
	i=$((i + 1))
	show "$T/server$i" "$t"
done

echo "== MCP tests (the official client SDK)"
cat "$T/npm"
i=0
for t in tests/mcp/test_*.mjs; do
	[ -f "$t" ] || continue
	if [ ! -d tests/mcp/node_modules/@modelcontextprotocol/sdk ]; then
		echo "FAIL $t: the MCP SDK is not installed (npm ci in tests/mcp)"
		fail=$((fail + 1))
		continue
	fi
	i=$((i + 1))
	show "$T/mcp$i" "$t"
done

echo "== fuzz corpora"
i=0
for r in "$B"/fuzz/replay_*; do
	[ -x "$r" ] || continue
	name=${r##*/replay_}
	if [ -d "fuzz/corpus/$name" ]; then
		i=$((i + 1))
		rc=$(cat "$T/fuzz$i.rc" 2>/dev/null || echo 127)
	else
		rc=none
	fi
	if [ "$rc" = 0 ]; then
		echo "ok   fuzz corpus $name ($(ls "fuzz/corpus/$name" | wc -l) inputs)"
		pass=$((pass + 1))
	else
		[ "$rc" != none ] && cat "$T/fuzz$i"
		echo "FAIL fuzz corpus $name"
		fail=$((fail + 1))
	fi
done
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
