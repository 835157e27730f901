// The demo page (www/) in Chromium against the dev stack: it loads cleanly, its turn ladder shows
// the spoken text and the record for each fault scenario, and its reconnect panel shows the policy's
// decisions. Every wait is on page state; the tests share one page and run in order.

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

/** Sets the form and starts a turn; returns its id (the page sets it synchronously on submit). */
async function startTurn({ input, primary = "ok", fallback = "ok", attemptTimeoutMs = 1500, turnDeadlineMs = 4000 }) {
  e2e.stack.reset();
  await page.fill("#utterance", input);
  await page.selectOption("#primary-scenario", primary);
  await page.selectOption("#fallback-scenario", fallback);
  await page.fill("#attempt-timeout", String(attemptTimeoutMs));
  await page.fill("#turn-deadline", String(turnDeadlineMs));
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
      attempts: [...document.querySelectorAll("#record-attempts tr")].map((tr) => ({ ...tr.dataset })),
      events: [...document.querySelectorAll(`#event-log li[data-turn="${id}"]`)].map((li) => li.dataset.type),
    };
  }, turnId);
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
  assert.deepEqual(shown.attempts.map((a) => `${a.route}:${a.result}`), ["primary:accepted"]);
  assert.deepEqual(shown.events, ["turn_started", "attempt_started", "committed", "attempt_finished", "accepted"]);
  assert.deepEqual(llmRequests(), { ok: 1 });
  assert.deepEqual(unexpectedErrors(), []);
});

test("primary http500: the fallback answers, the record shows the primary's http_500", async () => {
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
