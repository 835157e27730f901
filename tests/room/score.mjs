// What a room run measured, from what the page reported (the session's events, each stamped with
// the page's wall clock) and what the air carried (the room's recording: the speaker channel and
// the user's utterances found in it). Pure: the harness (run.mjs) and the tests call it alike.
//
// Definitions (docs/maintainers/testing.md#the-room):
// - an answer is *completed* when the turn the user's question started played to its end
//   (`playback_ended` without `cut`);
// - what the recognizer heard is anchored where it began hearing it: a turn at the first caption
//   (partial) of the utterance whose final started it, a cut at its speech start or at the first
//   caption of the utterance whose partial or final made it. The user caused it when the anchor
//   falls between MIN_REACTION_MS after the user's first sound and ANCHOR_MS after the last (the
//   final itself, when no partial came before it: ATTRIBUTION_MS). Finals come 0.7–2 s after the
//   words, later on a loaded machine; the partials that lead to them come while the words sound;
// - a *cut* is a `barge_in` (any cause but the harness's own `button`). It is the user's when the
//   user caused it and talked on after its turn began (an interjection, or the rest of a question
//   a pause split in two); otherwise it is a *self-cut*: the agent cut by its own echo;
// - a turn the user did not cause is an *extra turn*;
// - a "stop" (or a backchannel) counts when the user's first sound fell while a turn of the agent
//   sounded in the air (its first sound to its last, or to its playback's end when the user began
//   in a gap between its words); it *cut* when that turn got a barge-in after
//   the user's first sound that is not a self-cut. Its latency runs from the user's first sound in
//   the air to that turn's last sound in the air.

import { firstSound, FRAME_MS, lastSoundEnd, quantile } from "./signal.mjs";

/**
 * How long after the end of the user's words the recognizer may begin to report them: its first
 * partial (ANCHOR_MS), or a final with no partial before it (ATTRIBUTION_MS). pocketsphinx's finals
 * came 0.7–2 s after the words in the runs recorded, up to 3.8 s on a loaded machine (the JSON has
 * each turn's `afterUserMs`), its first partials while the words sounded.
 */
export const ANCHOR_MS = 2000;
export const ATTRIBUTION_MS = 3000;
/** Slack between the page's wall clock and the recording's (the recorder's mapping, output latency). */
const CLOCK_SLACK_MS = 60;
/** After a cut, the air may still carry the last render quantum and the output's latency. */
const CUT_TAIL_MS = 400;

/**
 * The next turn's first sound is bounded this much before its `playback_started` (plus the lag
 * below): the lag varies by ±30 ms from turn to turn, and the next turn begins ≥ 100 ms after a
 * cut (it needs the model and the speech first).
 */
const NEXT_MARGIN_MS = 60;

/**
 * How much later a turn's first sound is in the recording than its `playback_started` on the
 * page's clock: the output's latency, less what the recording's wall-clock mapping is early by
 * (measured: -10 to +60 ms). The median over the turns that began after 500 ms of silence, so a
 * bound at the next turn's start does not take in its first sound.
 */
function eventToAir(playing, speaker, frameOfWall) {
  const lags = [];
  for (const t of playing) {
    const at = frameOfWall(t.playbackAt);
    if (lastSoundEnd(speaker, at - 800 / FRAME_MS, at - 300 / FRAME_MS) >= 0) continue;
    const first = firstSound(speaker, at - 300 / FRAME_MS, at + 1000 / FRAME_MS);
    if (first >= 0) lags.push((first - at) * FRAME_MS);
  }
  return quantile(lags, 0.5) ?? 0;
}

/** The session's turns from the page's entries: start, playback, barge-in and end, by turn id. */
export function turnsOf(entries) {
  const turns = new Map();
  const turn = (id) => {
    if (!turns.has(id)) turns.set(id, { turnId: id, startedAt: null, playbackAt: null, bargeIn: null, ended: null, input: null });
    return turns.get(id);
  };
  for (const entry of entries) {
    if (entry.kind === "turn" && entry.turnId) turn(entry.turnId).input = entry.input ?? null;
    if (entry.kind !== "event" || !entry.event?.turnId) continue;
    const { event } = entry;
    const at = entry.at;
    const t = turn(event.turnId);
    if (event.type === "turn_started") t.startedAt ??= at;
    else if (event.type === "playback_started") t.playbackAt ??= at;
    else if (event.type === "barge_in") t.bargeIn ??= { at, cause: event.cause };
    else if (event.type === "playback_ended") t.ended ??= { at, cut: event.cut === true, heardMs: event.heardMs, unheardMs: event.unheardMs };
  }
  return [...turns.values()].filter((t) => t.startedAt !== null).sort((a, b) => a.startedAt - b.startedAt);
}

/** Pauses of the agent (V7) and how many of them resumed, by cause. */
export function pausesOf(entries) {
  const events = entries.filter((e) => e.kind === "event").map((e) => e.event);
  const paused = events.filter((e) => e.type === "paused");
  const byCause = {};
  for (const e of paused) byCause[e.cause] = (byCause[e.cause] ?? 0) + 1;
  return { paused: paused.length, resumed: events.filter((e) => e.type === "resumed").length, byCause };
}

/**
 * No recognizer reacts to words this soon after their first sound (pocketsphinx's speech starts
 * came 450 ms or more after it in the runs recorded): what happens sooner was heard before them.
 */
export const MIN_REACTION_MS = 150;

/**
 * Where the recognizer began hearing what it reported at `at`: the first caption since the last
 * final before `at` (the utterance `at` belongs to), with whether it was a partial.
 */
function anchorOf(captions, at) {
  let first = null;
  let previous = null;
  for (const c of captions) {
    if (c.at > at + 5) break;
    // Partials come every 0.3 s of speech (1.7 s apart at worst from a busy recognizer): after a
    // longer silence (an utterance that ended with no final: noise decoded to nothing) a new one began.
    if (first === null || c.at - previous.at > 4000) first = c;
    if (c.isFinal && c.at < at - 5) first = null;
    previous = c;
  }
  return first && !first.isFinal ? { at: first.at, windowMs: ANCHOR_MS } : { at, windowMs: ATTRIBUTION_MS };
}

/**
 * Whether the user's words could have caused what the recognizer began hearing at `anchor`; for a
 * cut (`startedAt`: its turn's start), the words also went on after the turn began.
 */
const byUser = (anchor, utterances, startedAt = -Infinity) =>
  utterances.some((u) => u.onsetAt + MIN_REACTION_MS <= anchor.at + CLOCK_SLACK_MS && u.endAt >= anchor.at - anchor.windowMs && u.endAt > startedAt - CLOCK_SLACK_MS);

/**
 * The frame from which the turn `t` that `interjection` cut was silent: its last sound, or, when the
 * user began in a gap between its words, where its first pause after that (or the cut) fell.
 */
function silentFrom(t, interjection, entries, airFrameOf) {
  if (t.air[1] > interjection.onsetFrame) return t.air[1];
  const pause = entries.find((e) => e.kind === "event" && e.event.type === "paused" && e.event.turnId === t.turnId && e.at >= interjection.onsetAt);
  return Math.min(airFrameOf(pause?.at ?? t.bargeIn.at), t.playingUntil);
}

/**
 * Scores a run. `entries`: the page's reports; `utterances`: what the user said, each
 * `{ kind: "question" | "stop" | "backchannel", text, round, onsetAt, endAt, onsetFrame }` (found in
 * the recording); `rounds`: `{ index, kind, turnId }` (the turn the harness took for the question's
 * answer); `speaker`: the speaker channel's envelope; `frameOfWall(at)`: the recording's frame at
 * a wall-clock time.
 */
export function score({ entries, utterances, rounds, speaker, frameOfWall }) {
  const turns = turnsOf(entries);
  const cuts = turns.filter((t) => t.bargeIn && t.bargeIn.cause !== "button");
  const captions = entries.filter((e) => e.kind === "caption" && e.text.trim() !== "");
  // A cut by voice (V7) is the detector's: what it heard began at most confirmMs before the cut.
  const cutAnchor = (t) => (t.bargeIn.cause === "voice" ? { at: t.bargeIn.at, windowMs: ANCHOR_MS } : anchorOf(captions, t.bargeIn.at));
  const selfCuts = cuts.filter((t) => !byUser(cutAnchor(t), utterances, t.startedAt));
  const extraTurns = turns.filter((t) => !byUser(anchorOf(captions, t.startedAt), utterances));
  // Each turn in the air: from its first sound after its playback started to its last sound
  // before its playback ended (plus the output's tail, but not into the next turn's audio: a
  // final's barge-in starts that turn at once, and its first sound can follow within 300 ms), in
  // recording frames.
  const playing = turns.filter((t) => t.playbackAt !== null).sort((a, b) => a.playbackAt - b.playbackAt);
  const lagMs = eventToAir(playing, speaker, frameOfWall);
  for (const [i, t] of playing.entries()) {
    const from = frameOfWall(t.playbackAt + lagMs) - 100 / FRAME_MS;
    const next = playing[i + 1]?.playbackAt ?? Infinity;
    const to = t.ended ? frameOfWall(Math.min(t.ended.at + CUT_TAIL_MS, next + lagMs - NEXT_MARGIN_MS)) : Math.min(speaker.length, frameOfWall(next + lagMs - NEXT_MARGIN_MS));
    const start = firstSound(speaker, from, to);
    if (start < 0) continue;
    t.air = [start, lastSoundEnd(speaker, start, to)];
    // Until its playback ended, a silence inside the turn is a gap between its words, and a pause
    // (V7) can fall in one: the user's words there fell into the turn, though the air was quiet.
    t.playingUntil = t.ended ? Math.max(t.air[1], frameOfWall(t.ended.at + lagMs)) : t.air[1];
  }

  const perRound = rounds.map((round) => {
    const question = utterances.find((u) => u.round === round.index && u.kind === "question");
    const interjection = utterances.find((u) => u.round === round.index && u.kind !== "question") ?? null;
    const answer = round.turnId ? turns.find((t) => t.turnId === round.turnId) : undefined;
    const result = { index: round.index, kind: round.kind, question: question?.text ?? null, turnId: answer?.turnId ?? null, input: answer?.input ?? null, answered: Boolean(answer?.air), completed: Boolean(answer?.ended && !answer.ended.cut) };
    if (!interjection) return { ...result, interjection: null };
    // What the interjection fell into: the turn sounding in the air at the user's first sound.
    const into = turns.find((t) => t.air && t.air[0] <= interjection.onsetFrame && interjection.onsetFrame < t.playingUntil);
    // Whether the recognizer heard the interjection at all: a caption or a barge-in, from soon
    // after its first sound to ATTRIBUTION_MS after its end.
    const heard = entries.some((e) => e.at >= interjection.onsetAt + MIN_REACTION_MS - CLOCK_SLACK_MS && e.at <= interjection.endAt + ATTRIBUTION_MS && ((e.kind === "caption" && e.text.trim() !== "") || (e.kind === "event" && e.event.type === "barge_in")));
    // What the recognizer wrote for it (its finals, soon after its first sound to ATTRIBUTION_MS
    // after its end), and whether the session took that for a backchannel (its event).
    const written = entries.filter((e) => e.at >= interjection.onsetAt + MIN_REACTION_MS - CLOCK_SLACK_MS && e.at <= interjection.endAt + ATTRIBUTION_MS);
    const finals = written.filter((e) => e.kind === "caption" && e.isFinal && e.text.trim() !== "").map((e) => e.text.trim());
    const tookForBackchannel = written.some((e) => e.kind === "event" && e.event.type === "backchannel");
    const base = { ...result, interjection: interjection.text, interjectionKind: interjection.kind, heard, inAnswer: Boolean(into), finals, tookForBackchannel };
    if (!into) return base;
    // Cut by the user's words: after they began, and not a self-cut (what the recognizer acted on
    // began before them: the echo).
    const cut = Boolean(into.bargeIn && !selfCuts.includes(into) && into.bargeIn.cause !== "button" && into.bargeIn.at + CLOCK_SLACK_MS >= interjection.onsetAt + MIN_REACTION_MS);
    return {
      ...base,
      intoTurnId: into.turnId,
      intoAnswerMs: Math.round((interjection.onsetFrame - into.air[0]) * FRAME_MS),
      cut,
      cause: cut ? into.bargeIn.cause : null,
      latencyMs: cut ? Math.round((silentFrom(into, interjection, entries, (at) => frameOfWall(at + lagMs)) - interjection.onsetFrame) * FRAME_MS) : null,
      // The audio clock's heard milliseconds of the cut turn, beside what sounded in the air (P3).
      heardMs: into.ended?.heardMs ?? null,
      airMs: Math.round((into.air[1] - into.air[0]) * FRAME_MS),
    };
  });

  const stops = perRound.filter((r) => r.interjectionKind === "stop" && r.inAnswer);
  const backchannels = perRound.filter((r) => r.interjectionKind === "backchannel" && r.inAnswer);
  const latencies = stops.filter((r) => r.cut).map((r) => r.latencyMs);
  return {
    voice: voiceDetection({ entries, utterances, turns, frameOfWall }),
    stopPath: stopPath({ entries, utterances, perRound }),
    voiceLengths: voiceLengths({ entries, utterances }),
    eventToAirMs: lagMs,
    rounds: rounds.length,
    answered: perRound.filter((r) => r.answered).length,
    answers: perRound.filter((r) => r.completed).length,
    selfCuts: selfCuts.length,
    extraTurns: extraTurns.length,
    stop: { cut: latencies.length, total: stops.length, medianMs: quantile(latencies, 0.5), p90Ms: quantile(latencies, 0.9), latenciesMs: latencies },
    backchannels: { cut: backchannels.filter((r) => r.cut).length, total: backchannels.length },
    words: { stops: byWords(stops), backchannels: byWords(backchannels) },
    // V7: how often the user's voice (or a provider's speech start) paused the agent, and how
    // many of those pauses nothing confirmed (the agent went on).
    pauses: pausesOf(entries),
    turns: turns.length,
    selfCutTurns: selfCuts.map((t) => ({ turnId: t.turnId, cause: t.bargeIn.cause, at: t.bargeIn.at })),
    extraTurnIds: extraTurns.map((t) => ({ turnId: t.turnId, input: t.input, at: t.startedAt })),
    // Every turn, with how long after the end of the user's last words before it it started, the
    // recognizer began hearing it, and it was cut: what ANCHOR_MS and ATTRIBUTION_MS must cover.
    turnList: turns.map((t) => {
      const since = (at) => {
        const before = utterances.filter((u) => u.onsetAt <= at + CLOCK_SLACK_MS);
        return before.length === 0 ? null : Math.round(at - Math.max(...before.map((u) => u.endAt)));
      };
      const heardFrom = anchorOf(captions, t.startedAt).at;
      return { turnId: t.turnId, input: t.input, afterUserMs: since(t.startedAt), heardFromAfterUserMs: since(heardFrom), cut: t.bargeIn?.cause ?? null, cutAfterUserMs: t.bargeIn ? since(t.bargeIn.at) : null, heardMs: t.ended?.heardMs ?? null };
    }),
    perRound,
  };
}

/**
 * The interjections `rounds` split by what the recognizer wrote for them, each `{ n, cut }`: a
 * final the session took for a backchannel, only other words, or no final. The session's rule
 * (V6, V7) is that the first never cuts and the last cuts only for voice that lasts `confirmMs`:
 * where a figure misses its target, this says whether the words or the rule missed it.
 */
function byWords(rounds) {
  const split = (pick) => {
    const picked = rounds.filter(pick);
    return { n: picked.length, cut: picked.filter((r) => r.cut).length };
  };
  return {
    backchannel: split((r) => r.tookForBackchannel),
    otherWords: split((r) => !r.tookForBackchannel && r.finals.length > 0),
    none: split((r) => !r.tookForBackchannel && r.finals.length === 0),
  };
}

/** The words' line: how the recognizer wrote the stops and backchannels, and how many of each cut. */
export function wordsLine(s) {
  const part = ({ backchannel, otherWords, none }) =>
    `as a backchannel ${backchannel.n} (${backchannel.cut} cut), as other words ${otherWords.n} (${otherWords.cut} cut), no final ${none.n} (${none.cut} cut)`;
  return `words: stops ${part(s.words.stops)}; backchannels ${part(s.words.backchannels)}`;
}

/** The detector's silence after the last voiced block (src/core/voice/vad.rs: HANGOVER_MS). */
const VAD_HANGOVER_MS = 240;

/** A `vad` start at `at` belongs to utterance `u`: from its first sound (less the clock slack) to its end and the hangover. */
const voiceOf = (u, at) => at >= u.onsetAt - CLOCK_SLACK_MS && at <= u.endAt + VAD_HANGOVER_MS;

/**
 * What the page's voice detector made of the room: each of the user's utterances heard (a `vad`
 * start from its first sound to its end), how long after its first sound in the air the page knew
 * (the event's wall-clock time: onset, capture and detection together), and the starts no
 * utterance explains — the agent's echo or noise — with how many fell while an answer sounded.
 * `air`: each turn's `[first, last]` sound in recording frames (from `score`), `frameOfWall`.
 */
export function voiceDetection({ entries, utterances, turns = [], frameOfWall = null }) {
  const starts = entries.filter((e) => e.kind === "event" && e.event?.type === "vad" && e.event.speaking).map((e) => e.at);
  const onsets = [];
  const explained = new Set();
  for (const u of utterances) {
    const start = starts.find((at) => voiceOf(u, at));
    if (start !== undefined) onsets.push(start - u.onsetAt);
    for (const at of starts) if (voiceOf(u, at)) explained.add(at);
  }
  const unexplained = starts.filter((at) => !explained.has(at));
  const sounding = (at) => frameOfWall !== null && turns.some((t) => t.air && t.air[0] <= frameOfWall(at) && frameOfWall(at) <= t.air[1]);
  return {
    heard: onsets.length,
    utterances: utterances.length,
    onsetMedianMs: quantile(onsets, 0.5),
    onsetP90Ms: quantile(onsets, 0.9),
    falseStarts: unexplained.length,
    falseStartsWhileAgentSounds: unexplained.filter(sounding).length,
  };
}

/**
 * How long each voice lasted to the page's detector (its `vad` start to its end, in captured audio:
 * first voiced block to last), by the kind of utterance whose start explains it, and for the voices
 * no utterance explains (the agent's echo or noise: `none`). What a rule on a voice's length would
 * have to tell apart: the user's "stop" over the agent and the canceller's leaks.
 */
export function voiceLengths({ entries, utterances }) {
  const lengths = {};
  let start = null;
  for (const e of entries) {
    if (e.kind !== "event" || e.event?.type !== "vad") continue;
    if (e.event.speaking) start = e;
    else if (start) {
      const said = utterances.find((u) => voiceOf(u, start.at));
      (lengths[said ? said.kind : "none"] ??= []).push(e.event.atMs - start.event.atMs);
      start = null;
    }
  }
  return Object.fromEntries(
    Object.entries(lengths).map(([kind, values]) => [kind, { n: values.length, minMs: Math.min(...values), medianMs: quantile(values, 0.5), maxMs: Math.max(...values) }]),
  );
}

/** A figure of the lines below in whole milliseconds, "-" when there is none. */
const ms = (value) => (value === null ? "-" : String(Math.round(value)));

/** The voices' lengths, one kind after another. */
export function voiceLengthsLine(lengths) {
  const kinds = Object.entries(lengths).map(([kind, l]) => `${kind} ${l.n}: ${ms(l.minMs)} / ${ms(l.medianMs)} / ${ms(l.maxMs)} ms`);
  return `vad lengths (min / median / max): ${kinds.length ? kinds.join("; ") : "no voice"}`;
}

/** The detector's line. */
export function voiceLine(v) {
  return `vad: heard ${v.heard}/${v.utterances} utterances, onset median ${ms(v.onsetMedianMs)} ms p90 ${ms(v.onsetP90Ms)} ms, ${v.falseStarts} false starts (${v.falseStartsWhileAgentSounds} while the agent sounded)`;
}

/**
 * Where a cut stop's latency goes, medians over the cut stops the page's voice paused: from the
 * user's first sound in the air to the `vad` start on the page (capture, transport and the
 * detector's onset), on to the cut turn's `paused` event (`minSpeechMs`), on to its last sound in
 * the air (the output's latency). Stops a final cut with no pause before it are left out.
 */
export function stopPath({ entries, utterances, perRound }) {
  const legs = { toVadMs: [], toPausedMs: [], toSilenceMs: [] };
  for (const r of perRound) {
    if (r.interjectionKind !== "stop" || !r.cut) continue;
    const said = utterances.find((u) => u.round === r.index && u.kind === "stop");
    if (!said) continue;
    const silenceAt = said.onsetAt + r.latencyMs;
    const within = (e) => e.kind === "event" && e.at >= said.onsetAt - CLOCK_SLACK_MS && e.at <= silenceAt;
    const vad = entries.find((e) => within(e) && e.event.type === "vad" && e.event.speaking);
    const paused = entries.find((e) => within(e) && e.event.type === "paused" && e.event.turnId === r.intoTurnId);
    if (!vad || !paused || paused.at < vad.at) continue;
    legs.toVadMs.push(vad.at - said.onsetAt);
    legs.toPausedMs.push(paused.at - vad.at);
    legs.toSilenceMs.push(silenceAt - paused.at);
  }
  const median = (values) => quantile(values, 0.5);
  return { stops: legs.toVadMs.length, toVadMs: median(legs.toVadMs), toPausedMs: median(legs.toPausedMs), toSilenceMs: median(legs.toSilenceMs) };
}

/** The stop path's line. */
export function stopPathLine(p) {
  return `stop path: first sound → vad ${ms(p.toVadMs)} ms → paused ${ms(p.toPausedMs)} ms → silence ${ms(p.toSilenceMs)} ms (medians of ${p.stops} stops the voice paused)`;
}

/** The run's one line. */
export function summaryLine(s) {
  const pauses = s.pauses ? `, pauses ${s.pauses.paused} (${s.pauses.resumed} resumed)` : "";
  return `room: ${s.answers} answers, ${s.selfCuts} self-cuts, ${s.extraTurns} extra turns, stop cut ${s.stop.cut}/${s.stop.total} median ${ms(s.stop.medianMs)} ms p90 ${ms(s.stop.p90Ms)} ms, backchannels cut ${s.backchannels.cut}/${s.backchannels.total}${pauses}`;
}
