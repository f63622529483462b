#!/usr/bin/env bash
# The change feed's cost against a full scan (issue 47). On FEED_ROWS rows (default 1M) of
# (id int64, val int32, emb fixed_size_list<float32, FEED_DIM>, default 768), file version
# 2.2, in 4 fragments, four commits: a 1% one-column UPDATE (overlays), a 10k-row MERGE
# (val of 10k keys), a 1% DELETE and a 10k-row append. For each, the feed of that one commit
# against a full scan of its version:
#   - whole processes: `lancelet changes --from V-1 --to V --format arrow` against
#     `lancelet scan --version V --format arrow`, REPEATS runs each alternating, medians;
#     once with both writing to /dev/null (the scan then hands mapped pages to the kernel
#     without reading them) and once with both read through a pipe by `wc -c`, as any
#     consumer of a scan reads it;
#   - in process: bench/scan_tool feed, warm medians and the bytes each read.
# Then the feed of 100 versions of 10-row updates, on this table and on one a tenth its size:
# the feed's time follows the changed cells, not the table.
#   usage: bench/changes_feed.sh [build/release]    (FEED_ROWS, FEED_DIM, REPEATS, WORK)
source "$(dirname "$0")/common.sh"
LANCELET=${LANCELET:-$BUILD/lancelet}
REPEATS=${REPEATS:-5}
FEED_ROWS=${FEED_ROWS:-1000000}
FEED_DIM=${FEED_DIM:-768}
DIR="$WORK/changes_feed"
DS="$DIR/t.lance"
rm -rf "$DIR"
mkdir -p "$DIR"

now() { date +%s%N; }
median() { tr ' ' '\n' | sort -n | awk '{a[NR] = $1} END {printf "%.3f", a[int((NR + 1) / 2)] / 1e9}'; }

make_table() {  # make_table DS ROWS: version 1
  "$TOOL" gen "$1" --rows "$2" --dim "$FEED_DIM" --fragments 4 --shape wide --version 2.2 >/dev/null
}

make_table "$DS" "$FEED_ROWS"
"$LANCELET" update "$DS" --set "val = val + 1" --where "id % 100 = 0" --mode overlay >/dev/null 2>&1   # v2
awk -v n="$FEED_ROWS" 'BEGIN { print "id,val"; for (i = 0; i < 10000; i++) print (i * 97) % n "," i }' \
  >"$DIR/merge.csv"
"$LANCELET" merge-insert "$DS" --from "$DIR/merge.csv" --on id --when-matched-update-all >/dev/null 2>&1   # v3
"$LANCELET" delete "$DS" --where "id % 100 = 50" >/dev/null                                            # v4
"$TOOL" gen "$DIR/more.lance" --rows 10000 --dim "$FEED_DIM" --shape wide --version 2.2 >/dev/null
"$LANCELET" scan "$DIR/more.lance" --format arrow >"$DIR/more.arrow"
"$LANCELET" append "$DS" --from "$DIR/more.arrow" >/dev/null                                           # v5

echo "$FEED_ROWS rows x (id, val, ${FEED_DIM}-d float32); medians of $REPEATS"
echo "whole processes: to /dev/null, then through a pipe | in process, with bytes read"
printf '%-22s %10s %9s %9s %7s %9s %9s %7s | %9s %9s %7s %12s %12s %7s\n' commit feed_rows feed_s scan_s ratio \
  feed_s scan_s ratio feed_s scan_s ratio feed_bytes scan_bytes ratio
names=("" "" "1% UPDATE (overlay)" "10k-row MERGE" "1% DELETE" "10k-row append")
for v in 2 3 4 5; do
  feed=() scan=() feed_piped=() scan_piped=()
  for ((r = 0; r < REPEATS + 1; r++)); do  # the first round warms the page cache
    t0=$(now); "$LANCELET" changes "$DS" --from $((v - 1)) --to "$v" --format arrow >/dev/null; t1=$(now)
    "$LANCELET" scan "$DS" --version "$v" --format arrow >/dev/null; t2=$(now)
    "$LANCELET" changes "$DS" --from $((v - 1)) --to "$v" --format arrow | wc -c >/dev/null; t3=$(now)
    "$LANCELET" scan "$DS" --version "$v" --format arrow | wc -c >/dev/null; t4=$(now)
    ((r > 0)) && feed+=($((t1 - t0))) && scan+=($((t2 - t1))) && feed_piped+=($((t3 - t2))) &&
      scan_piped+=($((t4 - t3)))
  done
  fm=$(echo "${feed[*]}" | median) sm=$(echo "${scan[*]}" | median)
  fp=$(echo "${feed_piped[*]}" | median) sp=$(echo "${scan_piped[*]}" | median)
  inproc=$("$TOOL" feed "$DS" --at "$v" --repeat "$REPEATS")
  node -e '
    const [name, fm, sm, fp, sp, j] = process.argv.slice(1);
    const r = JSON.parse(j);
    const pad = (s, n) => String(s).padStart(n);
    console.log(name.padEnd(22) + " " + pad(r.feed_rows, 10) + " " + pad(fm, 9) + " " + pad(sm, 9) + " " +
      pad((fm / sm).toFixed(3), 7) + " " + pad(fp, 9) + " " + pad(sp, 9) + " " + pad((fp / sp).toFixed(3), 7) + " | " + pad(r.feed_s.toFixed(4), 9) + " " + pad(r.scan_s.toFixed(4), 9) + " " +
      pad(r.time_ratio.toFixed(4), 7) + " " + pad(r.feed_bytes, 12) + " " + pad(r.scan_bytes, 12) + " " +
      pad(r.bytes_ratio.toFixed(4), 7));
  ' "${names[$v]}" "$fm" "$sm" "$fp" "$sp" "$inproc"
done

# 100 versions of 10-row updates, on this table and on one a tenth its size.
range_feed() {  # range_feed DS ROWS: seconds of the feed of the 100 updates after version 1
  local ds=$1 rows=$2
  rm -rf "$ds"
  make_table "$ds" "$rows"
  for ((u = 0; u < 100; u++)); do
    "$LANCELET" update "$ds" --set "val = val + 1" --where "id >= $((u * 10)) AND id < $((u * 10 + 10))" \
      --mode overlay >/dev/null 2>&1
  done
  local times=()
  for ((r = 0; r < REPEATS + 1; r++)); do
    t0=$(now); "$LANCELET" changes "$ds" --from 1 --format arrow >/dev/null; t1=$(now)
    ((r > 0)) && times+=($((t1 - t0)))
  done
  echo "${times[*]}" | median
}
big=$(range_feed "$DIR/range_big.lance" "$FEED_ROWS")
small=$(range_feed "$DIR/range_small.lance" $((FEED_ROWS / 10)))
echo "feed of 100 versions x 10 updated rows: $big s on $FEED_ROWS rows, $small s on $((FEED_ROWS / 10)) rows" \
     "($(awk -v a="$big" -v b="$small" 'BEGIN { printf "%.2f", a / b }')x)"
