// The consumer matrix: the packed tarball (`npm pack pkg/`), installed into a project of each kind
// a web developer has (never the source tree), runs one real turn against the dev stack's mock
// LLM — in headless Chromium (Vite 8 build + preview and dev, Vite 6 dev and build, webpack 5, a
// plain page and a module worker under a strict CSP, the microphone under that CSP) or in Node —
// and `tsc --strict` checks an example under the lib and resolution settings apps use.
// Each kind's dependencies install once per set of versions (target/consumers/); one browser.

import assert from "node:assert/strict";
import { copyFileSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { after, before, test } from "node:test";
import { startDevStack } from "../../www/devstack.mjs";
import { launchChromium } from "../e2e/harness.mjs";
import {
  consumerProject,
  dryRunFiles,
  freePort,
  packTarball,
  REPO,
  resultOfPage,
  run,
  startServer,
  staticServer,
} from "./support.mjs";

// The newest release of each supported major when this matrix was written; bump on purpose.
const VERSIONS = {
  vite8: { vite: "8.4.0" },
  vite6: { vite: "6.4.6" },
  webpack: { webpack: "5.113.0", "webpack-cli": "6.0.1" },
  types: { typescript: "5.9.3", "@types/node": "20.19.43" },
  plain: {},
};

let tarball;
let stack;
let browser;
const projects = new Map();

before(async () => {
  ({ tarball } = await packTarball());
  stack = await startDevStack({ port: 0 });
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  await stack?.close();
});

/** The consumer project of `kind`, installed once per run; install times go to the test's log. */
async function project(t, kind) {
  if (!projects.has(kind)) {
    const installed = await consumerProject(kind, VERSIONS[kind], tarball);
    const { deps, tarball: tar } = installed.times;
    const what = Object.keys(VERSIONS[kind]).length === 0 ? "none" : deps ? `installed in ${deps} ms` : "cached";
    t.diagnostic(`${kind}: dependencies ${what}, tarball installed in ${tar} ms`);
    projects.set(kind, installed.dir);
  }
  return projects.get(kind);
}

const pageUrl = (base, path = "") => `${base}${path}?llm=${encodeURIComponent(stack.url)}`;
// The failing primary's HTTP 500 shows as a failed resource in the console; nothing else may fail.
const ALLOWED = [/status of 500/];

/** The Vite apps run one turn on the page and one in a module worker. */
function assertPageAndWorker(result) {
  assertOneTurn(result.page);
  assertOneTurn(result.worker);
}

function assertOneTurn(result) {
  assert.equal(result.status, "accepted");
  assert.equal(result.attempts, "primary:error fallback:accepted");
  assert.equal(result.spoken.length, 1, "exactly one answer is spoken");
  assert.match(result.spoken[0], /^You said: Hello from a consumer/);
}

const hasWorklet = () => existsSync(`${REPO}pkg/capture-worklet.js`);

test("the tarball ships exactly the package's files, with a manifest fit to publish", async (t) => {
  const files = await dryRunFiles();
  // The snippets shipped are exactly the ones the glue imports.
  // Each entry point ("turnguard", "turnguard/controller", "turnguard/transcriber") ships its glue, the snippets that
  // glue imports, its declarations, its wasm and its Node entry.
  const entry = (dir, snippet = "/src/web/glue.js") => {
    const glue = readFileSync(`${REPO}pkg/${dir}turnguard.js`, "utf8");
    // wasm-bindgen writes `import { f } from '…'` for imports behind a shim and
    // `import * as importN from "…"` for ones the wasm calls directly; minified, `from"…"`.
    const snippets = [...glue.matchAll(/from ?['"]\.\/(snippets\/[^'"]+)['"]/g)].map((match) => `${dir}${match[1]}`);
    assert.ok(snippets.some((path) => path.endsWith(snippet)), `${dir || "the root"} glue imports its JS snippet`);
    return [...new Set(snippets), ...["node.js", "turnguard.d.ts", "turnguard.js", "turnguard_bg.wasm"].map((file) => `${dir}${file}`)];
  };
  const expected = [
    "LICENSE-APACHE",
    "LICENSE-MIT",
    "README.md",
    "docs/api.md",
    "docs/providers.md",
    "docs/semantics.md",
    "docs/setup.md",
    "docs/troubleshooting.md",
    // The examples the README links: the backend, and the React app with its hook.
    "examples/react/README.md",
    "examples/react/index.html",
    "examples/react/package.json",
    "examples/react/src/App.jsx",
    "examples/react/src/main.jsx",
    "examples/react/src/useVoiceSession.js",
    "examples/server.mjs",
    ...(hasWorklet() ? ["capture-worklet.js"] : []),
    "package.json",
    ...entry(""),
    ...entry("controller/"),
    // The transcriber entry has none of the ladder's glue.js; its snippet is the capture worklet.
    ...entry("transcriber/", "/src/web/capture-worklet.js"),
  ].sort();
  assert.deepEqual(files, expected);
  t.diagnostic(`tarball: ${files.join(", ")}`);
  // The declarations: one free() per class, and rule ids cite the shipped docs/semantics.md.
  for (const dir of ["", "controller/"]) {
    const declarations = readFileSync(`${REPO}pkg/${dir}turnguard.d.ts`, "utf8");
    for (const [, name, body] of declarations.matchAll(/^export class (\w+) \{\n([\s\S]*?)^\}/gm)) {
      assert.equal(`\n${body}`.split("\n    free(): void;\n").length - 1, 1, `${dir}${name} declares free() once`);
    }
    assert.doesNotMatch(declarations, /DESIGN\.md/, "no comment cites a file users do not have");
  }

  const manifest = JSON.parse(readFileSync(`${REPO}pkg/package.json`, "utf8"));
  for (const field of ["keywords", "engines", "license", "description"]) {
    assert.ok(manifest[field], `the manifest has ${field}`);
  }
  // No repository is public yet: no placeholder address either.
  for (const field of ["repository", "homepage", "bugs"]) assert.equal(manifest[field], undefined, `no ${field}`);
  assert.equal(manifest.license, "MIT OR Apache-2.0");
  assert.equal(manifest.scripts, undefined, "no scripts: they would point at files not shipped");
  assert.equal(manifest.devDependencies, undefined);
  assert.equal(manifest.dependencies, undefined, "nothing to install besides the package");
  assert.equal(manifest.private, undefined, "the published manifest is not private (the repository's is)");
  assert.deepEqual(Object.keys(manifest.exports["."]), ["types", "node", "default"], "types first, node before default");
  for (const target of Object.values(manifest.exports).flatMap((entry) => (typeof entry === "string" ? [entry] : Object.values(entry)))) {
    assert.ok(files.includes(target.replace(/^\.\//, "")), `export target ${target} is shipped`);
  }
  assert.match(readFileSync(`${REPO}pkg/LICENSE-MIT`, "utf8"), /Copyright \(c\) the turnguard authors/);
  assert.match(readFileSync(`${REPO}pkg/LICENSE-APACHE`, "utf8"), /Apache License\s+Version 2\.0, January 2004/);
});

test("every entry's exported classes and functions keep their names in the minified glue", async () => {
  for (const dir of ["", "controller/", "transcriber/"]) {
    const entry = await import(new URL(`../../pkg/${dir}turnguard.js`, import.meta.url));
    const exported = Object.entries(entry).filter(([name, value]) => name !== "default" && typeof value === "function");
    assert.ok(exported.length >= 4, `turnguard/${dir} exports its classes`);
    for (const [name, value] of exported) assert.equal(value.name, name, `turnguard/${dir}: ${name}.name`);
  }
});

test("the published declarations have no `any` in public signatures", () => {
  const lines = readFileSync(`${REPO}pkg/turnguard.d.ts`, "utf8").split("\n");
  const code = lines.filter((line) => !/^\s*(\/\/|\/\*|\*)/.test(line));
  assert.deepEqual(code.filter((line) => /\bany\b/.test(line.replace(/"[^"]*"/g, '""'))), []);
});

test("Node 20: import + init() with no argument + one turn, no browser global touched", async (t) => {
  assert.ok(Number(process.versions.node.split(".")[0]) >= 20, "Node 20 or later runs this");
  const dir = await project(t, "plain");
  const { stdout } = await run(process.execPath, ["node-turn.mjs", stack.url], { cwd: dir });
  const result = JSON.parse(stdout.trim().split("\n").at(-1));
  assert.deepEqual(result.touchedAtImport, [], "importing the package reads no window/navigator/document/self/location");
  assertOneTurn(result);
});

test("Node 20: \"turnguard/controller\" runs a turn and has only the turn ladder", async (t) => {
  const dir = await project(t, "plain");
  const { stdout } = await run(process.execPath, ["node-controller.mjs", stack.url], { cwd: dir });
  const result = JSON.parse(stdout.trim().split("\n").at(-1));
  assert.deepEqual(result.absent, ["VoiceSession", "SpeechPlayer", "LiveTranscriber", "ReconnectPolicy"]);
  assertOneTurn(result);
});

test("Node 20: \"turnguard/transcriber\" has live speech-to-text and its protocols, nothing else", async (t) => {
  const dir = await project(t, "plain");
  const { stdout } = await run(process.execPath, ["node-transcriber.mjs"], { cwd: dir });
  const result = JSON.parse(stdout.trim().split("\n").at(-1));
  assert.deepEqual(result.present, ["LiveTranscriber", "ReconnectPolicy", "gladiaProvisioner"]);
  assert.deepEqual(result.absent, ["TurnController", "openAiCompatibleRoute", "VoiceSession", "SpeechPlayer"]);
  assert.deepEqual(result.decision, { action: "reconnect_same_url", delayMs: 12000, reason: "throttled" });
});

test("\"turnguard/controller\" on a plain page under script-src 'self' 'wasm-unsafe-eval'", async (t) => {
  const dir = await project(t, "plain");
  const server = await staticServer(dir);
  try {
    assertOneTurn(await resultOfPage(browser, pageUrl(server.url, "controller.html"), { allowErrors: ALLOWED }));
  } finally {
    await server.close();
  }
});

test("a plain page under script-src 'self' 'wasm-unsafe-eval'", async (t) => {
  const dir = await project(t, "plain");
  const server = await staticServer(dir);
  try {
    const result = await resultOfPage(browser, pageUrl(server.url), { allowErrors: [...ALLOWED, /Content Security Policy/] });
    assert.equal(result.inlineScriptRan, false, "the CSP is in force: the page's inline script was blocked");
    assertOneTurn(result);
  } finally {
    await server.close();
  }
});

test("a module worker under the same CSP", async (t) => {
  const dir = await project(t, "plain");
  const server = await staticServer(dir);
  try {
    assertOneTurn(await resultOfPage(browser, pageUrl(server.url, "worker.html"), { allowErrors: ALLOWED }));
  } finally {
    await server.close();
  }
});

test("the microphone under the strict CSP: the same-origin worklet and the track processor capture, the blob: worklet reports worklet_blocked", async (t) => {
  if (!hasWorklet()) {
    t.skip("pkg/capture-worklet.js is not built yet (the workletUrl option lands with the hardening-transcriber branch)");
    return;
  }
  const dir = await project(t, "plain");
  const server = await staticServer(dir);
  try {
    const sameOrigin = await resultOfPage(browser, pageUrl(server.url, "mic.html"));
    assert.equal(sameOrigin.attach, null, "attachMicrophone({ workletUrl }) resolves");
    assert.deepEqual(sameOrigin.errors, []);
    assert.ok(sameOrigin.framesSent >= 12, `frames reached the socket (${sameOrigin.framesSent})`);

    const direct = await resultOfPage(browser, `${pageUrl(server.url, "mic.html")}&worklet=none`);
    assert.equal(direct.attach, null, "attachMicrophone() without workletUrl resolves: Chromium reads the track, no worklet");
    assert.deepEqual(direct.errors, []);
    assert.ok(direct.framesSent >= 12, `frames reached the socket (${direct.framesSent})`);

    const blob = await resultOfPage(browser, `${pageUrl(server.url, "mic.html")}&worklet=blob`, {
      allowErrors: [/Content Security Policy|worklet/i],
    });
    assert.ok(blob.attach, "attachMicrophone() without workletUrl or a track processor rejects under this CSP");
    assert.equal(blob.attach.code, "worklet_blocked");
    assert.deepEqual(blob.errors.map((error) => error.code), ["worklet_blocked"], "the error reaches onError");
    assert.match(blob.errors[0].message, /CSP|Content-Security-Policy/);
    assert.equal(blob.framesSent, 0);
  } finally {
    await server.close();
  }
});

/** `vite <args>` in `dir` as a server, until `fn(url)` is done. */
async function withVite(dir, args, fn) {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}/`;
  const server = await startServer(process.execPath, ["node_modules/vite/bin/vite.js", ...args, "--host", "127.0.0.1", "--port", String(port), "--strictPort"], { cwd: dir, url });
  try {
    await fn(url);
  } finally {
    await server.stop();
  }
}

test("Vite 8, page and module worker: build + preview, and the dev server, with no turnguard settings", async (t) => {
  const dir = await project(t, "vite8");
  await run(process.execPath, ["node_modules/vite/bin/vite.js", "build"], { cwd: dir });
  await t.test("build + preview", () =>
    withVite(dir, ["preview"], async (url) => assertPageAndWorker(await resultOfPage(browser, pageUrl(url), { allowErrors: ALLOWED }))));
  await t.test("dev", () =>
    withVite(dir, ["--force"], async (url) => assertPageAndWorker(await resultOfPage(browser, pageUrl(url), { allowErrors: ALLOWED }))));
});

/** The `vite.config.js` the setup doc's Vite section gives, as written (a list item's block, indented). */
function setupViteConfig() {
  const setup = readFileSync(`${REPO}docs/setup.md`, "utf8");
  const section = setup.slice(setup.indexOf("## Vite"), setup.indexOf("## webpack"));
  const match = /^( *)```js\n\1\/\/ vite\.config\.js\n([\s\S]*?)^\1```/m.exec(section);
  assert.ok(match, "docs/setup.md's Vite section has a vite.config.js block");
  return match[2].replace(new RegExp(`^${match[1]}`, "gm"), "");
}

test("Vite 6 with the settings of docs/setup.md, page and module worker: dev, and build + preview", async (t) => {
  const dir = await project(t, "vite6");
  writeFileSync(`${dir}vite.config.js`, setupViteConfig());
  await t.test("dev", () =>
    withVite(dir, ["--force"], async (url) => assertPageAndWorker(await resultOfPage(browser, pageUrl(url), { allowErrors: ALLOWED }))));
  await run(process.execPath, ["node_modules/vite/bin/vite.js", "build"], { cwd: dir });
  await t.test("build + preview", () =>
    withVite(dir, ["preview"], async (url) => assertPageAndWorker(await resultOfPage(browser, pageUrl(url), { allowErrors: ALLOWED }))));
});

test("webpack 5: a production build, served under the strict CSP", async (t) => {
  const dir = await project(t, "webpack");
  await run(process.execPath, ["node_modules/webpack-cli/bin/cli.js", "build"], { cwd: dir });
  const server = await staticServer(dir);
  try {
    assertOneTurn(await resultOfPage(browser, pageUrl(server.url), { allowErrors: ALLOWED }));
  } finally {
    await server.close();
  }
});

// Item 1 of the issue: default libs of es2020/es2022, lib ["dom", "es2022"], with and without
// skipLibCheck, bundler and node16 resolution; and a project with esnext.disposable and
// @types/node, where the package's Symbol.dispose declaration must merge with theirs.
const TYPE_CONFIGS = [
  { name: "es2020 default libs, bundler", target: "es2020", module: "esnext", moduleResolution: "bundler" },
  { name: "es2022 default libs, bundler", target: "es2022", module: "esnext", moduleResolution: "bundler" },
  { name: "dom + es2022, bundler", target: "es2022", module: "esnext", moduleResolution: "bundler", lib: ["dom", "es2022"] },
  { name: "es2020 default libs, node16", target: "es2020", module: "node16", moduleResolution: "node16" },
  { name: "dom + es2022, node16", target: "es2022", module: "node16", moduleResolution: "node16", lib: ["dom", "es2022"] },
].flatMap((config) => [false, true].map((skipLibCheck) => ({ ...config, skipLibCheck, name: `${config.name}, skipLibCheck ${skipLibCheck}` })));
TYPE_CONFIGS.push({
  name: "esnext.disposable + @types/node, bundler, using",
  target: "es2022",
  module: "esnext",
  moduleResolution: "bundler",
  lib: ["dom", "es2022", "esnext.disposable"],
  types: ["node"],
  skipLibCheck: false,
  files: ["example.ts", "controller.ts", "disposable.ts"],
});

test("tsc --strict over the example under every configuration apps use", async (t) => {
  const dir = await project(t, "types");
  for (const file of ["example.ts", "controller.ts", "disposable.ts"]) copyFileSync(`${REPO}tests/types/${file}`, `${dir}${file}`);
  const check = async ({ name, files = ["example.ts", "controller.ts"], types = [], ...options }, index) => {
    const config = `tsconfig.${index}.json`;
    writeFileSync(`${dir}${config}`, JSON.stringify({ compilerOptions: { strict: true, noEmit: true, types, ...options }, files }, null, 2));
    try {
      await run(process.execPath, ["node_modules/typescript/bin/tsc", "-p", config], { cwd: dir });
    } catch (error) {
      assert.fail(`${name}: ${error.message}`);
    }
  };
  // Two at a time: the machine has two cores.
  for (let i = 0; i < TYPE_CONFIGS.length; i += 2) {
    await Promise.all(TYPE_CONFIGS.slice(i, i + 2).map((config, j) => check(config, i + j)));
  }
  t.diagnostic(`${TYPE_CONFIGS.length} configurations: ${TYPE_CONFIGS.map((config) => config.name).join("; ")}`);
});
