// The reference's side of bench/ann_compare.py, in one node process per use.
//   node bench/reference_ann.mjs build DIR/NAME.lance ivf_pq|ivf_flat PARTITIONS [SUB_VECTORS BITS]
//     builds the index on column emb; prints {"build_s"} (the createIndex call only).
//   node bench/reference_ann.mjs serve
//     reads one JSON request a line, {"ds", "queries", "dim", "nprobes", "refine", "mode"},
//     runs every query of the raw float32 file `queries` against the table, and answers
//     one JSON line {"seconds", "ids"} (ids: the 10 ids of each query, in query order).
//     "single": each query awaited before the next; "batch": all queries issued at once
//     (Promise.all), the reference's runtime running them on its own threads. Twenty
//     untimed queries warm each request up. Tables stay open between requests.
import readline from "node:readline";
import fs from "node:fs";
import { openTable, require } from "./reference_common.mjs";

const lancedb = require("@lancedb/lancedb");

async function build([path, type, partitions, subVectors, bits]) {
  const table = await openTable(path);
  const options = { numPartitions: Number(partitions) };
  let config;
  if (type === "ivf_pq") config = lancedb.Index.ivfPq({ ...options, numSubVectors: Number(subVectors), numBits: Number(bits) });
  else config = lancedb.Index.ivfFlat(options);
  const start = process.hrtime.bigint();
  await table.createIndex("emb", { config });
  console.log(JSON.stringify({ build_s: Number(process.hrtime.bigint() - start) / 1e9 }));
}

async function serve() {
  const tables = new Map();
  const lines = readline.createInterface({ input: process.stdin });
  for await (const line of lines) {
    if (!line.trim()) continue;
    const req = JSON.parse(line);
    if (!tables.has(req.ds)) tables.set(req.ds, await openTable(req.ds));
    const table = tables.get(req.ds);
    const raw = fs.readFileSync(req.queries);
    const all = new Float32Array(raw.buffer, raw.byteOffset, raw.byteLength / 4);
    const vectors = [];
    for (let i = 0; i < all.length; i += req.dim) vectors.push(all.subarray(i, i + req.dim));
    const search = async (v) => {
      const q = table.query().nearestTo(v).column("emb").limit(10).select(["id", "_distance"]).nprobes(req.nprobes);
      if (req.refine) q.refineFactor(req.refine);
      return (await q.toArray()).map((row) => Number(row.id));
    };
    for (const v of vectors.slice(0, 20)) await search(v);
    const start = process.hrtime.bigint();
    let ids;
    if (req.mode === "batch") ids = await Promise.all(vectors.map(search));
    else {
      ids = [];
      for (const v of vectors) ids.push(await search(v));
    }
    const seconds = Number(process.hrtime.bigint() - start) / 1e9;
    console.log(JSON.stringify({ seconds, ids }));
  }
}

const [command, ...rest] = process.argv.slice(2);
if (command === "build") await build(rest);
else if (command === "serve") await serve();
else {
  console.error("usage: reference_ann.mjs build DIR/NAME.lance TYPE PARTITIONS [SUB_VECTORS BITS] | serve");
  process.exit(2);
}
