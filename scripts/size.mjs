// Prints the gzipped size of what a page downloads (the wasm and the JS glue), and the size and
// file count of the package itself (`npm pack pkg/`).
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { gzipSync } from "node:zlib";

const root = new URL("../", import.meta.url);
const files = ["pkg/turnguard_bg.wasm", "pkg/turnguard.js"];
let total = 0;
for (const file of files) {
  const bytes = readFileSync(new URL(file, root));
  const gzipped = gzipSync(bytes, { level: 9 }).length;
  total += gzipped;
  console.log(`size: ${file} ${bytes.length} B, ${gzipped} B gzipped`);
}
console.log(`size: wasm + glue ${(total / 1024).toFixed(1)} KiB gzipped`);

const [pack] = JSON.parse(
  execFileSync("npm", ["pack", "./pkg", "--dry-run", "--json", "--loglevel=error"], { cwd: root, encoding: "utf8" }),
);
console.log(`size: package ${(pack.size / 1000).toFixed(1)} kB packed, ${(pack.unpackedSize / 1000).toFixed(1)} kB unpacked, ${pack.entryCount} files`);
