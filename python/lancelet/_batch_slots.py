"""Batches a DataLoader worker process hands to the main process through shared memory
that it reuses, instead of torch's transport (a new shared-memory tensor per batch, and a
file descriptor passed and mapped per tensor), which alone stays below the rate one
process reads at (bench/loader_ipc_ceiling.py).

A worker keeps up to MAX_SLOTS slots, one shared-memory segment each, and a control
segment. It writes a batch's arrays into a free slot and sends only the slot's name and
the arrays' layout; unpickled in the main process, that becomes tensors viewing the slot.
When the last of them is dropped, the main process marks the slot free and the worker
writes into it again. Control bytes: [0, MAX_SLOTS) a slot is in use (set by the worker,
cleared by the main process), [MAX_SLOTS, 2 MAX_SLOTS) the main process mapped that slot,
then one byte each: the main process mapped the control segment; the worker exited.

Names (/dev/shm/lancelet-*): the main process removes a segment's name as soon as it has
mapped it. A segment the main process never mapped (its batch was never taken) is
removed by the worker when it exits (one killed outright cannot: those names stay in
/dev/shm). The main process unmaps an exited worker's segments once none of
its batches is held."""
import ctypes
import math
import mmap
import os
import secrets
import threading
import weakref
from multiprocessing import util

import _posixshmem

MAX_SLOTS = 32
_ALIGN = 64
_MAPPED = MAX_SLOTS
_CONTROL_MAPPED = 2 * MAX_SLOTS
_EXITED = 2 * MAX_SLOTS + 1
_CONTROL_BYTES = 2 * MAX_SLOTS + 2


def _create(size):
    """(name, mapping) of a new segment of `size` bytes."""
    while True:
        name = f"/lancelet-{os.getpid()}-{secrets.token_hex(6)}"
        try:
            fd = _posixshmem.shm_open(name, os.O_CREAT | os.O_EXCL | os.O_RDWR, mode=0o600)
            break
        except FileExistsError:
            continue
    try:
        os.ftruncate(fd, size)
        return name, mmap.mmap(fd, size)
    except OSError:
        _remove(name)
        raise
    finally:
        os.close(fd)


def _map(name):
    """The mapping of an existing segment, whose name is removed: it is not needed again."""
    fd = _posixshmem.shm_open(name, os.O_RDWR, mode=0o600)
    try:
        return mmap.mmap(fd, os.fstat(fd).st_size)
    finally:
        os.close(fd)
        _remove(name)


def _remove(name):
    try:
        _posixshmem.shm_unlink(name)
    except FileNotFoundError:
        pass


class SlotRing:
    """A worker process's slots. Thread-safe: reads that run ahead in threads each take
    their own slot."""

    def __init__(self):
        self._lock = threading.Lock()
        self._control_name, self._control = _create(_CONTROL_BYTES)
        self._slots = []  # (name, mapping)
        util.Finalize(self, SlotRing._on_exit, args=(self._control_name, self._control, self._slots), exitpriority=10)

    @staticmethod
    def layout(specs):
        """(offsets, bytes) of arrays of these (shape, dtype) laid out one after another."""
        offsets, end = [], 0
        for shape, dtype in specs:
            offsets.append(end)
            end += -(-math.prod(shape) * dtype.itemsize // _ALIGN) * _ALIGN
        return offsets, end

    def acquire(self, nbytes):
        """The index of a free slot of at least nbytes, now in use; None when there are
        MAX_SLOTS slots and none is free and large enough (the caller sends the batch the
        usual way)."""
        control = self._control
        with self._lock:
            for i, (_, slot) in enumerate(self._slots):
                if control[i] == 0 and len(slot) >= nbytes:
                    control[i] = 1
                    return i
            if len(self._slots) == MAX_SLOTS:
                return None
            self._slots.append(_create(max(nbytes, 1)))
            control[len(self._slots) - 1] = 1
            return len(self._slots) - 1

    def arrays(self, index, specs, offsets):
        """numpy arrays of these (shape, dtype) in slot `index`, at `offsets`."""
        import numpy as np

        slot = self._slots[index][1]
        return [np.ndarray(shape, dtype=dtype, buffer=slot, offset=offset)
                for (shape, dtype), offset in zip(specs, offsets)]

    def batch(self, index, names, specs, offsets, others):
        """What the worker yields for a batch written into slot `index`: unpickled in the
        main process, {name: tensor viewing the slot} plus `others` as they are."""
        layout = [(name, offset, dtype.str, tuple(shape)) for name, (shape, dtype), offset in zip(names, specs, offsets)]
        return _SlotBatch(self._control_name, self._slots[index][0], index, layout, others)

    @staticmethod
    def _on_exit(control_name, control, slots):
        for i, (name, _) in enumerate(slots):
            if not control[_MAPPED + i]:
                _remove(name)
        if not control[_CONTROL_MAPPED]:
            _remove(control_name)
        control[_EXITED] = 1


class _SlotBatch:
    def __init__(self, control, slot, index, layout, others):
        self.args = (control, slot, index, layout, others)

    def __reduce__(self):
        return _attach_batch, self.args


class _MappedRing:
    """The main process's mappings of one worker's segments."""

    def __init__(self, control_name):
        self.control = _map(control_name)
        self.control[_CONTROL_MAPPED] = 1
        self.slots = {}  # index -> (name, mapping)

    def idle(self):
        """The worker exited and none of its batches is held."""
        return self.control[_EXITED] and not any(self.control[:MAX_SLOTS])

    def close(self):
        for _, slot in self.slots.values():
            slot.close()
        self.control.close()


_rings = {}  # control segment name -> _MappedRing
_rings_lock = threading.Lock()


def _slot(control_name, slot_name, index):
    with _rings_lock:
        ring = _rings.get(control_name)
        if ring is None:
            for name, other in list(_rings.items()):
                if other.idle():
                    try:
                        other.close()
                        del _rings[name]
                    except BufferError:  # a view still lives: next time
                        pass
            ring = _rings[control_name] = _MappedRing(control_name)
        known = ring.slots.get(index)
        if known is None or known[0] != slot_name:
            known = ring.slots[index] = (slot_name, _map(slot_name))
            ring.control[_MAPPED + index] = 1
        return ring.control, known[1]


def _release(control, index):
    control[index] = 0


def _attach_batch(control_name, slot_name, index, layout, others):
    import numpy as np
    import torch

    control, slot = _slot(control_name, slot_name, index)
    # Every tensor (and any view of one) keeps `holder` alive; when the last is gone, so is
    # it, and the slot is free. Not a numpy array: a view's base skips arrays that do not
    # own their memory, so one could die while views of it live on.
    holder = (ctypes.c_uint8 * len(slot)).from_buffer(slot)
    weakref.finalize(holder, _release, control, index)
    whole = np.frombuffer(holder, dtype=np.uint8)
    out = {}
    for name, offset, dtype, shape in layout:
        dtype = np.dtype(dtype)
        out[name] = torch.from_numpy(whole[offset:offset + math.prod(shape) * dtype.itemsize].view(dtype).reshape(shape))
    out.update(others)
    return out
