// LiveTranscriber under hostile conditions (issue 8: R5, L7, bounded input, hostile app objects,
// microphone release, idempotent free), in a real browser against the dev stack's mock STT.
// `ctx` is `{ devstack, make }`. Every scenario ends by checking that the module still serves:
// a new transcriber provisions, opens and delivers a final.

import {
  AUDIO_CONFIG, FAST, NO_AUDIO, assert, assertEq, assertThrows, backend, frame, range, recorder, runIn, runs,
  serverStats, sessionStats, sleep, until,
} from "./support.js";

/** The module still serves: a new transcriber gets a session, opens and delivers a final. */
async function stillServes(devstack, make) {
  const app = backend(devstack, "normal");
  const finals = [];
  const transcriber = make({ provision: app.provision, policy: FAST, onFinal: (text) => finals.push(text) });
  await transcriber.start();
  for (const n of range(1, 50)) transcriber.sendAudio(frame(n));
  await until(() => finals.length === 1, 3000, "a final from a fresh transcriber");
  assertEq(finals, ["utterance 1"], "fresh transcriber's final");
  await transcriber.stop();
  transcriber.free();
}

/** Rejection of `promise`, or a failure if it resolves. */
async function rejectionOf(promise, label) {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error(`${label}: expected a rejection`);
}

/** Sums a per-session counter over `ids`. */
async function totalOver(devstack, ids, field) {
  let total = 0;
  for (const id of ids) total += (await sessionStats(devstack, id))[field];
  return total;
}

/** A provision() through the dev stack whose POST never answers: the signal is what ends it. */
function hangingBackend(devstack) {
  const signals = [];
  const provision = ({ signal }) => {
    signals.push(signal);
    return fetch(`${devstack}/stt/provision_hang/v2/live`, { method: "POST", signal, body: JSON.stringify(AUDIO_CONFIG) });
  };
  return { provision, signals };
}

/** The URL of capture-worklet.js as this page loaded it (the shell imports it as a module). */
async function sameOriginWorkletUrl() {
  const loaded = performance.getEntriesByType("resource").map((entry) => entry.name);
  const candidates = [
    ...loaded.filter((name) => name.endsWith("/src/web/capture-worklet.js")),
    ...loaded.filter((name) => name.endsWith("/src/web/glue.js")).map((name) => name.replace(/glue\.js$/, "capture-worklet.js")),
  ];
  for (const url of candidates) {
    if (new URL(url).origin === location.origin && (await fetch(url)).ok) return url;
  }
  throw new Error(`capture-worklet.js not found among the page's resources: ${loaded.join(", ")}`);
}

/** getUserMedia that keeps every stream it hands out, so a test can see their tracks end. */
function recordMicrophones() {
  const devices = navigator.mediaDevices;
  const original = devices.getUserMedia;
  const streams = [];
  devices.getUserMedia = async function (constraints) {
    const stream = await original.call(devices, constraints);
    streams.push(stream);
    return stream;
  };
  return { streams, restore: () => (devices.getUserMedia = original) };
}

const scenarios = {
  async aDeadTokenFromTheStartFailsAsConnectFailed({ devstack, make }) {
    // Every upgrade of every session is refused with 404 and no socket ever opened: the first dead
    // URL is re-provisioned (R5), the second is a mistake in what provision() returns, which a
    // third session would repeat. start() settles within 2 × maxFailedConnects connects, not R3's nine.
    const app = backend(devstack, "upgrade404");
    const events = recorder();
    const transcriber = make({ provision: app.provision, policy: FAST, ...events });
    const error = await rejectionOf(transcriber.start(), "start");
    assertEq([error.code, error.terminal, transcriber.state, error.protocol, error.attempts], ["connect_failed", true, "failed", "gladia", 3], "terminal connect_failed");
    assert(/no gladia socket ever opened/.test(error.message) && /check the credential and `protocols`/.test(error.message), `message says why and the fix: ${error.message}`);
    const perUrl = (last) => [["connect_failed", false], ["connect_failed", false], ["connect_failed", last]];
    assertEq(events.log.errors.map((e) => [e.code, e.terminal]), [...perUrl(false), ...perUrl(true)], "each refusal reported at once");
    assertEq(events.log.errors.at(-1), error, "the same error went to onError");
    await sleep(300);
    assertEq(app.calls.length, 2, "one re-provision, none for the mistake");
    const refused = [];
    for (const id of app.sessions) refused.push((await sessionStats(devstack, id)).refused);
    assertEq(refused, [3, 3], "maxFailedConnects (3) upgrades per session, each refused with 404");
    assertEq([transcriber.stats.provisions, transcriber.stats.connections], [2, 6], "client counts");
    assert(!events.log.states.includes("open"), "never open");
    transcriber.free();
    await stillServes(devstack, make);
    return { provisions: app.calls.length, upgrades: refused };
  },

  async endSessionInUseReprovisionsNeverTheOldUrl({ devstack, make }) {
    // `times=1` counts the mode's sessions since the last reset: only the first one ends.
    await fetch(`${devstack}/__reset`, { method: "POST" });
    const app = backend(devstack, "end_session", "?endAfterFrames=5&times=1");
    const events = recorder();
    const transcriber = make({ provision: app.provision, policy: FAST, ...events });
    await transcriber.start();
    for (const n of range(1, 10)) {
      transcriber.sendAudio(frame(n));
      await sleep(20);
    }
    await until(() => app.sessions.length === 2 && transcriber.state === "open", 3000, "a second session, open");
    for (const n of range(11, 60)) transcriber.sendAudio(frame(n));
    await until(() => events.log.finals.length >= 1, 3000, "a final from the new session");
    const [first, second] = app.sessions;
    const ended = await sessionStats(devstack, first);
    assertEq([ended.sessionsOver, ended.connections], [1, 1], "the first session ended in use; its URL was never used again");
    assertEq((await sessionStats(devstack, second)).connections, 1, "one connection to the new session");
    assertEq(events.log.finals[0][2], second, "the final carries the new session's id");
    assert(events.log.states.includes("backoff"), "it went through a backoff");
    assertEq(events.log.errors, [], "no error: the window had room");
    await transcriber.stop();
    transcriber.free();
    await stillServes(devstack, make);
  },

  async endSessionEveryTimeFailsWithDeadSession({ devstack, make }) {
    const app = backend(devstack, "end_session", "?endAfterFrames=2");
    const events = recorder();
    const transcriber = make({ provision: app.provision, policy: FAST, ...events });
    transcriber.start().catch(() => {});
    const feeding = setInterval(() => transcriber.state === "open" && transcriber.sendAudio(frame(1)), 20);
    try {
      await until(() => transcriber.state === "failed", 5000, "failed");
    } finally {
      clearInterval(feeding);
    }
    assertEq(app.calls.length, 3, "three sessions, then the window is spent");
    assertEq(await totalOver(devstack, app.sessions, "sessionsOver"), 3, "each ended in use once");
    assertEq(await totalOver(devstack, app.sessions, "connections"), 3, "never a reconnect to an ended session");
    assertEq(events.log.errors.map((error) => error.code), ["dead_session"], "terminal error");
    transcriber.free();
    await stillServes(devstack, make);
  },

  async provisionThatNeverSettlesIsAbortedRetriedThenFails({ devstack, make }) {
    const app = hangingBackend(devstack);
    const events = recorder();
    const transcriber = make({
      provision: app.provision,
      provisionTimeoutMs: 200,
      policy: { ...FAST, maxProvisionAttempts: 3 },
      ...events,
    });
    const error = await rejectionOf(transcriber.start(), "start");
    assertEq([error.code, error.attempts, error.terminal], ["provision_exhausted", 3, true], "terminal error");
    assertEq(app.signals.length, 3, "three provision() calls");
    assert(app.signals.every((signal) => signal.aborted), "every call's signal fired");
    assertEq(events.log.states, ["provisioning", "backoff", "provisioning", "backoff", "provisioning", "failed"], "states");
    await until(async () => (await serverStats(devstack)).modes.provision_hang.provisionsAborted >= 3, 2000, "the server saw the aborts");
    transcriber.free();

    // A provision() that is a promise nobody ever settles, no network at all.
    const signals = [];
    const silent = make({
      provision: ({ signal }) => {
        signals.push(signal);
        return new Promise(() => {});
      },
      provisionTimeoutMs: 100,
      policy: { ...FAST, maxProvisionAttempts: 2 },
    });
    assertEq((await rejectionOf(silent.start(), "silent start")).code, "provision_exhausted", "silent provision");
    assertEq([signals.length, signals.every((signal) => signal.aborted)], [2, true], "aborted twice");
    silent.free();
    await stillServes(devstack, make);
  },

  async aBackendWithoutCorsIsNamedAtTheFirstFailure({ devstack, make }) {
    // The page's provision() posts JSON to a backend of another origin that does not allow it:
    // fetch rejects with a TypeError at the preflight, each time.
    const events = recorder();
    let calls = 0;
    const transcriber = make({
      async provision({ signal }) {
        calls += 1;
        const response = await fetch(`${devstack}/__no-cors`, { method: "POST", signal, headers: { "content-type": "application/json" }, body: "{}" });
        return response.json();
      },
      policy: FAST,
      ...events,
    });
    const settled = transcriber.start().then(() => null, (error) => error);
    await until(() => events.log.errors.length > 0, 5000, "an error at the first failure");
    const [first] = events.log.errors;
    assertEq([first.code, first.terminal, first.attempts, calls], ["provision_unreachable", false, 5, 1], "said at the first failure, not terminal");
    assert(/CORS/.test(first.message) && /console/.test(first.message), `the message names CORS and where to look: ${first.message}`);
    const error = await settled;
    assertEq([error?.code, calls], ["provision_exhausted", 5], "retried by L7, then failed");
    assertEq(events.log.errors.map((e) => e.code), ["provision_unreachable", "provision_exhausted"], "said once");
    transcriber.free();
  },

  async alwaysThrowingProvisionFailsAfterMaxProvisionAttempts({ devstack, make }) {
    let calls = 0;
    const events = recorder();
    const throwing = make({
      provision() {
        calls += 1;
        throw new Error("backend down");
      },
      policy: FAST,
      ...events,
    });
    const error = await rejectionOf(throwing.start(), "start");
    assertEq([error.code, error.attempts, calls, throwing.state], ["provision_exhausted", 5, 5, "failed"], "default maxProvisionAttempts is 5");
    assertEq(events.log.errors.length, 1, "one terminal error");
    throwing.free();

    // A network failure through the dev stack: the connection is reset, fetch rejects, no status.
    const before = (await serverStats(devstack)).modes.provision_reset?.provisionsRefused ?? 0;
    const reset = backend(devstack, "provision_reset");
    const network = make({ provision: reset.provision, policy: { ...FAST, maxProvisionAttempts: 3 } });
    assertEq((await rejectionOf(network.start(), "network start")).code, "provision_exhausted", "network failures");
    assertEq(reset.calls.length, 3, "three calls");
    // A browser may send a POST once more itself when a reused connection is reset under it.
    const seen = (await serverStats(devstack)).modes.provision_reset.provisionsRefused - before;
    assert(seen >= 3 && seen <= 6, `the server saw each of the three calls: ${seen}`);
    network.free();
    await stillServes(devstack, make);
  },

  async hostileProvisionResultsAreProvisioningFailures({ devstack, make }) {
    const boom = () => {
      throw new Error("hostile getter");
    };
    const good = backend(devstack, "normal");
    const cases = [
      ["url getter throws", () => ({ get url() { return boom(); } })],
      ["id getter throws", async () => ({ ...(await good.provision({})), get id() { return boom(); } })],
      ["then getter throws", () => ({ get then() { return boom(); } })],
      ["then throws", () => ({ then() { boom(); } })],
      ["proxy throws on every read", () => new Proxy({}, { get: boom, has: boom, getPrototypeOf: boom })],
      ["rejects with a throwing status getter", () => Promise.reject({ get status() { return boom(); } })],
      ["rejects with a proxy", () => Promise.reject(new Proxy({}, { get: boom }))],
      ["provision itself throws a non-Error", () => {
        throw Symbol("not an error");
      }],
    ];
    for (const [label, provision] of cases) {
      const errors = [];
      const transcriber = make({ provision, policy: { ...FAST, maxProvisionAttempts: 2 }, onError: (error) => errors.push(error) });
      let started;
      try {
        started = transcriber.start(); // never throws: a failure belongs to the provisioning
      } catch (error) {
        throw new Error(`${label}: start() threw ${error}`);
      }
      const error = await rejectionOf(started, label);
      assertEq([error.code, transcriber.state, transcriber.stats.provisions], ["provision_exhausted", "failed", 2], `${label}: retried, then failed`);
      assertEq(errors.map((e) => e.code), ["provision_exhausted"], `${label}: onError`);
      transcriber.free();
    }
    // A thenable that is not a promise is adopted like one: its session counts.
    const session = await good.provision({});
    const adopted = make({ provision: () => ({ then: (resolve) => resolve(session) }), policy: FAST });
    await adopted.start();
    assertEq(adopted.state, "open", "opened on the thenable's session");
    await adopted.stop();
    adopted.free();
    await stillServes(devstack, make);
    return { cases: cases.length };
  },

  async bigTextFrameIsSkippedCountedAndTheSessionGoesOn({ devstack, make }) {
    const app = backend(devstack, "big_frame"); // a 64 MiB text frame right after start_session
    const events = recorder();
    const transcriber = make({ provision: app.provision, policy: FAST, ...events });
    await transcriber.start();
    await until(async () => (await sessionStats(devstack, app.sessions[0])).bigFrames === 1, 3000, "the server sent it");
    await until(() => transcriber.stats.malformedMessages === 1, 10000, "the big frame counted as malformed");
    for (const n of range(1, 100)) transcriber.sendAudio(frame(n));
    await until(() => events.log.finals.length === 2, 5000, "two finals after the big frame");
    assertEq(events.log.finals.map(([text]) => text), ["utterance 1", "utterance 2"], "the big frame's 'final' never came through");
    assertEq([transcriber.state, transcriber.stats.connections, transcriber.stats.malformedMessages], ["open", 1, 1], "same socket, one malformed");
    assertEq(events.log.errors, [], "not an error");
    await transcriber.stop();
    transcriber.free();
    await stillServes(devstack, make);
  },

  async textFrameAtTheBoundIsReadOneByteOverIsSkipped({ devstack, make }) {
    // 2000 bytes: within a third of the bound in UTF-16 units, so its UTF-8 size is measured.
    const bytes = 2000;
    const head = '{"type":"transcript","session_id":"","data":{"is_final":true,"utterance":{"text":"';
    for (const [maxMessageBytes, read] of [[bytes, true], [bytes - 1, false]]) {
      const app = backend(devstack, "big_frame", `?bigFrameBytes=${bytes}`);
      const events = recorder();
      const transcriber = make({ provision: app.provision, policy: FAST, maxMessageBytes, ...events });
      await transcriber.start();
      const id = app.sessions[0];
      await until(async () => (await sessionStats(devstack, id)).bigFrames === 1, 3000, "the server sent it");
      const label = `maxMessageBytes ${maxMessageBytes}`;
      if (read) {
        await until(() => events.log.finals.length === 1, 3000, `${label}: the frame's final`);
        const [text] = events.log.finals[0];
        // The filler is what the frame holds besides its JSON around the text (the id included).
        assertEq([/^x+$/.test(text), text.length], [true, bytes - head.length - id.length - 4], `${label}: read whole`);
        assertEq(transcriber.stats.malformedMessages, 0, `${label}: not malformed`);
      } else {
        await until(() => transcriber.stats.malformedMessages === 1, 3000, `${label}: skipped as malformed`);
        assertEq(events.log.finals, [], `${label}: no final`);
      }
      await transcriber.stop();
      transcriber.free();
    }
    await stillServes(devstack, make);
  },

  async microphoneIsReleasedWhenTheWorkletCannotLoad({ devstack, make }) {
    const microphones = recordMicrophones();
    try {
      const errors = [];
      const transcriber = make({ provision: backend(devstack, "normal").provision, policy: FAST, onError: (error) => errors.push(error) });
      const missing = new URL("/no-such-dir/capture-worklet.js", location.href).href;
      const error = await rejectionOf(transcriber.attachMicrophone({ workletUrl: missing }), "attach");
      assertEq([error.code, error.terminal], ["worklet_blocked", false], "turnguard's own error");
      assert(error.message.includes(missing) && /Content-Security-Policy/.test(error.message), `names the URL and CSP: ${error.message}`);
      assert(error.cause !== undefined, "the browser's error is the cause");
      assertEq(errors, [error], "the same error reached onError");
      assertEq(microphones.streams.length, 1, "one microphone was opened");
      assertEq(microphones.streams[0].getTracks().map((track) => track.readyState), ["ended"], "and released");

      // An AudioContext that cannot be created, in a browser that cannot read the track without
      // one (Chromium can: its track processor is taken away here).
      const RealAudioContext = window.AudioContext;
      const RealProcessor = window.MediaStreamTrackProcessor;
      window.AudioContext = class {
        constructor() {
          throw new DOMException("no audio device", "NotSupportedError");
        }
      };
      window.MediaStreamTrackProcessor = undefined;
      try {
        await assertThrows(() => transcriber.attachMicrophone(), DOMException, /no audio device/, "context fails");
      } finally {
        window.AudioContext = RealAudioContext;
        window.MediaStreamTrackProcessor = RealProcessor;
      }
      assertEq(microphones.streams[1].getTracks().map((track) => track.readyState), ["ended"], "released after a context failure");

      // A capture that starts after the transcriber stopped is refused, and released.
      const late = transcriber.attachMicrophone();
      await transcriber.stop();
      await assertThrows(() => late, DOMException, /stopped/, "stopped meanwhile");
      assertEq(microphones.streams[2].getTracks().map((track) => track.readyState), ["ended"], "released after a refused adopt");
      transcriber.free();
    } finally {
      microphones.restore();
    }
    await stillServes(devstack, make);
  },

  async workletUrlLoadsTheShippedWorkletFile({ devstack, make }) {
    const workletUrl = await sameOriginWorkletUrl();
    const app = backend(devstack, "echo_frames");
    const transcriber = make({ provision: app.provision, policy: FAST });
    await transcriber.start();
    await transcriber.attachMicrophone(undefined, { workletUrl });
    if (!(await runs(new AudioContext()))) {
      await transcriber.stop();
      transcriber.free();
      return { loaded: true, frames: NO_AUDIO };
    }
    await until(() => transcriber.stats.framesSent >= 10, 3000, "frames through the worklet loaded by URL");
    await transcriber.stop();
    const session = await sessionStats(devstack, app.sessions[0]);
    assert(session.frameLengths.length >= 10 && session.frameLengths.every((length) => length === 640), "20 ms PCM16 frames");
    transcriber.free();
  },

  async freeIsIdempotentAndSafeFromEveryCallback({ devstack, make }) {
    // Twice, then through Symbol.dispose: nothing throws.
    const plain = make({ provision: backend(devstack, "normal").provision });
    plain.free();
    plain.free();
    if (typeof Symbol.dispose === "symbol") plain[Symbol.dispose]();
    assertEq([plain.state, plain.stats.provisions, plain.sessionId], ["stopped", 0, undefined], "getters of a freed transcriber");
    await assertThrows(() => plain.start(), DOMException, /freed/, "start after free");
    await plain.stop(); // resolves
    plain.sendAudio(frame(1)); // ignored

    // From onStateChange("provisioning"), inside start(): the queued provision() never runs.
    const quiet = backend(devstack, "normal");
    let early;
    early = make({
      provision: quiet.provision,
      onStateChange(state) {
        if (state === "provisioning") early.free();
      },
    });
    const startError = await rejectionOf(early.start(), "start of a freed transcriber");
    assertEq([startError.name, quiet.calls.length], ["AbortError", 0], "detached before provisioning");
    early.free();

    // From inside provision(): its signal fires, nothing connects.
    let signal;
    let insider;
    insider = make({
      provision(request) {
        signal = request.signal;
        insider.free();
        return quiet.provision(request);
      },
    });
    await rejectionOf(insider.start(), "start of a transcriber freed in provision()");
    assert(signal.aborted, "provision()'s signal fired");

    // From each event callback, on a live session.
    for (const callback of ["onPartial", "onFinal", "onSpeechStart", "onError"]) {
      const app = backend(devstack, "normal");
      let transcriber;
      let freed = false;
      const free = () => {
        if (!freed) {
          freed = true;
          transcriber.free();
          transcriber.free(); // and again, from the same callback
        }
      };
      const options = { provision: app.provision, policy: FAST, [callback]: free };
      // onError fires for a throwing onPartial (a callback_error).
      if (callback === "onError") {
        options.onPartial = () => {
          throw new Error("app bug");
        };
      }
      transcriber = make(options);
      await transcriber.start();
      for (const n of range(1, 60)) transcriber.sendAudio(frame(n));
      await until(() => freed, 3000, `free from ${callback}`);
      const id = app.sessions[0];
      await until(async () => (await sessionStats(devstack, id)).open === 0, 2000, `${callback}: socket closed`);
      const session = await sessionStats(devstack, id);
      assertEq(session.connections, 1, `${callback}: nothing reconnected`);
      assertEq([transcriber.state, transcriber.stats.connections], ["stopped", 1], `${callback}: counters kept after free`);
    }
    await stillServes(devstack, make);
  },
};

export async function runScenario(name, devstack, make) {
  return runIn(scenarios, name, { devstack, make });
}
