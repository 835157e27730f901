// In-page part of the voice bench: barge-in latency of a VoiceSession against the dev stack's mock
// live STT, and the accuracy of SpeechPlayer's heard milliseconds against the audio clock.

import init, { SpeechPlayer, VoiceSession } from "/pkg/turnguard.js";

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const FRAMES_PER_UTTERANCE = 50; // 32000 bytes: one utterance of the mock STT

async function until(condition, timeoutMs, label) {
  const deadline = performance.now() + timeoutMs;
  while (!condition()) {
    if (performance.now() > deadline) throw new Error(`bench: timed out waiting for ${label}`);
    await sleep(2);
  }
}

function tone(context, seconds) {
  const buffer = context.createBuffer(1, Math.round(seconds * context.sampleRate), context.sampleRate);
  const data = buffer.getChannelData(0);
  for (let i = 0; i < data.length; i += 1) data[i] = 0.3 * Math.sin((2 * Math.PI * 440 * i) / context.sampleRate);
  return buffer;
}

/** Records `AudioBufferSourceNode.start/stop` calls (wall and audio time) while active. */
function sourceCalls() {
  const proto = AudioBufferSourceNode.prototype;
  const { start, stop } = proto;
  const starts = [];
  const stops = [];
  proto.start = function (when = 0, ...rest) {
    starts.push({ when, node: this });
    return start.call(this, when, ...rest);
  };
  proto.stop = function (when = 0) {
    stops.push({ wall: performance.now(), when, at: this.context.currentTime });
    return stop.call(this, when);
  };
  return { starts, stops, restore: () => Object.assign(proto, { start, stop }) };
}

/**
 * Notes when each server message of the live STT socket reaches the page, with its `type`, before
 * any handler of the app's: the barge-in is timed from the last one before the stop, the message
 * that cut.
 */
function serverMessages() {
  const Native = window.WebSocket;
  const arrivals = [];
  window.WebSocket = class extends Native {
    constructor(...args) {
      super(...args);
      this.addEventListener("message", (event) => {
        if (typeof event.data !== "string") return;
        const type = /"type":"([a-z_]+)"/.exec(event.data)?.[1] ?? "other";
        if (type !== "audio_chunk") arrivals.push({ type, at: performance.now() });
      });
    }
  };
  return { arrivals, restore: () => (window.WebSocket = Native) };
}

export async function bargeInLatency(devstack, bargeIns) {
  await init();
  const context = new AudioContext();
  await context.resume();
  const calls = sourceCalls();
  const sockets = serverMessages();
  let session;
  try {
    const states = [];
    session = new VoiceSession({
      routes: [{ name: "bench", generate: () => "This answer is long enough to be talked over every time." }],
      recoveryText: "Sorry?",
      provision: async ({ signal }) => (await fetch(new URL("/stt/normal/v2/live", devstack), { method: "POST", signal })).json(),
      synthesize: () => tone(context, 3),
      audioContext: context,
      // The bench times the path from speech_start to silence: no echo guard in the way.
      bargeIn: { echoGuardMs: 0 },
      onStateChange: (state) => states.push(state),
    });
    await session.start({ microphone: false });
    const speak = (frames) => {
      for (let i = 0; i < frames; i += 1) session.sendAudio(new Int16Array(320));
    };
    const latencies = [];
    const triggers = {};
    speak(FRAMES_PER_UTTERANCE); // the first question
    for (let n = 0; n < bargeIns; n += 1) {
      await until(() => session.state === "speaking", 5000, "speaking");
      await sleep(150);
      const stopsBefore = calls.stops.length;
      speak(FRAMES_PER_UTTERANCE); // talks over the answer: speech_start, a partial, then the final
      await until(() => calls.stops.length > stopsBefore, 5000, "the barge-in");
      const stoppedAt = calls.stops[stopsBefore].wall;
      const cut = sockets.arrivals.findLast(({ at }) => at <= stoppedAt);
      if (!cut) throw new Error("bench: the output stopped before any server message");
      latencies.push(stoppedAt - cut.at);
      triggers[cut.type] = (triggers[cut.type] ?? 0) + 1;
    }
    const quantumMs = (128 / context.sampleRate) * 1000;
    return { latencies, triggers, quantumMs };
  } finally {
    await session?.stop();
    session?.free();
    calls.restore();
    sockets.restore();
    await context.close();
  }
}

// Counts the frames of the player's output above half the test level: the audio that really
// rendered, independent of the clock arithmetic the player itself does.
const COUNTER = `registerProcessor("heard-counter", class extends AudioWorkletProcessor {
  constructor() {
    super();
    this.count = 0;
    this.port.onmessage = () => { this.port.postMessage(this.count); this.count = 0; };
  }
  process(inputs) {
    const channel = inputs[0] && inputs[0][0];
    if (channel) for (let i = 0; i < channel.length; i++) if (channel[i] > 0.25) this.count++;
    return true;
  }
});`;

/** A constant-level buffer: every rendered frame of it is above the counter's threshold. */
function level(context, seconds) {
  const buffer = context.createBuffer(1, Math.round(seconds * context.sampleRate), context.sampleRate);
  buffer.getChannelData(0).fill(0.5);
  return buffer;
}

export async function heardAccuracy(runs) {
  await init();
  const context = new AudioContext();
  await context.resume();
  const module = URL.createObjectURL(new Blob([COUNTER], { type: "text/javascript" }));
  await context.audioWorklet.addModule(module);
  const counter = new AudioWorkletNode(context, "heard-counter");
  counter.connect(context.destination);
  const rendered = () =>
    new Promise((resolve) => {
      counter.port.onmessage = (event) => resolve((event.data / context.sampleRate) * 1000);
      counter.port.postMessage("count");
    });
  const player = new SpeechPlayer({ audioContext: context, destination: counter });
  const audioErrors = [];
  const wallErrors = [];
  try {
    for (let n = 0; n < runs; n += 1) {
      await rendered(); // resets the count
      const enqueuedAt = performance.now();
      await player.enqueue(`turn-${n}`, level(context, 2));
      await sleep(100 + ((n * 379) % 700));
      const wallEstimate = performance.now() - enqueuedAt; // what a wall-clock player would claim
      const heard = player.stop();
      await sleep(100); // the ramp and the stop are long over
      const truth = await rendered(); // milliseconds that really reached the output
      audioErrors.push(Math.abs(heard - truth));
      wallErrors.push(Math.abs(wallEstimate - truth));
    }
    return { audioErrors, wallErrors, quantumMs: (128 / context.sampleRate) * 1000 };
  } finally {
    player.free();
    URL.revokeObjectURL(module);
    await context.close();
  }
}

/**
 * turnguard's own share of the voice-to-voice latency, per turn, over `turns` spoken turns of a
 * VoiceSession against the dev stack's mock STT: (a) a final reaching the page (its socket
 * message, before any turnguard handler) to the route call; (b) the first sentence's text leaving
 * the route's stream to the `synthesize` call; (c) `synthesize`'s audio (resolved) to its source
 * started on the audio graph, with (d) the `decodeAudioData` inside (c) shown apart. Each mark is
 * `performance.now()` in a hook of the app's own code or of the browser API turnguard calls.
 * `build`: the URL of the build to measure (another build's `turnguard.js`, e.g. the baseline).
 */
export async function voiceOverhead(devstack, turns, build = undefined) {
  let Session = VoiceSession;
  if (build) {
    const other = await import(build);
    await other.default();
    Session = other.VoiceSession;
  } else {
    await init();
  }
  const context = new AudioContext();
  await context.resume();
  const Native = window.WebSocket;
  let finalAt = null;
  window.WebSocket = class extends Native {
    constructor(...args) {
      super(...args);
      this.addEventListener("message", (event) => {
        if (typeof event.data === "string" && event.data.includes('"is_final":true')) finalAt = performance.now();
      });
    }
  };
  const proto = AudioBufferSourceNode.prototype;
  const { start } = proto;
  const contextProto = BaseAudioContext.prototype;
  const decode = contextProto.decodeAudioData;
  let mark = {};
  proto.start = function (...args) {
    mark.startedAt ??= performance.now();
    return start.apply(this, args);
  };
  contextProto.decodeAudioData = function (...args) {
    mark.decodeCalledAt ??= performance.now();
    return decode.apply(this, args).then((buffer) => {
      mark.decodedAt ??= performance.now();
      return buffer;
    });
  };
  // One encoded answer, fetched once: synthesize resolves it at once, so its own time is ~0.
  const wav = await (await fetch(new URL("/tts?msPerChar=5", devstack), { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ text: "First sentence here." }) })).arrayBuffer();
  const samples = { route: [], synthesize: [], schedule: [], decode: [] };
  let session;
  try {
    let listening = 0;
    session = new Session({
      routes: [
        {
          name: "bench",
          generate() {
            mark.routeAt = performance.now();
            return (async function* () {
              mark.sentenceAt = performance.now();
              yield "First sentence here. Second";
              yield " sentence.";
            })();
          },
        },
      ],
      recoveryText: "Sorry?",
      provision: async ({ signal }) => (await fetch(new URL("/stt/normal/v2/live", devstack), { method: "POST", signal })).json(),
      synthesize(text) {
        if (mark.synthesizeAt === undefined) {
          mark.synthesizeAt = performance.now();
          mark.resolvedAt = performance.now();
        }
        return Promise.resolve(wav.slice(0));
      },
      audioContext: context,
      onStateChange: (state) => state === "listening" && (listening += 1),
    });
    await session.start({ microphone: false });
    for (let n = 0; n < turns; n += 1) {
      mark = {};
      finalAt = null;
      const before = listening;
      for (let i = 0; i < FRAMES_PER_UTTERANCE; i += 1) session.sendAudio(new Int16Array(320));
      await until(() => listening > before && mark.startedAt !== undefined, 10_000, "the turn spoken");
      if (finalAt === null) continue;
      samples.route.push(mark.routeAt - finalAt);
      samples.synthesize.push(mark.synthesizeAt - mark.sentenceAt);
      const decodeMs = mark.decodedAt - mark.decodeCalledAt;
      samples.decode.push(decodeMs);
      samples.schedule.push(mark.startedAt - mark.resolvedAt - decodeMs);
    }
    return samples;
  } finally {
    await session?.stop();
    session?.free();
    window.WebSocket = Native;
    proto.start = start;
    contextProto.decodeAudioData = decode;
    await context.close();
  }
}

// ---------------------------------------------------------------------------------------------
// Streamed speech (issue 18): the dev stack's /v1/audio/speech paced to a first byte after F ms
// and the whole sentence after S ms (a tone of 60 ms a character, 24 kHz pcm16).

/** The wall-clock moment each source starts sounding: when its start() ran plus how far ahead. */
function soundStarts() {
  const proto = AudioBufferSourceNode.prototype;
  const { start } = proto;
  const starts = [];
  proto.start = function (when = 0, ...rest) {
    const ahead = Math.max(0, when - this.context.currentTime) * 1000;
    starts.push({ soundAt: performance.now() + ahead, when, duration: this.buffer?.duration ?? 0 });
    return start.call(this, when, ...rest);
  };
  return { starts, restore: () => (proto.start = start) };
}

/** A whole-sentence synthesize of the same endpoint: the body read to its end, then one buffer. */
function wholeSentence(context, url) {
  return async (text, { signal }) => {
    const response = await fetch(url, { method: "POST", signal, headers: { "content-type": "application/json" }, body: JSON.stringify({ model: "tts-1", voice: "alloy", input: text, response_format: "pcm" }) });
    const bytes = new Int16Array(await response.arrayBuffer());
    const buffer = context.createBuffer(1, bytes.length, 24000);
    const data = buffer.getChannelData(0);
    for (let i = 0; i < bytes.length; i += 1) data[i] = bytes[i] / 32768;
    return buffer;
  };
}

/**
 * First sentence's text → its first sound, whole-sentence vs streamed, `turns` turns each, with a
 * TTS whose first byte comes after `firstByteMs` and whose whole sentence after `wholeMs`.
 */
export async function firstSound(devstack, turns, firstByteMs, wholeMs) {
  await init();
  const { openAiCompatibleSpeech } = await import("/pkg/turnguard.js");
  const context = new AudioContext();
  await context.resume();
  const url = new URL(`/v1/audio/speech?firstByteMs=${firstByteMs}&totalMs=${wholeMs}&chunkBytes=4800`, devstack).href;
  const result = {};
  for (const mode of ["whole", "streamed"]) {
    const speech = openAiCompatibleSpeech({ url, model: "tts-1", voice: "alloy" });
    let firstByteAt = null;
    // The streamed mode notes when its first bytes reach the page (a pass-through stream).
    const streamed = async (text, request) => {
      const audio = await speech(text, request);
      const stream = audio.stream.pipeThrough(new TransformStream({ transform: (chunk, c) => ((firstByteAt ??= performance.now()), c.enqueue(chunk)) }));
      return { ...audio, stream };
    };
    const synthesize = mode === "whole" ? wholeSentence(context, url) : streamed;
    const own = [];
    const sound = soundStarts();
    let sentenceAt = null;
    let listening = 0;
    const session = new VoiceSession({
      routes: [{ name: "bench", generate: () => (async function* () { sentenceAt = performance.now(); yield "The first sentence of the answer is here. "; yield "And a short second one."; })() }],
      recoveryText: "Sorry?",
      synthesize,
      audioContext: context,
      onStateChange: (state) => state === "listening" && (listening += 1),
    });
    const samples = [];
    try {
      await session.start({ microphone: false });
      for (let n = 0; n < turns; n += 1) {
        const before = listening;
        const from = sound.starts.length;
        firstByteAt = null;
        session.sendText(`turn ${n}`);
        await until(() => listening > before, 30_000, "the turn spoken");
        const first = sound.starts[from];
        if (first && sentenceAt !== null) samples.push(first.soundAt - sentenceAt);
        if (first && firstByteAt !== null) own.push(first.soundAt - firstByteAt);
      }
    } finally {
      await session.stop();
      session.free();
      sound.restore();
    }
    result[mode] = samples;
    if (mode === "streamed") result.firstByteToSound = own;
  }
  await context.close();
  return result;
}

/**
 * Underruns per 100 sentences under a loaded page: answers of four short sentences streamed at
 * twice real time, while the main thread is blocked 20 ms of every 50. Counts the `underrun`
 * events (a stream fell behind inside a sentence) and the gaps between sentences of a turn.
 */
export async function streamUnderruns(devstack, sentences) {
  await init();
  const { openAiCompatibleSpeech } = await import("/pkg/turnguard.js");
  const context = new AudioContext();
  await context.resume();
  // "One two three four." is 19 characters: 1140 ms of tone, sent in 570 ms.
  const synthesize = openAiCompatibleSpeech({ url: new URL("/v1/audio/speech?firstByteMs=50&totalMs=570&chunkBytes=4800", devstack).href, model: "tts-1", voice: "alloy" });
  const busy = setInterval(() => {
    const until = performance.now() + 20;
    while (performance.now() < until) {
      // the page is busy
    }
  }, 50);
  const sound = soundStarts();
  let underruns = 0;
  let listening = 0;
  const session = new VoiceSession({
    routes: [{ name: "bench", generate: () => "One two three four. One two three four. One two three four. One two three four." }],
    recoveryText: "Sorry?",
    synthesize,
    audioContext: context,
    onEvent: (event) => event.type === "underrun" && (underruns += 1),
    onStateChange: (state) => state === "listening" && (listening += 1),
  });
  let betweenSentences = 0;
  let played = 0;
  try {
    await session.start({ microphone: false });
    for (let n = 0; played < sentences; n += 1) {
      const before = listening;
      const from = sound.starts.length;
      session.sendText(`turn ${n}`);
      await until(() => listening > before, 60_000, "the turn spoken");
      const starts = sound.starts.slice(from);
      // A sentence's first part starts after a gap (more than a microsecond): between sentences.
      let sentenceStarts = 0;
      for (let i = 1; i < starts.length; i += 1) {
        const gap = starts[i].when - (starts[i - 1].when + starts[i - 1].duration);
        if (gap > 1e-6) sentenceStarts += 1;
      }
      betweenSentences += Math.max(0, sentenceStarts);
      played += 4;
    }
  } finally {
    clearInterval(busy);
    await session.stop();
    session.free();
    sound.restore();
    await context.close();
  }
  return { sentences: played, underruns, gaps: betweenSentences };
}

/**
 * Heard text of streams cut mid-sentence against what rendered: each run speaks one full turn
 * (so the session has measured its speech rate), then a sentence whose stream arrives at about
 * real time, cut at a seeded random moment. The rendered words are the sentence's words in
 * proportion to the audio that played (from the recorded sources against the cut time) over its
 * true length (60 ms a character); the error is rendered minus heard, in words (negative would
 * be an over-report).
 */
export async function cutStreamHeard(devstack, runs) {
  await init();
  const { openAiCompatibleSpeech } = await import("/pkg/turnguard.js");
  const context = new AudioContext();
  await context.resume();
  const sentence = "Twelve words spoken here while the stream is still coming in slowly.";
  const trueMs = [...sentence].length * 60;
  const paced = openAiCompatibleSpeech({ url: new URL(`/v1/audio/speech?chunkBytes=4800&totalMs=${Math.round(trueMs * 1.05)}`, devstack).href, model: "tts-1", voice: "alloy" });
  const quick = openAiCompatibleSpeech({ url: new URL("/v1/audio/speech", devstack).href, model: "tts-1", voice: "alloy" });
  let seed = 7;
  const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  const errors = [];
  let overReports = 0;
  for (let run = 0; run < runs; run += 1) {
    const sound = soundStarts();
    const heard = [];
    let listening = 0;
    const session = new VoiceSession({
      routes: [{ name: "bench", generate: ({ input }) => (input === "warm" ? "One two three four five." : sentence) }],
      recoveryText: "Sorry?",
      synthesize: (text, request) => (text === sentence ? paced : quick)(text, request),
      audioContext: context,
      onHeard: (turnId, text) => heard.push(text),
      onStateChange: (state) => state === "listening" && (listening += 1),
    });
    try {
      await session.start({ microphone: false });
      let before = listening;
      session.sendText("warm");
      await until(() => listening > before, 20_000, "the warm-up turn");
      const from = sound.starts.length;
      session.sendText("cut");
      await until(() => sound.starts.length > from, 20_000, "the cut sentence's first audio");
      const first = sound.starts[from];
      const cutAfter = (0.1 + 0.8 * random()) * trueMs;
      await until(() => context.currentTime >= first.when + cutAfter / 1000, 20_000, "the cut moment");
      const cutAt = context.currentTime;
      session.interrupt();
      await until(() => heard.length === 1, 5000, "the heard text");
      const renderedMs = sound.starts.slice(from).reduce((sum, s) => sum + Math.max(0, Math.min(s.duration, cutAt - s.when)), 0) * 1000;
      const words = sentence.split(" ");
      const rendered = Math.floor((words.length * renderedMs) / trueMs);
      const said = heard[0] === "" ? 0 : heard[0].split(" ").length;
      errors.push(rendered - said);
      if (said > rendered) overReports += 1;
    } finally {
      await session.stop();
      session.free();
      sound.restore();
    }
  }
  await context.close();
  return { errors, overReports };
}

// ---------------------------------------------------------------------------------------------
// Preemptive attempts (T17) and the turn_latency record, side by side: a VoiceSession on the dev
// stack's Deepgram Flux mock, whose EagerEndOfTurn leads its EndOfTurn by `leadMs`, answered by
// the mock LLM with its first token `firstTokenMs` after the call, with `preemptive` on and off
// in interleaved rounds. The stopwatch: the EndOfTurn message reaching the page (a socket hook
// before any turnguard handler) to the first source's start on the audio clock (its start() call
// plus how far ahead it was scheduled); the route call and `synthesize` stamped in the app's code.

/**
 * One session of `turns` Flux turns. `socket`: the mock's switches; `preemptive` the option.
 * Returns per turn the stopwatch's marks, the session's turn_latency event and the route calls.
 */
async function fluxTurns(devstack, context, { turns, socket, preemptive, firstTokenMs }) {
  const Native = window.WebSocket;
  let finalAt = null;
  window.WebSocket = class extends Native {
    constructor(...args) {
      super(...args);
      this.addEventListener("message", (event) => {
        if (typeof event.data === "string" && event.data.includes('"EndOfTurn"')) finalAt = performance.timeOrigin + performance.now();
      });
    }
  };
  const proto = AudioBufferSourceNode.prototype;
  const { start } = proto;
  let soundAt = null;
  proto.start = function (when = 0, ...rest) {
    const ahead = Math.max(0, when - this.context.currentTime) * 1000;
    soundAt ??= performance.timeOrigin + performance.now() + ahead;
    return start.call(this, when, ...rest);
  };
  const key = `bench-${Math.random().toString(36).slice(2)}`;
  const calls = [];
  const { openAiCompatibleRoute } = await import("/pkg/turnguard.js");
  const llm = openAiCompatibleRoute({ name: "mock", url: new URL(`/llm/ok/v1/chat/completions?firstChunkMs=${firstTokenMs}&text=Okay.`, devstack).href, model: "mock" });
  const route = {
    name: "mock",
    generate(request) {
      calls.push({ requestId: request.requestId, at: performance.timeOrigin + performance.now() });
      return llm.generate(request);
    },
  };
  const wav = await (await fetch(new URL("/tts?msPerChar=5", devstack), { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ text: "Okay." }) })).arrayBuffer();
  const out = [];
  let latency = null;
  let listening = 0;
  let synthesizeAt = null;
  const session = new VoiceSession({
    routes: [route],
    recoveryText: "Sorry?",
    preemptive,
    transcriber: {
      protocol: "deepgram-flux",
      provision: async ({ signal, reason }) => (await fetch(new URL("/api/stt/deepgram-flux", devstack), { method: "POST", signal, headers: { "content-type": "application/json" }, body: JSON.stringify({ reason, key, socket }) })).json(),
    },
    synthesize() {
      synthesizeAt ??= performance.timeOrigin + performance.now();
      return Promise.resolve(wav.slice(0));
    },
    audioContext: context,
    onStateChange: (state) => state === "listening" && (listening += 1),
    onEvent: (event) => event.type === "turn_latency" && (latency = event),
  });
  try {
    await session.start({ microphone: false });
    for (let n = 0; n < turns; n += 1) {
      finalAt = soundAt = latency = synthesizeAt = null;
      const before = listening;
      const callsBefore = calls.length;
      for (let i = 0; i < FRAMES_PER_UTTERANCE; i += 1) session.sendAudio(new Int16Array(320));
      await until(() => listening > before && latency !== null && soundAt !== null && finalAt !== null, 15_000, "a Flux turn answered");
      out.push({ finalAt, soundAt, synthesizeAt, latency, calls: calls.slice(callsBefore) });
    }
    return out;
  } finally {
    await session.stop();
    session.free();
    window.WebSocket = Native;
    proto.start = start;
  }
}

/**
 * `preemptive` on and off, `turns` turns each in `rounds` interleaved rounds: the final → first
 * sound per mode, requests per turn, answers of discarded attempts, repeated ids, and how far the
 * turn_latency marks are from the stopwatch's.
 */
export async function preemptiveLatency(devstack, { turns, rounds, leadMs, firstTokenMs }) {
  await init();
  const context = new AudioContext();
  await context.resume();
  const socket = `recognizer=frames&eager_eot_threshold=0.5&mock_eager_lead_ms=${leadMs}`;
  const result = { on: [], off: [] };
  try {
    for (let round = 0; round < rounds; round += 1) {
      for (const mode of round % 2 ? ["off", "on"] : ["on", "off"]) {
        const got = await fluxTurns(devstack, context, { turns, socket, preemptive: mode === "on", firstTokenMs });
        result[mode].push(...got);
      }
    }
  } finally {
    await context.close();
  }
  const summarize = (samples) => {
    const ids = samples.flatMap((s) => s.calls.map((c) => c.requestId));
    return {
      turns: samples.length,
      finalToSoundMs: samples.map((s) => s.soundAt - s.finalAt),
      voiceToVoiceMs: samples.map((s) => s.latency.voiceToVoiceMs),
      requestsPerTurn: ids.length / samples.length,
      repeatedIds: ids.length - new Set(ids).size,
      kept: samples.filter((s) => s.latency.preemptive === "kept").length,
      discarded: samples.filter((s) => s.latency.preemptive === "discarded").length,
      // The event's marks against the stopwatch: first sound, the route call, synthesize.
      markErrorsMs: samples.flatMap((s) => [
        Math.abs(s.latency.firstSoundAt - s.soundAt),
        Math.abs(s.latency.routeCalledAt - s.calls.at(-1).at),
        Math.abs(s.latency.synthesizeAt - s.synthesizeAt),
      ]),
    };
  };
  return { leadMs, firstTokenMs, quantumMs: (128 / 48000) * 1000, on: summarize(result.on), off: summarize(result.off) };
}

/**
 * Requests per turn when guesses are discarded: the session's own guess on the Gladia mock, whose
 * partial ("utterance") never matches its final ("utterance N"), so every guess is discarded.
 */
export async function discardedGuesses(devstack, turns) {
  await init();
  const calls = [];
  const spokenFrom = [];
  let listening = 0;
  let turnsDone = 0;
  const session = new VoiceSession({
    routes: [{ name: "scripted", generate: ({ requestId }) => { calls.push(requestId); return `Answer from ${requestId}.`; } }],
    recoveryText: "Sorry?",
    preemptive: true,
    provision: async ({ signal }) => (await fetch(new URL("/stt/normal/v2/live", devstack), { method: "POST", signal })).json(),
    synthesize: async (text) => { spokenFrom.push(text); throw new Error("no audio needed"); },
    onStateChange: (state) => state === "listening" && (listening += 1),
    onTurn: () => (turnsDone += 1),
  });
  try {
    await session.start({ microphone: false });
    for (let n = 0; n < turns; n += 1) {
      const before = turnsDone;
      // In real time, as a microphone: the partial comes half-way through the utterance and
      // stays still past eagerSilenceMs until the final.
      for (let i = 0; i < FRAMES_PER_UTTERANCE; i += 1) {
        session.sendAudio(new Int16Array(320));
        await sleep(20);
      }
      await until(() => turnsDone > before, 10_000, "a Gladia turn settled");
    }
  } finally {
    await session.stop();
    session.free();
  }
  const discardedSpoken = spokenFrom.filter((text) => text.includes(":preemptive:")).length;
  return { turns, requests: calls.length, preemptive: calls.filter((id) => id.includes(":preemptive:")).length, discardedSpoken, repeatedIds: calls.length - new Set(calls).size };
}
