"""pylance's API names, each checked against pylance 14 making the same call on a copy
of the same dataset: equal rows, equal return values where pylance's are data."""
import datetime
import shutil

import pytest

import lancelet
from conftest import IN_MEMORY, need

pytestmark = pytest.mark.skipif(IN_MEMORY, reason="pylance opens a copy on the local file system")


def base(pa):
    return pa.table({"id": pa.array([1, 2, 3, 4, 5], pa.int64()), "qty": pa.array([10, 20, None, 40, 50], pa.int64()),
                     "name": ["a", "b", "c", None, "e"], "price": [1.5, 2.5, 3.5, 4.5, None]})


@pytest.fixture
def pair(tmp_path):
    """(lancelet's dataset, pylance's handle on a copy of it, pyarrow)."""
    pa, lance = need("pyarrow"), need("lance")
    ours = lancelet.write_dataset(base(pa), tmp_path / "ours.lance", max_rows_per_file=2)
    shutil.copytree(tmp_path / "ours.lance", tmp_path / "theirs.lance")
    return ours, lance.dataset(str(tmp_path / "theirs.lance")), pa


def rows(table):
    return sorted(table.to_pylist(), key=lambda r: (r["id"] is None, r["id"]))


def same(ours, theirs):
    assert ours.schema == theirs.schema
    assert rows(ours.to_table()) == rows(theirs.to_table())


def test_reads_as_pylance(pair):
    ours, theirs, pa = pair
    same(ours, theirs)
    for kwargs in [dict(columns=["name", "id"]), dict(filter="qty > 15"), dict(limit=2, offset=1),
                   dict(columns=["id"], filter="name IS NOT NULL", limit=3)]:
        assert ours.to_table(**kwargs) == theirs.to_table(**kwargs), kwargs
    assert ours.to_table(columns=["id"], with_row_id=True).column("_rowid") == \
        theirs.to_table(columns=["id"], with_row_id=True).column("_rowid")
    assert ours.take([4, 0, 2], columns=["id", "name"]) == theirs.take([4, 0, 2], columns=["id", "name"])
    assert ours.count_rows() == theirs.count_rows() == len(ours) == len(theirs) == 5
    assert ours.count_rows(filter="price > 2") == theirs.count_rows(filter="price > 2") == 3
    assert ours.head(3) == theirs.head(3)
    assert ours.scanner(filter="id >= 3").to_table() == theirs.scanner(filter="id >= 3").to_table()
    assert ours.scanner(filter="id >= 3").count_rows() == theirs.scanner(filter="id >= 3").count_rows() == 3
    assert [b.num_rows for b in ours.scanner(columns=["id"]).to_batches()] == [2, 2, 1]
    assert ours.version == theirs.version == 1 and ours.latest_version == theirs.latest_version == 1
    assert ours.data_storage_version == theirs.data_storage_version == "2.2"


def test_update_delete_and_versions_as_pylance(pair):
    ours, theirs, pa = pair
    assert ours.update({"qty": "qty * 2", "name": "upper(name)"}, where="id <= 2") == \
        theirs.update({"qty": "qty * 2", "name": "upper(name)"}, where="id <= 2") == {"num_rows_updated": 2}
    assert ours.version == theirs.version == 2  # both handles moved
    same(ours, theirs)
    # A non-str value is a literal (pylance 14 takes only SQL text: the same update spelled so).
    assert ours.update({"qty": 7, "price": None, "name": "'x'"}, where="id = 5") == \
        theirs.update({"qty": "7", "price": "NULL", "name": "'x'"}, where="id = 5")
    assert ours.update({"price": 0.25}) == theirs.update({"price": "0.25"}) == {"num_rows_updated": 5}
    same(ours, theirs)
    assert ours.delete("qty > 30") == theirs.delete("qty > 30") == {"num_deleted_rows": 2}
    assert ours.version == theirs.version == 5
    same(ours, theirs)
    assert [v["version"] for v in ours.versions()] == [v["version"] for v in theirs.versions()] == [1, 2, 3, 4, 5]
    old, their_old = ours.checkout_version(2), theirs.checkout_version(2)
    assert old.version == their_old.version == 2 and ours.version == 5
    same(old, their_old)
    assert old.latest_version == their_old.latest_version == 5


def test_update_literals_of_every_kind(tmp_path):
    ds = lancelet.write_dataset({"i": [1, 2], "f": [0.5, 1.5], "b": [True, False], "s": ["a", "b"], "by": [b"x", b"y"],
                                 "d": [datetime.date(2024, 1, 1)] * 2,
                                 "ts": [datetime.datetime(2024, 1, 1)] * 2}, tmp_path / "lit.lance")
    assert ds.update({"i": 7, "f": float("nan"), "b": None, "s": "s || '!'", "by": b"\x00\xff",
                      "d": datetime.date(1999, 12, 31), "ts": datetime.datetime(2000, 1, 2, 3, 4, 5)},
                     where="i = 2") == {"num_rows_updated": 1}
    got = ds.to_pydict()
    assert got["i"] == [1, 7] and got["b"] == [True, None] and got["s"] == ["a", "b!"] and got["by"] == [b"x", b"\x00\xff"]
    assert got["f"][1] != got["f"][1]  # NaN
    assert got["d"] == [datetime.date(2024, 1, 1), datetime.date(1999, 12, 31)]
    assert got["ts"] == [datetime.datetime(2024, 1, 1), datetime.datetime(2000, 1, 2, 3, 4, 5)]
    with pytest.raises(TypeError, match="a value must be a str"):
        ds.update({"i": object()})


def test_merge_insert_three_clauses_as_pylance(pair):
    ours, theirs, pa = pair
    source = pa.table({"id": pa.array([2, 4, 9], pa.int64()), "qty": pa.array([200, None, 900], pa.int64()),
                       "name": ["B", "D", "I"], "price": [20.0, 40.0, 90.0]})

    def merge(ds):
        return (ds.merge_insert("id").when_matched_update_all().when_not_matched_insert_all()
                .when_not_matched_by_source_delete().execute(source))

    assert merge(ours) == merge(theirs) == {"num_inserted_rows": 1, "num_updated_rows": 2, "num_deleted_rows": 3}
    assert ours.version == theirs.version == 2  # one version for the three clauses
    same(ours, theirs)
    # Each clause alone; nothing is written beside the dataset.
    assert ours.merge_insert("id").when_not_matched_insert_all().execute(pa.table(
        {"id": pa.array([9, 10], pa.int64()), "qty": pa.array([1, 2], pa.int64()), "name": ["x", "y"],
         "price": [0.0, 0.0]})) == {"num_inserted_rows": 1, "num_updated_rows": 0, "num_deleted_rows": 0}
    assert sorted(p.name for p in (ours.uri and __import__("pathlib").Path(ours.uri).parent).iterdir()) == \
        ["ours.lance", "theirs.lance"]


def test_merge_insert_conditions_and_composite_keys_as_pylance(pair):
    ours, theirs, pa = pair
    # Keys (id, name): (1, a) and (2, b) match; (3, x) and (4, NULL) do not; the target's
    # (3, c), (4, NULL) and (5, e) match no source row, and those with qty >= 40 go.
    source = pa.table({"id": pa.array([1, 2, 3, 4], pa.int64()), "qty": pa.array([11, 1, 33, 44], pa.int64()),
                       "name": ["a", "b", "x", None], "price": [9.0, 9.0, 9.0, 9.0]})

    def merge(ds):
        return (ds.merge_insert(["id", "name"]).when_matched_update_all("source.qty > target.qty")
                .when_not_matched_insert_all().when_not_matched_by_source_delete("qty >= 40").execute(source))

    assert merge(ours) == merge(theirs) == {"num_inserted_rows": 2, "num_updated_rows": 1, "num_deleted_rows": 2}
    assert ours.version == theirs.version == 2
    same(ours, theirs)


def test_schema_changes_as_pylance(pair):
    ours, theirs, pa = pair
    ours.add_columns({"total": "qty * price"})
    theirs.add_columns({"total": "qty * price"})
    same(ours, theirs)
    ours.drop_columns(["name"])
    theirs.drop_columns(["name"])
    same(ours, theirs)
    ours.alter_columns({"path": "qty", "name": "quantity"})
    theirs.alter_columns({"path": "qty", "name": "quantity"})
    same(ours, theirs)
    assert ours.version == theirs.version == 4


def test_indexes_and_maintenance_as_pylance(pair):
    ours, theirs, pa = pair
    assert ours.create_scalar_index("id", "BTREE") is None
    theirs.create_scalar_index("id", "BTREE")
    assert ours.version == theirs.version == 2
    mine, their = ours.list_indices(), theirs.list_indices()
    assert [(i["name"], i["type"], i["fields"], i["version"]) for i in mine] == \
        [(i["name"], i["type"], i["fields"], i["version"]) for i in their] == [("id_idx", "BTree", ["id"], 1)]
    assert ours.to_table(filter="id = 3") == theirs.to_table(filter="id = 3")
    lancelet.write_dataset(base(pa).slice(0, 2), ours.uri, mode="append")
    need("lance").write_dataset(base(pa).slice(0, 2), theirs.uri, mode="append")
    ours, theirs = lancelet.dataset(ours.uri), need("lance").dataset(theirs.uri)
    ours.optimize.optimize_indices()
    theirs.optimize.optimize_indices()
    assert ours.to_table(filter="id = 1") == theirs.to_table(filter="id = 1")
    stats = ours.optimize.compact_files()
    theirs.optimize.compact_files()
    assert stats["fragments_removed"] == 4 and stats["fragments_added"] == 1
    same(ours, theirs)
    ours.drop_index("id_idx")
    theirs.drop_index("id_idx")
    assert ours.list_indices() == theirs.list_indices() == []
    assert ours.cleanup_old_versions()["old_versions"] == theirs.cleanup_old_versions().old_versions == 0
    removed = ours.cleanup_old_versions(retain_versions=1, force=True)
    assert removed["old_versions"] == ours.version - 1
    assert [v["version"] for v in ours.versions()] == [ours.version]


def test_write_dataset_arguments_as_pylance(tmp_path):
    pa, lance = need("pyarrow"), need("lance")
    table = base(pa)
    for mod, name in [(lancelet, "ours"), (lance, "theirs")]:
        uri = str(tmp_path / f"{name}.lance")
        ds = mod.write_dataset(table, uri, mode="create", max_rows_per_file=2, data_storage_version="2.1",
                               enable_stable_row_ids=True)
        assert ds.version == 1 and ds.data_storage_version == "2.1"
        ds = mod.write_dataset(table.slice(0, 1), uri, mode="append")
        assert ds.version == 2 and ds.count_rows() == 6
        ds = mod.write_dataset(table.slice(1, 2), uri, mode="overwrite")
        assert ds.version == 3 and ds.to_table() == table.slice(1, 2)
        assert mod.dataset(uri, version=2).count_rows() == 6


def test_fragments_and_stats_as_pylance(pair):
    ours, theirs, pa = pair
    ours.delete("id = 3")
    theirs.delete("id = 3")
    mine, their = ours.get_fragments(), theirs.get_fragments()
    assert [(f.fragment_id, f.count_rows()) for f in mine] == [(f.fragment_id, f.count_rows()) for f in their] == \
        [(0, 2), (1, 1), (2, 1)]
    assert [(f.num_deletions, f.physical_rows) for f in mine] == [(f.num_deletions, f.physical_rows) for f in their] == \
        [(0, 2), (1, 2), (0, 1)]
    assert ours.stats.dataset_stats() == theirs.stats.dataset_stats() == {
        "num_deleted_rows": 1, "num_fragments": 3, "num_small_files": 3}
