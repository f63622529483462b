"""Arrow in and out with the real packages: pyarrow, polars, DuckDB and pandas read
lancelet's datasets and scanners (zero-copy where the formats allow) and write_dataset
takes their tables, frames and relations; every type, with NULLs and sliced inputs,
compared value by value. Without pyarrow the package keeps its own types."""
import datetime
import decimal
import os
import subprocess
import sys

import numpy as np
import pytest

import lancelet
from conftest import need


def every_type(pa):
    """One column per Arrow type lancelet stores, three rows each, the middle one NULL
    (NULL-type column aside)."""
    ts = [datetime.datetime(2024, 1, 2, 3, 4, 5, 6), None, datetime.datetime(1960, 1, 1)]
    days = [datetime.date(2024, 2, 29), None, datetime.date(1969, 12, 31)]
    return pa.table({
        "i8": pa.array([1, None, -128], pa.int8()),
        "i16": pa.array([1, None, -300], pa.int16()),
        "i32": pa.array([1, None, -70000], pa.int32()),
        "i64": pa.array([1, None, -(2 ** 62)], pa.int64()),
        "u8": pa.array([1, None, 255], pa.uint8()),
        "u64": pa.array([1, None, 2 ** 64 - 1], pa.uint64()),
        "f16": pa.array([np.float16(1.5), None, np.float16(-2.0)], pa.float16()),
        "f32": pa.array([1.5, None, -2.25], pa.float32()),
        "f64": pa.array([1.5, None, float("inf")], pa.float64()),
        "bool": pa.array([True, None, False]),
        "utf8": pa.array(["a", None, "é€"]),
        "large_utf8": pa.array(["", None, "long" * 10], pa.large_string()),
        "binary": pa.array([b"\x00\x01", None, b""]),
        "large_binary": pa.array([b"x", None, b"\xff"], pa.large_binary()),
        "fixed_binary": pa.array([b"ab", None, b"cd"], pa.binary(2)),
        "date32": pa.array(days, pa.date32()),
        "date64": pa.array(days, pa.date64()),
        "ts_us": pa.array(ts, pa.timestamp("us")),
        "ts_ns_utc": pa.array(ts, pa.timestamp("ns", tz="UTC")),
        "ts_s": pa.array(ts[:1] + [None, datetime.datetime(1960, 1, 1)], pa.timestamp("s")),
        "time64": pa.array([datetime.time(1, 2, 3, 4), None, datetime.time(0)], pa.time64("us")),
        "time32": pa.array([datetime.time(1, 2, 3), None, datetime.time(23, 59)], pa.time32("ms")),
        "duration": pa.array([datetime.timedelta(seconds=5), None, datetime.timedelta(days=-1)], pa.duration("ms")),
        "decimal128": pa.array([decimal.Decimal("1.25"), None, decimal.Decimal("-9999.99")], pa.decimal128(6, 2)),
        "decimal256": pa.array([decimal.Decimal("1.25"), None, decimal.Decimal("-3.5")], pa.decimal256(40, 2)),
        "list": pa.array([[1, None], None, []], pa.list_(pa.int32())),
        "large_list": pa.array([["a"], None, ["b", None]], pa.large_list(pa.string())),
        "fixed_list": pa.array([[1.0, 2.0], None, [3.0, 4.0]], pa.list_(pa.float32(), 2)),
        "struct": pa.array([{"x": 1, "y": "a"}, None, {"x": None, "y": "b"}],
                           pa.struct([("x", pa.int64()), ("y", pa.string())])),
        "dictionary": pa.array(["red", None, "red"]).dictionary_encode(),
        "map": pa.array([[("a", 1)], None, []], pa.map_(pa.string(), pa.int32())),
        "null": pa.array([None, None, None], pa.null()),
    })


def test_every_type_round_trips_through_pyarrow_with_nulls_and_slices(tmp_path):
    pa = need("pyarrow")
    table = every_type(pa)
    for name, data in [("whole", table), ("sliced", table.slice(1, 2)), ("one", table.slice(2, 1))]:
        ds = lancelet.write_dataset(data, tmp_path / f"{name}.lance")
        out = ds.to_table()
        assert isinstance(out, pa.Table) and isinstance(ds.schema, pa.Schema)
        assert out.schema == data.schema, name
        for column in data.column_names:
            assert out.column(column).to_pylist() == data.column(column).to_pylist(), (name, column)
    # A column sliced inside a batch (its own offset), and a RecordBatchReader.
    inner = pa.table({"s": pa.array(["a", "b", None, "d"]).slice(1), "i": pa.array([1, 2, 3, 4]).slice(1)})
    reader = pa.RecordBatchReader.from_batches(inner.schema, inner.to_batches(max_chunksize=2))
    ds = lancelet.write_dataset(reader, tmp_path / "reader.lance")
    assert ds.to_table().to_pydict() == {"s": ["b", None, "d"], "i": [2, 3, 4]}
    assert ds.to_table().column("s").num_chunks >= 1


def test_to_table_schema_scanner_and_the_pyarrow_readers(tmp_path):
    pa = need("pyarrow")
    ds = lancelet.write_dataset({"id": [1, 2, 3, 4], "name": ["a", None, "c", "d"]}, tmp_path / "t.lance",
                                max_rows_per_file=2)
    assert ds.schema == pa.schema([("id", pa.int64()), ("name", pa.string())])
    assert ds.to_table(columns=["name"], filter="id > 1", limit=2, offset=1).to_pydict() == {"name": ["c", "d"]}
    assert ds.to_table(columns=["id"], with_row_id=True).column_names == ["id", "_rowid"]
    assert pa.table(ds).to_pydict() == {"id": [1, 2, 3, 4], "name": ["a", None, "c", "d"]}
    scanner = ds.scanner(columns=["id"], filter="id >= 2")
    assert scanner.projected_schema == pa.schema([("id", pa.int64())])
    assert pa.RecordBatchReader.from_stream(scanner).read_all().to_pydict() == {"id": [2, 3, 4]}
    assert scanner.to_table().to_pydict() == {"id": [2, 3, 4]}  # runs again
    assert [b.num_rows for b in scanner.to_batches()] == [1, 2]
    assert all(isinstance(b, pa.RecordBatch) for b in scanner.to_batches())
    assert scanner.count_rows() == 3 and ds.scanner(limit=2, offset=3).count_rows() == 1
    assert isinstance(ds.take([3, 0]), pa.Table) and ds.take([3, 0]).to_pydict() == {"id": [4, 1], "name": ["d", "a"]}
    assert ds.head(2).to_pydict() == {"id": [1, 2], "name": ["a", None]}
    assert len(ds) == 4


def test_arrow_out_shares_lancelets_buffers(tmp_path):
    pa = need("pyarrow")
    emb = np.arange(32, dtype=np.float32).reshape(8, 4)
    ds = lancelet.write_dataset({"v": np.arange(8, dtype=np.int64), "emb": emb}, tmp_path / "z.lance")
    batch = ds.scanner().read_all()  # lancelet's own batch
    table = pa.table(batch)
    view = batch.to_numpy("v")
    assert table.column("v").chunk(0).buffers()[1].address == view.__array_interface__["data"][0]
    emb_values = table.column("emb").chunk(0).values
    assert emb_values.buffers()[1].address == batch.to_numpy("emb").__array_interface__["data"][0]
    # pyarrow's own numpy view of that column is then lancelet's buffer too.
    assert table.column("v").chunk(0).to_numpy(zero_copy_only=True).__array_interface__["data"][0] == \
        view.__array_interface__["data"][0]


def test_polars_reads_and_writes(tmp_path):
    pa, pl = need("pyarrow"), need("polars")
    frame = pl.DataFrame({
        "i": [1, None, 3], "s": ["a", None, "é"], "f": [1.5, None, -2.0], "b": [True, None, False],
        "d": [datetime.date(2024, 1, 1), None, datetime.date(1960, 1, 1)],
        "ts": [datetime.datetime(2024, 1, 1, 1, 2, 3), None, datetime.datetime(1960, 1, 1)],
        "l": [[1, 2], None, []], "st": [{"x": 1, "y": "p"}, None, {"x": None, "y": "q"}], "bin": [b"a", None, b""],
        "cat": pl.Series(["a", None, "a"], dtype=pl.Categorical),
        "dec": pl.Series([decimal.Decimal("1.25"), None, decimal.Decimal("3.50")], dtype=pl.Decimal(6, 2)),
        "arr": pl.Series([[1.0, 2.0], None, [3.0, 4.0]], dtype=pl.Array(pl.Float32, 2)),
    })
    for name, data in [("whole", frame), ("sliced", frame.slice(1, 2))]:
        ds = lancelet.write_dataset(data, tmp_path / f"{name}.lance")
        # polars' string and binary views are stored as large_string / large_binary, as pylance does.
        assert ds.schema.field("s").type == pa.large_string() and ds.schema.field("bin").type == pa.large_binary()
        back = pl.from_arrow(ds.to_table())
        assert back.to_dicts() == data.to_dicts(), name
        assert pl.DataFrame(ds.scanner(columns=["i"])).to_series().to_list() == data["i"].to_list()


def test_duckdb_queries_a_dataset_and_a_scanner_and_writes_a_relation(tmp_path):
    need("pyarrow")
    duckdb = need("duckdb")
    ds = lancelet.write_dataset({"k": [1, 2, 3, 4, 5], "g": ["a", "b", "a", None, "b"]}, tmp_path / "d.lance")
    assert duckdb.sql("SELECT g, sum(k) AS s FROM ds GROUP BY g ORDER BY g NULLS LAST").fetchall() == [
        ("a", 4), ("b", 7), (None, 4)]
    scanner = ds.scanner(columns=["k"], filter="k > 2")
    assert duckdb.sql("SELECT count(*), sum(k) FROM scanner").fetchall() == [(3, 12)]
    assert duckdb.sql("SELECT sum(k) FROM scanner").fetchall() == [(12,)]  # a scanner runs again
    relation = duckdb.sql("""SELECT * FROM (VALUES
        (1::BIGINT, 'x', [1, 2], {'a': 1}, DATE '2024-01-01', 1.5::DECIMAL(6,2), TIMESTAMP '2024-01-01 01:02:03', 'ab'::BLOB),
        (NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
        (3, 'z', [], {'a': NULL}, DATE '1960-01-01', -2::DECIMAL(6,2), TIMESTAMP '1960-01-01', ''::BLOB))
        AS t(i, s, l, st, d, dec, ts, bl)""")
    for name, data in [("whole", relation), ("sliced", relation.order("i NULLS FIRST").limit(2, offset=1))]:
        out = lancelet.write_dataset(data, tmp_path / f"rel_{name}.lance")
        assert duckdb.sql("SELECT * FROM out").fetchall() == data.fetchall(), name


def test_sql_copy_writes_files_pyarrow_duckdb_and_polars_read(tmp_path, tmp_path_factory):
    """COPY ... TO's three formats, read by the packages users read them with (local files,
    in the memory: run too, where the table lives in the memory store)."""
    pa = need("pyarrow")
    duckdb = need("duckdb")
    pl = need("polars")
    import pyarrow.ipc
    data = {"id": [1, 2, 3], "s": ["a,b", None, ""], "x": [1.5, None, -2.25],
            "d": [datetime.date(2024, 2, 29), None, datetime.date(1969, 12, 31)]}
    lancelet.write_dataset(pa.table(data), tmp_path / "t.lance")
    out = tmp_path_factory.mktemp("copied")
    for name, options in [("t.csv", ""), ("t.json", "(FORMAT json)"), ("t.arrow", "(FORMAT arrow)")]:
        message = lancelet.sql(tmp_path, f"COPY (SELECT * FROM t ORDER BY id) TO '{out / name}' {options}")
        assert message == "COPY 3 rows", name
    with pa.OSFile(str(out / "t.arrow")) as f:
        assert pyarrow.ipc.open_stream(f).read_all().to_pydict() == data
    # The empty string is written quoted, NULL as nothing; DuckDB reads a quoted empty
    # field as NULL unless told otherwise.
    rows = duckdb.sql(f"SELECT id, s, x, d FROM read_csv('{out / 't.csv'}', allow_quoted_nulls=false) "
                      "ORDER BY id").fetchall()
    assert rows == [(1, "a,b", 1.5, datetime.date(2024, 2, 29)), (2, None, None, None),
                    (3, "", -2.25, datetime.date(1969, 12, 31))]
    frame = pl.read_ndjson(out / "t.json")
    assert frame["id"].to_list() == [1, 2, 3] and frame["s"].to_list() == ["a,b", None, ""]
    assert frame["x"].to_list() == [1.5, None, -2.25] and frame["d"].to_list() == ["2024-02-29", None, "1969-12-31"]


def test_pandas_reads_and_writes(tmp_path):
    need("pyarrow")
    pd = need("pandas")
    frame = pd.DataFrame({
        "i": [1, 2, 3], "ni": pd.array([1, None, 3], dtype="Int64"), "s": ["a", None, "c"],
        "f": [1.5, 2.5, -1.0], "b": [True, False, True],
        "ts": pd.to_datetime([datetime.datetime(2024, 1, 1, 1, 2, 3), None, datetime.datetime(1960, 1, 1)]),
        "c": pd.Categorical(["x", None, "x"]),
    })
    for name, data in [("whole", frame), ("sliced", frame.iloc[1:])]:
        ds = lancelet.write_dataset(data, tmp_path / f"{name}.lance")
        pd.testing.assert_frame_equal(ds.to_pandas(), data)
        pd.testing.assert_frame_equal(ds.to_table().to_pandas(), data)


def test_append_takes_the_other_packages_too(tmp_path):
    pa, pl, pd = need("pyarrow"), need("polars"), need("pandas")
    uri = tmp_path / "a.lance"
    lancelet.write_dataset(pa.table({"id": [1], "s": ["a"]}), uri)
    lancelet.write_dataset(pl.DataFrame({"id": [2], "s": ["b"]}), uri, mode="append")
    ds = lancelet.write_dataset(pd.DataFrame({"id": [3], "s": ["c"]}), uri, mode="append")
    assert ds.to_table().to_pydict() == {"id": [1, 2, 3], "s": ["a", "b", "c"]}
    assert ds.version == 3
    fresh = lancelet.write_dataset(pa.table({"id": [7]}), tmp_path / "new.lance", mode="append")
    assert fresh.version == 1 and fresh.to_table().to_pydict() == {"id": [7]}  # appending creates, as pylance
    typed = lancelet.write_dataset({"a": [1, None], "b": ["x", None]}, tmp_path / "typed.lance",
                                   schema=pa.schema([("a", pa.int32()), ("b", pa.large_string())]))
    assert typed.schema == pa.schema([("a", pa.int32()), ("b", pa.large_string())])
    assert typed.to_table().to_pydict() == {"a": [1, None], "b": ["x", None]}


NO_PYARROW = """
import sys
sys.modules["pyarrow"] = None  # import pyarrow now fails
import lancelet
ds = lancelet.write_dataset({"id": [1, 2], "s": ["a", None]}, sys.argv[1])
table = ds.to_table(filter="id > 1")
assert isinstance(table, lancelet.RecordBatch), type(table)
assert table.to_pydict() == {"id": [2], "s": [None]}
assert isinstance(ds.schema, lancelet.Schema) and ds.schema.types == ["int64", "utf8"]
assert isinstance(ds.take([1]), lancelet.RecordBatch)
assert [b.num_rows for b in ds.scanner(batch_size=1).to_batches()] == [1, 1]
try:
    ds.to_pandas()
    raise SystemExit("to_pandas without pyarrow should fail")
except ImportError as e:
    assert "needs pyarrow" in str(e)
print("ok")
"""


def test_without_pyarrow_the_package_keeps_its_own_types(tmp_path):
    if str(tmp_path).startswith("memory://"):
        pytest.skip("a memory:// dataset lives in one process, and this test runs another")
    done = subprocess.run([sys.executable, "-c", NO_PYARROW, str(tmp_path / "n.lance")], capture_output=True,
                          text=True, env=dict(os.environ))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"
