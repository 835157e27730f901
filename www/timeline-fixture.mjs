// A timeline entry list covering every mark the timeline draws, made of VoiceSession `onEvent`
// events (through `timelineEntry`, as the page does): the Node test checks the SVG of it, and the
// README picture is rendered from it when no live session is at hand.

import { timelineEntry } from "./timeline.mjs";

export function sampleEntries() {
  const entries = [];
  const event = (t, fields) => entries.push({ t, ...timelineEntry({ at: t, ...fields }) });
  const turn = event;
  let sentence = 0;
  // A turn_latency event: marks on the entries' clock here (the page's are epoch ms, which
  // timelineEntry takes back to its clock with `timeOrigin`).
  const latency = (turnId, marks) => ({ type: "turn_latency", turnId, ...marks, voiceToVoiceMs: marks.firstSoundAt - marks.speechEndAt });
  const add = (t, { kind, turnId, phase, state, ok, status, code, terminal, frames, heardMs, unheardMs }) => {
    if (kind === "sentence") event(t, { type: "sentence_queued", turnId, index: sentence++, recovery: false });
    else if (kind === "speech" && phase === "start") event(t, { type: "playback_started", turnId });
    else if (kind === "speech") event(t, { type: "playback_ended", turnId, cut: phase === "cut", heardMs: heardMs ?? 0, ...(phase === "cut" ? { unheardMs } : {}) });
    else if (kind === "barge_in") event(t, { type: "barge_in", turnId, cause: "partial" });
    else if (kind === "stt_state") event(t, { type: "transcriber_state", state, provisions: 0, connections: 0, framesDropped: 0 });
    else if (kind === "provision") event(t, { type: "provision_finished", ok, ...(status ? { status } : {}) });
    else if (kind === "stt_error") event(t, { type: "transcriber_error", code, terminal, ...(status ? { status } : {}), ...(frames ? { frames } : {}) });
  };
  add(0, { kind: "stt_state", state: "provisioning" });
  add(40, { kind: "provision", ok: true });
  add(40, { kind: "stt_state", state: "connecting" });
  add(90, { kind: "stt_state", state: "open" });
  // turn-1: an early guess (preemptive attempt) at 900, which the final's other words discard;
  // then the primary answers 500, the fallback streams the answer, spoken in full.
  turn(900, { type: "turn_started", turnId: "turn-1" });
  turn(900, { type: "attempt_started", turnId: "turn-1", requestId: "turn-1:preemptive:1", route: "primary", timeoutAt: 2400, preemptive: true });
  turn(1000, { type: "attempt_finished", turnId: "turn-1", requestId: "turn-1:preemptive:1", route: "primary", result: "discarded", durationMs: 100 });
  turn(1000, { type: "preemptive", turnId: "turn-1", requestId: "turn-1:preemptive:1", kept: false, reason: "text_changed" });
  turn(1000, { type: "attempt_started", turnId: "turn-1", requestId: "turn-1:attempt:1", route: "primary", timeoutAt: 2500 });
  turn(1060, { type: "attempt_finished", turnId: "turn-1", requestId: "turn-1:attempt:1", route: "primary", result: "error", error: "http_500", durationMs: 60 });
  turn(1060, { type: "attempt_started", turnId: "turn-1", requestId: "turn-1:attempt:2", route: "fallback", timeoutAt: 2560 });
  turn(1300, { type: "committed", turnId: "turn-1", requestId: "turn-1:attempt:2", route: "fallback", latencyMs: 300 });
  add(1400, { kind: "sentence", turnId: "turn-1" });
  add(1450, { kind: "speech", turnId: "turn-1", phase: "start" });
  turn(1451, latency("turn-1", { speechEndAt: 850, finalAt: 1000, routeCalledAt: 1060, firstTokenAt: 1290, firstSentenceAt: 1400, synthesizeAt: 1400, firstAudioAt: 1430, firstSoundAt: 1450.6, preemptive: "discarded" }));
  add(1700, { kind: "sentence", turnId: "turn-1" });
  turn(1750, { type: "attempt_finished", turnId: "turn-1", requestId: "turn-1:attempt:2", route: "fallback", result: "accepted", durationMs: 690 });
  turn(1750, { type: "accepted", turnId: "turn-1", requestId: "turn-1:attempt:2", route: "fallback", latencyMs: 750 });
  add(3400, { kind: "speech", turnId: "turn-1", phase: "end" });
  // The socket drops (1006): a backoff, the same URL again.
  add(3600, { kind: "stt_state", state: "backoff" });
  add(4100, { kind: "stt_state", state: "connecting" });
  add(4150, { kind: "stt_state", state: "open" });
  // turn-2: an early guess at 4400 that the final (4500) keeps: its route was called before the
  // final. Then the user talks over the answer.
  turn(4400, { type: "turn_started", turnId: "turn-2" });
  turn(4400, { type: "attempt_started", turnId: "turn-2", requestId: "turn-2:preemptive:2", route: "primary", timeoutAt: 5900, preemptive: true });
  turn(4500, { type: "preemptive", turnId: "turn-2", requestId: "turn-2:preemptive:2", kept: true });
  turn(4700, { type: "committed", turnId: "turn-2", requestId: "turn-2:preemptive:2", route: "primary", latencyMs: 200 });
  add(4800, { kind: "sentence", turnId: "turn-2" });
  add(4850, { kind: "speech", turnId: "turn-2", phase: "start" });
  turn(4851, latency("turn-2", { speechEndAt: 4250, finalAt: 4500, routeCalledAt: 4400, firstTokenAt: 4650, firstSentenceAt: 4800, synthesizeAt: 4800, firstAudioAt: 4830, firstSoundAt: 4850.4, preemptive: "kept" }));
  add(5100, { kind: "sentence", turnId: "turn-2" });
  turn(5200, { type: "attempt_finished", turnId: "turn-2", requestId: "turn-2:preemptive:2", route: "primary", result: "accepted", durationMs: 800 });
  turn(5200, { type: "accepted", turnId: "turn-2", requestId: "turn-2:preemptive:2", route: "primary", latencyMs: 700 });
  add(5900, { kind: "barge_in", turnId: "turn-2" });
  add(5900, { kind: "speech", turnId: "turn-2", phase: "cut", heardMs: 1050, unheardMs: 1400 });
  // The session dies (4403): a re-provision, then the server refuses: failed.
  add(6200, { kind: "stt_state", state: "provisioning" });
  add(6230, { kind: "provision", ok: false, status: 429 });
  add(6230, { kind: "stt_error", code: "audio_dropped", terminal: false, frames: 12 });
  // turn-3 (typed: its speech end is its final): both routes hang; the deadline brings the
  // recovery text. No route answered: no first token.
  turn(6500, { type: "turn_started", turnId: "turn-3" });
  turn(6500, { type: "attempt_started", turnId: "turn-3", requestId: "turn-3:attempt:1", route: "primary", timeoutAt: 7500 });
  turn(7500, { type: "attempt_finished", turnId: "turn-3", requestId: "turn-3:attempt:1", route: "primary", result: "timeout", error: "timeout", durationMs: 1000 });
  turn(7500, { type: "attempt_started", turnId: "turn-3", requestId: "turn-3:attempt:2", route: "fallback", timeoutAt: 8500 });
  turn(8500, { type: "attempt_finished", turnId: "turn-3", requestId: "turn-3:attempt:2", route: "fallback", result: "cancelled", durationMs: 1000 });
  turn(8500, { type: "recovered", turnId: "turn-3", reason: "deadline", latencyMs: 2000 });
  add(8600, { kind: "speech", turnId: "turn-3", phase: "start" });
  turn(8601, latency("turn-3", { speechEndAt: 6500, finalAt: 6500, routeCalledAt: 7500, firstTokenAt: null, firstSentenceAt: 8500, synthesizeAt: 8500, firstAudioAt: 8590, firstSoundAt: 8600.2, preemptive: "not_tried" }));
  add(9400, { kind: "speech", turnId: "turn-3", phase: "end" });
  add(9500, { kind: "stt_state", state: "failed" });
  add(9500, { kind: "stt_error", code: "provision_rejected", terminal: true, status: 401 });
  return entries;
}
