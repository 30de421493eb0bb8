#!/bin/sh
# make run: build a demo store from the generated supply workload (10,000
# Records) under ./data, then show a few reads. Rerunning reuses the store.
set -e
CAIRN=${1:-build/rel/cairn}
export CAIRN_STORE=${CAIRN_STORE:-./data}
export CAIRN_DOMAIN=${CAIRN_DOMAIN:-supply}
GEN=build/demo-workload

if [ ! -f "$CAIRN_STORE/data.mdb" ]; then
	echo "== generating the supply workload (10,000 Records) into $GEN"
	"$CAIRN" gen --size 10000 --seed 1 --out "$GEN" --text
	echo "== creating the demo store in $CAIRN_STORE (Domain $CAIRN_DOMAIN)"
	"$CAIRN" init "$CAIRN_STORE" --text
	"$CAIRN" schema apply "$GEN/schema.json" --actor demo --message "supply schema" --text
	"$CAIRN" import "$GEN/records.jsonl" "$GEN/links.jsonl" --actor demo \
		--source "generated supply workload" --text
else
	echo "== reusing the demo store in $CAIRN_STORE (remove it to start over)"
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
echo "The store is in $CAIRN_STORE. Try: CAIRN_STORE=$CAIRN_STORE CAIRN_DOMAIN=$CAIRN_DOMAIN $CAIRN --help"
