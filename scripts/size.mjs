// Prints the gzipped size of what a page downloads: the wasm and the JS glue.
import { readFileSync } from "node:fs";
import { gzipSync } from "node:zlib";

const files = ["pkg/turnguard_bg.wasm", "pkg/turnguard.js"];
let total = 0;
for (const file of files) {
  const bytes = readFileSync(new URL(`../${file}`, import.meta.url));
  const gzipped = gzipSync(bytes, { level: 9 }).length;
  total += gzipped;
  console.log(`size: ${file} ${bytes.length} B, ${gzipped} B gzipped`);
}
console.log(`size: wasm + glue ${(total / 1024).toFixed(1)} KiB gzipped`);
