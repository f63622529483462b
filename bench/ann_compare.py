#!/usr/bin/env python3
"""IVF_PQ / IVF_FLAT search, lancelet beside the reference and faiss (issue 43's
"Performance" section). Run through bench/ann_compare.sh, or:

  PYTHONPATH=build/release/python /usr/bin/python3 bench/ann_compare.py [--rows N] [--dim D]
      [--queries Q] [--work DIR] [--build build/release] [--rounds R] [--nprobes 1,2,4,...]
      [--steps build,query,faiss,stale]

Data (made once under WORK/ann_NxD): N rows (id int64, emb fixed_size_list<float32, D>)
drawn around 1,000 seeded Gaussian centres, and Q held-out queries from the same
distribution; the exact 10 nearest of each query (numpy, checked once against lancelet's
exact search) are the ground truth. Each side builds its own index on its own copy
(256 partitions, 16 sub-vectors x 8 bits for IVF_PQ; each side's defaults otherwise:
sample rate 256, at most 50 iterations). Build: wall time and peak RSS of the builder
(/usr/bin/time -v; lancelet's whole process, the reference's createIndex call for the
time and its node process for the RSS).

Queries, for each nprobes and refine 0 / 5: (a) lancelet on its own index, (b) lancelet
on the reference's index, (c) the reference on its own index. "single": one query at a
time, each finished before the next; "batch": all Q queries at once, lancelet's through
a pool of 2 Python threads calling Dataset.search (it releases the GIL; the machine has
2 cores), the reference's through Promise.all. Every measurement runs all Q queries after
20 untimed ones; the sides alternate per measurement (a b c a b c ...) in two long-lived
workers, so both see the same load, and the medians of --rounds are printed. QPS at
recall@10 = 0.90 and 0.95 is interpolated along each nprobes curve (linear in recall,
between the two nprobes that bracket it) and the best of refine 0 and 5 is taken.
"""
import argparse
import json
import os
import pathlib
import shutil
import statistics
import subprocess
import sys
import time

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
K = 10
TARGETS = (0.90, 0.95)


def generate(args, data):
    """The rows, the queries and the exact ground truth, written once."""
    import lancelet
    if (data / ".done").exists():
        return
    shutil.rmtree(data, ignore_errors=True)
    data.mkdir(parents=True)
    # Each cluster spreads over its own random 16-dimensional subspace (plus a little
    # isotropic noise), as embeddings have a low intrinsic dimension: with isotropic
    # 128-d noise every row of a cluster is nearly equidistant from a query, and no
    # quantizer, ours or faiss's, separates the 10 nearest.
    rng = np.random.default_rng(43)
    centres = rng.standard_normal((1000, args.dim), dtype=np.float32)
    bases = rng.standard_normal((1000, 16, args.dim), dtype=np.float32) / 4

    def draw(n):
        cluster = rng.integers(0, len(centres), n)
        out = np.empty((n, args.dim), dtype=np.float32)
        for start in range(0, n, 65536):
            c = cluster[start:start + 65536]
            z = rng.standard_normal((len(c), 16), dtype=np.float32)
            out[start:start + len(c)] = (centres[c] + np.einsum("ni,nid->nd", z, bases[c])
                                         + 0.05 * rng.standard_normal((len(c), args.dim), dtype=np.float32))
        return out

    base = draw(args.rows)
    queries = draw(args.queries)
    base.tofile(data / "base.f32")
    queries.tofile(data / "queries.f32")
    lancelet.write_dataset({"id": np.arange(args.rows, dtype=np.int64), "emb": base}, data / "base.lance",
                           max_rows_per_file=max(1, args.rows // 4))
    norms = (base * base).sum(axis=1)
    truth = np.empty((args.queries, K), dtype=np.int32)
    for start in range(0, args.queries, 100):
        q = queries[start:start + 100]
        d = norms[None, :] - 2 * q @ base.T  # + |q|^2, the same for every row of a query
        top = np.argpartition(d, K, axis=1)[:, :K]
        order = np.take_along_axis(d, top, axis=1).argsort(axis=1)
        truth[start:start + 100] = np.take_along_axis(top, order, axis=1)
    truth.tofile(data / "gt.i32")
    ds = lancelet.dataset(data / "base.lance")
    for i in range(10):
        got = ds.search(queries[i].tolist(), column="emb", k=K, exact=True, columns=["id"]).to_numpy("id")
        if set(got.tolist()) != set(truth[i].tolist()):
            sys.exit(f"ground truth: query {i}: lancelet exact {sorted(got)} != numpy {sorted(truth[i])}")
    (data / ".done").touch()
    print(f"data: {args.rows} x {args.dim} in {data}; lancelet's exact search agrees with numpy on 10 queries")


def timed(cmd, env=None):
    """Runs cmd under /usr/bin/time -v: (wall seconds, peak RSS MiB, stdout)."""
    out = subprocess.run(["/usr/bin/time", "-v", *cmd], capture_output=True, text=True, env=env, check=True)
    wall = rss = None
    for line in out.stderr.splitlines():
        if "Elapsed (wall clock)" in line:
            parts = line.rsplit(": ", 1)[1].split(":")
            wall = sum(float(p) * 60 ** i for i, p in enumerate(reversed(parts)))
        if "Maximum resident set size" in line:
            rss = int(line.rsplit(": ", 1)[1]) / 1024
    return wall, rss, out.stdout


def build(args, data):
    """Each side's index on its own copy of base.lance: the timings and the ratios."""
    lancelet_bin = str(pathlib.Path(args.build) / "lancelet")
    for kind in ("ivf_pq", "ivf_flat"):
        params = ["--partitions", "256"] + (["--sub-vectors", "16", "--bits", "8"] if kind == "ivf_pq" else [])
        result = {}
        for side in ("ours", "ref"):
            path = data / f"{kind}_{side}.lance"
            shutil.rmtree(path, ignore_errors=True)
            shutil.copytree(data / "base.lance", path)
            load = os.getloadavg()[0]
            if side == "ours":
                wall, rss, _ = timed([lancelet_bin, "index", "create", str(path), "emb", "--type", kind, *params])
            else:
                _, rss, out = timed(["node", str(HERE / "reference_ann.mjs"), "build", str(path), kind, "256", "16", "8"])
                wall = json.loads(out.strip().splitlines()[-1])["build_s"]
            result[side] = (wall, rss, load)
        (o, r) = result["ours"], result["ref"]
        print(f"build {kind}: lancelet {o[0]:.1f} s {o[1]:.0f} MiB (load {o[2]:.1f}); reference {r[0]:.1f} s "
              f"{r[1]:.0f} MiB (load {r[2]:.1f}); time {o[0] / r[0]:.2f}x, peak RSS {o[1] / r[1]:.2f}x the reference's")
        (data / f"build_{kind}.json").write_text(json.dumps(result))


class Worker:
    """A long-lived query server (this script's `serve`, or reference_ann.mjs serve)."""

    def __init__(self, cmd, env=None):
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)

    def ask(self, request):
        self.proc.stdin.write(json.dumps(request) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            sys.exit(f"worker {self.proc.args} ended")
        return json.loads(line)

    def close(self):
        self.proc.stdin.close()
        self.proc.wait()


def serve():
    """The lancelet worker: answers requests as reference_ann.mjs serve does."""
    from concurrent.futures import ThreadPoolExecutor
    import lancelet
    datasets = {}
    pool = ThreadPoolExecutor(2)
    for line in sys.stdin:
        req = json.loads(line)
        ds = datasets.setdefault(req["ds"], lancelet.dataset(req["ds"]))
        queries = np.fromfile(req["queries"], dtype=np.float32).reshape(-1, req["dim"])
        vectors = [q.tolist() for q in queries]

        def search(v):
            return ds.search(v, column="emb", k=K, nprobes=req["nprobes"], refine_factor=req["refine"] or None,
                             columns=["id"]).to_numpy("id").tolist()

        for v in vectors[:20]:
            search(v)
        start = time.perf_counter()
        ids = list(pool.map(search, vectors)) if req["mode"] == "batch" else [search(v) for v in vectors]
        print(json.dumps({"seconds": time.perf_counter() - start, "ids": ids}), flush=True)


def recall(ids, truth):
    return sum(len(set(got) & set(want)) for got, want in zip(ids, truth.tolist())) / (K * len(truth))


def at_recall(curve, target):
    """QPS where recall@10 reaches target, linear between the bracketing nprobes; None if never."""
    points = sorted(curve)  # (nprobes, recall, qps)
    for (_, r0, q0), (_, r1, q1) in zip(points, points[1:]):
        if r0 < target <= r1:
            return q0 + (q1 - q0) * (target - r0) / (r1 - r0)
    if points and points[0][1] >= target:
        return points[0][2]
    return None


def sweep(args, data, sides, kinds_refines, label):
    """Measures every (side, kind, refine, nprobes, mode) point, sides alternating per round."""
    truth = np.fromfile(data / "gt.i32", dtype=np.int32).reshape(-1, K)
    workers = {}
    env = dict(os.environ, LANCE_ENABLE_UNSTABLE_DATA_OVERLAY_FILES="1", RUST_LOG="error")
    for name, (engine, _) in sides.items():
        if engine not in workers:
            cmd = ([sys.executable, __file__, "serve"] if engine == "lancelet"
                   else ["node", str(HERE / "reference_ann.mjs"), "serve"])
            workers[engine] = Worker(cmd, env)
    results = {}  # (side, kind, refine, mode) -> [(nprobes, recall, qps)]
    for kind, refine in kinds_refines:
        for mode in ("single", "batch"):
            for nprobes in args.nprobes:
                runs = {name: [] for name in sides}
                rec = {}
                for _ in range(args.rounds):
                    for name, (engine, ds) in sides.items():
                        reply = workers[engine].ask({"ds": str(data / ds.format(kind=kind)),
                                                     "queries": str(data / "queries.f32"), "dim": args.dim,
                                                     "nprobes": nprobes, "refine": refine, "mode": mode})
                        runs[name].append(len(truth) / reply["seconds"])
                        rec[name] = recall(reply["ids"], truth)
                line = [f"{label} {kind} refine {refine} {mode:6s} nprobes {nprobes:3d}:"]
                for name in sides:
                    qps = statistics.median(runs[name])
                    results.setdefault((name, kind, refine, mode), []).append((nprobes, rec[name], qps))
                    line.append(f"{name} recall {rec[name]:.3f} {qps:8.1f} qps;")
                print(" ".join(line), f"(load {os.getloadavg()[0]:.1f})", flush=True)
    for w in workers.values():
        w.close()
    return results


def summarise(results, sides, kinds, baseline, label):
    """QPS at each target recall, best over refine settings, and the ratios to `baseline`."""
    for kind in kinds:
        for mode in ("single", "batch"):
            for target in TARGETS:
                best = {}
                for name in sides:
                    values = [at_recall(curve, target) for (n, k, _, m), curve in results.items()
                              if n == name and k == kind and m == mode]
                    if values:  # a side not measured in this run is left out
                        values = [v for v in values if v is not None]
                        best[name] = max(values) if values else None
                base = best.get(baseline)
                parts = []
                for name, qps in best.items():
                    text = f"{name} {qps:.1f}" if qps else f"{name} not reached"
                    if qps and base and name != baseline:
                        text += f" ({qps / base:.2f}x {baseline})"
                    parts.append(text)
                print(f"{label} {kind} {mode} QPS at recall@10 {target:.2f}: " + ", ".join(parts), flush=True)


def faiss_anchor(args, data):
    binary = pathlib.Path(args.build) / "bench" / "faiss_ann_bench"
    if not binary.exists():
        print("faiss: bench/faiss_ann_bench not built (needs libfaiss-dev)")
        return {}
    results = {}
    for kind in ("ivf_pq", "ivf_flat"):
        env = dict(os.environ, OMP_WAIT_POLICY="passive", OPENBLAS_NUM_THREADS="1")
        out = subprocess.run([str(binary), str(data), str(args.rows), str(args.dim), str(args.queries), "--type", kind,
                              "--nprobes", ",".join(map(str, args.nprobes)), "--rounds", str(args.rounds)],
                             capture_output=True, text=True, env=env, check=True).stdout
        runs = {}
        for line in out.splitlines():
            j = json.loads(line)
            if "build_s" in j:
                print(f"faiss {kind} build (train + add, 2 threads): {j['build_s']:.1f} s")
                continue
            runs.setdefault((kind, j["refine"], j["mode"], j["nprobes"]), []).append((j["recall"], j["qps"]))
        for (kind_, refine, mode, nprobes), values in runs.items():
            results.setdefault(("faiss", kind_, refine, mode), []).append(
                (nprobes, values[0][0], statistics.median(v[1] for v in values)))
    for key, curve in sorted(results.items()):
        print(f"faiss {key[1]} refine {key[2]} {key[3]}: " +
              "; ".join(f"nprobes {n} recall {r:.3f} {q:.0f} qps" for n, r, q in curve))
    return results


def stale(args, data):
    """lancelet on its IVF_PQ index with 10% of the vectors overlaid after the build, against
    the same index with none stale (the values are rewritten unchanged, so the ground truth holds)."""
    import lancelet
    path = data / "ivf_pq_stale.lance"
    if not (data / ".stale_done").exists():
        shutil.rmtree(path, ignore_errors=True)
        shutil.copytree(data / "ivf_pq_ours.lance", path)
        lancelet.dataset(path).update({"emb": "emb"}, where="id % 10 = 3")
        (data / ".stale_done").touch()
    sides = {"fresh": ("lancelet", "ivf_pq_ours.lance"), "stale10%": ("lancelet", "ivf_pq_stale.lance")}
    results = sweep(args, data, sides, [("ivf_pq", 0), ("ivf_pq", 5)], "stale")
    summarise(results, sides, ["ivf_pq"], "fresh", "stale")


def main():
    if sys.argv[1:2] == ["serve"]:
        return serve()
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--dim", type=int, default=128)
    parser.add_argument("--queries", type=int, default=1000)
    parser.add_argument("--work", default="bench-data")
    parser.add_argument("--build", default="build/release")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--nprobes", default="1,2,4,8,16,32,64")
    parser.add_argument("--steps", default="build,query,faiss,stale")
    parser.add_argument("--kinds", default="ivf_pq,ivf_flat", help="the index kinds the query step sweeps")
    args = parser.parse_args()
    args.nprobes = [int(n) for n in args.nprobes.split(",")]
    steps = args.steps.split(",")
    data = pathlib.Path(args.work).resolve() / f"ann_{args.rows}x{args.dim}"
    generate(args, data)
    print(f"machine: {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}")
    if "build" in steps:
        build(args, data)
    sides = {"lancelet/own": ("lancelet", "{kind}_ours.lance"), "lancelet/ref-index": ("lancelet", "{kind}_ref.lance"),
             "reference": ("reference", "{kind}_ref.lance")}
    results = {}
    if "query" in steps:
        kinds = args.kinds.split(",")
        results = sweep(args, data, sides, [c for c in [("ivf_pq", 0), ("ivf_pq", 5), ("ivf_flat", 0)] if c[0] in kinds],
                        "query")
    if "faiss" in steps:
        results.update(faiss_anchor(args, data))
        sides["faiss"] = None
    if results:
        summarise(results, sides, [k for k in ["ivf_pq", "ivf_flat"] if k in args.kinds.split(",")], "reference",
                  "summary")
        if "faiss" in sides:
            summarise(results, sides, ["ivf_pq", "ivf_flat"], "faiss", "summary vs faiss")
    if "stale" in steps:
        stale(args, data)


if __name__ == "__main__":
    main()
