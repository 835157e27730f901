// The dev stack's Deepgram Flux mock (devstack/mocks/deepgram-flux.mjs) checked by Deepgram's own JS
// SDK in Node (`listen.v2`): the SDK connects, configures, streams audio and receives turns. A mock
// only our code talks to would prove nothing about the protocol. `node --test www/sdk-deepgram-flux.test.mjs`.

import assert from "node:assert/strict";
import { test } from "node:test";
import { DeepgramClient } from "@deepgram/sdk";
import { speechPcm } from "../tests/e2e/demo-speech.mjs";
import { devStackForTests, frame, skipSpeech } from "./sdk-support.mjs";

let client;
const env = devStackForTests({
  ready: () => {
    const http = `http://127.0.0.1:${env.stack.port}`;
    const ws = `ws://127.0.0.1:${env.stack.port}`;
    client = new DeepgramClient({ apiKey: "dev-only-key", environment: { base: http, production: ws, agent: ws, agentRest: http } });
  },
});

/** Connects the SDK to Flux; resolves with the socket, its messages and its close code. */
async function connect(query, options = {}) {
  const socket = await client.listen.v2.connect({
    model: "flux-general-en",
    encoding: "linear16",
    sample_rate: 16000,
    Authorization: "Token dev-only-key",
    reconnectAttempts: 0,
    queryParams: query,
    ...options,
  });
  const messages = [];
  const closed = new Promise((resolve) => socket.on("close", (event) => resolve(event.code)));
  socket.on("message", (message) => messages.push(message));
  socket.on("error", () => {});
  socket.connect();
  await socket.waitForOpen();
  return { socket, messages, closed };
}

const turnEvents = (messages) => messages.filter((m) => m.type === "TurnInfo" && m.event !== "Update").map((m) => [m.event, m.turn_index, m.transcript]);

test("the SDK streams to the Flux mock and gets Connected, then each turn's start, eager end and end", async () => {
  const { socket, messages, closed } = await connect({ mock_key: "sdk-flux", recognizer: "frames" }, { eager_eot_threshold: 0.5 });
  socket.sendConfigure({ type: "Configure", thresholds: { eot_threshold: 0.8 } });
  for (let n = 0; n < 100; n++) socket.sendMedia(frame(n)); // 2 s: two turns of two words
  socket.sendMedia(frame(100)); // a turn under way: ForceEndTurn ends it
  socket.sendForceEndTurn({ type: "ForceEndTurn" });
  socket.sendCloseStream({ type: "CloseStream" });
  assert.equal(await closed, 1005, "CloseStream: the server closes without a status");
  assert.equal(messages[0].type, "Connected");
  assert.ok(messages.some((m) => m.type === "ConfigureSuccess" && m.thresholds.eot_threshold === 0.8));
  assert.deepEqual(turnEvents(messages), [
    ["StartOfTurn", 0, ""], ["EagerEndOfTurn", 0, "w0 w25"], ["EndOfTurn", 0, "w0 w25"],
    ["StartOfTurn", 1, ""], ["EagerEndOfTurn", 1, "w50 w75"], ["EndOfTurn", 1, "w50 w75"],
    ["StartOfTurn", 2, ""], ["EndOfTurn", 2, "w100"], // ended by ForceEndTurn: no eager guess
  ]);
  assert.ok(messages.some((m) => m.type === "TurnInfo" && m.event === "Update" && m.transcript === "w0"), "updates carry the turn so far");
  const sequence = messages.map((m) => m.sequence_id);
  assert.deepEqual(sequence, sequence.map((_, i) => i), "sequence_id counts every message from 0");
});

test("without eager_eot_threshold there is no EagerEndOfTurn; an empty frame is close 1008", async () => {
  const { socket, messages, closed } = await connect({ mock_key: "sdk-flux-plain", recognizer: "frames" });
  for (let n = 0; n < 50; n++) socket.sendMedia(frame(n));
  socket.sendCloseStream({ type: "CloseStream" });
  assert.equal(await closed, 1005);
  assert.deepEqual(turnEvents(messages), [["StartOfTurn", 0, ""], ["EndOfTurn", 0, "w0 w25"]]);
  const empty = await connect({ mock_key: "sdk-flux-empty" });
  empty.socket.sendMedia(Buffer.alloc(0));
  assert.equal(await empty.closed, 1008);
});

test("espeak-ng speech through the SDK comes back as one turn's words (pocketsphinx behind the mock)", { skip: skipSpeech }, async () => {
  const sentence = "what is the weather like today";
  const pcm = speechPcm(sentence);
  const { socket, messages, closed } = await connect({ mock_key: "sdk-flux-speech", recognizer: "speech" });
  for (let offset = 0; offset < pcm.length; offset += 3200) socket.sendMedia(pcm.subarray(offset, offset + 3200));
  socket.sendForceEndTurn({ type: "ForceEndTurn" });
  socket.sendCloseStream({ type: "CloseStream" });
  assert.equal(await closed, 1005);
  const heard = messages.filter((m) => m.type === "TurnInfo" && m.event === "EndOfTurn").map((m) => m.transcript).join(" ");
  console.log(`deepgram-flux mock heard "${heard}" for "${sentence}"`);
  assert.match(heard, /^what is the weather like/);
});
