// The reference's UPDATE on a dataset: table.update({where, valuesSql}), timed.
//   node bench/reference_update.mjs DIR/NAME.lance --set "col = expr" --where PRED
import { arg, openTable } from "./reference_common.mjs";

const path = process.argv[2];
const set = arg("--set");
const where = arg("--where");
if (!path || !set || !where) throw new Error('usage: reference_update.mjs DIR/NAME.lance --set "col = expr" --where PRED');
const eq = set.indexOf("=");
const table = await openTable(path);
const start = process.hrtime.bigint();
await table.update({ where, valuesSql: { [set.slice(0, eq).trim()]: set.slice(eq + 1).trim() } });
const seconds = Number(process.hrtime.bigint() - start) / 1e9;
console.log(JSON.stringify({ seconds: Number(seconds.toFixed(4)) }));
