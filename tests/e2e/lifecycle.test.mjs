// A VoiceSession under the browser's own faults (issue 25), in Chromium through the DevTools
// protocol: the page frozen and made to go on again (its JavaScript held by Debugger.pause) with a
// turn's deadline passing while frozen, the audio output suspended under an answer, and closed under
// one. After each, a new utterance is recognised and answered once. The utterances are 50 frames
// of 20 ms sent by the page (the dev stack's Gladia mock makes one final of every 32000 bytes),
// so each comes exactly when the test says.

import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { openPage, runModule, startE2e } from "./harness.mjs";

const LOOPBACK = ["--disable-features=LocalNetworkAccessChecks"];
const RECOVERY = "Sorry, could you say that again?";

let e2e;
let page;
let errors;
let cdp;

before(async () => {
  e2e = await startE2e(LOOPBACK);
  ({ page, errors } = await openPage(e2e.browser));
  cdp = await page.context().newCDPSession(page);
  await runModule(page, e2e.stack.url, `
    const log = (window.__log = { events: [], turns: [], accepted: [], recoveries: 0, errors: [], gestures: 0, contexts: [] });
    // The contexts the session makes, to suspend or close one under it as the browser would
    // (wrapped before the module loads: its bindings take the global constructor then).
    const Native = window.AudioContext;
    window.AudioContext = class extends Native {
      constructor(...args) {
        super(...args);
        log.contexts.push(this);
      }
    };
    const { default: init, VoiceSession } = await import("turnguard");
    await init();
    window.__routeDelayMs = 0;
    // The page's own heartbeat: a frozen page misses its beats.
    log.longestGapMs = 0;
    let lastBeat = performance.now();
    setInterval(() => {
      const now = performance.now();
      log.longestGapMs = Math.max(log.longestGapMs, now - lastBeat);
      lastBeat = now;
    }, 100);
    const session = (window.__session = new VoiceSession({
      sessionId: "life",
      provision: async ({ signal }) => {
        const body = JSON.stringify({ encoding: "wav/pcm", sample_rate: 16000, bit_depth: 16, channels: 1 });
        const response = await fetch("/stt/normal/v2/live", { method: "POST", signal, headers: { "content-type": "application/json" }, body });
        return response.json();
      },
      routes: [{
        name: "scripted",
        shareHistory: true,
        async generate({ input, signal }) {
          const delayMs = window.__routeDelayMs;
          if (delayMs) await new Promise((resolve) => setTimeout(resolve, delayMs));
          signal.throwIfAborted();
          return "Answer to " + input + ".";
        },
      }],
      recoveryText: ${JSON.stringify(RECOVERY)},
      controller: { turnDeadlineMs: 1500 },
      async synthesize(text, { signal }) {
        const response = await fetch("/tts", { method: "POST", signal, headers: { "content-type": "application/json" }, body: JSON.stringify({ text }) });
        return response.arrayBuffer();
      },
      onEvent: (event) => log.events.push(event),
      onTurn: (record) => log.turns.push({ turnId: record.turnId, status: record.status }),
      onSpeech: (turnId, text, info) => (info?.recovery ? (log.recoveries += 1) : log.accepted.push([turnId, text])),
      onError: (error) => log.errors.push(error.code),
      onNeedsGesture: () => {
        log.gestures += 1;
        session.resume();
      },
    }));
    window.__utter = () => {
      for (let i = 0; i < 50; i += 1) session.sendAudio(new Int16Array(320));
    };
    await session.start({ microphone: false });
  `);
});

after(async () => {
  await page?.evaluate(() => window.__session?.stop()).catch(() => {});
  await e2e?.close();
});

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const log = () => page.evaluate(() => window.__log);
const until = (predicate, arg, label) =>
  page.waitForFunction(predicate, arg, { timeout: 15_000 }).catch((error) => {
    throw new Error(`timed out waiting for ${label}: ${error.message}`);
  });

/** Speaks one utterance and waits until its turn was answered aloud; returns its turn id. */
async function utteranceAnsweredOnce(label) {
  const before = (await log()).turns.length;
  await page.evaluate(() => window.__utter());
  await until((n) => window.__log.turns.length > n, before, `${label}: the turn`);
  const { turns } = await log();
  const turn = turns[before];
  await until((id) => window.__log.events.some((e) => e.type === "playback_ended" && e.turnId === id), turn.turnId, `${label}: its speech`);
  await sleep(300);
  const after = await log();
  assert.equal(turn.status, "accepted", `${label}: ${JSON.stringify(turn)}`);
  const answers = after.accepted.filter(([turnId]) => turnId === turn.turnId);
  assert.equal(answers.length, 1, `${label}: one answer`);
  const started = after.events.filter((e) => e.type === "playback_started" && e.turnId === turn.turnId);
  assert.equal(started.length, 1, `${label}: spoken once`);
  return turn.turnId;
}

test("the session answers before any fault", async () => {
  await until(() => window.__session.state === "listening", null, "listening");
  await utteranceAnsweredOnce("first");
});

test("frozen while a turn thinks: its deadline passed, it ends with the recovery text once at wake; the next utterance is answered", async () => {
  await page.evaluate(() => (window.__routeDelayMs = 2500));
  const before = await log();
  await page.evaluate(() => window.__utter());
  await until(() => window.__session.state === "thinking", null, "thinking");
  // Headless Chromium keeps its pages visible, and Page.setWebLifecycleState freezes no visible
  // page: the page's JavaScript is held instead (Debugger.pause), which is what a freeze does to
  // it: no timer, no event, no message runs until it goes on.
  await cdp.send("Debugger.enable");
  await cdp.send("Debugger.pause");
  await sleep(2500); // past the 1500 ms deadline
  await cdp.send("Debugger.resume");
  await cdp.send("Debugger.disable");
  await until((n) => window.__log.turns.length > n, before.turns.length, "the frozen turn's end");
  const frozen = (await log()).turns[before.turns.length];
  assert.ok((await log()).longestGapMs > 2000, "the page was frozen: its heartbeat stopped");
  assert.equal(frozen.status, "exhausted", `the deadline ended it: ${JSON.stringify(frozen)}`);
  await until((n) => window.__log.recoveries > n, before.recoveries, "the recovery text");
  await page.evaluate(() => (window.__routeDelayMs = 0));
  await sleep(1500);
  const after = await log();
  assert.equal(after.recoveries, before.recoveries + 1, "the recovery text once");
  assert.ok(!after.accepted.some(([turnId]) => turnId === frozen.turnId), "no late answer for it");
  await utteranceAnsweredOnce("after the freeze");
});

test("the audio output suspended under an answer: a gesture is asked for, it goes on whole; the next utterance is answered", async () => {
  const before = await log();
  await page.evaluate(() => (window.__routeDelayMs = 0));
  await page.evaluate(() => window.__utter());
  await until(() => window.__session.state === "speaking", null, "speaking");
  await page.evaluate(() => window.__log.contexts.at(-1).suspend());
  await until((n) => window.__log.gestures > n, before.gestures, "onNeedsGesture");
  await until((n) => window.__log.events.filter((e) => e.type === "playback_ended").length > n, before.events.filter((e) => e.type === "playback_ended").length, "the answer's end");
  const ended = (await log()).events.filter((e) => e.type === "playback_ended").at(-1);
  assert.equal(ended.cut, false, `played whole after resume(): ${JSON.stringify(ended)}`);
  await utteranceAnsweredOnce("after the suspension");
});

test("the audio output closed under an answer: cut with what played, a new context; the next utterance is answered in it", async () => {
  await page.evaluate(() => window.__utter());
  await until(() => window.__session.state === "speaking", null, "speaking");
  const contexts = (await log()).contexts.length;
  await page.evaluate(() => window.__log.contexts.at(-1).close());
  await until(() => window.__log.events.some((e) => e.type === "output_closed"), null, "output_closed");
  const after = await log();
  assert.equal(after.events.find((e) => e.type === "output_closed").replaced, true);
  assert.equal(after.events.filter((e) => e.type === "barge_in").at(-1).cause, "output_closed");
  assert.equal(after.contexts.length, contexts + 1, "one new context");
  await utteranceAnsweredOnce("after the close");
  assert.deepEqual(errors, []);
});
