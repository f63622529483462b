// Writes the issue-3 benchmark dataset with the reference, at data storage version 2.2 and
// the reference's default encodings, and the row offsets the take benchmark reads.
//   node bench/reference_gen.mjs DIR/NAME.lance [--rows N] [--seed S] [--version 2.2]
//   node bench/reference_gen.mjs --offsets FILE --count K --rows N [--seed S]
// Columns (one fragment while N <= 1,048,576, the reference's max rows per file):
//   id int64 sequential; i32 int32 random; f32 float32 in [-1, 1); s_short utf8 of 5-20
//   random letters; s_lowcard utf8, one of 32 values; emb fixed_size_list<float32,128>;
//   tags list<int32>, 0-8 small items, 5% null lists.
// Values come from a seeded mulberry32, so the same arguments give the same dataset.
import { writeFileSync } from "node:fs";
import { basename, dirname } from "node:path";

import { arg, mulberry32, require } from "./reference_common.mjs";

const arrow = require("apache-arrow");

const rows = Number(arg("--rows", "1000000"));
const seed = Number(arg("--seed", "3"));

// K distinct offsets in [0, rows), in random order.
const offsetsPath = arg("--offsets", undefined);
if (offsetsPath !== undefined) {
  const count = Number(arg("--count", "1000"));
  if (count > rows) throw new Error(`--count ${count} exceeds --rows ${rows}`);
  const next = mulberry32(seed * 7919 + 11);
  const seen = new Set();
  const out = [];
  while (out.length < count) {
    const o = next() % rows;
    if (!seen.has(o)) {
      seen.add(o);
      out.push(o);
    }
  }
  writeFileSync(offsetsPath, out.join("\n") + "\n");
  process.exit(0);
}

const path = process.argv[2];
const version = arg("--version", "2.2");
const DIM = 128;
const LETTERS = new TextEncoder().encode("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ");
const LOWCARD = Array.from({ length: 32 }, (_, i) => `category-${String(i * 37 % 101).padStart(3, "0")}`);
const LOWCARD_BYTES = LOWCARD.map((s) => new TextEncoder().encode(s));

const item = (type) => new arrow.Field("item", type, true);
const schema = new arrow.Schema([
  new arrow.Field("id", new arrow.Int64(), true),
  new arrow.Field("i32", new arrow.Int32(), true),
  new arrow.Field("f32", new arrow.Float32(), true),
  new arrow.Field("s_short", new arrow.Utf8(), true),
  new arrow.Field("s_lowcard", new arrow.Utf8(), true),
  new arrow.Field("emb", new arrow.FixedSizeList(DIM, item(new arrow.Float32())), true),
  new arrow.Field("tags", new arrow.List(item(new arrow.Int32())), true),
]);

// Every column has its own generator, so one column's values do not depend on another's.
const rng = Object.fromEntries(["i32", "f32", "s_short", "s_lowcard", "emb", "tags"].map((c, k) => [c, mulberry32(seed * 1000003 + k)]));
const unit = (next) => next() / 2147483648 - 1;  // [-1, 1)

function utf8Column(n, pick) {
  const offsets = new Int32Array(n + 1);
  const parts = [];
  let total = 0;
  for (let i = 0; i < n; i++) {
    const bytes = pick();
    parts.push(bytes);
    total += bytes.length;
    offsets[i + 1] = total;
  }
  const data = new Uint8Array(total);
  for (let i = 0; i < n; i++) data.set(parts[i], offsets[i]);
  return arrow.makeData({ type: new arrow.Utf8(), length: n, nullCount: 0, valueOffsets: offsets, data });
}

function makeBatch(start, n) {
  const id = new BigInt64Array(n);
  for (let i = 0; i < n; i++) id[i] = BigInt(start + i);
  const i32 = new Int32Array(n);
  for (let i = 0; i < n; i++) i32[i] = rng.i32() | 0;
  const f32 = new Float32Array(n);
  for (let i = 0; i < n; i++) f32[i] = unit(rng.f32);
  const shortCol = utf8Column(n, () => {
    const len = 5 + (rng.s_short() % 16);
    const b = new Uint8Array(len);
    for (let k = 0; k < len; k++) b[k] = LETTERS[rng.s_short() % LETTERS.length];
    return b;
  });
  const lowcardCol = utf8Column(n, () => LOWCARD_BYTES[rng.s_lowcard() % LOWCARD_BYTES.length]);
  const emb = new Float32Array(n * DIM);
  for (let i = 0; i < emb.length; i++) emb[i] = unit(rng.emb);
  // tags: a null list 5% of the time, else 0-8 items in [0, 1000).
  const tagOffsets = new Int32Array(n + 1);
  const validity = new Uint8Array((n + 7) >> 3);
  const tagItems = [];
  let nulls = 0;
  for (let i = 0; i < n; i++) {
    if (rng.tags() % 20 === 0) {
      nulls++;
    } else {
      validity[i >> 3] |= 1 << (i & 7);
      const len = rng.tags() % 9;
      for (let k = 0; k < len; k++) tagItems.push(rng.tags() % 1000);
    }
    tagOffsets[i + 1] = tagItems.length;
  }
  const int32Type = new arrow.Int32();
  const columns = [
    arrow.makeData({ type: new arrow.Int64(), length: n, nullCount: 0, data: id }),
    arrow.makeData({ type: int32Type, length: n, nullCount: 0, data: i32 }),
    arrow.makeData({ type: new arrow.Float32(), length: n, nullCount: 0, data: f32 }),
    shortCol,
    lowcardCol,
    arrow.makeData({
      type: schema.fields[5].type, length: n, nullCount: 0,
      child: arrow.makeData({ type: new arrow.Float32(), length: n * DIM, nullCount: 0, data: emb }),
    }),
    arrow.makeData({
      type: schema.fields[6].type, length: n, nullCount: nulls, nullBitmap: validity, valueOffsets: tagOffsets,
      child: arrow.makeData({ type: int32Type, length: tagItems.length, nullCount: 0, data: Int32Array.from(tagItems) }),
    }),
  ];
  const struct = arrow.makeData({ type: new arrow.Struct(schema.fields), length: n, nullCount: 0, children: columns });
  return new arrow.RecordBatch(schema, struct);
}

const batches = [];
for (let start = 0; start < rows; start += 65536) batches.push(makeBatch(start, Math.min(65536, rows - start)));
const table = new arrow.Table(schema, batches);

process.env.LANCEDB_LOG ??= "off";
const lancedb = require("@lancedb/lancedb");
const db = await lancedb.connect(dirname(path));
const created = await db.createTable(basename(path).replace(/\.lance$/, ""), table, {
  mode: "overwrite",
  storageOptions: { new_table_data_storage_version: version },
});
console.log(JSON.stringify({ rows: await created.countRows(), version }));
