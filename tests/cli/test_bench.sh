#!/bin/sh
# The workload and the benchmark are deterministic: the same seed and size
# give byte-identical files and the same machine-independent counts.
# Run as CAIRN_BENCH=/path/to/cairn-bench sh tests/cli/test_bench.sh (or with
# CAIRN=/path/to/cairn: the cairn-bench beside it).
set -u
BENCH=${CAIRN_BENCH:-${CAIRN:?set CAIRN_BENCH or CAIRN}-bench}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
ok() { echo "ok   $1"; }
bad() { echo "FAIL $1: $2"; }

"$BENCH" gen --size 10000 --seed 7 --out "$T/a" >/dev/null 2>&1 &&
	"$BENCH" gen --size 10000 --seed 7 --out "$T/b" >/dev/null 2>&1
same=1
for f in schema.json records.jsonl links.jsonl q_keys.txt q_title_words.txt q_typos.txt; do
	cmp -s "$T/a/$f" "$T/b/$f" || same=0
done
[ $same = 1 ] && ok "gen: same seed, same bytes" || bad "gen: same seed, same bytes" "files differ"
"$BENCH" gen --size 10000 --seed 8 --out "$T/c" >/dev/null 2>&1
cmp -s "$T/a/records.jsonl" "$T/c/records.jsonl" && bad "gen: another seed" "same records" ||
	ok "gen: another seed, other data"

# Counts columns (entries, Versions, seeks, bytes per call) and sizes by sub-database.
counts() {
	"$BENCH" --size 10000 --seed 7 2>/dev/null |
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

# The vector benchmark: every row, recall against exact search, the same counts twice.
vcounts() {
	"$BENCH" --vectors --size 10000 --seed 7 2>/dev/null |
		awk -F'|' '/^\| (main|branch), / { print $2, $6, $7, $8 }'
}
vcounts >"$T/v1"
vcounts >"$T/v2"
rows=$(wc -l <"$T/v1")
low=$(awk '$0 ~ /RiskFlags/ && ($(NF-2) < 0.99 || $(NF-1) < 0.99)' "$T/v1" | wc -l)
if [ "$rows" -eq 12 ] && [ "$low" -eq 0 ] && cmp -s "$T/v1" "$T/v2"; then
	ok "bench --vectors: twelve rows, the 1% filters exact, the same counts twice"
else
	bad "bench --vectors" "$rows rows, $low below 0.99: $(head -6 "$T/v1" | tr '\n' ';')"
fi
"$BENCH" gen --size 10000 --seed 7 --vectors-f32 --out "$T/f" >/dev/null 2>&1
size=$(wc -c <"$T/f/vectors.f32")
[ "$size" -eq $((10000 * 384 * 4)) ] && ok "gen --vectors-f32: 10,000 rows of 384 float32s" ||
	bad "gen --vectors-f32" "$size bytes"

# The memory benchmark: its three rows, and counts that say every remember
# was one commit that found its subject, and every digest showed 20.
"$BENCH" --memory --size 10000 --seed 7 >"$T/m" 2>/dev/null
mrows=$(grep -c '^| \(remember\|digest\)' "$T/m")
if [ "$mrows" -eq 3 ] && grep -q '300 remembers, each one commit (300 commits), no subject made twice; 12000 memories shown by 600 digests' "$T/m" &&
	grep -q '^| Records, Links, Versions erased | 1000, 1000, 2000 |' "$T/m"; then
	ok "bench --memory: remember, digest and erasure rows, the counts they must have"
else
	bad "bench --memory" "$mrows rows: $(tr '\n' ';' <"$T/m" | cut -c1-400)"
fi

# The recall benchmark on a conversation of the project's own making: the
# questions of categories 1 to 4 (not 5), every way of searching judged, its
# block written into the page; a model that is not there is a usage error.
printf '# page\n' >"$T/page.md"
"$BENCH" locomo --model none --out "$T/page.md" tests/data/conversation.json >"$T/l" 2>"$T/le"
lrc=$?
if [ $lrc = 0 ] && grep -q '^1 conversations, 8 turns, 5 questions' "$T/l" &&
	grep -q '^| SQLite FTS5 (Porter, bm25, words ORed) | [01]\.[0-9]* | 1\.000 | 1\.000 |' "$T/l" &&
	grep -q '^| Cairn, words (`cairn search`) | [01]\.[0-9]* | 1\.000 | 1\.000 |' "$T/l" &&
	grep -q '^| Cairn, recall (`cairn recall`, MCP search) |' "$T/l" &&
	! grep -q 'meaning' "$T/l" && grep -q 'single-hop (2)' "$T/l" && grep -q 'Cairn, words' "$T/page.md"; then
	ok "bench locomo: every question of categories 1 to 4, each way of searching, the page's block"
else
	bad "bench locomo" "$lrc: $(cat "$T/l" "$T/le" | tr '\n' ';' | cut -c1-400)"
fi
"$BENCH" locomo --model "$T/none.cemb" tests/data/conversation.json >/dev/null 2>"$T/le"
lrc=$?
"$BENCH" locomo --model none "$T/missing.json" >/dev/null 2>"$T/le2"
lrc2=$?
if [ $lrc = 2 ] && grep -q 'make model builds it, or --model none' "$T/le" && [ $lrc2 = 1 ] &&
	grep -q 'cannot read' "$T/le2"; then
	ok "bench locomo: a missing model or file says so"
else
	bad "bench locomo errors" "$lrc $lrc2: $(cat "$T/le" "$T/le2" | tr '\n' ';')"
fi

# Its command line: help, and usage errors (exit 2) that name what was wrong.
"$BENCH" --help | grep -q '^usage: cairn-bench' && "$BENCH" gen --help | grep -q '^usage: cairn-bench gen' &&
	ok "cairn-bench --help, gen --help" || bad "cairn-bench --help" "no usage"
"$BENCH" gen --size 10000 >/dev/null 2>"$T/e1"
rc1=$?
"$BENCH" --size 10 --nope >/dev/null 2>"$T/e2"
rc2=$?
"$BENCH" gen --size 5 --out "$T/x" >/dev/null 2>"$T/e3"
rc3=$?
if [ $rc1 = 2 ] && grep -q -- '--out DIR is required' "$T/e1" && [ $rc2 = 2 ] &&
	grep -q 'unknown option --nope' "$T/e2" && [ $rc3 = 2 ] && grep -q -- '--size is' "$T/e3"; then
	ok "cairn-bench: usage errors exit 2 and say why"
else
	bad "cairn-bench usage errors" "$rc1 $rc2 $rc3: $(cat "$T/e1" "$T/e2" "$T/e3" | tr '\n' ';')"
fi
