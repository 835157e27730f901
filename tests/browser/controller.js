// TurnController scenarios in a real browser: real timers, real AbortControllers, real promises.
// Each scenario takes `make(routes, options)` (which calls `new TurnController`) and throws on failure.

import {
  answerAfter, assert, assertEq, assertThrows, failWith, never, route, seededRandom, sleep, speaker,
} from "./support.js";

const RECOVERY = "Sorry, could you say that again?";

const scenarios = {
  async preemptiveAttemptsAreKeptOrDiscardedAndNeverHeardEarly(make) {
    // Each call answers with its own request id, streamed, ignoring its signal.
    const primary = route("primary", (request) => (async function* () {
      await sleep(60);
      yield `Answer to ${request.requestId}. `;
      yield "Done.";
    })());
    const tts = speaker();
    const sentences = [];
    const events = [];
    const controller = make([primary, route("fallback", answerAfter(1, "fallback"))], {
      recoveryText: RECOVERY, attemptTimeoutMs: 2000, ...tts,
      onSentence: (turnId, sentence) => sentences.push([turnId, sentence]),
      onEvent: (event) => event.type === "preemptive" && events.push([event.turnId, event.requestId, event.kept, event.reason]),
    });
    // Kept: the final's words are the guess's, case and punctuation aside.
    assertEq(controller.runPreemptive("t1", "what's the weather"), "started", "a guess starts");
    assertEq(controller.runPreemptive("t1", "What's the weather?"), "running", "the same words again");
    await sleep(200);
    assertEq([tts.spoken, sentences], [[], []], "the answer came, nothing reached TTS before the final");
    const kept = await controller.run("t1", "What's the weather?");
    assertEq(kept.status, "accepted", "kept: accepted");
    assertEq(kept.input, "What's the weather?", "the final is the input");
    assertEq(kept.attempts.map((a) => [a.requestId, a.result, a.preemptive]), [["t1:preemptive:1", "accepted", true]], "one request");
    assertEq(tts.spoken, [{ turnId: "t1", kind: "answer", text: "Answer to t1:preemptive:1. Done." }], "spoken after the final");
    // Discarded: other words. Its signal aborts at once; its answer is never spoken.
    assertEq(controller.runPreemptive("t2", "book a table"), "started", "second turn's guess");
    const changed = await controller.run("t2", "book a table for two");
    const guess = primary.calls[1];
    assert(guess.signal.aborted, "the discarded attempt is aborted");
    assertEq([guess.signal.reason.name, guess.requestId, guess.input], ["AbortError", "t2:preemptive:2", "book a table"], "what it was");
    assertEq(changed.attempts.map((a) => [a.requestId, a.result]), [["t2:preemptive:2", "discarded"], ["t2:attempt:1", "accepted"]], "fresh ids");
    assertEq(primary.calls[2].input, "book a table for two", "the ladder runs on the final");
    assertEq(tts.spoken[1].text, "Answer to t2:attempt:1. Done.", "only the final's answer");
    // Withdrawn, guessed again, and bounded at two per turn.
    assertEq(controller.runPreemptive("t3", "turn on"), "started", "a guess");
    assertEq(controller.discardPreemptive("t3"), true, "withdrawn");
    assertEq(controller.discardPreemptive("t3"), false, "nothing left to withdraw");
    assertEq(controller.runPreemptive("t3", "turn on the lights"), "started", "a second guess");
    assertEq(controller.runPreemptive("t3", "turn on the lights please"), "limit", "no third");
    const third = await controller.run("t3", "turn on the lights");
    assertEq(third.attempts.map((a) => a.result), ["discarded", "accepted"], "the second guess is kept");
    assertEq(controller.runPreemptive("t3", "again"), "too_late", "a settled turn takes no guess");
    await sleep(150);
    assertEq(tts.spoken.length, 3, "one answer per turn, none from a discarded guess");
    const ids = primary.calls.map((call) => call.requestId);
    assertEq(new Set(ids).size, ids.length, "no request id sent twice");
    assertEq(events, [
      ["t1", "t1:preemptive:1", true, undefined],
      ["t2", "t2:preemptive:2", false, "text_changed"],
      ["t3", "t3:preemptive:3", false, "withdrawn"],
      ["t3", "t3:preemptive:4", true, undefined],
    ], "preemptive events");
    await assertThrows(() => controller.runPreemptive(7, "x"), TypeError, /turnId/, "a number id");
    await assertThrows(() => controller.runPreemptive("t9", 7), TypeError, /input/, "a number input");
    await assertThrows(() => controller.runPreemptive("t9", "  "), RangeError, /input/, "blank input");
    await assertThrows(() => controller.discardPreemptive({}), TypeError, /turnId/, "an object id");
    controller.free();
    await assertThrows(() => controller.runPreemptive("t9", "x"), Error, /freed|free/, "after free");
  },

  async primaryTimesOutThenFallbackAnswers(make) {
    const primary = route("primary", answerAfter(400, "primary answer"));
    const fallback = route("fallback", answerAfter(10, "fallback answer"));
    const tts = speaker();
    const controller = make([primary, fallback], {
      recoveryText: RECOVERY, attemptTimeoutMs: 100, turnDeadlineMs: 3000, ...tts,
    });
    const record = await controller.run("t1", "hello");
    assertEq(tts.spoken, [{ turnId: "t1", kind: "answer", text: "fallback answer" }], "spoken");
    assertEq(record.status, "accepted", "status");
    assertEq(record.attempts.map((a) => a.requestId), ["t1:attempt:1", "t1:attempt:2"], "request ids");
    assertEq(record.attempts.map((a) => a.route), ["primary", "fallback"], "routes");
    assertEq(record.attempts.map((a) => a.result), ["timeout", "accepted"], "results");
    assertEq(record.acceptedRequestId, "t1:attempt:2", "acceptedRequestId");
    assertEq(record.acceptedText, "fallback answer", "acceptedText");
    assert(primary.calls[0].signal.aborted, "the timed-out attempt's signal is aborted");
    assertEq(primary.calls[0].signal.reason.name, "TimeoutError", "abort reason");
    assert(!fallback.calls[0].signal.aborted, "the fallback gets a fresh, live signal");
    assertEq(primary.calls[0].requestId, "t1:attempt:1", "requestId given to the route");
    assertEq(primary.calls[0].input, "hello", "input given to the route");
    await sleep(450);
    assertEq(controller.getTurn("t1").attempts[0].result, "late", "the primary's late answer is recorded");
    assertEq(tts.spoken.length, 1, "the late answer never reaches TTS");
    controller.free();
  },

  async interruptWhileGeneratingIsSilent(make) {
    const primary = route("primary", answerAfter(150, "stale answer"));
    const fallback = route("fallback", answerAfter(1, "fallback"));
    const tts = speaker();
    const controller = make([primary, fallback], { recoveryText: RECOVERY, attemptTimeoutMs: 1000, ...tts });
    const pending = controller.run("t1", "book a table");
    await sleep(20);
    assertEq(controller.interrupt("t1"), true, "interrupting a running turn");
    assertEq(controller.interrupt("t1"), false, "interrupting it again");
    const record = await pending;
    assertEq(record.status, "cancelled", "status");
    assert(primary.calls[0].signal.aborted, "the attempt's signal is aborted");
    assertEq(primary.calls[0].signal.reason.name, "AbortError", "abort reason");
    await sleep(250);
    assertEq(tts.spoken, [], "nothing spoken, no recovery");
    assertEq(fallback.calls.length, 0, "no fallback after an interrupt");
    assertEq(controller.getTurn("t1").attempts[0].result, "late", "the ignored-abort answer is recorded as late");
    assertEq(controller.getTurn("t1").status, "cancelled", "still cancelled");
    controller.free();
  },

  async bothRoutesFailOneRecovery(make) {
    const primary = route("primary", failWith({ status: 503 }));
    const fallback = route("fallback", failWith(new TypeError("Failed to fetch")));
    const third = route("third", answerAfter(1, "never asked"));
    const tts = speaker();
    const controller = make([primary, fallback, third], { recoveryText: RECOVERY, ...tts });
    const record = await controller.run("t1", "hello");
    assertEq(tts.spoken, [{ turnId: "t1", kind: "recovery", text: RECOVERY }], "one recovery");
    assertEq(record.status, "exhausted", "status");
    assertEq(record.recoveryReason, "exhausted", "reason");
    assertEq(record.attempts.map((a) => a.error), ["http_503", "network"], "errors");
    assertEq([primary.calls.length, fallback.calls.length, third.calls.length], [1, 1, 0], "no third call");
    controller.free();
  },

  async nonRetryableFailureGoesStraightToRecovery(make) {
    const primary = route("primary", failWith({ status: 401 }));
    const fallback = route("fallback", answerAfter(1, "fallback"));
    const tts = speaker();
    const controller = make([primary, fallback], { recoveryText: RECOVERY, ...tts });
    const record = await controller.run("t1", "hello");
    assertEq(record.recoveryReason, "non_retryable", "reason");
    assertEq(fallback.calls.length, 0, "no fallback after a 401");
    const second = make([route("p", failWith({ retryable: false, message: "refused" })), fallback], {
      recoveryText: RECOVERY, ...tts,
    });
    assertEq((await second.run("t2", "hi")).recoveryReason, "non_retryable", "retryable: false");
    assertEq(fallback.calls.length, 0, "no fallback after retryable: false");
    assertEq(tts.spoken.map((s) => s.kind), ["recovery", "recovery"], "one recovery each");
    controller.free();
    second.free();
  },

  async duplicateRunStartsNothing(make) {
    const primary = route("primary", answerAfter(50, "answer"));
    const tts = speaker();
    const controller = make([primary], { recoveryText: RECOVERY, ...tts });
    const [first, concurrent] = await Promise.all([controller.run("t1", "hi"), controller.run("t1", "hi")]);
    assertEq(concurrent, first, "the concurrent duplicate resolves with the same record");
    const later = await controller.run("t1", "something else");
    assertEq(later, first, "a duplicate after settling resolves with the retained record");
    assertEq(primary.calls.length, 1, "one LLM call");
    assertEq(tts.spoken.length, 1, "one answer");
    controller.free();
  },

  async answerAfterDeadlineIsLate(make) {
    let answered = false;
    const primary = route("primary", () => new Promise((resolve) => setTimeout(() => {
      answered = true;
      resolve("too late");
    }, 300)));
    const tts = speaker();
    const controller = make([primary, route("fallback", answerAfter(1, "x"))], {
      recoveryText: RECOVERY, turnDeadlineMs: 100, attemptTimeoutMs: 1000, ...tts,
    });
    const record = await controller.run("t1", "hello");
    assert(!answered, "recovery comes at the deadline, before the slow route returns");
    assertEq(record.status, "exhausted", "status");
    assertEq(record.recoveryReason, "deadline", "reason");
    assertEq(tts.spoken, [{ turnId: "t1", kind: "recovery", text: RECOVERY }], "recovery once");
    await sleep(300);
    assert(answered, "the route did answer eventually");
    assertEq(controller.getTurn("t1").attempts[0].result, "late", "recorded as late");
    assertEq(tts.spoken.length, 1, "the late answer never reaches TTS");
    controller.free();
  },

  async deadlineShorterThanAttemptTimeout(make) {
    const primary = route("primary", never);
    const fallback = route("fallback", answerAfter(1, "x"));
    const tts = speaker();
    const controller = make([primary, fallback], {
      recoveryText: RECOVERY, turnDeadlineMs: 80, attemptTimeoutMs: 500, ...tts,
    });
    const record = await controller.run("t1", "hello");
    assertEq([primary.calls.length, fallback.calls.length], [1, 0], "one call");
    assertEq(record.recoveryReason, "deadline", "reason");
    assertEq(record.attempts[0].result, "timeout", "attempt result");
    assert(primary.calls[0].signal.aborted, "the attempt is aborted at the deadline");
    assertEq(tts.spoken.length, 1, "one recovery");
    controller.free();
  },

  async routeThrowsSynchronously(make) {
    const primary = route("primary", () => {
      throw new Error("bug in the route");
    });
    const tts = speaker();
    const controller = make([primary, route("fallback", answerAfter(1, "fallback"))], { recoveryText: RECOVERY, ...tts });
    const record = await controller.run("t1", "hello");
    assertEq(record.attempts.map((a) => a.error || a.result), ["route_error", "accepted"], "attempts");
    assertEq(tts.spoken, [{ turnId: "t1", kind: "answer", text: "fallback" }], "fallback answers");
    controller.free();
    // The fallback is called from inside the report of the primary's failure: its throw, or its
    // plain answer, is reported while that report still runs.
    const unreachable = () => Promise.reject(new TypeError("Failed to fetch"));
    const after = speaker();
    const throwing = make([route("primary", unreachable), route("fallback", () => { throw new Error("bug"); })],
      { recoveryText: RECOVERY, ...after });
    const failed = await throwing.run("t2", "hello");
    assertEq(failed.attempts.map((a) => a.error), ["network", "route_error"], "a throw reported inside a report");
    assertEq(failed.status, "exhausted", "no route answered");
    const plain = make([route("primary", unreachable), route("fallback", () => "at once")], { recoveryText: RECOVERY, ...after });
    const answered = await plain.run("t3", "hello");
    assertEq(answered.attempts.map((a) => a.error || a.result), ["network", "accepted"], "a plain answer inside a report");
    assertEq(after.spoken, [
      { turnId: "t2", kind: "recovery", text: RECOVERY },
      { turnId: "t3", kind: "answer", text: "at once" },
    ], "the recovery, then the plain answer");
    throwing.free();
    plain.free();
  },

  async nonStringNeverReachesTts(make) {
    const tts = speaker();
    const controller = make([
      route("primary", () => Promise.resolve(42)),
      route("fallback", () => Promise.resolve({ text: "an object" })),
    ], { recoveryText: RECOVERY, ...tts });
    const record = await controller.run("t1", "hello");
    assertEq(record.attempts.map((a) => a.error), ["no_text", "no_text"], "errors");
    assertEq(tts.spoken, [{ turnId: "t1", kind: "recovery", text: RECOVERY }], "only the recovery text");
    const blank = make([route("blank", () => "   ")], { recoveryText: RECOVERY, maxAttemptsPerTurn: 1, ...tts });
    assertEq((await blank.run("t2", "hi")).status, "exhausted", "white space is no text");
    controller.free();
    blank.free();
  },

  async throwingOnAcceptedTextChangesNothing(make) {
    const events = [];
    const errors = [];
    let answers = 0;
    let recoveries = 0;
    const controller = make([route("primary", answerAfter(1, "answer"))], {
      recoveryText: RECOVERY,
      onAcceptedText() {
        answers += 1;
        throw new Error("TTS exploded");
      },
      onRecovery() {
        recoveries += 1;
      },
      onEvent: (event) => events.push(event),
      onError: (error) => errors.push(error),
    });
    const record = await controller.run("t1", "hello");
    assertEq(record.status, "accepted", "still accepted");
    const second = await controller.run("t2", "again");
    assertEq(second.status, "accepted", "the controller stays usable");
    assertEq([answers, recoveries], [2, 0], "no recovery, no second answer");
    const reported = events.filter((e) => e.type === "callback_error");
    assertEq(reported.map((e) => [e.turnId, e.callback, Number.isFinite(e.at)]), [["t1", "onAcceptedText", true], ["t2", "onAcceptedText", true]], "reported as events");
    assertEq(errors.map((e) => [e instanceof Error, e.code, e.terminal, e.callback, e.turnId, e.cause.message]), [[true, "callback_error", false, "onAcceptedText", "t1", "TTS exploded"], [true, "callback_error", false, "onAcceptedText", "t2", "TTS exploded"]], "reported to onError");
    controller.free();
  },

  // One rule, no loop: a throwing onEvent is reported to onError only, a throwing onError through
  // onEvent only, and a throw made while reporting is not reported again.
  async throwingOnEventAndOnErrorAreReportedOnceWithoutALoop(make) {
    const errors = [];
    const events = [];
    const eventThrows = make([route("primary", answerAfter(1, "answer"))], {
      recoveryText: RECOVERY,
      onAcceptedText() {},
      onRecovery() {},
      onEvent(event) {
        events.push(event.type);
        if (event.type === "turn_started") throw new Error("log sink down");
      },
      onError: (error) => errors.push([error.callback, error.cause.message]),
    });
    assertEq((await eventThrows.run("t1", "hello")).status, "accepted", "the turn goes on");
    assertEq(errors, [["onEvent", "log sink down"]], "onEvent's throw went to onError once");
    assert(!events.includes("callback_error"), "and not to onEvent itself");
    eventThrows.free();

    const seen = [];
    const both = make([route("primary", answerAfter(1, "answer"))], {
      recoveryText: RECOVERY,
      onAcceptedText() {
        throw new Error("first");
      },
      onRecovery() {},
      onEvent(event) {
        if (event.type === "callback_error") {
          seen.push(`event:${event.callback}`);
          throw new Error("event sink down");
        }
      },
      onError(error) {
        seen.push(`error:${error.callback}`);
        throw new Error("error sink down");
      },
    });
    assertEq((await both.run("t1", "hello")).status, "accepted", "accepted");
    assertEq((await both.run("t2", "again")).status, "accepted", "the next turn still works");
    // onAcceptedText's throw goes to onError (which throws: an event names it) and to onEvent
    // (which throws: onError names it); those last two throws are reported no further.
    const once = ["error:onAcceptedText", "event:onError", "event:onAcceptedText", "error:onEvent"];
    assertEq(seen, [...once, ...once], "each throw reported once per turn, nothing loops");
    both.free();
  },

  async reentrantCallsFromOnAcceptedText(make) {
    let controller;
    const seen = {};
    let followUp;
    controller = make([route("primary", answerAfter(1, "answer"))], {
      recoveryText: RECOVERY,
      onAcceptedText(turnId) {
        if (turnId !== "t1") return;
        seen.status = controller.getTurn("t1").status;
        seen.interrupted = controller.interrupt("t1");
        followUp = controller.run("t2", "follow-up");
      },
      onRecovery() {},
    });
    await controller.run("t1", "hello");
    assertEq(seen, { status: "accepted", interrupted: false }, "state seen from inside the callback");
    assertEq((await followUp).status, "accepted", "a turn started from inside the callback runs");
    controller.free();
  },

  async reentrantCallsFromGenerate(make) {
    let controller;
    const seen = {};
    let nested;
    const primary = route("primary", (request) => {
      if (request.turnId === "t1") {
        const turn = controller.getTurn("t1");
        seen.running = [turn.status, turn.attempts.length, turn.attempts[0].result];
        nested = controller.run("t2", "nested");
        return answerAfter(5, "answer one")();
      }
      if (request.turnId === "t3") {
        seen.interruptedSelf = controller.interrupt("t3");
        return "answer three";
      }
      return "answer two";
    });
    const tts = speaker();
    controller = make([primary], { recoveryText: RECOVERY, ...tts });
    const first = await controller.run("t1", "one");
    assertEq(seen.running, ["running", 1, "running"], "getTurn from inside generate");
    assertEq(first.status, "accepted", "t1");
    assertEq((await nested).status, "accepted", "t2 started from inside generate");
    const third = await controller.run("t3", "three");
    assertEq(seen.interruptedSelf, true, "interrupt from inside generate");
    assertEq(third.status, "cancelled", "t3 cancelled");
    assertEq(controller.getTurn("t3").attempts[0].result, "late", "its answer came after the interrupt");
    assertEq(tts.spoken.map((s) => s.turnId).sort(), ["t1", "t2"], "t3 silent");
    controller.free();
  },

  async fortyConcurrentTurnsWithRandomFaults(make) {
    const random = seededRandom(7);
    const behaviours = [
      (ms) => answerAfter(ms, "ok")(),
      (ms) => new Promise((_, reject) => setTimeout(() => reject({ status: 503 }), ms)),
      (ms) => new Promise((_, reject) => setTimeout(() => reject({ status: 400 }), ms)),
      () => { throw new Error("sync"); },
      () => never(),
      (ms) => answerAfter(ms, 7)(),
      (ms) => answerAfter(ms + 150, "slow")(),
    ];
    const pick = () => {
      const behave = behaviours[Math.floor(random() * behaviours.length)];
      const ms = Math.floor(random() * 80);
      return () => behave(ms);
    };
    const plans = new Map();
    const calls = new Map();
    const generate = (request) => {
      calls.set(request.turnId, (calls.get(request.turnId) || 0) + 1);
      return plans.get(request.requestId)();
    };
    const tts = speaker();
    const controller = make([{ name: "a", generate }, { name: "b", generate }], {
      recoveryText: RECOVERY, attemptTimeoutMs: 60, turnDeadlineMs: 200, ...tts,
    });
    const runs = [];
    for (let i = 0; i < 40; i++) {
      const turnId = `turn-${i}`;
      plans.set(`${turnId}:attempt:1`, pick());
      plans.set(`${turnId}:attempt:2`, pick());
      runs.push(controller.run(turnId, `utterance ${i}`));
      if (random() < 0.25) {
        const delay = Math.floor(random() * 150);
        setTimeout(() => controller.interrupt(turnId), delay);
      }
    }
    const records = await Promise.all(runs);
    await sleep(400);
    const byTurn = (turnId) => tts.spoken.filter((s) => s.turnId === turnId);
    for (const record of records) {
      const out = byTurn(record.turnId);
      const final = controller.getTurn(record.turnId);
      assert(final.status === record.status, `${record.turnId}: status is final`);
      assert(calls.get(record.turnId) <= 2, `${record.turnId}: at most two calls`);
      assert(new Set(final.attempts.map((a) => a.requestId)).size === final.attempts.length, "distinct request ids");
      if (record.status === "accepted") {
        assertEq(out, [{ turnId: record.turnId, kind: "answer", text: record.acceptedText }], `${record.turnId} accepted`);
      } else if (record.status === "exhausted") {
        assertEq(out, [{ turnId: record.turnId, kind: "recovery", text: RECOVERY }], `${record.turnId} exhausted`);
      } else {
        assertEq(record.status, "cancelled", `${record.turnId} settled`);
        assertEq(out, [], `${record.turnId} cancelled is silent`);
      }
      for (const attempt of final.attempts) {
        assert(attempt.startedAt <= record.deadlineAt, `${attempt.requestId} started before the deadline`);
      }
    }
    const statuses = new Set(records.map((r) => r.status));
    assert(statuses.size === 3, `the schedule covers accepted, exhausted and cancelled (got ${[...statuses]})`);
    controller.free();
  },

  async invalidOptionsThrowNamedErrors(make) {
    const ok = { name: "primary", generate: () => "x" };
    const base = { recoveryText: RECOVERY, onAcceptedText() {}, onRecovery() {} };
    const cases = [
      ["routes not an array", {}, base, TypeError, /routes/],
      ["routes empty", [], base, RangeError, /routes/],
      ["route without generate", [ok, { name: "b" }], base, TypeError, /routes\[1\]\.generate/],
      ["route without name", [{ generate: () => "x" }], base, TypeError, /routes\[0\]\.name/],
      ["options missing", [ok], undefined, TypeError, /options/],
      ["missing recoveryText", [ok], { ...base, recoveryText: undefined }, TypeError, /recoveryText/],
      ["empty recoveryText", [ok], { ...base, recoveryText: "" }, RangeError, /recoveryText/],
      ["negative turnDeadlineMs", [ok], { ...base, turnDeadlineMs: -1 }, RangeError, /turnDeadlineMs/],
      ["string turnDeadlineMs", [ok], { ...base, turnDeadlineMs: "100" }, TypeError, /turnDeadlineMs/],
      ["NaN attemptTimeoutMs", [ok], { ...base, attemptTimeoutMs: NaN }, RangeError, /attemptTimeoutMs/],
      ["infinite attemptTimeoutMs", [ok], { ...base, attemptTimeoutMs: Infinity }, RangeError, /attemptTimeoutMs/],
      ["non-function onAcceptedText", [ok], { ...base, onAcceptedText: "speak" }, TypeError, /onAcceptedText/],
      ["missing onRecovery", [ok], { ...base, onRecovery: undefined }, TypeError, /onRecovery/],
      ["non-function onEvent", [ok], { ...base, onEvent: 5 }, TypeError, /onEvent/],
      ["non-function onError", [ok], { ...base, onError: "log" }, TypeError, /options\.onError/],
      ["zero maxAttemptsPerTurn", [ok], { ...base, maxAttemptsPerTurn: 0 }, RangeError, /maxAttemptsPerTurn/],
      ["fractional maxAttemptsPerSession", [ok], { ...base, maxAttemptsPerSession: 1.5 }, RangeError, /maxAttemptsPerSession/],
      ["negative historyLimit", [ok], { ...base, historyLimit: -3 }, RangeError, /historyLimit/],
      ["string maxInputChars", [ok], { ...base, maxInputChars: "10" }, TypeError, /maxInputChars/],
      ["negative retry tokens", [ok], { ...base, retryBudget: { maxTokens: -1 } }, RangeError, /retryBudget\.maxTokens/],
    ];
    for (const [label, routes, options, type, pattern] of cases) {
      await assertThrows(() => make(routes, options), type, pattern, label);
    }
    const primary = route("primary", answerAfter(1, "x"));
    const controller = make([primary], { ...base, maxInputChars: 10 });
    await assertThrows(() => controller.run(5, "hi"), TypeError, /turnId/, "numeric turnId");
    await assertThrows(() => controller.run("", "hi"), RangeError, /turnId/, "empty turnId");
    await assertThrows(() => controller.run("t1", { text: "hi" }), TypeError, /input/, "object input");
    await assertThrows(() => controller.run("t1", "x".repeat(11)), RangeError, /maxInputChars/, "oversize input");
    assertEq(controller.getTurn("t1"), undefined, "nothing started for refused input");
    assertEq(primary.calls.length, 0, "no LLM call for refused input");
    await assertThrows(() => controller.interrupt(5), TypeError, /turnId/, "numeric interrupt");
    await assertThrows(() => controller.getTurn(null), TypeError, /turnId/, "null getTurn");
    assertEq((await controller.run("t1", "x".repeat(10))).status, "accepted", "usable after bad input");
    controller.free();
  },

  async disposeAbortsRunningTurns(make) {
    const primary = route("primary", never);
    const tts = speaker();
    const controller = make([primary], { recoveryText: RECOVERY, turnDeadlineMs: 200, ...tts });
    const pending = controller.run("t1", "hello");
    await sleep(10);
    controller[Symbol.dispose]();
    const record = await pending;
    assertEq(record.status, "cancelled", "disposed turns are cancelled");
    assert(primary.calls[0].signal.aborted, "their signals are aborted");
    await sleep(250);
    assertEq(tts.spoken, [], "no recovery after dispose, not even at the old deadline");
  },

  async sessionAndRetryBudgets(make) {
    const tts = speaker();
    let failPrimary = true;
    const primary = route("primary", () => (failPrimary ? Promise.reject({ status: 500 }) : "primary"));
    const fallback = route("fallback", answerAfter(1, "fallback"));
    const session = make([primary, fallback], { recoveryText: RECOVERY, maxAttemptsPerSession: 3, ...tts });
    assertEq((await session.run("t1", "a")).attempts.length, 2, "t1 uses two attempts");
    failPrimary = false;
    assertEq((await session.run("t2", "b")).status, "accepted", "t2 uses the third");
    const spent = await session.run("t3", "c");
    assertEq([spent.status, spent.recoveryReason, spent.attempts.length], ["exhausted", "session_budget", 0], "t3");
    assertEq(primary.calls.length + fallback.calls.length, 3, "three LLM calls in all");
    session.free();

    const outage = route("primary", failWith({ status: 503 }));
    const backup = route("backup", failWith({ status: 503 }));
    const throttled = make([outage, backup], {
      recoveryText: RECOVERY, retryBudget: { maxTokens: 4, tokenRatio: 0.5 }, ...tts,
    });
    assertEq((await throttled.run("o1", "a")).attempts.length, 2, "first outage turn falls back");
    const second = await throttled.run("o2", "b");
    assertEq([second.attempts.length, second.recoveryReason], [1, "retry_budget"], "then the budget throttles");
    throttled.free();
  },

  async historyAndEventsStayBoundedAndClean(make) {
    const events = [];
    const controller = make([route("primary", answerAfter(1, "the secret answer"))], {
      recoveryText: RECOVERY, historyLimit: 3, onAcceptedText() {}, onRecovery() {},
      onEvent: (event) => events.push(event),
    });
    for (let i = 1; i <= 5; i++) await controller.run(`t${i}`, "my secret input");
    assertEq(controller.getTurn("t1"), undefined, "the oldest record is dropped");
    assertEq(controller.getTurn("t2"), undefined, "and the next");
    assertEq(controller.getTurn("t5").status, "accepted", "the newest is kept");
    const firstTurn = events.filter((e) => e.turnId === "t1").map((e) => e.type);
    assertEq(firstTurn, ["turn_started", "attempt_started", "committed", "attempt_finished", "accepted"], "event sequence");
    const text = JSON.stringify(events);
    assert(!text.includes("secret"), "no input or answer text in events");
    const record = controller.getTurn("t5");
    assertEq(Object.keys(record).sort(), ["acceptedRequestId", "acceptedText", "attempts", "deadlineAt", "input", "startedAt", "status", "turnId"], "record fields");
    assertEq(Object.keys(record.attempts[0]).sort(), ["finishedAt", "requestId", "result", "route", "startedAt"], "attempt fields");
    assert(Math.abs(record.startedAt - Date.now()) < 60000, "times are epoch milliseconds");
    controller.free();
  },
};

export async function runScenario(name, make) {
  const scenario = scenarios[name];
  if (!scenario) throw new Error(`no scenario named ${name}`);
  await scenario(make);
}
