#!/usr/bin/env bash
# Read overhead of overlays: full scan and take of 100 random rows with 0, 4 and 16
# overlay layers, each covering 1% of the rows, strided (id % 100 = k) or contiguous (a
# block of 1% of every fragment), on the narrow column `val` and on the wide column
# `emb`. Dataset: 1M rows of (id, val, emb fsl<float32,768>) in 10 fragments.
#
# One copy of the dataset per pattern gets 16 `val` layers (versions 2-17), then 16 `emb`
# layers (18-33). Each comparison times versions of that one dataset in one process,
# interleaved (bench/version_compare), so the base files are the same files and noise
# hits every version alike. The cheap comparisons run 5 times: each line prints medians
# and ratios to the 0-layer version, with the range of the ratios over the runs.
source "$(dirname "$0")/common.sh"
DIM=${DIM:-768}
COMPARE="$BUILD/bench/version_compare"
BASE="$WORK/upd_wide.lance"
[[ -d $BASE ]] || "$TOOL" gen "$BASE" --rows "$ROWS" --dim "$DIM" --fragments 10 --shape wide --version 2.0 >/dev/null
per_frag=$((ROWS / 10))

# compare LABEL REPEATS MODE COLUMN ROUNDS [--where P] DIR@V0 DIR@V4 DIR@V16: runs version_compare
# REPEATS times and prints one line: per layer count, the median over the runs of the
# median time and of the ratio to 0 layers, with the range of the ratios.
compare() {
  local label=$1 repeats=$2
  shift 2
  for ((r = 0; r < repeats; r++)); do "$COMPARE" "$@"; done | node -e '
    const runs = require("fs").readFileSync(0, "utf8").trim().split("\n").map(JSON.parse);
    const median = (xs) => xs.slice().sort((a, b) => a - b)[Math.floor(xs.length / 2)];
    const parts = ["0", "4", "16"].map((layers, i) => {
      const mine = runs.filter((_, j) => j % 3 === i);
      const ratios = mine.map((l) => l.ratio);
      const range = mine.length > 1 ? ` [${Math.min(...ratios).toFixed(2)}-${Math.max(...ratios).toFixed(2)}]` : "";
      return `${layers} layers ${median(mine.map((l) => l.median_ms)).toFixed(3)} ms (${median(ratios).toFixed(2)}x${range})`;
    });
    console.log(`${process.argv[1]}: ${parts.join(", ")}`);
  ' "$label"
}

for pattern in strided contiguous; do
  DS="$WORK/layers_$pattern.lance"
  rm -rf "$DS"
  cp -r "$BASE" "$DS"
  for column in val emb; do
    set_expr="$column = $column"
    [[ $column == val ]] && set_expr="val = val + 1"
    for ((k = 0; k < 16; k++)); do
      if [[ $pattern == strided ]]; then
        where="id % 100 = $k"
      else
        where="id % $per_frag >= $((k * per_frag / 100)) AND id % $per_frag < $(((k + 1) * per_frag / 100))"
      fi
      "$TOOL" update "$DS" --set "$set_expr" --where "$where" >/dev/null
    done
  done
  # val layers are versions 2-17 and emb layers 18-33; emb's 0-layer version is 17.
  compare "scan val, $pattern" 5 scan val 300 "$DS@1" "$DS@5" "$DS@17"
  # Rows a filter keeps (or that survive deletions) are read by offset list, not range.
  compare "scan val where id % 2 = 0, $pattern" 3 scan val 30 --where "id % 2 = 0" "$DS@1" "$DS@5" "$DS@17"
  compare "take(100) val, $pattern" 5 take val 100 "$DS@1" "$DS@5" "$DS@17"
  compare "scan emb, $pattern" 1 scan emb 3 "$DS@17" "$DS@21" "$DS@33"
  compare "take(100) emb, $pattern" 5 take emb 50 "$DS@17" "$DS@21" "$DS@33"
  rm -rf "$DS"
done
