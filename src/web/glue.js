// JS side of the browser shell, in one module so that a page fetches one file for it.
//
// 1. Turn records, events and requests (TurnController).
//
// openAiCompatibleRoute's request and LiveTranscriber's browser I/O (WebSocket, provision(),
// getUserMedia and the AudioWorkletNode, the development provisioner's fetch) are Rust over
// web-sys: src/web/chat_request.rs, answer_stream.rs, transcriber/, microphone.rs.

// JS side of the browser shell. Records, events and requests are built here as object literals,
// so the wasm side passes numbers and JS values it already holds instead of decoding one string
// per field (string decoding dominated the per-turn profile). The tables below mirror the Rust
// enums' order in src/web/report.rs.

const STATUS = ["running", "accepted", "cancelled", "exhausted"];
const RESULT = ["running", "accepted", "timeout", "error", "cancelled", "late", "discarded"];
const DISCARD = ["text_changed", "history_changed", "withdrawn", "replaced", "failed", "expired"];
const REASON = ["exhausted", "deadline", "non_retryable", "persona", "session_budget", "retry_budget"];
const FAILURE = ["timeout", "network", "http", "route_error", "route_error_non_retryable", "no_text", "stalled", "answer_too_long"];

const failureName = (code, httpStatus) => (code === 2 ? `http_${httpStatus}` : FAILURE[code]);

/** Appends one exchange of the history as chat messages; an unheard answer adds no assistant message. */
export function pushExchange(messages, user, assistant) {
  messages.push({ role: "user", content: user });
  if (assistant) messages.push({ role: "assistant", content: assistant });
}

// The request `newAttempt` made, until `callRoute` (called right after it) takes it.
let nextRequest;

/** A new attempt's `AbortController`, and its route's request with that controller's signal. */
export function newAttempt(requestId, turnId, input, history) {
  const abort = new AbortController();
  nextRequest = { requestId, turnId, input, signal: abort.signal };
  if (history !== undefined) nextRequest.history = history;
  return abort;
}

/**
 * Calls `generate` on `route` with the request `newAttempt` made, and follows what it returns
 * (`watch`): a plain value, or an exception, is reported at once. Never throws. With `newAttempt`,
 * two calls from wasm where there were five (the controller, its signal, the request, the call,
 * the watch).
 */
export function callRoute(route, generate, id, report) {
  const request = nextRequest;
  nextRequest = undefined;
  let value;
  try {
    value = generate.call(route, request);
  } catch (error) {
    report(id, REJECTED, error);
    return;
  }
  if (!watch(value, id, report)) report(id, RESOLVED, value);
}

/** `finishedAt` < 0 and `failure` < 0 mean absent. */
export function attemptRecord(requestId, route, startedAt, finishedAt, result, failure, httpStatus, preemptive) {
  const attempt = { requestId, route, startedAt };
  if (preemptive) attempt.preemptive = true;
  if (finishedAt >= 0) attempt.finishedAt = finishedAt;
  attempt.result = RESULT[result];
  if (failure >= 0) attempt.error = failureName(failure, httpStatus);
  return attempt;
}

/** `reason` < 0 means absent; `acceptedRequestId`/`acceptedText` may be undefined. */
export function turnRecord(turnId, input, status, startedAt, deadlineAt, attempts, acceptedRequestId, acceptedText, reason) {
  const record = { turnId, input, status: STATUS[status], startedAt, deadlineAt, attempts };
  if (acceptedRequestId !== undefined) record.acceptedRequestId = acceptedRequestId;
  if (acceptedText !== undefined) record.acceptedText = acceptedText;
  if (reason >= 0) record.recoveryReason = REASON[reason];
  return record;
}

/** One event object; which fields it has depends on `kind` (see `Event` in src/core/turn.rs). */
export function turnEvent(kind, turnId, at, requestId, route, code, failure, httpStatus, amount) {
  switch (kind) {
    case 0:
      return { type: "turn_started", turnId, at };
    case 1: {
      const event = { type: "attempt_started", turnId, requestId, route, at, timeoutAt: amount };
      if (code > 0) event.preemptive = true;
      return event;
    }
    case 2: {
      const event = { type: "attempt_finished", turnId, requestId, route, at, result: RESULT[code] };
      if (failure >= 0) event.error = failureName(failure, httpStatus);
      event.durationMs = amount;
      return event;
    }
    case 3:
      return { type: "accepted", turnId, requestId, route, at, latencyMs: amount };
    case 4:
      return { type: "recovered", turnId, reason: REASON[code], at, latencyMs: amount };
    case 6:
      return { type: "committed", turnId, requestId, route, at, latencyMs: amount };
    case 8:
      return { type: "turn_forgotten", turnId, at };
    case 7: {
      const event = { type: "preemptive", turnId, requestId, at, kept: code < 0 };
      if (code >= 0) event.reason = DISCARD[code];
      return event;
    }
    default:
      return { type: "cancelled", turnId, at };
  }
}

// What `watch` reports to the shell, as the `kind` argument of `report(id, kind, value)`.
const RESOLVED = 0;
const REJECTED = 1;
const CHUNK = 2;
const END = 3;

// Every read of an app object below (`then`, `getReader`, `Symbol.asyncIterator`, `next`,
// `done`, `value`) may throw: each is inside a `try`, and a throw is the attempt's failure.

const isObject = (value) => value !== null && (typeof value === "object" || typeof value === "function");

/** `value.then` when it is a function, read once; throws when the getter does. */
function thenOf(value) {
  if (!isObject(value)) return undefined;
  const then = value.then;
  return typeof then === "function" ? then : undefined;
}

const nativeThen = Promise.prototype.then;

const isStream = (value) =>
  isObject(value) && (typeof value.getReader === "function" || typeof value[Symbol.asyncIterator] === "function");

/**
 * Follows what a route's `generate` returned: a promise of text, a stream of text (async iterable
 * or `ReadableStream`), or a promise of a stream. Reports through `report(id, kind, value)`; for a
 * chunk, `report` answers whether to keep reading. False when `value` is plain (not followed).
 * Never throws: a hostile value is reported as a rejection.
 */
function watch(value, id, report) {
  try {
    if (isStream(value)) {
      readStream(value, id, report);
      return true;
    }
    const then = thenOf(value);
    if (then === undefined) return false;
    // A foreign thenable is adopted through the `then` read once above; one whose `then` throws
    // is a rejection.
    const settled = then === nativeThen ? value : new Promise((resolve, reject) => then.call(value, resolve, reject));
    nativeThen.call(settled,
      (result) => follow(result, id, report),
      (error) => report(id, REJECTED, error),
    );
  } catch (error) {
    queueMicrotask(() => report(id, REJECTED, error));
  }
  return true;
}

function follow(result, id, report) {
  let stream;
  try {
    stream = isStream(result);
  } catch (error) {
    report(id, REJECTED, error);
    return;
  }
  if (stream) readStream(result, id, report);
  else report(id, RESOLVED, result);
}

async function readStream(stream, id, report) {
  let iterator;
  try {
    iterator = typeof stream.getReader === "function" ? readerIterator(stream) : stream[Symbol.asyncIterator]();
    for (;;) {
      const step = await iterator.next();
      if (step.done) break;
      if (!report(id, CHUNK, step.value)) {
        // The attempt ended (timeout, interrupt, another answer, the answer bound): stop a stream
        // that ignores its signal.
        stopReading(iterator);
        return;
      }
    }
  } catch (error) {
    report(id, REJECTED, error);
    return;
  }
  report(id, END, undefined);
}

function stopReading(iterator) {
  try {
    Promise.resolve(iterator.return?.()).catch(() => {});
  } catch {
    // A throwing `return` leaves nothing to release on this side.
  }
}

function readerIterator(stream) {
  const reader = stream.getReader();
  return {
    next: () => reader.read(),
    return: () => reader.cancel(),
  };
}

/** `run` promises waiting for a turn, by turn id. */
export function waitFor(waiters, turnId) {
  return new Promise((resolve) => {
    const list = waiters.get(turnId);
    if (list) list.push(resolve);
    else waiters.set(turnId, [resolve]);
  });
}

export function resolveWaiters(waiters, turnId, record) {
  const list = waiters.get(turnId);
  if (!list) return;
  waiters.delete(turnId);
  for (const resolve of list) resolve(record);
}

/** How a route's rejection maps onto the ladder (see `failure_from_code` in report.rs). A throwing
 * getter on the error counts as a plain route error. */
export function classifyError(error) {
  try {
    if (!isObject(error)) return 3;
    if (error.retryable === false) return 4;
    const status = error.status;
    if (Number.isInteger(status) && status >= 100 && status <= 599) return 1000 + status;
    const name = error.name;
    if (name === "TimeoutError") return 0;
    if (name === "TypeError" || name === "NetworkError") return 1;
  } catch {
    // fall through
  }
  return 3;
}

