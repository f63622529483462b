#!/usr/bin/env bash
# A full scan of a reference-written 2.2 table (bench/census_compare.sh builds it) as a new
# user runs it, one whole process per run: `lancelet scan DS --columns C --format arrow` against
# the reference's query().select(C).toArrow(), alternating, median of REPEATS, per projection.
#   bash bench/projection_compare.sh [BUILD]
source "$(dirname "$0")/common.sh"
REPEATS=${REPEATS:-5}
DS="$WORK/census_${ROWS}_2_2.lance"
export RUST_LOG=error
if [[ ! -d $DS/_versions ]]; then
  rm -rf "$DS"
  node bench/reference_gen.mjs "$DS" --rows "$ROWS" --version 2.2 >/dev/null
fi
now() { date +%s%N; }
for columns in "" id,i32,f32 s_short,s_lowcard emb tags; do
  ours=() ref=()
  for ((r = 0; r < REPEATS; r++)); do
    t0=$(now); "$BUILD/lancelet" scan "$DS" ${columns:+--columns "$columns"} --format arrow >/dev/null; t1=$(now)
    ours+=($((t1 - t0)))
    t0=$(now); node bench/reference_to_arrow.mjs "$DS" $columns; t1=$(now)
    ref+=($((t1 - t0)))
  done
  medians "scan ${columns:-all columns}" lancelet reference "${ours[*]}" "${ref[*]}"
done

# The full-zip fixed_size_list<float32,128> column decoded in process (warm, median of 9),
# beside a plain read() of the whole data file from the page cache, the limit it approaches.
emb=$("$TOOL" scan "$DS" --columns emb --repeat 9)
file=$(ls "$DS"/data/*.lance | head -1)
cat "$file" >/dev/null
read_line=$(dd if="$file" of=/dev/null bs=16M 2>&1 | tail -1)
node -e '
  const [e, rows, line] = [JSON.parse(process.argv[1]), Number(process.argv[2]), process.argv[3]];
  const gbps = (rows * 128 * 4) / e.median_s / 1e9;
  console.log(`emb decode (in process): ${gbps.toFixed(2)} GB/s (median ${e.median_s}s); read() of the data file: ${line.split(",").pop().trim()}`);
' "$emb" "$ROWS" "$read_line"
