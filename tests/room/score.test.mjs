// The room's arithmetic without a room: the envelope, the loopback's delay and gain, the plan of
// rounds, and the score of made-up runs (one scenario per test).

import assert from "node:assert/strict";
import { test } from "node:test";
import { parseArgs, plan } from "./run.mjs";
import { score, stopPathLine, summaryLine, voiceLengthsLine, voiceLine, wordsLine } from "./score.mjs";
import { CHANNELS, delayAndGain, Envelope, FRAME_MS, FRAME_SAMPLES, quantile, RATE, spans } from "./signal.mjs";

test("the envelope keeps each channel's mean square per frame, across pieces of any size", () => {
  const envelope = new Envelope();
  const samples = new Float32Array(FRAME_SAMPLES * 3 * CHANNELS);
  for (let i = 0; i < FRAME_SAMPLES * 3; i += 1) samples[i * CHANNELS + 1] = i < FRAME_SAMPLES ? 0 : 0.5;
  envelope.push(samples.subarray(0, 7 * CHANNELS));
  envelope.push(samples.subarray(7 * CHANNELS));
  assert.equal(envelope.frames, 3);
  assert.deepEqual([...envelope.channel(1)], [0, 0.25, 0.25]);
  assert.deepEqual([...envelope.channel(0)], [0, 0, 0]);
});

test("spans bridge gaps shorter than bridgeMs and split at longer ones", () => {
  const loud = 1e-2;
  const frames = new Float32Array(200);
  frames.fill(loud, 10, 20);
  frames.fill(loud, 30, 40); // 50 ms gap: bridged
  frames.fill(loud, 150, 160); // 550 ms gap: a new span
  assert.deepEqual(spans(frames, { bridgeMs: 300 }), [[10, 40], [150, 160]]);
  assert.deepEqual(spans(frames, { from: 35, to: 155 }), [[35, 40], [150, 155]]);
});

test("the loopback's delay and gain are found in a recording of noise and its echo", () => {
  let seed = 7;
  const noise = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648 - 0.5) * 0.4;
  const delay = Math.round(0.04 * RATE);
  const reference = Float32Array.from({ length: RATE / 2 }, noise);
  const echo = new Float32Array(reference.length + delay);
  for (let i = 0; i < reference.length; i += 1) echo[i + delay] = reference[i] * 10 ** (-6 / 20);
  const found = delayAndGain(reference, echo, Math.round(0.2 * RATE));
  assert.equal(found.lagSamples, delay);
  assert.ok(Math.abs(found.gainDb + 6) < 0.01, `gain ${found.gainDb}`);
});

test("quantiles by nearest rank", () => {
  assert.equal(quantile([], 0.5), null);
  assert.equal(quantile([300, 100, 200], 0.5), 200);
  assert.equal(quantile([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 0.9), 9);
});

test("the plan follows the mix, is the same for a seed, and puts some stops in the first second", () => {
  const rounds = plan({ rounds: 40, mix: { stop: 2, backchannel: 1, none: 1 }, seed: 3 });
  assert.deepEqual(rounds, plan({ rounds: 40, mix: { stop: 2, backchannel: 1, none: 1 }, seed: 3 }));
  const count = (kind) => rounds.filter((r) => r.kind === kind).length;
  assert.deepEqual([count("stop"), count("backchannel"), count("none")], [20, 10, 10]);
  const stops = rounds.filter((r) => r.kind === "stop");
  assert.ok(stops.every((r) => r.momentMs >= 0 && r.momentMs <= 3000 && ["stop", "wait a moment"].includes(r.phrase)));
  assert.ok(stops.some((r) => r.momentMs < 1000));
  assert.ok(rounds.filter((r) => r.kind === "backchannel").every((r) => r.momentMs >= 800 && ["uh huh", "okay"].includes(r.phrase)));
  const other = plan({ rounds: 40, mix: { backchannel: 1 }, seed: 3, backchannels: ["yeah", "right", "sure"] });
  assert.deepEqual(new Set(other.map((r) => r.phrase)), new Set(["yeah", "right", "sure"]));
});

test("bad arguments are errors that name the flag", () => {
  assert.throws(() => parseArgs(["--rounds", "0"]), /--rounds/);
  assert.throws(() => parseArgs(["--echo-db", "3"]), /--echo-db/);
  assert.throws(() => parseArgs(["--ec", "maybe"]), /--ec/);
  assert.throws(() => parseArgs(["--mix", "stop=x"]), /--mix/);
  assert.throws(() => parseArgs(["--backchannels", "yeah,<b>"]), /--backchannels/);
  assert.deepEqual(parseArgs(["--backchannels", "yeah, right"]).backchannels, ["yeah", "right"]);
  assert.throws(() => parseArgs(["--bogus", "1"]), /unknown argument --bogus/);
  assert.throws(() => parseArgs(["--min-speech-ms", "-5"]), /--min-speech-ms/);
  assert.equal(parseArgs(["--min-speech-ms", "150"]).minSpeechMs, 150);
  assert.deepEqual([parseArgs([]).recognizer, parseArgs(["--recognizer", "script"]).recognizer], ["general", "script"]);
  assert.throws(() => parseArgs(["--recognizer", "oracle"]), /--recognizer/);
  assert.equal(parseArgs(["--user-voice", "en-us+f2"]).userVoice, "en-us+f2");
  assert.throws(() => parseArgs(["--user-voice", "en; rm"]), /--user-voice/);
  assert.deepEqual(parseArgs(["--rounds=3", "--ec", "off", "--protocol", "deepgram"]).rounds, 3);
});

// A made-up run on a wall clock where frame f is at f * FRAME_MS ms. The agent's audio reaches the
// air 50 ms after its playback event.
function run() {
  const speaker = new Float32Array(60_000 / FRAME_MS);
  const entries = [];
  const utterances = [];
  const rounds = [];
  const sound = (from, to) => speaker.fill(1e-2, (from + 50) / FRAME_MS, (to + 50) / FRAME_MS);
  const event = (at, type, turnId, fields = {}) => entries.push({ kind: "event", at, event: { type, turnId, ...fields } });
  const say = (round, kind, text, onsetAt, endAt) => utterances.push({ round, kind, text, onsetAt, endAt, onsetFrame: onsetAt / FRAME_MS });
  /** A turn that plays from `playAt` and ends at `endAt`, cut (by `cause`) or not. */
  const turn = (id, startAt, playAt, endAt, cause = null) => {
    event(startAt, "turn_started", id);
    event(playAt, "playback_started", id);
    sound(playAt, endAt);
    if (cause) event(endAt, "barge_in", id, { cause });
    event(endAt, "playback_ended", id, { cut: cause !== null, heardMs: endAt - playAt });
  };
  return { speaker, entries, utterances, rounds, turn, say, scored: () => score({ entries, utterances, rounds, speaker, frameOfWall: (at) => Math.floor(at / FRAME_MS) }) };
}

test("a question answered to its end, with no interjection, is one completed answer", () => {
  const r = run();
  r.say(0, "question", "what time is it", 1000, 2000);
  r.turn("s:turn-1", 3000, 3200, 9000);
  r.rounds.push({ index: 0, kind: "none", turnId: "s:turn-1" });
  const s = r.scored();
  assert.equal(summaryLine(s), "room: 1 answers, 0 self-cuts, 0 extra turns, stop cut 0/0 median - ms p90 - ms, backchannels cut 0/0, pauses 0 (0 resumed)");
});

test("pauses are counted by cause, with those that resumed", () => {
  const r = run();
  r.say(0, "question", "what time is it", 1000, 2000);
  r.turn("s:turn-1", 3000, 3200, 9000);
  r.rounds.push({ index: 0, kind: "backchannel", turnId: "s:turn-1" });
  const pause = (at, type, fields) => r.entries.push({ kind: "event", at, event: { type, turnId: "s:turn-1", ...fields } });
  pause(4000, "paused", { cause: "voice" });
  pause(5600, "resumed", { pausedMs: 1600 });
  pause(6000, "paused", { cause: "speech_start" });
  const s = r.scored();
  assert.deepEqual(s.pauses, { paused: 2, resumed: 1, byCause: { voice: 1, speech_start: 1 } });
  assert.match(summaryLine(s), /, pauses 2 \(1 resumed\)$/);
});

test("a stop that cuts the answer: latency from the user's first sound to the answer's last sound", () => {
  const r = run();
  r.say(0, "question", "what time is it", 1000, 2000);
  r.say(0, "stop", "stop", 5000, 5400);
  r.turn("s:turn-1", 3000, 3200, 5500, "speech_start");
  r.turn("s:turn-2", 6500, 6700, 9000); // the answer to "stop": the user's words started it
  r.rounds.push({ index: 0, kind: "stop", turnId: "s:turn-1" });
  const s = r.scored();
  assert.deepEqual([s.answers, s.selfCuts, s.extraTurns], [0, 0, 0]);
  assert.deepEqual([s.stop.cut, s.stop.total, s.stop.medianMs], [1, 1, 550]); // the air fell silent at 5550
  assert.equal(s.perRound[0].intoAnswerMs, 1750); // its first sound was at 3250
});

test("a stop the agent talks through is counted and not cut; one after the answer is not counted", () => {
  const r = run();
  r.say(0, "question", "what time is it", 1000, 2000);
  r.say(0, "stop", "stop", 3500, 3900);
  r.turn("s:turn-1", 3000, 3200, 9000);
  r.say(1, "question", "tell me a joke", 12_000, 13_000);
  r.say(1, "stop", "wait a moment", 19_000, 20_000);
  r.turn("s:turn-2", 14_000, 14_200, 18_000);
  r.rounds.push({ index: 0, kind: "stop", turnId: "s:turn-1" }, { index: 1, kind: "stop", turnId: "s:turn-2" });
  const s = r.scored();
  assert.deepEqual([s.answers, s.stop.cut, s.stop.total], [2, 0, 1]);
  assert.equal(s.perRound[1].inAnswer, false);
});

test("a backchannel said in a gap between the answer's words falls into it; a pause there cuts from the pause", () => {
  const r = run();
  r.say(0, "question", "what is your name", 1000, 2000);
  r.turn("s:turn-1", 3000, 3200, 6000, "final");
  r.speaker.fill(0, (5000 + 50) / FRAME_MS, (6000 + 50) / FRAME_MS); // the words' gap from 5000, then the pause
  r.say(0, "backchannel", "uh huh", 5100, 5400);
  r.entries.push({ kind: "event", at: 5250, event: { type: "paused", turnId: "s:turn-1", cause: "voice" } });
  r.rounds.push({ index: 0, kind: "backchannel", turnId: "s:turn-1" });
  const s = r.scored();
  assert.deepEqual([s.selfCuts, s.backchannels.cut, s.backchannels.total], [0, 1, 1]);
  assert.equal(s.perRound[0].latencyMs, 200); // the pause at 5250 reached the air at 5300
});

test("the words' line splits interjections by what the recognizer wrote: a backchannel, other words, no final", () => {
  const r = run();
  const caption = (at, text) => r.entries.push({ kind: "caption", at, text, isFinal: true });
  r.say(0, "question", "tell me a joke", 1000, 2000);
  r.say(0, "backchannel", "okay", 4000, 4400);
  r.turn("s:turn-1", 3000, 3200, 9000);
  caption(4900, "okay");
  r.entries.push({ kind: "event", at: 4901, event: { type: "backchannel", turnId: "s:turn-1" } });
  r.say(1, "question", "what time is it", 12_000, 13_000);
  r.say(1, "backchannel", "uh huh", 15_000, 15_400);
  r.turn("s:turn-2", 14_000, 14_200, 15_900, "final");
  caption(15_900, "a"); // the recognizer's word for it: the cut is the word's, by the session's rule
  r.turn("s:turn-3", 16_100, 16_300, 18_000);
  r.say(2, "question", "what is your name", 22_000, 23_000);
  r.say(2, "stop", "stop", 25_000, 25_300);
  r.turn("s:turn-4", 24_000, 24_200, 29_000); // no final: the agent went on
  r.rounds.push({ index: 0, kind: "backchannel", turnId: "s:turn-1" }, { index: 1, kind: "backchannel", turnId: "s:turn-2" }, { index: 2, kind: "stop", turnId: "s:turn-4" });
  const s = r.scored();
  assert.deepEqual(s.words.backchannels, { backchannel: { n: 1, cut: 0 }, otherWords: { n: 1, cut: 1 }, none: { n: 0, cut: 0 } });
  assert.deepEqual(s.words.stops, { backchannel: { n: 0, cut: 0 }, otherWords: { n: 0, cut: 0 }, none: { n: 1, cut: 0 } });
  assert.equal(wordsLine(s), "words: stops as a backchannel 0 (0 cut), as other words 0 (0 cut), no final 1 (0 cut); backchannels as a backchannel 1 (0 cut), as other words 1 (1 cut), no final 0 (0 cut)");
});

test("a cut with no user words near it is a self-cut, and a turn nobody asked for is an extra turn", () => {
  const r = run();
  r.say(0, "question", "what time is it", 1000, 2000);
  r.turn("s:turn-1", 3000, 3200, 7000, "speech_start"); // 5 s after the user stopped
  r.turn("s:turn-2", 8000, 8200, 12_000); // the echo's final
  r.rounds.push({ index: 0, kind: "none", turnId: "s:turn-1" });
  const s = r.scored();
  assert.deepEqual([s.answers, s.selfCuts, s.extraTurns], [0, 1, 1]);
  assert.equal(s.extraTurnIds[0].turnId, "s:turn-2");
});

test("a cut sooner after the user's first sound than any recognizer reacts is the echo's", () => {
  const r = run();
  r.say(0, "question", "tell me a joke", 1000, 2000);
  r.say(0, "backchannel", "uh huh", 5000, 5400);
  r.turn("s:turn-1", 3000, 3200, 5050, "final");
  r.rounds.push({ index: 0, kind: "backchannel", turnId: "s:turn-1" });
  const s = r.scored();
  assert.deepEqual([s.selfCuts, s.backchannels.cut, s.backchannels.total], [1, 0, 1]);
});

test("a backchannel that cuts the answer counts as a backchannel cut, not a self-cut", () => {
  const r = run();
  r.say(0, "question", "tell me a joke", 1000, 2000);
  r.say(0, "backchannel", "okay", 5000, 5400);
  r.turn("s:turn-1", 3000, 3200, 5600, "speech_start");
  r.rounds.push({ index: 0, kind: "backchannel", turnId: "s:turn-1" });
  const s = r.scored();
  assert.deepEqual([s.selfCuts, s.backchannels.cut, s.backchannels.total], [0, 1, 1]);
});

test("a question a pause split in two: its rest cutting the first turn is the user's, not a self-cut", () => {
  const r = run();
  r.say(0, "question", "tell me about the weather", 1000, 3000);
  r.turn("s:turn-1", 2000, 2200, 3500, "partial"); // "tell me" alone, cut by the rest
  r.turn("s:turn-2", 4000, 4200, 9000);
  r.rounds.push({ index: 0, kind: "none", turnId: "s:turn-2" });
  const s = r.scored();
  assert.deepEqual([s.answers, s.selfCuts, s.extraTurns], [1, 0, 0]);
});

test("a final that comes late is the user's when its first partial came while the user talked", () => {
  const r = run();
  const caption = (at, text, isFinal = false) => r.entries.push({ kind: "caption", at, text, isFinal });
  r.say(0, "question", "what is the weather like today", 1000, 2600);
  caption(1500, "what");
  caption(3200, "what is that when");
  caption(6400, "what is that when i take a break", true); // 3.8 s after the words: a busy recognizer
  r.turn("s:turn-1", 6400, 6600, 12_000);
  r.say(1, "question", "what time is it", 14_000, 15_000);
  caption(15_700, "what time is it", true);
  r.turn("s:turn-2", 15_700, 15_900, 21_000, "final");
  caption(17_400, "would"); // the echo, 2.4 s after the words
  caption(18_200, "good", true);
  r.turn("s:turn-3", 18_200, 18_400, 24_000);
  r.rounds.push({ index: 0, kind: "none", turnId: "s:turn-1" }, { index: 1, kind: "none", turnId: "s:turn-2" });
  const s = r.scored();
  assert.deepEqual(s.extraTurnIds.map((t) => t.turnId), ["s:turn-3"]);
  assert.deepEqual(s.selfCutTurns.map((t) => t.turnId), ["s:turn-2"]);
});

test("a final's barge-in starts the next turn at once: the cut turn's last sound is not the next turn's", () => {
  const r = run();
  r.say(0, "question", "what time is it", 1000, 2000);
  r.say(0, "stop", "wait a moment", 5000, 5900);
  r.turn("s:turn-1", 3000, 3200, 7000, "final");
  r.turn("s:turn-2", 7000, 7250, 12_000); // its sound reaches the air at 7300, inside the cut's tail
  r.rounds.push({ index: 0, kind: "stop", turnId: "s:turn-1" });
  const s = r.scored();
  assert.deepEqual([s.stop.cut, s.stop.medianMs], [1, 2050]); // the air fell silent at 7050
  assert.deepEqual([s.perRound[0].heardMs, s.perRound[0].airMs], [3800, 3800]);
});

test("the voice detector's figures: utterances heard and how soon, starts no utterance explains", () => {
  const r = run();
  const vad = (at, speaking) => r.entries.push({ kind: "event", at, event: { type: "vad", speaking, atMs: at } });
  r.say(0, "question", "what time is it", 1000, 2000);
  vad(1120, true);
  vad(2300, false);
  r.turn("s:turn-1", 3000, 3200, 9000);
  r.say(0, "stop", "stop", 5000, 5400);
  vad(5090, true);
  vad(5700, false);
  vad(7000, true); // the agent's echo, while it sounds
  vad(7300, false);
  vad(12_000, true); // a noise after it
  r.rounds.push({ index: 0, kind: "stop", turnId: "s:turn-1" });
  const s = r.scored();
  assert.deepEqual(s.voice, { heard: 2, utterances: 2, onsetMedianMs: 90, onsetP90Ms: 120, falseStarts: 2, falseStartsWhileAgentSounds: 1 });
  assert.equal(voiceLine(s.voice), "vad: heard 2/2 utterances, onset median 90 ms p90 120 ms, 2 false starts (1 while the agent sounded)");
  // The noise at 12 s has no end yet: it has no length.
  assert.deepEqual(s.voiceLengths, {
    question: { n: 1, minMs: 1180, medianMs: 1180, maxMs: 1180 },
    stop: { n: 1, minMs: 610, medianMs: 610, maxMs: 610 },
    none: { n: 1, minMs: 300, medianMs: 300, maxMs: 300 },
  });
  assert.equal(voiceLengthsLine(s.voiceLengths), "vad lengths (min / median / max): question 1: 1180 / 1180 / 1180 ms; stop 1: 610 / 610 / 610 ms; none 1: 300 / 300 / 300 ms");
  assert.equal(voiceLengthsLine({}), "vad lengths (min / median / max): no voice");
});

test("a stop's path: first sound → vad start → paused → silence in the air; a stop cut with no pause is left out", () => {
  const r = run();
  r.say(0, "question", "what time is it", 1000, 2000);
  r.turn("s:turn-1", 3000, 3200, 5300, "voice");
  r.speaker.fill(0, (5170 + 50) / FRAME_MS, (5300 + 50) / FRAME_MS); // paused at 5170: silent from 5220
  r.say(0, "stop", "stop", 5000, 5400);
  r.entries.push({ kind: "event", at: 5150, event: { type: "vad", speaking: true, atMs: 5150 } });
  r.entries.push({ kind: "event", at: 5170, event: { type: "paused", turnId: "s:turn-1", cause: "voice" } });
  r.rounds.push({ index: 0, kind: "stop", turnId: "s:turn-1" });
  r.say(1, "question", "tell me a joke", 10_000, 11_000);
  r.turn("s:turn-2", 12_000, 12_200, 15_000, "final"); // cut by a final, never paused
  r.say(1, "stop", "stop", 14_500, 14_900);
  r.rounds.push({ index: 1, kind: "stop", turnId: "s:turn-2" });
  const s = r.scored();
  assert.deepEqual([s.stop.cut, s.stop.latenciesMs], [2, [220, 550]]);
  assert.deepEqual(s.stopPath, { stops: 1, toVadMs: 150, toPausedMs: 20, toSilenceMs: 50 });
  assert.equal(stopPathLine(s.stopPath), "stop path: first sound → vad 150 ms → paused 20 ms → silence 50 ms (medians of 1 stops the voice paused)");
});
