#!/usr/bin/env bash
# The shard loader's random access, side by side: 1M rows (id int64, text utf8, emb
# 768-d float32) in 10 fragments at 2.1, read in batches of 256 random samples of one
# shard each (40 batches), through lancelet.loader, lancelet's take, the reference's
# takeOffsets, and a numpy memmap of the raw embedding matrix. Also: discovery of a
# 10,000-fragment dataset (reads, bytes, ms) and the peak RSS of a 2-worker DataLoader
# epoch over 100k rows.
source "$(dirname "$0")/common.sh"
DIR="$WORK/loader"
PYTHON=/usr/bin/python3
export PYTHONPATH="$BUILD/python${PYTHONPATH:+:$PYTHONPATH}"
BATCHES=${BATCHES:-40}
mkdir -p "$DIR"

if [[ ! -f $DIR/.done ]]; then
  rm -rf "$DIR"/*
  "$PYTHON" - "$DIR" "$ROWS" <<'PY'
import sys, numpy as np, lancelet
out, rows = sys.argv[1], int(sys.argv[2])
per = rows // 10
raw = np.lib.format.open_memmap(f"{out}/emb.npy", mode="w+", dtype=np.float32, shape=(rows, 768))
rng = np.random.default_rng(5)
for f in range(10):
    emb = rng.random((per, 768), dtype=np.float32)
    raw[f * per:(f + 1) * per] = emb
    ids = np.arange(f * per, (f + 1) * per, dtype=np.int64)
    lancelet.write_dataset({"id": ids, "text": [f"sample text {i}" for i in ids], "emb": emb}, f"{out}/train.lance",
                           mode="create" if f == 0 else "append", max_rows_per_file=per, data_storage_version="2.1")
raw.flush()
PY
  touch "$DIR/.done"
fi

"$PYTHON" - "$DIR" "$ROWS" "$BATCHES" <<'PY'
import sys, random
out, rows, batches = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
per, rng = rows // 10, random.Random(11)
with open(f"{out}/offsets.txt", "w") as f:
    for _ in range(batches):
        shard = rng.randrange(10)
        for _ in range(256):
            f.write(f"{shard * per + rng.randrange(per)}\n")
PY
"$PYTHON" bench/loader_bench.py "$DIR/train.lance" "$DIR/offsets.txt" "$DIR/emb.npy" | tee "$DIR/ours.jsonl"
for cols in "" "emb"; do
  node bench/reference_take.mjs "$DIR/train.lance" --offsets "$DIR/offsets.txt" --batch 256 ${cols:+--columns $cols} \
    | sed "s/^{/{\"side\":\"reference takeOffsets${cols:+ (emb only)}\",/" | tee -a "$DIR/ours.jsonl"
done
node -e '
  const rows = require("fs").readFileSync(process.argv[1], "utf8").trim().split("\n").map(JSON.parse);
  const rate = (s) => rows.find((r) => r.side === s).rows_per_s;
  console.log(`loader vs reference: ${(rate("loader") / rate("reference takeOffsets")).toFixed(2)}x all columns, ` +
              `${(rate("loader (emb only)") / rate("reference takeOffsets (emb only)")).toFixed(2)}x emb only; ` +
              `loader emb vs memmap: ${(100 * rate("loader (emb only)") / rate("numpy memmap (emb only)")).toFixed(0)}%`);
' "$DIR/ours.jsonl"

# Discovery: 10,000 fragments, at two data sizes; the time must not grow with the rows.
for rows_per in 10 100; do
  D="$DIR/frags_${rows_per}.lance"
  if [[ ! -d $D ]]; then
    "$PYTHON" -c "
import numpy as np, lancelet, sys
n = 10000 * $rows_per
lancelet.write_dataset({'id': np.arange(n, dtype=np.int64), 'v': np.ones((n, 16), np.float32)}, '$D',
                       max_rows_per_file=$rows_per)"
  fi
  "$PYTHON" - "$D" <<'PY'
import os, sys, time, glob
from lancelet.loader import ShardedDataset
path = sys.argv[1]
manifest = sorted(glob.glob(f"{path}/_versions/*.manifest"))[0]
times = []
for _ in range(7):
    start = time.perf_counter()
    shards = ShardedDataset.from_path(path)
    times.append(time.perf_counter() - start)
times.sort()
data = sum(os.path.getsize(f) for f in glob.glob(f"{path}/data/*"))
print(f"discovery of {shards.shard_count()} fragments ({shards.total()} rows, {data / 1e6:.0f} MB of data): "
      f"{1000 * times[3]:.1f} ms median, manifest {os.path.getsize(manifest) / 1e6:.2f} MB in 2 reads")
PY
done

# Peak RSS of one epoch through a DataLoader with 2 workers over 100k rows of the dataset,
# with the default reads and with LANCELET_MMAP=0: the mapped data pages a worker touched
# count in its RSS (clean file pages, which the kernel reclaims), pread's page cache does not.
for mmap in 1 0; do
LANCELET_MMAP=$mmap "$PYTHON" - "$DIR/train.lance" <<'PY'
import os
import resource, sys, time
import torch
from lancelet.loader import ShardedDataset, TorchIterableDataset, collate
shards = ShardedDataset.from_path(sys.argv[1])
take = min(100_000, shards.total())
loader = torch.utils.data.DataLoader(TorchIterableDataset(shards, shuffle=True, seed=1), batch_size=256,
                                     num_workers=2, collate_fn=collate)
start, seen = time.perf_counter(), 0
batches = iter(loader)
for batch in batches:
    seen += len(batch["id"])
    if seen >= take:
        break
elapsed = time.perf_counter() - start
del batches  # joins the workers, so their usage is counted
parent = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
child = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
print(f"DataLoader, 2 workers, LANCELET_MMAP={os.environ['LANCELET_MMAP']}, {seen} samples in {elapsed:.2f} s "
      f"({seen / elapsed:.0f}/s): peak RSS {parent:.0f} MB (main), {child:.0f} MB (largest worker)")
PY
done

# Samples per second through a DataLoader, shuffled, with 0, 1 and 2 workers: the
# iterable dataset per sample (collate), in whole batches (batch_size=, DataLoader
# batch_size=None) and the map dataset with a batch sampler, against one process calling
# read_batch for the same 256-sample batches (the in-process rate).
"$PYTHON" - "$DIR/train.lance" <<'PY'
import sys, time
import numpy as np
import torch
from lancelet.loader import ShardedDataset, TorchIterableDataset, TorchMapDataset, collate
shards = ShardedDataset.from_path(sys.argv[1], num_shards=64)
take = min(300_000, shards.total() - 512)


def rate(make_batches):
    """Steady state: the clock starts at the first batch, after the workers started."""
    batches = iter(make_batches())
    next(batches)
    start, seen = time.perf_counter(), 0
    for batch in batches:
        seen += len(batch["id"])
        if seen >= take:
            break
    elapsed = time.perf_counter() - start
    del batches
    return seen / elapsed


def in_process():
    dataset = TorchIterableDataset(shards, shuffle=True, seed=1)
    sampled, within = dataset.plan()
    for at in range(0, take, 256):
        for shard in np.unique(sampled[at:at + 256]):
            shards._here().read_batch(int(shard), within[at:at + 256][sampled[at:at + 256] == shard].tolist())
        yield {"id": range(256)}


base = rate(in_process)
print(f"in process, read_batch per shard of each 256-sample batch: {base:.0f} samples/s")
for workers in (0, 1, 2):
    loaders = {
        "iterable, per sample": lambda: torch.utils.data.DataLoader(
            TorchIterableDataset(shards, shuffle=True, seed=1), batch_size=256, num_workers=workers,
            collate_fn=collate),
        "iterable, batch_size=256": lambda: torch.utils.data.DataLoader(
            TorchIterableDataset(shards, shuffle=True, seed=1, batch_size=256), batch_size=None, num_workers=workers),
        "map, batch sampler": lambda: torch.utils.data.DataLoader(
            TorchMapDataset(shards), batch_size=256, shuffle=True, num_workers=workers, collate_fn=collate),
    }
    if workers == 0:  # reads ahead in threads of the main process instead of worker processes
        loaders["iterable, batch_size=256, threads=2"] = lambda: torch.utils.data.DataLoader(
            TorchIterableDataset(shards, shuffle=True, seed=1, batch_size=256, threads=2), batch_size=None)
    for label, make in loaders.items():
        r = rate(make)
        print(f"DataLoader, {workers} workers, {label}: {r:.0f} samples/s ({100 * r / base:.0f}% of in process)")
PY
