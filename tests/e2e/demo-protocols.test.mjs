// The demo with each speech-to-text protocol in the dev stack's list: Chromium's fake microphone
// speaks a sentence (espeak-ng, made at test time), the page's protocol selector picks each
// protocol, and the dev stack's mock of that protocol, with pocketsphinx behind it, hears it. One
// page per protocol: the fake device plays its file from the start each time a page opens it.

import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { startDevStack } from "../../www/devstack.mjs";
import { loadDescriptors } from "../../www/devstack/protocols.mjs";
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

for (const { name: protocol } of await loadDescriptors()) {
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
      // The same counters for every protocol (www/devstack/ws_mock.mjs): through its mock, with its
      // credentials, never faster than it allows, nothing it could not read.
      const keys = Object.values(stats[protocol].keys);
      assert.ok(keys.some((key) => key.connections > 0 && key.refused === 0 && key.finals > 0 && key.tooFast === 0 && key.invalidMessages === 0), `through the ${protocol} mock: ${JSON.stringify(keys.map(({ connections, refused, finals, tooFast, invalidMessages }) => ({ connections, refused, finals, tooFast, invalidMessages })))}`);
      assert.deepEqual(errors, []);
    } finally {
      await page.close();
    }
  });
}
