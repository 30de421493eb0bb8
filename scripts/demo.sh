#!/bin/sh
# make run: build a demo store from the generated supply workload (10,000
# Records) under ./data, show a few reads, then serve it over HTTP on
# 127.0.0.1:7411 (CAIRN_LISTEN to change) until Ctrl-C. Rerunning reuses
# the store and its demo token.
set -e
CAIRN=${1:-build/rel/cairn}
BENCH=${2:-build/rel/cairn-bench} # its generator writes the workload
export CAIRN_STORE=${CAIRN_STORE:-./data}
export CAIRN_DOMAIN=${CAIRN_DOMAIN:-supply}
GEN=build/demo-workload

if [ ! -f "$CAIRN_STORE/data.mdb" ]; then
	echo "== generating the supply workload (10,000 Records) into $GEN"
	"$BENCH" gen --size 10000 --seed 1 --out "$GEN" --text
	echo "== creating the demo store in $CAIRN_STORE (Domain $CAIRN_DOMAIN)"
	"$CAIRN" init "$CAIRN_STORE" --text
	"$CAIRN" schema apply "$GEN/schema.json" --actor demo --message "supply schema" --text
	"$CAIRN" import "$GEN/records.jsonl" "$GEN/links.jsonl" --actor demo \
		--source "generated supply workload" --text
else
	echo "== reusing the demo store in $CAIRN_STORE (remove it to start over)"
	if ! "$CAIRN" stats >/dev/null 2>"$CAIRN_STORE.err"; then
		cat "$CAIRN_STORE.err" >&2
		rm -f "$CAIRN_STORE.err"
		echo "The store in $CAIRN_STORE cannot be opened by this version (see above)." >&2
		echo "Remove it (rm -rf $CAIRN_STORE) and run make run again to build the demo anew." >&2
		exit 1
	fi
	rm -f "$CAIRN_STORE.err"
fi
echo
echo "== cairn count"
"$CAIRN" count --text
echo
echo "== cairn get Supplier S-1001"
"$CAIRN" get Supplier S-1001 --text
echo
echo "== cairn links Supplier S-1001 --limit 5"
"$CAIRN" links Supplier S-1001 --limit 5 --text
echo
echo "== cairn page Part --limit 3"
"$CAIRN" page Part --limit 3 --text

WORDS=$("$CAIRN" get Supplier S-1001 --json | sed -n 's/.*"title":"\([^"]*\)".*/\1/p' | cut -d' ' -f1-2)
echo "== cairn search \"$WORDS\" --limit 3"
"$CAIRN" search "$WORDS" --limit 3 --text
echo
echo "== an agent records what it learned, with provenance"
"$CAIRN" patch Supplier S-1001 --values '{"rating":4.5}' --actor agent/scout-1 \
	--source "https://example.com/review" --confidence 0.8 --message "rating from a review" --text
"$CAIRN" get Supplier S-1001 --text
echo
echo "== cairn log --limit 3"
"$CAIRN" log --limit 3 --text
echo
echo "== cairn check"
"$CAIRN" check --text
echo
TOKEN_FILE="$CAIRN_STORE/demo.token"
if [ ! -s "$TOKEN_FILE" ]; then
	"$CAIRN" token create --role admin --domain "$CAIRN_DOMAIN" --label demo \
		--out "$TOKEN_FILE" >/dev/null
fi
TOKEN=$(cat "$TOKEN_FILE")
LISTEN=${CAIRN_LISTEN:-127.0.0.1:7411}
echo "== serving the store on http://$LISTEN/v1/ (Ctrl-C stops it)"
echo "The demo token (admin of Domain $CAIRN_DOMAIN) is in $TOKEN_FILE. Try:"
echo "  curl -H \"Authorization: Bearer \$(cat $TOKEN_FILE)\" http://$LISTEN/v1/domains/$CAIRN_DOMAIN/records/Supplier/S-1001"
echo "  curl -H \"Authorization: Bearer \$(cat $TOKEN_FILE)\" http://$LISTEN/v1/domains/$CAIRN_DOMAIN/counts"
echo "The command line works on the same store meanwhile: CAIRN_STORE=$CAIRN_STORE CAIRN_DOMAIN=$CAIRN_DOMAIN $CAIRN --help"
exec "$CAIRN" serve --store "$CAIRN_STORE" --listen "$LISTEN"
