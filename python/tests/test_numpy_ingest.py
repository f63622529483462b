"""numpy columns without surprises: bool_, datetime64, timedelta64, S / U strings, object
arrays of str or bytes and masked arrays get the matching Arrow types; a large dict of
numpy arrays is converted slice by slice as the writer asks."""
import datetime

import numpy as np
import pytest

import lancelet
from conftest import need
from lancelet import _ingest


def test_numpy_kinds_get_the_matching_types(tmp_path):
    data = {
        "b": np.array([True, False, True]),
        "day": np.array(["2024-02-29", "NaT", "1969-12-31"], dtype="datetime64[D]"),
        "s": np.array(["2024-01-01T00:00:01", "NaT", "1960-01-01"], dtype="datetime64[s]"),
        "ms": np.array(["2024-01-01T00:00:00.123", "1970-01-01", "NaT"], dtype="datetime64[ms]"),
        "us": np.array(["2024-01-01T01:02:03.000004", "NaT", "1970-01-01"], dtype="datetime64[us]"),
        "ns": np.array(["2024-01-01T00:00:00.000000001", "NaT", "1970-01-01"], dtype="datetime64[ns]"),
        "td": np.array([5, -1, "NaT"], dtype="timedelta64[ms]"),
        "bytes": np.array([b"ab", b"", b"c\x00d"], dtype="S4"),
        "text": np.array(["é€", "", "abc"], dtype="U3"),
        "objtext": np.array(["x", None, "yz"], dtype=object),
        "objbytes": np.array([b"x", None, b""], dtype=object),
        "masked": np.ma.masked_array([1.5, 2.5, 3.5], mask=[False, True, False]),
        "masked_ts": np.ma.masked_array(np.array(["2024-01-01", "NaT", "2024-01-03"], dtype="datetime64[D]"),
                                        mask=[True, False, False]),
    }
    ds = lancelet.write_dataset(data, tmp_path / "np.lance")
    assert ds.lance_schema.types == ["bool", "date32", "timestamp<s>", "timestamp<ms>", "timestamp<us>",
                                     "timestamp<ns>", "duration<ms>", "binary", "utf8", "utf8", "binary", "float64",
                                     "date32"]
    got = ds.to_pydict()
    dt, d = datetime.datetime, datetime.date
    assert got["b"] == [True, False, True]
    assert got["day"] == [d(2024, 2, 29), None, d(1969, 12, 31)]
    assert got["s"] == [dt(2024, 1, 1, 0, 0, 1), None, dt(1960, 1, 1)]
    assert got["ms"] == [dt(2024, 1, 1, 0, 0, 0, 123000), dt(1970, 1, 1), None]
    assert got["us"] == [dt(2024, 1, 1, 1, 2, 3, 4), None, dt(1970, 1, 1)]
    assert got["ns"] == [dt(2024, 1, 1), None, dt(1970, 1, 1)]  # Python's datetime holds microseconds
    assert got["td"] == [datetime.timedelta(milliseconds=5), datetime.timedelta(milliseconds=-1), None]
    assert got["bytes"] == [b"ab", b"", b"c\x00d"]  # trailing NULs go, inner ones stay (as numpy)
    assert got["text"] == ["é€", "", "abc"]
    assert got["objtext"] == ["x", None, "yz"]
    assert got["objbytes"] == [b"x", None, b""]
    assert got["masked"] == [1.5, None, 3.5]
    assert got["masked_ts"] == [None, None, d(2024, 1, 3)]


def test_numpy_kinds_read_by_pyarrow_as_pyarrow_types_them(tmp_path):
    pa = need("pyarrow")
    data = {"b": np.array([True, False]), "t": np.array(["2024-01-01", "NaT"], dtype="datetime64[us]"),
            "td": np.array([1, 2], dtype="timedelta64[ns]"), "u": np.array(["a", "bc"])}
    ds = lancelet.write_dataset(data, tmp_path / "pa.lance")
    for name, values in data.items():
        assert ds.schema.field(name).type == pa.array(values).type, name
        assert ds.to_table().column(name).to_pylist() == pa.array(values).to_pylist(), name


def test_unsupported_numpy_units_and_shapes_say_so(tmp_path):
    with pytest.raises(ValueError, match=r"column 'h': numpy datetime64\[h\] has no Arrow type; use the units D"):
        lancelet.write_dataset({"h": np.array(["2024-01-01T01"], dtype="datetime64[h]")}, tmp_path / "h.lance")
    with pytest.raises(ValueError, match=r"column 'd': numpy timedelta64\[D\] has no Arrow type"):
        lancelet.write_dataset({"d": np.array([1], dtype="timedelta64[D]")}, tmp_path / "d.lance")
    with pytest.raises(ValueError, match="column 'm': a masked numpy array must have 1 dimension"):
        lancelet.write_dataset({"m": np.ma.masked_array(np.zeros((2, 2)), mask=[[0, 1], [0, 0]])}, tmp_path / "m.lance")


def test_a_large_dict_is_written_slice_by_slice(tmp_path, monkeypatch):
    monkeypatch.setattr(_ingest, "SLICE_ROWS", 3)
    n = 10
    data = {"id": np.arange(n, dtype=np.int64), "v": np.arange(2 * n, dtype=np.float32).reshape(n, 2),
            "s": np.array([f"r{i}" for i in range(n)], dtype=object),
            "t": np.arange(n).astype("datetime64[ms]")}
    ds = lancelet.write_dataset(data, tmp_path / "sliced.lance", max_rows_per_file=4)
    got = ds.to_pydict()
    assert got["id"] == list(range(n)) and got["s"] == [f"r{i}" for i in range(n)]
    assert got["v"] == data["v"].tolist()
    assert got["t"] == [datetime.datetime(1970, 1, 1) + datetime.timedelta(milliseconds=i) for i in range(n)]
    # A bad value in a later slice fails the write with the converter's message; nothing is committed.
    bad = dict(data, s=np.array([f"r{i}" for i in range(n - 1)] + [7], dtype=object))
    with pytest.raises(lancelet.LanceletError, match="column 's' is utf8: expected a str, got int 7"):
        lancelet.write_dataset(bad, tmp_path / "bad.lance")
    with pytest.raises(lancelet.NotFoundError):
        lancelet.dataset(tmp_path / "bad.lance")
