// What a user of the reference types to read a table: query().select(COLUMNS).toArrow(),
// once, in a fresh process (bench/projection_compare.sh times the whole process).
//   node bench/reference_to_arrow.mjs DIR/NAME.lance [a,b,...]
import { openTable } from "./reference_common.mjs";

const [path, columns] = process.argv.slice(2);
const table = await openTable(path);
let query = table.query();
if (columns) query = query.select(columns.split(","));
const result = await query.toArrow();
if (result.numRows === 0) throw new Error(`${path}: no rows`);
