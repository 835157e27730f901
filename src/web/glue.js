// JS side of the browser shell, in one module so that a page fetches one file for it.
//
// 1. Turn records, events and requests (TurnController).
// 3. LiveTranscriber's WebSocket and microphone capture.

// JS side of the browser shell. Records, events and requests are built here as object literals,
// so the wasm side passes numbers and JS values it already holds instead of decoding one string
// per field (string decoding dominated the per-turn profile). The tables below mirror the Rust
// enums' order in src/web/report.rs.

const STATUS = ["running", "accepted", "cancelled", "exhausted"];
const RESULT = ["running", "accepted", "timeout", "error", "cancelled", "late"];
const REASON = ["exhausted", "deadline", "non_retryable", "persona", "session_budget", "retry_budget"];
const FAILURE = ["timeout", "network", "http", "route_error", "route_error_non_retryable", "no_text", "stalled", "answer_too_long"];

const failureName = (code, httpStatus) => (code === 2 ? `http_${httpStatus}` : FAILURE[code]);

export function requestIdOf(turnId, attemptNumber) {
  return `${turnId}:attempt:${attemptNumber}`;
}

/** Appends one exchange of the history as chat messages; an unheard answer adds no assistant message. */
export function pushExchange(messages, user, assistant) {
  messages.push({ role: "user", content: user });
  if (assistant) messages.push({ role: "assistant", content: assistant });
}

export function attemptRequest(requestId, turnId, input, signal, history) {
  const request = { requestId, turnId, input, signal };
  if (history !== undefined) request.history = history;
  return request;
}

/** `finishedAt` < 0 and `failure` < 0 mean absent. */
export function attemptRecord(requestId, route, startedAt, finishedAt, result, failure, httpStatus) {
  const attempt = { requestId, route, startedAt };
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
    case 1:
      return { type: "attempt_started", turnId, requestId, route, at, timeoutAt: amount };
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
    default:
      return { type: "cancelled", turnId, at };
  }
}

export function callbackError(turnId, callback, at) {
  return { type: "callback_error", turnId, callback, at };
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
export function watch(value, id, report) {
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

// ---- 3. LiveTranscriber ----

// JS side of LiveTranscriber: the WebSocket, provision(), error objects, microphone capture and
// the development provisioner. The state and the protocol live in Rust (src/core/transcriber.rs,
// src/core/gladia.rs); this file only performs browser I/O.

/**
 * Whether a text message is longer than `maxBytes` in UTF-8, measured without copying it into
 * wasm. UTF-8 never takes fewer bytes than UTF-16 code units, nor more than three per unit, so
 * only lengths in between are encoded to count.
 */
function oversize(text, maxBytes) {
  if (text.length > maxBytes) return true;
  if (text.length * 3 <= maxBytes) return false;
  return new TextEncoder().encode(text).length > maxBytes;
}

/**
 * Opens a socket whose events reach `onEvent(id, kind, value)`: 0 open, 1 close (code), 2 message
 * (its text, or undefined for a binary message, which the protocol does not use), 3 a text
 * message over `maxMessageBytes` (its text stays on the JS side).
 */
export function openSocket(url, id, onEvent, maxMessageBytes) {
  let socket;
  try {
    socket = new WebSocket(url);
  } catch {
    return null; // a URL the browser refuses (SyntaxError)
  }
  socket.binaryType = "arraybuffer";
  socket.onopen = () => onEvent(id, 0, undefined);
  socket.onclose = (event) => onEvent(id, 1, event.code);
  socket.onmessage = (event) => {
    const { data } = event;
    if (typeof data !== "string") onEvent(id, 2, undefined);
    else if (oversize(data, maxMessageBytes)) onEvent(id, 3, undefined);
    else onEvent(id, 2, data);
  };
  return socket;
}

/** Detaches the listeners first, so nothing more is reported from this socket, then closes it. */
export function closeSocket(socket) {
  socket.onopen = socket.onclose = socket.onmessage = null;
  if (socket.readyState <= 1) socket.close(1000);
}

/** `bytes` is a view on wasm memory: `send` copies it before returning. */
export function sendBytes(socket, bytes) {
  if (socket.readyState === 1) socket.send(bytes);
}

export function sendText(socket, text) {
  if (socket.readyState === 1) socket.send(text);
}

/** A property of an app object, or `undefined` when reading it throws (a hostile getter or proxy). */
function readSafely(object, key) {
  try {
    return object?.[key];
  } catch {
    return undefined;
  }
}

/** HTTP status carried by a provision() rejection: a numeric `status`, else 0 (network). */
const statusOf = (error) => {
  const status = readSafely(error, "status");
  return Number.isInteger(status) && status >= 100 && status <= 599 ? status : 0;
};

/**
 * Calls `provision({ signal })` and reports `done(url, id, status)` exactly once: status -1 on
 * success (url "" when the result has none), else the failure's HTTP status or 0. Every read of
 * the app's objects (`then`, `url`, `id`, `status`) is guarded: one that throws is a failure
 * without a status, never an exception out of here. Returns the AbortController.
 */
export function callProvision(provision, done) {
  const abort = new AbortController();
  let settled = false;
  const settle = (url, id, status) => {
    if (settled) return;
    settled = true;
    done(url, id, status);
  };
  const succeed = (session) => {
    let url;
    let id;
    try {
      url = session?.url;
      id = session?.id;
    } catch {
      return settle("", undefined, 0);
    }
    settle(typeof url === "string" ? url : "", typeof id === "string" ? id : undefined, -1);
  };
  const fail = (error) => settle("", undefined, statusOf(error));
  try {
    // `new Promise` adopts a thenable through its `then` and turns a throwing `then` getter into
    // a rejection; `Promise.resolve` would read `constructor` of a real promise unguarded.
    new Promise((resolve) => resolve(provision({ signal: abort.signal }))).then(succeed, fail);
  } catch (error) {
    fail(error);
  }
  return abort;
}

/** The error objects `onError` receives: real `Error`s with a `code` and `terminal`. */
export function transcriberError(code, message, terminal, status, frames, ms, totalFrames, attempts) {
  const error = new Error(message);
  error.code = code;
  error.terminal = terminal;
  if (status > 0) error.status = status;
  if (code === "audio_dropped") Object.assign(error, { frames, ms, totalFrames });
  if (attempts > 0) error.attempts = attempts;
  return error;
}

export function transcriberCallbackError(callback, cause) {
  const error = new Error(`${callback} threw`, { cause });
  error.code = "callback_error";
  error.terminal = false;
  error.callback = callback;
  return error;
}

export function domError(name, message) {
  return new DOMException(message, name);
}

// ---------------------------------------------------------------------------------------------
// Microphone capture (L5): getUserMedia + an AudioWorklet that mixes to mono, resamples to the
// transcriber's rate and posts PCM16 frames of 20 ms. The worklet is src/web/capture-worklet.js
// (shipped as pkg/capture-worklet.js). By default its source becomes a blob: URL, so bundlers
// need no extra file; a page whose CSP `script-src` does not allow `blob:` passes `workletUrl`,
// a same-origin URL of capture-worklet.js, instead.

const blobUrls = new Map();

export function isMediaStream(value) {
  return typeof MediaStream !== "undefined" && value instanceof MediaStream;
}

/** The error of a worklet that could not load: turnguard's own, naming CSP and the fix. */
function workletBlocked(url, blob, cause) {
  const where = blob ? "from a blob: URL" : `from ${url}`;
  const fix = blob
    ? "a Content-Security-Policy whose script-src does not allow blob: blocks it; allow blob: in script-src, or pass attachMicrophone(stream, { workletUrl }) naming a same-origin copy of turnguard's capture-worklet.js"
    : "check that the URL serves turnguard's capture-worklet.js as JavaScript and that the page's Content-Security-Policy script-src allows it";
  const error = new Error(`the microphone capture worklet could not load ${where}: ${fix}`, { cause });
  error.name = "WorkletBlockedError";
  error.code = "worklet_blocked";
  error.terminal = false;
  return error;
}

/**
 * Starts capturing `stream` (or the default microphone when undefined) and calls `onFrame(pcm)`
 * with each Int16Array frame; then `adopt(handle)` takes the handle for `stopCapture` (and may
 * throw, which rejects the returned promise and releases the capture). `workletUrl` (a string,
 * or undefined for the blob: default made from `workletSource`) names the worklet module. A
 * worklet that cannot load rejects with `worklet_blocked` and calls `onBlocked(error)` first.
 */
export function startCapture(stream, targetRate, onFrame, adopt, workletUrl, workletSource, onBlocked) {
  return capture(stream, targetRate, onFrame, workletUrl, workletSource, onBlocked).then((handle) => {
    try {
      adopt(handle);
    } catch (error) {
      stopCapture(handle);
      throw error;
    }
  });
}

async function capture(stream, targetRate, onFrame, workletUrl, workletSource, onBlocked) {
  const owned = stream === undefined;
  const media = owned
    ? await navigator.mediaDevices.getUserMedia({
        audio: { channelCount: 1, echoCancellation: true, noiseSuppression: true, autoGainControl: true },
      })
    : stream;
  // From here on, every failure releases what was taken: tracks of a stream opened here, the context.
  const capture = { media, owned, context: null, source: null, node: null };
  try {
    capture.context = new AudioContext({ latencyHint: "interactive" });
    const blob = workletUrl === undefined;
    const url = blob ? blobUrlFor(workletSource) : workletUrl;
    try {
      await capture.context.audioWorklet.addModule(url);
    } catch (cause) {
      const error = workletBlocked(url, blob, cause);
      try {
        onBlocked(error);
      } catch {
        // onBlocked reports to the app; its failure must not hide this one.
      }
      throw error;
    }
    capture.source = capture.context.createMediaStreamSource(media);
    capture.node = new AudioWorkletNode(capture.context, "turnguard-capture", {
      numberOfInputs: 1,
      numberOfOutputs: 1,
      outputChannelCount: [1],
      processorOptions: { targetRate, frameSamples: Math.max(1, Math.round(targetRate / 50)) },
    });
    capture.node.port.onmessage = (event) => onFrame(new Int16Array(event.data));
    // Connected to the destination (it outputs silence) so every browser keeps pulling it.
    capture.source.connect(capture.node).connect(capture.context.destination);
    // Not awaited: without a user gesture, resume() may wait for one; frames flow once it runs.
    if (capture.context.state !== "running") capture.context.resume().catch(() => {});
    return capture;
  } catch (error) {
    stopCapture(capture);
    throw error;
  }
}

function blobUrlFor(source) {
  let url = blobUrls.get(source);
  if (url === undefined) {
    url = URL.createObjectURL(new Blob([source], { type: "text/javascript" }));
    blobUrls.set(source, url);
  }
  return url;
}

/** Stops frames at once, disconnects, closes the context, and stops the tracks it opened itself. */
export function stopCapture(capture) {
  if (capture.stopped) return;
  capture.stopped = true;
  if (capture.node) {
    capture.node.port.onmessage = null;
    capture.node.disconnect();
  }
  capture.source?.disconnect();
  if (capture.owned) for (const track of capture.media.getTracks()) track.stop();
  capture.context?.close().catch(() => {});
}

// ---------------------------------------------------------------------------------------------
// Development-only provisioner: POST {apiUrl}/v2/live with the key, from the page.

export function makeGladiaProvisioner(apiKey, apiUrl, config) {
  const endpoint = `${apiUrl.replace(/\/+$/, "")}/v2/live`;
  const body = JSON.stringify({ encoding: "wav/pcm", sample_rate: 16000, bit_depth: 16, channels: 1, ...config });
  return async ({ signal } = {}) => {
    const response = await fetch(endpoint, {
      method: "POST",
      signal,
      headers: { "content-type": "application/json", "x-gladia-key": apiKey },
      body,
    });
    if (!response.ok) {
      throw Object.assign(new Error(`provisioning failed: HTTP ${response.status}`), { status: response.status });
    }
    const { id, url } = await response.json();
    return { id, url };
  };
}
