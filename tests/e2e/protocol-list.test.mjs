// The library's protocols and the dev stack's are one list: every `protocol` the Rust side accepts
// has a descriptor in www/protocols/ (a mock, demo switches, a backend recipe, a browser fixture),
// and every descriptor names a protocol the library speaks. Read from the built package: the
// static `LiveTranscriber.protocols` where the build has it, and always the generated TypeScript
// union `TranscriberProtocol` of each entry point's .d.ts. (The browser suite checks the third
// place the names appear: the RangeError for an unknown `protocol`.)

import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { loadDescriptors } from "../../www/devstack/protocols.mjs";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const DECLARATIONS = ["pkg/turnguard.d.ts", "pkg/transcriber/turnguard.d.ts"];
const sorted = (names) => [...names].sort();

/** The names in `export type TranscriberProtocol = "a" | "b" …;` of a .d.ts. */
export function unionNames(declarations) {
  const union = /export\s+type\s+TranscriberProtocol\s*=\s*([^;]+);/.exec(declarations);
  assert.ok(union, "the .d.ts declares TranscriberProtocol");
  return [...union[1].matchAll(/"([^"]+)"/g)].map((match) => match[1]);
}

test("the TypeScript union TranscriberProtocol names exactly the descriptors", async () => {
  const descriptors = sorted((await loadDescriptors()).map((d) => d.name));
  for (const file of DECLARATIONS) {
    assert.ok(existsSync(path.join(ROOT, file)), `${file} is built (npm run build)`);
    assert.deepEqual(sorted(unionNames(readFileSync(path.join(ROOT, file), "utf8"))), descriptors, file);
  }
});

test("LiveTranscriber.protocols names exactly the descriptors (where the build has the getter)", async (t) => {
  const { default: init, LiveTranscriber } = await import(path.join(ROOT, "pkg/node.js"));
  await init();
  if (!("protocols" in LiveTranscriber)) {
    t.skip("this build has no static LiveTranscriber.protocols yet: the .d.ts union is checked above");
    return;
  }
  const names = LiveTranscriber.protocols;
  assert.ok(Array.isArray(names) && names.every((name) => typeof name === "string"), "a string array");
  assert.equal(new Set(names).size, names.length, "no name twice");
  assert.deepEqual(sorted(names), sorted((await loadDescriptors()).map((d) => d.name)));
});

test("the parser reads a union written over several lines", () => {
  assert.deepEqual(unionNames('export type TranscriberProtocol =\n  | "a"\n  | "b-c";\n'), ["a", "b-c"]);
});
