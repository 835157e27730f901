// The demo page (www/) in Chromium against the dev stack: it loads cleanly, its turn ladder streams
// the answer sentence by sentence and shows the spoken text, the record and the history the fallback
// receives for each fault scenario, and its reconnect panel shows the policy's decisions. Every wait
// is on page state (or the dev stack's counters); the tests share one page and run in order.

import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { openPage, startE2e } from "./harness.mjs";

const RECOVERY_TEXT = "Sorry, I lost my train of thought. Could you say that again?";
const WAIT = { timeout: 5000 };
// Chromium logs every HTTP error response as a failed resource; the fault scenarios cause these.
const EXPECTED_ERROR = /^Failed to load resource: the server responded with a status of (401|500)\b/;

let e2e;
let page;
let errors;

before(async () => {
  e2e = await startE2e();
  ({ page, errors } = await openPage(e2e.browser));
  await page.goto(e2e.stack.url);
  await page.locator('#library-status[data-state="ready"]').waitFor(WAIT);
});

after(async () => {
  await e2e?.close();
});

// The mock's default answer: an echo of the input, then three fixed sentences.
const MOCK_SENTENCES = ["This is the mock assistant.", "It answers every turn the same way.", "Nothing here comes from a model."];

/** Sets the form and starts a turn; returns its id (the page sets it synchronously on submit). */
async function startTurn({
  input,
  primary = "ok",
  fallback = "ok",
  slowTokenMs = 60,
  attemptTimeoutMs = 1500,
  turnDeadlineMs = 4000,
  firstChunkTimeoutMs = 1500,
  chunkIdleTimeoutMs = 1000,
  fallbackPolicy = "any",
  fallbackPersona = "ava",
}) {
  e2e.stack.reset();
  await page.fill("#utterance", input);
  await page.selectOption("#primary-scenario", primary);
  await page.selectOption("#fallback-scenario", fallback);
  await page.fill("#slow-token-ms", String(slowTokenMs));
  await page.fill("#attempt-timeout", String(attemptTimeoutMs));
  await page.fill("#turn-deadline", String(turnDeadlineMs));
  await page.fill("#first-chunk-timeout", String(firstChunkTimeoutMs));
  await page.fill("#chunk-idle-timeout", String(chunkIdleTimeoutMs));
  await page.selectOption("#fallback-policy", fallbackPolicy);
  await page.selectOption("#fallback-persona", fallbackPersona);
  await page.click("#run-turn");
  const turnId = await page.getAttribute("#turn-record", "data-turn");
  assert.match(turnId, /^turn-\d+$/);
  return turnId;
}

/** Waits until the page shows the turn as settled; returns what the page shows. */
async function settledTurn(turnId) {
  await page.locator(`#turn-record[data-turn="${turnId}"][data-settled="true"]`).waitFor(WAIT);
  return page.evaluate((id) => {
    const text = (selector) => document.querySelector(selector).textContent.trim();
    return {
      status: text("#record-status"),
      reason: document.querySelector("#record-reason").dataset.reason,
      spokenKind: document.querySelector("#spoken").dataset.kind,
      spokenLabel: text("#spoken-label"),
      spokenText: text("#spoken-text"),
      sentences: [...document.querySelectorAll("#spoken-sentences li")].map((li) => li.textContent),
      attempts: [...document.querySelectorAll("#record-attempts tr")].map((tr) => ({ ...tr.dataset })),
      events: [...document.querySelectorAll(`#event-log li[data-turn="${id}"]`)].map((li) => li.dataset.type),
    };
  }, turnId);
}

/** The page's history list as the chat messages it says `shareHistory` routes receive. */
async function historyMessages() {
  return page.$$eval("#history [data-role]", (lines) =>
    lines.map((line) => ({ role: line.dataset.role, content: line.querySelector(".message-content").textContent })));
}

/** Waits until the turn is running and its answer is streaming with at least `count` sentences out; returns the count. */
async function sentencesWhileStreaming(turnId, count) {
  const handle = await page.waitForFunction(
    ({ id, count }) => {
      const running = document.querySelector(`#turn-record[data-turn="${id}"][data-status="running"]`);
      const streaming = document.querySelector(`#spoken[data-turn="${id}"][data-kind="streaming"]`);
      const shown = document.querySelectorAll("#spoken-sentences li").length;
      return running && streaming && shown >= count ? shown : 0;
    },
    { id: turnId, count },
    WAIT,
  );
  return handle.jsonValue();
}

/** Polls a condition of the dev stack (its counters update when the server sees a disconnect). */
async function eventually(probe, what, ms = 3000) {
  const deadline = Date.now() + ms;
  while (!probe()) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

function llmRequests() {
  const counts = {};
  for (const [scenario, counter] of Object.entries(e2e.stack.stats.llm.scenarios)) counts[scenario] = counter.requests;
  return counts;
}

function unexpectedErrors() {
  return errors.filter((error) => !EXPECTED_ERROR.test(error));
}

test("the page loads the library with no console or page errors", async () => {
  assert.deepEqual(errors, []);
  assert.equal(await page.isEnabled("#run-turn"), true);
  assert.equal(await page.isEnabled('[data-simulation="close4403"]'), true);
});

test("primary ok: its answer is spoken and the record is accepted", async () => {
  const turnId = await startTurn({ input: "Is it raining in Lyon?" });
  const shown = await settledTurn(turnId);
  assert.equal(shown.status, "accepted");
  assert.equal(shown.spokenKind, "answer");
  assert.match(shown.spokenLabel, /primary/);
  assert.match(shown.spokenText, /^You said: Is it raining in Lyon\b/);
  // The answer went out sentence by sentence; onAcceptedText got the whole text once.
  assert.deepEqual(shown.sentences, ["You said: Is it raining in Lyon.", ...MOCK_SENTENCES]);
  assert.equal(shown.spokenText, shown.sentences.join(" "));
  assert.deepEqual(shown.attempts.map((a) => `${a.route}:${a.result}`), ["primary:accepted"]);
  assert.deepEqual(shown.events, ["turn_started", "attempt_started", "committed", "attempt_finished", "accepted"]);
  assert.deepEqual(llmRequests(), { ok: 1 });
  // It is now the last exchange of the history.
  assert.deepEqual((await historyMessages()).slice(-2), [
    { role: "user", content: "Is it raining in Lyon?" },
    { role: "assistant", content: shown.spokenText },
  ]);
  // The route streams: the mock got a streaming request with the primary's persona prompt and no history.
  const [request] = e2e.stack.stats.llm.recent;
  assert.equal(request.stream, true);
  assert.deepEqual(request.body.messages.map((m) => m.role), ["system", "user"]);
  assert.match(request.body.messages[0].content, /Ava/);
  assert.deepEqual(unexpectedErrors(), []);
});

test("primary http500: the fallback answers with the history shown on the page, the record shows the primary's http_500", async () => {
  // Same controller options as the previous turn, so the same controller and its history.
  const history = await historyMessages();
  assert.ok(history.length >= 2, "the previous turn is in the history");
  const turnId = await startTurn({ input: "Book a table for two.", primary: "http500" });
  const shown = await settledTurn(turnId);
  assert.equal(shown.status, "accepted");
  assert.equal(shown.spokenKind, "answer");
  assert.match(shown.spokenLabel, /fallback/);
  assert.match(shown.spokenText, /^You said: Book a table for two\b/);
  assert.deepEqual(shown.attempts, [
    { route: "primary", result: "error", error: "http_500" },
    { route: "fallback", result: "accepted" },
  ]);
  assert.deepEqual(llmRequests(), { http500: 1, ok: 1 });
  // The primary (no shareHistory) got the input only; the fallback got exactly the history the page listed.
  const byScenario = Object.fromEntries(e2e.stack.stats.llm.recent.map((entry) => [entry.scenario, entry.body.messages]));
  assert.deepEqual(byScenario.http500.map((m) => m.role), ["system", "user"]);
  const [system, ...rest] = byScenario.ok;
  assert.equal(system.role, "system");
  assert.deepEqual(rest, [...history, { role: "user", content: "Book a table for two." }]);
  assert.deepEqual(unexpectedErrors(), []);
});

test("primary http401: the recovery text, reason non_retryable, and one LLM call only", async () => {
  const turnId = await startTurn({ input: "What time is it?", primary: "http401" });
  const shown = await settledTurn(turnId);
  assert.equal(shown.status, "exhausted");
  assert.equal(shown.reason, "non_retryable");
  assert.equal(shown.spokenKind, "recovery");
  assert.match(shown.spokenLabel, /Recovery text/);
  assert.equal(shown.spokenText, RECOVERY_TEXT);
  assert.deepEqual(shown.sentences, []);
  assert.deepEqual(shown.attempts, [{ route: "primary", result: "error", error: "http_401" }]);
  assert.deepEqual(llmRequests(), { http401: 1 });
  assert.deepEqual(unexpectedErrors(), []);
});

test("both routes hang, short deadline: the recovery text with reason deadline, requests aborted", async () => {
  const turnId = await startTurn({
    input: "Tell me a joke.", primary: "hang", fallback: "hang", attemptTimeoutMs: 400, turnDeadlineMs: 700,
  });
  const shown = await settledTurn(turnId);
  assert.equal(shown.status, "exhausted");
  assert.equal(shown.reason, "deadline");
  assert.equal(shown.spokenKind, "recovery");
  assert.equal(shown.spokenText, RECOVERY_TEXT);
  assert.deepEqual(shown.attempts.map((a) => `${a.route}:${a.result}`), ["primary:timeout", "fallback:timeout"]);
  // The routes pass the attempt's signal to fetch, so the server sees both requests go away.
  await eventually(() => e2e.stack.stats.llm.scenarios.hang?.aborted === 2, "two aborted hang requests");
  assert.deepEqual(unexpectedErrors(), []);
});

test("hang, then Interrupt: the turn is cancelled and nothing is spoken", async () => {
  const turnId = await startTurn({ input: "Read me the news.", primary: "hang", attemptTimeoutMs: 3000, turnDeadlineMs: 4000 });
  await page.locator(`#event-log li[data-turn="${turnId}"][data-type="attempt_started"]`).waitFor(WAIT);
  await page.click("#interrupt");
  const shown = await settledTurn(turnId);
  assert.equal(shown.status, "cancelled");
  assert.equal(shown.spokenKind, "none");
  assert.equal(shown.spokenText, "");
  assert.deepEqual(shown.attempts.map((a) => `${a.route}:${a.result}`), ["primary:cancelled"]);
  assert.deepEqual(shown.events, ["turn_started", "attempt_started", "attempt_finished", "cancelled"]);
  await eventually(() => e2e.stack.stats.llm.scenarios.hang?.aborted === 1, "the hang request aborted");
  assert.deepEqual(llmRequests(), { hang: 1 });
  assert.equal(await page.isEnabled("#run-turn"), true);
  assert.equal(await page.isEnabled("#interrupt"), false);
  // Nothing committed, so the turn left nothing in the history.
  assert.equal(await page.locator(`#history li[data-turn="${turnId}"]`).count(), 0);
  assert.deepEqual(unexpectedErrors(), []);
});

test("slow stream: sentences appear one by one while the turn runs, then the whole answer", async () => {
  const turnId = await startTurn({ input: "Tell me a short joke.", primary: "slow", slowTokenMs: 30 });
  const seen = await sentencesWhileStreaming(turnId, 2);
  const shown = await settledTurn(turnId);
  const expected = ["You said: Tell me a short joke.", ...MOCK_SENTENCES];
  assert.equal(shown.status, "accepted");
  assert.ok(seen >= 2 && seen < expected.length, `${seen} sentences were out while the turn ran`);
  assert.deepEqual(shown.sentences, expected);
  assert.equal(shown.spokenKind, "answer");
  assert.equal(shown.spokenText, expected.join(" "));
  assert.deepEqual(shown.events, ["turn_started", "attempt_started", "committed", "attempt_finished", "accepted"]);
  assert.deepEqual(llmRequests(), { slow: 1 });
  assert.deepEqual(unexpectedErrors(), []);
});

test("slow stream, then Interrupt: cancelled, no sentence after the interrupt, the request aborted", async () => {
  const turnId = await startTurn({ input: "Read me the news.", primary: "slow", slowTokenMs: 60 });
  await sentencesWhileStreaming(turnId, 1);
  // Click and count in one task: no sentence can slip in between.
  const atInterrupt = await page.evaluate(() => {
    document.querySelector("#interrupt").click();
    return [...document.querySelectorAll("#spoken-sentences li")].map((li) => li.textContent);
  });
  const shown = await settledTurn(turnId);
  assert.equal(shown.status, "cancelled");
  assert.equal(shown.spokenKind, "none");
  assert.match(shown.spokenLabel, /^Interrupted after \d+ sentences?: nothing more is spoken/);
  assert.equal(shown.spokenText, "");
  assert.deepEqual(shown.attempts.map((a) => `${a.route}:${a.result}`), ["primary:cancelled"]);
  assert.deepEqual(shown.events, ["turn_started", "attempt_started", "committed", "attempt_finished", "cancelled"]);
  // The server sees the stream go away before it ends; after that no text can come, and none was shown.
  await eventually(() => e2e.stack.stats.llm.scenarios.slow?.aborted === 1, "the slow request aborted");
  assert.equal(e2e.stack.stats.llm.scenarios.slow.completed, 0);
  const now = await page.$$eval("#spoken-sentences li", (lis) => lis.map((li) => li.textContent));
  assert.deepEqual(now, atInterrupt);
  assert.ok(atInterrupt.length >= 1 && atInterrupt.length < 4, `${atInterrupt.length} sentences before the interrupt`);
  assert.equal(await page.getAttribute("#spoken-sentences", "data-cut"), "true");
  // The history keeps what was spoken (setHeardText), not the rest of the answer...
  const history = await historyMessages();
  assert.deepEqual(history.slice(-2), [
    { role: "user", content: "Read me the news." },
    { role: "assistant", content: atInterrupt.join(" ") },
  ]);
  // ...and that is what the fallback gets on the next turn (same controller options, same controller).
  const next = await startTurn({ input: "And the weather?", primary: "http500" });
  assert.equal((await settledTurn(next)).status, "accepted");
  const fallback = e2e.stack.stats.llm.recent.find((entry) => entry.scenario === "ok");
  assert.deepEqual(fallback.body.messages.slice(1), [...history, { role: "user", content: "And the weather?" }]);
  assert.deepEqual(unexpectedErrors(), []);
});

test("stall_after, short chunk idle timeout: accepted with the partial text, one attempt, error stalled", async () => {
  const turnId = await startTurn({ input: "Tell me a short joke.", primary: "stall_after", chunkIdleTimeoutMs: 300 });
  const shown = await settledTurn(turnId);
  assert.equal(shown.status, "accepted");
  assert.equal(shown.spokenKind, "answer");
  assert.match(shown.spokenLabel, /primary route.*cut short/);
  // The mock sends 8 words and goes silent: one complete sentence; the cut tail is not spoken.
  assert.deepEqual(shown.sentences, ["You said: Tell me a short joke."]);
  assert.equal(shown.spokenText, "You said: Tell me a short joke.");
  assert.deepEqual(shown.attempts, [{ route: "primary", result: "accepted", error: "stalled" }]);
  assert.deepEqual(llmRequests(), { stall_after: 1 });
  await eventually(() => e2e.stack.stats.llm.scenarios.stall_after?.aborted === 1, "the stalled request aborted");
  assert.deepEqual((await historyMessages()).slice(-2), [
    { role: "user", content: "Tell me a short joke." },
    { role: "assistant", content: shown.spokenText },
  ]);
  assert.deepEqual(unexpectedErrors(), []);
});

test("no_first_chunk, short first-chunk timeout: the fallback answers", async () => {
  const turnId = await startTurn({ input: "What time is it in Tokyo?", primary: "no_first_chunk", firstChunkTimeoutMs: 300 });
  const shown = await settledTurn(turnId);
  assert.equal(shown.status, "accepted");
  assert.match(shown.spokenLabel, /fallback/);
  assert.deepEqual(shown.attempts, [
    { route: "primary", result: "timeout", error: "timeout" },
    { route: "fallback", result: "accepted" },
  ]);
  await eventually(() => e2e.stack.stats.llm.scenarios.no_first_chunk?.aborted === 1, "the silent request aborted");
  assert.deepEqual(unexpectedErrors(), []);
});

test("samePersona: a fallback with another persona is not tried (reason persona); one with the same is", async () => {
  const other = await startTurn({
    input: "Change my booking to nine.", primary: "http500", fallbackPolicy: "samePersona", fallbackPersona: "max",
  });
  const recovered = await settledTurn(other);
  assert.equal(recovered.status, "exhausted");
  assert.equal(recovered.reason, "persona");
  assert.equal(recovered.spokenKind, "recovery");
  assert.equal(recovered.spokenText, RECOVERY_TEXT);
  assert.deepEqual(recovered.attempts, [{ route: "primary", result: "error", error: "http_500" }]);
  assert.deepEqual(llmRequests(), { http500: 1 });

  const same = await startTurn({
    input: "Change my booking to nine.", primary: "http500", fallbackPolicy: "samePersona", fallbackPersona: "ava",
  });
  const answered = await settledTurn(same);
  assert.equal(answered.status, "accepted");
  assert.match(answered.spokenLabel, /fallback route \(persona ava\)/);
  assert.deepEqual(answered.attempts.map((a) => `${a.route}:${a.result}`), ["primary:error", "fallback:accepted"]);
  assert.deepEqual(unexpectedErrors(), []);
});

test("reconnect panel: server accepts then closes 4403 → reprovision, reprovision, stop", async () => {
  await page.click('[data-simulation="close4403"]');
  await page.locator('#reconnect-result[data-simulation="close4403"] #reconnect-decisions tr').first().waitFor(WAIT);
  const rows = await page.$$eval("#reconnect-decisions tr", (trs) => trs.map((tr) => ({ ...tr.dataset })));
  assert.deepEqual(rows, [
    { action: "reprovision", reason: "session_dead" },
    { action: "reprovision", reason: "session_dead" },
    { action: "stop", reason: "reprovision_limit" },
  ]);
  assert.deepEqual(unexpectedErrors(), []);
});

test("without the wasm module the page says so and the rest still works", async () => {
  const fresh = await openPage(e2e.browser);
  await fresh.page.route("**/pkg/turnguard_bg.wasm", (route) => route.fulfill({ status: 404, body: "" }));
  await fresh.page.goto(e2e.stack.url);
  const status = fresh.page.locator('#library-status[data-state="failed"]');
  await status.waitFor(WAIT);
  assert.match(await status.textContent(), /did not load .*npm run build/s);
  assert.equal(await fresh.page.isDisabled("#run-turn"), true);
  assert.equal(await fresh.page.isDisabled('[data-simulation="close4403"]'), true);
  await fresh.page.locator("#devstack-status.up").waitFor(WAIT);
  // The 404 itself is logged by Chromium; no script error may follow it.
  assert.deepEqual(fresh.errors.filter((error) => !/status of 404/.test(error)), []);
  await fresh.page.close();
});
