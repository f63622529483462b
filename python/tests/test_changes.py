"""The change feed: Dataset.changes (a ChangeFeed that pyarrow, DuckDB and polars read), and
`lancelet changes` on datasets the reference shaped (pylance's update, whose rows move, as
update pairs; its delete; its compaction as nothing)."""
import json

import pytest

from conftest import ANOTHER_PROCESS, IN_MEMORY, need, run_cli

import lancelet


def test_dataset_changes_is_a_feed_pyarrow_duckdb_and_polars_read(tmp_path):
    uri = str(tmp_path / "feed.lance")
    ds = lancelet.write_dataset({"id": list(range(6)), "qty": [i * 10 for i in range(6)]}, uri, max_rows_per_file=3)
    ds.update({"qty": "qty + 1"}, where="id = 4", mode="overlay")  # v2
    ds.delete("id = 0")                                            # v3
    feed = ds.changes(1, columns=["id", "qty"])
    d = feed.to_pydict()
    assert d["_change_type"] == ["update_preimage", "update_postimage", "delete"]
    assert d["_commit_version"] == [2, 2, 3]
    assert d["_rowid"] == [(1 << 32) + 1, (1 << 32) + 1, 0]
    assert d["_changed_columns"] == [["qty"], ["qty"], None]
    assert (d["id"], d["qty"]) == ([4, 4, 0], [40, 41, 0])
    assert ds.changes(2, change_types="delete").to_pydict()["id"] == [0]
    assert ds.changes(1, to_version=2, change_types=["update_postimage"]).to_pydict()["qty"] == [41]
    with pytest.raises(lancelet.InvalidArgumentError, match="from version 3 is after to version 2"):
        ds.changes(3, to_version=2).to_pydict()

    pa = need("pyarrow")
    table = feed.to_table()
    assert table.schema.field("_commit_timestamp").type == pa.timestamp("us", tz="UTC")
    assert table.column("_changed_columns").type == pa.list_(pa.utf8())
    duckdb = need("duckdb")
    assert duckdb.sql("SELECT _change_type, count(*) FROM feed GROUP BY 1 ORDER BY 1").fetchall() == \
        [("delete", 1), ("update_postimage", 1), ("update_preimage", 1)]
    pl = need("polars")
    assert pl.from_arrow(feed.to_table()).filter(pl.col("_change_type") == "delete")["id"].to_list() == [0]


def cli_feed(uri, *args):
    rows = [json.loads(line) for line in run_cli("changes", uri, "--format", "jsonl", *args).splitlines()]
    for row in rows:
        assert row.pop("_commit_timestamp").endswith("Z")
    return rows


@pytest.mark.skipif(IN_MEMORY, reason=ANOTHER_PROCESS.format("the CLI"))
def test_the_references_update_delete_and_compaction_read_as_expected(tmp_path, monkeypatch):
    pa, lance = need("pyarrow"), need("lance")
    monkeypatch.setenv("LANCE_ENABLE_UNSTABLE_DATA_OVERLAY_FILES", "1")
    uri = str(tmp_path / "ref.lance")
    lance.write_dataset(pa.table({"id": pa.array(range(6), pa.int64()), "qty": pa.array(range(0, 60, 10), pa.int64())}),
                        uri, max_rows_per_file=3)
    lance.dataset(uri).update({"qty": "qty + 1"}, where="id IN (1, 4)")  # v2: the rows move to fragment 2
    lance.dataset(uri).delete("id = 5")                                   # v3
    lance.dataset(uri).optimize.compact_files()                           # v4 ReserveFragments, v5 Rewrite
    assert lance.dataset(uri).version == 5
    moved = 2 << 32

    def row(kind, version, rowid, changed, id_, qty):
        return {"_change_type": kind, "_commit_version": version, "_rowid": rowid, "_changed_columns": changed,
                "id": id_, "qty": qty}
    assert cli_feed(uri, "--from", "1") == [
        row("update_preimage", 2, 1, ["qty"], 1, 10), row("update_postimage", 2, moved, ["qty"], 1, 11),
        row("update_preimage", 2, (1 << 32) + 1, ["qty"], 4, 40), row("update_postimage", 2, moved + 1, ["qty"], 4, 41),
        row("delete", 3, (1 << 32) + 2, None, 5, 50),
    ]
    assert cli_feed(uri, "--from", "3") == []  # compaction changed no value
    created = cli_feed(uri, "--from", "0", "--to", "1", "--columns", "id")
    assert [(r["_change_type"], r["id"]) for r in created] == [("insert", i) for i in range(6)]
