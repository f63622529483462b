"""lancelet on Dask: the client plans, tasks write files without committing, and the client
commits what they return as one version: a write's partitions (write_fragments), an
update's overlays and a delete's deletion files (a task per fragment), a compaction's
rewrites and folds, an index's segments (lancelet.optimize). A read is a partition per
fragment, or per run of small ones. docs/distributed.md says how it scales.

    import lancelet.dask
    version = lancelet.dask.write_dataset(ddf, "s3://bucket/t.lance", storage_options=opts)
    version = lancelet.dask.update("s3://bucket/t.lance", {"qty": "qty + 1"}, where="id % 100 = 0")
    version = lancelet.dask.delete("s3://bucket/t.lance", "qty < 0")
    lancelet.dask.optimize("s3://bucket/t.lance")
    lancelet.dask.create_index("s3://bucket/t.lance", "id", "BTREE")
    ddf = lancelet.dask.read_dataset("s3://bucket/t.lance", columns=["id", "qty"])

Tasks return metadata (fragments, overlay groups, commit parts) and the client commits it, so
a failed or retried task commits nothing it wrote: only what the client gathers is committed,
once. When a task fails, the client waits for the others before it raises, and what they
wrote is left for cleanup_old_versions(delete_unverified=True)."""
import ctypes
import os

import dask
import dask.dataframe as dd
import pyarrow as pa

import lancelet

_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3  # glibc's mallopt parameters
_malloc_tuned = False


def _reuse_freed_memory():
    """Dask's nanny starts each worker with MALLOC_TRIM_THRESHOLD_=65536 (its
    distributed.nanny.pre-spawn-environ), and setting any such variable also turns off
    glibc's adaptive mmap threshold. Every buffer of 128 KiB or more a task allocates is
    then a fresh mapping, returned to the kernel when freed: the next task faults its pages
    in again. An overlay task on a 500k-row fragment took 2,000-5,000 page faults and 11-20
    ms instead of 6. In a process started that way, this raises both thresholds once (mmap
    from 32 MiB, trim past 64 MiB of free heap), so the buffers are reused; the worker then
    keeps up to that much freed memory. LANCELET_DASK_MALLOC=keep leaves the process as it is."""
    global _malloc_tuned
    if _malloc_tuned:
        return
    _malloc_tuned = True
    if "MALLOC_TRIM_THRESHOLD_" not in os.environ or os.environ.get("LANCELET_DASK_MALLOC") == "keep":
        return
    try:
        mallopt = ctypes.CDLL(None).mallopt  # the process's C library: glibc has it, others may not
    except (OSError, AttributeError):
        return
    mallopt(_M_MMAP_THRESHOLD, 32 << 20)
    mallopt(_M_TRIM_THRESHOLD, 64 << 20)


def _settled(fn, *args):
    """`fn(*args)` as a task that does not fail: (result, None) or (None, the error)."""
    _reuse_freed_memory()
    try:
        return fn(*args), None
    except Exception as e:  # noqa: BLE001  (handed to the client, which raises it)
        return None, e


def _distributed_client():
    """The distributed Client dask.compute would run on, or None (no distributed, no
    client, or another scheduler chosen in dask.config)."""
    if dask.config.get("scheduler", None) not in (None, "dask.distributed", "distributed"):
        return None
    try:
        import distributed
        return distributed.get_client()
    except (ImportError, ValueError):
        return None


def _run_all(fn, calls):
    """One task per argument tuple in `calls`, and waits for all of them: when one fails,
    its error is raised only once the others have finished, so no task of the job still
    writes when the caller sees the failure (and may run cleanup)."""
    client = _distributed_client()
    if client is not None and not any(dask.is_dask_collection(a) for args in calls for a in args):
        # straight to the cluster as futures: a round trip less than a graph (18 ms for 8 tasks on
        # 2 workers instead of 31)
        settled = client.gather(client.map(_settled, [fn] * len(calls), *zip(*calls), pure=False)) if calls else []
    else:
        settled = dask.compute(*[dask.delayed(_settled)(fn, *args) for args in calls])
    for _, error in settled:
        if error is not None:
            raise error
    return [result for result, _ in settled]


def _write_partition(part, uri, mode, max_rows_per_file, storage_options):
    """One task: a partition (a pandas DataFrame, a pyarrow Table or RecordBatch, or a dict
    of arrays) into fragments. Returns (FragmentMetadata list, the partition's Arrow schema
    serialized); an empty partition writes nothing."""
    import pandas as pd
    if isinstance(part, pd.DataFrame):
        table = pa.Table.from_pandas(part, preserve_index=False)
    elif isinstance(part, (pa.Table, pa.RecordBatch)):
        table = part
    elif isinstance(part, list):  # a dask.bag partition: batches, dicts of arrays, or row dicts
        table = _table_of_items(part)
    else:
        table = pa.table(part)
    if table.num_rows == 0:
        return [], table.schema.serialize().to_pybytes()
    fragments = lancelet.write_fragments(table, uri, mode=mode, max_rows_per_file=max_rows_per_file,
                                         storage_options=storage_options)
    return fragments, table.schema.serialize().to_pybytes()


def _table_of_items(items):
    def columnar(item):
        return isinstance(item, (pa.Table, pa.RecordBatch)) or (
            isinstance(item, dict) and all(hasattr(v, "__len__") and not isinstance(v, (str, bytes))
                                           for v in item.values()))
    if items and all(columnar(item) for item in items):
        return pa.concat_tables([item if isinstance(item, pa.Table) else pa.table(item) for item in items])
    return pa.Table.from_pylist(items)


def _partitions(collection):
    if isinstance(collection, (list, tuple)):
        return list(collection)
    return collection.to_delayed()


def write_dataset(collection, uri, mode="create", max_rows_per_file=None, storage_options=None):
    """Writes a dask.dataframe, a dask.bag (each partition a list of pyarrow Tables or
    RecordBatches, of dicts of arrays, or of row dicts) or a list of dask.delayed objects
    (each giving a pyarrow Table, a RecordBatch, a pandas DataFrame or a dict of arrays) to
    the dataset at `uri`, one task per partition, and commits every task's fragments as one
    version; returns that version.

    mode: "create" (the dataset must not exist), "append" (creates it when missing) or
        "overwrite". Every partition must give the same Arrow schema."""
    if mode not in ("create", "append", "overwrite"):
        raise ValueError(f"mode '{mode}': expected create, append or overwrite")
    try:
        current = lancelet.dataset(uri, storage_options=storage_options)
    except lancelet.NotFoundError:
        current = None
    if mode == "create" and current is not None:
        raise lancelet.InvalidArgumentError(f"dataset '{uri}' already exists (version {current.version}); "
                                            "append to it or overwrite it")
    appending = mode == "append" and current is not None
    results = _run_all(_write_partition, [(part, str(uri), "append" if appending else "overwrite", max_rows_per_file,
                                           storage_options) for part in _partitions(collection)])
    fragments = [f for found, _ in results for f in found]
    if appending:
        op = lancelet.LanceOperation.Append(fragments)
        return lancelet.commit(uri, op, read_version=current.version, storage_options=storage_options).version
    schemas = [pa.ipc.read_schema(pa.py_buffer(s)) for found, s in results if found] or \
              [pa.ipc.read_schema(pa.py_buffer(results[0][1]))]
    for s in schemas[1:]:
        if not s.equals(schemas[0]):
            raise lancelet.InvalidArgumentError(f"the partitions' schemas differ: {schemas[0]} and {s}")
    op = lancelet.LanceOperation.Overwrite(schemas[0], fragments)
    read_version = current.version if current is not None else None
    return lancelet.commit(uri, op, read_version=read_version, storage_options=storage_options).version


def _write_overlays(uri, version, fragment_ids, updates, where, storage_options):
    """One task: the update's overlays for some fragments (DataOverlayGroups, which cross
    processes as their JSON text)."""
    ds = lancelet.dataset(uri, version=version, storage_options=storage_options)
    from ._fragments import write_update_overlays
    return write_update_overlays(ds, fragment_ids, updates, where)


def update(uri, updates, where=None, storage_options=None, max_attempts=10):
    """Dataset.update(updates, where) spread over the cluster: one task per fragment
    writes that fragment's overlay (the base data is not rewritten), and the client
    commits every overlay as one DataOverlay version, returned. When a concurrent commit
    changed a cell the update read, the update is computed again at the new version
    (the files of the lost attempt are left to cleanup); after `max_attempts` the
    ConflictError is raised."""
    for attempt in range(max_attempts):
        ds = lancelet.dataset(uri, storage_options=storage_options)
        found = _run_all(_write_overlays, [(str(uri), ds.version, [f.fragment_id], updates, where, storage_options)
                                           for f in ds.get_fragments()])
        groups = [g for written in found for g in written]
        if not groups:
            return ds.version
        op = lancelet.LanceOperation.DataOverlay(groups, updates=updates, where=where)
        try:
            return lancelet.commit(uri, op, read_version=ds.version, storage_options=storage_options).version
        except lancelet.ConflictError:
            if attempt + 1 == max_attempts:
                raise


def _write_deletions(uri, version, fragment_ids, where, storage_options):
    """One task: the delete's deletion files for some fragments."""
    ds = lancelet.dataset(uri, version=version, storage_options=storage_options)
    from ._fragments import write_deletions
    return write_deletions(ds, fragment_ids, where)


def delete(uri, where, storage_options=None, max_attempts=10):
    """Dataset.delete(where) spread over the cluster: one task per fragment writes that
    fragment's deletion file, and the client commits them as one Delete version (returned;
    the version read when no row matches). When a concurrent commit changed a column the
    predicate reads or a row it deletes, the delete is computed again at the new version."""
    for attempt in range(max_attempts):
        ds = lancelet.dataset(uri, storage_options=storage_options)
        found = _run_all(_write_deletions, [(str(uri), ds.version, [f.fragment_id], where, storage_options)
                                            for f in ds.get_fragments()])
        updated = [f for fragments, _, _ in found for f in fragments]
        deleted = [i for _, ids, _ in found for i in ids]
        if not updated and not deleted:
            return ds.version
        op = lancelet.LanceOperation.Delete(updated, deleted, where)
        try:
            return lancelet.commit(uri, op, read_version=ds.version, storage_options=storage_options).version
        except lancelet.ConflictError:
            if attempt + 1 == max_attempts:
                raise


def _execute(uri, task, storage_options, *model):
    """One task: a compaction or index task run on the version it was planned at (an index
    task with the model segment it needs); returns its commit part."""
    ds = lancelet.dataset(uri, version=task.read_version, storage_options=storage_options)
    return task.execute(ds, *model)


def optimize(uri, target_rows_per_fragment=None, materialize_deletions=True, materialize_deletions_threshold=0.1,
             optimize_indices=True, storage_options=None, max_attempts=10):
    """ds.optimize.compact_files() spread over the cluster: the client plans at the latest
    version, one task per rewrite group or per fragment whose overlays are folded writes
    the new files, and the client commits them (the rewrites as one version, the folds as
    another), then, with optimize_indices, indexes the fragments indexes stopped covering.
    A concurrent commit that changed a planned fragment makes the client plan again.
    Returns the compaction metrics dict with "version"."""
    from lancelet.optimize import Compaction
    options = {"target_rows_per_fragment": target_rows_per_fragment, "materialize_deletions": materialize_deletions,
               "materialize_deletions_threshold": materialize_deletions_threshold}
    for attempt in range(max_attempts):
        ds = lancelet.dataset(uri, storage_options=storage_options)
        plan = Compaction.plan(ds, options)
        if not plan.tasks:
            return {"version": ds.version}
        results = _run_all(_execute, [(str(uri), t, storage_options) for t in plan.tasks])
        try:
            return Compaction.commit(str(uri), results, read_version=plan.read_version,
                                     optimize_indices=optimize_indices, storage_options=storage_options)
        except lancelet.ConflictError:
            if attempt + 1 == max_attempts:
                raise


def _merge(uri, read_version, segments, storage_options):
    """One task: a scalar index's segments rewritten as one."""
    from lancelet.optimize import IndexBuild
    ds = lancelet.dataset(uri, version=read_version, storage_options=storage_options)
    return IndexBuild.merge(ds, segments)


def create_index(uri, column, index_type="BTREE", name=None, replace=False, num_tasks=None, merge=True,
                 storage_options=None, max_attempts=10, **vector):
    """ds.create_index(column, index_type) spread over the cluster: each of num_tasks tasks
    (default: one per worker thread, at most one per fragment) indexes a share of the
    fragments as one segment, and one commit publishes them as one index. A scalar index's
    segments are then merged into one by a last task (merge=False keeps one per task, and
    queries search each). A vector index (IVF_FLAT, IVF_PQ; create_index's parameters in
    `vector`) is built in two steps: the first task trains the model on its fragments, then
    the others use it; its segments stay apart. Returns the version committed."""
    from lancelet.optimize import IndexBuild
    if num_tasks is None:
        num_tasks = _worker_slots()
    for attempt in range(max_attempts):
        ds = lancelet.dataset(uri, storage_options=storage_options)
        build = IndexBuild.plan(ds, column, index_type, num_tasks, name, **vector)
        trainer = [t for t in build.tasks if t.trains_model]
        model = _run_all(_execute, [(str(uri), t, storage_options) for t in trainer])
        rest = [t for t in build.tasks if not t.trains_model]
        segments = model + _run_all(_execute, [(str(uri), t, storage_options, model[0] if model else None)
                                               for t in rest])
        if merge and not trainer and len(segments) > 1:
            segments = _run_all(_merge, [(str(uri), build.read_version, segments, storage_options)])
        try:
            return IndexBuild.commit(str(uri), segments, read_version=build.read_version, replace=replace,
                                     storage_options=storage_options).version
        except lancelet.ConflictError:
            if attempt + 1 == max_attempts:
                raise


def _worker_slots():
    """The threads of the distributed client's workers, or the local scheduler's cores."""
    try:
        from distributed import get_client
        return max(1, sum(get_client().nthreads().values()))
    except (ImportError, ValueError):
        import os
        return os.cpu_count() or 1


def _read_fragments(uri, version, fragment_ids, columns, filter, storage_options):
    _reuse_freed_memory()
    ds = lancelet.dataset(uri, version=version, storage_options=storage_options)
    return ds.scanner(columns=columns, filter=filter, fragments=fragment_ids).to_table().to_pandas()


def _fragment_groups(fragments, min_rows):
    """Consecutive fragments grouped until each group holds at least `min_rows` live rows
    (the last may hold fewer); one group per fragment when min_rows is None."""
    groups, rows = [], 0
    for f in fragments:
        if not groups or min_rows is None or rows >= min_rows:
            groups.append([])
            rows = 0
        groups[-1].append(f.fragment_id)
        rows += f.count_rows()
    return groups


def read_dataset(uri, columns=None, filter=None, version=None, min_rows_per_partition=None, storage_options=None):
    """The dataset at `uri` (its latest version, or `version`) as a dask.dataframe with one
    partition per fragment, or per run of consecutive small fragments holding at least
    min_rows_per_partition rows, each read by a task; `columns` and `filter` (SQL) as in
    Dataset.to_table."""
    ds = lancelet.dataset(uri, version=version, storage_options=storage_options)
    meta = ds.scanner(columns=columns, limit=0).to_table().to_pandas()
    parts = [dask.delayed(_read_fragments)(str(uri), ds.version, ids, columns, filter, storage_options)
             for ids in _fragment_groups(ds.get_fragments(), min_rows_per_partition)]
    if not parts:
        return dd.from_pandas(meta, npartitions=1)
    return dd.from_delayed(parts, meta=meta)


__all__ = ["write_dataset", "update", "delete", "optimize", "create_index", "read_dataset"]
