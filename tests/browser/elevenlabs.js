// LiveTranscriber with `protocol: "elevenlabs"` in a real browser against the dev stack's ElevenLabs
// Scribe realtime mock (www/devstack/elevenlabs.mjs; its scripted recognizer turns each 500 ms of
// audio into the word `w<N>`, N the number of the segment's first frame, two words an utterance,
// which VAD commits as `committed_transcript` and `committed_transcript_with_timestamps`). Each
// scenario has its own `mock_key`, and the server-side assertions read that key's counters.

import { assert, assertEq, frame, range, recorder, runIn, sleep, until } from "./support.js";

const FAST = { stableOpenMs: 400, initialDelayMs: 50, maxDelayMs: 400, jitter: "none" };
const QUERY = "model_id=scribe_v2_realtime&audio_format=pcm_16000&commit_strategy=vad&include_timestamps=true";

/**
 * A provision() as an app writes it for ElevenLabs: its backend mints a single-use token (here the
 * mock's endpoint stands in for the backend) for every connect; it goes in the URL's query. The
 * first `expired` calls get a token that is already expired.
 */
function elevenLabsBackend(devstack, switches = "", { expired = 0 } = {}) {
  const key = `el-${Math.random().toString(36).slice(2)}`;
  const reasons = [];
  const provision = async ({ signal, reason }) => {
    reasons.push(reason);
    const query = reasons.length <= expired ? "?expired=1" : "";
    const response = await fetch(`${devstack}/v1/single-use-token/realtime_scribe${query}`, { method: "POST", signal, headers: { "xi-api-key": "backend-key" } });
    if (!response.ok) throw Object.assign(new Error(`HTTP ${response.status}`), { status: response.status });
    const { token } = await response.json();
    return { url: `${devstack.replace(/^http/, "ws")}/v1/speech-to-text/realtime?${QUERY}&token=${token}&mock_key=${key}${switches ? `&${switches}` : ""}` };
  };
  const stats = async () => (await (await fetch(`${devstack}/__stats`)).json()).elevenlabs.keys[key];
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

/** A transcriber whose mock sends the error `type` after 3 frames on its first connection. */
async function withError(devstack, make, type, extra = {}) {
  const app = elevenLabsBackend(devstack, `mock_error=${type}&mock_error_after_frames=3&mock_times=1`);
  const events = recorder();
  const close = closes();
  const transcriber = make({ protocol: "elevenlabs", provision: app.provision, policy: FAST, ...extra, ...events, onEvent: close.onEvent });
  await transcriber.start();
  for (const n of range(0, 9)) transcriber.sendAudio(frame(n));
  return { app, events, close, transcriber };
}

const scenarios = {
  async oneFinalPerCommitThoughEachComesInTwoForms({ devstack, make }) {
    const app = elevenLabsBackend(devstack);
    const events = recorder();
    const transcriber = make({ protocol: "elevenlabs", provision: app.provision, policy: FAST, ...events });
    for (const n of range(0, 99)) transcriber.sendAudio(frame(n)); // 2 s, before the socket opens
    await transcriber.start();
    await until(() => events.log.finals.length === 2, 6000, "two finals");
    await sleep(300);
    assertEq(events.log.finals.map(([text, n]) => [text, n]), [["w0 w25", 1], ["w50 w75", 2]], "one final per commit");
    assert(events.log.partials.length >= 2, "partials for captions");
    const server = await app.stats();
    assertEq([server.committed, server.chunks, server.badChunks, server.refused], [2, 100, 0, 0], "two commits, each sent in both forms; base64 chunks");
    await transcriber.stop();
    assertEq(events.log.errors, [], "no errors");
    transcriber.free();
  },

  async aDropResendsTheUncommittedAudioWithTheLastFinalAsContext({ devstack, make }) {
    // Cut after 60 frames: "w0 w25" (frames 0–49) was committed, frames 50–59 were not.
    const app = elevenLabsBackend(devstack, "mock_drop_after_frames=60&mock_times=1");
    const events = recorder();
    const close = closes();
    const transcriber = make({ protocol: "elevenlabs", provision: app.provision, policy: FAST, ...events, onEvent: close.onEvent });
    await transcriber.start();
    await stream(transcriber, 0, 99);
    await until(() => events.log.finals.length === 2, 6000, "two finals");
    assertEq(events.log.finals.map(([text]) => text), ["w0 w25", "w50 w75"], "the outage's words in the second final, none twice");
    assertEq(app.reasons, ["start", "reconnect"], "a fresh single-use token");
    assertEq((await app.stats()).previousTexts, ["w0 w25"], "previous_text on the first chunk after the reconnect");
    assert(transcriber.stats.framesResent >= 10, `frames 50–59 resent: ${transcriber.stats.framesResent}`);
    assertEq(close.events.map(([code, kind]) => [code, kind]), [[1006, "retry"]], "the close, reported");
    await transcriber.stop();
    transcriber.free();
  },

  async aRefusedTokenIsAnAuthErrorAndFatal({ devstack, make }) {
    const app = elevenLabsBackend(devstack, "", { expired: 1 });
    const events = recorder();
    const transcriber = make({ protocol: "elevenlabs", provision: app.provision, policy: FAST, ...events });
    await transcriber.start().catch(() => {});
    await until(() => transcriber.state === "failed", 3000, "failed");
    assertEq(events.log.errors.filter((error) => error.terminal).map((error) => [error.code, error.closeCode]), [["fatal_close", 1008]], "auth_error, then 1008: fatal");
    assertEq([app.reasons.length, (await app.stats()).refused], [1, 1], "no retry");
    transcriber.free();
  },

  async theSessionTimeLimitProvisionsANewSession({ devstack, make }) {
    const { app, close, transcriber } = await withError(devstack, make, "session_time_limit_exceeded");
    await until(async () => (await app.stats()).connections === 2, 4000, "a second session");
    assertEq(close.events.map(([code, kind]) => [code, kind]), [[1008, "session_over"]], "the session is over");
    assertEq(app.reasons, ["start", "session_over"], "re-provisioned, counted by R3");
    await transcriber.stop();
    transcriber.free();
  },

  async unacceptedTermsIsFatalInBothSpellings({ devstack, make }) {
    for (const type of ["unaccepted_terms", "unaccepted_terms_error"]) {
      const { app, close, transcriber } = await withError(devstack, make, type);
      await until(() => transcriber.state === "failed", 3000, `failed on ${type}`);
      assertEq(close.events.map(([code, kind]) => [code, kind]), [[1008, "fatal"]], type);
      assertEq(app.reasons.length, 1, "no retry");
      transcriber.free();
    }
  },

  async rateLimitedIsThrottled({ devstack, make }) {
    const { app, close, transcriber } = await withError(devstack, make, "rate_limited", { throttledDelayMs: 700 });
    await until(async () => (await app.stats()).connections === 2, 4000, "a reconnect");
    assertEq(close.events.map(([code, kind]) => [code, kind]), [[1008, "throttled"]], "throttled");
    assert(close.events[0][3] >= 700, `after at least throttledDelayMs: ${close.events[0][3]}`);
    await transcriber.stop();
    transcriber.free();
  },

  async anIdleSocketStaysOpen({ devstack, make }) {
    const app = elevenLabsBackend(devstack);
    const transcriber = make({ protocol: "elevenlabs", provision: app.provision, policy: FAST });
    await transcriber.start();
    await sleep(2_000); // no audio at all: typed input only
    const server = await app.stats();
    assertEq([transcriber.state, server.connections, server.closeCodes, server.errors], ["open", 1, [], []], "still the first socket");
    await transcriber.stop();
    transcriber.free();
  },

  async stopCommitsAndFlushesTheLastWords({ devstack, make }) {
    const app = elevenLabsBackend(devstack);
    const events = recorder();
    const transcriber = make({ protocol: "elevenlabs", provision: app.provision, policy: FAST, ...events });
    await transcriber.start();
    for (const n of range(0, 59)) transcriber.sendAudio(frame(n)); // w0 w25 and 10 frames of w50
    await until(() => events.log.finals.length === 1, 3000, "the first commit");
    await transcriber.stop();
    assertEq(events.log.finals.map(([text]) => text), ["w0 w25", "w50"], "the word under way arrives before stopped");
    assertEq((await app.stats()).commits, 1, "one manual commit");
    assertEq(events.log.states.at(-1), "stopped", "stopped");
    transcriber.free();
  },

  async threeDropsWithFreshTokensDoNotFail({ devstack, make }) {
    const app = elevenLabsBackend(devstack, "mock_drop_after_ms=300&mock_times=3");
    const events = recorder();
    const transcriber = make({ protocol: "elevenlabs", provision: app.provision, policy: FAST, ...events });
    await transcriber.start();
    await until(async () => (await app.stats()).connections === 4, 6000, "a fourth connection");
    await sleep(500);
    assertEq(transcriber.state, "open", "open: R3 counts dead sessions, not fresh tokens");
    assertEq(app.reasons, ["start", "reconnect", "reconnect", "reconnect"], "a single-use token per connect");
    assertEq(events.log.errors, [], "no errors");
    await transcriber.stop();
    transcriber.free();
  },
};

export async function runScenario(name, devstack, make, makeSession) {
  return runIn(scenarios, name, { devstack, make, makeSession });
}
