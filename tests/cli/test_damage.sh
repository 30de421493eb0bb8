#!/bin/sh
# A damaged data file: copies of a small store are damaged the ways disks
# and careless copies damage files (a byte changed, a page zeroed, a page
# overwritten by another of the file's pages, the file cut short), one way
# per copy at a place drawn from a fixed seed, and eight commands run on
# each. No command may end by a signal; an error is exit 6 with the code
# corrupt (check: its problems listed) or 3, not found; and each copy is either reported by `cairn check` or exports
# exactly what the undamaged store exports (damage where nothing reads is
# harmless). The untouched store checks clean.
#
# CAIRN_DAMAGE_COPIES (default 160) and CAIRN_DAMAGE_SEED (default 7) set
# the run; the default takes about a minute with the sanitizers.
set -u
cd "$(dirname "$0")/../.." || exit 2
CAIRN=${CAIRN:-$PWD/build/san/cairn}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fails=0
ok() { printf 'ok   %s\n' "$1"; }
bad() {
	printf 'FAIL %s: %s\n' "$1" "$2"
	fails=$((fails + 1))
}
# The guard takes the faults of a broken page, not the sanitizer.
export ASAN_OPTIONS="${ASAN_OPTIONS:-}:allow_user_segv_handler=1"
export CAIRN_DOMAIN=d CAIRN_STORE="$T/orig"
copies=${CAIRN_DAMAGE_COPIES:-160}
seed=${CAIRN_DAMAGE_SEED:-7}

cat >"$T/schema.json" <<'EOF'
{"kinds":[{"name":"Note","attributes":[{"name":"n","type":"int","indexed":true}]}],
 "relations":[{"name":"cites","from":"Note","to":"Note"}]}
EOF
awk 'BEGIN {
	split("alpha bravo charlie delta echo foxtrot golf hotel india juliet", w, " ")
	for (i = 0; i < 1500; i++)
		printf "{\"kind\":\"Note\",\"key\":\"n-%d\",\"title\":\"%s %s note %d\",\"values\":{\"n\":%d}}\n",
			i, w[i % 10 + 1], w[(i * 7) % 10 + 1], i, i % 97
	for (i = 0; i < 1500; i++)
		printf "{\"rel\":\"cites\",\"from\":\"Note:n-%d\",\"to\":\"Note:n-%d\"}\n", i, (i * 31 + 7) % 1500
}' >"$T/data.jsonl"
awk 'NR <= 300 && /"kind"/ { sub(/"n":/, "\"n\":1"); print }' "$T/data.jsonl" >"$T/more.jsonl"
{ "$CAIRN" init && "$CAIRN" domain create d && "$CAIRN" schema apply "$T/schema.json" &&
	"$CAIRN" import "$T/data.jsonl" && "$CAIRN" import "$T/more.jsonl" &&
	"$CAIRN" export >"$T/orig.export"; } >/dev/null 2>"$T/err" || bad "setup" "$(cat "$T/err")"
if "$CAIRN" check >"$T/out" 2>&1 && grep -q '"problems":0' "$T/out"; then
	ok "the undamaged store checks clean"
else
	bad "the undamaged store checks clean" "$(cat "$T/out")"
fi

size=$(stat -c %s "$T/orig/data.mdb")
pages=$((size / 4096))
rnd() {
	seed=$(((seed * 1103515245 + 12345) % 2147483648))
	r=$((seed / 65536))
}
signals=0 wrong=0 reported=0 clean=0 silent=0 i=0
while [ $i -lt "$copies" ]; do
	i=$((i + 1))
	rm -rf "$T/cp"
	cp -r "$T/orig" "$T/cp"
	rnd
	pg=$((r % pages))
	rnd
	off=$((r % 4096))
	rnd
	case $((i % 4)) in
	0) how="byte $((pg * 4096 + off)) set to $((r % 256))"
		printf "\\$(printf %03o $((r % 256)))" |
			dd of="$T/cp/data.mdb" bs=1 seek=$((pg * 4096 + off)) conv=notrunc 2>/dev/null ;;
	1) how="page $pg zeroed"
		dd if=/dev/zero of="$T/cp/data.mdb" bs=4096 seek=$pg count=1 conv=notrunc 2>/dev/null ;;
	2) how="page $pg overwritten by page $((r % pages))"
		dd if="$T/orig/data.mdb" of="$T/cp/data.mdb" bs=4096 skip=$((r % pages)) seek=$pg count=1 \
			conv=notrunc 2>/dev/null ;;
	3) how="cut at byte $((pg * 4096 + off))"
		truncate -s $((pg * 4096 + off)) "$T/cp/data.mdb" ;;
	esac
	export CAIRN_STORE="$T/cp"
	for cmd in "check" "export" "get Note n-17" "search bravo" "query Note --where {\"n\":5}" \
		"links Note n-5" "history Note n-9" "put Note new --values {\"n\":1}"; do
		# shellcheck disable=SC2086 # the command's words
		"$CAIRN" $cmd >"$T/out" 2>"$T/err"
		rc=$?
		if [ $rc -ge 128 ]; then
			signals=$((signals + 1))
			[ $signals -le 5 ] && bad "copy $i ($how): cairn $cmd" "signal $((rc - 128)): $(head -c 300 "$T/err")"
		elif [ $rc = 6 ] && ! grep -q '"code":"corrupt"' "$T/err" &&
			! { [ "$cmd" = check ] && grep -q '^{"problem":' "$T/out"; }; then
			wrong=$((wrong + 1))
			[ $wrong -le 5 ] && bad "copy $i ($how): cairn $cmd" "exit 6 without corrupt: $(head -c 300 "$T/err")"
		elif [ $rc != 0 ] && [ $rc != 3 ] && [ $rc != 6 ]; then
			wrong=$((wrong + 1))
			[ $wrong -le 5 ] && bad "copy $i ($how): cairn $cmd" "exit $rc: $(head -c 300 "$T/err")"
		fi
		[ "$cmd" = check ] || continue
		if [ $rc = 0 ]; then
			if "$CAIRN" export 2>/dev/null | cmp -s - "$T/orig.export"; then
				clean=$((clean + 1))
			else
				silent=$((silent + 1))
				bad "copy $i ($how)" "cairn check passed, but the export differs from the store's"
			fi
		else
			reported=$((reported + 1))
		fi
	done
done
echo "# $copies damaged copies: $reported reported by check, $clean unharmed, $silent missed; $signals signals, $wrong other exits"
[ $signals = 0 ] && ok "no command on a damaged copy ends by a signal ($((copies * 8)) runs)"
[ $wrong = 0 ] && ok "every error on a damaged copy is exit 6, corrupt, or 3, not found"
[ $silent = 0 ] && [ $reported -gt 0 ] &&
	ok "every damaged copy is reported by cairn check or exports what the store holds"
[ $fails = 0 ]
