// Reads an Arrow IPC stream from a file with apache-arrow (the JS implementation) and
// prints the schema and the rows as JSON, proving that `lancelet scan --format arrow`
// output is readable by another Arrow implementation.
import { createRequire } from "node:module";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const require = createRequire(join(here, "..", "oracle", "package.json"));
const arrow = require("apache-arrow");

const table = arrow.tableFromIPC(readFileSync(process.argv[2]));
const fields = table.schema.fields.map((f) => `${f.name}:${f.type}`);
console.log(JSON.stringify({ rows: table.numRows, fields }));
for (const row of table.toArray()) {
  console.log(JSON.stringify(row.toJSON(), (k, v) => (typeof v === "bigint" ? v.toString() : v)));
}
