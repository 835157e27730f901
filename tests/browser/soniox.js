// LiveTranscriber with `protocol: "soniox"` in a real browser against the dev stack's Soniox mock
// (www/devstack/soniox.mjs; its scripted recognizer turns each 500 ms of audio into the word
// `w<N>`, N the number of the segment's first frame, as final tokens, two words an utterance ended
// by `<end>`). Each scenario has its own `mock_key`, and the server-side assertions read that key's
// counters.

import { assert, assertEq, frame, range, recorder, runIn, sleep, until } from "./support.js";

const FAST = { stableOpenMs: 400, initialDelayMs: 50, maxDelayMs: 400, jitter: "none" };

/**
 * A provision() as an app writes it for Soniox: its backend mints a temporary key (here the mock's
 * endpoint stands in for the backend) and returns it as `config.api_key`, which the configuration
 * message carries. The first `expired` calls get a key that is already expired.
 */
function sonioxBackend(devstack, switches = "", { expired = 0 } = {}) {
  const key = `sx-${Math.random().toString(36).slice(2)}`;
  const reasons = [];
  const provision = async ({ signal, reason }) => {
    reasons.push(reason);
    const query = reasons.length <= expired ? "?expired=1" : "";
    const response = await fetch(`${devstack}/v1/auth/temporary-api-key${query}`, {
      method: "POST",
      signal,
      headers: { authorization: "Bearer backend-key", "content-type": "application/json" },
      body: JSON.stringify({ usage_type: "transcribe_websocket", expires_in_seconds: 60, single_use: true }),
    });
    if (!response.ok) throw Object.assign(new Error(`HTTP ${response.status}`), { status: response.status });
    const { api_key } = await response.json();
    const url = `${devstack.replace(/^http/, "ws")}/transcribe-websocket?mock_key=${key}${switches ? `&${switches}` : ""}`;
    return { url, config: { api_key } };
  };
  const stats = async () => (await (await fetch(`${devstack}/__stats`)).json()).soniox.keys[key];
  return { provision, reasons, stats };
}

function closes() {
  const events = [];
  return { events, onEvent: (event) => events.push([event.code, event.class, event.next, event.delayMs]) };
}

/** Sends frames `from`..`to` in real time (20 ms each). */
async function stream(transcriber, from, to) {
  for (const n of range(from, to)) {
    transcriber.sendAudio(frame(n));
    await sleep(20);
  }
}

const scenarios = {
  async oneFinalPerUtteranceThroughEndTokens({ devstack, make }) {
    const app = sonioxBackend(devstack);
    const events = recorder();
    const transcriber = make({ protocol: "soniox", provision: app.provision, policy: FAST, ...events });
    await transcriber.start();
    await stream(transcriber, 0, 99);
    await until(() => events.log.finals.length === 2, 6000, "two finals");
    await sleep(300);
    assertEq(events.log.finals.map(([text, n]) => [text, n]), [["w0 w25", 1], ["w50 w75", 2]], "one final per utterance");
    assert(events.log.partials.length >= 2, "partials for captions");
    const server = await app.stats();
    assertEq([server.configs, server.badConfigs, server.frames, server.endpoints, server.tooFast], [1, 0, 100, 2, 0], "the key in the configuration, every frame, two endpoints");
    await transcriber.stop();
    assertEq(events.log.errors, [], "no errors");
    transcriber.free();
  },

  async aDropMidUtteranceKeepsTheWordsSpokenDuringTheOutage({ devstack, make }) {
    // The first connection is cut after 30 frames: w0 (frames 0–24) was final there, frames 25–29
    // were not: they are resent, and the final holds the words from both connections.
    const app = sonioxBackend(devstack, "mock_drop_after_frames=30&mock_times=1");
    const events = recorder();
    const close = closes();
    const transcriber = make({ protocol: "soniox", provision: app.provision, policy: FAST, ...events, onEvent: close.onEvent });
    await transcriber.start();
    await stream(transcriber, 0, 74);
    await until(() => events.log.finals.length === 1, 6000, "the final");
    assertEq(events.log.finals[0][0], "w0 w25 w50", "the words from both connections, the outage's included");
    assertEq(app.reasons, ["start", "reconnect"], "a fresh (single-use) key for the reconnect");
    assertEq(close.events.map(([code, kind, next]) => [code, kind, next]), [[1006, "retry", "reconnect_same_url"]], "the close, reported");
    assert(transcriber.stats.framesResent >= 5, `frames 25–29 resent: ${transcriber.stats.framesResent}`);
    await transcriber.stop();
    transcriber.free();
  },

  async anExpiredKeyIsAnError401AndFatal({ devstack, make }) {
    const app = sonioxBackend(devstack, "", { expired: 1 });
    const events = recorder();
    const transcriber = make({ protocol: "soniox", provision: app.provision, policy: FAST, ...events });
    await transcriber.start().catch(() => {});
    await until(() => transcriber.state === "failed", 3000, "failed");
    const terminal = events.log.errors.filter((error) => error.terminal);
    assertEq(terminal.map((error) => error.code), ["fatal_close"], "a terminal error: the backend hands out bad keys");
    assertEq([app.reasons.length, (await app.stats()).badConfigs], [1, 1], "no retry");
    transcriber.free();
  },

  async error503StartsAgainAtOnce({ devstack, make }) {
    const app = sonioxBackend(devstack, "mock_error=503&mock_error_after_frames=3&mock_times=1");
    const close = closes();
    const transcriber = make({ protocol: "soniox", provision: app.provision, policy: FAST, onEvent: close.onEvent });
    await transcriber.start();
    for (const n of range(0, 9)) transcriber.sendAudio(frame(n));
    await until(async () => (await app.stats()).configs === 2, 4000, "a second session");
    assertEq(close.events.map(([code, kind]) => [code, kind]), [[1000, "retry"]], "retried");
    assertEq(app.reasons, ["start", "reconnect"], "with a fresh key");
    await transcriber.stop();
    transcriber.free();
  },

  async error429IsThrottled({ devstack, make }) {
    const app = sonioxBackend(devstack, "mock_error=429&mock_error_after_frames=3&mock_times=1");
    const close = closes();
    const transcriber = make({ protocol: "soniox", provision: app.provision, policy: FAST, throttledDelayMs: 700, onEvent: close.onEvent });
    await transcriber.start();
    for (const n of range(0, 9)) transcriber.sendAudio(frame(n));
    await until(async () => (await app.stats()).configs === 2, 4000, "a second session");
    assertEq(close.events.map(([code, kind]) => [code, kind]), [[1000, "throttled"]], "throttled");
    assert(close.events[0][3] >= 700, `after at least throttledDelayMs: ${close.events[0][3]}`);
    await transcriber.stop();
    transcriber.free();
  },

  async error402IsFatalWithoutARetry({ devstack, make }) {
    const app = sonioxBackend(devstack, "mock_error=402&mock_error_after_frames=3");
    const events = recorder();
    const close = closes();
    const transcriber = make({ protocol: "soniox", provision: app.provision, policy: FAST, ...events, onEvent: close.onEvent });
    await transcriber.start();
    for (const n of range(0, 9)) transcriber.sendAudio(frame(n));
    await until(() => transcriber.state === "failed", 3000, "failed");
    await sleep(300);
    assertEq(close.events.map(([code, kind, next]) => [code, kind, next]), [[1000, "fatal", "stop"]], "reported as fatal");
    assertEq([app.reasons.length, (await app.stats()).connections], [1, 1], "no retry");
    transcriber.free();
  },

  async anIdleSocketIsKeptOpenPastTheIdleLimit({ devstack, make }) {
    const app = sonioxBackend(devstack, "idle_ms=12000");
    const transcriber = make({ protocol: "soniox", provision: app.provision, policy: FAST });
    await transcriber.start();
    await sleep(12_500); // no audio at all: typed input only
    const server = await app.stats();
    assertEq([transcriber.state, server.connections, server.closeCodes, server.errors], ["open", 1, [], []], "still the first socket");
    assert(server.keepAlives >= 1, `keepalive at 10 s: ${server.keepAlives}`);
    await transcriber.stop();
    transcriber.free();
  },

  async stopFinalizesAndFlushesTheLastWords({ devstack, make }) {
    const app = sonioxBackend(devstack);
    const events = recorder();
    const transcriber = make({ protocol: "soniox", provision: app.provision, policy: FAST, ...events });
    await transcriber.start();
    await stream(transcriber, 0, 59); // w0 w25 and 10 frames of w50
    await until(() => events.log.finals.length === 1, 3000, "the first utterance");
    await transcriber.stop();
    assertEq(events.log.finals.map(([text]) => text), ["w0 w25", "w50"], "the word under way arrives before stopped");
    // The server files a close once its socket has closed, which can be just after `stop()` resolved.
    await until(async () => (await app.stats()).closeCodes.length > 0, 3000, "the server to see the close");
    const server = await app.stats();
    assertEq([server.finalizes, server.endOfAudio, server.finished, server.closeCodes], [1, 1, 1, [1000]], "finalize, the end of audio, finished, a normal close");
    assertEq(events.log.states.at(-1), "stopped", "stopped");
    transcriber.free();
  },

  async aBacklogIsResentNoFasterThanRealTime({ devstack, make }) {
    const app = sonioxBackend(devstack);
    const transcriber = make({ protocol: "soniox", provision: app.provision, policy: FAST });
    for (const n of range(0, 149)) transcriber.sendAudio(frame(n)); // 3 s captured before the socket
    await transcriber.start();
    await until(() => transcriber.stats.framesSent === 150, 6000, "every frame sent");
    const server = await app.stats();
    assertEq([server.frames, server.tooFast], [150, 0], "all of it, about real time");
    await transcriber.stop();
    transcriber.free();
  },
};

export async function runScenario(name, devstack, make, makeSession) {
  return runIn(scenarios, name, { devstack, make, makeSession });
}
