// LiveTranscriber with `protocol: "speechmatics"` in a real browser against the dev stack's
// Speechmatics mock (www/devstack/speechmatics.mjs; its scripted recognizer turns each 500 ms of
// audio into the word `w<N>`, N the number of the segment's first frame, two words an utterance,
// each word an `AddTranscript`, then `EndOfUtterance`). Each scenario has its own `mock_key`, and
// the server-side assertions read that key's counters.

import { assert, assertEq, frame, range, recorder, runIn, sleep, until } from "./support.js";

const FAST = { stableOpenMs: 400, initialDelayMs: 50, maxDelayMs: 400, jitter: "none" };

/**
 * A provision() as an app writes it for Speechmatics: its backend mints a temporary key (here the
 * mock's api_keys endpoint stands in for the backend) and the page puts it in the URL's query. The
 * first `expired` calls get a key that is already expired.
 */
function speechmaticsBackend(devstack, switches = "", { expired = 0, config } = {}) {
  const key = `sm-${Math.random().toString(36).slice(2)}`;
  const reasons = [];
  const provision = async ({ signal, reason }) => {
    reasons.push(reason);
    const query = reasons.length <= expired ? "&expired=1" : "";
    const response = await fetch(`${devstack}/v1/api_keys?type=rt${query}`, {
      method: "POST",
      signal,
      headers: { authorization: "Bearer backend-key", "content-type": "application/json" },
      body: JSON.stringify({ ttl: 60 }),
    });
    if (!response.ok) throw Object.assign(new Error(`HTTP ${response.status}`), { status: response.status });
    const { key_value: jwt } = await response.json();
    const url = `${devstack.replace(/^http/, "ws")}/v2?jwt=${jwt}&mock_key=${key}${switches ? `&${switches}` : ""}`;
    return config ? { url, config } : { url };
  };
  const stats = async () => (await (await fetch(`${devstack}/__stats`)).json()).speechmatics.keys[key];
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
  async oneFinalPerUtteranceThroughEndOfUtterance({ devstack, make }) {
    const app = speechmaticsBackend(devstack, "", { config: { transcription_config: { language: "en", enable_partials: true } } });
    const events = recorder();
    const transcriber = make({ protocol: "speechmatics", provision: app.provision, policy: FAST, ...events });
    for (const n of range(0, 99)) transcriber.sendAudio(frame(n)); // 2 s, before the socket opens
    await transcriber.start();
    await until(() => events.log.finals.length === 2, 6000, "two finals");
    await sleep(300);
    assertEq(events.log.finals.map(([text, n]) => [text, n]), [["w0 w25", 1], ["w50 w75", 2]], "one final per utterance");
    assert(events.log.partials.length >= 2, "partials for captions");
    const server = await app.stats();
    assertEq([server.jwtAuth, server.starts, server.languages, server.audioBeforeStart, server.frames, server.utterances], [1, 1, ["en"], 0, 100, 2], "the key in the query, StartRecognition with the config, audio after it");
    await transcriber.stop();
    assertEq(events.log.errors, [], "no errors");
    transcriber.free();
  },

  async aBacklogNeverRunsMoreThanFiveSecondsAheadOfAudioAdded({ devstack, make }) {
    // 8 s captured before the socket; the mock receipts each frame 300 ms late.
    const app = speechmaticsBackend(devstack, "mock_receipt_delay_ms=300");
    const transcriber = make({ protocol: "speechmatics", provision: app.provision, policy: FAST });
    for (const n of range(0, 399)) transcriber.sendAudio(frame(n));
    await transcriber.start();
    await until(() => transcriber.stats.framesSent === 400, 8000, "every frame sent");
    const server = await app.stats();
    assertEq(server.frames, 400, "all of it arrived");
    assert(server.maxAheadMs <= 5000, `never more than 5 s ahead of AudioAdded: ${server.maxAheadMs} ms`);
    assert(server.maxAheadMs >= 4000, `the window was used: ${server.maxAheadMs} ms`);
    await transcriber.stop();
    transcriber.free();
  },

  async aDropMidUtteranceKeepsTheWordsSpokenDuringTheOutage({ devstack, make }) {
    // The first connection is cut after 30 frames: w0 (frames 0–24) was transcribed there, frames
    // 25–29 were received (and receipted) but not transcribed: they are resent.
    const app = speechmaticsBackend(devstack, "mock_drop_after_frames=30&mock_times=1");
    const events = recorder();
    const close = closes();
    const transcriber = make({ protocol: "speechmatics", provision: app.provision, policy: FAST, ...events, onEvent: close.onEvent });
    await transcriber.start();
    await stream(transcriber, 0, 74);
    await until(() => events.log.finals.length === 1, 6000, "the final");
    assertEq(events.log.finals[0][0], "w0 w25 w50", "the words from both connections, the outage's included");
    assertEq(app.reasons, ["start", "reconnect"], "a fresh key for the reconnect");
    assertEq(close.events.map(([code, kind, next]) => [code, kind, next]), [[1006, "retry", "reconnect_same_url"]], "the close, reported");
    assert(transcriber.stats.framesResent >= 5, `frames 25–29 resent: ${transcriber.stats.framesResent}`);
    await transcriber.stop();
    transcriber.free();
  },

  async anExpiredKeyIsRefusedAndTheNextConnectGetsAFreshOne({ devstack, make }) {
    const app = speechmaticsBackend(devstack, "", { expired: 1 });
    const transcriber = make({ protocol: "speechmatics", provision: app.provision, policy: FAST });
    await transcriber.start();
    assertEq(app.reasons, ["start", "reconnect"], "refused once, then a fresh key");
    assertEq((await app.stats()).refused, 1, "the handshake refused the expired key");
    assertEq(transcriber.state, "open", "open");
    await transcriber.stop();
    transcriber.free();
  },

  async close1008ProvisionsANewSession({ devstack, make }) {
    const app = speechmaticsBackend(devstack, "mock_session_ms=300&mock_times=1");
    const events = recorder();
    const transcriber = make({ protocol: "speechmatics", provision: app.provision, policy: FAST, ...events });
    await transcriber.start();
    await until(async () => (await app.stats()).connections === 2, 4000, "a second session");
    await until(() => transcriber.state === "open", 2000, "open again");
    assertEq(app.reasons, ["start", "session_over"], "1008 (session timeout): a new session, counted by R3");
    assertEq(events.log.errors.filter((error) => error.terminal), [], "no terminal error");
    await transcriber.stop();
    transcriber.free();
  },

  async close4001IsFatalWithoutARetry({ devstack, make }) {
    const app = speechmaticsBackend(devstack, "mock_close=4001&mock_close_after_frames=3");
    const events = recorder();
    const close = closes();
    const transcriber = make({ protocol: "speechmatics", provision: app.provision, policy: FAST, ...events, onEvent: close.onEvent });
    await transcriber.start();
    for (const n of range(0, 9)) transcriber.sendAudio(frame(n));
    await until(() => transcriber.state === "failed", 3000, "failed");
    await sleep(300);
    const terminal = events.log.errors.filter((error) => error.terminal);
    assertEq(terminal.map((error) => [error.code, error.closeCode]), [["fatal_close", 4001]], "a terminal error naming the code");
    assertEq(close.events.map(([code, kind, next]) => [code, kind, next]), [[4001, "fatal", "stop"]], "reported as fatal");
    assertEq([app.reasons.length, (await app.stats()).connections], [1, 1], "no retry");
    transcriber.free();
  },

  async close4005IsThrottledNotDead({ devstack, make }) {
    const app = speechmaticsBackend(devstack, "mock_close=4005&mock_close_after_frames=3&mock_times=1");
    const close = closes();
    const transcriber = make({ protocol: "speechmatics", provision: app.provision, policy: FAST, throttledDelayMs: 700, onEvent: close.onEvent });
    await transcriber.start();
    for (const n of range(0, 9)) transcriber.sendAudio(frame(n));
    await until(async () => (await app.stats()).connections === 2, 4000, "a reconnect");
    await until(() => transcriber.state === "open", 2000, "open again");
    assertEq(close.events.map(([code, kind]) => [code, kind]), [[4005, "throttled"]], "throttled");
    assert(close.events[0][3] >= 700, `after at least throttledDelayMs: ${close.events[0][3]}`);
    assertEq(app.reasons, ["start", "reconnect"], "not a dead session");
    await transcriber.stop();
    transcriber.free();
  },

  async aSocketThatStopsReceiptingIsClosedAndReplaced({ devstack, make }) {
    const app = speechmaticsBackend(devstack, "mock_receipts_after_frames=5&mock_times=1");
    const close = closes();
    const transcriber = make({ protocol: "speechmatics", provision: app.provision, policy: FAST, ackTimeoutMs: 600, onEvent: close.onEvent });
    await transcriber.start();
    await stream(transcriber, 0, 59);
    await until(async () => (await app.stats()).connections === 2, 4000, "a second socket");
    assertEq(close.events[0].slice(0, 2), [1006, "retry"], "the silent socket was closed as half-open");
    await transcriber.stop();
    transcriber.free();
  },

  async anIdleSocketStaysOpen({ devstack, make }) {
    const app = speechmaticsBackend(devstack);
    const transcriber = make({ protocol: "speechmatics", provision: app.provision, policy: FAST });
    await transcriber.start();
    await sleep(2_000); // no audio at all: typed input only
    const server = await app.stats();
    assertEq([transcriber.state, server.connections, server.closeCodes, server.invalidMessages], ["open", 1, [], 0], "still the first socket");
    await transcriber.stop();
    transcriber.free();
  },

  async stopSendsEndOfStreamWithTheLastFrameSentAndFlushes({ devstack, make }) {
    const app = speechmaticsBackend(devstack);
    const events = recorder();
    const transcriber = make({ protocol: "speechmatics", provision: app.provision, policy: FAST, ...events });
    await transcriber.start();
    for (const n of range(0, 59)) transcriber.sendAudio(frame(n)); // w0 w25 and 10 frames of w50
    await until(() => events.log.finals.length === 1, 3000, "the first utterance");
    await transcriber.stop();
    assertEq(events.log.finals.map(([text]) => text), ["w0 w25", "w50"], "the word under way arrives before stopped");
    // The server files a close once its socket has closed, which can be just after `stop()` resolved.
    await until(async () => (await app.stats()).closeCodes.length > 0, 3000, "the server to see the close");
    const server = await app.stats();
    assertEq([server.endOfStreams, server.lastSeqNos, server.framesAtEnd, server.closeCodes], [1, [60], [60], [1000]], "EndOfStream names the last frame sent; EndOfTranscript; a normal close");
    assertEq(events.log.states.at(-1), "stopped", "stopped");
    transcriber.free();
  },
};

export async function runScenario(name, devstack, make, makeSession) {
  return runIn(scenarios, name, { devstack, make, makeSession });
}
