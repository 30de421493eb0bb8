#!/bin/sh
# The layering of the tree (docs/architecture.md): every #include "..." of
# every file under src/ and bench/ names a folder its own folder may use.
# A folder includes only the folders below it; the clients (wire, server,
# cli, bench) reach the engine through cairn.h alone.
# Run as sh tests/lib/test_layers.sh from the repository root.
set -u
ok() { echo "ok   $1"; }
bad() { echo "FAIL $1: $2"; }

# The folders each folder may include, besides itself and cairn.h.
allowed() {
	case "$1" in
	base) echo "" ;;
	store) echo "base" ;;
	model) echo "base" ;;
	version) echo "store model base" ;;
	index) echo "version store model base" ;;
	query) echo "index version store model base" ;;
	admin) echo "query index version store model base" ;;
	memory) echo "base" ;;
	wire) echo "base" ;;
	server) echo "wire base" ;;
	cli) echo "server wire base" ;;
	bench) echo "server wire base" ;;
	*) echo "?" ;;
	esac
}
# The headers of the server that the command and the benchmark may include: its entry points.
entry_point() {
	case "$1" in
	server/server.h | server/mcp.h) return 0 ;;
	*) return 1 ;;
	esac
}

T=$(mktemp)
trap 'rm -f "$T"' EXIT
files=0
for f in $(find src bench -name '*.[ch]' | sort); do
	files=$((files + 1))
	case "$f" in
	src/*) top=${f#src/} ;;
	*) top=$f ;;
	esac
	layer=${top%%/*}
	ok_list=$(allowed "$layer")
	if [ "$ok_list" = "?" ]; then
		echo "$f: the folder $layer is not in the table of layers" >>"$T"
		continue
	fi
	sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f" |
		while read -r inc; do
			case "$inc" in
			cairn.h | */*) ;;
			*) continue ;; # beside the file, in its own folder
			esac
			[ "$inc" = cairn.h ] && continue
			to=${inc%%/*}
			[ "$to" = "$layer" ] && continue
			case " $ok_list " in
			*" $to "*)
				if [ "$to" = server ] && [ "$layer" != server ] && ! entry_point "$inc"; then
					echo "$f includes $inc: only the server's entry points (server.h, mcp.h)"
				fi
				;;
			*) echo "$f includes $inc: $layer may include $(echo "cairn.h $ok_list" | sed 's/ *$//; s/ /, /g') only" ;;
			esac
		done >>"$T"
done
if [ "$files" -lt 50 ]; then
	bad "layers: every include follows docs/architecture.md" "only $files files found (run from the repository root)"
elif [ -s "$T" ]; then
	bad "layers: every include follows docs/architecture.md" "$(wc -l <"$T") includes do not:"
	sed 's/^/    /' "$T"
else
	ok "layers: every include of $files files follows docs/architecture.md"
fi
