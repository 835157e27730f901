// The README's VoiceSession quick start, executed as written in Chromium against the dev stack
// (mock STT, LLM and TTS): its last console line must be the one its `// →` comment promises, and
// what it logs must show an answer that was spoken, cut, and kept in history as heard.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { after, before, test } from "node:test";
import { VOICE_CHROMIUM_ARGS } from "../../bench/voice.mjs";
import { openPage, runModule, startE2e } from "./harness.mjs";

const readme = readFileSync(new URL("../../README.md", import.meta.url), "utf8");

function quickStart() {
  const section = readme.slice(readme.indexOf("## VoiceSession quick start"));
  const match = /```js\n([\s\S]*?)```/.exec(section);
  assert.ok(match, "the README has a js block under ## VoiceSession quick start");
  const code = match[1];
  const promised = /^\/\/ → (.*)$/m.exec(code);
  assert.ok(promised, "the quick start says what it prints with a `// →` line");
  return { code, expected: promised[1].trim() };
}

let e2e;
before(async () => {
  // A page served by the harness's route interception counts as outside the loopback address
  // space, and Chromium's Local Network Access checks then refuse its WebSocket to the dev stack.
  e2e = await startE2e(VOICE_CHROMIUM_ARGS);
});
after(async () => {
  await e2e?.close();
});

test("the README VoiceSession quick start runs as written and prints what it promises", async () => {
  const { code, expected } = quickStart();
  const { page, console, errors } = await openPage(e2e.browser);
  try {
    await runModule(page, e2e.stack.url, code);
  } catch (error) {
    throw new Error(`${error.message}\nconsole: ${JSON.stringify(console)}\nerrors: ${JSON.stringify(errors)}`);
  }
  const logs = console.filter((line) => line.type === "log").map((line) => line.text);
  assert.equal(logs.at(-1), expected);
  const states = logs.filter((line) => line.startsWith("state: ")).map((line) => line.slice(7));
  assert.deepEqual(states, ["listening", "thinking", "speaking", "listening", "stopped"]);
  assert.ok(logs.includes("user: What's the weather like?"), "the typed final is captioned");
  const heard = logs.find((line) => line.startsWith("heard: ")).slice(7);
  const full = "You said: What's the weather like?.";
  assert.ok(heard.length > 0 && full.startsWith(heard) && heard.length < full.length, `heard "${heard}" is a cut prefix of the first sentence`);
  assert.deepEqual(errors, []);
  assert.ok(e2e.stack.stats.tts.requests >= 1, "the TTS was asked");
  await page.close();
});
