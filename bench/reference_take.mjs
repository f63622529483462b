// Times the reference's take of given row offsets, all columns: median of R warm runs.
//   node bench/reference_take.mjs DIR/NAME.lance --offsets FILE [--repeat R] [--batch N] [--columns a,b]
// --batch N takes the offsets N at a time (one takeOffsets call each), as a training loader
// asks for them; --columns restricts the columns taken.
// FILE holds one offset per line (bench/reference_gen.mjs --offsets writes it); scan_tool
// take --offsets reads the same file, so both sides take the same rows in the same order.
import { readFileSync } from "node:fs";

import { arg, openTable } from "./reference_common.mjs";

const path = process.argv[2];
const repeat = Number(arg("--repeat", "5"));
const offsets = readFileSync(arg("--offsets", ""), "utf8").split("\n").filter((l) => l !== "").map(Number);
const batch = Number(arg("--batch", String(offsets.length)));
const columns = arg("--columns", "");
const table = await openTable(path);
const times = [];
let rows = 0;
for (let r = 0; r < repeat + 1; r++) {  // the first run warms the page cache
  const start = process.hrtime.bigint();
  rows = 0;
  for (let at = 0; at < offsets.length; at += batch) {
    let query = table.takeOffsets(offsets.slice(at, at + batch));
    if (columns) query = query.select(columns.split(","));
    for await (const b of query) rows += b.numRows;
  }
  const s = Number(process.hrtime.bigint() - start) / 1e9;
  if (r > 0) times.push(s);
}
if (rows !== offsets.length) throw new Error(`take returned ${rows} rows for ${offsets.length} offsets`);
times.sort((a, b) => a - b);
const median = times[Math.floor(times.length / 2)];
console.log(JSON.stringify({ rows, median_s: Number(median.toFixed(5)), rows_per_s: Math.round(rows / median) }));
