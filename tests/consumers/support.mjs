// What the consumer matrix shares: the packed tarball, consumer projects installed from it (their
// other dependencies cached under target/consumers/ by versions), a static server that sends the
// strict CSP, child processes and free ports.

import { execFile, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { cpSync, existsSync, mkdirSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import http from "node:http";
import net from "node:net";
import { fileURLToPath } from "node:url";
import { serveStatic } from "../../www/devstack/static.mjs";

export const REPO = fileURLToPath(new URL("../../", import.meta.url));
export const CONSUMERS = `${REPO}target/consumers/`;
const APPS = fileURLToPath(new URL("apps/", import.meta.url));

/** The CSP of the issue: wasm may compile, scripts come from the page's own origin only. */
export const STRICT_CSP = "script-src 'self' 'wasm-unsafe-eval'";

/** Runs a command; resolves with its output, rejects with it when it fails. */
export function run(command, args, { cwd, timeout = 300_000, env } = {}) {
  return new Promise((resolve, reject) => {
    execFile(command, args, { cwd, timeout, env: { ...process.env, ...env }, maxBuffer: 32 << 20 }, (error, stdout, stderr) => {
      if (error) {
        error.message += `\n--- stdout\n${stdout}\n--- stderr\n${stderr}`;
        reject(error);
      } else {
        resolve({ stdout, stderr });
      }
    });
  });
}

const npm = (args, cwd) => run("npm", [...args, "--no-audit", "--no-fund", "--loglevel=error"], { cwd });

/** `npm pack` of the built package (pkg/) into target/consumers/; returns the tarball's path and pack report. */
export async function packTarball() {
  if (!existsSync(`${REPO}pkg/package.json`)) throw new Error("pkg/ is not built: run `npm run build` first");
  mkdirSync(CONSUMERS, { recursive: true });
  const { stdout } = await npm(["pack", "./pkg", "--json", "--pack-destination", CONSUMERS], REPO);
  const [report] = JSON.parse(stdout);
  return { tarball: `${CONSUMERS}${report.filename}`, report };
}

/** The exact file list `npm pack --dry-run` reports for pkg/. */
export async function dryRunFiles() {
  const { stdout } = await npm(["pack", "./pkg", "--dry-run", "--json"], REPO);
  return JSON.parse(stdout)[0].files.map((file) => file.path).sort();
}

/**
 * A consumer project of `kind` with `dependencies` installed (once per set of versions, Node and
 * npm major) and the tarball installed anew; `apps/<kind>/` is copied over it on every run.
 * Returns the directory and the install times in milliseconds (`deps` is 0 when cached).
 */
export async function consumerProject(kind, dependencies, tarball) {
  const key = createHash("sha256")
    .update(JSON.stringify({ dependencies, node: process.versions.node.split(".")[0], npm: await npmMajor() }))
    .digest("hex")
    .slice(0, 10);
  const dir = `${CONSUMERS}${kind}-${key}/`;
  const times = { deps: 0, tarball: 0 };
  if (!existsSync(`${dir}.installed`)) {
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    const manifest = { name: `turnguard-consumer-${kind}`, private: true, type: "module", dependencies };
    writeFileSync(`${dir}package.json`, `${JSON.stringify(manifest, null, 2)}\n`);
    const started = performance.now();
    if (Object.keys(dependencies).length > 0) await npm(["install"], dir);
    times.deps = Math.round(performance.now() - started);
    writeFileSync(`${dir}.installed`, `${times.deps}\n`);
  }
  const started = performance.now();
  await npm(["install", "--no-save", "--prefer-offline", tarball], dir);
  times.tarball = Math.round(performance.now() - started);
  if (existsSync(`${APPS}${kind}`)) cpSync(`${APPS}${kind}`, dir, { recursive: true });
  cpSync(`${APPS}turn.js`, `${dir}turn.js`);
  return { dir, times };
}

let npmVersion;
async function npmMajor() {
  npmVersion ??= (await run("npm", ["--version"])).stdout.trim().split(".")[0];
  return npmVersion;
}

/** A port nothing listens on right now. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** Serves `root` on 127.0.0.1 with `csp` on every response. */
export async function staticServer(root, csp = STRICT_CSP) {
  const realRoot = realpathSync(root);
  const server = http.createServer((req, res) => {
    res.setHeader("content-security-policy", csp);
    const raw = (req.url ?? "/").split("?")[0];
    serveStatic(req, res, realRoot, raw === "/" ? "/index.html" : raw).catch(() => res.destroy());
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}/`,
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

/**
 * Starts a long-running command (a dev or preview server) and resolves once `url` answers;
 * `stop()` ends it and its children.
 */
export async function startServer(command, args, { cwd, url }) {
  const child = spawn(command, args, { cwd, detached: true, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stdout.on("data", (chunk) => (output += chunk));
  child.stderr.on("data", (chunk) => (output += chunk));
  const exited = new Promise((resolve) => child.once("exit", resolve));
  const stop = async () => {
    try {
      process.kill(-child.pid, "SIGTERM");
    } catch {}
    await exited;
  };
  for (let i = 0; i < 300; i++) {
    if (child.exitCode !== null) throw new Error(`${command} ${args.join(" ")} exited:\n${output}`);
    try {
      if ((await fetch(url)).ok) return { stop, output: () => output };
    } catch {}
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  await stop();
  throw new Error(`${url} did not answer:\n${output}`);
}

/**
 * Opens `url` in a new page and waits for the app to report `window.__consumer`
 * (`{ ok, result | error }`); page errors fail it. Returns the result.
 */
export async function resultOfPage(browser, url, { allowErrors = [] } = {}) {
  const page = await browser.newPage();
  const errors = [];
  page.on("pageerror", (error) => errors.push(error.message));
  page.on("console", (message) => {
    if (message.type() === "error") errors.push(message.text());
  });
  try {
    await page.goto(url);
    await page.waitForFunction(() => window.__consumer !== undefined, null, { timeout: 60_000 });
    const done = await page.evaluate(() => window.__consumer);
    if (!done.ok) throw new Error(`the app failed: ${done.error}\n${errors.join("\n")}`);
    const unexpected = errors.filter((error) => !allowErrors.some((pattern) => pattern.test(error)));
    if (unexpected.length > 0) throw new Error(`page errors:\n${unexpected.join("\n")}`);
    return done.result;
  } finally {
    await page.close();
  }
}
