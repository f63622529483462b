#!/usr/bin/env python3
"""Exact vector search over N x D float32 vectors: vectors scored per second by
Dataset.search beside a plain read of the same column (the bytes the search must read),
in one process, so the ratio says how close scoring comes to the read's bandwidth. The
read is one scan (decoding overlapped by read-ahead); the search scans its shares of the
fragments on up to LANCELET_THREADS threads, so on several cores it may pass 100%: the
bandwidth limit then is the machine's, not the read's.

Usage: PYTHONPATH=build/release/python bench/vector_search_bench.py [--rows N] [--dim D]
       [--repeats R] [--work DIR]   (defaults: 200000 rows, 768 dims, 5 repeats, bench-data)
LANCELET_THREADS=1 measures one core.
"""
import argparse
import pathlib
import statistics
import time

import numpy as np

import lancelet


def median_seconds(fn, repeats):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--dim", type=int, default=768)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--work", default="bench-data")
    args = parser.parse_args()
    path = pathlib.Path(args.work) / f"vectors_{args.rows}x{args.dim}.lance"
    if not path.exists():
        rng = np.random.default_rng(7)
        vectors = rng.standard_normal((args.rows, args.dim), dtype=np.float32)
        lancelet.write_dataset({"id": np.arange(args.rows, dtype=np.int64), "emb": vectors}, path,
                               max_rows_per_file=max(1, args.rows // 8))
    ds = lancelet.dataset(path)
    query = np.random.default_rng(8).standard_normal(args.dim).astype(np.float32).tolist()
    gib = args.rows * args.dim * 4 / 2**30

    def read():
        for _ in ds.scanner(columns=["emb"]):
            pass

    read_s = median_seconds(read, args.repeats)
    print(f"read emb:  {read_s:.3f} s  {gib / read_s:.2f} GiB/s  {args.rows / read_s / 1e6:.2f} M vectors/s")
    for distance in ("l2", "cosine", "dot"):
        search_s = median_seconds(lambda: ds.search(query, column="emb", k=10, distance=distance), args.repeats)
        print(f"search {distance:6s} {search_s:.3f} s  {gib / search_s:.2f} GiB/s  "
              f"{args.rows / search_s / 1e6:.2f} M vectors/s  ({read_s / search_s:.0%} of the read's rate)")


if __name__ == "__main__":
    main()
