#!/usr/bin/env bash
# Overlay UPDATE (lancelet) vs row-rewriting UPDATE (the reference, table.update()) on
# identical copies of one dataset: 1M rows of (id int64, val int32, emb fsl<float32,768>)
# in 10 fragments, changing 1% of the rows (id % 100 == 0). Cases: the narrow column
# `val` and the wide column `emb`, then `val` on narrow rows (id, val). Prints bytes
# written (growth of the dataset directory), wall time, their ratios, and lancelet's
# peak resident memory.
source "$(dirname "$0")/common.sh"
DIM=${DIM:-768}
WHERE="id % 100 = 0"

bytes() { du -sb "$1" | cut -f1; }

run_case() {  # run_case BASE LABEL SET
  local base=$1 label=$2 set=$3
  local ours="$WORK/upd_ours.lance" ref="$WORK/upd_ref.lance"
  rm -rf "$ours" "$ref"
  cp -r "$base" "$ours"
  cp -r "$base" "$ref"
  sync  # the copies' writeback would otherwise run during the timed updates
  local b0 b1 r0 r1 t_ours t_ref rss
  b0=$(bytes "$ours")
  /usr/bin/time -v "$TOOL" update "$ours" --set "$set" --where "$WHERE" > "$WORK/ours.json" 2> "$WORK/ours.time"
  b1=$(bytes "$ours")
  t_ours=$(node -e 'console.log(JSON.parse(require("fs").readFileSync(process.argv[1])).seconds)' "$WORK/ours.json")
  rss=$(awk -F': ' '/Maximum resident set size/ {print int($2/1024)}' "$WORK/ours.time")
  r0=$(bytes "$ref")
  t_ref=$(RUST_LOG=error node bench/reference_update.mjs "$ref" --set "$set" --where "$WHERE" |
          node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).seconds))')
  r1=$(bytes "$ref")
  node -e '
    const [label, bo, to, br, tr, rss] = process.argv.slice(1).map((x, i) => i ? Number(x) : x);
    console.log(`${label}: lancelet ${bo} bytes in ${to}s (peak RSS ${rss} MB); reference ${br} bytes in ${tr}s; ` +
                `bytes ratio ${(br / bo).toFixed(1)}x fewer, time ratio ${(tr / to).toFixed(1)}x faster`);
  ' "$label" $((b1 - b0)) "$t_ours" $((r1 - r0)) "$t_ref" "$rss"
  rm -rf "$ours" "$ref"
}

WIDE="$WORK/upd_wide.lance"
[[ -d $WIDE ]] || "$TOOL" gen "$WIDE" --rows "$ROWS" --dim "$DIM" --fragments 10 --shape wide --version 2.0 >/dev/null
run_case "$WIDE" "wide rows, SET val = val + 1" "val = val + 1"
run_case "$WIDE" "wide rows, SET emb = emb (rewrites the vectors)" "emb = emb"
NARROW="$WORK/upd_narrow.lance"
[[ -d $NARROW ]] || "$TOOL" gen "$NARROW" --rows "$ROWS" --fragments 10 --shape narrow --version 2.0 >/dev/null
run_case "$NARROW" "narrow rows, SET val = val + 1" "val = val + 1"
