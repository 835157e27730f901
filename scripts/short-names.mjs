// Gives the names between a wasm module and its wasm-bindgen glue short ones, in both files.
//
// wasm-bindgen names every import after its shim and a 16-digit hash
// (`__wbg_addEventListener_a1b2c3d4e5f60718`) and the closures' exports after their Rust paths;
// each name is written once in the wasm and once in the glue, and the hashes do not compress.
// `turnguard` has about 200 of them: 7.5 KB gzipped of a page's load (performance.md, "Levers
// measured"). Renamed, an import is `a`, `b`, … `aB` of the module `_` (not `./turnguard_bg.js`),
// an export `$a`, `$b`, …; `memory` keeps its name (what `init()` resolves to exposes it).
//
// The glue reads an import only as a key of its imports object (`name:function(…)`) and an export
// only as a member of the instance's exports (`wasm.name`), so the glue is renamed at exactly
// those places; an import whose key the glue does not have once, or an export it reads by a
// computed key (`wasm["name"]`), is an error of the build, never a silent mismatch.
// Idempotent: names already short are left as they are.

/** `{ wasm, js }` with the imports and exports renamed, or the inputs unchanged if they already are. */
export function shortenNames(wasm, js) {
  const renames = { module: false, imports: new Map(), exports: new Map() };
  let next = 0;
  const fresh = () => shortName(next++);
  const sections = [wasm.subarray(0, 8)];
  for (const { id, body } of readSections(wasm)) {
    let section = body;
    if (id === IMPORT_SECTION) section = renameImports(body, renames, fresh);
    if (id === EXPORT_SECTION) section = renameExports(body, renames.exports, fresh);
    sections.push(Uint8Array.of(id), uleb(section.length), section);
  }
  let glue = js;
  if (renames.module) glue = replaceOnce(glue, /"\.\/turnguard_bg\.js"(?=:)/g, SHORT_MODULE, GLUE_MODULE);
  for (const [old, name] of renames.imports) glue = replaceOnce(glue, new RegExp(`(?<![\\w$])${old}(?=:)`, "g"), name, old);
  // An export the glue never reads (wasm-bindgen exports a few for its own tools) is renamed all the same.
  for (const [old, name] of renames.exports) {
    // Read by a computed key, the export would be missed here and be undefined at run time.
    if (glue.includes(`["${old}"]`) || glue.includes(`['${old}']`)) {
      throw new Error(`short-names: the glue reads the export ${old} by a computed key`);
    }
    glue = glue.replace(new RegExp(`(?<=\\.)${old}(?![\\w$])`, "g"), name);
  }
  return { wasm: Buffer.concat(sections), js: glue };
}

const IMPORT_SECTION = 2;
const EXPORT_SECTION = 7;
const GLUE_MODULE = "./turnguard_bg.js";
const SHORT_MODULE = "_";
const LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";

function shortName(index) {
  let name = "";
  let rest = index;
  do {
    name += LETTERS[rest % LETTERS.length];
    rest = Math.floor(rest / LETTERS.length);
  } while (rest > 0);
  return name;
}

/** An import the glue provides, named by wasm-bindgen: `__wbg_…` or `__wbindgen_…`. */
const isGlueName = (name) => name.startsWith("__wbg_") || name.startsWith("__wbindgen_");

function renameImports(body, renames, fresh) {
  const { imports } = renames;
  const reader = new Reader(body);
  const count = reader.uleb();
  const out = [uleb(count)];
  for (let i = 0; i < count; i++) {
    const module = reader.name();
    const field = reader.name();
    const start = reader.at;
    reader.skipImportDescriptor();
    let name = field;
    if (module === GLUE_MODULE && isGlueName(field)) {
      name = fresh();
      imports.set(field, name);
    }
    if (module === GLUE_MODULE) renames.module = true;
    out.push(encodeName(module === GLUE_MODULE ? SHORT_MODULE : module), encodeName(name), body.subarray(start, reader.at));
  }
  return Buffer.concat(out);
}

function renameExports(body, renames, fresh) {
  const reader = new Reader(body);
  const count = reader.uleb();
  const out = [uleb(count)];
  for (let i = 0; i < count; i++) {
    const field = reader.name();
    const start = reader.at;
    reader.at += 1; // the export's kind
    reader.uleb(); // its index
    let name = field;
    if (field !== "memory" && !field.startsWith("$")) {
      name = `$${fresh()}`;
      renames.set(field, name);
    }
    out.push(encodeName(name), body.subarray(start, reader.at));
  }
  return Buffer.concat(out);
}

/** Every import key is written once in the glue. */
function replaceOnce(text, pattern, name, old) {
  const found = text.match(pattern)?.length ?? 0;
  if (found !== 1) throw new Error(`short-names: the glue has the import ${old} ${found} times, not once`);
  return text.replace(pattern, name);
}

function* readSections(wasm) {
  const reader = new Reader(wasm);
  reader.at = 8;
  while (reader.at < wasm.length) {
    const id = wasm[reader.at++];
    const size = reader.uleb();
    const body = wasm.subarray(reader.at, reader.at + size);
    reader.at += size;
    yield { id, body };
  }
}

class Reader {
  constructor(bytes) {
    this.bytes = bytes;
    this.at = 0;
  }

  uleb() {
    let value = 0;
    let shift = 0;
    let byte;
    do {
      byte = this.bytes[this.at++];
      value += (byte & 0x7f) * 2 ** shift;
      shift += 7;
    } while (byte & 0x80);
    return value;
  }

  name() {
    const length = this.uleb();
    const text = Buffer.from(this.bytes.subarray(this.at, this.at + length)).toString("utf8");
    this.at += length;
    return text;
  }

  limits() {
    const flags = this.bytes[this.at++];
    this.uleb();
    if (flags & 1) this.uleb();
  }

  skipImportDescriptor() {
    const kind = this.bytes[this.at++];
    if (kind === 0) this.uleb(); // a function: its type index
    else if (kind === 1) (this.at += 1), this.limits(); // a table: element type, limits
    else if (kind === 2) this.limits(); // a memory
    else if (kind === 3) this.at += 2; // a global: value type, mutability
    else throw new Error(`short-names: an import of unknown kind ${kind}`);
  }
}

function uleb(value) {
  const bytes = [];
  let rest = value;
  do {
    let byte = rest & 0x7f;
    rest = Math.floor(rest / 128);
    if (rest > 0) byte |= 0x80;
    bytes.push(byte);
  } while (rest > 0);
  return Uint8Array.from(bytes);
}

const encodeName = (name) => {
  const bytes = Buffer.from(name, "utf8");
  return Buffer.concat([uleb(bytes.length), bytes]);
};
