// Times the reference's filtered query: median of R warm runs, in one process.
//   node bench/reference_query.mjs DIR/NAME.lance --where P [--columns a,b] [--repeat R] [--create-index COL]
// --create-index COL first times the reference's createIndex (BTree) on COL and prints
// that too. Needs LANCE_ENABLE_UNSTABLE_DATA_OVERLAY_FILES for overlaid datasets.
import { createRequire } from "node:module";
import { basename, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const require = createRequire(join(here, "..", "tests", "oracle", "package.json"));
const lancedb = require("@lancedb/lancedb");

function arg(name, fallback) {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : fallback;
}

const path = process.argv[2];
const where = arg("--where", "");
const columns = arg("--columns", "");
const repeat = Number(arg("--repeat", "5"));
const db = await lancedb.connect(dirname(path));
const table = await db.openTable(basename(path).replace(/\.lance$/, ""));
const indexColumn = arg("--create-index", "");
if (indexColumn) {
  const start = process.hrtime.bigint();
  await table.createIndex(indexColumn, { config: lancedb.Index.btree(), replace: true });
  const s = Number(process.hrtime.bigint() - start) / 1e9;
  console.log(JSON.stringify({ create_index_s: Number(s.toFixed(4)), rss_mb: Math.round(process.memoryUsage().rss / 1048576) }));
}
const times = [];
let rows = 0;
for (let r = 0; r < repeat + 1; r++) {  // the first run warms caches
  const start = process.hrtime.bigint();
  const q = table.query().where(where);
  if (columns) q.select(columns.split(","));
  rows = 0;
  for await (const batch of q) rows += batch.numRows;
  const s = Number(process.hrtime.bigint() - start) / 1e9;
  if (r > 0) times.push(s);
}
times.sort((a, b) => a - b);
const median = times[Math.floor(times.length / 2)];
console.log(JSON.stringify({ rows, median_ms: Number((median * 1e3).toFixed(3)) }));
