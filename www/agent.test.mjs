// The demo agent's pure parts: which URL each failure switch picks. (What was heard of a cut
// answer is the library's: VoiceSession's onHeard, tested in tests/browser/session.js.)

import assert from "node:assert/strict";
import { test } from "node:test";
import { llmUrl, provisionUrl } from "./agent.mjs";

test("LLM switches pick the mock scenario of each route; an upstream serves a healthy primary only", () => {
  assert.equal(llmUrl("primary", {}), "/llm/ok/v1/chat/completions?reply=chat");
  assert.equal(llmUrl("primary", { primaryTimeout: true }), "/llm/hang/v1/chat/completions?reply=chat");
  assert.equal(llmUrl("primary", { primary500: true }), "/llm/http500/v1/chat/completions?reply=chat");
  assert.equal(llmUrl("primary", { primary401: true }), "/llm/http401/v1/chat/completions?reply=chat");
  assert.equal(llmUrl("primary", { streamStalls: true }), "/llm/stall_after/v1/chat/completions?reply=chat&after=8");
  assert.equal(llmUrl("fallback", { fallbackSlow: true }), "/llm/slow/v1/chat/completions?reply=chat&tokenMs=120");
  assert.equal(llmUrl("primary", {}, { model: "m" }), "/upstream/v1/chat/completions");
  assert.equal(llmUrl("primary", { primary500: true }, { model: "m" }), "/llm/http500/v1/chat/completions?reply=chat");
  assert.equal(llmUrl("fallback", {}, { model: "m" }), "/llm/ok/v1/chat/completions?reply=chat");
});

test("STT switches pick the recognizer's failure mode", () => {
  assert.equal(provisionUrl({}), "/speech/v2/live");
  assert.equal(provisionUrl({ stt4403: true }), "/speech/v2/live?mode=close4403");
  assert.equal(provisionUrl({ sttDrop: true }), "/speech/v2/live?mode=drop1006&dropAfterMs=1500&times=2");
  assert.equal(provisionUrl({ sttDeadToken: true }), "/speech/v2/live?mode=dead_token");
  assert.equal(provisionUrl({ provision429: true }), "/speech/v2/live?mode=provision429&times=2");
});
