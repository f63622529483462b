"""lancelet.dask on an S3 server with injected latency: how a distributed write and a 1%
update scale with workers and fragments when every request costs LATENCY_MS
(tests/support/s3_proxy.py in front of moto, as bench/s3_compare.py).

    .venv/bin/python bench/dask_s3.py [--rows 400000] [--latency-ms 0,20] [--fragments 8,32] [--repeats 3]

For each latency, fragment count and worker count (1, 2): the write of ROWS rows (id, qty,
16-d float32) as that many fragments, one task per fragment, then an update of qty on 1%
of the rows: median seconds, and the requests each step made (client and tasks, counted by
the proxy) in the first run."""
import argparse
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from s3_compare import moto_behind_proxy, options, proxy  # noqa: E402


def partition(index, rows):
    import numpy as np
    import pyarrow as pa
    rng = np.random.default_rng(index)
    ids = np.arange(index * rows, (index + 1) * rows, dtype=np.int64)
    return pa.table({"id": ids, "qty": rng.integers(0, 1000, rows),
                     "emb": pa.FixedSizeListArray.from_arrays(pa.array(rng.random(rows * 16, dtype=np.float32)), 16)})


def requests(port):
    import json
    return json.loads(proxy(port, "stats"))["requests"]


def job(uri, rows, fragments, storage_options, port):
    """(write seconds, update seconds, write requests, update requests)."""
    import dask
    import lancelet.dask
    per = rows // fragments
    before = requests(port)
    start = time.perf_counter()
    lancelet.dask.write_dataset([dask.delayed(partition)(i, per) for i in range(fragments)], uri,
                                storage_options=storage_options)
    wrote = time.perf_counter() - start
    middle = requests(port)
    start = time.perf_counter()
    lancelet.dask.update(uri, {"qty": "qty + 1"}, where="id % 100 = 0", storage_options=storage_options)
    updated = time.perf_counter() - start
    return wrote, updated, middle - before, requests(port) - middle


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=400_000)
    ap.add_argument("--latency-ms", default="0,20")
    ap.add_argument("--fragments", default="8,32")
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    import distributed
    work = os.path.join(os.environ.get("TMPDIR", "/tmp"), f"dask_s3.{os.getpid()}")
    print(f"{args.rows} rows x (id, qty, 16-d float32); write, then update of 1% of qty; median of {args.repeats}")
    print(f"{'latency':>8s} {'fragments':>9s} {'workers':>7s} {'write s':>8s} {'update s':>8s} "
          f"{'write req':>9s} {'update req':>10s}")
    with moto_behind_proxy(work) as port:
        opts = options(port)
        run = 0
        for latency in [int(x) for x in args.latency_ms.split(",")]:
            proxy(port, f"set?latency_ms={latency}", b"")
            for fragments in [int(x) for x in args.fragments.split(",")]:
                for workers in (1, 2):
                    with distributed.LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                                  dashboard_address=None) as cluster, distributed.Client(cluster):
                        results = []
                        for _ in range(args.repeats):
                            run += 1
                            results.append(job(f"s3://bench/t{run}.lance", args.rows, fragments, opts, port))
                    w, u = statistics.median(r[0] for r in results), statistics.median(r[1] for r in results)
                    print(f"{latency:>6d}ms {fragments:>9d} {workers:>7d} {w:>8.3f} {u:>8.3f} "
                          f"{results[0][2]:>9d} {results[0][3]:>10d}", flush=True)


if __name__ == "__main__":
    main()
