"""Datasets on S3 (moto's server mode on 127.0.0.1, started here): lancelet writes, pylance
14 reads, and the other way round, through the same storage_options."""
import os
import socket
import subprocess
import sys

import pytest

from conftest import IN_MEMORY, SOURCE_DIR, need

import lancelet

pytestmark = pytest.mark.skipif(IN_MEMORY, reason="an S3 dataset is not a memory:// one")
SERVER = os.path.join(SOURCE_DIR, "tests", "support", "s3_test_server.py")


@pytest.fixture(scope="module")
def s3(tmp_path_factory):
    need("moto")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    state = str(tmp_path_factory.mktemp("s3-server"))
    env = dict(os.environ)
    env.pop("LD_PRELOAD", None)  # the sanitizer runtime is for our module, not for the server
    subprocess.run([sys.executable, SERVER, "start", str(port), state, "bkt"], check=True, env=env,
                   capture_output=True)
    yield {"aws_endpoint": f"http://127.0.0.1:{port}", "allow_http": "true", "aws_region": "us-east-1",
           "aws_access_key_id": "testing", "aws_secret_access_key": "testing"}
    subprocess.run([sys.executable, SERVER, "stop", state], env=env)


def rows(table):
    return sorted(zip(*(table.column(name).to_pylist() for name in table.column_names)))


def test_lancelet_writes_and_pylance_reads_on_s3(s3, monkeypatch):
    pa = need("pyarrow")
    lance = need("lance")
    uri = "s3://bkt/ours.lance"
    ds = lancelet.write_dataset(pa.table({"id": pa.array(range(300), pa.int64()),
                                          "qty": pa.array([i % 7 for i in range(300)], pa.int64())}),
                                uri, max_rows_per_file=100, storage_options=s3)
    ds.update({"qty": "qty + 100"}, where="id % 10 = 0")  # an overlay
    ds.delete("id >= 290")
    ds.create_scalar_index("qty", "BTREE")
    monkeypatch.setenv("LANCE_ENABLE_UNSTABLE_DATA_OVERLAY_FILES", "1")
    theirs = lance.dataset(uri, storage_options=s3)
    assert theirs.count_rows() == 290
    assert rows(theirs.to_table()) == rows(ds.to_table())
    assert theirs.count_rows("qty = 100") == ds.count_rows("qty = 100") == 5  # ids 0, 70, ..., 280
    assert [i.name for i in theirs.describe_indices()] == [i["name"] for i in ds.list_indices()]
    ds.optimize.compact_files()
    assert rows(lance.dataset(uri, storage_options=s3).to_table()) == rows(ds.to_table())


def test_pylance_writes_and_lancelet_reads_on_s3(s3):
    pa = need("pyarrow")
    lance = need("lance")
    uri = "s3://bkt/theirs.lance"
    table = pa.table({"id": pa.array(range(500), pa.int64()), "name": [f"n{i}" for i in range(500)]})
    lance.write_dataset(table, uri, max_rows_per_file=200, storage_options=s3)
    theirs = lance.dataset(uri, storage_options=s3)
    theirs.delete("id % 3 = 0")
    theirs.create_scalar_index("id", "BTREE")
    ours = lancelet.dataset(uri, storage_options=s3)
    assert ours.version == theirs.version
    assert ours.count_rows() == theirs.count_rows() == 333
    assert rows(ours.to_table()) == rows(theirs.to_table())
    assert ours.count_rows("id < 30") == 20
    # lancelet commits on pylance's dataset; pylance opens that version.
    ours.update({"name": "'changed'"}, where="id = 1")
    assert lance.dataset(uri, storage_options=s3).to_table(filter="id = 1").column("name").to_pylist() == ["changed"]


def test_storage_options_are_checked_and_credentials_stay_out_of_errors(s3):
    with pytest.raises(Exception, match="storage option 'acess_key_id' is not one the reference knows"):
        lancelet.dataset("s3://bkt/x.lance", storage_options={**s3, "acess_key_id": "nope"})
    with pytest.raises(Exception) as missing:
        lancelet.dataset("s3://bkt/missing.lance", storage_options={**s3, "aws_secret_access_key": "S3CR3T"})
    assert "s3://bkt/missing.lance" in str(missing.value)
    assert "S3CR3T" not in str(missing.value)
