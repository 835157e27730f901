// The timeline (www/timeline.mjs) as pure functions: events in, SVG out.

import assert from "node:assert/strict";
import { test } from "node:test";
import { sampleEntries } from "./timeline-fixture.mjs";
import { LATENCY_MARKS, PREEMPTIVE_COLOURS, RESULT_COLOURS, timelineEntry, timelineModel, timelineSvg } from "./timeline.mjs";

const OPTIONS = { now: 10_000, turnDeadlineMs: 2000 };

test("counters: LLM calls, recoveries, re-provisions and dropped frames come from the events", () => {
  const model = timelineModel(sampleEntries(), OPTIONS);
  // Six calls: the discarded early attempt of turn-1 was a call too.
  assert.deepEqual(model.counters, { llmCalls: 6, recoveries: 1, reprovisions: 1, droppedFrames: 12 });
  assert.equal(model.sttState, "failed");
  assert.deepEqual(model.turns.map((turn) => [turn.turnId, turn.status]), [["turn-1", "accepted"], ["turn-2", "accepted"], ["turn-3", "recovered"]]);
});

test("the SVG has each attempt coloured by its result, first chunks, deadlines, sentences, heard and unheard, barge-in", () => {
  const svg = timelineSvg(sampleEntries(), OPTIONS);
  assert.match(svg, /^<svg xmlns="http:\/\/www.w3.org\/2000\/svg"/);
  const attempts = [...svg.matchAll(/<g class="attempt" data-route="(\w+)" data-result="(\w+)"[^>]*><rect [^>]*fill="([^"]+)"/g)].map((m) => [m[1], m[2], m[3]]);
  assert.deepEqual(attempts, [
    ["primary", "discarded", RESULT_COLOURS.discarded],
    ["primary", "error", RESULT_COLOURS.error],
    ["fallback", "accepted", RESULT_COLOURS.accepted],
    ["primary", "accepted", RESULT_COLOURS.accepted],
    ["primary", "timeout", RESULT_COLOURS.timeout],
    ["fallback", "cancelled", RESULT_COLOURS.cancelled],
  ]);
  assert.equal(svg.match(/class="first-chunk"/g).length, 2);
  assert.equal(svg.match(/class="sentence"/g).length, 4);
  // Only turn-3 never committed: the deadline is drawn for it alone.
  assert.equal(svg.match(/class="deadline"/g).length, 1);
  assert.match(svg, /<title>not heard: 1400 ms<\/title>/);
  assert.match(svg, /<title>spoken and heard: 1050 ms<\/title>/);
  assert.equal(svg.match(/class="barge-in"/g).length, 1);
  assert.match(svg, /data-counters="6,1,1,12"/);
});

test("the STT lane: states as segments, closes, provisions and the terminal error, each with a hover title", () => {
  const svg = timelineSvg(sampleEntries(), OPTIONS);
  assert.match(svg, /<g class="lane stt" data-state="failed">/);
  for (const state of ["provisioning", "connecting", "open", "backoff", "failed"]) assert.match(svg, new RegExp(`class="stt-${state}"`));
  assert.match(svg, /socket closed: reconnect to the same URL after a backoff/);
  assert.match(svg, /socket closed 4xxx: the session is dead, provision a new one/);
  assert.match(svg, /provision\(\) failed with HTTP 429/);
  assert.match(svg, /error provision_rejected \(terminal\)/);
});

test("text is escaped, an empty list draws an empty timeline, and only the last eight turns are drawn", () => {
  const svg = timelineSvg([{ t: 0, kind: "turn", event: { type: "turn_started", turnId: "<b>&" } }], { now: 10 });
  assert.ok(!svg.includes("<b>&"));
  assert.match(svg, /&lt;b&gt;&amp;/);
  assert.match(timelineSvg([], { now: 0 }), /LLM calls 0/);
  const many = Array.from({ length: 12 }, (_, i) => ({ t: i, kind: "turn", event: { type: "turn_started", turnId: `turn-${i}` } }));
  const model = timelineModel(many, { now: 20 });
  assert.deepEqual(model.turns.map((turn) => turn.turnId), Array.from({ length: 8 }, (_, i) => `turn-${i + 4}`));
});

test("a window shows only the recent past: older turns leave, STT segments are clipped at its edge", () => {
  const model = timelineModel(sampleEntries(), { now: 10_000, windowMs: 4000 });
  assert.equal(model.start, 6000);
  assert.deepEqual(model.turns.map((turn) => turn.turnId), ["turn-3"]);
  assert.ok(model.stt.segments.every((segment) => segment.from >= 6000));
  assert.deepEqual(model.counters, { llmCalls: 6, recoveries: 1, reprovisions: 1, droppedFrames: 12 }, "counters count the whole session");
});

test("timelineEntry: each VoiceSession event becomes its mark; a later session's turns get lanes of their own", () => {
  const at = 1;
  assert.deepEqual(timelineEntry({ type: "playback_ended", at, turnId: "turn-1", heardMs: 900, cut: true, unheardMs: 300 }), {
    kind: "speech", turnId: "turn-1", phase: "cut", heardMs: 900, unheardMs: 300,
    event: { type: "playback_ended", at, turnId: "turn-1", heardMs: 900, cut: true, unheardMs: 300 },
  });
  assert.equal(timelineEntry({ type: "playback_ended", at, turnId: "turn-1", heardMs: 900, cut: false }).phase, "end");
  assert.equal(timelineEntry({ type: "barge_in", at, turnId: "turn-1", cause: "button" }).cause, "button");
  assert.equal(timelineEntry({ type: "transcriber_state", at, state: "backoff" }).state, "backoff");
  assert.deepEqual(timelineEntry({ type: "provision_finished", at, ok: false, status: 429 }).status, 429);
  assert.equal(timelineEntry({ type: "accepted", at, turnId: "turn-1" }).kind, "turn");
  const started = (t, session) => ({ t, session, ...timelineEntry({ type: "turn_started", at: t, turnId: "turn-1" }) });
  const model = timelineModel([started(0, 1), started(10, 2)], { now: 20 });
  assert.deepEqual(model.turns.map((turn) => turn.turnId), ["turn-1", "turn-1 (session 2)"]);
  const state = (t, session, value) => ({ t, session, ...timelineEntry({ type: "transcriber_state", at: t, state: value }) });
  const restarted = timelineModel([state(0, 1, "provisioning"), state(1, 1, "connecting"), state(2, 1, "open"), state(9, 2, "provisioning"), state(10, 2, "connecting"), state(11, 2, "open")], { now: 20 });
  assert.equal(restarted.counters.reprovisions, 0, "a new session's first provisioning is no re-provision");
  assert.equal(restarted.stt.marks.filter((mark) => mark.type === "close").length, 0, "nor a close");
  const svg = timelineSvg([started(0, 1), { t: 5, ...timelineEntry({ type: "barge_in", at: 5, turnId: "turn-1", cause: "partial" }) }], { now: 20 });
  assert.match(svg, /barge-in at 5 ms \(partial\)/);
});

test("closes the transcriber reports are drawn with their code, class and delay, and none is inferred then", () => {
  const entries = [
    { t: 0, kind: "stt_state", state: "provisioning" },
    { t: 10, kind: "stt_state", state: "connecting" },
    { t: 20, kind: "stt_state", state: "open" },
    { t: 900, ...timelineEntry({ type: "transcriber_close", code: 3009, class: "throttled", next: "reconnect_same_url", delayMs: 10000 }) },
    { t: 901, kind: "stt_state", state: "backoff" },
    { t: 2000, ...timelineEntry({ type: "transcriber_close", code: 1008, class: "fatal", next: "stop", delayMs: 0 }) },
  ];
  const svg = timelineSvg(entries, { now: 3000 });
  assert.match(svg, /socket closed 3009 \(throttled\): reconnect after 10000 ms/);
  assert.match(svg, /socket closed 1008 \(fatal\): stop/);
  assert.doesNotMatch(svg, /socket closed: reconnect to the same URL after a backoff/, "not inferred as well");
});

/** Each latency row of `svg`: its attributes, ticks and labels (by mark, with x) and figure text. */
function latencyRows(svg) {
  return svg.split('<g class="latency"').slice(1).map((part) => {
    const row = part.slice(0, part.indexOf("</g>"));
    return {
      preemptive: /data-preemptive="(\w+)"/.exec(row)[1],
      voiceToVoice: /data-voice-to-voice="(\d*)"/.exec(row)[1],
      ticks: [...row.matchAll(/<line class="latency-tick[^"]*" data-mark="(\w+)" x1="([\d.]+)"/g)].map((m) => ({ mark: m[1], x: Number(m[2]) })),
      labels: [...row.matchAll(/<text class="latency-label[^"]*" data-mark="(\w+)" x="([\d.]+)" y="([\d.]+)"[^>]*>([^<]*)<\/text>/g)].map((m) => ({ mark: m[1], x: Number(m[2]), y: Number(m[3]), text: m[4] })),
      figure: /<text class="voice-to-voice"[^>]*>([^<]*)</.exec(row)[1],
      row,
    };
  });
}

const LATENCY = {
  type: "turn_latency",
  at: 1_700_000_001_000,
  turnId: "s:turn-1",
  speechEndAt: 1_700_000_000_000,
  finalAt: 1_700_000_000_250,
  routeCalledAt: 1_700_000_000_100,
  firstTokenAt: 1_700_000_000_400,
  firstSentenceAt: 1_700_000_000_520,
  synthesizeAt: 1_700_000_000_521,
  firstAudioAt: 1_700_000_000_700,
  firstSoundAt: 1_700_000_000_731.25,
  voiceToVoiceMs: 731.25,
  preemptive: "kept",
};

test("timelineEntry: turn_latency becomes a latency entry, its epoch marks taken to the entries' clock, nulls kept", () => {
  const entry = timelineEntry({ ...LATENCY, firstTokenAt: null }, { timeOrigin: 1_700_000_000_000 - 5000 });
  assert.equal(entry.kind, "latency");
  assert.equal(entry.turnId, "s:turn-1");
  assert.deepEqual(entry.marks, { speechEnd: 5000, final: 5250, routeCalled: 5100, firstToken: null, firstSentence: 5520, synthesize: 5521, firstAudio: 5700, firstSound: 5731.25 });
  assert.equal(entry.voiceToVoiceMs, 731.25);
  assert.equal(entry.preemptive, "kept");
  assert.equal(entry.event.speechEndAt, LATENCY.speechEndAt, "the event is kept as it came");
  assert.deepEqual(Object.keys(entry.marks), LATENCY_MARKS.map(([name]) => name));
  // A preemptive event stays a turn entry (it marks its attempt).
  assert.equal(timelineEntry({ type: "preemptive", turnId: "s:turn-1", requestId: "r", at: 1, kept: true }).kind, "turn");
});

test("the latency row: a tick and a label per mark, in time order; a kept early route call is drawn before the final", () => {
  const [turn1, turn2, turn3] = latencyRows(timelineSvg(sampleEntries(), OPTIONS));
  // turn-2: its early attempt was kept, so its route was called (4400) before the final (4500).
  assert.deepEqual(turn2.ticks.map((tick) => tick.mark), ["speechEnd", "routeCalled", "final", "firstToken", "firstSentence", "synthesize", "firstAudio", "firstSound"]);
  for (let i = 1; i < turn2.ticks.length; i += 1) assert.ok(turn2.ticks[i].x >= turn2.ticks[i - 1].x, `${turn2.ticks[i].mark} is not left of ${turn2.ticks[i - 1].mark}`);
  assert.ok(turn2.ticks[1].x < turn2.ticks[2].x, "route strictly before the final");
  assert.match(turn2.row, /<line class="latency-tick early" data-mark="routeCalled"/);
  assert.match(turn2.row, /route called 100 ms before the final/);
  // Every tick has its label, named as the legend says; labels do not overlap on a line.
  assert.deepEqual(turn2.labels.map((label) => label.mark), turn2.ticks.map((tick) => tick.mark));
  assert.deepEqual(turn2.labels.map((label) => label.text), ["speech end", "route", "final", "token", "sentence", "synth", "audio", "sound"]);
  for (const y of new Set(turn2.labels.map((label) => label.y))) {
    const line = turn2.labels.filter((label) => label.y === y);
    for (let i = 1; i < line.length; i += 1) {
      const [a, b] = [line[i - 1], line[i]];
      assert.ok(b.x - (b.text.length * 5 + 2) / 2 >= a.x + (a.text.length * 5 + 2) / 2 + 5, `labels ${a.mark} and ${b.mark} overlap`);
    }
  }
  // The voice-to-voice figure and the preemptive outcome.
  assert.equal(turn2.figure, "600 ms voice to voice · preemptive kept");
  assert.equal(turn2.voiceToVoice, "600");
  assert.equal(turn2.preemptive, "kept");
  assert.equal(turn1.figure, "601 ms voice to voice · preemptive discarded");
  assert.equal(turn1.ticks.find((tick) => tick.mark === "routeCalled").x > turn1.ticks.find((tick) => tick.mark === "final").x, true, "a ladder attempt's route call is after the final");
  assert.doesNotMatch(turn1.row, /latency-tick early/);
  // turn-3 had no early attempt: no outcome is named.
  assert.equal(turn3.figure, "2100 ms voice to voice");
  assert.equal(turn3.preemptive, "not_tried");
});

test("a null mark is not drawn: no tick, no label", () => {
  const rows = latencyRows(timelineSvg(sampleEntries(), OPTIONS));
  const turn3 = rows[2];
  assert.equal(turn3.ticks.length, LATENCY_MARKS.length - 1);
  assert.ok(!turn3.ticks.some((tick) => tick.mark === "firstToken"), "turn-3's route never answered: no first token");
  assert.ok(!turn3.labels.some((label) => label.mark === "firstToken"));
  // With no sound at all: the bar ends at the last mark, dashed, and the figure says so.
  const entries = [
    { t: 0, ...timelineEntry({ type: "turn_started", at: 0, turnId: "turn-1" }) },
    { t: 900, ...timelineEntry({ ...LATENCY, turnId: "turn-1", firstAudioAt: null, firstSoundAt: null, voiceToVoiceMs: null, preemptive: "not_tried" }, { timeOrigin: LATENCY.speechEndAt }) },
  ];
  const [row] = latencyRows(timelineSvg(entries, { now: 1000 }));
  assert.deepEqual(row.ticks.map((tick) => tick.mark), ["speechEnd", "routeCalled", "final", "firstToken", "firstSentence", "synthesize"]);
  assert.equal(row.figure, "no sound");
  assert.equal(row.voiceToVoice, "");
  assert.match(row.row, /class="latency-bar"[^>]*stroke-dasharray/);
});

test("the latency rows share one scale: a slower turn's bar is longer in proportion", () => {
  const rows = latencyRows(timelineSvg(sampleEntries(), OPTIONS));
  const length = (row) => row.ticks.at(-1).x - row.ticks[0].x;
  // turn-2: 600.4 ms; turn-3: 2100.2 ms.
  assert.ok(Math.abs(length(rows[2]) / length(rows[1]) - 2100.2 / 600.4) < 0.02);
  assert.match(timelineSvg(sampleEntries(), OPTIONS), /latency rows: from the user's last words to the first sound/);
  assert.doesNotMatch(timelineSvg([], { now: 0 }), /latency rows/, "no legend line without a latency row");
  // The figures line up in one column after the longest bar.
  const figureX = [...timelineSvg(sampleEntries(), OPTIONS).matchAll(/<text class="voice-to-voice" x="([\d.]+)"/g)].map((m) => m[1]);
  assert.equal(new Set(figureX).size, 1);
  // The bar spans from the last words to the first sound on the shared time axis too.
  assert.equal(timelineSvg(sampleEntries(), OPTIONS).match(/class="latency-span"/g).length, 3);
});

test("preemptive attempts: dashed, named early; a discarded one struck through with its reason; the deadline counts from the final", () => {
  const svg = timelineSvg(sampleEntries(), OPTIONS);
  const discarded = /<g class="attempt" data-route="primary" data-result="discarded" data-preemptive="discarded">(.*?)<\/g>/.exec(svg)[1];
  assert.match(discarded, /stroke-dasharray="2,1"/);
  assert.match(discarded, /class="struck"/);
  assert.match(discarded, />early primary \(text_changed\)<\/text>/);
  assert.match(discarded, /preemptive: discarded \(text_changed\)/);
  const kept = /<g class="attempt" data-route="primary" data-result="accepted" data-preemptive="kept">(.*?)<\/g>/.exec(svg)[1];
  assert.doesNotMatch(kept, /class="struck"/);
  assert.match(kept, />early primary<\/text>/);
  assert.match(kept, /preemptive: kept at the final/);
  assert.equal(svg.match(/class="struck"/g).length, 1);
  // A turn begun by an early attempt waits for its final: the deadline counts from there.
  const model = timelineModel(sampleEntries(), OPTIONS);
  assert.deepEqual(model.turns.map((turn) => turn.deadlineAt), [1000 + 2000, 4500 + 2000, 6500 + 2000]);
  assert.equal(RESULT_COLOURS.discarded !== undefined && PREEMPTIVE_COLOURS.kept !== undefined, true);
});

test("events of no turn are kept and not drawn; the transcriber's eager ends of turn are marks on the STT lane", () => {
  // What the demo passes on from the transcriber's onEvent, renamed `transcriber_<type>`.
  const hint = timelineEntry({ type: "transcriber_eager_end_of_turn", utterance: 1, protocol: "deepgram-flux" });
  assert.deepEqual({ ...hint, event: undefined }, { kind: "stt_hint", hint: "eager_end_of_turn", utterance: 1, event: undefined });
  assert.equal(timelineEntry({ type: "transcriber_turn_resumed", utterance: 1 }).hint, "turn_resumed");
  assert.equal(timelineEntry({ type: "callback_error", at: 1, callback: "onPartial" }).kind, "other");
  const entries = [
    { t: 0, kind: "stt_state", state: "open" },
    { t: 100, ...timelineEntry({ type: "callback_error", at: 100, callback: "onPartial" }) },
    { t: 200, ...hint },
    { t: 300, kind: "turn", event: { type: "some_later_event" } },
  ];
  const model = timelineModel(entries, { now: 1000 });
  assert.equal(model.turns.length, 0, "no lane for an event of no turn");
  const svg = timelineSvg(entries, { now: 1000 });
  assert.match(svg, /<g class="mark hint">/);
  assert.match(svg, /eager end of turn: the provider guesses the user is done \(utterance 1\)/);
});
