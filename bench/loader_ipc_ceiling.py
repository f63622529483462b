"""What a DataLoader worker process costs before any reading: samples per second of
batches (256 x 768 float32 by default) that a worker makes without reading anything,
sent to the main process, against the same batches made in the main process.

    python3 bench/loader_ipc_ceiling.py [--batch 256] [--dim 768] [--batches 400]

`clone` makes a new tensor per batch (what a reading worker returns), `shared` writes it
into a new shared-memory tensor in the worker (the copy torch would make, done by hand),
`same` returns one tensor again and again (torch sends its shared memory once, then only a
handle): the ceiling of any worker-process loader at this sample size, whatever it reads
with. Prints one line per (mode, workers): median samples/s over --repeat runs."""
import argparse
import statistics
import time

import torch
from torch.utils.data import DataLoader, IterableDataset, get_worker_info

parser = argparse.ArgumentParser()
parser.add_argument("--batch", type=int, default=256)
parser.add_argument("--dim", type=int, default=768)
parser.add_argument("--batches", type=int, default=400)
parser.add_argument("--repeat", type=int, default=3)
args = parser.parse_args()


class Made(IterableDataset):
    def __init__(self, mode):
        self.mode = mode

    def __iter__(self):
        worker = get_worker_info()
        count = args.batches // (worker.num_workers if worker else 1)
        base = torch.randn(args.batch, args.dim)
        for _ in range(count):
            if self.mode == "clone":
                yield base.clone()
            elif self.mode == "shared":
                yield torch.empty(args.batch, args.dim).share_memory_().copy_(base)
            else:
                yield base


def rate(mode, workers):
    seen = 0
    start = time.perf_counter()
    for batch in DataLoader(Made(mode), batch_size=None, num_workers=workers):
        seen += len(batch)
    return seen / (time.perf_counter() - start)


for mode in ("clone", "shared", "same"):
    for workers in (0, 1, 2):
        median = statistics.median(rate(mode, workers) for _ in range(args.repeat))
        gbps = median * args.dim * 4 / 1e9
        print(f"{mode:6s} {workers} workers: {median:10.0f} samples/s ({gbps:.2f} GB/s)")
