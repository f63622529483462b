#!/usr/bin/env bash
# IVF search side by side (issue 43's performance section), in one command:
#   bench/ann_compare.sh [BUILD]   (env: ROWS=1000000 DIM=128 QUERIES=1000 WORK=bench-data
#                                   ROUNDS=2 NPROBES=1,2,4,8,16,32,64 STEPS=build,query,faiss,stale)
# lancelet (its own index and the reference's) against the reference (its own index) and
# faiss (bench/faiss_ann_bench, built when libfaiss-dev is installed): build time and peak
# RSS, recall@10 and QPS over an nprobes sweep at refine 0 and 5, single queries and
# batches, QPS at recall 0.90 / 0.95 with the ratios, and the cost of 10% stale rows.
# Everything but the data is printed; the data stays under WORK/ann_ROWSxDIM for reruns.
source "$(dirname "$0")/common.sh"
ninja -C "$BUILD" lancelet lancelet_python >/dev/null
ninja -C "$BUILD" bench/faiss_ann_bench >/dev/null 2>&1 || echo "faiss_ann_bench not built: faiss rows are skipped"
PYTHONPATH="$BUILD/python${PYTHONPATH:+:$PYTHONPATH}" exec /usr/bin/python3 "$(dirname "$0")/ann_compare.py" \
  --rows "$ROWS" --dim "${DIM:-128}" --queries "${QUERIES:-1000}" --work "$WORK" --build "$BUILD" \
  --rounds "${ROUNDS:-2}" --nprobes "${NPROBES:-1,2,4,8,16,32,64}" --steps "${STEPS:-build,query,faiss,stale}"
