#!/usr/bin/env node
// lancelet test oracle: drives the reference Lance implementation (Rust lance,
// via the @lancedb/lancedb native module) and prints machine-readable output.
//
// Usage: node tests/oracle/oracle.mjs <command> [args]   (see README.md)
//
// Arrow IPC is encoded/decoded by a small self-contained codec in this file
// (flatbuffer metadata via apache-arrow's generated fb classes), because
// apache-arrow JS 18 cannot represent large_list and loses precision details
// we care about.  Data is handed to / taken from the native module
// (conn.inner.createTable, table.add, query.execute().next(), table.schema())
// as raw Arrow IPC *file* bytes, bypassing apache-arrow's Table machinery.

import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { performance } from "node:perf_hooks";
import * as flatbuffers from "flatbuffers";
import { Message } from "apache-arrow/fb/message";
import { MessageHeader } from "apache-arrow/fb/message-header";
import { MetadataVersion } from "apache-arrow/fb/metadata-version";
import { Schema as FbSchema } from "apache-arrow/fb/schema";
import { Field as FbField } from "apache-arrow/fb/field";
import { KeyValue } from "apache-arrow/fb/key-value";
import { Type } from "apache-arrow/fb/type";
import { Int as FbInt } from "apache-arrow/fb/int";
import { FloatingPoint } from "apache-arrow/fb/floating-point";
import { Bool as FbBool } from "apache-arrow/fb/bool";
import { Utf8 as FbUtf8 } from "apache-arrow/fb/utf8";
import { LargeUtf8 as FbLargeUtf8 } from "apache-arrow/fb/large-utf8";
import { Binary as FbBinary } from "apache-arrow/fb/binary";
import { LargeBinary as FbLargeBinary } from "apache-arrow/fb/large-binary";
import { FixedSizeBinary as FbFixedSizeBinary } from "apache-arrow/fb/fixed-size-binary";
import { FixedSizeList as FbFixedSizeList } from "apache-arrow/fb/fixed-size-list";
import { List as FbList } from "apache-arrow/fb/list";
import { LargeList as FbLargeList } from "apache-arrow/fb/large-list";
import { Struct_ as FbStruct } from "apache-arrow/fb/struct-";
import { Date as FbDate } from "apache-arrow/fb/date";
import { Timestamp as FbTimestamp } from "apache-arrow/fb/timestamp";
import { Null as FbNull } from "apache-arrow/fb/null";
import { Time as FbTime } from "apache-arrow/fb/time";
import { Duration as FbDuration } from "apache-arrow/fb/duration";
import { Decimal as FbDecimal } from "apache-arrow/fb/decimal";
import { Map as FbMap } from "apache-arrow/fb/map";
import { DictionaryBatch as FbDictionaryBatch } from "apache-arrow/fb/dictionary-batch";
import { RecordBatch as FbRecordBatch } from "apache-arrow/fb/record-batch";
import { FieldNode as FbFieldNode } from "apache-arrow/fb/field-node";
import { Buffer as FbBuffer } from "apache-arrow/fb/buffer";
import { Footer as FbFooter } from "apache-arrow/fb/footer";
import { Block as FbBlock } from "apache-arrow/fb/block";
import { Endianness } from "apache-arrow/fb/endianness";

// Keep Rust-side log lines (e.g. "WARN ... it will be created") off stderr so
// that stderr only ever carries our single error line.  Must be set before the
// native module is loaded.
if (process.env.LANCEDB_LOG === undefined) process.env.LANCEDB_LOG = "off";
let lancedbModule = null;
async function lancedb() {
  if (!lancedbModule) lancedbModule = await import("@lancedb/lancedb");
  return lancedbModule;
}

class UsageError extends Error {}

// ---------------------------------------------------------------------------
// Type model + type-string grammar
// ---------------------------------------------------------------------------
// type = {k:'bool'} | {k:'int',bits,signed} | {k:'float',bits} | {k:'utf8'} |
//   {k:'large_utf8'} | {k:'binary'} | {k:'large_binary'} | {k:'fsb',width} |
//   {k:'fsl',size,child:field} | {k:'list',child} | {k:'large_list',child} |
//   {k:'struct',children:[field]} | {k:'date32'} | {k:'date64'} |
//   {k:'timestamp',unit,tz} | {k:'time',bits,unit} | {k:'duration',unit} |
//   {k:'decimal',bits,precision,scale} | {k:'map',child} | {k:'null'} |
//   {k:'dict',id,index,value} (decoded only: a dictionary-encoded field; values are the
//   dictionary's values) | {k:'unsupported',name}
// A map's child is its non-null "entries" struct field of a non-null key and a value; its
// values are lists of [key, value] entries, as a list<struct> would hold them.
// Values: time32 -> number, time64 / duration -> bigint, decimal -> bigint (unscaled).
// field = {name, type, nullable, metadata: [[k,v],...]}

const SIMPLE = {
  bool: { k: "bool" },
  int8: { k: "int", bits: 8, signed: true },
  int16: { k: "int", bits: 16, signed: true },
  int32: { k: "int", bits: 32, signed: true },
  int64: { k: "int", bits: 64, signed: true },
  uint8: { k: "int", bits: 8, signed: false },
  uint16: { k: "int", bits: 16, signed: false },
  uint32: { k: "int", bits: 32, signed: false },
  uint64: { k: "int", bits: 64, signed: false },
  float16: { k: "float", bits: 16 },
  float32: { k: "float", bits: 32 },
  float64: { k: "float", bits: 64 },
  utf8: { k: "utf8" },
  large_utf8: { k: "large_utf8" },
  binary: { k: "binary" },
  large_binary: { k: "large_binary" },
  date32: { k: "date32" },
  date64: { k: "date64" },
  null: { k: "null" },
};

function parseType(str) {
  let pos = 0;
  const s = str.replace(/\s+/g, "");
  const fail = (msg) => {
    throw new UsageError(`bad type string '${str}' at ${pos}: ${msg}`);
  };
  const ident = () => {
    const m = /^[A-Za-z_][A-Za-z0-9_]*/.exec(s.slice(pos));
    if (!m) fail("expected identifier");
    pos += m[0].length;
    return m[0];
  };
  const expect = (c) => {
    if (s[pos] !== c) fail(`expected '${c}'`);
    pos++;
  };
  const num = () => {
    const m = /^[0-9]+/.exec(s.slice(pos));
    if (!m) fail("expected number");
    pos += m[0].length;
    return parseInt(m[0], 10);
  };
  const item = (t) => ({ name: "item", type: t, nullable: true, metadata: [] });
  const parse = () => {
    const name = ident();
    if (SIMPLE[name]) return { ...SIMPLE[name] };
    switch (name) {
      case "fixed_size_binary": {
        expect("<");
        const w = num();
        expect(">");
        return { k: "fsb", width: w };
      }
      case "fixed_size_list": {
        expect("<");
        const t = parse();
        expect(",");
        const n = num();
        expect(">");
        return { k: "fsl", size: n, child: item(t) };
      }
      case "list":
      case "large_list": {
        expect("<");
        const t = parse();
        expect(">");
        return { k: name, child: item(t) };
      }
      case "map": {
        expect("<");
        const key = parse();
        expect(",");
        const value = parse();
        expect(">");
        return mapType(key, value);
      }
      case "struct": {
        expect("<");
        const children = [];
        if (s[pos] !== ">") {
          for (;;) {
            const fname = ident();
            expect(":");
            children.push({ name: fname, type: parse(), nullable: true, metadata: [] });
            if (s[pos] === ",") {
              pos++;
              continue;
            }
            break;
          }
        }
        expect(">");
        return { k: "struct", children };
      }
      case "time32":
      case "time64":
      case "duration": {
        expect("<");
        const unit = ident();
        const ok = name === "time32" ? ["s", "ms"] : name === "time64" ? ["us", "ns"] : ["s", "ms", "us", "ns"];
        if (!ok.includes(unit)) fail("bad time unit");
        expect(">");
        return name === "duration" ? { k: "duration", unit } : { k: "time", bits: name === "time32" ? 32 : 64, unit };
      }
      case "decimal128":
      case "decimal256": {
        expect("<");
        const precision = num();
        expect(",");
        let neg = false;
        if (s[pos] === "-") {
          neg = true;
          pos++;
        }
        const scale = neg ? -num() : num();
        expect(">");
        return { k: "decimal", bits: name === "decimal128" ? 128 : 256, precision, scale };
      }
      case "timestamp": {
        expect("<");
        const unit = ident();
        if (!["s", "ms", "us", "ns"].includes(unit)) fail("bad time unit");
        let tz = null;
        if (s[pos] === ",") {
          pos++;
          const end = s.indexOf(">", pos);
          if (end < 0) fail("unterminated timestamp");
          tz = s.slice(pos, end);
          pos = end;
        }
        expect(">");
        return { k: "timestamp", unit, tz };
      }
      default:
        fail(`unknown type '${name}'`);
    }
  };
  const t = parse();
  if (pos !== s.length) fail("trailing characters");
  return t;
}

function mapType(key, value) {
  const entries = { k: "struct", children: [
    { name: "key", type: key, nullable: false, metadata: [] },
    { name: "value", type: value, nullable: true, metadata: [] },
  ] };
  return { k: "map", child: { name: "entries", type: entries, nullable: false, metadata: [] } };
}

function typeToString(t) {
  switch (t.k) {
    case "bool":
    case "utf8":
    case "large_utf8":
    case "binary":
    case "large_binary":
    case "date32":
    case "date64":
    case "null":
      return t.k;
    case "int":
      return `${t.signed ? "" : "u"}int${t.bits}`;
    case "float":
      return `float${t.bits}`;
    case "fsb":
      return `fixed_size_binary<${t.width}>`;
    case "fsl":
      return `fixed_size_list<${typeToString(t.child.type)},${t.size}>`;
    case "list":
    case "large_list":
      return `${t.k}<${typeToString(t.child.type)}>`;
    case "map":
      return `map<${typeToString(t.child.type.children[0].type)},${typeToString(t.child.type.children[1].type)}>`;
    case "struct":
      return `struct<${t.children.map((c) => `${c.name}:${typeToString(c.type)}`).join(",")}>`;
    case "timestamp":
      return t.tz === null ? `timestamp<${t.unit}>` : `timestamp<${t.unit},${t.tz}>`;
    case "time":
      return `time${t.bits}<${t.unit}>`;
    case "duration":
      return `duration<${t.unit}>`;
    case "decimal":
      return `decimal${t.bits}<${t.precision},${t.scale}>`;
    case "dict":
      return `dictionary<${typeToString(t.index)},${typeToString(t.value)}>`;
    case "unsupported":
      return `unsupported<${t.name}>`;
  }
  throw new Error(`typeToString: ${t.k}`);
}

function columnNameForType(ts) {
  return "c_" + ts.replace(/[^A-Za-z0-9]+/g, "_").replace(/^_+|_+$/g, "");
}

// ---------------------------------------------------------------------------
// Flatbuffer metadata decode
// ---------------------------------------------------------------------------
const TIME_UNITS = ["s", "ms", "us", "ns"];

function decodeKV(getter, n) {
  const out = [];
  for (let i = 0; i < n; i++) {
    const kv = getter(i);
    out.push([kv.key(), kv.value()]);
  }
  return out;
}

function decodeField(f) {
  const children = [];
  for (let i = 0; i < f.childrenLength(); i++) children.push(decodeField(f.children(i)));
  const tt = f.typeType();
  let type;
  switch (tt) {
    case Type.Null:
      type = { k: "null" };
      break;
    case Type.Bool:
      type = { k: "bool" };
      break;
    case Type.Int: {
      const x = f.type(new FbInt());
      type = { k: "int", bits: x.bitWidth(), signed: x.isSigned() };
      break;
    }
    case Type.FloatingPoint: {
      const x = f.type(new FloatingPoint());
      type = { k: "float", bits: [16, 32, 64][x.precision()] };
      break;
    }
    case Type.Utf8:
      type = { k: "utf8" };
      break;
    case Type.LargeUtf8:
      type = { k: "large_utf8" };
      break;
    case Type.Binary:
      type = { k: "binary" };
      break;
    case Type.LargeBinary:
      type = { k: "large_binary" };
      break;
    case Type.FixedSizeBinary:
      type = { k: "fsb", width: f.type(new FbFixedSizeBinary()).byteWidth() };
      break;
    case Type.FixedSizeList:
      type = { k: "fsl", size: f.type(new FbFixedSizeList()).listSize(), child: children[0] };
      break;
    case Type.List:
      type = { k: "list", child: children[0] };
      break;
    case Type.LargeList:
      type = { k: "large_list", child: children[0] };
      break;
    case Type.Map:
      if (f.type(new FbMap()).keysSorted()) throw new Error(`map field '${f.name()}' has sorted keys`);
      type = { k: "map", child: children[0] };
      break;
    case Type.Struct_:
      type = { k: "struct", children };
      break;
    case Type.Date: {
      const x = f.type(new FbDate());
      type = { k: x.unit() === 0 ? "date32" : "date64" };
      break;
    }
    case Type.Timestamp: {
      const x = f.type(new FbTimestamp());
      const tz = x.timezone();
      type = { k: "timestamp", unit: TIME_UNITS[x.unit()], tz: tz === null || tz === undefined ? null : tz };
      break;
    }
    case Type.Time: {
      const x = f.type(new FbTime());
      type = { k: "time", bits: x.bitWidth(), unit: TIME_UNITS[x.unit()] };
      break;
    }
    case Type.Duration:
      type = { k: "duration", unit: TIME_UNITS[f.type(new FbDuration()).unit()] };
      break;
    case Type.Decimal: {
      const x = f.type(new FbDecimal());
      type = { k: "decimal", bits: x.bitWidth(), precision: x.precision(), scale: x.scale() };
      break;
    }
    default:
      type = { k: "unsupported", name: Type[tt] ?? String(tt) };
  }
  const d = f.dictionary();
  if (d) {
    const it = d.indexType();
    type = { k: "dict", id: Number(d.id()), index: { k: "int", bits: it ? it.bitWidth() : 32, signed: it ? it.isSigned() : true },
             value: type };
  }
  return {
    name: f.name() ?? "",
    type,
    nullable: f.nullable(),
    metadata: decodeKV((i) => f.customMetadata(i), f.customMetadataLength()),
  };
}

function decodeSchema(s) {
  const fields = [];
  for (let i = 0; i < s.fieldsLength(); i++) fields.push(decodeField(s.fields(i)));
  return { fields, metadata: decodeKV((i) => s.customMetadata(i), s.customMetadataLength()) };
}

// ---------------------------------------------------------------------------
// IPC framing
// ---------------------------------------------------------------------------
const MAGIC = Buffer.from("ARROW1");

function* readMessages(u8, pos = 0, end = u8.length) {
  const dv = new DataView(u8.buffer, u8.byteOffset, u8.byteLength);
  while (pos + 4 <= end) {
    const start = pos;
    let len = dv.getInt32(pos, true);
    if (len === -1) {
      if (pos + 8 > end) break;
      len = dv.getInt32(pos + 4, true);
      pos += 8;
    } else {
      pos += 4;
    }
    if (len === 0) break; // end-of-stream
    if (len < 0 || pos + len > end) throw new Error("malformed Arrow IPC message");
    const meta = u8.subarray(pos, pos + len);
    pos += len;
    const msg = Message.getRootAsMessage(new flatbuffers.ByteBuffer(meta));
    const bodyLen = Number(msg.bodyLength());
    if (pos + bodyLen > end) throw new Error("truncated Arrow IPC message body");
    const body = u8.subarray(pos, pos + bodyLen);
    pos += bodyLen;
    yield { msg, body, frame: u8.subarray(start, pos) };
  }
}

function isIpcFile(u8) {
  return u8.length >= 6 && Buffer.from(u8.subarray(0, 6)).equals(MAGIC);
}

// Split an IPC file or stream into {schema, schemaFrame, frames}: the decoded
// schema, the raw schema message (streams only) and the other framed messages.
// Files are read via their footer (writers may pad after the magic, e.g.
// arrow-rs aligns the first message to 64 bytes).
function ipcFrames(u8) {
  if (!isIpcFile(u8)) {
    const frames = [...readMessages(u8)];
    if (!frames.length || frames[0].msg.headerType() !== MessageHeader.Schema)
      throw new Error("not an Arrow IPC stream or file (no schema message)");
    return { schema: decodeSchema(frames[0].msg.header(new FbSchema())), schemaFrame: frames[0].frame, frames: frames.slice(1) };
  }
  const dv = new DataView(u8.buffer, u8.byteOffset, u8.byteLength);
  if (u8.length < 18 || !Buffer.from(u8.subarray(u8.length - 6)).equals(MAGIC)) throw new Error("truncated Arrow IPC file");
  const footerLen = dv.getInt32(u8.length - 10, true);
  const footerStart = u8.length - 10 - footerLen;
  if (footerLen <= 0 || footerStart < 8) throw new Error("bad Arrow IPC file footer");
  const footer = FbFooter.getRootAsFooter(new flatbuffers.ByteBuffer(u8.subarray(footerStart, u8.length - 10)));
  const fs_ = footer.schema();
  if (!fs_) throw new Error("Arrow IPC file footer has no schema");
  const frames = [];
  const blockFrame = (blk) => {
    const off = Number(blk.offset());
    const len = blk.metaDataLength() + Number(blk.bodyLength());
    const it = readMessages(u8, off, off + len).next();
    if (it.done) throw new Error("bad Arrow IPC file block");
    return it.value;
  };
  for (let i = 0; i < footer.dictionariesLength(); i++) frames.push(blockFrame(footer.dictionaries(i)));
  for (let i = 0; i < footer.recordBatchesLength(); i++) frames.push(blockFrame(footer.recordBatches(i)));
  return { schema: decodeSchema(fs_), schemaFrame: null, frames };
}

const EOS = Buffer.from([0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0]);

// The native module (createTable / add) wants the IPC *file* format.  Files
// are passed through verbatim; streams are re-framed into a file (message
// frames verbatim, new footer).
function toIpcFile(u8) {
  if (isIpcFile(u8)) return Buffer.from(u8.buffer, u8.byteOffset, u8.byteLength);
  const { schema, schemaFrame, frames: rest } = ipcFrames(u8);
  if (rest.some((f) => f.msg.headerType() === MessageHeader.DictionaryBatch))
    throw new Error("dictionary batches are not supported");
  const batches = rest
    .filter((f) => f.msg.headerType() === MessageHeader.RecordBatch)
    .map((f) => ({ frame: f.frame, bodyLength: f.body.length, metaDataLength: f.frame.length - f.body.length }));
  return assembleIpcFile(schema, schemaFrame, batches);
}

// ---------------------------------------------------------------------------
// IPC decode into JS values
// ---------------------------------------------------------------------------
// Value representation: bool -> boolean; int<=32 -> number; int64/uint64 ->
// bigint; float* -> number; utf8 -> string; binary/fsb -> Uint8Array;
// lists -> Array; struct -> Array of child values (field order); date32 ->
// number (days); date64 -> bigint (ms); timestamp -> bigint; null -> null.

const utf8Decoder = new TextDecoder("utf-8", { fatal: true });

function f16ToNumber(b) {
  const sign = b & 0x8000 ? -1 : 1;
  const e = (b >> 10) & 31;
  const m = b & 1023;
  if (e === 31) return m ? NaN : sign * Infinity;
  if (e === 0) return sign * m * 2 ** -24;
  return sign * (1 + m / 1024) * 2 ** (e - 15);
}

function f16round(x) {
  if (!Number.isFinite(x) || x === 0) return x;
  const sign = x < 0 ? -1 : 1;
  const a = Math.abs(x);
  if (a >= 65520) return sign * Infinity;
  let e = Math.floor(Math.log2(a));
  if (2 ** e > a) e--;
  if (2 ** (e + 1) <= a) e++;
  const ulp = 2 ** (Math.max(e, -14) - 10);
  const q = a / ulp;
  let f = Math.floor(q);
  const d = q - f;
  if (d > 0.5 || (d === 0.5 && f % 2 === 1)) f++;
  return sign * f * ulp;
}

function numberToF16(x) {
  if (Number.isNaN(x)) return 0x7e00;
  const sign = x < 0 || Object.is(x, -0) ? 0x8000 : 0;
  let a = f16round(Math.abs(x));
  if (a === Infinity) return sign | 0x7c00;
  if (a === 0) return sign;
  if (a < 2 ** -14) return sign | Math.round(a / 2 ** -24);
  let e = Math.floor(Math.log2(a));
  if (2 ** e > a) e--;
  if (2 ** (e + 1) <= a) e++;
  const m = Math.round((a / 2 ** e - 1) * 1024);
  return sign | ((e + 15) << 10) | m;
}

function decodeRecordBatch(schema, rb, body, dicts = new Map()) {
  if (rb.compression()) throw new Error("compressed Arrow IPC bodies are not supported");
  const ctx = { rb, body, dv: new DataView(body.buffer, body.byteOffset, body.byteLength), ni: 0, bi: 0, dicts };
  const n = Number(rb.length());
  const cols = schema.fields.map((f) => decodeArray(f.type, ctx));
  for (const c of cols) if (c.length !== n) throw new Error("column length mismatch in record batch");
  return cols;
}

function nextBuffer(ctx) {
  const b = ctx.rb.buffers(ctx.bi++);
  return { off: Number(b.offset()), len: Number(b.length()) };
}

function decodeArray(t, ctx) {
  if (t.k === "dict") {
    const values = ctx.dicts.get(t.id);
    if (!values) throw new Error(`no dictionary batch with id ${t.id} precedes the record batch`);
    return decodeArray(t.index, ctx).map((key) => (key === null ? null : values[Number(key)]));
  }
  const node = ctx.rb.nodes(ctx.ni++);
  const n = Number(node.length());
  const nullCount = Number(node.nullCount());
  const { dv, body } = ctx;
  if (t.k === "null") return new Array(n).fill(null);
  if (t.k === "unsupported") throw new Error(`cannot decode arrow type ${t.name}`);
  const vb = nextBuffer(ctx);
  const valid =
    nullCount === 0 || vb.len === 0 ? () => true : (i) => (body[vb.off + (i >> 3)] >> (i & 7)) & 1;
  const out = new Array(n);
  switch (t.k) {
    case "bool": {
      const b = nextBuffer(ctx);
      for (let i = 0; i < n; i++) out[i] = valid(i) ? ((body[b.off + (i >> 3)] >> (i & 7)) & 1) === 1 : null;
      return out;
    }
    case "int":
    case "float":
    case "date32":
    case "date64":
    case "timestamp":
    case "time":
    case "duration": {
      const b = nextBuffer(ctx);
      let w, rd;
      if (t.k === "int") {
        w = t.bits / 8;
        rd = {
          "8true": (o) => dv.getInt8(o),
          "16true": (o) => dv.getInt16(o, true),
          "32true": (o) => dv.getInt32(o, true),
          "64true": (o) => dv.getBigInt64(o, true),
          "8false": (o) => dv.getUint8(o),
          "16false": (o) => dv.getUint16(o, true),
          "32false": (o) => dv.getUint32(o, true),
          "64false": (o) => dv.getBigUint64(o, true),
        }[`${t.bits}${t.signed}`];
      } else if (t.k === "float") {
        w = t.bits / 8;
        rd = {
          16: (o) => f16ToNumber(dv.getUint16(o, true)),
          32: (o) => dv.getFloat32(o, true),
          64: (o) => dv.getFloat64(o, true),
        }[t.bits];
      } else if (t.k === "date32" || (t.k === "time" && t.bits === 32)) {
        w = 4;
        rd = (o) => dv.getInt32(o, true);
      } else {
        w = 8;
        rd = (o) => dv.getBigInt64(o, true);
      }
      for (let i = 0; i < n; i++) out[i] = valid(i) ? rd(b.off + i * w) : null;
      return out;
    }
    case "decimal": {
      const b = nextBuffer(ctx);
      const w = t.bits / 8;
      for (let i = 0; i < n; i++) out[i] = valid(i) ? readDecimal(dv, b.off + i * w, t.bits) : null;
      return out;
    }
    case "utf8":
    case "large_utf8":
    case "binary":
    case "large_binary": {
      const ob = nextBuffer(ctx);
      const db = nextBuffer(ctx);
      const large = t.k.startsWith("large");
      const off = (i) => (large ? Number(dv.getBigInt64(ob.off + i * 8, true)) : dv.getInt32(ob.off + i * 4, true));
      const str = t.k.endsWith("utf8");
      for (let i = 0; i < n; i++) {
        if (!valid(i)) {
          out[i] = null;
          continue;
        }
        const bytes = body.subarray(db.off + off(i), db.off + off(i + 1));
        out[i] = str ? utf8Decoder.decode(bytes) : new Uint8Array(bytes);
      }
      return out;
    }
    case "fsb": {
      const b = nextBuffer(ctx);
      for (let i = 0; i < n; i++)
        out[i] = valid(i) ? new Uint8Array(body.subarray(b.off + i * t.width, b.off + (i + 1) * t.width)) : null;
      return out;
    }
    case "list":
    case "large_list":
    case "map": {
      const ob = nextBuffer(ctx);
      const large = t.k === "large_list";
      const child = decodeArray(t.child.type, ctx);
      const off = (i) => (large ? Number(dv.getBigInt64(ob.off + i * 8, true)) : dv.getInt32(ob.off + i * 4, true));
      for (let i = 0; i < n; i++) out[i] = valid(i) ? child.slice(off(i), off(i + 1)) : null;
      return out;
    }
    case "fsl": {
      const child = decodeArray(t.child.type, ctx);
      for (let i = 0; i < n; i++) out[i] = valid(i) ? child.slice(i * t.size, (i + 1) * t.size) : null;
      return out;
    }
    case "struct": {
      const children = t.children.map((c) => decodeArray(c.type, ctx));
      for (let i = 0; i < n; i++) out[i] = valid(i) ? children.map((c) => c[i]) : null;
      return out;
    }
  }
  throw new Error(`decodeArray: ${t.k}`);
}

// A little-endian two's-complement integer of `bits` bits as a BigInt.
function readDecimal(dv, off, bits) {
  let v = 0n;
  for (let k = bits / 64 - 1; k >= 0; k--) v = (v << 64n) | dv.getBigUint64(off + k * 8, true);
  return BigInt.asIntN(bits, v);
}

function writeDecimal(dv, off, bits, value) {
  let v = BigInt.asUintN(bits, value);
  for (let k = 0; k < bits / 64; k++, v >>= 64n) dv.setBigUint64(off + k * 8, v & 0xffffffffffffffffn, true);
}

// Decode IPC (file or stream) bytes -> {schema, columns: [[...values]]}.
function decodeIpc(u8) {
  const { schema, frames } = ipcFrames(u8);
  const columns = schema.fields.map(() => []);
  const dicts = new Map();  // dictionary id -> its values
  const dictTypes = new Map();
  const collect = (t) => {
    if (t.k === "dict") {
      dictTypes.set(t.id, t.value);
      collect(t.value);
    }
    for (const c of childFields(t)) collect(c.type);
  };
  for (const f of schema.fields) collect(f.type);
  for (const fr of frames) {
    const ht = fr.msg.headerType();
    if (ht === MessageHeader.DictionaryBatch) {
      const db = fr.msg.header(new FbDictionaryBatch());
      const id = Number(db.id());
      if (!dictTypes.has(id)) throw new Error(`dictionary batch for unknown id ${id}`);
      const [values] = decodeRecordBatch({ fields: [{ type: dictTypes.get(id) }] }, db.data(), fr.body, dicts);
      dicts.set(id, db.isDelta() ? [...(dicts.get(id) ?? []), ...values] : values);
      continue;
    }
    if (ht !== MessageHeader.RecordBatch) continue;
    const cols = decodeRecordBatch(schema, fr.msg.header(new FbRecordBatch()), fr.body, dicts);
    cols.forEach((c, i) => {
      for (const v of c) columns[i].push(v);
    });
  }
  return { schema, columns };
}

// ---------------------------------------------------------------------------
// IPC encode
// ---------------------------------------------------------------------------
function encodeTypeTable(b, t) {
  switch (t.k) {
    case "null":
      FbNull.startNull(b);
      return [Type.Null, FbNull.endNull(b)];
    case "bool":
      FbBool.startBool(b);
      return [Type.Bool, FbBool.endBool(b)];
    case "int":
      FbInt.startInt(b);
      FbInt.addBitWidth(b, t.bits);
      FbInt.addIsSigned(b, t.signed);
      return [Type.Int, FbInt.endInt(b)];
    case "float":
      FloatingPoint.startFloatingPoint(b);
      FloatingPoint.addPrecision(b, { 16: 0, 32: 1, 64: 2 }[t.bits]);
      return [Type.FloatingPoint, FloatingPoint.endFloatingPoint(b)];
    case "utf8":
      FbUtf8.startUtf8(b);
      return [Type.Utf8, FbUtf8.endUtf8(b)];
    case "large_utf8":
      FbLargeUtf8.startLargeUtf8(b);
      return [Type.LargeUtf8, FbLargeUtf8.endLargeUtf8(b)];
    case "binary":
      FbBinary.startBinary(b);
      return [Type.Binary, FbBinary.endBinary(b)];
    case "large_binary":
      FbLargeBinary.startLargeBinary(b);
      return [Type.LargeBinary, FbLargeBinary.endLargeBinary(b)];
    case "fsb":
      FbFixedSizeBinary.startFixedSizeBinary(b);
      FbFixedSizeBinary.addByteWidth(b, t.width);
      return [Type.FixedSizeBinary, FbFixedSizeBinary.endFixedSizeBinary(b)];
    case "fsl":
      FbFixedSizeList.startFixedSizeList(b);
      FbFixedSizeList.addListSize(b, t.size);
      return [Type.FixedSizeList, FbFixedSizeList.endFixedSizeList(b)];
    case "list":
      FbList.startList(b);
      return [Type.List, FbList.endList(b)];
    case "large_list":
      FbLargeList.startLargeList(b);
      return [Type.LargeList, FbLargeList.endLargeList(b)];
    case "map":
      FbMap.startMap(b);
      FbMap.addKeysSorted(b, false);
      return [Type.Map, FbMap.endMap(b)];
    case "struct":
      FbStruct.startStruct_(b);
      return [Type.Struct_, FbStruct.endStruct_(b)];
    case "date32":
    case "date64":
      FbDate.startDate(b);
      FbDate.addUnit(b, t.k === "date32" ? 0 : 1);
      return [Type.Date, FbDate.endDate(b)];
    case "timestamp": {
      const tz = t.tz === null ? -1 : b.createString(t.tz);
      FbTimestamp.startTimestamp(b);
      FbTimestamp.addUnit(b, TIME_UNITS.indexOf(t.unit));
      if (tz !== -1) FbTimestamp.addTimezone(b, tz);
      return [Type.Timestamp, FbTimestamp.endTimestamp(b)];
    }
    case "time":
      FbTime.startTime(b);
      FbTime.addUnit(b, TIME_UNITS.indexOf(t.unit));
      FbTime.addBitWidth(b, t.bits);
      return [Type.Time, FbTime.endTime(b)];
    case "duration":
      FbDuration.startDuration(b);
      FbDuration.addUnit(b, TIME_UNITS.indexOf(t.unit));
      return [Type.Duration, FbDuration.endDuration(b)];
    case "decimal":
      FbDecimal.startDecimal(b);
      FbDecimal.addPrecision(b, t.precision);
      FbDecimal.addScale(b, t.scale);
      FbDecimal.addBitWidth(b, t.bits);
      return [Type.Decimal, FbDecimal.endDecimal(b)];
  }
  throw new Error(`cannot encode type ${t.k}`);
}

function encodeKVs(b, kvs) {
  return kvs.map(([k, v]) => {
    const ko = b.createString(k);
    const vo = b.createString(v);
    KeyValue.startKeyValue(b);
    KeyValue.addKey(b, ko);
    KeyValue.addValue(b, vo);
    return KeyValue.endKeyValue(b);
  });
}

function childFields(t) {
  if (t.k === "fsl" || t.k === "list" || t.k === "large_list" || t.k === "map") return [t.child];
  if (t.k === "struct") return t.children;
  return [];
}

function encodeFieldFb(b, f) {
  const kids = childFields(f.type).map((c) => encodeFieldFb(b, c));
  const kidsVec = FbField.createChildrenVector(b, kids);
  const md = f.metadata && f.metadata.length ? FbField.createCustomMetadataVector(b, encodeKVs(b, f.metadata)) : -1;
  const name = b.createString(f.name);
  const [tt, to] = encodeTypeTable(b, f.type);
  FbField.startField(b);
  FbField.addName(b, name);
  FbField.addNullable(b, !!f.nullable);
  FbField.addTypeType(b, tt);
  FbField.addType(b, to);
  FbField.addChildren(b, kidsVec);
  if (md !== -1) FbField.addCustomMetadata(b, md);
  return FbField.endField(b);
}

function encodeSchemaFb(b, schema) {
  const fields = schema.fields.map((f) => encodeFieldFb(b, f));
  const fv = FbSchema.createFieldsVector(b, fields);
  const md = schema.metadata && schema.metadata.length ? FbSchema.createCustomMetadataVector(b, encodeKVs(b, schema.metadata)) : -1;
  FbSchema.startSchema(b);
  FbSchema.addEndianness(b, Endianness.Little);
  FbSchema.addFields(b, fv);
  if (md !== -1) FbSchema.addCustomMetadata(b, md);
  return FbSchema.endSchema(b);
}

const pad8 = (n) => (n + 7) & ~7;

function frameMessage(headerType, buildHeader, body) {
  const b = new flatbuffers.Builder(1024);
  const h = buildHeader(b);
  Message.startMessage(b);
  Message.addVersion(b, MetadataVersion.V5);
  Message.addHeaderType(b, headerType);
  Message.addHeader(b, h);
  Message.addBodyLength(b, BigInt(body.length));
  Message.finishMessageBuffer(b, Message.endMessage(b));
  const meta = b.asUint8Array();
  const metaLen = pad8(8 + meta.length) - 8;
  const out = Buffer.alloc(8 + metaLen + body.length);
  out.writeInt32LE(-1, 0);
  out.writeInt32LE(metaLen, 4);
  out.set(meta, 8);
  out.set(body, 8 + metaLen);
  return { frame: out, metaDataLength: 8 + metaLen, bodyLength: body.length };
}

function defaultValue(t) {
  switch (t.k) {
    case "bool":
      return false;
    case "int":
      return t.bits === 64 ? 0n : 0;
    case "date64":
    case "timestamp":
    case "duration":
    case "decimal":
      return 0n;
    case "time":
      return t.bits === 32 ? 0 : 0n;
    case "float":
    case "date32":
      return 0;
    case "utf8":
    case "large_utf8":
      return "";
    case "binary":
    case "large_binary":
      return new Uint8Array(0);
    case "fsb":
      return new Uint8Array(t.width);
    case "fsl":
      return new Array(t.size).fill(defaultValue(t.child.type));
    case "list":
    case "large_list":
    case "map":
      return [];
    case "struct":
      return t.children.map((c) => defaultValue(c.type));
  }
  return null;
}

const utf8Encoder = new TextEncoder();

function encodeArray(t, values, ctx) {
  const n = values.length;
  let nulls = 0;
  for (const v of values) if (v === null) nulls++;
  ctx.nodes.push([n, nulls]);
  if (t.k === "null") return;
  const addBuf = (u8) => {
    ctx.buffers.push([ctx.size, u8.length]);
    ctx.parts.push([ctx.size, u8]);
    ctx.size += pad8(u8.length);
  };
  const bitmap = (pred) => {
    const u8 = new Uint8Array(pad8((n + 7) >> 3));
    for (let i = 0; i < n; i++) if (pred(i)) u8[i >> 3] |= 1 << (i & 7);
    return u8;
  };
  addBuf(nulls ? bitmap((i) => values[i] !== null) : new Uint8Array(0));
  switch (t.k) {
    case "bool":
      addBuf(bitmap((i) => values[i] === true));
      return;
    case "int":
    case "float":
    case "date32":
    case "date64":
    case "timestamp":
    case "time":
    case "duration": {
      let w, wr;
      const mk = (width) => {
        const u8 = new Uint8Array(pad8(n * width));
        return [u8, new DataView(u8.buffer)];
      };
      if (t.k === "int") {
        w = t.bits / 8;
        wr = {
          "8true": (d, o, v) => d.setInt8(o, v),
          "16true": (d, o, v) => d.setInt16(o, v, true),
          "32true": (d, o, v) => d.setInt32(o, v, true),
          "64true": (d, o, v) => d.setBigInt64(o, BigInt(v), true),
          "8false": (d, o, v) => d.setUint8(o, v),
          "16false": (d, o, v) => d.setUint16(o, v, true),
          "32false": (d, o, v) => d.setUint32(o, v, true),
          "64false": (d, o, v) => d.setBigUint64(o, BigInt(v), true),
        }[`${t.bits}${t.signed}`];
      } else if (t.k === "float") {
        w = t.bits / 8;
        wr = {
          16: (d, o, v) => d.setUint16(o, numberToF16(v), true),
          32: (d, o, v) => d.setFloat32(o, v, true),
          64: (d, o, v) => d.setFloat64(o, v, true),
        }[t.bits];
      } else if (t.k === "date32" || (t.k === "time" && t.bits === 32)) {
        w = 4;
        wr = (d, o, v) => d.setInt32(o, v, true);
      } else {
        w = 8;
        wr = (d, o, v) => d.setBigInt64(o, BigInt(v), true);
      }
      const [u8, d] = mk(w);
      for (let i = 0; i < n; i++) if (values[i] !== null) wr(d, i * w, values[i]);
      addBuf(u8);
      return;
    }
    case "utf8":
    case "large_utf8":
    case "binary":
    case "large_binary": {
      const large = t.k.startsWith("large");
      const w = large ? 8 : 4;
      const offs = new Uint8Array(pad8((n + 1) * w));
      const od = new DataView(offs.buffer);
      const chunks = [];
      let pos = 0;
      for (let i = 0; i < n; i++) {
        if (large) od.setBigInt64(i * 8, BigInt(pos), true);
        else od.setInt32(i * 4, pos, true);
        const v = values[i];
        if (v === null) continue;
        const bytes = typeof v === "string" ? utf8Encoder.encode(v) : v;
        chunks.push(bytes);
        pos += bytes.length;
      }
      if (large) od.setBigInt64(n * 8, BigInt(pos), true);
      else od.setInt32(n * 4, pos, true);
      addBuf(offs);
      addBuf(Buffer.concat(chunks.map((c) => Buffer.from(c.buffer, c.byteOffset, c.byteLength))));
      return;
    }
    case "decimal": {
      const w = t.bits / 8;
      const u8 = new Uint8Array(n * w);
      const d = new DataView(u8.buffer);
      for (let i = 0; i < n; i++) if (values[i] !== null) writeDecimal(d, i * w, t.bits, values[i]);
      addBuf(u8);
      return;
    }
    case "fsb": {
      const u8 = new Uint8Array(n * t.width);
      for (let i = 0; i < n; i++) if (values[i] !== null) u8.set(values[i], i * t.width);
      addBuf(u8);
      return;
    }
    case "list":
    case "large_list":
    case "map": {
      const large = t.k === "large_list";
      const w = large ? 8 : 4;
      const offs = new Uint8Array(pad8((n + 1) * w));
      const od = new DataView(offs.buffer);
      const child = [];
      for (let i = 0; i < n; i++) {
        if (large) od.setBigInt64(i * 8, BigInt(child.length), true);
        else od.setInt32(i * 4, child.length, true);
        if (values[i] !== null) for (const x of values[i]) child.push(x);
      }
      if (large) od.setBigInt64(n * 8, BigInt(child.length), true);
      else od.setInt32(n * 4, child.length, true);
      addBuf(offs);
      encodeArray(t.child.type, child, ctx);
      return;
    }
    case "fsl": {
      const child = [];
      const dflt = defaultValue(t.child.type);
      for (let i = 0; i < n; i++) {
        const v = values[i];
        if (v !== null && v.length !== t.size) throw new Error("fixed_size_list value of wrong length");
        for (let j = 0; j < t.size; j++) child.push(v === null ? dflt : v[j]);
      }
      encodeArray(t.child.type, child, ctx);
      return;
    }
    case "struct":
      t.children.forEach((c, j) => {
        encodeArray(
          c.type,
          values.map((v) => (v === null ? (c.nullable ? null : defaultValue(c.type)) : v[j])),
          ctx,
        );
      });
      return;
  }
  throw new Error(`encodeArray: ${t.k}`);
}

function encodeRecordBatchFrame(schema, columns, start, end) {
  const ctx = { nodes: [], buffers: [], parts: [], size: 0 };
  schema.fields.forEach((f, i) => encodeArray(f.type, columns[i].slice(start, end), ctx));
  const body = new Uint8Array(ctx.size);
  for (const [off, u8] of ctx.parts) body.set(u8, off);
  return frameMessage(
    MessageHeader.RecordBatch,
    (b) => {
      FbRecordBatch.startNodesVector(b, ctx.nodes.length);
      for (const [len, nc] of ctx.nodes.slice().reverse()) FbFieldNode.createFieldNode(b, BigInt(len), BigInt(nc));
      const nv = b.endVector();
      FbRecordBatch.startBuffersVector(b, ctx.buffers.length);
      for (const [off, len] of ctx.buffers.slice().reverse()) FbBuffer.createBuffer(b, BigInt(off), BigInt(len));
      const bv = b.endVector();
      FbRecordBatch.startRecordBatch(b);
      FbRecordBatch.addLength(b, BigInt(end - start));
      FbRecordBatch.addNodes(b, nv);
      FbRecordBatch.addBuffers(b, bv);
      return FbRecordBatch.endRecordBatch(b);
    },
    body,
  );
}

// Encode {schema, columns} as IPC; batchRows splits into several batches.
function encodeIpc(schema, columns, { format = "file", batchRows = 0 } = {}) {
  const nrows = columns.length ? columns[0].length : 0;
  const schemaFrame = frameMessage(MessageHeader.Schema, (b) => encodeSchemaFb(b, schema), new Uint8Array(0));
  const batches = [];
  const step = batchRows > 0 ? batchRows : Math.max(nrows, 1);
  for (let s = 0; s < nrows || (s === 0 && nrows === 0); s += step) {
    batches.push(encodeRecordBatchFrame(schema, columns, s, Math.min(nrows, s + step)));
    if (nrows === 0) break;
  }
  if (format === "stream") return Buffer.concat([schemaFrame.frame, ...batches.map((x) => x.frame), EOS]);
  return assembleIpcFile(schema, schemaFrame.frame, batches);
}

function assembleIpcFile(schema, schemaFrameBytes, batches) {
  const parts = [Buffer.from("ARROW1\0\0"), schemaFrameBytes];
  let off = 8 + schemaFrameBytes.length;
  const blocks = [];
  for (const bt of batches) {
    blocks.push([off, bt.metaDataLength, bt.bodyLength]);
    parts.push(bt.frame);
    off += bt.frame.length;
  }
  parts.push(EOS);
  const b = new flatbuffers.Builder(1024);
  const so = encodeSchemaFb(b, schema);
  FbFooter.startDictionariesVector(b, 0);
  const dv = b.endVector();
  FbFooter.startRecordBatchesVector(b, blocks.length);
  for (const [o, m, bl] of blocks.slice().reverse()) FbBlock.createBlock(b, BigInt(o), m, BigInt(bl));
  const rv = b.endVector();
  FbFooter.startFooter(b);
  FbFooter.addVersion(b, MetadataVersion.V5);
  FbFooter.addSchema(b, so);
  FbFooter.addDictionaries(b, dv);
  FbFooter.addRecordBatches(b, rv);
  FbFooter.finishFooterBuffer(b, FbFooter.endFooter(b));
  const footer = b.asUint8Array();
  const tail = Buffer.alloc(4);
  tail.writeInt32LE(footer.length, 0);
  parts.push(Buffer.from(footer), tail, MAGIC);
  return Buffer.concat(parts);
}

// ---------------------------------------------------------------------------
// Canonical JSON rendering
// ---------------------------------------------------------------------------
function shortestFloat(x, round, maxp) {
  for (let p = 1; p <= maxp; p++) {
    const y = Number(x.toPrecision(p));
    if (round(y) === x) return y;
  }
  return x;
}

function renderFloat(x, bits) {
  if (Number.isNaN(x)) return '"NaN"';
  if (x === Infinity) return '"Infinity"';
  if (x === -Infinity) return '"-Infinity"';
  if (Object.is(x, -0)) return "-0";
  if (bits === 64) return String(x);
  if (bits === 32) return String(shortestFloat(x, Math.fround, 9));
  return String(shortestFloat(x, f16round, 5));
}

const floorDiv = (a, b) => {
  const q = a / b;
  return a % b !== 0n && a < 0n !== b < 0n ? q - 1n : q;
};
const pad = (n, w) => String(n).padStart(w, "0");

// Civil date from days since 1970-01-01 (proleptic Gregorian).
function civilFromDays(z) {
  z += 719468;
  const era = Math.floor(z / 146097);
  const doe = z - era * 146097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36524) - Math.floor(doe / 146096)) / 365);
  let y = yoe + era * 400;
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const d = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const m = mp < 10 ? mp + 3 : mp - 9;
  if (m <= 2) y++;
  return [y, m, d];
}

function fmtDate(days) {
  const [y, m, d] = civilFromDays(days);
  const ys = y >= 0 && y <= 9999 ? pad(y, 4) : (y < 0 ? "-" : "+") + pad(Math.abs(y), 6);
  return `${ys}-${pad(m, 2)}-${pad(d, 2)}`;
}

const UNIT_PER_SEC = { s: 1n, ms: 1000n, us: 1000000n, ns: 1000000000n };
const UNIT_DIGITS = { s: 0, ms: 3, us: 6, ns: 9 };

function fmtTimestamp(v, unit) {
  const ups = UNIT_PER_SEC[unit];
  const secs = floorDiv(v, ups);
  const frac = v - secs * ups;
  const days = floorDiv(secs, 86400n);
  const sod = Number(secs - days * 86400n);
  let s = `${fmtDate(Number(days))}T${pad(Math.floor(sod / 3600), 2)}:${pad(Math.floor(sod / 60) % 60, 2)}:${pad(sod % 60, 2)}`;
  if (UNIT_DIGITS[unit]) s += "." + pad(frac, UNIT_DIGITS[unit]);
  return s;
}

// "HH:MM:SS" plus the unit's fraction digits; outside one day the sign is kept and hours
// run past 23 (as lancelet prints it).
function fmtTimeOfDay(v, unit) {
  const ups = UNIT_PER_SEC[unit];
  const neg = v < 0n;
  const m = neg ? -v : v;
  const secs = m / ups;
  const frac = m % ups;
  let s = `${neg ? "-" : ""}${pad(secs / 3600n, 2)}:${pad((secs / 60n) % 60n, 2)}:${pad(secs % 60n, 2)}`;
  if (UNIT_DIGITS[unit]) s += "." + pad(frac, UNIT_DIGITS[unit]);
  return s;
}

// The unscaled integer at `scale` as JSON number text with every digit ("-0.05").
function fmtDecimal(v, scale) {
  const neg = v < 0n;
  let digits = (neg ? -v : v).toString();
  if (scale < 0 && digits !== "0") digits += "0".repeat(-scale);
  if (scale > 0) {
    if (digits.length <= scale) digits = "0".repeat(scale + 1 - digits.length) + digits;
    digits = digits.slice(0, digits.length - scale) + "." + digits.slice(digits.length - scale);
  }
  return (neg ? "-" : "") + digits;
}

function render(t, v) {
  if (v === null || v === undefined) return "null";
  switch (t.k) {
    case "bool":
      return v ? "true" : "false";
    case "int":
      return String(v);
    case "float":
      return renderFloat(v, t.bits);
    case "utf8":
    case "large_utf8":
      return JSON.stringify(v);
    case "binary":
    case "large_binary":
    case "fsb":
      return JSON.stringify(Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString("base64"));
    case "date32":
      return JSON.stringify(fmtDate(v));
    case "date64":
      return JSON.stringify(fmtTimestamp(BigInt(v), "ms"));
    case "timestamp":
      return JSON.stringify(fmtTimestamp(BigInt(v), t.unit) + (t.tz !== null ? "Z" : ""));
    case "time":
      return JSON.stringify(fmtTimeOfDay(BigInt(v), t.unit));
    case "duration":
      return String(v);
    case "decimal":
      return fmtDecimal(BigInt(v), t.scale);
    case "list":
    case "large_list":
    case "map":
    case "fsl":
      return "[" + v.map((x) => render(t.child.type, x)).join(",") + "]";
    case "struct":
      return "{" + t.children.map((c, j) => JSON.stringify(c.name) + ":" + render(c.type, v[j])).join(",") + "}";
    case "null":
      return "null";
    case "dict":
      return render(t.value, v);
  }
  throw new Error(`cannot render type ${typeToString(t)}`);
}

function renderRows(fields, columns) {
  const n = columns.length ? columns[0].length : 0;
  const lines = [];
  for (let i = 0; i < n; i++)
    lines.push("{" + fields.map((f, j) => JSON.stringify(f.name) + ":" + render(f.type, columns[j][i])).join(",") + "}");
  return lines;
}

// ---------------------------------------------------------------------------
// Deterministic data generator
// ---------------------------------------------------------------------------
function mulberry32(a) {
  return () => {
    a |= 0;
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const MATRIX_TYPES = [
  "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
  "float16", "float32", "float64", "utf8", "large_utf8", "binary", "large_binary",
  "fixed_size_binary<16>", "fixed_size_list<float32,4>", "list<int32>", "large_list<utf8>",
  "struct<a:int32,b:utf8>", "list<struct<x:int32,y:float64>>", "date32", "date64",
  "timestamp<s>", "timestamp<ms>", "timestamp<us,UTC>", "timestamp<ns>",
];

const STRINGS = [
  "", "a", "héllo wörld", "日本語テキスト", "emoji 😀👍🏽", "quote\" backslash\\ newline\n tab\t",
  "\u0000nul", "e\u0301 combining", "Ωμέγα", "\u007f\u0080\u07ff\u0800\uffff", "𝄞 clef",
];
const ALPHABET = [..."abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 _-äöüßéñçøå中文字日本한국어😀🚀∑π€"];

// Epoch-day range for years 0001..9999.
const MIN_DAY = -719162; // 0001-01-01
const MAX_DAY = 2932896; // 9999-12-31

function makeGen(rng, opts) {
  const u32 = () => Math.floor(rng() * 4294967296);
  const randInt = (lo, hi) => lo + Math.floor(rng() * (hi - lo + 1)); // inclusive, |range| < 2^53
  const randBig = (lo, hi) => {
    const span = hi - lo + 1n;
    const r = (BigInt(u32()) << 64n) | (BigInt(u32()) << 32n) | BigInt(u32());
    return lo + (r % span);
  };
  const f32buf = new DataView(new ArrayBuffer(8));
  const randF32 = () => {
    for (;;) {
      f32buf.setUint32(0, u32());
      const x = f32buf.getFloat32(0);
      if (Number.isFinite(x)) return rng() < 0.5 ? x : Math.fround((rng() - 0.5) * 10 ** randInt(-3, 6));
    }
  };
  const randF64 = () => {
    for (;;) {
      f32buf.setUint32(0, u32());
      f32buf.setUint32(4, u32());
      const x = f32buf.getFloat64(0);
      if (Number.isFinite(x)) return rng() < 0.5 ? x : (rng() - 0.5) * 10 ** randInt(-3, 9);
    }
  };
  const randF16 = () => {
    for (;;) {
      const b = u32() & 0xffff;
      if (((b >> 10) & 31) !== 31) return f16ToNumber(b);
    }
  };
  const randStr = () => {
    const n = randInt(0, 12);
    let s = "";
    for (let i = 0; i < n; i++) s += ALPHABET[randInt(0, ALPHABET.length - 1)];
    return s;
  };
  const randBytes = (n) => {
    const u8 = new Uint8Array(n);
    for (let i = 0; i < n; i++) u8[i] = randInt(0, 255);
    return u8;
  };

  const nullOk = (f) => f.nullable && !(f.type.k === "struct" && opts.noNullStructs);
  // edges(t): list of edge values (non-null); rand(t): random non-null value.
  const edges = (t) => {
    switch (t.k) {
      case "bool":
        return [true, false];
      case "int": {
        if (t.bits === 64)
          return t.signed
            ? [-(2n ** 63n), 2n ** 63n - 1n, 0n, -1n, 2n ** 53n + 1n, -(2n ** 53n + 1n)]
            : [0n, 2n ** 64n - 1n, 2n ** 63n, 2n ** 53n + 1n, 1n];
        const max = t.signed ? 2 ** (t.bits - 1) - 1 : 2 ** t.bits - 1;
        const min = t.signed ? -(2 ** (t.bits - 1)) : 0;
        return t.signed ? [min, max, 0, -1, 1] : [min, max, 1];
      }
      case "float":
        if (t.bits === 16)
          return [NaN, Infinity, -Infinity, -0, 0, 65504, -65504, 2 ** -24, 2 ** -14, 1, f16round(0.1), f16round(1 / 3)];
        if (t.bits === 32)
          return [NaN, Infinity, -Infinity, -0, 0, 3.4028234663852886e38, -3.4028234663852886e38, 1.401298464324817e-45,
            1.1754943508222875e-38, Math.fround(0.1), Math.fround(1 / 3), 16777216, Math.fround(1e-7)];
        return [NaN, Infinity, -Infinity, -0, 0, Number.MAX_VALUE, -Number.MAX_VALUE, Number.MIN_VALUE,
          2.2250738585072014e-308, 0.1, 1 / 3, 1e21, 1e-7, 123456789012345680000, 2 ** 53 + 2];
      case "utf8":
      case "large_utf8":
        return STRINGS;
      case "binary":
      case "large_binary":
        return [new Uint8Array(0), Uint8Array.from([0]), Uint8Array.from([255, 0, 1]), utf8Encoder.encode("bin✓")];
      case "fsb":
        return [new Uint8Array(t.width), new Uint8Array(t.width).fill(255)];
      case "fsl": {
        let ce = edges(t.child.type);
        if (opts.noNanVectors && t.child.type.k === "float") ce = ce.filter((x) => !Number.isNaN(x));
        const out = [];
        for (let i = 0; i < ce.length; i += t.size) {
          const v = [];
          for (let j = 0; j < t.size; j++) v.push(ce[(i + j) % ce.length]);
          out.push(v);
        }
        return out;
      }
      case "list":
      case "large_list":
      case "map":
        return [[], ...(nullOk(t.child) ? [[null]] : []), edges(t.child.type).slice(0, 3)];
      case "struct":
        return [t.children.map((c) => edges(c.type)[0]), t.children.map((c) => (nullOk(c) ? null : defaultValue(c.type)))];
      case "date32":
        return [MIN_DAY, MAX_DAY, 0, -1, 11016 /* 2000-02-29 */];
      case "date64":
        return [BigInt(MIN_DAY) * 86400000n, BigInt(MAX_DAY) * 86400000n + 86399999n, 0n, -1n, 951782400000n];
      case "time": {
        const day = 86400n * UNIT_PER_SEC[t.unit];
        return t.bits === 32 ? [0, Number(day) - 1, 1] : [0n, day - 1n, 1n];
      }
      case "duration":
        return [-(2n ** 63n), 2n ** 63n - 1n, 0n, -1n];
      case "decimal": {
        const max = 10n ** BigInt(t.precision) - 1n;
        return [max, -max, 0n, 1n, -1n];
      }
      case "timestamp": {
        const ups = UNIT_PER_SEC[t.unit];
        if (t.unit === "ns") return [-(2n ** 63n), 2n ** 63n - 1n, 0n, -1n, 951782400123456789n];
        return [BigInt(MIN_DAY) * 86400n * ups, (BigInt(MAX_DAY) * 86400n + 86399n) * ups + ups - 1n, 0n, -1n, 951782400n * ups + ups / 3n];
      }
    }
    return [];
  };
  const rand = (t, depth) => {
    switch (t.k) {
      case "bool":
        return rng() < 0.5;
      case "int":
        if (t.bits === 64) return t.signed ? randBig(-(2n ** 63n), 2n ** 63n - 1n) : randBig(0n, 2n ** 64n - 1n);
        return t.signed ? randInt(-(2 ** (t.bits - 1)), 2 ** (t.bits - 1) - 1) : randInt(0, 2 ** t.bits - 1);
      case "float":
        return t.bits === 16 ? randF16() : t.bits === 32 ? randF32() : randF64();
      case "utf8":
      case "large_utf8":
        return randStr();
      case "binary":
      case "large_binary":
        return randBytes(randInt(0, 16));
      case "fsb":
        return randBytes(t.width);
      case "fsl": {
        const v = [];
        for (let j = 0; j < t.size; j++) v.push(value(t.child, depth + 1, false, true));
        return v;
      }
      case "list":
      case "large_list":
      case "map": {
        const n = randInt(0, 5);
        const v = [];
        for (let j = 0; j < n; j++) v.push(value(t.child, depth + 1, true));
        return v;
      }
      case "struct":
        return t.children.map((c) => value(c, depth + 1, true));
      case "date32":
        return randInt(MIN_DAY, MAX_DAY);
      case "date64":
        return randBig(BigInt(MIN_DAY) * 86400000n, BigInt(MAX_DAY) * 86400000n + 86399999n);
      case "timestamp": {
        const ups = UNIT_PER_SEC[t.unit];
        if (t.unit === "ns") return randBig(-(2n ** 63n), 2n ** 63n - 1n);
        return randBig(BigInt(MIN_DAY) * 86400n * ups, (BigInt(MAX_DAY) * 86400n + 86399n) * ups + ups - 1n);
      }
      case "null":
        return null;
      case "time": {
        const day = 86400n * UNIT_PER_SEC[t.unit];
        return t.bits === 32 ? randInt(0, Number(day) - 1) : randBig(0n, day - 1n);
      }
      case "duration":
        return randBig(-(2n ** 63n), 2n ** 63n - 1n);
      case "decimal": {
        // Any digit count up to the precision, so small and huge values both occur.
        const max = 10n ** BigInt(randInt(1, t.precision)) - 1n;
        let r = 0n;
        for (let k = 0; k < t.bits / 32 + 1; k++) r = (r << 32n) | BigInt(u32());
        return (r % (2n * max + 1n)) - max;
      }
    }
    throw new Error(`cannot generate ${typeToString(t)}`);
  };
  // Nested values: nulls only where allowed.  fsl children never null
  // (nullsInFsl=false) to keep fixed-size-list data dense.
  const value = (f, depth, allowNull, inVector = false) => {
    const t = f.type;
    if (allowNull && nullOk(f) && rng() < opts.nullRate) return null;
    if (rng() < 0.15) {
      let e = edges(t);
      if (inVector && opts.noNanVectors && t.k === "float") e = e.filter((x) => !Number.isNaN(x));
      if (e.length) return e[randInt(0, e.length - 1)];
    }
    return rand(t, depth);
  };
  return { edges, rand, value };
}

function genTable(typeStrs, rows, seed, opts) {
  const fields = typeStrs.map((ts) => ({ name: columnNameForType(ts), type: parseType(ts), nullable: true, metadata: [] }));
  const seen = new Set();
  for (const f of fields) {
    if (seen.has(f.name)) throw new UsageError(`duplicate column ${f.name}`);
    seen.add(f.name);
  }
  const columns = fields.map((f, ci) => {
    const rng = mulberry32((seed * 1000003 + ci * 7919 + 1) >>> 0);
    const g = makeGen(rng, opts);
    const e = g.edges(f.type);
    // Edge values land at column-specific rows; nulls at ~nullRate random rows.
    const col = [];
    for (let i = 0; i < rows; i++) {
      const isNull = rng() < opts.nullRate && !(f.type.k === "struct" && opts.noNullStructs);
      col.push(isNull ? null : undefined);
    }
    for (let i = 0; i < rows; i++) if (col[i] === undefined) col[i] = g.value(f, 0, false);
    // place edges: the first edges.length non-null rows after a column offset
    let r = ci % Math.max(rows, 1);
    for (const ev of e) {
      let tries = 0;
      while (tries < rows && col[r] === null) {
        r = (r + 1) % rows;
        tries++;
      }
      if (tries >= rows) break;
      col[r] = ev;
      r = (r + 1) % rows;
    }
    return col;
  });
  return { schema: { fields, metadata: [] }, columns };
}

// ---------------------------------------------------------------------------
// Dataset helpers
// ---------------------------------------------------------------------------
// A dataset URI of an object store (s3://BUCKET/PREFIX/name.lance) rather than a local
// path; its storage options are the JSON object in LANCELET_ORACLE_STORAGE_OPTIONS, keyed
// as the reference's storageOptions.
function isRemote(dir) {
  return /^[a-z][a-z0-9+.-]*:\/\//i.test(dir);
}
function remoteOptions() {
  const text = process.env.LANCELET_ORACLE_STORAGE_OPTIONS;
  return text ? JSON.parse(text) : {};
}

function splitDatasetPath(dir) {
  const abs = isRemote(dir) ? dir.replace(/\/+$/, "") : path.resolve(dir.replace(/\/+$/, ""));
  const base = abs.slice(abs.lastIndexOf("/") + 1);
  if (!base.endsWith(".lance") || base.length <= ".lance".length)
    throw new UsageError(`dataset path must end with '<name>.lance' (got '${dir}')`);
  const name = base.slice(0, -".lance".length);
  if (!/^[A-Za-z0-9_.-]+$/.test(name))
    throw new UsageError(`dataset name '${name}' must match [A-Za-z0-9_.-]+ (lancedb table-name rule)`);
  return { parent: abs.slice(0, abs.lastIndexOf("/")), name };
}

async function connectFor(dir) {
  const { parent, name } = splitDatasetPath(dir);
  const ldb = await lancedb();
  const conn = await ldb.connect(parent, isRemote(dir) ? { storageOptions: remoteOptions() } : undefined);
  return { conn, name };
}

async function openNative(dir) {
  const { conn, name } = await connectFor(dir);
  if (!isRemote(dir) && !fs.existsSync(path.join(path.resolve(dir)))) throw new Error(`dataset not found: ${dir}`);
  return conn.inner.openTable(name, [], undefined, undefined);
}

async function readAllBatches(nquery) {
  const it = await nquery.execute();
  const out = [];
  for (let buf = await it.next(); buf; buf = await it.next()) out.push(decodeIpc(buf));
  return out;
}

function readDataFile(file) {
  const u8 = fs.readFileSync(file);
  return decodeIpc(u8);
}

// ---------------------------------------------------------------------------
// Commands
// ---------------------------------------------------------------------------
function parseArgs(argv, spec) {
  // spec: {flagName: 'bool'|'string'|'multi'}
  const pos = [];
  const opts = {};
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a.startsWith("--")) {
      let key = a.slice(2);
      let val;
      const eq = key.indexOf("=");
      if (eq >= 0) {
        val = key.slice(eq + 1);
        key = key.slice(0, eq);
      }
      const kind = spec[key];
      if (!kind) throw new UsageError(`unknown option --${key}`);
      if (kind === "bool") {
        opts[key] = true;
        continue;
      }
      if (val === undefined) {
        if (i + 1 >= argv.length) throw new UsageError(`--${key} needs a value`);
        val = argv[++i];
      }
      if (kind === "multi") (opts[key] ??= []).push(val);
      else opts[key] = val;
    } else pos.push(a);
  }
  return { pos, opts };
}

function need(pos, n, usage) {
  if (pos.length !== n) throw new UsageError(`usage: ${usage}`);
}

const FILE_VERSIONS = ["2.0", "2.1", "2.2"];

async function cmdCreate(argv) {
  const { pos, opts } = parseArgs(argv, {
    data: "string", "file-version": "string", "max-rows-per-file": "string", "stable-row-ids": "bool", overwrite: "bool",
    "manifest-paths": "string",
  });
  need(pos, 1, "create <dataset_dir> --data <file.arrow> [--file-version 2.0|2.1|2.2] [--max-rows-per-file N] [--stable-row-ids] [--manifest-paths v1|v2] [--overwrite]");
  const mp = opts["manifest-paths"];
  if (mp !== undefined && mp !== "v1" && mp !== "v2") throw new UsageError("--manifest-paths must be v1 or v2");
  if (!opts.data) throw new UsageError("create: --data is required");
  await createDataset(pos[0], fs.readFileSync(opts.data), {
    fileVersion: opts["file-version"],
    maxRowsPerFile: opts["max-rows-per-file"] ? parseInt(opts["max-rows-per-file"], 10) : 0,
    stableRowIds: !!opts["stable-row-ids"],
    overwrite: !!opts.overwrite,
    manifestPaths: mp,
  });
}

async function createDataset(dir, ipcBytes, { fileVersion, maxRowsPerFile = 0, stableRowIds = false, overwrite = false, manifestPaths }) {
  const { conn, name } = await connectFor(dir);
  const storageOptions = isRemote(dir) ? remoteOptions() : {};
  if (fileVersion !== undefined) {
    if (!FILE_VERSIONS.includes(fileVersion) && !["stable", "legacy", "next"].includes(fileVersion))
      throw new UsageError(`unsupported --file-version ${fileVersion}`);
    storageOptions.new_table_data_storage_version = fileVersion;
  }
  if (stableRowIds) storageOptions.new_table_enable_stable_row_ids = "true";
  // lancedb 0.39 defaults to V2 manifest naming (_versions/{u64::MAX - v:020}.manifest)
  if (manifestPaths !== undefined) storageOptions.new_table_enable_v2_manifest_paths = manifestPaths === "v2" ? "true" : "false";
  const mode = overwrite ? "overwrite" : "create";
  if (!maxRowsPerFile) {
    await conn.inner.createTable(name, toIpcFile(ipcBytes), mode, [], storageOptions);
    return;
  }
  // lancedb 0.39 exposes no max_rows_per_file write option: emulate it by
  // creating with the first chunk and appending each further chunk (one
  // fragment + one version per chunk).
  if (!(maxRowsPerFile > 0)) throw new UsageError("--max-rows-per-file must be a positive integer");
  const { schema, columns } = decodeIpc(ipcBytes);
  const nrows = columns.length ? columns[0].length : 0;
  let table = null;
  for (let s = 0; s === 0 || s < nrows; s += maxRowsPerFile) {
    const chunk = columns.map((c) => c.slice(s, s + maxRowsPerFile));
    const buf = encodeIpc(schema, chunk, { format: "file" });
    if (!table) table = await conn.inner.createTable(name, buf, mode, [], storageOptions);
    else await table.add(buf, "append");
  }
}

async function cmdAppend(argv) {
  const { pos, opts } = parseArgs(argv, { data: "string" });
  need(pos, 1, "append <dataset_dir> --data <file.arrow>");
  if (!opts.data) throw new UsageError("append: --data is required");
  const t = await openNative(pos[0]);
  await t.add(toIpcFile(fs.readFileSync(opts.data)), "append");
}

async function cmdDelete(argv) {
  const { pos, opts } = parseArgs(argv, { where: "string" });
  need(pos, 1, 'delete <dataset_dir> --where "<predicate>"');
  if (opts.where === undefined) throw new UsageError("delete: --where is required");
  const t = await openNative(pos[0]);
  await t.delete(opts.where);
}

async function cmdUpdate(argv) {
  const { pos, opts } = parseArgs(argv, { where: "string", set: "multi" });
  need(pos, 1, 'update <dataset_dir> [--where "<pred>"] --set col=expr [--set ...]');
  if (!opts.set || !opts.set.length) throw new UsageError("update: at least one --set col=expr is required");
  const cols = opts.set.map((s) => {
    const i = s.indexOf("=");
    if (i <= 0) throw new UsageError(`bad --set '${s}' (want col=expr)`);
    return [s.slice(0, i).trim(), s.slice(i + 1)];
  });
  const t = await openNative(pos[0]);
  await t.update(opts.where ?? null, cols);
}

// The high-level LanceDB table (index and plan calls live there).
async function openTable(dir) {
  const { conn, name } = await connectFor(dir);
  if (!isRemote(dir) && !fs.existsSync(path.resolve(dir))) throw new Error(`dataset not found: ${dir}`);
  return conn.openTable(name);
}

// create-index <dir> <column> [--type btree|bitmap|ivf_flat|ivf_pq] [--name N]: the
// reference builds an index on the column. Vector types take [--partitions P]
// [--sub-vectors M] [--bits B] (ivf_pq) [--distance l2|cosine|dot] [--max-iters N].
async function cmdCreateIndex(argv) {
  const { pos, opts } = parseArgs(argv, {
    type: "string", name: "string", partitions: "string", "sub-vectors": "string", bits: "string",
    distance: "string", "max-iters": "string",
  });
  need(pos, 2, "create-index <dataset_dir> <column> [--type btree|bitmap|ivf_flat|ivf_pq] [--name N] [--partitions P] [--sub-vectors M] [--bits B] [--distance l2|cosine|dot] [--max-iters N]");
  const ldb = await lancedb();
  const type = opts.type ?? "btree";
  const vector = {};
  if (opts.partitions !== undefined) vector.numPartitions = parseInt(opts.partitions, 10);
  if (opts.distance !== undefined) vector.distanceType = opts.distance;
  if (opts["max-iters"] !== undefined) vector.maxIterations = parseInt(opts["max-iters"], 10);
  let config;
  if (type === "btree") config = ldb.Index.btree();
  else if (type === "bitmap") config = ldb.Index.bitmap();
  else if (type === "ivf_flat") config = ldb.Index.ivfFlat(vector);
  else if (type === "ivf_pq") {
    if (opts["sub-vectors"] !== undefined) vector.numSubVectors = parseInt(opts["sub-vectors"], 10);
    if (opts.bits !== undefined) vector.numBits = parseInt(opts.bits, 10);
    config = ldb.Index.ivfPq(vector);
  } else throw new UsageError(`create-index: unknown type '${type}'`);
  const t = await openTable(pos[0]);
  const options = { config };
  if (opts.name !== undefined) options.name = opts.name;
  await t.createIndex(pos[1], options);
}

// indices <dir>: one JSON line per index the reference lists: name, type, columns, and
// how many rows it indexes and does not.
async function cmdIndices(argv) {
  const { pos } = parseArgs(argv, {});
  need(pos, 1, "indices <dataset_dir>");
  const t = await openTable(pos[0]);
  const lines = [];
  for (const index of await t.listIndices()) {
    const stats = await t.indexStats(index.name);
    lines.push(JSON.stringify({ name: index.name, type: index.indexType, columns: index.columns,
      indexed: stats?.numIndexedRows, unindexed: stats?.numUnindexedRows }));
  }
  writeLines(lines);
}

// explain <dir> --where P: the reference's physical plan for a filtered scan.
async function cmdExplain(argv) {
  const { pos, opts } = parseArgs(argv, { where: "string" });
  need(pos, 1, 'explain <dataset_dir> --where "<predicate>"');
  const t = await openTable(pos[0]);
  writeLines([await t.query().where(opts.where).explainPlan(true)]);
}

// explain-search <dir> --vector '[..]' [--column c] [--k K] [--distance d] [--nprobes N]
// [--refine F]: the reference's physical plan for a nearest-neighbour query that may use
// its vector index (an ANN node when it does).
async function cmdExplainSearch(argv) {
  const { pos, opts } = parseArgs(argv, {
    vector: "string", column: "string", k: "string", distance: "string", nprobes: "string", refine: "string",
  });
  need(pos, 1, "explain-search <dataset_dir> --vector '[..]' [--column c] [--k K] [--distance d] [--nprobes N] [--refine F]");
  const t = await openTable(pos[0]);
  const vq = t.query().nearestTo(Float32Array.from(JSON.parse(opts.vector)));
  if (opts.column !== undefined) vq.column(opts.column);
  if (opts.distance !== undefined) vq.distanceType(opts.distance);
  vq.limit(parseInt(opts.k ?? "10", 10));
  if (opts.nprobes !== undefined) vq.nprobes(parseInt(opts.nprobes, 10));
  if (opts.refine !== undefined) vq.refineFactor(parseInt(opts.refine, 10));
  writeLines([await vq.explainPlan(true)]);
}

async function dumpRows(dir, { version, columns, where, withRowId, withRowAddr } = {}) {
  const t = await openNative(dir);
  if (version !== undefined) await t.checkout(version);
  const q = t.query();
  if (where !== undefined) q.onlyIf(where);
  let sel = columns;
  if (withRowAddr) {
    if (!sel) sel = decodeIpc(await t.schema()).schema.fields.map((f) => f.name);
    sel = [...sel, "_rowaddr"];
  }
  if (sel) q.selectColumns(sel);
  if (withRowId) q.withRowId();
  const batches = await readAllBatches(q);
  // key order: requested/schema columns, then _rowid, then _rowaddr
  const lines = [];
  for (const { schema, columns: cols } of batches) {
    const idx = schema.fields.map((f, i) => i);
    const rank = (f) => (f.name === "_rowid" ? 1 : f.name === "_rowaddr" ? 2 : 0);
    idx.sort((a, b) => rank(schema.fields[a]) - rank(schema.fields[b]) || a - b);
    lines.push(...renderRows(idx.map((i) => schema.fields[i]), idx.map((i) => cols[i])));
  }
  return lines;
}

async function cmdDump(argv) {
  const { pos, opts } = parseArgs(argv, {
    version: "string", columns: "string", where: "string", "with-rowid": "bool", "with-rowaddr": "bool",
  });
  need(pos, 1, "dump <dataset_dir> [--version V] [--columns a,b] [--where pred] [--with-rowid] [--with-rowaddr]");
  const lines = await dumpRows(pos[0], {
    version: opts.version !== undefined ? parseInt(opts.version, 10) : undefined,
    columns: opts.columns !== undefined ? opts.columns.split(",").filter((s) => s.length) : undefined,
    where: opts.where,
    withRowId: !!opts["with-rowid"],
    withRowAddr: !!opts["with-rowaddr"],
  });
  writeLines(lines);
}

function schemaJson(schema) {
  return JSON.stringify({ fields: schema.fields.map((f) => ({ name: f.name, type: typeToString(f.type), nullable: f.nullable })) });
}

async function cmdSchema(argv) {
  const { pos } = parseArgs(argv, {});
  need(pos, 1, "schema <dataset_dir>");
  const t = await openNative(pos[0]);
  writeLines([schemaJson(decodeIpc(await t.schema()).schema)]);
}

async function cmdCount(argv) {
  const { pos, opts } = parseArgs(argv, { where: "string" });
  need(pos, 1, "count <dataset_dir> [--where pred]");
  const t = await openNative(pos[0]);
  writeLines([String(await t.countRows(opts.where ?? null))]);
}

// The reference's k nearest rows (table.query().nearestTo(v)), as JSON Lines in its
// order, `_distance` included. Exact (the vector index bypassed) unless --indexed, which
// lets the reference use its vector index with --nprobes N (minimum and maximum) and
// --refine F.
async function cmdSearch(argv) {
  const { pos, opts } = parseArgs(argv, {
    column: "string", vector: "string", queries: "string", distance: "string", k: "string", where: "string",
    postfilter: "bool", columns: "string", indexed: "bool", nprobes: "string", refine: "string",
  });
  need(pos, 1, "search <dataset_dir> (--vector '[..]' | --queries FILE) [--column c] [--distance l2|cosine|dot] [--k K] [--where pred] [--postfilter] [--columns a,b] [--indexed [--nprobes N] [--refine F]]");
  const t = await openNative(pos[0]);
  // --queries: one JSON array per line; each output row then starts with `_query`.
  const vectors = opts.queries !== undefined
    ? fs.readFileSync(opts.queries, "utf8").split("\n").filter((l) => l.trim().length).map((l) => JSON.parse(l))
    : [JSON.parse(opts.vector)];
  const lines = [];
  for (let qi = 0; qi < vectors.length; qi++) {
    const vq = t.query().nearestTo(Float32Array.from(vectors[qi]));
    if (opts.column !== undefined) vq.column(opts.column);
    if (opts.distance !== undefined) vq.distanceType(opts.distance);
    vq.limit(parseInt(opts.k ?? "10", 10));
    if (!opts.indexed) vq.bypassVectorIndex();
    if (opts.nprobes !== undefined) vq.nprobes(parseInt(opts.nprobes, 10));
    if (opts.refine !== undefined) vq.refineFactor(parseInt(opts.refine, 10));
    if (opts.where !== undefined) vq.onlyIf(opts.where);
    if (opts.postfilter) vq.postfilter();
    if (opts.columns !== undefined) vq.selectColumns(opts.columns.split(",").filter((c) => c.length));
    for (const { schema, columns } of await readAllBatches(vq)) {
      for (const line of renderRows(schema.fields, columns))
        lines.push(opts.queries !== undefined ? `{"_query":${qi},${line.slice(1)}` : line);
    }
  }
  writeLines(lines);
}

async function cmdVersions(argv) {
  const { pos } = parseArgs(argv, {});
  need(pos, 1, "versions <dataset_dir>");
  const t = await openNative(pos[0]);
  const vs = await t.listVersions();
  writeLines(vs.map((v) => JSON.stringify({ version: Number(v.version) })));
}

// The reference's restore(): VERSION checked out, then made the latest again.
async function cmdRestore(argv) {
  const { pos, opts } = parseArgs(argv, { version: "string", tag: "string" });
  need(pos, 1, "restore <dataset_dir> (--version V | --tag NAME)");
  const t = await openNative(pos[0]);
  if (opts.tag !== undefined) await t.checkoutTag(opts.tag);
  else if (opts.version !== undefined) await t.checkout(parseInt(opts.version, 10));
  else throw new UsageError("restore: --version V or --tag NAME is required");
  await t.restore();
  process.stdout.write(JSON.stringify({ version: Number(await t.version()) }) + "\n");
}

// The reference's tags: `tags <dir> list` prints {name: {version, manifestSize}} as JSON
// (names sorted); create/update NAME VERSION, delete NAME; `dump-tag <dir> NAME` prints
// the rows of the version the tag names (dump's format).
async function cmdTags(argv) {
  const { pos } = parseArgs(argv, {});
  const usage = "tags <dataset_dir> list | create NAME VERSION | update NAME VERSION | delete NAME";
  if (pos.length !== { list: 2, delete: 3, create: 4, update: 4 }[pos[1]]) throw new UsageError(`usage: ${usage}`);
  const t = await openNative(pos[0]);
  const tags = await t.tags();
  const [op, name, version] = pos.slice(1);
  if (op === "list") {
    const all = await tags.list();
    const out = {};
    for (const k of Object.keys(all).sort())
      out[k] = { version: Number(all[k].version), manifestSize: Number(all[k].manifestSize) };
    process.stdout.write(JSON.stringify(out) + "\n");
  } else if (op === "create") await tags.create(name, parseInt(version, 10));
  else if (op === "update") await tags.update(name, parseInt(version, 10));
  else if (op === "delete") await tags.delete(name);
  else throw new UsageError(`tags: unknown operation '${op}'`);
}

async function cmdDumpTag(argv) {
  const { pos } = parseArgs(argv, {});
  need(pos, 2, "dump-tag <dataset_dir> NAME");
  const t = await openNative(pos[0]);
  await t.checkoutTag(pos[1]);
  const batches = await readAllBatches(t.query());
  const lines = [];
  for (const { schema, columns } of batches) lines.push(...renderRows(schema.fields, columns));
  writeLines(lines);
}

// The reference's optimize(): compaction, index optimization, then cleanup of versions
// older than 7 days, or (--cleanup-now) of every version before this call, with
// --delete-unverified also removing unreferenced files younger than 7 days. Prints the
// stats as JSON.
async function cmdOptimize(argv) {
  const { pos, opts } = parseArgs(argv, { "cleanup-now": "bool", "delete-unverified": "bool" });
  need(pos, 1, "optimize <dataset_dir> [--cleanup-now] [--delete-unverified]");
  const t = await openNative(pos[0]);
  const before = opts["cleanup-now"] ? Date.now() : undefined;
  const stats = await t.optimize(before, opts["delete-unverified"] ? true : undefined);
  process.stdout.write(JSON.stringify(stats, (k, v) => (typeof v === "bigint" ? Number(v) : v)) + "\n");
}

// A clone of SOURCE at TARGET made by the reference: shallow (the clone's manifest points
// at SOURCE's files through base paths) unless --deep.
async function cmdClone(argv) {
  const { pos, opts } = parseArgs(argv, { deep: "bool" });
  need(pos, 2, "clone <source_dir> <target_dir> [--deep]");
  const { conn, name } = await connectFor(pos[1]);
  await conn.cloneTable(name, path.resolve(pos[0]), { isShallow: !opts.deep });
}

async function cmdAddColumns(argv) {
  const { pos, opts } = parseArgs(argv, { expr: "multi" });
  need(pos, 1, "add-columns <dataset_dir> --expr name=sql [--expr ...]");
  if (!opts.expr || !opts.expr.length) throw new UsageError("add-columns: at least one --expr name=sql is required");
  const transforms = opts.expr.map((s) => {
    const i = s.indexOf("=");
    if (i <= 0) throw new UsageError(`bad --expr '${s}' (want name=sql)`);
    return { name: s.slice(0, i).trim(), valueSql: s.slice(i + 1) };
  });
  const t = await openNative(pos[0]);
  await t.addColumns(transforms);
}

async function cmdDropColumns(argv) {
  const { pos, opts } = parseArgs(argv, { columns: "string" });
  need(pos, 1, "drop-columns <dataset_dir> --columns a,b");
  if (!opts.columns) throw new UsageError("drop-columns: --columns is required");
  const t = await openNative(pos[0]);
  await t.dropColumns(opts.columns.split(",").filter((s) => s.length));
}

function genOptsFrom(opts) {
  return {
    nullRate: opts["null-rate"] !== undefined ? parseFloat(opts["null-rate"]) : 0.1,
    noNullStructs: !!opts["no-null-structs"],
    noNanVectors: !!opts["no-nan-vectors"],
  };
}

async function cmdGen(argv) {
  const { pos, opts } = parseArgs(argv, {
    rows: "string", seed: "string", types: "string", "no-null-structs": "bool", "no-nan-vectors": "bool", "null-rate": "string",
    format: "string", "batch-rows": "string",
  });
  need(pos, 1, "gen <out.arrow> --rows N --seed S [--types t1,t2,...] [--no-null-structs] [--no-nan-vectors] [--null-rate F] [--format file|stream] [--batch-rows N]");
  const rows = parseInt(opts.rows ?? "100", 10);
  const seed = parseInt(opts.seed ?? "0", 10);
  const types = opts.types !== undefined ? splitTypeList(opts.types) : MATRIX_TYPES;
  const { schema, columns } = genTable(types, rows, seed, genOptsFrom(opts));
  const format = opts.format ?? "file";
  if (!["file", "stream"].includes(format)) throw new UsageError("--format must be file or stream");
  fs.writeFileSync(pos[0], encodeIpc(schema, columns, { format, batchRows: parseInt(opts["batch-rows"] ?? "0", 10) }));
}

// Dictionary-encoded columns, written by apache-arrow itself (tableToIPC emits the
// dictionary batches): id int32, then dictionary<int32,utf8>, dictionary<int8,utf8>,
// dictionary<uint16,int64> and dictionary<int32,float64>, each about 10% NULL.
async function cmdGenDict(argv) {
  const { pos, opts } = parseArgs(argv, { rows: "string", seed: "string", columns: "string" });
  need(pos, 1, "gen-dict <out.arrow> --rows N --seed S [--columns a,b]");
  const A = await import("apache-arrow");
  const rows = parseInt(opts.rows ?? "100", 10);
  const rng = mulberry32(parseInt(opts.seed ?? "0", 10) >>> 0);
  const pick = (items) => Array.from({ length: rows }, () => (rng() < 0.1 ? null : items[Math.floor(rng() * items.length)]));
  const words = ["red", "green", "blue", "", "héllo", "日本"];
  const columns = {
    id: A.vectorFromArray(Array.from({ length: rows }, (_, i) => i), new A.Int32()),
    c_dict_utf8: A.vectorFromArray(pick(words), new A.Dictionary(new A.Utf8(), new A.Int32())),
    c_dict_i8_utf8: A.vectorFromArray(pick(words.slice(0, 3)), new A.Dictionary(new A.Utf8(), new A.Int8())),
    c_dict_i64: A.vectorFromArray(pick([5n, -7n, 2n ** 62n, 0n]), new A.Dictionary(new A.Int64(), new A.Uint16())),
    c_dict_f64: A.vectorFromArray(pick([1.5, -0.25, 1e300]), new A.Dictionary(new A.Float64(), new A.Int32())),
  };
  if (opts.columns) {
    const keep = opts.columns.split(",");
    for (const name of Object.keys(columns)) if (!keep.includes(name)) delete columns[name];
  }
  const fields = Object.entries(columns).map(([name, v]) => new A.Field(name, v.type, true));
  fs.writeFileSync(pos[0], A.tableToIPC(new A.Table(new A.Schema(fields), columns), "file"));
}

// ---------------------------------------------------------------------------
// Census datasets (gen-census): named sets of columns covering the value
// distributions of /work/shared/spec/reference_encoding_census.md plus edge
// shapes, for tests/interop/matrix_test.cc. Every column has its own seeded
// generator, so a column's values do not depend on which case includes it.
// ---------------------------------------------------------------------------
const ASCII = [..."abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 _-.,"];

function censusRng(seed) {
  const rng = mulberry32(seed >>> 0);
  const u32 = () => Math.floor(rng() * 4294967296);
  const int = (lo, hi) => lo + Math.floor(rng() * (hi - lo + 1));
  const r = {
    rng,
    int,
    chance: (p) => rng() < p,
    pick: (xs) => xs[int(0, xs.length - 1)],
    i64: () => BigInt.asIntN(64, (BigInt(u32()) << 32n) | BigInt(u32())),
    u64: () => (BigInt(u32()) << 32n) | BigInt(u32()),
    str: (min, max, alphabet = ALPHABET) => {
      const n = int(min, max);
      const parts = new Array(n);
      for (let i = 0; i < n; i++) parts[i] = alphabet[int(0, alphabet.length - 1)];
      return parts.join("");
    },
    bytes: (min, max) => {
      const u8 = new Uint8Array(int(min, max));
      for (let i = 0; i < u8.length; i++) u8[i] = u32() & 255;
      return u8;
    },
    f32: () => Math.fround((rng() - 0.5) * 10 ** int(-3, 6)),
  };
  return r;
}

// A value or null with probability p.
const orNull = (r, p, make) => (r.chance(p) ? null : make());
const F32_SPECIAL = [NaN, Infinity, -Infinity, -0, 0, 3.4028234663852886e38, -3.4028234663852886e38, 1.401298464324817e-45];
const F64_SPECIAL = [NaN, Infinity, -Infinity, -0, 0, Number.MAX_VALUE, -Number.MAX_VALUE, Number.MIN_VALUE];
const F16_SPECIAL = [NaN, Infinity, -Infinity, -0, 0, 65504, -65504, 2 ** -24];
function intExtremes(bits, signed) {
  if (bits === 64) return signed ? [-(2n ** 63n), 2n ** 63n - 1n, 0n, -1n, 1n] : [0n, 2n ** 64n - 1n, 2n ** 63n, 1n];
  return signed ? [-(2 ** (bits - 1)), 2 ** (bits - 1) - 1, 0, -1, 1] : [0, 2 ** bits - 1, 1];
}
function intColumn(bits, signed) {
  return (r) => {
    if (r.chance(0.5)) return r.pick(intExtremes(bits, signed));
    if (bits === 64) return signed ? r.i64() : r.u64();
    return signed ? r.int(-(2 ** (bits - 1)), 2 ** (bits - 1) - 1) : r.int(0, 2 ** bits - 1);
  };
}
const DICT_WORDS = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa"];
// Null struct rows only where the file version stores struct validity (not 2.0).
const structNull = (r, o, p) => !o.noNullStructs && r.chance(p);
const listOf = (r, nullP, emptyP, maxItems, item) => {
  if (r.chance(nullP)) return null;
  if (r.chance(emptyP)) return [];
  const n = r.int(1, maxItems);
  const out = [];
  for (let k = 0; k < n; k++) out.push(item());
  return out;
};
const vec = (r, n) => {
  const v = new Array(n);
  for (let k = 0; k < n; k++) v[k] = r.f32();
  return v;
};

// name -> [type string, generator (r, row, opts), field metadata]
const CENSUS_COLUMNS = {
  // numbers (census rows: sequential, random, low cardinality, runs, constant, nulls)
  i64_seq: ["int64", (r, i) => BigInt(i)],
  i32_random: ["int32", (r) => r.int(-2147483648, 2147483647)],
  i32_lowcard: ["int32", (r) => r.pick([3, 17, 99, 1000, 65536, -5, 7])],
  i32_runs: ["int32", (r, i) => Math.floor(i / 500) * 11],
  i32_const: ["int32", () => 42],
  i64_runs: ["int64", (r, i) => BigInt(Math.floor(i / 300)) * 1000000007n],
  f64_few: ["float64", (r) => r.pick([1.5, -2.25, 3.125, 1e300])],
  i64_wide_few: ["int64", (r) => r.pick([-(2n ** 62n), 2n ** 61n + 3n, 12345678901234n])],
  i64_nulls: ["int64", (r) => orNull(r, 0.1, () => r.i64())],
  i32_all_null: ["int32", () => null],
  f32_random: ["float32", (r) => r.f32()],
  f64_random: ["float64", (r) => (r.rng() - 0.5) * 1e12],
  bool_random: ["bool", (r) => r.chance(0.5)],
  bool_nulls: ["bool", (r) => orNull(r, 0.1, () => r.chance(0.3))],
  ts_us: ["timestamp<us>", (r, i) => 1700000000000000n + BigInt(i) * 1000003n],
  ts_ms_utc: ["timestamp<ms,UTC>", (r) => orNull(r, 0.1, () => BigInt(r.int(-2e12, 4e12)))],
  date32: ["date32", (r) => r.int(-719162, 2932896)],
  // edge values
  f32_special: ["float32", (r) => (r.chance(0.5) ? r.pick(F32_SPECIAL) : r.f32())],
  f64_special: ["float64", (r) => orNull(r, 0.05, () => (r.chance(0.5) ? r.pick(F64_SPECIAL) : r.rng() * 1e-300))],
  f16_special: ["float16", (r) => (r.chance(0.5) ? r.pick(F16_SPECIAL) : f16round((r.rng() - 0.5) * 100))],
  i8_extremes: ["int8", intColumn(8, true)],
  i16_extremes: ["int16", intColumn(16, true)],
  i32_extremes: ["int32", intColumn(32, true)],
  i64_extremes: ["int64", intColumn(64, true)],
  u8_extremes: ["uint8", intColumn(8, false)],
  u16_extremes: ["uint16", intColumn(16, false)],
  u32_extremes: ["uint32", intColumn(32, false)],
  u64_extremes: ["uint64", intColumn(64, false)],
  utf8_empty: ["utf8", (r) => (r.chance(0.6) ? "" : orNull(r, 0.2, () => r.str(1, 5, ASCII)))],
  utf8_unicode: ["utf8", (r) => orNull(r, 0.05, () => (r.chance(0.3) ? r.pick(STRINGS) : r.str(0, 20)))],
  large_utf8_unicode: ["large_utf8", (r) => (r.chance(0.3) ? r.pick(STRINGS) : r.str(0, 8))],
  binary_edge: ["binary", (r) => orNull(r, 0.05, () => r.pick([new Uint8Array(0), Uint8Array.from([0]), r.bytes(1, 9)]))],
  // strings
  utf8_short: ["utf8", (r) => r.str(0, 12)],
  utf8_nulls: ["utf8", (r) => orNull(r, 0.1, () => r.str(0, 12, ASCII))],
  utf8_dict10: ["utf8", (r) => r.pick(DICT_WORDS)],
  utf8_const: ["utf8", () => "the same value on every row"],
  utf8_all_null: ["utf8", () => null],
  binary_8_64: ["binary", (r) => r.bytes(8, 64)],
  utf8_1_4kb: ["utf8", (r) => r.str(1024, 4096, ASCII)],
  binary_40_56kb: ["binary", (r) => orNull(r, 0.05, () => r.bytes(40 * 1024, 56 * 1024))],
  utf8_over_64kb: ["utf8", (r) => orNull(r, 0.1, () => r.str(64 * 1024 + 1, 90 * 1024, ASCII) + r.pick(STRINGS))],
  // vectors
  fsl_f32_128: ["fixed_size_list<float32,128>", (r) => vec(r, 128)],
  fsl_f32_64_nulls: ["fixed_size_list<float32,64>", (r) => orNull(r, 0.05, () => vec(r, 64))],
  fsl_f32_8: ["fixed_size_list<float32,8>", (r) => vec(r, 8)],
  // lists and structs
  list_i32: ["list<int32>", (r) => listOf(r, 0.05, 0.1, 6, () => orNull(r, 0.05, () => r.int(-1000, 1000)))],
  list_utf8: ["list<utf8>", (r) => listOf(r, 0.05, 0.1, 4, () => orNull(r, 0.1, () => r.str(0, 10)))],
  large_list_i64: ["large_list<int64>", (r) => listOf(r, 0.05, 0.1, 4, () => r.i64())],
  list_list_i32: ["list<list<int32>>",
    (r) => listOf(r, 0.05, 0.1, 3, () => listOf(r, 0.1, 0.1, 4, () => orNull(r, 0.05, () => r.int(0, 99))))],
  list_struct: ["list<struct<x:int32,y:utf8>>",
    (r, i, o) => listOf(r, 0.05, 0.1, 3, () => (structNull(r, o, 0.1) ? null : [orNull(r, 0.1, () => r.int(-9, 9)), r.str(0, 6)]))],
  struct_of_lists: ["struct<a:list<int32>,b:list<utf8>,c:int32>",
    (r, i, o) => (structNull(r, o, 0.1) ? null
      : [listOf(r, 0.1, 0.1, 4, () => r.int(0, 50)), listOf(r, 0.1, 0.1, 3, () => r.str(0, 5)), orNull(r, 0.1, () => r.int(0, 9))])],
  list_fsl: ["list<fixed_size_list<float32,4>>", (r) => listOf(r, 0.05, 0.1, 4, () => vec(r, 4))],
  struct_ab: ["struct<a:int32,b:utf8>",
    (r, i, o) => (structNull(r, o, 0.1) ? null : [orNull(r, 0.1, () => r.int(-100, 100)), orNull(r, 0.1, () => r.str(0, 8))])],
  struct_nested: ["struct<p:struct<q:int64,r:float32>,s:bool>",
    (r, i, o) => (structNull(r, o, 0.05) ? null : [structNull(r, o, 0.1) ? null : [r.i64(), r.f32()], orNull(r, 0.1, () => r.chance(0.5))])],
  // opt-in encodings through field metadata
  i64_zstd: ["int64", (r) => BigInt(r.int(0, 1 << 20)), [["lance-encoding:compression", "zstd"]]],
  f64_lz4: ["float64", (r) => r.pick([0.5, 1.25, 2]) * r.int(0, 1000), [["lance-encoding:compression", "lz4"]]],
  i32_zstd_level: ["int32", (r) => orNull(r, 0.1, () => r.int(0, 100000)),
    [["lance-encoding:compression", "zstd"], ["lance-encoding:compression-level", "7"]]],
  utf8_zstd: ["utf8", (r) => orNull(r, 0.1, () => r.str(0, 30, ASCII)), [["lance-encoding:compression", "zstd"]]],
  utf8_lz4: ["utf8", (r) => r.pick(DICT_WORDS) + r.str(0, 20, ASCII), [["lance-encoding:compression", "lz4"]]],
  packed_struct: ["struct<a:int32,b:float32>", (r) => [r.int(-1e6, 1e6), r.f32()], [["lance-encoding:packed", "true"]]],
  i32_fullzip: ["int32", (r) => orNull(r, 0.1, () => r.int(-1e9, 1e9)), [["lance-encoding:structural-encoding", "fullzip"]]],
  f32_bss: ["float32", (r) => Math.fround(1000 + r.rng()), [["lance-encoding:bss", "on"]]],
};

const CENSUS_CASES = {
  numeric: { rows: 3000, columns: ["i64_seq", "i32_random", "i32_lowcard", "i32_runs", "i32_const", "i64_runs", "f64_few",
    "i64_wide_few", "i64_nulls", "i32_all_null", "f32_random", "f64_random", "bool_random", "bool_nulls", "ts_us", "ts_ms_utc", "date32"] },
  edges: { rows: 3000, columns: ["f32_special", "f64_special", "f16_special", "i8_extremes", "i16_extremes", "i32_extremes",
    "i64_extremes", "u8_extremes", "u16_extremes", "u32_extremes", "u64_extremes", "utf8_empty", "utf8_unicode",
    "large_utf8_unicode", "binary_edge"] },
  strings: { rows: 3000, columns: ["utf8_short", "utf8_nulls", "utf8_dict10", "utf8_const", "utf8_all_null", "binary_8_64"] },
  big_strings: { rows: 96, columns: ["i64_seq", "utf8_1_4kb", "binary_40_56kb", "utf8_over_64kb"] },
  vectors: { rows: 3000, columns: ["fsl_f32_128", "fsl_f32_64_nulls", "fsl_f32_8"] },
  lists: { rows: 3000, columns: ["list_i32", "list_utf8", "large_list_i64", "list_list_i32", "list_struct", "struct_of_lists", "list_fsl"] },
  structs: { rows: 3000, columns: ["struct_ab", "struct_nested", "i32_random"] },
  compression: { rows: 3000, columns: ["i64_zstd", "f64_lz4", "i32_zstd_level", "utf8_zstd", "utf8_lz4", "packed_struct",
    "i32_fullzip", "f32_bss"] },
  // Meant to be written with a small LANCE_FILE_WRITER_MAX_PAGE_BYTES: many pages per column.
  pages: { rows: 20000, columns: ["i64_seq", "i32_random", "i32_runs", "utf8_short", "utf8_nulls", "list_i32", "i32_all_null",
    "utf8_const", "i32_const", "fsl_f32_8", "struct_ab"] },
  // Meant to be written with --max-rows-per-file: several fragments.
  mixed: { rows: 3000, columns: ["i64_seq", "utf8_nulls", "list_i32", "struct_ab", "fsl_f32_8", "f64_special", "utf8_dict10"] },
};

// `caseNames` is one case or several joined by commas (their columns, each once).
function genCensusTable(caseNames, rows, seed, opts) {
  const names = [];
  let defaultRows = 0;
  for (const caseName of caseNames.split(",")) {
    const spec = CENSUS_CASES[caseName];
    if (!spec) throw new UsageError(`unknown census case '${caseName}' (known: ${Object.keys(CENSUS_CASES).join(", ")})`);
    defaultRows = Math.max(defaultRows, spec.rows);
    for (const c of spec.columns) if (!names.includes(c)) names.push(c);
  }
  const n = rows ?? defaultRows;
  const fields = [];
  const columns = [];
  names.forEach((name, ci) => {
    const [typeStr, gen, metadata = []] = CENSUS_COLUMNS[name];
    fields.push({ name, type: parseType(typeStr), nullable: true, metadata });
    let h = seed * 1000003 + 17;
    for (const ch of name) h = (Math.imul(h, 31) + ch.charCodeAt(0)) | 0;
    const r = censusRng(h);
    const col = new Array(n);
    for (let i = 0; i < n; i++) col[i] = gen(r, i, opts);
    columns.push(col);
    void ci;
  });
  return { schema: { fields, metadata: [] }, columns };
}

async function cmdGenCensus(argv) {
  const { pos, opts } = parseArgs(argv, { case: "string", rows: "string", seed: "string", "no-null-structs": "bool", list: "bool" });
  if (opts.list) {
    writeLines(Object.entries(CENSUS_CASES).map(([k, v]) => JSON.stringify({ case: k, rows: v.rows, columns: v.columns })));
    return;
  }
  need(pos, 1, "gen-census <out.arrow> --case NAME[,NAME...] [--rows N] [--seed S] [--no-null-structs] | gen-census --list");
  if (!opts.case) throw new UsageError("gen-census: --case is required");
  const { schema, columns } = genCensusTable(opts.case, opts.rows !== undefined ? parseInt(opts.rows, 10) : undefined,
    parseInt(opts.seed ?? "1", 10), { noNullStructs: !!opts["no-null-structs"] });
  fs.writeFileSync(pos[0], encodeIpc(schema, columns, { format: "file" }));
}

// alter-columns DIR --rename a=b --cast a=TYPE --nullable a : lancedb alterColumns.
// TYPE is a lance type name as lancedb's dataTypeToJson spells it (int64, float, double, large_string, ...).
async function cmdAlterColumns(argv) {
  const { pos, opts } = parseArgs(argv, { rename: "multi", cast: "multi", nullable: "multi" });
  need(pos, 1, "alter-columns <dataset_dir> [--rename path=new] [--cast path=type] [--nullable path]");
  const byPath = new Map();
  const entry = (p) => byPath.get(p) ?? byPath.set(p, { path: p }).get(p);
  const split = (s, what) => {
    const i = s.indexOf("=");
    if (i <= 0) throw new UsageError(`bad --${what} '${s}' (want path=value)`);
    return [s.slice(0, i), s.slice(i + 1)];
  };
  for (const s of opts.rename ?? []) { const [p, v] = split(s, "rename"); entry(p).rename = v; }
  for (const s of opts.cast ?? []) { const [p, v] = split(s, "cast"); entry(p).dataType = JSON.stringify({ type: v }); }
  for (const p of opts.nullable ?? []) entry(p).nullable = true;
  if (!byPath.size) throw new UsageError("alter-columns: nothing to alter");
  const t = await openNative(pos[0]);
  await t.alterColumns([...byPath.values()]);
}

// Split "a,list<b>,struct<x:int32,y:utf8>,timestamp<us,UTC>" on top-level commas.
function splitTypeList(s) {
  const out = [];
  let depth = 0;
  let cur = "";
  for (const ch of s) {
    if (ch === "<") depth++;
    if (ch === ">") depth--;
    if (ch === "," && depth === 0) {
      if (cur.trim()) out.push(cur.trim());
      cur = "";
    } else cur += ch;
  }
  if (cur.trim()) out.push(cur.trim());
  return out;
}

// Print the canonical JSONL of an Arrow IPC file (what gen wrote), so the C++
// side can compare its own reading of the same file.
async function cmdCat(argv) {
  const { pos } = parseArgs(argv, {});
  need(pos, 1, "cat <file.arrow>");
  const { schema, columns } = readDataFile(pos[0]);
  writeLines(renderRows(schema.fields, columns));
}

// The rows of an Arrow file as apache-arrow itself reads them: apache-arrow decodes the file
// into its Table and writes that Table back as an IPC stream, which renders as `cat` does.
// Types apache-arrow JS cannot hold (large_list, big-endian input) fail here.
async function cmdArrowJsCat(argv) {
  const { pos } = parseArgs(argv, {});
  need(pos, 1, "arrow-js-cat <file.arrow>");
  const { tableFromIPC, tableToIPC } = await import("apache-arrow");
  const { schema, columns } = decodeIpc(tableToIPC(tableFromIPC(fs.readFileSync(pos[0])), "stream"));
  writeLines(renderRows(schema.fields, columns));
}

async function cmdArrowSchema(argv) {
  const { pos } = parseArgs(argv, {});
  need(pos, 1, "arrow-schema <file.arrow>");
  writeLines([schemaJson(readDataFile(pos[0]).schema)]);
}

// ---------------------------------------------------------------------------
// Support matrix + selftest
// ---------------------------------------------------------------------------
// Known results of lance 12 (lancedb 0.39) for MATRIX_TYPES, with ~10% nulls
// including null struct rows.  Key: "version|type" -> substring of the error.
const STRUCT_VALIDITY_2_0 = "but Lance file version 2.0 does not encode struct validity";
const EXPECTED_FAILURES = {
  "2.0|struct<a:int32,b:utf8>": STRUCT_VALIDITY_2_0,
  "2.0|list<struct<x:int32,y:float64>>": STRUCT_VALIDITY_2_0,
};

async function probeType(tmp, ver, ts, rows, seed, opts) {
  const dir = path.join(tmp, `probe_${ver.replace(".", "_")}_${columnNameForType(ts)}.lance`);
  const { schema, columns } = genTable([ts], rows, seed, opts);
  const expected = renderRows(schema.fields, columns);
  try {
    await createDataset(dir, encodeIpc(schema, columns), { fileVersion: ver });
    const got = await dumpRows(dir);
    const diff = firstDiff(expected, got);
    if (diff) return { ok: false, error: `round-trip mismatch: ${diff}` };
    const sch = JSON.parse(schemaJson(decodeIpc(await (await openNative(dir)).schema()).schema));
    if (sch.fields[0].type !== typeToString(parseType(ts)))
      return { ok: false, error: `schema type mismatch: ${sch.fields[0].type}` };
    return { ok: true };
  } catch (e) {
    return { ok: false, error: oneLine(e) };
  }
}

function firstDiff(a, b) {
  if (a.length !== b.length) return `row count ${b.length} != expected ${a.length}`;
  for (let i = 0; i < a.length; i++) {
    if (a[i] !== b[i]) return `row ${i}: got ${b[i]} expected ${a[i]}`;
  }
  return null;
}

async function cmdSupport(argv) {
  const { pos, opts } = parseArgs(argv, { versions: "string", types: "string", rows: "string", seed: "string", "no-null-structs": "bool" });
  need(pos, 0, "support [--versions 2.0,2.1,2.2] [--types ...] [--rows N] [--seed S] [--no-null-structs]");
  const vers = opts.versions ? opts.versions.split(",") : FILE_VERSIONS;
  const types = opts.types ? splitTypeList(opts.types) : MATRIX_TYPES;
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "lancelet-oracle-support-"));
  try {
    for (const ver of vers)
      for (const ts of types) {
        const r = await probeType(tmp, ver, ts, parseInt(opts.rows ?? "200", 10), parseInt(opts.seed ?? "1", 10), genOptsFrom(opts));
        process.stdout.write(JSON.stringify({ version: ver, type: ts, ok: r.ok, ...(r.ok ? {} : { error: r.error }) }) + "\n");
      }
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

async function cmdSelftest(argv) {
  const { pos, opts } = parseArgs(argv, { keep: "bool", rows: "string", verbose: "bool" });
  need(pos, 0, "selftest [--rows N] [--keep] [--verbose]");
  const t0 = performance.now();
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "lancelet-oracle-selftest-"));
  const rows = parseInt(opts.rows ?? "300", 10);
  let passed = 0;
  let failed = 0;
  const check = (name, cond, detail = "") => {
    if (cond) passed++;
    else failed++;
    if (!cond || opts.verbose) process.stdout.write(`${cond ? "PASS" : "FAIL"} ${name}${cond ? "" : ": " + detail}\n`);
  };
  const attempt = async (name, fn) => {
    try {
      await fn();
    } catch (e) {
      check(name, false, oneLine(e));
    }
  };
  try {
    // 1. codec self-consistency: gen -> encode -> decode -> render equal
    for (const format of ["file", "stream"]) {
      const { schema, columns } = genTable(MATRIX_TYPES, rows, 7, { nullRate: 0.1, noNullStructs: false });
      const bytes = encodeIpc(schema, columns, { format, batchRows: 64 });
      const back = decodeIpc(bytes);
      check(`codec ${format}`, !firstDiff(renderRows(schema.fields, columns), renderRows(back.schema.fields, back.columns)),
        firstDiff(renderRows(schema.fields, columns), renderRows(back.schema.fields, back.columns)) ?? "");
      check(`codec ${format} schema`, schemaJson(schema) === schemaJson(back.schema));
    }
    // null pattern varies per column
    {
      const { columns } = genTable(MATRIX_TYPES, rows, 3, { nullRate: 0.1, noNullStructs: false });
      const pats = new Set(columns.map((c) => c.map((v) => (v === null ? "1" : "0")).join("")));
      check("null patterns differ per column", pats.size === columns.length);
      const frac = columns.map((c) => c.filter((v) => v === null).length / c.length);
      check("null rate ~10%", frac.every((f) => f > 0.03 && f < 0.2), JSON.stringify(frac));
    }
    // 2. per-type per-version round trip vs. expectations
    for (const ver of FILE_VERSIONS) {
      for (const ts of MATRIX_TYPES) {
        const r = await probeType(tmp, ver, ts, 100, 11, { nullRate: 0.1, noNullStructs: false });
        const exp = EXPECTED_FAILURES[`${ver}|${ts}`];
        if (exp === undefined) check(`roundtrip ${ver} ${ts}`, r.ok, r.error);
        else check(`expected failure ${ver} ${ts}`, !r.ok && r.error.includes(exp), r.ok ? "unexpectedly succeeded" : r.error);
      }
    }
    // 3. all supported types in one dataset, multi-fragment, via the CLI paths
    for (const ver of FILE_VERSIONS) {
      await attempt(`full ${ver}`, async () => {
        // 2.0 cannot store null struct rows: use --no-null-structs data there.
        // --max-rows-per-file appends via lancedb add(), which rejects NaN in
        // float fixed_size_list ("vector") columns: use --no-nan-vectors data.
        const { schema, columns } = genTable(MATRIX_TYPES, rows, 5, { nullRate: 0.1, noNullStructs: ver === "2.0", noNanVectors: true });
        const file = path.join(tmp, `full_${ver}.arrow`);
        fs.writeFileSync(file, encodeIpc(schema, columns));
        const dir = path.join(tmp, `full_${ver.replace(".", "_")}.lance`);
        await cmdCreateQuiet(["create", dir, "--data", file, "--file-version", ver, "--max-rows-per-file", "128"]);
        const expected = renderRows(schema.fields, columns);
        const got = await dumpRows(dir);
        check(`full ${ver} dump`, !firstDiff(expected, got), firstDiff(expected, got) ?? "");
        const got2 = await dumpRows(dir);
        check(`full ${ver} dump stable`, got.join("\n") === got2.join("\n"));
        const withAddr = (await dumpRows(dir, { columns: [schema.fields[3].name], withRowId: true, withRowAddr: true })).map((l) => JSON.parse(l.replace(/(-?\d+)(?=[,}\]])/g, '"$1"')));
        const addrs = withAddr.map((o) => BigInt(o._rowaddr));
        const frags = addrs.map((a) => a >> 32n);
        check(`full ${ver} fragments`, new Set(frags).size === Math.ceil(rows / 128), `fragments ${[...new Set(frags)]}`);
        check(`full ${ver} scan order is rowaddr order`, addrs.every((a, i) => i === 0 || a > addrs[i - 1]));
        check(`full ${ver} rowid == rowaddr (no stable row ids)`, withAddr.every((o) => o._rowid === o._rowaddr));
        check(`full ${ver} key order`, Object.keys(withAddr[0]).join(",") === `${schema.fields[3].name},_rowid,_rowaddr`);
        const sch = JSON.parse(schemaJson(decodeIpc(await (await openNative(dir)).schema()).schema));
        check(`full ${ver} schema`, JSON.stringify(sch) === schemaJson(schema), JSON.stringify(sch));
        const ver2 = await dataFileVersions(dir);
        const want = { "2.0": "0.3", "2.1": "2.1", "2.2": "2.2" }[ver];
        check(`full ${ver} data file version`, ver2.size === 1 && ver2.has(want), [...ver2].join(","));
      });
    }
    // 4. mutations on a small dataset
    await attempt("mutations", async () => {
      const types = ["int32", "utf8", "float64"];
      const { schema, columns } = genTable(types, 50, 9, { nullRate: 0, noNullStructs: false });
      columns[0] = columns[0].map((_, i) => i);
      const file = path.join(tmp, "m.arrow");
      fs.writeFileSync(file, encodeIpc(schema, columns, { format: "stream" }));
      const dir = path.join(tmp, "m.lance");
      await createDataset(dir, fs.readFileSync(file), { fileVersion: "2.1", stableRowIds: true });
      const t = await openNative(dir);
      await t.add(toIpcFile(fs.readFileSync(file)), "append");
      check("count after append", (await t.countRows(null)) === 100);
      await t.delete("c_int32 < 10");
      check("count after delete", (await t.countRows(null)) === 80);
      check("count where", (await t.countRows("c_int32 >= 40")) === 20);
      await t.update("c_int32 = 20", [["c_utf8", "'updated'"]]);
      const d = await dumpRows(dir, { where: "c_utf8 = 'updated'", withRowId: true, withRowAddr: true });
      check("update", d.length === 2, d.join(" "));
      const vs = (await t.listVersions()).map((v) => v.version);
      check("versions", JSON.stringify(vs) === "[1,2,3,4]", JSON.stringify(vs));
      const old = await dumpRows(dir, { version: 2 });
      check("time travel", old.length === 100);
      // with stable row ids an update moves rows to a new fragment but keeps their ids
      const ra = (await dumpRows(dir, { columns: ["c_int32"], withRowId: true, withRowAddr: true })).map((l) => JSON.parse(l));
      const last = ra.slice(-2);
      check("stable row ids survive update", JSON.stringify(last.map((o) => [o.c_int32, o._rowid])) === "[[20,20],[20,70]]" || JSON.stringify(last.map((o) => o._rowid)) === "[20,70]", JSON.stringify(last));
      check("updated rows live in a new fragment", last.every((o) => o._rowaddr >= 2 * 2 ** 32), JSON.stringify(last));
      await t.optimize();
      check("count after optimize", (await t.countRows(null)) === 80);
      await t.addColumns([{ name: "doubled", valueSql: "c_int32 * 2" }]);
      const dd = (await dumpRows(dir, { columns: ["c_int32", "doubled"] })).map((l) => JSON.parse(l));
      check("add-columns", dd.every((o) => o.doubled === o.c_int32 * 2));
      await t.dropColumns(["doubled", "c_float64"]);
      const s2 = JSON.parse(schemaJson(decodeIpc(await t.schema()).schema)).fields.map((f) => f.name);
      check("drop-columns", s2.join(",") === "c_int32,c_utf8", s2.join(","));
    });
  } finally {
    if (!opts.keep) fs.rmSync(tmp, { recursive: true, force: true });
    else process.stdout.write(`kept ${tmp}\n`);
  }
  process.stdout.write(`${passed} passed, ${failed} failed (${((performance.now() - t0) / 1000).toFixed(1)}s)\n`);
  if (failed) process.exitCode = 1;
}

async function cmdCreateQuiet(argv) {
  return cmdCreate(argv.slice(1));
}

// Read major.minor from the footer of every data file of the latest version.
async function dataFileVersions(dir) {
  const out = new Set();
  for (const f of fs.readdirSync(path.join(dir, "data"))) {
    const buf = fs.readFileSync(path.join(dir, "data", f));
    if (buf.subarray(buf.length - 4).toString() !== "LANC") continue;
    out.add(`${buf.readUInt16LE(buf.length - 8)}.${buf.readUInt16LE(buf.length - 6)}`);
  }
  return out;
}

// ---------------------------------------------------------------------------
function oneLine(e) {
  const msg = e instanceof Error ? e.message || String(e) : String(e);
  return msg.replace(/\s*\n\s*/g, " ").trim();
}

function writeLines(lines) {
  if (lines.length) process.stdout.write(lines.join("\n") + "\n");
}

const COMMANDS = {
  create: cmdCreate,
  append: cmdAppend,
  delete: cmdDelete,
  update: cmdUpdate,
  dump: cmdDump,
  schema: cmdSchema,
  count: cmdCount,
  search: cmdSearch,
  versions: cmdVersions,
  restore: cmdRestore,
  tags: cmdTags,
  "dump-tag": cmdDumpTag,
  optimize: cmdOptimize,
  "create-index": cmdCreateIndex,
  indices: cmdIndices,
  explain: cmdExplain,
  "explain-search": cmdExplainSearch,
  clone: cmdClone,
  "add-columns": cmdAddColumns,
  "drop-columns": cmdDropColumns,
  "alter-columns": cmdAlterColumns,
  "gen-census": cmdGenCensus,
  gen: cmdGen,
  "gen-dict": cmdGenDict,
  cat: cmdCat,
  "arrow-js-cat": cmdArrowJsCat,
  "arrow-schema": cmdArrowSchema,
  support: cmdSupport,
  selftest: cmdSelftest,
};

process.stdout.on("error", (e) => {
  if (e.code === "EPIPE") process.exit(0);
  throw e;
});

async function main() {
  const [cmd, ...rest] = process.argv.slice(2);
  const fn = COMMANDS[cmd];
  if (!fn) throw new UsageError(`usage: oracle.mjs <${Object.keys(COMMANDS).join("|")}> ...`);
  await fn(rest);
}

main().catch((e) => {
  process.stderr.write(`oracle: ${oneLine(e)}\n`);
  process.exit(1);
});
