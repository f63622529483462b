// Times the reference's full scan of a dataset: median of R warm runs, streamed batch by batch.
//   node bench/reference_scan.mjs DIR/NAME.lance [--repeat R]
import { createRequire } from "node:module";
import { basename, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const require = createRequire(join(here, "..", "tests", "oracle", "package.json"));
const lancedb = require("@lancedb/lancedb");

const path = process.argv[2];
const ri = process.argv.indexOf("--repeat");
const repeat = ri > 0 ? Number(process.argv[ri + 1]) : 5;
const db = await lancedb.connect(dirname(path));
const table = await db.openTable(basename(path).replace(/\.lance$/, ""));
const times = [];
let rows = 0;
for (let r = 0; r < repeat + 1; r++) {
  const start = process.hrtime.bigint();
  rows = 0;
  for await (const batch of table.query()) rows += batch.numRows;
  const s = Number(process.hrtime.bigint() - start) / 1e9;
  if (r > 0) times.push(s);
}
times.sort((a, b) => a - b);
const median = times[Math.floor(times.length / 2)];
console.log(JSON.stringify({ rows, median_s: Number(median.toFixed(4)), rows_per_s: Math.round(rows / median) }));
