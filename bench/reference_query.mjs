// Times the reference's filtered query: median of R warm runs, in one process.
//   node bench/reference_query.mjs DIR/NAME.lance --where P [--columns a,b] [--repeat R] [--create-index COL]
// --create-index COL first times the reference's createIndex (BTree) on COL and prints
// that too. Needs LANCE_ENABLE_UNSTABLE_DATA_OVERLAY_FILES for overlaid datasets.
import { arg, openTable, require } from "./reference_common.mjs";

const lancedb = require("@lancedb/lancedb");

const path = process.argv[2];
const where = arg("--where", "");
const columns = arg("--columns", "");
const repeat = Number(arg("--repeat", "5"));
const table = await openTable(path);
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
