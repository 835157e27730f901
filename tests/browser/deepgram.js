// LiveTranscriber with `protocol: "deepgram"` in a real browser against the dev stack's Deepgram
// mock (www/devstack/deepgram.mjs; its scripted recognizer turns each 500 ms of audio into the word
// `w<N>`, N the number of the segment's first frame, two words an utterance). Each scenario has its
// own `mock_key`, and the server-side assertions read that key's counters. `ctx`: `{ devstack, make,
// makeSession }` (`new LiveTranscriber(options)`, `new VoiceSession(options)`).

import { assert, assertEq, assertThrows, frame, range, recorder, runIn, sleep, until } from "./support.js";

const FAST = { stableOpenMs: 400, initialDelayMs: 50, maxDelayMs: 400, jitter: "none" };
const LISTEN = "model=nova-3&encoding=linear16&sample_rate=16000&channels=1&interim_results=true&utterance_end_ms=1000&vad_events=true";

/**
 * A provision() as an app writes it for Deepgram: its backend mints a short-lived token (here the
 * mock's grant endpoint stands in for the backend) and the page connects with ["bearer", token].
 * The first `expired` calls get a token that is already expired.
 */
function deepgramBackend(devstack, switches = "", { expired = 0 } = {}) {
  const key = `dg-${Math.random().toString(36).slice(2)}`;
  const reasons = [];
  const provision = async ({ signal, reason }) => {
    reasons.push(reason);
    const query = reasons.length <= expired ? "?expired=1" : "";
    const response = await fetch(`${devstack}/v1/auth/grant${query}`, {
      method: "POST",
      signal,
      headers: { authorization: "Token backend-key", "content-type": "application/json" },
      body: JSON.stringify({ ttl_seconds: 30 }),
    });
    if (!response.ok) throw Object.assign(new Error(`HTTP ${response.status}`), { status: response.status });
    const { access_token: token } = await response.json();
    const url = `${devstack.replace(/^http/, "ws")}/v1/listen?${LISTEN}&mock_key=${key}${switches ? `&${switches}` : ""}`;
    return { url, protocols: ["bearer", token] };
  };
  const stats = async () => (await (await fetch(`${devstack}/__stats`)).json()).deepgram.keys[key];
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
  async oneFinalPerUtteranceThroughSpeechFinalAndUtteranceEnd({ devstack, make }) {
    const app = deepgramBackend(devstack);
    const events = recorder();
    const transcriber = make({ protocol: "deepgram", provision: app.provision, policy: FAST, ...events });
    for (const n of range(0, 99)) transcriber.sendAudio(frame(n)); // 2 s, before the socket opens
    await transcriber.start();
    await until(() => events.log.finals.length === 2, 6000, "two finals");
    await sleep(300); // UtteranceEnd follows every speech_final: it must not make a third
    assertEq(events.log.finals.map(([text, n]) => [text, n]), [["w0 w25", 1], ["w50 w75", 2]], "one final per utterance");
    assert(events.log.partials.length >= 2, "partials for captions");
    assertEq(events.log.speechStarts, [1, 2], "speech starts");
    await transcriber.stop();
    const server = await app.stats();
    assertEq([server.bearer, server.finals, server.frames, server.tooFast], [1, 2, 100, 0], "bearer token, two utterances, every frame, never too fast");
    assertEq(app.reasons, ["start"], "one provision");
    assertEq(events.log.errors, [], "no errors");
    transcriber.free();
  },

  async aDropMidUtteranceKeepsTheWordsSpokenDuringTheOutage({ devstack, make }) {
    // The first connection is cut after 30 frames: w0 (frames 0–24) was finalized there, frames
    // 25–29 were not. The final must still hold the words of frames 25 on (spoken during the outage).
    const app = deepgramBackend(devstack, "mock_drop_after_frames=30&mock_times=1");
    const events = recorder();
    const close = closes();
    const transcriber = make({ protocol: "deepgram", provision: app.provision, policy: FAST, ...events, onEvent: close.onEvent });
    await transcriber.start();
    await stream(transcriber, 0, 74);
    await until(() => events.log.finals.length === 1, 6000, "the final");
    assertEq(events.log.finals[0][0], "w0 w25 w50", "the words from both connections, the outage's included");
    assertEq(app.reasons, ["start", "reconnect"], "a fresh token for the reconnect");
    assertEq(close.events, [[1006, "retry", "reconnect_same_url"]], "the close, reported");
    assert(transcriber.stats.framesResent >= 5, `frames 25–29 resent: ${transcriber.stats.framesResent}`);
    await transcriber.stop();
    transcriber.free();
  },

  async anExpiredTokenIsRefusedAndTheNextConnectGetsAFreshOne({ devstack, make }) {
    const app = deepgramBackend(devstack, "", { expired: 1 });
    const events = recorder();
    const transcriber = make({ protocol: "deepgram", provision: app.provision, policy: FAST, ...events });
    await transcriber.start();
    assertEq(app.reasons, ["start", "reconnect"], "refused once, then a fresh token");
    assertEq((await app.stats()).refused, 1, "the handshake refused the expired token");
    assertEq(transcriber.state, "open", "open");
    await transcriber.stop();
    transcriber.free();
  },

  async threeRefusedHandshakesEndTheSessionAndItIsReprovisioned({ devstack, make }) {
    const app = deepgramBackend(devstack, "", { expired: 3 });
    const events = recorder();
    const transcriber = make({ protocol: "deepgram", provision: app.provision, policy: FAST, ...events });
    await transcriber.start();
    assertEq(app.reasons, ["start", "reconnect", "reconnect", "session_over"], "R5: a dead session, counted by R3");
    assertEq(transcriber.stats.provisions, 4, "four provisions");
    await transcriber.stop();
    transcriber.free();
  },

  async close1008IsFatalWithoutARetry({ devstack, make }) {
    const app = deepgramBackend(devstack, "mock_close=1008&mock_close_after_frames=3");
    const events = recorder();
    const close = closes();
    const transcriber = make({ protocol: "deepgram", provision: app.provision, policy: FAST, ...events, onEvent: close.onEvent });
    await transcriber.start();
    for (const n of range(0, 9)) transcriber.sendAudio(frame(n));
    await until(() => transcriber.state === "failed", 3000, "failed");
    await sleep(300);
    const terminal = events.log.errors.filter((error) => error.terminal);
    assertEq(terminal.map((error) => [error.code, error.closeCode]), [["fatal_close", 1008]], "a terminal error naming the code");
    assertEq(close.events, [[1008, "fatal", "stop"]], "reported as fatal");
    assertEq([app.reasons.length, (await app.stats()).connections], [1, 1], "no retry");
    transcriber.free();
  },

  async anIdleSocketIsKeptOpenPastTheTenSecondLimit({ devstack, make }) {
    const app = deepgramBackend(devstack);
    const events = recorder();
    const transcriber = make({ protocol: "deepgram", provision: app.provision, policy: FAST, ...events });
    await transcriber.start();
    await sleep(10_500); // no audio at all: typed input only
    const server = await app.stats();
    assertEq([transcriber.state, server.connections, server.closeCodes], ["open", 1, []], "still the first socket");
    assert(server.keepAlives >= 2, `KeepAlive at 4 s and 8 s: ${server.keepAlives}`);
    await transcriber.stop();
    transcriber.free();
  },

  async stopFlushesTheLastWords({ devstack, make }) {
    const app = deepgramBackend(devstack);
    const events = recorder();
    const transcriber = make({ protocol: "deepgram", provision: app.provision, policy: FAST, ...events });
    await transcriber.start();
    for (const n of range(0, 59)) transcriber.sendAudio(frame(n)); // w0 w25 and 10 frames of w50
    await until(() => events.log.finals.length === 1, 3000, "the first utterance");
    await transcriber.stop();
    assertEq(events.log.finals.map(([text]) => text), ["w0 w25", "w50"], "the word under way arrives before stopped");
    // The server files a close once its socket has closed, which can be just after `stop()` resolved.
    await until(async () => (await app.stats()).closeCodes.length > 0, 3000, "the server to see the close");
    const server = await app.stats();
    assertEq([server.finalizes, server.closeStreams, server.closeCodes], [1, 1, [1000]], "Finalize, CloseStream, a normal close");
    assertEq(events.log.states.at(-1), "stopped", "stopped");
    transcriber.free();
  },

  async threeDropsInAMinuteWithFreshTokensDoNotFail({ devstack, make }) {
    const app = deepgramBackend(devstack, "mock_drop_after_ms=300&mock_times=3");
    const events = recorder();
    const close = closes();
    const transcriber = make({ protocol: "deepgram", provision: app.provision, policy: FAST, ...events, onEvent: close.onEvent });
    await transcriber.start();
    await until(async () => (await app.stats()).connections === 4, 6000, "a fourth connection");
    await sleep(500);
    assertEq(transcriber.state, "open", "open: R3 counts dead sessions, not fresh tokens");
    assertEq(app.reasons, ["start", "reconnect", "reconnect", "reconnect"], "a fresh token per connect");
    assertEq(close.events.map(([code, kind]) => [code, kind]), [[1006, "retry"], [1006, "retry"], [1006, "retry"]], "three drops reported");
    assertEq(events.log.errors, [], "no errors");
    await transcriber.stop();
    transcriber.free();
  },

  async aBacklogIsResentNoFasterThanTheProviderAllows({ devstack, make }) {
    const app = deepgramBackend(devstack);
    const transcriber = make({ protocol: "deepgram", provision: app.provision, policy: FAST });
    for (const n of range(0, 199)) transcriber.sendAudio(frame(n)); // 4 s captured before the socket
    await transcriber.start();
    await until(() => transcriber.stats.framesSent === 200, 6000, "every frame sent");
    const server = await app.stats();
    assertEq([server.frames, server.tooFast], [200, 0], "all of it, never over 1.25× real time");
    await transcriber.stop();
    transcriber.free();
  },

  async theProtocolOptionIsChecked({ make }) {
    const provision = () => ({ url: "ws://127.0.0.1:1/never" });
    await assertThrows(() => make({ provision, protocol: "whisper" }), RangeError, /options\.protocol must be one of "assemblyai", "deepgram", "elevenlabs", "gladia"/, "unknown protocol");
    await assertThrows(() => make({ provision, protocol: 7 }), TypeError, /options\.protocol/, "not a string");
    await assertThrows(() => make({ provision, throttledDelayMs: -1 }), RangeError, /options\.throttledDelayMs/, "negative throttledDelayMs");
    await assertThrows(() => make({ provision, workletUrl: "" }), RangeError, /options\.workletUrl/, "empty workletUrl");
    await assertThrows(() => make({ provision, onEvent: 1 }), TypeError, /options\.onEvent/, "onEvent not a function");
    make({ provision, protocol: "deepgram" }).free();
  },

  async subprotocolsThatAreNotStringsFailAsAnUnusableUrl({ devstack, make }) {
    const events = recorder();
    const transcriber = make({ protocol: "deepgram", provision: () => ({ url: `${devstack.replace(/^http/, "ws")}/v1/listen`, protocols: ["bearer", 5] }), ...events });
    await assertThrows(() => transcriber.start(), Error, /url/, "start rejects");
    assertEq(events.log.errors.map((error) => error.code), ["invalid_url"], "invalid_url");
    transcriber.free();
  },
};

scenarios.voiceSessionPassesTheProtocolAndItsEventsThrough = async ({ devstack, makeSession }) => {
  const app = deepgramBackend(devstack);
  const close = closes();
  const session = makeSession({
    routes: [{ name: "r", generate: async () => "Noted." }],
    recoveryText: "Sorry?",
    provision: app.provision,
    synthesize: () => new ArrayBuffer(8),
    transcriber: { protocol: "deepgram", policy: FAST, onEvent: close.onEvent, workletUrl: "/never-loaded.js" },
  });
  await session.start({ microphone: false });
  assertEq(app.reasons, ["start"], "provisioned through the session");
  const server = await app.stats();
  assertEq([server.bearer, server.open], [1, 1], "the session's transcriber speaks Deepgram, with the bearer subprotocol");
  await session.stop();
  session.free();
};

export async function runScenario(name, devstack, make, makeSession) {
  return runIn(scenarios, name, { devstack, make, makeSession });
}
