// Writes the SQL benchmark's tables as Arrow IPC files: products (N rows, 16 columns, one
// a 64-d embedding) and suppliers (10,000 rows), from a seeded mulberry32.
//   node bench/sql_gen.mjs DIR [--rows N] [--seed S]
// products: id int64, sku utf8, category utf8 (24 values), brand utf8 (300), price
// float64 in [0, 1000), qty int32 in [0, 500), rating float32, in_stock bool, views int64,
// weight float64, region utf8 (8), discount float32, supplier_id int32 in [0, 10000),
// score float64, created date32, emb fixed_size_list<float32,64>.
// suppliers: supplier_id int32, supplier_name utf8, country utf8 (30 values).
import { writeFileSync } from "node:fs";
import { join } from "node:path";

import { arg, mulberry32, require } from "./reference_common.mjs";

const arrow = require("apache-arrow");

const dir = process.argv[2];
const rows = Number(arg("--rows", "1000000"));
const uint32 = mulberry32(Number(arg("--seed", "5")));
const next = () => uint32() / 4294967296;  // in [0, 1)
const pick = (names) => names[Math.floor(next() * names.length)];
const names = (prefix, n) => Array.from({ length: n }, (_, i) => `${prefix}${String(i).padStart(3, "0")}`);

const categories = names("category_", 24), brands = names("brand_", 300), regions = names("region_", 8);
const columns = {
  id: new BigInt64Array(rows), sku: [], category: [], brand: [], price: new Float64Array(rows),
  qty: new Int32Array(rows), rating: new Float32Array(rows), in_stock: [], views: new BigInt64Array(rows),
  weight: new Float64Array(rows), region: [], discount: new Float32Array(rows), supplier_id: new Int32Array(rows),
  score: new Float64Array(rows), created: new Int32Array(rows), emb: new Float32Array(rows * 64),
};
for (let r = 0; r < rows; ++r) {
  columns.id[r] = BigInt(r);
  columns.sku.push(`SKU-${(r * 7919) % 1000003}`);
  columns.category.push(pick(categories));
  columns.brand.push(pick(brands));
  columns.price[r] = Math.floor(next() * 100000) / 100;
  columns.qty[r] = Math.floor(next() * 500);
  columns.rating[r] = Math.floor(next() * 50) / 10;
  columns.in_stock.push(next() < 0.8);
  columns.views[r] = BigInt(Math.floor(next() * 1e6));
  columns.weight[r] = next() * 20;
  columns.region.push(pick(regions));
  columns.discount[r] = Math.floor(next() * 30) / 100;
  columns.supplier_id[r] = Math.floor(next() * 10000);
  columns.score[r] = next();
  columns.created[r] = 19000 + Math.floor(next() * 1500);
  for (let d = 0; d < 64; ++d) columns.emb[r * 64 + d] = next() * 2 - 1;
}

const { Field, Float32, Int32, makeData, makeVector, vectorFromArray, Utf8, Bool, DateDay, FixedSizeList, Table } = arrow;
const embType = new FixedSizeList(64, new Field("item", new Float32(), true));
const products = new Table({
  id: makeVector(columns.id),
  sku: vectorFromArray(columns.sku, new Utf8()),
  category: vectorFromArray(columns.category, new Utf8()),
  brand: vectorFromArray(columns.brand, new Utf8()),
  price: makeVector(columns.price),
  qty: makeVector(columns.qty),
  rating: makeVector(columns.rating),
  in_stock: vectorFromArray(columns.in_stock, new Bool()),
  views: makeVector(columns.views),
  weight: makeVector(columns.weight),
  region: vectorFromArray(columns.region, new Utf8()),
  discount: makeVector(columns.discount),
  supplier_id: makeVector(columns.supplier_id),
  score: makeVector(columns.score),
  created: makeVector(makeData({ type: new DateDay(), length: rows, data: columns.created })),
  emb: makeVector(makeData({
    type: embType, length: rows, nullCount: 0,
    child: makeData({ type: new Float32(), length: rows * 64, data: columns.emb }),
  })),
});
writeFileSync(join(dir, "products.arrow"), arrow.tableToIPC(products, "file"));

const countries = names("country_", 30);
const suppliers = new Table({
  supplier_id: makeVector(Int32Array.from({ length: 10000 }, (_, i) => i)),
  supplier_name: vectorFromArray(Array.from({ length: 10000 }, (_, i) => `supplier ${i}`), new Utf8()),
  country: vectorFromArray(Array.from({ length: 10000 }, () => pick(countries)), new Utf8()),
});
writeFileSync(join(dir, "suppliers.arrow"), arrow.tableToIPC(suppliers, "file"));
console.log(`wrote ${rows} products and 10000 suppliers to ${dir}`);
