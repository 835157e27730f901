// Mock text-to-speech endpoint.
//
//   POST /tts            body { text } (or { input }, OpenAI's field name)
//   POST /tts/<fault>    same, fault from the path; `?fault=` wins
//
// Answers audio/wav, 16-bit mono PCM at 24000 Hz: a 440 Hz tone lasting
// `msPerChar` (default 60) per character of text, capped at 10 s, so a test
// can tell from the duration which text was spoken.

import { corsHeaders, HttpError, intParam, readJson, sendJson, sleep, trackRequest, untilAborted } from "./http.mjs";

export const TTS_FAULTS = Object.freeze(["ok", "http500", "hang"]);
export const TTS_SAMPLE_RATE = 24000;
export const TTS_MAX_MS = 10_000;

const TTS_PATH = /^\/tts(?:\/([^/]+))?$/;
const TONE_HZ = 440;
const AMPLITUDE = 0.2;
const FADE_MS = 5; // avoids a click at both ends

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
  const wav = toneWav(speechDurationMs(text, intParam(url.searchParams, "msPerChar", 60, 10_000)));
  res.writeHead(200, {
    ...corsHeaders(req),
    "content-type": "audio/wav",
    "content-length": wav.length,
    "cache-control": "no-store",
  });
  res.end(wav);
}
