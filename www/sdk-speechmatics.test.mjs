// The dev stack's Speechmatics mock (devstack/mocks/speechmatics.mjs) checked by Speechmatics' own JS SDK
// in Node (`@speechmatics/real-time-client`'s `RealtimeClient`, whose `url` option points anywhere):
// a temporary key from the mock, `StartRecognition`/`RecognitionStarted`, audio receipted with
// `AudioAdded`, transcripts, `EndOfStream`/`EndOfTranscript`. `node --test www/sdk-speechmatics.test.mjs`.

import assert from "node:assert/strict";
import { test } from "node:test";
import { RealtimeClient } from "@speechmatics/real-time-client";
import { speechPcm, wordErrorRate } from "../tests/e2e/demo-speech.mjs";
import { devStackForTests, frame, skipSpeech, sleep } from "./sdk-support.mjs";

const env = devStackForTests();

/** The app's backend: a temporary key for the real-time API. */
async function temporaryKey(query = "") {
  const response = await fetch(`http://127.0.0.1:${env.stack.port}/v1/api_keys?type=rt${query}`, {
    method: "POST",
    headers: { authorization: "Bearer dev-only-key", "content-type": "application/json" },
    body: JSON.stringify({ ttl: 60, region: "eu", client_ref: "test" }),
  });
  assert.equal(response.status, 201);
  return (await response.json()).key_value;
}

function client(switches) {
  const sdk = new RealtimeClient({ url: `ws://127.0.0.1:${env.stack.port}/v2?${switches}` });
  const messages = [];
  sdk.addEventListener("receiveMessage", ({ data }) => messages.push(data));
  return { sdk, messages };
}

const TRANSCRIPTION = { audio_format: { type: "raw", encoding: "pcm_s16le", sample_rate: 16000 }, transcription_config: { language: "en", enable_partials: true, max_delay: 1.0, conversation_config: { end_of_utterance_silence_trigger: 0.5 } } };

test("the SDK starts a recognition, streams receipted audio and gets transcripts, utterance ends and EndOfTranscript", async () => {
  const { sdk, messages } = client("mock_key=sdk-sm");
  const started = await sdk.start(await temporaryKey(), TRANSCRIPTION);
  assert.equal(started.message, "RecognitionStarted");
  for (let n = 0; n < 60; n++) sdk.sendAudio(frame(n)); // w0 w25, then 10 frames of w50
  await sleep(200);
  await sdk.stopRecognition();
  const kinds = new Set(messages.map((message) => message.message));
  for (const kind of ["AudioAdded", "AddPartialTranscript", "AddTranscript", "EndOfUtterance", "EndOfTranscript"]) assert.ok(kinds.has(kind), kind);
  const words = messages.filter((message) => message.message === "AddTranscript").map((message) => message.metadata.transcript.trim());
  assert.deepEqual(words, ["w0", "w25", "w50"]);
  assert.equal(messages.filter((message) => message.message === "AudioAdded").at(-1).seq_no, 60);
  const stats = (await (await fetch(`http://127.0.0.1:${env.stack.port}/__stats`)).json()).speechmatics.keys["sdk-sm"];
  assert.deepEqual([stats.jwtAuth, stats.starts, stats.frames, stats.lastSeqNos, stats.languages], [1, 1, 60, [60], ["en"]]);
});

test("an expired key is refused at the handshake", async () => {
  const { sdk } = client("mock_key=sdk-sm-expired");
  await assert.rejects(sdk.start(await temporaryKey("&mock_expired=1"), TRANSCRIPTION));
});

test("audio before StartRecognition is a protocol error", async () => {
  const key = await temporaryKey();
  const { sdk, messages } = client("mock_key=sdk-sm-early");
  await sdk.connect(key);
  const closed = new Promise((resolve) => sdk.socket.addEventListener("close", (event) => resolve(event.code)));
  sdk.sendAudio(frame(0));
  assert.equal(await closed, 1003);
  assert.equal(messages.find((message) => message.message === "Error")?.type, "protocol_error");
});

test("espeak-ng speech through the SDK comes back as its words (pocketsphinx behind the mock)", { skip: skipSpeech }, async () => {
  const sentence = "what is the weather like today";
  const pcm = speechPcm(sentence);
  const { sdk, messages } = client("recognizer=speech");
  await sdk.start(await temporaryKey(), TRANSCRIPTION);
  for (let offset = 0; offset < pcm.length; offset += 3200) {
    sdk.sendAudio(pcm.subarray(offset, offset + 3200));
    await sleep(20);
  }
  await sdk.stopRecognition();
  const heard = messages.filter((message) => message.message === "AddTranscript").map((message) => message.metadata.transcript.trim()).join(" ");
  const wer = wordErrorRate(sentence, heard.toLowerCase());
  console.log(`speechmatics mock heard "${heard}" for "${sentence}" (WER ${(wer * 100).toFixed(0)}%)`);
  assert.match(heard, /what is the weather/);
});
