"""Training-data shards over a Lance dataset: ranges of a fragment's rows. By default
about 256 shards of at least 4,096 rows, cut within fragments, so that a one-fragment
table still gives every rank and DataLoader worker shards to mix; shard_rows= or
num_shards= choose otherwise, and shard_rows="fragment" gives one shard per fragment, as
Zephon lays them out. Nothing depends on how many fragments there are: compaction
changes the shards' boundaries, never what an epoch holds.

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


# The default cut: enough shards for 8 ranks x 8 workers x 4, none so small that its
# reads stop paying their way.
DEFAULT_SHARDS = 256
DEFAULT_MIN_SHARD_ROWS = 4096


class ShardedDataset:
    """Shards of one pinned version of a Lance dataset. Picklable; each process (a
    DataLoader worker after fork, or a spawned one) opens its own readers."""

    def __init__(self, path, columns=None, metadata_cache_entries=256, storage_options=None, shard_rows=None,
                 num_shards=None):
        for name, value, words in (("shard_rows", shard_rows, ("fragment",)), ("num_shards", num_shards, ())):
            if value is None or value in words:
                continue
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                named = "".join(f", {word!r}" for word in words)
                raise ValueError(f"{name} must be a positive integer{named} or None, not {value!r}")
        min_shard_rows = 1
        if shard_rows is None and num_shards is None:
            num_shards, min_shard_rows = DEFAULT_SHARDS, DEFAULT_MIN_SHARD_ROWS
        if shard_rows == "fragment":
            shard_rows = None
        self._args = (str(path), None if columns is None else list(columns), metadata_cache_entries,
                      dict(storage_options or {}), shard_rows or 0, num_shards or 0, min_shard_rows)
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
        many when there are as many rows. Neither: num_shards=256 with shards of at
        least 4,096 rows. shard_rows="fragment": one shard per fragment."""
        return cls(path, columns, metadata_cache_entries, storage_options, shard_rows, num_shards)

    def _open(self, path):
        self._core = _lancelet.ShardedDataset.from_path(path, *self._args[1:])
        self._pid = os.getpid()
        self._args = (self._core.path,) + self._args[1:]  # pinned from now on
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


def _read_ids(sharded, shards, samples, as_rows=True, place=None):
    """The samples (shard id, sample index) pairs name, in that order: one read_batch per
    shard among them. Sample dicts, or with as_rows=False {column: numpy array or list}
    (the arrays where place(names, [(shape, dtype)]) puts them, if given)."""
    import numpy as np

    shards = np.asarray(shards)
    samples = np.asarray(samples)
    if len(shards) == 0:
        return [] if as_rows else {}
    order = np.argsort(shards, kind="stable")
    cuts = np.flatnonzero(np.diff(shards[order])) + 1  # where the next shard's pairs begin
    parts = [sharded._here().read_batch(int(shards[picked[0]]), samples[picked].tolist())
             for picked in np.split(order, cuts)]
    back = np.empty(len(order), dtype=np.int64)
    back[order] = np.arange(len(order))  # position in the reads of each asked pair
    if as_rows:
        rows = [row for part in parts for row in _rows(part)]
        return [rows[i] for i in back]
    return _columns(parts, back, place)


def _new_arrays(names, specs):
    """The default `place` of _columns: new arrays of these (shape, dtype)."""
    import numpy as np

    return [np.empty(shape, dtype) for shape, dtype in specs]


def _columns(parts, back, place=None):
    """{column: values} of the parts' rows in the order `back` gives: numbers and vectors
    without NULLs as numpy arrays (made by place(names, [(shape, dtype)]) if given, else
    new), other values as lists."""
    import numpy as np

    names = parts[0].schema.names
    numeric, listed = {}, {}
    for name in names:
        try:
            views = [part.to_numpy(name) for part in parts]
            if len({(view.dtype, view.shape[1:]) for view in views}) != 1:
                raise ValueError("parts of different shapes")
            numeric[name] = views
        except ValueError:  # NULLs, or values that are not numbers
            values = [v for part in parts for v in part.to_pydict([name])[name]]
            listed[name] = [values[i] for i in back]
    specs = [((len(back),) + views[0].shape[1:], views[0].dtype) for views in numeric.values()]
    arrays = (place or _new_arrays)(list(numeric), specs)
    if len(parts) > 1:
        # Each part's rows are scattered straight to their places: one copy, where
        # concatenating first and reordering after made two.
        ends = np.cumsum([len(part) for part in parts])
        place_of = np.empty(len(back), dtype=np.int64)
        place_of[back] = np.arange(len(back))  # where each read row goes
    for views, values in zip(numeric.values(), arrays):
        if len(views) == 1:
            np.take(views[0], back, axis=0, out=values)
            continue
        for view, end in zip(views, ends):
            values[place_of[end - len(view):end]] = view
    placed = dict(zip(numeric, arrays))
    return {name: placed[name] if name in placed else listed[name] for name in names}


def _tensors(columns):
    """A batch of columns as collate makes it: numpy numbers become tensors."""
    import numpy as np
    import torch

    return {name: torch.from_numpy(np.ascontiguousarray(values)) if isinstance(values, np.ndarray) else values
            for name, values in columns.items()}


class _TorchMapDataset:
    """A map-style torch Dataset over global sample indices (shard by shard, in order). A
    DataLoader with a batch sampler fetches each batch with one read per shard in it."""

    def __init__(self, sharded):
        self.sharded = sharded

    def __len__(self):
        return self.sharded.total()

    def __getitem__(self, index):
        if index < 0:
            index += len(self)
        return self.sharded.read(*self.sharded.locate(index))

    def __getitems__(self, indices):
        import numpy as np

        total = len(self)
        wanted = np.asarray(indices, dtype=np.int64)
        wanted = np.where(wanted < 0, wanted + total, wanted)
        bad = (wanted < 0) | (wanted >= total)
        if bad.any():
            self.sharded.locate(int(wanted[bad][0]))  # raises the IndexError naming it
        starts = np.asarray(self.sharded._starts, dtype=np.int64)
        shards = np.searchsorted(starts, wanted, side="right") - 1
        return _read_ids(self.sharded, shards, wanted - starts[shards])


class _TorchIterableDataset:
    """An iterable torch Dataset of sample dicts (or, with batch_size, of collated batches:
    use DataLoader(batch_size=None)).

    Each epoch is one sequence of every sample, the same in every process for (seed, epoch):
    the shards in order (shuffled by seed and epoch with shuffle=True), each shard's
    samples in order (shuffled too). Every rank (`rank` of `world_size`, default
    torch.distributed's or 0 of 1) takes an equal contiguous part of it, as
    DistributedSampler does: the sequence is padded by repeating its first samples
    (drop_last=False) or its tail dropped (drop_last=True) to a multiple of world_size,
    and fewer samples than ranks is an error. A rank's DataLoader workers split its part
    in contiguous pieces, so every sample comes once. With shuffle, each piece is mixed
    across shards: blocks of read_size samples are taken in random turns from
    `open_shards` shards at a time, then shuffled in windows of `buffer_size` samples.
    The order depends only on (seed, epoch, rank, world_size, worker, workers), so
    resume() and load_state_dict() continue an epoch without repeating a sample.

    threads=N reads the next N reads (batches, or blocks of read_size samples) ahead in N
    threads of the iterating process; the reads release the GIL. In one process
    (DataLoader num_workers=0) this takes the place of worker processes.

    With batch_size, a DataLoader worker process writes each batch's arrays into
    shared-memory slots it reuses and sends only their place: in the main process the
    batch's tensors view the slot until the last of them is dropped (lancelet/_batch_slots.py).
    torch's own transport makes a new shared-memory tensor per batch and costs more than
    the read (bench/loader_ipc_ceiling.py). A DataLoader collate_fn would see those batches
    in the worker as they travel, not as dicts: leave it unset, or pass slots=False for
    batches of tensors sent torch's way."""

    def __init__(self, sharded, shuffle=False, seed=0, rank=None, world_size=None, read_size=256,
                 drop_last=False, buffer_size=8192, open_shards=8, batch_size=None, threads=0, slots=True):
        for name, value in (("read_size", read_size), ("buffer_size", buffer_size), ("open_shards", open_shards),
                            ("batch_size", batch_size)):
            if value is not None and (not isinstance(value, int) or value < 1):
                raise ValueError(f"{name} must be a positive integer, not {value!r}")
        if not isinstance(threads, int) or threads < 0:
            raise ValueError(f"threads must be a non-negative integer, not {threads!r}")
        self.threads = threads
        self.slots = slots
        self.sharded = sharded
        self.shuffle = shuffle
        self.seed = seed
        self.rank = rank
        self.world_size = world_size
        self.read_size = read_size
        self.drop_last = drop_last
        self.buffer_size = buffer_size
        self.open_shards = open_shards
        self.batch_size = batch_size
        self.epoch = 0
        self._skip_batches = 0
        self._batch_size = 1

    def set_epoch(self, epoch):
        self.epoch = epoch
        self._skip_batches = 0

    def resume(self, epoch, step, batch_size=1):
        """Continues epoch `epoch` after the first `step` batches of `batch_size` samples
        this rank's DataLoader yielded (batch_size=1: samples, or no DataLoader; with the
        dataset's own batch_size, its batches). A DataLoader takes batches from its workers
        in turn, so worker w of W skips the batches it made among the first `step`: the rest
        of the epoch is the batches not yet seen (exact while no worker ran out before
        `step`; a new DataLoader starts again at worker 0, so with several workers their
        interleaving may differ)."""
        self.epoch = epoch
        self._skip_batches = step
        self._batch_size = 1 if self.batch_size else batch_size

    def state_dict(self, step, batch_size=1):
        """What load_state_dict needs to continue this epoch after `step` batches of
        `batch_size` samples (as resume())."""
        return {"epoch": self.epoch, "step": step, "batch_size": batch_size, "seed": self.seed,
                "shuffle": self.shuffle, "path": self.sharded.path}

    def load_state_dict(self, state):
        if (state["seed"], state["shuffle"], state["path"]) != (self.seed, self.shuffle, self.sharded.path):
            raise ValueError("the state is of another dataset, seed or shuffle: "
                             f"{(state['seed'], state['shuffle'], state['path'])} is not "
                             f"{(self.seed, self.shuffle, self.sharded.path)}")
        self.resume(state["epoch"], state["step"], state["batch_size"])

    def _distributed(self):
        """(rank, world_size): as given, else torch.distributed's, else 0 of 1."""
        import torch.distributed as dist

        rank, world = self.rank, self.world_size
        if rank is None or world is None:
            initialized = dist.is_available() and dist.is_initialized()
            rank = rank if rank is not None else (dist.get_rank() if initialized else 0)
            world = world if world is not None else (dist.get_world_size() if initialized else 1)
        return rank, world

    def __getstate__(self):
        # A spawned DataLoader worker has no process group: it gets the rank resolved here.
        state = dict(self.__dict__)
        state["rank"], state["world_size"] = self._distributed()
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)

    def _placement(self):
        import torch.utils.data as data

        rank, world = self._distributed()
        info = data.get_worker_info()
        workers, worker = (info.num_workers, info.id) if info else (1, 0)
        return rank, world, worker, workers

    def samples_per_rank(self, world_size=None):
        """How many samples each rank gets an epoch (padding included)."""
        world = world_size or self._placement()[1]
        total = self.sharded.total()
        if total < world:
            raise ValueError(f"{self.sharded.path} has {total} samples, fewer than the {world} ranks: "
                             "every rank needs at least one")
        return total // world if self.drop_last else -(-total // world)

    def _sequence(self, world):
        """The epoch's (shard ids, sample indices), padded or cut to world x per rank."""
        import numpy as np

        sizes = np.asarray(self.sharded.shard_sizes(), dtype=np.int64)
        per_rank = self.samples_per_rank(world)
        order = np.arange(len(sizes))
        if self.shuffle:
            order = np.random.default_rng([self.seed % 2**64, self.epoch]).permutation(len(sizes))
        shards = np.repeat(order, sizes[order])
        within = [np.random.default_rng([self.seed % 2**64, self.epoch, int(s)]).permutation(sizes[s])
                  if self.shuffle else np.arange(sizes[s]) for s in order]
        within = np.concatenate(within) if within else np.zeros(0, dtype=np.int64)
        wanted = per_rank * world
        take = np.arange(wanted) % len(shards)  # padding repeats the first samples
        return shards[take], within[take]

    def _mixed(self, count, shards, rng):
        """Positions 0..count-1 of a piece whose samples are of `shards`, mixed across shards:
        blocks from open_shards runs at a time in random turns, then windows shuffled."""
        import numpy as np

        cuts = np.flatnonzero(np.diff(shards)) + 1
        runs = list(zip(np.concatenate([[0], cuts]).tolist(), np.concatenate([cuts, [count]]).tolist()))
        active, pending = runs[:self.open_shards], runs[self.open_shards:]
        blocks = []
        while active:
            j = int(rng.integers(len(active)))
            start, end = active[j]
            stop = min(start + self.read_size, end)
            blocks.append(np.arange(start, stop))
            if stop < end:
                active[j] = (stop, end)
            elif pending:
                active[j] = pending.pop(0)
            else:
                active.pop(j)
        positions = np.concatenate(blocks) if blocks else np.zeros(0, dtype=np.int64)
        for at in range(0, count, self.buffer_size):
            positions[at:at + self.buffer_size] = rng.permutation(positions[at:at + self.buffer_size])
        return positions

    def plan(self):
        """This process's samples this epoch, in the order it yields them: (shard ids,
        sample indices), numpy arrays."""
        rank, world, worker, workers = self._placement()
        shards, within = self._sequence(world)
        per_rank = len(shards) // world
        lo = rank * per_rank + per_rank * worker // workers
        hi = rank * per_rank + per_rank * (worker + 1) // workers
        shards, within = shards[lo:hi], within[lo:hi]
        if self.shuffle and len(shards):
            import numpy as np

            rng = np.random.default_rng([self.seed % 2**64, self.epoch, rank, world, worker, workers])
            mixed = self._mixed(len(shards), shards, rng)
            shards, within = shards[mixed], within[mixed]
        skip_batches = max(0, (self._skip_batches - worker + workers - 1) // workers)
        skip = skip_batches * self._batch_size * (self.batch_size or 1)
        return shards[skip:], within[skip:]

    def __iter__(self):
        shards, within = self.plan()
        step = self.batch_size or self.read_size

        ring = _worker_ring() if self.slots and self.batch_size else None

        def read(at):
            if ring:
                return [_slot_batch(ring, self.sharded, shards[at:at + step], within[at:at + step])]
            if self.batch_size:
                return [_tensors(_read_ids(self.sharded, shards[at:at + step], within[at:at + step], as_rows=False))]
            return _read_ids(self.sharded, shards[at:at + step], within[at:at + step])

        for items in _in_order(read, range(0, len(shards), step), self.threads):
            yield from items


_ring = (None, None)  # (pid, SlotRing): a forked process makes its own


def _worker_ring():
    """This DataLoader worker process's shared-memory slots (made on first use); None in a
    process that is not a worker, whose batches go nowhere."""
    global _ring
    import torch.utils.data as data

    if data.get_worker_info() is None:
        return None
    if _ring[0] != os.getpid():
        from ._batch_slots import SlotRing

        _ring = (os.getpid(), SlotRing())
    return _ring[1]


def _slot_batch(ring, sharded, shards, samples):
    """A batch read straight into a free slot of `ring`, sent as the slot's name (tensors
    viewing it once in the main process); as tensors when no slot is free."""
    taken = {}

    def place(names, specs):
        offsets, nbytes = ring.layout(specs)
        index = ring.acquire(nbytes)
        if index is None:
            return _new_arrays(names, specs)
        taken.update(index=index, names=names, specs=specs, offsets=offsets)
        return ring.arrays(index, specs, offsets)

    columns = _read_ids(sharded, shards, samples, as_rows=False, place=place)
    if not taken:
        return _tensors(columns)
    others = {name: values for name, values in columns.items() if name not in taken["names"]}
    return ring.batch(taken["index"], taken["names"], taken["specs"], taken["offsets"], others)


def _in_order(function, arguments, threads):
    """function(a) for each a of arguments, in order; with threads > 0 up to `threads`
    calls run ahead in a pool of that many threads."""
    if threads == 0:
        yield from map(function, arguments)
        return
    import collections
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=threads, thread_name_prefix="lancelet-loader") as pool:
        pending = collections.deque()
        try:
            for argument in arguments:
                pending.append(pool.submit(function, argument))
                if len(pending) > threads:
                    yield pending.popleft().result()
            while pending:
                yield pending.popleft().result()
        finally:  # a consumer that stops early leaves nothing running behind it
            for future in pending:
                future.cancel()


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
