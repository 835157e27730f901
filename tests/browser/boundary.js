// The JS boundary of TurnController under a hostile app: re-entrant calls from every callback,
// throwing getters on route results and errors, a host without `AbortSignal.any`, routes that
// stream on after their attempt ended. Every scenario ends with the module serving a new turn.

import { assert, assertEq, route, sleep, speaker } from "./support.js";

const RECOVERY = "Sorry, could you say that again?";

/** The module still serves: a fresh controller answers a fresh turn. */
async function stillServes(make) {
  const tts = speaker();
  const controller = make([route("ok", () => "Still here.")], { recoveryText: RECOVERY, ...tts });
  const record = await controller.run("after", "are you there?");
  assertEq([record.status, tts.spoken.map((s) => s.text)], ["accepted", ["Still here."]], "the module serves a new turn");
  controller.free();
}

/** Fails the scenario if anything was reported to the page as uncaught while it ran. */
function watchUncaught() {
  const seen = [];
  const onError = (event) => seen.push(String(event.message ?? event.reason));
  window.addEventListener("error", onError);
  window.addEventListener("unhandledrejection", onError);
  return () => {
    window.removeEventListener("error", onError);
    window.removeEventListener("unhandledrejection", onError);
    return seen;
  };
}

const CALLBACKS = ["turn_started", "attempt_started", "attempt_finished", "committed", "accepted", "onSentence", "onAcceptedText", "generate"];

/**
 * A controller whose answer is "One. Two." and that runs `act(controller)` once from the callback
 * or event named `where`, either inside the callback (`when: "now"`) or from a timer it arms
 * there (`when: "timer"`). Records what reached TTS and the order of calls.
 */
function reentrant(make, where, when, act) {
  let controller;
  const log = [];
  const fire = (name) => {
    if (name !== where) return;
    where = undefined; // once
    if (when === "now") act(controller, log);
    else setTimeout(() => act(controller, log), 0);
  };
  const primary = route("primary", () => {
    log.push("generate");
    fire("generate");
    return "One. Two.";
  });
  controller = make([primary], {
    recoveryText: RECOVERY,
    attemptTimeoutMs: 2000,
    onEvent: (event) => {
      log.push(event.type);
      fire(event.type);
    },
    onSentence: (_, sentence) => {
      log.push(`sentence:${sentence}`);
      fire("onSentence");
    },
    onAcceptedText: (_, text) => {
      log.push(`answer:${text}`);
      fire("onAcceptedText");
    },
    onRecovery: () => log.push("recovery"),
  });
  return { controller, log, primary };
}

const scenarios = {
  async freeFromEveryCallbackIsSilentAndIdempotent(make) {
    const uncaught = watchUncaught();
    for (const where of CALLBACKS) {
      for (const when of ["now", "timer"]) {
        const { controller, log, primary } = reentrant(make, where, when, (self, log) => {
          self.free();
          self.free();
          self[Symbol.dispose]();
          log.push("freed");
        });
        const record = await controller.run("t1", "count to two");
        await sleep(5);
        const label = `free() from ${where} (${when})`;
        const freedAt = log.indexOf("freed");
        assert(freedAt >= 0, `${label}: free ran`);
        const after = log.slice(freedAt + 1);
        if (when === "now") {
          assertEq(after, [], `${label}: no callback after free`);
          assert(record.status === "cancelled" || record.status === "accepted", `${label}: the run promise settles`);
        }
        if (where === "turn_started" && when === "now") {
          assertEq(primary.calls.length, 0, `${label}: the route of a turn freed before its attempt ran is never called`);
        }
        controller.free();
        let error;
        try {
          await controller.run("t2", "again");
        } catch (caught) {
          error = caught;
        }
        assert(error instanceof TypeError && /freed/.test(error.message), `${label}: run after free rejects with a TypeError`);
        assertEq([controller.interrupt("t1"), controller.getTurn("t1")], [false, undefined], `${label}: a freed controller is inert`);
      }
    }
    assertEq(uncaught(), [], "nothing escaped to the page");
    await stillServes(make);
  },

  async interruptFromEveryCallback(make) {
    const uncaught = watchUncaught();
    for (const where of CALLBACKS) {
      for (const when of ["now", "timer"]) {
        let interrupted;
        const { controller, log, primary } = reentrant(make, where, when, (self, log) => {
          interrupted = self.interrupt("t1");
          log.push("interrupted");
        });
        const record = await controller.run("t1", "count to two");
        await sleep(5);
        const label = `interrupt() from ${where} (${when})`;
        if (interrupted) {
          assertEq(record.status, "cancelled", `${label}: cancelled`);
          const after = log.slice(log.indexOf("interrupted") + 1);
          assert(!after.some((entry) => entry.startsWith("sentence:") || entry.startsWith("answer:")), `${label}: nothing spoken after the interrupt: ${after}`);
        } else {
          assertEq(record.status, "accepted", `${label}: a turn already accepted stays accepted`);
        }
        if (where === "turn_started") {
          if (when === "now") {
            assertEq(primary.calls.length, 0, `${label}: a turn cancelled before its attempt runs never calls its route`);
          }
        }
        controller.free();
      }
    }
    assertEq(uncaught(), [], "nothing escaped to the page");
    await stillServes(make);
  },

  async runFromEveryCallbackStartsOneTurnEach(make) {
    for (const where of CALLBACKS) {
      let nested;
      const { controller } = reentrant(make, where, "now", (self) => {
        nested = self.run("nested", "and again");
      });
      const record = await controller.run("t1", "count to two");
      assertEq(record.status, "accepted", `run() from ${where}: the outer turn`);
      const inner = await nested;
      assertEq([inner.turnId, inner.status], ["nested", "accepted"], `run() from ${where}: the nested turn`);
      // Idempotent from inside a callback too.
      assertEq((await controller.run("nested", "ignored")).status, "accepted", `run() from ${where}: a repeated id`);
      controller.free();
    }
    await stillServes(make);
  },

  async hostileRouteResultsAreAttemptFailures(make) {
    const uncaught = watchUncaught();
    const boom = () => {
      throw new Error("hostile getter");
    };
    const hostile = {
      thenGetterThrows: () => ({ get then() { return boom(); } }),
      thenThrows: () => ({ then() { boom(); } }),
      getReaderGetterThrows: () => ({ get getReader() { return boom(); } }),
      getReaderThrows: () => ({ getReader: boom }),
      asyncIteratorGetterThrows: () => ({ get [Symbol.asyncIterator]() { return boom(); } }),
      nextThrows: () => ({ [Symbol.asyncIterator]: () => ({ next: boom }) }),
      doneGetterThrows: () => ({ [Symbol.asyncIterator]: () => ({ next: async () => ({ get done() { return boom(); } }) }) }),
      promiseOfHostileStream: async () => ({ get getReader() { return boom(); } }),
      rejectsWithThrowingStatus: () => Promise.reject({ get retryable() { return boom(); }, get status() { return boom(); }, get name() { return boom(); } }),
      throwsWithThrowingGetters: () => {
        throw { get retryable() { return boom(); }, get status() { return boom(); } };
      },
      revokedProxy: () => {
        const { proxy, revoke } = Proxy.revocable({}, {});
        revoke();
        return proxy;
      },
    };
    for (const [name, generate] of Object.entries(hostile)) {
      const tts = speaker();
      const primary = route("primary", generate);
      const fallback = route("fallback", () => "Fallback answer.");
      const controller = make([primary, fallback], { recoveryText: RECOVERY, attemptTimeoutMs: 1000, ...tts });
      const record = await controller.run("t1", "hello");
      assertEq(
        [record.status, record.attempts.map((a) => `${a.route}:${a.result}`)],
        ["accepted", ["primary:error", "fallback:accepted"]],
        `${name}: the hostile result is the attempt's failure and the fallback answers`,
      );
      assertEq(tts.spoken.map((s) => s.text), ["Fallback answer."], `${name}: one answer`);
      controller.free();
    }
    assertEq(uncaught(), [], "nothing escaped to the page");
    await stillServes(make);
  },

  async worksWithoutAbortSignalAny(make) {
    const saved = AbortSignal.any;
    delete AbortSignal.any;
    try {
      assert(AbortSignal.any === undefined, "AbortSignal.any is gone");
      // The attempt's own timeout aborts its signal only; the next attempt starts live.
      const tts = speaker();
      const slow = route("primary", () => new Promise(() => {}));
      let liveAtStart;
      const fallback = route("fallback", (request) => {
        liveAtStart = !request.signal.aborted;
        return "Fallback answer.";
      });
      const ladder = make([slow, fallback], { recoveryText: RECOVERY, attemptTimeoutMs: 30, turnDeadlineMs: 60000, ...tts });
      const record = await ladder.run("t1", "hello");
      const first = slow.calls[0].signal;
      assert(first.aborted && first.reason.name === "TimeoutError", "the attempt's own timeout aborts its signal");
      assertEq([liveAtStart, fallback.calls[0].signal.aborted], [true, false], "the next attempt starts with a live signal, left alive");
      assertEq(record.status, "accepted", "the fallback answers");
      ladder.free();
      // The turn's end (interrupt) aborts its running attempt.
      const hanging = route("primary", () => new Promise(() => {}));
      const controller = make([hanging], { recoveryText: RECOVERY, attemptTimeoutMs: 60000, turnDeadlineMs: 60000, ...tts });
      const pending = controller.run("t2", "hello");
      const signal = hanging.calls[0].signal;
      assert(!signal.aborted, "running");
      assert(controller.interrupt("t2"), "interrupt");
      assert(signal.aborted && signal.reason.name === "AbortError", "the turn's end aborts the running attempt");
      assertEq((await pending).status, "cancelled", "cancelled");
      assertEq(tts.spoken.map((s) => s.turnId), ["t1"], "nothing spoken for the interrupted turn");
      controller.free();
      await stillServes(make);
    } finally {
      AbortSignal.any = saved;
    }
  },

  async streamsThatIgnoreTheirSignalReleaseEverything(make, memory) {
    // The primary streams forever after its attempt timed out, ignoring its signal; the
    // fallback answers. Wasm memory must not grow once the allocator is warm.
    let stopped = 0;
    const endless = () => ({
      async *[Symbol.asyncIterator]() {
        try {
          await sleep(8);
          for (;;) {
            yield "more text ";
            await sleep(1);
          }
        } finally {
          stopped += 1;
        }
      },
    });
    const silent = () => new Promise(() => {});
    const batch = async (controller, prefix, count) => {
      const runs = [];
      for (let i = 0; i < count; i++) runs.push(controller.run(`${prefix}-${i}`, "hello"));
      const records = await Promise.all(runs);
      return records.filter((record) => record.status === "accepted" || record.status === "exhausted").length;
    };
    // A retry budget large enough that every turn may fall back: this is about memory.
    const options = {
      recoveryText: RECOVERY, attemptTimeoutMs: 2, historyLimit: 50,
      retryBudget: { maxTokens: 1e6, tokenRatio: 1 }, onAcceptedText() {}, onRecovery() {},
    };
    const endlessRoute = route("endless", endless);
    const controller = make([endlessRoute, route("fallback", () => "ok")], options);
    const hanging = make([route("silent", silent), route("fallback", () => "ok")], options);
    // 50 turns in flight: the allocator's high-water mark settles within the warm-up.
    for (let round = 0; round < 40; round++) {
      await batch(controller, `warm-${round}`, 50);
      await batch(hanging, `warm-${round}`, 50);
    }
    await sleep(50);
    const before = memory.buffer.byteLength;
    let settled = 0;
    for (let round = 0; round < 40; round++) {
      settled += await batch(controller, `soak-${round}`, 50);
      settled += await batch(hanging, `soak-${round}`, 50);
    }
    await sleep(50);
    const after = memory.buffer.byteLength;
    // Mostly accepted; a fallback queued behind others can outlive a 2 ms timeout.
    assertEq(settled, 4000, "every soak turn settled");
    assertEq(stopped, endlessRoute.calls.length, "the shell stopped reading every endless stream");
    // One 64 KiB page of slack; the old leak (about 140 bytes per such turn) grew it by 4 pages.
    assert(after - before <= 65536, `wasm memory is flat over 4000 turns whose routes ignore their signals (${before} → ${after} bytes)`);
    controller.free();
    hanging.free();
    await stillServes(make);
  },

  async endlessAndHugeAnswersAreCutAtMaxAnswerChars(make, memory) {
    // An endless stream of sentences: cut at the bound, its signal aborted, the turn accepted.
    let signal;
    let chunks = 0;
    const endless = route("endless", (request) => {
      signal = request.signal;
      return {
        async *[Symbol.asyncIterator]() {
          for (;;) {
            chunks += 1;
            yield `Sentence number ${chunks} goes on. `;
            await sleep(0);
          }
        },
      };
    });
    const sentences = [];
    let answer;
    const controller = make([endless], {
      recoveryText: RECOVERY, maxAnswerChars: 200,
      onSentence: (_, sentence) => sentences.push(sentence),
      onAcceptedText: (_, text) => { answer = text; },
      onRecovery() {},
    });
    const record = await controller.run("t1", "talk forever");
    assertEq(record.status, "accepted", "an endless answer ends accepted");
    assert(record.acceptedText.length <= 200 && record.acceptedText.length > 150, `cut near the bound (${record.acceptedText.length})`);
    assertEq(answer, record.acceptedText, "onAcceptedText gets exactly the delivered text");
    assertEq(sentences.join(" "), answer, "the sentences delivered are the answer");
    assert(signal.aborted, "the stream's signal is aborted, so the provider stops");
    assertEq([signal.reason.name, /maxAnswerChars/.test(signal.reason.message)], ["AbortError", true], "the abort reason names the bound");
    const read = chunks;
    await sleep(20);
    assertEq(chunks, read, "the shell stopped reading the stream");
    controller.free();

    // A 64 MiB text (one chunk, and one whole answer): only what the bound can use is copied.
    const huge = `${"Word after word. ".repeat(4 * 1024 * 1024)}`.slice(0, 64 * 1024 * 1024);
    const before = memory.buffer.byteLength;
    for (const shape of ["chunk", "whole"]) {
      const giant = route("giant", () => (shape === "whole" ? huge : (async function* () { yield huge; })()));
      const bounded = make([giant], { recoveryText: RECOVERY, maxAnswerChars: 4000, onAcceptedText() {}, onRecovery() {} });
      const cut = await bounded.run("t1", "say everything");
      assertEq(cut.status, "accepted", `a 64 MiB ${shape} is accepted`);
      assert(cut.acceptedText.length <= 4000 && cut.acceptedText.endsWith("Word after word."), `a 64 MiB ${shape} is cut at a sentence within 4000 characters`);
      bounded.free();
    }
    assert(memory.buffer.byteLength - before < 1024 * 1024, `wasm memory did not take the 64 MiB (${before} → ${memory.buffer.byteLength})`);
    await stillServes(make);
  },

  async oversizeInputIsRefusedBeforeItIsCopied(make) {
    const primary = route("primary", () => "never");
    const controller = make([primary], { recoveryText: RECOVERY, maxInputChars: 10, onAcceptedText() {}, onRecovery() {} });
    let error;
    try {
      await controller.run("t1", "x".repeat(64 * 1024 * 1024));
    } catch (caught) {
      error = caught;
    }
    assert(error instanceof RangeError && /maxInputChars/.test(error.message), "a 64 Mi input is a RangeError naming maxInputChars");
    assertEq([primary.calls.length, controller.getTurn("t1")], [0, undefined], "nothing started");
    controller.free();
    await stillServes(make);
  },
};

export async function runScenario(name, make, memory) {
  const scenario = scenarios[name];
  if (!scenario) throw new Error(`no scenario named ${name}`);
  await scenario(make, memory);
}
