#!/bin/sh
# The README's five-minute tour and its C example, run as printed: the
# commands are read from README.md (its indented blocks, from "A five-minute
# tour" to "Documentation"), so the README cannot drift from what works.
# They run with bash (the tour uses job control's %1) in a directory outside
# the clone, with `cairn` on the PATH and the library installed by `make
# install` into a PREFIX of the test's own. What differs from a newcomer's
# machine, and only that, is set before: the store is in the test's
# directory instead of /tmp/tour, the server listens on a free port
# (CAIRN_LISTEN) and the curls ask that port, and the model is the tests'
# small one (CAIRN_MODEL; `make model` fetches the real one). Every command
# must succeed except the one the README says is refused.
set -u
cd "$(dirname "$0")/../.." || exit 2
ROOT=$PWD
CAIRN=${CAIRN:-$ROOT/build/san/cairn}
BUILD=$(dirname "$CAIRN")
T=$(mktemp -d)
trap 'kill "$(cat "$T/serve.pid" 2>/dev/null)" 2>/dev/null; rm -rf "$T"' EXIT
fails=0
ok() { printf 'ok   %s\n' "$1"; }
bad() {
	printf 'FAIL %s: %s\n' "$1" "$2"
	fails=$((fails + 1))
}

if ! command -v bash >/dev/null || ! command -v curl >/dev/null; then
	bad "README tour" "bash and curl are needed (make setup installs them)"
	exit 1
fi
mkdir -p "$T/bin" "$T/work" "$T/prefix"
ln -s "$CAIRN" "$T/bin/cairn"
"$CAIRN" model convert tests/data/glove-mini.json "$T/mini.cemb" --id glove-mini/1 >/dev/null ||
	bad "README tour" "the tests' model"

# The library as make install puts it, from the build under test.
case "$BUILD" in *san) SAN=1 ;; *) SAN=0 ;; esac
if make -s --no-print-directory install SAN=$SAN PREFIX="$T/prefix" >"$T/install.log" 2>&1; then
	ok "make install PREFIX=DIR installs the library, its header and cairn.pc"
else
	bad "make install PREFIX=DIR" "$(tail -3 "$T/install.log" | tr '\n' ' ')"
fi

# The tour and the C example, from README.md.
awk '/^## A five-minute tour/ { f = 1 } /^## Documentation/ { f = 0 }
	f && /^    / { print substr($0, 5) }' README.md >"$T/tour.sh"
awk '/^## A five-minute tour/ { f = 1 } /^## Documentation/ { f = 0 }
	f && /^```c$/ { c = 1; next } c && /^```$/ { c = 0 } f && c' README.md |
	sed "s|/tmp/tour|$T/tour|g" >"$T/work/tour.c"
n=$(grep -c . "$T/tour.sh")
if [ "$n" -lt 50 ] || ! grep -q '^cc tour.c' "$T/tour.sh" || ! grep -q 'int main' "$T/work/tour.c"; then
	bad "the tour read from README.md" "$n lines, the C example and its build expected"
fi

# What differs from a newcomer's machine (see above), then the tour.
{
	echo 'export PATH="$T/bin:$PATH" CAIRN_LISTEN=127.0.0.1:0 CAIRN_MODEL="$T/mini.cemb"'
	echo 'export PKG_CONFIG_PATH="$T/prefix/lib/pkgconfig"'
	echo 'cd "$T/work" || exit 2'
	echo 'mkfifo "$T/serve.fifo" && exec 3<>"$T/serve.fifo"'
	# The port the server reports it listens on, once it does.
	echo 'serving() { IFS= read -r -t 300 line <&3; PORT=${line##*127.0.0.1:}; PORT=${PORT%%/*}; echo "$!" >"$T/serve.pid"; }'
	echo "trap 'echo \"exit \$?: \$BASH_COMMAND\" >>\"\$T/failed\"' ERR"
	sed -e "s|/tmp/tour|$T/tour|g" -e 's|127\.0\.0\.1:7411|127.0.0.1:${PORT}|g' \
		-e 's|^cairn serve &\(.*\)$|cairn serve 2>"$T/serve.fifo" \& serving \1|' "$T/tour.sh"
} >"$T/run.sh"
: >"$T/failed"
T="$T" ASAN_OPTIONS="${ASAN_OPTIONS:-}:verify_asan_link_order=0" \
	bash "$T/run.sh" </dev/null >"$T/out" 2>"$T/err"
rc=$?

if [ "$(wc -l <"$T/failed")" -eq 1 ] && grep -q 'cairn put Part P-2' "$T/failed" &&
	grep -q 'unique_violation' "$T/err"; then
	ok "every command of the README's tour works as printed (the refused put is refused)"
else
	bad "the README's tour" "failed: $(tr '\n' ';' <"$T/failed" | cut -c1-600) | stderr: $(tail -5 "$T/err" | tr '\n' ' ' | cut -c1-600)"
fi
if grep -q '^Steel bolt M8: {' "$T/out"; then
	ok "the README's C example compiles against the installed library and runs"
else
	bad "the README's C example" "rc $rc; stdout: $(tail -3 "$T/out" | tr '\n' ' ' | cut -c1-300)"
fi
if grep -q '"key":"P-1"' "$T/out" && grep -q 'Dana prefers tea' "$T/out"; then
	ok "the tour's server and memory answer (a curl, a digest)"
else
	bad "the tour's answers" "no curl answer or digest in its output"
fi
[ "$fails" -eq 0 ]
