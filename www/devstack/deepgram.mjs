// Mock Deepgram listen v1 (PROVIDERS.md), with the real recognizer or the scripted one behind it
// (recognizers.mjs). The official `@deepgram/sdk` connects to it (tests/sdk/deepgram.test.mjs).
//
//   POST /v1/auth/grant          Authorization: Token <any key>, body { ttl_seconds? } (default 30)
//                                -> { access_token, expires_in }. `?expired=1`: a token already expired.
//   WS   /v1/listen?...          auth: subprotocols ["bearer", <token>] or ["token", <key>], or an
//                                Authorization header (`Bearer …`/`Token …`). A bearer token must be one
//                                granted here and not expired, else the handshake gets HTTP 401.
//
// What it does as Deepgram does: binary PCM16 frames (an empty one: close 1008 `DATA-0000`); no frame
// for `idle_ms` (default 10000): close 1011 `NET-0001`; `KeepAlive`, `Finalize` (flush, the result has
// `from_finalize: true`) and `CloseStream` (flush, `Metadata`, close 1000); interim and final `Results`
// with `speech_final` on an utterance's last segment, then `UtteranceEnd` too; `SpeechStarted`.
//
// Switches in the socket URL's query (the app's provision() builds it), per `mock_key` (connections
// with the same key share counters and `mock_times`):
//   recognizer=speech              pocketsphinx instead of the scripted recognizer (`segment_ms`,
//                                  `words_per_utterance`)
//   mock_drop_after_ms=N           cut the connection (no close frame: 1006) N ms after it opened
//   mock_drop_after_frames=N       ... after N audio frames
//   mock_close=CODE&mock_close_after_frames=N   close with CODE after N frames (default 0: at once)
//   mock_times=N                   only the key's first N connections get the drop or close
//   idle_ms=N                      the idle limit

import { randomUUID } from "node:crypto";
import { WebSocketServer } from "ws";
import { HttpError, readJson, sendJson } from "./http.mjs";
import { BYTES_PER_SECOND, intParam, openRecognizer, seconds } from "./recognizers.mjs";
import { CLOSE_LOG_LIMIT, pushBounded, SESSION_LIMIT } from "./stats.mjs";

const GRANT_PATH = /^\/v1\/auth\/grant$/;
const LISTEN_PATH = /^\/v1\/listen$/;
const TOKEN_LIMIT = 1000;
const noop = () => {};

export const DEEPGRAM_SWITCHES = Object.freeze(["recognizer", "mock_drop_after_ms", "mock_drop_after_frames", "mock_close", "mock_close_after_frames", "mock_times", "idle_ms"]);

export const matchDeepgramGrantPath = (pathname) => GRANT_PATH.test(pathname);
export const matchDeepgramSocketPath = (pathname) => LISTEN_PATH.test(pathname);

function keyCounters() {
  return {
    connections: 0, open: 0, refused: 0, bearer: 0, token: 0, frames: 0, bytes: 0, emptyFrames: 0,
    keepAlives: 0, finalizes: 0, closeStreams: 0, invalidMessages: 0, tooFast: 0, finals: 0, closeCodes: [],
  };
}

/** `ctx`: the dev stack (`{ speech }` for the real recognizer). */
export function createDeepgramMock(ctx) {
  const tokens = new Map(); // access_token -> expires at (ms since epoch)
  const wss = new WebSocketServer({
    noServer: true,
    perMessageDeflate: false,
    maxPayload: 1 << 20,
    // The browser offers ["bearer", jwt]: the server must pick one, or the browser fails the socket.
    handleProtocols: (protocols) => [...protocols][0] ?? false,
  });
  let counters = { grants: 0, keys: {} };
  const keyStats = (key) => {
    if (!counters.keys[key]) {
      const keys = Object.keys(counters.keys);
      if (keys.length >= SESSION_LIMIT) delete counters.keys[keys[0]];
      counters.keys[key] = keyCounters();
    }
    return counters.keys[key];
  };

  async function handleGrant(req, res, url) {
    if (req.method !== "POST") return sendJson(req, res, 405, { err_code: "METHOD_NOT_ALLOWED", err_msg: "use POST" });
    if (!/^token\s+\S+/i.test(req.headers.authorization ?? "")) {
      return sendJson(req, res, 401, { err_code: "INVALID_AUTH", err_msg: "Invalid credentials." });
    }
    let body;
    try {
      body = await readJson(req);
    } catch (error) {
      if (error instanceof HttpError) sendJson(req, res, error.status, { err_code: "BAD_REQUEST", err_msg: error.message });
      return;
    }
    const ttl = Number.isInteger(body.ttl_seconds) ? Math.min(3600, Math.max(1, body.ttl_seconds)) : 30;
    const token = `mockjwt.${randomUUID()}`;
    tokens.set(token, url.searchParams.get("expired") === "1" ? 0 : Date.now() + ttl * 1000);
    if (tokens.size > TOKEN_LIMIT) tokens.delete(tokens.keys().next().value);
    counters.grants += 1;
    sendJson(req, res, 200, { access_token: token, expires_in: ttl });
  }

  /** `["bearer", token]` or `["token", key]` from the subprotocols or the Authorization header. */
  function credentials(req) {
    const offered = (req.headers["sec-websocket-protocol"] ?? "").split(",").map((item) => item.trim()).filter(Boolean);
    if (offered.length >= 2) return [offered[0].toLowerCase(), offered[1]];
    const [scheme, value] = (req.headers.authorization ?? "").split(/\s+/, 2);
    return value ? [scheme.toLowerCase(), value] : [null, null];
  }

  async function handleUpgrade(req, socket, head, url) {
    const params = url.searchParams;
    const key = params.get("mock_key") ?? "default";
    const stats = keyStats(key);
    const [scheme, credential] = credentials(req);
    const expires = tokens.get(credential);
    const ok = (scheme === "token" && credential) || (scheme === "bearer" && expires !== undefined && expires > Date.now());
    if (!ok) {
      stats.refused += 1;
      socket.end("HTTP/1.1 401 Unauthorized\r\nConnection: close\r\nContent-Length: 0\r\n\r\n");
      return;
    }
    stats[scheme] += 1;
    wss.handleUpgrade(req, socket, head, (ws) => accept(ws, params, key));
  }

  function accept(ws, params, key) {
    const stats = () => keyStats(key); // looked up at each event: a reset swaps the counters
    stats().connections += 1;
    stats().open += 1;
    const connection = stats().connections;
    const requestId = randomUUID();
    const opened = Date.now();
    const faulty = connection <= intParam(params, "mock_times", Infinity);
    const state = { received: 0, finalized: 0, frames: 0, inSpeech: false, fromFinalize: false, closing: false, recognizer: null, queue: [] };
    const idleMs = intParam(params, "idle_ms", 10_000, 1, 600_000);
    const realRecognizer = params.get("recognizer") === "speech";
    let idleTimer = null;
    const timers = new Set();
    const later = (ms, run) => {
      const timer = setTimeout(() => {
        timers.delete(timer);
        run();
      }, ms);
      timers.add(timer);
    };

    const send = (message) => {
      if (ws.readyState === ws.OPEN) ws.send(JSON.stringify(message));
    };
    const close = (code, reason) => {
      if (ws.readyState === ws.OPEN) ws.close(code, reason);
    };
    const touch = () => {
      clearTimeout(idleTimer);
      idleTimer = setTimeout(() => close(1011, "Deepgram did not receive audio data or a text message within the timeout window. See https://dpgr.am/net0001"), idleMs);
    };
    const results = (transcript, start, end, isFinal, speechFinal) => {
      if (isFinal) state.finalized = Math.max(state.finalized, end);
      send({
        type: "Results",
        channel_index: [0, 1],
        duration: Math.round((end - start) * 1000) / 1000,
        start,
        is_final: isFinal,
        speech_final: speechFinal,
        ...(isFinal && state.fromFinalize ? { from_finalize: true } : {}),
        channel: { alternatives: [{ transcript, confidence: isFinal ? 0.98 : 0.7, words: [] }] },
        metadata: { request_id: requestId, model_info: { name: "mock", version: "0", arch: "mock" }, model_uuid: "00000000-0000-0000-0000-000000000000" },
      });
    };
    const onRecognized = (event) => {
      switch (event.type) {
        case "speech_start":
          state.inSpeech = true;
          send({ type: "SpeechStarted", channel: [0], timestamp: event.time });
          break;
        case "partial":
          results(event.pending ?? event.text, event.start, event.end, false, false);
          break;
        case "segment":
          results(event.text, event.start, event.end, true, event.last);
          break;
        case "final":
          stats().finals += 1;
          if (event.pieces === 0) results(event.text, event.start, event.end, true, true);
          send({ type: "UtteranceEnd", channel: [0, 1], last_word_end: event.end });
          break;
        case "speech_end":
          state.inSpeech = false;
          break;
        case "flushed":
          state.fromFinalize = false;
          if (state.closing) {
            send({ type: "Metadata", transaction_key: "deprecated", request_id: requestId, sha256: "0".repeat(64), created: new Date(opened).toISOString(), duration: seconds(state.received), channels: 1 });
            close(1000, "");
          }
          break;
        case "error":
          close(1011, "recognition failed");
          break;
        default:
      }
    };
    openRecognizer(params, ctx.speech, onRecognized).then(
      (recognizer) => {
        if (ws.readyState !== ws.OPEN) return recognizer.close();
        state.recognizer = recognizer;
        for (const run of state.queue.splice(0)) run();
      },
      () => close(1011, "speech recognition unavailable"),
    );
    const withRecognizer = (run) => (state.recognizer ? run() : state.queue.push(run));

    ws.on("error", noop);
    ws.on("close", (code) => {
      stats().open = Math.max(0, stats().open - 1);
      pushBounded(stats().closeCodes, code, CLOSE_LOG_LIMIT);
      clearTimeout(idleTimer);
      for (const timer of timers) clearTimeout(timer);
      withRecognizer(() => state.recognizer.close());
    });
    touch();
    if (faulty && params.has("mock_drop_after_ms")) later(intParam(params, "mock_drop_after_ms", 0), () => ws.terminate());
    const closeCode = intParam(params, "mock_close", 0, 0, 4999);
    if (faulty && closeCode && intParam(params, "mock_close_after_frames", 0) === 0) {
      later(0, () => close(closeCode, "mock close"));
    }

    ws.on("message", (data, isBinary) => {
      touch();
      if (isBinary) return onAudio(data);
      let message = null;
      try {
        message = JSON.parse(data.toString("utf8"));
      } catch {}
      switch (message?.type) {
        case "KeepAlive":
          stats().keepAlives += 1;
          break;
        case "Finalize":
          stats().finalizes += 1;
          state.fromFinalize = true;
          withRecognizer(() => state.recognizer.flush());
          break;
        case "CloseStream":
          stats().closeStreams += 1;
          state.closing = true;
          withRecognizer(() => state.recognizer.flush());
          break;
        default:
          stats().invalidMessages += 1;
      }
    });

    function onAudio(data) {
      if (data.length === 0) {
        stats().emptyFrames += 1;
        return close(1008, "DATA-0000");
      }
      if (state.closing) return;
      state.frames += 1;
      state.received += data.length;
      stats().frames += 1;
      stats().bytes += data.length;
      // Deepgram takes audio at most 1.25x real time; a second of slack for bursts.
      const audioMs = (state.received / BYTES_PER_SECOND) * 1000;
      if (audioMs > (Date.now() - opened) * 1.25 + 1000) stats().tooFast += 1;
      withRecognizer(() => state.recognizer.audio(data));
      if (realRecognizer && !state.inSpeech) {
        // Silence is finalized too, as Deepgram does, so the client's watermark moves.
        const end = seconds(state.received) - 0.5;
        if (end - state.finalized >= 1.5) results("", state.finalized, Math.round(end * 1000) / 1000, true, false);
      }
      if (faulty && params.has("mock_drop_after_frames") && state.frames >= intParam(params, "mock_drop_after_frames", 1)) ws.terminate();
      if (faulty && closeCode && state.frames >= intParam(params, "mock_close_after_frames", 0)) close(closeCode, "mock close");
    }
  }

  async function close() {
    for (const ws of wss.clients) ws.terminate();
    await new Promise((resolve) => wss.close(() => resolve()));
  }

  return {
    handleGrant,
    handleUpgrade,
    close,
    stats: () => counters,
    reset: () => {
      const open = Object.fromEntries(Object.entries(counters.keys).map(([key, value]) => [key, value.open]));
      counters = { grants: 0, keys: {} };
      for (const [key, count] of Object.entries(open)) if (count > 0) keyStats(key).open = count;
    },
  };
}
