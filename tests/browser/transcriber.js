// LiveTranscriber scenarios in a real browser against the dev stack's mock Gladia live STT: real
// WebSockets, real timers, real Web Audio. `ctx` is `{ devstack, make, makeProvisioner }`:
// `make(options)` is `new LiveTranscriber(options)`, `makeProvisioner(options)` is `gladiaProvisioner`.
// Server-side assertions are scoped to the session ids each scenario provisioned.

import {
  AUDIO_CONFIG, FAST, NO_AUDIO, assert, assertEq, assertThrows, backend, frame, range, recorder, runIn, runs,
  firstAppearances, serverStats, sessionStats, sleep, until,
} from "./support.js";

const scenarios = {
  async normalModeDeliversPartialsAndFinals({ devstack, make }) {
    const app = backend(devstack, "normal");
    const events = recorder();
    const transcriber = make({ provision: app.provision, policy: FAST, ...events });
    assertEq(transcriber.state, "idle", "initial state");
    for (const n of range(1, 25)) transcriber.sendAudio(frame(n)); // before start: buffered
    assertEq(transcriber.stats.framesBuffered, 25, "buffered before start");
    await transcriber.start();
    for (const n of range(26, 100)) transcriber.sendAudio(frame(n));
    await until(() => events.log.finals.length === 2, 3000, "two finals");
    const id = app.sessions[0];
    assertEq(events.log.finals, [["utterance 1", 1, id], ["utterance 2", 2, id]], "finals with meta");
    assertEq(events.log.partials, [["utterance", 1], ["utterance", 2]], "partials");
    assertEq(events.log.speechStarts, [1, 2], "speech starts");
    assertEq(transcriber.sessionId, id, "sessionId");
    await transcriber.stop();
    const session = await sessionStats(devstack, id);
    assertEq([session.connections, session.binaryFrames, session.bytes, session.stopRecordings], [1, 100, 64000, 1], "server saw");
    const stats = transcriber.stats;
    assertEq([stats.provisions, stats.connections, stats.framesSent, stats.framesDropped, stats.malformedMessages, stats.unknownMessages], [1, 1, 100, 0, 0, 0], "client stats");
    assertEq(events.log.states, ["provisioning", "connecting", "open", "stopped"], "states");
    assertEq(events.log.errors, [], "no errors");
    transcriber.free();
  },

  async close4403LoopProvisionsThreeTimesThenFails({ devstack, make }) {
    const app = backend(devstack, "close4403");
    const events = recorder();
    const transcriber = make({ provision: app.provision, policy: FAST, ...events });
    await transcriber.start(); // each socket opens, then the server closes it with 4403
    await until(() => transcriber.state === "failed", 5000, "failed");
    await sleep(300);
    assertEq(app.calls.length, 3, "exactly 3 provisions");
    assertEq(app.requests, [["start", 1], ["session_over", 1], ["session_over", 1]], "each a new session, asked once");
    assertEq(new Set(app.sessions).size, 3, "3 distinct sessions");
    let connections = 0;
    for (const id of app.sessions) {
      const session = await sessionStats(devstack, id);
      connections += session.connections;
      assertEq(session.closeCodes, [4403], `session ${id} closed once with 4403`);
    }
    assert(connections <= 3, `at most 3 connections, got ${connections}`);
    assertEq(transcriber.stats.provisions, 3, "client provisions");
    const terminal = events.log.errors.filter((error) => error.terminal);
    assertEq(terminal.length, 1, "one terminal error");
    assert(terminal[0] instanceof Error, "a real Error");
    assertEq([terminal[0].code, events.log.states.at(-1)], ["reprovision_limit", "failed"], "reason and state");
    await assertThrows(() => transcriber.start(), Error, /gave up/, "start after failure");
    await transcriber.stop(); // resolves at once
    transcriber.free();
    return { provisions: app.calls.length, connections };
  },

  async drop1006BacksOffWithGrowingGapsToTheSameSession({ devstack, make }) {
    const app = backend(devstack, "drop1006");
    const events = recorder();
    const delays = [];
    const onEvent = (event) => event.type === "close" && delays.push(event.delayMs);
    const transcriber = make({ provision: app.provision, policy: FAST, ...events, onEvent });
    transcriber.start().catch(() => {});
    await sleep(1600);
    await transcriber.stop();
    // The waits the transcriber chose: from entering backoff to connecting again. (Time between
    // connects also holds the browser's own handshake and close detection: Firefox delays
    // reconnects to a host whose sockets keep failing.)
    const waits = [];
    events.log.times.forEach(([state, at], i) => {
      const next = events.log.times[i + 1];
      if (state === "backoff" && next?.[0] === "connecting") waits.push(next[1] - at);
    });
    const trace = `states ${events.log.states.join(" ")}; delays ${delays}; waits ${waits.map(Math.round)}`;
    assert(waits.length >= 2, `at least two reconnects: ${trace}`);
    // Each close's delay (the policy's, whose schedule the native suites check exactly) grows
    // from 50 ms up to the 400 ms cap, and the transcriber waits that long, no less.
    const schedule = [50, 100, 200, 400, 400, 400, 400, 400];
    assertEq(delays.slice(0, waits.length), schedule.slice(0, waits.length), `the backoff grows per drop: ${trace}`);
    waits.forEach((wait, i) => {
      assert(wait >= delays[i] - 5 && wait <= delays[i] + 100, `wait ${i} = ${Math.round(wait)} ms for a delay of ${delays[i]}: ${trace}`);
    });
    assertEq(app.calls.length, 1, "one provision: drops reconnect to the same session");
    const session = await sessionStats(devstack, app.sessions[0]);
    // At most 7 fit the schedule in 1.6 s; fewer when the browser adds its own delay (Firefox
    // slows reconnects to a host whose sockets keep failing).
    assert(session.connections >= 3 && session.connections <= 7, `bounded connections in 1.6 s: ${session.connections}`);
    // A socket still connecting when stop() closed it may never have reached the server.
    const stoppedWhileConnecting = events.log.states.at(-2) === "connecting";
    const unseen = transcriber.stats.connections - session.connections;
    assert(unseen === 0 || (stoppedWhileConnecting && unseen === 1), `client and server agree: ${transcriber.stats.connections} vs ${session.connections} (stopped while connecting: ${stoppedWhileConnecting})`);
    await sleep(500);
    assertEq((await sessionStats(devstack, app.sessions[0])).connections, session.connections, "nothing connects after stop");
    assertEq(transcriber.state, "stopped", "stopped");
    transcriber.free();
    return { connections: session.connections, waits: waits.map(Math.round) };
  },

  async framesAcrossADropAllReachTheServerInOrder({ devstack, make }) {
    const app = backend(devstack, "echo_frames", "?dropAfterFrames=20&times=1");
    const events = recorder();
    const transcriber = make({ provision: app.provision, policy: FAST, ...events });
    await transcriber.start();
    for (const n of range(1, 60)) {
      transcriber.sendAudio(frame(n));
      await sleep(20); // paced like a microphone
    }
    const id = app.sessions[0];
    await until(async () => (await sessionStats(devstack, id)).binaryFrames >= 60 && transcriber.stats.framesBuffered === 0, 3000, "60 frames at the server");
    await transcriber.stop();
    const session = await sessionStats(devstack, id);
    assertEq(session.frameNumbers, range(1, 60), "every frame, in order, once");
    assertEq(session.connections, 2, "one drop, one reconnect to the same session");
    assertEq(session.closeCodes[0], 1006, "the first socket was cut");
    assertEq(app.calls.length, 1, "no new session for a drop");
    assert(events.log.states.includes("backoff"), "it went through a backoff");
    const resent = transcriber.stats.framesResent;
    transcriber.free();
    return { connections: session.connections, resent };
  },

  async aPageInTheBackForwardCacheClosesItsSocketAndReconnectsWhenShown({ devstack, make }) {
    const app = backend(devstack, "echo_frames");
    const events = recorder();
    const transcriber = make({ provision: app.provision, policy: FAST, ...events });
    await transcriber.start();
    for (const n of range(1, 20)) transcriber.sendAudio(frame(n));
    const id = app.sessions[0];
    await until(async () => (await sessionStats(devstack, id)).binaryFrames >= 20, 3000, "20 frames at the server");
    // A page unloaded for good (persisted: false) is not this case: nothing changes.
    window.dispatchEvent(new PageTransitionEvent("pagehide", { persisted: false }));
    await sleep(100);
    assertEq(transcriber.state, "open", "a pagehide without persisted changes nothing");
    // Into the back-forward cache: the socket closes cleanly, and nothing connects while cached.
    window.dispatchEvent(new PageTransitionEvent("pagehide", { persisted: true }));
    await until(async () => (await sessionStats(devstack, id)).closeCodes.length === 1, 3000, "the socket closed");
    for (const n of range(21, 40)) transcriber.sendAudio(frame(n)); // audio while cached waits
    await sleep(1500); // longer than FAST's backoff
    assertEq([transcriber.state, (await sessionStats(devstack, id)).connections, app.calls.length], ["backoff", 1, 1], "nothing connects while cached");
    // Shown again: at once, to the same session, and what waited goes out.
    window.dispatchEvent(new PageTransitionEvent("pageshow", { persisted: true }));
    await until(async () => (await sessionStats(devstack, id)).binaryFrames >= 40 && transcriber.state === "open", 3000, "40 frames at the server");
    await transcriber.stop();
    const session = await sessionStats(devstack, id);
    assertEq(session.closeCodes[0], 1000, "closed cleanly for the cache");
    assertEq(session.connections, 2, "one reconnect");
    assertEq(session.frameNumbers.filter((n) => n > 20), range(21, 40), "the frames sent while cached, in order, once");
    assertEq(app.calls.length, 1, "no new provision() for the stay");
    assertEq(events.log.errors, [], "no errors");
    transcriber.free();
  },

  async aHalfOpenSocketIsClosedAfterAckTimeoutMsAndItsUnacknowledgedAudioGoesOutAgain({ devstack, make }) {
    // The first socket stays open over TCP but its server goes silent after 10 frames: no
    // acknowledgment, no close. Without the ack timeout frames 11–40 would never be transcribed.
    const app = backend(devstack, "echo_frames", "?silentAfterFrames=10&times=1");
    const closes = [];
    const transcriber = make({
      provision: app.provision,
      policy: FAST,
      ackTimeoutMs: 400,
      onEvent: (event) => event.type === "close" && closes.push(event),
    });
    await transcriber.start();
    for (const n of range(1, 40)) {
      transcriber.sendAudio(frame(n));
      await sleep(20); // paced like a microphone
    }
    const id = app.sessions[0];
    await until(async () => new Set((await sessionStats(devstack, id)).frameNumbers).size >= 40, 5000, "all 40 frames heard by a live socket");
    const session = await sessionStats(devstack, id);
    await transcriber.stop();
    assertEq(firstAppearances(session.frameNumbers), range(1, 40), "nothing lost, in order");
    assertEq(session.frameNumbers.slice(0, 10), range(1, 10), "the first socket's server heard 10 frames");
    assert(session.swallowedFrames >= 1, `the half-open socket swallowed frames: ${session.swallowedFrames}`);
    assertEq(session.connections, 2, "closed as half-open, then the same session again");
    assertEq(app.calls.length, 1, "no new session for a half-open socket");
    assertEq(closes.length >= 1 && closes[0].class, "retry", `the close is reported as a retry: ${JSON.stringify(closes)}`);
    assert(transcriber.stats.framesResent >= 1, "the unacknowledged frames went out again");
    const resent = transcriber.stats.framesResent;
    transcriber.free();
    return { swallowed: session.swallowedFrames, resent };
  },

  async bufferedAudioSurvivesSocketsThatDieAtOnce({ devstack, make }) {
    const app = backend(devstack, "drop1006", "?times=2&recordFrames=1");
    const transcriber = make({ provision: app.provision, policy: FAST });
    for (const n of range(1, 25)) transcriber.sendAudio(frame(n));
    transcriber.start().catch(() => {});
    await until(() => app.sessions.length === 1, 2000, "provisioned");
    const id = app.sessions[0];
    await until(async () => {
      const session = await sessionStats(devstack, id);
      return session.connections === 3 && new Set(session.frameNumbers).size >= 25;
    }, 3000, "all frames through the third socket");
    const session = await sessionStats(devstack, id);
    assertEq(firstAppearances(session.frameNumbers), range(1, 25), "nothing lost, in order (resends may repeat)");
    assertEq(transcriber.state, "open", "the third socket stays");
    const resent = transcriber.stats.framesResent;
    await transcriber.stop();
    transcriber.free();
    return { connections: session.connections, resent, framesAtServer: session.frameNumbers.length };
  },

  async overflowDropsTheOldestAndReportsIt({ devstack, make }) {
    const app = backend(devstack, "echo_frames");
    let release;
    const gate = new Promise((resolve) => (release = resolve));
    const events = recorder();
    const transcriber = make({
      provision: async (request) => {
        await gate;
        return app.provision(request);
      },
      bufferMs: 100, // five 20 ms frames
      policy: FAST,
      ...events,
    });
    transcriber.start().catch(() => {});
    for (const n of range(1, 10)) transcriber.sendAudio(frame(n));
    assertEq(events.log.errors.length, 1, "the first drop is reported at once");
    const [first] = events.log.errors;
    assertEq([first.code, first.terminal, first.frames, first.ms, first.totalFrames], ["audio_dropped", false, 1, 20, 1], "first report");
    assertEq([transcriber.stats.framesBuffered, transcriber.stats.framesDropped], [5, 5], "stats");
    release();
    await until(() => transcriber.state === "open", 2000, "open");
    const second = events.log.errors[1];
    assertEq([second.code, second.frames, second.totalFrames], ["audio_dropped", 4, 5], "the rest is reported when back");
    const id = app.sessions[0];
    await until(async () => (await sessionStats(devstack, id)).binaryFrames >= 5, 2000, "frames at the server");
    assertEq((await sessionStats(devstack, id)).frameNumbers, range(6, 10), "the newest five, in order");
    await transcriber.stop();
    transcriber.free();
  },

  async provision429BacksOffThenSucceeds({ devstack, make }) {
    // `times=N` counts the mode's provisions since the last reset.
    await fetch(`${devstack}/__reset`, { method: "POST" });
    const app = backend(devstack, "provision429", "?times=2");
    const events = recorder();
    const transcriber = make({ provision: app.provision, policy: FAST, ...events });
    await transcriber.start();
    assertEq(app.calls.length, 3, "two refusals, then a session");
    assertEq(app.requests, [["start", 1], ["start", 2], ["start", 3]], "the same session, asked again");
    const gaps = app.calls.slice(1).map((at, i) => at - app.calls[i]);
    assert(gaps[0] >= 45 && gaps[1] >= 95, `provisioning backs off: ${gaps.map(Math.round)}`);
    assertEq(events.log.states, ["provisioning", "backoff", "provisioning", "backoff", "provisioning", "connecting", "open"], "states");
    const mode = (await serverStats(devstack)).modes.provision429;
    assertEq([mode.provisions, mode.provisionsRefused], [3, 2], "server counts");
    assertEq(events.log.errors, [], "transient failures are not errors");
    await transcriber.stop();
    transcriber.free();
    return { provisions: app.calls.length };
  },

  async provision401FailsWithItsStatus({ devstack, make }) {
    const app = backend(devstack, "provision401");
    const events = recorder();
    const transcriber = make({ provision: app.provision, policy: FAST, ...events });
    let rejection;
    await transcriber.start().catch((error) => (rejection = error));
    assert(rejection instanceof Error, "start rejects with the terminal error");
    assertEq([rejection.code, rejection.status, rejection.terminal], ["provision_rejected", 401, true], "error fields");
    assertEq(events.log.errors, [rejection], "the same object went to onError");
    assertEq([transcriber.state, app.calls.length], ["failed", 1], "no retry after a 401");
    transcriber.free();
  },

  async stopSendsStopRecordingOnceAndNothingConnectsAfter({ devstack, make }) {
    const app = backend(devstack, "normal");
    const events = recorder();
    const transcriber = make({ provision: app.provision, policy: FAST, ...events });
    await transcriber.start();
    for (const n of range(1, 38)) transcriber.sendAudio(frame(n)); // 0.76 s: an utterance under way
    await until(() => events.log.partials.length === 1, 2000, "a partial");
    await transcriber.stop();
    assertEq(events.log.finals.map(([text]) => text), ["utterance 1"], "the pending final arrived before stop resolved");
    assertEq(transcriber.state, "stopped", "stopped");
    await transcriber.stop();
    transcriber.sendAudio(frame(99)); // ignored, no throw
    await assertThrows(() => transcriber.start(), DOMException, /stopped/, "start after stop");
    await sleep(300);
    const session = await sessionStats(devstack, app.sessions[0]);
    assertEq([session.stopRecordings, session.connections, session.ended, session.open], [1, 1, true, 0], "server saw");
    assertEq(app.calls.length, 1, "no provision after stop");
    transcriber.free();
  },

  async reentrantStopFromOnFinal({ devstack, make }) {
    const app = backend(devstack, "normal");
    let transcriber;
    let stopping;
    const finals = [];
    const errors = [];
    transcriber = make({
      provision: app.provision,
      policy: FAST,
      onFinal(text, meta) {
        finals.push(text);
        if (meta.utterance === 1) {
          stopping = transcriber.stop(); // re-entrant: from inside the callback
          assertEq(transcriber.stats.connections, 1, "getters work inside callbacks");
        }
      },
      onError: (error) => errors.push(error),
    });
    await transcriber.start();
    for (const n of range(1, 100)) transcriber.sendAudio(frame(n));
    await until(() => stopping !== undefined, 3000, "stop from onFinal");
    await stopping;
    assertEq(transcriber.state, "stopped", "stopped");
    assert(finals[0] === "utterance 1", "the final that stopped it");
    assertEq(errors, [], "no callback errors");
    await sleep(200);
    const session = await sessionStats(devstack, app.sessions[0]);
    assertEq([session.stopRecordings, session.connections], [1, 1], "stop_recording once");
    transcriber.free();
  },

  async freeFromOnFinalDetachesAtOnce({ devstack, make }) {
    const app = backend(devstack, "normal");
    const states = [];
    let transcriber;
    let freed = false;
    transcriber = make({
      provision: app.provision,
      policy: FAST,
      onStateChange: (state) => states.push(state),
      onFinal() {
        if (!freed) {
          freed = true;
          transcriber.free();
        }
      },
    });
    await transcriber.start();
    for (const n of range(1, 100)) transcriber.sendAudio(frame(n));
    await until(() => freed, 3000, "free from onFinal");
    assertEq(states.at(-1), "stopped", "the last state");
    const id = app.sessions[0];
    await until(async () => (await sessionStats(devstack, id)).open === 0, 2000, "socket closed");
    const session = await sessionStats(devstack, id);
    assertEq([session.stopRecordings, session.connections], [1, 1], "dispose sent stop_recording and closed");
  },

  // The one rule: a throwing callback is a non-terminal callback_error, to onError and onEvent
  // once each; the transcriber goes on (the next transcripts still come).
  async throwingCallbacksAreReportedAndChangeNothing({ devstack, make }) {
    const app = backend(devstack, "normal");
    const errors = [];
    const events = [];
    const finals = [];
    const transcriber = make({
      provision: app.provision,
      policy: FAST,
      onPartial() {
        throw new Error("app bug");
      },
      onFinal: (text) => finals.push(text),
      onError: (error) => errors.push(error),
      onEvent: (event) => events.push(event),
    });
    await transcriber.start();
    for (const n of range(1, 100)) transcriber.sendAudio(frame(n));
    await until(() => finals.length === 2, 3000, "both finals after the throws");
    assertEq(finals, ["utterance 1", "utterance 2"], "the transcripts go on");
    assertEq(errors.map((e) => [e instanceof Error, e.code, e.callback, e.terminal, e.cause.message]), [[true, "callback_error", "onPartial", false, "app bug"], [true, "callback_error", "onPartial", false, "app bug"]], "one onError per throw");
    const reported = events.filter((e) => e.type === "callback_error");
    assertEq(reported.map((e) => [e.callback, Number.isFinite(e.at)]), [["onPartial", true], ["onPartial", true]], "one event per throw");
    assertEq(transcriber.state, "open", "still open");
    await transcriber.stop();
    transcriber.free();
  },

  async slowHandshakeTimesOutThenOpens({ devstack, make }) {
    const slow = backend(devstack, "slow_handshake", "?handshakeMs=600");
    const events = recorder();
    // maxFailedConnects is raised: three timeouts in a row would make the URL dead (R5, covered
    // in transcriber_ends.js); this scenario is about the timeout alone.
    const impatient = make({ provision: slow.provision, policy: { ...FAST, maxFailedConnects: 100 }, connectTimeoutMs: 150, ...events });
    impatient.start().catch(() => {});
    await sleep(700);
    await impatient.stop();
    assert(impatient.stats.connections >= 2, `retried after the timeout: ${impatient.stats.connections}`);
    assert(events.log.states.includes("backoff"), "a timeout backs off");
    assertEq(slow.calls.length, 1, "a slow handshake is not a dead session");
    impatient.free();

    const patient = backend(devstack, "slow_handshake", "?handshakeMs=200&recordFrames=1");
    const transcriber = make({ provision: patient.provision, policy: FAST, connectTimeoutMs: 2000 });
    for (const n of range(1, 10)) transcriber.sendAudio(frame(n));
    await transcriber.start();
    const id = patient.sessions[0];
    await until(async () => (await sessionStats(devstack, id)).binaryFrames >= 10, 2000, "frames");
    assertEq((await sessionStats(devstack, id)).frameNumbers, range(1, 10), "buffered during the handshake, then sent");
    await transcriber.stop();
    transcriber.free();
  },

  async gladiaProvisionerSendsTheKeyItself({ devstack, make, makeProvisioner }) {
    const withKey = async () => (await serverStats(devstack)).modes.normal?.provisionsWithKey ?? 0;
    const before = await withKey();
    const provision = makeProvisioner({ apiKey: "dev-only-key", apiUrl: `${devstack}/stt/normal/` });
    const transcriber = make({ provision, policy: FAST });
    await transcriber.start();
    assertEq(await withKey(), before + 1, "the key went straight to the provider");
    assert(typeof transcriber.sessionId === "string", "session id from the response");
    await transcriber.stop();
    transcriber.free();
  },

  async microphoneStreamIsCapturedAt16kHz({ devstack, make }) {
    // A MediaStream from an oscillator stands in for the microphone: the capture graph, the
    // worklet and the resampler are the same as for getUserMedia.
    const context = new AudioContext();
    const oscillator = new OscillatorNode(context, { frequency: 440 });
    const destination = context.createMediaStreamDestination();
    oscillator.connect(destination);
    oscillator.start();
    if (!(await runs(context))) return { skipped: NO_AUDIO };
    const app = backend(devstack, "echo_frames");
    const transcriber = make({ provision: app.provision, policy: FAST });
    await transcriber.start();
    await transcriber.attachMicrophone(destination.stream);
    await until(() => transcriber.stats.framesSent > 0, 2000, "the first frame");
    const started = performance.now();
    const firstCount = transcriber.stats.framesSent;
    await sleep(1000);
    const perSecond = ((transcriber.stats.framesSent - firstCount) * 1000) / (performance.now() - started);
    await transcriber.stop();
    const sentAtStop = transcriber.stats.framesSent;
    await sleep(200);
    assertEq(transcriber.stats.framesSent, sentAtStop, "no frame after stop: capture released");
    assert(perSecond > 35 && perSecond < 65, `about 50 frames of 20 ms per second, got ${perSecond.toFixed(1)}`);
    const session = await sessionStats(devstack, app.sessions[0]);
    assert(session.frameLengths.length >= 30 && session.frameLengths.every((length) => length === 640), "320-sample PCM16 frames");
    assert(session.frameNumbers.some((number) => number !== 0), "the tone is not silence");
    assertEq(destination.stream.getAudioTracks()[0].readyState, "live", "the app's own stream is the app's to stop");
    transcriber.free();
    await context.close();
    return { contextRate: context.sampleRate, framesPerSecond: Math.round(perSecond) };
  },

  async theTrackIsReadWithoutWebAudioWhereTheBrowserCan({ devstack, make }) {
    // Where the browser hands a track's audio to the page (MediaStreamTrackProcessor: Chromium),
    // the capture makes no AudioContext: the sound comes sooner without Web Audio's buffering.
    // Without it (Firefox; Chromium with the processor taken away) the worklet's context is made.
    const context = new AudioContext();
    const oscillator = new OscillatorNode(context, { frequency: 440 });
    const destination = context.createMediaStreamDestination();
    oscillator.connect(destination);
    oscillator.start();
    if (!(await runs(context))) return { skipped: NO_AUDIO };
    const direct = typeof window.MediaStreamTrackProcessor === "function";
    const RealAudioContext = window.AudioContext;
    const RealProcessor = window.MediaStreamTrackProcessor;
    const made = [];
    window.AudioContext = class extends RealAudioContext {
      constructor(...args) {
        super(...args);
        made.push(this);
      }
    };
    const app = backend(devstack, "echo_frames");
    const transcriber = make({ provision: app.provision, policy: FAST });
    try {
      await transcriber.start();
      await transcriber.attachMicrophone(destination.stream);
      assertEq(made.length, direct ? 0 : 1, direct ? "no AudioContext: the track is read directly" : "the worklet's AudioContext");
      await until(() => transcriber.stats.framesSent >= 25, 3000, "half a second of the tone");
      if (direct) {
        window.MediaStreamTrackProcessor = undefined;
        await transcriber.attachMicrophone(destination.stream);
        assertEq(made.length, 1, "without the processor, the worklet's AudioContext");
      }
      await transcriber.stop();
    } finally {
      window.AudioContext = RealAudioContext;
      window.MediaStreamTrackProcessor = RealProcessor;
    }
    const session = await sessionStats(devstack, app.sessions[0]);
    assert(session.frameLengths.length >= 25 && session.frameLengths.every((length) => length === 640), "16 kHz PCM16 frames of 20 ms");
    assert(session.frameNumbers.some((number) => number !== 0), "the tone is not silence");
    assertEq(destination.stream.getAudioTracks()[0].readyState, "live", "the app's own track is the app's to stop");
    transcriber.free();
    await context.close();
    return { direct };
  },

  async fakeMicrophoneFramesReachTheServer({ devstack, make }) {
    // Uses the fake device and permission flags of webdriver.json (Chrome's
    // --use-fake-device-for-media-stream, Firefox's media.navigator.streams.fake).
    if (!(await runs(new AudioContext()))) return { skipped: NO_AUDIO };
    const app = backend(devstack, "echo_frames");
    const transcriber = make({ provision: app.provision, policy: FAST });
    await transcriber.start();
    await transcriber.attachMicrophone();
    await until(() => transcriber.stats.framesSent >= 25, 3000, "half a second of microphone audio");
    await transcriber.stop();
    const session = await sessionStats(devstack, app.sessions[0]);
    assert(session.frameLengths.length >= 25 && session.frameLengths.every((length) => length === 640), "16 kHz PCM16 frames of 20 ms");
    transcriber.free();
  },

  async badInputThrowsNamedErrors({ make, makeProvisioner }) {
    const provision = () => ({ url: "ws://127.0.0.1:1/never" });
    const cases = [
      ["no options", undefined, TypeError, /options/],
      ["empty options", {}, TypeError, /options\.provision/],
      ["provision not a function", { provision: "https://example" }, TypeError, /options\.provision/],
      ["onFinal not a function", { provision, onFinal: "log" }, TypeError, /options\.onFinal/],
      ["negative bufferMs", { provision, bufferMs: -1 }, RangeError, /options\.bufferMs/],
      ["string bufferMs", { provision, bufferMs: "10s" }, TypeError, /options\.bufferMs/],
      ["fractional sampleRate", { provision, sampleRate: 16000.5 }, RangeError, /options\.sampleRate/],
      ["huge sampleRate", { provision, sampleRate: 1e6 }, RangeError, /options\.sampleRate/],
      ["zero connectTimeoutMs", { provision, connectTimeoutMs: 0 }, RangeError, /options\.connectTimeoutMs/],
      ["policy not an object", { provision, policy: "fast" }, TypeError, /options\.policy/],
      ["bad policy field", { provision, policy: { initialDelayMs: -1 } }, RangeError, /options\.policy\.initialDelayMs/],
      ["zero maxFailedConnects", { provision, policy: { maxFailedConnects: 0 } }, RangeError, /options\.policy\.maxFailedConnects/],
      ["fractional maxProvisionAttempts", { provision, policy: { maxProvisionAttempts: 1.5 } }, RangeError, /options\.policy\.maxProvisionAttempts/],
      ["zero provisionTimeoutMs", { provision, provisionTimeoutMs: 0 }, RangeError, /options\.provisionTimeoutMs/],
      ["string maxMessageBytes", { provision, maxMessageBytes: "1MB" }, TypeError, /options\.maxMessageBytes/],
      ["zero maxMessageBytes", { provision, maxMessageBytes: 0 }, RangeError, /options\.maxMessageBytes/],
    ];
    for (const [label, options, type, pattern] of cases) {
      await assertThrows(() => make(options), type, pattern, label);
    }
    const transcriber = make({ provision });
    await assertThrows(() => transcriber.sendAudio("x"), TypeError, /pcm/, "string audio");
    await assertThrows(() => transcriber.sendAudio(new Float32Array(4)), TypeError, /pcm/, "float audio");
    await assertThrows(() => transcriber.sendAudio(), TypeError, /pcm/, "missing audio");
    await assertThrows(() => transcriber.attachMicrophone("default"), TypeError, /stream/, "not a MediaStream");
    await assertThrows(() => transcriber.attachMicrophone({ stream: "default" }), TypeError, /options\.stream/, "options.stream not a MediaStream");
    await assertThrows(() => transcriber.attachMicrophone(undefined, { workletUrl: 5 }), TypeError, /options\.workletUrl/, "workletUrl not a string");
    await assertThrows(() => transcriber.attachMicrophone({ workletUrl: " " }), RangeError, /options\.workletUrl/, "empty workletUrl");
    assertEq([transcriber.state, transcriber.stats.framesBuffered], ["idle", 0], "bad input changed nothing");
    transcriber.free();
    await assertThrows(() => makeProvisioner({}), TypeError, /options\.apiKey/, "no key");
    await assertThrows(() => makeProvisioner({ apiKey: "" }), RangeError, /options\.apiKey/, "empty key");
    await assertThrows(() => makeProvisioner({ apiKey: "k", config: 5 }), TypeError, /options\.config/, "config");
  },
};

export async function runScenario(name, devstack, make, makeProvisioner) {
  return runIn(scenarios, name, { devstack, make, makeProvisioner });
}
