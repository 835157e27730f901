// Mock Soniox real-time (PROVIDERS.md) on the socket skeleton (ws_mock.mjs). The official
// `@soniox/node` SDK connects to it (www/sdk-soniox.test.mjs: its `realtime.ws_base_url` and
// `base_url` options point anywhere).
//
//   POST /v1/auth/temporary-api-key   Authorization: Bearer <any key>, body { usage_type:
//                                     "transcribe_websocket", expires_in_seconds: 1..3600, single_use? }
//                                     -> { api_key, expires_at }
//   WS   /transcribe-websocket        the first message is the configuration, with `api_key`.
//
// As Soniox does: the configuration first (`api_key` minted here and not expired, not used before
// when single-use; `audio_format` "pcm_s16le", `sample_rate` 16000, one channel; else
// `{ error_code, error_message }` and a close); binary audio; results `{ tokens: [{ text, start_ms,
// end_ms, confidence, is_final }], final_audio_proc_ms, total_audio_proc_ms }` with sub-word tokens
// carrying their own spaces, non-final tokens for the words under way and `<end>` at an endpoint;
// `{"type":"keepalive"}`; `{"type":"finalize"}` (the rest final, then `<fin>`); an empty text frame
// ends the audio: the last results, `finished: true`, close 1000. No frame for 20 s: error 408 and a
// close. About real time (a second of slack). No session limit. `mock_close=CODE` under 1000 is a
// Soniox error code: `{ error_code }`, then close `mock_close_code` (default 1000).

import { randomUUID } from "node:crypto";
import { HttpError, readJson, sendJson } from "../http.mjs";
import { BYTES_PER_SECOND, intParam } from "../recognizers.mjs";

const ERRORS = { 400: "Bad request", 401: "Invalid or expired API key", 402: "Organization balance exhausted", 408: "Request timeout", 429: "Too many requests", 500: "Internal server error", 503: "Service unavailable, please reconnect" };
const ms = (seconds) => Math.round(seconds * 1000);

export default {
  counters: () => ({ configs: 0, badConfigs: 0, models: [], finalizes: 0, endOfAudio: 0, finished: 0, endpoints: 0, errors: [] }),
  start: "message",
  idleMs: 20_000,
  pacing: { rate: 1, slackMs: 1000 },
  httpError: (status, message) => ({ error_code: status, error_message: message }),

  async http(req, res, _params, { credentials, expired }) {
    if (req.method !== "POST") return sendJson(req, res, 405, { error_code: 405, error_message: "use POST" });
    if (!/^bearer\s+\S+/i.test(req.headers.authorization ?? "")) return sendJson(req, res, 401, { error_code: 401, error_message: "Invalid API key" });
    let body;
    try {
      body = await readJson(req);
    } catch (error) {
      if (error instanceof HttpError) sendJson(req, res, error.status, { error_code: error.status, error_message: error.message });
      return undefined;
    }
    const seconds = body.expires_in_seconds;
    if (body.usage_type !== "transcribe_websocket" || !Number.isInteger(seconds) || seconds < 1 || seconds > 3600) {
      return sendJson(req, res, 400, { error_code: 400, error_message: "usage_type must be transcribe_websocket and expires_in_seconds 1..3600" });
    }
    const value = credentials.mint(`temp:${randomUUID()}`, { ttlMs: seconds * 1000, singleUse: body.single_use === true, expired });
    return sendJson(req, res, 201, { api_key: value, expires_at: new Date(expired ? Date.now() : Date.now() + seconds * 1000).toISOString() });
  },

  open(conn, _auth, { credentials }) {
    const state = { configured: false, ending: false, finalized: 0, wordsInUtterance: 0 };
    const fail = (code, closeCode = 1000) => {
      conn.push("errors", code);
      conn.send({ error_code: code, error_message: ERRORS[code] ?? "error" });
      conn.close(closeCode);
    };
    const audioMs = () => ms(conn.received / BYTES_PER_SECOND);
    /** One result: the final tokens so far (then forgotten), and the non-final ones. */
    const result = (finalTokens, pending = []) => conn.send({ tokens: [...finalTokens, ...pending], final_audio_proc_ms: ms(state.finalized), total_audio_proc_ms: audioMs() });
    const token = (text, start, end, isFinal) => ({ text, start_ms: ms(start), end_ms: ms(end), confidence: isFinal ? 0.97 : 0.6, is_final: isFinal });
    const spaced = (text) => (state.wordsInUtterance > 0 ? ` ${text}` : text);

    function onConfig(config) {
      const key = typeof config?.api_key === "string" ? config.api_key : "";
      if (!credentials.check(key)) {
        conn.count("badConfigs");
        return fail(401);
      }
      if (config.audio_format !== "pcm_s16le" || config.sample_rate !== 16000 || config.num_channels !== 1 || typeof config.model !== "string") {
        conn.count("badConfigs");
        return fail(400);
      }
      credentials.use(key);
      state.configured = true;
      conn.count("configs");
      conn.push("models", config.model);
      return conn.started();
    }

    return {
      recognized(event) {
        switch (event.type) {
          case "partial":
            return result([], [token(spaced(event.pending ?? event.text), event.start, event.end, false)]);
          case "segment":
            state.finalized = Math.max(state.finalized, event.end);
            result([token(spaced(event.text), event.start, event.end, true)]);
            state.wordsInUtterance += 1;
            return undefined;
          case "final":
            state.finalized = Math.max(state.finalized, event.end);
            conn.count("endpoints");
            result([...(event.pieces === 0 ? [token(event.text, event.start, event.end, true)] : []), token("<end>", event.end, event.end, true)]);
            state.wordsInUtterance = 0;
            return undefined;
          case "flushed":
            result([token("<fin>", state.finalized, state.finalized, true)]);
            if (!state.ending) return undefined;
            conn.count("finished");
            conn.send({ tokens: [], final_audio_proc_ms: ms(state.finalized), total_audio_proc_ms: audioMs(), finished: true });
            return conn.close(1000);
          case "error":
            return fail(500);
          default:
            return undefined;
        }
      },
      binary(data) {
        if (!state.configured) {
          conn.count("badConfigs");
          return fail(400);
        }
        return state.ending ? undefined : conn.audio(data);
      },
      json(message, text) {
        if (!state.configured) return onConfig(message);
        if (text === "") {
          conn.count("endOfAudio");
          conn.count("finishes");
          state.ending = true;
          return conn.recognizer.flush();
        }
        switch (message?.type) {
          case "keepalive":
            return conn.count("keepAlives");
          case "finalize":
            conn.count("finalizes");
            conn.count("finishes");
            return conn.recognizer.flush();
          default:
            conn.count("invalidMessages");
            return fail(400);
        }
      },
      closeWith(what) {
        const code = Number(what);
        if (code < 1000) fail(code, intParam(conn.params, "mock_close_code", 1000, 1000, 4999));
        else conn.close(code, "mock close");
      },
      idle: () => fail(408),
      recognizerFailed: () => fail(503),
    };
  },
};
