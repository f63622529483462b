#!/usr/bin/env python3
"""DuckDB as a second SQL oracle: seeded tables, generated queries, results compared.

The same seeded tables (t1, t2, t3, and cp: every code point past ASCII) are written as
lancelet datasets (Arrow IPC through `lancelet create`) and loaded into an in-memory DuckDB. Every generated query runs through
`lancelet sql --format arrow` (one process a query) and through DuckDB's Python API,
and the two results must agree:

- rows in order when the query's ORDER BY is total (every ORDER BY the generator writes
  ends with a unique key), as multisets otherwise;
- numbers by value (an int64 sum equals DuckDB's HUGEINT / DECIMAL one), floats within a
  relative tolerance of 1e-9 (absolute near zero), NaN equal to NaN; NULL equals NULL; a
  bool never equals a number; strings, dates and timestamps exactly;
- a query both refuse agrees; one refused by one side only is a difference.

Column names are not compared: every select item is aliased. The generator leaves out
what docs/sql.md lists as divergences (integer `/`, decimal literals, LIKE's escape,
...), so a clean run has no difference. Exit status 1 when any query differs; each difference is printed with
both results.

    duckdiff.py --cli build/release/lancelet [--seed 44] [--queries 400] [--workdir DIR]
"""

import argparse
import concurrent.futures
import datetime
import decimal
import math
import os
import random
import shutil
import subprocess
import sys
import tempfile

try:
    import duckdb
    import pyarrow as pa
    import pyarrow.ipc as ipc
except ImportError as missing:  # ctest reads 77 as skipped (SKIP_RETURN_CODE)
    if os.environ.get("LANCELET_TEST_REQUIRE_PACKAGES") == "1":
        sys.exit(f"{missing}: the test environment (.venv from python/requirements-test.txt) must have it")
    print(f"skipped: {missing} (the test environment of python/requirements-test.txt has it)")
    sys.exit(77)

# ---------------------------------------------------------------------------------------
# Tables

STRINGS = ["", "a", "abc", "Hello", "hello", "MiXeD Case", "  padded  ", "x%y", "a_b",
           "héllo wörld", "日本語テキスト", "emoji 😀!", "banana", "apple pie", "zeta", "Ωmega"]


def maybe(rng, p_null, value):
    return None if rng.random() < p_null else value


def random_date(rng):
    # 1960..2040 and the leap days, so that extract and date_trunc meet month and year ends.
    if rng.random() < 0.1:
        return datetime.date(rng.choice([1996, 2000, 2024]), 2, 29)
    return datetime.date(1960, 1, 1) + datetime.timedelta(days=rng.randrange(0, 80 * 365))


def random_timestamp(rng):
    day = random_date(rng)
    return datetime.datetime(day.year, day.month, day.day, rng.randrange(24), rng.randrange(60),
                             rng.randrange(60), rng.choice([0, 0, 500000, rng.randrange(1000000)]))


def random_double(rng):
    # NaN (above every number and equal to itself, in both engines), infinities and -0.0
    # among ordinary values.
    special = rng.random()
    if special < 0.02:
        return math.nan
    if special < 0.03:
        return rng.choice([math.inf, -math.inf])
    if special < 0.05:
        return rng.choice([0.0, -0.0])
    return round(rng.uniform(-1000, 1000), 2)


def make_tables(rng, seed):
    n1, n2 = 240, 90
    t1 = {
        "id": list(range(1, n1 + 1)),
        "a": [maybe(rng, 0.15, rng.randint(-50, 50)) for _ in range(n1)],
        "b": [maybe(rng, 0.1, rng.randint(-10**12, 10**12)) for _ in range(n1)],
        "x": [maybe(rng, 0.1, random_double(rng)) for _ in range(n1)],
        "s": [maybe(rng, 0.12, rng.choice(STRINGS)) for _ in range(n1)],
        "d": [maybe(rng, 0.1, random_date(rng)) for _ in range(n1)],
        "ts": [maybe(rng, 0.1, random_timestamp(rng)) for _ in range(n1)],
        "f": [maybe(rng, 0.15, rng.random() < 0.5) for _ in range(n1)],
        "g": [maybe(rng, 0.08, rng.randint(0, 5)) for _ in range(n1)],
    }
    t1_schema = pa.schema([("id", pa.int64()), ("a", pa.int32()), ("b", pa.int64()), ("x", pa.float64()),
                           ("s", pa.utf8()), ("d", pa.date32()), ("ts", pa.timestamp("us")),
                           ("f", pa.bool_()), ("g", pa.int32())])
    t2 = {
        "id": list(range(1001, 1001 + n2)),
        "k": [maybe(rng, 0.1, rng.randint(0, 7)) for _ in range(n2)],
        "v": [maybe(rng, 0.1, round(rng.uniform(-100, 100), 3)) for _ in range(n2)],
        "name": [maybe(rng, 0.1, rng.choice(STRINGS)) for _ in range(n2)],
        "n": [maybe(rng, 0.1, rng.randint(-5, 20)) for _ in range(n2)],
    }
    t2_schema = pa.schema([("id", pa.int64()), ("k", pa.int32()), ("v", pa.float64()), ("name", pa.utf8()),
                           ("n", pa.int32())])
    t3 = {"k": [0, 1, 2, 3, 4, 5, 6, 8, 9, None], "label": ["zero", "one", "two", "three", "four", "five",
                                                           "six", "eight", None, "none"]}
    t3_schema = pa.schema([("k", pa.int32()), ("label", pa.utf8())])
    # Every code point past ASCII up to U+1FFFF (surrogates aside), for lower and upper.
    points = [c for c in range(0x80, 0x20000) if not 0xD800 <= c < 0xE000]
    cp = pa.table({"id": list(range(len(points))), "c": [chr(c) for c in points]})
    return {"t1": pa.table(t1, schema=t1_schema), "t2": pa.table(t2, schema=t2_schema),
            "t3": pa.table(t3, schema=t3_schema), "cp": cp, "t4": make_nested(random.Random(seed + 4000))}


def make_nested(rng):
    """t4: lists (NULL, empty, NULL items) and a struct (NULL, NULL fields), from a generator
    of its own, so that the other tables and the queries stay what they were at a seed."""
    n4 = 120
    def int_list():
        return maybe(rng, 0.1, [maybe(rng, 0.1, rng.randint(-5, 9)) for _ in range(rng.randint(0, 5))])
    def str_list():
        return maybe(rng, 0.1, [maybe(rng, 0.1, rng.choice(STRINGS[:10])) for _ in range(rng.randint(0, 4))])
    def point():
        return maybe(rng, 0.1, {"x": maybe(rng, 0.1, rng.randint(-20, 20)), "y": maybe(rng, 0.1, rng.choice(STRINGS))})
    t4 = {"id": list(range(1, n4 + 1)), "nums": [int_list() for _ in range(n4)],
          "tags": [str_list() for _ in range(n4)], "pt": [point() for _ in range(n4)]}
    schema = pa.schema([("id", pa.int64()), ("nums", pa.list_(pa.int64())), ("tags", pa.list_(pa.utf8())),
                        ("pt", pa.struct([("x", pa.int32()), ("y", pa.utf8())]))])
    return pa.table(t4, schema=schema)


def write_lancelet(cli, db, tables):
    os.makedirs(db, exist_ok=True)
    for name, table in tables.items():
        path = os.path.join(db, name + ".arrow")
        with ipc.new_file(path, table.schema) as writer:
            writer.write_table(table)
        # Several fragments, so that scans, joins and aggregates cross fragment ends.
        subprocess.run([cli, "create", os.path.join(db, name + ".lance"), "--from", path,
                        "--max-rows-per-file", "64"], check=True, stdout=subprocess.DEVNULL)
        os.remove(path)


# ---------------------------------------------------------------------------------------
# Expressions, by type. Each returns SQL text both dialects read the same way.

INT_COLS, DBL_COLS = ["a", "b", "g", "id"], ["x"]


def int_expr(rng, depth=0):
    choices = [
        lambda: rng.choice(INT_COLS),
        lambda: rng.choice(INT_COLS),
        lambda: str(rng.randint(-20, 20)),
        lambda: f"({int_expr(rng, depth + 1)} {rng.choice(['+', '-', '*'])} {rng.choice(['a', 'g', str(rng.randint(1, 9))])})",
        lambda: f"abs({rng.choice(['a', 'b'])})",
        lambda: f"coalesce(a, g, {rng.randint(-3, 3)})",
        lambda: f"({rng.choice(['a', 'id', 'b'])} % {rng.choice([3, 7, -4])})",
        lambda: f"length(s)",
        lambda: f"extract({rng.choice(['year', 'month', 'day'])} FROM d)",
        lambda: f"date_part('{rng.choice(['year', 'month', 'day', 'hour', 'minute', 'dow', 'doy'])}', ts)",
        lambda: f"CASE WHEN {bool_expr(rng, depth + 1)} THEN a ELSE g END",
        lambda: f"greatest(a, g)",
        lambda: f"least(a, {rng.randint(-10, 10)})",
        lambda: f"nullif(g, {rng.randint(0, 5)})",
        lambda: f"({rng.choice(['a', 'id', 'b'])} // {rng.choice([2, 3, -4, 7])})",
    ]
    if depth > 1:
        choices = choices[:3]
    return rng.choice(choices)()


def dbl_expr(rng, depth=0):
    choices = [
        lambda: "x",
        lambda: "x",
        lambda: f"(x {rng.choice(['+', '-', '*'])} {rng.choice(['a', '2.5', '0.1', 'g'])})",
        lambda: f"(x / {rng.choice(['3.0', '-0.5', '7.25'])})",
        lambda: f"({rng.choice(['a', 'id', 'b'])} / {rng.choice(['2', '-3', '7', 'g'])})",  # integers: float64; g holds 0
        lambda: f"abs(x)",
        lambda: f"round(x, {rng.randint(0, 2)})",
        lambda: f"floor(x)",
        lambda: f"ceil(x)",
        lambda: f"sqrt(abs(x))",
        lambda: f"coalesce(x, {rng.uniform(-5, 5):.2f})",
        lambda: f"(a * 1.5)",
        lambda: f"CAST(a AS DOUBLE)",
    ]
    if depth > 1:
        choices = choices[:2]
    return rng.choice(choices)()


def str_literal(rng):
    return "'" + rng.choice(STRINGS).replace("'", "''") + "'"


def str_expr(rng, depth=0):
    choices = [
        lambda: "s",
        lambda: "s",
        lambda: "lower(s)",
        lambda: "upper(s)",
        lambda: f"substr(s, {rng.randint(1, 4)}, {rng.randint(0, 5)})",
        lambda: f"substr(s, {rng.randint(1, 4)})",
        lambda: f"(s || '{rng.choice(['-', 'é', ''])}')",
        lambda: f"replace(s, '{rng.choice(['a', 'l', 'é', ' '])}', '{rng.choice(['A', '', '__'])}')",
        lambda: "trim(s)",
        lambda: "ltrim(s)",
        lambda: "rtrim(s)",
        lambda: f"coalesce(s, {str_literal(rng)})",
        lambda: "CAST(a AS VARCHAR)",
        lambda: f"CASE WHEN {bool_expr(rng, depth + 1)} THEN s ELSE 'other' END",
        lambda: f"{rng.choice(['left', 'right'])}(s, {rng.randint(-3, 5)})",
        lambda: f"concat_ws('{rng.choice(['-', ', ', ''])}', s, a, {rng.choice(['NULL', 'g', str_literal(rng)])})",
        # patterns without '.' or ranges past ASCII: POSIX matches bytes where RE2 matches code points
        lambda: "regexp_replace(s, '{}', '{}'{})".format(rng.choice(['[aeiou]', 'l+', '^ +', '(a|b)', 'x?']),
                                                          rng.choice(['_', '', '<\\0>', '[\\1]']),
                                                          rng.choice(['', ", 'g'", ", 'i'", ", 'gi'"])),
        lambda: "regexp_extract(s, '{}'{})".format(rng.choice(['[a-z]+', '([A-Z])([a-z]*)', 'l+', '[0-9]']),
                                                    rng.choice(['', ', 0', ', 1'])),
    ]
    if depth > 1:
        choices = choices[:2]
    return rng.choice(choices)()


def date_literal(rng):
    return f"DATE '{random_date(rng).isoformat()}'"


def date_expr(rng, depth=0):
    return rng.choice([
        lambda: "d",
        lambda: "d",
        lambda: f"coalesce(d, {date_literal(rng)})",
    ])()


def ts_expr(rng, depth=0):
    unit = rng.choice(["day", "days", "month", "months", "hour", "hours", "year", "minutes"])
    return rng.choice([
        lambda: "ts",
        lambda: f"(ts + INTERVAL '{rng.randint(1, 40)} {unit}')",
        lambda: f"(ts - INTERVAL '{rng.randint(1, 40)} {unit}')",
        lambda: f"(d + INTERVAL '{rng.randint(1, 40)} {unit}')",
        lambda: f"date_trunc('{rng.choice(['year', 'month', 'day', 'hour'])}', ts)",
        lambda: "CAST(d AS TIMESTAMP)",
    ])()


def comparison(rng, depth):
    op = rng.choice(["=", "<>", "<", "<=", ">", ">="])
    kind = rng.randrange(6)
    if kind == 0:
        return f"{int_expr(rng, depth + 1)} {op} {int_expr(rng, depth + 1)}"
    if kind == 1:
        return f"{dbl_expr(rng, depth + 1)} {op} {rng.choice([int_expr(rng, depth + 1), str(rng.randint(-500, 500))])}"
    if kind == 2:
        return f"{str_expr(rng, depth + 1)} {op} {str_literal(rng)}"
    if kind == 3:
        return f"d {op} {date_literal(rng)}"
    if kind == 4:
        return f"ts {op} TIMESTAMP '{random_timestamp(rng).isoformat(sep=' ')}'"
    return f"f {rng.choice(['=', '<>'])} {rng.choice(['true', 'false'])}"


LIKE_PATTERNS = ['a%', '%a%', '_', '%o', 'h_llo%', '%x%y%', '%', '', '日%', '%😀%', '%_b', 'a_c']


def bool_expr(rng, depth=0):
    if depth > 2:
        return comparison(rng, depth)
    choices = [
        lambda: comparison(rng, depth),
        lambda: comparison(rng, depth),
        lambda: f"({bool_expr(rng, depth + 1)} AND {bool_expr(rng, depth + 1)})",
        lambda: f"({bool_expr(rng, depth + 1)} OR {bool_expr(rng, depth + 1)})",
        lambda: f"NOT ({bool_expr(rng, depth + 1)})",
        lambda: f"{rng.choice(['a', 'x', 's', 'd', 'ts', 'f', 'g'])} IS {rng.choice(['', 'NOT '])}NULL",
        lambda: f"a {rng.choice(['', 'NOT '])}IN ({', '.join(str(rng.randint(-50, 50)) for _ in range(rng.randint(1, 5)))}{rng.choice(['', ', NULL'])})",
        lambda: f"s {rng.choice(['', 'NOT '])}IN ({', '.join(str_literal(rng) for _ in range(rng.randint(1, 4)))})",
        lambda: f"a {rng.choice(['', 'NOT '])}BETWEEN {rng.randint(-50, 0)} AND {rng.randint(0, 50)}",
        lambda: f"x BETWEEN {rng.randint(-900, 0)} AND {rng.randint(0, 900)}",
        lambda: f"d BETWEEN {date_literal(rng)} AND DATE '2035-01-01'",
        lambda: f"s {rng.choice(['', 'NOT '])}LIKE '{rng.choice(LIKE_PATTERNS)}'",
        lambda: "f",
        lambda: f"NOT f",
        lambda: f"(a + {rng.randint(-5, 5)}) > g",
    ]
    return rng.choice(choices)()


def any_expr(rng):
    return rng.choice([int_expr, int_expr, dbl_expr, str_expr, bool_expr, date_expr, ts_expr])(rng)


def items(exprs):
    return ", ".join(f"{e} AS c{i}" for i, e in enumerate(exprs))


# ---------------------------------------------------------------------------------------
# Queries: (category, sql, ordered)


def q_filter(rng):
    cols = items(["id"] + [any_expr(rng) for _ in range(rng.randint(0, 2))])
    return "filter", f"SELECT {cols} FROM t1 WHERE {bool_expr(rng)}", False


def q_project(rng):
    return "expressions", f"SELECT {items(['id'] + [any_expr(rng) for _ in range(rng.randint(2, 4))])} FROM t1", False


def q_strings(rng):
    return "strings", f"SELECT {items(['id'] + [str_expr(rng) for _ in range(3)] + ['length(' + str_expr(rng) + ')'])} FROM t1", False


def q_dates(rng):
    exprs = [ts_expr(rng), ts_expr(rng), date_expr(rng), int_expr(rng)]
    return "dates", f"SELECT {items(['id'] + exprs)} FROM t1 WHERE {rng.choice(['d', 'ts'])} IS NOT NULL", False


def q_casts(rng):
    casts = [
        "CAST(a AS BIGINT)", "CAST(a AS DOUBLE)", "CAST(x AS BIGINT)", "CAST(x AS INTEGER)", "CAST(g AS VARCHAR)",
        "CAST(b AS DOUBLE)", "CAST(f AS INTEGER)", "CAST(d AS VARCHAR)", "CAST(d AS TIMESTAMP)",
        "CAST(ts AS DATE)", "CAST(a AS SMALLINT)", "CAST(x AS VARCHAR)", "CAST(id AS VARCHAR) || s",
        "a::BIGINT + 1", "x::INTEGER", "CAST('12' AS INTEGER) + a", "CAST(a > 0 AS INTEGER)",
    ]
    chosen = rng.sample(casts, 3)
    # NaN and the infinities have no integer: both engines refuse them, so most queries
    # keep the finite values to have rows to compare.
    where = " WHERE x BETWEEN -1e6 AND 1e6" if any("x" in c for c in chosen) and rng.random() < 0.8 else ""
    return "casts", f"SELECT {items(['id'] + chosen)} FROM t1{where}", False


AGGS = ["count(*)", "count(a)", "count(s)", "sum(a)", "sum(b)", "sum(x)", "avg(a)", "avg(x)", "min(a)", "max(a)",
        "min(x)", "max(x)", "min(s)", "max(s)", "min(d)", "max(ts)", "count(DISTINCT a)", "count(DISTINCT s)",
        "count(DISTINCT g)", "bool_and(f)", "bool_or(f)", "sum(a * 2 + 1)", "max(length(s))", "min(coalesce(a, 0))",
        # lists sorted, since the order of a group's rows is each engine's own
        "list_sort(list(coalesce(a, 0)))", "len(array_agg(s))", "list_sort(list(DISTINCT g))", "len(list(DISTINCT s))",
        "quantile_cont(x, 0.25)", "quantile_cont(a, 0.9)", "quantile_disc(b, 0.5)", "quantile_disc(s, 0.3)",
        "quantile_disc(d, 1)", "quantile_cont(b, 0)",
        # compared by the unique id, so that no tie leaves the row to each engine's order
        "arg_min(s, id)", "arg_max(a, id)", "arg_min(x, id)", "arg_max(d, id)", "arg_max(ts, -id)", "arg_min(f, id)",
        # ordered aggregates, ordered by the unique id last so that the order is total
        "string_agg(s, ',' ORDER BY id)", "string_agg(s ORDER BY a DESC NULLS FIRST, id)", "list(a ORDER BY id DESC)",
        "array_agg(x ORDER BY s, id)", "list(DISTINCT g ORDER BY g DESC)", "sum(a ORDER BY id)"]


def q_aggregate(rng):
    aggs = rng.sample(AGGS, rng.randint(1, 4))
    where = f" WHERE {bool_expr(rng)}" if rng.random() < 0.5 else ""
    if rng.random() < 0.3:
        return "aggregates", f"SELECT {items(aggs)} FROM t1{where}", False
    key = rng.choice(["g", "f", "extract(year FROM d) > 2000", "a % 3", "s IS NULL", "lower(substr(s, 1, 1))"])
    having = f" HAVING {rng.choice(['count(*) > 20', 'sum(a) > 0', 'min(x) < 0', 'count(a) >= 2', 'max(s) > ' + repr('b')])}" \
        if rng.random() < 0.4 else ""
    return "aggregates", f"SELECT {key} AS k, {items(aggs)} FROM t1{where} GROUP BY {key}{having}", False


def q_join(rng):
    kind = rng.choice(["JOIN", "LEFT JOIN", "INNER JOIN"])
    if rng.random() < 0.5:
        on, cols = "t1.g = t2.k", ["t1.id", "t2.id", "t1.a", "t2.v", "t2.name"]
        tables = f"t1 {kind} t2 ON {on}"
        extra = rng.choice(["", f" AND t2.n > {rng.randint(-5, 15)}"])
        tables += extra
    else:
        on, cols = "t2.k = t3.k", ["t2.id", "t3.k", "t3.label", "t2.n"]
        tables = f"t2 {kind} t3 ON {on}"
    where = rng.choice(["", f" WHERE {rng.choice(cols[:2])} % 2 = 0", " WHERE t2.v > 0"])
    if rng.random() < 0.25:  # a comma join, its key in the WHERE (alone, or in every branch of an OR)
        key = on.split(" AND ")[0]
        tables = ", ".join(sorted({c.split(".")[0] for c in cols}))
        where = rng.choice([f" WHERE {key}", f" WHERE {key}{where.replace(' WHERE', ' AND')}",
                            f" WHERE ({key} AND {cols[0]} % 2 = 0) OR ({key} AND {cols[1]} > 40)"])
        return "joins", f"SELECT count(*) AS c0, count({cols[1]}) AS c1 FROM {tables}{where}", False
    return "joins", f"SELECT {items(cols)} FROM {tables}{where}", False


def q_join_agg(rng):
    return "joins", (f"SELECT t3.label AS c0, count(t2.id) AS c1, sum(t2.v) AS c2 FROM t3 LEFT JOIN t2 ON t2.k = t3.k "
                     f"GROUP BY t3.label"), False


def order_term(rng, col):
    direction = rng.choice(["", " ASC", " DESC"])
    nulls = rng.choice(["", "", " NULLS FIRST", " NULLS LAST"])
    return col + direction + nulls


def q_order(rng):
    keys = rng.sample(["a", "x", "s", "d", "ts", "g", "f", "b"], rng.randint(1, 2))
    order = ", ".join(order_term(rng, k) for k in keys) + ", id"
    limit = rng.choice(["", f" LIMIT {rng.randint(0, 30)}", f" LIMIT {rng.randint(1, 30)} OFFSET {rng.randint(0, 250)}"])
    cols = items(["id"] + keys)
    where = f" WHERE {bool_expr(rng)}" if rng.random() < 0.3 else ""
    return "order_limit", f"SELECT {cols} FROM t1{where} ORDER BY {order}{limit}", True


def q_window(rng):
    part = rng.choice(["", "PARTITION BY g ", "PARTITION BY f ", "PARTITION BY a % 3 "])
    order_key = rng.choice(["id", "x, id", "a, id", "s, id", "d DESC, id"])
    frames = [
        f"row_number() OVER ({part}ORDER BY {order_key})",
        f"rank() OVER ({part}ORDER BY {rng.choice(['a', 'g', 's', 'f'])})",
        f"dense_rank() OVER ({part}ORDER BY {rng.choice(['a', 'g', 's'])})",
        f"sum(a) OVER ({part.strip() or 'PARTITION BY g'})",
        f"sum(a) OVER ({part}ORDER BY {order_key})",
        f"count(*) OVER ({part.strip()})",
        f"avg(x) OVER ({part}ORDER BY {order_key} ROWS BETWEEN 2 PRECEDING AND CURRENT ROW)",
        f"lag(x) OVER ({part}ORDER BY {order_key})",
        f"lead(s, 2) OVER ({part}ORDER BY {order_key})",
        f"lag(a, 1, 0) OVER ({part}ORDER BY {order_key})",
        f"min(s) OVER ({part}ORDER BY {order_key})",
        f"max(d) OVER ({part.strip()})",
        f"first_value(a) OVER ({part}ORDER BY {order_key})",
    ]
    return "windows", f"SELECT {items(['id'] + rng.sample(frames, rng.randint(1, 3)))} FROM t1", False


def q_nulls(rng):
    exprs = [
        "a + NULL", "NULL = a", "coalesce(a, b, 0)", "a IS NOT DISTINCT FROM g", "a IS DISTINCT FROM g",
        "NULL AND f", "NULL OR f", "f AND a > 0", "nullif(a, 0)", "coalesce(s, '')", "x * NULL",
        "CASE WHEN a IS NULL THEN 'none' ELSE 'some' END", "a > NULL", "coalesce(NULL, x)",
    ]
    return "nulls", f"SELECT {items(['id'] + rng.sample(exprs, 3))} FROM t1", False


def q_subquery(rng):
    return "subqueries", rng.choice([
        "SELECT id AS c0 FROM t1 WHERE g IN (SELECT k FROM t3 WHERE label IS NOT NULL)",
        "SELECT id AS c0 FROM t1 WHERE a > (SELECT avg(a) FROM t1)",
        "SELECT t3.k AS c0, (SELECT count(*) FROM t2 WHERE t2.k = t3.k) AS c1 FROM t3",
        f"SELECT id AS c0 FROM t2 WHERE EXISTS (SELECT 1 FROM t3 WHERE t3.k = t2.k AND t3.label LIKE '%e%')",
        f"SELECT id AS c0 FROM t1 WHERE g NOT IN (SELECT k FROM t3 WHERE k IS NOT NULL AND k > {rng.randint(0, 8)})",
    ]), False


def q_more_strings(rng):
    exprs = [
        f"concat(s, {rng.choice(['a', 'g', 'x', 'd', 'f', repr('-')])}, {rng.choice(['s', repr('é'), 'NULL', 'id'])})",
        f"substr(s, {rng.randint(-6, 8)}, {rng.randint(-4, 4)})",
        f"strftime(d, '{rng.choice(['%Y-%m-%d', '%d/%m/%Y', '%Y', '%j', '%b %d'])}')",
        f"starts_with(s, '{rng.choice(['a', 'h', 'H', ''])}')",
        f"contains(s, '{rng.choice(['a', 'll', 'é', ' '])}')",
        f"s ILIKE '{rng.choice(['h%', '%É%', 'APPLE%', '%MEGA'])}'",
        f"greatest(s, {str_literal(rng)})",
        f"least(s, {str_literal(rng)})",
        f"regexp_matches(s, '{rng.choice(['^a', 'l+', '[0-9]', '^$', 'e.*e'])}')",
        f"trim(s, '{rng.choice(['a', ' ', 'xa'])}')",
        f"s || CAST({rng.choice(['a', 'x', 'd', 'ts', 'f'])} AS VARCHAR)",
        f"s || {rng.choice(['a', 'x', 'd', 'ts', 'f', 'g'])}",
        f"{rng.choice(['a', 'x', 'd'])} || '|' || {rng.choice(['id', 'b', 'f'])}",
    ]
    return "strings", f"SELECT {items(['id'] + rng.sample(exprs, 3))} FROM t1", False


def q_more_dates(rng):
    exprs = [
        f"date_part('{rng.choice(['quarter', 'week', 'isodow', 'dow', 'doy', 'millisecond', 'microsecond', 'second', 'epoch'])}', {rng.choice(['d', 'ts'])})",
        f"{rng.choice(['epoch(ts)', 'epoch(d)', 'extract(epoch FROM ts)'])}",
        f"extract({rng.choice(['year', 'month', 'day', 'hour', 'minute'])} FROM ts)",
        f"date_trunc('{rng.choice(['year', 'quarter', 'month', 'week', 'day', 'hour', 'minute'])}', ts)",
        f"d < ts",
        f"CAST(ts AS DATE) = d",
        f"ts + INTERVAL '{rng.randint(1, 30)} {rng.choice(['seconds', 'minutes', 'weeks', 'quarters', 'years'])}'",
        f"d - INTERVAL '{rng.randint(1, 30)} months'",
        f"strftime(ts, '%Y-%m-%d %H:%M:%S')",
        f"strptime(strftime(ts, '{(fmt := rng.choice(['%Y-%m-%d %H:%M:%S.%f', '%d/%m/%y %I:%M %p', '%b %d %Y %H', '%Y-%j']))}'), '{fmt}')",
        f"try_strptime({rng.choice(['s', 'CAST(a AS VARCHAR)', repr('2024-02-30'), repr('1999-12-31')])}, '%Y-%m-%d')",
        f"d - {rng.choice(['DATE ' + repr(random_date(rng).isoformat()), 'CAST(ts AS DATE)', 'coalesce(d, DATE ' + repr('2000-01-01') + ')'])}",
        f"d {rng.choice(['+', '-'])} {rng.choice(['a', 'g', str(rng.randint(-400, 400))])}",
        f"{rng.choice(['g', '7'])} + d",
    ]
    return "dates", f"SELECT {items(['id'] + rng.sample(exprs, 3))} FROM t1", False


def q_set_ops(rng):
    op = rng.choice(["UNION", "UNION ALL"])
    left = f"SELECT g AS c0, s AS c1 FROM t1 WHERE {bool_expr(rng)}"
    right = f"SELECT k AS c0, name AS c1 FROM t2 WHERE {rng.choice(['v > 0', 'n IS NULL', 'k < 3'])}"
    if rng.random() < 0.3:
        return "set_ops", f"SELECT DISTINCT {rng.choice(['g', 's', 'f', 'g, f'])} FROM t1", False
    return "set_ops", f"{left} {op} {right}", False


def q_outer_join(rng):
    kind = rng.choice(["RIGHT JOIN", "FULL JOIN", "FULL OUTER JOIN", "LEFT OUTER JOIN"])
    if rng.random() < 0.3:
        return "joins", f"SELECT t2.id AS c0, k AS c1, label AS c2 FROM t2 {kind} t3 USING (k)", False
    if rng.random() < 0.2:
        return "joins", (f"SELECT t3.k AS c0, t2.id AS c1 FROM t3 CROSS JOIN t2 WHERE t2.n = t3.k "
                         f"AND t2.v > {rng.randint(-50, 50)}"), False
    return "joins", f"SELECT t2.id AS c0, t3.k AS c1, t3.label AS c2, t2.v AS c3 FROM t2 {kind} t3 ON t2.k = t3.k", False


def q_more_windows(rng):
    part = rng.choice(["", "PARTITION BY g ", "PARTITION BY f "])
    key = rng.choice(["id", "x, id", "a, id", "s, id"])
    frames = [
        f"ntile({rng.randint(2, 5)}) OVER ({part}ORDER BY {key})",
        f"percent_rank() OVER ({part}ORDER BY {rng.choice(['a', 'g', 's'])})",
        f"cume_dist() OVER ({part}ORDER BY {rng.choice(['a', 'g', 's'])})",
        f"last_value(a) OVER ({part}ORDER BY {key} ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING)",
        f"nth_value(s, 2) OVER ({part}ORDER BY {key} ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING)",
        f"sum(x) OVER ({part}ORDER BY {key} ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING)",
        f"count(a) OVER ({part}ORDER BY a RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)",
        f"max(a) OVER ({part}ORDER BY {key} ROWS BETWEEN CURRENT ROW AND 3 FOLLOWING)",
        f"lead(d, 1, DATE '2000-01-01') OVER ({part}ORDER BY {key})",
    ]
    return "windows", f"SELECT {items(['id'] + rng.sample(frames, rng.randint(1, 3)))} FROM t1", False


def q_more_aggregates(rng):
    aggs = rng.sample(["median(x)", "stddev(a)", "variance(a)", "stddev_pop(x)", "var_pop(a)", "median(a)",
                       "avg(b)", "sum(b)", "count(DISTINCT f)", "max(b) - min(b)",
                       "sum(CASE WHEN f THEN 1 ELSE 0 END)", "avg(length(s))"], 3)
    key = rng.choice(["g", "f", "a % 4"])
    order = rng.choice(["", f" ORDER BY c0 DESC, k LIMIT {rng.randint(1, 4)}"])
    ordered = bool(order)
    if order:
        aggs[0] = "count(*)"
        order = f" ORDER BY c0 DESC, k NULLS FIRST LIMIT {rng.randint(1, 4)}"
    return "aggregates", f"SELECT {key} AS k, {items(aggs)} FROM t1 GROUP BY {key}{order}", ordered


# Aggregates that take FILTER (WHERE ...) at {f}.
FILTERED_AGGS = ["count(*){f}", "count(a){f}", "sum(a){f}", "sum(x){f}", "avg(x){f}", "min(s){f}", "max(d){f}",
                 "count(DISTINCT g){f}", "bool_or(f){f}", "max(ts){f}", "median(x){f}", "stddev(a){f}",
                 "list_sort(list(coalesce(a, 0)){f})", "len(list(s){f})"]


def q_clauses(rng):
    """FILTER (WHERE ...), QUALIFY, GROUP BY ALL and * EXCLUDE / REPLACE."""
    kind = rng.choice(["filter", "filter", "qualify", "qualify", "group_all", "star"])
    if kind == "filter":
        aggs = [t.format(f=f" FILTER (WHERE {bool_expr(rng, 1)})" if rng.random() < 0.8 else "")
                for t in rng.sample(FILTERED_AGGS, rng.randint(1, 3))]
        if rng.random() < 0.3:
            return "clauses", f"SELECT {items(aggs)} FROM t1", False
        key = rng.choice(["g", "f", "a % 3"])
        return "clauses", f"SELECT {key} AS k, {items(aggs)} FROM t1 GROUP BY {key}", False
    if kind == "qualify":
        part = rng.choice(["", "PARTITION BY g ", "PARTITION BY f "])
        window = rng.choice([f"row_number() OVER ({part}ORDER BY {rng.choice(['a', 'x', 's', 'd DESC'])}, id)",
                             f"rank() OVER ({part}ORDER BY {rng.choice(['a', 'g', 's'])})",
                             f"sum(a) OVER ({part.strip()})", f"count(*) OVER ({part.strip()})"])
        bound = rng.randint(1, 40)
        if rng.random() < 0.5:
            cond = f"w <= {bound}" + (f" AND {bool_expr(rng, 2)}" if rng.random() < 0.3 else "")
            return "clauses", f"SELECT id AS c0, g AS c1, a AS c2, {window} AS w FROM t1 QUALIFY {cond}", False
        return "clauses", f"SELECT id AS c0, s AS c1 FROM t1 QUALIFY {window} > {bound} OR {bool_expr(rng, 2)}", False
    if kind == "group_all":
        key = rng.choice(["g", "f", "a % 3", "s IS NULL"])
        aggs = rng.sample(AGGS, rng.randint(1, 3))
        return "clauses", f"SELECT {key} AS k, {items(aggs)} FROM t1 GROUP BY ALL", False
    columns = ["id", "a", "b", "x", "s", "d", "ts", "f", "g"]
    excluded = rng.sample(columns[1:], rng.randint(1, 3))
    kept = [c for c in columns[1:] if c not in excluded]
    star = f"* EXCLUDE ({', '.join(excluded)})"
    if kept and rng.random() < 0.6:
        replaced = rng.choice(kept)
        value = {"a": "a * 2", "b": "b - 1", "x": "-x", "s": "upper(s)", "d": "d + 1",
                 "ts": "ts + INTERVAL 1 HOUR", "f": "NOT f", "g": "g + 10"}[replaced]
        star += f" REPLACE ({value} AS {replaced})"
    where = f" WHERE {bool_expr(rng)}" if rng.random() < 0.5 else ""
    return "clauses", f"SELECT {star} FROM t1{where}", False


# Views made in both engines before the queries run (lancelet keeps them beside the tables).
VIEWS = {
    "v1": "SELECT id, a, s, x, g, d FROM t1 WHERE g < 4",
    "v2": "SELECT k, count(*) AS n, sum(v) AS sv, max(name) AS top FROM t2 GROUP BY k",
    "v3": "SELECT v1.id, v1.a, v1.s, v2.n, v2.top FROM v1 JOIN v2 ON v2.k = v1.g",
}


def q_views(rng):
    """Views, views of views and joins of them."""
    kind = rng.choice(["filter", "join", "aggregate", "nested"])
    if kind == "filter":
        cond = rng.choice(["a > 0", "s LIKE '%a%'", "x < 0.5", "g = 2", "a IS NULL", "d > DATE '2000-01-01'"])
        return "views", f"SELECT {items(['id', 'a', 's', 'x'])} FROM v1 WHERE {cond}", False
    if kind == "join":
        return "views", f"SELECT {items(['v1.id', 'v2.n', 'v2.sv', 't3.label'])} FROM v1 JOIN v2 ON v2.k = v1.g " \
                        f"LEFT JOIN t3 ON t3.k = v1.g", False
    if kind == "aggregate":
        aggs = rng.sample(["count(*)", "sum(a)", "arg_max(s, id)", "min(x)", "max(d)", "count(DISTINCT s)"], 2)
        return "views", f"SELECT g AS k, {items(aggs)} FROM v1 GROUP BY g", False
    return "views", f"SELECT {items(['id', 'a', 'n', 'top'])} FROM v3 WHERE a > {rng.randint(-50, 50)}", False


LIST_ITEMS = ["len(nums)", "list_contains(nums, 3)", "nums[1]", "nums[-1]", "list_sum(nums)", "list_sort(nums)",
              "list_min(nums)", "list_max(nums)", "list_reverse(nums)", "list_concat(nums, [99])", "nums[2:3]",
              "list_position(nums, 0)", "list_sort(list_distinct(tags))", "array_to_string(tags, '-')", "len(tags)",
              "list_contains(tags, 'a')", "tags[1]", "list_sort(tags, 'DESC')", "list_avg(nums)",
              "pt.x", "pt.y", "pt.x + id", "upper(pt.y)", "coalesce(pt.x, -1)", "pt IS NULL", "length(pt.y)"]
LIST_FILTERS = ["len(nums) > 2", "list_contains(tags, 'abc')", "pt.x > 0", "pt IS NOT NULL AND pt.y IS NULL",
                "nums IS NULL", "list_sum(nums) > 5", "tags[1] = 'a'", "pt.y LIKE '%a%'"]


def q_lists(rng):
    """t4's lists and struct: list functions, indexes and slices, field access, filters,
    grouping by a field, and unnest."""
    kind = rng.choice(["items", "items", "filter", "group", "unnest"])
    if kind == "items":
        return "lists", f"SELECT {items(['id'] + rng.sample(LIST_ITEMS, rng.randint(1, 4)))} FROM t4", False
    if kind == "filter":
        return "lists", f"SELECT {items(['id', rng.choice(LIST_ITEMS)])} FROM t4 WHERE {rng.choice(LIST_FILTERS)}", False
    if kind == "group":
        key = rng.choice(["pt.x % 3", "pt.y IS NULL", "len(nums)", "tags IS NULL"])
        return "lists", f"SELECT {key} AS k, {items(['count(*)', 'sum(len(nums))', 'min(pt.y)'])} FROM t4 GROUP BY {key}", False
    return "lists", f"SELECT {items(['id', rng.choice(['unnest(nums)', 'unnest(tags)'])])} FROM t4 " \
                    f"WHERE {rng.choice(LIST_FILTERS)}", False


def q_unnest(rng):
    """unnest of lists built per row and of list aggregates, alone and side by side."""
    kind = rng.choice(["row", "pair", "grouped"])
    if kind == "row":
        lst = rng.choice(["list_value(a, g)", "list_value(s, lower(s))", "[id, id * 2, id * 3]",
                          "CASE WHEN g > 2 THEN [a] ELSE NULL END", "string_split(s, ' ')"])
        return "unnest", f"SELECT {items(['id', f'unnest({lst})'])} FROM t1 WHERE id % 5 = {rng.randint(0, 4)}", False
    if kind == "pair":
        return "unnest", f"SELECT {items(['id', 'unnest(list_value(a, b))', 'unnest([g])'])} FROM t1 " \
                         f"WHERE id < {rng.randint(10, 80)}", False
    return "unnest", f"SELECT {items(['g', 'unnest(list_sort(list(DISTINCT a)))'])} FROM t1 GROUP BY g", False


GENERATORS = [(q_filter, 6), (q_project, 4), (q_strings, 3), (q_dates, 3), (q_casts, 2), (q_aggregate, 5),
              (q_join, 3), (q_join_agg, 1), (q_order, 4), (q_window, 3), (q_nulls, 2), (q_subquery, 1),
              (q_more_strings, 3), (q_more_dates, 2), (q_set_ops, 1), (q_outer_join, 2), (q_more_windows, 2),
              (q_more_aggregates, 2), (q_clauses, 3), (q_views, 2), (q_unnest, 2), (q_lists, 4)]


# Fixed queries, run at every seed besides the generated ones.
FIXED = [("case_mapping", "SELECT id AS c0, lower(c) AS c1, upper(c) AS c2, length(upper(c)) AS c3 FROM cp", False)]


def generate(rng, count):
    funcs = [f for f, w in GENERATORS for _ in range(w)]
    return FIXED + [rng.choice(funcs)(rng) for _ in range(count)]


# ---------------------------------------------------------------------------------------
# Running and comparing


def run_lancelet(cli, db, sql):
    p = subprocess.run([cli, "sql", "--db", db, "--format", "arrow", sql], capture_output=True, timeout=120)
    if p.returncode != 0:
        return None, p.stderr.decode(errors="replace").strip().splitlines()[0] if p.stderr else f"exit {p.returncode}"
    return ipc.open_stream(p.stdout).read_all(), None


def run_duckdb(con, sql):
    try:
        return con.sql(sql).to_arrow_table(), None
    except duckdb.Error as e:
        return None, str(e).splitlines()[0]


def normal(v):
    """A value in a form that compares across the two engines' types."""
    if isinstance(v, decimal.Decimal):
        return int(v) if v == v.to_integral_value() else float(v)
    if isinstance(v, datetime.timedelta):
        return ("interval", v)
    return v


def values_equal(a, b):
    a, b = normal(a), normal(b)
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, list) and isinstance(b, list):  # item by item, so that NaN equals NaN
        return len(a) == len(b) and all(values_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return list(a) == list(b) and all(values_equal(a[k], b[k]) for k in a)
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        if isinstance(a, float) or isinstance(b, float):
            if math.isnan(a) or math.isnan(b):
                return math.isnan(a) and math.isnan(b)
            return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)
        return a == b
    return type(a) is type(b) and a == b


def sort_key(row):
    # A total order over mixed values: NULLs first, then by type name, then by value.
    def k(v):
        v = normal(v)
        if v is None:
            return (0, "", 0)
        if isinstance(v, bool):
            return (1, "bool", int(v))
        if isinstance(v, (int, float)):
            return (1, "number", float(v) if not math.isnan(v) else math.inf)
        if isinstance(v, (list, dict)):  # NULL items would not order against values
            return (1, type(v).__name__, repr(v))
        return (1, type(v).__name__, v)
    return tuple(k(v) for v in row)


def rows_of(table):
    return [tuple(r.values()) for r in table.to_pylist()]


def compare(sql, ordered, ours, theirs):
    """None when the results agree, else a one-paragraph description."""
    (lt, lerr), (dt, derr) = ours, theirs
    if lerr and derr:
        return None
    if lerr or derr:
        return f"lancelet: {lerr or f'{lt.num_rows} rows'}\n  duckdb: {derr or f'{dt.num_rows} rows'}"
    if lt.num_columns != dt.num_columns:
        return f"columns: lancelet {lt.schema.names}, duckdb {dt.schema.names}"
    lrows, drows = rows_of(lt), rows_of(dt)
    if len(lrows) != len(drows):
        return f"rows: lancelet {len(lrows)}, duckdb {len(drows)}"
    if not ordered:
        lrows.sort(key=sort_key)
        drows.sort(key=sort_key)
    for i, (lr, dr) in enumerate(zip(lrows, drows)):
        for j, (lv, dv) in enumerate(zip(lr, dr)):
            if not values_equal(lv, dv):
                return (f"row {i} column c{j} ({lt.schema.field(j).type} / {dt.schema.field(j).type}): "
                        f"lancelet {lv!r}, duckdb {dv!r}\n    lancelet row {lr!r}\n    duckdb   row {dr!r}")
    return None


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cli", required=True, help="the lancelet binary")
    parser.add_argument("--seed", type=int, default=44)
    parser.add_argument("--queries", type=int, default=400)
    parser.add_argument("--workdir", help="where the datasets go (default: a temporary directory, removed)")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--show", type=int, default=40, help="differences printed in full")
    parser.add_argument("--verbose", action="store_true", help="also print the queries both refuse")
    args = parser.parse_args()

    rng = random.Random(args.seed)
    tables = make_tables(rng, args.seed)
    queries = generate(rng, args.queries)
    work = args.workdir or tempfile.mkdtemp(prefix="duckdiff-")
    db = os.path.join(work, "db")
    shutil.rmtree(db, ignore_errors=True)
    write_lancelet(args.cli, db, tables)

    con = duckdb.connect()
    con.execute("SET threads = 1")
    for name, table in tables.items():
        con.register(name + "_arrow", table)
        con.execute(f"CREATE TABLE {name} AS SELECT * FROM {name}_arrow")
    for name, query in VIEWS.items():
        con.execute(f"CREATE VIEW {name} AS {query}")
        subprocess.run([args.cli, "sql", "--db", db, f"CREATE VIEW {name} AS {query}"], check=True,
                       stdout=subprocess.DEVNULL)

    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        ours = list(pool.map(lambda q: run_lancelet(args.cli, db, q[1]), queries))
    differences, per_category, refused = [], {}, []
    for (category, sql, ordered), mine in zip(queries, ours):
        theirs = run_duckdb(con, sql)
        if mine[1] and theirs[1]:
            refused.append((sql, mine[1], theirs[1]))
        diff = compare(sql, ordered, mine, theirs)
        agree, total = per_category.get(category, (0, 0))
        per_category[category] = (agree + (diff is None), total + 1)
        if diff:
            differences.append((category, sql, diff))
    if not args.workdir:
        shutil.rmtree(work, ignore_errors=True)

    for i, (category, sql, diff) in enumerate(differences[:args.show]):
        print(f"--- difference {i + 1} ({category})\n  {sql}\n  {diff}")
    agree = sum(a for a, _ in per_category.values())
    if args.verbose:
        for sql, ours_error, theirs_error in refused:
            print(f"--- both refuse\n  {sql}\n  lancelet: {ours_error}\n  duckdb: {theirs_error}")
    print(f"seed {args.seed}: {len(queries)} queries, {agree} agree ({len(refused)} of them refused by both), "
          f"{len(differences)} differ")
    for category, (a, t) in sorted(per_category.items()):
        print(f"  {category:12} {a:4} / {t}")
    return 1 if differences else 0


if __name__ == "__main__":
    sys.exit(main())
