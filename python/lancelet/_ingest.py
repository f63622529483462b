"""write_dataset's inputs as one Arrow C stream (a PyCapsule the C++ writer imports)."""
from . import _lancelet
from ._arrow import pyarrow_or_none


def _rows_to_columns(rows):
    """[{column: value}] as {column: [values]}; a column a row lacks is None there."""
    columns = {}
    for row in rows:
        for name in row:
            columns.setdefault(name, [])
    for row in rows:
        for name, values in columns.items():
            values.append(row.get(name))
    return columns


def _is_pyarrow_schema(schema):
    return schema is not None and not isinstance(schema, _lancelet.Schema)


def _with_pyarrow_schema(data, schema):
    """`data` (a stream or a dict) as a pyarrow Table of `schema`, a pyarrow.Schema."""
    pa = pyarrow_or_none()
    if pa is None:
        raise TypeError("a schema that is not a lancelet.Schema needs pyarrow")
    if isinstance(data, dict):
        return pa.table(data, schema=schema)
    return pa.table(data).cast(schema)


def _without_views(pa, type_):
    """`type_` with Arrow's view layouts (string_view, binary_view: polars' strings), which
    Lance files do not store, replaced by large_string / large_binary, as pylance stores
    them; nested types likewise."""
    if type_ == pa.string_view():
        return pa.large_string()
    if type_ == pa.binary_view():
        return pa.large_binary()
    if pa.types.is_dictionary(type_):
        return pa.dictionary(type_.index_type, _without_views(pa, type_.value_type), type_.ordered)
    if pa.types.is_fixed_size_list(type_):
        return pa.list_(_with_field(pa, type_.value_field), type_.list_size)
    if pa.types.is_large_list(type_):
        return pa.large_list(_with_field(pa, type_.value_field))
    if pa.types.is_list(type_):
        return pa.list_(_with_field(pa, type_.value_field))
    if pa.types.is_map(type_):
        return pa.map_(_with_field(pa, type_.key_field), _with_field(pa, type_.item_field), type_.keys_sorted)
    if pa.types.is_struct(type_):
        return pa.struct([_with_field(pa, type_.field(i)) for i in range(type_.num_fields)])
    return type_


def _with_field(pa, field):
    return field.with_type(_without_views(pa, field.type))


def _foreign_stream(data, target=None):
    """The stream of an object from another Arrow package, its view columns cast (through
    pyarrow, batch by batch, when it is installed); and when appending, columns whose type
    differs from the dataset's (`target`, its pyarrow schema; polars' large strings into a
    utf8 column, say) cast to the dataset's type, as pylance does."""
    pa = pyarrow_or_none()
    if pa is None:
        return data.__arrow_c_stream__()
    reader = pa.RecordBatchReader.from_stream(data)
    given = reader.schema
    if target is not None and target.names == given.names:
        wanted = pa.schema([f.with_type(t.type) for f, t in zip(given, target)], metadata=given.metadata)
    else:
        wanted = pa.schema([_with_field(pa, f) for f in given], metadata=given.metadata)
    if not wanted.equals(given, check_metadata=True):
        reader = reader.cast(wanted)
    return reader.__arrow_c_stream__()


# Rows converted at a time from a dict of numpy arrays: the writer takes each slice as it
# goes, so only one slice's copy is held beside the caller's arrays.
SLICE_ROWS = 65536


def _dict_stream(data, schema):
    """A dict of columns as a stream: numpy columns slice by slice (numpy slices are views),
    anything else (lists, which must be typed whole) in one batch."""
    import numpy
    arrays = all(isinstance(v, numpy.ndarray) for v in data.values())
    rows = len(next(iter(data.values()))) if data else 0
    if not arrays or rows <= SLICE_ROWS or len({len(v) for v in data.values()}) != 1:
        return _lancelet.reader_of_batches([_lancelet.batch_from_pydict(data, schema)]).__arrow_c_stream__()
    first = _lancelet.batch_from_pydict({k: v[:SLICE_ROWS] for k, v in data.items()}, schema)
    fixed = first.schema if schema is None else schema

    def slices():
        yield first
        for start in range(SLICE_ROWS, rows, SLICE_ROWS):
            yield _lancelet.batch_from_pydict({k: v[start:start + SLICE_ROWS] for k, v in data.items()}, fixed)

    return _lancelet.reader_of_iterator(fixed, slices()).__arrow_c_stream__()


def to_stream(data, schema, target=None):
    """`data` as an "arrow_array_stream" PyCapsule (see write_dataset for what it takes);
    `target`: when appending, the dataset's pyarrow schema."""
    if isinstance(data, list):
        data = _rows_to_columns(data)
    if _is_pyarrow_schema(schema):
        data, schema = _with_pyarrow_schema(data, schema), None
    from ._dataset import Scanner  # here: _dataset imports this module
    if isinstance(data, (_lancelet.RecordBatchReader, _lancelet.Dataset, Scanner)):
        return data.__arrow_c_stream__()
    if hasattr(data, "__arrow_c_stream__"):
        return _foreign_stream(data, target)
    if hasattr(data, "__arrow_c_array__"):
        batch = _lancelet.batch_from_capsules(*data.__arrow_c_array__())
        return _lancelet.reader_of_batches([batch]).__arrow_c_stream__()
    if isinstance(data, dict):
        return _dict_stream(data, schema)
    if hasattr(data, "fetch_arrow_reader"):  # a DuckDB relation of a version without __arrow_c_stream__
        return data.fetch_arrow_reader().__arrow_c_stream__()
    raise TypeError(f"write_dataset takes a dict of columns, a list of row dicts, or an object with "
                    f"__arrow_c_stream__ / __arrow_c_array__; got {type(data).__name__}")
