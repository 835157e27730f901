// Mock ElevenLabs Scribe realtime (PROVIDERS.md) on the socket skeleton (ws_mock.mjs). The official
// `@elevenlabs/client` (`Scribe.connect`, whose `baseUri` points anywhere) connects to it
// (www/sdk-elevenlabs.test.mjs).
//
//   POST /v1/single-use-token/realtime_scribe   xi-api-key: <any key> -> { token }. Each token opens
//                                    one connection (15 min).
//   WS   /v1/speech-to-text/realtime?model_id=…&token=<t>&audio_format=pcm_16000&commit_strategy=vad
//        &include_timestamps=true    A missing, used or expired token: `auth_error`, then close 1008.
//
// As ElevenLabs does: `session_started`; `input_audio_chunk` messages with base64 PCM16
// (`sample_rate` 16000; `previous_text` only on the first chunk, else `invalid_request`); with
// `commit_strategy=vad` the server commits each utterance, and `commit: true` (an empty chunk)
// commits what is buffered; `partial_transcript`, then per commit `committed_transcript` and, with
// `include_timestamps=true`, `committed_transcript_with_timestamps` (words with `start`/`end`
// seconds) — both, as the service does. Errors are messages named by their `message_type`, then a
// close: `mock_close=<type>` sends that error, then closes with `mock_close_code` (default 1008);
// the session's end is `session_time_limit_exceeded`.

import { randomUUID } from "node:crypto";
import { sendJson } from "../http.mjs";
import { intParam } from "../recognizers.mjs";

export default {
  counters: () => ({ badChunks: 0, previousTexts: [], commits: 0, committed: 0, errors: [] }),
  httpError: (status, message) => ({ detail: { status: "mock_fault", message } }),

  http(req, res, _params, { credentials, expired }) {
    if (req.method !== "POST") return sendJson(req, res, 405, { detail: { status: "method_not_allowed", message: "use POST" } });
    if (!req.headers["xi-api-key"]) return sendJson(req, res, 401, { detail: { status: "invalid_api_key", message: "Invalid API key" } });
    const token = credentials.mint(`sutkn_${randomUUID().replaceAll("-", "")}`, { ttlMs: 15 * 60_000, singleUse: true, expired });
    return sendJson(req, res, 200, { token });
  },

  open(conn, _auth, { credentials }) {
    const { params } = conn;
    const fail = (type, code = 1008) => {
      conn.push("errors", type);
      conn.send({ message_type: type, error: `mock ${type}` });
      conn.close(code, type);
    };
    const token = params.get("token") ?? "";
    const format = params.get("audio_format") === "pcm_16000";
    if (!credentials.check(token) || !format) {
      conn.count("refused");
      fail(credentials.check(token) ? "input_error" : "auth_error");
      return {};
    }
    credentials.use(token);
    const timestamps = params.get("include_timestamps") === "true";
    const vad = params.get("commit_strategy") === "vad";
    const state = { chunks: 0, pending: [], manualCommit: false };
    conn.send({ message_type: "session_started", session_id: randomUUID(), config: { sample_rate: 16000, audio_format: "pcm_16000", model_id: params.get("model_id") ?? "scribe_v2_realtime" } });

    const commit = (text, start, end) => {
      conn.count("committed");
      conn.send({ message_type: "committed_transcript", text });
      if (!timestamps) return;
      const words = text.split(/\s+/).filter(Boolean);
      const step = words.length > 0 ? (end - start) / words.length : 0;
      conn.send({
        message_type: "committed_transcript_with_timestamps",
        text,
        words: words.map((word, i) => ({ text: word, start: Math.round((start + i * step) * 1000) / 1000, end: Math.round((start + (i + 1) * step) * 1000) / 1000, type: "word", logprob: -0.1 })),
      });
    };

    return {
      recognized(event) {
        switch (event.type) {
          case "partial":
            return conn.send({ message_type: "partial_transcript", text: event.text });
          case "final":
            // VAD commits each utterance; without it, the words wait for the client's commit.
            if (vad || state.manualCommit) {
              const held = state.pending.splice(0);
              state.manualCommit = false;
              commit([...held.map((e) => e.text), event.text].join(" "), held[0]?.start ?? event.start, event.end);
            } else state.pending.push(event);
            return undefined;
          case "flushed":
            if (state.manualCommit) {
              state.manualCommit = false;
              const held = state.pending.splice(0);
              if (held.length > 0) commit(held.map((e) => e.text).join(" "), held[0].start, held.at(-1).end);
              else commit("", 0, 0);
            }
            return undefined;
          case "error":
            return fail("transcriber_error", 1011);
          default:
            return undefined;
        }
      },
      binary: () => {
        conn.count("invalidMessages");
        fail("invalid_request");
      },
      json(message) {
        if (message?.message_type !== "input_audio_chunk") {
          conn.count("invalidMessages");
          return fail("invalid_request");
        }
        const audio = typeof message.audio_base_64 === "string" && /^[A-Za-z0-9+/]*={0,2}$/.test(message.audio_base_64) ? Buffer.from(message.audio_base_64, "base64") : null;
        if (!audio || audio.length % 2 !== 0 || message.sample_rate !== 16000) {
          conn.count("badChunks");
          return fail("input_error");
        }
        if (message.previous_text !== undefined) {
          if (state.chunks > 0) return fail("invalid_request");
          // What was said stays out of the stats: the scripted recognizer's words are frame numbers.
          conn.push("previousTexts", params.get("recognizer") === "speech" ? `<${String(message.previous_text).length} chars>` : message.previous_text);
        }
        if (audio.length > 0) {
          state.chunks += 1;
          if (!conn.audio(audio)) return undefined;
        }
        if (message.commit === true && conn.isOpen()) {
          conn.count("commits");
          conn.count("finishes");
          state.manualCommit = true;
          conn.recognizer.flush();
        }
        return undefined;
      },
      closeWith: (what) => (Number(what) >= 1000 ? conn.close(Number(what), "mock close") : fail(what, intParam(params, "mock_close_code", 1008, 1000, 4999))),
      sessionOver: () => fail("session_time_limit_exceeded"),
      recognizerFailed: () => fail("transcriber_error", 1011),
    };
  },
};
