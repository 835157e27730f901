// The dev stack's OpenAI Realtime transcription mock (devstack/mocks/openai.mjs) checked by OpenAI's own
// JS SDK in Node (`openai`: `realtime.clientSecrets.create` and `OpenAIRealtimeWS`): the SDK mints a
// client secret, connects with it, streams 24 kHz base64 audio and receives the transcription
// events. The SDK only connects to wss: URLs, so the test puts a TLS proxy (a certificate made here
// with openssl, trusted by this process only) in front of the dev stack.
// `node --test www/sdk-openai.test.mjs`.

import assert from "node:assert/strict";
import { test } from "node:test";
import OpenAI from "openai";
import { OpenAIRealtimeWS } from "openai/realtime/ws";
import { speechPcm, wordErrorRate } from "../tests/e2e/demo-speech.mjs";
import { devStackForTests, frame, opensslMissing, skipSpeech, sleep } from "./sdk-support.mjs";

let httpsBase;
const env = devStackForTests({ tls: true, ready: ({ tlsPort }) => (httpsBase = `https://127.0.0.1:${tlsPort}`) });

/** A client of the mock; `switches` go in the path (the SDK rewrites the socket URL's query). */
const clientWith = (apiKey, switches = "") =>
  new OpenAI({ apiKey, baseURL: `${httpsBase}${switches ? `/mock/${encodeURIComponent(switches)}` : ""}/v1`, maxRetries: 0 });

/** A 20 ms frame at 24 kHz whose first sample is `number` (the scripted recognizer's word). */
function frame24(number) {
  const bytes = Buffer.alloc(960);
  bytes.writeUInt16LE(number, 0);
  return bytes.toString("base64");
}

/** The backend mints a client secret; the SDK connects with it. Resolves once open. */
async function connect(switches = "") {
  const secret = await clientWith("dev-only-key").realtime.clientSecrets.create({
    expires_after: { anchor: "created_at", seconds: 600 },
    session: { type: "transcription", audio: { input: { format: { type: "audio/pcm", rate: 24000 }, transcription: { model: "gpt-4o-transcribe" }, turn_detection: { type: "server_vad" } } } },
  });
  const rt = new OpenAIRealtimeWS({ intent: "transcription" }, clientWith(secret.value, switches));
  const events = [];
  rt.on("event", (event) => events.push(event));
  rt.on("error", () => {});
  const closed = new Promise((resolve) => rt.socket.on("close", (code) => resolve(code)));
  await new Promise((resolve, reject) => {
    rt.socket.once("open", resolve);
    rt.socket.once("error", reject);
  });
  return { secret, rt, events, closed };
}

const ofType = (events, type) => events.filter((event) => event.type === type);

test("the SDK mints a secret, streams 24 kHz audio and gets committed items, deltas and completions", { skip: opensslMissing }, async () => {
  const { secret, rt, events } = await connect("mock_key=sdk-openai");
  assert.match(secret.value, /^ek_/);
  for (let n = 0; n < 50; n++) rt.send({ type: "input_audio_buffer.append", audio: frame24(n) }); // 1 s: "w0 w25"
  rt.send({ type: "input_audio_buffer.commit" });
  const deadline = Date.now() + 5000;
  while (ofType(events, "conversation.item.input_audio_transcription.completed").length < 1 && Date.now() < deadline) await sleep(20);
  rt.close();
  assert.equal(events[0].type, "session.created");
  const done = ofType(events, "conversation.item.input_audio_transcription.completed");
  assert.deepEqual(done.map((event) => event.transcript), ["w0 w25"]);
  const committed = ofType(events, "input_audio_buffer.committed");
  assert.equal(committed[0].item_id, done[0].item_id, "the completion names the committed item");
  assert.deepEqual(ofType(events, "conversation.item.input_audio_transcription.delta").map((event) => event.delta), ["w0", " w25"]);
  assert.equal(ofType(events, "input_audio_buffer.speech_stopped")[0].audio_end_ms, 1000);
  const stats = (await (await fetch(`http://127.0.0.1:${env.stack.port}/__stats`)).json()).openai.keys["sdk-openai"];
  assert.deepEqual([stats.headerAuth, stats.bytes], [1, 48000], "1 s of 24 kHz PCM16");
});

test("an expired client secret is refused at the handshake", { skip: opensslMissing }, async () => {
  const response = await fetch(`http://127.0.0.1:${env.stack.port}/v1/realtime/client_secrets?mock_expired=1`, { method: "POST", headers: { authorization: "Bearer k", "content-type": "application/json" }, body: "{}" });
  const { value } = await response.json();
  const rt = new OpenAIRealtimeWS({ intent: "transcription" }, clientWith(value));
  rt.on("error", () => {});
  const failed = await new Promise((resolve) => {
    rt.socket.once("open", () => resolve(false));
    rt.socket.once("error", () => resolve(true));
  });
  assert.ok(failed, "refused");
});

test("session_expired is an error event, then close 1001", { skip: opensslMissing }, async () => {
  const { events, closed } = await connect("mock_session_ms=100");
  assert.equal(await closed, 1001);
  assert.deepEqual(ofType(events, "error").map((event) => event.error.code), ["session_expired"]);
});

test("espeak-ng speech through the SDK comes back as its words (pocketsphinx behind the mock)", { skip: opensslMissing || skipSpeech }, async () => {
  const sentence = "what is the weather like today";
  const pcm16 = speechPcm(sentence);
  // The SDK takes 24 kHz: every 2 samples become 3 (linear), as the browser's encoder does.
  const samples = pcm16.length / 2;
  const pcm24 = Buffer.alloc(Math.floor((samples * 3) / 2) * 2);
  for (let j = 0; j * 2 < pcm24.length; j++) {
    const at = (j * 2) / 3;
    const i = Math.floor(at);
    const a = pcm16.readInt16LE(Math.min(i, samples - 1) * 2);
    const b = pcm16.readInt16LE(Math.min(i + 1, samples - 1) * 2);
    pcm24.writeInt16LE(Math.round(a + (b - a) * (at - i)), j * 2);
  }
  const { rt, events } = await connect("recognizer=speech");
  for (let offset = 0; offset < pcm24.length; offset += 4800) {
    rt.send({ type: "input_audio_buffer.append", audio: pcm24.subarray(offset, offset + 4800).toString("base64") });
    await sleep(100);
  }
  rt.send({ type: "input_audio_buffer.commit" });
  const deadline = Date.now() + 15000;
  while (!ofType(events, "conversation.item.input_audio_transcription.completed").some((event) => event.transcript) && Date.now() < deadline) await sleep(50);
  await sleep(300);
  rt.close();
  const heard = ofType(events, "conversation.item.input_audio_transcription.completed").map((event) => event.transcript).filter(Boolean).join(" ");
  const wer = wordErrorRate(sentence, heard.toLowerCase());
  console.log(`openai mock heard "${heard}" for "${sentence}" (WER ${(wer * 100).toFixed(0)}%)`);
  assert.match(heard, /what is the weather/);
});
