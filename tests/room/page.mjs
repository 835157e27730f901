// The page in the room: the demo's agent (www/agent.mjs: one VoiceSession with the dev stack's
// LLM, espeak-ng speech and the protocol's mock with pocketsphinx behind it), listening to the
// default microphone (the room's) and speaking to the default output (the room's speaker).
// Everything the session reports goes to the harness as it happens (window.roomReport, a
// Playwright binding), each entry stamped with the page's wall clock. The harness drives it
// through window.room.
//
// Two things the library does not offer, worked around here:
// - the demo opens the microphone with echoCancellation on, always: getUserMedia is wrapped so
//   `--ec off` can turn it off (the other constraints stay the demo's);
// - nothing reports the level the page captures: a meter (an AudioWorklet of its own on the same
//   stream) reports it every 10 ms, for the echo measurement.

import init, * as library from "/pkg/turnguard.js";
import { createAgent } from "/www/agent.mjs";

await init();

const report = (entry) => window.roomReport?.({ at: Date.now(), ...entry });
const plain = (value) => {
  try {
    return value === undefined ? null : JSON.parse(JSON.stringify(value));
  } catch {
    return String(value);
  }
};

// ---- the microphone: the demo's constraints, with echoCancellation (and, to study the canceller
// alone, noiseSuppression and autoGainControl) as the harness says
let processing = { echoCancellation: true };
const getUserMedia = navigator.mediaDevices.getUserMedia.bind(navigator.mediaDevices);
navigator.mediaDevices.getUserMedia = async (constraints = {}) => {
  const audio = typeof constraints.audio === "object" && constraints.audio !== null ? constraints.audio : {};
  const stream = await getUserMedia({ ...constraints, audio: { ...audio, ...processing } });
  const track = stream.getAudioTracks()[0];
  report({ kind: "microphone", label: track?.label, settings: plain(track?.getSettings()) });
  await meter(stream);
  return stream;
};

// ---- the meter: mean square of what the page captures, per 10 ms (stamped at its start)
const meterContext = new AudioContext();
const METER = `registerProcessor("room-meter", class extends AudioWorkletProcessor {
  constructor() { super(); this.sum = 0; this.count = 0; this.block = Math.round(sampleRate / 100); }
  process(inputs) {
    const samples = inputs[0] && inputs[0][0];
    if (samples) for (let i = 0; i < samples.length; i += 1) {
      this.sum += samples[i] * samples[i];
      if (++this.count === this.block) { this.port.postMessage([currentTime + (i + 1) / sampleRate, this.sum / this.count]); this.sum = 0; this.count = 0; }
    }
    return true;
  }
});`;
const meterReady = meterContext.audioWorklet.addModule(URL.createObjectURL(new Blob([METER], { type: "text/javascript" })));
let meterSource = null;
let meterFrames = [];
setInterval(() => {
  if (meterFrames.length === 0) return;
  report({ kind: "meter", frames: meterFrames });
  meterFrames = [];
}, 200);

async function meter(stream) {
  await meterReady;
  await meterContext.resume();
  meterSource?.disconnect();
  meterSource = meterContext.createMediaStreamSource(stream);
  // No outputs: Chromium pulls such a node by itself.
  const node = new AudioWorkletNode(meterContext, "room-meter", { numberOfInputs: 1, numberOfOutputs: 0 });
  // Each block is stamped with the audio clock where it ended, on the page's wall clock (not when
  // its message arrived: a busy main thread delays those).
  node.port.onmessage = ({ data: [contextTime, meanSquare] }) => {
    const stamp = meterContext.getOutputTimestamp();
    const wall = Date.now() - performance.now() + stamp.performanceTime + (contextTime - stamp.contextTime) * 1000;
    meterFrames.push([wall - 10, meanSquare]);
  };
  meterSource.connect(node);
}

// ---- speech the page plays itself (the echo measurement): espeak-ng from the dev stack's /tts
const playContext = new AudioContext();
async function playSpeech(text) {
  const response = await fetch("/tts?voice=en-us", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ text }) });
  if (!response.ok) throw new Error(`/tts answered ${response.status}`);
  const buffer = await playContext.decodeAudioData(await response.arrayBuffer());
  await playContext.resume();
  const source = playContext.createBufferSource();
  source.buffer = buffer;
  source.connect(playContext.destination);
  const ended = new Promise((resolve) => (source.onended = resolve));
  const startedAt = Date.now();
  source.start();
  await ended;
  return { startedAt, endedAt: Date.now(), durationMs: buffer.duration * 1000 };
}

// ---- the agent
let agent = null;
const hookNames = new Set();
// Every hook the demo's agent calls, passed on as it came (a Proxy: hooks added later come too).
const hooks = new Proxy(
  {},
  {
    get: (_, name) =>
      typeof name !== "string"
        ? undefined
        : (...args) => {
            hookNames.add(name);
            switch (name) {
              case "onEvent":
                return report({ kind: "event", event: plain(args[0]) });
              case "onStateChange":
                return report({ kind: "state", state: args[0] });
              case "onCaption":
                return report({ kind: "caption", text: args[0], isFinal: args[1] === true });
              case "onTurn": {
                const record = args[0] ?? {};
                return report({ kind: "turn", turnId: record.turnId, input: record.input, status: record.status, acceptedText: record.acceptedText, recoveryReason: record.recoveryReason });
              }
              case "onSpeech":
                return report({ kind: "speech", turnId: args[0], text: args[1], meta: plain(args[2]) });
              case "onHeard":
                return report({ kind: "heard", turnId: args[0], text: args[1] });
              case "onError":
                return report({ kind: "error", code: args[0]?.code, terminal: args[0]?.terminal, message: String(args[0]?.message ?? args[0]) });
              default:
                return report({ kind: "hook", name, args: plain(args) });
            }
          },
  },
);

/** The dev stack's protocols (www/protocols/, mounted from that one list), as the demo gets them. */
async function protocolList() {
  const response = await fetch("/__protocols", { cache: "no-store" });
  if (!response.ok) throw new Error(`GET /__protocols answered ${response.status}`);
  return response.json();
}

/** `mic`: `{ ec, nsAgc }` from the harness's --ec and --ns-agc. */
const constraintsOf = ({ ec, nsAgc }) => ({ echoCancellation: ec, ...(nsAgc ? {} : { noiseSuppression: false, autoGainControl: false }) });

window.room = {
  playSpeech,
  /** Opens the room microphone (for the echo measurement, before the agent listens). */
  async openMicrophone(mic) {
    processing = constraintsOf(mic);
    const stream = await navigator.mediaDevices.getUserMedia({ audio: { channelCount: 1, echoCancellation: true, noiseSuppression: true, autoGainControl: true } });
    window.room.measuring = stream;
  },
  closeMicrophone() {
    for (const track of window.room.measuring?.getTracks() ?? []) track.stop();
    window.room.measuring = null;
  },
  async startAgent({ protocol, mic, bargeIn }) {
    processing = constraintsOf(mic);
    // `--capture worklet`: as a browser without the track processor (the capture worklet).
    if (mic.capture === "worklet") window.MediaStreamTrackProcessor = undefined;
    const capture = typeof window.MediaStreamTrackProcessor === "function" ? "track processor" : "worklet";
    const protocols = await protocolList();
    agent = createAgent(library, { failures: () => ({}), protocols, protocol: () => protocol, upstream: null, hooks, bargeIn });
    await agent.start({ microphone: true });
    return { sessionId: agent.sessionId, state: agent.state, capture };
  },
  state: () => agent?.state ?? "none",
  interrupt: () => agent?.interrupt(),
  async stopAgent() {
    await agent?.stop();
    agent = null;
  },
};
window.roomReady = true;
