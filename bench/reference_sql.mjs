// The SQL benchmark's queries with the reference's query API: its filter and projection,
// and JavaScript for what the API cannot express (sums, grouping, ordering, the join).
// One query per process, as `lancelet sql` runs; prints the result as one JSON line.
//   node bench/reference_sql.mjs DIR sum|count|group|top|join
import { join } from "node:path";

import { openTable } from "./reference_common.mjs";

const [dir, query] = process.argv.slice(2);
const products = await openTable(join(dir, "products.lance"));

// Calls f(batch) for every batch of a projection of products.
async function scan(columns, f) {
  for await (const batch of products.query().select(columns)) f(batch);
}

let result;
if (query === "sum") {
  let sum = 0;
  await scan(["qty"], (b) => { for (const v of b.getChild("qty").toArray()) sum += v; });
  result = { sum };
} else if (query === "count") {
  result = { count: await products.countRows("price > 500") };
} else if (query === "group") {
  const groups = new Map();
  await scan(["category", "price", "qty"], (b) => {
    const cat = b.getChild("category"), price = b.getChild("price").toArray(), qty = b.getChild("qty").toArray();
    for (let i = 0; i < b.numRows; ++i) {
      const key = cat.get(i);
      let g = groups.get(key);
      if (!g) groups.set(key, (g = { n: 0, sum: 0, max: -Infinity }));
      g.n++, g.sum += price[i], g.max = Math.max(g.max, qty[i]);
    }
  });
  result = { groups: groups.size };
} else if (query === "top") {
  let top = [];
  await scan(["id", "price"], (b) => {
    const id = b.getChild("id").toArray(), price = b.getChild("price").toArray();
    for (let i = 0; i < b.numRows; ++i) top.push([price[i], id[i]]);
    top.sort((x, y) => x[0] - y[0]);
    top = top.slice(0, 10);
  });
  result = { first: Number(top[0][1]) };
} else if (query === "join") {
  const suppliers = await openTable(join(dir, "suppliers.lance"));
  const country = new Map();
  for await (const b of suppliers.query().select(["supplier_id", "country"])) {
    const id = b.getChild("supplier_id").toArray(), c = b.getChild("country");
    for (let i = 0; i < b.numRows; ++i) country.set(id[i], c.get(i));
  }
  const revenue = new Map();
  await scan(["supplier_id", "price"], (b) => {
    const id = b.getChild("supplier_id").toArray(), price = b.getChild("price").toArray();
    for (let i = 0; i < b.numRows; ++i) {
      const c = country.get(id[i]);
      if (c !== undefined) revenue.set(c, (revenue.get(c) ?? 0) + price[i]);
    }
  });
  result = { countries: revenue.size };
} else {
  throw new Error(`unknown query ${query}`);
}
console.log(JSON.stringify(result));
