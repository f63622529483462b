"""The interop matrix between lancelet (its CLI) and pylance 14 (probe.py's commands).

Every step runs as a subprocess, so each case's `repro` is the exact shell commands it
ran, with $L for the lancelet binary and $P for `python tests/oracle14/probe.py`. A case
is "ok" when the two implementations agree (or when pylance refuses what the case
expects it to refuse, which the detail then says), "fail" otherwise.
"""

import json
import os
import shlex
import shutil
import subprocess
import sys
import time

import numpy as np
import pyarrow as pa

import probe

CASES = []


def case(direction, name):
    def wrap(fn):
        CASES.append((direction, name, fn))
        return fn
    return wrap


class CaseFailure(Exception):
    pass


class Ctx:
    def __init__(self, root, lancelet, probe_path):
        self.root = root
        self.lancelet = os.path.abspath(lancelet)
        self.probe = os.path.abspath(probe_path)
        self.cmds = []
        self.notes = []

    def path(self, name):
        return os.path.join(self.root, name)

    def _run(self, argv, shown, env, expect_fail):
        full_env = dict(os.environ)
        full_env["LANCE_LOG"] = "error"
        prefix = ""
        for k, v in (env or {}).items():
            full_env[k] = v
            prefix += f"{k}={v} "
        self.cmds.append(prefix + " ".join(shlex.quote(x) if i else x for i, x in enumerate(shown)))
        proc = subprocess.run(argv, capture_output=True, env=full_env, cwd=self.root)
        err = proc.stderr.decode(errors="replace").strip()
        if expect_fail:
            if proc.returncode == 0:
                raise CaseFailure(f"expected `{' '.join(shown[:3])}...` to fail; it succeeded")
            return last_line(err)
        if proc.returncode != 0:
            raise CaseFailure(f"`{' '.join(shown[:2])}` failed: {last_line(err)}")
        return proc.stdout

    def ll(self, *args, env=None, expect_fail=False):
        args = [str(a) for a in args]
        return self._run([self.lancelet] + args, ["$L"] + args, env, expect_fail)

    def py(self, *args, env=None, expect_fail=False):
        args = [str(a) for a in args]
        return self._run([sys.executable, self.probe] + args, ["$P"] + args, env, expect_fail)

    def ll_table(self, ds, *extra, env=None):
        return pa.ipc.open_stream(self.ll("scan", ds, "--format", "arrow", *extra, env=env)).read_all()

    def py_table(self, ds, *extra, env=None):
        return pa.ipc.open_stream(self.py("scan", ds, "--format", "arrow", *extra, env=env)).read_all()

    def write_arrow(self, name, table):
        path = self.path(name)
        with pa.ipc.new_file(path, table.schema) as w:
            w.write_table(table)
        return name

    def expect_equal(self, expected, actual, what, sort_key=None, check_types=True):
        diff = probe.compare_tables(expected, actual, sort_key, check_types)
        if diff:
            raise CaseFailure(f"{what}: {diff}")

    def note(self, text):
        self.notes.append(text)


def last_line(text):
    lines = [ln for ln in text.splitlines() if ln.strip() and "WARN" not in ln[:40]]
    return lines[-1] if lines else text[-300:]


# ---------------------------------------------------------------------------
# Data helpers.
# ---------------------------------------------------------------------------

def types_table(version, rows=300, seed=7):
    return probe.gen_table(rows, seed, version)


def simple_table(rows=400, seed=3, dim=16):
    rng = np.random.default_rng(seed)
    vecs = rng.normal(size=(rows, dim)).astype(np.float32)
    cats = np.array(["red", "green", "blue", "cyan", "gray"])
    return pa.table({
        "id": pa.array(np.arange(rows, dtype=np.int64)),
        "qty": pa.array(rng.integers(0, 50, size=rows).astype(np.int32)),
        "cat": pa.array(cats[rng.integers(0, len(cats), size=rows)].tolist()),
        "tags": pa.array([[str(t) for t in cats[rng.integers(0, 5, size=int(k))]] for k in
                          rng.integers(0, 3, size=rows)], pa.list_(pa.utf8())),
        "text": pa.array([f"row {i} says {cats[i % 5]} things" for i in range(rows)]),
        "vec": pa.FixedSizeListArray.from_arrays(pa.array(vecs.reshape(-1)), dim),
    })


def vector_table(rows=3000, dim=16, seed=11, clusters=12):
    rng = np.random.default_rng(seed)
    centers = rng.normal(size=(clusters, dim)) * 4
    vecs = (centers[rng.integers(0, clusters, size=rows)] + rng.normal(size=(rows, dim))).astype(np.float32)
    return pa.table({
        "id": pa.array(np.arange(rows, dtype=np.int64)),
        "vec": pa.FixedSizeListArray.from_arrays(pa.array(vecs.reshape(-1)), dim),
    }), vecs


def query_vectors(vecs, n=5, seed=5):
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, len(vecs), size=n)
    return [(vecs[i] + rng.normal(size=vecs.shape[1]) * 0.1).astype(np.float32) for i in picks]


def vec_text(v):
    return json.dumps([float(x) for x in v])


def ids_of(jsonl_bytes):
    return [json.loads(line)["id"] for line in jsonl_bytes.decode().splitlines() if line.strip()]


def recall(found, truth):
    return len(set(found) & set(truth)) / max(1, len(truth))


# ---------------------------------------------------------------------------
# A: lancelet writes, pylance 14 reads.
# ---------------------------------------------------------------------------

def _a_types(c, version):
    table = types_table(version)
    c.write_arrow("in.arrow", table)
    c.ll("create", "t.lance", "--from", "in.arrow", "--file-version", version)
    c.expect_equal(table, c.py_table("t.lance"), "pylance scan vs input")
    if c.py("count", "t.lance").strip() != str(table.num_rows).encode():
        raise CaseFailure("count differs")


for _v in ("2.0", "2.1", "2.2"):
    case("A", f"types-{_v}")(lambda c, v=_v: _a_types(c, v))


@case("A", "fragments-deletions")
def _a_deletions(c):
    table = types_table("2.2", rows=500)
    c.write_arrow("in.arrow", table)
    c.ll("create", "t.lance", "--from", "in.arrow", "--max-rows-per-file", "120")
    c.ll("delete", "t.lance", "--where", "id % 7 = 0 OR id BETWEEN 240 AND 359")
    c.expect_equal(c.ll_table("t.lance"), c.py_table("t.lance"), "pylance vs lancelet")
    c.expect_equal(c.ll_table("t.lance", "--with-rowaddr", "--columns", "id"),
                   c.py_table("t.lance", "--with-rowaddr", "--columns", "id"), "row addresses")


def _a_update(c, mode, version="2.2"):
    table = types_table(version, rows=300)
    c.write_arrow("in.arrow", table)
    c.ll("create", "t.lance", "--from", "in.arrow", "--file-version", version, "--max-rows-per-file", "100")
    c.ll("update", "t.lance", "--set", "c_int32 = 7", "--set", "c_utf8 = upper(c_utf8)",
         "--where", "id % 3 = 0", "--mode", mode)
    c.ll("update", "t.lance", "--set", "c_float64 = NULL", "--where", "id < 20", "--mode", mode)
    return c.ll_table("t.lance")


for _mode in ("columns", "rows"):
    @case("A", f"update-{_mode}")
    def _a_update_plain(c, mode=_mode):
        expected = _a_update(c, mode)
        c.expect_equal(expected, c.py_table("t.lance"), "pylance vs lancelet", sort_key="id")


@case("A", "update-overlay-without-env")
def _a_overlay_noenv(c):
    _a_update(c, "overlay")
    err = c.py("scan", "t.lance", expect_fail=True)
    c.note(f"pylance refuses without {probe.OVERLAY_ENV}: {err}")


for _v in ("2.0", "2.1", "2.2"):
    @case("A", f"update-overlay-with-env-{_v}")
    def _a_overlay_env(c, v=_v):
        expected = _a_update(c, "overlay", v)
        env = {probe.OVERLAY_ENV: "1"}
        c.expect_equal(expected, c.py_table("t.lance", env=env), "pylance vs lancelet", sort_key="id")


@case("A", "overlay-null-struct-known-divergence")
def _a_overlay_null_struct(c):
    """An overlay setting a struct cell to NULL: lancelet reads NULL (the overlay spec);
    lance 12.0.0 kept the base row's struct validity (README's known divergence). The case
    passes while pylance 14 still does what 12.0.0 did, and says so."""
    table = types_table("2.2", rows=100)
    c.write_arrow("in.arrow", table)
    c.ll("create", "t.lance", "--from", "in.arrow")
    c.ll("update", "t.lance", "--set", "c_struct = NULL", "--where", "id = 1", "--mode", "overlay")
    env = {probe.OVERLAY_ENV: "1"}
    ours = c.ll_table("t.lance", "--where", "id = 1", "--columns", "c_struct").column(0).to_pylist()
    theirs = c.py_table("t.lance", "--where", "id = 1", "--columns", "c_struct", env=env).column(0).to_pylist()
    base = table.filter(pa.compute.equal(table["id"], 1))["c_struct"].to_pylist()
    c.note(f"lancelet {ours}, pylance {theirs} (base {base})")
    if ours != [None]:
        raise CaseFailure("lancelet does not read the overlay's NULL")
    if theirs == [None]:
        c.note("pylance 14 now agrees with lancelet")
    elif theirs != [{"a": None, "b": None}]:
        raise CaseFailure("pylance reads neither NULL nor the struct of NULL children")


@case("A", "overlay-then-optimize")
def _a_optimize(c):
    _a_update(c, "overlay")
    c.ll("optimize", "t.lance")
    c.expect_equal(c.ll_table("t.lance"), c.py_table("t.lance"), "pylance (no env) vs lancelet", sort_key="id")


@case("A", "stable-row-ids")
def _a_stable(c):
    table = simple_table()
    c.write_arrow("in.arrow", table.drop_columns(["tags"]))
    c.ll("create", "t.lance", "--from", "in.arrow", "--stable-row-ids", "--max-rows-per-file", "150")
    c.ll("update", "t.lance", "--set", "qty = qty + 100", "--where", "id % 5 = 0", "--mode", "rows")
    c.ll("delete", "t.lance", "--where", "id % 11 = 0")
    cols = ("--columns", "id,qty", "--with-rowid")
    c.expect_equal(c.ll_table("t.lance", *cols), c.py_table("t.lance", *cols), "_rowid", sort_key="id")


@case("A", "time-travel-and-tags")
def _a_versions(c):
    table = simple_table()
    c.write_arrow("a.arrow", table.slice(0, 200))
    c.write_arrow("b.arrow", table.slice(200))
    c.ll("create", "t.lance", "--from", "a.arrow")
    c.ll("append", "t.lance", "--from", "b.arrow")
    c.expect_equal(c.ll_table("t.lance", "--version", "1"), c.py_table("t.lance", "--version", "1"), "version 1")
    c.py("tag", "t.lance", "create", "first", "1")
    c.expect_equal(c.ll_table("t.lance", "--version", "1"), c.py_table("t.lance", "--version", "first"),
                   "tag 'first'")
    c.ll("cleanup", "t.lance", "--keep", "1", "--force")
    c.expect_equal(table.slice(0, 200), c.ll_table("t.lance", "--version", "1"), "tagged v1 after lancelet cleanup")


def _a_base(c, rows=400, per_file=150):
    table = simple_table(rows)
    c.write_arrow("in.arrow", table)
    c.ll("create", "t.lance", "--from", "in.arrow", "--max-rows-per-file", str(per_file))
    return table


def _a_same(c, *extra, env=None):
    c.expect_equal(c.ll_table("t.lance", *extra), c.py_table("t.lance", *extra, env=env), "pylance reads lancelet's",
                   sort_key="id")


@case("A", "merge-insert")
def _a_merge(c):
    """lancelet's merge-insert (matched rows updated, new ones inserted, rows the source
    lacks deleted) is read by pylance 14, and equals pylance's merge_insert of the same
    source on a copy."""
    table = _a_base(c)
    shutil.copytree(c.path("t.lance"), c.path("p.lance"))
    src = simple_table(100, seed=44).to_pydict()
    src["id"] = list(range(350, 450))
    c.write_arrow("src.arrow", pa.table(src, schema=table.schema))
    c.ll("merge-insert", "t.lance", "--from", "src.arrow", "--on", "id", "--when-matched-update-all",
         "--when-not-matched-insert-all", "--when-not-matched-by-source-delete")
    env = {probe.OVERLAY_ENV: "1"}
    _a_same(c, env=env)
    c.py("merge-insert", "p.lance", "--on", "id", "--data", "src.arrow", "--delete-not-matched-by-source")
    c.expect_equal(c.py_table("p.lance"), c.py_table("t.lance", env=env), "pylance's own merge_insert",
                   sort_key="id")


@case("A", "add-drop-alter-columns")
def _a_columns(c):
    """lancelet's add, drop and rename of columns are read by pylance 14 after each step,
    and give the rows pylance's own schema changes give on a copy."""
    _a_base(c)
    shutil.copytree(c.path("t.lance"), c.path("p.lance"))
    c.ll("add-columns", "t.lance", "--expr", "q2 = qty * 2", "--expr", "label = concat(cat, '!')")
    _a_same(c)
    c.ll("drop-columns", "t.lance", "text")
    _a_same(c)
    c.ll("alter-columns", "t.lance", "--rename", "cat=colour", "--nullable", "id")
    _a_same(c)
    c.py("add-columns", "p.lance", "--expr", "q2 = qty * 2", "--expr", "label = concat(cat, '!')")
    c.py("drop-columns", "p.lance", "--columns", "text")
    c.py("alter-columns", "p.lance", "--rename", "cat=colour", "--nullable", "id")
    # q2 = qty * 2 is int64 in lancelet (integer literals are int64), int32 in pylance: compared by value.
    c.expect_equal(c.py_table("p.lance"), c.py_table("t.lance"), "pylance's own schema changes", sort_key="id",
                   check_types=False)
    ours = json.loads(c.py("schema", "t.lance"))
    theirs = json.loads(c.py("schema", "p.lance"))
    if [f["name"] for f in ours["fields"]] != [f["name"] for f in theirs["fields"]]:
        raise CaseFailure(f"columns differ: {ours['fields']} against pylance's {theirs['fields']}")


@case("A", "restore-tags-cleanup")
def _a_restore(c):
    """lancelet's restore, tags and cleanup as pylance 14 sees them: the latest version
    holds the restored rows, the tag names its version, cleanup kept the tagged one."""
    table = _a_base(c)
    c.write_arrow("more.arrow", simple_table(50, seed=9).set_column(0, "id", pa.array(range(1000, 1050),
                                                                                          pa.int64())))
    c.ll("append", "t.lance", "--from", "more.arrow")                       # version 2
    c.ll("delete", "t.lance", "--where", "id < 300")                        # version 3
    c.ll("tag", "create", "t.lance", "appended", "--version", "2")
    c.ll("restore", "t.lance", "--version", "2")                            # version 4
    c.ll("cleanup", "t.lance", "--keep", "1", "--force")
    appended = c.ll_table("t.lance", "--version", "2")
    if appended.num_rows != table.num_rows + 50:
        raise CaseFailure(f"version 2 holds {appended.num_rows} rows")
    c.expect_equal(appended, c.py_table("t.lance"), "pylance's latest after the restore", sort_key="id")
    c.expect_equal(appended, c.py_table("t.lance", "--version", "appended"), "pylance's read of the tag",
                   sort_key="id")
    tags = [json.loads(x) for x in c.py("tag", "t.lance", "list").splitlines()]
    if tags != [{"tag": "appended", "version": 2}]:
        raise CaseFailure(f"pylance lists the tags {tags}")
    versions = [json.loads(x)["version"] for x in c.py("versions", "t.lance").splitlines()]
    if versions != [2, 4]:
        raise CaseFailure(f"pylance lists versions {versions} after cleanup (expected the tagged 2 and the latest 4)")


def _scalar_index_case(c, column, kind, where):
    table = simple_table()
    c.write_arrow("in.arrow", table)
    c.ll("create", "t.lance", "--from", "in.arrow", "--max-rows-per-file", "150")
    c.ll("index", "create", "t.lance", column, "--type", kind)
    listed = [json.loads(x) for x in c.py("indices", "t.lance").splitlines()]
    if not listed:
        raise CaseFailure("pylance lists no index")
    plan = c.py("explain", "t.lance", "--where", where).decode()
    used = "ScalarIndexQuery" in plan or "MaterializeIndex" in plan or "IndexedRead" in plan
    c.note(f"listed {listed}; plan uses index: {used}")
    if not used:
        raise CaseFailure("pylance's plan does not use the index: " + " | ".join(plan.splitlines()[:4]))
    py_ids = c.py_table("t.lance", "--where", where, "--columns", "id")
    c.expect_equal(c.ll_table("t.lance", "--where", where, "--columns", "id", "--no-index"), py_ids,
                   "filtered rows", sort_key="id")


@case("A", "index-btree")
def _a_btree(c):
    _scalar_index_case(c, "qty", "btree", "qty = 7")


@case("A", "index-bitmap")
def _a_bitmap(c):
    _scalar_index_case(c, "cat", "bitmap", "cat = 'blue'")


def _a_vector_index(c, kind, distance="l2"):
    table, vecs = vector_table()
    c.write_arrow("in.arrow", table)
    c.ll("create", "t.lance", "--from", "in.arrow", "--max-rows-per-file", "1000")
    extra = ["--sub-vectors", "4"] if kind == "ivf_pq" else []
    c.ll("index", "create", "t.lance", "vec", "--type", kind, "--partitions", "12", "--distance", distance, *extra)
    listed = [json.loads(x) for x in c.py("indices", "t.lance").splitlines()]
    if not listed:
        raise CaseFailure("pylance lists no index")
    q = query_vectors(vecs)
    plan = c.py("search", "t.lance", "--vector", vec_text(q[0]), "--distance", distance,
                "--nprobes", "4", "--explain").decode()
    if "ANN" not in plan:
        raise CaseFailure("pylance's plan has no ANN node: " + " | ".join(plan.splitlines()[:3]))
    r_py, r_ll = [], []
    for v in q:
        base = ["--vector", vec_text(v), "--distance", distance, "-k", "10", "--columns", "id"]
        truth = ids_of(c.py("search", "t.lance", *base, "--exact"))
        r_py.append(recall(ids_of(c.py("search", "t.lance", *base, "--nprobes", "4")), truth))
        r_ll.append(recall(ids_of(c.ll("search", "t.lance", *base, "--nprobes", "4", "--format", "jsonl")), truth))
    c.note(f"listed {listed[0]['type']}; recall@10 nprobes=4: pylance {np.mean(r_py):.3f}, "
           f"lancelet {np.mean(r_ll):.3f}")
    if np.mean(r_py) < np.mean(r_ll) - 0.02:
        raise CaseFailure(f"pylance's recall on lancelet's index is low: {np.mean(r_py):.3f}")


for _kind in ("ivf_flat", "ivf_pq"):
    for _dist in ("l2", "cosine", "dot"):
        case("A", f"index-{_kind}-{_dist}")(lambda c, k=_kind, d=_dist: _a_vector_index(c, k, d))


@case("A", "ivf-overlay-moved-vector")
def _a_ivf_overlay(c):
    table, vecs = vector_table()
    c.write_arrow("in.arrow", table)
    c.ll("create", "t.lance", "--from", "in.arrow")
    c.ll("index", "create", "t.lance", "vec", "--type", "ivf_pq", "--partitions", "12", "--sub-vectors", "4")
    target = vec_text(vecs[17])
    c.ll("update", "t.lance", "--set", f"vec = {target}", "--where", "id = 2999", "--mode", "overlay")
    env = {probe.OVERLAY_ENV: "1"}
    out = c.py("search", "t.lance", "--vector", target, "-k", "2", "--columns", "id", env=env)
    rows = [json.loads(x) for x in out.splitlines()]
    found = {r["id"]: r["_distance"] for r in rows}
    if found.get(2999) != 0 or found.get(17) != 0:
        raise CaseFailure(f"pylance's top 2: {rows}")


@case("A", "pylance-writes-on-lancelet-dataset")
def _a_py_writes(c):
    table = types_table("2.2", rows=300)
    c.write_arrow("in.arrow", table)
    c.write_arrow("more.arrow", types_table("2.2", rows=50, seed=99))
    c.ll("create", "t.lance", "--from", "in.arrow", "--max-rows-per-file", "100")
    c.ll("index", "create", "t.lance", "c_int32")
    c.py("write", "t.lance", "--data", "more.arrow", "--mode", "append")
    c.py("delete", "t.lance", "--where", "id < 10")
    c.py("update", "t.lance", "--set", "c_int16 = 5", "--where", "id % 4 = 1")
    c.py("optimize", "t.lance", "--indices")
    c.expect_equal(c.py_table("t.lance"), c.ll_table("t.lance"), "lancelet vs pylance", sort_key="id")


@case("A", "pylance-writes-on-overlaid-dataset")
def _a_py_on_overlays(c):
    _a_update(c, "overlay")
    env = {probe.OVERLAY_ENV: "1"}
    c.py("update", "t.lance", "--set", "c_int64 = 1", "--where", "id % 5 = 0", env=env)
    c.py("delete", "t.lance", "--where", "id = 3", env=env)
    c.expect_equal(c.py_table("t.lance", env=env), c.ll_table("t.lance"), "lancelet vs pylance", sort_key="id")
    c.py("optimize", "t.lance", env=env)
    c.expect_equal(c.py_table("t.lance"), c.ll_table("t.lance"), "after pylance optimize", sort_key="id")


# ---------------------------------------------------------------------------
# B: pylance 14 writes, lancelet reads.
# ---------------------------------------------------------------------------

def _b_types(c, version):
    table = types_table(version if version in ("2.0", "2.1") else "2.2")
    c.write_arrow("in.arrow", table)
    args = ["write", "t.lance", "--data", "in.arrow"]
    if version != "default":
        args += ["--file-version", version]
    c.py(*args)
    info = json.loads(c.py("info", "t.lance"))
    c.note(f"data_storage_version {info['data_storage_version']}")
    c.expect_equal(table, c.ll_table("t.lance"), "lancelet scan vs input")


for _v in ("default", "2.0", "2.1", "2.2"):
    case("B", f"types-{_v}")(lambda c, v=_v: _b_types(c, v))


@case("B", "types-2.3-unstable")
def _b_types_23(c):
    table = types_table("2.2", rows=50)
    c.write_arrow("in.arrow", table)
    c.py("write", "t.lance", "--data", "in.arrow", "--file-version", "2.3")
    err = c.ll("scan", "t.lance", expect_fail=True)
    c.note(f"lancelet refuses: {err}")


@case("B", "types-legacy")
def _b_types_legacy(c):
    """Legacy (0.1) files store no validity: both sides read NULLs as stored values."""
    table = types_table("2.0", rows=100).drop_columns(["c_dict"])
    c.write_arrow("in.arrow", table)
    c.py("write", "t.lance", "--data", "in.arrow", "--file-version", "legacy")
    c.expect_equal(c.py_table("t.lance"), c.ll_table("t.lance"), "lancelet vs pylance")


def _b_base(c, rows=400, per_file=150, stable=False):
    table = simple_table(rows)
    c.write_arrow("in.arrow", table)
    args = ["write", "t.lance", "--data", "in.arrow", "--max-rows-per-file", str(per_file)]
    if stable:
        args.append("--stable-row-ids")
    c.py(*args)
    return table


def _b_same(c, *extra, sort_key="id"):
    c.expect_equal(c.py_table("t.lance", *extra), c.ll_table("t.lance", *extra), "lancelet vs pylance",
                   sort_key=sort_key)


@case("B", "delete-update")
def _b_delete_update(c):
    _b_base(c)
    c.py("delete", "t.lance", "--where", "id % 7 = 0")
    out = c.py("update", "t.lance", "--set", "qty = qty * 2", "--set", "cat = 'z'", "--where", "id < 50")
    c.note(f"update returned {out.decode().strip()}")
    _b_same(c)
    _b_same(c, "--with-rowaddr", "--columns", "id")


@case("B", "merge-insert")
def _b_merge(c):
    table = _b_base(c)
    src = simple_table(100, seed=44).to_pydict()
    src["id"] = list(range(350, 450))
    c.write_arrow("src.arrow", pa.table(src, schema=table.schema))
    out = c.py("merge-insert", "t.lance", "--on", "id", "--data", "src.arrow", "--delete-not-matched-by-source")
    c.note(f"merge_insert returned {out.decode().strip()}")
    _b_same(c)


@case("B", "compaction")
def _b_compact(c):
    _b_base(c, per_file=40)
    c.py("delete", "t.lance", "--where", "id % 3 = 0")
    c.py("optimize", "t.lance")
    _b_same(c)
    _b_same(c, "--version", "2")


@case("B", "add-drop-alter-columns")
def _b_columns(c):
    _b_base(c)
    c.py("add-columns", "t.lance", "--expr", "q2 = qty * 2", "--expr", "label = concat(cat, '!')")
    _b_same(c)
    c.py("drop-columns", "t.lance", "--columns", "text")
    _b_same(c)
    c.py("alter-columns", "t.lance", "--rename", "cat=colour", "--cast", "qty=int64", "--nullable", "id")
    _b_same(c)
    schema = json.loads(c.py("schema", "t.lance"))
    c.note(f"schema after alter: {[(f['name'], f['type']) for f in schema['fields']]}")


@case("B", "stable-row-ids")
def _b_stable(c):
    _b_base(c, stable=True)
    c.py("update", "t.lance", "--set", "qty = 0", "--where", "id % 4 = 0")
    c.py("delete", "t.lance", "--where", "id % 9 = 0")
    c.py("optimize", "t.lance")
    _b_same(c, "--with-rowid", "--columns", "id,qty")


@case("B", "time-travel-and-tags")
def _b_versions(c):
    table = _b_base(c)
    c.py("delete", "t.lance", "--where", "id < 100")
    c.py("tag", "t.lance", "create", "orig", "1")
    c.expect_equal(table, c.ll_table("t.lance", "--version", "1"), "version 1")
    c.ll("cleanup", "t.lance", "--keep", "1", "--force")
    c.expect_equal(table, c.ll_table("t.lance", "--version", "1"), "tagged version 1 after lancelet cleanup")
    c.py("scan", "t.lance", "--version", "orig")


@case("B", "lancelet-commits-on-pylance-dataset")
def _b_lancelet_commits(c):
    """lancelet's commits on a dataset pylance 14 made (with an index, so the manifest's
    sections move): pylance 14 opens every version lancelet wrote."""
    _b_base(c)
    c.py("create-index", "t.lance", "qty", "--type", "BTREE")
    c.ll("delete", "t.lance", "--where", "id % 2 = 0")
    c.ll("optimize", "t.lance")
    c.ll("update", "t.lance", "--set", "qty = 1", "--where", "id = 7", "--mode", "rows")
    c.ll("update", "t.lance", "--set", "qty = 2", "--where", "id = 9", "--mode", "columns")
    c.ll("index", "create", "t.lance", "cat", "--type", "bitmap")
    _b_same(c)
    c.ll("update", "t.lance", "--set", "qty = 3", "--where", "id = 11", "--mode", "overlay")
    env = {probe.OVERLAY_ENV: "1"}
    c.expect_equal(c.py_table("t.lance", env=env), c.ll_table("t.lance"), "with an overlay", sort_key="id")
    listed = [json.loads(x)["name"] for x in c.py("indices", "t.lance", env=env).splitlines()]
    c.note(f"pylance lists {listed}")


def _b_scalar_index(c, column, kind, where):
    _b_base(c)
    c.py("create-index", "t.lance", column, "--type", kind)
    listing = c.ll("index", "list", "t.lance").decode().strip()
    c.note(f"lancelet index list: {' | '.join(listing.splitlines()[:3])}")
    explain = c.ll("explain", "t.lance", "--where", where).decode().strip()
    c.note(f"explain: {' | '.join(explain.splitlines()[:2])}")
    c.expect_equal(c.py_table("t.lance", "--where", where, "--columns", "id"),
                   c.ll_table("t.lance", "--where", where, "--columns", "id"), "filtered rows", sort_key="id")
    c.ll("update", "t.lance", "--set", "id = id", "--where", "id = 1", "--mode", "columns")
    c.py("count", "t.lance", "--where", where)


for _kind, _col, _where in (("BTREE", "qty", "qty = 7"), ("BITMAP", "cat", "cat = 'blue'"),
                            ("LABEL_LIST", "tags", "array_has(tags, 'red')"),
                            ("INVERTED", "text", "id < 5"), ("ZONEMAP", "qty", "qty > 45"),
                            ("NGRAM", "cat", "contains(cat, 'ee')"), ("BLOOMFILTER", "qty", "qty = 3")):
    case("B", f"index-{_kind.lower()}")(lambda c, k=_kind, col=_col, w=_where: _b_scalar_index(c, col, k, w))


def _b_vector_index(c, kind, distance="l2"):
    table, vecs = vector_table()
    c.write_arrow("in.arrow", table)
    c.py("write", "t.lance", "--data", "in.arrow", "--max-rows-per-file", "1000")
    extra = ["--sub-vectors", "4"] if "PQ" in kind else []
    c.py("create-index", "t.lance", "vec", "--type", kind, "--partitions", "12", "--distance", distance, *extra)
    listing = c.ll("index", "list", "t.lance").decode().strip()
    c.note(f"lancelet index list: {' | '.join(listing.splitlines()[:2])}")
    q = query_vectors(vecs)
    explain = c.ll("search", "t.lance", "--vector", vec_text(q[0]), "--distance", distance, "--nprobes", "4",
                   "--explain").decode()
    c.note(f"lancelet explain: {' | '.join(explain.strip().splitlines()[:2])}")
    r_py, r_ll, same = [], [], 0
    for v in q:
        base = ["--vector", vec_text(v), "--distance", distance, "-k", "10", "--columns", "id"]
        truth = ids_of(c.py("search", "t.lance", *base, "--exact"))
        py_ids = ids_of(c.py("search", "t.lance", *base, "--nprobes", "4"))
        ll_ids = ids_of(c.ll("search", "t.lance", *base, "--nprobes", "4", "--format", "jsonl"))
        same += py_ids == ll_ids
        r_py.append(recall(py_ids, truth))
        r_ll.append(recall(ll_ids, truth))
    c.note(f"recall@10 nprobes=4: pylance {np.mean(r_py):.3f}, lancelet {np.mean(r_ll):.3f}; "
           f"identical top-10 in {same}/{len(q)}")
    if np.mean(r_ll) < np.mean(r_py) - 0.02:
        raise CaseFailure(f"lancelet's recall on pylance's index is low: {np.mean(r_ll):.3f}")
    if kind == "IVF_FLAT" and same != len(q):
        raise CaseFailure(f"IVF_FLAT top-10 differs in {len(q) - same} of {len(q)} queries")


for _kind in ("IVF_FLAT", "IVF_PQ"):
    for _dist in ("l2", "cosine", "dot"):
        case("B", f"index-{_kind.lower()}-{_dist}")(lambda c, k=_kind, d=_dist: _b_vector_index(c, k, d))


def _b_unsearched_vector_index(c, kind):
    """Kinds lancelet does not search: listed by their type, and a search on the column
    scores every row (the exact top-k), saying why in --explain."""
    table, vecs = vector_table()
    c.write_arrow("in.arrow", table)
    c.py("write", "t.lance", "--data", "in.arrow", "--max-rows-per-file", "1000")
    extra = ["--sub-vectors", "4"] if "PQ" in kind else []
    c.py("create-index", "t.lance", "vec", "--type", kind, "--partitions", "12", *extra)
    listing = c.ll("index", "list", "t.lance").decode().strip()
    if kind not in listing:
        raise CaseFailure(f"lancelet's index list does not name {kind}: {listing}")
    q = query_vectors(vecs)
    explain = c.ll("search", "t.lance", "--vector", vec_text(q[0]), "--explain").decode()
    reason = [ln.strip() for ln in explain.splitlines() if "exact:" in ln]
    c.note(f"lancelet explain: {reason[0] if reason else explain.strip().splitlines()[:2]}")
    r_py = []
    for v in q:
        base = ["--vector", vec_text(v), "-k", "10", "--columns", "id"]
        truth = ids_of(c.py("search", "t.lance", *base, "--exact"))
        r_py.append(recall(ids_of(c.py("search", "t.lance", *base, "--nprobes", "4")), truth))
        ours = ids_of(c.ll("search", "t.lance", *base, "--format", "jsonl"))
        if ours != truth:
            raise CaseFailure(f"lancelet's search is not the exact top-10: {ours} vs {truth}")
    c.note(f"pylance's own recall@10 at nprobes=4: {np.mean(r_py):.3f}")


for _kind in ("IVF_SQ", "IVF_RQ", "IVF_HNSW_SQ", "IVF_HNSW_PQ", "IVF_HNSW_FLAT"):
    case("B", f"index-{_kind.lower()}-l2")(lambda c, k=_kind: _b_unsearched_vector_index(c, k))


# ---------------------------------------------------------------------------

def run(args):
    os.makedirs(args.workdir, exist_ok=True)
    only = args.only.split(",") if args.only else None
    failures = ran = 0
    for direction, name, fn in CASES:
        full = f"{direction}/{name}"
        if only and not any(full.startswith(o) or name.startswith(o) for o in only):
            continue
        root = os.path.join(args.workdir, direction + "-" + name)
        shutil.rmtree(root, ignore_errors=True)
        os.makedirs(root)
        ctx = Ctx(root, args.lancelet, os.path.join(os.path.dirname(os.path.abspath(__file__)), "probe.py"))
        start = time.monotonic()
        try:
            fn(ctx)
            ok, detail = True, "; ".join(ctx.notes)
        except CaseFailure as e:
            ok, detail = False, "; ".join([str(e)] + ctx.notes)
        except Exception as e:  # a probe bug: report it as such, keep going
            ok, detail = False, f"probe error {type(e).__name__}: {e}"
        failures += not ok
        ran += 1
        print(json.dumps({"case": name, "dir": direction, "ok": ok, "detail": detail,
                          "seconds": round(time.monotonic() - start, 1),
                          "repro": f"cd {root} && " + " && ".join(ctx.cmds)}), flush=True)
    # The closing line ctest's log ends with; no case run (a wrong --only) is a failure.
    print(f"pylance14 matrix: {ran - failures} passed, {failures} failed", flush=True)
    return 1 if failures or not ran else 0
