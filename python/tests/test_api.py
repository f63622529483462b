"""The Python API: round trips, overlays through update, time travel, numpy views, the
Arrow PyCapsule interface, errors, and agreement with the CLI and with the reference."""
import datetime
import decimal
import math
import threading
import time

import numpy as np
import pytest

import lancelet
from conftest import IN_MEMORY, jsonl


def people(tmp_path, **kwargs):
    return lancelet.write_dataset(
        {"id": [1, 2, 3, 4], "name": ["ann", "bob", None, "dee"], "score": [0.5, 1.5, 2.5, None]},
        tmp_path / "people.lance", **kwargs)


def test_round_trip_of_every_python_kind(tmp_path):
    data = {
        "i": [1, None, -3],
        "f": [1.0, 2, None],  # ints among floats widen
        "s": ["a", "é", None],
        "b": [b"\x00\x01", None, b""],
        "t": [True, False, None],
        "l": [[1, 2], [], None],
        "st": [{"x": 1, "y": "p"}, None, {"x": None, "y": "q"}],
        "d": [datetime.date(2024, 2, 29), None, datetime.date(1969, 12, 31)],
        "ts": [datetime.datetime(2024, 1, 2, 3, 4, 5, 678901), None, datetime.datetime(1960, 1, 1)],
    }
    ds = lancelet.write_dataset(data, tmp_path / "kinds.lance", data_storage_version="2.1")
    assert ds.version == 1
    assert ds.schema.names == list(data)
    assert ds.lance_schema.types == ["int64", "float64", "utf8", "binary", "bool", "list<int64>",
                               "struct<x:int64,y:utf8>", "date32", "timestamp<us>"]
    out = ds.to_pydict()
    expected = dict(data, f=[1.0, 2.0, None],
                    ts=[datetime.datetime(2024, 1, 2, 3, 4, 5, 678901), None, datetime.datetime(1960, 1, 1)])
    assert out == expected
    assert ds.scanner().read_all().to_pylist()[2] == {k: v[2] for k, v in expected.items()}


def test_schema_given_for_a_dict(tmp_path):
    schema = lancelet.Schema.from_pairs([("id", "int32"), ("v", "fixed_size_list<float32,2>")])
    ds = lancelet.write_dataset({"id": [7, 8], "v": [[1, 2], [3, 4]]}, tmp_path / "s.lance", schema=schema)
    assert ds.lance_schema == schema
    assert ds.to_pydict() == {"id": [7, 8], "v": [[1.0, 2.0], [3.0, 4.0]]}
    with pytest.raises(ValueError, match="expected an int"):
        lancelet.write_dataset({"id": ["x"], "v": [[1, 2]]}, tmp_path / "bad.lance", schema=schema)
    with pytest.raises(ValueError, match="a value has 3 items"):
        lancelet.write_dataset({"id": [1], "v": [[1, 2, 3]]}, tmp_path / "bad.lance", schema=schema)


def test_times_durations_decimals_maps_and_null_convert_both_ways(tmp_path):
    schema = lancelet.Schema.from_pairs([("t", "time64<us>"), ("du", "duration<ms>"), ("d", "decimal128<6,2>"),
                                         ("m", "map<utf8,int32>"), ("n", "null")])
    data = {
        "t": [datetime.time(12, 34, 56, 789012), None, 3_600_000_000],
        "du": [datetime.timedelta(seconds=-1, milliseconds=500), None, 7],
        "d": [decimal.Decimal("-1.25"), "3.5", 12],
        "m": [{"a": 1, "b": None}, None, [("z", 2)]],
        "n": [None, None, None],
    }
    ds = lancelet.write_dataset(data, tmp_path / "types.lance", schema=schema, data_storage_version="2.2")
    assert ds.to_pydict() == {
        "t": [datetime.time(12, 34, 56, 789012), None, datetime.time(1, 0)],
        "du": [datetime.timedelta(milliseconds=-500), None, datetime.timedelta(milliseconds=7)],
        "d": [decimal.Decimal("-1.25"), decimal.Decimal("3.50"), decimal.Decimal("12.00")],
        "m": [{"a": 1, "b": None}, None, {"z": 2}],
        "n": [None, None, None],
    }
    with pytest.raises(ValueError, match="expected a decimal.Decimal, int or str"):
        lancelet.write_dataset({"d": [0.5]}, tmp_path / "bad.lance",
                               schema=lancelet.Schema.from_pairs([("d", "decimal128<6,2>")]))
    with pytest.raises(lancelet.NotSupportedError, match="cannot store maps; use file version 2.2"):
        lancelet.write_dataset({"m": [{"a": 1}]}, tmp_path / "old.lance", data_storage_version="2.1",
                               schema=lancelet.Schema.from_pairs([("m", "map<utf8,int32>")]))


def test_scan_filter_limit_offset_take_and_count(tmp_path):
    ds = people(tmp_path, max_rows_per_file=2)
    assert ds.count_rows() == 4
    assert ds.count_rows("score > 1") == 2
    assert ds.to_pydict(columns=["name"], filter="id >= 2") == {"name": ["bob", None, "dee"]}
    assert ds.scanner(columns=["id"], limit=2, offset=1).read_all().to_pydict() == {"id": [2, 3]}
    assert [b.num_rows for b in ds.scanner(filter="id > 1", batch_size=2).to_batches()] == [1, 2]
    batches = list(ds.to_batches(columns=["id"], batch_size=1))
    assert [b.to_pydict()["id"] for b in batches] == [[1], [2], [3], [4]]
    assert ds.take([3, 0, 3], columns=["id", "name"]).to_pydict() == {"id": [4, 1, 4], "name": ["dee", "ann", "dee"]}


def test_update_writes_an_overlay_and_old_versions_stay_readable(tmp_path):
    ds = people(tmp_path)
    ds2 = lancelet.dataset(ds.uri)
    assert ds2.update({"score": "score * 10", "name": "upper(name)"}, where="id % 2 = 0",
                      mode="overlay") == {"num_rows_updated": 2}
    assert ds2.version == 2
    assert ds2.to_pydict(columns=["name", "score"]) == {"name": ["ann", "BOB", None, "DEE"],
                                                        "score": [0.5, 15.0, 2.5, None]}
    assert "overlay" in ds2.inspect()
    assert lancelet.dataset(ds.uri, version=1).to_pydict(columns=["score"]) == {"score": [0.5, 1.5, 2.5, None]}
    ds3 = ds2.checkout(2)
    assert ds3.delete("id = 1") == {"num_deleted_rows": 1}
    assert ds3.version == 3 and ds2.version == 2
    assert ds3.count_rows() == 3
    assert [v["version"] for v in ds3.versions()] == [1, 2, 3]
    assert ds3.versions()[1]["operation"] == "DataOverlay"
    assert ds.latest().version == 3
    assert ds3.checkout(2).count_rows() == 4


def test_append_and_overwrite(tmp_path):
    ds = people(tmp_path)
    more = lancelet.write_dataset({"id": [5], "name": ["eve"], "score": [9.0]}, ds.uri, mode="append")
    assert more.count_rows() == 5
    with pytest.raises(lancelet.LanceletError):
        lancelet.write_dataset({"id": [5]}, ds.uri, mode="create")
    again = lancelet.write_dataset({"id": [9], "name": ["z"], "score": [0.0]}, ds.uri, mode="overwrite")
    assert again.to_pydict(columns=["id"]) == {"id": [9]}
    rows = lancelet.write_dataset([{"a": 1, "b": "x"}, {"a": 2}], tmp_path / "rows.lance")
    assert rows.to_pydict() == {"a": [1, 2], "b": ["x", None]}


def test_numpy_views_are_zero_copy_and_read_only(tmp_path):
    emb = np.arange(24, dtype=np.float32).reshape(6, 4)
    ds = lancelet.write_dataset({"k": np.arange(6, dtype=np.int64), "emb": emb}, tmp_path / "e.lance")
    assert ds.lance_schema.types == ["int64", "fixed_size_list<float32,4>"]
    batch = ds._take([5, 1], columns=["k", "emb"])
    view = batch.to_numpy("emb")
    assert view.shape == (2, 4) and view.dtype == np.float32
    np.testing.assert_array_equal(view, emb[[5, 1]])
    assert not view.flags.writeable and not view.flags.owndata
    assert batch.to_numpy("emb").__array_interface__["data"][0] == view.__array_interface__["data"][0]
    np.testing.assert_array_equal(batch.to_numpy("k"), [5, 1])
    with pytest.raises(ValueError, match="NULL"):
        people(tmp_path).scanner().read_all().to_numpy("score")
    with pytest.raises(ValueError, match="numpy views hold numbers"):
        people(tmp_path / "x").scanner().read_all().to_numpy("name")


def test_arrow_pycapsule_interface(tmp_path):
    ds = people(tmp_path)
    batch = ds.scanner().read_all()
    schema_capsule, array_capsule = batch.__arrow_c_array__()
    assert "arrow_schema" in repr(schema_capsule) and "arrow_array" in repr(array_capsule)
    assert "arrow_schema" in repr(ds.schema.__arrow_c_schema__())
    # A consumer that knows only the capsules: our own writer.
    copy = lancelet.write_dataset(batch, tmp_path / "from_array.lance")
    assert copy.to_pydict() == ds.to_pydict()

    class StreamOnly:  # stands for a pyarrow Table or a polars DataFrame
        def __arrow_c_stream__(self, requested_schema=None):
            return ds.scanner(batch_size=3).__arrow_c_stream__()

    streamed = lancelet.write_dataset(StreamOnly(), tmp_path / "from_stream.lance")
    assert streamed.to_pydict() == ds.to_pydict()
    # A Scanner runs afresh for each stream (DuckDB opens several); a RecordBatchReader once.
    scanner = ds.scanner(columns=["id"])
    assert [lancelet.write_dataset(scanner, tmp_path / f"twice{i}.lance").count_rows() for i in range(2)] == [4, 4]
    reader = ds._scanner()
    reader.__arrow_c_stream__()
    with pytest.raises(ValueError, match="already read"):
        reader.__arrow_c_stream__()


def test_errors_carry_lancelets_messages(tmp_path):
    with pytest.raises(lancelet.NotFoundError) as missing:
        lancelet.dataset(tmp_path / "nope.lance")
    assert isinstance(missing.value, LookupError) and "does not exist" in str(missing.value)
    ds = people(tmp_path)
    with pytest.raises(lancelet.InvalidArgumentError) as bad:
        ds.count_rows("nosuch > 1")
    assert isinstance(bad.value, ValueError) and "nosuch" in str(bad.value)
    with pytest.raises(ValueError, match="has 1 values but the columns before it have 2"):
        lancelet.write_dataset({"a": [1, 2], "b": [1]}, tmp_path / "x.lance")
    with pytest.raises(ValueError, match="every value is None"):
        lancelet.write_dataset({"a": [None]}, tmp_path / "y.lance")
    with pytest.raises(TypeError):
        lancelet.write_dataset(42, tmp_path / "z.lance")
    with pytest.raises(lancelet.LanceletError, match="position"):
        lancelet.sql(tmp_path, "SELEC 1")


def test_sql_and_indexes(tmp_path):
    ds = people(tmp_path)
    assert lancelet.sql(tmp_path, "SELECT name FROM people WHERE id = 2").to_pydict() == {"name": ["bob"]}
    assert "UPDATE 1" in lancelet.sql(tmp_path, "UPDATE people SET score = 0 WHERE id = 1")
    indexed = ds.latest().create_index("id")
    assert [i["name"] for i in indexed.list_indices()] == ["id_idx"]
    assert indexed.to_pydict(columns=["score"], filter="id = 1") == {"score": [0.0]}


def test_storage_options_and_memory_uris(tmp_path):
    options = {"timeout": "60s", "AWS_REGION": "us-east-1"}
    people(tmp_path, storage_options=options)
    assert lancelet.dataset(tmp_path / "people.lance", storage_options=options).count_rows() == 4
    with pytest.raises(lancelet.InvalidArgumentError, match="storage option 'timout' is not one the reference knows"):
        lancelet.dataset(tmp_path / "people.lance", storage_options={"timout": "1s"})
    with pytest.raises(lancelet.InvalidArgumentError, match="storage option 'nope'"):
        lancelet.sql(tmp_path, "SELECT 1", storage_options={"nope": "1"})
    # A memory:// dataset lives in the process: written, appended to and queried by SQL.
    uri = "memory://python_test/db/t.lance"
    lancelet.write_dataset({"id": [1, 2]}, uri)
    lancelet.write_dataset({"id": [3]}, uri, mode="append")
    assert lancelet.dataset(uri).count_rows() == 3
    assert lancelet.sql("memory://python_test/db", "SELECT sum(id) AS s FROM t").to_pydict() == {"s": [6]}


def test_the_gil_is_released_while_scanning(tmp_path):
    big = lancelet.write_dataset({"v": np.arange(4_000_000, dtype=np.int64)}, tmp_path / "big.lance")
    inside, done, span, ticks = threading.Event(), threading.Event(), [], []

    def scan():
        inside.set()
        start = time.perf_counter()
        big.count_rows("v % 7 = 3 OR v % 11 = 5")  # one long call into C++
        span.extend([start, time.perf_counter()])
        done.set()

    worker = threading.Thread(target=scan)
    worker.start()
    inside.wait()
    while not done.is_set():
        ticks.append(time.perf_counter())
    worker.join()
    start, end = span
    quarter = (end - start) / 4
    # Holding the GIL, the call would have let no tick happen in its middle half.
    assert sum(1 for t in ticks if start + quarter < t < end - quarter) > 100, (end - start, len(ticks))


def test_the_cli_reads_what_python_wrote_and_python_reads_the_clis(tmp_path, cli):
    ds = people(tmp_path)
    ds.update({"name": "'zed'"}, where="id = 3")
    assert ds.inspect() == cli("inspect", ds.uri)
    rows = jsonl(cli("scan", ds.uri, "--format", "jsonl"))
    assert [r["name"] for r in rows] == ["ann", "bob", "zed", "dee"]
    made = tmp_path / "cli.lance"
    csv = tmp_path / "rows.csv"
    csv.write_text("id,label\n1,a\n2,b\n")
    cli("create", made, "--from", csv, "--schema", "id:int64,label:utf8")
    cli("update", made, "--set", "label = 'B'", "--where", "id = 2")
    assert lancelet.dataset(made).to_pydict() == {"id": [1, 2], "label": ["a", "B"]}


@pytest.mark.parametrize("version", ["2.0", "2.1", "2.2"])
def test_the_reference_reads_what_python_wrote(tmp_path, oracle, version):
    emb = np.arange(8, dtype=np.float32).reshape(4, 2)
    ds = lancelet.write_dataset({"id": [1, 2, 3, 4], "name": ["a", None, "c", "d"], "emb": emb},
                                tmp_path / "py.lance", data_storage_version=version, max_rows_per_file=3)
    ds.update({"name": "'B'"}, where="id = 2", mode="overlay")
    rows = jsonl(oracle("dump", ds.uri))
    assert [r["name"] for r in rows] == ["a", "B", "c", "d"]
    assert [r["emb"] for r in rows] == emb.tolist()
    assert oracle("count", ds.uri).strip() == "4"


def test_python_reads_what_the_reference_wrote(tmp_path, oracle):
    data = tmp_path / "gen.arrow"
    oracle("gen", data, "--rows", 300, "--seed", 7, "--types", "int64,utf8,float64")
    oracle("create", tmp_path / "ref.lance", "--data", data, "--file-version", "2.1", "--max-rows-per-file", 100)
    oracle("update", tmp_path / "ref.lance", "--where", "c_int64 % 3 = 0", "--set", "c_utf8='three'")
    expected = jsonl(oracle("dump", tmp_path / "ref.lance"))
    ds = lancelet.dataset(tmp_path / "ref.lance")
    got = ds.to_pydict()
    assert list(got) == list(expected[0])

    def from_json(v):  # the oracle's JSON spells non-finite floats as text
        return {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}.get(v, v) if isinstance(v, str) else v

    for name in got:
        want = [from_json(row[name]) for row in expected]
        assert len(got[name]) == len(want) == 300
        for a, b in zip(got[name], want):
            if isinstance(a, float):  # JSON prints a float as its shortest text, maybe as an int
                assert a == float(b) or (math.isnan(a) and math.isnan(b)), (name, a, b)
            else:
                assert a == b, (name, a, b)
    assert got["c_utf8"].count("three") == sum(1 for v in got["c_int64"] if v is not None and v % 3 == 0)


def test_search_returns_the_nearest_rows_and_their_distance(tmp_path):
    schema = lancelet.Schema.from_pairs([("id", "int64"), ("emb", "fixed_size_list<float32,2>"),
                                         ("bits", "fixed_size_list<uint8,1>")])
    ds = lancelet.write_dataset({"id": [1, 2, 3, 4], "emb": [[0, 0], [3, 4], [1, 0], None],
                                 "bits": [[0], [255], [1], [3]]}, tmp_path / "v.lance", schema=schema)
    with pytest.raises(lancelet.InvalidArgumentError, match="several vector columns"):
        ds.search([1, 0])
    near = ds.search(np.array([1.0, 0.0]), column="emb", k=2, columns=["id"])
    assert near.to_pydict() == {"id": [3, 1], "_distance": [0.0, 1.0]}
    assert ds.search([1, 0], column="emb", distance="dot", where="id > 1").to_pydict() == {
        "id": [2, 3], "bits": [[255], [1]], "_distance": [-2.0, 0.0]}
    assert ds.search([1, 0], column="emb", k=1, where="id = 1", postfilter=True, columns=["id"]).num_rows == 0
    assert ds.search([2], column="bits", k=2, columns=["id"]).to_pydict() == {"id": [1, 4], "_distance": [1.0, 1.0]}
    with pytest.raises(ValueError, match="has 3 values but column 'emb'"):
        ds.search([1, 2, 3], column="emb")


def test_search_through_the_references_ivf_index(tmp_path, oracle):
    rng = np.random.default_rng(3)
    centres = rng.normal(size=(4, 8)) * 4
    emb = centres[rng.integers(0, 4, 400)] + rng.normal(size=(400, 8))
    schema = lancelet.Schema.from_pairs([("id", "int64"), ("emb", "fixed_size_list<float32,8>")])
    path = tmp_path / "ivf.lance"
    lancelet.write_dataset({"id": list(range(400)), "emb": emb.tolist()}, path, schema=schema)
    oracle("create-index", path, "emb", "--type", "ivf_pq", "--partitions", 4, "--sub-vectors", 2)
    ds = lancelet.dataset(path)
    query = emb[17] + 0.01
    exact = ds.search(query, k=5, columns=["id"], exact=True).to_pydict()
    # All partitions probed and re-ranked with the rows' own vectors: the exact answer.
    assert ds.search(query, k=5, columns=["id"], nprobes=4, refine_factor=10).to_pydict() == exact
    # Without refine, distances are the PQ codes' estimates, but the nearest row is found.
    assert ds.search(query, k=5, columns=["id"], nprobes=1).to_pydict()["id"][0] == 17
    with pytest.raises(lancelet.InvalidArgumentError, match="nprobes must be at least 1"):
        ds.search(query, nprobes=0)
    plan = ds.explain_search(query, k=5, nprobes=2, where="id < 300")
    assert plan.splitlines()[:3] == [
        f"VectorSearch: column emb, k 5, metric l2, version {ds.version}",
        "  prefilter: id < 300",
        "  ANN: index emb_idx (IVF_PQ), 1 segment, nprobes 2 of 4 partitions",
    ]
    assert "exact: every live row scored (the query asks for exact search)" in ds.explain_search(query, exact=True)


def test_create_index_ivf_pq_with_pylances_names(tmp_path, oracle):
    rng = np.random.default_rng(5)
    centres = rng.normal(size=(4, 8)) * 4
    emb = centres[rng.integers(0, 4, 400)] + rng.normal(size=(400, 8))
    schema = lancelet.Schema.from_pairs([("id", "int64"), ("emb", "fixed_size_list<float32,8>")])
    ds = lancelet.write_dataset({"id": list(range(400)), "emb": emb.tolist()}, tmp_path / "w.lance", schema=schema)
    indexed = ds.create_index("emb", "IVF_PQ", num_partitions=4, num_sub_vectors=2)
    assert indexed.list_indices() == [{"name": "emb_idx", "type": "IVF_PQ", "columns": ["emb"], "fields": ["emb"],
                                       "dataset_version": 1, "version": 1, "segments": 1, "indexed_fragments": 1,
                                       "unindexed_fragments": 0, "num_partitions": 4, "metric": "l2",
                                       "num_sub_vectors": 2, "num_bits": 8}]
    query = emb[17] + 0.01
    exact = indexed.search(query, k=5, columns=["id"], exact=True).to_pydict()
    assert indexed.search(query, k=5, columns=["id"], nprobes=4, refine_factor=10).to_pydict() == exact
    assert '"type":"IvfPq"' in oracle("indices", tmp_path / "w.lance")
    assert indexed is ds and ds.version == 2  # the handle moved to the version holding the index
    with pytest.raises(lancelet.InvalidArgumentError, match="3 sub-vectors do not divide the dimension 8"):
        ds.create_index("emb", "IVF_PQ", num_partitions=4, num_sub_vectors=3, replace=True)
    # num_bits=4: 16 codes per sub-vector, two a byte.
    fresh = lancelet.write_dataset({"id": list(range(400)), "emb": emb.tolist()}, tmp_path / "w4.lance", schema=schema)
    four = fresh.create_index("emb", "IVF_PQ", num_partitions=4, num_sub_vectors=4, num_bits=4)
    assert four.list_indices()[0]["num_bits"] == 4
    assert four.search(query, k=5, columns=["id"], nprobes=4, refine_factor=10).to_pydict() == exact
    with pytest.raises(lancelet.InvalidArgumentError, match="bits must be 4 or 8"):
        ds.create_index("emb", "IVF_PQ", num_partitions=4, num_sub_vectors=4, num_bits=6, replace=True)


def test_drop_and_alter_columns(tmp_path):
    ds = lancelet.write_dataset({"id": [1, 2, 3], "name": ["a", None, "c"], "score": [1.5, 2.5, None]},
                                tmp_path / "s.lance")
    ds = ds.drop_columns(["name"]).alter_columns({"path": "score", "name": "points"}, {"path": "id", "nullable": False})
    assert repr(ds.lance_schema) == "lancelet.Schema(id:int64 not null, points:float64)"
    assert ds.to_pydict() == {"id": [1, 2, 3], "points": [1.5, 2.5, None]}
    with pytest.raises(lancelet.InvalidArgumentError, match="cannot make column 'points' NOT NULL: 1 row holds NULL"):
        ds.alter_columns({"path": "points", "nullable": False})
    with pytest.raises(lancelet.InvalidArgumentError, match="unknown key 'type'"):
        ds.alter_columns({"path": "points", "type": "int32"})
    ds = ds.add_columns({"half": "points / 2", "label": "'#' || CAST(id AS VARCHAR)"})
    assert ds.to_pydict(columns=["half", "label"]) == {"half": [0.75, 1.25, None], "label": ["#1", "#2", "#3"]}



def test_merge_insert_clauses_and_conditions(tmp_path):
    ds = lancelet.write_dataset({"id": [1, 2, 3, 4], "v": ["a", "b", "c", "d"], "n": [10, 20, 30, 40]},
                                tmp_path / "m.lance")
    source = {"id": [2, 3, 5], "v": ["B", "C", "E"], "n": [21, 29, 50]}
    # Only matched rows whose source n is larger are updated; target rows the source lacks
    # are deleted where n > 15 (so id 1 stays). Conditions name target.col and source.col,
    # as pylance's.
    stats = (ds.merge_insert("id").when_matched_update_all("source.n > target.n").when_not_matched_insert_all()
             .when_not_matched_by_source_delete("n > 15").execute(source))
    assert stats == {"num_inserted_rows": 1, "num_updated_rows": 1, "num_deleted_rows": 1}
    assert ds.version == 2  # one commit for the three clauses
    got = ds.to_pydict()
    assert sorted(zip(got["id"], got["v"], got["n"])) == [(1, "a", 10), (2, "B", 21), (3, "c", 30), (5, "E", 50)]
    assert ds.merge_insert(["id"]).when_not_matched_insert_all().execute([{"id": 6, "v": "f", "n": 60}]) == {
        "num_inserted_rows": 1, "num_updated_rows": 0, "num_deleted_rows": 0}
    assert ds.count_rows() == 5 and ds.version == 3


def test_merge_insert_by_source_delete_on_composite_keys(tmp_path):
    ds = lancelet.write_dataset({"a": [1, 1, 2, None], "b": ["x", "y", "x", "x"], "n": [1, 2, 3, 4]},
                                tmp_path / "composite")  # a directory not named NAME.lance
    source = {"a": [1, 2, None], "b": ["x", "y", "x"], "n": [10, 20, 40]}
    stats = (ds.merge_insert(["a", "b"]).when_matched_update_all().when_not_matched_by_source_delete()
             .execute(source))
    # (1, x) matches; (1, y), (2, x) and the NULL-keyed row match no source row.
    assert stats == {"num_inserted_rows": 0, "num_updated_rows": 1, "num_deleted_rows": 3}
    assert ds.version == 2 and ds.to_pydict() == {"a": [1], "b": ["x"], "n": [10]}


def test_merge_insert_in_memory_and_nothing_left_on_failure(tmp_path):
    ds = lancelet.write_dataset({"id": [1, 2], "n": [10, 20]}, "memory://merge-insert-test")
    assert ds.merge_insert("id").when_not_matched_insert_all().execute({"id": [3], "n": [30]}) == {
        "num_inserted_rows": 1, "num_updated_rows": 0, "num_deleted_rows": 0}
    assert ds.version == 2 and sorted(ds.to_pydict()["id"]) == [1, 2, 3]

    on_disk = lancelet.write_dataset({"id": [1, 2], "n": [10, 20]}, tmp_path / "fails")

    def listing():  # the memory run lists nothing (its tmp_path fixture checks the disk stays empty)
        return [] if IN_MEMORY else sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))

    files = listing()
    with pytest.raises(lancelet.InvalidArgumentError, match="matches more than one source row"):
        on_disk.merge_insert("id").when_matched_update_all().when_not_matched_insert_all() \
            .when_not_matched_by_source_delete().execute({"id": [1, 1, 5], "n": [0, 1, 50]})
    with pytest.raises(lancelet.InvalidArgumentError, match="the source's column 'zz' is not a column of the dataset"):
        on_disk.merge_insert("id").when_not_matched_insert_all().execute({"id": [9], "zz": [1]})
    assert on_disk.version == 1 and on_disk.latest_version == 1
    assert listing() == files


def test_merge_insert_moves_the_handle_to_the_version_it_wrote(tmp_path):
    ds = lancelet.write_dataset({"id": [1, 2], "n": [10, 20]}, tmp_path / "moves.lance")
    other = lancelet.dataset(ds.uri)
    ds.merge_insert("id").when_matched_update_all().execute({"id": [2], "n": [21]})
    assert ds.version == 2
    other.delete("id = 1")  # version 3, by another handle
    assert ds.version == 2 and ds.to_pydict() == {"id": [1, 2], "n": [10, 21]}


def test_earlier_spellings_still_work_for_one_release(tmp_path):
    ds = lancelet.write_dataset({"id": [1, 2]}, tmp_path / "old.lance")
    lancelet.write_dataset({"id": [3]}, ds.uri, "append")  # mode in schema's place
    ds.delete("id = 1")  # a write on an older handle commits on the newest version
    assert ds.version == 3 and ds.to_pydict() == {"id": [2, 3]}
    assert ds.optimize() is ds and ds.version == 4  # compacted, the handle moved
    assert ds.latest().version == 4 and ds.to_pydict() == {"id": [2, 3]}
    assert ds.checkout(2).count_rows() == 3


def test_a_handle_shared_by_threads_moves_under_its_readers(tmp_path):
    ds = lancelet.write_dataset({"id": np.arange(20_000, dtype=np.int64), "v": np.zeros(20_000)}, tmp_path / "th.lance")
    seen, errors, done = [], [], threading.Event()

    def read():
        try:
            while not done.is_set():
                seen.append((ds.count_rows(), ds.version))
                assert len(ds.take([0, 19_999])) == 2
        except Exception as e:  # noqa: BLE001  (reported below)
            errors.append(e)

    reader = threading.Thread(target=read)
    reader.start()
    for _ in range(10):
        ds.update({"v": "v + 1"})
    done.set()
    reader.join()
    assert not errors and ds.version == 11
    assert all(rows == 20_000 for rows, _ in seen)
    assert set(ds.to_pydict(columns=["v"])["v"]) == {10.0}


def test_a_scanner_keeps_the_version_it_was_made_on(tmp_path):
    ds = lancelet.write_dataset({"id": [1, 2, 3]}, tmp_path / "pin.lance")
    scanner = ds.scanner(columns=["id"])
    ds.delete("id = 2")
    assert ds.count_rows() == 2 and scanner.count_rows() == 3
    assert scanner.read_all().to_pydict() == {"id": [1, 2, 3]}
