// Turns wasm-bindgen's output in pkg/ into the published package, which is pkg/ itself:
// - the declarations check under any TypeScript lib (see `fixDeclarations`);
// - using the package before `init()` says to call it (see `fixGlue`);
// - the glue and its snippets are minified (see `minify`), and the names between the wasm and its
//   glue shortened (scripts/short-names.mjs): what a page loads;
// - the Node entry (js/node.js) sits next to the web entry;
// - README, the user docs (docs/*.md, not docs/maintainers/), the examples the README links
//   (examples/server.mjs, examples/react/) and licenses are copied in: every link in a shipped
//   Markdown file resolves inside the tarball (tests/consumers/shipped_docs.test.mjs);
// - pkg/package.json is the publish manifest: the root manifest's public fields with the `pkg/`
//   prefix dropped, and no scripts or dev dependencies (they point at files a consumer never gets).
//
// `npm pack pkg/` (or `npm publish pkg/`) packs exactly the root manifest's `files`; the packed
// size is printed last.

import { execFileSync } from "node:child_process";
import { copyFileSync, cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { transformSync } from "esbuild";
import { shortenNames } from "./short-names.mjs";

const root = new URL("../", import.meta.url);
const pkg = new URL("pkg/", root);
const read = (url) => readFileSync(url, "utf8");

// Fields a consumer's tools read; everything else (scripts, devDependencies, private) stays home.
const PUBLIC_FIELDS = [
  "name", "version", "description", "keywords", "license",
  "type", "main", "types", "exports", "files", "sideEffects", "engines",
];

const SYMBOL_DISPOSE = `
// The classes' \`[Symbol.dispose]()\` members name a symbol that TypeScript's libs declare only
// from \`esnext.disposable\` on. Declared here (as @types/node does) so these types check under
// any lib; it merges with that lib's declaration where a project has it.
declare global {
    interface SymbolConstructor {
        readonly dispose: unique symbol;
    }
}
`;

// The generated `InitOutput` lists the wasm module's raw exports: `any`-typed, named after build
// hashes, and not for apps. What `init()` resolves to is the instance's memory, for diagnostics.
const INIT_OUTPUT = `export interface InitOutput {
    readonly memory: WebAssembly.Memory;
}`;

// wasm-bindgen declares `free(): void;` first in every class, and each class declares its own,
// documented `free()` (idempotent, unlike the generated one): keep only that one.
function dropGeneratedFree(text) {
  return text.replace(/^export class (\w+) \{\n[\s\S]*?^\}/gm, (block, name) => {
    const bare = "\n    free(): void;\n";
    const count = block.split(bare).length - 1;
    if (count > 2) throw new Error(`turnguard.d.ts: ${name} declares free() ${count} times`);
    return count === 2 ? block.replace(bare, "\n") : block;
  });
}

// The doc comments cite rules by id (T4, L1, R4…) and "DESIGN.md §n", a file users never see: the
// package's docs/semantics.md explains each id (anchors #t4, #l1, #r4…).
const RULE_IDS = `
// Rule ids in these comments (T4, L1, R4, P3, V2…) are explained in this package's
// docs/semantics.md, each at its anchor (#t4, #l1, #r4…).
`;

function citeSemantics(text) {
  const sections = { 1: "#turns", 2: "#live-transcription", 3: "#voice-session" };
  return text.replace(/DESIGN\.md §([123])/g, (_, n) => `docs/semantics.md${sections[n]}`);
}

function fixDeclarations(text) {
  let fixed = citeSemantics(dropGeneratedFree(text));
  if (!fixed.includes("docs/semantics.md, each at its anchor")) fixed = fixed.replace(/^(\/\* eslint-disable \*\/\n)/m, `$1${RULE_IDS}`);
  if (!fixed.includes("interface SymbolConstructor")) {
    fixed = fixed.replace(/^(\/\* eslint-disable \*\/\n)/m, `$1${SYMBOL_DISPOSE}`);
    if (!fixed.includes("interface SymbolConstructor")) throw new Error("turnguard.d.ts: no place for the Symbol.dispose declaration");
  }
  const initOutput = /^export interface InitOutput \{\n[\s\S]*?^\}/m;
  if (!initOutput.test(fixed)) throw new Error("turnguard.d.ts: no InitOutput interface to curate");
  return fixed.replace(initOutput, INIT_OUTPUT);
}

const inPkg = (path) => path.replace(/^(\.\/)?pkg\//, "$1");

function mapPaths(value) {
  if (typeof value === "string") return inPkg(value);
  if (Array.isArray(value)) return value.map(mapPaths);
  if (value && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, mapPaths(inner)]));
  }
  return value;
}

/** The publish manifest; an export or file the build did not produce (yet) is left out. */
function manifest(source) {
  const out = {};
  for (const field of PUBLIC_FIELDS) if (source[field] !== undefined) out[field] = mapPaths(source[field]);
  const present = (path) => path === "./package.json" || existsSync(new URL(path.replace(/^\.\//, ""), pkg));
  out.files = out.files.filter(present);
  out.exports = Object.fromEntries(
    Object.entries(out.exports).filter(([, target]) => typeof target !== "string" || present(target)),
  );
  return out;
}

// Before `init()` the glue's `wasm` is undefined, and every class fails with "Cannot read
// properties of undefined (reading 'turncontroller_new')". Until then it is a stand-in whose every
// property read throws an error that says the fix; `init()` and `initSync()` test for it.
const NOT_READY = `const NOT_READY = new Proxy({}, {
    get() {
        throw new Error("turnguard is not initialized: call \`await init()\` (the package's default export) once, and wait for it, before using any class or function");
    },
});
let wasmModule, wasmInstance, wasm = NOT_READY;`;

function fixGlue(text) {
  if (text.startsWith(MINIFIED)) return text; // fixed before it was minified
  const declaration = "let wasmModule, wasmInstance, wasm;";
  const check = "if (wasm !== undefined) return wasm;";
  if (text.includes("NOT_READY")) return text;
  if (!text.includes(declaration) || text.split(check).length !== 3) {
    throw new Error("turnguard.js: the glue's `wasm` declaration or init checks changed; update fixGlue");
  }
  return text.replace(declaration, NOT_READY).replaceAll(check, "if (wasm !== NOT_READY) return wasm;");
}

// The glue as a page loads it: minified, with the exported classes and functions named as they
// are exported, so what a console or an error shows of them still reads `VoiceSession`, not `q`.
// Only those: esbuild's `keepNames` named every function of the glue (each import shim too),
// 1.4 KB gzipped on the `turnguard` entry (performance.md, "Levers measured"). The types are in
// the declarations; the readable glue is wasm-bindgen's, rebuilt by every build. esbuild's
// warnings are about the glue's duplicate `free()` members and import keys, which it keeps as
// they are (the last one wins, as before).
const MINIFIED = "/* turnguard: minified by scripts/package.mjs */";

function minify(text) {
  if (text.startsWith(MINIFIED)) return text;
  const { code } = transformSync(text, { minify: true, format: "esm", logLevel: "error" });
  return `${MINIFIED}\n${code}`;
}

/** The minified glue, its exports given back their names (`default`, the init function, keeps its own). */
function minifyGlue(text) {
  const code = minify(text);
  const exports = code.match(/export\{([^}]*)\};?\s*$/);
  if (!exports) throw new Error("turnguard.js: the minified glue ends without one export list; update minifyGlue");
  const named = exports[1]
    .split(",")
    .map((entry) => entry.trim().split(/\s+as\s+/))
    .filter(([local, name]) => name && name !== "default" && local !== name)
    .map(([local, name]) => `Object.defineProperty(${local},"name",{value:${JSON.stringify(name)}});`)
    .join("");
  return code.slice(0, exports.index) + named + code.slice(exports.index);
}

/** The `.js` files under `url` (a folder), recursively. */
function scriptsUnder(url) {
  if (!existsSync(url)) return [];
  return readdirSync(url).flatMap((name) => {
    const file = new URL(name, url);
    if (statSync(file).isDirectory()) return scriptsUnder(new URL(`${name}/`, url));
    return name.endsWith(".js") ? [file] : [];
  });
}

/** One entry's folder (a URL ending in `/`) as a page and Node load it. */
function finishEntry(dir) {
  const declarations = new URL("turnguard.d.ts", dir);
  writeFileSync(declarations, fixDeclarations(read(declarations)));
  const glue = new URL("turnguard.js", dir);
  writeFileSync(glue, minifyGlue(fixGlue(read(glue))));
  for (const snippet of scriptsUnder(new URL("snippets/", dir))) writeFileSync(snippet, minify(read(snippet)));
  const wasm = new URL("turnguard_bg.wasm", dir);
  const short = shortenNames(readFileSync(wasm), read(glue));
  writeFileSync(wasm, short.wasm);
  writeFileSync(glue, short.js);
  // wasm-bindgen's declarations of the module's raw exports, by the names just replaced (not shipped).
  rmSync(new URL("turnguard_bg.wasm.d.ts", dir), { force: true });
  copyFileSync(new URL("js/node.js", root), new URL("node.js", dir));
}

// `package.mjs --entry DIR`: that one build only, no package (scripts/build.sh --main-only: the
// bench's one-provider page loads the same minified glue as the published entry).
const entryFlag = process.argv.indexOf("--entry");
if (entryFlag !== -1) {
  finishEntry(pathToFileURL(`${path.resolve(process.argv[entryFlag + 1])}/`));
  process.exit(0);
}

// Each entry point ("turnguard", "turnguard/controller", "turnguard/transcriber") is a
// wasm-bindgen build with its own declarations and Node entry.
for (const dir of ["", "controller/", "transcriber/"]) finishEntry(new URL(dir, pkg));
const source = JSON.parse(read(new URL("package.json", root)));
for (const file of source.files) {
  if (file.startsWith("pkg/")) continue;
  // A folder ("examples/react/src/") is copied whole, and anew: nothing stale of an earlier build stays.
  if (file.endsWith("/")) {
    rmSync(new URL(file, pkg), { recursive: true, force: true });
    cpSync(new URL(file, root), new URL(file, pkg), { recursive: true });
    continue;
  }
  mkdirSync(new URL("./", new URL(file, pkg)), { recursive: true });
  copyFileSync(new URL(file, root), new URL(file, pkg));
}
copyFileSync(new URL("README.md", root), new URL("README.md", pkg));
writeFileSync(new URL("package.json", pkg), `${JSON.stringify(manifest(source), null, 2)}\n`);

const [pack] = JSON.parse(
  execFileSync("npm", ["pack", "./pkg", "--dry-run", "--json", "--loglevel=error"], { cwd: root, encoding: "utf8" }),
);
const kB = (bytes) => `${(bytes / 1000).toFixed(1)} kB`;
console.log(`size: package ${kB(pack.size)} packed, ${kB(pack.unpackedSize)} unpacked, ${pack.entryCount} files`);
