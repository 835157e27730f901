// Mock AssemblyAI Universal-Streaming v3 (PROVIDERS.md), with the real recognizer or the scripted
// one behind it (recognizers.mjs). The official `assemblyai` SDK connects to it through TLS
// (www/sdk-assemblyai.test.mjs: the SDK only speaks wss:).
//
//   GET /v3/token?expires_in_seconds=1..600[&max_session_duration_seconds=60..10800]
//                         Authorization: <any key> -> { token }. Each token opens one session only.
//                         `&expired=1`: a token already expired.
//   WS  /v3/ws?sample_rate=16000&encoding=pcm_s16le&format_turns=true&token=<t>   (or an API key in
//                         the Authorization header)
//
// As AssemblyAI does: `Begin`; binary PCM16 frames of 50–1000 ms, never faster than real time (half
// a second of slack), else an `Error` frame and close 3007; a bad, reused or expired token: `Error`
// and close 1008; an invalid message: close 3006; `Turn` messages with `words` (`word_is_final`),
// the end of a turn twice with `format_turns=true` (unformatted, then formatted); `SpeechStarted`;
// `ForceEndpoint` ends the turn under way; `Terminate`: the last turns, `Termination`, close 1000;
// `KeepAlive`; the session's cap (the token's `max_session_duration_seconds`): close 3008.
//
// Switches in the socket URL's query (or its path: `/mock/<url-encoded switches>/v3/ws`), per `mock_key` (connections with the same key share counters
// and `mock_times`): `recognizer=speech` (pocketsphinx; else the scripted recognizer with
// `segment_ms` and `words_per_utterance`), `mock_close=CODE` (e.g. 3005, 3009) with
// `mock_close_after_frames=N`, `mock_drop_after_ms=N`, `mock_drop_after_frames=N` (a cut, 1006),
// `mock_session_ms=N` (3008 after N ms), `mock_times=N` (only the key's first N connections).

import { randomUUID } from "node:crypto";
import { WebSocketServer } from "ws";
import { sendJson } from "./http.mjs";
import { BYTES_PER_SECOND, intParam, openRecognizer, seconds } from "./recognizers.mjs";
import { CLOSE_LOG_LIMIT, pushBounded, SESSION_LIMIT } from "./stats.mjs";

const TOKEN_PATH = /^\/v3\/token$/;
// `/mock/<switches>/v3/ws`: switches in the path, for clients that rewrite the query (the SDK does).
const SOCKET_PATH = /^(?:\/mock\/([^/]*))?\/v3\/ws$/;
const TOKEN_LIMIT = 1000;
const MIN_FRAME_BYTES = BYTES_PER_SECOND / 20; // 50 ms
const MAX_FRAME_BYTES = BYTES_PER_SECOND; // 1000 ms
const RATE_SLACK_MS = 500;
const noop = () => {};

export const ASSEMBLYAI_SWITCHES = Object.freeze(["recognizer", "mock_close", "mock_close_after_frames", "mock_drop_after_ms", "mock_drop_after_frames", "mock_session_ms", "mock_times"]);

export const matchAssemblyAiTokenPath = (pathname) => TOKEN_PATH.test(pathname);
export const matchAssemblyAiSocketPath = (pathname) => SOCKET_PATH.test(pathname);

function keyCounters() {
  return {
    connections: 0, open: 0, unauthorized: 0, tokenAuth: 0, keyAuth: 0, frames: 0, bytes: 0, badFrames: 0,
    tooFast: 0, keepAlives: 0, forceEndpoints: 0, terminates: 0, invalidMessages: 0, turns: 0, closeCodes: [],
  };
}

/** "what is it" -> "What is it." (what format_turns does, roughly). */
const formatted = (text) => (text ? `${text[0].toUpperCase()}${text.slice(1)}.` : text);

export function createAssemblyAiMock(ctx) {
  const tokens = new Map(); // token -> { expires, sessionMs, used }
  const wss = new WebSocketServer({ noServer: true, perMessageDeflate: false, maxPayload: 1 << 20 });
  let counters = { tokens: 0, keys: {} };
  const keyStats = (key) => {
    if (!counters.keys[key]) {
      const keys = Object.keys(counters.keys);
      if (keys.length >= SESSION_LIMIT) delete counters.keys[keys[0]];
      counters.keys[key] = keyCounters();
    }
    return counters.keys[key];
  };

  function handleToken(req, res, url) {
    if (req.method !== "GET") return sendJson(req, res, 405, { error: "use GET" });
    if (!req.headers.authorization) return sendJson(req, res, 401, { error: "Authentication error, API token missing/invalid" });
    const expiresIn = intParam(url.searchParams, "expires_in_seconds", 0);
    if (expiresIn < 1 || expiresIn > 600) return sendJson(req, res, 400, { error: "expires_in_seconds must be from 1 to 600" });
    const token = randomUUID().replaceAll("-", "");
    const sessionSeconds = intParam(url.searchParams, "max_session_duration_seconds", 10_800, 60, 10_800);
    tokens.set(token, { expires: url.searchParams.get("expired") === "1" ? 0 : Date.now() + expiresIn * 1000, sessionMs: sessionSeconds * 1000, used: false });
    if (tokens.size > TOKEN_LIMIT) tokens.delete(tokens.keys().next().value);
    counters.tokens += 1;
    sendJson(req, res, 200, { token });
  }

  async function handleUpgrade(req, socket, head, url) {
    const params = new URLSearchParams(decodeURIComponent(SOCKET_PATH.exec(url.pathname)?.[1] ?? ""));
    for (const [name, value] of url.searchParams) params.set(name, value);
    wss.handleUpgrade(req, socket, head, (ws) => accept(ws, params, req.headers.authorization));
  }

  function accept(ws, params, apiKey) {
    const key = params.get("mock_key") ?? "default";
    const stats = () => keyStats(key);
    stats().connections += 1;
    stats().open += 1;
    const connection = stats().connections;
    const faulty = connection <= intParam(params, "mock_times", Infinity);
    const sessionId = randomUUID();
    const opened = Date.now();
    const formatTurns = params.get("format_turns") === "true";
    const state = { received: 0, frames: 0, turn: 0, words: [], closing: false, recognizer: null, queue: [] };
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
    const fail = (code, error) => {
      send({ type: "Error", error_code: code, error });
      if (ws.readyState === ws.OPEN) ws.close(code, error);
    };

    ws.on("error", noop);
    ws.on("close", (code) => {
      stats().open = Math.max(0, stats().open - 1);
      pushBounded(stats().closeCodes, code, CLOSE_LOG_LIMIT);
      for (const timer of timers) clearTimeout(timer);
      if (state.recognizer) state.recognizer.close();
    });

    const token = params.get("token");
    const grant = token === null ? null : tokens.get(token);
    const authorized = token === null ? Boolean(apiKey) : grant !== undefined && !grant.used && grant.expires > Date.now();
    if (!authorized) {
      stats().unauthorized += 1;
      return fail(1008, "Unauthorized connection: token is invalid, expired or already used");
    }
    if (grant) grant.used = true;
    stats()[grant ? "tokenAuth" : "keyAuth"] += 1;

    const ms = (secondsValue) => Math.round(secondsValue * 1000);
    const word = (text, start, end, isFinal) => ({ text, start: ms(start), end: ms(end), confidence: isFinal ? 0.98 : 0.7, word_is_final: isFinal });
    const turnMessage = (endOfTurn, isFormatted, transcript, words) => ({
      type: "Turn",
      turn_order: state.turn,
      turn_is_formatted: isFormatted,
      end_of_turn: endOfTurn,
      transcript,
      end_of_turn_confidence: endOfTurn ? 0.9 : 0.1,
      words,
    });
    const onRecognized = (event) => {
      switch (event.type) {
        case "speech_start":
          send({ type: "SpeechStarted", timestamp: ms(event.time) });
          break;
        case "partial": {
          const finals = state.words;
          const pending = (event.pending ?? event.text).split(" ").filter(Boolean);
          const pendingWords = event.pending === undefined ? pending.map((text) => word(text, event.start, event.end, false)) : pending.map((text) => word(text, event.end - 0.25, event.end, false));
          send(turnMessage(false, false, finals.map((w) => w.text).join(" "), [...finals, ...pendingWords]));
          break;
        }
        case "segment":
          state.words.push(word(event.text, event.start, event.end, true));
          if (!event.last) send(turnMessage(false, false, state.words.map((w) => w.text).join(" "), state.words));
          break;
        case "final": {
          const texts = event.text.split(" ").filter(Boolean);
          const span = (event.end - event.start) / Math.max(1, texts.length);
          const words = event.pieces > 0 ? state.words : texts.map((text, i) => word(text, event.start + i * span, event.start + (i + 1) * span, true));
          stats().turns += 1;
          send(turnMessage(true, false, event.text, words));
          if (formatTurns) send(turnMessage(true, true, formatted(event.text), words.map((w, i) => (i === words.length - 1 ? { ...w, text: `${w.text}.` } : w))));
          state.turn += 1;
          state.words = [];
          break;
        }
        case "flushed":
          if (state.closing) {
            send({ type: "Termination", audio_duration_seconds: seconds(state.received), session_duration_seconds: Math.round((Date.now() - opened) / 1000) });
            if (ws.readyState === ws.OPEN) ws.close(1000, "");
          }
          break;
        case "error":
          fail(3005, "Internal server error");
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
      () => fail(3005, "speech recognition unavailable"),
    );
    const withRecognizer = (run) => (state.recognizer ? run() : state.queue.push(run));

    send({ type: "Begin", id: sessionId, expires_at: Math.floor((opened + (grant?.sessionMs ?? 10_800_000)) / 1000) });
    const sessionMs = params.has("mock_session_ms") && faulty ? intParam(params, "mock_session_ms", 0) : grant?.sessionMs ?? 10_800_000;
    later(sessionMs, () => fail(3008, "Session expired: maximum session duration exceeded"));
    if (faulty && params.has("mock_drop_after_ms")) later(intParam(params, "mock_drop_after_ms", 0), () => ws.terminate());
    const closeCode = intParam(params, "mock_close", 0, 0, 4999);
    if (faulty && closeCode && intParam(params, "mock_close_after_frames", 0) === 0) later(0, () => fail(closeCode, "mock close"));

    ws.on("message", (data, isBinary) => {
      if (isBinary) return onAudio(data);
      let message = null;
      try {
        message = JSON.parse(data.toString("utf8"));
      } catch {}
      switch (message?.type) {
        case "KeepAlive":
          stats().keepAlives += 1;
          break;
        case "UpdateConfiguration":
          break;
        case "ForceEndpoint":
          stats().forceEndpoints += 1;
          withRecognizer(() => state.recognizer.flush());
          break;
        case "Terminate":
          stats().terminates += 1;
          state.closing = true;
          withRecognizer(() => state.recognizer.flush());
          break;
        default:
          stats().invalidMessages += 1;
          fail(3006, "Invalid Message");
      }
    });

    function onAudio(data) {
      if (state.closing) return;
      if (data.length < MIN_FRAME_BYTES || data.length > MAX_FRAME_BYTES) {
        stats().badFrames += 1;
        return fail(3007, "Input duration violation: audio must be between 50 ms and 1000 ms");
      }
      state.frames += 1;
      state.received += data.length;
      stats().frames += 1;
      stats().bytes += data.length;
      if ((state.received / BYTES_PER_SECOND) * 1000 > Date.now() - opened + RATE_SLACK_MS) {
        stats().tooFast += 1;
        return fail(3007, "Audio transmission rate exceeded: send audio no faster than real time");
      }
      withRecognizer(() => state.recognizer.audio(data));
      if (faulty && params.has("mock_drop_after_frames") && state.frames >= intParam(params, "mock_drop_after_frames", 1)) ws.terminate();
      if (faulty && closeCode && state.frames >= intParam(params, "mock_close_after_frames", 0)) fail(closeCode, "mock close");
    }
  }

  async function close() {
    for (const ws of wss.clients) ws.terminate();
    await new Promise((resolve) => wss.close(() => resolve()));
  }

  return {
    handleToken,
    handleUpgrade,
    close,
    stats: () => counters,
    reset: () => {
      const open = Object.fromEntries(Object.entries(counters.keys).map(([key, value]) => [key, value.open]));
      counters = { tokens: 0, keys: {} };
      for (const [key, count] of Object.entries(open)) if (count > 0) keyStats(key).open = count;
    },
  };
}
