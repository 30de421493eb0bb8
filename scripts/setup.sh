#!/bin/sh
# Install the Debian packages Cairn needs to build, test and benchmark.
# Run as root it installs what is missing; otherwise it prints the apt command.
set -eu

PKGS="gcc make clang pkg-config curl liblmdb-dev libssl-dev libxxhash-dev libutf8proc-dev libstemmer-dev libmicrohttpd-dev wamerican"
# cairn-bench (the generator and the benchmark, built and tested by make check)
# links the client libraries of its peers, SQLite and PostgreSQL.
PKGS="$PKGS libsqlite3-dev libpq-dev"
# The PostgreSQL server only runs in the benchmark beside Cairn (make bench).
[ "${CAIRN_SETUP_BENCH:-0}" = 1 ] && PKGS="$PKGS postgresql"

missing=""
for p in $PKGS; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
		missing="$missing $p"
	fi
done
# The server's tests run on Node.js, and the MCP tests fetch the official
# client SDK with npm (tests/mcp): any Node.js 18 or later will do.
command -v node >/dev/null 2>&1 || missing="$missing nodejs"
command -v npm >/dev/null 2>&1 || missing="$missing npm"
[ -z "$missing" ] && exit 0

if [ "$(id -u)" = 0 ]; then
	echo "setup: installing$missing" >&2
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq >/dev/null 2>&1 || true
	apt-get install -y -qq $missing >/dev/null
else
	echo "setup: missing Debian packages:$missing" >&2
	echo "setup: run as root:  apt-get install -y$missing" >&2
	exit 1
fi
