// Times the reference's full scan of a dataset: median of R warm runs, streamed batch by batch.
//   node bench/reference_scan.mjs DIR/NAME.lance [--repeat R]
import { arg, openTable } from "./reference_common.mjs";

const path = process.argv[2];
const repeat = Number(arg("--repeat", "5"));
const table = await openTable(path);
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
