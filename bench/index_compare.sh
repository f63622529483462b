#!/usr/bin/env bash
# Scalar index queries, lancelet vs the reference, side by side: 1M rows (id int64,
# val int64 = a permutation of 0..1M-1, cat utf8) in 10 fragments at 2.2. Each side
# builds a BTree on val on its own copy (build time and the builder's peak RSS are
# printed), then each side times, in one warm process, a point lookup (val = K) and a
# 1% range (val < 10000), plus lancelet's flat scan of the same query. Then 10% of the
# rows get a new val through overlays (stale for the index), and separately one row per
# fragment, and the queries run again: the overhead is against the non-stale query on
# a copy of the indexed dataset, timed in the same process with rounds interleaved.
source "$(dirname "$0")/common.sh"
LANCELET=${LANCELET:-$BUILD/lancelet}
COMPARE="$BUILD/bench/version_compare"
ROUNDS=${ROUNDS:-101}
DIR="$WORK/index"
export LANCE_ENABLE_UNSTABLE_DATA_OVERLAY_FILES=1 RUST_LOG=error

quiet() { "$@" >/dev/null; }
median() { node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{for(const l of s.trim().split("\n")){const j=JSON.parse(l);if(j.median_ms!==undefined){console.log(j.median_ms);break}}})'; }

if [[ ! -f $DIR/.done ]]; then
  rm -rf "$DIR"
  mkdir -p "$DIR"
  awk -v n="$ROWS" 'BEGIN { print "id,val,cat"; for (i = 0; i < n; i++) printf "%d,%d,c%d\n", i, (i * 7919) % n, i % 50 }' >"$DIR/rows.csv"
  quiet "$LANCELET" create "$DIR/base.lance" --from "$DIR/rows.csv" --schema id:int64,val:int64,cat:utf8 \
    --max-rows-per-file $((ROWS / 10)) --file-version 2.2
  rm "$DIR/rows.csv"
  touch "$DIR/.done"
fi

for side in ours ref; do rm -rf "$DIR/$side.lance"; cp -r "$DIR/base.lance" "$DIR/$side.lance"; done
/usr/bin/time -v "$LANCELET" index create "$DIR/ours.lance" val >/dev/null 2>"$DIR/ours.time"
ours_build=$(awk -F': ' '/Elapsed/ {print $2}' "$DIR/ours.time")
ours_rss=$(awk -F': ' '/Maximum resident set size/ {print int($2/1024)}' "$DIR/ours.time")
ref_build=$(node bench/reference_query.mjs "$DIR/ref.lance" --create-index val --where "val = 1" --repeat 1 | head -1)
echo "build BTree on val: lancelet ${ours_build} (m:ss, whole process), peak RSS ${ours_rss} MB; reference $ref_build"
rm -rf "$DIR/indexed.lance"; cp -r "$DIR/ours.lance" "$DIR/indexed.lance"  # the non-stale yardstick

query() {  # query LABEL WHERE: lancelet indexed and flat, the reference, on ours.lance / ref.lance
  local label=$1 where=$2 ours flat ref overhead=""
  ours=$("$COMPARE" scan id,val "$ROUNDS" --where "$where" "$DIR/ours.lance" | median)
  flat=$("$COMPARE" scan id,val "$ROUNDS" --where "$where" --no-index "$DIR/ours.lance" | median)
  ref=$(node bench/reference_query.mjs "$DIR/ref.lance" --where "$where" --columns id,val --repeat "$ROUNDS" | median)
  if [[ $label == *stale* ]]; then  # against the same query before any row went stale, rounds interleaved
    overhead=$("$COMPARE" scan id,val $((3 * ROUNDS)) --where "$where" "$DIR/indexed.lance" "$DIR/ours.lance" |
      node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const r=JSON.parse(s.trim().split("\n")[1]).ratio;console.log(((r-1)*100).toFixed(1))})')
  fi
  node -e '
    const [label, o, f, r, over] = process.argv.slice(1).map((x, i) => i && i < 4 ? Number(x) : x);
    const overhead = over ? `; ${over}% over the non-stale query (interleaved)` : "";
    console.log(`${label}: lancelet ${o} ms (flat ${f} ms, ${(f / o).toFixed(1)}x), reference ${r} ms; ` +
                `query rate ${(r / o).toFixed(1)}x the reference${overhead}`);
  ' "$label" "$ours" "$flat" "$ref" "$overhead"
}

query "point lookup (val = 123457)" "val = 123457"
query "1% range (val < 10000)" "val < 10000"
for stale in "10%:id % 10 = 3" "1 row per fragment:id % $((ROWS / 10)) = 5"; do
  label=${stale%%:*} where=${stale#*:}
  for side in ours ref; do quiet "$LANCELET" update "$DIR/$side.lance" --set "val = val + 1" --where "$where"; done
  query "point lookup, $label stale" "val = 123457"
  query "1% range, $label stale" "val < 10000"
  for side in ours ref; do rm -rf "$DIR/$side.lance.tmp"; done
  # Back to the unchanged copies for the next case.
  rm -rf "$DIR/ours.lance" "$DIR/ref.lance"
  cp -r "$DIR/base.lance" "$DIR/ours.lance"; cp -r "$DIR/base.lance" "$DIR/ref.lance"
  quiet "$LANCELET" index create "$DIR/ours.lance" val
  node bench/reference_query.mjs "$DIR/ref.lance" --create-index val --where "val = 1" --repeat 1 >/dev/null
done
