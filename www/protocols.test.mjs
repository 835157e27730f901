// The protocol descriptors (www/protocols/<name>.mjs) and what the dev stack makes of each: its
// mock on the socket skeleton, its backend route, its place in GET /__protocols and /__stats. What
// every protocol shares is checked for every one of them; each protocol's own wire behaviour is
// checked by its official SDK (www/sdk-*.test.mjs) and the browser suite (tests/browser/protocols.js).
// Run with: node --test www/protocols.test.mjs

import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { WebSocket } from "ws";
import { startDevStack } from "./devstack.mjs";
import { loadDescriptors, PROTOCOLS_DIR } from "./devstack/protocols.mjs";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const descriptors = await loadDescriptors();
let stack;
let base;

before(async () => {
  stack = await startDevStack({ port: 0, python: null });
  base = stack.url.replace(/\/$/, "");
});
after(() => stack.close());

/** The dev stack's backend route for `name`, with mock switches. */
function backend(name, body) {
  return fetch(`${base}/api/stt/${name}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ reason: "start", ...body }) });
}

const keyStats = async (name, key) => (await fetch(`${base}/__stats?protocol=${name}&key=${key}`)).json();

/** Whether a socket to `url` (with `protocols`) opens, or the HTTP status its upgrade got. */
function upgrade({ url, protocols }) {
  return new Promise((resolve) => {
    const ws = new WebSocket(url, protocols ?? []);
    ws.on("open", () => {
      ws.terminate();
      resolve("open");
    });
    ws.on("unexpected-response", (_req, res) => resolve(res.statusCode));
    ws.on("error", () => {});
  });
}

test("the list is the folder: one descriptor per file, named as its file, with a mock of its own", () => {
  assert.ok(descriptors.length >= 7, `${descriptors.length} descriptors`);
  assert.equal(descriptors.filter((d) => d.default).length, 1, "one default (the library's)");
  for (const d of descriptors) {
    assert.match(d.name, /^[a-z0-9-]+$/, "a protocol name as apps pass it");
    assert.ok(existsSync(path.join(PROTOCOLS_DIR, `${d.name}.mjs`)));
    assert.ok(existsSync(path.join(HERE, "devstack/mocks", `${d.name}.mjs`)), `${d.name}: its mock`);
    assert.equal(typeof d.label, "string");
    assert.ok(d.mock.http.startsWith("/") && d.mock.socket.startsWith("/"), `${d.name}: the mock's paths`);
    assert.equal(typeof d.backend, "function", `${d.name}: a backend recipe`);
    assert.ok(d.failures.every((f) => f.id && f.label && (f.socket || f.token)), `${d.name}: its own demo switches`);
    assert.equal(typeof d.fixture.freshCredentials, "boolean", `${d.name}: the fixture says whether credentials are single-use`);
    assert.ok(d.fixture.drop && d.fixture.expired && d.fixture.finish, `${d.name}: the fixture's drop, expired and finish`);
  }
});

test("GET /__protocols lists each descriptor's data, and the descriptor modules load cross-origin", async () => {
  const listed = await (await fetch(`${base}/__protocols`)).json();
  assert.deepEqual(listed.map((p) => p.name), descriptors.map((d) => d.name));
  for (const entry of listed) {
    assert.equal(entry.backend, `/api/stt/${entry.name}`);
    assert.ok(Array.isArray(entry.fixture.scenarios), "extra scenarios by name");
    const module = await fetch(`${base}${entry.module}`);
    assert.equal(module.status, 200);
    assert.match(module.headers.get("content-type"), /javascript/);
    assert.equal(module.headers.get("access-control-allow-origin"), "*", "a page of another origin (the wasm test runner's) may import it");
  }
});

test("/__stats has one entry per protocol, and services derived from the list", async () => {
  const stats = await (await fetch(`${base}/__stats`)).json();
  assert.deepEqual(stats.protocols, descriptors.map((d) => d.name));
  for (const d of descriptors) {
    assert.ok(stats[d.name].keys, `${d.name}: counters by key`);
    assert.equal(stats.services[d.name].path, d.mock.http);
    assert.equal(stats.services[d.name].backend, `/api/stt/${d.name}`);
  }
  assert.equal(stats.recognizer.engine, "unavailable", "this stack has no speech engine");
});

for (const d of descriptors) {
  describe(d.name, () => {
    test("the backend route runs the recipe: a URL for the page, no key in it, the page's switches added", async () => {
      const key = `route-${d.name}`;
      const response = await backend(d.name, { key, socket: "recognizer=frames" });
      assert.equal(response.status, 200);
      const answer = await response.json();
      const url = new URL(answer.url);
      assert.equal(url.protocol, "ws:");
      assert.equal(url.searchParams.get("mock_key"), key);
      assert.equal(url.searchParams.get("recognizer"), "frames");
      assert.ok(!JSON.stringify(answer).includes("dev-backend-key"), "the backend's key stays on the server");
      assert.equal(await upgrade(answer), "open");
      const counters = await keyStats(d.name, key);
      assert.deepEqual([counters.provisions, counters.connections, counters.refused], [1, 1, 0]);
    });

    test("provisioning faults: the status passes through the backend; times=N lets later ones by; a reset is a network error", async () => {
      const key = `provision-${d.name}`;
      const limited = await backend(d.name, { key, token: "mock_provision=429&mock_times=1" });
      assert.equal(limited.status, 429);
      assert.equal((await backend(d.name, { key, token: "mock_provision=429&mock_times=1" })).status, 200);
      assert.equal((await backend(d.name, { key, token: "mock_provision=503" })).status, 503);
      await assert.rejects(backend(d.name, { key, token: "mock_provision=reset" }), TypeError);
      const counters = await keyStats(d.name, key);
      assert.deepEqual([counters.provisions, counters.provisionsRefused], [4, 3]);
    });

    test("a provisioning that hangs is given up by the page, and so by the backend: counted as aborted", async () => {
      const key = `hang-${d.name}`;
      const abort = new AbortController();
      const pending = fetch(`${base}/api/stt/${d.name}`, { method: "POST", signal: abort.signal, body: JSON.stringify({ key, token: "mock_provision=hang" }) });
      for (let i = 0; i < 100 && (await keyStats(d.name, key))?.provisions !== 1; i += 1) await new Promise((r) => setTimeout(r, 20));
      abort.abort();
      await assert.rejects(pending, /abort/i);
      for (let i = 0; i < 100 && (await keyStats(d.name, key)).provisionsAborted !== 1; i += 1) await new Promise((r) => setTimeout(r, 20));
      assert.equal((await keyStats(d.name, key)).provisionsAborted, 1);
    });

    test("a refused upgrade: the HTTP status asked for, for the first mock_times attempts", async () => {
      const key = `refuse-${d.name}`;
      const answer = await (await backend(d.name, { key, socket: "mock_refuse_upgrade=404&mock_times=1" })).json();
      assert.equal(await upgrade(answer), 404);
      const next = await (await backend(d.name, { key, socket: "mock_refuse_upgrade=404&mock_times=1" })).json();
      assert.equal(await upgrade(next), "open");
      const counters = await keyStats(d.name, key);
      assert.deepEqual([counters.attempts, counters.refused, counters.connections], [2, 1, 1]);
    });
  });
}
