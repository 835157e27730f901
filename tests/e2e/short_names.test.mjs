// The names between the wasm and its glue are shortened in both (scripts/short-names.mjs): a module
// renamed so still links and runs, the published entries ship no long names, and a glue that lacks
// an import's key fails the build instead of a page's `init()`.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { shortenNames } from "../../scripts/short-names.mjs";

const root = new URL("../../", import.meta.url);
const uleb = (n) => (n < 128 ? [n] : [(n & 0x7f) | 0x80, n >> 7]);
const text = (s) => [...uleb(s.length), ...Buffer.from(s)];
const section = (id, bytes) => [id, ...uleb(bytes.length), ...bytes];

// A module that imports one function from the glue and exports one that calls it, and its memory.
function sampleModule(importName, exportName) {
  return Buffer.from([
    ...[0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00],
    ...section(1, [1, 0x60, 0, 1, 0x7f]), // one type: [] -> [i32]
    ...section(2, [1, ...text("./turnguard_bg.js"), ...text(importName), 0, 0]),
    ...section(3, [1, 0]),
    ...section(5, [1, 0, 1]),
    ...section(7, [2, ...text(exportName), 0, 1, ...text("memory"), 2, 0]),
    ...section(10, [1, 4, 0, 0x10, 0, 0x0b]), // call the import
  ]);
}

const sampleGlue = (importName, exportName) => `
export const imports = { "./turnguard_bg.js": { ${importName}: function () { return 7; } } };
export const call = (wasm) => wasm.${exportName}();
export const ${exportName}Name = "${exportName}";`;

async function run(wasm, glue) {
  const { imports, call } = await import(`data:text/javascript,${encodeURIComponent(glue)}`);
  const { instance } = await WebAssembly.instantiate(wasm, imports);
  return { value: call(instance.exports), exports: WebAssembly.Module.exports(new WebAssembly.Module(wasm)) };
}

test("a module and its glue renamed together still link and run", async () => {
  const importName = "__wbg_seven_0123456789abcdef";
  const exportName = "wasm_bindgen__convert__closures_____invoke__h0123456789abcdef";
  const original = await run(sampleModule(importName, exportName), sampleGlue(importName, exportName));
  assert.equal(original.value, 7);

  const short = shortenNames(sampleModule(importName, exportName), sampleGlue(importName, exportName));
  assert.ok(!short.js.includes(importName) && !short.js.includes(`wasm.${exportName}`));
  assert.match(short.js, new RegExp(`${exportName}Name = "${exportName}"`), "only the glue's reads of an export are renamed");
  const renamed = await run(short.wasm, short.js);
  assert.equal(renamed.value, 7);
  assert.deepEqual(renamed.exports.map(({ name }) => name), ["$b", "memory"]);
  assert.ok(short.wasm.length < sampleModule(importName, exportName).length);

  const again = shortenNames(short.wasm, short.js);
  assert.deepEqual([again.wasm, again.js], [short.wasm, short.js], "shortening twice changes nothing");
});

test("a glue without the import's key fails the build, naming the import", () => {
  const wasm = sampleModule("__wbg_seven_0123456789abcdef", "thing_get");
  assert.throws(
    () => shortenNames(wasm, sampleGlue("__wbg_eight_0123456789abcdef", "thing_get")),
    /the glue has the import __wbg_seven_0123456789abcdef 0 times/,
  );
});

test("a glue that reads an export by a computed key fails the build, naming the export", () => {
  const wasm = sampleModule("__wbg_seven_0123456789abcdef", "thing_get");
  const glue = `${sampleGlue("__wbg_seven_0123456789abcdef", "thing_get")}\nexport const again = (wasm) => wasm["thing_get"]();`;
  assert.throws(() => shortenNames(wasm, glue), /reads the export thing_get by a computed key/);
});

test("the published entries ship short names only", () => {
  for (const dir of ["", "controller/", "transcriber/"]) {
    const module = new WebAssembly.Module(readFileSync(new URL(`pkg/${dir}turnguard_bg.wasm`, root)));
    const glueImports = WebAssembly.Module.imports(module).filter(({ module }) => module === "_");
    assert.ok(glueImports.length > 50, `pkg/${dir}: the glue's imports`);
    for (const { name } of glueImports) assert.ok(name.length <= 2, `pkg/${dir}: import ${name}`);
    for (const { name } of WebAssembly.Module.exports(module)) {
      assert.ok(name === "memory" || name.length <= 3, `pkg/${dir}: export ${name}`);
    }
  }
});
