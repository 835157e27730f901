// The dev stack's Soniox mock (devstack/mocks/soniox.mjs) checked by Soniox's own Node SDK
// (`@soniox/node`: `auth.createTemporaryKey` and `realtime.stt`, whose `base_url` and
// `realtime.ws_base_url` point anywhere): a temporary key, the configuration message with it,
// audio, tokens with `<end>` endpoints, `finalize`, and the end of audio answered with `finished`.
// `node --test www/sdk-soniox.test.mjs`.

import assert from "node:assert/strict";
import { test } from "node:test";
import { WebSocket as NodeWebSocket } from "ws";
import { speechPcm, wordErrorRate } from "../tests/e2e/demo-speech.mjs";
import { devStackForTests, frame, skipSpeech, sleep } from "./sdk-support.mjs";

// The SDK uses the global WebSocket, which Node 20 has only behind a flag.
globalThis.WebSocket ??= NodeWebSocket;
const { SonioxNodeClient } = await import("@soniox/node");

const env = devStackForTests();

/** The backend's client (its key) and the page's client (a temporary key), both on the mock. */
async function clients(switches = "") {
  const http = `http://127.0.0.1:${env.stack.port}`;
  const backend = new SonioxNodeClient({ api_key: "dev-only-key", base_url: http });
  const { api_key: temporary } = await backend.auth.createTemporaryKey({ usage_type: "transcribe_websocket", expires_in_seconds: 60 });
  const ws = `ws://127.0.0.1:${env.stack.port}${switches ? `/mock/${encodeURIComponent(switches)}` : ""}/transcribe-websocket`;
  return { temporary, page: new SonioxNodeClient({ api_key: temporary, base_url: http, realtime: { ws_base_url: ws } }) };
}

const CONFIG = { model: "stt-rt-v3", audio_format: "pcm_s16le", sample_rate: 16000, num_channels: 1, enable_endpoint_detection: true };

function session(page) {
  const stt = page.realtime.stt(CONFIG);
  const results = [];
  let endpoints = 0;
  stt.on("result", (result) => results.push(result));
  stt.on("endpoint", () => (endpoints += 1));
  stt.on("error", () => {});
  return { stt, results, endpoints: () => endpoints };
}

test("the SDK sends the configuration with a temporary key, streams audio and gets tokens, endpoints and finished", async () => {
  const { temporary, page } = await clients("mock_key=sdk-sx");
  assert.match(temporary, /^temp:/);
  const { stt, results, endpoints } = session(page);
  await stt.connect();
  for (let n = 0; n < 60; n++) {
    stt.sendAudio(frame(n)); // w0 w25, then 10 frames of w50
    await sleep(20);
  }
  stt.finalize();
  await sleep(200);
  await stt.finish();
  const finalText = results.flatMap((result) => result.tokens.filter((token) => token.is_final).map((token) => token.text)).join("");
  assert.equal(finalText, "w0 w25w50", "two utterances (the second from finalize), sub-word spacing as sent");
  assert.ok(endpoints() >= 2, `endpoints: ${endpoints()}`);
  assert.ok(results.some((result) => result.tokens.some((token) => !token.is_final)), "non-final tokens");
  assert.equal(results.at(-1).final_audio_proc_ms, 1200);
  const stats = (await (await fetch(`http://127.0.0.1:${env.stack.port}/__stats`)).json()).soniox.keys["sdk-sx"];
  assert.deepEqual([stats.configs, stats.frames, stats.finalizes, stats.endOfAudio, stats.finished, stats.tooFast], [1, 60, 1, 1, 1, 0]);
});

test("an expired temporary key gets error 401", async () => {
  const http = `http://127.0.0.1:${env.stack.port}`;
  const response = await fetch(`${http}/v1/auth/temporary-api-key?mock_expired=1`, { method: "POST", headers: { authorization: "Bearer k", "content-type": "application/json" }, body: JSON.stringify({ usage_type: "transcribe_websocket", expires_in_seconds: 60 }) });
  const { api_key: expired } = await response.json();
  const page = new (await import("@soniox/node")).SonioxNodeClient({ api_key: expired, base_url: http, realtime: { ws_base_url: `ws://127.0.0.1:${env.stack.port}/transcribe-websocket` } });
  const stt = page.realtime.stt(CONFIG);
  const errors = [];
  stt.on("error", (error) => errors.push(error));
  await stt.connect();
  const deadline = Date.now() + 3000;
  while (errors.length === 0 && Date.now() < deadline) await sleep(20);
  assert.ok(errors.some((error) => error.statusCode === 401 || /401|Invalid/.test(String(error.message)) || error.code === 401), errors.map(String).join("; "));
});

test("espeak-ng speech through the SDK comes back as its words (pocketsphinx behind the mock)", { skip: skipSpeech }, async () => {
  const sentence = "what is the weather like today";
  const pcm = speechPcm(sentence);
  const { page } = await clients("recognizer=speech");
  const { stt, results } = session(page);
  await stt.connect();
  for (let offset = 0; offset < pcm.length; offset += 3200) {
    stt.sendAudio(pcm.subarray(offset, offset + 3200));
    await sleep(100);
  }
  await stt.finish();
  const heard = results.flatMap((result) => result.tokens.filter((token) => token.is_final).map((token) => token.text)).join("").trim();
  const wer = wordErrorRate(sentence, heard.toLowerCase());
  console.log(`soniox mock heard "${heard}" for "${sentence}" (WER ${(wer * 100).toFixed(0)}%)`);
  assert.match(heard, /what is the weather/);
});
