"""lancelet beside the reference (pylance) on an S3 server: requests, bytes and wall time per
operation, counted by tests/support/s3_proxy.py in front of moto.

    .venv/bin/python bench/s3_compare.py [--rows 200000] [--repeats 3] [--latency-ms 20]

The reference writes the table (ROWS rows in 4 files: id, qty, label, emb float32x32) and
a BTree index on id; both tools then run each operation in a fresh process (open
included): count, scan of one column, take of 10 random rows, a filtered scan the index
serves, and an update of 1% of one column (each tool on its own copy, written afresh for
every run). Printed: requests and bytes read per operation, with the ratio
lancelet/reference, then the median wall time of REPEATS runs behind a proxy adding
LATENCY_MS to every request."""
import argparse
import contextlib
import json
import os
import socket
import statistics
import subprocess
import sys
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
SUPPORT = os.path.join(HERE, "..", "tests", "support")
OPS = ["count", "scan_qty", "take10", "index_filter", "update_1pct"]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def proxy(port, path, data=None):
    req = urllib.request.Request(f"http://127.0.0.1:{port}/__proxy/{path}", data=data,
                                 method="POST" if data is not None else "GET")
    return urllib.request.urlopen(req).read()


def options(port):
    return {"aws_endpoint": f"http://127.0.0.1:{port}", "allow_http": "true", "aws_region": "us-east-1",
            "aws_access_key_id": "testing", "aws_secret_access_key": "testing"}


def child(tool, op, uri, port):
    """Runs one operation in this process; prints the seconds it took."""
    os.environ["LANCE_ENABLE_UNSTABLE_DATA_OVERLAY_FILES"] = "1"
    if tool == "lancelet":
        import lancelet as lib
        open_ds = lambda: lib.dataset(uri, storage_options=options(port))  # noqa: E731
    else:
        import lance as lib
        open_ds = lambda: lib.dataset(uri, storage_options=options(port))  # noqa: E731
    import pyarrow  # noqa: F401  (imported before the clock starts, as by both tools)
    start = time.perf_counter()
    ds = open_ds()
    if op == "count":
        n = ds.count_rows()
    elif op == "scan_qty":
        n = ds.to_table(columns=["qty"]).num_rows
    elif op == "take10":
        n = ds.take([7, 4_321, 20_000, 51_234, 77_777, 99_999, 123_456, 150_001, 170_000, 199_998]).num_rows
    elif op == "index_filter":
        n = ds.to_table(filter="id = 123456").num_rows
    elif op == "update_1pct":
        ds.update({"qty": "qty + 1"}, where="id % 100 = 0")
        n = 0
    print(json.dumps({"seconds": time.perf_counter() - start, "rows": n}))


def write_table(uri, port, rows):
    import lance
    import numpy as np
    import pyarrow as pa
    rng = np.random.default_rng(7)
    table = pa.table({
        "id": pa.array(np.arange(rows, dtype=np.int64)),
        "qty": pa.array(rng.integers(0, 1000, rows)),
        "label": pa.array([f"label-{i % 997}" for i in range(rows)]),
        "emb": pa.FixedSizeListArray.from_arrays(pa.array(rng.random(rows * 32, dtype=np.float32)), 32),
    })
    ds = lance.write_dataset(table, uri, max_rows_per_file=rows // 4, mode="overwrite", storage_options=options(port))
    ds.create_scalar_index("id", "BTREE")


@contextlib.contextmanager
def moto_behind_proxy(state):
    """moto with a bucket 'bench' (its state in STATE) behind tests/support/s3_proxy.py;
    yields the proxy's port, and stops both after."""
    moto, port = free_port(), free_port()
    server = os.path.join(SUPPORT, "s3_test_server.py")
    subprocess.run([sys.executable, server, "start", str(moto), state, "bench"], check=True, capture_output=True)
    px = subprocess.Popen([sys.executable, os.path.join(SUPPORT, "s3_proxy.py"), str(port), f"http://127.0.0.1:{moto}"],
                          stdout=subprocess.DEVNULL)
    try:
        for _ in range(100):
            try:
                proxy(port, "stats")
                break
            except OSError:
                time.sleep(0.1)
        yield port
    finally:
        px.kill()
        subprocess.run([sys.executable, server, "stop", state])


def run_child(script, *args):
    """Runs `script child ARGS...` in a fresh process; returns the JSON it printed last."""
    done = subprocess.run([sys.executable, script, "child", *map(str, args)], capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"{' '.join(map(str, args))} failed:\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def run(tool, op, uri, port):
    return run_child(__file__, tool, op, uri, port)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=200_000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--latency-ms", type=int, default=20)
    ap.add_argument("--log", help="write each operation's request log here")
    args = ap.parse_args()

    work = os.path.join(os.environ.get("TMPDIR", "/tmp"), f"s3_compare.{os.getpid()}")
    with moto_behind_proxy(work) as port:
        table = "s3://bench/table.lance"
        write_table(table, port, args.rows)
        logs = []

        def measure(tool, op):
            uri = table
            if op == "update_1pct":
                uri = f"s3://bench/{tool}-copy.lance"
                proxy(port, "set?latency_ms=0", b"")
                write_table(uri, port, args.rows)
            proxy(port, "reset", b"")
            proxy(port, f"set?latency_ms={latency}", b"")
            result = run(tool, op, uri, port)
            stats = json.loads(proxy(port, "stats"))
            logs.append(f"== {tool} {op} (latency {latency} ms)\n" + proxy(port, "log").decode())
            return result, stats

        print(f"{args.rows} rows in 4 files; requests and bytes read per operation (fresh process, open included)")
        print(f"{'operation':<14}{'lancelet req':>13}{'reference req':>14}{'ratio':>7}"
              f"{'lancelet MB':>13}{'reference MB':>14}{'ratio':>7}")
        latency = 0
        for op in OPS:
            _, ours = measure("lancelet", op)
            _, theirs = measure("pylance", op)
            print(f"{op:<14}{ours['requests']:>13}{theirs['requests']:>14}{ours['requests'] / theirs['requests']:>7.2f}"
                  f"{ours['bytes_out'] / 1e6:>13.3f}{theirs['bytes_out'] / 1e6:>14.3f}"
                  f"{ours['bytes_out'] / max(theirs['bytes_out'], 1):>7.2f}")

        latency = args.latency_ms
        print(f"\nwall seconds with {latency} ms per request, median of {args.repeats} (ratio reference/lancelet)")
        for op in OPS:
            ours = statistics.median(measure("lancelet", op)[0]["seconds"] for _ in range(args.repeats))
            theirs = statistics.median(measure("pylance", op)[0]["seconds"] for _ in range(args.repeats))
            print(f"{op:<14}{ours:>10.3f}{theirs:>10.3f}{theirs / ours:>7.2f}x")
        if args.log:
            open(args.log, "w").write("\n".join(logs))


if __name__ == "__main__":
    if sys.argv[1:2] == ["child"]:
        child(sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]))
    else:
        main()
