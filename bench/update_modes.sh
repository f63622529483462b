#!/usr/bin/env bash
# The UPDATE cost model's crossovers: each UpdateMode (overlay, columns, rows) on copies
# of one dataset (MODE_ROWS rows, default 200k: id int64, val int32, emb fsl<float32,32>
# in 4 fragments, file version 2.2), changing a fraction f of the rows (id % 1000 < 1000f)
# of the narrow column val or the wide column emb. Per case: the update's wall time
# (median of REPEATS), the bytes it wrote (growth of the directory), and the median time
# of the read that follows (count --where "val > 500" for val, a scan of emb for emb).
# The last column adds both: what one update and one later read cost together.
source "$(dirname "$0")/common.sh"
LANCELET=${LANCELET:-$BUILD/lancelet}
REPEATS=${REPEATS:-3}
MODE_ROWS=${MODE_ROWS:-200000}
DIR="$WORK/update_modes"
BASE="$DIR/base.lance"
mkdir -p "$DIR"
[[ -d $BASE ]] || "$TOOL" gen "$BASE" --rows "$MODE_ROWS" --dim 32 --fragments 4 --shape wide --version 2.2 >/dev/null

median() { tr ' ' '\n' | sort -n | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }
now() { date +%s%N; }

printf '%-4s %6s %-8s %10s %12s %10s %12s\n' col f mode update_s written_MB read_s update+read
for col in val emb; do
  if [[ $col == val ]]; then set_expr="val = val + 1"; read_args=(count DS --where "val > 500");
  else set_expr="emb = emb"; read_args=(scan DS --columns emb --format arrow); fi
  for f in 0.001 0.01 0.1 0.3 0.6 1.0; do
    k=$(awk -v f="$f" 'BEGIN { printf "%d", f * 1000 }')
    for mode in overlay columns rows; do
      updates=() reads=() written=0
      for ((r = 0; r < REPEATS; r++)); do
        ds="$DIR/case.lance"
        rm -rf "$ds"
        cp -r "$BASE" "$ds"
        sync
        b0=$(du -sb "$ds" | cut -f1)
        t0=$(now)
        "$LANCELET" update "$ds" --set "$set_expr" --where "id % 1000 < $k" --mode "$mode" >/dev/null 2>&1
        t1=$(now)
        written=$(($(du -sb "$ds" | cut -f1) - b0))
        updates+=($((t1 - t0)))
        args=()
        for a in "${read_args[@]}"; do [[ $a == DS ]] && args+=("$ds") || args+=("$a"); done
        t0=$(now)
        "$LANCELET" "${args[@]}" >/dev/null
        t1=$(now)
        reads+=($((t1 - t0)))
      done
      u=$(echo "${updates[*]}" | median)
      rd=$(echo "${reads[*]}" | median)
      awk -v c="$col" -v f="$f" -v m="$mode" -v u="$u" -v w="$written" -v r="$rd" \
        'BEGIN { printf "%-4s %6s %-8s %10.3f %12.2f %10.3f %12.3f\n", c, f, m, u / 1e9, w / 1e6, r / 1e9, (u + r) / 1e9 }'
    done
  done
done
rm -rf "$DIR/case.lance"
