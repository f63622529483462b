"""A training loop's input pipeline on lancelet.loader: N ranks (torch.distributed, gloo
backend, one process each) x W DataLoader workers reading one epoch of a Lance dataset.

    python3 examples/train_loop.py DATASET [--ranks 2] [--workers 2] [--batch 64] [--seed 1]

Each rank gets the same number of batches; rank 0 prints a JSON summary: the samples each
rank read, how many distinct ids the epoch covered and how many were padding repeats."""
import argparse
import json
import os
import socket

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

from lancelet.loader import ShardedDataset, TorchIterableDataset


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run(rank, args, port):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=args.ranks)
    # Enough shards that every rank and worker reads its own, whatever the fragment layout.
    shards = ShardedDataset.from_path(args.dataset, columns=["id"], num_shards=args.ranks * max(1, args.workers) * 4)
    dataset = TorchIterableDataset(shards, shuffle=True, seed=args.seed, batch_size=args.batch)
    dataset.set_epoch(0)
    loader = torch.utils.data.DataLoader(dataset, batch_size=None, num_workers=args.workers,
                                         multiprocessing_context=args.workers_start if args.workers else None)
    ids, steps = [], 0
    for batch in loader:  # a training step would go here
        ids.extend(batch["id"].tolist())
        steps += 1
    gathered = [None] * args.ranks
    dist.all_gather_object(gathered, {"ids": ids, "steps": steps})
    if rank == 0:
        every = [i for g in gathered for i in g["ids"]]
        print(json.dumps({"samples_per_rank": [len(g["ids"]) for g in gathered],
                          "steps_per_rank": [g["steps"] for g in gathered],
                          "distinct": len(set(every)), "total": shards.total(),
                          "repeats": len(every) - len(set(every))}))
    dist.destroy_process_group()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("dataset")
    parser.add_argument("--ranks", type=int, default=2)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--workers-start", default="fork", help="fork or spawn (for DataLoader workers)")
    args = parser.parse_args()
    mp.spawn(run, args=(args, free_port()), nprocs=args.ranks, join=True)


if __name__ == "__main__":
    main()
