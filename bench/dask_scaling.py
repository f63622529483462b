"""Write and update throughput of lancelet.dask with 1 and 2 workers, against pylance's
write_dataset + update in one process on the same data.

    .venv/bin/python bench/dask_scaling.py [--rows 1000000] [--dim 64] [--partitions 8] [--repeats 3]

Each partition is made (seeded numpy) inside the task that writes it, and pylance makes the
same partitions in its own process, so every side pays for the data it writes. The update
sets qty = qty + 1 where --where holds (default id % 100 = 0: 1% of the rows). Prints medians and rows per second;
the ratios are 2 workers over 1 worker, and lancelet.dask over pylance."""
import argparse
import os
import shutil
import statistics
import tempfile
import time


def partition(index, rows, dim):
    import numpy as np
    import pyarrow as pa
    rng = np.random.default_rng(index)
    ids = np.arange(index * rows, (index + 1) * rows, dtype=np.int64)
    return pa.table({"id": ids, "qty": rng.integers(0, 1000, rows),
                     "emb": pa.FixedSizeListArray.from_arrays(pa.array(rng.random(rows * dim, dtype=np.float32)), dim)})


def run_lancelet(workers, uri, args):
    import dask
    import distributed
    import lancelet.dask
    per = args.rows // args.partitions
    with distributed.LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, distributed.Client(cluster) as client:
        client.run(lambda: __import__("lancelet.dask"))  # imports are start-up, not throughput
        start = time.perf_counter()
        lancelet.dask.write_dataset([dask.delayed(partition)(i, per, args.dim) for i in range(args.partitions)], uri)
        wrote = time.perf_counter() - start
        start = time.perf_counter()
        lancelet.dask.update(uri, {"qty": "qty + 1"}, where=args.where)
        return wrote, time.perf_counter() - start


def run_pylance(uri, args):
    import lance
    import pyarrow as pa
    per = args.rows // args.partitions
    schema = partition(0, 1, args.dim).schema
    start = time.perf_counter()
    reader = pa.RecordBatchReader.from_batches(
        schema, (b for i in range(args.partitions) for b in partition(i, per, args.dim).to_batches()))
    lance.write_dataset(reader, uri, max_rows_per_file=per)
    wrote = time.perf_counter() - start
    start = time.perf_counter()
    lance.dataset(uri).update({"qty": "qty + 1"}, where=args.where)
    return wrote, time.perf_counter() - start


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--dim", type=int, default=64)
    ap.add_argument("--partitions", type=int, default=8)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--where", default="id % 100 = 0", help="the update's predicate (default: 1%% of the rows)")
    args = ap.parse_args()
    os.environ["LANCE_ENABLE_UNSTABLE_DATA_OVERLAY_FILES"] = "1"
    work = tempfile.mkdtemp(prefix="dask_scaling.")
    runs = {"lancelet.dask 1 worker": lambda uri: run_lancelet(1, uri, args),
            "lancelet.dask 2 workers": lambda uri: run_lancelet(2, uri, args),
            "pylance (1 process)": lambda uri: run_pylance(uri, args)}
    results = {name: ([], []) for name in runs}
    for _ in range(args.repeats):  # A B C A B C: drift hits every side alike
        for name, run in runs.items():
            uri = os.path.join(work, "t.lance")
            shutil.rmtree(uri, ignore_errors=True)
            wrote, updated = run(uri)
            results[name][0].append(wrote)
            results[name][1].append(updated)
    shutil.rmtree(work, ignore_errors=True)
    mb = args.rows * (16 + 4 * args.dim) / 1e6
    print(f"{args.rows} rows x (id, qty, {args.dim}-d float32) = {mb:.0f} MB in {args.partitions} partitions; "
          f"update qty where {args.where}; median of {args.repeats}")
    med = {name: (statistics.median(w), statistics.median(u)) for name, (w, u) in results.items()}
    for name, (w, u) in med.items():
        print(f"{name:24s} write {w:7.3f} s ({args.rows / w / 1e6:5.2f} M rows/s)   update {u:7.3f} s   "
              f"(runs: write {' '.join(f'{x:.2f}' for x in results[name][0])}, "
              f"update {' '.join(f'{x:.3f}' for x in results[name][1])})")
    one, two, ref = med["lancelet.dask 1 worker"], med["lancelet.dask 2 workers"], med["pylance (1 process)"]
    print(f"2 workers / 1 worker: write {one[0] / two[0]:.2f}x, update {one[1] / two[1]:.2f}x")
    print(f"pylance / lancelet.dask 2 workers: write {ref[0] / two[0]:.2f}x, update {ref[1] / two[1]:.2f}x")


if __name__ == "__main__":
    main()
