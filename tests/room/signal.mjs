// What the room's recording says, as pure functions over arrays: no audio server, no browser.
// The recording is PulseAudio's "room" sink seen through its monitor, three channels on one clock
// (pulse.mjs): 0 the speaker (what the page played), 1 the air (the echo and the user: what the
// microphone hears), 2 the user alone (a probe). It is kept as a level envelope, one frame per
// FRAME_MS, plus the raw samples of short windows where a measurement needs them.

/** Sample rate of the room, and the envelope's frame. */
export const RATE = 48_000;
export const FRAME_MS = 5;
export const FRAME_SAMPLES = (RATE * FRAME_MS) / 1000;
export const CHANNELS = 3;
export const SPEAKER = 0;
export const AIR = 1;
export const USER = 2;

/** A level in dBFS from a mean square (−Infinity floored to `floor`). */
export const dbOfMeanSquare = (meanSquare, floor = -160) => (meanSquare > 0 ? Math.max(floor, 10 * Math.log10(meanSquare)) : floor);
export const dbOfRatio = (power, reference) => (power > 0 && reference > 0 ? 10 * Math.log10(power / reference) : power > 0 ? Infinity : -Infinity);

/**
 * The envelope of interleaved float samples arriving in pieces: per channel, the mean square of each
 * FRAME_MS frame. `push(samples)` takes a Float32Array of whole frames of CHANNELS samples.
 */
export class Envelope {
  constructor() {
    this.meanSquares = Array.from({ length: CHANNELS }, () => new Float32Array(1 << 16));
    this.frames = 0;
    this.partial = new Float64Array(CHANNELS);
    this.partialSamples = 0;
    this.samples = 0;
  }

  push(interleaved) {
    const count = interleaved.length / CHANNELS;
    for (let i = 0; i < count; i += 1) {
      for (let c = 0; c < CHANNELS; c += 1) {
        const v = interleaved[i * CHANNELS + c];
        this.partial[c] += v * v;
      }
      this.partialSamples += 1;
      if (this.partialSamples === FRAME_SAMPLES) this.#closeFrame();
    }
    this.samples += count;
  }

  #closeFrame() {
    if (this.frames === this.meanSquares[0].length) {
      this.meanSquares = this.meanSquares.map((old) => {
        const grown = new Float32Array(old.length * 2);
        grown.set(old);
        return grown;
      });
    }
    for (let c = 0; c < CHANNELS; c += 1) {
      this.meanSquares[c][this.frames] = this.partial[c] / FRAME_SAMPLES;
      this.partial[c] = 0;
    }
    this.partialSamples = 0;
    this.frames += 1;
  }

  /** The mean squares of `channel` (a view: frames so far). */
  channel(channel) {
    return this.meanSquares[channel].subarray(0, this.frames);
  }
}

/** Thresholds: a frame is sound when its level is above these (dBFS). */
export const SOUND_DB = -60;

/**
 * The sounding spans of `meanSquares` between frames `from` and `to`: runs of frames above
 * `thresholdDb`, merged across gaps shorter than `bridgeMs`, as `[startFrame, endFrame)` pairs.
 */
export function spans(meanSquares, { from = 0, to = meanSquares.length, thresholdDb = SOUND_DB, bridgeMs = 300 } = {}) {
  const threshold = 10 ** (thresholdDb / 10);
  const bridge = Math.round(bridgeMs / FRAME_MS);
  const found = [];
  let start = -1;
  let lastLoud = -1;
  for (let f = Math.max(0, from); f < Math.min(to, meanSquares.length); f += 1) {
    if (meanSquares[f] <= threshold) continue;
    if (start >= 0 && f - lastLoud - 1 <= bridge) {
      lastLoud = f;
      continue;
    }
    if (start >= 0) found.push([start, lastLoud + 1]);
    start = f;
    lastLoud = f;
  }
  if (start >= 0) found.push([start, lastLoud + 1]);
  return found;
}

/** The first frame at or after `from` (before `to`) whose level is above `thresholdDb`, or -1. */
export function firstSound(meanSquares, from, to = meanSquares.length, thresholdDb = SOUND_DB) {
  const threshold = 10 ** (thresholdDb / 10);
  for (let f = Math.max(0, from); f < Math.min(to, meanSquares.length); f += 1) if (meanSquares[f] > threshold) return f;
  return -1;
}

/** The end (exclusive) of the last frame in [from, to) above `thresholdDb`, or -1. */
export function lastSoundEnd(meanSquares, from, to, thresholdDb = SOUND_DB) {
  const threshold = 10 ** (thresholdDb / 10);
  for (let f = Math.min(to, meanSquares.length) - 1; f >= Math.max(0, from); f -= 1) if (meanSquares[f] > threshold) return f + 1;
  return -1;
}

/** Mean of `meanSquares` over frames [from, to) (0 for an empty range). */
export function meanPower(meanSquares, from, to) {
  let sum = 0;
  let n = 0;
  for (let f = Math.max(0, from); f < Math.min(to, meanSquares.length); f += 1, n += 1) sum += meanSquares[f];
  return n === 0 ? 0 : sum / n;
}

/**
 * The delay (samples) and gain (dB) from `reference` to `echo`, two raw channels of one recording:
 * the lag in [0, maxLag] that maximises their cross-correlation (searched on a 12× decimated copy,
 * then refined on the raw samples), and the least-squares gain of the echo at that lag.
 */
export function delayAndGain(reference, echo, maxLag) {
  const factor = 12;
  const decimate = (x) => {
    const out = new Float64Array(Math.floor(x.length / factor));
    for (let i = 0; i < out.length; i += 1) {
      let sum = 0;
      for (let k = 0; k < factor; k += 1) sum += x[i * factor + k];
      out[i] = sum / factor;
    }
    return out;
  };
  const correlate = (a, b, lag) => {
    let sum = 0;
    for (let i = 0; i + lag < b.length && i < a.length; i += 1) sum += a[i] * b[i + lag];
    return sum;
  };
  const ref = decimate(reference);
  const out = decimate(echo);
  let coarse = 0;
  let best = -Infinity;
  for (let lag = 0; lag <= Math.floor(maxLag / factor); lag += 1) {
    const value = correlate(ref, out, lag);
    if (value > best) [best, coarse] = [value, lag];
  }
  let lag = coarse * factor;
  best = -Infinity;
  for (let candidate = Math.max(0, coarse * factor - factor); candidate <= coarse * factor + factor; candidate += 1) {
    const value = correlate(reference, echo, candidate);
    if (value > best) [best, lag] = [value, candidate];
  }
  let energy = 0;
  for (let i = 0; i + lag < echo.length && i < reference.length; i += 1) energy += reference[i] * reference[i];
  const gain = energy > 0 ? best / energy : 0;
  return { lagSamples: lag, delayMs: (lag / RATE) * 1000, gainDb: gain > 0 ? 20 * Math.log10(gain) : -Infinity };
}

/** The `q`-quantile (0..1) of `values` by the nearest-rank method, or null when there are none. */
export function quantile(values, q) {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];
}
