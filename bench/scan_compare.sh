#!/usr/bin/env bash
# lancelet vs the reference: full warm scan of the same 1M-row dataset written by lancelet
# (int64, float32, utf8, fixed_size_list<float32,128>), then peak memory of a scan of a
# ~3 GB dataset (1M x 768-d). Prints rows/s for each, their ratio, and peak RSS.
# VERSIONS="legacy" scans the same rows written by the reference as legacy (0.1/0.2) files.
source "$(dirname "$0")/common.sh"
for v in ${VERSIONS:-2.0 2.1 2.2}; do
  DS="$WORK/scan_${v/./_}.lance"
  if [[ $v == legacy && ! -d $DS ]]; then
    [[ -d $WORK/scan_2_0.lance ]] || "$TOOL" gen "$WORK/scan_2_0.lance" --rows "$ROWS" --dim 128 --version 2.0 >/dev/null
    "$BUILD/lancelet" scan "$WORK/scan_2_0.lance" --format arrow >"$WORK/scan_rows.arrow"
    RUST_LOG=error node tests/oracle/oracle.mjs create "$DS" --data "$WORK/scan_rows.arrow" --file-version legacy
    rm "$WORK/scan_rows.arrow"
  fi
  [[ -d $DS ]] || "$TOOL" gen "$DS" --rows "$ROWS" --dim 128 --version "$v" >/dev/null
  ours=$("$TOOL" scan "$DS" --repeat 5)
  ref=$(RUST_LOG=error node bench/reference_scan.mjs "$DS" --repeat 5)
  node -e '
    const [v, a, b] = [process.argv[1], JSON.parse(process.argv[2]), JSON.parse(process.argv[3])];
    console.log(`scan file ${v}: lancelet ${a.rows_per_s} rows/s (median ${a.median_s}s), reference ${b.rows_per_s} rows/s (median ${b.median_s}s), ratio ${(a.rows_per_s / b.rows_per_s).toFixed(2)}x`);
  ' "$v" "$ours" "$ref"
done
if [[ ${SKIP_MEMORY:-0} != 1 ]]; then
  BIG="$WORK/wide_768.lance"
  [[ -d $BIG ]] || "$TOOL" gen "$BIG" --rows "$ROWS" --dim 768 --version 2.0 >/dev/null
  size=$(du -sh "$BIG" | cut -f1)
  /usr/bin/time -v "$TOOL" scan "$BIG" --repeat 1 2> "$WORK/time.txt" >/dev/null
  rss=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$WORK/time.txt")
  echo "scan of $BIG ($size): peak RSS $((rss / 1024)) MB"
fi
