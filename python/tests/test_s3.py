"""Datasets on S3 (moto's server mode on 127.0.0.1, started here): lancelet writes, pylance
14 reads, and the other way round, through the same storage_options."""
import json
import os
import socket
import subprocess
import sys
import time
import urllib.request

import pytest

from conftest import IN_MEMORY, SOURCE_DIR, jsonl, need

import lancelet

pytestmark = pytest.mark.skipif(IN_MEMORY, reason="an S3 dataset is not a memory:// one")
SERVER = os.path.join(SOURCE_DIR, "tests", "support", "s3_test_server.py")
PROXY = os.path.join(SOURCE_DIR, "tests", "support", "s3_proxy.py")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def s3(tmp_path_factory):
    need("moto")
    port = free_port()
    state = str(tmp_path_factory.mktemp("s3-server"))
    env = dict(os.environ)
    env.pop("LD_PRELOAD", None)  # the sanitizer runtime is for our module, not for the server
    subprocess.run([sys.executable, SERVER, "start", str(port), state, "bkt"], check=True, env=env,
                   capture_output=True)
    yield {"aws_endpoint": f"http://127.0.0.1:{port}", "allow_http": "true", "aws_region": "us-east-1",
           "aws_access_key_id": "testing", "aws_secret_access_key": "testing"}
    subprocess.run([sys.executable, SERVER, "stop", state], env=env)


def vectors(rows, dim):
    """Rows 0.. of `dim` float32s each, counting up: row r holds r*dim .. r*dim + dim - 1."""
    pa, np = need("pyarrow"), need("numpy")
    return pa.FixedSizeListArray.from_arrays(pa.array(np.arange(rows * dim, dtype=np.float32)), dim)


def rows(table):
    return sorted(zip(*(table.column(name).to_pylist() for name in table.column_names)))


def write_and_read_with_pylance(uri, ours, theirs, monkeypatch):
    """lancelet writes 300 rows at `uri` with `ours` storage options, overlays, deletes and
    indexes them; pylance, with `theirs`, reads the same rows, counts and index. Returns
    lancelet's dataset."""
    pa, lance = need("pyarrow"), need("lance")
    ds = lancelet.write_dataset(pa.table({"id": pa.array(range(300), pa.int64()),
                                          "qty": pa.array([i % 7 for i in range(300)], pa.int64())}),
                                uri, max_rows_per_file=100, storage_options=ours)
    ds.update({"qty": "qty + 100"}, where="id % 10 = 0")  # an overlay
    ds.delete("id >= 290")
    ds.create_scalar_index("qty", "BTREE")
    monkeypatch.setenv("LANCE_ENABLE_UNSTABLE_DATA_OVERLAY_FILES", "1")
    read = lance.dataset(uri, storage_options=theirs)
    assert read.count_rows() == 290
    assert rows(read.to_table()) == rows(ds.to_table())
    assert read.count_rows("qty = 100") == ds.count_rows("qty = 100") == 5  # ids 0, 70, ..., 280
    assert [i.name for i in read.describe_indices()] == [i["name"] for i in ds.list_indices()]
    return ds


def test_lancelet_writes_and_pylance_reads_on_s3(s3, monkeypatch):
    lance = need("lance")
    uri = "s3://bkt/ours.lance"
    ds = write_and_read_with_pylance(uri, s3, s3, monkeypatch)
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


class Proxy:
    """tests/support/s3_proxy.py in front of the server: counts requests, injects faults."""

    def __init__(self, upstream):
        self.port = free_port()
        env = dict(os.environ)
        env.pop("LD_PRELOAD", None)
        self.process = subprocess.Popen([sys.executable, PROXY, str(self.port), upstream], env=env,
                                        stdout=subprocess.DEVNULL)
        for _ in range(100):
            try:
                self.stats()
                return
            except OSError:
                time.sleep(0.1)
        raise RuntimeError("s3_proxy did not start")

    def call(self, path, post=False):
        req = urllib.request.Request(f"http://127.0.0.1:{self.port}/__proxy/{path}", data=b"" if post else None,
                                     method="POST" if post else "GET")
        return urllib.request.urlopen(req, timeout=10).read()

    def stats(self):
        return json.loads(self.call("stats"))

    def set(self, **faults):
        self.call("reset", post=True)
        if faults:
            self.call("set?" + "&".join(f"{k}={v}" for k, v in faults.items()), post=True)

    def log(self):
        return self.call("log").decode()


@pytest.fixture(scope="module")
def proxied(s3):
    proxy = Proxy(s3["aws_endpoint"])
    yield proxy, {**s3, "aws_endpoint": f"http://127.0.0.1:{proxy.port}"}
    proxy.process.kill()


def test_retries_ride_out_503s_and_bodies_cut_short(proxied):
    """Every third request answered 503 SlowDown and every fourth GET's body cut halfway:
    each operation retries what failed and gives the right answer."""
    pa = need("pyarrow")
    proxy, options = proxied
    proxy.set(fail_every=3, fail_status=503, drop_every=4)
    uri = "s3://bkt/faults.lance"
    ds = lancelet.write_dataset(pa.table({"id": pa.array(range(1000), pa.int64()),
                                          "qty": pa.array([i % 10 for i in range(1000)], pa.int64())}),
                                uri, max_rows_per_file=250, storage_options=options)
    ds.update({"qty": "qty + 100"}, where="id % 7 = 0")
    ds.delete("id >= 990")
    again = lancelet.dataset(uri, storage_options=options)
    assert again.version == 3
    assert again.count_rows() == 990
    assert again.count_rows("qty >= 100") == 142  # ids 0, 7, ..., 987
    assert sorted(again.to_table().column("id").to_pylist()) == list(range(990))
    log = proxy.log()
    assert "503(injected)" in log and "(cut)" in log  # the faults did happen
    proxy.set()


def test_a_commit_that_cannot_land_fails_in_one_line_and_changes_nothing(proxied):
    """Every PUT refused with 500 until the retries run out: the update fails naming the
    request and the object, and the dataset reads as before, at the same version."""
    pa = need("pyarrow")
    proxy, options = proxied
    uri = "s3://bkt/refused.lance"
    lancelet.write_dataset(pa.table({"id": pa.array(range(100), pa.int64()), "qty": pa.array([1] * 100, pa.int64())}),
                           uri, storage_options=options)
    impatient = {**options, "client_max_retries": "1"}
    ds = lancelet.dataset(uri, storage_options=impatient)
    proxy.set(fail_every=1, fail_status=500, fail_method="PUT")
    with pytest.raises(Exception) as failed:
        ds.update({"qty": "qty + 1"}, where="id < 10")
    message = str(failed.value)
    assert "\n" not in message
    assert "PUT 's3://bkt/refused.lance/" in message and "HTTP 500" in message, message
    proxy.set()
    after = lancelet.dataset(uri, storage_options=options)
    assert after.version == 1
    assert after.count_rows("qty = 1") == 100


def test_reads_are_merged_into_as_few_requests_as_the_reference_makes(proxied):
    """A take of scattered rows fetches the chunks that hold them in a few merged requests,
    not one per row (it was 527 GETs per file for 500 rows of 128-byte vectors)."""
    pa = need("pyarrow")
    proxy, options = proxied
    uri = "s3://bkt/vectors.lance"
    rows = 20_000
    lancelet.write_dataset(pa.table({"id": pa.array(range(rows), pa.int64()), "emb": vectors(rows, 32)}), uri,
                           storage_options=options)
    ds = lancelet.dataset(uri, storage_options=options)
    wanted = list(range(0, rows, 40))  # 500 rows, 5 KiB apart
    proxy.set()
    got = ds.take(wanted, columns=["emb"]).column("emb").to_pylist()
    assert got[3] == [float(x) for x in range(120 * 32, 121 * 32)]
    assert len(got) == 500
    gets = proxy.stats()["by_method"].get("GET", 0)
    assert gets <= 6, proxy.log()


def test_a_take_of_a_few_rows_asks_for_each_files_page_metadata_together(proxied):
    """A take of a row fetches the file's tail, then, in one merged request, the small
    buffers of the pages that hold it (chunk sizes, dictionaries) for all four columns,
    then the one chunk that merged request did not hold: 3 GETs. Each column asking for its
    own buffers, one after the other, made it 9. The merged request spans the small pages
    between the buffers (about 237 KB of a 6.6 MB file)."""
    pa = need("pyarrow")
    np = need("numpy")
    proxy, options = proxied
    uri = "s3://bkt/take_metadata.lance"
    n = 50_000
    rng = np.random.default_rng(5)
    table = pa.table({"id": pa.array(np.arange(n, dtype=np.int64)),
                      "qty": pa.array(rng.integers(0, 1000, n)),
                      "label": pa.array([f"label-{i % 997}" for i in range(n)]),
                      "emb": vectors(n, 32)})
    lance = need("lance")  # pylance's layout: every column's pages are large
    lance.write_dataset(table, uri, storage_options=options)
    ds = lancelet.dataset(uri, storage_options={**options, "lancelet_read_cache_size": "16000003"})  # a fresh store
    proxy.set()
    got = ds.take([20_000])
    assert got.to_pylist() == table.take([20_000]).to_pylist()
    stats = proxy.stats()
    assert stats["by_method"].get("GET", 0) == 3, proxy.log()
    assert stats["bytes_out"] < 400_000, proxy.log()
    proxy.set()


def test_a_partial_answer_that_starts_elsewhere_is_an_error_not_other_bytes(proxied):
    """A server that answers a range with other bytes (its Content-Range names them) makes
    the read fail in one line naming the object and the offset; the bytes are not used."""
    pa = need("pyarrow")
    proxy, options = proxied
    uri = "s3://bkt/shifted.lance"
    lancelet.write_dataset(pa.table({"id": pa.array(range(100_000), pa.int64())}), uri, storage_options=options)
    ds = lancelet.dataset(uri, storage_options={**options, "lancelet_read_cache_size": "16000004"})  # a fresh store
    proxy.set(shift_ranges=8)
    with pytest.raises(lancelet.IOError, match=r"GET 's3://bkt/shifted.lance/data/\w+.lance': bytes from offset \d+ "
                                               r"were asked for, the answer's Content-Range 'bytes \d+-\d+/\d+' "
                                               r"starts elsewhere"):
        ds.take([50_000])
    proxy.set()
    assert ds.take([50_000]).column("id").to_pylist() == [50_000]


def test_a_server_that_ignores_conditional_writes_is_refused_unless_one_writer_is_promised(proxied):
    """Behind a server that ignores If-None-Match two writers could both publish a version:
    the first commit probes for it and refuses, naming the option that promises a single
    writer; with conditional_put=disabled the commit lands."""
    pa = need("pyarrow")
    proxy, options = proxied
    table = pa.table({"id": pa.array(range(10), pa.int64())})
    # Options unlike any other test's, so that this store has not probed yet.
    ignoring = {**options, "client_max_retries": "2"}
    proxy.set(strip_conditional=1)
    with pytest.raises(Exception, match="ignores conditional writes .* set the storage option conditional_put=disabled"):
        lancelet.write_dataset(table, "s3://bkt/unguarded.lance", storage_options=ignoring)
    ds = lancelet.write_dataset(table, "s3://bkt/unguarded.lance", storage_options={**options, "conditional_put": "disabled"})
    assert ds.count_rows() == 10
    listing = urllib.request.urlopen(f"{options['aws_endpoint']}/bkt?list-type=2&prefix=unguarded.lance/").read()
    assert b"<Key>unguarded.lance/_versions/" in listing and b"conditional-put-probe" not in listing
    proxy.set()


KILLED_WRITER = """
import sys, lancelet, pyarrow as pa, numpy as np
options = dict(arg.split("=", 1) for arg in sys.argv[2:])
rows = 1_200_000  # 1.2M rows of 14 random floats: 67 MB, 13 parts of 5 MiB
emb = np.random.default_rng(1).random(rows * 14, dtype=np.float32)
table = pa.table({"id": pa.array(np.arange(rows, dtype=np.int64)),
                  "emb": pa.FixedSizeListArray.from_arrays(pa.array(emb), 14)})
lancelet.write_dataset(table, sys.argv[1], mode="append", storage_options=options)
"""


def test_a_writer_killed_mid_upload_changes_nothing_and_cleanup_aborts_its_upload(proxied, tmp_path):
    """SIGKILL while a data file's parts are going out: the dataset stays at its version,
    the unfinished upload holds the parts, and cleanup aborts it."""
    pa = need("pyarrow")
    need("numpy")
    proxy, options = proxied
    uri = "s3://bkt/killed.lance"
    small = pa.table({"id": pa.array(range(5), pa.int64()),
                      "emb": pa.FixedSizeListArray.from_arrays(pa.array([0.0] * 70, pa.float32()), 14)})
    lancelet.write_dataset(small, uri, storage_options=options)
    script = tmp_path / "writer.py"
    script.write_text(KILLED_WRITER)
    env = dict(os.environ)
    # LD_PRELOAD stays: the writer loads lancelet's module (the sanitizer runtime must come first)
    # Parts slow enough to be caught in flight: the kill lands seconds before the last part
    # (a request already with the proxy is still forwarded after it).
    proxy.set(latency_ms=200)
    writer = subprocess.Popen([sys.executable, str(script), uri, "lancelet_upload_part_size=5MiB",
                               *(f"{k}={v}" for k, v in options.items())], env=env)
    try:
        for _ in range(600):
            if "partNumber=2" in proxy.log() or writer.poll() is not None:
                break
            time.sleep(0.05)
        assert writer.poll() is None, "the writer ended before its second part"
        writer.kill()
        writer.wait()
    finally:
        proxy.set()
    uploads = urllib.request.urlopen(f"{options['aws_endpoint']}/bkt?uploads&prefix=killed.lance/").read()
    assert uploads.count(b"<Upload>") == 1, uploads
    ds = lancelet.dataset(uri, storage_options=options)
    assert ds.version == 1 and ds.count_rows() == 5
    proxy.set()
    stats = ds.cleanup_old_versions(retain_versions=1, delete_unverified=True, force=True)
    assert stats["uploads_aborted"] == 1, proxy.log()
    uploads = urllib.request.urlopen(f"{options['aws_endpoint']}/bkt?uploads&prefix=killed.lance/").read()
    assert b"<Upload>" not in uploads


def test_scans_and_takes_read_fragments_side_by_side(proxied):
    """On S3 a scan opens the next fragments' files together and a take reads its
    fragments together: with 50 ms per request, several requests are in flight at once."""
    pa = need("pyarrow")
    proxy, options = proxied
    uri = "s3://bkt/eight.lance"
    lancelet.write_dataset(pa.table({"id": pa.array(range(800), pa.int64())}), uri, max_rows_per_file=100,
                           storage_options=options)
    ds = lancelet.dataset(uri, storage_options={**options, "lancelet_read_cache_size": "0"})  # a store of its own
    proxy.set(latency_ms=50)
    assert ds.to_table().column("id").to_pylist() == list(range(800))
    assert proxy.stats()["max_in_flight"] >= 4, proxy.log()
    ds = lancelet.dataset(uri, storage_options={**options, "lancelet_read_cache_size": "1"})
    proxy.set(latency_ms=50)
    assert ds.take([5, 105, 205, 305, 405, 505, 605, 705]).column("id").to_pylist() == [5, 105, 205, 305, 405, 505,
                                                                                        605, 705]
    assert proxy.stats()["max_in_flight"] >= 4, proxy.log()
    proxy.set()


def test_a_scan_fetches_each_files_pages_in_one_request_beside_the_others(proxied):
    """A scan opens the files of the fragments ahead together and asks, in the same round,
    for the pages their first batch lies in: both columns' pages in one merged request per
    file: 4 footers and 4 page reads once the dataset is open, where the reference adds a
    round of page metadata."""
    pa = need("pyarrow")
    np = need("numpy")
    proxy, options = proxied
    uri = "s3://bkt/wide.lance"
    rng = np.random.default_rng(3)
    rows = 80_000
    table = pa.table({"id": pa.array(np.arange(rows, dtype=np.int64)),
                      "qty": pa.array(rng.integers(0, 1 << 60, rows, dtype=np.int64))})
    lancelet.write_dataset(table, uri, max_rows_per_file=20_000, storage_options=options)
    ds = lancelet.dataset(uri, storage_options={**options, "lancelet_read_cache_size": "16000001"})  # a fresh store
    proxy.set()
    got = ds.to_table()
    assert got.column("qty").to_pylist() == table.column("qty").to_pylist()
    assert proxy.stats()["by_method"].get("GET", 0) == 8, proxy.log()
    proxy.set()


def test_a_scan_reads_a_large_column_a_window_at_a_time(proxied):
    """A scan reads 16 MiB of rows at a time, not a request per batch: 100k rows of 64
    floats (25.6 MB) in 2 windows, the second fetched while the first is read."""
    pa = need("pyarrow")
    proxy, options = proxied
    uri = "s3://bkt/windows.lance"
    lancelet.write_dataset(pa.table({"emb": vectors(100_000, 64)}), uri, storage_options=options)
    ds = lancelet.dataset(uri, storage_options={**options, "lancelet_read_cache_size": "64000001"})  # a fresh store
    proxy.set()
    got = ds.to_table().column("emb")
    assert got[99_999].as_py() == [float(x) for x in range(99_999 * 64, 100_000 * 64)]
    gets = [line for line in proxy.log().splitlines() if line.startswith("GET ")]
    assert len(gets) == 3, gets  # the footer, then 65536 rows (16 MiB) and the 34464 after them
    proxy.set()


def test_small_files_of_a_commit_are_put_together(proxied):
    """A delete touching 4 fragments puts their deletion files side by side (each starts
    before the first one is answered, with 300 ms added to every request), and keeps no
    version hint on S3, as the reference."""
    pa = need("pyarrow")
    proxy, options = proxied
    uri = "s3://bkt/deletes.lance"
    lancelet.write_dataset(pa.table({"id": pa.array(range(400), pa.int64())}), uri, max_rows_per_file=100,
                           storage_options=options)
    ds = lancelet.dataset(uri, storage_options=options)
    proxy.set(latency_ms=300)
    ds.delete("id % 10 = 0")
    log = proxy.log()
    proxy.set()
    puts = [line for line in log.splitlines() if line.startswith("PUT ") and "/_deletions/" in line]
    assert len(puts) == 4, puts
    spans = [tuple(int(x) for x in line.rsplit("@", 1)[1].rstrip("ms").split("+")) for line in puts]
    first_answered = min(start + took for start, took in spans)
    assert all(start < first_answered for start, _ in spans), puts
    assert "latest_version_hint" not in log
    assert lancelet.dataset(uri, storage_options=options).count_rows() == 360


RACING_WRITER = """
import sys, lancelet, pyarrow as pa
uri, who = sys.argv[1], int(sys.argv[2])
options = dict(arg.split("=", 1) for arg in sys.argv[3:])
ds = lancelet.dataset(uri, storage_options=options)
for k in range(3):
    ds.update({"val": "val + 1"})  # reads every row's val: a conflict must re-read, not overwrite
    lancelet.write_dataset(pa.table({"id": pa.array([1000 + 10 * who + k], pa.int64()), "val": pa.array([-1], pa.int64())}),
                           uri, mode="append", storage_options=options)
"""


def test_four_processes_racing_on_s3_lose_no_commit(proxied, tmp_path):
    """Four processes each add 1 to every row three times and append three rows, at once,
    through conditional PUTs on the server: all 24 commits land, every increment counts."""
    pa = need("pyarrow")
    proxy, options = proxied
    uri = "s3://bkt/race.lance"
    lancelet.write_dataset(pa.table({"id": pa.array(range(100), pa.int64()), "val": pa.array([0] * 100, pa.int64())}),
                           uri, max_rows_per_file=50, storage_options=options)
    script = tmp_path / "racer.py"
    script.write_text(RACING_WRITER)
    env = dict(os.environ)
    # LD_PRELOAD stays: the racers load lancelet's module
    proxy.set(latency_ms=5)  # widens the window between a commit's read and its put
    racers = [subprocess.Popen([sys.executable, str(script), uri, str(who), *(f"{k}={v}" for k, v in options.items())],
                               env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for who in range(4)]
    outcomes = [r.communicate(timeout=600) for r in racers]
    raced = [line for line in proxy.log().splitlines() if "_versions/" in line and " 412 " in line]
    proxy.set()
    for r, (out, err) in zip(racers, outcomes):
        assert r.returncode == 0, err
    assert raced, "no commit found its version taken: the race did not happen"
    ds = lancelet.dataset(uri, storage_options=options)
    assert ds.version == 1 + 4 * 6
    table = ds.to_table()
    vals = dict(zip(table.column("id").to_pylist(), table.column("val").to_pylist()))
    assert len(vals) == 112
    assert all(vals[i] == 12 for i in range(100)), sorted(set(vals[i] for i in range(100)))
    # An appended row (val -1) gains 1 from each update that landed after it: at most the
    # 11 after its writer's first.
    assert all(-1 <= vals[1000 + 10 * who + k] <= 10 for who in range(4) for k in range(3))


def test_the_lance_12_reference_and_lancelet_read_each_others_s3_datasets(s3, oracle, tmp_path, monkeypatch):
    """The npm reference (lance 12.0.0) on the same server: it reads what lancelet wrote,
    overlay included, and lancelet reads what it wrote and updated."""
    pa = need("pyarrow")
    monkeypatch.setenv("LANCELET_ORACLE_STORAGE_OPTIONS", json.dumps(s3))
    ours = "s3://bkt/for12.lance"
    ds = lancelet.write_dataset(pa.table({"id": pa.array(range(300), pa.int64()),
                                          "name": [f"n{i}" for i in range(300)]}),
                                ours, max_rows_per_file=100, storage_options=s3)
    ds.update({"name": "'changed'"}, where="id % 50 = 0")  # an overlay
    ds.delete("id >= 290")
    assert oracle("count", ours).strip() == "290"
    assert sorted((r["id"], r["name"]) for r in jsonl(oracle("dump", ours))) == rows(ds.to_table())

    data = tmp_path / "gen.arrow"
    oracle("gen", data, "--rows", 300, "--seed", 3, "--types", "int64,utf8")
    theirs = "s3://bkt/by12.lance"
    oracle("create", theirs, "--data", data, "--max-rows-per-file", 100)
    oracle("update", theirs, "--where", "c_int64 % 3 = 0", "--set", "c_utf8='three'")
    expected = jsonl(oracle("dump", theirs))
    got = lancelet.dataset(theirs, storage_options=s3).to_table()
    assert got.num_rows == 300
    assert sorted(zip(got.column("c_int64").to_pylist(), got.column("c_utf8").to_pylist()), key=repr) == \
        sorted(((r["c_int64"], r["c_utf8"]) for r in expected), key=repr)
