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


def model_feed_rows(feed):
    """A feed as a sorted list of (version, kind, id, name, qty, changed columns)."""
    d = feed.to_pydict()
    return sorted(zip(d["_commit_version"], d["_change_type"], d["id"], d["name"], d["qty"],
                      [None if c is None else tuple(c) for c in d["_changed_columns"]]),
                  key=lambda r: (r[0], r[1], r[2]))


@pytest.mark.parametrize("stable_row_ids", [False, True], ids=["addresses", "stable_ids"])
@pytest.mark.parametrize("file_version", ["2.0", "2.2"])
def test_random_histories_feed_what_a_model_of_the_table_expects(tmp_path, stable_row_ids, file_version):
    """Random sequences of appends, UPDATEs (overlay, columns and rows modes), MERGEs
    (update, insert and delete branches), DELETEs, compactions and index builds: the feed
    of every single version and of every range equals the changes a model of the table
    (id -> name, qty) computes, including the columns each update wrote; compaction and
    index versions give nothing; after cleanup, a range that needs a removed version names
    the oldest one left. Every update changes the values it writes, so the columns a commit
    wrote are the columns whose values differ."""
    import random
    rng = random.Random(f"{stable_row_ids} {file_version}")  # a str seed is the same in every process
    uri = str(tmp_path / "model.lance")
    model = {i: (f"n{i}", i) for i in range(40)}
    ds = lancelet.write_dataset({"id": list(model), "name": [v[0] for v in model.values()],
                                 "qty": [v[1] for v in model.values()]}, uri, max_rows_per_file=16,
                                data_storage_version=file_version, enable_stable_row_ids=stable_row_ids)
    expected = {}  # version -> rows as model_feed_rows gives them
    next_id = 40
    for step in range(28):
        before, version = dict(model), ds.version
        op = rng.choice(["append", "update", "update", "merge", "delete", "optimize", "index"])
        ids = sorted(model)
        picked = set(rng.sample(ids, min(len(ids), rng.randint(1, 5)))) if ids else set()
        where = "id IN ({})".format(", ".join(map(str, sorted(picked)))) if picked else "id < 0"
        changed = {}
        if op == "append":
            new = list(range(next_id, next_id + rng.randint(1, 20)))
            next_id += len(new)
            lancelet.write_dataset({"id": new, "name": [f"n{i}" for i in new], "qty": new}, uri, mode="append",
                                   max_rows_per_file=16)
            for i in new:
                model[i] = (f"n{i}", i)
        elif op == "update":
            mode = rng.choice(["overlay", "columns", "rows"])
            columns = rng.choice([["qty"], ["name"], ["name", "qty"]])
            updates = {"qty": "qty + 1000", "name": "name || '+'"}
            ds.update({c: updates[c] for c in columns}, where=where, mode=mode)
            for i in picked:
                name, qty = model[i]
                model[i] = (name + "+" if "name" in columns else name, qty + 1000 if "qty" in columns else qty)
                changed[i] = tuple(c for c in ("name", "qty") if c in columns)
        elif op == "merge":
            matched = sorted(picked)
            new = list(range(next_id, next_id + rng.randint(0, 3)))
            next_id += len(new)
            keys = matched + new
            source = {"id": keys, "name": [f"m{step}_{i}" for i in keys], "qty": [-step * 100 - i for i in keys]}
            gone = {i for i in ids if i not in picked and rng.random() < 0.1}
            builder = ds.merge_insert("id").when_matched_update_all().when_not_matched_insert_all()
            if gone:
                builder = builder.when_not_matched_by_source_delete(
                    "id IN ({})".format(", ".join(map(str, sorted(gone)))))
            builder.execute(source)
            for i in matched:
                model[i] = (f"m{step}_{i}", -step * 100 - i)
                changed[i] = ("name", "qty")
            for i in new:
                model[i] = (f"m{step}_{i}", -step * 100 - i)
            for i in gone:
                del model[i]
        elif op == "delete":
            ds.delete(where)
            for i in picked:
                del model[i]
        elif op == "optimize":
            ds.optimize.compact_files(target_rows_per_fragment=rng.choice([16, 64]))
        else:
            ds.create_index("id", "BTREE", replace=True)
        ds = lancelet.dataset(uri)
        if ds.version == version:
            assert model == before, op
            continue
        # a compaction may commit more than one version; what changed is in the last
        assert op in ("optimize", "index") or ds.version == version + 1, op
        rows = []
        for i in sorted(set(before) | set(model)):
            if i not in model:
                rows.append((ds.version, "delete", i, *before[i], None))
            elif i not in before:
                rows.append((ds.version, "insert", i, *model[i], None))
            elif before[i] != model[i]:
                rows.append((ds.version, "update_preimage", i, *before[i], changed[i]))
                rows.append((ds.version, "update_postimage", i, *model[i], changed[i]))
        assert op not in ("optimize", "index") or not rows
        for v in range(version + 1, ds.version + 1):
            expected[v] = sorted([r for r in rows if r[0] == v], key=lambda r: (r[0], r[1], r[2]))
        assert model_feed_rows(ds.changes(version)) == expected[ds.version], (step, op)

    latest = ds.version
    table = ds.to_pydict()
    assert dict(zip(table["id"], zip(table["name"], table["qty"]))) == model
    for a in range(1, latest + 1, 3):
        for b in range(a, latest + 1, 4):
            want = sorted([r for v in range(a + 1, b + 1) for r in expected.get(v, [])],
                          key=lambda r: (r[0], r[1], r[2]))
            assert model_feed_rows(ds.changes(a, to_version=b)) == want, (a, b)
    ds.cleanup_old_versions(retain_versions=3, force=True)
    oldest = lancelet.dataset(uri).versions()[0]["version"]
    assert oldest == latest - 2
    with pytest.raises(lancelet.NotFoundError, match=f"the oldest readable version is {oldest}"):
        ds.changes(1).to_pydict()
    assert model_feed_rows(ds.changes(oldest)) == sorted(
        [r for v in range(oldest + 1, latest + 1) for r in expected.get(v, [])], key=lambda r: (r[0], r[1], r[2]))


@pytest.mark.skipif(IN_MEMORY, reason=ANOTHER_PROCESS.format("pylance"))
def test_the_feed_agrees_with_the_references_row_level_delta(tmp_path, monkeypatch):
    """A table pylance shaped with stable row ids (its update, delete, append and keyed
    merge_insert): for every range, the rows the feed inserts, updates and deletes are
    those pylance's own delta() names, read at the range's end (inserted and updated rows
    still there at the end, deleted ids of rows there at the start), and its merge_insert's
    updated row is an update pair, matched by its row id."""
    pa, lance = need("pyarrow"), need("lance")
    monkeypatch.setenv("LANCE_ENABLE_UNSTABLE_DATA_OVERLAY_FILES", "1")
    uri = str(tmp_path / "delta.lance")
    lance.write_dataset(pa.table({"id": pa.array(range(8), pa.int64()), "qty": pa.array(range(0, 80, 10), pa.int64())}),
                        uri, max_rows_per_file=4, enable_stable_row_ids=True)
    lance.dataset(uri).update({"qty": "qty + 1"}, where="id IN (1, 6)")  # v2
    lance.dataset(uri).delete("id = 3")                                   # v3
    lance.write_dataset(pa.table({"id": pa.array([8, 9], pa.int64()), "qty": pa.array([80, 90], pa.int64())}), uri,
                        mode="append")                                    # v4
    lance.dataset(uri).merge_insert("id").when_matched_update_all().when_not_matched_insert_all().execute(
        pa.table({"id": pa.array([2, 10], pa.int64()), "qty": pa.array([-2, -10], pa.int64())}))  # v5
    lance.dataset(uri).delete("id = 8")                                   # v6
    assert lance.dataset(uri).version == 6
    ds = lancelet.dataset(uri)
    v5 = ds.changes(4, to_version=5).to_pydict()
    assert list(zip(v5["_change_type"], v5["_rowid"], v5["qty"])) == [
        ("update_preimage", 2, 20), ("update_postimage", 2, -2), ("insert", 10, -10)]
    for begin in range(1, 6):
        for end in range(begin + 1, 7):
            delta = lance.dataset(uri, version=end).delta(begin_version=begin, end_version=end)
            feed = ds.changes(begin, to_version=end).to_pydict()
            rows = list(zip(feed["_change_type"], feed["_rowid"]))
            at_end = set(lancelet.dataset(uri, version=end).to_table(columns=["_rowid"]).column("_rowid").to_pylist())
            at_begin = set(lancelet.dataset(uri, version=begin).to_table(columns=["_rowid"]).column("_rowid")
                           .to_pylist())
            inserted = {r for kind, r in rows if kind == "insert"} & at_end
            updated = {r for kind, r in rows if kind == "update_postimage"} & at_end & at_begin
            deleted = {r for kind, r in rows if kind == "delete"} & at_begin
            assert inserted == set(delta.get_inserted_rows().read_all().column("_rowid").to_pylist()), (begin, end)
            assert updated == set(delta.get_updated_rows().read_all().column("_rowid").to_pylist()), (begin, end)
            assert deleted == set(delta.get_deleted_row_ids().read_all().column("_rowid").to_pylist()), (begin, end)
