#!/usr/bin/env bash
# Read overhead of overlays: full scan and take of 100 random rows with 0, 4 and 16
# overlay layers, each covering 1% of the rows, contiguous or strided, on the narrow
# column `val` and on the wide column `emb`. Dataset: 1M rows of (id, val, emb fsl<768>)
# in 10 fragments. Prints medians and the ratio to the 0-layer base.
set -euo pipefail
BUILD=${1:-build/release}
ROWS=${ROWS:-1000000}
DIM=${DIM:-768}
WORK=${WORK:-bench-data}
TOOL="$BUILD/bench/scan_tool"
mkdir -p "$WORK"
BASE="$WORK/upd_wide.lance"
[[ -d $BASE ]] || "$TOOL" gen "$BASE" --rows "$ROWS" --dim "$DIM" --fragments 10 --shape wide --version 2.0 >/dev/null
per_frag=$((ROWS / 10))

median() { node -e 'const j=JSON.parse(process.argv[1]); console.log(j.median_s)' "$1"; }

for column in val emb; do
  base_scan=$(median "$("$TOOL" scan "$BASE" --repeat 3 --columns id,$column)")
  base_take=$(median "$("$TOOL" take "$BASE" --count 100 --repeat 5)")
  echo "$column: 0 layers: scan ${base_scan}s, take(100) ${base_take}s"
  for pattern in strided contiguous; do
    for layers in 4 16; do
      DS="$WORK/layers.lance"
      rm -rf "$DS"
      cp -r "$BASE" "$DS"
      set_expr="$column = $column"
      [[ $column == val ]] && set_expr="val = val + 1"
      for ((k = 0; k < layers; k++)); do
        if [[ $pattern == strided ]]; then
          where="id % 100 = $k"
        else
          # 1% of every fragment, a different contiguous block per layer
          where="id % $per_frag >= $((k * per_frag / 100)) AND id % $per_frag < $(((k + 1) * per_frag / 100))"
        fi
        "$TOOL" update "$DS" --set "$set_expr" --where "$where" >/dev/null
      done
      scan=$(median "$("$TOOL" scan "$DS" --repeat 3 --columns id,$column)")
      take=$(median "$("$TOOL" take "$DS" --count 100 --repeat 5)")
      node -e '
        const [c, p, l, s, t, bs, bt] = process.argv.slice(1);
        console.log(`${c}: ${l} ${p} layers: scan ${s}s (${(s / bs).toFixed(2)}x base), take(100) ${t}s (${(t / bt).toFixed(2)}x base)`);
      ' "$column" "$pattern" "$layers" "$scan" "$take" "$base_scan" "$base_take"
      rm -rf "$DS"
    done
  done
done
