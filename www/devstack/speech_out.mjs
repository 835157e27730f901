// Mock OpenAI-compatible speech endpoint, streamed (issue 18).
//
//   POST /v1/audio/speech           body { model, voice, input, response_format: "pcm" }
//   POST /v1/audio/speech/<fault>   same, fault from the path; `?fault=` wins
//
// Answers raw PCM as OpenAI's `pcm` does: 16-bit signed little-endian, mono, 24000 Hz, streamed
// in chunks (`chunkBytes`, default 4800: 100 ms). `voice` an espeak-ng voice name (`en-us`) with
// espeak-ng installed: real speech, streamed as espeak-ng synthesizes it (`espeak-ng --stdout`,
// resampled from its 22050 Hz as it arrives). Any other voice (`alloy`, `tone`): a 440 Hz tone of
// `msPerChar` (default 60) per character, so a test can tell the text from the duration.
//
// Timing: `firstByteMs` delays the headers and first chunk; `totalMs` paces the rest so its last
// byte leaves at `totalMs` after the request (the bench's F and S).
// Faults: `ok`; `http500`; `hang` (no answer at all until the client aborts); `stall` (about half
// the audio, then nothing more until the client aborts); `slow` (a first byte after
// `firstByteMs`, default 1500).

import { spawn } from "node:child_process";
import { corsHeaders, HttpError, intParam, readJson, sendJson, sleep, trackRequest, untilAborted } from "./http.mjs";
import { espeakAvailable, speechDurationMs, toneWav, TTS_SAMPLE_RATE } from "./tts.mjs";

export const SPEECH_OUT_FAULTS = Object.freeze(["ok", "http500", "hang", "stall", "slow"]);

const SPEECH_OUT_PATH = /^\/v1\/audio\/speech(?:\/([^/]+))?$/;
const VOICE_NAME = /^[a-z]{2,3}(?:-[a-z0-9]{2,8})*(?:\+[a-z0-9]{1,12})?$/i;
const ESPEAK_RATE = 22050;
const WAV_HEADER_BYTES = 44;

export function matchSpeechOutPath(pathname) {
  const match = SPEECH_OUT_PATH.exec(pathname);
  return match ? { fault: match[1] } : null;
}

/** Linear resampling of a 16-bit mono stream, chunk by chunk (state carried across chunks). */
export function createResampler(fromRate, toRate) {
  const step = fromRate / toRate;
  let position = 0; // in input samples, relative to `previous`
  let previous = null; // the last input sample of the last chunk
  let odd = null; // a byte of a torn sample
  return (chunk) => {
    let bytes = odd ? Buffer.concat([odd, chunk]) : chunk;
    odd = bytes.length % 2 ? bytes.subarray(bytes.length - 1) : null;
    if (odd) bytes = bytes.subarray(0, bytes.length - 1);
    const input = [];
    if (previous !== null) input.push(previous);
    for (let i = 0; i < bytes.length; i += 2) input.push(bytes.readInt16LE(i));
    const out = [];
    while (position + 1 < input.length) {
      const index = Math.floor(position);
      const frac = position - index;
      out.push(Math.round(input[index] * (1 - frac) + input[index + 1] * frac));
      position += step;
    }
    if (input.length > 0) {
      position -= input.length - 1;
      previous = input[input.length - 1];
    }
    const buffer = Buffer.alloc(out.length * 2);
    out.forEach((value, i) => buffer.writeInt16LE(Math.max(-32768, Math.min(32767, value)), i * 2));
    return buffer;
  };
}

/** espeak-ng's speech of `text` as 24 kHz pcm16 chunks, as it synthesizes. */
async function* espeakPcm(text, voice, signal) {
  const child = spawn("espeak-ng", ["-v", voice, "--stdout"], { stdio: ["pipe", "pipe", "ignore"], signal });
  child.on("error", () => {});
  child.stdin.on("error", () => {});
  child.stdin.end(text);
  const resample = createResampler(ESPEAK_RATE, TTS_SAMPLE_RATE);
  let header = WAV_HEADER_BYTES;
  for await (const chunk of child.stdout) {
    let data = chunk;
    if (header > 0) {
      const skip = Math.min(header, data.length);
      header -= skip;
      data = data.subarray(skip);
    }
    if (data.length > 0) yield resample(data);
  }
}

/** A tone of `msPerChar` per character, as pcm16 (the WAV's data, no header). */
async function* tonePcm(text, msPerChar) {
  yield toneWav(speechDurationMs(text, msPerChar)).subarray(WAV_HEADER_BYTES);
}

/** Re-cuts a stream of buffers into `size`-byte chunks (the last may be shorter). */
async function* rechunk(source, size) {
  let pending = Buffer.alloc(0);
  for await (const chunk of source) {
    pending = Buffer.concat([pending, chunk]);
    while (pending.length >= size) {
      yield pending.subarray(0, size);
      pending = pending.subarray(size);
    }
  }
  if (pending.length > 0) yield pending;
}

export async function handleSpeechOut(ctx, req, res, url, pathFault) {
  const params = url.searchParams;
  const fault = params.get("fault") ?? pathFault ?? "ok";
  if (!SPEECH_OUT_FAULTS.includes(fault)) {
    sendJson(req, res, 400, { error: `unknown speech fault "${fault}"; one of ${SPEECH_OUT_FAULTS.join(", ")}` });
    return;
  }
  if (req.method !== "POST") {
    sendJson(req, res, 405, { error: "use POST" });
    return;
  }
  const started = Date.now();
  const signal = trackRequest(ctx.stats.tts, res, ctx.signal, ctx.isClosing);
  let body;
  try {
    body = await readJson(req);
  } catch (error) {
    if (error instanceof HttpError) sendJson(req, res, error.status, { error: error.message });
    return;
  }
  const text = body.input;
  if (typeof text !== "string" || text.trim() === "") {
    sendJson(req, res, 400, { error: "body needs a non-empty string `input`" });
    return;
  }
  if (body.response_format !== undefined && body.response_format !== "pcm") {
    sendJson(req, res, 400, { error: "this mock streams response_format \"pcm\" only" });
    return;
  }
  ctx.stats.recordTtsRequest({ fault, chars: [...text].length, text, route: "speech" });
  if (fault === "hang") {
    await untilAborted(signal);
    return;
  }
  if (fault === "http500") {
    sendJson(req, res, 500, { error: "mock: synthesis failed" });
    return;
  }
  const firstByteMs = intParam(params, "firstByteMs", fault === "slow" ? 1500 : 0, 600_000);
  const totalMs = intParam(params, "totalMs", 0, 600_000);
  const chunkBytes = Math.max(1, intParam(params, "chunkBytes", 4800, 1 << 20));
  const voice = typeof body.voice === "string" ? body.voice : "";
  const speech = VOICE_NAME.test(voice) && espeakAvailable();
  // The whole audio first when it must be paced or cut; else straight from the synthesizer.
  const source = speech
    ? espeakPcm(text, voice, signal)
    : tonePcm(text, intParam(params, "msPerChar", 60, 10_000));
  if (!(await sleep(firstByteMs, signal))) return;
  res.writeHead(200, {
    ...corsHeaders(req),
    "x-tts-engine": speech ? "espeak-ng" : "tone",
    "access-control-expose-headers": "x-tts-engine",
    "content-type": "audio/pcm",
    "cache-control": "no-store",
  });
  const paced = totalMs > 0 || fault === "stall";
  let chunks = [];
  if (paced) {
    for await (const chunk of rechunk(source, chunkBytes)) chunks.push(chunk);
  }
  const stream = paced ? chunks : rechunk(source, chunkBytes);
  const count = paced ? chunks.length : 0;
  let sent = 0;
  try {
    for await (const chunk of stream) {
      if (signal.aborted) return;
      if (fault === "stall" && sent >= Math.max(1, Math.floor(count / 2))) {
        await untilAborted(signal);
        return;
      }
      if (totalMs > 0 && sent > 0 && count > 1) {
        // The rest spread evenly from the first byte to `totalMs`.
        const due = started + firstByteMs + ((totalMs - firstByteMs) * sent) / (count - 1);
        if (!(await sleep(Math.max(0, due - Date.now()), signal))) return;
      }
      if (!res.write(chunk)) await new Promise((resolve) => res.once("drain", resolve));
      sent += 1;
    }
  } catch {
    if (!signal.aborted) res.destroy();
    return;
  }
  chunks = null;
  res.end();
}
