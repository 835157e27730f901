// Mock Speechmatics real-time (`/v2`, PROVIDERS.md) on the socket skeleton (ws_mock.mjs). The
// official `@speechmatics/real-time-client` connects to it (www/sdk-speechmatics.test.mjs: its `url`
// option points anywhere, ws: included).
//
//   POST /v1/api_keys?type=rt   Authorization: Bearer <any key>, body { ttl?, region?, client_ref? }
//                               -> { apikey_id, key_value }
//   WS   /v2?jwt=<key>          (or `Authorization: Bearer <key>`). An unknown or expired key: HTTP 401.
//
// As Speechmatics does: the first message must be `StartRecognition` (`audio_format` raw pcm_s16le
// at 16000 Hz; anything else, or audio before it: `Error` then close 1003), answered with
// `RecognitionStarted`; every binary frame is an `AddAudio`, receipted with `AudioAdded { seq_no }`;
// `AddPartialTranscript`, `AddTranscript` (metadata `transcript`, `start_time`, `end_time`, and
// `results`), `EndOfUtterance` after each utterance; `EndOfStream { last_seq_no }`: the rest is
// transcribed, then `EndOfTranscript` and close 1000. The counters record the most audio a client
// had out ahead of the receipts (`maxAheadMs`) and each `EndOfStream`'s `last_seq_no` against the
// frames received. The session's end: a `Warning` `session_timeout`, then close 1008; a `mock_close`
// of a 4xxx code sends its `Error` first.
//
// Its own switch: `mock_receipt_delay_ms=N` (each `AudioAdded` N ms late).

import { randomUUID } from "node:crypto";
import { HttpError, readJson, sendJson } from "../http.mjs";
import { BYTES_PER_SECOND, intParam } from "../recognizers.mjs";

const CLOSE_ERRORS = { 4001: "not_authorised", 4003: "not_allowed", 4004: "invalid_model", 4005: "quota_exceeded", 4006: "quota_exceeded", 4013: "job_error" };

/** Speechmatics' `results` for one transcript: one word result per word, spread over its time. */
function wordResults(text, start, end) {
  const words = text.split(/\s+/).filter(Boolean);
  const step = words.length > 0 ? (end - start) / words.length : 0;
  return words.map((content, i) => ({
    type: "word",
    start_time: Math.round((start + i * step) * 1000) / 1000,
    end_time: Math.round((start + (i + 1) * step) * 1000) / 1000,
    alternatives: [{ content, confidence: 0.95, language: "en" }],
  }));
}

export default {
  counters: () => ({ jwtAuth: 0, headerAuth: 0, starts: 0, languages: [], audioBeforeStart: 0, receipts: 0, maxAheadMs: 0, endOfStreams: 0, lastSeqNos: [], framesAtEnd: [] }),
  start: "message",
  httpError: (status, message) => ({ detail: message }),

  async http(req, res, _params, { credentials, expired }) {
    if (req.method !== "POST") return sendJson(req, res, 405, { detail: "use POST" });
    if (!/^bearer\s+\S+/i.test(req.headers.authorization ?? "")) return sendJson(req, res, 401, { detail: "Unauthorized" });
    let body;
    try {
      body = await readJson(req);
    } catch (error) {
      if (error instanceof HttpError) sendJson(req, res, error.status, { detail: error.message });
      return undefined;
    }
    const ttl = Number.isInteger(body.ttl) ? Math.min(86_400, Math.max(60, body.ttl)) : 60;
    const value = credentials.mint(`smtmp${randomUUID().replaceAll("-", "")}`, { ttlMs: ttl * 1000, expired });
    return sendJson(req, res, 201, { apikey_id: randomUUID(), key_value: value });
  },

  authorize(req, params, { credentials }) {
    const [scheme, header] = (req.headers.authorization ?? "").split(/\s+/, 2);
    const credential = params.get("jwt") ?? (scheme?.toLowerCase() === "bearer" ? header : null);
    if (!credential || !credentials.check(credential)) return { refuse: 401 };
    return { count: params.has("jwt") ? "jwtAuth" : "headerAuth" };
  },

  open(conn) {
    const receiptDelay = intParam(conn.params, "mock_receipt_delay_ms", 0, 0, 60_000);
    const state = { started: false, ending: false, receiptedBytes: 0, unreceipted: [] };
    const fail = (code, type, reason) => {
      conn.send({ message: "Error", type, reason });
      conn.close(code, reason);
    };
    const transcript = (message, text, start, end) =>
      conn.send({ message, format: "2.9", metadata: { transcript: `${text} `, start_time: start, end_time: end }, results: wordResults(text, start, end) });

    function onStart(message) {
      const format = message.audio_format ?? {};
      if (state.started || format.type !== "raw" || format.encoding !== "pcm_s16le" || format.sample_rate !== 16000) {
        conn.count("invalidMessages");
        return fail(1003, "invalid_audio_type", "expected raw pcm_s16le at 16000 Hz");
      }
      state.started = true;
      conn.count("starts");
      conn.push("languages", message.transcription_config?.language ?? null);
      conn.send({ message: "RecognitionStarted", id: randomUUID(), orchestrator_version: "mock", language_pack_info: { adapted: false, itn: true, language_description: "English", word_delimiter: " ", writing_direction: "left-to-right" } });
      return conn.started();
    }

    return {
      recognized(event) {
        switch (event.type) {
          case "partial":
            return transcript("AddPartialTranscript", event.pending ?? event.text, event.start, event.end);
          case "segment":
            return transcript("AddTranscript", event.text, event.start, event.end);
          case "final":
            if (event.pieces === 0) transcript("AddTranscript", event.text, event.start, event.end);
            return conn.send({ message: "EndOfUtterance", format: "2.9", metadata: { start_time: event.end, end_time: event.end } });
          case "flushed":
            if (!state.ending) return undefined;
            conn.send({ message: "EndOfTranscript" });
            return conn.close(1000);
          case "error":
            return fail(1011, "internal_error", "recognition failed");
          default:
            return undefined;
        }
      },
      binary(data) {
        if (!state.started) {
          conn.count("audioBeforeStart");
          return fail(1003, "protocol_error", "audio before StartRecognition");
        }
        if (state.ending) return undefined;
        state.unreceipted.push([conn.frames + 1, conn.received + data.length]);
        // What the client has out ahead of the receipts it has seen, in ms of audio.
        const ahead = ((conn.received + data.length - state.receiptedBytes) / BYTES_PER_SECOND) * 1000;
        const counters = conn.stats();
        counters.maxAheadMs = Math.max(counters.maxAheadMs, Math.round(ahead));
        if (!conn.audio(data)) return undefined;
        const seq = conn.frames;
        const receipt = () => {
          while (state.unreceipted.length > 0 && state.unreceipted[0][0] <= seq) state.receiptedBytes = state.unreceipted.shift()[1];
          conn.count("receipts");
          conn.send({ message: "AudioAdded", seq_no: seq });
        };
        if (receiptDelay > 0) conn.later(receiptDelay, receipt);
        else receipt();
        return undefined;
      },
      json(message) {
        switch (message?.message) {
          case "StartRecognition":
            return onStart(message);
          case "EndOfStream":
            if (!state.started) return fail(1003, "protocol_error", "EndOfStream before StartRecognition");
            conn.count("endOfStreams");
            conn.count("finishes");
            conn.push("lastSeqNos", message.last_seq_no);
            conn.push("framesAtEnd", conn.frames);
            state.ending = true;
            return conn.recognizer.flush();
          case "ForceEndOfUtterance":
            return conn.recognizer.flush();
          case "SetRecognitionConfig":
            return undefined;
          default:
            conn.count("invalidMessages");
            return fail(1003, "protocol_error", "unknown message");
        }
      },
      closeWith(code) {
        const number = Number(code);
        if (CLOSE_ERRORS[number]) fail(number, CLOSE_ERRORS[number], "mock close");
        else conn.close(number, "mock close");
      },
      sessionOver() {
        conn.send({ message: "Warning", type: "session_timeout", reason: "Session will end soon" });
        conn.close(1008, "session timeout");
      },
      recognizerFailed: () => fail(1011, "internal_error", "speech recognition unavailable"),
    };
  },
};
