#!/usr/bin/env bash
# Read overhead of overlays: full scan and take of 100 random rows with 0, 4 and 16
# overlay layers, each covering 1% of the rows, strided (id % 100 = k) or contiguous (a
# block of 1% of every fragment), on the narrow column `val` and on the wide column
# `emb`. Dataset: 1M rows of (id, val, emb fsl<float32,768>) in 10 fragments.
#
# One copy of the dataset per pattern gets 16 `val` layers (versions 2-17), then 16 `emb`
# layers (18-33). Each comparison times versions of that one dataset in one process,
# interleaved (bench/version_compare), so the base files are the same files and noise
# hits every version alike. Prints medians and ratios to the 0-layer version.
source "$(dirname "$0")/common.sh"
DIM=${DIM:-768}
COMPARE="$BUILD/bench/version_compare"
BASE="$WORK/upd_wide.lance"
[[ -d $BASE ]] || "$TOOL" gen "$BASE" --rows "$ROWS" --dim "$DIM" --fragments 10 --shape wide --version 2.0 >/dev/null
per_frag=$((ROWS / 10))

report() {  # report LABEL: turns version_compare's lines into one line
  node -e '
    const lines = require("fs").readFileSync(0, "utf8").trim().split("\n").map(JSON.parse);
    const parts = lines.map((l, i) => `${["0", "4", "16"][i]} layers ${l.median_ms} ms (${l.ratio.toFixed(2)}x)`);
    console.log(`${process.argv[1]}: ${parts.join(", ")}`);
  ' "$1"
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
  "$COMPARE" scan val 50 "$DS@1" "$DS@5" "$DS@17" | report "scan val, $pattern"
  "$COMPARE" take val 50 "$DS@1" "$DS@5" "$DS@17" | report "take(100) val, $pattern"
  "$COMPARE" scan emb 3 "$DS@17" "$DS@21" "$DS@33" | report "scan emb, $pattern"
  "$COMPARE" take emb 50 "$DS@17" "$DS@21" "$DS@33" | report "take(100) emb, $pattern"
  rm -rf "$DS"
done
