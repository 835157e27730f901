// Where a wasm's bytes go: each defined function's body size (from the code section), grouped by
// crate and, for turnguard, by module, read from a build that kept its `name` section
// (`wasm-opt -g`; build.sh keeps one per entry in target/sizes/). No dependency: the few sections
// it needs are parsed here.
//
//   node scripts/wasm-sizes.mjs target/sizes/turnguard.wasm [--top 20] [--depth 3] [--json]
//
// Names come as the linker wrote them: demangled by wasm-ld (`path::h<hash>` for legacy symbols,
// `core[<hash>]::…` for v0 ones, as the precompiled std has), or mangled (`_ZN…E`, `_R…`) when a
// build asks for no demangling; both end up as the same `crate::module::item` path.
//
// Grouping heuristic:
// - A path's crate is its first segment; its module is the snake_case segments after the crate
//   that come before the item (the last segment, closures skipped), at most `depth` of them.
//   A generic's instantiation stays with the generic: `core::ptr::drop_in_place<turnguard::…>`
//   (drop glue) is core's.
// - `<Type as Trait>::f` and `<Type>::f` go to Type's path (`<turnguard::X as core::fmt::Debug>`
//   is turnguard's: a derive in turnguard made it). When Type has no path (a generic parameter or
//   a primitive: `<&T as core::fmt::Debug>`, `<u32 as core::fmt::Display>`), to Trait's; when
//   there is no Trait either (`<str>::…`, `<[u8]>::…`), to core's module of that primitive
//   (`core::str`, `core::slice`, `core::char`, `core::num`).
// - Names that are no Rust path: compiler-builtins' (`memcmp`, `__multi3`) are
//   `compiler_builtins`; everything else (wasm-bindgen's `__wbindgen_*` and `__externref_*`, its
//   shims and closure adapters, the exported functions) is "wasm-bindgen glue/exports", as is a
//   Rust function wasm-bindgen wrapped in an `externref shim` / `multivalue shim`.
//   `__rustc::__rust_alloc` and friends are the global allocator's shims (crate `__rustc`).
// - wasm-opt writes no name for the shared bodies its merge-similar-functions makes: they are
//   "(no name: made by wasm-opt)". A name `byn$mgfn-shared$f`, if one comes, counts as f's.

import { readFileSync } from "node:fs";

const GLUE = "wasm-bindgen glue/exports";
const BUILTINS = "compiler_builtins";

/** The sections of `bytes` that attribution needs: code bodies, data size, names. */
export function parseWasm(bytes) {
  const u8 = bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes);
  const text = new TextDecoder();
  if (u8[0] !== 0 || u8[1] !== 0x61 || u8[2] !== 0x73 || u8[3] !== 0x6d) throw new Error("not a wasm module");
  let p = 8;
  const leb = () => {
    let value = 0;
    for (let shift = 0; ; shift += 7) {
      const byte = u8[p++];
      value += (byte & 0x7f) * 2 ** shift;
      if (!(byte & 0x80)) return value;
    }
  };
  const name = () => {
    const n = leb();
    p += n;
    return text.decode(u8.subarray(p - n, p));
  };
  const limits = () => {
    const flags = u8[p++];
    leb();
    if (flags & 1) leb();
  };
  const valueType = () => {
    // `(ref null? <heap type>)` of the GC proposal carries its heap type; i32, funcref… are one byte.
    const code = u8[p++];
    if (code === 0x63 || code === 0x64) leb();
  };

  const out = { bytes: u8.length, code: 0, data: 0, names: 0, importedFunctions: 0, bodies: [], functionNames: new Map(), exportNames: new Map() };
  while (p < u8.length) {
    const id = u8[p++];
    const size = leb();
    const end = p + size;
    if (id === 2) {
      for (let i = leb(); i > 0; i--) {
        name();
        name();
        const kind = u8[p++];
        if (kind === 0) {
          leb();
          out.importedFunctions++;
        } else if (kind === 1) {
          valueType();
          limits();
        } else if (kind === 2) {
          limits();
        } else if (kind === 3) {
          valueType();
          p++; // mutability
        } else if (kind === 4) {
          p++;
          leb();
        } else {
          throw new Error(`unknown import kind ${kind}`);
        }
      }
    } else if (id === 7) {
      for (let i = leb(); i > 0; i--) {
        const field = name();
        const kind = u8[p++];
        const index = leb();
        if (kind === 0) out.exportNames.set(index, field);
      }
    } else if (id === 10) {
      out.code = size;
      for (let i = leb(); i > 0; i--) {
        const start = p;
        const size = leb();
        p += size;
        // A body's bytes include its size prefix: that is what removing the function saves.
        out.bodies.push(p - start);
      }
    } else if (id === 11) {
      out.data = size;
    } else if (id === 0 && name() === "name") {
      out.names = size;
      while (p < end) {
        const sub = u8[p++];
        const subSize = leb();
        const subEnd = p + subSize;
        if (sub === 1) for (let i = leb(); i > 0; i--) out.functionNames.set(leb(), name());
        p = subEnd;
      }
    }
    p = end;
  }
  return out;
}

const LEGACY_ESCAPES = { SP: "@", BP: "*", RF: "&", LT: "<", GT: ">", LP: "(", RP: ")", C: "," };

/** `_ZN…E` (Rust's legacy mangling) as a path, without its `h<16 hex>` hash. */
export function demangleLegacy(symbol) {
  const parts = [];
  let p = 3;
  while (p < symbol.length && symbol[p] !== "E") {
    const digits = /^\d+/.exec(symbol.slice(p));
    if (!digits) return symbol;
    p += digits[0].length;
    parts.push(symbol.slice(p, p + Number(digits[0])));
    p += Number(digits[0]);
  }
  if (/^h[0-9a-f]{16}$/.test(parts.at(-1) ?? "")) parts.pop();
  return parts
    .map((part) =>
      part
        .replace(/^_\$/, "$")
        .replaceAll("..", "::")
        .replace(/\$([A-Z]+|u[0-9a-f]+)\$/g, (all, code) =>
          LEGACY_ESCAPES[code] ?? (code[0] === "u" ? String.fromCodePoint(parseInt(code.slice(1), 16)) : all),
        ),
    )
    .join("::");
}

const BASE62 = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
const V0_BASIC = { a: "i8", b: "bool", c: "char", d: "f64", e: "str", f: "f32", h: "u8", i: "isize", j: "usize", l: "i32", m: "u32", n: "i128", o: "u128", s: "i16", t: "u16", u: "()", v: "...", x: "i64", y: "u64", z: "!", p: "_" };

/**
 * `_R…` (Rust's v0 mangling) as a path. Best effort: what it cannot read (punycode is left as
 * is; an unusual const) falls back to the crate's name, which is all the grouping needs.
 */
export function demangleV0(symbol) {
  const s = symbol.slice(2);
  let p = 0;
  const fail = () => {
    throw new Error(`cannot demangle ${symbol}`);
  };
  const eat = (c) => s[p] === c && ++p > 0;
  const base62 = () => {
    if (eat("_")) return 0;
    let n = 0;
    while (!eat("_")) {
      const digit = BASE62.indexOf(s[p++]);
      if (digit < 0) fail();
      n = n * 62 + digit;
    }
    return n + 1;
  };
  const disambiguator = () => (eat("s") ? base62() : 0);
  const ident = () => {
    eat("u");
    const digits = /^\d+/.exec(s.slice(p)) ?? fail();
    p += digits[0].length;
    eat("_");
    p += Number(digits[0]);
    return s.slice(p - Number(digits[0]), p);
  };
  // A back-reference re-reads what starts at an earlier offset (counted after `_R`).
  const backref = (read) => {
    const at = base62();
    const resume = p;
    p = at;
    const value = read();
    p = resume;
    return value;
  };
  const lifetime = () => eat("L") && base62();
  const path = (inType = false) => {
    switch (s[p++]) {
      case "C":
        disambiguator();
        return ident();
      case "N": {
        const namespace = s[p++];
        const parent = path(inType);
        const n = disambiguator();
        const id = ident();
        if (namespace >= "A" && namespace <= "Z") return `${parent}::{${namespace === "C" ? "closure" : namespace === "S" ? "shim" : namespace}${id ? `:${id}` : ""}#${n}}`;
        return id ? `${parent}::${id}` : parent;
      }
      case "M":
        disambiguator();
        path();
        return `<${type()}>`;
      case "X": {
        disambiguator();
        path();
        const self = type();
        return `<${self} as ${path(true)}>`;
      }
      case "Y": {
        const self = type();
        return `<${self} as ${path(true)}>`;
      }
      case "I": {
        const base = path(inType);
        const args = [];
        while (!eat("E")) {
          if (lifetime() === false) args.push(eat("K") ? konst() : type());
        }
        return `${base}${inType ? "" : "::"}<${args.join(", ")}>`;
      }
      case "B":
        return backref(() => path(inType));
      default:
        return fail();
    }
  };
  const konst = () => {
    if (eat("p")) return "_";
    if (eat("B")) return backref(konst);
    const kind = s[p++];
    if (!V0_BASIC[kind]) fail();
    const negative = eat("n");
    const hex = /^[0-9a-f]*/.exec(s.slice(p))[0];
    p += hex.length;
    if (!eat("_")) fail();
    return kind === "b" ? String(hex === "1") : `${negative ? "-" : ""}${BigInt(`0x0${hex}`)}`;
  };
  const type = () => {
    const c = s[p];
    if (V0_BASIC[c]) return (p++, V0_BASIC[c]);
    p++;
    switch (c) {
      case "R":
      case "Q":
        lifetime();
        return `${c === "R" ? "&" : "&mut "}${type()}`;
      case "P":
        return `*const ${type()}`;
      case "O":
        return `*mut ${type()}`;
      case "A": {
        const element = type();
        return `[${element}; ${konst()}]`;
      }
      case "S":
        return `[${type()}]`;
      case "T": {
        const items = [];
        while (!eat("E")) items.push(type());
        return `(${items.join(", ")}${items.length === 1 ? "," : ""})`;
      }
      case "F": {
        if (eat("G")) base62();
        const unsafe = eat("U") ? "unsafe " : "";
        const abi = eat("K") ? `extern "${eat("C") ? "C" : ident()}" ` : "";
        const params = [];
        while (!eat("E")) params.push(type());
        const ret = type();
        return `${unsafe}${abi}fn(${params.join(", ")})${ret === "()" ? "" : ` -> ${ret}`}`;
      }
      case "D": {
        if (eat("G")) base62();
        const bounds = [];
        while (!eat("E")) {
          let bound = path(true);
          const bindings = [];
          while (eat("p")) {
            const name = ident();
            bindings.push(`${name} = ${type()}`);
          }
          if (bindings.length) bound = bound.endsWith(">") ? `${bound.slice(0, -1)}, ${bindings.join(", ")}>` : `${bound}<${bindings.join(", ")}>`;
          bounds.push(bound);
        }
        lifetime();
        return `dyn ${bounds.join(" + ")}`;
      }
      case "B":
        return backref(type);
      default:
        p--;
        return path(true);
    }
  };
  try {
    while (/\d/.test(s[p])) p++; // an encoding version, if any
    return path();
  } catch {
    const crate = /C(?:s[0-9a-zA-Z]*_)?(\d+)_?/.exec(s);
    return crate ? `${s.slice(crate.index + crate[0].length, crate.index + crate[0].length + Number(crate[1]))}::…` : symbol;
  }
}

/** `{ path, group? }`: a function's name as a clean path, or the group of a name that is no path. */
export function describe(name) {
  let n = name.replace(/^byn\$mgfn-shared\$/, "");
  const shim = / (externref|multivalue) shim/.test(n);
  n = n
    .replace(/( (externref|multivalue) shim)+$/, "")
    .replace(/\.llvm\.\d+$/, "")
    .replace(/\[\d+\]$/, ""); // the linker's or binaryen's suffix for a second function of one name
  if (n.startsWith("_ZN")) n = demangleLegacy(n);
  else if (n.startsWith("_R")) n = demangleV0(n);
  n = n.replace(/::h[0-9a-f]{16}$/, "").replace(/\[[0-9a-f]{1,16}\]/g, "");
  if (shim) return { path: n, group: GLUE };
  if (!n.includes("::") && !n.startsWith("<")) {
    const builtin = /^(mem(cpy|move|set|cmp)|bcmp|__[a-z]+(ti|di|si|tf|df|sf)[23]?)$/.test(n);
    return { path: n, group: builtin ? BUILTINS : GLUE };
  }
  return { path: n };
}

const CLOSE = { "<": ">", "(": ")", "[": "]", "{": "}" };

/** Splits at `separator` where no bracket is open: `a<b::c>::d` → `a<b::c>`, `d`. */
function splitTop(text, separator) {
  const parts = [];
  const stack = [];
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    // `->` in a fn type is no closing bracket.
    if (c === ">" && text[i - 1] === "-") continue;
    if (CLOSE[c]) stack.push(CLOSE[c]);
    else if (c === stack.at(-1)) stack.pop();
    else if (!stack.length && text.startsWith(separator, i)) {
      parts.push(text.slice(start, i));
      start = i + separator.length;
      i += separator.length - 1;
    }
  }
  return [...parts, text.slice(start)];
}

/** The crate and module segments of a Rust path, per the heuristic at the top of the file. */
export function modulePath(path) {
  if (path.startsWith("<")) {
    const [qualified] = splitTop(path, "::");
    const [self, trait] = splitTop(qualified.slice(1, -1), " as ");
    const selfPath = self.replace(/^(&(mut )?|\*(const|mut) |dyn )+/, "");
    if (/^[A-Za-z_][A-Za-z0-9_]*(<.*>)?::/.test(selfPath)) return modulePath(selfPath);
    if (trait) return modulePath(trait);
    const primitive = selfPath.startsWith("[") ? "slice" : /^([iu](8|16|32|64|128|size)|f32|f64)$/.test(selfPath) ? "num" : selfPath;
    return ["str", "char", "bool", "slice", "num"].includes(primitive) ? ["core", primitive] : ["core"];
  }
  // `f::<T>` (v0) is one segment `f`; `{{closure}}`s belong to the item they are in.
  const segments = splitTop(path, "::")
    .map((segment) => segment.replace(/<.*$/s, ""))
    .filter((segment, i) => i === 0 || segment !== "");
  while (segments.length > 1 && /^\{/.test(segments.at(-1))) segments.pop();
  segments.pop(); // the item itself
  const modules = [];
  for (const segment of segments.slice(1)) {
    if (!/^[a-z_][a-z0-9_]*$/.test(segment)) break;
    modules.push(segment);
  }
  return [segments[0], ...modules];
}

/**
 * Where the code bytes of the wasm in `bytes` go: `{ bytes, code, data, names, functions,
 * crates, modules, libraries, top, copies }`. `crates`, `modules` (turnguard's, `depth` segments
 * below the crate at most) and `libraries` (other crates by their first module) are rows
 * `{ name, bytes, share, functions }`, biggest first; `share` is of the code section. `top`: the
 * `top` largest functions; `copies`: paths defined more than once (a generic's monomorphised
 * copies), by their bytes together.
 */
export function attribute(bytes, { top = 20, depth = 3 } = {}) {
  const wasm = parseWasm(bytes);
  const crates = new Map();
  const modules = new Map();
  const libraries = new Map();
  const paths = new Map();
  const functions = [];
  const add = (map, key, size) => {
    const row = map.get(key) ?? { name: key, bytes: 0, functions: 0 };
    row.bytes += size;
    row.functions += 1;
    map.set(key, row);
  };
  wasm.bodies.forEach((size, i) => {
    const index = wasm.importedFunctions + i;
    const name = wasm.functionNames.get(index) ?? wasm.exportNames.get(index);
    // Functions wasm-opt made (merge-similar-functions' shared bodies) get no entry in the name section.
    const unnamed = wasm.names ? "(no name: made by wasm-opt)" : "(no name section)";
    const { path, group } = name ? describe(name) : { path: `(function ${index})`, group: unnamed };
    const segments = group ? [group] : modulePath(path);
    add(crates, segments[0], size);
    if (segments[0] === "turnguard") add(modules, segments.slice(0, 1 + depth).join("::"), size);
    else if (!group) add(libraries, segments.slice(0, 2).join("::"), size);
    if (!group) add(paths, path, size);
    functions.push({ name: path, crate: segments[0], bytes: size });
  });
  const rows = (map) =>
    [...map.values()]
      .map((row) => ({ ...row, share: Number((row.bytes / wasm.code).toFixed(4)) }))
      .sort((a, b) => b.bytes - a.bytes || a.name.localeCompare(b.name));
  return {
    bytes: wasm.bytes,
    code: wasm.code,
    data: wasm.data,
    names: wasm.names,
    functions: functions.length,
    crates: rows(crates),
    modules: rows(modules),
    libraries: rows(libraries),
    top: functions.sort((a, b) => b.bytes - a.bytes).slice(0, top),
    copies: [...paths.values()]
      .filter((row) => row.functions > 1)
      .map(({ name, bytes, functions }) => ({ name, copies: functions, bytes }))
      .sort((a, b) => b.bytes - a.bytes || b.copies - a.copies)
      .slice(0, top),
  };
}

const number = (n) => n.toLocaleString("en-US");
const percent = (share) => `${(share * 100).toFixed(1)} %`;
// A `|` would end a table cell even inside backticks.
const shorten = (name, max = 110) => (name.length > max ? `${name.slice(0, max - 1)}…` : name).replaceAll("|", "\\|");

/** A markdown table of `rows` from `attribute` (crates, modules or libraries). */
export function groupTable(rows, label) {
  return [
    `| ${label} | bytes | % of code | functions |`,
    "| --- | ---: | ---: | ---: |",
    ...rows.map((row) => `| \`${row.name}\` | ${number(row.bytes)} | ${percent(row.share)} | ${row.functions} |`),
  ].join("\n");
}

/** The whole report of `attribute` as markdown. */
export function markdown(result, { top = 20, depth = 3 } = {}) {
  const rest = result.bytes - result.code - result.data - result.names;
  const lines = [
    `${number(result.bytes)} B: code ${number(result.code)} B (${result.functions} functions), data ${number(result.data)} B, name section ${number(result.names)} B, the rest ${number(rest)} B.`,
  ];
  if (!result.names) lines.push("", "No name section: keep it with `wasm-opt -g` to see where the bytes go.");
  lines.push("", "Code by crate:", "", groupTable(result.crates, "crate"));
  lines.push("", `\`turnguard\` by module (at most ${depth} segments below the crate):`, "", groupTable(result.modules, "module"));
  lines.push("", "Other crates by module (the 15 largest):", "", groupTable(result.libraries.slice(0, 15), "module"));
  lines.push("", `The ${top} largest functions:`, "", "| function | crate | bytes |", "| --- | --- | ---: |");
  for (const f of result.top.slice(0, top)) lines.push(`| \`${shorten(f.name)}\` | ${f.crate} | ${number(f.bytes)} |`);
  lines.push("", "Paths defined more than once (a generic's copies), by their bytes together:", "", "| function | copies | bytes |", "| --- | ---: | ---: |");
  for (const c of result.copies.slice(0, top)) lines.push(`| \`${shorten(c.name)}\` | ${c.copies} | ${number(c.bytes)} |`);
  return lines.join("\n");
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const args = process.argv.slice(2);
  const option = (flag, fallback) => (args.includes(flag) ? Number(args[args.indexOf(flag) + 1]) : fallback);
  const file = args.find((arg, i) => !arg.startsWith("--") && !["--top", "--depth"].includes(args[i - 1]));
  if (!file) {
    console.error("usage: node scripts/wasm-sizes.mjs file.wasm [--top 20] [--depth 3] [--json]");
    process.exit(2);
  }
  const settings = { top: option("--top", 20), depth: option("--depth", 3) };
  const result = attribute(readFileSync(file), settings);
  console.log(args.includes("--json") ? JSON.stringify(result, null, 2) : markdown(result, settings));
}
