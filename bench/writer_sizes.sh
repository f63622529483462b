#!/usr/bin/env bash
# File sizes at 2.2, lancelet against the reference, per column of the issue-3 benchmark
# table (bench/reference_gen.mjs) and in total: the reference writes the table, lancelet
# reads it out as Arrow, then each side writes every column alone from the same Arrow
# stream. Prints bytes per column, the ratio lancelet / reference, and the total.
#   ROWS=200000 bash bench/writer_sizes.sh [BUILD]
source "$(dirname "$0")/common.sh"
LANCELET=${LANCELET:-$BUILD/lancelet}
ORACLE="node tests/oracle/oracle.mjs"
DIR="$WORK/writer_sizes_$ROWS"
rm -rf "$DIR"
mkdir -p "$DIR"
node bench/reference_gen.mjs "$DIR/table.lance" --rows "$ROWS" --version 2.2 >/dev/null
columns=$("$LANCELET" scan "$DIR/table.lance" --format jsonl --limit 1 | node -e 'console.log(Object.keys(JSON.parse(require("fs").readFileSync(0, "utf8"))).join(" "))')
bytes() { du -sb "$1/data" | cut -f1; }
total_ours=0 total_ref=0
for c in $columns; do
  "$LANCELET" scan "$DIR/table.lance" --columns "$c" --format arrow >"$DIR/$c.arrow"
  $ORACLE create "$DIR/ref_$c.lance" --data "$DIR/$c.arrow" --file-version 2.2
  "$LANCELET" create "$DIR/ours_$c.lance" --from "$DIR/$c.arrow" --file-version 2.2 >/dev/null
  ours=$(bytes "$DIR/ours_$c.lance") ref=$(bytes "$DIR/ref_$c.lance")
  total_ours=$((total_ours + ours)) total_ref=$((total_ref + ref))
  node -e 'const [c, o, r] = process.argv.slice(1); console.log(`${c.padEnd(10)} lancelet ${o.padStart(10)} B, reference ${r.padStart(10)} B, ${(o / r).toFixed(3)}x`)' "$c" "$ours" "$ref"
done
node -e 'const [o, r] = process.argv.slice(1); console.log(`total      lancelet ${o.padStart(10)} B, reference ${r.padStart(10)} B, ${(o / r).toFixed(3)}x`)' "$total_ours" "$total_ref"
rm -rf "$DIR"
