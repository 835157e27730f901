// JS side of the browser shell, in one module so that a page fetches one file for it.
//
// 1. Turn records, events and requests (TurnController).
// 2. openAiCompatibleRoute's request side.
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

// ---- 2. openAiCompatibleRoute ----

// openAiCompatibleRoute's request side: POST a streaming chat completion with the attempt's
// signal, and hand the ladder the answer as a stream of text. The bytes are decoded by the core's
// SSE parser (a `ChatStreamDecoder` from `newDecoder()`).

export function chatRoute(spec, newDecoder) {
  const { name, url, model, headers, systemPrompt, persona, shareHistory, body } = spec;
  const route = {
    name,
    shareHistory,
    async generate({ requestId, input, signal, history }) {
      const messages = [];
      if (systemPrompt) messages.push({ role: "system", content: systemPrompt });
      if (history) messages.push(...history);
      messages.push({ role: "user", content: input });
      const response = await fetch(url, {
        method: "POST",
        signal,
        headers: {
          "content-type": "application/json",
          accept: "text/event-stream",
          "idempotency-key": requestId,
          ...headers,
        },
        body: JSON.stringify({ ...body, model, messages, stream: true }),
      });
      if (!response.ok || !response.body) {
        response.body?.cancel().catch(() => {});
        throw httpError(response.status);
      }
      return textStream(response.body, newDecoder());
    },
  };
  if (persona !== undefined) route.persona = persona;
  return route;
}

/** An error the ladder classifies by `status` (408, 429, 5xx retry; 400, 401, 403, 404, 422 do not). */
function httpError(status) {
  const error = new Error(`chat completion answered HTTP ${status}`);
  error.name = "HttpError";
  error.status = status;
  return error;
}

async function* textStream(body, decoder) {
  const reader = body.getReader();
  let finished = false;
  try {
    while (!decoder.done) {
      const { done, value } = await reader.read();
      if (done) {
        finished = true;
        yield* decoder.finish();
        break;
      }
      yield* decoder.push(value);
    }
    if (decoder.failed) {
      const error = new Error("chat completion reported an error in the stream");
      error.name = "StreamError";
      throw error;
    }
  } finally {
    // Stopped early ([DONE], an error, or the ladder no longer wants it): release the connection.
    if (!finished) reader.cancel().catch(() => {});
    decoder.free();
  }
}

// ---- 3. LiveTranscriber ----

// JS side of LiveTranscriber: the WebSocket, provision(), error objects, microphone capture and
// the development provisioner. The state and the protocol live in Rust (src/core/transcriber.rs,
// src/core/gladia.rs); this file only performs browser I/O.

/**
 * Opens a socket whose events reach `onEvent(id, kind, value)`: 0 open, 1 close (code), 2 message
 * (its text, or undefined for a binary message, which the protocol does not use).
 */
export function openSocket(url, id, onEvent) {
  let socket;
  try {
    socket = new WebSocket(url);
  } catch {
    return null; // a URL the browser refuses (SyntaxError)
  }
  socket.binaryType = "arraybuffer";
  socket.onopen = () => onEvent(id, 0, undefined);
  socket.onclose = (event) => onEvent(id, 1, event.code);
  socket.onmessage = (event) => onEvent(id, 2, typeof event.data === "string" ? event.data : undefined);
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

/** HTTP status carried by a provision() rejection: a numeric `status`, else 0 (network). */
const statusOf = (error) => {
  const status = error?.status;
  return Number.isInteger(status) && status >= 100 && status <= 599 ? status : 0;
};

/**
 * Calls `provision({ signal })` and reports `done(url, id, status)`: status -1 on success (url ""
 * when the result has none), else the failure's HTTP status or 0. Returns the AbortController.
 */
export function callProvision(provision, done) {
  const abort = new AbortController();
  let result;
  try {
    result = provision({ signal: abort.signal });
  } catch (error) {
    result = Promise.reject(error);
  }
  Promise.resolve(result).then(
    (session) => {
      const url = session?.url;
      const id = session?.id;
      done(typeof url === "string" ? url : "", typeof id === "string" ? id : undefined, -1);
    },
    (error) => done("", undefined, statusOf(error)),
  );
  return abort;
}

/** The error objects `onError` receives: real `Error`s with a `code` and `terminal`. */
export function transcriberError(code, message, terminal, status, frames, ms, totalFrames) {
  const error = new Error(message);
  error.code = code;
  error.terminal = terminal;
  if (status > 0) error.status = status;
  if (code === "audio_dropped") Object.assign(error, { frames, ms, totalFrames });
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
// transcriber's rate and posts PCM16 frames of 20 ms. The worklet ships as a string turned into a
// Blob URL, so bundlers need no extra file (a page whose CSP forbids blob: workers must allow it).

const CAPTURE_WORKLET = `
class TurnguardCapture extends AudioWorkletProcessor {
  constructor(options) {
    super();
    const { targetRate, frameSamples } = options.processorOptions;
    this.step = sampleRate / targetRate; // input samples per output sample
    this.frameSamples = frameSamples;
    this.frame = new Int16Array(frameSamples);
    this.fill = 0;
    this.phase = 0;
    this.sum = 0;
    this.count = 0;
    this.previous = 0;
  }
  emit(value) {
    const clamped = Math.max(-1, Math.min(1, value));
    this.frame[this.fill++] = Math.round(clamped < 0 ? clamped * 0x8000 : clamped * 0x7fff);
    if (this.fill === this.frameSamples) {
      // Transferred, not copied: the old buffer is detached, so the next frame is a new one.
      this.port.postMessage(this.frame.buffer, [this.frame.buffer]);
      this.frame = new Int16Array(this.frameSamples);
      this.fill = 0;
    }
  }
  process(inputs) {
    const channels = inputs[0];
    if (!channels || channels.length === 0) return true;
    const length = channels[0].length;
    for (let i = 0; i < length; i++) {
      let sample = 0;
      for (let c = 0; c < channels.length; c++) sample += channels[c][i];
      sample /= channels.length;
      if (this.step >= 1) {
        // Downsampling: average the inputs of each output period (a box low-pass against aliasing).
        this.sum += sample;
        this.count += 1;
        this.phase += 1;
        if (this.phase >= this.step) {
          this.emit(this.sum / this.count);
          this.phase -= this.step;
          this.sum = 0;
          this.count = 0;
        }
      } else {
        // Upsampling: linear interpolation between consecutive inputs.
        while (this.phase < 1) {
          this.emit(this.previous + (sample - this.previous) * this.phase);
          this.phase += this.step;
        }
        this.phase -= 1;
        this.previous = sample;
      }
    }
    return true;
  }
}
registerProcessor("turnguard-capture", TurnguardCapture);
`;

let workletUrl;

export function isMediaStream(value) {
  return typeof MediaStream !== "undefined" && value instanceof MediaStream;
}

/**
 * Starts capturing `stream` (or the default microphone when undefined) and calls `onFrame(pcm)`
 * with each Int16Array frame; then `adopt(handle)` takes the handle for `stopCapture` (and may
 * throw, which rejects the returned promise).
 */
export function startCapture(stream, targetRate, onFrame, adopt) {
  return capture(stream, targetRate, onFrame).then((handle) => {
    adopt(handle);
  });
}

async function capture(stream, targetRate, onFrame) {
  const owned = stream === undefined;
  const media = owned
    ? await navigator.mediaDevices.getUserMedia({
        audio: { channelCount: 1, echoCancellation: true, noiseSuppression: true, autoGainControl: true },
      })
    : stream;
  const context = new AudioContext({ latencyHint: "interactive" });
  const capture = { media, owned, context, source: null, node: null };
  try {
    workletUrl ??= URL.createObjectURL(new Blob([CAPTURE_WORKLET], { type: "text/javascript" }));
    await context.audioWorklet.addModule(workletUrl);
    capture.source = context.createMediaStreamSource(media);
    capture.node = new AudioWorkletNode(context, "turnguard-capture", {
      numberOfInputs: 1,
      numberOfOutputs: 1,
      outputChannelCount: [1],
      processorOptions: { targetRate, frameSamples: Math.max(1, Math.round(targetRate / 50)) },
    });
    capture.node.port.onmessage = (event) => onFrame(new Int16Array(event.data));
    // Connected to the destination (it outputs silence) so every browser keeps pulling it.
    capture.source.connect(capture.node).connect(context.destination);
    // Not awaited: without a user gesture, resume() may wait for one; frames flow once it runs.
    if (context.state !== "running") context.resume().catch(() => {});
    return capture;
  } catch (error) {
    stopCapture(capture);
    throw error;
  }
}

/** Stops frames at once, disconnects, closes the context, and stops the tracks it opened itself. */
export function stopCapture(capture) {
  if (capture.node) {
    capture.node.port.onmessage = null;
    capture.node.disconnect();
  }
  capture.source?.disconnect();
  if (capture.owned) for (const track of capture.media.getTracks()) track.stop();
  capture.context.close().catch(() => {});
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
