// The reference's UPDATE on a dataset: table.update({where, valuesSql}), timed.
//   node bench/reference_update.mjs DIR/NAME.lance --set "col = expr" --where PRED
import { createRequire } from "node:module";
import { basename, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const require = createRequire(join(here, "..", "tests", "oracle", "package.json"));
const lancedb = require("@lancedb/lancedb");

const arg = (name) => process.argv[process.argv.indexOf(name) + 1];
const path = process.argv[2];
const set = arg("--set");
const eq = set.indexOf("=");
const db = await lancedb.connect(dirname(path));
const table = await db.openTable(basename(path).replace(/\.lance$/, ""));
const start = process.hrtime.bigint();
await table.update({ where: arg("--where"), valuesSql: { [set.slice(0, eq).trim()]: set.slice(eq + 1).trim() } });
const seconds = Number(process.hrtime.bigint() - start) / 1e9;
console.log(JSON.stringify({ seconds: Number(seconds.toFixed(4)) }));
