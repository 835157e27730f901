// Real speech for the tests: espeak-ng says a sentence, sox makes it the format a test needs.
// Also the word error rate the tests report recognition accuracy with.

import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

/**
 * Sentences the speech tests say and measure the word error rate on. The first is the one the
 * tests require word for word up to its last word; pocketsphinx does far worse on short ones.
 */
export const TEST_SENTENCES = Object.freeze([
  "what is the weather like today",
  "tell me about the weather",
  "what can you do",
  "tell me a joke",
]);

function has(command) {
  try {
    execFileSync("sh", ["-c", `command -v ${command}`], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

/** Why speech cannot be made here, or null when espeak-ng and sox are installed. */
export function speechToolsMissing() {
  const missing = ["espeak-ng", "sox"].filter((command) => !has(command));
  return missing.length > 0 ? `${missing.join(" and ")} not installed (npm run bootstrap installs them)` : null;
}

const workDir = () => mkdtempSync(path.join(tmpdir(), "turnguard-speech-"));

/**
 * `text` spoken by espeak-ng (US English), as a WAV file of `rate` Hz, 16-bit mono, with
 * `padMs` of silence before and after. Returns the file's path.
 */
export function speechWav(text, { rate = 16000, padMs = 500, dir = workDir() } = {}) {
  const raw = path.join(dir, "espeak.wav");
  const out = path.join(dir, `speech-${rate}.wav`);
  execFileSync("espeak-ng", ["-v", "en-us", "-w", raw, text]);
  const pad = (padMs / 1000).toFixed(3);
  // -R: sox seeds its dither the same each run, so a test hears the same samples every time.
  execFileSync("sox", ["-R", raw, "-r", String(rate), "-b", "16", "-c", "1", out, "pad", pad, pad]);
  return out;
}

/** `text` spoken as raw PCM16 LE mono 16 kHz (what the live STT takes), silence-padded. */
export function speechPcm(text, options) {
  const wav = readFileSync(speechWav(text, { ...options, rate: 16000 }));
  return wav.subarray(dataOffset(wav));
}

function dataOffset(wav) {
  for (let offset = 12; offset + 8 <= wav.length; ) {
    const id = wav.toString("ascii", offset, offset + 4);
    const size = wav.readUInt32LE(offset + 4);
    if (id === "data") return offset + 8;
    offset += 8 + size + (size % 2);
  }
  throw new Error("no data chunk in the WAV");
}

const words = (text) => text.toLowerCase().replace(/[^a-z' ]/g, " ").split(/\s+/).filter(Boolean);

/** Word error rate of `hypothesis` against `reference`: (substitutions + deletions + insertions) / reference words. */
export function wordErrorRate(reference, hypothesis) {
  const ref = words(reference);
  const hyp = words(hypothesis);
  let previous = Array.from({ length: hyp.length + 1 }, (_, j) => j);
  for (let i = 1; i <= ref.length; i += 1) {
    const current = [i];
    for (let j = 1; j <= hyp.length; j += 1) {
      const substitution = previous[j - 1] + (ref[i - 1] === hyp[j - 1] ? 0 : 1);
      current.push(Math.min(substitution, previous[j] + 1, current[j - 1] + 1));
    }
    previous = current;
  }
  return ref.length === 0 ? 0 : previous[hyp.length] / ref.length;
}
