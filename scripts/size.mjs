// Prints the gzipped size of what a page downloads for each entry point: its wasm and every JS
// file it loads (the wasm-bindgen glue and the snippets it imports).
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { gzipSync } from "node:zlib";

const pkgRoot = new URL("../pkg/", import.meta.url);

/** The `.js` files under `dir` (the glue's snippets), recursively. */
function scripts(dir, root) {
  if (!existsSync(new URL(dir, root))) return [];
  return readdirSync(new URL(dir, root)).flatMap((name) => {
    const path = `${dir}${name}`;
    if (statSync(new URL(path, root)).isDirectory()) return scripts(`${path}/`, root);
    return name.endsWith(".js") ? [path] : [];
  });
}

/** `{ wasm, js, total }` gzipped bytes of the entry built into pkg/`dir` (or `root`/`dir`). */
export function entrySize(dir = "", root = pkgRoot) {
  const gz = (path) => gzipSync(readFileSync(new URL(path, root)), { level: 9 }).length;
  const wasm = gz(`${dir}turnguard_bg.wasm`);
  const js = [`${dir}turnguard.js`, ...scripts(`${dir}snippets/`, root)].reduce((sum, path) => sum + gz(path), 0);
  return { wasm, js, total: wasm + js };
}

export const ENTRIES = { turnguard: "", "turnguard/controller": "controller/", "turnguard/transcriber": "transcriber/" };

if (import.meta.url === `file://${process.argv[1]}`) {
  const kib = (bytes) => `${(bytes / 1024).toFixed(1)} KiB`;
  for (const [entry, dir] of Object.entries(ENTRIES)) {
    const { wasm, js, total } = entrySize(dir);
    console.log(`size: ${entry}: wasm ${kib(wasm)} + JS ${kib(js)} = ${kib(total)} gzipped`);
  }
}
