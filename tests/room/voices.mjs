// The sounds the room plays that do not come from the page: the user's voice (espeak-ng in
// another voice than the agent's en-us) and the probe that measures the loopback (sox).

import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";

/** The user's voice: espeak-ng's British English with a female variant (the agent speaks en-us). */
export const USER_VOICE = "en-gb+f3";

/** What the user says. Questions get answers of two or more sentences from the dev stack's mock. */
export const QUESTIONS = Object.freeze([
  "what is the weather like today",
  "tell me about the weather",
  "what time is it",
  "tell me a joke",
  "what is your name",
  "what can you do",
]);
export const STOPS = Object.freeze(["stop", "wait a moment"]);
export const BACKCHANNELS = Object.freeze(["uh huh", "okay"]);

/** A WAV of `text` said by espeak-ng in `voice` (the text goes on stdin, never argv), cached in `dir`. */
export function spokenWav(dir, text, voice = USER_VOICE) {
  const file = path.join(dir, `${voice.replace(/[^a-z0-9]+/gi, "_")}-${text.replace(/[^a-z0-9]+/gi, "_")}.wav`);
  if (!existsSync(file)) execFileSync("espeak-ng", ["-v", voice, "-w", file], { input: text });
  return file;
}

/**
 * The loopback probe: three 20 ms tone bursts 300 ms apart, then a second of pink noise, at 48 kHz.
 * Bursts give the delay a sharp edge; the noise gives the gain a broad band.
 */
export function probeWav(dir) {
  const file = path.join(dir, "probe.wav");
  if (existsSync(file)) return file;
  const part = (name, ...effects) => {
    const out = path.join(dir, `${name}.wav`);
    execFileSync("sox", ["-R", "-n", "-r", "48000", "-c", "1", "-b", "16", out, ...effects]);
    return out;
  };
  const burst = part("probe-burst", "synth", "0.02", "sine", "1000", "fade", "h", "0.005", "0.02", "0.005", "vol", "0.5");
  const gap = part("probe-gap", "trim", "0", "0.3");
  const noise = part("probe-noise", "synth", "1", "pinknoise", "vol", "0.2");
  execFileSync("sox", ["-R", gap, burst, gap, burst, gap, burst, gap, noise, gap, file]);
  return file;
}
