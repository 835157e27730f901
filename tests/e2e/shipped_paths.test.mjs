// The wasm a page loads names no folder of the machine that built it: scripts/build.sh cuts the
// project's folder and the crates' registry folder off the panic locations' paths.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { test } from "node:test";
import { ENTRIES } from "../../scripts/size.mjs";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const cargoHome = process.env.CARGO_HOME ?? path.join(os.homedir(), ".cargo");

for (const [entry, dir] of Object.entries(ENTRIES)) {
  test(`${entry}: the shipped wasm names no folder of the build machine`, () => {
    const wasm = readFileSync(path.join(root, "pkg", dir, "turnguard_bg.wasm")).toString("latin1");
    for (const folder of [root, cargoHome]) {
      assert.ok(!wasm.includes(folder), `${entry}'s wasm names ${folder}`);
    }
    // The paths are kept, shortened: a crate's own (e.g. `js-sys-0.3.107/src/…`), and the project's.
    assert.match(wasm, /src\/web\/[a-z_]+\.rs/);
  });
}
