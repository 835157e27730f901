// The "Talk to it" panel end to end: Chromium's fake microphone plays speech that espeak-ng made at
// test time, the dev stack recognises it (pocketsphinx), the agent answers, and audio comes out
// (an AnalyserNode on the output sees signal). Then every failure switch, each with the outcome the
// page must show, and a screenshot of the timeline under target/demo-timeline/ for each.
// One browser, one page, tests in order; every wait is on page state.

import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import path from "node:path";
import { after, before, test } from "node:test";
import { startDevStack } from "../../www/devstack.mjs";
import { enginePython } from "../../www/devstack/engine.mjs";
import { launchChromium } from "./harness.mjs";
import { speechToolsMissing, speechWav, wordErrorRate } from "./demo-speech.mjs";

const skip = speechToolsMissing() ?? (enginePython() ? false : "no .venv with pocketsphinx (npm run bootstrap makes it)");
const SPOKEN = "what is the weather like today";
const SHOTS = path.resolve("target/demo-timeline");
const WAIT = { timeout: 20_000 };
// Chromium logs each HTTP error response; the injected failures cause these.
const EXPECTED_ERROR = /^Failed to load resource: the server responded with a status of (401|404|429|500)\b|WebSocket connection to .* failed/;

let stack;
let browser;
let page;
const errors = [];

before(async () => {
  if (skip) return;
  stack = await startDevStack({ port: 0, upstream: null });
  // Silence, the sentence, then silence: played once (%noloop) as the microphone. The file starts
  // when the page opens the device, before the capture worklet runs: 2.5 s of lead-in covers that
  // set-up even when the audio output starts slowly (1 s lost the first words under PulseAudio).
  // Ava's weather answer (about 6 s spoken) is still playing when the reopened microphone speaks.
  const wav = speechWav(SPOKEN, { rate: 16000, padMs: 2500 });
  browser = await launchChromium([`--use-file-for-fake-audio-capture=${wav}%noloop`]);
  page = await browser.newPage({ viewport: { width: 1100, height: 900 } });
  page.on("console", (message) => message.type() === "error" && errors.push(message.text()));
  page.on("pageerror", (error) => errors.push(error.message));
  await page.goto(stack.url);
  await page.locator('#library-status[data-state="ready"]').waitFor(WAIT);
  await page.locator("#talk-controls:not([disabled])").waitFor(WAIT);
  mkdirSync(SHOTS, { recursive: true });
});

after(async () => {
  await browser?.close();
  await stack?.close();
});

async function shot(name) {
  await page.waitForTimeout(300); // one redraw of the timeline
  // The box, not the SVG: the SVG is replaced at each redraw.
  await page.locator("#timeline").screenshot({ path: path.join(SHOTS, `${name}.png`) });
}

async function setSwitches(on = []) {
  for (const input of await page.locator("[data-failure]").all()) {
    const name = await input.getAttribute("data-failure");
    await input.setChecked(on.includes(name));
  }
}

/** The id the current session gives its `n`-th turn from now (1: the next one): `<sessionId>:turn-<k>`. */
const nextTurnId = (n = 1) =>
  page.evaluate((n) => {
    const { sessionId } = window.__demoVoice.agent;
    const started = window.__demoVoice.entries.filter((e) => e.kind === "turn" && e.event.type === "turn_started" && e.event.turnId.startsWith(`${sessionId}:`));
    return `${sessionId}:turn-${started.length + n}`;
  }, n);

/** Types an utterance with the switches `on`; resolves with the settled turn as the page shows it. */
async function typedTurn(text, on = []) {
  await setSwitches(on);
  const turnId = await nextTurnId();
  await page.fill("#say-text", text);
  await page.click("#say-button");
  await page.locator(`#answer[data-settled="${turnId}"]`).waitFor(WAIT);
  return turnInfo(turnId);
}

function turnInfo(turnId) {
  return page.evaluate((id) => {
    const answer = document.querySelector("#answer");
    const events = window.__demoVoice.entries.filter((e) => e.kind === "turn" && e.event.turnId === id).map((e) => e.event);
    return {
      turnId: id,
      kind: answer.dataset.kind,
      status: answer.dataset.status,
      reason: answer.dataset.reason,
      text: answer.textContent,
      attempts: events.filter((e) => e.type === "attempt_finished").map((e) => `${e.route}:${e.result}${e.error ? `:${e.error}` : ""}`),
      error: document.querySelector("#talk-error").dataset.code ?? "",
    };
  }, turnId);
}

/** Waits until the agent is back to listening with its audio played out. */
async function quiet() {
  await page.locator('#agent-state[data-state="listening"]').waitFor(WAIT);
}

/** Restarts the STT connection and waits until the new one reaches `state`. */
async function restartSttUntil(state, timeout = 30_000) {
  const from = await page.evaluate(() => window.__demoVoice.entries.length);
  await page.click("#restart-stt");
  await page.waitForFunction(
    ([start, wanted]) => window.__demoVoice.entries.slice(start).some((e) => e.kind === "stt_state" && e.state === wanted),
    [from, state],
    { timeout },
  );
}

const peak = () => page.evaluate(() => Number(document.querySelector("#talk").dataset.peak ?? 0));
const resetPeak = () => page.evaluate(() => (document.querySelector("#talk").dataset.peak = "0"));

test("the panel says which engines run: pocketsphinx and espeak-ng", { skip }, async () => {
  assert.equal(await page.getAttribute("#engines", "data-stt"), "pocketsphinx");
  assert.equal(await page.getAttribute("#engines", "data-tts"), "espeak-ng");
  assert.equal(await page.isHidden("#audio-banner"), true, "autoplay is allowed in this browser: no banner");
});

test("real speech in, real speech out: the fake microphone's words become a final caption, the agent answers aloud", { skip }, async () => {
  await resetPeak();
  await page.click("#mic-button");
  await page.locator('#caption[data-final="true"]').waitFor({ timeout: 30_000 });
  const heard = await page.textContent("#caption");
  const wer = wordErrorRate(SPOKEN, heard);
  console.log(`fake microphone: heard "${heard}" for "${SPOKEN}" (WER ${(wer * 100).toFixed(0)}%)`);
  assert.match(heard, /what is the weather/);
  const first = `${await page.evaluate(() => window.__demoVoice.agent.sessionId)}:turn-1`;
  await page.locator(`#answer[data-settled="${first}"]`).waitFor(WAIT);
  const turn = await turnInfo(first);
  assert.equal(turn.status, "accepted");
  assert.match(turn.text, /weather/, "Ava answers about the weather");
  await page.waitForFunction(() => Number(document.querySelector("#talk").dataset.peak ?? 0) > 0.05, null, WAIT);
  await quiet();
  await shot("real-speech");
});

test("primary 500: the fallback (Max) answers", { skip }, async () => {
  const turn = await typedTurn("what is the weather like", ["primary500"]);
  assert.equal(turn.status, "accepted");
  assert.deepEqual(turn.attempts, ["primary:error:http_500", "fallback:accepted"]);
  assert.match(turn.text, /sunny/);
  await quiet();
  await shot("primary-500");
});

test("primary times out: the fallback answers after the attempt timeout", { skip }, async () => {
  const turn = await typedTurn("tell me a joke", ["primaryTimeout"]);
  assert.deepEqual(turn.attempts, ["primary:timeout:timeout", "fallback:accepted"]);
  assert.match(turn.text, /barged in/, "Max's joke");
  await quiet();
  await shot("primary-timeout");
});

test("primary 401: the recovery text, no fallback", { skip }, async () => {
  const turn = await typedTurn("what is your name", ["primary401"]);
  assert.equal(turn.kind, "recovery");
  assert.equal(turn.reason, "non_retryable");
  assert.deepEqual(turn.attempts, ["primary:error:http_401"]);
  await quiet();
  await shot("primary-401");
});

test("primary 500 with a slow fallback: the slow stream is still the answer, sentence by sentence", { skip }, async () => {
  const turn = await typedTurn("hello there", ["primary500", "fallbackSlow"]);
  assert.equal(turn.status, "accepted");
  assert.deepEqual(turn.attempts, ["primary:error:http_500", "fallback:accepted"]);
  assert.match(turn.text, /Great to hear you/);
  await quiet();
  await shot("fallback-slow");
});

test("the stream stalls after its first sentence: accepted with that sentence, error stalled", { skip }, async () => {
  const turn = await typedTurn("what can you do", ["streamStalls"]);
  assert.equal(turn.status, "accepted");
  assert.deepEqual(turn.attempts, ["primary:accepted:stalled"]);
  assert.equal(turn.text, "I answer short questions.");
  await quiet();
  await shot("stream-stalls");
});

test("TTS 500 on the first sentence: that sentence is skipped, the turn goes on and is heard", { skip }, async () => {
  await resetPeak();
  const turn = await typedTurn("what is the weather like", ["tts500"]);
  assert.equal(turn.status, "accepted");
  await quiet();
  assert.equal(await page.getAttribute("#talk-error", "data-code"), "tts_failed");
  assert.ok((await peak()) > 0.05, "the later sentences played");
  await shot("tts-500");
});

test("TTS hangs on the first sentence: it times out, the rest is spoken", { skip }, async () => {
  await resetPeak();
  await typedTurn("tell me a joke", ["ttsHang"]);
  await page.locator('#talk-error[data-code="tts_timeout"]').waitFor(WAIT);
  await quiet();
  assert.ok((await peak()) > 0.05, "the later sentences played");
  await shot("tts-hang");
});

test("barge-in while speaking: silence at once, the heard part marked, the history gets only that", { skip }, async () => {
  await setSwitches([]);
  await page.fill("#say-text", "what is the weather like");
  await page.click("#say-button");
  await page.locator('#agent-state[data-state="speaking"]').waitFor(WAIT);
  await page.waitForTimeout(700);
  await page.click("#barge-in");
  await page.locator('#answer[data-kind="cut"]').waitFor(WAIT);
  const bargeIn = await page.evaluate(() => window.__demoVoice.entries.filter((e) => e.kind === "barge_in").at(-1));
  assert.equal(bargeIn.cause, "button");
  const heard = await page.getAttribute("#answer", "data-heard");
  const full = await page.textContent("#answer");
  assert.ok(full.startsWith(heard) && heard.length < full.length, `heard "${heard}" is a strict prefix of "${full}"`);
  await page.waitForTimeout(100);
  await resetPeak();
  await page.waitForTimeout(600);
  assert.ok((await peak()) < 0.01, "nothing is played after the barge-in");
  await shot("barge-in");
});

test("talking over the answer: the microphone's speech pauses, then cuts it, and its final starts the next turn", { skip }, async () => {
  await setSwitches([]);
  await quiet();
  const turns = () => page.evaluate(() => window.__demoVoice.entries.filter((e) => e.kind === "turn" && e.event.type === "turn_started").length);
  const before = await turns();
  const [spoken, next] = [await nextTurnId(1), await nextTurnId(2)];
  await page.fill("#say-text", "what is the weather like");
  await page.click("#say-button");
  await page.locator('#agent-state[data-state="speaking"]').waitFor(WAIT);
  // Reopening the microphone is a new capture, which plays the fake microphone's file again: the
  // user talks over the agent.
  await page.click("#mic-button");
  await page.locator('#answer[data-kind="cut"]').waitFor(WAIT);
  const cut = await page.evaluate(() => window.__demoVoice.entries.filter((e) => e.kind === "barge_in").at(-1));
  assert.equal(cut.turnId, spoken, "the spoken answer was the one cut");
  assert.ok(["voice", "partial", "final"].includes(cut.cause), `cut by the user's speech (${cut.cause})`);
  const paused = await page.evaluate((turnId) => window.__demoVoice.entries.some((e) => e.event?.type === "paused" && e.event.turnId === turnId), spoken);
  assert.ok(paused, "the user's voice paused the agent before the cut");
  // The session paused it by suspending the page's context: no "Enable audio" banner for that.
  assert.equal(await page.isHidden("#audio-banner"), true, "a pause for the user's voice asks for no click");
  await page.waitForFunction((n) => window.__demoVoice.entries.filter((e) => e.kind === "turn" && e.event.type === "turn_started").length > n, before + 1, WAIT);
  // With preemptive attempts a turn starts at the guess, before its final: its caption is
  // whole once the turn settles.
  await page.locator(`#answer[data-settled="${next}"]`).waitFor(WAIT);
  assert.match(await page.textContent("#caption"), /weather/);
  await quiet();
  await shot("voice-barge-in");
});

test("a suspended audio context shows the banner; Enable audio resumes it", { skip }, async () => {
  await page.evaluate(() => window.__demoVoice.agent.player.context.suspend());
  await page.locator("#audio-banner").waitFor({ state: "visible", ...WAIT });
  await page.click("#enable-audio");
  await page.locator("#audio-banner").waitFor({ state: "hidden", ...WAIT });
  assert.equal(await page.evaluate(() => window.__demoVoice.agent.player.context.state), "running");
});

test("provisioning 429 twice: provision() is retried after a backoff and the STT opens", { skip }, async () => {
  await setSwitches(["gladia.provision429"]);
  const from = await page.evaluate(() => window.__demoVoice.entries.length);
  await page.click("#restart-stt");
  await page.waitForFunction((start) => window.__demoVoice.entries.slice(start).some((e) => e.kind === "stt_state" && e.state === "open"), from, WAIT);
  // VoiceSession's provision_finished events: the status an app's provision() error carried, or ok.
  const provisions = await page.evaluate((start) => window.__demoVoice.entries.slice(start).filter((e) => e.kind === "provision").map((e) => (e.ok ? "ok" : e.status)), from);
  assert.deepEqual(provisions, [429, 429, "ok"]);
  await shot("provision-429");
});

test("STT drops (1006): reconnects after a backoff and is open again", { skip }, async () => {
  await setSwitches(["gladia.drop"]);
  const from = await page.evaluate(() => window.__demoVoice.entries.length);
  await page.click("#restart-stt");
  await page.waitForFunction((start) => {
    const states = window.__demoVoice.entries.slice(start).filter((e) => e.kind === "stt_state").map((e) => e.state);
    const backoff = states.indexOf("backoff");
    return backoff > 0 && states.slice(backoff).includes("open");
  }, from, WAIT);
  await shot("stt-drop-1006");
});

test("STT accept-then-4403: re-provisions twice, then the transcriber fails (reprovision_limit)", { skip }, async () => {
  await setSwitches(["gladia.close4403"]);
  await restartSttUntil("failed");
  assert.equal(await page.getAttribute("#talk-error", "data-code"), "reprovision_limit");
  await shot("stt-4403");
});

test("STT dead token (404 on every upgrade, none ever opened): the transcriber ends failed (connect_failed)", { skip }, async () => {
  await setSwitches(["gladia.upgradeRefused"]);
  await restartSttUntil("failed");
  assert.equal(await page.getAttribute("#talk-error", "data-code"), "connect_failed");
  await shot("stt-dead-token");
});

test("no unexpected console or page errors", { skip }, async () => {
  assert.deepEqual(errors.filter((error) => !EXPECTED_ERROR.test(error)), []);
  await page.locator("#talk").screenshot({ path: path.join(SHOTS, "panel.png") });
});
