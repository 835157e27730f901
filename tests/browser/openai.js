// LiveTranscriber with `protocol: "openai"` in a real browser against the dev stack's OpenAI
// Realtime transcription mock (www/devstack/openai.mjs; its scripted recognizer turns each 500 ms of
// audio into the word `w<N>`, N the number of the segment's first frame, two words an item, and
// server VAD commits each item). The transcriber resamples the 16 kHz frames to 24 kHz base64 JSON.
// Each scenario has its own `mock_key`, and the server-side assertions read that key's counters.

import { assert, assertEq, frame, range, recorder, runIn, sleep, until } from "./support.js";

const FAST = { stableOpenMs: 400, initialDelayMs: 50, maxDelayMs: 400, jitter: "none" };

/**
 * A provision() as an app writes it for OpenAI: its backend mints a client secret (here the mock's
 * client_secrets endpoint stands in for the backend) and the page connects with the subprotocols
 * ["realtime", "openai-insecure-api-key." + secret]. The first `expired` calls get an expired secret.
 */
function openaiBackend(devstack, switches = "", { expired = 0 } = {}) {
  const key = `oa-${Math.random().toString(36).slice(2)}`;
  const reasons = [];
  const provision = async ({ signal, reason }) => {
    reasons.push(reason);
    const query = reasons.length <= expired ? "?expired=1" : "";
    const response = await fetch(`${devstack}/v1/realtime/client_secrets${query}`, {
      method: "POST",
      signal,
      headers: { authorization: "Bearer backend-key", "content-type": "application/json" },
      body: JSON.stringify({ expires_after: { anchor: "created_at", seconds: 600 }, session: { type: "transcription" } }),
    });
    if (!response.ok) throw Object.assign(new Error(`HTTP ${response.status}`), { status: response.status });
    const { value } = await response.json();
    const url = `${devstack.replace(/^http/, "ws")}/v1/realtime?intent=transcription&mock_key=${key}${switches ? `&${switches}` : ""}`;
    return { url, protocols: ["realtime", `openai-insecure-api-key.${value}`] };
  };
  const stats = async () => (await (await fetch(`${devstack}/__stats`)).json()).openai.keys[key];
  return { provision, reasons, stats };
}

function closes() {
  const events = [];
  return { events, onEvent: (event) => events.push([event.code, event.class, event.next]) };
}

/** Sends frames `from`..`to` in real time (20 ms each). */
async function stream(transcriber, from, to) {
  for (const n of range(from, to)) {
    transcriber.sendAudio(frame(n));
    await sleep(20);
  }
}

const scenarios = {
  async oneFinalPerItemInCommitOrderWhenCompletionsAreNot({ devstack, make }) {
    // The mock holds each odd item's completion until the next one's went out, and sends every
    // completion twice.
    const app = openaiBackend(devstack, "mock_out_of_order=1&mock_duplicate_completed=1");
    const events = recorder();
    const transcriber = make({ protocol: "openai", provision: app.provision, policy: FAST, ...events });
    for (const n of range(0, 99)) transcriber.sendAudio(frame(n)); // 2 s, before the socket opens
    await transcriber.start();
    await until(() => events.log.finals.length === 2, 6000, "two finals");
    await sleep(300);
    assertEq(events.log.finals.map(([text, n]) => [text, n]), [["w0 w25", 1], ["w50 w75", 2]], "one final per item, in commit order");
    assert(events.log.partials.length >= 2, "partials from the deltas");
    const server = await app.stats();
    assertEq([server.subprotocolAuth, server.items, server.completed], [1, 2, 2], "the secret in the subprotocols; two items");
    await transcriber.stop();
    assertEq(events.log.finals.length, 2, "no duplicate on stop");
    assertEq(events.log.errors, [], "no errors");
    transcriber.free();
  },

  async resampledAudioReachesTheMockAt24KhzWithItsDuration({ devstack, make }) {
    const app = openaiBackend(devstack);
    const events = recorder();
    const transcriber = make({ protocol: "openai", provision: app.provision, policy: FAST, ...events });
    await transcriber.start();
    await stream(transcriber, 0, 99); // 2 s at 16 kHz
    await until(() => events.log.finals.length === 2, 6000, "two finals");
    await transcriber.stop();
    const server = await app.stats();
    // 2 s of 24 kHz PCM16 is 96000 bytes, in 100 appends; the words prove the samples survived.
    assertEq([server.appends, server.bytes, server.badAudio], [100, 96000, 0], "24 kHz, 2 s");
    assertEq(events.log.finals.map(([text]) => text), ["w0 w25", "w50 w75"], "the frames' words");
    transcriber.free();
  },

  async aDropMidUtteranceKeepsTheWordsSpokenDuringTheOutage({ devstack, make }) {
    // The first connection is cut after 30 frames, before its first item was committed: none of its
    // audio was finalized, so all of it is resent and the item holds the words from both sides.
    const app = openaiBackend(devstack, "mock_drop_after_frames=30&mock_times=1");
    const events = recorder();
    const close = closes();
    const transcriber = make({ protocol: "openai", provision: app.provision, policy: FAST, ...events, onEvent: close.onEvent });
    await transcriber.start();
    await stream(transcriber, 0, 74);
    await until(() => events.log.finals.length === 1, 6000, "the final");
    assertEq(events.log.finals[0][0], "w0 w25", "the words of frames 0–49, across the drop");
    assertEq(app.reasons, ["start", "reconnect"], "a fresh secret for the reconnect");
    assertEq(close.events, [[1006, "retry", "reconnect_same_url"]], "the close, reported");
    assert(transcriber.stats.framesResent >= 30, `frames 0–29 resent: ${transcriber.stats.framesResent}`);
    await transcriber.stop();
    transcriber.free();
  },

  async anExpiredSecretIsRefusedAndTheNextConnectGetsAFreshOne({ devstack, make }) {
    const app = openaiBackend(devstack, "", { expired: 1 });
    const transcriber = make({ protocol: "openai", provision: app.provision, policy: FAST });
    await transcriber.start();
    assertEq(app.reasons, ["start", "reconnect"], "refused once, then a fresh secret");
    assertEq((await app.stats()).refused, 1, "the handshake refused the expired secret");
    assertEq(transcriber.state, "open", "open");
    await transcriber.stop();
    transcriber.free();
  },

  async sessionExpiredProvisionsANewSession({ devstack, make }) {
    const app = openaiBackend(devstack, "mock_session_ms=300&mock_times=1");
    const events = recorder();
    const transcriber = make({ protocol: "openai", provision: app.provision, policy: FAST, ...events });
    await transcriber.start();
    await until(async () => (await app.stats()).connections === 2, 4000, "a second session");
    await until(() => transcriber.state === "open", 2000, "open again");
    assertEq(app.reasons, ["start", "session_over"], "session_expired: a new session, counted by R3");
    assertEq(events.log.errors.filter((error) => error.terminal), [], "no terminal error");
    await transcriber.stop();
    transcriber.free();
  },

  async close4000IsFatalWithoutARetry({ devstack, make }) {
    const app = openaiBackend(devstack, "mock_close=4000&mock_close_after_frames=3");
    const events = recorder();
    const close = closes();
    const transcriber = make({ protocol: "openai", provision: app.provision, policy: FAST, ...events, onEvent: close.onEvent });
    await transcriber.start();
    for (const n of range(0, 9)) transcriber.sendAudio(frame(n));
    await until(() => transcriber.state === "failed", 3000, "failed");
    await sleep(300);
    const terminal = events.log.errors.filter((error) => error.terminal);
    assertEq(terminal.map((error) => [error.code, error.closeCode]), [["fatal_close", 4000]], "a terminal error naming the code");
    assertEq(close.events, [[4000, "fatal", "stop"]], "reported as fatal");
    assertEq([app.reasons.length, (await app.stats()).connections], [1, 1], "no retry");
    transcriber.free();
  },

  async anIdleSocketStaysOpen({ devstack, make }) {
    const app = openaiBackend(devstack);
    const transcriber = make({ protocol: "openai", provision: app.provision, policy: FAST });
    await transcriber.start();
    await sleep(2_000); // no audio at all: typed input only; OpenAI needs no keepalive
    const server = await app.stats();
    assertEq([transcriber.state, server.connections, server.closeCodes, server.invalidMessages], ["open", 1, [], 0], "still the first socket, nothing sent");
    await transcriber.stop();
    transcriber.free();
  },

  async stopCommitsAndFlushesTheLastWords({ devstack, make }) {
    const app = openaiBackend(devstack);
    const events = recorder();
    const transcriber = make({ protocol: "openai", provision: app.provision, policy: FAST, ...events });
    await transcriber.start();
    for (const n of range(0, 59)) transcriber.sendAudio(frame(n)); // w0 w25 and 10 frames of w50
    await until(() => events.log.finals.length === 1, 3000, "the first item");
    await transcriber.stop();
    assertEq(events.log.finals.map(([text]) => text), ["w0 w25", "w50"], "the word under way arrives before stopped");
    const server = await app.stats();
    assertEq([server.commits, server.emptyCommits], [1, 0], "one commit, with audio");
    assertEq(events.log.states.at(-1), "stopped", "stopped");
    transcriber.free();
  },

  async threeDropsWithFreshSecretsDoNotFail({ devstack, make }) {
    const app = openaiBackend(devstack, "mock_drop_after_ms=300&mock_times=3");
    const events = recorder();
    const close = closes();
    const transcriber = make({ protocol: "openai", provision: app.provision, policy: FAST, ...events, onEvent: close.onEvent });
    await transcriber.start();
    await until(async () => (await app.stats()).connections === 4, 6000, "a fourth connection");
    await sleep(500);
    assertEq(transcriber.state, "open", "open: R3 counts dead sessions, not fresh secrets");
    assertEq(app.reasons, ["start", "reconnect", "reconnect", "reconnect"], "a fresh secret per connect");
    assertEq(close.events.map(([code, kind]) => [code, kind]), [[1006, "retry"], [1006, "retry"], [1006, "retry"]], "three drops reported");
    assertEq(events.log.errors, [], "no errors");
    await transcriber.stop();
    transcriber.free();
  },
};

export async function runScenario(name, devstack, make, makeSession) {
  return runIn(scenarios, name, { devstack, make, makeSession });
}
