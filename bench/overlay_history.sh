#!/usr/bin/env bash
# Overlay reads after a user's update history, against the same rows written fresh.
#
# History: 1M rows (id int64, price float64, qty int32, cat utf8) in 4 fragments at
# file version 2.2, then 20 `lancelet update`s: price over the whole column, price on 1%
# (id % 100 = 7), qty on 10% (id % 10 = 3), price on 10% (id % 10 = 5), then qty on
# sixteen strided 0.1% slices (id % 1000 = k). Layers: the same 1M rows with 4 and 16
# strided 1% layers on qty (id % 100 = k). Each overlaid version is compared with its
# rows exported and written fresh ("compacted").
#
# Whole process: each command runs REPEATS times (default 5), overlaid and compacted
# alternating, and prints the medians and their ratio. In process: bench/version_compare
# times both in one process, interleaved, and prints the ratio of the medians; "first
# read" lines open the version anew each round (--cold).
source "$(dirname "$0")/common.sh"
LANCELET=${LANCELET:-$BUILD/lancelet}
COMPARE="$BUILD/bench/version_compare"
REPEATS=${REPEATS:-5}
DIR="$WORK/history_unbounded"
SCHEMA="id:int64,price:float64,qty:int32,cat:utf8"
PER_FRAGMENT=$((ROWS / 4))

quiet() { "$@" >/dev/null; }

# fresh SRC@VERSION DEST: the rows of that version written as a new plain dataset.
fresh() {
  local src=${1%@*} version=${1#*@}
  rm -rf "$2" "$2.arrow"
  "$LANCELET" scan "$src" --version "$version" --format arrow >"$2.arrow"
  quiet "$LANCELET" create "$2" --from "$2.arrow" --schema "$SCHEMA" --max-rows-per-file "$PER_FRAGMENT" --file-version 2.2
  rm -f "$2.arrow"
}

if [[ ! -f $DIR/.done ]]; then
  rm -rf "$DIR"
  mkdir -p "$DIR"
  awk -v n="$ROWS" 'BEGIN { print "id,price,qty,cat"; for (i = 0; i < n; i++) printf "%d,%.2f,%d,c%d\n", i, (i * 7919) % 100000 / 100.0, i % 1000, i % 50 }' >"$DIR/rows.csv"
  for ds in history layers; do
    quiet "$LANCELET" create "$DIR/$ds.lance" --from "$DIR/rows.csv" --schema "$SCHEMA" --max-rows-per-file "$PER_FRAGMENT" --file-version 2.2
    # Version 2: lift the overlay-layer bound, so that the layers stay as the user wrote them.
    quiet "$LANCELET" config "$DIR/$ds.lance" --set lance.compaction.max_overlays_per_fragment=none
  done
  H="$DIR/history.lance"
  quiet "$LANCELET" update "$H" --set "price = price * 1.1" --mode overlay
  quiet "$LANCELET" update "$H" --set "price = price + 1" --where "id % 100 = 7"
  quiet "$LANCELET" update "$H" --set "qty = qty + 1" --where "id % 10 = 3"
  quiet "$LANCELET" update "$H" --set "price = price - 1" --where "id % 10 = 5"
  for ((k = 0; k < 16; k++)); do quiet "$LANCELET" update "$H" --set "qty = qty + 2" --where "id % 1000 = $k"; done
  for ((k = 0; k < 16; k++)); do quiet "$LANCELET" update "$DIR/layers.lance" --set "qty = qty + 1" --where "id % 100 = $k"; done
  fresh "$H@22" "$DIR/history_fresh.lance"
  fresh "$DIR/layers.lance@6" "$DIR/layers4_fresh.lance"
  fresh "$DIR/layers.lance@18" "$DIR/layers16_fresh.lance"
  rm "$DIR/rows.csv"
  touch "$DIR/.done"
fi

same_page_cache "$DIR"

TAKE_ROWS=$(awk -v n="$ROWS" 'BEGIN { srand(7); for (i = 0; i < 100; i++) printf "%s%d", (i ? "," : ""), int(rand() * n) }')

# whole LABEL OVERLAID FRESH ARGS...: ARGS with DS standing for the dataset; OVERLAID is
# DIR@V, read at version V.
whole() { whole_process "whole process  $1" overlaid compacted "${@:2}"; }

# inproc LABEL OVERLAID FRESH MODE COLUMNS ROUNDS [--where P]
inproc() {
  local label=$1 overlaid=$2 fresh=$3 mode=$4 columns=$5 rounds=$6
  shift 6
  "$COMPARE" "$mode" "$columns" "$rounds" "$@" "$fresh@1" "$overlaid" | node -e '
    const lines = require("fs").readFileSync(0, "utf8").trim().split("\n").map(JSON.parse);
    const [fresh, overlaid] = lines;
    console.log(`in process     ${process.argv[1]}: overlaid ${overlaid.median_ms.toFixed(2)} ms, compacted ${fresh.median_ms.toFixed(2)} ms, ${overlaid.ratio.toFixed(2)}x`);
  ' "$label"
}

H="$DIR/history.lance@22"
HF="$DIR/history_fresh.lance"
whole 'count --where "price > 500"' "$H" "$HF" count DS --where "price > 500"
whole 'scan --columns qty' "$H" "$HF" scan DS --columns qty --format arrow
whole 'scan --columns price,qty --where "qty % 7 = 0"' "$H" "$HF" scan DS --columns price,qty --where "qty % 7 = 0" --format arrow
whole 'take(100) price,qty' "$H" "$HF" take DS --rows "$TAKE_ROWS" --columns price,qty --format arrow
for layers in 4 16; do
  version=$((layers + 2))
  L="$DIR/layers.lance@$version"
  LF="$DIR/layers${layers}_fresh.lance"
  whole "$layers strided 1% layers: scan --columns qty" "$L" "$LF" scan DS --columns qty --format arrow
  whole "$layers strided 1% layers: take(100) qty" "$L" "$LF" take DS --rows "$TAKE_ROWS" --columns qty --format arrow
done

inproc 'history: count where price > 500' "$H" "$HF" scan price 21 --where "price > 500"
inproc 'history: scan qty' "$H" "$HF" scan qty 21
inproc 'history: scan price,qty where qty % 7 = 0' "$H" "$HF" scan price,qty 21 --where "qty % 7 = 0"
inproc 'history: take(100) price,qty' "$H" "$HF" take price,qty 201
# A first read: the version is opened anew each round, so nothing is cached or merged.
inproc 'history, first read: scan qty' "$H" "$HF" scan qty 21 --cold
inproc 'history, first read: take(100) price,qty' "$H" "$HF" take price,qty 41 --cold
for layers in 4 16; do
  version=$((layers + 2))
  inproc "$layers strided 1% layers: scan qty" "$DIR/layers.lance@$version" "$DIR/layers${layers}_fresh.lance" scan qty 21
  inproc "$layers strided 1% layers: take(100) qty" "$DIR/layers.lance@$version" "$DIR/layers${layers}_fresh.lance" take qty 201
done
