"""Datasets on a second S3 implementation, s3rver (npm, installed beside the reference by
./run setup), on 127.0.0.1. It checks what moto lets pass: every Signature V4 request must
carry x-amz-content-sha256, as AWS S3 requires. It also differs from S3: it ignores
If-None-Match (commits need conditional_put=disabled there), cannot list multipart uploads
(cleanup has none to abort), answers a suffix range (bytes=-N) with the object's first
bytes (a reader must place a partial answer by its Content-Range), and lists no common
prefix for a directory holding only directories (so `lancelet sql --db` finds no tables
there; not tested)."""
import os
import subprocess
import time
import urllib.request

import pytest

from conftest import IN_MEMORY, REQUIRE_PACKAGES, SOURCE_DIR, need
from test_s3 import free_port, rows, write_and_read_with_pylance

import lancelet

pytestmark = pytest.mark.skipif(IN_MEMORY, reason="an S3 dataset is not a memory:// one")
S3RVER = os.path.join(SOURCE_DIR, "tests", "oracle", "node_modules", ".bin", "s3rver")


@pytest.fixture(scope="module")
def s3rver(tmp_path_factory):
    if not os.path.exists(S3RVER):
        message = f"s3rver is not installed ({S3RVER}; ./run setup installs it)"
        if REQUIRE_PACKAGES:
            pytest.fail(message)
        pytest.skip(message)
    port = free_port()
    data = tmp_path_factory.mktemp("s3rver")
    env = dict(os.environ)
    env.pop("LD_PRELOAD", None)  # the sanitizer runtime is for our module, not for node
    # s3rver's continuation tokens use a cipher that Node 17+ keeps behind this flag: a
    # truncated listing (a LIST with max-keys=1 over a directory) fails with HTTP 500.
    env["NODE_OPTIONS"] = "--openssl-legacy-provider"
    server = subprocess.Popen([S3RVER, "-d", str(data), "-a", "127.0.0.1", "-p", str(port), "--configure-bucket",
                               "bkt", "--silent"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(300):
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=1)
            break
        except urllib.error.HTTPError:
            break  # it answers
        except OSError:
            assert server.poll() is None, "s3rver exited"
            time.sleep(0.1)
    yield {"aws_endpoint": f"http://127.0.0.1:{port}", "allow_http": "true", "aws_region": "us-east-1",
           "aws_access_key_id": "S3RVER", "aws_secret_access_key": "S3RVER"}
    server.terminate()
    server.wait(timeout=10)


def test_a_commit_on_s3rver_is_refused_until_one_writer_is_promised(s3rver):
    pa = need("pyarrow")
    table = pa.table({"id": pa.array(range(10), pa.int64())})
    with pytest.raises(Exception, match="ignores conditional writes .* set the storage option conditional_put=disabled"):
        lancelet.write_dataset(table, "s3://bkt/refused.lance", storage_options=s3rver)
    with pytest.raises(Exception, match="not found|does not exist|no such"):
        lancelet.dataset("s3://bkt/refused.lance", storage_options=s3rver)


def test_lancelet_and_pylance_share_datasets_on_s3rver(s3rver, monkeypatch):
    """Every command's requests pass s3rver's checks (signed payload hash included), and
    pylance 14 reads what lancelet wrote there, overlay and index included, and the other
    way round."""
    pa, np = need("pyarrow"), need("numpy")
    lance = need("lance")
    options = {**s3rver, "conditional_put": "disabled"}
    uri = "s3://bkt/ours.lance"
    ds = write_and_read_with_pylance(uri, options, s3rver, monkeypatch)
    ds.optimize.compact_files()
    # s3rver lists no multipart uploads: cleanup finds none to abort, and goes on.
    removed = ds.cleanup_old_versions(retain_versions=1, force=True)
    assert removed["old_versions"] == ds.version - 1 and removed["files_removed"] > 0
    again = lancelet.dataset(uri, storage_options=options)
    assert again.count_rows() == 290 and rows(again.to_table()) == rows(ds.to_table())
    assert rows(lance.dataset(uri, storage_options=s3rver).to_table()) == rows(ds.to_table())

    # An IVF index's partition file is over 64 KiB: opened by a suffix range, which s3rver
    # answers with the file's head; the reader takes the bytes where Content-Range puts them.
    n, dim = 2000, 16
    vectors = pa.FixedSizeListArray.from_arrays(pa.array(np.random.default_rng(1).random(n * dim, dtype=np.float32)), dim)
    vds = lancelet.write_dataset(pa.table({"id": pa.array(range(n), pa.int64()), "v": vectors}), "s3://bkt/vectors.lance",
                                 storage_options=options)
    vds.create_index("v", "IVF_FLAT", num_partitions=4)
    query = np.asarray(vectors[123].values, dtype=np.float32)
    hits = lancelet.dataset("s3://bkt/vectors.lance", storage_options=options).search(query, k=1, columns=["id"],
                                                                                   nprobes=4)
    assert hits.to_pydict()["id"] == [123]

    by_them = "s3://bkt/theirs.lance"
    lance.write_dataset(pa.table({"id": pa.array(range(500), pa.int64()), "name": [f"n{i}" for i in range(500)]}),
                        by_them, max_rows_per_file=200, storage_options=s3rver)
    lance.dataset(by_them, storage_options=s3rver).delete("id % 3 = 0")
    ours = lancelet.dataset(by_them, storage_options=options)
    assert ours.count_rows() == 333
    assert rows(ours.to_table()) == rows(lance.dataset(by_them, storage_options=s3rver).to_table())
