"""Compaction and index builds spread over workers, as pylance's lance.optimize.Compaction:
the client plans tasks at one version, workers execute them (writing files, committing
nothing) and the client commits what they return.

    plan = Compaction.plan(ds, {"target_rows_per_fragment": 1 << 20})
    results = [task.execute(lancelet.dataset(uri, version=plan.read_version)) for task in plan.tasks]
    metrics = Compaction.commit(uri, results)

    build = IndexBuild.plan(ds, "id", "BTREE", num_tasks=4)
    segments = [task.execute(lancelet.dataset(uri, version=build.read_version)) for task in build.tasks]
    ds = IndexBuild.commit(uri, segments)

Tasks and results are small and picklable. A task that fails leaves no file; results
never committed leave files that cleanup_old_versions(delete_unverified=True) removes."""
import json

from . import _lancelet


class _Task:
    """A task: JSON checked by the binding `_check`, pickled as that JSON."""

    _check = None

    def __init__(self, json_text):
        self._json = type(self)._check(json_text)
        self._dict = json.loads(self._json)

    @property
    def read_version(self):
        """The version the task was planned at (and must run on)."""
        return self._dict["read_version"]

    @property
    def fragments(self):
        """The ids of the fragments the task reads."""
        return list(self._dict["fragment_ids"])

    def to_json(self):
        return json.loads(self._json)

    def __eq__(self, other):
        return isinstance(other, type(self)) and self._dict == other._dict

    def __reduce__(self):
        return (type(self), (self._json,))


class _Part:
    """What a task wrote, for the commit: opaque bytes, picklable."""

    def __init__(self, part):
        self._part = bytes(part)

    def __reduce__(self):
        return (type(self), (self._part,))


def _uri_of(dataset):
    return dataset if isinstance(dataset, str) else dataset.uri


class RewriteResult(_Part):
    """The result of one CompactionTask, for Compaction.commit."""


class CompactionTask(_Task):
    """A group of fragments whose live rows become new fragments ("rewrite"), or one
    fragment whose overlays are folded ("fold") or merged ("merge")."""

    _check = staticmethod(_lancelet.compaction_task_json)

    @property
    def action(self):
        return self._dict["action"]

    def execute(self, dataset):
        """Writes the task's files on `dataset`, which must be at the task's read_version;
        returns its RewriteResult. Commits nothing."""
        return RewriteResult(_lancelet.execute_compaction_task(dataset, self._json))

    def __repr__(self):
        return f"CompactionTask({self.action}, fragments={self.fragments}, read_version={self.read_version})"


class CompactionPlan:
    """The tasks of one compaction, planned at read_version."""

    def __init__(self, read_version, tasks):
        self.read_version = read_version
        self.tasks = list(tasks)

    def num_tasks(self):
        return len(self.tasks)


class Compaction:
    """pylance's lance.optimize.Compaction: plan, execute per task, commit."""

    @staticmethod
    def plan(dataset, options=None):
        """What ds.optimize.compact_files(**options) would do, as tasks. options:
        target_rows_per_fragment, materialize_deletions, materialize_deletions_threshold."""
        options = dict(options or {})
        found = _lancelet.plan_compaction(dataset, options.get("target_rows_per_fragment"),
                                          options.get("materialize_deletions", True),
                                          options.get("materialize_deletions_threshold", 0.1))
        return CompactionPlan(dataset.version, [CompactionTask(t) for t in found])

    @staticmethod
    def commit(dataset, rewrites, read_version=None, optimize_indices=False, storage_options=None):
        """Commits the results of one plan's tasks on `dataset` (a Dataset, or its URI with
        read_version): the rewrites as one version, then the folds and merges as another,
        then (optimize_indices) index segments over the fragments indexes stopped covering.
        Returns pylance's metrics dict plus "version". A concurrent commit that changed a
        fragment the plan rewrote raises ConflictError; that part's files are removed, and
        a new plan is needed."""
        if read_version is None:
            if isinstance(dataset, str):
                raise ValueError("commit(uri, ...) needs the plan's read_version")
            read_version = dataset.version
        parts = [r._part for r in rewrites]
        ds, stats = _lancelet.commit_compaction(str(_uri_of(dataset)), read_version, parts, optimize_indices,
                                                dict(storage_options or {}))
        stats["version"] = ds.version
        return stats


class IndexSegment(_Part):
    """One segment written by an IndexTask, for IndexBuild.commit."""


class IndexTask(_Task):
    """One segment of an index over some fragments. For a vector index (IVF_FLAT, IVF_PQ)
    one task trains_model and the others take its segment as their model."""

    _check = staticmethod(_lancelet.index_task_json)

    @property
    def trains_model(self):
        return bool(self._dict.get("vector", {}).get("trains_model", False))

    def execute(self, dataset, model=None):
        """Builds the segment on `dataset` (at the task's read_version); commits nothing.
        model: the IndexSegment of the task that trained the model (vector tasks that do
        not train it)."""
        return IndexSegment(_lancelet.build_index_segment(dataset, self._json, model._part if model else b""))

    def __repr__(self):
        d = self._dict
        return f"IndexTask({d['name']} on {d['column']}, fragments={self.fragments}, read_version={self.read_version})"


class IndexBuild:
    """create_index spread over workers: each task indexes a share of the fragments (one
    segment each) and one commit publishes the segments as one index, which every reader
    searches whole (as after optimize_indices). A vector index's segments share the model
    of its first task: run that one first and hand its segment to the others."""

    def __init__(self, read_version, tasks):
        self.read_version = read_version
        self.tasks = list(tasks)

    @staticmethod
    def plan(dataset, column, index_type="BTREE", num_tasks=2, name=None, **vector):
        """At most num_tasks tasks over the fragments, about equal in rows. A vector index
        takes create_index's parameters (num_partitions, counted on the whole dataset when
        0; num_sub_vectors, num_bits, metric, sample_rate, max_iterations); its first task
        trains the model on a sample of its own fragments, so give it enough rows."""
        found = _lancelet.plan_index_tasks(dataset, column, index_type, num_tasks, name or "", **vector)
        return IndexBuild(dataset.version, [IndexTask(t) for t in found])

    @staticmethod
    def merge(dataset, segments):
        """One segment holding every row of the scalar (BTREE, BITMAP) `segments`, written
        here on `dataset` (at the plan's read_version), as the reference's distributed
        build merges its page files; the inputs' files are removed. Queries then search
        one segment instead of one per task."""
        return IndexSegment(_lancelet.merge_index_segments(dataset, [s._part for s in segments]))

    @staticmethod
    def commit(dataset, segments, read_version=None, replace=False, storage_options=None):
        """Commits the segments of one plan as one CreateIndex version; returns the Dataset.
        An index of that name already there is replaced only with replace=True."""
        if read_version is None:
            if isinstance(dataset, str):
                raise ValueError("commit(uri, ...) needs the plan's read_version")
            read_version = dataset.version
        return _lancelet.commit_index_segments(str(_uri_of(dataset)), read_version, [s._part for s in segments],
                                               replace, dict(storage_options or {}))


__all__ = ["Compaction", "CompactionPlan", "CompactionTask", "RewriteResult", "IndexBuild", "IndexTask",
           "IndexSegment"]
