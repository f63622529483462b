"""lancelet against pylance from Python, on one dataset: to_table() into pyarrow, and a
DuckDB aggregate over a lancelet scanner against DuckDB over pylance's dataset.

    python bench/python_compare.py DIR [ROWS] [RUNS]

writes DIR/bench.lance with pylance (ROWS rows of int64, float64, utf8 and 768-d
float32; default 1,000,000) unless it is there, then prints the median seconds of RUNS
runs (default 5) of each measurement, and the ratio pylance / lancelet."""
import os
import statistics
import sys
import time

import duckdb
import lance
import numpy as np
import pyarrow as pa

import lancelet

directory = sys.argv[1]
rows = int(sys.argv[2]) if len(sys.argv) > 2 else 1_000_000
runs = int(sys.argv[3]) if len(sys.argv) > 3 else 5
uri = os.path.join(directory, "bench.lance")
DIM = 768


def batches():
    rng = np.random.default_rng(0)
    for start in range(0, rows, 65536):
        n = min(65536, rows - start)
        vectors = pa.FixedSizeListArray.from_arrays(pa.array(rng.random(n * DIM, dtype=np.float32)), DIM)
        yield pa.record_batch({"i": pa.array(np.arange(start, start + n, dtype=np.int64)),
                               "f": pa.array(rng.random(n)),
                               "s": pa.array([f"row {j} " + "x" * (j % 40) for j in range(start, start + n)]),
                               "v": vectors})


if not os.path.exists(uri):
    schema = next(batches()).schema
    lance.write_dataset(pa.RecordBatchReader.from_batches(schema, batches()), uri)


def median_seconds(run):
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        result = run()
        times.append(time.perf_counter() - start)
        del result
    return statistics.median(times)


ours, theirs = lancelet.dataset(uri), lance.dataset(uri)
assert ours.count_rows() == theirs.count_rows() == rows
QUERY = "SELECT count(*), sum(i), avg(f), max(length(s)) FROM {}"


def ours_duckdb():
    scanner = ours.scanner(columns=["i", "f", "s"])  # noqa: F841  (DuckDB finds it by name)
    return duckdb.sql(QUERY.format("scanner")).fetchall()


def theirs_duckdb():
    return duckdb.sql(QUERY.format("theirs")).fetchall()


(mine,), (want,) = ours_duckdb(), theirs_duckdb()
assert mine[0] == want[0] and mine[1] == want[1] and mine[3] == want[3] and abs(mine[2] - want[2]) < 1e-9, (mine, want)
results = [
    ("to_table() all columns", lambda: ours.to_table(), lambda: theirs.to_table()),
    ("to_table(columns=[i, f, s])", lambda: ours.to_table(columns=["i", "f", "s"]),
     lambda: theirs.to_table(columns=["i", "f", "s"])),
    ("DuckDB aggregate", ours_duckdb, theirs_duckdb),
]
print(f"{rows} rows x (int64, float64, utf8, {DIM}-d float32), median of {runs} runs")
for name, mine, pylance in results:
    a, b = median_seconds(mine), median_seconds(pylance)
    print(f"{name:32s} lancelet {a:7.3f} s   pylance {b:7.3f} s   pylance/lancelet {b / a:5.2f}x")
