// VoiceSession scenarios: the dev stack's mock live STT (finals from scripted audio: every 32000
// bytes are one utterance, speech_start at its first byte), scripted routes, the dev stack's mock
// TTS (a tone of 60 ms per character), and a real AudioContext whose source starts and stops are
// recorded. `ctx` is `{ devstack, make }`, `make(options)` being `new VoiceSession(options)`.

import { assert, assertEq, assertThrows, sleep, noSkipInChrome, runIn, FAST, frame } from "./support.js";
import { NO_AUDIO, runningContext, sourceRecorder, synthesizeFrom, untilAudioTime } from "./audio.js";

const RECOVERY = "Sorry, could you say that again?";
const FRAMES_PER_UTTERANCE = 50; // 50 × 640 bytes = 32000 bytes, the mock's utterance

async function until(condition, timeoutMs, label) {
  const deadline = performance.now() + timeoutMs;
  while (!(await condition())) {
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${label}`);
    await sleep(5);
  }
}

/** A provision() calling the dev stack, as an app's backend would; keeps the session ids. */
function backend(devstack, mode = "normal", query = "") {
  const sessions = [];
  return {
    sessions,
    async provision({ signal }) {
      const response = await fetch(`${devstack}/stt/${mode}/v2/live${query}`, {
        method: "POST",
        signal,
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ encoding: "wav/pcm", sample_rate: 16000, bit_depth: 16, channels: 1 }),
      });
      if (!response.ok) throw Object.assign(new Error(`HTTP ${response.status}`), { status: response.status });
      const session = await response.json();
      sessions.push(session.id);
      return session;
    },
  };
}

async function sttSession(devstack, id) {
  const stats = await (await fetch(`${devstack}/__stats`)).json();
  return stats.stt.sessions[id];
}

/** Sends `count` frames of 20 ms (silence: the mock counts bytes) to the session. */
function speak(session, count) {
  for (let i = 0; i < count; i += 1) session.sendAudio(new Int16Array(320));
}

/** A route answering each turn with `answers(input, request)`, recording its requests. */
function route(answers) {
  const requests = [];
  return {
    name: "scripted",
    shareHistory: true,
    requests,
    generate(request) {
      requests.push(request);
      return answers(request.input, request);
    },
  };
}

/** The dev stack's TTS as the app's adapter, recording what it was asked. */
function tts(devstack, options = {}) {
  const calls = [];
  return {
    calls,
    synthesize(text, { turnId, signal }) {
      const call = { text, turnId, signal };
      calls.push(call);
      return synthesizeFrom(devstack, text, { signal: options.ignoreSignal ? undefined : signal, ...options });
    },
  };
}

/** Callbacks that record what the session reports. */
function recorder() {
  const log = { states: [], captions: [], turns: [], errors: [] };
  return {
    log,
    onStateChange: (state) => log.states.push(state),
    onCaption: (text, isFinal) => log.captions.push([text, isFinal]),
    onTurn: (record) => log.turns.push(record),
    onError: (error) => log.errors.push(error),
  };
}

/** Runs `body` on a running context with recorded sources, or reports the skip. */
async function withAudio(body) {
  const context = await runningContext();
  if (!context) return { skipped: NO_AUDIO };
  const sources = sourceRecorder();
  try {
    return await body(context, sources);
  } finally {
    sources.restore();
    await context.close().catch(() => {});
  }
}

/** Records every stream `getUserMedia` gives (the real one's); `original` is the real function. */
function recordUserMedia() {
  const streams = [];
  const original = navigator.mediaDevices.getUserMedia;
  navigator.mediaDevices.getUserMedia = async function (constraints) {
    const stream = await original.call(this, constraints);
    streams.push(stream);
    return stream;
  };
  return { streams, original, restore: () => (navigator.mediaDevices.getUserMedia = original) };
}

/** `onEvent`, `onSpeech` and `onHeard` recorded; `controller.onEvent` marks the events it saw first. */
function observer() {
  const log = { events: [], speech: [], heard: [], controllerFirst: 0 };
  return {
    log,
    onEvent: (event) => log.events.push(event),
    onSpeech: (turnId, text, info) => log.speech.push([turnId, text, info]),
    onHeard: (turnId, heardText) => log.heard.push([turnId, heardText]),
    controller: {
      onEvent: (event) => {
        assert(!log.events.includes(event), `controller.onEvent before options.onEvent (${event.type})`);
        log.controllerFirst += 1;
      },
    },
  };
}

const SESSION_EVENTS = new Set(["output_closed", "paused", "resumed", "turn_latency", "sentence_queued", "tts_started", "tts_finished", "tts_failed", "playback_started", "playback_ended", "sentence_audio", "underrun", "barge_in", "transcriber_state", "transcriber_error", "provision_finished"]);

/** Each event has `type` and `at` (epoch ms, in order) and holds none of `texts` (T14). */
function checkEvents(events, texts) {
  let last = 0;
  for (const event of events) {
    assert(typeof event.type === "string" && Number.isFinite(event.at), `type and at: ${JSON.stringify(event)}`);
    // The controller's and the session's clocks each anchor performance.now() to Date.now() (whole
    // milliseconds) once: their `at`s may differ by that anchoring, at most 2 ms.
    assert(event.at >= last - 2 && Math.abs(event.at - Date.now()) < 120_000, `at is epoch ms, in order: ${JSON.stringify(event)}`);
    last = event.at;
    const json = JSON.stringify(event).toLowerCase();
    for (const text of texts) assert(!json.includes(text.toLowerCase()), `"${text}" leaked into ${json}`);
  }
}

/** The session's own events of `turnId`, as `type:index` or `type`. */
function steps(events, turnId) {
  return events.filter((e) => SESSION_EVENTS.has(e.type) && e.turnId === turnId).map((e) => (e.index === undefined ? e.type : `${e.type}:${e.index}`));
}

/** Dev-stack counters of the LLM scenario `scenario` and of the TTS. */
async function wireCounts(devstack, scenario) {
  const stats = await (await fetch(`${devstack}/__stats`)).json();
  return { llm: stats.llm.scenarios[scenario]?.requests ?? 0, tts: stats.tts.requests };
}

/** A route that asks the dev stack's mock LLM (non-streaming) under `scenario`, counted. */
function wireRoute(devstack, scenario) {
  const calls = [];
  return {
    name: "wire",
    calls,
    async generate({ input, signal }) {
      calls.push(input);
      const response = await fetch(`${devstack}/llm/${scenario}/v1/chat/completions`, {
        method: "POST",
        signal,
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ model: "mock", stream: false, messages: [{ role: "user", content: input }] }),
      });
      if (!response.ok) throw Object.assign(new Error(`HTTP ${response.status}`), { status: response.status });
      return (await response.json()).choices[0].message.content;
    },
  };
}

/** A deferred promise: `{ promise, resolve, reject }`. */
function deferred() {
  let resolve;
  let reject;
  const promise = new Promise((yes, no) => ((resolve = yes), (reject = no)));
  return { promise, resolve, reject };
}

/** The dev stack's Deepgram Flux backend recipe, its mock socket set by `socket`. */
function fluxBackend(devstack, socket) {
  const key = `flux-${Math.random().toString(36).slice(2)}`;
  return async ({ signal, reason }) => {
    const response = await fetch(`${devstack}/api/stt/deepgram-flux`, {
      method: "POST",
      signal,
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ reason, key, socket }),
    });
    if (!response.ok) throw Object.assign(new Error(`HTTP ${response.status}`), { status: response.status });
    return response.json();
  };
}

/**
 * One Flux turn ("w0 w25", its EagerEndOfTurn 300 ms before its EndOfTurn) through a session with
 * `preemptive` as given; the route's first token comes 200 ms after its call. Returns the turn's
 * record, route requests, TTS call times, its `turn_latency` and `preemptive` events.
 */
async function fluxTurn(devstack, make, context, preemptive) {
  const socket = "recognizer=frames&eager_eot_threshold=0.5&mock_eager_lead_ms=300";
  const requests = [];
  const llm = {
    name: "streamed",
    generate(request) {
      requests.push({ ...request, at: performance.timeOrigin + performance.now() });
      return (async function* () {
        await sleep(200);
        yield "It is noon. ";
        yield "Anything else?";
      })();
    },
  };
  const speech = tts(devstack);
  const synthesizedAt = [];
  const events = recorder();
  const latencies = [];
  const guesses = [];
  const session = make({
    routes: [llm],
    recoveryText: RECOVERY,
    sessionId: "s",
    transcriber: { protocol: "deepgram-flux", provision: fluxBackend(devstack, socket) },
    synthesize: (text, options) => {
      synthesizedAt.push(performance.timeOrigin + performance.now());
      return speech.synthesize(text, options);
    },
    audioContext: context,
    preemptive,
    ...events,
    onEvent: (event) => {
      if (event.type === "turn_latency") latencies.push(event);
      if (event.type === "preemptive") guesses.push([event.requestId, event.kept, event.reason]);
    },
  });
  await session.start({ microphone: false });
  for (let n = 0; n < 50; n += 1) session.sendAudio(frame(n));
  await until(() => events.log.turns.length === 1 && latencies.length === 1, 10_000, "the turn answered and measured");
  await session.stop();
  session.free();
  assertEq(events.log.errors, [], "no errors");
  return { record: events.log.turns[0], requests, synthesizedAt, latency: latencies[0], guesses };
}

const scenarios = {
  async theVoiceDetectorHearsSpeechNotSilenceOrHum({ devstack, make }) {
    const app = backend(devstack);
    const heard = [];
    const session = make({
      routes: [route(() => "Okay.")], recoveryText: RECOVERY, provision: app.provision,
      synthesize: async () => new ArrayBuffer(0),
      onEvent: (event) => event.type === "vad" && heard.push([event.speaking, event.atMs]),
    });
    await session.start({ microphone: false });
    const frames = (count, sample) => {
      for (let n = 0; n < count; n += 1) {
        const pcm = new Int16Array(320);
        for (let i = 0; i < pcm.length; i += 1) pcm[i] = sample(n * 320 + i);
        session.sendAudio(pcm);
      }
    };
    const hum = (i) => Math.round(40 * Math.sin(i / 7));
    const voice = (i) => Math.round(8000 * Math.sin((2 * Math.PI * 220 * i) / 16000));
    frames(50, () => 0); // 1 s of digital silence
    frames(25, hum); // 0.5 s of a quiet hum
    assertEq(heard, [], "silence and a quiet hum are not voice");
    frames(20, voice); // 0.4 s of voice, from 1.5 s
    frames(30, hum);
    assertEq(heard, [[true, 1500], [false, 1900]], "voice heard where it was, in audio time");
    await session.stop();
    session.free();
  },

  async fluxsEagerEndOfTurnStartsTheAnswerEarlyAndTheLatencyRecordSaysSo({ devstack, make }) {
    return withAudio(async (context) => {
      const on = await fluxTurn(devstack, make, context, true);
      assertEq(on.record.input, "w0 w25", "the final");
      assertEq(on.record.attempts.map((a) => [a.requestId, a.result, a.preemptive]), [["s:turn-1:preemptive:1", "accepted", true]], "one request, kept");
      assertEq(on.requests.map((r) => r.input), ["w0 w25"], "the route was called once, on the eager text");
      assertEq(on.guesses, [["s:turn-1:preemptive:1", true, undefined]], "kept");
      const l = on.latency;
      assertEq([l.turnId, l.preemptive], ["s:turn-1", "kept"], "the latency record");
      assert(l.routeCalledAt < l.finalAt, `the route was called before the final (${l.routeCalledAt} < ${l.finalAt})`);
      // Marks are the session's input times; this debug build takes a few ms to reach the call
      // (the bench compares them in the release build).
      assert(Math.abs(l.routeCalledAt - on.requests[0].at) <= 25, `routeCalledAt is the call (${l.routeCalledAt} vs ${on.requests[0].at})`);
      assert(on.synthesizedAt[0] >= l.finalAt, "nothing was synthesized before the final");
      assert(Math.abs(l.synthesizeAt - on.synthesizedAt[0]) <= 25, `synthesizeAt is the call (${l.synthesizeAt} vs ${on.synthesizedAt[0]})`);
      const marks = [l.speechEndAt, l.routeCalledAt, l.firstTokenAt, l.firstSentenceAt, l.synthesizeAt, l.firstAudioAt, l.firstSoundAt];
      assert(marks.every(Number.isFinite), `every mark: ${JSON.stringify(l)}`);
      assert(l.firstTokenAt <= l.firstSentenceAt && l.firstSentenceAt <= l.synthesizeAt && l.synthesizeAt <= l.firstAudioAt && l.firstAudioAt <= l.firstSoundAt, `in order: ${JSON.stringify(l)}`);
      assert(Math.abs(l.voiceToVoiceMs - (l.firstSoundAt - l.speechEndAt)) < 0.01, "voice-to-voice");
      const off = await fluxTurn(devstack, make, context, false);
      assertEq(off.record.attempts.map((a) => [a.requestId, a.preemptive]), [["s:turn-1:attempt:1", undefined]], "off: the final's own attempt");
      assertEq([off.latency.preemptive, off.guesses], ["not_tried", []], "off: not tried");
      assert(off.latency.routeCalledAt >= off.latency.finalAt, "off: the route is called at the final");
      // The guess led the final by 300 ms: the route's 200 ms were spent before it.
      const fromFinal = (x) => x.latency.firstTokenAt - x.latency.finalAt;
      assert(fromFinal(on) < fromFinal(off), `first token sooner after the final with preemptive (${fromFinal(on)} vs ${fromFinal(off)} ms)`);
      return { firstTokenAfterFinalMs: { on: fromFinal(on), off: fromFinal(off) } };
    });
  },

  // The one rule for a callback that throws, in the session and its own wiring: a non-terminal
  // callback_error to onError and to onEvent, once each, and the session goes on.
  async aThrowingCallbackIsReportedOnceAndTheSessionGoesOn({ devstack, make }) {
    return withAudio(async (context) => {
      const errors = [];
      const events = [];
      const records = [];
      const speech = tts(devstack);
      const session = make({
        routes: [route(() => "Fine.")],
        recoveryText: RECOVERY,
        synthesize: speech.synthesize,
        audioContext: context,
        onCaption() {
          throw new Error("caption bug");
        },
        onTurn(record) {
          records.push(record.status);
          throw new Error("turn bug");
        },
        controller: {
          onEvent(event) {
            if (event.type === "turn_started") throw new Error("log bug");
          },
        },
        onError: (error) => errors.push(error),
        onEvent: (event) => events.push(event),
      });
      await session.start({ microphone: false });
      for (const [n, text] of ["first", "second"].entries()) {
        session.sendText(text);
        await until(() => records.length === n + 1 && session.state === "listening", 8000, `the ${text} turn spoken`);
      }
      assertEq(records, ["accepted", "accepted"], "both turns answered");
      assertEq(speech.calls.map((c) => c.text), ["Fine.", "Fine."], "both spoken");
      const byName = (list) => list.map((e) => e.callback).sort();
      const expected = ["controller.onEvent", "controller.onEvent", "onCaption", "onCaption", "onTurn", "onTurn"];
      assertEq(byName(errors), expected, "each throw to onError once");
      assert(errors.every((e) => e instanceof Error && e.code === "callback_error" && e.terminal === false && e.cause instanceof Error), "callback_error, not terminal, with its cause");
      assertEq(byName(events.filter((e) => e.type === "callback_error")), expected, "each throw to onEvent once");
      assertEq(errors.filter((e) => e.callback === "onTurn").map((e) => e.turnId), ["s:turn-1", "s:turn-2"], "onTurn's reports name the turn");
      await session.stop();
      session.free();
    });
  },

  // P3: a barge-in in each gap of the speech path: heard text, onHeard and the history entry
  // say only what the audio clock played.
  async bargeInsInEveryGapCountOnlyWhatTheAudioClockPlayed({ devstack, make }) {
    return withAudio(async (context, sources) => {
      const FIRST = "First we look outside.";
      const SECOND = "Then we think about it for a long while.";
      const results = {};
      const run = async (gap, { suspended = false, hold = () => false, holdDecode = () => false, before }) => {
        if (suspended) await context.suspend();
        const held = [];
        // Audio whose decode is held: the real decodeAudioData runs, its result waits until released.
        const heldBytes = new WeakSet();
        const heldDecodes = [];
        const decode = context.decodeAudioData;
        context.decodeAudioData = function (bytes, ...rest) {
          const decoded = decode.call(this, bytes, ...rest);
          if (!heldBytes.has(bytes)) return decoded;
          const later = deferred();
          heldDecodes.push(later);
          return later.promise.then(() => decoded);
        };
        const synthesize = async (text, { signal }) => {
          if (hold(text)) {
            const later = deferred();
            held.push(later);
            return later.promise;
          }
          const bytes = await synthesizeFrom(devstack, text, { signal });
          if (holdDecode(text)) heldBytes.add(bytes);
          return bytes;
        };
        // Streams the first sentence, then the second only when told: the answer is still
        // coming when the first sentence has played out.
        const more = deferred();
        const llm = {
          name: "stream",
          shareHistory: true,
          async *generate() {
            // The splitter knows a sentence has ended once the next one begins.
            yield `${FIRST} ${SECOND.slice(0, 4)}`;
            await more.promise;
            yield SECOND.slice(4);
          },
        };
        const seen = observer();
        const session = make({ routes: [llm], recoveryText: RECOVERY, synthesize, audioContext: context, ...seen });
        await session.start({ microphone: false });
        const startsBefore = sources.starts.length;
        session.sendText(`question ${gap}`);
        await before({ session, seen, held, heldDecodes, more, startsBefore });
        session.interrupt();
        await until(() => seen.log.heard.length === 1, 3000, `${gap}: the heard part`);
        const heard = seen.log.heard[0][1];
        const entry = session.history.find((message) => message.role === "assistant")?.content ?? "";
        assertEq(heard, entry, `${gap}: onHeard is the history entry`);
        const played = sources.starts.slice(startsBefore);
        results[gap] = { heard, chunks: played.length };
        await session.stop();
        session.free();
        if (suspended) await context.resume();
        held.forEach((later) => later.resolve(new ArrayBuffer(0)));
        heldDecodes.forEach((later) => later.resolve());
        delete context.decodeAudioData; // the prototype's again
        more.resolve();
        return heard;
      };
      const firstPlayedOut = async ({ session, seen, startsBefore }) => {
        await until(() => sources.starts.length === startsBefore + 1, 5000, "the first sentence scheduled").catch((error) => {
          throw new Error(`${error.message}: ${sources.starts.length - startsBefore} starts, ${session.state}, ${seen.log.events.map((e) => e.type + (e.index ?? ""))}`);
        });
        const first = sources.starts[startsBefore];
        await untilAudioTime(context, first.when + first.duration + 0.05);
        await until(() => session.state === "speaking", 1000, "still speaking: the answer goes on");
      };
      // While the next sentence is synthesized: the first played out, the second's synthesize pending.
      assertEq(
        await run("synthesizing", {
          hold: (text) => text === SECOND,
          before: async (ctx) => {
            ctx.more.resolve();
            await until(() => ctx.held.length === 1, 5000, "the second synthesize pending");
            await firstPlayedOut(ctx);
          },
        }),
        FIRST,
        "synthesizing: the first sentence only",
      );
      // While the next sentence's audio decodes: the first played out, the second synthesized.
      assertEq(
        await run("decoding", {
          holdDecode: (text) => text === SECOND,
          before: async (ctx) => {
            ctx.more.resolve();
            await until(() => ctx.heldDecodes.length === 1, 5000, "the second decode pending");
            await firstPlayedOut(ctx);
          },
        }),
        FIRST,
        "decoding: the first sentence only",
      );
      // Right after the last chunk ended, the rest of the answer not yet streamed.
      assertEq(await run("after the last chunk", { before: firstPlayedOut }), FIRST, "after the last chunk: the first sentence only");
      // Between the accepted text and its first audio: synthesize pending.
      assertEq(
        await run("before the first audio", {
          hold: () => true,
          before: async ({ held }) => until(() => held.length === 1, 5000, "synthesize pending"),
        }),
        "",
        "before the first audio: nothing",
      );
      // While the context is suspended: the audio waits for a gesture.
      assertEq(
        await run("suspended", {
          suspended: true,
          before: async ({ session }) => {
            await until(() => session.state === "thinking", 1000, "thinking");
            await sleep(600); // the first sentence's audio synthesized and queued, unplayed
          },
        }),
        "",
        "suspended: nothing",
      );
      return results;
    });
  },

  // V5: stop(), free() and interrupt() from every session callback, a timer and an I/O event:
  // no turn start, route call or synthesize afterwards, counted in the page and at the dev stack.
  async stopFreeOrInterruptFromAnyCallbackLeavesNoStaleWork({ devstack, make }) {
    const scenario = "comments"; // a scenario of the mock LLM no other session scenario uses
    const cases = [
      ["onCaption", (o, cut) => ({ onCaption: (text, isFinal) => isFinal && cut() })],
      ["onStateChange thinking", (o, cut) => ({ onStateChange: (state) => state === "thinking" && cut() })],
      ["onEvent turn_started", (o, cut) => ({ onEvent: (e) => e.type === "turn_started" && cut() })],
      ["onEvent attempt_started", (o, cut) => ({ onEvent: (e) => e.type === "attempt_started" && cut() })],
      ["controller.onEvent turn_started", (o, cut) => ({ controller: { onEvent: (e) => e.type === "turn_started" && cut() } })],
      ["onSpeech", (o, cut) => ({ onSpeech: () => cut() })],
      ["onEvent sentence_queued", (o, cut) => ({ onEvent: (e) => e.type === "sentence_queued" && cut() })],
      ["onEvent tts_started", (o, cut) => ({ onEvent: (e) => e.type === "tts_started" && cut() })],
      ["onTurn", (o, cut) => ({ onTurn: () => cut() })],
      ["a timer", (o, cut) => ({ onSpeech: () => setTimeout(cut, 0) })],
      ["an I/O event", (o, cut) => ({ onSpeech: () => fetch(`${devstack}/__stats`).then(() => cut()) })],
    ];
    const outcome = {};
    for (const method of ["stop", "free", "interrupt"]) {
      for (const [label, hook] of cases) {
        const counts = { synthesize: 0 };
        const llm = wireRoute(devstack, scenario);
        let session;
        let cutAt = null;
        const cut = () => {
          if (cutAt) return;
          cutAt = { route: llm.calls.length, synthesize: counts.synthesize };
          if (method === "stop") session.stop();
          else if (method === "free") session.free();
          else session.interrupt();
        };
        const synthesize = (text, { signal }) => {
          counts.synthesize += 1;
          return synthesizeFrom(devstack, text, { signal, delayMs: 50 });
        };
        const before = await wireCounts(devstack, scenario);
        session = make({ routes: [llm], recoveryText: RECOVERY, synthesize, ...hook({}, cut) });
        await session.start({ microphone: false });
        session.sendText("what is the weather");
        await until(() => cutAt !== null, 5000, `${method} from ${label}`);
        // Long enough for any stale route call, synthesis or second turn to happen.
        await sleep(400);
        const after = await wireCounts(devstack, scenario);
        const where = `${method} from ${label}`;
        assertEq(llm.calls.length, cutAt.route, `${where}: no route call afterwards (page)`);
        assertEq(counts.synthesize, cutAt.synthesize, `${where}: no synthesize afterwards (page)`);
        // A route call aborted at once may never reach the dev stack: at most the page's calls.
        assert(after.llm - before.llm <= llm.calls.length, `${where}: the dev stack saw no other route call`);
        assert(after.tts - before.tts <= counts.synthesize, `${where}: the dev stack saw no other TTS call`);
        if (method !== "interrupt") assertEq(session.state, "stopped", `${where}: stopped`);
        outcome[where] = [llm.calls.length, counts.synthesize];
        session.free();
      }
    }
    return outcome;
  },

  // L7: a provision() answering 503, 429, 408, failing on the network or hanging, for ever:
  // start() rejects after maxProvisionAttempts, with exactly one terminal onError.
  async startSettlesWhenProvisioningKeepsFailing({ devstack, make }) {
    const results = {};
    for (const mode of ["provision503", "provision429", "provision408", "provision_reset", "provision_hang"]) {
      const app = backend(devstack, mode);
      let calls = 0;
      const provision = (request) => {
        calls += 1;
        return app.provision(request);
      };
      const events = recorder();
      const session = make({
        routes: [route(() => "x")],
        recoveryText: RECOVERY,
        provision,
        synthesize: () => new ArrayBuffer(8),
        transcriber: { provisionTimeoutMs: 300, policy: { initialDelayMs: 10, maxDelayMs: 40, maxProvisionAttempts: 3 } },
        ...events,
      });
      let error;
      try {
        await session.start({ microphone: false });
      } catch (caught) {
        error = caught;
      }
      assert(error, `${mode}: start() rejected`);
      assertEq([error.code, error.terminal, calls], ["provision_exhausted", true, 3], `${mode}: after maxProvisionAttempts`);
      await sleep(200);
      const terminal = events.log.errors.filter((e) => e.terminal);
      assertEq(terminal.map((e) => e.code), ["provision_exhausted"], `${mode}: one terminal onError`);
      assertEq(calls, 3, `${mode}: nothing more after the failure`);
      assertEq(session.state, "failed", `${mode}: the session failed`);
      results[mode] = calls;
      session.free();
    }
    return results;
  },

  async aSpokenAnswerIsObservableStepByStepWithoutText({ devstack, make }) {
    return withAudio(async (context, sources) => {
      const app = backend(devstack);
      const llm = route(() => "It is sunny. Take an umbrella.");
      const speech = tts(devstack);
      const events = recorder();
      const seen = observer();
      const session = make({ routes: [llm], recoveryText: RECOVERY, provision: app.provision, synthesize: speech.synthesize, audioContext: context, ...events, ...seen });
      await session.start({ microphone: false });
      speak(session, FRAMES_PER_UTTERANCE);
      await until(() => events.log.turns.length === 1 && session.state === "listening", 8000, "the spoken answer");
      const log = seen.log.events;
      checkEvents(log, ["utterance", "sunny", "umbrella", RECOVERY]);
      // The controller's events pass through unchanged, app's controller.onEvent first.
      const turnEvents = log.filter((e) => !SESSION_EVENTS.has(e.type)).map((e) => e.type);
      assertEq(turnEvents.slice(0, 2), ["turn_started", "attempt_started"], "controller events");
      assert(turnEvents.includes("accepted"), "accepted");
      assertEq(seen.log.controllerFirst, turnEvents.length, "controller.onEvent saw each one too");
      const turn = steps(log, "s:turn-1");
      // Sentences queue as they come; TTS has a look-ahead of one; playback ends once, uncut.
      for (const [before, after] of [
        ["sentence_queued:0", "tts_started:0"],
        ["tts_started:0", "tts_finished:0"],
        ["tts_finished:0", "playback_started"],
        ["sentence_queued:1", "tts_started:1"],
        ["tts_started:1", "tts_finished:1"],
        ["tts_finished:1", "playback_ended"],
        ["tts_finished:0", "sentence_audio:0"],
        ["sentence_audio:0", "sentence_audio:1"],
        ["sentence_audio:1", "playback_ended"],
      ]) {
        assert(turn.indexOf(before) >= 0 && turn.indexOf(before) < turn.indexOf(after), `${before} before ${after} in ${turn}`);
      }
      assertEq(turn.filter((step) => step.startsWith("playback")), ["playback_started", "playback_ended"], "one playback");
      assertEq(turn.filter((step) => step === "turn_latency").length, 1, "one latency record");
      assert(turn.indexOf("sentence_audio:0") < turn.indexOf("turn_latency"), "measured at the first sound");
      const ended = log.find((e) => e.type === "playback_ended");
      const audioMs = sources.starts.reduce((sum, start) => sum + start.duration * 1000, 0);
      assertEq([ended.cut, ended.unheardMs], [false, undefined], "played out");
      assert(Math.abs(ended.heardMs - audioMs) < 30, `heardMs ${ended.heardMs} is the audio played (${audioMs.toFixed(0)})`);
      const started = log.indexOf(log.find((e) => e.type === "playback_started"));
      assert(log.indexOf(log.find((e) => e.type === "turn_started")) < started, "the turn starts before it is heard");
      // The transcriber's way up, with its counters; provision() succeeded once.
      const states = log.filter((e) => e.type === "transcriber_state");
      assertEq(states.map((e) => e.state), ["provisioning", "connecting", "open"], "transcriber states");
      assertEq(states.at(-1).connections, 1, "one connection");
      assertEq(states.at(-1).framesDropped, 0, "no dropped frames");
      assertEq(log.filter((e) => e.type === "provision_finished").map((e) => e.ok), [true], "provision_finished");
      assertEq(seen.log.speech, [["s:turn-1", "It is sunny.", { index: 0, recovery: false }], ["s:turn-1", "Take an umbrella.", { index: 1, recovery: false }]], "onSpeech");
      assertEq(seen.log.heard, [], "nothing cut");
      await session.stop();
      session.free();
      return { events: log.length, heardMs: ended.heardMs };
    });
  },

  async aBargeInIsReportedWithItsCauseAndTheHeardPart({ devstack, make }) {
    return withAudio(async (context, sources) => {
      const app = backend(devstack);
      const second = "Then it rains for a while with wind from the west and some thunder later";
      const llm = route((input) => (input === "utterance 1" ? `Sunny now. ${second}.` : "Noted. That is all I know about it for now."));
      const speech = tts(devstack);
      const events = recorder();
      const seen = observer();
      const bargeIn = { minPartialChars: 5 }; // the partial "utterance" confirms a pause (V7)
      const session = make({ routes: [llm], recoveryText: RECOVERY, provision: app.provision, synthesize: speech.synthesize, audioContext: context, bargeIn, ...events, ...seen });
      await session.start({ microphone: false });
      speak(session, FRAMES_PER_UTTERANCE);
      await until(() => sources.starts.length === 2, 8000, "the second sentence scheduled");
      const cut = sources.starts[1];
      await untilAudioTime(context, cut.when + cut.duration * 0.4);
      speak(session, 25); // utterance 2: its speech_start pauses the agent, its partial confirms the cut
      await until(() => seen.log.heard.length === 1, 3000, "the heard part");
      const log = seen.log.events;
      const turn = steps(log, "s:turn-1");
      assertEq(turn.slice(turn.indexOf("paused")), ["paused", "barge_in", "playback_ended"], "a pause, the barge-in, then the cut playback");
      assertEq(log.find((e) => e.type === "paused").cause, "speech_start", "the pause's cause");
      assertEq(log.find((e) => e.type === "barge_in").cause, "partial", "its cause");
      const ended = log.filter((e) => e.type === "playback_ended" && e.turnId === "s:turn-1");
      assertEq(ended.length, 1, "one playback_ended");
      assert(ended[0].cut && ended[0].heardMs > 0 && ended[0].unheardMs > 0, `cut with heard and unheard audio: ${JSON.stringify(ended[0])}`);
      const audioMs = sources.starts.reduce((sum, start) => sum + start.duration * 1000, 0);
      assert(Math.abs(ended[0].heardMs + ended[0].unheardMs - audioMs) < 30, "heard + unheard is the scheduled audio");
      assertEq(seen.log.heard, [["s:turn-1", session.history[1].content]], "onHeard is the history entry");
      // Utterance 2 becomes s:turn-2; the app's button cuts it while it speaks.
      speak(session, FRAMES_PER_UTTERANCE - 25);
      await until(() => session.state === "speaking", 8000, "s:turn-2 speaking");
      session.interrupt();
      const button = log.filter((e) => e.type === "barge_in");
      assertEq(button.map((e) => [e.turnId, e.cause]), [["s:turn-1", "partial"], ["s:turn-2", "button"]], "the button's barge-in");
      assertEq(steps(log, "s:turn-2").at(-1), "playback_ended", "turn-2's cut playback reported");
      checkEvents(log, ["utterance", "sunny", "rains", "noted", RECOVERY]);
      await session.stop();
      session.free();
      return { heardMs: ended[0].heardMs, unheardMs: ended[0].unheardMs };
    });
  },

  async aTranscriberFlapIsReportedStateByState({ devstack, make }) {
    const app = backend(devstack, "drop1006", "?times=1&dropAfterMs=300");
    const seen = observer();
    const events = recorder();
    const session = make({ routes: [route(() => "x")], recoveryText: RECOVERY, provision: app.provision, synthesize: () => new ArrayBuffer(8), ...events, ...seen });
    await session.start({ microphone: false });
    await until(() => seen.log.events.filter((e) => e.type === "transcriber_state" && e.state === "open").length === 2, 8000, "open again after the drop");
    const states = seen.log.events.filter((e) => e.type === "transcriber_state");
    assertEq(states.map((e) => e.state), ["provisioning", "connecting", "open", "backoff", "connecting", "open"], "the flap");
    assertEq(states.map((e) => e.connections), [0, 1, 1, 1, 2, 2], "connection attempts counted from connecting");
    assertEq(states.map((e) => e.provisions).at(-1), 1, "the same session: no re-provision");
    assertEq(app.sessions.length, 1, "one provision");
    speak(session, FRAMES_PER_UTTERANCE);
    await until(() => events.log.turns.length === 1, 8000, "a turn after the flap");
    await until(() => session.state === "listening", 5000, "listening after the turn");
    checkEvents(seen.log.events, ["utterance", RECOVERY]);
    await session.stop();
    assertEq(seen.log.events.filter((e) => e.type === "transcriber_state").at(-1).state, "stopped", "stopped at the end");
    session.free();
  },

  async listeningMeansTheSocketOpenedAndTheTranscriberIsInSight({ devstack, make }) {
    const base = { routes: [route(() => "x")], recoveryText: RECOVERY, synthesize: () => new ArrayBuffer(8) };
    const order = [];
    const traced = {
      onStateChange: (state) => order.push(`session:${state}`),
      onEvent: (event) => event.type === "transcriber_state" && order.push(`transcriber:${event.state}`),
    };
    const app = backend(devstack);
    const session = make({ ...base, provision: app.provision, ...traced });
    assertEq([session.state, session.transcriberState, session.transcriberStats.connections], ["idle", "idle", 0], "before start");
    const started = session.start({ microphone: false });
    assertEq(session.state, "idle", "not listening while it provisions");
    await started;
    assertEq(order.slice(0, 4), ["transcriber:provisioning", "transcriber:connecting", "transcriber:open", "session:listening"], "listening once the socket opened");
    assertEq([session.state, session.transcriberState], ["listening", "open"], "both in sight");
    speak(session, 10);
    await until(() => session.transcriberStats.framesSent >= 10, 3000, "frames counted");
    assertEq([session.transcriberStats.provisions, session.transcriberStats.connections], [1, 1], "the transcriber's counters");
    await session.stop();
    assertEq(session.transcriberState, "stopped", "stopped");
    session.free();
    assertEq([session.transcriberState, session.transcriberStats], [null, null], "freed");

    // Every handshake refused: never listening; start() rejects with the terminal connect_failed.
    const states = [];
    const refused = make({ ...base, provision: backend(devstack, "upgrade404").provision, transcriber: { policy: FAST }, onStateChange: (state) => states.push(state) });
    const error = await refused.start({ microphone: false }).then(() => null, (rejection) => rejection);
    assertEq([error?.code, error?.terminal, refused.state, refused.transcriberState], ["connect_failed", true, "failed", "failed"], "failed, never listening");
    assertEq(states, ["failed"], "no listening on the way");
    assertEq(refused.transcriberStats.connections, 6, "three connects to each of two URLs");
    refused.free();

    const typed = make(base);
    assertEq([typed.transcriberState, typed.transcriberStats], [null, null], "typed input only: no transcriber");
    await typed.start({ microphone: false });
    assertEq(typed.state, "listening", "typed input only listens at once");
    typed.free();
  },

  async aScriptedFinalGetsASpokenAnswer({ devstack, make }) {
    return withAudio(async (context, sources) => {
      const app = backend(devstack);
      const llm = route(() => "It is sunny. Take an umbrella.");
      const speech = tts(devstack);
      const events = recorder();
      const ended = [];
      const onEvent = (event) => event.type === "playback_ended" && ended.push([event.turnId, event.cut]);
      const session = make({ routes: [llm], recoveryText: RECOVERY, provision: app.provision, synthesize: speech.synthesize, audioContext: context, ...events, onEvent });
      assertEq(session.state, "idle", "before start");
      await session.start({ microphone: false });
      assertEq(session.state, "listening", "after start");
      speak(session, FRAMES_PER_UTTERANCE);
      await until(() => events.log.turns.length === 1 && session.state === "listening", 8000, "the spoken answer");
      assertEq(events.log.states, ["listening", "thinking", "speaking", "listening"], "states");
      assertEq(speech.calls.map((c) => [c.text, c.turnId]), [["It is sunny.", "s:turn-1"], ["Take an umbrella.", "s:turn-1"]], "TTS got the accepted sentences in order");
      assertEq(sources.starts.length, 2, "both sentences played");
      const [first, second] = sources.starts;
      assert(Math.abs(second.when - (first.when + first.duration)) < 0.01 || second.when > first.when + first.duration, "in order");
      assertEq([events.log.turns[0].turnId, events.log.turns[0].status, events.log.turns[0].input], ["s:turn-1", "accepted", "utterance 1"], "the record");
      assert(events.log.captions.some(([text, isFinal]) => text === "utterance 1" && isFinal), "the final caption");
      assert(events.log.captions.some(([text, isFinal]) => text === "utterance" && !isFinal), "the partial caption");
      assertEq(session.history, [{ role: "user", content: "utterance 1" }, { role: "assistant", content: "It is sunny. Take an umbrella." }], "history");
      assertEq(events.log.errors, [], "no errors");
      await until(() => ended.length > 0, 5000, "the answer's audio ran out");
      await session.stop();
      assertEq(ended, [["s:turn-1", false]], "one playback_ended: a stop after the audio ran out cuts nothing");
      session.free();
    });
  },

  async speechStartDuringTheAnswerSilencesItAndHistoryKeepsTheHeardPart({ devstack, make }) {
    return withAudio(async (context, sources) => {
      const app = backend(devstack);
      const second = "Then it rains for a while with wind from the west and some thunder later";
      const llm = route((input) => (input === "utterance 1" ? `Sunny now. ${second}.` : "Noted."));
      const speech = tts(devstack);
      const events = recorder();
      const onEvent = (event) => { if (event.type === "paused") events.log.paused = event; };
      // The mock's partial "utterance" is long enough to confirm a pause by itself (V7).
      const bargeIn = { minPartialChars: 5 };
      const session = make({ routes: [llm], recoveryText: RECOVERY, provision: app.provision, synthesize: speech.synthesize, audioContext: context, bargeIn, ...events, onEvent });
      await session.start({ microphone: false });
      speak(session, FRAMES_PER_UTTERANCE);
      await until(() => sources.starts.length === 2, 8000, "the second sentence scheduled");
      const cut = sources.starts[1];
      await untilAudioTime(context, cut.when + cut.duration * 0.4);
      speak(session, 1); // the next utterance begins: speech_start pauses the agent
      await until(() => events.log.paused && context.state === "suspended", 3000, "the pause");
      const pausedAt = context.currentTime;
      await sleep(150);
      assertEq(context.currentTime, pausedAt, "paused, the audio clock stands still");
      speak(session, 24); // its partial confirms the cut
      await until(() => session.state === "listening" && sources.stops.length > 0, 3000, "the barge-in");
      const stop = sources.stops.at(-1);
      assertEq(stop.at, pausedAt, "the cut falls where the pause began");
      assert(stop.node === cut.node, "the playing source was stopped");
      const share = (stop.at - cut.when) / cut.duration;
      const words = `${second}.`.split(/\s+/);
      // The player read the audio clock in the same task as this recorder, a hair earlier: one
      // word either side of the proportional cut is the clock's own granularity.
      const heardAt = (count) => ["Sunny now.", ...words.slice(0, count)].join(" ");
      const exact = Math.floor(words.length * share);
      const content = session.history[1]?.content;
      assert([exact - 1, exact, exact + 1].map(heardAt).includes(content), `heard "${content}", expected about "${heardAt(exact)}"`);
      assert(exact > 0 && exact < words.length, `the cut fell inside the sentence (${share})`);
      const expected = content;
      await sleep(300);
      assertEq(sources.starts.length, 2, "nothing of the cut answer plays afterwards");
      speak(session, FRAMES_PER_UTTERANCE - 25); // utterance 2 completes: a new turn
      await until(() => llm.requests.length === 2, 5000, "the next turn");
      assertEq(llm.requests[1].history, [{ role: "user", content: "utterance 1" }, { role: "assistant", content: expected }], "the next turn sees only the heard part");
      await until(() => events.log.turns.length === 2, 5000, "the second record");
      await session.stop();
      session.free();
      return { heardShare: Number(share.toFixed(3)), heard: expected };
    });
  },

  // V7: voice nothing confirms (a cough) pauses the agent; it resumes where it paused, the
  // audio clock stood still meanwhile, and the whole answer counts as heard.
  async aPauseNothingConfirmsResumesWhereItStoppedAndTheWholeAnswerIsHeard({ devstack, make }) {
    return withAudio(async (context, sources) => {
      const app = backend(devstack);
      const answer = "Sunny now. Then it rains for a while with wind from the west.";
      const seen = observer();
      const session = make({
        routes: [route(() => answer)], recoveryText: RECOVERY, provision: app.provision, synthesize: tts(devstack).synthesize,
        audioContext: context, bargeIn: { falseInterruptionMs: 1000 }, ...seen,
      });
      await session.start({ microphone: false });
      speak(session, FRAMES_PER_UTTERANCE);
      await until(() => sources.starts.length === 2, 8000, "the second sentence scheduled");
      const second = sources.starts[1];
      await untilAudioTime(context, second.when + second.duration * 0.3);
      // 200 ms of voice, then 280 ms of quiet: fewer bytes than the mock's first partial. The
      // frames come at once: the detector's voice has ended before any timer, its length counts.
      const voice = (i) => Math.round(8000 * Math.sin((2 * Math.PI * 220 * i) / 16000));
      for (let n = 0; n < 24; n += 1) {
        const pcm = new Int16Array(320);
        if (n < 10) for (let i = 0; i < pcm.length; i += 1) pcm[i] = voice(n * 320 + i);
        session.sendAudio(pcm);
      }
      await until(() => context.state === "suspended", 3000, "the pause");
      // The detector paused it, on what the burst lasted in audio, before the provider said a thing.
      assertEq(seen.log.events.find((e) => e.type === "paused")?.cause, "voice", "paused by the voice detector");
      const pausedAt = context.currentTime;
      await sleep(100);
      assertEq(context.currentTime, pausedAt, "paused, the audio clock stands still");
      await until(() => seen.log.events.some((e) => e.type === "resumed"), 3000, "the resume");
      const ended = await (async () => {
        await until(() => seen.log.events.some((e) => e.type === "playback_ended"), 8000, "the answer's end");
        return seen.log.events.find((e) => e.type === "playback_ended");
      })();
      const turn = steps(seen.log.events, "s:turn-1");
      assert(turn.indexOf("paused") < turn.indexOf("resumed") && turn.indexOf("resumed") < turn.indexOf("playback_ended"), `paused, resumed, ended: ${turn}`);
      assert(!turn.includes("barge_in"), "no cut");
      assertEq(sources.stops.length, 0, "no source was stopped");
      assertEq(sources.starts.length, 2, "no source started again: the same buffers went on");
      const audioMs = sources.starts.reduce((sum, start) => sum + start.duration * 1000, 0);
      assert(!ended.cut && Math.abs(ended.heardMs - audioMs) < 30, `the whole answer played: ${JSON.stringify(ended)} of ${audioMs} ms`);
      const resumed = seen.log.events.find((e) => e.type === "resumed");
      assert(resumed.pausedMs >= 100, `paused for a while (${resumed.pausedMs} ms)`);
      assertEq(session.history[1]?.content, answer, "the history holds the whole answer");
      checkEvents(seen.log.events, ["sunny", "rains"]);
      await session.stop();
      session.free();
      return { pausedMs: resumed.pausedMs };
    });
  },

  // V8: a leak of the agent's echo pauses it, and the provider writes the agent's word sounding
  // there: that final confirms nothing, the agent resumes. A word the agent is not saying there
  // cuts. The mock writes each 500 ms of audio as one final, `w<N>`, N from its first samples;
  // the answer says "w7" throughout.
  async theAgentsOwnWordWherePausedResumesAndAnotherWordCuts({ devstack, make }) {
    return withAudio(async (context, sources) => {
      const app = backend(devstack, "normal", "?recognizer=frames&segment_bytes=16000&words_per_utterance=1");
      const second = `Then ${Array(30).fill("w7").join(" ")}.`;
      const answer = `Sunny now. ${second}`;
      const seen = observer();
      const captions = [];
      const session = make({
        routes: [route(() => answer)], recoveryText: RECOVERY, provision: app.provision, synthesize: tts(devstack).synthesize,
        audioContext: context, bargeIn: { falseInterruptionMs: 1000 }, ...seen,
        onCaption: (text, isFinal) => isFinal && captions.push(text),
      });
      await session.start({ microphone: false });
      speak(session, 25); // 500 ms of silence: the final "w0", the question
      await until(() => sources.starts.length === 2, 8000, "the second sentence scheduled");
      const played = sources.starts[1];
      // 200 ms of voice and 300 ms of quiet whose first samples number it `n`: the final "w<n>".
      const burst = (n) => {
        const voice = (i) => Math.round(8000 * Math.sin((2 * Math.PI * 220 * i) / 16000));
        for (let f = 0; f < 25; f += 1) {
          const pcm = new Int16Array(320);
          if (f < 10) for (let i = 0; i < pcm.length; i += 1) pcm[i] = voice(f * 320 + i);
          if (f === 0) [pcm[0], pcm[1]] = [n, 0];
          session.sendAudio(pcm);
        }
      };
      const count = (type) => seen.log.events.filter((e) => e.type === type).length;
      await untilAudioTime(context, played.when + played.duration * 0.3);
      burst(7);
      await until(() => count("paused") === 1, 3000, "the leak's pause");
      await until(() => count("resumed") === 1, 4000, "the resume");
      assert(captions.includes("w7"), `the provider's final for the leak: ${captions}`);
      assertEq(count("barge_in"), 0, "the agent's own word cut nothing");
      assertEq(sources.stops.length, 0, "no source was stopped");
      await untilAudioTime(context, played.when + played.duration * 0.6);
      burst(9);
      await until(() => count("barge_in") === 1, 4000, "the user's word cuts");
      assertEq(seen.log.events.find((e) => e.type === "barge_in").cause, "final", "cut by the final");
      assert(captions.includes("w9"), `the user's final: ${captions}`);
      assertEq(count("paused"), 2, "the second voice paused first");
      await until(() => sources.stops.length > 0, 3000, "the cut playback");
      const heard = session.history[1]?.content ?? "";
      assert(heard.startsWith("Sunny now. Then w7") && heard.length < answer.length, `heard a part: "${heard}"`);
      await session.stop();
      session.free();
      return { heard: heard.split(" ").length };
    });
  },

  async aThrottledTimerHoldsNoDeadlineBackWhileAudioComes({ devstack, make }) {
    return withAudio(async (context) => {
      const app = backend(devstack);
      const events = recorder();
      const seen = [];
      const session = make({
        routes: [route(() => new Promise(() => {}))], recoveryText: RECOVERY, provision: app.provision,
        synthesize: tts(devstack).synthesize, audioContext: context, controller: { turnDeadlineMs: 300 }, ...events,
        onEvent: (event) => seen.push(`${event.type}:${event.turnId ?? ""}`),
      });
      await session.start({ microphone: false });
      // From here every timer the page arms fires a minute late, as in a tab hidden for five
      // minutes (Chrome's intensive throttling): the turn's deadline timer too, armed when
      // utterance 1's final starts it. The capture goes on: a frame every 20 ms, as the worklet's
      // messages come in a hidden tab. 25 of them make the mock's partial of the next utterance,
      // which would cut the turn (its speech start paused it); the deadline, met on the frames, is
      // due by the 15th.
      const realSetTimeout = globalThis.setTimeout;
      const realSleep = (ms) => new Promise((resolve) => realSetTimeout(resolve, ms));
      globalThis.setTimeout = (handler, ms, ...rest) => realSetTimeout(handler, Math.max(ms ?? 0, 60_000), ...rest);
      try {
        speak(session, FRAMES_PER_UTTERANCE); // utterance 1: its route never answers
        for (let i = 0; i < 500 && session.state !== "thinking"; i += 1) await realSleep(5);
        for (let frame = 0; frame < 150 && events.log.turns.length === 0; frame += 1) {
          session.sendAudio(new Int16Array(320));
          await realSleep(20);
        }
      } finally {
        globalThis.setTimeout = realSetTimeout;
      }
      const turn = seen.filter((step) => step.endsWith(":s:turn-1"));
      assertEq(events.log.turns.map((record) => record.status), ["exhausted"], `the deadline ended the turn: ${turn}`);
      assert(!turn.includes("barge_in:s:turn-1"), `ended on time, before the next words could cut it: ${turn}`);
      await session.stop();
      session.free();
    });
  },

  async aContextSuspendedUnderTheAnswerHoldsItAsksForAGestureAndGoesOnWhole({ devstack, make }) {
    return withAudio(async (context, sources) => {
      const answer = "Sunny now. Then it rains for a while with wind from the west.";
      const seen = observer();
      let gestures = 0;
      const session = make({
        routes: [route(() => answer)], recoveryText: RECOVERY, synthesize: tts(devstack).synthesize,
        audioContext: context, onNeedsGesture: () => (gestures += 1), ...seen,
      });
      await session.start({ microphone: false });
      session.sendText("the weather?");
      await until(() => sources.starts.length === 2, 8000, "the second sentence scheduled");
      const second = sources.starts[1];
      await untilAudioTime(context, second.when + second.duration * 0.4);
      await context.suspend(); // what the browser does for a call, a locked screen, another app
      await until(() => gestures === 1, 3000, "onNeedsGesture");
      const heldAt = context.currentTime;
      await sleep(300);
      assertEq([context.currentTime, session.state], [heldAt, "speaking"], "held where it was, still speaking");
      assert(!seen.log.events.some((e) => e.type === "playback_ended"), "nothing ended while suspended");
      await session.resume(); // the app's gesture
      await until(() => seen.log.events.some((e) => e.type === "playback_ended"), 8000, "the answer's end");
      const ended = seen.log.events.find((e) => e.type === "playback_ended");
      const audioMs = sources.starts.reduce((sum, start) => sum + start.duration * 1000, 0);
      assert(!ended.cut && Math.abs(ended.heardMs - audioMs) < 30, `the whole answer, once: ${JSON.stringify(ended)} of ${audioMs} ms`);
      assertEq([sources.starts.length, sources.stops.length], [2, 0], "the same two buffers went on");
      assertEq(session.history[1]?.content, answer, "the history holds the whole answer");
      await session.stop();
      session.free();
    });
  },

  async aContextClosedUnderTheAnswerCutsItWithWhatPlayedAndTheNextTurnSpeaksInANewOne({ devstack, make }) {
    return withAudio(async (context, sources) => {
      const answer = "Sunny now. Then it rains for a while with wind from the west.";
      const seen = observer();
      const session = make({
        routes: [route((input) => (input === "the weather?" ? answer : "Still here."))], recoveryText: RECOVERY,
        synthesize: tts(devstack).synthesize, audioContext: context, ...seen,
      });
      await session.start({ microphone: false });
      session.sendText("the weather?");
      await until(() => sources.starts.length === 2, 8000, "the second sentence scheduled");
      const [first, second] = sources.starts;
      await untilAudioTime(context, second.when + second.duration * 0.4);
      await context.close(); // closed under the session: other code on the page, or the browser
      await until(() => seen.log.events.some((e) => e.type === "output_closed"), 3000, "output_closed");
      const log = seen.log.events;
      assertEq(log.find((e) => e.type === "output_closed").replaced, true, "a new context of the session's own");
      const cut = log.filter((e) => e.type === "barge_in");
      assertEq(cut.map((e) => [e.turnId, e.cause]), [["s:turn-1", "output_closed"]], "cut, and not by the user");
      const ended = log.filter((e) => e.type === "playback_ended" && e.turnId === "s:turn-1");
      assertEq(ended.length, 1, "one playback_ended");
      const firstMs = first.duration * 1000;
      const secondMs = second.duration * 1000;
      assert(ended[0].cut && ended[0].heardMs > firstMs + 0.3 * secondMs && ended[0].heardMs < firstMs + 0.7 * secondMs,
        `heard: the first sentence and part of the second, on the closed clock: ${JSON.stringify(ended[0])} of ${firstMs} + ${secondMs} ms`);
      const heard = session.history[1]?.content ?? "";
      assert(heard.startsWith("Sunny now. Then") && heard.length < answer.length, `the history keeps the heard part: ${heard}`);
      assertEq(seen.log.heard, [["s:turn-1", heard]], "onHeard says so");
      assertEq(session.state, "listening", "listening for the next turn");
      // The next turn speaks, whole, in the new context.
      session.sendText("are you there?");
      await until(() => log.some((e) => e.type === "playback_ended" && e.turnId === "s:turn-2"), 8000, "turn 2 played");
      const fresh = sources.starts.slice(2);
      assert(fresh.length === 1 && fresh[0].node.context !== context, "turn 2 played on another context");
      const ended2 = log.find((e) => e.type === "playback_ended" && e.turnId === "s:turn-2");
      assert(!ended2.cut && Math.abs(ended2.heardMs - fresh[0].duration * 1000) < 30, `turn 2 heard whole: ${JSON.stringify(ended2)}`);
      assertEq(session.history[3]?.content, "Still here.", "turn 2's answer in the history");
      checkEvents(log, ["sunny", "still here"]);
      await session.stop();
      session.free();
      await until(() => fresh[0].node.context.state === "closed", 3000, "free() closes the session's own context");
      return { heardMs: ended[0].heardMs };
    });
  },

  // Issue 25: a context that says it runs again after an interruption but whose clock stands
  // still (Safari on iOS after resume()) counts as closed: the turn is cut with what played, on
  // that clock, and the next turn speaks in a new context. The frozen clock is made here by
  // pinning the context's currentTime before it resumes.
  async aContextWhoseClockStandsStillAfterResumeIsReplaced({ devstack, make }) {
    return withAudio(async (_, sources) => {
      const seen = observer();
      // The session's own context, as on a phone: the one the browser interrupts.
      const session = make({
        routes: [route((input) => (input === "the weather?" ? "Sunny now. Then it rains for a while with wind from the west." : "Still here."))],
        recoveryText: RECOVERY, synthesize: tts(devstack).synthesize, ...seen,
      });
      await session.start({ microphone: false });
      session.sendText("the weather?");
      await until(() => sources.starts.length === 2, 8000, "the second sentence scheduled");
      const [first] = sources.starts;
      const context = first.node.context;
      await untilAudioTime(context, first.when + first.duration * 0.5);
      await context.suspend(); // interrupted (a call, a locked screen)
      const frozen = context.currentTime;
      Object.defineProperty(context, "currentTime", { get: () => frozen, configurable: true });
      await context.resume();
      await until(() => seen.log.events.some((e) => e.type === "output_closed"), 8000, "output_closed");
      const log = seen.log.events;
      const closed = log.find((e) => e.type === "output_closed");
      assertEq([closed.replaced, closed.stalled], [true, true], "replaced, for a clock that stood still");
      await until(() => context.state === "closed", 3000, "the stalled context of the session's own is closed");
      assertEq(log.filter((e) => e.type === "barge_in").map((e) => e.cause), ["output_closed"], "cut, and not by the user");
      const ended = log.find((e) => e.type === "playback_ended" && e.turnId === "s:turn-1");
      const firstMs = first.duration * 1000;
      assert(ended?.cut && ended.heardMs > firstMs * 0.3 && ended.heardMs < firstMs * 0.7, `heard: half the first sentence, on the stalled clock: ${JSON.stringify(ended)} of ${firstMs} ms`);
      session.sendText("are you there?");
      await until(() => log.some((e) => e.type === "playback_ended" && e.turnId === "s:turn-2"), 8000, "turn 2 played");
      const fresh = sources.starts.filter((s) => s.node.context !== context);
      assertEq(fresh.length, 1, "turn 2 played on another context");
      assertEq(session.history[3]?.content, "Still here.", "turn 2's answer in the history");
      await session.stop();
      session.free();
      await until(() => fresh[0].node.context.state === "closed", 3000, "free() closes the session's own context");
      return { heardMs: ended.heardMs };
    });
  },

  async ttsAudioResolvingAfterAnInterruptNeverPlays({ devstack, make }) {
    return withAudio(async (context, sources) => {
      const llm = route(() => "This answer is cut before it is heard.");
      const speech = tts(devstack, { delayMs: 600, ignoreSignal: true });
      const events = recorder();
      const session = make({ routes: [llm], recoveryText: RECOVERY, synthesize: speech.synthesize, audioContext: context, ...events });
      await session.start({ microphone: false });
      session.sendText("tell me something");
      await until(() => speech.calls.length === 1, 3000, "the synthesis request");
      session.interrupt();
      assert(speech.calls[0].signal.aborted, "the TTS signal aborted");
      assertEq(session.state, "listening", "listening after the interrupt");
      await sleep(1000); // the audio arrives meanwhile
      assertEq(sources.starts.length, 0, "the late audio never played");
      // The same after stop(): a new turn whose audio lands after the session stopped.
      session.sendText("again");
      await until(() => speech.calls.length === 2, 3000, "the second synthesis request");
      await session.stop();
      await sleep(1000);
      assertEq(sources.starts.length, 0, "nothing played after stop");
      session.free();
    });
  },

  async aFinalDuringThinkingCancelsTheOldTurnAndStartsTheNewOne({ devstack, make }) {
    return withAudio(async (context) => {
      const app = backend(devstack);
      const signals = [];
      const llm = route((input, request) => {
        signals.push(request.signal);
        if (input === "utterance 1") return new Promise(() => {}); // thinks forever
        return "Second answer.";
      });
      const speech = tts(devstack);
      const events = recorder();
      const session = make({ routes: [llm], recoveryText: RECOVERY, provision: app.provision, synthesize: speech.synthesize, audioContext: context, ...events });
      await session.start({ microphone: false });
      speak(session, FRAMES_PER_UTTERANCE);
      await until(() => session.state === "thinking" && llm.requests.length === 1, 5000, "thinking");
      speak(session, FRAMES_PER_UTTERANCE);
      await until(() => events.log.turns.length === 2 && session.state === "listening", 8000, "both turns settled");
      const byId = Object.fromEntries(events.log.turns.map((record) => [record.turnId, record.status]));
      assertEq(byId, { "s:turn-1": "cancelled", "s:turn-2": "accepted" }, "records");
      assert(signals[0].aborted, "the old turn's route signal aborted");
      assertEq(speech.calls.map((c) => [c.text, c.turnId]), [["Second answer.", "s:turn-2"]], "only the new turn reached TTS");
      await session.stop();
      session.free();
    });
  },

  async everySentenceFailingSpeaksTheRecoveryTextSynthesizedOnce({ devstack, make }) {
    return withAudio(async (context, sources) => {
      const calls = [];
      const synthesize = (text, { signal }) => {
        calls.push(text);
        if (text === RECOVERY) return synthesizeFrom(devstack, text, { signal });
        return Promise.reject(new Error("voice unavailable"));
      };
      const llm = route(() => "One. Two.");
      const events = recorder();
      const session = make({ routes: [llm], recoveryText: RECOVERY, synthesize, audioContext: context, ...events });
      await session.start({ microphone: false });
      for (const question of ["first", "second"]) {
        session.sendText(question);
        await until(() => session.state === "listening" && events.log.turns.length === (question === "first" ? 1 : 2), 8000, `${question} turn spoken`);
      }
      assertEq(calls, ["One.", "Two.", RECOVERY, "One.", "Two."], "recovery synthesized once, then cached");
      assertEq(sources.starts.length, 2, "the recovery text played for each turn");
      assertEq(events.log.errors.map((e) => [e.code, e.terminal]), Array(4).fill(["tts_failed", false]), "non-terminal errors per skipped sentence");
      await session.stop();
      session.free();
    });
  },

  // Issue 25: a capture track that ends (here stopped from the page; unplugged or revoked alike)
  // is a non-terminal microphone_lost; the default microphone is opened again and the session
  // goes on. A stream without a live audio track is a TypeError before anything starts.
  async aLostMicrophoneIsOpenedAgainAndTheSessionGoesOn({ devstack, make }) {
    return withAudio(async (context) => {
      const { streams, original, restore } = recordUserMedia();
      try {
        const app = backend(devstack);
        const events = recorder();
        const seen = observer();
        const session = make({ routes: [route(() => "Hi.")], recoveryText: RECOVERY, provision: app.provision, synthesize: tts(devstack).synthesize, audioContext: context, ...events, ...seen });
        await assertThrows(() => session.attachMicrophone(new MediaStream()), TypeError, /no audio track/, "a stream without audio");
        // A stream of another window or frame (another realm) is not taken for an options object.
        const frame = document.createElement("iframe");
        document.body.append(frame);
        const foreign = new frame.contentWindow.MediaStream();
        await assertThrows(() => session.attachMicrophone(foreign), TypeError, /another window or frame/, "a stream of another window");
        await assertThrows(() => session.attachMicrophone({ stream: foreign }), TypeError, /another window or frame/, "options.stream of another window");
        frame.remove();
        assertEq(streams.length, 0, "no microphone opened for them");
        const ended = await original.call(navigator.mediaDevices, { audio: true });
        ended.getAudioTracks().forEach((track) => track.stop());
        await assertThrows(() => session.attachMicrophone(ended), TypeError, /has ended/, "an ended track");
        await session.start(); // the default microphone (fake device)
        assertEq(streams.length, 1, "one microphone stream opened");
        const bytes = async () => (await sttSession(devstack, app.sessions[0]))?.bytes ?? 0;
        await until(async () => (await bytes()) > 16000, 8000, "audio flowing");
        streams[0].getAudioTracks().forEach((track) => track.stop());
        await until(() => events.log.errors.some((e) => e.code === "microphone_lost"), 3000, "microphone_lost");
        const lost = events.log.errors.find((e) => e.code === "microphone_lost");
        assertEq(lost.terminal, false, "not terminal");
        await until(() => seen.log.events.some((e) => e.type === "microphone_restored"), 5000, "microphone_restored");
        const restored = seen.log.events.find((e) => e.type === "microphone_restored");
        assert(Number.isFinite(restored.gapMs) && restored.gapMs >= 0 && restored.attempts >= 1, `the gap reported: ${JSON.stringify(restored)}`);
        assertEq(streams.length, 2, "the microphone was opened once more");
        assert(streams[1].getAudioTracks().every((t) => t.readyState === "live"), "its tracks are live");
        const turnsBefore = events.log.turns.length;
        const before = await bytes();
        await until(async () => (await bytes()) > before + 32000, 8000, "audio flowing again");
        await until(() => events.log.turns.length > turnsBefore, 8000, "a new utterance's turn");
        assertEq(session.state === "failed", false, "the session did not fail");
        assert(!events.log.errors.some((e) => e.terminal), `no terminal error: ${events.log.errors.map((e) => e.code)}`);
        await session.stop();
        assert(streams[1].getAudioTracks().every((t) => t.readyState === "ended"), "stop releases the new microphone");
        session.free();
        return { gapMs: restored.gapMs };
      } finally {
        restore();
      }
    });
  },

  // Issue 25: the default microphone becoming another device (`devicechange`; fake devices
  // cannot be added at run time, so the list enumerateDevices returns names a new default) is
  // followed: the new default opened, the old released, the socket untouched, and a new
  // utterance answered. A devicechange that leaves the default where it was changes nothing.
  async aNewDefaultMicrophoneIsFollowedWithoutLosingTheSession({ devstack, make }) {
    return withAudio(async (context) => {
      const { streams, restore } = recordUserMedia();
      const enumerate = navigator.mediaDevices.enumerateDevices;
      let defaultGroup = "built-in";
      const devices = () => [
        { kind: "audioinput", deviceId: "default", groupId: defaultGroup, label: `Default - ${defaultGroup}` },
        { kind: "audioinput", deviceId: "built-in-id", groupId: "built-in", label: "Built-in" },
        { kind: "audioinput", deviceId: "headset-id", groupId: "headset", label: "Headset" },
      ];
      navigator.mediaDevices.enumerateDevices = async () => devices();
      try {
        const app = backend(devstack);
        const events = recorder();
        const seen = observer();
        const session = make({ routes: [route(() => "Hi.")], recoveryText: RECOVERY, provision: app.provision, synthesize: tts(devstack).synthesize, audioContext: context, ...events, ...seen });
        await session.start(); // the default microphone (fake device)
        const bytes = async () => (await sttSession(devstack, app.sessions[0]))?.bytes ?? 0;
        await until(async () => (await bytes()) > 16000, 8000, "audio flowing");
        navigator.mediaDevices.dispatchEvent(new Event("devicechange"));
        await sleep(300);
        assertEq(streams.length, 1, "a devicechange that leaves the default opens nothing");
        defaultGroup = "headset";
        navigator.mediaDevices.dispatchEvent(new Event("devicechange"));
        await until(() => seen.log.events.some((e) => e.type === "microphone_changed"), 5000, "microphone_changed");
        const changed = seen.log.events.find((e) => e.type === "microphone_changed");
        assert(Number.isFinite(changed.switchMs) && changed.switchMs >= 0, `the switch reported: ${JSON.stringify(changed)}`);
        assertEq(streams.length, 2, "the new default was opened");
        assert(streams[0].getAudioTracks().every((t) => t.readyState === "ended"), "the old microphone is released");
        assert(streams[1].getAudioTracks().every((t) => t.readyState === "live"), "the new one is live");
        assertEq(app.sessions.length, 1, "no new speech-to-text session");
        const turnsBefore = events.log.turns.length;
        const before = await bytes();
        await until(async () => (await bytes()) > before + 32000, 8000, "audio flowing from the new default");
        await until(() => events.log.turns.length > turnsBefore, 8000, "a new utterance's turn");
        assert(!events.log.errors.some((e) => e.code === "microphone_lost"), `no microphone_lost: ${events.log.errors.map((e) => e.code)}`);
        await session.stop();
        assert(streams[1].getAudioTracks().every((t) => t.readyState === "ended"), "stop releases the new microphone");
        session.free();
        return { switchMs: changed.switchMs };
      } finally {
        navigator.mediaDevices.enumerateDevices = enumerate;
        restore();
      }
    });
  },

  async stopTwiceEndsTheMicrophoneAndNothingReconnects({ devstack, make }) {
    return withAudio(async (context) => {
      const { streams, restore } = recordUserMedia();
      try {
        const app = backend(devstack);
        const events = recorder();
        const session = make({ routes: [route(() => "Hi.")], recoveryText: RECOVERY, provision: app.provision, synthesize: tts(devstack).synthesize, audioContext: context, ...events });
        await session.start(); // the default microphone (fake device)
        assertEq(streams.length, 1, "one microphone stream opened");
        const tracks = streams[0].getAudioTracks();
        assert(tracks.length > 0 && tracks.every((t) => t.readyState === "live"), "live tracks");
        await session.start();
        assertEq(streams.length, 1, "a second start() opens no second microphone");
        await Promise.all([session.stop(), session.stop()]);
        await session.stop();
        assertEq(session.state, "stopped", "stopped");
        assertEq(tracks.map((t) => t.readyState), tracks.map(() => "ended"), "the microphone tracks ended");
        const before = await sttSession(devstack, app.sessions[0]);
        await sleep(800);
        const after = await sttSession(devstack, app.sessions[0]);
        assertEq(after.connections, before.connections, "no reconnect after stop");
        assertEq([app.sessions.length, after.connections], [1, 1], "one session, one connection");
        assertEq(events.log.states.filter((s) => s === "stopped").length, 1, "one stopped state");
        await assertThrows(() => session.sendText("late"), DOMException, /stopped/, "sendText after stop");
        if (Symbol.dispose) session[Symbol.dispose]();
        session.free();
        assertEq(session.state, "stopped", "stopped after dispose");
      } finally {
        restore();
      }
    });
  },

  async callbacksMayStopAndFreeTheSession({ devstack, make }) {
    return withAudio(async (context, sources) => {
      let session;
      const states = [];
      session = make({
        routes: [route(() => "A rather long answer that will be cut off.")],
        recoveryText: RECOVERY,
        synthesize: tts(devstack).synthesize,
        audioContext: context,
        onStateChange(state) {
          states.push(state);
          if (state === "speaking") session.stop();
          if (state === "stopped") session.free();
        },
      });
      await session.start({ microphone: false });
      session.sendText("go");
      await until(() => states.includes("stopped"), 5000, "stopped from a callback");
      assertEq(states, ["listening", "thinking", "speaking", "stopped"], "states");
      assertEq(sources.stops.length, 1, "silenced");
      assertEq(session.state, "stopped", "a freed session reads as stopped");
      session.free();
    });
  },

  async aSlowSynthesisIsSkippedAfterTtsTimeoutMs({ devstack, make }) {
    return withAudio(async (context, sources) => {
      const calls = [];
      const synthesize = (text, { signal }) => {
        calls.push({ text, signal });
        return synthesizeFrom(devstack, text, { signal, fault: text.startsWith("Slow") ? "hang" : "ok" });
      };
      const events = recorder();
      const session = make({ routes: [route(() => "Slow one. Quick two.")], recoveryText: RECOVERY, synthesize, ttsTimeoutMs: 300, audioContext: context, ...events });
      await session.start({ microphone: false });
      session.sendText("go");
      await until(() => events.log.turns.length === 1 && session.state === "listening", 5000, "the turn spoken");
      assertEq(calls.map((c) => c.text), ["Slow one.", "Quick two."], "both requested, in order");
      assert(calls[0].signal.aborted, "the slow request was aborted at the timeout");
      assertEq(events.log.errors.map((e) => [e.code, e.terminal, e.turnId]), [["tts_timeout", false, "s:turn-1"]], "one non-terminal error");
      assertEq(sources.starts.length, 1, "the other sentence played");
      await session.stop();
      session.free();
    });
  },

  async theEchoGuardIgnoresSpeechStartsAndPartialsButAFinalStillBargesIn({ devstack, make }) {
    return withAudio(async (context, sources) => {
      const app = backend(devstack);
      const events = recorder();
      const seen = observer();
      const session = make({
        routes: [route(() => "A long answer that keeps playing for several seconds while the user starts to talk.")],
        recoveryText: RECOVERY,
        provision: app.provision,
        synthesize: tts(devstack).synthesize,
        audioContext: context,
        bargeIn: { echoGuardMs: 1500, minPartialChars: 5 },
        ...events,
        ...seen,
      });
      await session.start({ microphone: false });
      speak(session, FRAMES_PER_UTTERANCE);
      await until(() => session.state === "speaking", 5000, "speaking");
      const started = sources.starts[0].when;
      speak(session, 25); // speech_start and the partial "utterance" (9 characters ≥ 5), both inside the guard
      await sleep(300);
      assertEq([session.state, sources.stops.length], ["speaking", 0], "a guarded speech start or partial changes nothing");
      await untilAudioTime(context, started + 1.6);
      speak(session, 25); // the final, after the guard
      await until(() => session.state !== "speaking", 3000, "the final's barge-in");
      assertEq(seen.log.events.filter((e) => e.type === "barge_in").map((e) => e.cause), ["final"], "the final cut it, not the partial");
      assertEq(sources.stops.length, 1, "silenced");
      await session.stop();
      session.free();
    });
  },

  // V4: the guard starts again each time the agent sounds after silence (here: a slow synthesis
  // let the line run dry between two sentences).
  async theEchoGuardRestartsWhenTheAgentSoundsAgainAfterSilence({ devstack, make }) {
    return withAudio(async (context, sources) => {
      const app = backend(devstack);
      const seen = observer();
      const synthesize = (text, { signal }) => synthesizeFrom(devstack, text, { signal, delayMs: text.startsWith("Then") ? 2500 : 0 });
      const session = make({
        routes: [route(() => "Short one. Then a second sentence that plays for a few seconds.")],
        recoveryText: RECOVERY,
        provision: app.provision,
        synthesize,
        audioContext: context,
        bargeIn: { echoGuardMs: 1500, minPartialChars: 40 },
        ...seen,
      });
      await session.start({ microphone: false });
      speak(session, FRAMES_PER_UTTERANCE);
      await until(() => sources.starts.length === 2, 8000, "the second sentence, after silence");
      const [first, second] = sources.starts;
      assert(second.when > first.when + first.duration + 0.5, `a silence between the sentences (${first.when + first.duration} → ${second.when})`);
      speak(session, 5); // speech_start right after the agent sounds again: inside the restarted guard
      await sleep(400);
      assertEq([session.state, sources.stops.length], ["speaking", 0], "the restarted guard ignored the speech start");
      session.interrupt();
      assertEq(seen.log.events.filter((e) => e.type === "barge_in").map((e) => e.cause), ["button"], "only the button cut it");
      await session.stop();
      session.free();
    });
  },

  async aSuspendedContextAsksForAGestureAndSpeaksAfterResume({ devstack, make }) {
    return withAudio(async (context, sources) => {
      await context.suspend(); // a page without a user gesture yet
      let gestures = 0;
      const events = recorder();
      const session = make({
        routes: [route(() => "Hello after the click.")],
        recoveryText: RECOVERY,
        synthesize: tts(devstack).synthesize,
        audioContext: context,
        onNeedsGesture: () => (gestures += 1),
        ...events,
      });
      await session.start({ microphone: false });
      session.sendText("hi");
      await until(() => gestures === 1, 5000, "onNeedsGesture");
      await sleep(100);
      assertEq([session.state, sources.starts.length], ["thinking", 0], "the answer waits");
      await session.resume(); // from the click handler
      await until(() => events.log.states.includes("speaking"), 3000, "speaking after resume");
      assertEq(sources.starts.length, 1, "the waiting answer played");
      await session.stop();
      session.free();
    });
  },

  async badOptionsAndArgumentsThrowNamedErrors({ make }) {
    const routes = [route(() => "x")];
    const synthesize = () => new ArrayBuffer(8);
    const base = { routes, recoveryText: RECOVERY, synthesize };
    const cases = [
      ["no options", undefined, TypeError, /options/],
      ["no recoveryText", { routes, synthesize }, TypeError, /options\.recoveryText/],
      ["blank recoveryText", { ...base, recoveryText: "  " }, RangeError, /options\.recoveryText/],
      ["no synthesize", { routes, recoveryText: RECOVERY }, TypeError, /options\.synthesize/],
      ["routes", { ...base, routes: "primary" }, TypeError, /options\.routes/],
      ["empty routes", { ...base, routes: [] }, RangeError, /options\.routes/],
      ["provision", { ...base, provision: "url" }, TypeError, /options\.provision/],
      ["audioContext", { ...base, audioContext: {} }, TypeError, /options\.audioContext/],
      ["controller", { ...base, controller: 5 }, TypeError, /options\.controller/],
      ["controller field", { ...base, controller: { turnDeadlineMs: -1 } }, RangeError, /options\.controller\.turnDeadlineMs/],
      ["transcriber", { ...base, provision: () => ({}), transcriber: { bufferMs: -1 } }, RangeError, /options\.transcriber\.bufferMs/],
      ["transcriber.provision", { ...base, transcriber: { provision: "url" } }, TypeError, /options\.transcriber\.provision/],
      ["protocol at the top level", { ...base, protocol: "deepgram" }, TypeError, /options\.transcriber\.protocol/],
      ["two provisions", { ...base, provision: () => ({}), transcriber: { provision: () => ({}) } }, TypeError, /options\.provision and options\.transcriber\.provision/],
      ["bargeIn", { ...base, bargeIn: true }, TypeError, /options\.bargeIn/],
      ["minPartialChars", { ...base, bargeIn: { minPartialChars: 0 } }, RangeError, /options\.bargeIn\.minPartialChars/],
      ["echoGuardMs", { ...base, bargeIn: { echoGuardMs: -5 } }, RangeError, /options\.bargeIn\.echoGuardMs/],
      ["ttsTimeoutMs", { ...base, ttsTimeoutMs: 0 }, RangeError, /options\.ttsTimeoutMs/],
      ["preemptive", { ...base, preemptive: "yes" }, TypeError, /options\.preemptive/],
      ["preemptive field", { ...base, preemptive: { eagerMs: 200 } }, TypeError, /options\.preemptive\.eagerMs/],
      ["eagerSilenceMs", { ...base, preemptive: { eagerSilenceMs: Number.NaN } }, RangeError, /options\.preemptive\.eagerSilenceMs/],
      ["backchannels", { ...base, backchannels: "okay" }, TypeError, /options\.backchannels/],
      ["backchannels item", { ...base, backchannels: ["okay", 2] }, TypeError, /options\.backchannels\[1\]/],
      ["onStateChange", { ...base, onStateChange: "log" }, TypeError, /options\.onStateChange/],
      ["onCaption", { ...base, onCaption: 1 }, TypeError, /options\.onCaption/],
      ["onTurn", { ...base, onTurn: {} }, TypeError, /options\.onTurn/],
      ["onError", { ...base, onError: [] }, TypeError, /options\.onError/],
      ["onNeedsGesture", { ...base, onNeedsGesture: 1 }, TypeError, /options\.onNeedsGesture/],
      ["onEvent", { ...base, onEvent: "log" }, TypeError, /options\.onEvent/],
      ["onSpeech", { ...base, onSpeech: 1 }, TypeError, /options\.onSpeech/],
      ["onHeard", { ...base, onHeard: {} }, TypeError, /options\.onHeard/],
      ["controller.onEvent", { ...base, controller: { onEvent: 3 } }, TypeError, /options\.controller\.onEvent/],
      ["destination", { ...base, destination: {} }, TypeError, /options\.destination/],
      ["sessionId", { ...base, sessionId: 7 }, TypeError, /options\.sessionId/],
      ["empty sessionId", { ...base, sessionId: "" }, RangeError, /options\.sessionId/],
      ["sessionId with a colon", { ...base, sessionId: "a:b" }, RangeError, /options\.sessionId/],
      ["long sessionId", { ...base, sessionId: "x".repeat(129) }, RangeError, /options\.sessionId/],
    ];
    for (const [label, options, type, pattern] of cases) {
      await assertThrows(() => make(options), type, pattern, label);
    }
    const context = new AudioContext();
    const session = make({ ...base, audioContext: context });
    await assertThrows(() => session.sendText(5), TypeError, /text/, "numeric text");
    await assertThrows(() => session.sendText(" "), RangeError, /text/, "blank text");
    await assertThrows(() => session.sendAudio(new Int16Array(4)), TypeError, /provision/, "audio without a transcriber");
    await assertThrows(() => session.start({ microphone: "yes" }), TypeError, /options\.microphone/, "microphone");
    await assertThrows(() => session.start(7), TypeError, /options/, "start options");
    await assertThrows(() => session.start(), TypeError, /provision/, "a microphone needs provision");
    assertEq(session.state, "idle", "bad input changed nothing");
    const listening = make({ ...base, provision: () => ({ url: "ws://127.0.0.1:1/never" }), audioContext: context });
    await assertThrows(() => listening.sendAudio("pcm"), TypeError, /pcm/, "string audio");
    await assertThrows(() => session.attachMicrophone(), TypeError, /provision/, "a microphone needs provision");
    await listening.stop();
    await assertThrows(() => listening.attachMicrophone(), DOMException, /stopped/, "no microphone once stopped");
    listening.free();
    session.free();
    await context.close();
  },
};

export async function runScenario(name, devstack, make) {
  // Every session here is named "s" (its turns are s:turn-1, s:turn-2, …) unless a scenario says otherwise.
  const named = (options) => make(options && typeof options === "object" && !("sessionId" in options) ? { sessionId: "s", ...options } : options);
  return runIn(scenarios, name, { devstack, make: named }, noSkipInChrome);
}
