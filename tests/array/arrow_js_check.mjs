// Interop check of lancelet's Arrow IPC against apache-arrow (JS), the independent oracle.
//
//   node arrow_js_check.mjs write DIR   writes DIR/js.arrow (tableToIPC 'file'), DIR/js.arrows
//                                       ('stream') and DIR/js.txt, a dump of their values, and
//                                       the same for js_sliced.* (second batch is a slice)
//   node arrow_js_check.mjs check DIR   reads DIR/lancelet.arrow and DIR/lancelet.arrows with
//                                       tableFromIPC and compares them with DIR/lancelet.txt
//                                       (written by lancelet's ArrowJs gtest) and with the
//                                       expected field types below
//
// The dump has one line per column, "name=cell|cell|...", over all batches; a cell is
// null, true/false, the raw stored integer (dates, timestamps, float16 bits), the JS
// number for float32/64, hex for bytes, [..] for lists and {..} for structs.
// apache-arrow is resolved from $ARROW_JS_MODULES (a node_modules parent directory) or
// else tests/oracle.
import { createRequire } from 'node:module';
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const base = process.env.ARROW_JS_MODULES ?? join(here, '..', 'oracle');
const A = createRequire(join(base, 'package.json'))('apache-arrow');

const hex = (bytes) => Buffer.from(bytes).toString('hex');

function cell(data, i) {
  if (data.type.typeId === A.Type.Null || !data.getValid(i)) return 'null';
  const t = data.type;
  // apache-arrow's slice() cuts every buffer to the slice except a bool's value bits,
  // which keep data.offset like the validity bits do.
  const j = t.typeId === A.Type.Bool ? data.offset + i : i;
  switch (t.typeId) {
    case A.Type.Bool: return ((data.values[j >> 3] >> (j & 7)) & 1) ? 'true' : 'false';
    case A.Type.Int:
    case A.Type.Date:
    case A.Type.Timestamp:
    case A.Type.Time:
    case A.Type.Duration:
      return String(data.values[j]);
    case A.Type.Decimal: {
      const words = t.bitWidth / 32;  // values is a Uint32Array, `words` per value
      return hex(new Uint8Array(data.values.buffer, data.values.byteOffset + j * words * 4, words * 4));
    }
    case A.Type.Float:
      return String(data.values[j]);  // raw bits for float16
    case A.Type.Utf8:
    case A.Type.LargeUtf8:
    case A.Type.Binary:
    case A.Type.LargeBinary: {
      const o = data.valueOffsets;
      return hex(data.values.subarray(Number(o[j]), Number(o[j + 1])));
    }
    case A.Type.FixedSizeBinary:
      return hex(data.values.subarray(j * t.byteWidth, (j + 1) * t.byteWidth));
    case A.Type.List:
    case A.Type.Map: {
      const o = data.valueOffsets;
      const items = [];
      for (let k = o[j]; k < o[j + 1]; ++k) items.push(cell(data.children[0], k));
      return `[${items.join(',')}]`;
    }
    case A.Type.FixedSizeList: {
      // apache-arrow slices the child together with the parent, so index by i.
      const n = t.listSize;
      const items = [];
      for (let k = i * n; k < (i + 1) * n; ++k) items.push(cell(data.children[0], k));
      return `[${items.join(',')}]`;
    }
    case A.Type.Struct:
      return `{${data.children.map((c) => cell(c, i)).join(',')}}`;
    default:
      throw new Error(`no dump for type ${t}`);
  }
}

function dump(table) {
  return table.schema.fields.map((f, c) => {
    const cells = [];
    for (const data of table.getChildAt(c).data) for (let i = 0; i < data.length; ++i) cells.push(cell(data, i));
    return `${f.name}=${cells.join('|')}`;
  }).join('\n') + '\n';
}

// ---- the table apache-arrow writes (every type it shares with lancelet; it has no LargeList)

function raw(type, values, valid, length = values.length) {
  const nullBitmap = new Uint8Array(8);
  valid.forEach((v, i) => { if (v) nullBitmap[i >> 3] |= 1 << (i & 7); });
  const nullCount = valid.filter((v) => !v).length;
  return A.makeVector(A.makeData({ type, length, nullCount, nullBitmap, data: values }));
}

// Rows [from, 3) of every column, built fresh (not sliced).
function jsColumns(from) {
  const tv = [true, false, true].slice(from);
  const cut = (values) => values.slice(from);
  const vfa = (values, type) => A.vectorFromArray(cut(values), type);
  const cols = [
    ['bool', vfa([true, null, false], new A.Bool())],
    ['i8', vfa([-128, null, 127], new A.Int8())],
    ['i16', vfa([-32768, null, 7], new A.Int16())],
    ['i32', vfa([-5, null, 2147483647], new A.Int32())],
    ['i64', vfa([-9223372036854775808n, null, 42n], new A.Int64())],
    ['u8', vfa([255, null, 0], new A.Uint8())],
    ['u16', vfa([65535, null, 1], new A.Uint16())],
    ['u32', vfa([4294967295, null, 2], new A.Uint32())],
    ['u64', vfa([18446744073709551615n, null, 3n], new A.Uint64())],
    ['f16', raw(new A.Float16(), new Uint16Array(cut([0x3e00, 0, 0xc000])), tv)],
    ['f32', vfa([0.25, null, -1.5], new A.Float32())],
    ['f64', vfa([3.5, null, -0.125], new A.Float64())],
    ['utf8', vfa(['a', null, 'h\u00e9llo'], new A.Utf8())],
    ['large_utf8', vfa(['', null, 'large'], new A.LargeUtf8())],
    ['binary', vfa([new Uint8Array([0, 1]), null, new Uint8Array([122, 122])], new A.Binary())],
    ['large_binary', vfa([new Uint8Array([120, 121, 122]), null, new Uint8Array([])], new A.LargeBinary())],
    ['fsb', vfa([new Uint8Array([97, 98, 99]), null, new Uint8Array([120, 121, 122])], new A.FixedSizeBinary(3))],
    ['fsl', vfa([[1, 2], null, [3, null]], new A.FixedSizeList(2, new A.Field('item', new A.Int32(), true)))],
    ['list', vfa([['x', null], null, []], new A.List(new A.Field('item', new A.Utf8(), true)))],
    ['struct', vfa([{ a: 1, b: 'p' }, null, { a: null, b: 'q' }],
      new A.Struct([new A.Field('a', new A.Int32(), true), new A.Field('b', new A.Utf8(), true)]))],
    ['date32', raw(new A.DateDay(), new Int32Array(cut([19000, 0, -1])), tv)],
    ['date64', raw(new A.DateMillisecond(), new BigInt64Array(cut([1700000000000n, 0n, 0n])), tv)],
    ['ts_s', raw(new A.TimestampSecond(), new BigInt64Array(cut([1n, 0n, -1n])), tv)],
    ['ts_ms', raw(new A.TimestampMillisecond('UTC'), new BigInt64Array(cut([1700000000123n, 0n, 0n])), tv)],
    ['ts_us', raw(new A.TimestampMicrosecond('America/New_York'), new BigInt64Array(cut([1700000000123456n, 0n, 5n])), tv)],
    ['ts_ns', raw(new A.TimestampNanosecond('+01:00'), new BigInt64Array(cut([1700000000123456789n, 0n, 6n])), tv)],
    ['time32_s', raw(new A.TimeSecond(), new Int32Array(cut([86399, 0, 0])), tv)],
    ['time64_ns', raw(new A.TimeNanosecond(), new BigInt64Array(cut([86399999999999n, 0n, 1n])), tv)],
    ['duration_ms', raw(new A.DurationMillisecond(), new BigInt64Array(cut([-9223372036854775808n, 0n, -1n])), tv)],
    // 1 and -1 at 128 bits; 2^64 and 0 at 256 bits (little-endian 32-bit words).
    ['decimal128', raw(new A.Decimal(2, 38, 128), new Uint32Array(cut([[1, 0, 0, 0], [0, 0, 0, 0], [~0 >>> 0, ~0 >>> 0, ~0 >>> 0, ~0 >>> 0]]).flat()), tv, tv.length)],
    ['decimal256', raw(new A.Decimal(-3, 76, 256), new Uint32Array(cut([[0, 0, 1, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0, 0, 0, 0]]).flat()), tv, tv.length)],
    ['null', A.makeVector(A.makeData({ type: new A.Null(), length: 3 - from, nullCount: 3 - from }))],
    ['map', vfa([new Map([['k', 1]]), null, new Map()], new A.Map_(new A.Field('entries',
      new A.Struct([new A.Field('key', new A.Utf8(), false), new A.Field('value', new A.Int32(), true)]), false)))],
    ['id', vfa([10, 11, 12], new A.Int32())],
  ];
  return cols;
}

// Two batches: all three rows, then rows 1..2 built separately. With `sliced`, the second
// batch is instead a slice of the first (offsets and validity bits not at 0), and the
// large_utf8/large_binary columns are left out: apache-arrow 18 fails to write slices of
// those (it adds a number to BigInt offsets).
function jsTable(sliced = false) {
  let cols = jsColumns(0);
  if (sliced) cols = cols.filter(([name]) => !name.startsWith('large_'));
  const fields = cols.map(([name, v]) => name === 'id'
    ? new A.Field(name, v.type, false, new Map([['comment', 'row id']]))
    : new A.Field(name, v.type, true));
  const schema = new A.Schema(fields, new Map([['origin', 'apache-arrow']]));
  const batchOf = (columns) => new A.RecordBatch(schema, A.makeData({
    type: new A.Struct(fields), length: columns[0][1].length, nullCount: 0,
    children: columns.map(([, v]) => v.data[0]),
  }));
  const first = batchOf(cols);
  return new A.Table(schema, [first, sliced ? first.slice(1, 3) : batchOf(jsColumns(1))]);
}

// Field types apache-arrow must see in lancelet's output (lancelet's AllTypesBatch minus
// the large_list columns, which apache-arrow cannot read).
const expectedTypes = {
  bool: 'Bool', i8: 'Int8', i16: 'Int16', i32: 'Int32', i64: 'Int64', u8: 'Uint8', u16: 'Uint16',
  u32: 'Uint32', u64: 'Uint64', f16: 'Float16', f32: 'Float32', f64: 'Float64', utf8: 'Utf8',
  large_utf8: 'LargeUtf8', binary: 'Binary', large_binary: 'LargeBinary', fsb: 'FixedSizeBinary[3]',
  fsl: 'FixedSizeList[2]<Int32>', list: 'List<Utf8>', struct: 'Struct<{a:Int32, b:Utf8}>',
  list_of_struct: 'List<Struct<{a:Int32, b:Utf8}>>', date32: 'Date32<DAY>', date64: 'Date64<MILLISECOND>',
  ts_s: 'Timestamp<SECOND>', ts_ms: 'Timestamp<MILLISECOND, UTC>',
  ts_us: 'Timestamp<MICROSECOND, America/New_York>', ts_ns: 'Timestamp<NANOSECOND, +01:00>',
  time32_s: 'Time32<SECOND>', time64_ns: 'Time64<NANOSECOND>', duration_ms: 'Duration<MILLISECOND>',
  decimal128: 'Decimal[38e+2]', decimal256: 'Decimal[76e-3]', null: 'Null',
  map: 'Map<{key:Utf8, value:Int32}>', id: 'Int32',
};

let passed = 0;
let failed = 0;
function expect(ok, what) {
  if (ok) ++passed;
  else { ++failed; console.error(`FAIL: ${what}`); }
}

function checkLanceletFile(path, want) {
  let table;
  try {
    table = A.tableFromIPC(readFileSync(path));
  } catch (e) {
    expect(false, `${path}: tableFromIPC threw ${e.stack}`);
    return;
  }
  for (const f of table.schema.fields) {
    expect(String(f.type) === expectedTypes[f.name], `${path}: field ${f.name} has type ${f.type}, want ${expectedTypes[f.name]}`);
  }
  expect(table.schema.fields.length === Object.keys(expectedTypes).length, `${path}: field count ${table.schema.fields.length}`);
  const id = table.schema.fields.find((f) => f.name === 'id');
  expect(id && !id.nullable && id.metadata.get('comment') === 'row id', `${path}: field id nullability/metadata`);
  expect(table.schema.metadata.get('origin') === 'lancelet test', `${path}: schema metadata`);
  const got = dump(table);
  const gotLines = got.split('\n');
  const wantLines = want.split('\n');
  for (let i = 0; i < Math.max(gotLines.length, wantLines.length); ++i) {
    expect(gotLines[i] === wantLines[i], `${path}: line ${i + 1}\n  got  ${gotLines[i]}\n  want ${wantLines[i]}`);
  }
}

const [mode, dir] = process.argv.slice(2);
if (mode === 'write' && dir) {
  const table = jsTable();
  writeFileSync(join(dir, 'js.arrow'), A.tableToIPC(table, 'file'));
  writeFileSync(join(dir, 'js.arrows'), A.tableToIPC(table, 'stream'));
  writeFileSync(join(dir, 'js.txt'), dump(table));
  const sliced = jsTable(true);
  writeFileSync(join(dir, 'js_sliced.arrow'), A.tableToIPC(sliced, 'file'));
  writeFileSync(join(dir, 'js_sliced.arrows'), A.tableToIPC(sliced, 'stream'));
  writeFileSync(join(dir, 'js_sliced.txt'), dump(sliced));
  console.log(`wrote js.arrow, js.arrows, js.txt, js_sliced.arrow, js_sliced.arrows, js_sliced.txt to ${dir}`);
} else if (mode === 'check' && dir) {
  const want = readFileSync(join(dir, 'lancelet.txt'), 'utf8');
  checkLanceletFile(join(dir, 'lancelet.arrow'), want);
  checkLanceletFile(join(dir, 'lancelet.arrows'), want);
  console.log(`${passed} passed, ${failed} failed`);
  process.exit(failed ? 1 : 0);
} else {
  console.error('usage: node arrow_js_check.mjs write|check DIR');
  process.exit(2);
}
