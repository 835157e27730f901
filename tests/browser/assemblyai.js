// LiveTranscriber with `protocol: "assemblyai"` in a real browser against the dev stack's
// AssemblyAI mock (www/devstack/assemblyai.mjs; its scripted recognizer turns each 500 ms of audio
// into the word `w<N>`, N the number of the segment's first frame, two words a turn; the mock
// enforces 50–1000 ms frames and real-time pacing with close 3007). Each scenario has its own
// `mock_key`. `ctx`: `{ devstack, make }`.

import { assert, assertEq, frame, range, recorder, runIn, sleep, until } from "./support.js";

const FAST = { stableOpenMs: 400, initialDelayMs: 50, maxDelayMs: 400, jitter: "none" };

/**
 * A provision() as an app writes it for AssemblyAI: its backend gets a single-use token
 * (`GET /v3/token`; the mock stands in for the backend) for every connect. The first `expired`
 * calls get a token that is already expired; `reuse` hands the first token out every time.
 */
function assemblyAiBackend(devstack, switches = "", { expired = 0, reuse = false } = {}) {
  const key = `aai-${Math.random().toString(36).slice(2)}`;
  const reasons = [];
  let first = null;
  const provision = async ({ signal, reason }) => {
    reasons.push(reason);
    let token = reuse ? first : null;
    if (!token) {
      const query = reasons.length <= expired ? "&expired=1" : "";
      const response = await fetch(`${devstack}/v3/token?expires_in_seconds=60${query}`, { signal, headers: { authorization: "backend-key" } });
      if (!response.ok) throw Object.assign(new Error(`HTTP ${response.status}`), { status: response.status });
      token = (await response.json()).token;
      first ??= token;
    }
    const url = `${devstack.replace(/^http/, "ws")}/v3/ws?sample_rate=16000&encoding=pcm_s16le&format_turns=true&mock_key=${key}${switches ? `&${switches}` : ""}&token=${token}`;
    return { url };
  };
  const stats = async () => (await (await fetch(`${devstack}/__stats`)).json()).assemblyai.keys[key];
  return { provision, reasons, stats };
}

function closes() {
  const events = [];
  return { events, onEvent: (event) => events.push([event.code, event.class, event.next]) };
}

async function stream(transcriber, from, to) {
  for (const n of range(from, to)) {
    transcriber.sendAudio(frame(n));
    await sleep(20);
  }
}

const scenarios = {
  async oneFinalPerTurnTheFormattedOne({ devstack, make }) {
    const app = assemblyAiBackend(devstack);
    const events = recorder();
    const transcriber = make({ protocol: "assemblyai", provision: app.provision, policy: FAST, ...events });
    await transcriber.start();
    await stream(transcriber, 0, 101); // 2 s and a bit: two turns (frames go out three at a time, 60 ms)
    await until(() => events.log.finals.length === 2, 4000, "two finals");
    await sleep(300);
    assertEq(events.log.finals.map(([text, n]) => [text, n]), [["W0 w25.", 1], ["W50 w75.", 2]], "the formatted end of each turn, once");
    assert(events.log.partials.length >= 2, "partials");
    await transcriber.stop(); // frames 100–101 are a third turn, ended by ForceEndpoint
    assertEq(events.log.finals.map(([text]) => text), ["W0 w25.", "W50 w75.", "W100."], "and the last words");
    const server = await app.stats();
    assertEq([server.tokenAuth, server.turns, server.badFrames, server.tooFast], [1, 3, 0, 0], "one token, three turns, frames of 50–1000 ms, never too fast");
    assertEq(events.log.errors, [], "no errors");
    transcriber.free();
  },

  async aBacklogNeverTrips3007({ devstack, make }) {
    const app = assemblyAiBackend(devstack);
    const events = recorder();
    const transcriber = make({ protocol: "assemblyai", provision: app.provision, policy: FAST, ...events });
    for (const n of range(0, 149)) transcriber.sendAudio(frame(n)); // 3 s captured before the socket
    await transcriber.start();
    await until(() => events.log.finals.length === 3, 6000, "three turns");
    const server = await app.stats();
    assertEq([server.connections, server.tooFast, server.closeCodes], [1, 0, []], "one connection, never faster than real time");
    await transcriber.stop();
    transcriber.free();
  },

  async aDropMidTurnKeepsTheWordsSpokenDuringTheOutage({ devstack, make }) {
    const app = assemblyAiBackend(devstack, "mock_drop_after_frames=10&mock_times=1");
    const events = recorder();
    const close = closes();
    const transcriber = make({ protocol: "assemblyai", provision: app.provision, policy: FAST, ...events, onEvent: close.onEvent });
    await transcriber.start();
    // Frames go out three at a time (60 ms chunks, AssemblyAI's 50 ms floor); the first socket is cut
    // after ten chunks (frames 0–29). It finalized w0 (0–500 ms), so the chunk from frame 24 on is
    // resent: the new session hears w24 and w49, frames 30–73 of which were spoken during the outage.
    await stream(transcriber, 0, 77);
    await until(() => events.log.finals.length === 1, 6000, "the final");
    assertEq(events.log.finals[0][0], "w0 W24 w49.", "the words from both connections, the outage's included");
    assertEq(app.reasons.slice(0, 2), ["start", "reconnect"], "a fresh single-use token for the reconnect");
    assertEq(close.events[0], [1006, "retry", "reconnect_same_url"], "the cut, reported");
    await transcriber.stop();
    transcriber.free();
  },

  async anExpiredTokenGetsOneFreshOne({ devstack, make }) {
    const app = assemblyAiBackend(devstack, "", { expired: 1 });
    const events = recorder();
    const close = closes();
    const transcriber = make({ protocol: "assemblyai", provision: app.provision, policy: FAST, ...events, onEvent: close.onEvent });
    await transcriber.start();
    await until(() => app.reasons.length === 2 && transcriber.state === "open", 3000, "a fresh token");
    await sleep(300);
    assertEq(transcriber.state, "open", "open with the fresh token");
    assertEq(close.events, [[1008, "retry", "reconnect_same_url"]], "1008 once: retried with a fresh token");
    await transcriber.stop();
    transcriber.free();
  },

  async aReusedTokenIsRefusedTwiceAndTheTranscriberFails({ devstack, make }) {
    // A backend that hands out the same token: the second connect is refused, then the third.
    const app = assemblyAiBackend(devstack, "mock_drop_after_ms=200&mock_times=1", { reuse: true });
    const events = recorder();
    const transcriber = make({ protocol: "assemblyai", provision: app.provision, policy: FAST, ...events });
    await transcriber.start();
    await until(() => transcriber.state === "failed", 4000, "failed");
    const terminal = events.log.errors.filter((error) => error.terminal);
    assertEq(terminal.map((error) => [error.code, error.closeCode]), [["fatal_close", 1008]], "terminal after a fresh token did not help");
    assertEq((await app.stats()).unauthorized, 2, "refused twice");
    transcriber.free();
  },

  async aSessionCapEndsTheSessionAndItIsReprovisioned({ devstack, make }) {
    const app = assemblyAiBackend(devstack, "mock_session_ms=500&mock_times=1");
    const events = recorder();
    const close = closes();
    const transcriber = make({ protocol: "assemblyai", provision: app.provision, policy: FAST, ...events, onEvent: close.onEvent });
    await transcriber.start();
    await until(() => app.reasons.length === 2 && transcriber.state === "open", 3000, "a new session");
    assertEq(app.reasons, ["start", "session_over"], "3008: a new session, counted by R3");
    assertEq(close.events, [[3008, "session_over", "reprovision"]], "reported");
    await transcriber.stop();
    transcriber.free();
  },

  async tooManySessionsWaitsTheThrottledDelay({ devstack, make }) {
    const app = assemblyAiBackend(devstack, "mock_close=3009&mock_times=1");
    const events = recorder();
    const close = closes();
    const transcriber = make({ protocol: "assemblyai", provision: app.provision, policy: FAST, throttledDelayMs: 700, ...events, onEvent: close.onEvent });
    await transcriber.start();
    await until(() => close.events.length === 1, 3000, "the close");
    assertEq(close.events, [[3009, "throttled", "reconnect_same_url"]], "throttled");
    const backoff = events.log.times.find(([state]) => state === "backoff")[1];
    await until(() => app.reasons.length === 2, 3000, "the retry");
    const waited = performance.now() - backoff;
    assert(waited >= 650, `waited the throttled delay, not the 50 ms backoff: ${Math.round(waited)} ms`);
    await until(() => transcriber.state === "open", 3000, "open again");
    await transcriber.stop();
    transcriber.free();
  },

  async serverError3005IsRetriedAnd3007IsFatal({ devstack, make }) {
    const retried = assemblyAiBackend(devstack, "mock_close=3005&mock_times=1");
    const events = recorder();
    const transcriber = make({ protocol: "assemblyai", provision: retried.provision, policy: FAST, ...events });
    await transcriber.start();
    await until(() => retried.reasons.length === 2 && transcriber.state === "open", 3000, "retried");
    await transcriber.stop();
    transcriber.free();
    const fatal = assemblyAiBackend(devstack, "mock_close=3007&mock_close_after_frames=2");
    const failed = recorder();
    const other = make({ protocol: "assemblyai", provision: fatal.provision, policy: FAST, ...failed });
    await other.start();
    await stream(other, 0, 10);
    await until(() => other.state === "failed", 3000, "failed");
    assertEq(failed.log.errors.filter((e) => e.terminal).map((e) => e.closeCode), [3007], "3007 is terminal");
    assertEq(fatal.reasons.length, 1, "no retry");
    other.free();
  },

  async stopFlushesTheLastWords({ devstack, make }) {
    const app = assemblyAiBackend(devstack);
    const events = recorder();
    const transcriber = make({ protocol: "assemblyai", provision: app.provision, policy: FAST, ...events });
    await transcriber.start();
    await stream(transcriber, 0, 61); // w0 w25, and 12 frames of w50
    await until(() => events.log.finals.length === 1, 3000, "the first turn");
    await transcriber.stop();
    assertEq(events.log.finals.map(([text]) => text), ["W0 w25.", "W50."], "the turn under way arrives before stopped");
    // The server files a close once its socket has closed, which can be just after `stop()` resolved.
    await until(async () => (await app.stats()).closeCodes.length > 0, 3000, "the server to see the close");
    const server = await app.stats();
    assertEq([server.forceEndpoints, server.terminates, server.closeCodes, server.badFrames], [1, 1, [1000], 0], "ForceEndpoint, Terminate, a normal close; the tail padded to 50 ms");
    transcriber.free();
  },

  async threeDropsInAMinuteWithSingleUseTokensDoNotFail({ devstack, make }) {
    const app = assemblyAiBackend(devstack, "mock_drop_after_ms=300&mock_times=3");
    const events = recorder();
    const transcriber = make({ protocol: "assemblyai", provision: app.provision, policy: FAST, ...events });
    await transcriber.start();
    await until(async () => (await app.stats()).connections === 4, 6000, "a fourth connection");
    await sleep(500);
    assertEq(transcriber.state, "open", "open");
    assertEq(app.reasons, ["start", "reconnect", "reconnect", "reconnect"], "one token per connect");
    assertEq((await app.stats()).unauthorized, 0, "no token reused");
    await transcriber.stop();
    transcriber.free();
  },
};

export async function runScenario(name, devstack, make) {
  return runIn(scenarios, name, { devstack, make });
}
