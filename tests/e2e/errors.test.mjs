// Errors that say the fix, in Node as an app's script, SSR or test runner meets them: a class used
// before `init()`, the voice classes where there is no Web Audio, and a function passed as a route.

import assert from "node:assert/strict";
import { test } from "node:test";

const ROOT = new URL("../../pkg/", import.meta.url);
const turnguard = await import(new URL("node.js", ROOT));
const controllerEntry = await import(new URL("controller/node.js", ROOT));

const OPTIONS = { recoveryText: "Sorry?", onAcceptedText() {}, onRecovery() {} };
const ROUTE = { name: "primary", generate: () => "Hi." };

// First: these run before any `init()` of this process.
test("a class or function used before init() says to await init() first", () => {
  for (const [label, entry] of [["turnguard", turnguard], ["turnguard/controller", controllerEntry]]) {
    assert.throws(() => new entry.TurnController([ROUTE], OPTIONS), /call `await init\(\)`/, `${label}: TurnController`);
    assert.throws(() => entry.openAiCompatibleRoute({ name: "p", url: "/api/chat" }), /call `await init\(\)`/, `${label}: openAiCompatibleRoute`);
  }
  assert.throws(() => new turnguard.ReconnectPolicy({}), /call `await init\(\)`/, "ReconnectPolicy");
});

test("after init() the same calls work", async () => {
  await turnguard.default();
  await controllerEntry.default();
  new turnguard.TurnController([ROUTE], OPTIONS).free();
  new controllerEntry.TurnController([ROUTE], OPTIONS).free();
});

test("VoiceSession and SpeechPlayer without AudioContext throw a TypeError that says so", async () => {
  await turnguard.default();
  assert.equal(globalThis.AudioContext, undefined, "Node has no Web Audio");
  const voice = { routes: [ROUTE], recoveryText: "Sorry?", synthesize: async () => new ArrayBuffer(8) };
  assert.throws(() => new turnguard.VoiceSession(voice), (error) => error instanceof TypeError && /VoiceSession needs Web Audio.*no AudioContext/.test(error.message));
  assert.throws(() => new turnguard.SpeechPlayer(), (error) => error instanceof TypeError && /SpeechPlayer needs Web Audio.*no AudioContext/.test(error.message));
});

test("a function passed as a route says what a route is", async () => {
  await turnguard.default();
  const generate = async ({ input }) => `You said ${input}`;
  for (const { TurnController } of [turnguard, controllerEntry]) {
    assert.throws(() => new TurnController([generate], OPTIONS), (error) =>
      error instanceof TypeError && /^routes\[0\] must be a route, an object \{ name, generate\(/.test(error.message));
    assert.throws(() => new TurnController([ROUTE, "fallback"], OPTIONS), (error) =>
      error instanceof TypeError && /^routes\[1\] must be a route/.test(error.message));
    assert.throws(() => new TurnController([{ name: "primary" }], OPTIONS), (error) =>
      error instanceof TypeError && /routes\[0\]\.generate must be a function/.test(error.message));
  }
});
