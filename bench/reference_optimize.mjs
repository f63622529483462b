// The reference's optimize() on a dataset (compaction, index optimization; cleanup keeps
// versions younger than 7 days, so it removes nothing here), timed.
//   node bench/reference_optimize.mjs DIR/NAME.lance
import { openTable } from "./reference_common.mjs";

const path = process.argv[2];
if (!path) throw new Error("usage: reference_optimize.mjs DIR/NAME.lance");
const table = await openTable(path);
const start = process.hrtime.bigint();
const stats = await table.optimize();
const seconds = Number(process.hrtime.bigint() - start) / 1e9;
console.log(JSON.stringify({ seconds: Number(seconds.toFixed(4)), compaction: stats.compaction }));
