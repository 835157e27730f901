// Request ids are idempotency keys: a backend that deduplicates on them must never see one twice.
// Two VoiceSessions in one page, in two page loads, each with two turns on openAiCompatibleRoute
// against the dev stack's mock LLM, which records each request's `idempotency-key`.

import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { openPage, runModule, startE2e } from "./harness.mjs";

const PAGE = `
import init, { VoiceSession, openAiCompatibleRoute } from "turnguard";
await init();

async function conversation(options = {}) {
  const records = [];
  const session = new VoiceSession({
    routes: [openAiCompatibleRoute({ name: "primary", url: "/llm/ok/v1/chat/completions", model: "demo" })],
    recoveryText: "Sorry?",
    synthesize: async (text, { signal }) => {
      const response = await fetch("/tts", { method: "POST", signal, headers: { "content-type": "application/json" }, body: JSON.stringify({ text }) });
      return response.arrayBuffer();
    },
    onTurn: (record) => records.push(record),
    ...options,
  });
  await session.start({ microphone: false });
  for (const text of ["first question", "second question"]) {
    const settled = records.length + 1;
    session.sendText(text);
    while (records.length < settled) await new Promise((resolve) => setTimeout(resolve, 10));
  }
  await session.stop();
  session.free();
  console.log(JSON.stringify({ sessionId: session.sessionId, turns: records.map((r) => [r.turnId, r.status]) }));
}

await conversation();
await conversation();
`;

let e2e;
before(async () => {
  e2e = await startE2e();
});
after(async () => {
  await e2e?.close();
});

test("two sessions in a page, in two page loads, never send the same request id", async () => {
  const logged = [];
  for (let load = 0; load < 2; load += 1) {
    const { page, console, errors } = await openPage(e2e.browser);
    await runModule(page, e2e.stack.url, PAGE);
    assert.deepEqual(errors, []);
    logged.push(...console.filter((line) => line.type === "log").map((line) => JSON.parse(line.text)));
    await page.close();
  }
  assert.equal(logged.length, 4, "four sessions ran");
  for (const { sessionId, turns } of logged) {
    assert.match(sessionId, /^[0-9a-f]{16}$/, "a random session id by default");
    assert.deepEqual(turns, [[`${sessionId}:turn-1`, "accepted"], [`${sessionId}:turn-2`, "accepted"]]);
  }
  const keys = e2e.stack.stats.llm.recent.map((request) => request.idempotencyKey);
  assert.equal(keys.length, 8, "eight LLM calls");
  assert.equal(new Set(keys).size, 8, `no repeated idempotency key: ${keys.join(", ")}`);
  const turnIds = logged.flatMap(({ turns }) => turns.map(([turnId]) => turnId));
  assert.deepEqual(keys.sort(), turnIds.map((turnId) => `${turnId}:attempt:1`).sort(), "the keys are the turns' request ids");
});

test("options.sessionId names the session's turns", async () => {
  const { page, console, errors } = await openPage(e2e.browser);
  await runModule(page, e2e.stack.url, PAGE.replace("await conversation();\nawait conversation();", 'await conversation({ sessionId: "conversation-42.page-1" });'));
  assert.deepEqual(errors, []);
  const [{ sessionId, turns }] = console.filter((line) => line.type === "log").map((line) => JSON.parse(line.text));
  assert.equal(sessionId, "conversation-42.page-1");
  assert.deepEqual(turns.map(([turnId]) => turnId), ["conversation-42.page-1:turn-1", "conversation-42.page-1:turn-2"]);
  await page.close();
});
