// The demo agent's pure parts: which URL each failure switch picks. (What was heard of a cut
// answer is the library's: VoiceSession's onHeard, tested in tests/browser/session.js.)

import assert from "node:assert/strict";
import { test } from "node:test";
import { assemblyAiSocketUrl, deepgramSocketUrl, elevenLabsSocketUrl, llmUrl, openAiSocketUrl, provisionUrl, sonioxSocketUrl, speechmaticsSocketUrl } from "./agent.mjs";

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

test("the Deepgram and AssemblyAI switches become the mocks' switches in the socket URL", () => {
  const dg = new URL(deepgramSocketUrl("ws://h", { dgDrop: true }, "k"));
  assert.equal(dg.pathname, "/v1/listen");
  assert.deepEqual([dg.searchParams.get("recognizer"), dg.searchParams.get("mock_drop_after_ms"), dg.searchParams.get("mock_times"), dg.searchParams.get("mock_key")], ["speech", "1500", "2", "k"]);
  assert.equal(new URL(deepgramSocketUrl("ws://h", { dg1008: true }, "k")).searchParams.get("mock_close"), "1008");
  const aai = new URL(assemblyAiSocketUrl("ws://h", { aai3009: true }, "k", "t0"));
  assert.equal(aai.pathname, "/v3/ws");
  assert.deepEqual([aai.searchParams.get("format_turns"), aai.searchParams.get("mock_close"), aai.searchParams.get("token")], ["true", "3009", "t0"]);
  assert.equal(new URL(assemblyAiSocketUrl("ws://h", { aai3008: true }, "k", "t")).searchParams.get("mock_session_ms"), "5000");
  const oa = new URL(openAiSocketUrl("ws://h", { oaDrop: true }, "k"));
  assert.equal(oa.pathname, "/v1/realtime");
  assert.deepEqual([oa.searchParams.get("intent"), oa.searchParams.get("mock_drop_after_ms"), oa.searchParams.get("mock_key")], ["transcription", "1500", "k"]);
  assert.equal(new URL(openAiSocketUrl("ws://h", { oa4000: true }, "k")).searchParams.get("mock_close"), "4000");
  const el = new URL(elevenLabsSocketUrl("ws://h", { elTerms: true }, "k", "t"));
  assert.equal(el.pathname, "/v1/speech-to-text/realtime");
  assert.deepEqual([el.searchParams.get("mock_error"), el.searchParams.get("token"), el.searchParams.get("include_timestamps")], ["unaccepted_terms", "t", "true"]);
  const sx = new URL(sonioxSocketUrl("ws://h", { sx503: true }, "k"));
  assert.equal(sx.pathname, "/transcribe-websocket");
  assert.deepEqual([sx.searchParams.get("mock_error"), sx.searchParams.get("mock_key")], ["503", "k"]);
  const sm = new URL(speechmaticsSocketUrl("ws://h", { sm4005: true }, "k", "j"));
  assert.equal(sm.pathname, "/v2");
  assert.deepEqual([sm.searchParams.get("jwt"), sm.searchParams.get("mock_close"), sm.searchParams.get("mock_key")], ["j", "4005", "k"]);
});
