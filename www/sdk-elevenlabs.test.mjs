// The dev stack's ElevenLabs Scribe realtime mock (devstack/mocks/elevenlabs.mjs) checked by ElevenLabs'
// own JS client (`@elevenlabs/client`'s `Scribe.connect`, whose `baseUri` points anywhere) in Node:
// a single-use token from the mock, `session_started`, base64 chunks, partial and committed
// transcripts (with timestamps), a manual commit, and a reused token refused with `auth_error`.
// `node --test www/sdk-elevenlabs.test.mjs`.

import assert from "node:assert/strict";
import { test } from "node:test";
import { WebSocket as NodeWebSocket } from "ws";
import { speechPcm, wordErrorRate } from "../tests/e2e/demo-speech.mjs";
import { devStackForTests, skipSpeech, sleep } from "./sdk-support.mjs";

// The client uses the global WebSocket, which Node 20 has only behind a flag.
globalThis.WebSocket ??= NodeWebSocket;
const { Scribe, AudioFormat, CommitStrategy, RealtimeEvents } = await import("@elevenlabs/client");

const env = devStackForTests();

/** The app's backend: a single-use token. */
async function token() {
  const response = await fetch(`http://127.0.0.1:${env.stack.port}/v1/single-use-token/realtime_scribe`, { method: "POST", headers: { "xi-api-key": "dev-only-key" } });
  assert.equal(response.status, 200);
  return (await response.json()).token;
}

/** A 20 ms frame whose first four bytes are `number` (the scripted recognizer's words come from them). */
function frame(number) {
  const bytes = Buffer.alloc(640);
  bytes.writeUInt32LE(number, 0);
  return bytes.toString("base64");
}

function connect(t, switches, commitStrategy = CommitStrategy.VAD) {
  const connection = Scribe.connect({
    token: t,
    modelId: "scribe_v2_realtime",
    baseUri: `ws://127.0.0.1:${env.stack.port}/mock/${encodeURIComponent(switches)}`,
    audioFormat: AudioFormat.PCM_16000,
    sampleRate: 16000,
    commitStrategy,
    includeTimestamps: true,
  });
  const messages = [];
  for (const event of Object.values(RealtimeEvents)) connection.on(event, (data) => messages.push([event, data]));
  const opened = new Promise((resolve) => connection.on(RealtimeEvents.SESSION_STARTED, resolve));
  return { connection, messages, opened };
}

const of = (messages, kind) => messages.filter(([event]) => event === kind).map(([, data]) => data);

test("the client gets session_started, partials and each commit in both forms, VAD and manual", async () => {
  const { connection, messages, opened } = connect(await token(), "mock_key=sdk-el");
  await opened;
  for (let n = 0; n < 60; n++) connection.send({ audioBase64: frame(n) }); // w0 w25, then 10 frames of w50
  await sleep(200);
  connection.commit();
  await sleep(300);
  connection.close();
  assert.deepEqual(of(messages, RealtimeEvents.COMMITTED_TRANSCRIPT).map((data) => data.text), ["w0 w25", "w50"]);
  const timed = of(messages, RealtimeEvents.COMMITTED_TRANSCRIPT_WITH_TIMESTAMPS);
  assert.deepEqual(timed.map((data) => [data.text, data.words.at(-1).end]), [["w0 w25", 1], ["w50", 1.2]]);
  assert.ok(of(messages, RealtimeEvents.PARTIAL_TRANSCRIPT).length >= 2, "partials");
  const stats = (await (await fetch(`http://127.0.0.1:${env.stack.port}/__stats`)).json()).elevenlabs.keys["sdk-el"];
  assert.deepEqual([stats.frames, stats.commits, stats.badChunks, stats.refused], [60, 1, 0, 0]);
});

test("a token opens one connection: reused, it gets auth_error and close 1008", async () => {
  const t = await token();
  const first = connect(t, "mock_key=sdk-el-reuse");
  await first.opened;
  first.connection.close();
  const again = connect(t, "mock_key=sdk-el-reuse");
  const closed = new Promise((resolve) => again.connection.on(RealtimeEvents.CLOSE, resolve));
  await closed;
  assert.equal(of(again.messages, RealtimeEvents.AUTH_ERROR).length, 1);
});

test("espeak-ng speech through the client comes back as its words (pocketsphinx behind the mock)", { skip: skipSpeech }, async () => {
  const sentence = "what is the weather like today";
  const pcm = speechPcm(sentence);
  const { connection, messages, opened } = connect(await token(), "recognizer=speech");
  await opened;
  for (let offset = 0; offset < pcm.length; offset += 3200) {
    connection.send({ audioBase64: pcm.subarray(offset, offset + 3200).toString("base64") });
    await sleep(20);
  }
  connection.commit();
  const deadline = Date.now() + 15000;
  while (of(messages, RealtimeEvents.COMMITTED_TRANSCRIPT).filter((data) => data.text).length === 0 && Date.now() < deadline) await sleep(50);
  connection.close();
  const heard = of(messages, RealtimeEvents.COMMITTED_TRANSCRIPT).map((data) => data.text).filter(Boolean).join(" ");
  const wer = wordErrorRate(sentence, heard.toLowerCase());
  console.log(`elevenlabs mock heard "${heard}" for "${sentence}" (WER ${(wer * 100).toFixed(0)}%)`);
  assert.match(heard, /what is the weather/);
});
