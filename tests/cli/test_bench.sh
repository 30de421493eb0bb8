#!/bin/sh
# The workload and the benchmark are deterministic: the same seed and size
# give byte-identical files and the same machine-independent counts.
# Run as CAIRN=/path/to/cairn sh tests/cli/test_bench.sh
set -u
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
ok() { echo "ok   $1"; }
bad() { echo "FAIL $1: $2"; }

"$CAIRN" gen --size 10000 --seed 7 --out "$T/a" >/dev/null 2>&1 &&
	"$CAIRN" gen --size 10000 --seed 7 --out "$T/b" >/dev/null 2>&1
same=1
for f in schema.json records.jsonl links.jsonl q_keys.txt q_title_words.txt q_typos.txt; do
	cmp -s "$T/a/$f" "$T/b/$f" || same=0
done
[ $same = 1 ] && ok "gen: same seed, same bytes" || bad "gen: same seed, same bytes" "files differ"
"$CAIRN" gen --size 10000 --seed 8 --out "$T/c" >/dev/null 2>&1
cmp -s "$T/a/records.jsonl" "$T/c/records.jsonl" && bad "gen: another seed" "same records" ||
	ok "gen: another seed, other data"

# Counts columns (entries, Versions, seeks, bytes per call) and sizes by sub-database.
counts() {
	"$CAIRN" bench --size 10000 --seed 7 2>/dev/null |
		awk -F'|' '/^\| (get|page|Links|count)/ { print $2, $7, $8, $9, $10 }
		           /^\| (versions|keys|adj|attr|cells|revisions|\*\*total)/ { print $2, $3, $4 }'
}
counts >"$T/c1"
counts >"$T/c2"
if [ -s "$T/c1" ] && cmp -s "$T/c1" "$T/c2"; then
	ok "bench: same seed, same counts ($(wc -l <"$T/c1") rows)"
else
	bad "bench: same seed, same counts" "$(diff "$T/c1" "$T/c2" | head -5)"
fi
