#!/usr/bin/env bash
# lancelet vs the reference on a dataset the reference wrote: 1M rows at data storage version
# 2.2 with its default encodings (bench/reference_gen.mjs: int64 sequential, int32 random,
# float32, short utf8, low-cardinality utf8, fixed_size_list<float32,128>, list<int32>).
# Prints, measured in the same run:
#   - full warm scan: rows/s of each (median of REPEAT runs) and their ratio, and lancelet's
#     scan of the same rows written by lancelet at 2.2;
#   - take of TAKE random rows (the same offsets on both sides, all columns): rows/s, ratio;
#   - the bytes and read calls of lancelet's take against the size of the data file.
#   bash bench/census_compare.sh [BUILD]       (BUILD defaults to build/release)
source "$(dirname "$0")/common.sh"
TAKE=${TAKE:-1000}
REPEAT=${REPEAT:-5}
TAKE_REPEAT=${TAKE_REPEAT:-21}
DS="$WORK/census_${ROWS}_2_2.lance"
OFFSETS="$WORK/census_${ROWS}_take_${TAKE}.txt"
export RUST_LOG=error
if [[ ! -d $DS/_versions ]]; then
  rm -rf "$DS"
  node bench/reference_gen.mjs "$DS" --rows "$ROWS" --version 2.2 >/dev/null
fi
[[ -f $OFFSETS ]] || node bench/reference_gen.mjs --offsets "$OFFSETS" --count "$TAKE" --rows "$ROWS"

# The same rows written by lancelet (2.2, its own encodings), scanned the same way.
OURS="$WORK/census_${ROWS}_2_2_lancelet.lance"
if [[ ! -d $OURS/_versions ]]; then
  rm -rf "$OURS"
  "$BUILD/lancelet" scan "$DS" --format arrow >"$WORK/census_${ROWS}.arrow"
  "$BUILD/lancelet" create "$OURS" --from "$WORK/census_${ROWS}.arrow" --file-version 2.2 >/dev/null
  rm -f "$WORK/census_${ROWS}.arrow"
fi
ours_scan=$("$TOOL" scan "$DS" --repeat "$REPEAT")
ours_written_scan=$("$TOOL" scan "$OURS" --repeat "$REPEAT")
ref_scan=$(node bench/reference_scan.mjs "$DS" --repeat "$REPEAT")
ours_take=$("$TOOL" take "$DS" --offsets "$OFFSETS" --repeat "$TAKE_REPEAT")
ref_take=$(node bench/reference_take.mjs "$DS" --offsets "$OFFSETS" --repeat "$TAKE_REPEAT")
node -e '
  const [os, rs, ot, rt, ow] = process.argv.slice(1).map((j) => JSON.parse(j));
  const mb = (b) => (b / 1048576).toFixed(2) + " MiB";
  console.log(`census scan (reference-written 2.2, ${os.rows} rows): lancelet ${os.rows_per_s} rows/s (median ${os.median_s}s), reference ${rs.rows_per_s} rows/s (median ${rs.median_s}s), ratio ${(os.rows_per_s / rs.rows_per_s).toFixed(2)}x`);
  console.log(`census scan of the same rows written by lancelet: ${ow.rows_per_s} rows/s (median ${ow.median_s}s), ${(ow.rows_per_s / os.rows_per_s).toFixed(2)}x lancelet scanning the reference-written table, ${(ow.rows_per_s / rs.rows_per_s).toFixed(2)}x the reference scanning it`);
  console.log(`census take of ${ot.rows} random rows: lancelet ${ot.rows_per_s} rows/s (median ${ot.median_s}s), reference ${rt.rows_per_s} rows/s (median ${rt.median_s}s), ratio ${(ot.rows_per_s / rt.rows_per_s).toFixed(2)}x`);
  console.log(`census take bytes: lancelet reads ${mb(ot.bytes_read)} in ${ot.read_calls} reads per warm take (first take, with file metadata: ${mb(ot.first_bytes_read)} in ${ot.first_read_calls}) of a ${mb(ot.data_bytes)} data file: ${(100 * ot.bytes_read / ot.data_bytes).toFixed(2)}%`);
' "$ours_scan" "$ref_scan" "$ours_take" "$ref_take" "$ours_written_scan"
