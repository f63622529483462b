#!/usr/bin/env python3
"""lancelet against pylance 14: a second oracle, and the probe that compares the two.

Run it with an interpreter that has pylance 14.0.2 and pyarrow (README.md here):

    .venv/bin/python tests/oracle14/probe.py <command> [args]   # .venv: ./run setup

Single commands drive pylance on one dataset, shaped like tests/oracle/oracle.mjs:
output on stdout (JSON lines for rows), one line `probe: <message>` on stderr and exit
code 1 on failure. `matrix` runs every interop case in both directions against the
lancelet CLI (`--lancelet`, default build/release/lancelet) and prints one JSON line per
case: {"case", "dir", "ok", "detail", "repro"}.
"""

import argparse
import base64
import datetime
import decimal
import json
import math
import os
import shutil
import subprocess
import sys
import traceback

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

import lance

OVERLAY_ENV = "LANCE_ENABLE_UNSTABLE_DATA_OVERLAY_FILES"


class ProbeError(Exception):
    pass


# ---------------------------------------------------------------------------
# Data generation: every type lancelet writes, seeded, ~10% NULLs.
# ---------------------------------------------------------------------------

def _mask(rng, n, rate):
    return rng.random(n) < rate


def _opt(values, mask):
    return [None if m else v for v, m in zip(values, mask)]


def gen_table(rows, seed, file_version="2.2", null_rate=0.1, vector_dim=8):
    """A table with one column per type; structs keep non-NULL rows at 2.0 (the
    reference refuses NULL structs there), maps exist at 2.2 only."""
    rng = np.random.default_rng(seed)
    n = rows
    ids = pa.array(np.arange(n, dtype=np.int64))
    cols = {"id": ids}

    def ints(dtype, lo, hi):
        vals = rng.integers(lo, hi, size=n, endpoint=True).tolist()
        return pa.array(_opt(vals, _mask(rng, n, null_rate)), dtype)

    cols["c_int8"] = ints(pa.int8(), -128, 127)
    cols["c_int16"] = ints(pa.int16(), -32768, 32767)
    cols["c_int32"] = ints(pa.int32(), -(2**31), 2**31 - 1)
    cols["c_int64"] = ints(pa.int64(), -(2**62), 2**62)
    cols["c_uint8"] = ints(pa.uint8(), 0, 255)
    cols["c_uint16"] = ints(pa.uint16(), 0, 65535)
    cols["c_uint32"] = ints(pa.uint32(), 0, 2**32 - 1)
    cols["c_uint64"] = ints(pa.uint64(), 0, 2**63 - 1)
    f = rng.normal(size=n) * 1000
    cols["c_float16"] = pa.array(f.astype(np.float16), mask=_mask(rng, n, null_rate))
    cols["c_float32"] = pa.array(f.astype(np.float32), mask=_mask(rng, n, null_rate))
    cols["c_float64"] = pa.array(f, mask=_mask(rng, n, null_rate))
    words = ["", "a", "lance", "überschrift", "x" * 40, "tab\there", "日本語"]
    strs = [words[i] + str(i % 97) for i in rng.integers(0, len(words), size=n)]
    cols["c_utf8"] = pa.array(_opt(strs, _mask(rng, n, null_rate)), pa.utf8())
    cols["c_large_utf8"] = pa.array(_opt(strs[::-1], _mask(rng, n, null_rate)), pa.large_utf8())
    blobs = [bytes(rng.integers(0, 256, size=int(k)).astype(np.uint8)) for k in rng.integers(0, 24, size=n)]
    cols["c_binary"] = pa.array(_opt(blobs, _mask(rng, n, null_rate)), pa.binary())
    cols["c_large_binary"] = pa.array(_opt(blobs[::-1], _mask(rng, n, null_rate)), pa.large_binary())
    fsb = [bytes(rng.integers(0, 256, size=6).astype(np.uint8)) for _ in range(n)]
    cols["c_fsb6"] = pa.array(_opt(fsb, _mask(rng, n, null_rate)), pa.binary(6))
    cols["c_bool"] = pa.array(_opt(rng.random(n) < 0.5, _mask(rng, n, null_rate)), pa.bool_())
    days = rng.integers(-20000, 40000, size=n)
    cols["c_date32"] = pa.array(_opt(days.tolist(), _mask(rng, n, null_rate)), pa.int32()).cast(pa.date32())
    cols["c_date64"] = pa.array(_opt((days * 86400000).tolist(), _mask(rng, n, null_rate)), pa.int64()).cast(pa.date64())
    secs = rng.integers(-(2**33), 2**33, size=n)
    for unit, mul in (("s", 1), ("ms", 1000), ("us", 1000000), ("ns", 1000000000)):
        tz = "UTC" if unit in ("ms", "ns") else None
        vals = (secs * mul + rng.integers(0, mul, size=n)).tolist()
        name = f"c_ts_{unit}" + ("_utc" if tz else "")
        cols[name] = pa.array(_opt(vals, _mask(rng, n, null_rate)), pa.int64()).cast(pa.timestamp(unit, tz))
    cols["c_time32_ms"] = pa.array(_opt(rng.integers(0, 86400000, size=n).tolist(), _mask(rng, n, null_rate)),
                                   pa.int32()).cast(pa.time32("ms"))
    cols["c_time64_us"] = pa.array(_opt(rng.integers(0, 86400000000, size=n).tolist(), _mask(rng, n, null_rate)),
                                   pa.int64()).cast(pa.time64("us"))
    cols["c_duration_ns"] = pa.array(_opt(rng.integers(-(2**40), 2**40, size=n).tolist(), _mask(rng, n, null_rate)),
                                     pa.int64()).cast(pa.duration("ns"))
    decs = [decimal.Decimal(int(v)).scaleb(-2) for v in rng.integers(-(10**12), 10**12, size=n)]
    cols["c_decimal128"] = pa.array(_opt(decs, _mask(rng, n, null_rate)), pa.decimal128(15, 2))
    cols["c_decimal256"] = pa.array(_opt(decs, _mask(rng, n, null_rate)), pa.decimal256(40, 2))
    lists = [rng.integers(-5, 5, size=int(k)).tolist() for k in rng.integers(0, 5, size=n)]
    cols["c_list_int32"] = pa.array(_opt(lists, _mask(rng, n, null_rate)), pa.list_(pa.int32()))
    llists = [[strs[j] for j in range(int(k))] for k in rng.integers(0, 4, size=n)]
    cols["c_large_list_utf8"] = pa.array(_opt(llists, _mask(rng, n, null_rate)), pa.large_list(pa.utf8()))
    vecs = rng.normal(size=(n, vector_dim)).astype(np.float32)
    cols["vec"] = pa.FixedSizeListArray.from_arrays(pa.array(vecs.reshape(-1)), vector_dim,
                                                    mask=pa.array(_mask(rng, n, null_rate)))
    struct_mask = None if file_version == "2.0" else pa.array(_mask(rng, n, null_rate))
    cols["c_struct"] = pa.StructArray.from_arrays(
        [pa.array(_opt(rng.integers(0, 100, size=n).tolist(), _mask(rng, n, null_rate)), pa.int32()),
         pa.array(_opt(strs, _mask(rng, n, null_rate)), pa.utf8())],
        names=["a", "b"], mask=struct_mask)
    cats = ["red", "green", "blue", "cyan"]
    keys = pa.array(_opt(rng.integers(0, len(cats), size=n).tolist(), _mask(rng, n, null_rate)), pa.int8())
    cols["c_dict"] = pa.DictionaryArray.from_arrays(keys, pa.array(cats))
    if file_version not in ("2.0", "2.1"):
        entries = [[(strs[j], int(j)) for j in range(int(k))] for k in rng.integers(0, 3, size=n)]
        cols["c_map"] = pa.array(_opt(entries, _mask(rng, n, null_rate)), pa.map_(pa.utf8(), pa.int32()))
    return pa.table(cols)


# ---------------------------------------------------------------------------
# Canonical comparison of two tables (values, NULLs, NaN, types up to dictionary).
# ---------------------------------------------------------------------------

def undictionary(table):
    cols = []
    for col in table.columns:
        if pa.types.is_dictionary(col.type):
            col = col.cast(col.type.value_type)
        cols.append(col)
    return pa.table(cols, names=table.column_names)


def _same(a, b):
    if isinstance(a, float) and isinstance(b, float):
        return (math.isnan(a) and math.isnan(b)) or a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, tuple) and isinstance(b, tuple):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return a == b


def _plain(col):
    """Temporal columns as their integers, so that nanoseconds compare without pandas."""
    t = col.type
    if pa.types.is_timestamp(t) or pa.types.is_date64(t) or pa.types.is_duration(t) or pa.types.is_time64(t):
        return col.cast(pa.int64())
    if pa.types.is_time32(t) or pa.types.is_date32(t):
        return col.cast(pa.int32())
    return col


def compare_tables(expected, actual, sort_key=None, check_types=True):
    """None when equal, else a one-line description of the first difference."""
    expected, actual = undictionary(expected), undictionary(actual)
    if expected.column_names != actual.column_names:
        return f"columns differ: {expected.column_names} vs {actual.column_names}"
    if expected.num_rows != actual.num_rows:
        return f"row counts differ: {expected.num_rows} vs {actual.num_rows}"
    if sort_key:
        expected = expected.sort_by(sort_key)
        actual = actual.sort_by(sort_key)
    for name in expected.column_names:
        te, ta = expected.schema.field(name).type, actual.schema.field(name).type
        if check_types and te != ta:
            return f"column {name}: type {te} vs {ta}"
        if expected.column(name).equals(actual.column(name)):
            continue
        ve, va = _plain(expected.column(name)).to_pylist(), _plain(actual.column(name)).to_pylist()
        for i, (x, y) in enumerate(zip(ve, va)):
            if not _same(x, y):
                return f"column {name} row {i}: {x!r} vs {y!r}"
    return None


# ---------------------------------------------------------------------------
# JSON output of rows (the npm oracle's canonical format, close enough to diff).
# ---------------------------------------------------------------------------

def _json_value(v):
    if isinstance(v, float):
        if math.isnan(v):
            return "NaN"
        if math.isinf(v):
            return "Infinity" if v > 0 else "-Infinity"
        return v
    if isinstance(v, (bytes, bytearray)):
        return base64.b64encode(v).decode()
    if isinstance(v, decimal.Decimal):
        return str(v)
    if isinstance(v, (datetime.datetime, datetime.date, datetime.time)):
        return v.isoformat()
    if isinstance(v, datetime.timedelta):
        return str(v)
    if isinstance(v, dict):
        return {k: _json_value(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_json_value(x) for x in v]
    if isinstance(v, np.generic):
        return v.item()
    return v


def print_rows(table):
    for row in undictionary(table).to_pylist():
        print(json.dumps({k: _json_value(v) for k, v in row.items()}, ensure_ascii=False))


# ---------------------------------------------------------------------------
# Single commands (pylance side).
# ---------------------------------------------------------------------------

def open_ds(path, version=None):
    if version is not None and str(version).isdigit():
        version = int(version)
    return lance.dataset(path, version=version)


def read_arrow(path):
    """An Arrow IPC file or stream, copied into fresh buffers: IPC bodies are 8-byte
    aligned, and pylance 14 panics on a decimal128 buffer that is not 16-byte aligned."""
    with open(path, "rb") as f:
        head = f.read(6)
    table = pa.ipc.open_file(path).read_all() if head == b"ARROW1" else pa.ipc.open_stream(path).read_all()
    return table.take(pa.array(np.arange(table.num_rows, dtype=np.int64)))


def cmd_write(a):
    data = read_arrow(a.data)
    lance.write_dataset(data, a.dir, mode=a.mode, data_storage_version=a.file_version,
                        max_rows_per_file=a.max_rows_per_file or 1024 * 1024,
                        enable_stable_row_ids=a.stable_row_ids)


def _scanner_args(a):
    kw = {}
    if getattr(a, "columns", None):
        kw["columns"] = a.columns.split(",")
    if getattr(a, "where", None):
        kw["filter"] = a.where
    if getattr(a, "limit", None):
        kw["limit"] = int(a.limit)
    if getattr(a, "with_rowid", False):
        kw["with_row_id"] = True
    if getattr(a, "with_rowaddr", False):
        kw["with_row_address"] = True
    return kw


def cmd_scan(a):
    table = open_ds(a.dir, a.version).to_table(**_scanner_args(a))
    if a.format == "arrow":
        sink = pa.BufferOutputStream()
        with pa.ipc.new_stream(sink, table.schema) as w:
            w.write_table(table)
        sys.stdout.buffer.write(sink.getvalue().to_pybytes())
    else:
        print_rows(table)


def cmd_count(a):
    print(open_ds(a.dir, a.version).count_rows(filter=a.where))


def cmd_schema(a):
    schema = open_ds(a.dir, a.version).schema
    print(json.dumps({"fields": [{"name": f.name, "type": str(f.type), "nullable": f.nullable}
                                 for f in schema]}))


def cmd_versions(a):
    for v in open_ds(a.dir).versions():
        print(json.dumps({"version": v["version"]}))


def index_rows(ds):
    rows = []
    for d in ds.describe_indices():
        rows.append({"name": d.name, "type": d.index_type, "fields": list(d.field_names),
                     "segments": len(d.segments), "rows_indexed": d.num_rows_indexed})
    return rows


def cmd_indices(a):
    for row in index_rows(open_ds(a.dir, a.version)):
        print(json.dumps(row))


def cmd_info(a):
    ds = open_ds(a.dir, a.version)
    out = {"version": ds.version, "latest_version": ds.latest_version,
           "data_storage_version": ds.data_storage_version, "rows": ds.count_rows(),
           "fragments": len(ds.get_fragments()), "config": dict(ds.config()) if hasattr(ds, "config") else None,
           "tags": {k: v["version"] for k, v in ds.tags.list().items()}}
    print(json.dumps(out))


def _query_vector(text):
    return np.array(json.loads(text), dtype=np.float32)


def nearest_args(a):
    nn = {"column": a.column, "q": _query_vector(a.vector), "k": a.k}
    if a.nprobes:
        nn["nprobes"] = a.nprobes
    if a.refine:
        nn["refine_factor"] = a.refine
    if a.distance:
        nn["metric"] = a.distance
    if a.exact:
        nn["use_index"] = False
    return nn


def cmd_search(a):
    ds = open_ds(a.dir, a.version)
    kw = {"nearest": nearest_args(a)}
    if a.where:
        kw["filter"] = a.where
        kw["prefilter"] = not a.postfilter
    if a.columns:
        kw["columns"] = a.columns.split(",")
    if a.explain:
        print(ds.scanner(**kw).explain_plan(verbose=True))
        return
    table = ds.to_table(**kw)
    print_rows(table)


def cmd_explain(a):
    print(open_ds(a.dir, a.version).scanner(**_scanner_args(a)).explain_plan(verbose=True))


def cmd_update(a):
    updates = {}
    for s in a.set:
        k, v = s.split("=", 1)
        updates[k.strip()] = v.strip()
    print(json.dumps(open_ds(a.dir).update(updates, where=a.where)))


def cmd_delete(a):
    open_ds(a.dir).delete(a.where)


def cmd_merge_insert(a):
    source = read_arrow(a.data)
    b = open_ds(a.dir).merge_insert(a.on.split(","))
    b = b.when_matched_update_all().when_not_matched_insert_all()
    if a.delete_not_matched_by_source:
        b = b.when_not_matched_by_source_delete()
    print(json.dumps(b.execute(source)))


def cmd_optimize(a):
    ds = open_ds(a.dir)
    metrics = ds.optimize.compact_files()
    if a.indices:
        ds.optimize.optimize_indices()
    print(json.dumps({"fragments_removed": metrics.fragments_removed,
                      "fragments_added": metrics.fragments_added}))


def cmd_add_columns(a):
    exprs = {}
    for e in a.expr:
        k, v = e.split("=", 1)
        exprs[k.strip()] = v.strip()
    open_ds(a.dir).add_columns(exprs)


def cmd_drop_columns(a):
    open_ds(a.dir).drop_columns(a.columns.split(","))


def cmd_alter_columns(a):
    alts = []
    for r in a.rename or []:
        p, n = r.split("=", 1)
        alts.append({"path": p, "name": n})
    for c in a.cast or []:
        p, t = c.split("=", 1)
        alts.append({"path": p, "data_type": pa.type_for_alias(t)})
    for p in a.nullable or []:
        alts.append({"path": p, "nullable": True})
    open_ds(a.dir).alter_columns(*alts)


def cmd_create_index(a):
    ds = open_ds(a.dir)
    kind = a.type.upper()
    if kind.startswith("IVF") or kind.startswith("HNSW"):
        kw = {"metric": a.distance or "l2"}
        if a.partitions:
            kw["num_partitions"] = a.partitions
        if a.sub_vectors:
            kw["num_sub_vectors"] = a.sub_vectors
        ds.create_index(a.column, kind, name=a.name, **kw)
    else:
        ds.create_scalar_index(a.column, kind, name=a.name)


def cmd_tag(a):
    ds = open_ds(a.dir)
    if a.action == "create":
        ds.tags.create(a.name, int(a.version))
    elif a.action == "delete":
        ds.tags.delete(a.name)
    for k, v in ds.tags.list().items():
        print(json.dumps({"tag": k, "version": v["version"]}))


def cmd_cleanup(a):
    stats = open_ds(a.dir).cleanup_old_versions(older_than=datetime.timedelta(seconds=0),
                                                delete_unverified=True)
    print(json.dumps({"old_versions": stats.old_versions, "bytes_removed": stats.bytes_removed}))


def cmd_gen(a):
    table = gen_table(a.rows, a.seed, a.file_version, a.null_rate, a.dim)
    if a.columns:
        table = table.select(a.columns.split(","))
    with pa.ipc.new_file(a.out, table.schema) as w:
        w.write_table(table)


def build_parser():
    p = argparse.ArgumentParser(prog="probe.py")
    sub = p.add_subparsers(dest="command", required=True)

    def dataset_cmd(name, fn, version=True):
        s = sub.add_parser(name)
        s.add_argument("dir")
        if version:
            s.add_argument("--version")
        s.set_defaults(fn=fn)
        return s

    s = dataset_cmd("write", cmd_write, version=False)
    s.add_argument("--data", required=True)
    s.add_argument("--file-version")
    s.add_argument("--max-rows-per-file", type=int)
    s.add_argument("--stable-row-ids", action="store_true")
    s.add_argument("--mode", default="create", choices=["create", "append", "overwrite"])
    for name, fn in (("scan", cmd_scan), ("explain", cmd_explain)):
        s = dataset_cmd(name, fn)
        s.add_argument("--columns")
        s.add_argument("--where")
        s.add_argument("--limit")
        s.add_argument("--with-rowid", action="store_true")
        s.add_argument("--with-rowaddr", action="store_true")
        s.add_argument("--format", default="jsonl", choices=["jsonl", "arrow"])
    s = dataset_cmd("count", cmd_count)
    s.add_argument("--where")
    dataset_cmd("schema", cmd_schema)
    dataset_cmd("versions", cmd_versions, version=False)
    dataset_cmd("indices", cmd_indices)
    dataset_cmd("info", cmd_info)
    s = dataset_cmd("search", cmd_search)
    s.add_argument("--vector", required=True)
    s.add_argument("--column", default="vec")
    s.add_argument("-k", "--k", type=int, default=10)
    s.add_argument("--nprobes", type=int)
    s.add_argument("--refine", type=int)
    s.add_argument("--distance")
    s.add_argument("--where")
    s.add_argument("--postfilter", action="store_true")
    s.add_argument("--columns")
    s.add_argument("--exact", action="store_true")
    s.add_argument("--explain", action="store_true")
    s = dataset_cmd("update", cmd_update, version=False)
    s.add_argument("--set", action="append", required=True)
    s.add_argument("--where")
    s = dataset_cmd("delete", cmd_delete, version=False)
    s.add_argument("--where", required=True)
    s = dataset_cmd("merge-insert", cmd_merge_insert, version=False)
    s.add_argument("--on", required=True)
    s.add_argument("--data", required=True)
    s.add_argument("--delete-not-matched-by-source", action="store_true")
    s = dataset_cmd("optimize", cmd_optimize, version=False)
    s.add_argument("--indices", action="store_true")
    s = dataset_cmd("add-columns", cmd_add_columns, version=False)
    s.add_argument("--expr", action="append", required=True)
    s = dataset_cmd("drop-columns", cmd_drop_columns, version=False)
    s.add_argument("--columns", required=True)
    s = dataset_cmd("alter-columns", cmd_alter_columns, version=False)
    s.add_argument("--rename", action="append")
    s.add_argument("--cast", action="append")
    s.add_argument("--nullable", action="append")
    s = dataset_cmd("create-index", cmd_create_index, version=False)
    s.add_argument("column")
    s.add_argument("--type", default="BTREE")
    s.add_argument("--name")
    s.add_argument("--partitions", type=int)
    s.add_argument("--sub-vectors", type=int)
    s.add_argument("--distance")
    s = dataset_cmd("tag", cmd_tag, version=False)
    s.add_argument("action", choices=["create", "delete", "list"])
    s.add_argument("name", nargs="?")
    s.add_argument("tag_version", nargs="?")
    dataset_cmd("cleanup", cmd_cleanup, version=False)
    s = sub.add_parser("gen")
    s.add_argument("out")
    s.add_argument("--rows", type=int, default=200)
    s.add_argument("--seed", type=int, default=1)
    s.add_argument("--file-version", default="2.2")
    s.add_argument("--null-rate", type=float, default=0.1)
    s.add_argument("--dim", type=int, default=8)
    s.add_argument("--columns")
    s.set_defaults(fn=cmd_gen)
    s = sub.add_parser("matrix")
    s.add_argument("--workdir", default="/tmp/oracle14-matrix")
    s.add_argument("--lancelet", default=os.path.join(os.path.dirname(__file__), "../../build/release/lancelet"))
    s.add_argument("--only", help="comma-separated case-name prefixes")
    s.set_defaults(fn=None)
    return p


def main(argv):
    args = build_parser().parse_args(argv)
    if args.command == "tag":
        args.version = args.tag_version
    try:
        if args.command == "matrix":
            import matrix  # noqa: E402 (tests/oracle14/matrix.py, beside this file)
            return matrix.run(args)
        args.fn(args)
    except (ProbeError, OSError, ValueError, RuntimeError, TypeError, KeyError) as e:
        msg = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        print(f"probe: {msg}", file=sys.stderr)
        if os.environ.get("PROBE_TRACE"):
            traceback.print_exc()
        return 1
    return 0


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    sys.exit(main(sys.argv[1:]))
