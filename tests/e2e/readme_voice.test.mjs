// The README's VoiceSession quick start, executed as written in Chromium with the autoplay policy a
// user has (Web Audio only after a gesture), with the README's backend (server.mjs) in front of
// the dev stack's mocks (LLM, live STT, TTS). The wasm is held back until after the click on Talk,
// so the click comes before `init()` settled: it must not be lost. The fake microphone speaks a
// sentence (espeak-ng) that the Gladia mock hears (pocketsphinx), the final becomes a turn, the
// answer is spoken; Hang up stops it all. Nothing may log Chrome's "The AudioContext was not
// allowed to start", which the first test shows this browser logs for the README's former
// pattern (a session made and started at page load).

import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { enginePython } from "../../www/devstack/engine.mjs";
import { startDevStack } from "../../www/devstack.mjs";
import { speechToolsMissing, speechWav } from "./demo-speech.mjs";
import { docBlock, startReadmeBackend } from "./doc_blocks.mjs";
import { openPage } from "./harness.mjs";
import { audioContextsOf, launchGestureChromium, loadPage } from "./readme_page.mjs";

const BUTTONS = '<button id="talk">Talk</button> <button id="hang-up">Hang up</button>';
const NOT_ALLOWED = /AudioContext was not allowed to start/;
const SPOKEN = "what is the weather like today";
const skip = speechToolsMissing() ?? (enginePython() ? false : "no .venv with pocketsphinx (npm run bootstrap makes it)");

let stack;
let browser;
let backend;
before(async () => {
  if (skip) return;
  stack = await startDevStack({ port: 0, upstream: null });
  await stack.warmSpeech();
  // The fake microphone says the sentence once, then silence.
  browser = await launchGestureChromium([`--use-file-for-fake-audio-capture=${speechWav(SPOKEN, { rate: 16000, padMs: 1500 })}%noloop`]);
  // Gladia's host is the mock's /speech prefix: pocketsphinx hears what the microphone says.
  backend = await startReadmeBackend(stack.url, docBlock("README.md", "tests/e2e/readme.test.mjs", "server"), { env: { GLADIA_API_URL: new URL("/speech", stack.url).href } });
});
after(async () => {
  await backend?.close();
  await browser?.close();
  await stack?.close();
});

const until = async (console, predicate, label) => {
  for (let i = 0; !predicate(console.filter((line) => line.type === "log").map((line) => line.text)); i += 1) {
    if (i > 600) throw new Error(`timed out waiting for ${label}\nconsole: ${JSON.stringify(console)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
};

test("this browser warns about the former pattern: a VoiceSession made and started at page load", { skip }, async () => {
  const { page, console } = await openPage(browser);
  await loadPage(page, console, stack.url, `
    import init, { VoiceSession } from "turnguard";
    await init();
    const session = new VoiceSession({
      routes: [{ name: "r", generate: async () => "Hello there." }],
      recoveryText: "Sorry.",
      synthesize: async () => new ArrayBuffer(0),
      onStateChange: (state) => console.log("state: " + state),
    });
    await session.start({ microphone: false });
    session.sendText("Hi");`);
  await until(console, (lines) => lines.includes("state: speaking") || console.some((line) => NOT_ALLOWED.test(line.text)), "the answer");
  await new Promise((resolve) => setTimeout(resolve, 300));
  assert.ok(console.some((line) => line.type === "warning" && NOT_ALLOWED.test(line.text)), `the warning: ${JSON.stringify(console)}`);
  assert.ok(audioContextsOf(console).some((context) => !context.madeAfterGesture && context.states[0] === "suspended"), "a context made before any gesture, suspended");
  await page.close();
});

test("the README VoiceSession quick start: a click on Talk before init() settled, the spoken question answered aloud, no autoplay warning, hang up", { skip }, async () => {
  const code = docBlock("README.md", "tests/e2e/readme_voice.test.mjs", "voice-quick-start");
  const { page, console, errors } = await openPage(browser);
  const logs = () => console.filter((line) => line.type === "log").map((line) => line.text);
  stack.reset();
  const wasm = await loadPage(page, console, stack.url, backend.address(code), { body: BUTTONS, holdWasm: true });

  // Loaded: nothing that needs a gesture was made.
  await wasm.requested;
  assert.deepEqual(audioContextsOf(console), [], "no AudioContext before the click");
  // The click comes while the wasm is held: init() has not settled.
  await page.click("#talk");
  await new Promise((resolve) => setTimeout(resolve, 300));
  assert.deepEqual(logs(), [], "nothing could start before the wasm");
  wasm.release();

  await until(console, (lines) => lines.includes("state: listening"), "the session to listen");
  await until(console, (lines) => lines.some((line) => line.startsWith("agent: You said: ")) && lines.includes("state: speaking"), "the spoken question's answer, aloud");
  const heard = logs().find((line) => line.startsWith("you: "));
  assert.match(heard.toLowerCase(), /^you: what is the weather like/, "the microphone's words");
  assert.equal(await page.locator("#talk").isDisabled(), true, "one session: Talk is off while it runs");
  const contexts = audioContextsOf(console);
  assert.ok(contexts.length >= 1, "the session's AudioContext");
  for (const context of contexts) {
    assert.ok(context.madeAfterGesture, `context ${context.n} was made after the click`);
    assert.equal(context.states[0], "running", `context ${context.n} ran from the start`);
  }
  const stats = stack.stats;
  assert.equal(stats.stt.modes["speech:normal"].provisionsWithKey, 1, "the server made the STT session with its key");
  assert.ok(stats.tts.requests >= 1, "the TTS went through the server");
  assert.ok(stats.llm.recent.length >= 1 && stats.llm.recent.every((call) => call.authorization), "the LLM calls carried the server's key");

  await page.click("#hang-up");
  await until(console, (lines) => lines.at(-1) === "state: stopped", "the session to stop");
  assert.equal(await page.locator("#talk").isDisabled(), false, "Talk again after Hang up");
  // A second session on the same AudioContext, then hang up again.
  await page.click("#talk");
  await until(console, (lines) => lines.filter((line) => line === "state: listening").length >= 2 && lines.at(-1) === "state: listening", "a second session");
  await page.click("#hang-up");
  await until(console, (lines) => lines.at(-1) === "state: stopped", "the second session to stop");
  for (const context of audioContextsOf(console)) assert.ok(context.madeAfterGesture && context.states[0] === "running", `context ${context.n}: made after a click, running`);
  assert.deepEqual(console.filter((line) => NOT_ALLOWED.test(line.text)), [], "no autoplay warning");
  assert.deepEqual(errors, []);
  await page.close();
});
