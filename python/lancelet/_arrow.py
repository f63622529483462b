"""pyarrow when it is installed: lancelet's results become pyarrow objects through the
Arrow PyCapsule interface (the buffers stay lancelet's, nothing is copied); without it
they stay lancelet's own RecordBatch and Schema."""
_MISSING = object()
_module = _MISSING


def pyarrow_or_none():
    """The pyarrow module, or None when it cannot be imported (looked up once)."""
    global _module
    if _module is _MISSING:
        try:
            import pyarrow
            _module = pyarrow
        except ImportError:
            _module = None
    return _module


def schema_out(native):
    """A lancelet.Schema as a pyarrow.Schema when pyarrow is there, else as it is."""
    pa = pyarrow_or_none()
    return pa.schema(native) if pa is not None else native


def table_out(reader):
    """A lancelet RecordBatchReader read whole: a pyarrow.Table over lancelet's buffers,
    or without pyarrow one lancelet.RecordBatch."""
    pa = pyarrow_or_none()
    if pa is None:
        return reader.read_all()
    return pa.RecordBatchReader.from_stream(reader).read_all()


def batch_out(batch):
    """A lancelet.RecordBatch as a pyarrow.Table (pylance's take) or as it is. Not through
    pyarrow.table(), which imports pandas to ask whether the batch is a DataFrame: 0.3 s
    of a first take."""
    pa = pyarrow_or_none()
    return pa.Table.from_batches([pa.record_batch(batch)]) if pa is not None else batch
