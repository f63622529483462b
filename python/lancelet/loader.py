"""Training-data shards over a Lance dataset: ranges of a fragment's rows (one shard per
fragment by default, as Zephon lays them out; shard_rows= or num_shards= cut fragments
into more, so that a one-fragment table feeds every rank and worker).

    from lancelet.loader import ShardedDataset, TorchIterableDataset, collate
    shards = ShardedDataset.from_path("data/train.lance", columns=["text", "embedding"])
    shards.path                  # the pinned manifest: keep it to resume against the same shards
    shards.read(0, 5)            # {"text": "...", "embedding": numpy.ndarray (float32, 768)}
    loader = torch.utils.data.DataLoader(TorchIterableDataset(shards, shuffle=True, seed=1),
                                         batch_size=256, num_workers=2, collate_fn=collate)

Discovery reads the dataset's newest manifest (or the manifest you name) in two reads,
opens no data file, and pins that version: appends, updates and compactions committed
during an epoch change nothing it reads. Samples are the fragments' surviving rows, read
as the dataset reads them: overlays resolved, multi-file fragments and dropped columns
handled, shallow clones followed, blob columns as bytes. What cannot be read is refused
at discovery with the case, the reason and the remedy.
"""
import bisect
import os
import random

from . import _lancelet

__all__ = ["ShardedDataset", "TorchMapDataset", "TorchIterableDataset", "collate"]


def _rows(batch):
    """The samples of a RecordBatch: {column: value}, fixed-size lists of numbers as numpy
    arrays (views of the batch, no copy), the rest as Python values."""
    columns, rest = {}, []
    for name, kind in zip(batch.schema.names, batch.schema.types):
        columns[name] = None
        if kind.startswith("fixed_size_list<"):
            try:
                columns[name] = batch.to_numpy(name)
                continue
            except ValueError:  # NULLs, or items that are not numbers
                pass
        rest.append(name)
    if rest:
        columns.update(batch.to_pydict(rest))
    names = list(columns)
    return [dict(zip(names, row)) for row in zip(*columns.values())]


class ShardedDataset:
    """Shards of one pinned version of a Lance dataset. Picklable; each process (a
    DataLoader worker after fork, or a spawned one) opens its own readers."""

    def __init__(self, path, columns=None, metadata_cache_entries=256, storage_options=None, shard_rows=None,
                 num_shards=None):
        if shard_rows == "fragment":
            shard_rows = None
        for name, value, other in (("shard_rows", shard_rows, ", 'fragment'"), ("num_shards", num_shards, "")):
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
                raise ValueError(f"{name} must be a positive integer{other} or None, not {value!r}")
        self._args = (str(path), None if columns is None else list(columns), metadata_cache_entries,
                      dict(storage_options or {}), shard_rows or 0, num_shards or 0)
        self._open(self._args[0])

    @classmethod
    def from_path(cls, path, columns=None, metadata_cache_entries=256, storage_options=None, shard_rows=None,
                  num_shards=None):
        """`path`: a dataset directory (its newest manifest becomes .path) or a manifest
        file under its _versions/ (that version). `metadata_cache_entries`: opened fragments
        kept per process (0: none), also capped by the open-file limit. `storage_options`:
        {key: value} for the dataset's store, keyed as pylance's. `shard_rows`: each
        fragment's surviving rows cut into shards of that many (its last shard holds the
        rest); or `num_shards`: shards of ceil(total / num_shards) rows, so at least that
        many when there are as many rows. Neither (or shard_rows="fragment"): one shard
        per fragment."""
        return cls(path, columns, metadata_cache_entries, storage_options, shard_rows, num_shards)

    def _open(self, path):
        _, columns, entries, storage_options, shard_rows, num_shards = self._args
        self._core = _lancelet.ShardedDataset.from_path(path, columns, entries, storage_options, shard_rows,
                                                        num_shards)
        self._pid = os.getpid()
        # pinned from now on
        self._args = (self._core.path, columns, entries, storage_options, shard_rows, num_shards)
        sizes = self._core.shard_sizes()
        self._starts = [0]
        for size in sizes:
            self._starts.append(self._starts[-1] + size)

    def _here(self):
        if self._pid != os.getpid():  # a forked worker: its own readers, same version
            self._open(self._args[0])
        return self._core

    def __getstate__(self):
        return self._args

    def __setstate__(self, state):
        self._args = state
        self._open(state[0])

    @property
    def path(self):
        """The manifest this dataset is pinned to."""
        return self._args[0]

    @property
    def version(self):
        return self._core.version

    @property
    def schema(self):
        return self._core.schema

    def shard_count(self):
        return self._core.shard_count()

    def shard_sizes(self):
        """Surviving rows per shard."""
        return self._core.shard_sizes()

    def total(self):
        return self._core.total()

    def read(self, shard_id, sample_index):
        """One sample: {column: value}."""
        return self.read_batch(shard_id, [sample_index])[0]

    def read_batch(self, shard_id, sample_indices):
        """The samples at these positions of the shard (any order), reading only them."""
        return _rows(self._here().read_batch(shard_id, list(sample_indices)))

    def locate(self, index):
        """(shard_id, sample_index) of a global sample index."""
        if not 0 <= index < self._starts[-1]:
            raise IndexError(f"sample {index} does not exist: {self.path} has {self._starts[-1]} samples")
        shard = bisect.bisect_right(self._starts, index) - 1
        return shard, index - self._starts[shard]


def collate(samples):
    """Stacks a list of samples into a dict of batches: numpy arrays and numbers become
    tensors (a vector column becomes a [batch, dim] tensor), other values stay lists."""
    import numpy as np
    import torch

    out = {}
    for name in samples[0]:
        values = [s[name] for s in samples]
        first = values[0]
        if isinstance(first, np.ndarray) and all(isinstance(v, np.ndarray) for v in values):
            out[name] = torch.from_numpy(np.stack(values))
        elif all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
            out[name] = torch.tensor(values)
        else:
            out[name] = values
    return out


class _TorchMapDataset:
    """A map-style torch Dataset over global sample indices (shard by shard, in order)."""

    def __init__(self, sharded):
        self.sharded = sharded

    def __len__(self):
        return self.sharded.total()

    def __getitem__(self, index):
        if index < 0:
            index += len(self)
        return self.sharded.read(*self.sharded.locate(index))


class _TorchIterableDataset:
    """An iterable torch Dataset of sample dicts. Shards are split across ranks
    (`rank` of `world_size`, default torch.distributed's or 0 of 1) and then across
    DataLoader workers, so each sample comes once per epoch. With `shuffle`, the shard
    order and the samples within each shard are shuffled by `seed` and the epoch
    (set_epoch), the same way in every process."""

    def __init__(self, sharded, shuffle=False, seed=0, rank=None, world_size=None, read_size=256):
        self.sharded = sharded
        self.shuffle = shuffle
        self.seed = seed
        self.rank = rank
        self.world_size = world_size
        self.read_size = read_size
        self.epoch = 0
        self._skip_batches = 0
        self._batch_size = 1

    def set_epoch(self, epoch):
        self.epoch = epoch
        self._skip_batches = 0

    def resume(self, epoch, step, batch_size=1):
        """Continues epoch `epoch` after the first `step` batches of `batch_size` samples
        this rank's DataLoader yielded (batch_size=1: samples, or no DataLoader). A
        DataLoader takes batches from its workers in turn, so worker w of W skips the
        batches it made among the first `step`: the rest of the epoch is the batches not yet
        seen (exact while no worker ran out of shards before `step`; a new DataLoader starts
        again at worker 0, so with several workers their interleaving may differ)."""
        self.epoch = epoch
        self._skip_batches = step
        self._batch_size = batch_size

    def _placement(self, with_workers=False):
        import torch.distributed as dist
        import torch.utils.data as data

        rank, world = self.rank, self.world_size
        if rank is None or world is None:
            initialized = dist.is_available() and dist.is_initialized()
            rank = rank if rank is not None else (dist.get_rank() if initialized else 0)
            world = world if world is not None else (dist.get_world_size() if initialized else 1)
        info = data.get_worker_info()
        workers, worker = (info.num_workers, info.id) if info else (1, 0)
        if with_workers:
            return rank * workers + worker, world * workers, worker, workers
        return rank * workers + worker, world * workers

    def shards_for(self, slot, slots):
        """The shards stream `slot` of `slots` reads this epoch, in order."""
        order = list(range(self.sharded.shard_count()))
        if self.shuffle:
            random.Random(hash((self.seed, self.epoch))).shuffle(order)
        return order[slot::slots]

    def __iter__(self):
        slot, slots, worker, workers = self._placement(with_workers=True)
        skip_batches = max(0, (self._skip_batches - worker + workers - 1) // workers)
        skip = skip_batches * self._batch_size
        import numpy as np

        for shard in self.shards_for(slot, slots):
            size = self.sharded.shard_sizes()[shard]
            if skip >= size:
                skip -= size
                continue
            if self.shuffle:
                samples = np.random.default_rng([self.seed % 2**64, self.epoch, shard]).permutation(size)
            else:
                samples = np.arange(size)
            samples, skip = samples[skip:], 0
            for at in range(0, len(samples), self.read_size):
                yield from self.sharded.read_batch(shard, samples[at:at + self.read_size].tolist())


def __getattr__(name):
    """TorchMapDataset and TorchIterableDataset subclass torch's Dataset classes; torch is
    imported on first use of either, so the rest of the loader works without it."""
    if name not in ("TorchMapDataset", "TorchIterableDataset"):
        raise AttributeError(f"module 'lancelet.loader' has no attribute '{name}'")
    import torch.utils.data as data

    global TorchMapDataset, TorchIterableDataset
    TorchMapDataset = type("TorchMapDataset", (_TorchMapDataset, data.Dataset), {"__doc__": _TorchMapDataset.__doc__})
    TorchIterableDataset = type("TorchIterableDataset", (_TorchIterableDataset, data.IterableDataset),
                                {"__doc__": _TorchIterableDataset.__doc__})
    TorchMapDataset.__module__ = TorchIterableDataset.__module__ = __name__
    return globals()[name]
