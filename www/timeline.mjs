// The demo's live timeline: pure functions from the list of what the app was told (VoiceSession
// `onEvent`: the TurnController's events and the session's own) to an SVG string. No DOM, no
// clock: the page passes `now`, and Node tests it.
//
// An entry is `{ t, session?, kind, ... }`, `t` in milliseconds on one clock (the page's
// performance.now()), `session` which VoiceSession it came from (turn ids restart with each);
// `timelineEntry(event)` makes one of an `onEvent` event:
//   { kind: "turn", event }                          a TurnController onEvent event
//   { kind: "sentence", turnId, index, recovery }    a sentence joined the speech queue
//   { kind: "speech", turnId, phase, heardMs?, unheardMs? }
//                                                    playback "start", "end", or "cut" (barge-in:
//                                                    heardMs played, unheardMs of audio never played)
//   { kind: "barge_in", turnId, cause }              the user cut the answer (voice, partial, final, button)
//   { kind: "stt_state", state }                     transcriber_state
//   { kind: "stt_error", code, terminal, frames? }   transcriber_error
//   { kind: "provision", ok, status? }               provision_finished: the app's provision() settled
//   { kind: "stt_close", code, class, next, delayMs } transcriber_close: the transcriber's own report
//                                                    of a close (LiveTranscriber onEvent); once a
//                                                    session reports closes, none is inferred
//   { kind: "stt_hint", hint, utterance }            the transcriber's eager_end_of_turn (the provider
//                                                    guesses the turn ended: a preemptive attempt may
//                                                    start) or turn_resumed (the user went on)
//   { kind: "latency", turnId, marks, voiceToVoiceMs, preemptive }
//                                                    turn_latency: where the turn's time went,
//                                                    `marks` (LATENCY_MARKS) on the entries' clock,
//                                                    null where a step never happened
// A `preemptive` event (an early attempt kept or discarded, T17) stays a "turn" entry: it marks
// its attempt.
// Each keeps its `event` for the record. Other kinds (the page's `state` and
// `error` entries, `other` for an event of no turn) are kept for the record and not drawn.

/**
 * The marks of a `turn_latency` event, in the order a turn goes through them: `[name, the
 * event's field, the tick's label]`.
 */
export const LATENCY_MARKS = Object.freeze([
  ["speechEnd", "speechEndAt", "speech end"],
  ["final", "finalAt", "final"],
  ["routeCalled", "routeCalledAt", "route"],
  ["firstToken", "firstTokenAt", "token"],
  ["firstSentence", "firstSentenceAt", "sentence"],
  ["synthesize", "synthesizeAt", "synth"],
  ["firstAudio", "firstAudioAt", "audio"],
  ["firstSound", "firstSoundAt", "sound"],
]);

/**
 * The timeline entry of one VoiceSession `onEvent` event (without `t`). `timeOrigin`: what to
 * subtract from the epoch-millisecond marks of `turn_latency` to put them on the entries' clock
 * (the page passes `performance.timeOrigin`; this module reads no clock).
 */
export function timelineEntry(event, { timeOrigin = 0 } = {}) {
  const { turnId } = event;
  switch (event.type) {
    case "turn_latency": {
      const marks = {};
      for (const [name, field] of LATENCY_MARKS) {
        const value = event[field];
        marks[name] = typeof value === "number" && Number.isFinite(value) ? value - timeOrigin : null;
      }
      return { kind: "latency", turnId, marks, voiceToVoiceMs: event.voiceToVoiceMs ?? null, preemptive: event.preemptive ?? "not_tried", event };
    }
    case "sentence_queued":
      return { kind: "sentence", turnId, index: event.index, recovery: event.recovery, event };
    case "playback_started":
      return { kind: "speech", turnId, phase: "start", event };
    case "playback_ended":
      return { kind: "speech", turnId, phase: event.cut ? "cut" : "end", heardMs: event.heardMs, unheardMs: event.unheardMs, event };
    case "barge_in":
      return { kind: "barge_in", turnId, cause: event.cause, event };
    case "transcriber_state":
      return { kind: "stt_state", state: event.state, event };
    case "transcriber_error":
      return { kind: "stt_error", code: event.code, terminal: event.terminal, frames: event.frames, event };
    case "provision_finished":
      return { kind: "provision", ok: event.ok, status: event.status, event };
    case "transcriber_close":
      return { kind: "stt_close", code: event.code, class: event.class, next: event.next, delayMs: event.delayMs, event };
    case "tts_first_byte":
      return { kind: "audio_mark", turnId, mark: "byte", index: event.index, event };
    case "sentence_audio":
      // Its first sound: when it was scheduled plus how far ahead on the audio clock.
      return { kind: "audio_mark", turnId, mark: "sound", index: event.index, aheadMs: event.startsInMs, event };
    case "tts_started":
    case "tts_finished":
    case "tts_failed":
      return { kind: "tts", turnId, event };
    case "transcriber_eager_end_of_turn":
    case "transcriber_turn_resumed":
      return { kind: "stt_hint", hint: event.type.slice("transcriber_".length), utterance: event.utterance, event };
    default:
      // An event of no turn (a callback_error, a transcriber event of a later kind) is kept for the
      // record and not drawn.
      return typeof turnId === "string" ? { kind: "turn", event } : { kind: "other", event };
  }
}

const NEXT = { reconnect_same_url: "reconnect", reprovision: "provision a new session", stop: "stop" };

/** "socket closed 3009 (throttled): reconnect after 10000 ms", from the transcriber's report. */
export function closeLabel({ code, class: kind, next, delayMs }) {
  const then = next === "stop" ? "stop" : `${NEXT[next] ?? next} after ${Math.round(delayMs ?? 0)} ms`;
  return `socket closed ${code} (${kind}): ${then}`;
}

/** Colours by attempt result and by STT state; the legend uses the same. */
export const RESULT_COLOURS = Object.freeze({
  accepted: "#2e9d4f",
  running: "#4a7fd6",
  timeout: "#e08a1e",
  error: "#d23f3f",
  cancelled: "#9a9a9a",
  late: "#8e5cc2",
  discarded: "#c2c2c2",
});
/** The latency row's colour by what became of the turn's preemptive attempt. */
export const PREEMPTIVE_COLOURS = Object.freeze({ not_tried: "#5d6b7a", kept: "#2e9d4f", discarded: "#9a9a9a" });
export const STT_COLOURS = Object.freeze({
  provisioning: "#c9b8ef",
  connecting: "#f2d184",
  open: "#8fd1a0",
  backoff: "#f3a7a7",
  idle: "#eeeeee",
  stopped: "#d5d5d5",
  failed: "#d23f3f",
});

const LABEL_WIDTH = 92;
const ROW = 14;
const LANE_GAP = 10;
const MAX_TURNS = 8;
/** The latency row under a turn's lane: a bar with ticks, then two lines of tick labels. */
const LATENCY_HEIGHT = 34;
/** The most of the plot the latency bars use (on their own scale); the rest is for the figure. */
const LATENCY_SHARE = 0.6;
/** About how wide a character of the voice-to-voice figure is (10px, bold). */
const FIGURE_CHAR_PX = 6;

/** Folds the entries into turns, the STT lane and the counters. */
export function timelineModel(entries, { now, turnDeadlineMs, windowMs } = {}) {
  const turns = new Map();
  const stt = { segments: [], marks: [], provisions: 0 };
  const counters = { llmCalls: 0, recoveries: 0, reprovisions: 0, droppedFrames: 0 };
  let session = null;
  const turnOf = (id, t) => {
    const key = `${session} ${id}`;
    if (!turns.has(key)) {
      // Turn ids are `<sessionId>:turn-<n>`: the lane shows `turn-<n>`, with the session's number
      // after the first session.
      const name = id.slice(id.lastIndexOf(":") + 1);
      const turnId = session > 1 ? `${name} (session ${session})` : name;
      turns.set(key, { turnId, start: t, end: null, status: "running", reason: null, deadlineAt: null, attempts: [], sentences: [], marks: [], speech: null, bargeIn: null, latency: null, pending: false, events: [] });
    }
    return turns.get(key);
  };
  let sttState = null;
  let sttSession = null;
  let closesReported = false; // this session's transcriber reports its closes (onEvent)
  for (const entry of entries) {
    const { t } = entry;
    session = entry.session ?? null;
    if (entry.kind === "turn" && typeof entry.event?.turnId === "string") {
      const { event } = entry;
      const turn = turnOf(event.turnId, t);
      turn.events.push(entry);
      applyTurnEvent(turn, event, t, counters, turnDeadlineMs);
    } else if (entry.kind === "sentence") {
      turnOf(entry.turnId, t).sentences.push(t);
    } else if (entry.kind === "audio_mark") {
      turnOf(entry.turnId, t).marks.push({ t: t + (entry.aheadMs ?? 0), mark: entry.mark, index: entry.index });
    } else if (entry.kind === "speech") {
      const turn = turnOf(entry.turnId, t);
      if (entry.phase === "start") turn.speech = { start: t, end: null, heardEnd: null, cut: false, unheardMs: 0 };
      else if (turn.speech) {
        turn.speech.end = t;
        turn.speech.cut = entry.phase === "cut";
        turn.speech.heardEnd = entry.heardMs === undefined ? t : turn.speech.start + entry.heardMs;
        turn.speech.unheardMs = entry.unheardMs ?? 0;
      }
    } else if (entry.kind === "latency") {
      turnOf(entry.turnId, t).latency = { marks: entry.marks, voiceToVoiceMs: entry.voiceToVoiceMs, preemptive: entry.preemptive };
    } else if (entry.kind === "barge_in") {
      const turn = turnOf(entry.turnId, t);
      turn.bargeIn = t;
      turn.bargeInCause = entry.cause ?? null;
    } else if (entry.kind === "stt_state") {
      // A new session's transcriber starts afresh: its first provisioning is no re-provision,
      // and what its predecessor was doing is no close.
      if ((entry.session ?? null) !== sttSession) {
        sttSession = entry.session ?? null;
        sttState = null;
        stt.provisions = 0;
        closesReported = false;
      }
      const last = stt.segments.at(-1);
      if (last) last.to = t;
      // Leaving `open` for `backoff` or `provisioning` means the socket closed.
      if (!closesReported && sttState === "open" && (entry.state === "backoff" || entry.state === "provisioning")) {
        stt.marks.push({ t, type: "close", label: entry.state === "backoff" ? "socket closed: reconnect to the same URL after a backoff" : "socket closed 4xxx: the session is dead, provision a new one" });
      }
      if (entry.state === "provisioning") {
        stt.provisions += 1;
        if (stt.provisions > 1) counters.reprovisions += 1;
      }
      stt.segments.push({ state: entry.state, from: t, to: null });
      sttState = entry.state;
    } else if (entry.kind === "stt_close") {
      closesReported = true;
      stt.marks.push({ t, type: "close", label: closeLabel(entry) });
    } else if (entry.kind === "stt_hint") {
      const what = entry.hint === "eager_end_of_turn" ? "eager end of turn: the provider guesses the user is done" : "turn resumed: the user went on";
      stt.marks.push({ t, type: "hint", label: `${what}${entry.utterance !== undefined ? ` (utterance ${entry.utterance})` : ""}` });
    } else if (entry.kind === "stt_error") {
      if (entry.code === "audio_dropped") counters.droppedFrames += entry.frames ?? 0;
      stt.marks.push({ t, type: entry.terminal ? "terminal" : "error", label: `error ${entry.code}${entry.terminal ? " (terminal)" : ""}${entry.frames ? `: ${entry.frames} frames dropped` : ""}` });
    } else if (entry.kind === "provision") {
      stt.marks.push({ t, type: entry.ok ? "provisioned" : "provision_failed", label: entry.ok ? "provision(): new session" : `provision() failed${entry.status ? ` with HTTP ${entry.status}` : ""}` });
    }
  }
  const first = entries.length > 0 ? entries[0].t : 0;
  const end = Math.max(now ?? first, ...entries.map((entry) => entry.t), first + 1000);
  // A live page shows the last `windowMs`: older turns go, the STT lane is clipped at the edge.
  const start = windowMs ? Math.max(first, end - windowMs) : first;
  const visible = [...turns.values()].filter((turn) => (turn.end ?? end) >= start || (turn.speech?.end ?? 0) >= start);
  stt.segments = stt.segments.filter((segment) => (segment.to ?? end) >= start).map((segment) => ({ ...segment, from: Math.max(segment.from, start) }));
  stt.marks = stt.marks.filter((mark) => mark.t >= start);
  return { start, end, turns: visible.slice(-MAX_TURNS), stt, sttState, counters };
}

function applyTurnEvent(turn, event, t, counters, turnDeadlineMs) {
  switch (event.type) {
    case "turn_started":
      turn.start = t;
      if (turnDeadlineMs) turn.deadlineAt = t + turnDeadlineMs;
      break;
    case "attempt_started": {
      counters.llmCalls += 1;
      const preemptive = event.preemptive === true;
      // A turn begun by an early attempt waits for its final; the ladder's first attempt (after a
      // discard) is the final, and the turn's deadline counts from it (T17).
      if (preemptive && !turn.attempts.some((attempt) => !attempt.preemptive)) turn.pending = true;
      else if (!preemptive) finalSeen(turn, t, turnDeadlineMs);
      turn.attempts.push({ requestId: event.requestId, route: event.route, start: t, firstChunk: null, end: null, result: "running", error: null, timeoutAt: t + Math.max(0, event.timeoutAt - event.at), preemptive, kept: null, discardReason: null });
      break;
    }
    case "preemptive": {
      const attempt = turn.attempts.find((a) => a.requestId === event.requestId);
      if (attempt) Object.assign(attempt, { kept: event.kept, discardReason: event.reason ?? null });
      // Kept: that is the final.
      if (event.kept) finalSeen(turn, t, turnDeadlineMs);
      break;
    }
    case "committed": {
      const attempt = turn.attempts.find((a) => a.requestId === event.requestId);
      if (attempt) attempt.firstChunk = t;
      break;
    }
    case "attempt_finished": {
      const attempt = turn.attempts.find((a) => a.requestId === event.requestId);
      if (attempt) Object.assign(attempt, { end: t, result: event.result, error: event.error ?? null });
      break;
    }
    case "accepted":
      turn.status = "accepted";
      turn.end = t;
      break;
    case "recovered":
      counters.recoveries += 1;
      turn.status = "recovered";
      turn.reason = event.reason;
      turn.end = t;
      break;
    case "cancelled":
      turn.status = "cancelled";
      turn.end = t;
      break;
    default:
  }
}

/** The final of a turn that was waiting for it: its deadline counts from here. */
function finalSeen(turn, t, turnDeadlineMs) {
  if (!turn.pending) return;
  turn.pending = false;
  if (turnDeadlineMs) turn.deadlineAt = t + turnDeadlineMs;
}

const escapeXml = (text) => String(text).replace(/[<>&"']/g, (c) => ({ "<": "&lt;", ">": "&gt;", "&": "&amp;", '"': "&quot;", "'": "&#39;" })[c]);
const title = (text) => `<title>${escapeXml(text)}</title>`;
const ms = (value) => `${Math.round(value)} ms`;

/** The model drawn as an SVG string `width` pixels wide; its height follows from the lanes. */
export function renderTimeline(model, { width = 900 } = {}) {
  const span = Math.max(1, model.end - model.start);
  const plot = width - LABEL_WIDTH - 10;
  // Marks older than the window's start are drawn from its left edge.
  const clamp = (t) => Math.max(t, model.start);
  const x = (t) => (LABEL_WIDTH + ((clamp(t) - model.start) / span) * plot).toFixed(1);
  const w = (from, to) => Math.max(1.5, ((clamp(to) - clamp(from)) / span) * plot).toFixed(1);
  const rel = (t) => ms(t - model.start);
  const parts = [];
  let y = 22;

  const { llmCalls, recoveries, reprovisions, droppedFrames } = model.counters;
  parts.push(
    `<text class="counters" x="4" y="14" data-counters="${llmCalls},${recoveries},${reprovisions},${droppedFrames}">` +
      `LLM calls ${llmCalls} · recoveries ${recoveries} · re-provisions ${reprovisions} · dropped audio frames ${droppedFrames}</text>`,
  );

  // The STT connection lane.
  parts.push(`<g class="lane stt" data-state="${escapeXml(model.sttState ?? "none")}"><text x="4" y="${y + 11}">STT</text>`);
  for (const segment of model.stt.segments) {
    const to = segment.to ?? model.end;
    parts.push(
      `<rect class="stt-${segment.state}" x="${x(segment.from)}" y="${y}" width="${w(segment.from, to)}" height="${ROW}" fill="${STT_COLOURS[segment.state] ?? "#ccc"}">` +
        `${title(`${segment.state} from ${rel(segment.from)} for ${ms(to - segment.from)}`)}</rect>`,
    );
    if (segment.state === "failed") parts.push(`<text x="${x(segment.from)}" dx="3" y="${y + 11}" class="terminal">failed</text>`);
  }
  for (const mark of model.stt.marks) {
    const colour = mark.type === "close" || mark.type === "error" || mark.type === "provision_failed" || mark.type === "terminal" ? "#a11" : mark.type === "hint" ? PREEMPTIVE_COLOURS.kept : "#245";
    const shape =
      mark.type === "close" ? `<path d="M${x(mark.t)},${y - 2} l4,-5 h-8 z" fill="${colour}"/>`
      : mark.type === "hint" ? `<path d="M${x(mark.t)},${y + ROW} l3,5 h-6 z" fill="${colour}"/>`
      : `<circle cx="${x(mark.t)}" cy="${y + ROW + 3}" r="3" fill="${colour}"/>`;
    parts.push(`<g class="mark ${mark.type}">${shape}${title(`${rel(mark.t)}: ${mark.label}`)}</g>`);
  }
  parts.push("</g>");
  y += ROW + LANE_GAP + 6;

  // The latency rows share a scale of their own (milliseconds after the user's last words), so
  // the turns compare and their marks, a second or so apart, stay legible in a long window.
  const latencyScaleMs = niceCeil(Math.max(500, ...model.turns.filter((turn) => turn.latency).map((turn) => {
    const { origin, to } = latencyExtent(turn.latency);
    return to - origin;
  })));
  // As much of the plot as leaves room for the longest figure after it.
  const figureChars = Math.max(0, ...model.turns.filter((turn) => turn.latency).map((turn) => figureText(turn.latency).length));
  const share = Math.min(LATENCY_SHARE, Math.max(0.3, (plot - 8 - figureChars * FIGURE_CHAR_PX) / plot));
  const latencyX = (offset) => LABEL_WIDTH + (offset / latencyScaleMs) * plot * share;
  const latencyGridMs = niceStep(latencyScaleMs);

  // One lane per turn: attempts on their own rows, then the spoken answer, then its latency row.
  for (const turn of model.turns) {
    const rows = Math.max(1, turn.attempts.length) + 1;
    const height = rows * ROW;
    const label = turn.status === "recovered" ? `recovered (${turn.reason})` : turn.status;
    parts.push(`<g class="lane turn" data-turn="${escapeXml(turn.turnId)}" data-status="${turn.status}">`);
    parts.push(`<text x="4" y="${y + 11}">${escapeXml(turn.turnId)}</text><text x="4" y="${y + 24}" class="sub">${escapeXml(label)}</text>`);
    turn.attempts.forEach((attempt, index) => {
      const top = y + index * ROW;
      const end = attempt.end ?? model.end;
      const colour = RESULT_COLOURS[attempt.result] ?? "#777";
      const early = attempt.preemptive ? (attempt.result === "discarded" ? `, preemptive: discarded${attempt.discardReason ? ` (${attempt.discardReason})` : ""}` : attempt.kept ? ", preemptive: kept at the final" : ", preemptive: waiting for the final") : "";
      const detail = `${attempt.route}: ${attempt.result}${attempt.error ? ` (${attempt.error})` : ""}${early}, ${rel(attempt.start)} → ${attempt.end === null ? "running" : rel(attempt.end)}`;
      const preemptiveAttr = attempt.preemptive ? ` data-preemptive="${attempt.result === "discarded" ? "discarded" : attempt.kept ? "kept" : "pending"}"` : "";
      parts.push(`<g class="attempt" data-route="${escapeXml(attempt.route)}" data-result="${attempt.result}"${preemptiveAttr}>`);
      parts.push(`<rect x="${x(attempt.start)}" y="${top + 1}" width="${w(attempt.start, end)}" height="${ROW - 2}" rx="2" fill="${colour}"${attempt.preemptive ? ' stroke="#222" stroke-dasharray="2,1"' : ""}>${title(detail)}</rect>`);
      // A discarded early attempt is struck through: none of it was ever spoken.
      if (attempt.result === "discarded") {
        parts.push(`<line class="struck" x1="${x(attempt.start)}" x2="${(Number(x(attempt.start)) + Number(w(attempt.start, end))).toFixed(1)}" y1="${top + ROW / 2}" y2="${top + ROW / 2}" stroke="#444" stroke-width="1.5"/>`);
      }
      // A bar too narrow for its name gets the name after it.
      const narrow = Number(w(attempt.start, end)) < 48;
      const labelX = narrow ? Number(x(attempt.start)) + Number(w(attempt.start, end)) : Number(x(attempt.start));
      const labelClass = narrow ? "route-out" : attempt.result === "discarded" ? "route-dark" : "route";
      const name = `${attempt.preemptive ? "early " : ""}${attempt.route}${attempt.error ? ` ${attempt.error}` : ""}${attempt.discardReason ? ` (${attempt.discardReason})` : ""}`;
      parts.push(`<text x="${labelX.toFixed(1)}" dx="3" y="${top + 11}" class="${labelClass}">${escapeXml(name)}</text>`);
      if (attempt.firstChunk !== null) {
        parts.push(`<path class="first-chunk" d="M${x(attempt.firstChunk)},${top + 1} l4,6 l-4,6 l-4,-6 z" fill="#fff" stroke="#222">${title(`first chunk (committed) at ${rel(attempt.firstChunk)}`)}</path>`);
      }
      parts.push("</g>");
    });
    // Once an attempt commits, the deadline no longer applies to the turn: drawn only until then.
    const committed = turn.attempts.some((attempt) => attempt.firstChunk !== null && attempt.firstChunk < turn.deadlineAt);
    if (turn.deadlineAt !== null && turn.deadlineAt <= model.end && !committed) {
      parts.push(`<line class="deadline" x1="${x(turn.deadlineAt)}" x2="${x(turn.deadlineAt)}" y1="${y - 2}" y2="${y + height}" stroke="#d23f3f" stroke-dasharray="3,2">${title(`turn deadline at ${rel(turn.deadlineAt)}`)}</line>`);
    }
    const speechTop = y + (rows - 1) * ROW;
    if (turn.speech) {
      const { start, end, heardEnd, cut } = turn.speech;
      const stop = end ?? model.end;
      const heard = Math.min(heardEnd ?? stop, stop);
      parts.push(`<rect class="heard" x="${x(start)}" y="${speechTop + 3}" width="${w(start, heard)}" height="${ROW - 6}" fill="#1f5fa8">${title(`spoken and heard: ${ms(heard - start)}`)}</rect>`);
      if (cut && turn.speech.unheardMs > 0) {
        parts.push(`<rect class="unheard" x="${x(heard)}" y="${speechTop + 3}" width="${w(heard, heard + turn.speech.unheardMs)}" height="${ROW - 6}" fill="none" stroke="#1f5fa8" stroke-dasharray="2,2">${title(`not heard: ${ms(turn.speech.unheardMs)}`)}</rect>`);
      }
    }
    for (const t of turn.sentences) {
      parts.push(`<line class="sentence" x1="${x(t)}" x2="${x(t)}" y1="${speechTop}" y2="${speechTop + ROW}" stroke="#222">${title(`sentence queued for speech at ${rel(t)}`)}</line>`);
    }
    for (const { t, mark, index } of turn.marks ?? []) {
      const what = mark === "byte" ? "first audio byte" : "first sound";
      const colour = mark === "byte" ? "#8a3ffc" : "#2e9d4f";
      parts.push(`<circle class="audio-${mark}" cx="${x(t)}" cy="${speechTop + (mark === "byte" ? 3 : ROW - 3)}" r="3" fill="${colour}">${title(`sentence ${(index ?? 0) + 1}: ${what} at ${rel(t)}`)}</circle>`);
    }
    if (turn.latency) {
      const { from, to } = latencyExtent(turn.latency);
      parts.push(`<line class="latency-span" x1="${x(from)}" x2="${x(to)}" y1="${speechTop + ROW - 0.5}" y2="${speechTop + ROW - 0.5}" stroke="#888">${title(`from the user's last words to the first sound: ${voiceToVoiceText(turn.latency)}`)}</line>`);
    }
    if (turn.bargeIn !== null) {
      parts.push(`<g class="barge-in"><path d="M${x(turn.bargeIn)},${y - 3} l5,${height / 2} l-4,0 l4,${height / 2 + 3} l-10,-${height / 2 + 1} l4,0 z" fill="#f0b400" stroke="#7a5b00">${title(`barge-in at ${rel(turn.bargeIn)}${turn.bargeInCause ? ` (${turn.bargeInCause})` : ""}`)}</path></g>`);
    }
    if (turn.latency) parts.push(latencyRow(turn.latency, y + height, { latencyX, latencyScaleMs, latencyGridMs, rel }));
    parts.push("</g>");
    y += height + (turn.latency ? LATENCY_HEIGHT : 0) + LANE_GAP;
  }

  // The time axis and the legend.
  const step = niceStep(span);
  for (let t = 0; t <= span; t += step) {
    parts.push(`<text class="tick" x="${x(model.start + t)}" y="${y + 8}" text-anchor="middle">${(t / 1000).toFixed(step < 1000 ? 1 : 0)} s</text>`);
  }
  y += 22;
  let lx = 4;
  for (const [result, colour] of Object.entries(RESULT_COLOURS)) {
    parts.push(`<rect x="${lx}" y="${y - 9}" width="10" height="10" fill="${colour}"/><text x="${lx + 13}" y="${y}">${result}</text>`);
    lx += 20 + result.length * 6.5;
  }
  y += 15;
  parts.push(`<text x="4" y="${y}">◇ first chunk (commit) · | sentence queued · ▬ heard · ┅ not heard · ⚡ barge-in · ╎ turn deadline · ▼ socket closed · ● provision / error · ┄ early (preemptive) attempt · ▲ eager end of turn</text>`);
  y += 16;
  if (model.turns.some((turn) => turn.latency)) {
    parts.push(`<text class="latency-legend" x="4" y="${y}">latency rows: from the user's last words to the first sound, on a scale of their own (grid ${latencyGridMs} ms) · green route: called before the final</text>`);
    y += 16;
  }
  lx = 4;
  parts.push(`<text x="${lx}" y="${y}">STT:</text>`);
  lx += 28;
  for (const [state, colour] of Object.entries(STT_COLOURS)) {
    parts.push(`<rect x="${lx}" y="${y - 9}" width="10" height="10" fill="${colour}"/><text x="${lx + 13}" y="${y}">${state}</text>`);
    lx += 20 + state.length * 6.5;
  }
  y += 8;

  return (
    `<svg xmlns="http://www.w3.org/2000/svg" class="timeline" width="${width}" height="${y}" viewBox="0 0 ${width} ${y}" font-family="system-ui, sans-serif" font-size="10">` +
    `<style>.sub{fill:#555;font-size:9px}.tick{fill:#666}.route{fill:#fff;font-size:9px}.route-out{fill:#333;font-size:9px}.terminal{fill:#fff;font-weight:bold}.route-dark{fill:#333;font-size:9px}.latency-label{fill:#333;font-size:9px}.latency-label.early{fill:#2e9d4f;font-weight:600}.voice-to-voice{fill:#222;font-size:10px;font-weight:600}.latency-legend{fill:#555}.latency-scale{fill:#8a94a0;font-size:8px}</style>` +
    parts.join("") +
    "</svg>"
  );
}

/** A round axis step giving about eight ticks. */
function niceStep(span) {
  const raw = span / 8;
  const power = 10 ** Math.floor(Math.log10(raw));
  return [1, 2, 5, 10].map((m) => m * power).find((step) => step >= raw) ?? 10 * power;
}

/** The smallest round number (1, 1.5, 2, 2.5, 3, 4, 5, 6 or 8 times a power of ten) at least `value`. */
function niceCeil(value) {
  const power = 10 ** Math.floor(Math.log10(value));
  return [1, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10].map((m) => m * power).find((nice) => nice >= value);
}

/**
 * Where a latency record starts and ends: `origin` its earliest mark, `from` the user's last
 * words (else the earliest mark), `to` the first sound (else the last mark).
 */
function latencyExtent({ marks }) {
  const values = Object.values(marks).filter((value) => value !== null);
  if (values.length === 0) return { origin: 0, from: 0, to: 0 };
  const origin = Math.min(...values);
  return { origin, from: marks.speechEnd ?? origin, to: marks.firstSound ?? Math.max(...values) };
}

function voiceToVoiceText({ voiceToVoiceMs, marks }) {
  if (voiceToVoiceMs !== null && voiceToVoiceMs !== undefined) return `${Math.round(voiceToVoiceMs)} ms voice to voice`;
  return marks.firstSound === null ? "no sound" : "no voice-to-voice figure";
}

/** "600 ms voice to voice · preemptive kept": the figure after a latency row. */
function figureText(latency) {
  const { preemptive } = latency;
  return voiceToVoiceText(latency) + (preemptive === "kept" || preemptive === "discarded" ? ` · preemptive ${preemptive}` : "");
}

/**
 * A turn's latency row at `top`: a bar from the user's last words to the first sound, a tick per
 * mark that happened (a null one is not drawn), labels below on two lines (moved aside, with a
 * leader, when they would overlap), and the voice-to-voice figure with the preemptive outcome.
 */
function latencyRow(latency, top, { latencyX, latencyScaleMs, latencyGridMs, rel }) {
  const { marks, preemptive } = latency;
  const { origin, from, to } = latencyExtent(latency);
  const px = (t) => latencyX(t - origin);
  const colour = PREEMPTIVE_COLOURS[preemptive] ?? PREEMPTIVE_COLOURS.not_tried;
  const early = marks.routeCalled !== null && marks.final !== null && marks.routeCalled < marks.final;
  const out = [`<g class="latency" data-preemptive="${escapeXml(preemptive)}" data-voice-to-voice="${latency.voiceToVoiceMs === null ? "" : Math.round(latency.voiceToVoiceMs)}">`];
  out.push(`<text x="4" y="${top + 9}" class="sub">latency</text>`);
  // A band of its own: this row is on the latency scale, not on the time axis.
  out.push(`<rect class="latency-band" x="${latencyX(0).toFixed(1)}" y="${top - 1}" width="${(latencyX(latencyScaleMs) - latencyX(0)).toFixed(1)}" height="13" fill="#f3f5f8"/>`);
  for (let g = latencyGridMs; g <= latencyScaleMs; g += latencyGridMs) {
    out.push(`<line class="latency-grid" x1="${latencyX(g).toFixed(1)}" x2="${latencyX(g).toFixed(1)}" y1="${top}" y2="${top + 11}" stroke="#e2e2e2"/>`);
  }
  // Its scale, at the band's end: the time axis below does not apply here.
  out.push(`<text class="latency-scale" x="${(latencyX(latencyScaleMs) - 2).toFixed(1)}" y="${top + 9}" text-anchor="end">${latencyScaleMs} ms</text>`);
  out.push(`<rect class="latency-bar" x="${px(from).toFixed(1)}" y="${top + 3}" width="${Math.max(1.5, px(to) - px(from)).toFixed(1)}" height="5" fill="${colour}" opacity="0.45"${marks.firstSound === null ? ' stroke="#555" stroke-dasharray="2,2"' : ""}/>`);
  const ticks = LATENCY_MARKS.map(([name, , label]) => ({ name, label, t: marks[name] })).filter((tick) => tick.t !== null);
  ticks.sort((a, b) => a.t - b.t);
  const levels = [-Infinity, -Infinity];
  for (const { name, label, t } of ticks) {
    const tx = px(t);
    const isEarly = early && name === "routeCalled";
    const offset = `+${Math.round(t - from)} ms after the user's last words`;
    const what = isEarly ? `route called ${Math.round(marks.final - t)} ms before the final (preemptive attempt)` : `${label}`;
    out.push(`<line class="latency-tick${isEarly ? " early" : ""}" data-mark="${name}" x1="${tx.toFixed(1)}" x2="${tx.toFixed(1)}" y1="${top}" y2="${top + 11}" stroke="${isEarly ? PREEMPTIVE_COLOURS.kept : "#222"}" stroke-width="${name === "firstSound" ? 2 : 1}">${title(`${what}: ${offset}, at ${rel(t)}`)}</line>`);
    const width = label.length * 5 + 2;
    const want = tx - width / 2;
    let best = null;
    levels.forEach((right, level) => {
      const left = Math.max(want, right + 6);
      if (best === null || left - want < best.left - want) best = { level, left };
    });
    levels[best.level] = best.left + width;
    const cx = best.left + width / 2;
    const ly = top + 20 + best.level * 10;
    if (cx - tx > 1) out.push(`<line class="leader" x1="${tx.toFixed(1)}" x2="${cx.toFixed(1)}" y1="${top + 11}" y2="${ly - 8}" stroke="#aaa" stroke-width="0.5"/>`);
    out.push(`<text class="latency-label${isEarly ? " early" : ""}" data-mark="${name}" x="${cx.toFixed(1)}" y="${ly}" text-anchor="middle">${escapeXml(label)}</text>`);
  }
  const detail = preemptive === "kept" && early ? `: its route was called ${Math.round(marks.final - marks.routeCalled)} ms before the final` : "";
  out.push(`<g class="figure">${title(figureText(latency) + detail)}<text class="voice-to-voice" x="${(Math.max(px(to), latencyX(latencyScaleMs)) + 8).toFixed(1)}" y="${top + 10}">${escapeXml(figureText(latency))}</text></g>`);
  out.push("</g>");
  return out.join("");
}

/** Both at once: the SVG for `entries` at `now`. */
export function timelineSvg(entries, options = {}) {
  return renderTimeline(timelineModel(entries, options), options);
}
