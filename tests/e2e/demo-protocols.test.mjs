// The demo with each speech-to-text protocol: Chromium's fake microphone speaks a sentence
// (espeak-ng, made at test time), the page's protocol selector picks each protocol,
// and the dev stack's mock of that protocol, with pocketsphinx behind it, hears it. One page per
// protocol: the fake device plays its file from the start each time a page opens it.

import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { startDevStack } from "../../www/devstack.mjs";
import { enginePython } from "../../www/devstack/engine.mjs";
import { launchChromium } from "./harness.mjs";
import { speechToolsMissing, speechWav, wordErrorRate } from "./demo-speech.mjs";

const skip = speechToolsMissing() ?? (enginePython() ? false : "no .venv with pocketsphinx (npm run bootstrap makes it)");
const SPOKEN = "what is the weather like today";
const WAIT = { timeout: 30_000 };

let stack;
let browser;

before(async () => {
  if (skip) return;
  stack = await startDevStack({ port: 0, upstream: null });
  await stack.warmSpeech();
  const wav = speechWav(SPOKEN, { rate: 16000, padMs: 2500 });
  browser = await launchChromium([`--use-file-for-fake-audio-capture=${wav}%noloop`]);
});

after(async () => {
  await browser?.close();
  await stack?.close();
});

for (const protocol of ["gladia", "deepgram", "assemblyai", "openai", "speechmatics", "soniox", "elevenlabs"]) {
  test(`${protocol}: the spoken sentence comes back word for word through the demo`, { skip }, async () => {
    const page = await browser.newPage();
    const errors = [];
    page.on("pageerror", (error) => errors.push(error.message));
    try {
      await page.goto(stack.url);
      await page.locator('#library-status[data-state="ready"]').waitFor(WAIT);
      await page.locator("#talk-controls:not([disabled])").waitFor(WAIT);
      await page.selectOption("#stt-protocol", protocol);
      await page.click("#mic-button");
      await page.locator('#caption[data-final="true"]').waitFor(WAIT);
      const heard = await page.textContent("#caption");
      console.log(`${protocol}: heard "${heard}" for "${SPOKEN}" (WER ${(wordErrorRate(SPOKEN, heard.toLowerCase().replace(/[.?]/g, "")) * 100).toFixed(0)}%)`);
      assert.match(heard.toLowerCase(), /^what is the weather like/);
      const stats = await (await fetch(new URL("/__stats", stack.url))).json();
      if (protocol === "deepgram") assert.ok(Object.values(stats.deepgram.keys).some((key) => key.bearer > 0 && key.finals > 0), "through the Deepgram mock, with a bearer token");
      if (protocol === "assemblyai") assert.ok(Object.values(stats.assemblyai.keys).some((key) => key.tokenAuth > 0 && key.turns > 0 && key.tooFast === 0), "through the AssemblyAI mock, never too fast");
      if (protocol === "openai") assert.ok(Object.values(stats.openai.keys).some((key) => key.subprotocolAuth > 0 && key.completed > 0 && key.badAudio === 0), "through the OpenAI mock, 24 kHz base64 audio");
      if (protocol === "speechmatics") assert.ok(Object.values(stats.speechmatics.keys).some((key) => key.jwtAuth > 0 && key.starts > 0 && key.utterances > 0 && key.audioBeforeStart === 0), "through the Speechmatics mock, audio after RecognitionStarted");
      if (protocol === "soniox") assert.ok(Object.values(stats.soniox.keys).some((key) => key.configs > 0 && key.endpoints + key.finished > 0 && key.badConfigs === 0), "through the Soniox mock, the key in the configuration");
      if (protocol === "elevenlabs") assert.ok(Object.values(stats.elevenlabs.keys).some((key) => key.chunks > 0 && key.committed > 0 && key.badChunks === 0), "through the ElevenLabs mock, base64 chunks");
      assert.deepEqual(errors, []);
    } finally {
      await page.close();
    }
  });
}
