// Streaming routes against the dev stack's mock OpenAI-compatible server: real fetch, real SSE
// bytes, real AbortSignals. `make(routes, options)` is `new TurnController`, `chatRoute(options)`
// is `openAiCompatibleRoute`, `base` the dev stack's URL.

import { assert, assertEq, sleep } from "./support.js";

const RECOVERY = "Sorry, could you say that again?";

/** A TTS recorder that also keeps sentences. */
function listener() {
  const heard = { sentences: [], answers: [], recoveries: [] };
  return {
    heard,
    onSentence: (turnId, sentence) => heard.sentences.push(sentence),
    onAcceptedText: (turnId, text) => heard.answers.push(text),
    onRecovery: (turnId, text) => heard.recoveries.push(text),
  };
}

/** Wraps a route to count its calls. */
function counted(route) {
  const wrapped = { ...route, calls: 0 };
  wrapped.generate = (request) => {
    wrapped.calls += 1;
    return route.generate(request);
  };
  return wrapped;
}

async function stats(base) {
  return (await fetch(`${base}/__stats`, { cache: "no-store" })).json();
}

const llm = (base, scenario, query = "") => `${base}/llm/${scenario}/v1/chat/completions${query}`;

/** Runs `body` with the global `fetch` replaced by `fake(url, init)`, and puts it back after. */
async function withFetch(fake, body) {
  const real = globalThis.fetch;
  globalThis.fetch = fake;
  try {
    return await body();
  } finally {
    globalThis.fetch = real;
  }
}

/** A real `Response` whose body gives `parts` and then stays open; `log.cancelled` records its cancel. */
function sseResponse(parts, log, init) {
  const encoder = new TextEncoder();
  const body = new ReadableStream({
    start(controller) {
      for (const part of parts) controller.enqueue(encoder.encode(part));
    },
    cancel() {
      log.cancelled = true;
    },
  });
  return new Response(body, init);
}

const textEvent = (text) => `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: text } }] })}\n\n`;

/** Reads a stream to its end: its chunks, and the error it ended with, if any. */
async function readAll(stream) {
  const reader = stream.getReader();
  const chunks = [];
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return { chunks };
      chunks.push(value);
    }
  } catch (error) {
    return { chunks, error };
  }
}

/** Waits until the dev stack counts one more aborted request of `scenario` than `before`. */
async function abortedAfter(base, scenario, before) {
  let aborted = before;
  for (let i = 0; i < 40 && aborted === before; i++) {
    await sleep(50);
    aborted = (await stats(base)).llm.scenarios[scenario]?.aborted ?? 0;
  }
  return aborted > before;
}

const scenarios = {
  async normalStreamGivesOneAnswerAndItsSentencesInOrder(make, chatRoute, base) {
    const tts = listener();
    const controller = make([chatRoute({ name: "primary", url: llm(base, "ok"), model: "m" })], {
      recoveryText: RECOVERY, ...tts,
    });
    const record = await controller.run("s1", "tell me a story");
    assertEq(record.status, "accepted", "status");
    assert(record.acceptedText.startsWith("You said: tell me a story"), `answer: ${record.acceptedText}`);
    assertEq(tts.heard.answers, [record.acceptedText], "onAcceptedText once with the full text");
    assert(tts.heard.sentences.length >= 3, `several sentences (${tts.heard.sentences.length})`);
    assertEq(tts.heard.sentences.join(" "), record.acceptedText, "the sentences cover the answer in order");
    controller.free();
  },

  async commentsAndSplitEventsDecodeExactly(make, chatRoute, base) {
    const tts = listener();
    const controller = make([chatRoute({ name: "primary", url: llm(base, "comments"), model: "m" })], {
      recoveryText: RECOVERY, ...tts,
    });
    const record = await controller.run("s2", "unicode please");
    assertEq(record.status, "accepted", "status");
    for (const piece of ["Café crème", "日本語", "🙂"]) {
      assert(record.acceptedText.includes(piece), `"${piece}" survives splits inside UTF-8 characters`);
    }
    assert(!record.acceptedText.includes("\uFFFD"), "no replacement characters");
    assertEq(tts.heard.sentences.join(" "), record.acceptedText, "sentences cover the answer");
    controller.free();
  },

  async serverErrorFallsBack(make, chatRoute, base) {
    const tts = listener();
    const controller = make([
      chatRoute({ name: "primary", url: llm(base, "http500"), model: "m" }),
      chatRoute({ name: "fallback", url: llm(base, "ok"), model: "m" }),
    ], { recoveryText: RECOVERY, ...tts });
    const record = await controller.run("s3", "hello");
    assertEq(record.attempts.map((a) => [a.route, a.result, a.error]), [
      ["primary", "error", "http_500"], ["fallback", "accepted", undefined],
    ], "attempts");
    assertEq(tts.heard.answers.length, 1, "one answer");
    controller.free();
  },

  async unauthorizedGoesStraightToRecovery(make, chatRoute, base) {
    const tts = listener();
    const fallback = counted(chatRoute({ name: "fallback", url: llm(base, "ok"), model: "m" }));
    const controller = make([chatRoute({ name: "primary", url: llm(base, "http401"), model: "m" }), fallback], {
      recoveryText: RECOVERY, ...tts,
    });
    const record = await controller.run("s4", "hello");
    assertEq([record.status, record.recoveryReason], ["exhausted", "non_retryable"], "recovery");
    assertEq(fallback.calls, 0, "no fallback after a 401");
    assertEq(tts.heard.recoveries, [RECOVERY], "one recovery");
    assertEq(tts.heard.sentences, [], "no sentences");
    controller.free();
  },

  async noFirstChunkTimesOutThenFallsBack(make, chatRoute, base) {
    const tts = listener();
    const controller = make([
      chatRoute({ name: "primary", url: llm(base, "no_first_chunk"), model: "m" }),
      chatRoute({ name: "fallback", url: llm(base, "ok"), model: "m" }),
    ], { recoveryText: RECOVERY, firstChunkTimeoutMs: 300, attemptTimeoutMs: 3000, ...tts });
    const record = await controller.run("s5", "hello");
    assertEq(record.attempts.map((a) => [a.route, a.error || a.result]), [
      ["primary", "timeout"], ["fallback", "accepted"],
    ], "attempts");
    controller.free();
  },

  async stallAfterCommitKeepsWhatWasDeliveredWithoutFallback(make, chatRoute, base) {
    const tts = listener();
    const fallback = counted(chatRoute({ name: "fallback", url: llm(base, "ok"), model: "m" }));
    const controller = make([chatRoute({ name: "primary", url: llm(base, "stall_after", "?after=9"), model: "m" }), fallback], {
      recoveryText: RECOVERY, chunkIdleTimeoutMs: 300, ...tts,
    });
    const record = await controller.run("s6", "hello");
    assertEq(record.status, "accepted", "accepted with what was delivered");
    assertEq(record.attempts.map((a) => [a.result, a.error]), [["accepted", "stalled"]], "one stalled attempt");
    assert(record.acceptedText.length > 0 && record.acceptedText.startsWith("You said"), "partial text kept");
    assertEq(fallback.calls, 0, "no fallback after the commit");
    assertEq(tts.heard.answers, [record.acceptedText], "onAcceptedText with the delivered text");
    controller.free();
  },

  async interruptMidStreamStopsSentencesAndAbortsTheRequest(make, chatRoute, base) {
    const before = (await stats(base)).llm.scenarios.slow?.aborted ?? 0;
    const tts = listener();
    let controller;
    let sentencesAtInterrupt = -1;
    const firstSentence = new Promise((resolve) => {
      tts.onSentence = (turnId, sentence) => {
        tts.heard.sentences.push(sentence);
        resolve();
      };
    });
    controller = make([chatRoute({ name: "primary", url: llm(base, "slow", "?tokenMs=40"), model: "m" })], {
      recoveryText: RECOVERY, ...tts,
    });
    const pending = controller.run("s7", "hello");
    await firstSentence;
    assertEq(controller.interrupt("s7"), true, "interrupted mid-stream");
    sentencesAtInterrupt = tts.heard.sentences.length;
    const record = await pending;
    await sleep(600);
    assertEq(tts.heard.sentences.length, sentencesAtInterrupt, "not one more sentence");
    assertEq(tts.heard.answers, [], "no onAcceptedText");
    assertEq(record.status, "cancelled", "status");
    assertEq(record.acceptedRequestId, "s7:attempt:1", "names the attempt that was cut off");
    let aborted = before;
    for (let i = 0; i < 40 && aborted === before; i++) {
      await sleep(50);
      aborted = (await stats(base)).llm.scenarios.slow?.aborted ?? 0;
    }
    assert(aborted > before, "the server saw the request aborted");
    controller.free();
  },

  async garbageYieldsNoTextAndFallsBack(make, chatRoute, base) {
    const tts = listener();
    const controller = make([
      chatRoute({ name: "primary", url: llm(base, "garbage"), model: "m" }),
      chatRoute({ name: "fallback", url: llm(base, "ok"), model: "m" }),
    ], { recoveryText: RECOVERY, ...tts });
    const record = await controller.run("s8", "hello");
    assertEq(record.attempts.map((a) => a.error || a.result), ["no_text", "accepted"], "attempts");
    controller.free();
  },

  async requestBodiesCarryModelPromptAndHistoryOnlyWhereShared(make, chatRoute, base) {
    const tag = `m-${Math.floor(Math.random() * 1e9)}`;
    const okPrimary = chatRoute({ name: "primary", url: llm(base, "ok"), model: `${tag}-primary`, systemPrompt: "Be brief." });
    const failingPrimary = chatRoute({ name: "primary", url: llm(base, "http500"), model: `${tag}-primary`, systemPrompt: "Be brief." });
    const primary = { name: "primary", generate: (r) => (r.turnId === "b2" ? failingPrimary : okPrimary).generate(r) };
    const fallback = chatRoute({
      name: "fallback", url: llm(base, "ok"), model: `${tag}-fallback`, shareHistory: true,
      headers: { authorization: "Bearer app-session-token" }, body: { temperature: 0.2 },
    });
    const controller = make([primary, fallback], { recoveryText: RECOVERY, onAcceptedText() {}, onRecovery() {} });
    const first = await controller.run("b1", "first question");
    const second = await controller.run("b2", "second question");
    assertEq(second.attempts.map((a) => a.route), ["primary", "fallback"], "the second turn falls back");
    const recent = (await stats(base)).llm.recent.filter((r) => String(r.model).startsWith(tag));
    const bodies = recent.map((r) => (typeof r.body === "string" ? JSON.parse(r.body) : r.body));
    assertEq(bodies.length, 3, "three requests");
    for (const body of bodies) assertEq(body.stream, true, "stream: true");
    const [b1, b2primary, b2fallback] = bodies;
    assertEq(b1.model, `${tag}-primary`, "model");
    assertEq(b1.messages, [{ role: "system", content: "Be brief." }, { role: "user", content: "first question" }], "turn 1 messages");
    assertEq(b2primary.messages.length, 2, "the primary never gets history");
    assertEq(b2fallback.model, `${tag}-fallback`, "fallback model");
    assertEq(b2fallback.temperature, 0.2, "extra body fields");
    assertEq(b2fallback.messages, [
      { role: "user", content: "first question" },
      { role: "assistant", content: first.acceptedText },
      { role: "user", content: "second question" },
    ], "the fallback gets the history");
    assertEq(recent[2].authorization, true, "custom headers are sent");
    controller.free();
  },

  async badRouteOptionsThrowNamedErrors(make, chatRoute) {
    const cases = [
      [{ url: "/x", model: "m" }, TypeError, /options\.name/],
      [{ name: "a", model: "m" }, TypeError, /options\.url/],
      [{ name: "a", url: "/x" }, TypeError, /options\.model/],
      [{ name: "a", url: "/x", model: "m", headers: "x" }, TypeError, /^options\.headers must be an object/],
      [{ name: "a", url: "/x", model: "m", headers: null }, TypeError, /^options\.headers must be an object/],
      [{ name: "a", url: "/x", model: "m", body: [] }, TypeError, /^options\.body must be an object/],
      [{ name: "a", url: "/x", model: "m", shareHistory: "yes" }, TypeError, /options\.shareHistory/],
      [null, TypeError, /options/],
    ];
    for (const [options, type, pattern] of cases) {
      let caught;
      try {
        chatRoute(options);
      } catch (error) {
        caught = error;
      }
      assert(caught instanceof type && pattern.test(caught.message), `${JSON.stringify(options)} → ${caught}`);
    }
    const bad = { name: "x", generate: () => "x" };
    let caught;
    try {
      make([bad], { recoveryText: "r", onAcceptedText() {}, onRecovery() {}, fallbackPolicy: "sometimes" });
    } catch (error) {
      caught = error;
    }
    assert(caught instanceof RangeError && /fallbackPolicy/.test(caught.message), `fallbackPolicy → ${caught}`);
  },

  async asyncIterableRoutesStreamAndFallbackPoliciesApply(make) {
    const tts = listener();
    async function* words() {
      yield "Streaming ";
      yield "works. ";
      yield "Second sentence";
    }
    const streaming = make([{ name: "gen", generate: () => words() }], { recoveryText: RECOVERY, ...tts });
    const record = await streaming.run("g1", "hi");
    assertEq(tts.heard.sentences, ["Streaming works.", "Second sentence"], "sentences from an async iterable");
    assertEq(record.acceptedText, "Streaming works. Second sentence", "full text");
    streaming.free();

    const failing = { name: "primary", persona: "ava", generate: () => Promise.reject({ status: 503 }) };
    const other = { name: "fallback", persona: "max", generate: () => "hi" };
    const guarded = make([failing, other], { recoveryText: RECOVERY, fallbackPolicy: "samePersona", ...tts });
    assertEq((await guarded.run("p1", "hi")).recoveryReason, "persona", "samePersona refuses another persona");
    guarded.free();
    const none = make([failing, { ...other, persona: "ava" }], { recoveryText: RECOVERY, fallbackPolicy: "none", ...tts });
    const noneRecord = await none.run("p2", "hi");
    assertEq([noneRecord.attempts.length, noneRecord.recoveryReason], [1, "exhausted"], "none: no fallback at all");
    none.free();
  },

  async endlessStreamIsCutAtMaxAnswerChars(make, chatRoute, base) {
    // A real fetch of a 10 000-token stream: cut at the bound, and the server sees the abort.
    const before = (await stats(base)).llm.scenarios.ok?.aborted ?? 0;
    const tts = listener();
    const controller = make([chatRoute({ name: "primary", url: llm(base, "ok", "?tokens=10000&tokenMs=2"), model: "m" })], {
      recoveryText: RECOVERY, maxAnswerChars: 300, ...tts,
    });
    const record = await controller.run("e1", "go on for ever");
    assertEq(record.status, "accepted", "an endless answer ends accepted");
    assertEq(record.attempts.map((a) => [a.result, a.error]), [["accepted", "answer_too_long"]], "cut at the bound");
    const length = [...record.acceptedText].length;
    assert(length <= 300 && length > 200, `cut at the last sentence within 300 characters (${length})`);
    assert(record.acceptedText.endsWith("."), "at a sentence end");
    assertEq(tts.heard.answers, [record.acceptedText], "onAcceptedText once, with the delivered text");
    assertEq(tts.heard.sentences.join(" "), record.acceptedText, "the sentences delivered are the answer");
    let aborted = before;
    for (let i = 0; i < 40 && aborted === before; i++) {
      await sleep(50);
      aborted = (await stats(base)).llm.scenarios.ok?.aborted ?? 0;
    }
    assert(aborted > before, "the server saw the request aborted: the provider stops");
    controller.free();
  },

  async historyStaysUnderHistoryMaxChars(make) {
    // Each exchange is a 30-character input and a 20-character answer: 50 characters.
    const seen = [];
    const route = {
      name: "primary",
      shareHistory: true,
      generate: ({ turnId, history }) => {
        seen.push(history);
        return `Answer for turn ${turnId.padStart(3, "0")}.`;
      },
    };
    const controller = make([route], { recoveryText: RECOVERY, historyMaxChars: 120, onAcceptedText() {}, onRecovery() {} });
    for (let turn = 0; turn < 6; turn++) {
      const input = `question number ${turn}`.padEnd(30, ".");
      const record = await controller.run(`${turn}`, input);
      assertEq([...record.acceptedText].length, 20, "a 20-character answer");
    }
    seen.forEach((history, call) => {
      const size = history.reduce((sum, message) => sum + [...message.content].length, 0);
      assert(size <= 120, `call ${call}: history of ${size} characters is within historyMaxChars`);
      const users = history.filter((m) => m.role === "user").map((m) => m.content.slice(0, 17));
      const newest = Array.from({ length: Math.min(call, 2) }, (_, i) => `question number ${call - Math.min(call, 2) + i}`);
      assertEq(users.map((u) => u.replace(/\.+$/, "")), newest, `call ${call}: the newest two exchanges, oldest dropped first`);
    });
    let caught;
    try {
      make([route], { recoveryText: RECOVERY, historyMaxChars: 0, onAcceptedText() {}, onRecovery() {} });
    } catch (error) {
      caught = error;
    }
    assert(caught instanceof RangeError && /historyMaxChars/.test(caught.message), `historyMaxChars: 0 → ${caught}`);
    controller.free();
  },

  async readerIsCancelledWhenTheAttemptEndsEvenIfTheSignalIsIgnored(make, chatRoute, base) {
    // The route's fetch gets a signal that never aborts: only the answer stream's cancel (the
    // ladder stops reading once the attempt has ended) can end the request.
    const before = (await stats(base)).llm.scenarios.slow?.aborted ?? 0;
    const route = chatRoute({ name: "primary", url: llm(base, "slow", "?tokenMs=40"), model: "m" });
    const deaf = { name: "primary", generate: (request) => route.generate({ ...request, signal: new AbortController().signal }) };
    const tts = listener();
    const firstSentence = new Promise((resolve) => {
      tts.onSentence = (turnId, sentence) => {
        tts.heard.sentences.push(sentence);
        resolve();
      };
    });
    const controller = make([deaf], { recoveryText: RECOVERY, ...tts });
    const pending = controller.run("c1", "hello");
    await firstSentence;
    assertEq(controller.interrupt("c1"), true, "interrupted mid-stream");
    const record = await pending;
    assertEq(record.status, "cancelled", "status");
    assert(await abortedAfter(base, "slow", before), "the server saw the request end although its signal never fired");
    controller.free();
  },

  async generateSendsTheChatRequestAndResolvesWithATextStream(make, chatRoute, base) {
    const url = llm(base, "ok");
    const route = chatRoute({
      name: "primary", url, model: "m", systemPrompt: "Be brief.", persona: "ava", shareHistory: true,
      headers: { "x-session": "app-token" }, body: { temperature: 0.2 },
    });
    assertEq([route.name, route.persona, route.shareHistory, typeof route.generate], ["primary", "ava", true, "function"], "a plain route object");
    const signal = new AbortController().signal;
    const history = [{ role: "user", content: "before" }, { role: "assistant", content: "Earlier." }];
    const request = { requestId: "d1:attempt:1", turnId: "d1", input: "hello there", signal, history };
    const seen = [];
    const log = {};
    const stream = await withFetch((...call) => {
      seen.push(call);
      // The first read completes no text (a keep-alive, then half an event): the stream reads on.
      const parts = [": keep-alive\n\n", textEvent("Hello. ").slice(0, 20), textEvent("Hello. ").slice(20), textEvent("Bye."), "data: [DONE]\n\n"];
      return Promise.resolve(sseResponse(parts, log));
    }, () => route.generate(request));
    assertEq(seen.length, 1, "one fetch");
    const [[calledUrl, init]] = seen;
    assertEq([calledUrl, init.method, init.signal === signal], [url, "POST", true], "url, method and the attempt's signal");
    assertEq({ ...init.headers }, {
      "content-type": "application/json", accept: "text/event-stream", "idempotency-key": "d1:attempt:1", "x-session": "app-token",
    }, "headers");
    assertEq(JSON.parse(init.body), {
      temperature: 0.2,
      model: "m",
      messages: [{ role: "system", content: "Be brief." }, ...history, { role: "user", content: "hello there" }],
      stream: true,
    }, "body: the app's fields, then model, messages, stream");
    assert(stream instanceof ReadableStream, "resolves with a ReadableStream");
    const { chunks, error } = await readAll(stream);
    assertEq([chunks, error], [["Hello. ", "Bye."], undefined], "the answer's text, then the end at [DONE]");
    assertEq(log.cancelled, true, "a body still open after [DONE] is cancelled");

    // Against the dev stack: the whole answer.
    const real = await readAll(await route.generate({ ...request, history: undefined }));
    assert(real.error === undefined && real.chunks.join("").startsWith("You said: hello there"), `real answer: ${real.chunks.join("")}`);
  },

  async generateReportsHttpAndStreamErrors(make, chatRoute, base) {
    const request = { requestId: "d2:attempt:1", turnId: "d2", input: "hi", signal: new AbortController().signal };
    for (const [scenario, status] of [["http429", 429], ["http401", 401], ["http500", 500]]) {
      const route = chatRoute({ name: "p", url: llm(base, scenario), model: "m" });
      const error = await route.generate(request).then(() => undefined, (e) => e);
      assert(error instanceof Error, `${scenario}: rejects with an Error`);
      assertEq([error.name, error.status], ["HttpError", status], `${scenario}: name and status`);
      assert(error.message.includes(String(status)), `${scenario}: message names the status`);
    }
    const route = chatRoute({ name: "p", url: llm(base, "ok"), model: "m" });
    const refused = {};
    const error = await withFetch(() => Promise.resolve(sseResponse([textEvent("unread")], refused, { status: 503 })),
      () => route.generate(request).then(() => undefined, (e) => e));
    assertEq([error?.name, error?.status, refused.cancelled], ["HttpError", 503, true], "a refused answer's body is cancelled");

    const failing = {};
    const stream = await withFetch(
      () => Promise.resolve(sseResponse([textEvent("Hi there. "), 'data: {"error":{"message":"overloaded"}}\n\n'], failing)),
      () => route.generate(request));
    const read = await readAll(stream);
    assertEq(read.chunks, ["Hi there. "], "the text before the error event");
    assert(read.error instanceof Error && read.error.name === "StreamError", `then a StreamError: ${read.error}`);
    assertEq(failing.cancelled, true, "the body is released after the error event");

    const stopped = {};
    const open = await withFetch(() => Promise.resolve(sseResponse([textEvent("One. "), textEvent("Two. ")], stopped)),
      () => route.generate(request));
    const reader = open.getReader();
    assertEq((await reader.read()).value, "One. ", "first chunk");
    await reader.cancel();
    assertEq(stopped.cancelled, true, "cancelling the answer stream cancels the body");

    const missing = await route.generate(undefined).then(() => undefined, (e) => e);
    assert(missing instanceof TypeError, `generate without a request rejects with a TypeError: ${missing}`);
    const offline = await withFetch(() => Promise.reject(new TypeError("Failed to fetch")), () => route.generate(request).then(() => undefined, (e) => e));
    assert(offline instanceof TypeError && offline.message === "Failed to fetch", "a network error is passed on as it is");
  },
};

export async function runScenario(name, make, chatRoute, base) {
  const scenario = scenarios[name];
  if (!scenario) throw new Error(`no scenario named ${name}`);
  await scenario(make, chatRoute, base);
}
