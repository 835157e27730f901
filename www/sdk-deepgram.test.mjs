// The dev stack's Deepgram mock (devstack/mocks/deepgram.mjs) checked by Deepgram's own JS SDK in Node:
// the SDK mints a token, connects, streams audio and receives transcripts. A mock only our code
// talks to would prove nothing about the protocol. `node --test www/sdk-deepgram.test.mjs`.

import assert from "node:assert/strict";
import { test } from "node:test";
import { DeepgramClient } from "@deepgram/sdk";
import { speechPcm, wordErrorRate } from "../tests/e2e/demo-speech.mjs";
import { devStackForTests, frame, skipSpeech } from "./sdk-support.mjs";

let client;
/** A client of the mock with `auth`: `{ apiKey }` or `{ accessToken }`. */
const clientWith = (auth) => {
  const http = `http://127.0.0.1:${env.stack.port}`;
  const ws = `ws://127.0.0.1:${env.stack.port}`;
  return new DeepgramClient({ ...auth, environment: { base: http, production: ws, agent: ws, agentRest: http } });
};
const env = devStackForTests({ ready: () => (client = clientWith({ apiKey: "dev-only-key" })) });

/** Connects the SDK with the listen options a voice agent uses; resolves with the socket and its messages. */
async function connect(query, through = client) {
  const socket = await through.listen.v1.connect({
    model: "nova-3",
    encoding: "linear16",
    sample_rate: 16000,
    channels: 1,
    interim_results: "true",
    utterance_end_ms: 1000,
    vad_events: "true",
    reconnectAttempts: 0,
    queryParams: query,
  });
  const messages = [];
  const closed = new Promise((resolve) => socket.on("close", (event) => resolve(event.code)));
  socket.on("message", (message) => messages.push(message));
  socket.on("error", () => {});
  socket.connect();
  await socket.waitForOpen();
  return { socket, messages, closed };
}

test("the SDK streams audio to the mock and gets interim and final Results, UtteranceEnd and Metadata", async () => {
  const { socket, messages, closed } = await connect({ mock_key: "sdk-scripted" });
  for (let n = 0; n < 50; n++) socket.sendMedia(frame(n)); // 1 s: two words, one utterance
  socket.sendMedia(frame(50)); // a word under way, flushed by CloseStream
  socket.sendCloseStream({ type: "CloseStream" });
  assert.equal(await closed, 1000, "CloseStream ends with a normal close");
  const types = messages.map((message) => message.type);
  assert.ok(types.includes("SpeechStarted"));
  const finals = messages.filter((m) => m.type === "Results" && m.is_final);
  assert.deepEqual(finals.map((m) => [m.channel.alternatives[0].transcript, m.speech_final]), [["w0", false], ["w25", true], ["w50", true]]);
  assert.ok(messages.some((m) => m.type === "Results" && !m.is_final), "interim results");
  assert.equal(types.filter((type) => type === "UtteranceEnd").length, 2, "UtteranceEnd after speech_final too (L8 must not double it)");
  assert.equal(types.at(-1), "Metadata");
  assert.equal(finals[1].start + finals[1].duration, 1, "times in seconds of this connection's audio");
});

test("a token granted through the SDK opens the socket; an expired one is refused at the handshake", async () => {
  const { access_token: token } = await client.auth.v1.tokens.grant({ ttl_seconds: 30 });
  assert.match(token, /^mockjwt\./);
  const { socket, closed } = await connect({ mock_key: "sdk-bearer" }, clientWith({ accessToken: token }));
  socket.sendKeepAlive({ type: "KeepAlive" });
  socket.sendCloseStream({ type: "CloseStream" });
  assert.equal(await closed, 1000);
  const expired = await (await fetch(new URL("/v1/auth/grant?mock_expired=1", env.stack.url), { method: "POST", headers: { authorization: "Token dev" } })).json();
  await assert.rejects(connect({ mock_key: "sdk-expired" }, clientWith({ accessToken: expired.access_token })));
  const stats = (await (await fetch(new URL("/__stats", env.stack.url))).json()).deepgram.keys;
  assert.equal(stats["sdk-bearer"].bearer, 1);
  assert.equal(stats["sdk-bearer"].keepAlives, 1);
  assert.equal(stats["sdk-expired"].refused >= 1, true);
});

test("idle for the idle limit: close 1011 NET-0001; an empty frame: close 1008", async () => {
  const idle = await connect({ mock_key: "sdk-idle", mock_idle_ms: "300" });
  assert.equal(await idle.closed, 1011);
  const empty = await connect({ mock_key: "sdk-empty" });
  empty.socket.sendMedia(Buffer.alloc(0));
  assert.equal(await empty.closed, 1008);
});

test("espeak-ng speech through the SDK comes back as its words (pocketsphinx behind the mock)", { skip: skipSpeech }, async () => {
  const sentence = "what is the weather like today";
  const pcm = speechPcm(sentence);
  const { socket, messages, closed } = await connect({ mock_key: "sdk-speech", recognizer: "speech" });
  for (let offset = 0; offset < pcm.length; offset += 3200) socket.sendMedia(pcm.subarray(offset, offset + 3200));
  socket.sendFinalize({ type: "Finalize" });
  socket.sendCloseStream({ type: "CloseStream" });
  assert.equal(await closed, 1000);
  const heard = messages
    .filter((m) => m.type === "Results" && m.is_final)
    .map((m) => m.channel.alternatives[0].transcript)
    .filter(Boolean)
    .join(" ");
  console.log(`deepgram mock heard "${heard}" for "${sentence}"`);
  assert.match(heard, /^what is the weather like/);
  console.log(`word error rate ${(wordErrorRate(sentence, heard) * 100).toFixed(0)}%`);
});
