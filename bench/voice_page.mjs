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

/** Notes when each `speech_start` message reaches the page, before any handler of the app's. */
function speechStartArrivals() {
  const Native = window.WebSocket;
  const arrivals = [];
  window.WebSocket = class extends Native {
    constructor(...args) {
      super(...args);
      this.addEventListener("message", (event) => {
        if (typeof event.data === "string" && event.data.includes('"type":"speech_start"')) arrivals.push(performance.now());
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
  const sockets = speechStartArrivals();
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
    speak(FRAMES_PER_UTTERANCE); // the first question
    for (let n = 0; n < bargeIns; n += 1) {
      await until(() => session.state === "speaking", 5000, "speaking");
      await sleep(150);
      const stopsBefore = calls.stops.length;
      const arrivalsBefore = sockets.arrivals.length;
      speak(FRAMES_PER_UTTERANCE); // talks over the answer: speech_start, then the next final
      await until(() => calls.stops.length > stopsBefore && sockets.arrivals.length > arrivalsBefore, 5000, "the barge-in");
      latencies.push(calls.stops[stopsBefore].wall - sockets.arrivals[arrivalsBefore]);
    }
    const quantumMs = (128 / context.sampleRate) * 1000;
    return { latencies, quantumMs };
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
 */
export async function voiceOverhead(devstack, turns) {
  await init();
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
    session = new VoiceSession({
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
