"""Peak RSS of lancelet.write_dataset from a dict of numpy arrays: N rows of int64 ids,
short strings (numpy U or object) and 128-d float32 vectors. Run under
`/usr/bin/time -v python3 bench/python_ingest_rss.py OUT [ROWS] [U|O]`; prints the input's
size so that "Maximum resident set size" can be set against it."""
import resource
import sys
import time

import numpy as np

import lancelet

out = sys.argv[1]
rows = int(sys.argv[2]) if len(sys.argv) > 2 else 1_000_000
kind = sys.argv[3] if len(sys.argv) > 3 else "U"
rng = np.random.default_rng(0)
ids = np.arange(rows, dtype=np.int64)
texts = np.array([f"row-{i:08d}-" + "x" * (i % 100) for i in range(rows)], dtype=object if kind == "O" else None)
vectors = rng.random((rows, 128), dtype=np.float32)
size = ids.nbytes + vectors.nbytes + (texts.nbytes if kind == "U" else sum(len(t) for t in texts))
print(f"input: {size / 1e6:.0f} MB ({rows} rows, strings as {texts.dtype})", flush=True)
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e3
print(f"peak RSS before writing: {before:.0f} MB", flush=True)
start = time.perf_counter()
ds = lancelet.write_dataset({"id": ids, "text": texts, "vector": vectors}, out, mode="overwrite")
elapsed = time.perf_counter() - start
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e3
print(f"written: {ds.count_rows()} rows in {elapsed:.1f} s; peak RSS {peak:.0f} MB = {peak / (size / 1e6):.2f}x the input")
