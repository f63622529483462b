"""Dataset's pylance-named methods (attached to the compiled class), Scanner, and the
optimize namespace."""
import datetime
import decimal
import math

from . import _lancelet
from ._arrow import batch_out, pyarrow_or_none, schema_out, table_out
from ._lancelet import Dataset, RecordBatchReader


class Scanner:
    """A scan of one dataset version (Dataset.scanner): columns, filter, limit, offset.
    Like pylance's LanceScanner it can be run any number of times; each run
    (to_table, to_batches, to_reader, __arrow_c_stream__, iteration) reads afresh, so
    DuckDB, which opens a stream more than once, can scan it."""

    def __init__(self, dataset, columns=None, filter=None, limit=None, offset=None, batch_size=None,
                 with_row_id=False, fragments=None):
        # Pinned to the handle's version now: a later write that moves the handle does not
        # move the scanner (as pylance's).
        self._dataset = dataset._pinned()
        fragment_ids = None if fragments is None else {getattr(f, "fragment_id", f) for f in fragments}
        self._args = (None if columns is None else list(columns), filter, limit, offset, batch_size,
                      bool(with_row_id), fragment_ids)

    def _open(self):
        return self._dataset._scanner(*self._args)

    @property
    def dataset_schema(self):
        """The scanned dataset's schema (pyarrow.Schema, or lancelet.Schema without pyarrow)."""
        return self._dataset.schema

    @property
    def projected_schema(self):
        """The schema of the rows the scan returns."""
        return schema_out(self._open().schema)

    schema = projected_schema

    def to_table(self):
        """Every row of the scan: a pyarrow.Table over lancelet's buffers (no copy), or a
        lancelet.RecordBatch without pyarrow."""
        return table_out(self._open())

    def to_reader(self):
        """The rows as a pyarrow.RecordBatchReader (a lancelet.RecordBatchReader without
        pyarrow), read once."""
        pa = pyarrow_or_none()
        reader = self._open()
        return pa.RecordBatchReader.from_stream(reader) if pa is not None else reader

    def to_batches(self):
        """The rows batch by batch (pyarrow.RecordBatch, or lancelet.RecordBatch without pyarrow)."""
        return iter(self.to_reader())

    def read_all(self):
        """Every row as one lancelet.RecordBatch (which gives numpy views: to_numpy)."""
        return self._open().read_all()

    def count_rows(self):
        """How many rows the scan returns."""
        columns, filter, limit, offset, _, _, fragment_ids = self._args
        if fragment_ids is None:
            n = max(self._dataset.count_rows(filter) - (offset or 0), 0)
        else:  # some fragments' rows: their addresses, read with the filter's columns
            n = self._dataset._scanner(["_rowaddr"], filter, None, offset, None, False, fragment_ids).read_all().num_rows
        return n if limit is None else min(n, limit)

    def to_pandas(self, **kwargs):
        """The rows as a pandas DataFrame (needs pyarrow; kwargs go to pyarrow's to_pandas)."""
        _needs_pyarrow("to_pandas")
        return self.to_table().to_pandas(**kwargs)

    def __iter__(self):
        return self.to_batches()

    def __arrow_c_stream__(self, requested_schema=None):
        return self._open().__arrow_c_stream__(requested_schema)

    def __arrow_c_schema__(self):
        return self._open().__arrow_c_schema__()

    def __repr__(self):
        return f"lancelet.Scanner({self._dataset!r})"


class ChangeFeed:
    """The rows the commits after one version changed (Dataset.changes), read afresh on
    each run (to_table, to_reader, to_pydict, iteration, __arrow_c_stream__), as a Scanner
    is: _change_type ("insert", "delete", "update_preimage", "update_postimage"),
    _commit_version, _commit_timestamp, _rowid, _changed_columns (the columns an update
    wrote), then the data columns as the row was or became. docs/changes.md."""

    def __init__(self, dataset, from_version, to_version=None, columns=None, change_types=None, allow_full=False,
                 batch_size=None):
        self._dataset = dataset._pinned()
        if isinstance(change_types, str):
            change_types = [change_types]
        self._args = (int(from_version), None if to_version is None else int(to_version),
                      None if columns is None else list(columns),
                      None if change_types is None else list(change_types), bool(allow_full), batch_size)

    def _open(self):
        return self._dataset._changes(*self._args)

    @property
    def schema(self):
        return schema_out(self._open().schema)

    def to_table(self):
        """Every row of the feed: a pyarrow.Table (a lancelet.RecordBatch without pyarrow)."""
        return table_out(self._open())

    def to_reader(self):
        """The feed as a pyarrow.RecordBatchReader (lancelet's without pyarrow), read once."""
        pa = pyarrow_or_none()
        reader = self._open()
        return pa.RecordBatchReader.from_stream(reader) if pa is not None else reader

    def to_pydict(self):
        """{column: [values]} (no pyarrow needed)."""
        return self._open().read_all().to_pydict()

    def to_pandas(self, **kwargs):
        _needs_pyarrow("to_pandas")
        return self.to_table().to_pandas(**kwargs)

    def __iter__(self):
        return iter(self.to_reader())

    def __arrow_c_stream__(self, requested_schema=None):
        return self._open().__arrow_c_stream__(requested_schema)


def _changes(self, from_version, to_version=None, columns=None, change_types=None, allow_full=False):
    """The change feed of the commits after `from_version` up to and including `to_version`
    (default: the latest), as a ChangeFeed; `columns` picks data columns, `change_types`
    the kinds of rows kept ("insert", "delete", "update" for both images, or one image)."""
    return ChangeFeed(self, from_version, to_version, columns, change_types, allow_full)


def _needs_pyarrow(what):
    if pyarrow_or_none() is None:
        raise ImportError(f"{what} needs pyarrow (pip install pyarrow)")


def _sql_literal(value):
    """A Python value as the SQL literal update() writes for it."""
    if value is None:
        return "NULL"
    if hasattr(value, "item") and not isinstance(value, (bytes, str)):  # a numpy scalar
        value = value.item()
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "CAST('NaN' AS DOUBLE)"
        if math.isinf(value):
            return "CAST('Infinity' AS DOUBLE)" if value > 0 else "CAST('-Infinity' AS DOUBLE)"
        return repr(value)
    if isinstance(value, decimal.Decimal):
        return str(value)
    if isinstance(value, datetime.datetime):
        return f"TIMESTAMP '{value.isoformat(sep=' ')}'"
    if isinstance(value, datetime.date):
        return f"DATE '{value.isoformat()}'"
    if isinstance(value, (bytes, bytearray)):
        return f"X'{bytes(value).hex()}'"
    raise TypeError(f"update: a value must be a str (an SQL expression) or a literal (None, bool, int, float, "
                    f"Decimal, date, datetime, bytes); got {type(value).__name__}")


def _update(self, updates, where=None, mode="auto"):
    """Sets columns of the rows where `where` (SQL; None: every row) holds, as pylance:
    updates is {column: value}, a str value an SQL expression over the row ("qty + 1",
    "'text'"), any other value a literal (7, 2.5, None, True, a date). Moves this handle
    to the version written and returns {"num_rows_updated": n}.

    mode: how the changes are written: "overlay" (only the changed cells, in an overlay
    file), "columns" (the SET columns of touched fragments rewritten), "rows" (changed
    rows moved to a new fragment) or "auto" (the table config's lancelet.update.mode,
    else the cost model)."""
    values = {str(column): value if isinstance(value, str) else _sql_literal(value)
              for column, value in updates.items()}
    return self._update(values, where, mode)


def _scanner(self, columns=None, filter=None, limit=None, offset=None, batch_size=None, with_row_id=False,
             fragments=None):
    """A Scanner over the rows where `filter` (SQL) holds, with `columns` (default all),
    after skipping `offset` and at most `limit` of them; `fragments` (Fragment objects or
    fragment ids) keeps the scan to those fragments."""
    return Scanner(self, columns, filter, limit, offset, batch_size, with_row_id, fragments)


def _to_table(self, columns=None, filter=None, limit=None, offset=None, with_row_id=False, batch_size=None):
    """The rows as a pyarrow.Table (lancelet.RecordBatch without pyarrow); the arguments
    are scanner()'s. The table's buffers are lancelet's (no copy)."""
    return _scanner(self, columns, filter, limit, offset, batch_size, with_row_id).to_table()


def _to_batches(self, columns=None, filter=None, limit=None, offset=None, with_row_id=False, batch_size=None):
    """The rows batch by batch; the arguments are scanner()'s."""
    return _scanner(self, columns, filter, limit, offset, batch_size, with_row_id).to_batches()


def _to_pydict(self, columns=None, filter=None):
    """{column: [values]} of the rows where `filter` holds (no pyarrow needed)."""
    return _scanner(self, columns, filter).read_all().to_pydict()


def _to_pandas(self, columns=None, filter=None, limit=None, offset=None, **kwargs):
    """The rows as a pandas DataFrame (needs pyarrow; kwargs go to pyarrow's to_pandas)."""
    _needs_pyarrow("to_pandas")
    return _to_table(self, columns, filter, limit, offset).to_pandas(**kwargs)


def _take(self, indices, columns=None):
    """Rows by position among the live rows, in the order asked (repeats allowed): a
    pyarrow.Table (lancelet.RecordBatch without pyarrow), as pylance's take."""
    if hasattr(indices, "to_pylist"):
        indices = indices.to_pylist()
    return batch_out(self._take([int(i) for i in indices], None if columns is None else list(columns)))


def _head(self, num_rows, **kwargs):
    """The first `num_rows` rows, as to_table(limit=num_rows, **kwargs)."""
    return _to_table(self, limit=num_rows, **kwargs)


def _arrow_c_stream(self, requested_schema=None):
    return self._scanner(None, None, None, None, None, False).__arrow_c_stream__(requested_schema)


def _arrow_c_schema(self):
    return self.lance_schema.__arrow_c_schema__()


def _checkout_version(self, version):
    """A new handle on `version` (a number, or a tag's name) of this dataset (this one
    stays where it is)."""
    if isinstance(version, str):
        return self.checkout(self._tag_version(version))
    return self.checkout(int(version))


class Tags:
    """ds.tags: names for versions, stored as pylance stores them (`_refs/tags/<name>.json`).
    Cleanup never removes a tagged version."""

    def __init__(self, dataset):
        self._dataset = dataset

    def _version_of(self, reference):
        if reference is None:
            return self._dataset.latest_version
        if isinstance(reference, str):
            return self._dataset._tag_version(reference)
        return int(reference)

    def list(self):
        """{name: {"branch": None, "version", "manifest_size", "metadata": {}}} as pylance's;
        lancelet keeps no creation times."""
        return self._dataset._tags()

    def get_version(self, tag):
        """The version `tag` names (NotFoundError when there is no such tag)."""
        return self._dataset._tag_version(tag)

    def create(self, tag, reference=None):
        """Tags a version: `reference` a number, another tag's name, or None for the latest.
        A tag that exists is refused (update it instead)."""
        self._dataset._create_tag(tag, self._version_of(reference))

    def update(self, tag, reference=None):
        """Points an existing tag at another version (a number, a tag's name, None: latest)."""
        self._dataset._update_tag(tag, self._version_of(reference))

    def delete(self, tag):
        """Deletes a tag (its version stays until a cleanup removes it)."""
        self._dataset._delete_tag(tag)


def _cleanup_old_versions(self, older_than=None, retain_versions=None, *, delete_unverified=False, dry_run=False,
                          force=False):
    """Removes versions committed more than `older_than` (a datetime.timedelta; default
    two weeks, as pylance) ago, or all but the newest `retain_versions`, and the files only
    they use. The latest version stays, and, unlike pylance, so do versions superseded
    within the last hour (a scan or writer may still read them) unless force=True.
    delete_unverified also removes files no version names, whatever their age (only safe
    with no writer running). Returns {"old_versions", "files_removed", "bytes_removed",
    "versions_kept_recent"}."""
    if older_than is None and retain_versions is None:
        older_than = datetime.timedelta(days=14)
    seconds = None if older_than is None else int(older_than.total_seconds())
    return self._cleanup(seconds, retain_versions, delete_unverified, dry_run, force)


class DatasetOptimizer:
    """ds.optimize: compact_files() and optimize_indices() under pylance's names; calling it
    (ds.optimize(), lancelet's earlier spelling) does both."""

    def __init__(self, dataset):
        self._dataset = dataset

    def compact_files(self, *, target_rows_per_fragment=1024 * 1024, materialize_deletions=True,
                      materialize_deletions_threshold=0.1, **kwargs):
        """Folds overlays, merges fragments smaller than target_rows_per_fragment and drops
        deleted rows past the threshold; moves the dataset to the version written and returns
        {"fragments_removed", "fragments_added", ...}."""
        return self._dataset._optimize(target_rows_per_fragment, materialize_deletions,
                                       materialize_deletions_threshold, False)

    def optimize_indices(self, **kwargs):
        """Adds to each index a segment covering the fragments it does not; moves the dataset
        to the version written."""
        self._dataset._optimize_indices()

    def __call__(self):
        """compact_files() then optimize_indices(); returns the dataset (moved)."""
        self._dataset._optimize(None, True, 0.1, True)
        return self._dataset


def _len(self):
    return self.count_rows()


Dataset.update = _update
Dataset.scanner = _scanner
Dataset.changes = _changes
Dataset.to_table = _to_table
Dataset.to_batches = _to_batches
Dataset.to_pydict = _to_pydict
Dataset.to_pandas = _to_pandas
Dataset.take = _take
Dataset.head = _head
Dataset.checkout_version = _checkout_version
Dataset.cleanup_old_versions = _cleanup_old_versions
Dataset.__arrow_c_stream__ = _arrow_c_stream
Dataset.__arrow_c_schema__ = _arrow_c_schema
Dataset.__len__ = _len
Dataset.schema = property(lambda self: schema_out(self.lance_schema),
                          doc="The columns: a pyarrow.Schema, or a lancelet.Schema without pyarrow.")
Dataset.latest_version = property(lambda self: self.latest().version,
                                  doc="The newest version on disk (this handle may be on an older one).")
Dataset.optimize = property(DatasetOptimizer, doc="compact_files() and optimize_indices(), as pylance's.")
Dataset.tags = property(Tags, doc="create / update / delete / list tags (names of versions), as pylance's.")
Dataset.data_storage_version = property(lambda self: self._data_storage_version(),
                                        doc="The Lance file version of the dataset's data files (\"2.0\", ...).")


def _reader_to_batches(self):
    """The remaining batches, one by one (lancelet.RecordBatch)."""
    return iter(self)


def _reader_to_table(self):
    """The remaining batches as a pyarrow.Table (one lancelet.RecordBatch without pyarrow)."""
    return table_out(self)


RecordBatchReader.to_batches = _reader_to_batches
RecordBatchReader.to_table = _reader_to_table


class MergeInsertBuilder:
    """ds.merge_insert(on): pylance's builder. Rows of the source whose `on` columns equal
    a target row's are matched (a NULL key matches nothing); execute(data) applies the
    clauses chosen in one commit and moves the dataset to the version written.

    Runs lancelet's MergeInsert (C++, lancelet/merge_insert.h) over the source as rows in
    memory: matched rows updated as overlays, unmatched source rows appended, unmatched
    target rows deleted, all in one version; a failure commits nothing and leaves no file."""

    def __init__(self, dataset, on):
        self._dataset = dataset
        self._on = [on] if isinstance(on, str) else list(on)
        if not self._on:
            raise ValueError("merge_insert: `on` names no column")
        self._matched = None  # (condition or None) when matched rows are updated
        self._insert = False
        self._by_source = None  # (condition or None) when unmatched target rows are deleted

    def when_matched_update_all(self, condition=None):
        """Matched target rows take the source row's values (where `condition`, SQL over
        target.col and source.col, holds)."""
        self._matched = (condition,)
        return self

    def when_not_matched_insert_all(self):
        """Source rows no target row matches are inserted."""
        self._insert = True
        return self

    def when_not_matched_by_source_delete(self, expr=None):
        """Target rows no source row matches are deleted (those where `expr`, SQL over the
        target's columns, holds)."""
        self._by_source = (expr,)
        return self

    def execute(self, data, *, schema=None):
        """Applies the clauses with `data` (anything write_dataset takes; its columns a
        subset of the dataset's, read as their types) as the source, in one commit, and
        returns {"num_inserted_rows", "num_updated_rows", "num_deleted_rows"}, as pylance."""
        from ._ingest import to_stream
        stream = to_stream(data, schema)
        return self._dataset._merge_insert(
            stream, self._on, self._matched is not None, self._matched[0] if self._matched else None, self._insert,
            self._by_source is not None, self._by_source[0] if self._by_source else None)


def lancelet_errors():
    from . import _lancelet as errors
    return errors


def _merge_insert(self, on):
    """pylance's merge_insert builder (MergeInsertBuilder) keyed on the `on` column(s)."""
    return MergeInsertBuilder(self, on)


def _create_scalar_index(self, column, index_type="BTREE", name=None, *, replace=True, **kwargs):
    """A BTREE or BITMAP index on `column`, as pylance's create_scalar_index (replacing one
    of the same name by default); moves this handle to the version holding it."""
    if str(index_type).upper() not in ("BTREE", "BITMAP"):
        raise lancelet_errors().NotSupportedError(
            f"create_scalar_index: index_type {index_type!r}: lancelet builds BTREE and BITMAP")
    self.create_index(column, index_type, name=name or "", replace=replace)


def _data_storage_version(self):
    for line in self.inspect().splitlines():
        if line.startswith("data storage: "):
            words = line[len("data storage: "):].split()
            return words[-1].strip("()") if len(words) > 2 else words[1]
    return None


Dataset.merge_insert = _merge_insert
Dataset.create_scalar_index = _create_scalar_index
Dataset._data_storage_version = _data_storage_version


class Fragment:
    """One fragment of a dataset version (Dataset.get_fragments): its id, rows and
    deletions, as pylance's LanceFragment reports them."""

    def __init__(self, info, dataset=None):
        self.fragment_id = info["fragment_id"]
        self.physical_rows = info["physical_rows"]
        self.num_deletions = info["num_deletions"]
        self.overlays = info["overlays"]
        self._dataset = dataset

    @property
    def id(self):
        """The fragment's id (fragment_id, as pylance also names it)."""
        return self.fragment_id

    def count_rows(self):
        """Its live rows."""
        return self.physical_rows - self.num_deletions

    def scanner(self, columns=None, filter=None, limit=None, offset=None, batch_size=None, with_row_id=False):
        """A Scanner over this fragment's rows alone (its dataset's version): a unit of work
        for one task of a distributed read."""
        return Scanner(self._dataset, columns, filter, limit, offset, batch_size, with_row_id, [self.fragment_id])

    def to_table(self, columns=None, filter=None, limit=None, offset=None, with_row_id=False):
        """This fragment's rows, as Dataset.to_table gives a dataset's."""
        return self.scanner(columns, filter, limit, offset, with_row_id=with_row_id).to_table()

    def write_overlay(self, updates, where=None):
        """Dataset.update(updates, where) on this fragment alone, written as an overlay file
        and not committed: a DataOverlayGroup (None when no row matches), for
        LanceOperation.DataOverlay."""
        from ._fragments import write_update_overlays  # noqa: E402
        groups = write_update_overlays(self._dataset, [self.fragment_id], updates, where)
        return groups[0] if groups else None

    def delete(self, where):
        """Dataset.delete(where) on this fragment alone, its new deletion file written and not
        committed, as pylance's LanceFragment.delete: the fragment's FragmentMetadata with
        it, None when no row is left (list the id in LanceOperation.Delete's
        deleted_fragment_ids), or the metadata as it is when no row matches."""
        from ._fragments import FragmentMetadata, write_deletions  # noqa: E402
        updated, deleted, _ = write_deletions(self._dataset, [self.fragment_id], where)
        if deleted:
            return None
        if updated:
            return updated[0]
        return FragmentMetadata._checked(_lancelet.fragment_metadata(self._dataset, self.fragment_id))

    def __repr__(self):
        return f"lancelet.Fragment(id={self.fragment_id}, rows={self.count_rows()})"


def _get_fragments(self):
    """The fragments of this version, in manifest order (Fragment objects)."""
    pinned = self._pinned()  # the fragments read the version they came from
    return [Fragment(info, pinned) for info in self._fragments()]


class DatasetStats:
    """ds.stats: dataset_stats() under pylance's name."""

    def __init__(self, dataset):
        self._dataset = dataset

    def dataset_stats(self):
        """{"num_deleted_rows", "num_fragments", "num_small_files"}: a small file is a
        fragment of fewer rows than compaction's target (1,048,576), as pylance counts."""
        fragments = self._dataset._fragments()
        return {"num_deleted_rows": sum(f["num_deletions"] for f in fragments), "num_fragments": len(fragments),
                "num_small_files": sum(1 for f in fragments if f["physical_rows"] < 1024 * 1024)}


Dataset.get_fragments = _get_fragments
Dataset.stats = property(DatasetStats, doc="dataset_stats(), as pylance's ds.stats.")
