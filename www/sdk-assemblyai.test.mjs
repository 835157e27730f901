// The dev stack's AssemblyAI mock (devstack/mocks/assemblyai.mjs) checked by AssemblyAI's own JS SDK in
// Node: the SDK mints a temporary token, connects, streams audio and receives turns. The SDK only
// connects to wss: URLs, so the test puts a TLS proxy (a certificate made here with openssl, trusted
// by this process only) in front of the dev stack. `node --test www/sdk-assemblyai.test.mjs`.

import assert from "node:assert/strict";
import { test } from "node:test";
import { AssemblyAI } from "assemblyai";
import { speechPcm, wordErrorRate } from "../tests/e2e/demo-speech.mjs";
import { devStackForTests, opensslMissing, skipSpeech, sleep } from "./sdk-support.mjs";


let client;
let wssBase;
devStackForTests({
  tls: true,
  ready({ stack, tlsPort }) {
    client = new AssemblyAI({ apiKey: "dev-only-key", streamingBaseUrl: `http://127.0.0.1:${stack.port}` });
    wssBase = `wss://127.0.0.1:${tlsPort}/v3/ws`;
  },
});

/** A 100 ms chunk (five numbered 20 ms frames: the scripted recognizer reads the first number). */
function chunk(firstFrame) {
  const bytes = Buffer.alloc(3200);
  for (let i = 0; i < 5; i++) bytes.writeUInt32LE(firstFrame + i, i * 640);
  return bytes;
}

async function session(query = {}) {
  const token = await client.streaming.createTemporaryToken({ expires_in_seconds: 60 });
  const transcriber = client.streaming.transcriber({ websocketBaseUrl: wssBase, token, sampleRate: 16000, encoding: "pcm_s16le", formatTurns: true, maxConnectionRetries: 0, ...query });
  const turns = [];
  const errors = [];
  transcriber.on("turn", (turn) => turns.push(turn));
  transcriber.on("error", (error) => errors.push(error));
  const closed = new Promise((resolve) => transcriber.on("close", (code) => resolve(code)));
  return { token, transcriber, turns, errors, closed };
}

test("the SDK streams to the mock in real time and gets each turn unformatted, then formatted", { skip: opensslMissing }, async () => {
  const { token, transcriber, turns, errors } = await session();
  assert.match(token, /^[0-9a-f]{32}$/);
  const begin = await transcriber.connect();
  assert.ok(begin.id, "Begin");
  for (let n = 0; n < 10; n++) {
    transcriber.sendAudio(chunk(n * 5)); // 1 s: "w0 w25"
    await sleep(100);
  }
  await transcriber.close(true);
  const ends = turns.filter((turn) => turn.end_of_turn);
  assert.deepEqual(ends.map((turn) => [turn.turn_order, turn.turn_is_formatted, turn.transcript]), [[0, false, "w0 w25"], [0, true, "W0 w25."]]);
  assert.ok(turns.some((turn) => !turn.end_of_turn && turn.words.some((word) => !word.word_is_final)), "partial turns");
  assert.deepEqual(errors, []);
});

test("a token serves one session: reused, it is refused with 1008", { skip: opensslMissing }, async () => {
  const first = await session();
  await first.transcriber.connect();
  await first.transcriber.close(true);
  const again = client.streaming.transcriber({ websocketBaseUrl: wssBase, token: first.token, sampleRate: 16000, maxConnectionRetries: 0 });
  again.on("error", () => {});
  await assert.rejects(again.connect(), (error) => error.code === 1008 || /Unauthorized/.test(error.message));
});

test("audio faster than real time closes with 3007", { skip: opensslMissing }, async () => {
  const { transcriber, closed } = await session();
  await transcriber.connect();
  for (let n = 0; n < 20; n++) transcriber.sendAudio(chunk(n * 5)); // 2 s at once
  assert.equal(await closed, 3007);
});

test("espeak-ng speech through the SDK comes back as its words (pocketsphinx behind the mock)", { skip: opensslMissing || skipSpeech }, async () => {
  const sentence = "what is the weather like today";
  // Whole 100 ms chunks: a shorter tail is AssemblyAI's 3007, which would race the final.
  const speech = speechPcm(sentence);
  const pcm = Buffer.concat([speech, Buffer.alloc((3200 - (speech.length % 3200)) % 3200)]);
  // The SDK rewrites the query: the mock's switches go in the path.
  const base = wssBase.replace("/v3/ws", `/mock/${encodeURIComponent("recognizer=speech")}/v3/ws`);
  const { transcriber, turns } = await session({ websocketBaseUrl: base });
  await transcriber.connect();
  for (let offset = 0; offset < pcm.length; offset += 3200) {
    transcriber.sendAudio(pcm.subarray(offset, offset + 3200));
    await sleep(100); // real time: faster would be 3007
  }
  await transcriber.close(true);
  const heard = turns.filter((turn) => turn.end_of_turn && turn.turn_is_formatted).map((turn) => turn.transcript).join(" ");
  const wer = wordErrorRate(sentence, heard.toLowerCase().replace(/\./g, ""));
  console.log(`assemblyai mock heard "${heard}" for "${sentence}" (WER ${(wer * 100).toFixed(0)}%)`);
  assert.match(heard, /^What is the weather like/);
});
