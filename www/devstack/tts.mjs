// Mock text-to-speech endpoint.
//
//   POST /tts            body { text } (or { input }, OpenAI's field name)
//   POST /tts/<fault>    same, fault from the path; `?fault=` wins
//
// Answers audio/wav, 16-bit mono PCM at 24000 Hz: a 440 Hz tone lasting
// `msPerChar` (default 60) per character of text, capped at 10 s, so a test
// can tell from the duration which text was spoken.
//
// `?voice=<espeak-ng voice>` (the demo page sends `voice=en-us`) answers real
// speech instead: espeak-ng's WAV, 16-bit mono at 22050 Hz. Where espeak-ng is
// not installed it falls back to the tone. The `x-tts-engine` header says
// which one answered (`espeak-ng` or `tone`); /__stats says which one `?voice=` gets as `ttsEngine`.

import { spawn, spawnSync } from "node:child_process";
import { corsHeaders, HttpError, intParam, readJson, sendJson, sleep, trackRequest, untilAborted } from "./http.mjs";

export const TTS_FAULTS = Object.freeze(["ok", "http500", "hang"]);
export const TTS_SAMPLE_RATE = 24000;
export const TTS_MAX_MS = 10_000;

const TTS_PATH = /^\/tts(?:\/([^/]+))?$/;
const TONE_HZ = 440;
const AMPLITUDE = 0.2;
const FADE_MS = 5; // avoids a click at both ends

const VOICE_NAME = /^[a-z]{2,3}(?:-[a-z0-9]{2,8})*(?:\+[a-z0-9]{1,12})?$/i;

/** Whether espeak-ng runs here (checked once). */
let espeakChecked = null;
export function espeakAvailable() {
  espeakChecked ??= spawnSync("espeak-ng", ["--version"], { stdio: "ignore" }).status === 0;
  return espeakChecked;
}

/** `text` spoken by espeak-ng as a WAV (22050 Hz); rejects when it fails or `signal` aborts. */
export function espeakWav(text, voice, signal) {
  return new Promise((resolve, reject) => {
    // The text goes on stdin, never on a command line other processes can read.
    const child = spawn("espeak-ng", ["-v", voice, "--stdout"], { stdio: ["pipe", "pipe", "ignore"], signal });
    const chunks = [];
    child.stdout.on("data", (chunk) => chunks.push(chunk));
    child.on("error", reject);
    child.on("close", (code) => (code === 0 ? resolve(Buffer.concat(chunks)) : reject(new Error(`espeak-ng exited with ${code}`))));
    child.stdin.on("error", () => {});
    child.stdin.end(text);
  });
}

/** Returns `{ fault }` (fault may be undefined) when the path is the TTS mock. */
export function matchTtsPath(pathname) {
  const match = TTS_PATH.exec(pathname);
  return match ? { fault: match[1] } : null;
}

/** Milliseconds of audio for `text`: proportional to its length, capped. */
export function speechDurationMs(text, msPerChar = 60) {
  return Math.min([...text].length * msPerChar, TTS_MAX_MS);
}

/** A 44-byte RIFF/WAVE header for 16-bit mono PCM. */
function wavHeader(dataBytes, sampleRate) {
  const header = Buffer.alloc(44);
  header.write("RIFF", 0, "ascii");
  header.writeUInt32LE(36 + dataBytes, 4);
  header.write("WAVE", 8, "ascii");
  header.write("fmt ", 12, "ascii");
  header.writeUInt32LE(16, 16); // fmt chunk size
  header.writeUInt16LE(1, 20); // PCM
  header.writeUInt16LE(1, 22); // mono
  header.writeUInt32LE(sampleRate, 24);
  header.writeUInt32LE(sampleRate * 2, 28); // byte rate
  header.writeUInt16LE(2, 32); // block align
  header.writeUInt16LE(16, 34); // bits per sample
  header.write("data", 36, "ascii");
  header.writeUInt32LE(dataBytes, 40);
  return header;
}

/** A deterministic WAV tone of `durationMs`. */
export function toneWav(durationMs, sampleRate = TTS_SAMPLE_RATE) {
  const samples = Math.round((durationMs * sampleRate) / 1000);
  const fadeSamples = Math.round((FADE_MS * sampleRate) / 1000);
  const data = Buffer.alloc(samples * 2);
  for (let i = 0; i < samples; i += 1) {
    const fade = Math.min(1, i / fadeSamples, (samples - 1 - i) / fadeSamples);
    const value = Math.sin((2 * Math.PI * TONE_HZ * i) / sampleRate) * AMPLITUDE * Math.max(0, fade);
    data.writeInt16LE(Math.round(value * 32767), i * 2);
  }
  return Buffer.concat([wavHeader(data.length, sampleRate), data]);
}

/**
 * Handles one synthesis request. Params: `fault`, `msPerChar`, and
 * `delayMs` (latency before the answer, so a test can interrupt in flight).
 */
export async function handleTts(ctx, req, res, url, pathFault) {
  const fault = url.searchParams.get("fault") ?? pathFault ?? "ok";
  if (!TTS_FAULTS.includes(fault)) {
    sendJson(req, res, 400, { error: `unknown TTS fault "${fault}"; one of ${TTS_FAULTS.join(", ")}` });
    return;
  }
  if (req.method !== "POST") {
    sendJson(req, res, 405, { error: "use POST" });
    return;
  }
  const signal = trackRequest(ctx.stats.tts, res, ctx.signal, ctx.isClosing);

  let body;
  try {
    body = await readJson(req);
  } catch (error) {
    if (error instanceof HttpError) sendJson(req, res, error.status, { error: error.message });
    return;
  }
  const text = typeof body.text === "string" ? body.text : body.input;
  if (typeof text !== "string" || text.trim() === "") {
    sendJson(req, res, 400, { error: "body needs a non-empty string `text`" });
    return;
  }
  ctx.stats.recordTtsRequest({ fault, chars: [...text].length, text });

  if (fault === "hang") {
    await untilAborted(signal);
    return;
  }
  if (!(await sleep(intParam(url.searchParams, "delayMs", 0, 600_000), signal))) return;
  if (fault === "http500") {
    sendJson(req, res, 500, { error: "mock: synthesis failed" });
    return;
  }
  const voice = url.searchParams.get("voice");
  if (voice !== null && !VOICE_NAME.test(voice)) {
    sendJson(req, res, 400, { error: "voice must be an espeak-ng voice name such as en-us" });
    return;
  }
  let wav;
  let engine = "tone";
  if (voice !== null && espeakAvailable()) {
    try {
      wav = await espeakWav(text, voice, signal);
      engine = "espeak-ng";
    } catch {
      if (signal.aborted) return;
      sendJson(req, res, 500, { error: "espeak-ng failed" });
      return;
    }
  } else {
    wav = toneWav(speechDurationMs(text, intParam(url.searchParams, "msPerChar", 60, 10_000)));
  }
  res.writeHead(200, {
    ...corsHeaders(req),
    "x-tts-engine": engine,
    "access-control-expose-headers": "x-tts-engine",
    "content-type": "audio/wav",
    "content-length": wav.length,
    "cache-control": "no-store",
  });
  res.end(wav);
}
