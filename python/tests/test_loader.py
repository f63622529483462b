"""lancelet.loader: shards, samples, pinning, and the torch datasets (DataLoader workers,
ranks, shuffling)."""
import collections
import json
import os
import pickle
import subprocess
import sys

import numpy as np
import pytest

import lancelet
from lancelet.loader import ShardedDataset, TorchIterableDataset, TorchMapDataset, collate
from conftest import ANOTHER_PROCESS, IN_MEMORY, SOURCE_DIR, skip_if_workers_spawn

torch = pytest.importorskip("torch")

# Forking a process whose other threads hold the sanitizer allocator's lock deadlocks the
# child, so sanitized runs start DataLoader workers by spawning (which pickles the dataset).
WORKERS_START = "spawn" if os.environ.get("LANCELET_SANITIZED") else None


def make(tmp_path, rows=1000, per_file=100, name="train.lance"):
    emb = np.arange(rows * 4, dtype=np.float32).reshape(rows, 4)
    return lancelet.write_dataset({"id": np.arange(rows, dtype=np.int64), "text": [f"t{i}" for i in range(rows)],
                                   "emb": emb}, tmp_path / name, max_rows_per_file=per_file,
                                  data_storage_version="2.1")


def test_samples_are_the_surviving_rows_with_overlays_resolved(tmp_path):
    ds = make(tmp_path)
    ds.delete("id % 10 = 0")
    ds.update({"text": "upper(text)"}, where="id % 7 = 1", mode="overlay")
    shards = ShardedDataset.from_path(ds.uri)
    assert shards.path.endswith(".manifest") and "/_versions/" in shards.path
    assert shards.shard_count() == 10
    assert shards.shard_sizes() == [90] * 10
    assert shards.total() == 900
    sample = shards.read(1, 0)  # shard 1 is ids 100..199 less 100, 110, ..
    assert sample["id"] == 101 and sample["text"] == "t101"
    assert isinstance(sample["emb"], np.ndarray) and sample["emb"].dtype == np.float32
    np.testing.assert_array_equal(sample["emb"], [404, 405, 406, 407])
    batch = shards.read_batch(2, [5, 0, 5])
    assert [s["id"] for s in batch] == [206, 201, 206]
    assert [s["text"] for s in batch] == ["t206", "t201", "t206"]
    assert shards.read(0, 7)["text"] == "T8"  # 8 % 7 = 1: updated through an overlay
    everything = ds.to_pydict(columns=["id", "text"])
    flat = [s for shard in range(10) for s in shards.read_batch(shard, range(shards.shard_sizes()[shard]))]
    assert [s["id"] for s in flat] == everything["id"]
    assert [s["text"] for s in flat] == everything["text"]


def test_a_one_fragment_table_cut_into_shards_feeds_every_rank(tmp_path):
    ds = make(tmp_path, rows=1000, per_file=1000)
    ds.delete("id % 10 = 0")
    assert ShardedDataset.from_path(ds.uri).shard_sizes() == [900]  # below the default's 4,096-row floor
    assert ShardedDataset.from_path(ds.uri, shard_rows="fragment").shard_count() == 1
    shards = ShardedDataset.from_path(ds.uri, shard_rows=250)
    assert shards.shard_sizes() == [250, 250, 250, 150]
    assert shards.read(1, 0)["id"] == 278  # the 251st surviving row: 250 + 250 // 9 + 1
    assert pickle.loads(pickle.dumps(shards)).shard_sizes() == [250, 250, 250, 150]
    by_count = ShardedDataset.from_path(ds.uri, num_shards=6)
    assert by_count.shard_sizes() == [150] * 6
    parts = [[s["id"] for s in TorchIterableDataset(by_count, shuffle=True, seed=3, rank=r, world_size=3)]
             for r in range(3)]
    assert [len(p) for p in parts] == [300, 300, 300]
    assert sorted(i for p in parts for i in p) == [i for i in range(1000) if i % 10]
    with pytest.raises(ValueError, match="shard_rows must be a positive integer, 'fragment' or None, not 0"):
        ShardedDataset.from_path(ds.uri, shard_rows=0)
    with pytest.raises(ValueError, match="num_shards must be a positive integer or None, not -1"):
        ShardedDataset.from_path(ds.uri, num_shards=-1)


def test_the_default_cuts_a_large_fragment_into_256_shards(tmp_path):
    rows = 2_000_000
    ds = lancelet.write_dataset({"id": np.arange(rows, dtype=np.int64)}, tmp_path / "one.lance",
                                max_rows_per_file=rows)
    shards = ShardedDataset.from_path(ds.uri)
    assert shards.shard_sizes() == [7813] * 255 + [rows - 255 * 7813]  # ceil(rows / 256) each
    assert pickle.loads(pickle.dumps(shards)).shard_count() == 256
    assert ShardedDataset.from_path(ds.uri, shard_rows="fragment").shard_sizes() == [rows]
    small = ShardedDataset.from_path(make(tmp_path, rows=20_000, per_file=10_000).uri)
    assert small.shard_sizes() == [4096, 4096, 1808] * 2  # at least 4,096 rows a shard


def test_columns_and_refusals(tmp_path):
    ds = make(tmp_path)
    shards = ShardedDataset.from_path(ds.uri, columns=["text"])
    assert shards.read(3, 3) == {"text": "t303"}
    with pytest.raises(lancelet.NotFoundError, match="no column 'nope'"):
        ShardedDataset.from_path(ds.uri, columns=["nope"])
    with pytest.raises(lancelet.NotFoundError, match="holds no Lance dataset"):
        ShardedDataset.from_path(tmp_path)
    with pytest.raises(lancelet.InvalidArgumentError, match="sample 100 does not exist"):
        shards.read(0, 100)
    with pytest.raises(lancelet.InvalidArgumentError, match="storage option 'timout'"):
        ShardedDataset.from_path(ds.uri, storage_options={"timout": "1s"})
    # The options travel with a pickled dataset (a spawned worker opens with them too).
    optioned = ShardedDataset.from_path(ds.uri, columns=["text"], storage_options={"timeout": "5s"})
    assert pickle.loads(pickle.dumps(optioned)).read(3, 3) == {"text": "t303"}


def test_the_version_stays_pinned_during_an_epoch(tmp_path):
    ds = make(tmp_path)
    shards = ShardedDataset.from_path(ds.uri)
    stream = iter(TorchIterableDataset(shards, read_size=50))
    first = [next(stream)["text"] for _ in range(150)]
    lancelet.write_dataset({"id": [5000], "text": ["new"], "emb": np.zeros((1, 4), np.float32)}, ds.uri, mode="append")
    ds.latest().update({"text": "'changed'"}, mode="overlay")
    rest = [s["text"] for s in stream]
    assert first + rest == [f"t{i}" for i in range(1000)]
    assert lancelet.dataset(ds.uri).count_rows() == 1001
    again = pickle.loads(pickle.dumps(shards))
    assert again.path == shards.path and again.total() == 1000
    assert ShardedDataset.from_path(shards.path).read(0, 0)["text"] == "t0"  # a manifest names its version


def test_map_dataset_and_collate(tmp_path):
    shards = ShardedDataset.from_path(make(tmp_path).uri)
    data = TorchMapDataset(shards)
    assert len(data) == 1000
    assert data[537]["id"] == 537 and data[-1]["id"] == 999
    batch = collate([data[3], data[4]])
    assert batch["emb"].shape == (2, 4) and batch["emb"].dtype == torch.float32
    assert batch["id"].tolist() == [3, 4] and batch["text"] == ["t3", "t4"]
    loader = torch.utils.data.DataLoader(data, batch_size=64, shuffle=True, collate_fn=collate,
                                         generator=torch.Generator().manual_seed(3))
    assert sorted(i for b in loader for i in b["id"].tolist()) == list(range(1000))


def test_ranks_and_epochs_split_and_shuffle_every_sample_once(tmp_path):
    shards = ShardedDataset.from_path(make(tmp_path).uri)
    seen = []
    for rank in range(3):
        part = [s["id"] for s in TorchIterableDataset(shards, shuffle=True, seed=9, rank=rank, world_size=3)]
        seen.append(part)
    # 1000 samples over 3 ranks: 334 each, the sequence's first 2 samples repeated as padding.
    assert [len(part) for part in seen] == [334, 334, 334]
    flat = [i for part in seen for i in part]
    assert sorted(set(flat)) == list(range(1000))
    assert sorted(collections.Counter(flat).values())[-3:] == [1, 2, 2]
    again = [s["id"] for s in TorchIterableDataset(shards, shuffle=True, seed=9, rank=0, world_size=3)]
    assert again == seen[0]  # the same seed and epoch: the same order
    later = TorchIterableDataset(shards, shuffle=True, seed=9, rank=0, world_size=3)
    later.set_epoch(1)
    assert [s["id"] for s in later] != seen[0]
    assert [s["id"] for s in TorchIterableDataset(shards)] == list(range(1000))  # no shuffle: dataset order
    dropped = [[s["id"] for s in TorchIterableDataset(shards, seed=9, rank=r, world_size=3, drop_last=True)]
               for r in range(3)]
    assert [len(p) for p in dropped] == [333, 333, 333]
    assert sorted(i for p in dropped for i in p) == list(range(999))  # no shuffle: the tail is dropped


class _Worker:
    def __init__(self, id, num_workers):
        self.id, self.num_workers = id, num_workers


def _epoch_ids(dataset, ranks, workers, monkeypatch):
    """{(rank, worker): ids} of one epoch, each DataLoader worker played in this process."""
    out = {}
    for rank in range(ranks):
        dataset.rank, dataset.world_size = rank, ranks
        for worker in range(max(1, workers)):
            info = _Worker(worker, workers) if workers else None
            monkeypatch.setattr(torch.utils.data, "get_worker_info", lambda: info)
            out[rank, worker] = [s["id"] for s in dataset]
    return out


@pytest.mark.parametrize("fragments", [1, 8])
def test_every_rank_and_worker_gets_its_share_once(tmp_path, monkeypatch, fragments):
    ds = make(tmp_path, rows=800, per_file=800 // fragments)
    ds.delete("id % 9 = 4")
    ds.update({"text": "upper(text)"}, where="id % 5 = 1", mode="overlay")
    live = [i for i in range(800) if i % 9 != 4]  # 711
    shards = ShardedDataset.from_path(ds.uri, num_shards=12)
    for ranks in (1, 2, 3):
        for workers in (0, 1, 2):
            dataset = TorchIterableDataset(shards, shuffle=True, seed=5)
            ids = _epoch_ids(dataset, ranks, workers, monkeypatch)
            per_rank = [sum(len(ids[r, w]) for w in range(max(1, workers))) for r in range(ranks)]
            assert per_rank == [-(-711 // ranks)] * ranks, (ranks, workers)
            flat = [i for part in ids.values() for i in part]
            assert sorted(set(flat)) == live
            assert len(flat) - len(live) == per_rank[0] * ranks - 711  # the padding, repeats only
            dataset.set_epoch(1)
            assert _epoch_ids(dataset, ranks, workers, monkeypatch) != ids
            dataset.set_epoch(0)
            assert _epoch_ids(dataset, ranks, workers, monkeypatch) == ids
    # A rank resumed mid-epoch gives the rest of its samples exactly once.
    whole = _epoch_ids(TorchIterableDataset(shards, shuffle=True, seed=5), 2, 0, monkeypatch)
    resumed = TorchIterableDataset(shards, shuffle=True, seed=5)
    resumed.load_state_dict(resumed.state_dict(step=100))
    assert _epoch_ids(resumed, 2, 0, monkeypatch)[1, 0] == whole[1, 0][100:]
    with pytest.raises(ValueError, match="fewer than the 712 ranks"):
        iter(TorchIterableDataset(shards, rank=0, world_size=712)).__next__()


def test_a_pickled_dataset_keeps_its_rank(tmp_path):
    # A spawned DataLoader worker unpickles the dataset and has no process group: the rank
    # is resolved when it is pickled.
    shards = ShardedDataset.from_path(make(tmp_path).uri)
    given = pickle.loads(pickle.dumps(TorchIterableDataset(shards, shuffle=True, seed=2, rank=1, world_size=3)))
    assert (given.rank, given.world_size) == (1, 3)
    assert given.plan()[1].tolist() == TorchIterableDataset(shards, shuffle=True, seed=2, rank=1, world_size=3).plan()[1].tolist()
    alone = pickle.loads(pickle.dumps(TorchIterableDataset(shards)))
    assert (alone.rank, alone.world_size) == (0, 1)


def test_a_shuffle_mixes_samples_across_fragments(tmp_path):
    shards = ShardedDataset.from_path(make(tmp_path, rows=8000, per_file=1000).uri)
    ids = [s["id"] for s in TorchIterableDataset(shards, shuffle=True, seed=2)]
    assert sorted(ids) == list(range(8000))
    same = sum(a // 1000 == b // 1000 for a, b in zip(ids, ids[1:])) / (len(ids) - 1)
    assert same < 0.2  # a uniform shuffle over 8 fragments: 1/8; shard by shard: nearly 1
    plain = [s["id"] for s in TorchIterableDataset(shards)]
    assert sum(a // 1000 == b // 1000 for a, b in zip(plain, plain[1:])) / (len(plain) - 1) > 0.99


def test_batches_and_map_batches_read_once_per_shard(tmp_path):
    shards = ShardedDataset.from_path(make(tmp_path).uri)
    batched = list(TorchIterableDataset(shards, shuffle=True, seed=1, batch_size=64))
    assert [len(b["id"]) for b in batched] == [64] * 15 + [40]
    assert batched[0]["emb"].shape == (64, 4) and batched[0]["emb"].dtype == torch.float32
    ids = torch.cat([b["id"] for b in batched]).tolist()
    assert sorted(ids) == list(range(1000))
    first = batched[0]
    assert first["text"] == [f"t{i}" for i in first["id"].tolist()]
    assert torch.equal(first["emb"][:, 0], first["id"].float() * 4)
    mapped = TorchMapDataset(shards)
    assert [s["id"] for s in mapped.__getitems__([901, 5, 450, 5, -1])] == [901, 5, 450, 5, 999]
    loader = torch.utils.data.DataLoader(mapped, batch_size=100, shuffle=True, collate_fn=collate)
    assert sorted(i for b in loader for i in b["id"].tolist()) == list(range(1000))


def test_threads_read_ahead_and_yield_the_same_sequence(tmp_path):
    shards = ShardedDataset.from_path(make(tmp_path).uri)
    for batch_size in (None, 64):
        plain = list(TorchIterableDataset(shards, shuffle=True, seed=3, batch_size=batch_size, read_size=50))
        ahead = list(TorchIterableDataset(shards, shuffle=True, seed=3, batch_size=batch_size, read_size=50,
                                          threads=3))
        if batch_size:
            assert [b["id"].tolist() for b in ahead] == [b["id"].tolist() for b in plain]
            assert all(torch.equal(a["emb"], b["emb"]) for a, b in zip(ahead, plain))
        else:
            assert [s["id"] for s in ahead] == [s["id"] for s in plain] and len(ahead) == 1000
            assert all(np.array_equal(a["emb"], b["emb"]) for a, b in zip(ahead, plain))
    stopped = iter(TorchIterableDataset(shards, batch_size=10, threads=2))
    assert next(stopped)["id"].tolist() == list(range(10))
    stopped.close()  # leaves no pool behind: the generator's with-block shut it down
    with pytest.raises(ValueError, match="threads must be a non-negative integer, not -1"):
        TorchIterableDataset(shards, threads=-1)


def test_a_dataloader_with_two_workers_reads_every_sample_once(tmp_path):
    skip_if_workers_spawn()
    rows = 100_000
    ds = lancelet.write_dataset({"id": np.arange(rows, dtype=np.int64),
                                 "emb": np.ones((rows, 8), dtype=np.float32)},
                                tmp_path / "big.lance", max_rows_per_file=10_000)
    shards = ShardedDataset.from_path(ds.uri, metadata_cache_entries=4)
    loader = torch.utils.data.DataLoader(TorchIterableDataset(shards, shuffle=True, seed=1), batch_size=1000,
                                         num_workers=2, collate_fn=collate, multiprocessing_context=WORKERS_START)
    ids = []
    for batch in loader:
        assert batch["emb"].shape[1] == 8
        ids.extend(batch["id"].tolist())
    assert len(ids) == rows and sorted(ids) == list(range(rows))
    assert ids != sorted(ids)


def shm_segments():
    return {name for name in os.listdir("/dev/shm") if name.startswith("lancelet-")}


def test_workers_send_batches_through_slots_they_reuse(tmp_path):
    from lancelet import _batch_slots

    skip_if_workers_spawn()
    before = shm_segments()
    shards = ShardedDataset.from_path(make(tmp_path, rows=5000, per_file=1000).uri)
    dataset = TorchIterableDataset(shards, shuffle=True, seed=3, batch_size=50)
    assert all(not b["emb"].is_shared() for b in dataset)  # in one process: tensors, no slots
    loader = torch.utils.data.DataLoader(dataset, batch_size=None, num_workers=2,
                                         multiprocessing_context=WORKERS_START)
    got, kept = [], []
    for batch in loader:
        if len(kept) < 10:
            kept.append(batch["id"][:5])  # a view of the slot: it stays as it was
        # Views of the worker's slot, not tensors torch moved to shared memory.
        assert not batch["emb"].is_shared()
        assert torch.equal(batch["emb"][:, 0], batch["id"].float() * 4)
        assert batch["text"] == [f"t{i}" for i in batch["id"].tolist()]
        got.append(batch["id"].tolist())
    assert len(got) == 100 and sorted(i for ids in got for i in ids) == list(range(5000))
    assert [k.tolist() for k in kept] == [ids[:5] for ids in got[:10]]
    del kept
    # The workers reused a few slots for their 100 batches; no name is left behind.
    assert 2 <= sum(len(ring.slots) for ring in _batch_slots._rings.values()) <= 24
    assert shm_segments() <= before

    # Batches held beyond the slots there are: the rest come as tensors, every one right.
    held = list(torch.utils.data.DataLoader(dataset, batch_size=None, num_workers=1,
                                            multiprocessing_context=WORKERS_START))
    assert sorted(i for b in held for i in b["id"].tolist()) == list(range(5000))
    assert sum(not b["emb"].is_shared() for b in held) == _batch_slots.MAX_SLOTS
    for b in held:
        assert torch.equal(b["emb"][:, 0], b["id"].float() * 4)
    del held
    assert shm_segments() <= before
    # slots=False: tensors sent torch's way.
    plain = TorchIterableDataset(shards, shuffle=True, seed=3, batch_size=50, slots=False)
    sent = list(torch.utils.data.DataLoader(plain, batch_size=None, num_workers=1,
                                            multiprocessing_context=WORKERS_START))
    assert all(b["emb"].is_shared() for b in sent)
    assert sorted(i for b in sent for i in b["id"].tolist()) == list(range(5000))


def test_resume_continues_where_the_epoch_stopped(tmp_path):
    skip_if_workers_spawn()
    shards = ShardedDataset.from_path(make(tmp_path).uri)
    whole = [s["id"] for s in TorchIterableDataset(shards, shuffle=True, seed=4)]
    later = TorchIterableDataset(shards, shuffle=True, seed=4)
    later.resume(0, 337)
    assert [s["id"] for s in later] == whole[337:]

    def epoch(dataset, batches=None):
        loader = torch.utils.data.DataLoader(dataset, batch_size=50, num_workers=2, collate_fn=collate,
                                             multiprocessing_context=WORKERS_START)
        out = []
        for n, batch in enumerate(loader):
            if batches is not None and n == batches:
                break
            out.append(batch["id"].tolist())
        return out

    first = epoch(TorchIterableDataset(shards, shuffle=True, seed=4))
    assert sorted(i for b in first for i in b) == list(range(1000))
    resumed = TorchIterableDataset(shards, shuffle=True, seed=4)
    resumed.resume(0, 7, batch_size=50)
    # The same remaining batches; the DataLoader starts again at worker 0, so with several
    # workers their interleaving may differ.
    assert sorted(map(tuple, epoch(resumed))) == sorted(map(tuple, first[7:]))


def test_the_training_loop_example_feeds_two_ranks_of_two_workers(tmp_path):
    if IN_MEMORY:
        pytest.skip(ANOTHER_PROCESS.format("the example"))
    ds = make(tmp_path, rows=1001, per_file=1001)  # one fragment: shards cut from it
    ds.delete("id % 100 = 0")  # 990 live
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    done = subprocess.run([sys.executable, os.path.join(SOURCE_DIR, "examples", "train_loop.py"), ds.uri,
                           "--ranks", "2", "--workers", "2", "--batch", "32",
                           "--workers-start", WORKERS_START or "fork"],
                          capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout.strip().splitlines()[-1])
    assert summary == {"samples_per_rank": [495, 495], "steps_per_rank": [16, 16], "distinct": 990, "total": 990,
                       "repeats": 0}
