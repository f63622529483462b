"""Distributed writes, named as pylance names them: workers call write_fragments, which
writes data files without committing and returns FragmentMetadata (or write an update's
overlays per fragment, DataOverlayGroup); one process commits them all in one version
with commit(uri, LanceOperation.Append / .Overwrite / .DataOverlay, read_version=...). FragmentMetadata crosses processes as pylance's JSON (to_json /
from_json) or by pickling, so pylance can commit lancelet's fragments and the other way
round."""
import copy
import functools
import json

from . import _lancelet


class _JsonRecord:
    """Metadata that crosses processes as JSON: checked (and put in its canonical shape) by
    the binding `_check` when made, compared by value, pickled as its JSON."""

    _check = None

    def __init__(self, json_text):
        self._json = type(self)._check(json_text)

    @classmethod
    def _checked(cls, json_text):
        """The record of JSON a binding made (or a pickle of one): not checked again, since an
        update's overlay offsets make it megabytes."""
        record = cls.__new__(cls)
        record._json = json_text
        return record

    @functools.cached_property
    def _dict(self):
        return json.loads(self._json)

    @classmethod
    def from_json(cls, json_data):
        """The record a to_json() described: a JSON string, or the dict itself."""
        return cls(json_data if isinstance(json_data, str) else json.dumps(json_data))

    def to_json(self):
        """The record as a dict (for a fragment, what pylance's to_json() gives)."""
        return json.loads(self._json)

    def __eq__(self, other):
        return isinstance(other, type(self)) and self._dict == other._dict

    def __reduce__(self):
        return (type(self)._checked, (self._json,))


class FragmentMetadata(_JsonRecord):
    """A fragment written but not committed: its data files and row count (its id is a
    placeholder; the commit numbers the fragments it adds), or an existing fragment with
    new deletions (Fragment.delete). from_json reads pylance's or lancelet's to_json(); a
    fragment with row ids is refused."""

    _check = staticmethod(_lancelet.fragment_json)

    @property
    def id(self):
        return self._dict["id"]

    @property
    def physical_rows(self):
        return self._dict["physical_rows"]

    @property
    def files(self):
        """The data files, as dicts (path, fields, column_indices, file versions, size)."""
        return [dict(f) for f in self._dict["files"]]

    def __repr__(self):
        paths = ", ".join(f["path"] for f in self._dict["files"])
        return f"FragmentMetadata(id={self.id}, physical_rows={self.physical_rows}, files=[{paths}])"


class DataOverlayGroup(_JsonRecord):
    """The overlay files written for one fragment and not yet committed (pylance's
    LanceOperation.DataOverlayGroup): {"fragment_id", "overlays": [{"data_file",
    "offsets": [[...], ...]}]} in to_json(), one list of offsets per field or one for all.
    It crosses processes (pickled) with each list as the base64 of its Roaring bitmap,
    which from_json reads too."""

    _check = staticmethod(_lancelet.overlay_group_json)

    @functools.cached_property
    def _dict(self):
        return json.loads(_lancelet.overlay_group_json(self._json, lists=True))

    def to_json(self):
        return copy.deepcopy(self._dict)

    @property
    def fragment_id(self):
        return self._dict["fragment_id"]

    @property
    def rows(self):
        """The distinct physical offsets its overlays cover."""
        return sorted({o for overlay in self._dict["overlays"] for s in overlay["offsets"] for o in s})

    def to_lance(self):
        """The group as pylance's LanceOperation.DataOverlayGroup, for pylance's
        LanceDataset.commit(uri, LanceOperation.DataOverlay([...]))."""
        import lance
        from lance.fragment import DataFile
        files = []
        for overlay in self._dict["overlays"]:
            f = overlay["data_file"]
            data_file = DataFile(f["path"], f["fields"], f["column_indices"], f["file_major_version"],
                                 f["file_minor_version"], f["file_size_bytes"], f["base_id"])
            offsets = overlay["offsets"]
            files.append(lance.LanceOperation.DataOverlayFile(data_file, offsets[0] if len(offsets) == 1 else offsets))
        return lance.LanceOperation.DataOverlayGroup(self.fragment_id, files)

    def __repr__(self):
        return f"DataOverlayGroup(fragment_id={self.fragment_id}, overlays={len(self._dict['overlays'])})"


def _group_json_of(group):
    """A DataOverlayGroup's JSON, or that of pylance's (fragment_id, overlays of data_file
    and offsets: one iterable of ints, dense, or one per field, sparse)."""
    if isinstance(group, DataOverlayGroup):
        return group._json
    overlays = []
    for overlay in group.overlays:
        f = overlay.data_file
        offsets = list(overlay.offsets)
        dense = not offsets or not hasattr(offsets[0], "__iter__")
        overlays.append({"data_file": {"fields": list(f.fields), "column_indices": list(f.column_indices),
                                       "file_major_version": f.file_major_version,
                                       "file_minor_version": f.file_minor_version,
                                       "file_size_bytes": f.file_size_bytes or 0, "base_id": f.base_id,
                                       "path": str(f.path)},
                         "offsets": [sorted(int(o) for o in offsets)] if dense else
                                    [sorted(int(o) for o in s) for s in offsets]})
    return json.dumps({"fragment_id": int(group.fragment_id), "overlays": overlays})


def _set_clauses(updates):
    from ._dataset import _sql_literal  # noqa: E402
    return [(str(column), value if isinstance(value, str) else _sql_literal(value)) for column, value in updates.items()]


def write_update_overlays(dataset, fragments, updates, where=None):
    """The overlays of `dataset.update(updates, where)` for `fragments` (Fragment objects
    or ids) alone, written and not committed: one DataOverlayGroup per fragment with rows
    to change. Commit them with LanceOperation.DataOverlay(groups, updates=, where=)."""
    ids = [getattr(f, "fragment_id", f) for f in fragments]
    found = _lancelet.write_update_overlays(dataset, ids, _set_clauses(updates), where or "")
    return [DataOverlayGroup._checked(text) for text in found]


def write_deletions(dataset, fragments, where):
    """The deletions of `dataset.delete(where)` on `fragments` (Fragment objects or ids)
    alone, written and not committed: (updated FragmentMetadata, ids of fragments left
    with no row, rows deleted), for LanceOperation.Delete."""
    ids = [getattr(f, "fragment_id", f) for f in fragments]
    updated, deleted, rows = _lancelet.write_deletions(dataset, ids, where)
    return [FragmentMetadata._checked(text) for text in updated], list(deleted), rows


def _json_of(fragment):
    if isinstance(fragment, FragmentMetadata):
        return fragment._json
    to_json = getattr(fragment, "to_json", None)  # pylance's FragmentMetadata
    if to_json is None:
        raise TypeError(f"expected FragmentMetadata, got {type(fragment).__name__}")
    return json.dumps(to_json())


class LanceOperation:
    """The operations commit() publishes, as pylance's lance.LanceOperation."""

    class Append:
        """Adds the fragments to the dataset."""

        def __init__(self, fragments):
            self.fragments = list(fragments)

    class Overwrite:
        """Replaces the dataset's schema and fragments (creating it when missing)."""

        def __init__(self, new_schema, fragments):
            self.new_schema = new_schema
            self.fragments = list(fragments)

    class Delete:
        """Deletions written per fragment (Fragment.delete): the updated fragments (their new
        deletion files), the ids of fragments whose rows all went, and the predicate that
        chose the rows. The commit refuses with a ConflictError when a commit after
        read_version changed a column the predicate reads, or a row it deletes."""

        def __init__(self, updated_fragments, deleted_fragment_ids, predicate):
            self.updated_fragments = list(updated_fragments)
            self.deleted_fragment_ids = list(deleted_fragment_ids)
            self.predicate = predicate

    class Update:
        """An UPDATE that moved its rows: the old rows deleted (Fragment.delete gives the
        updated fragments; fragments left with no row go in removed_fragment_ids) and their
        new values written as new fragments (write_fragments). A concurrent commit that
        changed one of its fragments refuses it (ConflictError); given the update that
        computed the rows (`updates`, `where`), so does one that changed what it read."""

        def __init__(self, removed_fragment_ids=(), updated_fragments=(), new_fragments=(), updates=None,
                     where=None):
            self.removed_fragment_ids = list(removed_fragment_ids)
            self.updated_fragments = list(updated_fragments)
            self.new_fragments = list(new_fragments)
            self.updates = updates
            self.where = where

    class Rewrite:
        """The results of one compaction plan's tasks (lancelet.optimize.CompactionTask.execute),
        committed as Compaction.commit commits them; read_version is the plan's."""

        def __init__(self, results):
            self.results = list(results)

    class CreateIndex:
        """The segments of one index build (lancelet.optimize.IndexTask.execute), committed as
        one index; replace=True removes an index of that name in the same commit."""

        def __init__(self, segments, replace=False):
            self.segments = list(segments)
            self.replace = replace

    class DataOverlay:
        """Adds the groups' overlay files to their fragments. Given the update that wrote
        them (`updates`, `where`), the commit refuses with a ConflictError when a commit
        after read_version changed a cell the update read, so the caller writes them
        again; without, they are blind writes that land over concurrent ones."""

        def __init__(self, groups, updates=None, where=None):
            self.groups = list(groups)
            self.updates = updates
            self.where = where


Operation = LanceOperation


def write_fragments(data, dataset_uri, schema=None, *, mode="append", max_rows_per_file=None,
                    data_storage_version=None, storage_options=None):
    """Writes `data` into new fragments of the dataset at `dataset_uri` without committing
    them, as pylance's lance.fragment.write_fragments; returns their FragmentMetadata.

    data: anything write_dataset takes. The columns get the dataset's field ids when it
        exists and mode is not "overwrite"; else ids numbered from the data's schema.
    max_rows_per_file: rows per fragment (default 1,048,576).
    data_storage_version: file version when the dataset does not exist ("2.2" default).
    The files stay in place until a commit publishes them or cleanup removes them."""
    from . import _to_stream, dataset, NotFoundError, _pyarrow  # noqa: E402  (lancelet/__init__.py)
    target = None
    if mode != "overwrite" and _pyarrow() is not None:
        try:
            target = dataset(dataset_uri, storage_options=storage_options).schema
        except NotFoundError:
            target = None
    stream = _to_stream(data, schema, target)
    found = _lancelet.write_fragments(stream, str(dataset_uri), mode, max_rows_per_file, data_storage_version,
                                      dict(storage_options or {}))
    return [FragmentMetadata._checked(text) for text in found]


def commit(base_uri, operation, read_version=None, storage_options=None):
    """Commits `operation` on the dataset at `base_uri` as read at `read_version` (the
    version the workers planned against; the latest when None), as pylance's
    LanceDataset.commit; returns the Dataset at the version committed. A concurrent commit
    is rebased over or refused by the usual conflict rules. operation: LanceOperation.Append,
    .Overwrite, .Delete, .Update (of moved rows) or .DataOverlay (lancelet's or pylance's), or lancelet's .Rewrite
    (compaction results) or .CreateIndex (index segments), which need read_version."""
    kind = type(operation).__name__
    if kind == "DataOverlay":
        groups = [_group_json_of(g) for g in operation.groups]
        updates, where = getattr(operation, "updates", None), getattr(operation, "where", None)  # pylance's has none
        update_set = None if updates is None else _set_clauses(updates)
        return _lancelet.commit(str(base_uri), "data_overlay", groups, None, read_version,
                                dict(storage_options or {}), update_set, where or "")
    if kind in ("Rewrite", "CreateIndex") and hasattr(operation, "results" if kind == "Rewrite" else "segments"):
        if read_version is None:
            raise ValueError(f"a {kind} commit needs the read_version its tasks were planned at")
        from .optimize import Compaction, IndexBuild  # noqa: E402
        if kind == "Rewrite":
            done = Compaction.commit(str(base_uri), operation.results, read_version=read_version,
                                     storage_options=storage_options)
            from . import dataset  # noqa: E402
            return dataset(base_uri, version=done["version"], storage_options=storage_options)
        return IndexBuild.commit(str(base_uri), operation.segments, read_version=read_version,
                                 replace=operation.replace, storage_options=storage_options)
    if kind == "Update":
        if getattr(operation, "fields_modified", None):  # pylance's column rewrite
            raise NotImplementedError("lancelet commits an Update that moves rows, not one that rewrites columns "
                                      "(fields_modified); write the change as overlays (LanceOperation.DataOverlay)")
        updates, where = getattr(operation, "updates", None), getattr(operation, "where", None)
        return _lancelet.commit(str(base_uri), "update", [_json_of(f) for f in operation.updated_fragments], None,
                                read_version, dict(storage_options or {}),
                                None if updates is None else _set_clauses(updates), where or "",
                                [int(i) for i in operation.removed_fragment_ids],
                                [_json_of(f) for f in operation.new_fragments])
    if kind == "Delete":
        fragments = [_json_of(f) for f in operation.updated_fragments]
        return _lancelet.commit(str(base_uri), "delete", fragments, None, read_version, dict(storage_options or {}),
                                None, operation.predicate or "", [int(i) for i in operation.deleted_fragment_ids])
    fragments = [_json_of(f) for f in operation.fragments]
    if kind == "Append":
        return _lancelet.commit(str(base_uri), "append", fragments, None, read_version, dict(storage_options or {}))
    if kind == "Overwrite":
        schema = operation.new_schema
        return _lancelet.commit(str(base_uri), "overwrite", fragments, schema.__arrow_c_schema__(), read_version,
                                dict(storage_options or {}))
    raise NotImplementedError(f"lancelet commits Append, Overwrite, Delete, Update, DataOverlay, and lancelet's Rewrite "
                              f"and CreateIndex operations, not {kind}")
