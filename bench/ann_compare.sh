#!/usr/bin/env bash
# IVF search side by side (issue 43's performance section), in one command:
#   bench/ann_compare.sh [BUILD]   (env: ROWS=1000000 DIM=128 QUERIES=1000 WORK=bench-data
#                                   ROUNDS=2 NPROBES=1,2,4,8,16,32,64 STEPS=build,query,faiss,stale)
# lancelet (its own index and the reference's) against the reference (its own index) and
# faiss (bench/faiss_ann_bench, built when libfaiss-dev is installed): build time and peak
# RSS, recall@10 and QPS over an nprobes sweep at refine 0 and 5, single queries and
# batches, QPS at recall 0.90 / 0.95 with the ratios, and the cost of 10% stale rows.
# STEPS=stale_ab (after a run with `stale`, which makes ivf_pq_stale.lance): fresh against
# 10% stale in one C++ process (bench/ivf_ab), alternating query by query, medians of
# ROUNDS (at least 5 advised), no Python in the timed loop.
# Everything but the data is printed; the data stays under WORK/ann_ROWSxDIM for reruns.
source "$(dirname "$0")/common.sh"
ninja -C "$BUILD" lancelet lancelet_python bench/ivf_ab >/dev/null
ninja -C "$BUILD" bench/faiss_ann_bench >/dev/null 2>&1 || echo "faiss_ann_bench not built: faiss rows are skipped"
STEPS=${STEPS:-build,query,faiss,stale}
if [[ ",$STEPS," == *,stale_ab,* ]]; then
  DATA="$WORK/ann_${ROWS}x${DIM:-128}"
  echo "stale_ab: fresh (a) against 10% stale (b), load $(cut -d' ' -f1 /proc/loadavg)"
  "$BUILD/bench/ivf_ab" "$DATA/ivf_pq_ours.lance" "$DATA/ivf_pq_stale.lance" "$DATA/queries.f32" "$DATA/gt.i32" \
    "${DIM:-128}" --nprobes "${NPROBES:-1,2,4,8,16}" --refine 0,5 --rounds "${ROUNDS:-5}"
  STEPS=${STEPS//stale_ab/}
  [[ -z "${STEPS//,/}" ]] && exit 0
fi
PYTHONPATH="$BUILD/python${PYTHONPATH:+:$PYTHONPATH}" exec /usr/bin/python3 "$(dirname "$0")/ann_compare.py" \
  --rows "$ROWS" --dim "${DIM:-128}" --queries "${QUERIES:-1000}" --work "$WORK" --build "$BUILD" \
  --rounds "${ROUNDS:-2}" --nprobes "${NPROBES:-1,2,4,8,16,32,64}" --steps "$STEPS" --kinds "${KINDS:-ivf_pq,ivf_flat}"
