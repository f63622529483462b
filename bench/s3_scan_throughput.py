"""Scan throughput of a large table on the S3 test server against the same table on the
local disk, lancelet beside the reference (pylance).

    .venv/bin/python bench/s3_scan_throughput.py [--gib 1.0] [--repeats 3] [--latency-ms 0]

The reference writes one table of (id int64, emb float32 x 64) rows, GIB gibibytes of
values in files of 250k rows, once to a local directory and once to moto (through
tests/support/s3_proxy.py, which can add LATENCY_MS to each request). Each tool then scans
every column in a fresh process, REPEATS times per place; printed: the median seconds and
MB/s per tool and place, and the ratios."""
import argparse
import json
import os
import shutil
import statistics
import sys
import time

from s3_compare import moto_behind_proxy, options, proxy, run_child

ROW_BYTES = 8 + 64 * 4


def child(tool, uri, port):
    """Scans the table in this process; prints the seconds and the rows."""
    opts = options(port) if uri.startswith("s3://") else None
    lib = __import__("lancelet" if tool == "lancelet" else "lance")
    import pyarrow  # noqa: F401  (imported before the clock starts)
    start = time.perf_counter()
    ds = lib.dataset(uri, storage_options=opts) if opts else lib.dataset(uri)
    rows = 0
    for batch in ds.to_batches():
        rows += batch.num_rows
    print(json.dumps({"seconds": time.perf_counter() - start, "rows": rows}))


def write(uri, port, rows):
    import lance
    import numpy as np
    import pyarrow as pa
    rng = np.random.default_rng(11)
    opts = options(port) if uri.startswith("s3://") else None

    def batches():
        step = 250_000
        for first in range(0, rows, step):
            n = min(step, rows - first)
            emb = pa.FixedSizeListArray.from_arrays(pa.array(rng.random(n * 64, dtype=np.float32)), 64)
            yield pa.record_batch([pa.array(np.arange(first, first + n, dtype=np.int64)), emb], names=["id", "emb"])

    schema = pa.schema([("id", pa.int64()), ("emb", pa.list_(pa.float32(), 64))])
    reader = pa.RecordBatchReader.from_batches(schema, batches())
    lance.write_dataset(reader, uri, max_rows_per_file=250_000, mode="overwrite", storage_options=opts)


def run(tool, uri, port):
    return run_child(__file__, tool, uri, port)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gib", type=float, default=1.0)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--latency-ms", type=int, default=0)
    args = ap.parse_args()
    rows = int(args.gib * (1 << 30) / ROW_BYTES)
    work = os.path.join(os.environ.get("TMPDIR", "/tmp"), f"s3_scan.{os.getpid()}")
    try:
        with moto_behind_proxy(os.path.join(work, "moto")) as port:
            local, remote = os.path.join(work, "table.lance"), "s3://bench/table.lance"
            write(local, port, rows)
            write(remote, port, rows)
            mb = rows * ROW_BYTES / 1e6
            print(f"{rows} rows, {mb:.0f} MB of values; median of {args.repeats} fresh-process scans of every column")
            proxy(port, f"set?latency_ms={args.latency_ms}", b"")
            medians = {}
            for place, uri in (("local", local), ("s3", remote)):
                for tool in ("lancelet", "pylance"):
                    runs = [run(tool, uri, port) for _ in range(args.repeats)]
                    assert all(r["rows"] == rows for r in runs), runs
                    medians[place, tool] = statistics.median(r["seconds"] for r in runs)
                    print(f"{place:<6}{tool:<10}{medians[place, tool]:>8.2f} s{mb / medians[place, tool]:>9.0f} MB/s")
            for place in ("local", "s3"):
                print(f"{place}: reference/lancelet {medians[place, 'pylance'] / medians[place, 'lancelet']:.2f}x")
            for tool in ("lancelet", "pylance"):
                print(f"{tool}: s3 takes {medians['s3', tool] / medians['local', tool]:.2f}x the local time")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    if sys.argv[1:2] == ["child"]:
        child(sys.argv[2], sys.argv[3], int(sys.argv[4]))
    else:
        main()
