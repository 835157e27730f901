// Mock Deepgram listen v1 (PROVIDERS.md) on the socket skeleton (ws_mock.mjs). The official
// `@deepgram/sdk` connects to it (www/sdk-deepgram.test.mjs).
//
//   POST /v1/auth/grant   Authorization: Token <any key>, body { ttl_seconds? } (default 30)
//                         -> { access_token, expires_in }
//   WS   /v1/listen?...   auth: subprotocols ["bearer", <token>] or ["token", <key>], or an
//                         Authorization header (`Bearer …`/`Token …`). A bearer token must be one
//                         granted here and not expired, else the handshake gets HTTP 401.
//
// As Deepgram does: binary PCM16 frames (an empty one: close 1008 `DATA-0000`); no frame for the
// idle limit (10 s): close 1011 `NET-0001`; `KeepAlive`, `Finalize` (flush, the result has
// `from_finalize: true`) and `CloseStream` (flush, `Metadata`, close 1000); interim and final
// `Results` with `speech_final` on an utterance's last segment, then `UtteranceEnd` too;
// `SpeechStarted`; at most 1.25x real time (a second of slack). No session limit.

import { randomUUID } from "node:crypto";
import { HttpError, readJson, sendJson } from "../http.mjs";
import { seconds } from "../recognizers.mjs";

/** `["bearer", token]` or `["token", key]` from the subprotocols or the Authorization header. */
function credentialsOf(req) {
  const offered = (req.headers["sec-websocket-protocol"] ?? "").split(",").map((item) => item.trim()).filter(Boolean);
  if (offered.length >= 2) return [offered[0].toLowerCase(), offered[1]];
  const [scheme, value] = (req.headers.authorization ?? "").split(/\s+/, 2);
  return value ? [scheme.toLowerCase(), value] : [null, null];
}

export default {
  counters: () => ({ bearer: 0, token: 0, emptyFrames: 0, finalizes: 0, closeStreams: 0 }),
  idleMs: 10_000,
  pacing: { rate: 1.25, slackMs: 1000 },
  // The browser offers ["bearer", jwt]: the server must pick one, or the browser fails the socket.
  handleProtocols: (protocols) => [...protocols][0] ?? false,
  httpError: (status, message) => ({ err_code: status === 401 ? "INVALID_AUTH" : "MOCK_FAULT", err_msg: message }),

  async http(req, res, params, { credentials, expired }) {
    if (req.method !== "POST") return sendJson(req, res, 405, { err_code: "METHOD_NOT_ALLOWED", err_msg: "use POST" });
    if (!/^token\s+\S+/i.test(req.headers.authorization ?? "")) return sendJson(req, res, 401, { err_code: "INVALID_AUTH", err_msg: "Invalid credentials." });
    let body;
    try {
      body = await readJson(req);
    } catch (error) {
      if (error instanceof HttpError) sendJson(req, res, error.status, { err_code: "BAD_REQUEST", err_msg: error.message });
      return undefined;
    }
    const ttl = Number.isInteger(body.ttl_seconds) ? Math.min(3600, Math.max(1, body.ttl_seconds)) : 30;
    const token = credentials.mint(`mockjwt.${randomUUID()}`, { ttlMs: ttl * 1000, expired });
    return sendJson(req, res, 200, { access_token: token, expires_in: ttl });
  },

  authorize(req, _params, { credentials }) {
    const [scheme, credential] = credentialsOf(req);
    const ok = (scheme === "token" && credential) || (scheme === "bearer" && credentials.check(credential));
    return ok ? { count: scheme } : { refuse: 401 };
  },

  open(conn) {
    const requestId = randomUUID();
    const realRecognizer = conn.params.get("recognizer") === "speech";
    const state = { finalized: 0, inSpeech: false, fromFinalize: false, closing: false };
    const results = (transcript, start, end, isFinal, speechFinal) => {
      if (isFinal) state.finalized = Math.max(state.finalized, end);
      conn.send({
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
    const flush = () => conn.recognizer.flush();
    return {
      recognized(event) {
        switch (event.type) {
          case "speech_start":
            state.inSpeech = true;
            return conn.send({ type: "SpeechStarted", channel: [0], timestamp: event.time });
          case "partial":
            return results(event.pending ?? event.text, event.start, event.end, false, false);
          case "segment":
            return results(event.text, event.start, event.end, true, event.last);
          case "final":
            if (event.pieces === 0) results(event.text, event.start, event.end, true, true);
            return conn.send({ type: "UtteranceEnd", channel: [0, 1], last_word_end: event.end });
          case "speech_end":
            state.inSpeech = false;
            return undefined;
          case "flushed":
            state.fromFinalize = false;
            if (!state.closing) return undefined;
            conn.send({ type: "Metadata", transaction_key: "deprecated", request_id: requestId, sha256: "0".repeat(64), created: new Date(conn.opened).toISOString(), duration: seconds(conn.received), channels: 1 });
            return conn.close(1000);
          case "error":
            return conn.close(1011, "recognition failed");
          default:
            return undefined;
        }
      },
      binary(data) {
        if (data.length === 0) {
          conn.count("emptyFrames");
          return conn.close(1008, "DATA-0000");
        }
        if (state.closing || !conn.audio(data)) return undefined;
        if (realRecognizer && !state.inSpeech) {
          // Silence is finalized too, as Deepgram does, so the client's watermark moves.
          const end = seconds(conn.received) - 0.5;
          if (end - state.finalized >= 1.5) results("", state.finalized, Math.round(end * 1000) / 1000, true, false);
        }
        return undefined;
      },
      json(message) {
        switch (message?.type) {
          case "KeepAlive":
            return conn.count("keepAlives");
          case "Finalize":
            conn.count("finalizes");
            conn.count("finishes");
            state.fromFinalize = true;
            return flush();
          case "CloseStream":
            conn.count("closeStreams");
            conn.count("finishes");
            state.closing = true;
            return flush();
          default:
            return conn.count("invalidMessages");
        }
      },
      idle: () => conn.close(1011, "Deepgram did not receive audio data or a text message within the timeout window. See https://dpgr.am/net0001"),
    };
  },
};
