#!/usr/bin/env bash
# Index build, lancelet against the reference, interleaved A B A B (issue 43: "build
# faster than the reference"):
#   bench/ann_build_ab.sh [BUILD]   (env: ROWS=1000000 DIM=128 WORK=bench-data ROUNDS=3
#                                    TYPE=ivf_flat|ivf_pq PARTITIONS=256)
# Each round copies WORK/ann_ROWSxDIM/base.lance (made by ann_compare.sh) afresh for each
# side, then times `lancelet index create` (the whole process) and the reference's
# createIndex (reference_ann.mjs build: the call alone, and its whole node process) under
# /usr/bin/time -v for the peak RSS; the side that goes first alternates. One line per
# build, then the medians and their ratio. The copy is removed at the end.
source "$(dirname "$0")/common.sh"
ninja -C "$BUILD" lancelet >/dev/null
TYPE=${TYPE:-ivf_flat}
PARTITIONS=${PARTITIONS:-256}
DATA="$WORK/ann_${ROWS}x${DIM:-128}"
COPY="$WORK/build_ab.lance"
params=(--partitions "$PARTITIONS")
[[ $TYPE == ivf_pq ]] && params+=(--sub-vectors 16 --bits 8)
declare -a ours=() ref=() ref_process=()
run() {  # run SIDE: one build on a fresh copy; prints "SIDE wall_s call_s rss_mib load"
  rm -rf "$COPY" && cp -r "$DATA/base.lance" "$COPY" && sync
  local load out
  load=$(cut -d' ' -f1 /proc/loadavg)
  if [[ $1 == lancelet ]]; then
    out=$( { /usr/bin/time -v "$BUILD/lancelet" index create "$COPY" emb --type "$TYPE" "${params[@]}" >/dev/null; } 2>&1)
  else
    out=$( { /usr/bin/time -v node "$(dirname "$0")/reference_ann.mjs" build "$COPY" "$TYPE" "$PARTITIONS" 16 8; } 2>&1)
  fi
  local wall rss call
  wall=$(grep "Elapsed (wall clock)" <<<"$out" | awk -F': ' '{print $2}' | awk -F: '{ s = 0; for (i = 1; i <= NF; i++) s = s * 60 + $i; print s }')
  rss=$(grep "Maximum resident set size" <<<"$out" | awk -F': ' '{printf "%.0f", $2 / 1024}')
  call=$(grep -o '"build_s":[0-9.]*' <<<"$out" | cut -d: -f2)
  echo "$1 ${wall} ${call:-$wall} ${rss} ${load}"
}
for ((r = 0; r < ${ROUNDS:-3}; r++)); do
  if ((r % 2 == 0)); then order=(lancelet reference); else order=(reference lancelet); fi
  for side in "${order[@]}"; do
    line=$(run "$side")
    echo "round $r: $line (side, process wall s, build call s, peak RSS MiB, load)"
    read -r _ wall call rss _ <<<"$line"
    if [[ $side == lancelet ]]; then ours+=("$wall/$rss"); else ref+=("$call/$rss"); ref_process+=("$wall"); fi
  done
done
rm -rf "$COPY"
node -e '
  const [ours, ref, refp] = process.argv.slice(1).map((s) => s.split(" "));
  const med = (xs) => { const v = xs.map(Number).sort((a, b) => a - b); return v[Math.floor(v.length / 2)]; };
  const t = (xs) => med(xs.map((x) => x.split("/")[0])), m = (xs) => med(xs.map((x) => x.split("/")[1]));
  console.log(`median: lancelet ${t(ours).toFixed(1)} s ${m(ours)} MiB; reference createIndex ${t(ref).toFixed(1)} s ` +
              `(whole process ${med(refp).toFixed(1)} s) ${m(ref)} MiB; time ${(t(ours) / t(ref)).toFixed(2)}x, ` +
              `peak RSS ${(m(ours) / m(ref)).toFixed(2)}x the reference`);
' "${ours[*]}" "${ref[*]}" "${ref_process[*]}"
