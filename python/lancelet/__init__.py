"""lancelet: read and write Lance datasets from Python, overlays included.

    import lancelet
    ds = lancelet.write_dataset({"id": [1, 2, 3], "name": ["a", "b", "c"]}, "/tmp/t.lance")
    ds.to_pydict()                          # {'id': [1, 2, 3], 'name': ['a', 'b', 'c']}
    ds, changed = ds.update({"name": "'z'"}, where="id = 2")   # writes a data overlay file
    lancelet.dataset("/tmp/t.lance", version=1).count_rows()  # time travel

Record batches and readers speak the Arrow PyCapsule interface (__arrow_c_array__,
__arrow_c_stream__, __arrow_c_schema__), so pyarrow, polars and DuckDB take them as they
are, and write_dataset takes anything that has __arrow_c_stream__.
"""
from . import _lancelet
from ._lancelet import (ConflictError, CorruptError, Dataset, InvalidArgumentError, IOError, LanceletError,
                        NotFoundError, NotSupportedError, RecordBatch, RecordBatchReader, Schema)

__all__ = ["dataset", "write_dataset", "sql", "Dataset", "Schema", "RecordBatch", "RecordBatchReader",
           "LanceletError", "InvalidArgumentError", "NotFoundError", "CorruptError", "NotSupportedError",
           "ConflictError", "IOError"]


def dataset(uri, version=None, storage_options=None):
    """The dataset at `uri` (a directory, file:// or memory:// URI), at its newest version
    or at `version`. storage_options: {key: value} for its store, keyed as pylance's."""
    return _lancelet.open_dataset(str(uri), version, dict(storage_options or {}))


def _to_stream(data, schema):
    if hasattr(data, "__arrow_c_stream__"):
        return data.__arrow_c_stream__()
    if hasattr(data, "__arrow_c_array__"):
        batch = _lancelet.batch_from_capsules(*data.__arrow_c_array__())
        return _lancelet.reader_of_batches([batch]).__arrow_c_stream__()
    if isinstance(data, list):  # rows: [{column: value}]
        columns = {}
        for row in data:
            for name in row:
                columns.setdefault(name, [])
        for row in data:
            for name, values in columns.items():
                values.append(row.get(name))
        data = columns
    if isinstance(data, dict):
        return _lancelet.reader_of_batches([_lancelet.batch_from_pydict(data, schema)]).__arrow_c_stream__()
    raise TypeError(f"write_dataset takes a dict of columns, a list of row dicts, or an object with "
                    f"__arrow_c_stream__ / __arrow_c_array__; got {type(data).__name__}")


def write_dataset(data, uri, mode="create", max_rows_per_file=None, data_storage_version=None, schema=None,
                  enable_stable_row_ids=False, storage_options=None):
    """Writes `data` to the dataset at `uri` and returns the version written.

    data: {column: list or numpy array} (2-D numpy arrays become fixed-size lists), a list
        of {column: value} rows, a lancelet RecordBatch or RecordBatchReader, or any object
        with __arrow_c_stream__ or __arrow_c_array__ (a pyarrow Table, a polars DataFrame).
    mode: "create" (the dataset must not exist), "append" or "overwrite".
    max_rows_per_file: rows per fragment (default 1,048,576).
    data_storage_version: Lance file version of new files, "2.0", "2.1" or "2.2" (the default).
    schema: a lancelet.Schema giving the column types of a dict (else they are inferred).
    storage_options: {key: value} for the dataset's store, keyed as pylance's.
    """
    stream = _to_stream(data, schema)
    return _lancelet.write_stream(stream, str(uri), mode, max_rows_per_file, data_storage_version,
                                  enable_stable_row_ids, dict(storage_options or {}))


def sql(db_dir, statement, storage_options=None):
    """Runs one SQL statement (the lancelet CLI's dialect) on the datasets in `db_dir`:
    a RecordBatch for a query, the status text for anything else."""
    return _lancelet.sql(str(db_dir), statement, dict(storage_options or {}))


def _to_pydict(self, columns=None, filter=None):
    """{column: [values]} of the rows that pass `filter`."""
    return self.scanner(columns=columns, filter=filter).read_all().to_pydict()


def _to_batches(self, columns=None, filter=None, batch_size=None):
    """The rows as RecordBatches, one by one."""
    return iter(self.scanner(columns=columns, filter=filter, batch_size=batch_size))


Dataset.to_pydict = _to_pydict
Dataset.to_batches = _to_batches
# A scanner (Dataset.scanner) is a RecordBatchReader; pylance users call these on it.
RecordBatchReader.to_batches = lambda self: iter(self)
RecordBatchReader.to_table = RecordBatchReader.read_all


from ._version import __version__  # noqa: E402  (written by CMake from project(VERSION))
