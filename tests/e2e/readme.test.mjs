// The README's backend (server.mjs) and its quick start, executed as written: the server as a
// Node process in front of the dev stack's mocks (its primary upstream answering 500), the quick
// start in Chromium on another origin, so the preflight the README describes really happens.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { after, before, test } from "node:test";
import { VOICE_CHROMIUM_ARGS } from "../../bench/voice.mjs";
import { docBlock, startReadmeBackend } from "./doc_blocks.mjs";
import { openPage, runModule, startE2e } from "./harness.mjs";

function quickStart() {
  const code = docBlock("README.md", "tests/e2e/readme.test.mjs", "quick-start");
  const promised = /^\/\/ → (.*)$/m.exec(code);
  assert.ok(promised, "the quick start says what it prints with a `// →` line");
  return { code, expected: promised[1].trim() };
}

let e2e;
let backend;
before(async () => {
  // A page served by the harness's route interception counts as outside the loopback address
  // space, and Chromium's Local Network Access checks would refuse its requests to the backend.
  e2e = await startE2e(VOICE_CHROMIUM_ARGS);
  backend = await startReadmeBackend(e2e.stack.url, docBlock("README.md", "tests/e2e/readme.test.mjs", "server"), { primary: "http500" });
});
after(async () => {
  await backend?.close();
  await e2e?.close();
});

test("examples/server.mjs is the README's server.mjs, to run as it is", () => {
  assert.equal(readFileSync(new URL("../../examples/server.mjs", import.meta.url), "utf8"), docBlock("README.md", "tests/e2e/readme.test.mjs", "server"));
});

test("the README backend answers the preflight the browser sends", async () => {
  const response = await fetch(`${backend.url}/api/chat/primary`, {
    method: "OPTIONS",
    headers: { origin: new URL(e2e.stack.url).origin, "access-control-request-method": "POST", "access-control-request-headers": "content-type,idempotency-key" },
  });
  assert.equal(response.status, 204);
  assert.equal(response.headers.get("access-control-allow-origin"), new URL(e2e.stack.url).origin);
  assert.match(response.headers.get("access-control-allow-headers"), /content-type, idempotency-key/);
  assert.equal((await fetch(`${backend.url}/api/nothing`, { method: "POST" })).status, 404);
});

test("the README backend routes on the path: a query string is no 404, and the STT route answers Gladia's { id, url } whole", async () => {
  const response = await fetch(`${backend.url}/api/stt/gladia?reason=start`, { method: "POST", headers: { "content-type": "application/json" }, body: '{"reason":"start"}' });
  assert.equal(response.status, 200);
  assert.equal(response.headers.get("access-control-allow-origin"), new URL(e2e.stack.url).origin);
  const session = await response.json();
  assert.deepEqual(Object.keys(session).sort(), ["id", "url"]);
  assert.match(session.url, /^ws:\/\/127\.0\.0\.1:\d+\/v2\/live\/ws\?token=/);
  assert.equal((await fetch(`${backend.url}/api/stt/nothing`, { method: "POST" })).status, 404);
  assert.equal((await fetch(`${backend.url}/api/stt/gladia`)).status, 404, "POST only");
});

test("the README backend passes the provider's status on, so the page retries a 503 and stops at a 401", async () => {
  for (const [mode, status] of [["provision503", 503], ["provision401", 401]]) {
    const failing = await startReadmeBackend(e2e.stack.url, docBlock("README.md", "tests/e2e/readme.test.mjs", "server"), { env: { GLADIA_API_URL: new URL(`/stt/${mode}`, e2e.stack.url).href } });
    try {
      assert.equal((await fetch(`${failing.url}/api/stt/gladia`, { method: "POST" })).status, status);
    } finally {
      await failing.close();
    }
  }
});

test("the README quick start runs as written against the README backend and prints what it promises", async () => {
  const { code, expected } = quickStart();
  const { page, console, errors } = await openPage(e2e.browser);
  e2e.stack.reset();
  await runModule(page, e2e.stack.url, backend.address(code));
  const logs = console.filter((line) => line.type === "log").map((line) => line.text);
  assert.equal(logs.at(-1), expected);
  assert.ok(logs.some((line) => line.startsWith("speak: You said: What's the weather like")), "the fallback's answer is spoken");
  assert.equal(logs.filter((line) => line.startsWith("speak:")).length, 1, "exactly one answer is spoken");
  // The 500 from the primary shows as a failed resource in the console; nothing else may fail.
  assert.deepEqual(errors.filter((error) => !/status of 500/.test(error)), []);
  const stats = e2e.stack.stats;
  assert.equal(stats.llm.scenarios.http500.requests, 1, "one call to the failing primary");
  assert.equal(stats.llm.scenarios.ok.requests, 1, "one call to the fallback");
  const calls = stats.llm.recent;
  assert.ok(calls.every((call) => call.authorization && call.stream), "the server added the key; the answer streamed");
  assert.deepEqual(calls.map((call) => call.model), ["gpt-4o-mini", "llama-3.1-8b-instant"]);
  const [first, second] = calls.map((call) => call.idempotencyKey);
  assert.match(first, /^[0-9a-f-]{36}:turn-1:attempt:1$/, "the request id went through the server as the idempotency key");
  assert.equal(second, first.replace(/1$/, "2"));
  await page.close();
});
