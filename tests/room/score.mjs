// What a room run measured, from what the page reported (the session's events, each stamped with
// the page's wall clock) and what the air carried (the room's recording: the speaker channel and
// the user's utterances found in it). Pure: the harness (run.mjs) and the tests call it alike.
//
// Definitions (docs/maintainers/testing.md#the-room):
// - an answer is *completed* when the turn the user's question started played to its end
//   (`playback_ended` without `cut`);
// - a *cut* is a `barge_in` (any cause but the harness's own `button`). It is the user's when an
//   interjection (not a question) began before it and ended at most ATTRIBUTION_MS before it;
//   otherwise it is a *self-cut*: the agent cut by its own echo;
// - a turn is the user's when one of the user's utterances began before its `turn_started` and
//   ended at most ATTRIBUTION_MS before it; otherwise it is an *extra turn*;
// - a "stop" (or a backchannel) counts when the user's first sound fell while the answer sounded
//   in the air; it *cut* when the answer's turn got a barge-in after that first sound. Its latency
//   runs from the user's first sound in the air to the answer's last sound in the air.

import { FRAME_MS, lastSoundEnd, quantile } from "./signal.mjs";

/** How long after the end of the user's words a recognizer's final (or barge-in) may still come. */
export const ATTRIBUTION_MS = 5000;
/** Slack between the page's wall clock and the recording's (the recorder's mapping, output latency). */
const CLOCK_SLACK_MS = 60;
/** After a cut, the air may still carry the last render quantum and the output's latency. */
const CUT_TAIL_MS = 400;

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

const userCaused = (at, utterances, kinds) =>
  utterances.some((u) => kinds.includes(u.kind) && u.onsetAt <= at + CLOCK_SLACK_MS && u.endAt >= at - ATTRIBUTION_MS);

/**
 * Scores a run. `entries`: the page's reports; `utterances`: what the user said, each
 * `{ kind: "question" | "stop" | "backchannel", text, round, onsetAt, endAt, onsetFrame }` (found in
 * the recording); `rounds`: `{ index, kind, answerOnsetFrame }`; `speaker`: the speaker channel's
 * envelope; `frameOfWall(at)`: the recording's frame at a wall-clock time.
 */
export function score({ entries, utterances, rounds, speaker, frameOfWall }) {
  const turns = turnsOf(entries);
  const cuts = turns.filter((t) => t.bargeIn && t.bargeIn.cause !== "button");
  const selfCuts = cuts.filter((t) => !userCaused(t.bargeIn.at, utterances, ["stop", "backchannel"]));
  const extraTurns = turns.filter((t) => !userCaused(t.startedAt, utterances, ["question", "stop", "backchannel"]));

  const perRound = rounds.map((round) => {
    const question = utterances.find((u) => u.round === round.index && u.kind === "question");
    const interjection = utterances.find((u) => u.round === round.index && u.kind !== "question") ?? null;
    const next = utterances.find((u) => u.round === round.index + 1 && u.kind === "question");
    const answer = question ? turns.find((t) => t.startedAt >= question.onsetAt - CLOCK_SLACK_MS && (!next || t.startedAt < next.onsetAt)) : undefined;
    const result = { index: round.index, kind: round.kind, question: question?.text ?? null, turnId: answer?.turnId ?? null, input: answer?.input ?? null, answered: Boolean(answer?.playbackAt), completed: Boolean(answer?.ended && !answer.ended.cut) };
    if (!answer || !interjection) return { ...result, interjection: interjection?.text ?? null };
    // The answer in the air: its first sound (found by the harness) to its last sound before its
    // playback ended (or the recording's end).
    const endFrame = answer.ended ? frameOfWall(answer.ended.at + CUT_TAIL_MS) : speaker.length;
    const from = round.answerOnsetFrame ?? frameOfWall(answer.playbackAt);
    const airEnd = lastSoundEnd(speaker, from, endFrame);
    const inAnswer = airEnd > interjection.onsetFrame && interjection.onsetFrame >= from;
    const cut = Boolean(inAnswer && answer.bargeIn && answer.bargeIn.cause !== "button" && answer.bargeIn.at >= interjection.onsetAt - CLOCK_SLACK_MS);
    return {
      ...result,
      interjection: interjection.text,
      interjectionKind: interjection.kind,
      intoAnswerMs: Math.round((interjection.onsetFrame - from) * FRAME_MS),
      inAnswer,
      cut,
      cause: cut ? answer.bargeIn.cause : null,
      latencyMs: cut ? Math.round((airEnd - interjection.onsetFrame) * FRAME_MS) : null,
      heardMs: answer.ended?.heardMs ?? null,
      airMs: Math.round((airEnd - from) * FRAME_MS),
    };
  });

  const stops = perRound.filter((r) => r.interjectionKind === "stop" && r.inAnswer);
  const backchannels = perRound.filter((r) => r.interjectionKind === "backchannel" && r.inAnswer);
  const latencies = stops.filter((r) => r.cut).map((r) => r.latencyMs);
  return {
    rounds: rounds.length,
    answered: perRound.filter((r) => r.answered).length,
    answers: perRound.filter((r) => r.completed).length,
    selfCuts: selfCuts.length,
    extraTurns: extraTurns.length,
    stop: { cut: latencies.length, total: stops.length, medianMs: quantile(latencies, 0.5), p90Ms: quantile(latencies, 0.9), latenciesMs: latencies },
    backchannels: { cut: backchannels.filter((r) => r.cut).length, total: backchannels.length },
    turns: turns.length,
    selfCutTurns: selfCuts.map((t) => ({ turnId: t.turnId, cause: t.bargeIn.cause, at: t.bargeIn.at })),
    extraTurnIds: extraTurns.map((t) => ({ turnId: t.turnId, input: t.input, at: t.startedAt })),
    perRound,
  };
}

/** The run's one line. */
export function summaryLine(s) {
  const ms = (v) => (v === null ? "-" : String(Math.round(v)));
  return `room: ${s.answers} answers, ${s.selfCuts} self-cuts, ${s.extraTurns} extra turns, stop cut ${s.stop.cut}/${s.stop.total} median ${ms(s.stop.medianMs)} ms p90 ${ms(s.stop.p90Ms)} ms, backchannels cut ${s.backchannels.cut}/${s.backchannels.total}`;
}
