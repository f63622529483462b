#!/usr/bin/env python3
"""TPC-H at a scale factor through `lancelet sql` and through DuckDB, on the same data.

The tables come from tpchgen-cli (PyPI; DuckDB's own dbgen extension is downloaded from
extensions.duckdb.org, which this project's machines cannot reach), as CSV; lancelet
loads them with `lancelet create` into one dataset per table, DuckDB into an in-memory
database, with the same types (keys BIGINT, prices DOUBLE, dates DATE). Each of the 22
queries (bench/tpch/queries.sql) runs as a whole `lancelet sql` process and as a DuckDB
query at 1 thread and at every core; the results are compared (numbers within a relative
1e-6: the engines sum in different orders), and the medians printed side by side.

    .venv/bin/pip install tpchgen-cli
    .venv/bin/python bench/tpch.py --cli build/release/lancelet --sf 1 --work /tmp/tpch [--queries 1,6] [--repeats 3]
"""
import argparse
import math
import os
import re
import shutil
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "sqldiff"))
from duckdiff import normal, rows_of, sort_key  # noqa: E402

import duckdb  # noqa: E402
import pyarrow.ipc as ipc  # noqa: E402

# Each table's columns: name, lancelet type, DuckDB type.
I64, I32, F64, DATE, STR = ("int64", "BIGINT"), ("int32", "INTEGER"), ("float64", "DOUBLE"), ("date32", "DATE"), \
    ("utf8", "VARCHAR")
TABLES = {
    "region": [("r_regionkey", I64), ("r_name", STR), ("r_comment", STR)],
    "nation": [("n_nationkey", I64), ("n_name", STR), ("n_regionkey", I64), ("n_comment", STR)],
    "supplier": [("s_suppkey", I64), ("s_name", STR), ("s_address", STR), ("s_nationkey", I64), ("s_phone", STR),
                 ("s_acctbal", F64), ("s_comment", STR)],
    "customer": [("c_custkey", I64), ("c_name", STR), ("c_address", STR), ("c_nationkey", I64), ("c_phone", STR),
                 ("c_acctbal", F64), ("c_mktsegment", STR), ("c_comment", STR)],
    "part": [("p_partkey", I64), ("p_name", STR), ("p_mfgr", STR), ("p_brand", STR), ("p_type", STR),
             ("p_size", I32), ("p_container", STR), ("p_retailprice", F64), ("p_comment", STR)],
    "partsupp": [("ps_partkey", I64), ("ps_suppkey", I64), ("ps_availqty", I32), ("ps_supplycost", F64),
                 ("ps_comment", STR)],
    "orders": [("o_orderkey", I64), ("o_custkey", I64), ("o_orderstatus", STR), ("o_totalprice", F64),
               ("o_orderdate", DATE), ("o_orderpriority", STR), ("o_clerk", STR), ("o_shippriority", I32),
               ("o_comment", STR)],
    "lineitem": [("l_orderkey", I64), ("l_partkey", I64), ("l_suppkey", I64), ("l_linenumber", I32),
                 ("l_quantity", F64), ("l_extendedprice", F64), ("l_discount", F64), ("l_tax", F64),
                 ("l_returnflag", STR), ("l_linestatus", STR), ("l_shipdate", DATE), ("l_commitdate", DATE),
                 ("l_receiptdate", DATE), ("l_shipinstruct", STR), ("l_shipmode", STR), ("l_comment", STR)],
}


def queries():
    text = open(os.path.join(HERE, "tpch", "queries.sql")).read()
    parts = re.split(r"^-- q(\d\d)\n", text, flags=re.M)
    return {int(parts[i]): parts[i + 1].strip().rstrip(";") for i in range(1, len(parts), 2)}


def generate(work, sf):
    csv = os.path.join(work, "csv")
    if os.path.exists(os.path.join(csv, "lineitem.csv")):
        return csv
    tool = shutil.which("tpchgen-cli") or os.path.join(os.path.dirname(sys.executable), "tpchgen-cli")
    if not os.path.exists(tool):
        sys.exit("tpchgen-cli is missing: .venv/bin/pip install tpchgen-cli")
    subprocess.run([tool, "csv", "-s", str(sf), f"--output-dir={csv}"], check=True)
    return csv


def load_lancelet(cli, csv, db):
    os.makedirs(db, exist_ok=True)
    start = time.perf_counter()
    for table, columns in TABLES.items():
        target = os.path.join(db, f"{table}.lance")
        if os.path.exists(target):
            continue
        schema = ",".join(f"{name}:{types[0]}" for name, types in columns)
        subprocess.run([cli, "create", target, "--from", os.path.join(csv, f"{table}.csv"), "--schema", schema],
                       check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def load_duckdb(csv):
    con = duckdb.connect()
    start = time.perf_counter()
    for table, columns in TABLES.items():
        spec = "{" + ", ".join(f"'{name}': '{types[1]}'" for name, types in columns) + "}"
        con.sql(f"CREATE TABLE {table} AS SELECT * FROM read_csv('{os.path.join(csv, table + '.csv')}', "
                f"header=true, columns={spec})")
    return con, time.perf_counter() - start


def run_lancelet(cli, db, sql, timeout):
    start = time.perf_counter()
    try:
        p = subprocess.run([cli, "sql", "--db", db, "--format", "arrow", sql], capture_output=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, f"over {timeout} s", None
    seconds = time.perf_counter() - start
    if p.returncode != 0:
        lines = p.stderr.decode(errors="replace").strip().splitlines()
        return None, lines[0] if lines else f"exit status {p.returncode}", seconds
    return ipc.open_stream(p.stdout).read_all(), None, seconds


def run_duckdb(con, sql):
    start = time.perf_counter()
    table = con.sql(sql).to_arrow_table()
    return table, time.perf_counter() - start


def same(ours, theirs, ordered):
    """None when equal, else what differs (numbers within a relative 1e-6)."""
    if ours.num_columns != theirs.num_columns:
        return f"columns {ours.schema.names} / {theirs.schema.names}"
    a, b = rows_of(ours), rows_of(theirs)
    if len(a) != len(b):
        return f"{len(a)} rows / {len(b)}"

    def equal(x, y):
        x, y = normal(x), normal(y)
        if isinstance(x, (int, float)) and isinstance(y, (int, float)) and not isinstance(x, bool):
            return math.isclose(x, y, rel_tol=1e-6, abs_tol=1e-6)
        return x == y

    def rows_equal(p, q):
        return all(len(r) == len(s) and all(equal(x, y) for x, y in zip(r, s)) for r, s in zip(p, q))

    if rows_equal(a, b):
        return None
    if ordered and rows_equal(sorted(a, key=sort_key), sorted(b, key=sort_key)):
        return None  # ties ordered differently
    for r, s in zip(a, b):
        if not rows_equal([r], [s]):
            return f"row {r!r} / {s!r}"
    return "differ"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cli", required=True)
    parser.add_argument("--sf", type=float, default=1)
    parser.add_argument("--work", default="/tmp/lancelet_tpch")
    parser.add_argument("--queries", default="", help="comma-separated numbers (default: all 22)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--timeout", type=int, default=300, help="seconds a lancelet run may take")
    args = parser.parse_args()
    work = os.path.join(args.work, f"sf{args.sf:g}")
    csv = generate(work, args.sf)
    db = os.path.join(work, "db")
    lancelet_load = load_lancelet(os.path.abspath(args.cli), csv, db)
    con, duck_load = load_duckdb(csv)
    cores = os.cpu_count()
    print(f"TPC-H sf {args.sf:g}: loaded in {lancelet_load:.1f} s (lancelet create, 0 if kept) and "
          f"{duck_load:.1f} s (DuckDB {duckdb.__version__}); medians of {args.repeats}; {cores} cores")
    print(f"{'query':>5} {'lancelet s':>11} {'duckdb 1t s':>12} {f'duckdb {cores}t s':>12} {'vs 1t':>7}  result")
    wanted = [int(q) for q in args.queries.split(",")] if args.queries else sorted(queries())
    for number in wanted:
        sql = queries()[number]
        ours, error, times = None, None, []
        for _ in range(args.repeats):
            ours, error, seconds = run_lancelet(os.path.abspath(args.cli), db, sql, args.timeout)
            if error:
                break
            times.append(seconds)
        duck = {}
        for threads in (1, cores):
            con.sql(f"SET threads = {threads}")
            runs = [run_duckdb(con, sql) for _ in range(args.repeats)]
            duck[threads] = (runs[-1][0], statistics.median(t for _, t in runs))
        theirs = duck[1][0]
        if error:
            result, ours_s, ratio = f"lancelet: {error}", "-", "-"
        else:
            difference = same(ours, theirs, "ORDER BY" in sql.upper())
            result = "equal" if difference is None else f"DIFFER: {difference}"
            ours_s = f"{statistics.median(times):.3f}"
            ratio = f"{statistics.median(times) / duck[1][1]:.1f}x"
        print(f"{number:>5} {ours_s:>11} {duck[1][1]:>12.3f} {duck[cores][1]:>12.3f} {ratio:>7}  {result}",
              flush=True)


if __name__ == "__main__":
    main()
