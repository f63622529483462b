// What the bench/reference_*.mjs scripts share: the reference package installed for the
// tests (tests/oracle), command-line options, and opening DIR/NAME.lance as a table.
import { createRequire } from "node:module";
import { basename, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
export const require = createRequire(join(here, "..", "tests", "oracle", "package.json"));

// The value after option `name` on the command line, or `fallback` when it is absent.
export function arg(name, fallback) {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : fallback;
}

// The reference's table stored at DIR/NAME.lance.
export async function openTable(path) {
  const db = await require("@lancedb/lancedb").connect(dirname(path));
  return db.openTable(basename(path).replace(/\.lance$/, ""));
}

// A seeded mulberry32: a function giving the next uint32, so that the same seed gives
// the same dataset.
export function mulberry32(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return (t ^ (t >>> 14)) >>> 0;
  };
}
