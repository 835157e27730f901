// Web Audio helpers shared by the player and session scenarios: contexts that may not run here,
// a recorder of every scheduled source (what the player asked the audio clock for), test tones.

import { sleep } from "./support.js";

export const NO_AUDIO = "this browser cannot run an AudioContext here (no audio output device)";

/** A running context, or undefined when this browser cannot run one here (said by the caller). */
export async function runningContext() {
  const context = new AudioContext();
  const running = await Promise.race([context.resume().then(() => true), sleep(5000).then(() => false)]);
  if (running && context.state === "running") return context;
  console.log(`context state ${context.state} after resume: ${running}`);
  context.close().catch(() => {});
  return undefined;
}

/** Seconds of one render quantum. */
export const quantum = (context) => 128 / context.sampleRate;

/**
 * Records every `AudioBufferSourceNode.start(when)` and `stop(when)` on this page while active:
 * the player's real calls on the real audio graph. `stop()` restores the prototype.
 */
export function sourceRecorder() {
  const proto = AudioBufferSourceNode.prototype;
  const { start, stop } = proto;
  const starts = [];
  const stops = [];
  proto.start = function (when = 0, ...rest) {
    starts.push({ when, duration: this.buffer ? this.buffer.duration : NaN, node: this, at: this.context.currentTime });
    return start.call(this, when, ...rest);
  };
  proto.stop = function (when = 0) {
    stops.push({ when, node: this, at: this.context.currentTime });
    return stop.call(this, when);
  };
  return {
    starts,
    stops,
    restore() {
      proto.start = start;
      proto.stop = stop;
    },
  };
}

/** An AudioBuffer of a 440 Hz tone (amplitude 0.5) lasting `seconds`. */
export function tone(context, seconds, hz = 440) {
  const length = Math.max(1, Math.round(seconds * context.sampleRate));
  const buffer = context.createBuffer(1, length, context.sampleRate);
  const data = buffer.getChannelData(0);
  for (let i = 0; i < length; i += 1) data[i] = 0.5 * Math.sin((2 * Math.PI * hz * i) / context.sampleRate);
  return buffer;
}

/** An encoded 16-bit mono WAV (ArrayBuffer) of a tone lasting `ms`. */
export function wav(ms, sampleRate = 24000) {
  const samples = Math.round((ms * sampleRate) / 1000);
  const bytes = new ArrayBuffer(44 + samples * 2);
  const view = new DataView(bytes);
  const text = (offset, value) => [...value].forEach((c, i) => view.setUint8(offset + i, c.charCodeAt(0)));
  text(0, "RIFF");
  view.setUint32(4, 36 + samples * 2, true);
  text(8, "WAVE");
  text(12, "fmt ");
  view.setUint32(16, 16, true);
  view.setUint16(20, 1, true);
  view.setUint16(22, 1, true);
  view.setUint32(24, sampleRate, true);
  view.setUint32(28, sampleRate * 2, true);
  view.setUint16(32, 2, true);
  view.setUint16(34, 16, true);
  text(36, "data");
  view.setUint32(40, samples * 2, true);
  for (let i = 0; i < samples; i += 1) {
    view.setInt16(44 + i * 2, Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / sampleRate)), true);
  }
  return bytes;
}

/** The dev stack's mock TTS: a WAV tone of 60 ms per character of `text`. */
export async function synthesizeFrom(devstack, text, { signal, delayMs = 0, fault = "ok" } = {}) {
  const response = await fetch(`${devstack}/tts?fault=${fault}&delayMs=${delayMs}`, {
    method: "POST",
    signal,
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ text }),
  });
  if (!response.ok) throw Object.assign(new Error(`HTTP ${response.status}`), { status: response.status });
  return response.arrayBuffer();
}

/** Waits until the audio clock reaches `time` (seconds). */
export async function untilAudioTime(context, time, timeoutMs = 5000) {
  const deadline = performance.now() + timeoutMs;
  while (context.currentTime < time) {
    if (performance.now() > deadline) throw new Error(`the audio clock did not reach ${time}`);
    await sleep(5);
  }
}

/** Largest absolute sample the analyser sees in its window. */
export function peak(analyser) {
  const data = new Float32Array(analyser.fftSize);
  analyser.getFloatTimeDomainData(data);
  return data.reduce((max, value) => Math.max(max, Math.abs(value)), 0);
}
