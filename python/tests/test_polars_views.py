"""polars hands its strings over as Arrow string_view / binary_view; without pyarrow,
lancelet's C stream import takes them itself (large_utf8 / large_binary)."""
import pytest

import lancelet
import lancelet._ingest
from conftest import need


@pytest.fixture
def no_pyarrow(monkeypatch):
    monkeypatch.setattr(lancelet._ingest, "pyarrow_or_none", lambda: None)
    monkeypatch.setattr(lancelet, "_pyarrow", lambda: None)


def test_a_polars_frame_with_strings_is_written_without_pyarrow(tmp_path, no_pyarrow):
    pl = need("polars")
    words = ["a", None, "exactly12byt", "a string longer than twelve bytes", "", "thirteen-byte"] * 3000
    blobs = [b"\x00\x01", None, b"x" * 40] * 6000
    frame = pl.DataFrame({"id": list(range(18000)), "s": words, "b": blobs})
    ds = lancelet.write_dataset(frame.slice(3, 17000), tmp_path / "p.lance", max_rows_per_file=5000)
    assert repr(ds.lance_schema) == "lancelet.Schema(id:int64, s:large_utf8, b:large_binary)"
    got = ds.scanner().read_all().to_pydict()
    assert got["id"] == list(range(3, 17003))
    assert got["s"] == words[3:17003]
    assert got["b"] == blobs[3:17003]
    ds = lancelet.write_dataset(pl.DataFrame({"id": [99], "s": ["tail"], "b": [b"t"]}), tmp_path / "p.lance",
                                mode="append")
    assert ds.count_rows() == 17001
