// Mock Soniox real-time (PROVIDERS.md), with the real recognizer or the scripted one behind it
// (recognizers.mjs). The official `@soniox/node` SDK connects to it (www/sdk-soniox.test.mjs: its
// `realtime.ws_base_url` and `base_url` options point anywhere).
//
//   POST /v1/auth/temporary-api-key   Authorization: Bearer <any key>, body { usage_type:
//                                     "transcribe_websocket", expires_in_seconds: 1..3600, single_use? }
//                                     -> { api_key, expires_at }. `?expired=1`: a key already expired.
//   WS   /transcribe-websocket        the first message is the configuration, with `api_key`.
//
// As Soniox does: the configuration first (`api_key` minted here and not expired, not used before
// when single-use; `audio_format` "pcm_s16le", `sample_rate` 16000, one channel; else
// `{ error_code, error_message }` and a close); binary audio; results `{ tokens: [{ text, start_ms,
// end_ms, confidence, is_final }], final_audio_proc_ms, total_audio_proc_ms }` with sub-word tokens
// carrying their own spaces, non-final tokens for the words under way and `<end>` at an endpoint;
// `{"type":"keepalive"}`; `{"type":"finalize"}` (the rest final, then `<fin>`); an empty text frame
// ends the audio: the last results, `finished: true`, close 1000. No frame for `idle_ms` (default
// 20000): error 408 and a close.
//
// Switches in the socket URL's query (or its path, `/mock/<url-encoded switches>/transcribe-websocket`),
// per `mock_key`: `recognizer=speech` (pocketsphinx; else the scripted recognizer with `segment_ms`,
// `words_per_utterance`), `mock_error=CODE` with `mock_error_after_frames=N` (an error, then close
// `mock_error_close` or 1000), `mock_drop_after_ms=N`, `mock_drop_after_frames=N` (a cut, 1006),
// `mock_times=N` (only the key's first N connections), `idle_ms=N`.

import { randomUUID } from "node:crypto";
import { WebSocketServer } from "ws";
import { HttpError, readJson, sendJson } from "./http.mjs";
import { BYTES_PER_SECOND, intParam, openRecognizer } from "./recognizers.mjs";
import { CLOSE_LOG_LIMIT, pushBounded, SESSION_LIMIT } from "./stats.mjs";

const KEY_PATH = /^\/v1\/auth\/temporary-api-key$/;
const SOCKET_PATH = /^(?:\/mock\/([^/]*))?\/transcribe-websocket$/;
const KEY_LIMIT = 1000;
const RATE_SLACK_MS = 1000;
const noop = () => {};

export const SONIOX_SWITCHES = Object.freeze(["recognizer", "mock_error", "mock_error_after_frames", "mock_error_close", "mock_drop_after_ms", "mock_drop_after_frames", "mock_times", "idle_ms"]);

export const matchSonioxKeyPath = (pathname) => KEY_PATH.test(pathname);
export const matchSonioxSocketPath = (pathname) => SOCKET_PATH.test(pathname);

const ERRORS = { 400: "Bad request", 401: "Invalid or expired API key", 402: "Organization balance exhausted", 408: "Request timeout", 429: "Too many requests", 500: "Internal server error", 503: "Service unavailable, please reconnect" };

function keyCounters() {
  return {
    connections: 0, open: 0, configs: 0, badConfigs: 0, models: [], frames: 0, bytes: 0, tooFast: 0, keepAlives: 0,
    finalizes: 0, endOfAudio: 0, finished: 0, endpoints: 0, invalidMessages: 0, errors: [], closeCodes: [],
  };
}

export function createSonioxMock(ctx) {
  const keys = new Map(); // api_key -> { expires, singleUse, used }
  const wss = new WebSocketServer({ noServer: true, perMessageDeflate: false, maxPayload: 1 << 20 });
  let counters = { apiKeys: 0, keys: {} };
  const keyStats = (key) => {
    if (!counters.keys[key]) {
      const names = Object.keys(counters.keys);
      if (names.length >= SESSION_LIMIT) delete counters.keys[names[0]];
      counters.keys[key] = keyCounters();
    }
    return counters.keys[key];
  };

  async function handleKey(req, res, url) {
    if (req.method !== "POST") return sendJson(req, res, 405, { error_code: 405, error_message: "use POST" });
    if (!/^bearer\s+\S+/i.test(req.headers.authorization ?? "")) return sendJson(req, res, 401, { error_code: 401, error_message: "Invalid API key" });
    let body;
    try {
      body = await readJson(req);
    } catch (error) {
      if (error instanceof HttpError) sendJson(req, res, error.status, { error_code: error.status, error_message: error.message });
      return;
    }
    const seconds = body.expires_in_seconds;
    if (body.usage_type !== "transcribe_websocket" || !Number.isInteger(seconds) || seconds < 1 || seconds > 3600) {
      return sendJson(req, res, 400, { error_code: 400, error_message: "usage_type must be transcribe_websocket and expires_in_seconds 1..3600" });
    }
    const value = `temp:${randomUUID()}`;
    const expires = url.searchParams.get("expired") === "1" ? 0 : Date.now() + seconds * 1000;
    keys.set(value, { expires, singleUse: body.single_use === true, used: false });
    if (keys.size > KEY_LIMIT) keys.delete(keys.keys().next().value);
    counters.apiKeys += 1;
    sendJson(req, res, 201, { api_key: value, expires_at: new Date(expires).toISOString() });
  }

  async function handleUpgrade(req, socket, head, url) {
    const params = new URLSearchParams(url.searchParams);
    const inPath = SOCKET_PATH.exec(url.pathname)?.[1];
    if (inPath) for (const [name, value] of new URLSearchParams(decodeURIComponent(inPath))) params.set(name, value);
    wss.handleUpgrade(req, socket, head, (ws) => accept(ws, params, params.get("mock_key") ?? "default"));
  }

  function accept(ws, params, key) {
    const stats = () => keyStats(key);
    stats().connections += 1;
    stats().open += 1;
    const connection = stats().connections;
    const faulty = connection <= intParam(params, "mock_times", Infinity);
    const idleMs = intParam(params, "idle_ms", 20_000, 1, 600_000);
    const state = { configured: false, ending: false, frames: 0, received: 0, finalized: 0, finals: [], recognizer: null, queue: [], opened: 0 };
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
    const fail = (code, closeCode = 1000) => {
      pushBounded(stats().errors, code, CLOSE_LOG_LIMIT);
      send({ error_code: code, error_message: ERRORS[code] ?? "error" });
      close(closeCode, "");
    };
    const touch = () => {
      clearTimeout(idleTimer);
      idleTimer = setTimeout(() => fail(408), idleMs);
    };
    const ms = (seconds) => Math.round(seconds * 1000);
    /** One result: the final tokens so far (then forgotten), and the non-final ones. */
    const result = (finalTokens, pending = []) =>
      send({ tokens: [...finalTokens, ...pending], final_audio_proc_ms: ms(state.finalized), total_audio_proc_ms: ms(state.received / BYTES_PER_SECOND) });
    const token = (text, start, end, isFinal) => ({ text, start_ms: ms(start), end_ms: ms(end), confidence: isFinal ? 0.97 : 0.6, is_final: isFinal });
    let wordsInUtterance = 0;
    const spaced = (text) => (wordsInUtterance > 0 ? ` ${text}` : text);

    const onRecognized = (event) => {
      switch (event.type) {
        case "partial":
          result([], [token(spaced(event.pending ?? event.text), event.start, event.end, false)]);
          break;
        case "segment":
          state.finalized = Math.max(state.finalized, event.end);
          result([token(spaced(event.text), event.start, event.end, true)]);
          wordsInUtterance += 1;
          break;
        case "final":
          state.finalized = Math.max(state.finalized, event.end);
          stats().endpoints += 1;
          result([...(event.pieces === 0 ? [token(event.text, event.start, event.end, true)] : []), token("<end>", event.end, event.end, true)]);
          wordsInUtterance = 0;
          break;
        case "flushed":
          result([token("<fin>", state.finalized, state.finalized, true)]);
          if (state.ending) {
            stats().finished += 1;
            send({ tokens: [], final_audio_proc_ms: ms(state.finalized), total_audio_proc_ms: ms(state.received / BYTES_PER_SECOND), finished: true });
            close(1000, "");
          }
          break;
        case "error":
          fail(500);
          break;
        default:
      }
    };
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
    const errorCode = intParam(params, "mock_error", 0, 0, 999);
    const errorClose = intParam(params, "mock_error_close", 1000, 1000, 4999);

    ws.on("message", (data, isBinary) => {
      touch();
      if (isBinary) return onAudio(data);
      const text = data.toString("utf8");
      if (!state.configured) return onConfig(text);
      if (text === "") {
        stats().endOfAudio += 1;
        state.ending = true;
        return withRecognizer(() => state.recognizer.flush());
      }
      let message = null;
      try {
        message = JSON.parse(text);
      } catch {}
      switch (message?.type) {
        case "keepalive":
          stats().keepAlives += 1;
          return undefined;
        case "finalize":
          stats().finalizes += 1;
          return withRecognizer(() => state.recognizer.flush());
        default:
          stats().invalidMessages += 1;
          return fail(400);
      }
    });

    function onConfig(text) {
      let config = null;
      try {
        config = JSON.parse(text);
      } catch {}
      const entry = keys.get(config?.api_key);
      if (!entry || entry.expires <= Date.now() || (entry.singleUse && entry.used)) {
        stats().badConfigs += 1;
        return fail(401);
      }
      if (config.audio_format !== "pcm_s16le" || config.sample_rate !== 16000 || config.num_channels !== 1 || typeof config.model !== "string") {
        stats().badConfigs += 1;
        return fail(400);
      }
      entry.used = true;
      state.configured = true;
      state.opened = Date.now();
      stats().configs += 1;
      pushBounded(stats().models, config.model, CLOSE_LOG_LIMIT);
      openRecognizer(params, ctx.speech, onRecognized).then(
        (recognizer) => {
          if (ws.readyState !== ws.OPEN) return recognizer.close();
          state.recognizer = recognizer;
          for (const run of state.queue.splice(0)) run();
        },
        () => fail(503),
      );
      if (faulty && errorCode && intParam(params, "mock_error_after_frames", 0) === 0) later(0, () => fail(errorCode, errorClose));
    }

    function onAudio(data) {
      if (!state.configured) {
        stats().badConfigs += 1;
        return fail(400);
      }
      if (state.ending) return;
      state.frames += 1;
      state.received += data.length;
      stats().frames += 1;
      stats().bytes += data.length;
      // About real time: a second of slack for bursts.
      if ((state.received / BYTES_PER_SECOND) * 1000 > Date.now() - state.opened + RATE_SLACK_MS) stats().tooFast += 1;
      withRecognizer(() => state.recognizer.audio(data));
      if (faulty && params.has("mock_drop_after_frames") && state.frames >= intParam(params, "mock_drop_after_frames", 1)) ws.terminate();
      if (faulty && errorCode && state.frames === intParam(params, "mock_error_after_frames", 0)) fail(errorCode, errorClose);
    }
  }

  async function close() {
    for (const ws of wss.clients) ws.terminate();
    await new Promise((resolve) => wss.close(() => resolve()));
  }

  return {
    handleHttp: handleKey,
    handleUpgrade,
    close,
    stats: () => counters,
    reset: () => {
      const open = Object.fromEntries(Object.entries(counters.keys).map(([name, value]) => [name, value.open]));
      counters = { apiKeys: 0, keys: {} };
      for (const [name, count] of Object.entries(open)) if (count > 0) keyStats(name).open = count;
    },
  };
}
