"""ds.restore() and ds.tags as pylance's: lancelet's own behaviour with exact rows, then
each call made by pylance 14 on a copy, and each side reading the other's tags."""
import shutil

import pytest

import lancelet
from conftest import IN_MEMORY, need


def ids(ds):
    return sorted(ds.scanner(columns=["id"]).read_all().to_pydict()["id"])


@pytest.fixture
def history(tmp_path):
    """Versions 1: ids 0..9; 2: ids < 3 deleted; 3: qty of id 5 set to 50 (an overlay)."""
    ds = lancelet.write_dataset({"id": list(range(10)), "qty": [i * 10 for i in range(10)]}, tmp_path / "t.lance",
                                max_rows_per_file=4)
    ds.delete("id < 3")
    ds.update({"qty": 555}, where="id = 5")
    assert ds.version == 3
    return ds


def test_restore_moves_the_handle_to_a_new_version_with_the_old_content(history):
    old = history.checkout_version(1)
    old.restore()
    assert old.version == 4 and old.latest_version == 4
    assert ids(old) == list(range(10))
    history.checkout_version(2).restore()  # version 5: the deletions come back
    assert ids(history.checkout_version(5)) == list(range(3, 10))
    overlaid = history.checkout_version(3)
    overlaid.restore()  # version 6: the overlay comes back
    assert overlaid.version == 6
    got = overlaid.scanner(columns=["id", "qty"], filter="id >= 5 AND id <= 6").read_all().to_pydict()
    assert got == {"id": [5, 6], "qty": [555, 60]}
    assert [v["operation"] for v in overlaid.versions()][-3:] == ["Restore", "Restore", "Restore"]


def test_tags_create_list_update_delete_and_open_by_tag(history, tmp_path):
    history.tags.create("first", 1)
    history.tags.create("now")  # None: the latest
    listed = history.tags.list()
    assert sorted(listed) == ["first", "now"]
    assert listed["first"]["version"] == 1 and listed["now"]["version"] == 3
    assert listed["first"]["manifest_size"] > 0 and listed["first"]["branch"] is None
    assert history.tags.get_version("now") == 3
    assert ids(history.checkout_version("first")) == list(range(10))
    with pytest.raises(lancelet.InvalidArgumentError, match="tag 'first' already exists"):
        history.tags.create("first", 2)
    history.tags.update("first", "now")  # another tag's name
    assert history.tags.list()["first"]["version"] == 3
    history.tags.delete("now")
    assert list(history.tags.list()) == ["first"]
    with pytest.raises(lancelet.NotFoundError, match="tag 'now' does not exist"):
        history.tags.delete("now")
    with pytest.raises(lancelet.InvalidArgumentError):
        history.tags.create("a..b", 1)
    with pytest.raises(lancelet.NotFoundError):
        history.tags.create("later", 99)


def test_a_tagged_version_survives_cleanup(history):
    history.tags.create("keep", 1)
    history.cleanup_old_versions(retain_versions=1, force=True)
    assert [v["version"] for v in history.versions()] == [1, 3]
    assert ids(history.checkout_version("keep")) == list(range(10))


@pytest.mark.skipif(IN_MEMORY, reason="pylance opens a copy on the local file system")
def test_as_pylance_on_a_copy(tmp_path):
    lance = need("lance")
    path = str(tmp_path / "t.lance")
    ds = lancelet.write_dataset({"id": list(range(10))}, path, max_rows_per_file=4)
    ds.delete("id < 3")
    ds.delete("id = 9")  # version 3
    shutil.copytree(path, tmp_path / "copy.lance")
    theirs = lance.dataset(str(tmp_path / "copy.lance"))
    ours = lancelet.dataset(path)
    for ds in (ours, theirs):
        ds.tags.create("first", 1)
        ds.tags.create("second", 2)
        ds.tags.update("second", 3)
        ds.tags.delete("first")
    ours_tags, their_tags = ours.tags.list(), theirs.tags.list()
    assert list(ours_tags) == list(their_tags) == ["second"]
    for key in ("branch", "version", "manifest_size", "metadata"):
        assert ours_tags["second"][key] == their_tags["second"][key], key
    # Each reads the other's tag files.
    assert lance.dataset(path, version="second").version == 3
    theirs.tags.create("theirs", 2)
    assert lancelet.dataset(str(tmp_path / "copy.lance"), version="theirs").count_rows() == 7
    mine = lancelet.dataset(path, version=1)
    mine.restore()
    their_old = theirs.checkout_version(1)
    their_old.restore()
    assert mine.version == their_old.version == 4
    assert ids(mine) == sorted(their_old.to_table(columns=["id"]).column("id").to_pylist()) == list(range(10))
    assert sorted(lance.dataset(path).to_table().to_pylist(), key=lambda r: r["id"]) == \
        sorted(lance.dataset(str(tmp_path / "copy.lance")).to_table().to_pylist(), key=lambda r: r["id"])
