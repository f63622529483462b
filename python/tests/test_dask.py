"""lancelet.dask on a LocalCluster of 2 worker processes: a dask.dataframe written one task
per partition and committed as one version, read back one partition per fragment."""
import pytest

import lancelet
from conftest import ANOTHER_PROCESS, IN_MEMORY, need

pytestmark = pytest.mark.skipif(IN_MEMORY, reason=ANOTHER_PROCESS.format("a Dask worker"))


@pytest.fixture(scope="module")
def client():
    need("dask")
    distributed = need("distributed")
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None)
    with distributed.Client(cluster) as c:
        yield c
    cluster.close()


def frame(first, rows, partitions):
    pd = need("pandas")
    np = need("numpy")
    dd = need("dask.dataframe")
    ids = np.arange(first, first + rows, dtype=np.int64)
    return dd.from_pandas(pd.DataFrame({"id": ids, "qty": ids % 97, "name": [f"n{i}" for i in ids]}),
                          npartitions=partitions)


def test_a_dataframe_written_by_two_workers_is_one_version_and_reads_back(client, tmp_path):
    import lancelet.dask
    uri = str(tmp_path / "dask.lance")
    version = lancelet.dask.write_dataset(frame(0, 100_000, 8), uri, max_rows_per_file=20_000)
    assert version == 1
    ds = lancelet.dataset(uri)
    assert ds.count_rows() == 100_000
    assert len(ds.get_fragments()) >= 8
    workers = {w["host"] + str(w["id"]) for w in client.scheduler_info()["workers"].values()}
    assert len(workers) == 2
    table = ds.to_table()
    assert sorted(table.column("id").to_pylist()) == list(range(100_000))
    assert ds.to_table(filter="id = 77777").to_pydict() == {"id": [77777], "qty": [77777 % 97], "name": ["n77777"]}

    assert lancelet.dask.write_dataset(frame(100_000, 1_000, 2), uri, mode="append") == 2
    back = lancelet.dask.read_dataset(uri, columns=["id", "qty"], filter="qty = 5")
    got = back.compute().sort_values("id")
    want = [i for i in range(101_000) if i % 97 == 5]
    assert got["id"].tolist() == want and set(got["qty"]) == {5}
    assert back.npartitions == len(lancelet.dataset(uri).get_fragments())

    lance = need("lance")
    assert lance.dataset(uri).count_rows() == 101_000  # pylance 14 reads what the cluster wrote

    with pytest.raises(lancelet.InvalidArgumentError, match="already exists"):
        lancelet.dask.write_dataset(frame(0, 10, 1), uri)
    assert lancelet.dataset(uri).version == 2


def test_a_distributed_update_writes_only_overlays_in_one_version(client, tmp_path, monkeypatch):
    """Each fragment's overlay is written by a task; one DataOverlay commit publishes them.
    The rows equal those of the same update run in one process on a copy, each fragment
    gains one overlay (none is rewritten), and pylance 14 reads the same values."""
    import lancelet.dask
    uri, copy = str(tmp_path / "upd.lance"), str(tmp_path / "serial.lance")
    for target in (uri, copy):
        lancelet.dask.write_dataset(frame(0, 50_000, 5), target, max_rows_per_file=10_000)
    version = lancelet.dask.update(uri, {"qty": "qty + 1000", "name": "upper(name)"}, where="id % 100 = 7")
    assert version == 2
    serial = lancelet.dataset(copy)
    serial.update({"qty": "qty + 1000", "name": "upper(name)"}, where="id % 100 = 7")
    ds = lancelet.dataset(uri)
    assert ds.to_table().to_pydict() == serial.to_table().to_pydict()
    assert [f.overlays for f in ds.get_fragments()] == [1, 1, 1, 1, 1]
    assert len(ds.get_fragments()) == 5
    assert ds.to_table(filter="id = 107").to_pydict() == {"id": [107], "qty": [107 % 97 + 1000], "name": ["N107"]}
    lance = need("lance")
    monkeypatch.setenv("LANCE_ENABLE_UNSTABLE_DATA_OVERLAY_FILES", "1")
    assert lance.dataset(uri).to_table().column("qty").to_pylist() == ds.to_table().column("qty").to_pylist()
    assert lancelet.dask.update(uri, {"qty": 0}, where="id < 0") == 2  # nothing matches: no version
