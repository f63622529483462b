"""The change feed (`lancelet changes`) of datasets the reference shaped: pylance's update
(rows moved: paired as update images), delete and compaction read as a user expects."""
import json

import pytest

from conftest import ANOTHER_PROCESS, IN_MEMORY, need, run_cli

pytestmark = pytest.mark.skipif(IN_MEMORY, reason=ANOTHER_PROCESS.format("the CLI"))


def feed(uri, *args):
    rows = [json.loads(line) for line in run_cli("changes", uri, "--format", "jsonl", *args).splitlines()]
    for row in rows:
        assert row.pop("_commit_timestamp").endswith("Z")
    return rows


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
    assert feed(uri, "--from", "1") == [
        row("update_preimage", 2, 1, ["qty"], 1, 10), row("update_postimage", 2, moved, ["qty"], 1, 11),
        row("update_preimage", 2, (1 << 32) + 1, ["qty"], 4, 40), row("update_postimage", 2, moved + 1, ["qty"], 4, 41),
        row("delete", 3, (1 << 32) + 2, None, 5, 50),
    ]
    assert feed(uri, "--from", "3") == []  # compaction changed no value
    created = feed(uri, "--from", "0", "--to", "1", "--columns", "id")
    assert [(r["_change_type"], r["id"]) for r in created] == [("insert", i) for i in range(6)]
