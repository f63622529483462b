"""lancelet: read and write Lance datasets from Python, overlays included, with pylance's
names.

    import lancelet
    ds = lancelet.write_dataset({"id": [1, 2, 3], "name": ["a", "b", "c"]}, "/tmp/t.lance")
    ds.to_table()                             # a pyarrow.Table (a lancelet.RecordBatch without pyarrow)
    ds.update({"name": "upper(name)"}, where="id = 2")   # {'num_rows_updated': 1}; ds is now at version 2
    ds.update({"qty": 7})                     # a non-str value is a literal
    lancelet.dataset("/tmp/t.lance", version=1).count_rows()  # time travel

As pylance's, a write (update, delete, merge_insert, add_columns, drop_columns,
alter_columns, create_index, optimize) moves the handle it is called on to the version it
committed.

Datasets, scanners, record batches and readers speak the Arrow PyCapsule interface
(__arrow_c_stream__, __arrow_c_array__, __arrow_c_schema__), so pyarrow.table(ds),
polars.from_arrow, and DuckDB's `SELECT ... FROM ds` take them as they are, without
copying the data; write_dataset takes anything that has __arrow_c_stream__ (a pyarrow
Table or RecordBatchReader, a polars or pandas DataFrame, a DuckDB relation), dicts of
numpy arrays or lists, and lists of row dicts. pyarrow is optional: without it, to_table()
returns a lancelet.RecordBatch and schema a lancelet.Schema.

Distributed writes: workers call write_fragments(data, uri), which writes files without
committing; one process commits all their FragmentMetadata in one version with
commit(uri, LanceOperation.Append(fragments), read_version=v). The metadata is pylance's
JSON, so pylance can commit lancelet's fragments and the other way round.
"""
import datetime as _datetime
import decimal as _decimal
import math as _math

from . import _lancelet
from ._lancelet import (ConflictError, CorruptError, Dataset, InvalidArgumentError, IOError, LanceletError,
                        NotFoundError, NotSupportedError, RecordBatch, RecordBatchReader, Schema)
from ._arrow import pyarrow_or_none as _pyarrow
from ._ingest import to_stream as _to_stream

__all__ = ["dataset", "write_dataset", "sql", "write_fragments", "commit", "FragmentMetadata", "DataOverlayGroup",
           "LanceOperation",
           "Operation", "Dataset", "Scanner", "ChangeFeed", "MergeInsertBuilder", "Fragment", "Schema", "RecordBatch",
           "RecordBatchReader", "LanceletError", "InvalidArgumentError", "NotFoundError", "CorruptError",
           "NotSupportedError", "ConflictError", "IOError"]


def dataset(uri, version=None, storage_options=None):
    """The dataset at `uri` (a directory, file:// or memory:// URI), at its newest version
    or at `version` (a number, or a tag's name), as pylance's lance.dataset.
    storage_options: {key: value} for its store, keyed as pylance's."""
    if isinstance(version, str):
        return _lancelet.open_dataset_tag(str(uri), version, dict(storage_options or {}))
    return _lancelet.open_dataset(str(uri), version, dict(storage_options or {}))


def write_dataset(data, uri, schema=None, mode="create", max_rows_per_file=None, data_storage_version=None,
                  enable_stable_row_ids=False, storage_options=None):
    """Writes `data` to the dataset at `uri` and returns the Dataset at the version
    written, as pylance's lance.write_dataset.

    data: a pyarrow Table / RecordBatch / RecordBatchReader, a polars or pandas DataFrame,
        a DuckDB relation, or anything with __arrow_c_stream__ or __arrow_c_array__; a
        {column: list or numpy array} dict (2-D numpy arrays become fixed-size lists;
        numpy bool, datetime64, timedelta64, S/U strings and masked arrays get the
        matching Arrow types); or a list of {column: value} rows.
    schema: a lancelet.Schema, or a pyarrow.Schema, giving the column types of a dict or
        list of rows (else they are inferred).
    mode: "create" (the dataset must not exist), "append" (creates it when missing) or
        "overwrite".
    max_rows_per_file: rows per fragment (default 1,048,576).
    data_storage_version: Lance file version of new files, "2.0", "2.1" or "2.2" (the
        default); "stable" is 2.0 and "legacy" is refused, as lancelet writes no 0.1 files.
    enable_stable_row_ids: give rows ids that survive compaction.
    storage_options: {key: value} for the dataset's store, keyed as pylance's.
    """
    if data_storage_version == "stable":
        data_storage_version = "2.0"
    elif data_storage_version == "next":
        data_storage_version = "2.2"
    if isinstance(schema, str) and schema in ("create", "append", "overwrite"):
        schema, mode = None, schema  # lancelet's earlier order: write_dataset(data, uri, mode)
    target = None
    if mode == "append":
        try:
            target = dataset(uri, storage_options=storage_options).schema
        except NotFoundError:
            mode = "create"  # appending to no dataset creates it, as pylance does
        if _pyarrow() is None:
            target = None
    stream = _to_stream(data, schema, target)
    return _lancelet.write_stream(stream, str(uri), mode, max_rows_per_file, data_storage_version,
                                  enable_stable_row_ids, dict(storage_options or {}))


def sql(db_dir, statement, storage_options=None):
    """Runs one SQL statement (the lancelet CLI's dialect) on the datasets in `db_dir`:
    a RecordBatch for a query, the status text for anything else."""
    return _lancelet.sql(str(db_dir), statement, dict(storage_options or {}))


from ._dataset import ChangeFeed, Fragment, MergeInsertBuilder, Scanner  # noqa: E402  (defines Dataset's Python methods)
from ._fragments import (DataOverlayGroup, FragmentMetadata, LanceOperation, Operation, commit,  # noqa: E402
                         write_fragments)

Dataset.commit = staticmethod(commit)  # pylance's LanceDataset.commit(base_uri, operation, read_version=...)
from . import optimize  # noqa: E402,F401  (lancelet.optimize.Compaction, IndexBuild)
from ._version import __version__  # noqa: E402  (written by CMake from project(VERSION))
