// The timeline (www/timeline.mjs) as pure functions: events in, SVG out.

import assert from "node:assert/strict";
import { test } from "node:test";
import { sampleEntries } from "./timeline-fixture.mjs";
import { RESULT_COLOURS, timelineEntry, timelineModel, timelineSvg } from "./timeline.mjs";

const OPTIONS = { now: 10_000, turnDeadlineMs: 2000 };

test("counters: LLM calls, recoveries, re-provisions and dropped frames come from the events", () => {
  const model = timelineModel(sampleEntries(), OPTIONS);
  assert.deepEqual(model.counters, { llmCalls: 5, recoveries: 1, reprovisions: 1, droppedFrames: 12 });
  assert.equal(model.sttState, "failed");
  assert.deepEqual(model.turns.map((turn) => [turn.turnId, turn.status]), [["turn-1", "accepted"], ["turn-2", "accepted"], ["turn-3", "recovered"]]);
});

test("the SVG has each attempt coloured by its result, first chunks, deadlines, sentences, heard and unheard, barge-in", () => {
  const svg = timelineSvg(sampleEntries(), OPTIONS);
  assert.match(svg, /^<svg xmlns="http:\/\/www.w3.org\/2000\/svg"/);
  const attempts = [...svg.matchAll(/<g class="attempt" data-route="(\w+)" data-result="(\w+)"><rect [^>]*fill="([^"]+)"/g)].map((m) => [m[1], m[2], m[3]]);
  assert.deepEqual(attempts, [
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
  assert.match(svg, /data-counters="5,1,1,12"/);
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
  assert.deepEqual(model.counters, { llmCalls: 5, recoveries: 1, reprovisions: 1, droppedFrames: 12 }, "counters count the whole session");
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
