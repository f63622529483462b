#!/usr/bin/env bash
# Compaction and cleanup, lancelet against the reference's optimize() on identical copies.
#   1. Read amplification: 1M rows (id, price, qty, cat; 4 fragments, file version 2.2)
#      with 16 strided 1% layers on qty (the overlay bound lifted), against the same
#      rows written fresh: overlaid, after `optimize --no-rewrite` (fold), and after a
#      plain `optimize` (the 4 fragments merge into one). Whole process, medians of
#      REPEATS runs alternating with the fresh dataset.
#   2. Fold of one int32 column after a 1% update, 200k rows x 768-d embedding in 4
#      fragments: `lancelet optimize --target-rows-per-fragment 50000` (no row moves)
#      against the reference's optimize(): bytes written, time, peak RSS.
#   3. Full rewrite: 1M rows x 128-d embedding in 20 fragments merged into one, MB/s.
#   4. Cleanup of 1,000 versions (one SQL session of UPDATEs), time and files removed.
# Peak RSS is /usr/bin/time -v's "Maximum resident set size".
source "$(dirname "$0")/common.sh"
LANCELET=${LANCELET:-$BUILD/lancelet}
REPEATS=${REPEATS:-5}
DIR="$WORK/compaction"
mkdir -p "$DIR"
export LANCE_ENABLE_UNSTABLE_DATA_OVERLAY_FILES=1

bytes() { du -sb "$1" | cut -f1; }
quiet() { "$@" >/dev/null; }
# timed OUT_PREFIX CMD...: runs CMD under /usr/bin/time -v; sets SECONDS_TAKEN (wall,
# to the millisecond) and RSS_MB.
timed() {
  local prefix=$1 t0 t1
  shift
  t0=$(date +%s%N)
  /usr/bin/time -v "$@" >"$prefix.out" 2>"$prefix.time"
  t1=$(date +%s%N)
  SECONDS_TAKEN=$(awk -v ns=$((t1 - t0)) 'BEGIN { printf "%.3f", ns / 1e9 }')
  RSS_MB=$(awk -F': ' '/Maximum resident set size/ {print int($2 / 1024)}' "$prefix.time")
}

# whole LABEL A B ARGS...: ARGS with DS standing for the dataset, A and B alternating.
whole() { whole_process "$1" this "never overlaid" "${@:2}"; }

# 1. Read amplification
SCHEMA="id:int64,price:float64,qty:int32,cat:utf8"
if [[ ! -f $DIR/layers.done ]]; then
  awk -v n="$ROWS" 'BEGIN { print "id,price,qty,cat"; for (i = 0; i < n; i++) printf "%d,%.2f,%d,c%d\n", i, (i * 7919) % 100000 / 100.0, i % 1000, i % 50 }' >"$DIR/rows.csv"
  rm -rf "$DIR/layers.lance" "$DIR/fresh.lance"
  quiet "$LANCELET" create "$DIR/layers.lance" --from "$DIR/rows.csv" --schema "$SCHEMA" --max-rows-per-file $((ROWS / 4)) --file-version 2.2
  quiet "$LANCELET" config "$DIR/layers.lance" --set lance.compaction.max_overlays_per_fragment=none
  for ((k = 0; k < 16; k++)); do quiet "$LANCELET" update "$DIR/layers.lance" --set "qty = qty + 1" --where "id % 100 = $k" 2>/dev/null; done
  "$LANCELET" scan "$DIR/layers.lance" --format arrow >"$DIR/fresh.arrow"
  quiet "$LANCELET" create "$DIR/fresh.lance" --from "$DIR/fresh.arrow" --schema "$SCHEMA" --max-rows-per-file $((ROWS / 4)) --file-version 2.2
  rm -f "$DIR/rows.csv" "$DIR/fresh.arrow"
  touch "$DIR/layers.done"
fi
rm -rf "$DIR/folded.lance" "$DIR/optimized.lance"
cp -r "$DIR/layers.lance" "$DIR/folded.lance"
cp -r "$DIR/layers.lance" "$DIR/optimized.lance"
timed "$DIR/fold" "$LANCELET" optimize "$DIR/folded.lance" --no-rewrite
echo "16 layers: optimize --no-rewrite took ${SECONDS_TAKEN} s, peak RSS ${RSS_MB} MB"
timed "$DIR/opt" "$LANCELET" optimize "$DIR/optimized.lance"
echo "16 layers: optimize took ${SECONDS_TAKEN} s, peak RSS ${RSS_MB} MB"
TAKE_ROWS=$(awk -v n="$ROWS" 'BEGIN { srand(7); for (i = 0; i < 100; i++) printf "%s%d", (i ? "," : ""), int(rand() * n) }')
for ds in layers folded optimized; do
  whole "$ds: scan --columns qty" "$DIR/$ds.lance" "$DIR/fresh.lance" scan DS --columns qty --format arrow
  whole "$ds: take(100) qty" "$DIR/$ds.lance" "$DIR/fresh.lance" take DS --rows "$TAKE_ROWS" --columns qty --format arrow
done

# 1b. The update history of bench/overlay_history.sh as the defaults leave it: UPDATE's
# cost model (the full-column update rewrites the column) and the overlay-layer bound
# (each fragment's layers merge into one past 10), against the same rows written fresh.
if [[ ! -f $DIR/policy.done ]]; then
  awk -v n="$ROWS" 'BEGIN { print "id,price,qty,cat"; for (i = 0; i < n; i++) printf "%d,%.2f,%d,c%d\n", i, (i * 7919) % 100000 / 100.0, i % 1000, i % 50 }' >"$DIR/rows.csv"
  P="$DIR/policy.lance"
  rm -rf "$P" "$DIR/policy_fresh.lance"
  quiet "$LANCELET" create "$P" --from "$DIR/rows.csv" --schema "$SCHEMA" --max-rows-per-file $((ROWS / 4)) --file-version 2.2
  quiet "$LANCELET" update "$P" --set "price = price * 1.1"
  quiet "$LANCELET" update "$P" --set "price = price + 1" --where "id % 100 = 7" 2>/dev/null
  quiet "$LANCELET" update "$P" --set "qty = qty + 1" --where "id % 10 = 3"
  quiet "$LANCELET" update "$P" --set "price = price - 1" --where "id % 10 = 5"
  for ((k = 0; k < 16; k++)); do quiet "$LANCELET" update "$P" --set "qty = qty + 2" --where "id % 1000 = $k"; done
  "$LANCELET" scan "$P" --format arrow >"$DIR/policy.arrow"
  quiet "$LANCELET" create "$DIR/policy_fresh.lance" --from "$DIR/policy.arrow" --schema "$SCHEMA" --max-rows-per-file $((ROWS / 4)) --file-version 2.2
  rm -f "$DIR/rows.csv" "$DIR/policy.arrow"
  touch "$DIR/policy.done"
fi
echo "history under the defaults: $("$LANCELET" inspect "$DIR/policy.lance" | grep -c 'overlay [0-9]*:') overlays left in $("$LANCELET" inspect "$DIR/policy.lance" | grep -c 'fragment [0-9]*:') fragments"
whole 'history, defaults: count --where "price > 500"' "$DIR/policy.lance" "$DIR/policy_fresh.lance" count DS --where "price > 500"
whole 'history, defaults: scan --columns qty' "$DIR/policy.lance" "$DIR/policy_fresh.lance" scan DS --columns qty --format arrow
whole 'history, defaults: take(100) price,qty' "$DIR/policy.lance" "$DIR/policy_fresh.lance" take DS --rows "$TAKE_ROWS" --columns price,qty --format arrow

# 2. Fold of one narrow column under a wide one, against the reference's optimize().
FOLD_ROWS=${FOLD_ROWS:-200000}
BASE="$DIR/wide_base.lance"
if [[ ! -d $BASE ]]; then
  quiet "$TOOL" gen "$BASE" --rows "$FOLD_ROWS" --dim 768 --fragments 4 --shape wide --version 2.0
  quiet "$LANCELET" update "$BASE" --set "val = val + 1" --where "id % 100 = 0" 2>/dev/null
fi
rm -rf "$DIR/fold_ours.lance" "$DIR/fold_ref.lance"
cp -r "$BASE" "$DIR/fold_ours.lance"
cp -r "$BASE" "$DIR/fold_ref.lance"
sync
b0=$(bytes "$DIR/fold_ours.lance")
timed "$DIR/fold_ours" "$LANCELET" optimize "$DIR/fold_ours.lance" --target-rows-per-fragment 50000
b1=$(bytes "$DIR/fold_ours.lance")
t_ours=$SECONDS_TAKEN rss_ours=$RSS_MB
r0=$(bytes "$DIR/fold_ref.lance")
timed "$DIR/fold_ref" node bench/reference_optimize.mjs "$DIR/fold_ref.lance"
r1=$(bytes "$DIR/fold_ref.lance")
t_ref=$(node -e 'console.log(JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")).seconds)' "$DIR/fold_ref.out")
col_bytes=$((FOLD_ROWS * 4))
node -e '
  const [bo, to, rss, br, tr, col] = process.argv.slice(1).map(Number);
  console.log(`fold of val (int32, ${col} bytes of values) under a 768-d embedding: lancelet ${bo} bytes in ${to} s ` +
              `(${(bo / col).toFixed(2)}x the column, peak RSS ${rss} MB); reference optimize() ${br} bytes in ${tr} s; ` +
              `${(br / bo).toFixed(0)}x fewer bytes, ${(tr / to).toFixed(1)}x faster`);
' $((b1 - b0)) "$t_ours" "$rss_ours" $((r1 - r0)) "$t_ref" "$col_bytes"

# 3. Full rewrite throughput: 20 fragments merged into one by both.
RW="$DIR/rewrite_base.lance"
[[ -d $RW ]] || quiet "$TOOL" gen "$RW" --rows "$ROWS" --dim 128 --fragments 20 --shape wide --version 2.2
data_mb=$(node -e 'console.log((Number(process.argv[1]) / 1e6).toFixed(1))' "$(bytes "$RW/data")")
ours_s=() ref_s=() rss_ours=0
for ((r = 0; r < 3; r++)); do
  rm -rf "$DIR/rw_ours.lance" "$DIR/rw_ref.lance"
  cp -r "$RW" "$DIR/rw_ours.lance"
  cp -r "$RW" "$DIR/rw_ref.lance"
  sync
  timed "$DIR/rw_ours" "$LANCELET" optimize "$DIR/rw_ours.lance"
  ours_s+=("$SECONDS_TAKEN")
  ((RSS_MB > rss_ours)) && rss_ours=$RSS_MB
  sync
  timed "$DIR/rw_ref" node bench/reference_optimize.mjs "$DIR/rw_ref.lance"
  ref_s+=("$(node -e 'console.log(JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")).seconds)' "$DIR/rw_ref.out")")
done
node -e '
  const [mb, rss, a, b] = process.argv.slice(1);
  const median = (s) => s.split(" ").map(Number).sort((x, y) => x - y)[1];
  const to = median(a), tr = median(b);
  console.log(`rewrite of ${mb} MB in 20 fragments into one (medians of 3; lancelet whole process, the reference its optimize() call): ` +
              `lancelet ${to} s (${(mb / to).toFixed(0)} MB/s, peak RSS ${rss} MB), reference ${tr} s (${(mb / tr).toFixed(0)} MB/s): ${(tr / to).toFixed(2)}x`);
' "$data_mb" "$rss_ours" "${ours_s[*]}" "${ref_s[*]}"
rm -rf "$DIR/rw_ours.lance" "$DIR/rw_ref.lance" "$DIR/fold_ours.lance" "$DIR/fold_ref.lance"

# 4. Cleanup of 1,000 versions.
CL="$DIR/cleanup"
rm -rf "$CL"
mkdir -p "$CL"
printf 'id,val\n' >"$CL/rows.csv"
for ((i = 0; i < 1000; i++)); do echo "$i,0"; done >>"$CL/rows.csv"
quiet "$LANCELET" sql --db "$CL" "CREATE TABLE t AS SELECT * FROM read_csv('$CL/rows.csv')"
for ((i = 1; i < 1000; i++)); do echo "UPDATE t SET val = val + 1 WHERE id = $i;"; done | quiet "$LANCELET" sql --db "$CL"
versions=$(ls "$CL/t.lance/_versions" | grep -c manifest)
files=$(find "$CL/t.lance" -type f | wc -l)
timed "$CL/cleanup" "$LANCELET" cleanup "$CL/t.lance" --keep 1 --force
left=$(find "$CL/t.lance" -type f | wc -l)
echo "cleanup of $versions versions ($files files): $SECONDS_TAKEN s, $((files - left)) files removed, peak RSS $RSS_MB MB; $(tail -1 "$CL/cleanup.out")"
"$LANCELET" count "$CL/t.lance" --where "val = 1" | sed 's/^/rows with val = 1 after cleanup: /'
