"""Distributed writes with pylance's names: write_fragments writes files without a commit,
FragmentMetadata crosses processes as pylance's JSON or by pickling, and one commit
publishes fragments from many writers, lancelet's and pylance's alike."""
import json
import os
import pickle
import subprocess
import sys

import pytest

import lancelet
from conftest import ANOTHER_PROCESS, IN_MEMORY, need

WORKER = """
import json, sys
import lancelet
first, count = int(sys.argv[2]), int(sys.argv[3])
data = {"id": list(range(first, first + count)), "name": [f"n{i}" for i in range(first, first + count)]}
print(json.dumps([f.to_json() for f in lancelet.write_fragments(data, sys.argv[1], max_rows_per_file=300)]))
"""


def test_fragments_written_by_two_processes_are_committed_by_a_third(tmp_path):
    """Two worker processes write fragments of one dataset and print their JSON; this
    process commits them all in one version, after a version made meanwhile."""
    need("pyarrow")
    if IN_MEMORY:
        pytest.skip(ANOTHER_PROCESS.format("a worker"))
    uri = str(tmp_path / "shared.lance")
    lancelet.write_dataset({"id": [-1], "name": ["first"]}, uri)
    script = tmp_path / "worker.py"
    script.write_text(WORKER)
    env = dict(os.environ)
    workers = [subprocess.Popen([sys.executable, str(script), uri, str(first), "500"], stdout=subprocess.PIPE,
                                text=True, env=env) for first in (0, 500)]
    found = []
    for w in workers:
        out, _ = w.communicate()
        assert w.returncode == 0
        found += [lancelet.FragmentMetadata.from_json(f) for f in json.loads(out)]
    assert [f.physical_rows for f in found] == [300, 200, 300, 200]
    assert lancelet.dataset(uri).count_rows() == 1  # nothing is visible before the commit
    lancelet.dataset(uri).delete("id = -1")  # version 2, made while the workers planned on 1
    ds = lancelet.commit(uri, lancelet.LanceOperation.Append(found), read_version=1)
    assert ds.version == 3
    assert ds.count_rows() == 1000
    assert sorted(ds.to_table(columns=["id"]).to_pydict()["id"]) == list(range(1000))
    assert ds.to_table(filter="id = 777").to_pydict()["name"] == ["n777"]
    assert [f.fragment_id for f in ds.get_fragments()] == [1, 2, 3, 4]  # fragment 0 lost its one row


def test_fragment_metadata_pickles_and_reads_back_its_json(tmp_path):
    uri = str(tmp_path / "meta.lance")
    (fragment,) = lancelet.write_fragments({"id": [1, 2, 3]}, uri)
    assert pickle.loads(pickle.dumps(fragment)) == fragment
    as_dict = fragment.to_json()
    assert set(as_dict) == {"id", "files", "overlays", "physical_rows", "deletion_file", "row_id_meta",
                            "created_at_version_meta", "last_updated_at_version_meta"}
    assert as_dict["physical_rows"] == 3 and as_dict["files"][0]["fields"] == [0]
    assert lancelet.FragmentMetadata.from_json(json.dumps(as_dict)) == fragment
    assert lancelet.FragmentMetadata.from_json(as_dict) == fragment
    with pytest.raises(lancelet.NotSupportedError, match='has a "row_id_meta"'):
        lancelet.FragmentMetadata.from_json({**as_dict, "row_id_meta": {"inline": []}})
    pa = need("pyarrow")
    ds = lancelet.Dataset.commit(uri, lancelet.LanceOperation.Overwrite(pa.schema([("id", pa.int64())]), [fragment]))
    assert ds.version == 1 and ds.to_table().column("id").to_pylist() == [1, 2, 3]


def test_a_commit_that_cannot_apply_leaves_the_dataset_as_it_was(tmp_path):
    pa = need("pyarrow")
    uri = str(tmp_path / "refused.lance")
    table = pa.table({"id": pa.array([1, 2], pa.int64())})
    fragments = lancelet.write_fragments(table, uri)
    with pytest.raises(lancelet.NotFoundError, match="cannot append: dataset .* does not exist"):
        lancelet.commit(uri, lancelet.LanceOperation.Append(fragments))
    ds = lancelet.commit(uri, lancelet.LanceOperation.Overwrite(table.schema, fragments))
    assert ds.version == 1
    stray = fragments[0].to_json()
    stray["files"][0]["fields"] = [5]
    with pytest.raises(lancelet.InvalidArgumentError, match="holds field id 5, which the dataset's schema does not have"):
        lancelet.commit(uri, lancelet.LanceOperation.Append([lancelet.FragmentMetadata.from_json(stray)]))
    assert lancelet.dataset(uri).version == 1
    assert lancelet.dataset(uri).to_table().column("id").to_pylist() == [1, 2]


def test_pylance_commits_lancelets_fragments_and_lancelet_commits_pylances(tmp_path):
    """The fragment JSON is pylance's: pylance 14 commits what lancelet wrote, lancelet
    commits what pylance wrote, and each reads the other's result."""
    if IN_MEMORY:
        pytest.skip("pylance reads the local file system, not lancelet's memory:// store")
    pa = need("pyarrow")
    lance = need("lance")
    uri = str(tmp_path / "both.lance")
    table = pa.table({"id": pa.array(range(10), pa.int64()), "s": pa.array([f"v{i}" for i in range(10)])})
    ours = lancelet.write_fragments(table, uri, max_rows_per_file=4)
    theirs = lance.LanceDataset.commit(uri, lance.LanceOperation.Overwrite(
        table.schema, [lance.fragment.FragmentMetadata.from_json(json.dumps(f.to_json())) for f in ours]))
    assert theirs.version == 1 and theirs.to_table() == table
    written = lance.fragment.write_fragments(table.slice(0, 3), uri)
    ds = lancelet.commit(uri, lancelet.LanceOperation.Append(written), read_version=1)  # pylance's objects as they are
    assert ds.version == 2
    assert ds.to_table().column("id").to_pylist() == list(range(10)) + [0, 1, 2]
    assert lance.dataset(uri).to_table().column("s").to_pylist() == [f"v{i}" for i in range(10)] + ["v0", "v1", "v2"]


def test_each_fragment_scans_its_own_rows_at_the_version_it_came_from(tmp_path):
    """get_fragments() hands out units of work: each fragment's scanner reads its rows
    alone, at the version get_fragments was called on, even after the handle moves."""
    pa = need("pyarrow")
    uri = str(tmp_path / "units.lance")
    ds = lancelet.write_dataset(pa.table({"id": pa.array(range(25), pa.int64())}), uri, max_rows_per_file=10)
    fragments = ds.get_fragments()
    assert [f.fragment_id for f in fragments] == [0, 1, 2]
    ds.delete("id = 12")  # moves the handle to version 2
    assert fragments[1].to_table().column("id").to_pylist() == list(range(10, 20))
    assert fragments[2].to_table(filter="id > 21").column("id").to_pylist() == [22, 23, 24]
    assert ds.get_fragments()[1].to_table(columns=["id"]).num_rows == 9
    assert ds.scanner(fragments=[0, ds.get_fragments()[2]]).to_table().column("id").to_pylist() == \
        list(range(10)) + list(range(20, 25))
    assert fragments[1].scanner(filter="id > 15").count_rows() == 4


def test_an_updates_overlays_commit_refuses_when_what_it_read_changed(tmp_path):
    """Fragment.write_overlay writes a fragment's overlay without committing; committed
    with the update that wrote it, a concurrent change to a cell it read is a
    ConflictError, while the same group as a blind write lands (newest wins)."""
    pa = need("pyarrow")
    uri = str(tmp_path / "overlays.lance")
    ds = lancelet.write_dataset(pa.table({"id": pa.array(range(20), pa.int64()),
                                          "qty": pa.array(range(0, 200, 10), pa.int64())}), uri, max_rows_per_file=10)
    group = ds.get_fragments()[1].write_overlay({"qty": "qty + 1"}, where="id % 2 = 0")
    assert group.rows == [0, 2, 4, 6, 8]
    assert pickle.loads(pickle.dumps(group)) == group
    assert group.to_json()["overlays"][0]["offsets"] == [[0, 2, 4, 6, 8]]
    # across processes each set is the base64 of its Roaring bitmap (cookie 12346, values 0..8)
    assert json.loads(group._json)["overlays"][0]["offsets"] == ["OjAAAAEAAAAAAAQAEAAAAAAAAgAEAAYACAA="]
    assert lancelet.DataOverlayGroup.from_json(group.to_json()) == group
    assert lancelet.DataOverlayGroup.from_json(group._json) == group
    assert ds.get_fragments()[0].write_overlay({"qty": 5}, where="id = 100") is None
    op = lancelet.LanceOperation.DataOverlay([group], updates={"qty": "qty + 1"}, where="id % 2 = 0")
    assert lancelet.commit(uri, op, read_version=1).to_table(filter="id >= 10 AND id < 13").column("qty").to_pylist() \
        == [101, 110, 121]
    late = lancelet.dataset(uri).get_fragments()[1].write_overlay({"qty": "qty * 2"}, where="id = 12")
    lancelet.dataset(uri).update({"qty": 999}, where="id = 12")  # version 3
    with pytest.raises(lancelet.ConflictError, match="changed field 'qty' of fragment 1"):
        lancelet.commit(uri, lancelet.LanceOperation.DataOverlay([late], updates={"qty": "qty * 2"}, where="id = 12"),
                        read_version=2)
    blind = lancelet.commit(uri, lancelet.LanceOperation.DataOverlay([late]), read_version=2)
    assert blind.version == 4 and blind.to_table(filter="id = 12").column("qty").to_pylist() == [242]


def test_overlay_groups_cross_to_pylance_and_back(tmp_path, monkeypatch):
    """pylance 14 commits lancelet's overlay groups (to_lance()), and lancelet commits
    pylance's LanceOperation.DataOverlay as it is; both read the cells the groups set."""
    if IN_MEMORY:
        pytest.skip("pylance reads the local file system, not lancelet's memory:// store")
    pa, lance = need("pyarrow"), need("lance")
    monkeypatch.setenv("LANCE_ENABLE_UNSTABLE_DATA_OVERLAY_FILES", "1")
    uri = str(tmp_path / "groups.lance")
    ds = lancelet.write_dataset(pa.table({"id": pa.array(range(20), pa.int64()),
                                          "qty": pa.array(range(20), pa.int64())}), uri, max_rows_per_file=10)
    first = ds.get_fragments()[0].write_overlay({"qty": "qty + 100"}, where="id < 3")
    theirs = lance.LanceDataset.commit(uri, lance.LanceOperation.DataOverlay([first.to_lance()]), read_version=1)
    assert theirs.version == 2
    assert theirs.to_table(columns=["qty"]).column("qty").to_pylist()[:4] == [100, 101, 102, 3]

    second = lancelet.dataset(uri).get_fragments()[1].write_overlay({"qty": 0}, where="id = 15")
    as_pylance = lance.LanceOperation.DataOverlay([second.to_lance()])
    ours = lancelet.commit(uri, as_pylance, read_version=2)
    assert ours.version == 3
    expected = [100, 101, 102] + list(range(3, 15)) + [0] + list(range(16, 20))
    assert ours.to_table().column("qty").to_pylist() == expected
    assert lance.dataset(uri).to_table().column("qty").to_pylist() == expected


def test_deletions_per_fragment_commit_once_and_cross_to_pylance(tmp_path, monkeypatch):
    """Fragment.delete writes a fragment's deletion file without committing (None when no
    row is left, the metadata as it is when no row matches); LanceOperation.Delete commits
    them in one version, pylance commits lancelet's, and lancelet commits pylance's."""
    pa = need("pyarrow")
    uri = str(tmp_path / "deletes.lance")
    ds = lancelet.write_dataset(pa.table({"id": pa.array(range(30), pa.int64())}), uri, max_rows_per_file=10)
    frags = ds.get_fragments()
    first = frags[0].delete("id % 10 = 1 OR id >= 20")
    assert first.to_json()["deletion_file"]["num_deleted_rows"] == 1
    assert frags[2].delete("id % 10 = 1 OR id >= 20") is None
    same = frags[1].delete("id = 100")
    assert same.to_json()["deletion_file"] is None and same.physical_rows == 10
    assert pickle.loads(pickle.dumps(first)) == first
    assert lancelet.dataset(uri).count_rows() == 30  # nothing committed
    op = lancelet.LanceOperation.Delete([first, same], [2], "id % 10 = 1 OR id >= 20")
    done = lancelet.commit(uri, op, read_version=1)
    assert done.version == 2
    assert done.to_table().column("id").to_pylist() == [0] + list(range(2, 20))
    if IN_MEMORY:
        return
    lance = need("lance")
    monkeypatch.setenv("LANCE_ENABLE_UNSTABLE_DATA_OVERLAY_FILES", "1")
    mine = lancelet.dataset(uri).get_fragments()[1].delete("id = 15")
    theirs = lance.LanceDataset.commit(uri, lance.LanceOperation.Delete(
        [lance.fragment.FragmentMetadata.from_json(json.dumps(mine.to_json()))], [], "id = 15"), read_version=2)
    assert theirs.version == 3 and theirs.count_rows() == 18
    their_fragment = lance.dataset(uri).get_fragments()[0].delete("id = 0")
    ours = lancelet.commit(uri, lance.LanceOperation.Delete([their_fragment], [], "id = 0"), read_version=3)
    assert ours.version == 4
    assert ours.to_table().column("id").to_pylist() == list(range(2, 15)) + list(range(16, 20))
    assert lance.dataset(uri).to_table().column("id").to_pylist() == ours.to_table().column("id").to_pylist()


def test_compaction_results_and_index_segments_commit_as_operations(tmp_path):
    """LanceOperation.Rewrite and .CreateIndex take what lancelet.optimize's tasks return."""
    pa = need("pyarrow")
    from lancelet.optimize import Compaction, IndexBuild
    uri = str(tmp_path / "ops.lance")
    ds = lancelet.write_dataset(pa.table({"id": pa.array(range(40), pa.int64())}), uri, max_rows_per_file=10)
    assert [f.id for f in ds.get_fragments()] == [0, 1, 2, 3]
    plan = Compaction.plan(ds, {"target_rows_per_fragment": 100})
    assert [(t.action, t.fragments) for t in plan.tasks] == [("rewrite", [0, 1, 2, 3])]
    results = [pickle.loads(pickle.dumps(t)).execute(ds) for t in plan.tasks]
    with pytest.raises(ValueError, match="needs the read_version"):
        lancelet.commit(uri, lancelet.LanceOperation.Rewrite(results))
    done = lancelet.commit(uri, lancelet.LanceOperation.Rewrite(results), read_version=plan.read_version)
    assert (done.version, len(done.get_fragments())) == (2, 1)
    assert done.to_table().column("id").to_pylist() == list(range(40))
    build = IndexBuild.plan(done, "id", "BTREE", num_tasks=3)
    assert len(build.tasks) == 1  # one fragment: one task
    segments = [pickle.loads(pickle.dumps(t.execute(done))) for t in build.tasks]
    indexed = lancelet.commit(uri, lancelet.LanceOperation.CreateIndex(segments), read_version=2)
    assert [(i["name"], i["segments"]) for i in indexed.list_indices()] == [("id_idx", 1)]
    assert indexed.to_table(filter="id = 33").column("id").to_pylist() == [33]


def test_an_update_that_moves_rows_commits_once_and_crosses_to_pylance(tmp_path, monkeypatch):
    """Fragment.delete plus write_fragments per fragment, then LanceOperation.Update: the
    rows move in one version; pylance commits lancelet's Update and lancelet pylance's."""
    pa = need("pyarrow")
    uri = str(tmp_path / "moves.lance")
    schema = pa.schema([("id", pa.int64()), ("s", pa.string())])
    ds = lancelet.write_dataset(pa.table({"id": pa.array(range(20), pa.int64()), "s": [f"v{i}" for i in range(20)]}),
                                uri, max_rows_per_file=10)

    def move(dataset, fragment, ids, text):
        updated = fragment.delete(f"id IN ({', '.join(map(str, ids))})")
        new = lancelet.write_fragments(pa.table({"id": pa.array(ids, pa.int64()), "s": [text] * len(ids)},
                                                schema=schema), uri)
        return updated, new

    a, new_a = move(ds, ds.get_fragments()[0], [1, 2], "moved")
    b, new_b = move(ds, ds.get_fragments()[1], [15], "moved")
    op = lancelet.LanceOperation.Update([], [a, b], new_a + new_b, updates={"s": "'moved'"}, where="id IN (1, 2, 15)")
    done = lancelet.commit(uri, op, read_version=1)
    assert done.version == 2 and done.count_rows() == 20
    assert done.to_table(filter="s = 'moved'").column("id").to_pylist() == [1, 2, 15]
    with pytest.raises(NotImplementedError, match="rewrites columns"):
        lancelet.commit(uri, type("Update", (), {"fields_modified": [1]})())
    if IN_MEMORY:
        return
    lance = need("lance")
    monkeypatch.setenv("LANCE_ENABLE_UNSTABLE_DATA_OVERLAY_FILES", "1")
    c, new_c = move(done, done.get_fragments()[0], [3], "theirs")
    as_lance = [lance.fragment.FragmentMetadata.from_json(json.dumps(f.to_json())) for f in [c] + new_c]
    theirs = lance.LanceDataset.commit(uri, lance.LanceOperation.Update(updated_fragments=[as_lance[0]],
                                                                         new_fragments=as_lance[1:]), read_version=2)
    assert theirs.version == 3 and theirs.to_table(filter="id = 3").column("s").to_pylist() == ["theirs"]
    fragment = lance.dataset(uri).get_fragments()[1]
    updated = fragment.delete("id = 12")
    (new,) = lance.fragment.write_fragments(pa.table({"id": pa.array([12], pa.int64()), "s": ["pylance"]}), uri)
    ours = lancelet.commit(uri, lance.LanceOperation.Update(updated_fragments=[updated], new_fragments=[new]),
                           read_version=3)
    assert ours.version == 4 and ours.count_rows() == 20
    assert ours.to_table(filter="id = 12").column("s").to_pylist() == ["pylance"]
    assert lance.dataset(uri).to_table(filter="id = 12").column("s").to_pylist() == ["pylance"]
