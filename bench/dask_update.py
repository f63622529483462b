"""A distributed 1% update of one column of a wide table: lancelet.dask.update on a
LocalCluster (each fragment's overlay written by a task, one commit) against pylance's
update in one process (which rewrites the changed rows), on the same data.

    .venv/bin/python bench/dask_update.py [--rows 100000] [--dim 768] [--workers 2]

Prints, for each tool, the bytes the update added to the dataset directory and its wall
time (median of REPEATS runs, each on a fresh copy)."""
import argparse
import os
import shutil
import statistics
import tempfile
import time


def directory_bytes(path):
    return sum(os.path.getsize(os.path.join(d, f)) for d, _, files in os.walk(path) for f in files)


def table(rows, dim):
    import numpy as np
    import pyarrow as pa
    rng = np.random.default_rng(1)
    return pa.table({"id": pa.array(np.arange(rows, dtype=np.int64)),
                     "qty": pa.array(rng.integers(0, 1000, rows)),
                     "emb": pa.FixedSizeListArray.from_arrays(pa.array(rng.random(rows * dim, dtype=np.float32)), dim)})


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=100_000)
    ap.add_argument("--dim", type=int, default=768)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    import distributed
    import lance
    import lancelet
    import lancelet.dask
    os.environ["LANCE_ENABLE_UNSTABLE_DATA_OVERLAY_FILES"] = "1"
    work = tempfile.mkdtemp(prefix="dask_update.")
    data = table(args.rows, args.dim)
    per_file = max(1, args.rows // 8)
    lancelet.write_dataset(data, os.path.join(work, "ours.lance"), max_rows_per_file=per_file)
    lance.write_dataset(data, os.path.join(work, "theirs.lance"), max_rows_per_file=per_file)
    where = "id % 100 = 0"
    results = {}
    with distributed.LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, distributed.Client(cluster):
        for tool in ("lancelet.dask", "pylance"):
            times, added = [], []
            for _ in range(args.repeats):
                source = os.path.join(work, "ours.lance" if tool == "lancelet.dask" else "theirs.lance")
                copy = os.path.join(work, "copy.lance")
                shutil.rmtree(copy, ignore_errors=True)
                shutil.copytree(source, copy)
                before = directory_bytes(copy)
                start = time.perf_counter()
                if tool == "lancelet.dask":
                    lancelet.dask.update(copy, {"qty": "qty + 1"}, where=where)
                else:
                    lance.dataset(copy).update({"qty": "qty + 1"}, where=where)
                times.append(time.perf_counter() - start)
                added.append(directory_bytes(copy) - before)
            results[tool] = (statistics.median(times), statistics.median(added))
    print(f"{args.rows} rows x (id, qty, {args.dim}-d float32) in 8 fragments; 1% of qty updated; "
          f"{args.workers} workers; median of {args.repeats}")
    for tool, (seconds, added) in results.items():
        print(f"{tool:14s} {seconds:8.3f} s   {added / 1e6:10.3f} MB written")
    (ours_s, ours_b), (theirs_s, theirs_b) = results["lancelet.dask"], results["pylance"]
    print(f"pylance / lancelet.dask: time {theirs_s / ours_s:.2f}x, bytes {theirs_b / max(ours_b, 1):.1f}x")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
