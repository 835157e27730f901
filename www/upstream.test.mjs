// The demo's LLM: the mock's conversational answers (`?reply=chat`) and the proxy to an
// OpenAI-compatible upstream (LLM_URL, LLM_MODEL, LLM_API_KEY), here a second dev stack's mock.

import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { startDevStack } from "./devstack.mjs";
import { chatAnswer } from "./devstack/chat.mjs";
import { upstreamConfig } from "./devstack/upstream.mjs";

const KEY = "sk-test-not-a-real-key";
let model;
let demo;
before(async () => {
  model = await startDevStack({ port: 0 });
  const upstream = upstreamConfig({ LLM_URL: `${model.url}llm/ok/v1`, LLM_MODEL: "local-model", LLM_API_KEY: KEY });
  demo = await startDevStack({ port: 0, upstream });
});
after(async () => {
  await demo?.close();
  await model?.close();
});

test("chat answers depend on the question and the persona", () => {
  const ask = (system, text) => chatAnswer([{ role: "system", content: system }, { role: "user", content: text }], text);
  assert.match(ask("You are Ava", "what is the weather like to you"), /fair weather/);
  assert.match(ask("You are Max", "what is the weather like"), /sunny/);
  assert.match(ask("You are Ava", "tell me a joke"), /four four oh three/);
  assert.notEqual(ask("You are Ava", "tell me a joke"), ask("You are Max", "tell me a joke"));
  assert.match(ask("You are Ava", "bananas"), /I heard: bananas/);
});

test("the mock streams a chat answer with ?reply=chat and keeps its echo answer without", async () => {
  const answer = async (query) => {
    const response = await fetch(`${demo.url}llm/ok/v1/chat/completions${query}`, {
      method: "POST",
      body: JSON.stringify({ messages: [{ role: "user", content: "tell me a joke" }] }),
    });
    return (await response.json()).choices[0].message.content;
  };
  assert.match(await answer("?reply=chat"), /socket/);
  assert.match(await answer(""), /^You said: tell me a joke\./);
});

test("the upstream route streams the upstream's answer with its model and key; the page never sees the key", async () => {
  const response = await fetch(`${demo.url}upstream/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: "ignored", stream: true, messages: [{ role: "user", content: "hello" }] }),
  });
  assert.equal(response.status, 200);
  assert.match(response.headers.get("content-type"), /text\/event-stream/);
  const text = await response.text();
  assert.match(text, /"content":"You "/);
  assert.match(text, /data: \[DONE\]/);
  const seen = model.stats.llm.recent.at(-1);
  assert.equal(seen.model, "local-model");
  assert.equal(seen.authorization, true);
  const stats = await (await fetch(`${demo.url}__stats`)).text();
  assert.ok(!stats.includes(KEY), "the key is not in /__stats");
  assert.deepEqual(JSON.parse(stats).llmUpstream, { upstream: true, model: "local-model" });
});

test("without LLM_URL the upstream route is a 404 that says how to set it", async () => {
  const plain = await startDevStack({ port: 0, upstream: null });
  try {
    const response = await fetch(`${plain.url}upstream/v1/chat/completions`, { method: "POST", body: "{}" });
    assert.equal(response.status, 404);
    assert.match((await response.json()).error.message, /LLM_URL/);
  } finally {
    await plain.close();
  }
});
