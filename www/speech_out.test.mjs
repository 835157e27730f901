// Tests for the dev stack's streamed OpenAI-compatible speech endpoint (www/devstack/speech_out.mjs).
// Run with: node --test www/speech_out.test.mjs

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { startDevStack } from "./devstack.mjs";
import { createResampler } from "./devstack/speech_out.mjs";
import { espeakAvailable } from "./devstack/tts.mjs";

let stack;
let base;

before(async () => {
  stack = await startDevStack({ port: 0 });
  base = stack.url.replace(/\/$/, "");
});
after(() => stack.close());

function speak(path, body, signal) {
  return fetch(`${base}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: "tts-1", voice: "alloy", response_format: "pcm", ...body }),
    signal,
  });
}

async function readAll(response) {
  const chunks = [];
  for await (const chunk of response.body) chunks.push(Buffer.from(chunk));
  return { bytes: Buffer.concat(chunks), reads: chunks.length };
}

describe("/v1/audio/speech", () => {
  test("streams a tone of 60 ms a character as 24 kHz pcm16 in chunks", async () => {
    const response = await speak("/v1/audio/speech?chunkBytes=960", { input: "Hello there." });
    assert.equal(response.status, 200);
    assert.equal(response.headers.get("content-type"), "audio/pcm");
    const { bytes, reads } = await readAll(response);
    assert.equal(bytes.length, 12 * 60 * 24 * 2); // 720 ms at 24 kHz, 2 bytes a sample
    assert.ok(reads > 1, "more than one chunk");
  });

  test("streams espeak-ng speech for an espeak-ng voice", { skip: !espeakAvailable() && "no espeak-ng" }, async () => {
    const response = await speak("/v1/audio/speech", { voice: "en-us", input: "What is the weather like today?" });
    assert.equal(response.headers.get("x-tts-engine"), "espeak-ng");
    const { bytes } = await readAll(response);
    assert.equal(bytes.length % 2, 0);
    assert.ok(bytes.length / 48000 > 0.8, "about a second or more of speech");
  });

  test("http500 answers 500; a wrong format or no input answers 400", async () => {
    assert.equal((await speak("/v1/audio/speech/http500", { input: "Hi." })).status, 500);
    assert.equal((await speak("/v1/audio/speech", { input: "Hi.", response_format: "mp3" })).status, 400);
    assert.equal((await speak("/v1/audio/speech", { input: "" })).status, 400);
  });

  test("stall sends about half the audio and then nothing until the client aborts", async () => {
    const controller = new AbortController();
    const response = await speak("/v1/audio/speech/stall?chunkBytes=960", { input: "One two three four." }, controller.signal);
    const reader = response.body.getReader();
    let received = 0;
    for (;;) {
      const next = await Promise.race([reader.read(), new Promise((resolve) => setTimeout(() => resolve("quiet"), 300))]);
      if (next === "quiet") break;
      assert.ok(!next.done, "the stream never ends by itself");
      received += next.value.length;
    }
    const whole = 19 * 60 * 48;
    assert.ok(received > 0 && received < whole, `${received} of ${whole} bytes`);
    controller.abort();
  });

  test("hang answers nothing before the client aborts", async () => {
    const controller = new AbortController();
    const answer = speak("/v1/audio/speech/hang", { input: "Hi." }, controller.signal).then(() => "answered", () => "aborted");
    const first = await Promise.race([answer, new Promise((resolve) => setTimeout(() => resolve("nothing"), 300))]);
    assert.equal(first, "nothing");
    controller.abort();
    assert.equal(await answer, "aborted");
  });

  test("the resampler carries torn samples and its position across chunks", () => {
    const input = Buffer.alloc(22050 * 2);
    for (let i = 0; i < 22050; i += 1) input.writeInt16LE(i % 1000, i * 2);
    const whole = createResampler(22050, 24000)(input);
    const resample = createResampler(22050, 24000);
    const parts = [];
    for (let at = 0; at < input.length; at += 333) parts.push(resample(input.subarray(at, at + 333)));
    const pieced = Buffer.concat(parts);
    assert.ok(Math.abs(pieced.length / 2 - 24000) <= 2);
    // The same samples, up to one step of rounding where the float position drifts.
    for (let i = 0; i < Math.min(pieced.length, whole.length) - 1; i += 2) {
      assert.ok(Math.abs(pieced.readInt16LE(i) - whole.readInt16LE(i)) <= 1, `sample ${i / 2}`);
    }
  });
});
