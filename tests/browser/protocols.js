// LiveTranscriber with every protocol of the dev stack's list (GET /__protocols, one descriptor per
// file in www/protocols/) in a real browser, against that protocol's mock. Each scenario runs for
// every protocol it applies to at once (Promise.all), each on its own `mock_key`, and says which
// protocol failed. What a protocol does differently comes from its descriptor's `fixture`; a case
// of one protocol only is in its fixture's `scenarios` (the descriptor module, imported by URL).
//
// The mocks' scripted recognizer (recognizer=frames) turns each 500 ms of audio into the word
// `w<N>`, N the number of the segment's first frame, two words an utterance. Each page provisions
// through the dev stack's stand-in for an app's backend (POST /api/stt/<name>, which runs the
// descriptor's backend recipe with a key the page never sees), asking for mock switches there.
// `ctx`: `{ devstack, make, makeSession }` (`new LiveTranscriber(options)`, `new VoiceSession(options)`).

import { assert, assertEq, assertThrows, FAST, frame, range, recorder, runIn, sleep, until } from "./support.js";

let listed = null;
/** The dev stack's protocols (data only: the descriptors' functions stay on the server). */
function protocols(devstack) {
  listed ??= fetch(`${devstack}/__protocols`).then((response) => response.json());
  return listed;
}

/**
 * A provision() as an app writes it: a call to its backend (here the dev stack's), which asks the
 * provider for what one connect needs. `socket`, `token`: mock switches for the socket URL and the
 * token request; `reuse`: a backend that hands out its first answer again and again.
 */
function backend(devstack, name, socket = "", { token = "", reuse = false } = {}) {
  const key = `${name}-${Math.random().toString(36).slice(2)}`;
  const reasons = [];
  let first = null;
  const provision = async ({ signal, reason, attempt }) => {
    reasons.push(attempt === 1 ? reason : `${reason}#${attempt}`); // none of these retries
    if (reuse && first) return first;
    const response = await fetch(`${devstack}/api/stt/${name}`, {
      method: "POST",
      signal,
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ reason, key, socket: ["recognizer=frames", socket].filter(Boolean).join("&"), token }),
    });
    if (!response.ok) throw Object.assign(new Error(`HTTP ${response.status}`), { status: response.status });
    const answer = await response.json();
    first ??= answer;
    return answer;
  };
  const stats = async () => (await (await fetch(`${devstack}/__stats?protocol=${name}&key=${key}`)).json()) ?? {};
  return { provision, reasons, stats, key };
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

/** A server-side condition, polled gently: seven protocols poll at once. */
async function eventually(condition, timeoutMs, label) {
  const deadline = performance.now() + timeoutMs;
  while (!(await condition())) {
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${label}`);
    await sleep(50);
  }
}

/** The final as the protocol sends it (AssemblyAI formats turns: "W0 w25."). */
const said = (p, text) => (p.fixture.format === "sentence" ? `${text[0].toUpperCase()}${text.slice(1)}.` : text);
/** Frames go out `framesPerChunk` at a time: a count that fills its last chunk. */
const whole = (p, frames) => Math.ceil(frames / (p.fixture.framesPerChunk ?? 1)) * (p.fixture.framesPerChunk ?? 1);
/** The reasons provision() is called for: on every connect where credentials are single-use (R6). */
const reconnects = (p, count) => (p.fixture.freshCredentials ? Array(count).fill("reconnect") : []);

function assertServer(p, server, expected = {}) {
  for (const [field, value] of Object.entries(expected)) assertEq(server[field], value, `${p.name}: the server's ${field}`);
}

/**
 * A scenario for every protocol `applies` to, at once. Resolves with the protocols it ran for
 * (logged); rejects naming each protocol that failed.
 */
function forEach(applies, scenario) {
  return async (ctx) => {
    const chosen = (await protocols(ctx.devstack)).filter(applies);
    assert(chosen.length > 0, "some protocol runs this scenario");
    const results = await Promise.allSettled(chosen.map((p) => scenario(p, ctx)));
    const failures = results.flatMap((result, i) => (result.status === "rejected" ? [`${chosen[i].name}: ${result.reason?.message ?? result.reason}`] : []));
    if (failures.length > 0) throw new Error(failures.join("\n"));
    return { protocols: chosen.map((p) => p.name) };
  };
}

const all = () => true;

const scenarios = {
  oneFinalPerUtterance: forEach(all, async (p, { devstack, make }) => {
    const app = backend(devstack, p.name, p.fixture.oneFinal?.socket);
    const events = recorder();
    const transcriber = make({ protocol: p.name, provision: app.provision, policy: FAST, ...events });
    const frames = whole(p, 100);
    for (const n of range(0, frames - 1)) transcriber.sendAudio(frame(n)); // 2 s, before the socket opens
    await transcriber.start();
    await until(() => events.log.finals.length === 2, 8000, `${p.name}: two finals`);
    await sleep(300); // a second form of a final (UtteranceEnd, a formatted turn, a duplicate) must not make a third
    const expected = [said(p, "w0 w25"), said(p, "w50 w75")];
    assertEq(events.log.finals.map(([text, n]) => [text, n]), [[expected[0], 1], [expected[1], 2]], `${p.name}: one final per utterance`);
    assert(events.log.partials.length >= 2, `${p.name}: partials for captions`);
    if (p.fixture.speechStarts) assertEq(events.log.speechStarts, [1, 2], `${p.name}: speech starts`);
    const server = await app.stats();
    assertEq([server.finals, server.tooFast, server.invalidMessages, server.refused], [2, 0, 0, 0], `${p.name}: two utterances, never too fast, nothing unreadable`);
    if (p.fixture.authCounter) assertEq(server[p.fixture.authCounter], 1, `${p.name}: ${p.fixture.authCounter}`);
    assertServer(p, server, p.fixture.oneFinal?.server);
    assertEq(app.reasons, ["start"], `${p.name}: one provision`);
    await transcriber.stop();
    // A chunk's frames past frame 99 are the start of a third utterance, which stop() ends.
    const tail = frames > 100 ? [said(p, "w100")] : [];
    assertEq(events.log.finals.map(([text]) => text), [...expected, ...tail], `${p.name}: no final twice on stop`);
    assertEq(events.log.errors, [], `${p.name}: no errors`);
    transcriber.free();
  }),

  aDropMidUtteranceKeepsTheWordsSpokenDuringTheOutage: forEach(all, async (p, { devstack, make }) => {
    const drop = p.fixture.drop;
    const app = backend(devstack, p.name, `mock_drop_after_frames=${drop.afterFrames}&mock_times=1`);
    const events = recorder();
    const close = closes();
    const transcriber = make({ protocol: p.name, provision: app.provision, policy: FAST, ...events, onEvent: close.onEvent });
    await transcriber.start();
    await stream(transcriber, drop.stream[0], drop.stream[1]);
    await until(() => events.log.finals.length === drop.finals.length, 6000, `${p.name}: the finals`);
    assertEq(events.log.finals.map(([text]) => text), drop.finals, `${p.name}: the words from both connections, the outage's included`);
    assertEq(app.reasons, ["start", ...reconnects(p, 1)], `${p.name}: fresh credentials for the reconnect where they are single-use`);
    assertEq(close.events.map(([code, kind, next]) => [code, kind, next]), [[1006, "retry", "reconnect_same_url"]], `${p.name}: the close, reported`);
    assert(transcriber.stats.framesResent >= drop.resent, `${p.name}: at least ${drop.resent} frames resent: ${transcriber.stats.framesResent}`);
    assertServer(p, await app.stats(), drop.server);
    await transcriber.stop();
    transcriber.free();
  }),

  aRefusedHandshakeIsRetriedAndReportedAtOnce: forEach(all, async (p, { devstack, make }) => {
    const app = backend(devstack, p.name, "mock_refuse_upgrade=401&mock_times=1");
    const events = recorder();
    const transcriber = make({ protocol: p.name, provision: app.provision, policy: FAST, ...events });
    await transcriber.start();
    assertEq(app.reasons, ["start", ...reconnects(p, 1)], `${p.name}: refused once, then (with fresh credentials where they are single-use) open`);
    assertEq([(await app.stats()).refused, transcriber.state], [1, "open"], `${p.name}: the handshake refused once`);
    const reported = events.log.errors.map((error) => [error.code, error.terminal, error.attempt, error.protocol]);
    assertEq(reported, [["connect_failed", false, 1, p.name]], `${p.name}: the refusal reported at once, not terminal`);
    assert(/check the credential and `protocols`/.test(events.log.errors[0].message), `${p.name}: the message names the fix: ${events.log.errors[0].message}`);
    await transcriber.stop();
    transcriber.free();
  }),

  refusedHandshakesBeforeAnyOpenFailAsConnectFailed: forEach(all, async (p, { devstack, make }) => {
    // No socket ever opened: the first dead URL is re-provisioned (R5; it may be stale), a second
    // fresh one refused as well is a credential or `protocols` mistake a third would repeat.
    const app = backend(devstack, p.name, "mock_refuse_upgrade=401&mock_times=6");
    const events = recorder();
    const transcriber = make({ protocol: p.name, provision: app.provision, policy: FAST, ...events });
    const error = await transcriber.start().then(() => null, (rejection) => rejection);
    assert(error, `${p.name}: start() rejects`);
    assertEq([error.code, error.terminal, transcriber.state], ["connect_failed", true, "failed"], `${p.name}: terminal connect_failed`);
    const perUrl = (last) => [["connect_failed", false, 1], ["connect_failed", false, 2], ["connect_failed", last, 3]];
    assertEq(events.log.errors.map((e) => [e.code, e.terminal, e.attempt]), [...perUrl(false), ...perUrl(true)], `${p.name}: each refusal at once, the second URL's third terminal`);
    assertEq(app.reasons, ["start", ...reconnects(p, 2), "session_over", ...reconnects(p, 2)], `${p.name}: one new session, none for the mistake`);
    assertEq((await app.stats()).refused, 6, `${p.name}: six refused`);
    transcriber.free();
  }),

  anExpiredCredential: forEach(all, async (p, { devstack, make }) => {
    const expired = p.fixture.expired;
    const app = backend(devstack, p.name, "", { token: "mock_expired=1&mock_times=1" });
    const events = recorder();
    const close = closes();
    const transcriber = make({ protocol: p.name, provision: app.provision, policy: FAST, ...events, onEvent: close.onEvent });
    if (expired.outcome === "open") {
      await transcriber.start();
      // A socket refused after it opened (AssemblyAI's 1008) lets start() resolve first.
      await until(() => app.reasons.length === expired.reasons.length && transcriber.state === "open", 3000, `${p.name}: open with a fresh credential`);
      assertEq(app.reasons, expired.reasons, `${p.name}: provisioned again`);
      if (expired.closes) assertEq(close.events.map(([code, kind, next]) => [code, kind, next]), expired.closes, `${p.name}: the close`);
      await transcriber.stop();
    } else {
      // A credential the server refuses outright is the backend's bug: terminal, no retry.
      await transcriber.start().catch(() => {});
      await until(() => transcriber.state === "failed", 3000, `${p.name}: failed`);
      const terminal = events.log.errors.filter((error) => error.terminal);
      assertEq(terminal.map((error) => error.code), ["fatal_close"], `${p.name}: a terminal error`);
      if (expired.closeCode) assertEq(terminal[0].closeCode, expired.closeCode, `${p.name}: naming the code`);
      assertEq(app.reasons.length, 1, `${p.name}: no retry`);
    }
    assertServer(p, await app.stats(), expired.server);
    transcriber.free();
  }),

  aFatalCloseIsTerminalWithoutARetry: forEach((p) => p.fixture.fatal, async (p, { devstack, make }) => {
    const { close: what, code } = p.fixture.fatal;
    const app = backend(devstack, p.name, `mock_close=${what}&mock_close_after_frames=3`);
    const events = recorder();
    const close = closes();
    const transcriber = make({ protocol: p.name, provision: app.provision, policy: FAST, ...events, onEvent: close.onEvent });
    await transcriber.start();
    for (const n of range(0, whole(p, 10) - 1)) transcriber.sendAudio(frame(n));
    await until(() => transcriber.state === "failed", 3000, `${p.name}: failed`);
    await sleep(300);
    const terminal = events.log.errors.filter((error) => error.terminal);
    assertEq(terminal.map((error) => [error.code, error.closeCode]), [["fatal_close", code]], `${p.name}: a terminal error naming the code`);
    assertEq(close.events.map(([c, kind, next]) => [c, kind, next]), [[code, "fatal", "stop"]], `${p.name}: reported as fatal`);
    assertEq([app.reasons.length, (await app.stats()).connections], [1, 1], `${p.name}: no retry`);
    transcriber.free();
  }),

  theSessionsEndIsReprovisioned: forEach((p) => p.fixture.sessionOver, async (p, { devstack, make }) => {
    const app = backend(devstack, p.name, "mock_session_ms=300&mock_times=1");
    const events = recorder();
    const close = closes();
    const transcriber = make({ protocol: p.name, provision: app.provision, policy: FAST, ...events, onEvent: close.onEvent });
    await transcriber.start();
    for (const n of range(0, whole(p, 10) - 1)) transcriber.sendAudio(frame(n)); // the session is in use
    await eventually(async () => (await app.stats()).connections === 2, 4000, `${p.name}: a second session`);
    await until(() => transcriber.state === "open", 2000, `${p.name}: open again`);
    assertEq(app.reasons, ["start", "session_over"], `${p.name}: a new session, counted by R3`);
    assertEq(events.log.errors.filter((error) => error.terminal), [], `${p.name}: no terminal error`);
    const { code } = p.fixture.sessionOver;
    if (code) assertEq(close.events[0].slice(0, 3), [code, "session_over", "reprovision"], `${p.name}: the close, reported`);
    await transcriber.stop();
    transcriber.free();
  }),

  aThrottledCloseWaitsTheThrottledDelay: forEach((p) => p.fixture.throttled, async (p, { devstack, make }) => {
    const { close: what, code } = p.fixture.throttled;
    const app = backend(devstack, p.name, `mock_close=${what}&mock_close_after_frames=3&mock_times=1`);
    const close = closes();
    const transcriber = make({ protocol: p.name, provision: app.provision, policy: FAST, throttledDelayMs: 700, onEvent: close.onEvent });
    await transcriber.start();
    for (const n of range(0, whole(p, 10) - 1)) transcriber.sendAudio(frame(n));
    await eventually(async () => (await app.stats()).connections === 2, 4000, `${p.name}: a reconnect`);
    await until(() => transcriber.state === "open", 2000, `${p.name}: open again`);
    assertEq(close.events.map(([c, kind]) => [c, kind]), [[code, "throttled"]], `${p.name}: throttled`);
    assert(close.events[0][3] >= 700, `${p.name}: after at least throttledDelayMs: ${close.events[0][3]}`);
    assertEq(app.reasons, ["start", ...reconnects(p, 1)], `${p.name}: not a dead session`);
    await transcriber.stop();
    transcriber.free();
  }),

  anIdleSocketStaysOpen: forEach(all, async (p, { devstack, make }) => {
    // No audio at all (typed input only): where the server has an idle limit, keepalives keep it open.
    const keepalive = p.fixture.keepalive;
    const app = backend(devstack, p.name, keepalive ? `mock_idle_ms=${keepalive.idleMs}` : "");
    const transcriber = make({ protocol: p.name, provision: app.provision, policy: FAST });
    await transcriber.start();
    await sleep(keepalive ? keepalive.idleMs + 500 : 2000);
    const server = await app.stats();
    assertEq([transcriber.state, server.connections, server.closeCodes, server.invalidMessages], ["open", 1, [], 0], `${p.name}: still the first socket`);
    if (keepalive) assert(server.keepAlives >= keepalive.atLeast, `${p.name}: at least ${keepalive.atLeast} keepalives: ${server.keepAlives}`);
    await transcriber.stop();
    transcriber.free();
  }),

  stopFlushesTheLastWords: forEach(all, async (p, { devstack, make }) => {
    const app = backend(devstack, p.name);
    const events = recorder();
    const transcriber = make({ protocol: p.name, provision: app.provision, policy: FAST, ...events });
    await transcriber.start();
    await stream(transcriber, 0, 59); // w0 w25 and 10 frames of w50
    await until(() => events.log.finals.length === 1, 4000, `${p.name}: the first utterance`);
    await transcriber.stop();
    assertEq(events.log.finals.map(([text]) => text), [said(p, "w0 w25"), said(p, "w50")], `${p.name}: the word under way arrives before stopped`);
    assertEq(events.log.states.at(-1), "stopped", `${p.name}: stopped`);
    const finish = p.fixture.finish;
    // The server files a close once its socket has closed, which can be just after `stop()` resolved.
    if (finish.closeCodes) await eventually(async () => (await app.stats()).closeCodes.length > 0, 3000, `${p.name}: the server to see the close`);
    const server = await app.stats();
    assertEq(server.finishes, finish.finishes, `${p.name}: its finish messages`);
    if (finish.closeCodes) assertEq(server.closeCodes, finish.closeCodes, `${p.name}: the close`);
    assertServer(p, server, finish.server);
    transcriber.free();
  }),

  threeDropsInAMinuteDoNotFail: forEach(all, async (p, { devstack, make }) => {
    const app = backend(devstack, p.name, "mock_drop_after_ms=300&mock_times=3");
    const events = recorder();
    const close = closes();
    const transcriber = make({ protocol: p.name, provision: app.provision, policy: FAST, ...events, onEvent: close.onEvent });
    await transcriber.start();
    await eventually(async () => (await app.stats()).connections === 4, 6000, `${p.name}: a fourth connection`);
    await sleep(500);
    assertEq(transcriber.state, "open", `${p.name}: open: R3 counts dead sessions, not fresh credentials`);
    assertEq(app.reasons, ["start", ...reconnects(p, 3)], `${p.name}: provisions`);
    assertEq(close.events.map(([code, kind]) => [code, kind]), [[1006, "retry"], [1006, "retry"], [1006, "retry"]], `${p.name}: three drops reported`);
    assertEq([events.log.errors, (await app.stats()).refused], [[], 0], `${p.name}: no errors, no credential used twice`);
    await transcriber.stop();
    transcriber.free();
  }),

  aBacklogIsResentNoFasterThanTheProviderAllows: forEach((p) => p.fixture.pacing, async (p, { devstack, make }) => {
    const frames = whole(p, p.fixture.pacing.frames);
    const app = backend(devstack, p.name);
    const transcriber = make({ protocol: p.name, provision: app.provision, policy: FAST });
    for (const n of range(0, frames - 1)) transcriber.sendAudio(frame(n)); // captured before the socket
    await transcriber.start();
    await eventually(async () => (await app.stats()).audioMs >= frames * 20, frames * 20 + 4000, `${p.name}: every frame at the server`);
    const server = await app.stats();
    assertEq([server.audioMs, server.tooFast, server.connections, server.closeCodes], [frames * 20, 0, 1, []], `${p.name}: all of it on one socket, never faster than allowed`);
    await transcriber.stop();
    transcriber.free();
  }),

  aSocketThatStopsAcknowledgingIsClosedAndReplaced: forEach((p) => p.fixture.acks, async (p, { devstack, make }) => {
    const app = backend(devstack, p.name, "mock_silent_after_frames=5&mock_times=1");
    const close = closes();
    const transcriber = make({ protocol: p.name, provision: app.provision, policy: FAST, ackTimeoutMs: 600, onEvent: close.onEvent });
    await transcriber.start();
    await stream(transcriber, 0, 59);
    await eventually(async () => (await app.stats()).connections === 2, 4000, `${p.name}: a second socket`);
    assertEq(close.events[0].slice(0, 2), [1006, "retry"], `${p.name}: the silent socket was closed as half-open`);
    assert((await app.stats()).swallowedFrames > 0, `${p.name}: the half-open socket took frames in silence`);
    await transcriber.stop();
    transcriber.free();
  }),

  subprotocolsThatAreNotStringsFailAsAnUnusableUrl: forEach(all, async (p, { devstack, make }) => {
    const events = recorder();
    const transcriber = make({ protocol: p.name, provision: () => ({ url: `${devstack.replace(/^http/, "ws")}/never`, protocols: ["bearer", 5] }), ...events });
    await assertThrows(() => transcriber.start(), Error, /url/, `${p.name}: start rejects`);
    assertEq(events.log.errors.map((error) => error.code), ["invalid_url"], `${p.name}: invalid_url`);
    transcriber.free();
  }),

  voiceSessionPassesTheProtocolThrough: forEach(all, async (p, { devstack, makeSession }) => {
    const app = backend(devstack, p.name);
    const session = makeSession({
      routes: [{ name: "r", generate: async () => "Noted." }],
      recoveryText: "Sorry?",
      synthesize: () => new ArrayBuffer(8),
      // As the recipes write it: the protocol and the provision for it side by side.
      transcriber: { protocol: p.name, provision: app.provision, policy: FAST, workletUrl: "/never-loaded.js" },
    });
    await session.start({ microphone: false });
    assertEq(app.reasons, ["start"], `${p.name}: provisioned through the session`);
    const server = await app.stats();
    assertEq([server.connections, server.open, server.refused], [1, 1, 0], `${p.name}: the session's transcriber speaks it`);
    if (p.fixture.authCounter) assertEq(server[p.fixture.authCounter], 1, `${p.name}: with its credentials`);
    await session.stop();
    session.free();
  }),

  async theProtocolOptionIsCheckedAgainstTheList({ devstack, make }) {
    // The library's names and the dev stack's list are the same: every descriptor is accepted, and
    // the RangeError for an unknown name lists exactly the descriptors.
    const names = (await protocols(devstack)).map((p) => p.name);
    const provision = () => ({ url: "ws://127.0.0.1:1/never" });
    for (const protocol of names) make({ provision, protocol }).free();
    let message = "";
    await assertThrows(() => make({ provision, protocol: "whisper" }), RangeError, /options\.protocol must be one of/, "unknown protocol");
    try {
      make({ provision, protocol: "whisper" });
    } catch (error) {
      message = error.message;
    }
    const listed = [...message.matchAll(/"([^"]+)"/g)].map((match) => match[1]).filter((name) => name !== "whisper");
    assertEq([...listed].sort(), [...names].sort(), "the names in the RangeError");
    await assertThrows(() => make({ provision, protocol: 7 }), TypeError, /options\.protocol/, "not a string");
    await assertThrows(() => make({ provision, throttledDelayMs: -1 }), RangeError, /options\.throttledDelayMs/, "negative throttledDelayMs");
    await assertThrows(() => make({ provision, workletUrl: "" }), RangeError, /options\.workletUrl/, "empty workletUrl");
    await assertThrows(() => make({ provision, onEvent: 1 }), TypeError, /options\.onEvent/, "onEvent not a function");
    return { protocols: names };
  },

  /** Each protocol's own cases, from its descriptor's fixture (imported by URL from the dev stack). */
  protocolSpecificScenarios: forEach((p) => p.fixture.scenarios.length > 0, async (p, ctx) => {
    const { default: descriptor } = await import(`${ctx.devstack}${p.module}`);
    const t = {
      ...ctx,
      backend: (socket, options) => backend(ctx.devstack, p.name, socket, options),
      recorder, closes, stream, frame, range, sleep, until, assert, assertEq, FAST,
    };
    for (const [name, scenario] of Object.entries(descriptor.fixture.scenarios)) {
      try {
        await scenario(t);
      } catch (error) {
        throw new Error(`${name}: ${error.message}`);
      }
    }
  }),
};

export async function runScenario(name, devstack, make, makeSession) {
  return runIn(scenarios, name, { devstack, make, makeSession });
}
