// The README's VoiceSession quick start, executed as written in Chromium, with the README's
// backend (server.mjs) in front of the dev stack's mocks (LLM, live STT, TTS): the typed question
// is answered aloud; then the app's buttons: Talk opens the (fake) microphone, whose audio the
// mock STT turns into a final that becomes a turn, and Hang up stops the session.

import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { VOICE_CHROMIUM_ARGS } from "../../bench/voice.mjs";
import { docBlock, startReadmeBackend } from "./doc_blocks.mjs";
import { openPage, runModule, startE2e } from "./harness.mjs";

const BUTTONS = '<button id="talk">Talk</button> <button id="hang-up">Hang up</button>';

let e2e;
let backend;
before(async () => {
  // A page served by the harness's route interception counts as outside the loopback address
  // space, and Chromium's Local Network Access checks then refuse its requests to loopback.
  e2e = await startE2e(VOICE_CHROMIUM_ARGS);
  backend = await startReadmeBackend(e2e.stack.url, docBlock("README.md", "tests/e2e/readme.test.mjs", "server"));
});
after(async () => {
  await backend?.close();
  await e2e?.close();
});

test("the README VoiceSession quick start: typed input answered aloud, then the microphone, then hang up", async () => {
  const code = docBlock("README.md", "tests/e2e/readme_voice.test.mjs", "voice-quick-start");
  const { page, console, errors } = await openPage(e2e.browser);
  const logs = () => console.filter((line) => line.type === "log").map((line) => line.text);
  const until = async (predicate, label) => {
    for (let i = 0; !predicate(logs()); i += 1) {
      if (i > 600) throw new Error(`timed out waiting for ${label}\nconsole: ${JSON.stringify(console)}\nerrors: ${JSON.stringify(errors)}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };
  e2e.stack.reset();
  await runModule(page, e2e.stack.url, backend.address(code), { body: BUTTONS });

  // Typed input first: one turn, answered, spoken, back to listening.
  await until((lines) => lines.includes("state: speaking") && lines.at(-1) === "state: listening", "the typed turn to be spoken");
  assert.deepEqual(logs().filter((line) => line.startsWith("state: ")), ["state: listening", "state: thinking", "state: speaking", "state: listening"]);
  assert.ok(logs().includes("you: What's the weather like?"), "the typed final is captioned");
  assert.ok(logs().some((line) => line.startsWith("agent: You said: What's the weather like")), "the answer's first sentence is spoken");
  const stats = () => e2e.stack.stats;
  assert.equal(stats().stt.modes.normal.provisionsWithKey, 1, "the server provisioned the STT session with its key");
  assert.ok(stats().tts.requests >= 1, "the TTS went through the server");
  assert.ok(stats().llm.recent.every((call) => call.authorization), "the LLM calls carried the server's key");

  // The microphone second: the fake microphone's audio becomes a final, and a turn.
  await page.click("#talk");
  await until((lines) => lines.some((line) => /^you: utterance \d+/.test(line)), "a final from the microphone");
  assert.ok(stats().stt.modes.normal.binaryFrames > 0, "microphone audio reached the STT");

  await page.click("#hang-up");
  await until((lines) => lines.at(-1) === "state: stopped", "the session to stop");
  assert.deepEqual(errors, []);
  await page.close();
});
