// The demo agent's pure parts: which URL each failure switch picks. (What was heard of a cut
// answer is the library's: VoiceSession's onHeard, tested in tests/browser/session.js.)

import assert from "node:assert/strict";
import { test } from "node:test";
import { EAGER_SOCKET, llmUrl, socketQuery, sttSwitches } from "./agent.mjs";
import { demoFailures, loadDescriptors } from "./devstack/protocols.mjs";

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

test("each protocol's STT switches become mock switches of its own, for the socket or the token call", async () => {
  for (const descriptor of await loadDescriptors()) {
    const protocol = { name: descriptor.name, failures: demoFailures(descriptor) };
    assert.deepEqual(sttSwitches(protocol, {}), { socket: "", token: "" }, `${protocol.name}: nothing checked`);
    for (const failure of protocol.failures) {
      const switches = sttSwitches(protocol, { [`${protocol.name}.${failure.id}`]: true });
      assert.ok(switches.socket || switches.token, `${protocol.name}.${failure.id} switches something`);
      for (const part of [switches.socket, switches.token].filter(Boolean)) {
        for (const name of new URLSearchParams(part).keys()) assert.match(name, /^mock_/, `${protocol.name}.${failure.id}: ${name} is a mock switch`);
      }
      // Another protocol's checked switch is not this one's.
      assert.deepEqual(sttSwitches(protocol, { [`other.${failure.id}`]: true }), { socket: "", token: "" });
    }
  }
});

test("checked switches of one protocol combine", async () => {
  for (const descriptor of await loadDescriptors()) {
    const protocol = { name: descriptor.name, failures: demoFailures(descriptor) };
    const all = Object.fromEntries(protocol.failures.map((failure) => [`${protocol.name}.${failure.id}`, true]));
    const join = (part) => protocol.failures.map((failure) => failure[part]).filter(Boolean).join("&");
    assert.deepEqual(sttSwitches(protocol, all), { socket: join("socket"), token: join("token") }, protocol.name);
  }
});

test("the socket query: the real recognizer, Flux's eager end of turn (with the mock's lead), then the checked switches", async () => {
  const descriptors = await loadDescriptors();
  const flux = descriptors.find(({ name }) => name === "deepgram-flux");
  assert.ok(flux, "the dev stack has Deepgram Flux");
  const protocol = { name: flux.name, failures: demoFailures(flux) };
  assert.equal(socketQuery(protocol, {}), "recognizer=speech&eager_eot_threshold=0.5&mock_eager_lead_ms=250");
  const [drop] = protocol.failures;
  assert.equal(socketQuery(protocol, { [`deepgram-flux.${drop.id}`]: true }), `recognizer=speech&eager_eot_threshold=0.5&mock_eager_lead_ms=250&${drop.socket}`);
  // Every name in EAGER_SOCKET is a protocol of the dev stack; the others get nothing extra.
  for (const name of Object.keys(EAGER_SOCKET)) assert.ok(descriptors.some((descriptor) => descriptor.name === name), name);
  for (const descriptor of descriptors.filter(({ name }) => !(name in EAGER_SOCKET))) {
    assert.equal(socketQuery({ name: descriptor.name, failures: demoFailures(descriptor) }, {}), "recognizer=speech", descriptor.name);
  }
});
