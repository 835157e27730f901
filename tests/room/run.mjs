// `npm run room -- --rounds N --echo-db D --delay-ms M --protocol P [--ec off]`: the demo's agent
// in a room with real audio (pulse.mjs), and a user (espeak-ng in another voice) who asks a
// question every round and, in chosen rounds, says "stop" or "wait a moment" at a random moment of
// the answer, or "uh huh" / "okay", or nothing. Ends with one line:
//
//   room: A answers, S self-cuts, E extra turns, stop cut C/T median X ms p90 Y ms, backchannels cut B/K, pauses P (R resumed)
//
// (score.mjs says what each counts). Exits non-zero only when the harness itself failed: the
// numbers are measurements. `--json FILE` writes every round, the page's events and the echo
// measurement; `--help` lists the options.

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";
import { startDevStack } from "../../www/devstack.mjs";
import { topicSentences } from "../../www/devstack/chat.mjs";
import { enginePython } from "../../www/devstack/engine.mjs";
import { CHROMIUM_ARGS } from "../e2e/harness.mjs";
import { captureLagMs, measureCanceller, residualInRounds } from "./echo.mjs";
import { roomToolsMissing, startRoom } from "./pulse.mjs";
import { AIR, dbOfMeanSquare, FRAME_MS, firstSound, lastSoundEnd, SPEAKER, spans, USER } from "./signal.mjs";
import { score, stopPathLine, summaryLine, voiceLengthsLine, voiceLine, wordsLine } from "./score.mjs";
import { BACKCHANNELS, probeWav, QUESTIONS, spokenWav, STOPS, USER_VOICE } from "./voices.mjs";

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const CHROMIUM = process.env.CHROMIUM_PATH || "/usr/bin/chromium";

export const USAGE = `usage: npm run room -- [options]
  --rounds N         rounds (default 12): a question, the answer, and the round's interjection
  --echo-db D        the echo's level against the speaker, in dB (default -6)
  --delay-ms M       the echo's delay (default 40)
  --protocol P       a speech-to-text protocol the dev stack mocks (default gladia)
  --ec on|off        Chromium's echo canceller (getUserMedia echoCancellation; default on)
  --ns-agc on|off    noise suppression and auto gain control as the demo asks (on, the default),
                     or off (to study the canceller alone)
  --mix SPEC         the rounds' interjections, e.g. stop=2,backchannel=1,none=1 (the default)
  --backchannels L   the backchannels the user says, comma-separated (default "uh huh,okay"; the dev
                     stack's general recognizer writes those as other words; "yes" it hears in the
                     room, "right" and "sure" only offline)
  --recognizer R     the dev stack's recognizer: general (pocketsphinx's language model, the
                     default: it writes a word for nearly everything, "okay" as "eight") or script
                     (a grammar of the room's phrases and the agent's sentences, whole phrases
                     only: "okay" as "okay" or nothing, a lone "stop" rarely)
  --user-voice V     the user's espeak-ng voice (default ${USER_VOICE}; the agent speaks en-us)
  --seed S           seeds the plan: kinds, moments, phrases (default 1)
  --echo-check on|off  measure the canceller before the rounds (default on)
  --capture C        how the page reads the microphone: auto (the library's choice: Chromium's
                     track processor, the default) or worklet (the processor taken away: the
                     capture worklet through Web Audio, as in browsers without it)
  --min-speech-ms N  the session's bargeIn.minSpeechMs: voice this long pauses the agent (default: the session's)
  --json FILE        writes the rounds, the page's events and the measurements
  --verbose          one line per round`;

/** The options of a run, from argv. Throws a TypeError/RangeError naming a bad one. */
export function parseArgs(argv) {
  const options = { rounds: 12, echoDb: -6, delayMs: 40, protocol: "gladia", ec: true, nsAgc: true, mix: { stop: 2, backchannel: 1, none: 1 }, backchannels: BACKCHANNELS, recognizer: "general", userVoice: USER_VOICE, seed: 1, echoCheck: true, capture: "auto", json: null, verbose: false };
  const onOff = (flag, value) => {
    if (value !== "on" && value !== "off") throw new RangeError(`${flag} must be on or off, got ${value}`);
    return value === "on";
  };
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i];
    const [flag, inline] = arg.split(/=(.*)/s);
    if (flag === "--help") return { help: true };
    if (flag === "--verbose") {
      options.verbose = true;
      continue;
    }
    const value = inline ?? argv[++i];
    if (value === undefined) throw new TypeError(`${flag} needs a value\n${USAGE}`);
    if (flag === "--rounds") options.rounds = Number(value);
    else if (flag === "--echo-db") options.echoDb = Number(value);
    else if (flag === "--delay-ms") options.delayMs = Number(value);
    else if (flag === "--protocol") options.protocol = value;
    else if (flag === "--ec") options.ec = onOff(flag, value);
    else if (flag === "--ns-agc") options.nsAgc = onOff(flag, value);
    else if (flag === "--echo-check") options.echoCheck = onOff(flag, value);
    else if (flag === "--seed") options.seed = Number(value);
    else if (flag === "--json") options.json = value;
    else if (flag === "--min-speech-ms") options.minSpeechMs = Number(value);
    else if (flag === "--capture") options.capture = value;
    else if (flag === "--mix") options.mix = parseMix(value);
    else if (flag === "--backchannels") options.backchannels = parsePhrases(flag, value);
    else if (flag === "--recognizer") options.recognizer = value;
    else if (flag === "--user-voice") options.userVoice = value;
    else throw new TypeError(`unknown argument ${arg}\n${USAGE}`);
  }
  if (!Number.isInteger(options.rounds) || options.rounds < 1) throw new RangeError("--rounds must be a whole number ≥ 1");
  if (!(Number.isFinite(options.echoDb) && options.echoDb <= 0)) throw new RangeError("--echo-db must be a number ≤ 0");
  if (!(Number.isFinite(options.delayMs) && options.delayMs >= 1 && options.delayMs <= 2000)) throw new RangeError("--delay-ms must be from 1 to 2000");
  if (options.recognizer !== "general" && options.recognizer !== "script") throw new RangeError(`--recognizer must be general or script, got ${options.recognizer}`);
  if (!/^[a-z0-9+-]+$/i.test(options.userVoice)) throw new RangeError(`--user-voice: "${options.userVoice}" is not an espeak-ng voice name`);
  if (options.capture !== "auto" && options.capture !== "worklet") throw new RangeError(`--capture must be auto or worklet, got ${options.capture}`);
  if (!Number.isInteger(options.seed)) throw new RangeError("--seed must be an integer");
  if (options.minSpeechMs !== undefined && !(Number.isFinite(options.minSpeechMs) && options.minSpeechMs >= 0)) throw new RangeError("--min-speech-ms must be a number ≥ 0");
  return options;
}

function parseMix(spec) {
  const mix = { stop: 0, backchannel: 0, none: 0 };
  for (const part of spec.split(",")) {
    const [kind, weight] = part.split("=");
    if (!(kind in mix) || !Number.isInteger(Number(weight)) || Number(weight) < 0) throw new RangeError(`--mix: "${part}" is not stop|backchannel|none=<whole number>`);
    mix[kind] = Number(weight);
  }
  if (mix.stop + mix.backchannel + mix.none === 0) throw new RangeError("--mix gives every kind a weight of 0");
  return mix;
}

function parsePhrases(flag, value) {
  const phrases = value.split(",").map((phrase) => phrase.trim());
  if (phrases.some((phrase) => !/^[a-z' ]+$/i.test(phrase))) throw new RangeError(`${flag}: "${value}" is not comma-separated words`);
  return Object.freeze(phrases);
}

/** A seeded PRNG (mulberry32): the plan of a seed is the same on every machine. */
function random(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * The rounds: kinds in the mix's proportions (each block of the mix shuffled), a question each,
 * and when the interjection comes: a "stop" anywhere in the first 3 s of the answer (its first
 * second included), a backchannel 0.8–3 s in.
 */
export function plan({ rounds, mix, seed, backchannels = BACKCHANNELS }) {
  const rand = random(seed);
  const pick = (list) => list[Math.floor(rand() * list.length)];
  const block = Object.entries(mix).flatMap(([kind, weight]) => Array(weight).fill(kind));
  const kinds = [];
  while (kinds.length < rounds) {
    const shuffled = [...block];
    for (let i = shuffled.length - 1; i > 0; i -= 1) {
      const j = Math.floor(rand() * (i + 1));
      [shuffled[i], shuffled[j]] = [shuffled[j], shuffled[i]];
    }
    kinds.push(...shuffled);
  }
  return kinds.slice(0, rounds).map((kind, index) => ({
    index,
    kind,
    question: QUESTIONS[index % QUESTIONS.length],
    phrase: kind === "stop" ? pick(STOPS) : kind === "backchannel" ? pick(backchannels) : null,
    momentMs: kind === "stop" ? Math.round(rand() * 3000) : kind === "backchannel" ? Math.round(800 + rand() * 2200) : null,
  }));
}

/** Names of the protocols the dev stack mocks (mounted from www/protocols/). */
const protocolNames = (stack) => stack.protocols.map((p) => (typeof p === "string" ? p : p.name));

/** The recording's levels per envelope frame (dBFS per channel), and the wall time of the first. */
function airLevels(recorder) {
  const level = (channel) => Array.from(recorder.envelope.channel(channel), (power) => Math.round(dbOfMeanSquare(power, -120) * 10) / 10);
  return { frameMs: FRAME_MS, startAt: recorder.wallOfFrame(0), speaker: level(SPEAKER), air: level(AIR), user: level(USER) };
}

/** Launches Debian's Chromium on the room's audio server, its real audio stack unmuted. */
export async function launchInRoom(room) {
  // The real capture device (the room's microphone), never a fake one; permission is granted.
  const args = CHROMIUM_ARGS.filter((arg) => arg !== "--use-fake-device-for-media-stream");
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args, env: room.env, ignoreDefaultArgs: ["--mute-audio"] });
}

/**
 * Runs the room. `options`: as parseArgs gives them, or with `script` (rounds as plan() makes
 * them: `{ index, kind, question, phrase, momentMs }`) instead of a plan. `log(line)` gets
 * progress. Resolves with the score (score.mjs), the echo measurements and the raw material;
 * rejects only when the harness failed.
 */
export async function runRoom(options, { log = () => {} } = {}) {
  const missing = await roomToolsMissing();
  if (missing) throw new Error(missing);
  if (!enginePython()) throw new Error("no .venv with pocketsphinx (npm run bootstrap makes it)");
  const scratch = mkdtempSync(path.join(os.tmpdir(), "turnguard-room-"));
  let speechPhrases = null;
  if (options.recognizer === "script") {
    speechPhrases = path.join(scratch, "phrases.txt");
    writeFileSync(speechPhrases, [...QUESTIONS, ...STOPS, ...(options.backchannels ?? BACKCHANNELS), ...topicSentences()].join("\n"));
  }
  const stack = await startDevStack({ port: 0, upstream: null, speechPhrases });
  let room = null;
  let browser = null;
  try {
    const names = protocolNames(stack);
    if (!names.includes(options.protocol)) throw new RangeError(`--protocol must be one of ${names.join(", ")}, got ${options.protocol}`);
    const warming = stack.warmSpeech();
    room = await startRoom({ echoDb: options.echoDb, delayMs: options.delayMs, log });
    const loopback = await room.measureEcho(probeWav(room.dir));
    log(`room: loopback measured ${loopback.gainDb.toFixed(2)} dB, ${loopback.delayMs.toFixed(2)} ms (asked ${options.echoDb} dB, ${options.delayMs} ms)`);
    if (Math.abs(loopback.gainDb - options.echoDb) > 1 || Math.abs(loopback.delayMs - options.delayMs) > 5) {
      throw new Error(`the loopback measures ${loopback.gainDb.toFixed(2)} dB / ${loopback.delayMs.toFixed(2)} ms, not the ${options.echoDb} dB / ${options.delayMs} ms asked`);
    }
    await warming;

    browser = await launchInRoom(room);
    const page = await browser.newPage();
    const entries = [];
    const pageErrors = [];
    page.on("pageerror", (error) => pageErrors.push(error.message));
    page.on("console", (message) => message.type() === "error" && pageErrors.push(message.text()));
    const meter = [];
    await page.exposeFunction("roomReport", (entry) => {
      if (entry.kind === "meter") meter.push(...entry.frames);
      else entries.push(entry);
    });
    await page.goto(new URL("/tests/room/page.html", stack.url).href);
    await page.waitForFunction(() => window.roomReady === true, null, { timeout: 30_000 });

    const recorder = room.recorder;
    const speaker = () => recorder.envelope.channel(SPEAKER);
    const probe = () => recorder.envelope.channel(USER);
    const wall = () => Date.now();

    const mic = { ec: options.ec, nsAgc: options.nsAgc, capture: options.capture };
    let canceller = null;
    if (options.echoCheck) {
      canceller = await measureCanceller({ page, room, meter, mic, log });
    }

    const bargeIn = options.minSpeechMs === undefined ? undefined : { minSpeechMs: options.minSpeechMs };
    const start = await page.evaluate((o) => window.room.startAgent(o), { protocol: options.protocol, mic, bargeIn });
    log(`room: agent ${start.sessionId} on ${options.protocol}, echo canceller ${options.ec ? "on" : "off"}${options.nsAgc ? "" : ", no noise suppression or gain control"}, capture ${start.capture}`);
    const state = () => entries.findLast((e) => e.kind === "state")?.state ?? "idle";
    const failed = () => {
      recorder.check();
      const error = entries.find((e) => e.kind === "error" && e.terminal);
      if (error) throw new Error(`the session failed: ${error.code} ${error.message}`);
      if (pageErrors.some((e) => !/Failed to load resource|WebSocket/.test(e))) throw new Error(`page error: ${pageErrors.join("; ")}`);
    };
    const waitFor = async (predicate, timeoutMs) => {
      const until = wall() + timeoutMs;
      for (;;) {
        failed();
        const value = predicate();
        if (value) return value;
        if (wall() > until) return null;
        await sleep(25);
      }
    };
    if (!(await waitFor(() => state() === "listening", 30_000))) throw new Error(`the session never listened (state ${state()})`);

    const utterances = [];
    let lastUserEnd = 0;
    /** The user says `text`; the utterance as the recording has it (the probe channel). */
    const say = async (text, kind, round) => {
      const played = await room.play(spokenWav(room.dir, text, options.userVoice ?? USER_VOICE));
      await sleep(60);
      const from = recorder.frameOfWall(played.startedAt) - 20;
      const found = spans(probe(), { from, to: recorder.frameOfWall(played.endedAt) + 20 });
      if (found.length === 0) throw new Error(`"${text}" never reached the air`);
      const utterance = { kind, text, round, onsetFrame: found[0][0], endFrame: found.at(-1)[1] };
      utterance.onsetAt = recorder.wallOfFrame(utterance.onsetFrame);
      utterance.endAt = recorder.wallOfFrame(utterance.endFrame);
      utterances.push(utterance);
      lastUserEnd = utterance.endAt;
      return utterance;
    };
    /**
     * The agent listens and has for 1.2 s (no state, final or turn since), has been silent in the
     * air as long, and the user's last words are 2.5 s old.
     */
    const isQuiet = () => {
      const s = speaker();
      const lastChange = entries.findLast((e) => e.kind === "state" || (e.kind === "caption" && e.isFinal) || (e.kind === "event" && e.event.type === "turn_started"))?.at ?? 0;
      return state() === "listening" && Date.now() - lastChange > 1200 && lastSoundEnd(s, s.length - 1200 / FRAME_MS, s.length) < 0 && wall() - lastUserEnd > 2500;
    };
    let runaways = 0;
    const quiet = async () => {
      if (await waitFor(isQuiet, 45_000)) return;
      // The agent keeps talking (to its own echo, say): cut it from the harness and wait again;
      // if that fails too, a new session.
      runaways += 1;
      log("room: the agent did not fall quiet in 45 s; interrupting it");
      await page.evaluate(() => window.room.interrupt());
      if (await waitFor(isQuiet, 20_000)) return;
      log("room: still not quiet; a new session");
      await page.evaluate(() => window.room.stopAgent());
      await page.evaluate((o) => window.room.startAgent(o), { protocol: options.protocol, mic });
      if (!(await waitFor(isQuiet, 30_000))) throw new Error("the agent never fell quiet, even in a new session");
    };

    const rounds = [];
    const roundsFrom = wall();
    for (const round of options.script ?? plan(options)) {
      await quiet();
      const question = await say(round.question, "question", round.index);
      // The question's answer: the first turn started since the question began, once it sounds
      // in the air (or settles without a sound).
      const event = (type, test) => entries.find((e) => e.kind === "event" && e.event.type === type && test(e));
      const since = (e) => e.at >= question.onsetAt - 60;
      // A turn whose preemptive attempt began before the question (on the words of the round
      // before, withdrawn since) says `turn_started` only then: its first real attempt marks it.
      const realAttempt = (e) => since(e) && !e.event.preemptive;
      let started = await waitFor(() => event("turn_started", since) ?? event("attempt_started", realAttempt), 20_000);
      if (started && started.at < question.endAt) {
        // It began while the user still talked: a pause split the question, and its rest may
        // start another turn (that cuts this one). The answer is the last of them.
        await waitFor(() => wall() > question.endAt + 2000, 5_000);
        started = entries.findLast((e) => e.kind === "event" && e.event.type === "turn_started" && since(e));
      }
      const turnId = started?.event.turnId ?? null;
      const playing = turnId && (await waitFor(() => event("playback_started", (e) => e.event.turnId === turnId) ?? entries.find((e) => e.kind === "turn" && e.turnId === turnId && !["accepted", "recovered"].includes(e.status)), 20_000));
      const onset = playing?.kind === "event" ? await waitFor(() => {
        const frame = firstSound(speaker(), recorder.frameOfWall(playing.at) - 20);
        return frame >= 0 ? { frame } : null;
      }, 5_000) : null;
      rounds.push({ ...round, turnId, answerOnsetFrame: onset?.frame ?? null });
      if (!onset) {
        log(`room: round ${round.index + 1}: ${turnId ? "the answer never sounded" : `no turn from "${round.question}"`}`);
        continue;
      }
      if (round.phrase) {
        const at = recorder.wallOfFrame(onset.frame) + round.momentMs;
        await sleep(Math.max(0, at - wall()));
        await say(round.phrase, round.kind, round.index);
      }
      if (options.verbose) log(`room: round ${round.index + 1}/${options.rounds}: ${round.kind}${round.phrase ? ` "${round.phrase}" at ${round.momentMs} ms` : ""}`);
    }
    await quiet();
    await page.evaluate(() => window.room.stopAgent());

    const result = score({ entries, utterances, rounds, speaker: speaker(), frameOfWall: recorder.frameOfWall });
    const lagMs = captureLagMs(meter.filter(([at]) => at >= roundsFrom), recorder) ?? canceller?.lagMs ?? 30;
    const residual = { lagMs, ...residualInRounds({ meter, recorder, lagMs, from: roundsFrom, to: wall() }) };
    return { options, loopback, canceller, residual, runaways, result, line: summaryLine(result), entries, utterances, rounds, meter, air: airLevels(recorder) };
  } finally {
    await browser?.close().catch(() => {});
    await room?.close();
    await stack.close();
    rmSync(scratch, { recursive: true, force: true });
  }
}

async function main() {
  let options;
  try {
    options = parseArgs(process.argv.slice(2));
  } catch (error) {
    console.error(error.message);
    process.exit(2);
  }
  if (options.help) {
    console.log(USAGE);
    return;
  }
  const started = Date.now();
  const load = (await import("node:os")).loadavg();
  const run = await runRoom(options, { log: (line) => console.log(line) });
  const { result } = run;
  if (options.verbose) {
    for (const r of result.perRound) {
      const into = r.inAnswer ? `${r.intoAnswerMs} ms into ${r.intoTurnId === r.turnId ? "the answer" : r.intoTurnId.split(":")[1]}${r.cut ? `, cut by ${r.cause} after ${r.latencyMs} ms` : ", not cut"}` : "while the agent was silent";
      console.log(`  round ${r.index + 1} ${r.kind}: ${r.answered ? (r.completed ? "completed" : "cut") : "no answer"}${r.interjection ? `; "${r.interjection}" ${into}` : ""}`);
    }
  }
  if (run.canceller) console.log(run.canceller.line);
  console.log(run.residual.line);
  console.log(`room: ${result.rounds} rounds, ${result.answered} answered, ${result.turns} turns, ${run.runaways} runaways, ${((Date.now() - started) / 1000).toFixed(0)} s, load ${load.map((v) => v.toFixed(1)).join(" ")}`);
  if (options.json) {
    mkdirSync(path.dirname(path.resolve(options.json)), { recursive: true });
    const { entries, utterances, rounds, meter, air, ...rest } = run;
    // What the page captured as [wall ms, dBFS] pairs, 10 ms each.
    const captured = meter.map(([at, power]) => [Math.round(at), Math.round(dbOfMeanSquare(power) * 10) / 10]);
    writeFileSync(options.json, `${JSON.stringify({ ...rest, load, rounds, utterances, entries, air, captured })}\n`);
  }
  console.log(voiceLine(result.voice));
  console.log(voiceLengthsLine(result.voiceLengths));
  console.log(stopPathLine(result.stopPath));
  console.log(wordsLine(result));
  console.log(run.line);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  main().catch((error) => {
    console.error(`room: harness error: ${error.stack ?? error}`);
    process.exit(1);
  });
}
