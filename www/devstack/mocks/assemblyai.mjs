// Mock AssemblyAI Universal-Streaming v3 (PROVIDERS.md) on the socket skeleton (ws_mock.mjs). The
// official `assemblyai` SDK connects to it through TLS (www/sdk-assemblyai.test.mjs: the SDK only
// speaks wss:).
//
//   GET /v3/token?expires_in_seconds=1..600[&max_session_duration_seconds=60..10800]
//                         Authorization: <any key> -> { token }. Each token opens one session only.
//   WS  /v3/ws?sample_rate=16000&encoding=pcm_s16le&format_turns=true&token=<t>   (or an API key in
//                         the Authorization header)
//
// As AssemblyAI does: `Begin`; binary PCM16 frames of 50–1000 ms, never faster than real time (half
// a second of slack), else an `Error` frame and close 3007; a bad, reused or expired token: `Error`
// and close 1008; an invalid message: close 3006; `Turn` messages with `words` (`word_is_final`),
// the end of a turn twice with `format_turns=true` (unformatted, then formatted); `SpeechStarted`;
// `ForceEndpoint` ends the turn under way; `Terminate`: the last turns, `Termination`, close 1000;
// `KeepAlive`; the session's cap (the token's `max_session_duration_seconds`): close 3008.
// `mock_close=CODE` sends an `Error` frame, then closes with CODE.

import { randomUUID } from "node:crypto";
import { sendJson } from "../http.mjs";
import { BYTES_PER_SECOND, intParam, seconds } from "../recognizers.mjs";

const MIN_FRAME_BYTES = BYTES_PER_SECOND / 20; // 50 ms
const MAX_FRAME_BYTES = BYTES_PER_SECOND; // 1000 ms
const DEFAULT_SESSION_MS = 10_800_000;

/** "what is it" -> "What is it." (what format_turns does, roughly). */
const formatted = (text) => (text ? `${text[0].toUpperCase()}${text.slice(1)}.` : text);
const ms = (secondsValue) => Math.round(secondsValue * 1000);

export default {
  counters: () => ({ tokenAuth: 0, keyAuth: 0, badFrames: 0, forceEndpoints: 0, terminates: 0 }),
  pacing: { rate: 1, slackMs: 500 },
  httpError: (status, message) => ({ error: message }),

  http(req, res, params, { credentials, expired }) {
    if (req.method !== "GET") return sendJson(req, res, 405, { error: "use GET" });
    if (!req.headers.authorization) return sendJson(req, res, 401, { error: "Authentication error, API token missing/invalid" });
    const expiresIn = intParam(params, "expires_in_seconds", 0);
    if (expiresIn < 1 || expiresIn > 600) return sendJson(req, res, 400, { error: "expires_in_seconds must be from 1 to 600" });
    const sessionMs = intParam(params, "max_session_duration_seconds", 10_800, 60, 10_800) * 1000;
    const token = credentials.mint(randomUUID().replaceAll("-", ""), { ttlMs: expiresIn * 1000, singleUse: true, expired, data: { sessionMs } });
    return sendJson(req, res, 200, { token });
  },

  /** A server may connect with its API key in the Authorization header instead of a token. */
  authorize: (req) => ({ apiKey: Boolean(req.headers.authorization) }),

  open(conn, auth, { credentials }) {
    const fail = (code, error) => {
      conn.send({ type: "Error", error_code: code, error });
      conn.close(code, error);
    };
    const token = conn.params.get("token");
    const grant = token === null ? null : credentials.check(token);
    if (token === null ? !auth.apiKey : !grant) {
      conn.count("refused");
      fail(1008, "Unauthorized connection: token is invalid, expired or already used");
      return {};
    }
    if (grant) credentials.use(token);
    conn.count(grant ? "tokenAuth" : "keyAuth");

    const formatTurns = conn.params.get("format_turns") === "true";
    const state = { turn: 0, words: [], closing: false };
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
    const sessionMs = grant?.data.sessionMs ?? DEFAULT_SESSION_MS;
    conn.send({ type: "Begin", id: randomUUID(), expires_at: Math.floor((conn.opened + sessionMs) / 1000) });
    conn.later(sessionMs, () => fail(3008, "Session expired: maximum session duration exceeded"));

    return {
      recognized(event) {
        switch (event.type) {
          case "speech_start":
            return conn.send({ type: "SpeechStarted", timestamp: ms(event.time) });
          case "partial": {
            const pending = (event.pending ?? event.text).split(" ").filter(Boolean);
            const pendingWords = event.pending === undefined ? pending.map((text) => word(text, event.start, event.end, false)) : pending.map((text) => word(text, event.end - 0.25, event.end, false));
            return conn.send(turnMessage(false, false, state.words.map((w) => w.text).join(" "), [...state.words, ...pendingWords]));
          }
          case "segment":
            state.words.push(word(event.text, event.start, event.end, true));
            return event.last ? undefined : conn.send(turnMessage(false, false, state.words.map((w) => w.text).join(" "), state.words));
          case "final": {
            const texts = event.text.split(" ").filter(Boolean);
            const span = (event.end - event.start) / Math.max(1, texts.length);
            const words = event.pieces > 0 ? state.words : texts.map((text, i) => word(text, event.start + i * span, event.start + (i + 1) * span, true));
            conn.send(turnMessage(true, false, event.text, words));
            if (formatTurns) conn.send(turnMessage(true, true, formatted(event.text), words.map((w, i) => (i === words.length - 1 ? { ...w, text: `${w.text}.` } : w))));
            state.turn += 1;
            state.words = [];
            return undefined;
          }
          case "flushed":
            if (!state.closing) return undefined;
            conn.send({ type: "Termination", audio_duration_seconds: seconds(conn.received), session_duration_seconds: Math.round((Date.now() - conn.opened) / 1000) });
            return conn.close(1000);
          case "error":
            return fail(3005, "Internal server error");
          default:
            return undefined;
        }
      },
      binary(data) {
        if (state.closing) return undefined;
        if (data.length < MIN_FRAME_BYTES || data.length > MAX_FRAME_BYTES) {
          conn.count("badFrames");
          return fail(3007, "Input duration violation: audio must be between 50 ms and 1000 ms");
        }
        return conn.audio(data);
      },
      tooFast: () => fail(3007, "Audio transmission rate exceeded: send audio no faster than real time"),
      json(message) {
        switch (message?.type) {
          case "KeepAlive":
            return conn.count("keepAlives");
          case "UpdateConfiguration":
            return undefined;
          case "ForceEndpoint":
            conn.count("forceEndpoints");
            conn.count("finishes");
            return conn.recognizer.flush();
          case "Terminate":
            conn.count("terminates");
            conn.count("finishes");
            state.closing = true;
            return conn.recognizer.flush();
          default:
            conn.count("invalidMessages");
            return fail(3006, "Invalid Message");
        }
      },
      closeWith: (code) => fail(Number(code), "mock close"),
      sessionOver: () => fail(3008, "Session expired: maximum session duration exceeded"),
      recognizerFailed: () => fail(3005, "speech recognition unavailable"),
    };
  },
};
