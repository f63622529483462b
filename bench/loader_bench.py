"""Random-access samples per second in batches, through lancelet.loader, lancelet's take
(the C++ take through the binding, no per-sample conversion), and a numpy memmap of the
raw embedding matrix (the physical limit for that column).

    python3 bench/loader_bench.py DATASET OFFSETS_FILE RAW.npy [--batch 256] [--repeat 5]

OFFSETS_FILE holds one global sample index per line; consecutive groups of --batch come
from one shard (bench/loader_compare.sh writes it), so every side reads the same rows.
Prints one JSON line per side: median seconds over --repeat warm runs and samples/s."""
import argparse
import json
import time

import numpy as np

import lancelet
from lancelet.loader import ShardedDataset

parser = argparse.ArgumentParser()
parser.add_argument("dataset")
parser.add_argument("offsets")
parser.add_argument("raw")
parser.add_argument("--batch", type=int, default=256)
parser.add_argument("--repeat", type=int, default=5)
args = parser.parse_args()

offsets = [int(line) for line in open(args.offsets) if line.strip()]
batches = [offsets[i:i + args.batch] for i in range(0, len(offsets), args.batch)]


def timed(label, run):
    times = []
    for r in range(args.repeat + 1):  # the first run warms the page cache
        start = time.perf_counter()
        rows = run()
        if r:
            times.append(time.perf_counter() - start)
    times.sort()
    median = times[len(times) // 2]
    assert rows == len(offsets), (label, rows)
    print(json.dumps({"side": label, "rows": rows, "median_s": round(median, 5), "rows_per_s": round(rows / median)}))


for columns in (None, ["emb"]):
    shards = ShardedDataset.from_path(args.dataset, columns=columns, shard_rows="fragment")  # a batch: one fragment
    located = [[shards.locate(i) for i in batch] for batch in batches]
    assert all(len({shard for shard, _ in batch}) == 1 for batch in located), "a batch spans shards"
    requests = [(batch[0][0], [k for _, k in batch]) for batch in located]
    suffix = "" if columns is None else " (emb only)"

    def loader():
        return sum(len(shards.read_batch(shard, samples)) for shard, samples in requests)

    timed("loader" + suffix, loader)

    ds = lancelet.dataset(args.dataset)

    def take():
        return sum(ds.take(batch, columns=columns).num_rows for batch in batches)

    timed("lancelet take" + suffix, take)

raw = np.load(args.raw, mmap_mode="r")


def memmap():
    return sum(len(np.ascontiguousarray(raw[np.array(batch)])) for batch in batches)


timed("numpy memmap (emb only)", memmap)
