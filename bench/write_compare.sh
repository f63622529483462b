#!/usr/bin/env bash
# Write throughput at 2.2, lancelet against the reference, on the issue-3 benchmark table
# (bench/reference_gen.mjs: int64, int32, float32, short utf8, low-cardinality utf8,
# fixed_size_list<float32,128>, list<int32>). Both write the same Arrow file as a new
# dataset, as a user types it (`lancelet create` / the oracle's `create`, whole processes,
# alternating), REPEATS times each (default 3). Prints the median seconds and rows/s of
# each, their ratio, and each side's peak RSS (GNU time); then lancelet's peak RSS writing ~3 GB.
#   ROWS=1000000 bash bench/write_compare.sh [BUILD]
source "$(dirname "$0")/common.sh"
LANCELET=${LANCELET:-$BUILD/lancelet}
ORACLE="node tests/oracle/oracle.mjs"
REPEATS=${REPEATS:-3}
DIR="$WORK/write_compare_$ROWS"
rm -rf "$DIR"
mkdir -p "$DIR"
node bench/reference_gen.mjs "$DIR/table.lance" --rows "$ROWS" --version 2.2 >/dev/null
"$LANCELET" scan "$DIR/table.lance" --format arrow >"$DIR/table.arrow"
rm -rf "$DIR/table.lance"
same_page_cache "$DIR"

# timed NAME COMMAND...: runs the command writing $DIR/out.lance; appends nanoseconds to
# times_NAME and the peak RSS in KiB to rss_NAME.
times_ours=() times_ref=() rss_ours=() rss_ref=()
timed() {
  local name=$1
  shift
  rm -rf "$DIR/out.lance"
  sync  # the previous run's 545 MB still being written back would slow this one
  local t0 t1
  t0=$(date +%s%N)
  /usr/bin/time -f "%M" -o "$DIR/rss" "$@" >/dev/null
  t1=$(date +%s%N)
  eval "times_$name+=($((t1 - t0)))"
  eval "rss_$name+=($(cat "$DIR/rss"))"
}
for ((r = 0; r < REPEATS; r++)); do
  timed ours "$LANCELET" create "$DIR/out.lance" --from "$DIR/table.arrow" --file-version 2.2
  timed ref $ORACLE create "$DIR/out.lance" --data "$DIR/table.arrow" --file-version 2.2
done
node -e '
  const [rows, a, b, ra, rb] = process.argv.slice(1);
  const median = (s) => { const xs = s.split(" ").map(Number).sort((x, y) => x - y); return xs[Math.floor(xs.length / 2)]; };
  const ta = median(a) / 1e9, tb = median(b) / 1e9;
  const rate = (t) => Math.round(rows / t).toLocaleString("en-US");
  console.log(`write ${rows} rows at 2.2: lancelet ${ta.toFixed(3)} s (${rate(ta)} rows/s, peak RSS ${(median(ra) / 1024).toFixed(0)} MiB), ` +
              `reference ${tb.toFixed(3)} s (${rate(tb)} rows/s, peak RSS ${(median(rb) / 1024).toFixed(0)} MiB), ${(tb / ta).toFixed(2)}x the reference rows/s`);
' "$ROWS" "${times_ours[*]}" "${times_ref[*]}" "${rss_ours[*]}" "${rss_ref[*]}"
rm -rf "$DIR"

# Peak RSS of writing a ~3 GB dataset (1M x 768-d float32 and three narrow columns) from an
# Arrow file, as a user types it. The reference cannot take this input: its oracle reads
# files of at most 2 GiB. SKIP_MEMORY=1 skips it (it needs ~9 GB of disk for a minute).
if [[ ${SKIP_MEMORY:-0} != 1 ]]; then
  BIG="$WORK/write_768"
  rm -rf "$BIG" && mkdir -p "$BIG"
  "$TOOL" gen "$BIG/source.lance" --rows "$ROWS" --dim 768 --version 2.2 >/dev/null
  "$LANCELET" scan "$BIG/source.lance" --format arrow >"$BIG/table.arrow"
  rm -rf "$BIG/source.lance"
  /usr/bin/time -f "%e %M" -o "$BIG/time" "$LANCELET" create "$BIG/out.lance" --from "$BIG/table.arrow" >/dev/null
  read -r seconds rss <"$BIG/time"
  echo "write $(du -sh "$BIG/out.lance" | cut -f1) ($ROWS rows x 768-d) from a $(du -sh "$BIG/table.arrow" | cut -f1) Arrow file: ${seconds} s, peak RSS $((rss / 1024)) MiB"
  rm -rf "$BIG"
fi
