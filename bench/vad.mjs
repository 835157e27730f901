// The voice detector's rows of `npm run bench` (issue 23, item 1): the page's energy detector and
// the trial that also asks earshot's network (`--features earshot`, src/core/voice/neural.rs), over
// one recorded corpus: the user's utterances in two espeak-ng voices and six sounds that are not
// speech, on a quiet room's noise. Each detector runs natively (bench/vad_corpus.rs) on the same
// bytes; the trial's cost in `turnguard`'s size comes from a build with it (not in tiny mode).

import { execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { entrySize } from "../scripts/size.mjs";

const RATE = ["-r", "16000", "-c", "1", "-b", "16"];
const UTTERANCES = ["what is the weather like today", "stop", "wait a moment", "uh huh", "okay", "tell me a joke", "yeah", "right", "what time is it", "sure"];
const VOICES = ["en-gb+f3", "en-us+m3"];
/** Sounds a room has that are not speech, as sox makes them. */
const SOUNDS = {
  clicks: ["synth", "0.004", "whitenoise", "vol", "0.6", "pad", "0", "0.12", "repeat", "15"],
  slam: ["synth", "0.15", "brownnoise", "fade", "q", "0.002", "0.15", "0.12", "norm", "-3"],
  music: ["synth", "2.5", "sine", "262", "sine", "330", "sine", "392", "remix", "1-3", "tremolo", "4", "40", "norm", "-12"],
  knock: ["synth", "0.03", "pinknoise", "fade", "q", "0.001", "0.03", "0.025", "norm", "-6", "pad", "0", "0.25", "repeat", "3"],
  whistle: ["synth", "1.0", "sine", "1500-2500", "norm", "-10"],
  hiss: ["synth", "1.5", "whitenoise", "fade", "q", "0.05", "1.5", "0.05", "norm", "-20"],
};
const GAP_S = "1.2";

/** Writes the corpus (PCM16 at 16 kHz) and its truth into `dir`; returns their paths. */
function makeCorpus(dir, tiny) {
  mkdirSync(dir, { recursive: true });
  // -R: sox's noise the same every run, so both detectors and every run hear the same bytes.
  const sox = (...args) => execFileSync("sox", ["-R", ...args], { stdio: ["ignore", "ignore", "inherit"] });
  const parts = [];
  const truth = [];
  const gap = path.join(dir, "gap.wav");
  sox("-n", ...RATE, gap, "trim", "0", GAP_S);
  // Each sound is followed by the same quiet gap.
  const add = (file, kind, name) => {
    const seconds = execFileSync("soxi", ["-D", file]).toString().trim();
    parts.push(file, gap);
    truth.push(`${kind} ${seconds} ${name}`, `gap ${GAP_S} gap`);
  };
  const utterances = tiny ? UTTERANCES.slice(0, 2) : UTTERANCES;
  utterances.forEach((text, i) => {
    for (const voice of VOICES) {
      const said = path.join(dir, `said-${i}-${voice.replace(/\W/g, "_")}.wav`);
      // The text goes on stdin, never argv.
      execFileSync("espeak-ng", ["-v", voice, "-w", `${said}.raw.wav`], { input: text });
      sox(`${said}.raw.wav`, ...RATE, said, "norm", "-12");
      add(said, "speech", text.replace(/\s+/g, "_"));
    }
  });
  for (const [name, effects] of Object.entries(tiny ? { slam: SOUNDS.slam } : SOUNDS)) {
    const file = path.join(dir, `${name}.wav`);
    sox("-n", ...RATE, file, ...effects);
    add(file, "noise", name);
  }
  const clean = path.join(dir, "clean.wav");
  sox(...parts, clean);
  const seconds = execFileSync("soxi", ["-D", clean]).toString().trim();
  const noise = path.join(dir, "room.wav");
  // A quiet room: pink noise about 50 dB under full scale.
  sox("-n", ...RATE, noise, "synth", seconds, "pinknoise", "vol", "0.003");
  const corpus = path.join(dir, "corpus.raw");
  sox("-m", clean, noise, "-t", "raw", corpus);
  const truthFile = path.join(dir, "truth.txt");
  writeFileSync(truthFile, `${truth.join("\n")}\n`);
  return { corpus, truth: truthFile, seconds: Number(seconds) };
}

function detect(root, corpus, truth, features) {
  const out = execFileSync("cargo", ["run", "--quiet", "--example", "vad_corpus", ...features, "--", corpus, truth], { cwd: root, stdio: ["ignore", "pipe", "inherit"] });
  return JSON.parse(out.toString().trim().split("\n").pop());
}

/** Both detectors over one corpus, and the trial's size (null in tiny mode). */
export function runVadBench(root, { tiny }) {
  const { corpus, truth, seconds } = makeCorpus(path.join(root, "target/vad-corpus"), tiny);
  const energy = detect(root, corpus, truth, []);
  const earshot = detect(root, corpus, truth, ["--features", "earshot"]);
  let size = null;
  if (!tiny) {
    const dir = "target/custom/earshot";
    execFileSync("bash", ["scripts/build.sh", "--main-only", dir, "voice,earshot"], { cwd: root, stdio: "inherit" });
    size = entrySize("", new URL(`file://${path.join(root, dir)}/`));
  }
  return { seconds, energy, earshot, size };
}

const ms = (value) => (value === null ? "—" : `${value} ms`);
const line = (d) => {
  const falseStarts = d.noise.reduce((sum, sound) => sum + sound.starts, 0);
  const which = d.noise.filter((sound) => sound.starts > 0).map((sound) => sound.sound);
  return `found ${d.found}/${d.utterances}, onset median ${ms(d.onsetMedianMs)} p90 ${ms(d.onsetP90Ms)}, starts on other sounds ${falseStarts}/${d.noise.length}${which.length ? ` (${which.join(", ")})` : ""}, in quiet ${d.inQuiet}`;
};

/** The bench's rows; `sizeOfTurnguard`: this build's `turnguard` entry, gzipped bytes. */
export function vadRows(r, sizeOfTurnguard) {
  const kib = (bytes) => `${(bytes / 1024).toFixed(1)} KiB`;
  return [
    [`voice detector over a ${r.seconds.toFixed(0)} s corpus (espeak-ng utterances, sounds that are not speech, −50 dBFS room noise): the energy detector / with earshot's network`, line(r.energy), `earshot: ${line(r.earshot)}`],
    [
      "size, turnguard with earshot's network (the trial build, --features earshot): total, gzipped",
      r.size ? kib(r.size.total) : "— (not in tiny mode)",
      r.size ? `+${kib(r.size.total - sizeOfTurnguard)} over the energy detector's build` : "—",
    ],
  ];
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), "..");
  const result = runVadBench(root, { tiny: process.env.BENCH_TINY === "1" });
  const size = entrySize("").total;
  for (const row of vadRows(result, size)) console.log(`| ${row.join(" | ")} |`);
  if (process.argv.includes("--json")) console.log(JSON.stringify(result));
}
