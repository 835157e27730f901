// Mock Speechmatics real-time (`/v2`, PROVIDERS.md), with the real recognizer or the scripted one
// behind it (recognizers.mjs). The official `@speechmatics/real-time-client` connects to it
// (www/sdk-speechmatics.test.mjs: its `url` option points anywhere, ws: included).
//
//   POST /v1/api_keys?type=rt   Authorization: Bearer <any key>, body { ttl?, region?, client_ref? }
//                               -> { apikey_id, key_value }. `&expired=1`: a key already expired.
//   WS   /v2?jwt=<key>          (or `Authorization: Bearer <key>`). An unknown or expired key: HTTP 401.
//
// As Speechmatics does: the first message must be `StartRecognition` (`audio_format` raw pcm_s16le
// at 16000 Hz; anything else, or audio before it: `Error` then close 1003), answered with
// `RecognitionStarted`; every binary frame is an `AddAudio`, receipted with `AudioAdded { seq_no }`;
// `AddPartialTranscript`, `AddTranscript` (metadata `transcript`, `start_time`, `end_time`, and
// `results`), `EndOfUtterance` after each utterance; `EndOfStream { last_seq_no }`: the rest is
// transcribed, then `EndOfTranscript` and close 1000. The counters record the most audio a client
// had out ahead of the receipts (`maxAheadMs`) and each `EndOfStream`'s `last_seq_no` against the
// frames received.
//
// Switches in the socket URL's query (or its path, `/mock/<url-encoded switches>/v2`), per
// `mock_key`: `recognizer=speech` (pocketsphinx; else the scripted recognizer with `segment_ms`,
// `words_per_utterance`), `mock_receipt_delay_ms=N` (each `AudioAdded` N ms late),
// `mock_receipts_after_frames=N` (no receipts after the first N frames: a half-open socket),
// `mock_close=CODE` with `mock_close_after_frames=N` (an `Error` first for 4xxx codes),
// `mock_drop_after_ms=N`, `mock_drop_after_frames=N` (a cut, 1006), `mock_session_ms=N` (a
// `Warning` `session_timeout`, then close 1008), `mock_times=N` (only the key's first N connections).

import { randomUUID } from "node:crypto";
import { WebSocketServer } from "ws";
import { HttpError, readJson, sendJson } from "./http.mjs";
import { BYTES_PER_SECOND, intParam, openRecognizer } from "./recognizers.mjs";
import { CLOSE_LOG_LIMIT, pushBounded, SESSION_LIMIT } from "./stats.mjs";

const KEY_PATH = /^\/v1\/api_keys$/;
const SOCKET_PATH = /^(?:\/mock\/([^/]*))?\/v2\/?$/;
const KEY_LIMIT = 1000;
const noop = () => {};

export const SPEECHMATICS_SWITCHES = Object.freeze(["recognizer", "mock_receipt_delay_ms", "mock_receipts_after_frames", "mock_close", "mock_close_after_frames", "mock_drop_after_ms", "mock_drop_after_frames", "mock_session_ms", "mock_times"]);

export const matchSpeechmaticsKeyPath = (pathname) => KEY_PATH.test(pathname);
export const matchSpeechmaticsSocketPath = (pathname) => SOCKET_PATH.test(pathname);

function keyCounters() {
  return {
    connections: 0, open: 0, refused: 0, jwtAuth: 0, headerAuth: 0, starts: 0, languages: [], frames: 0, bytes: 0,
    audioBeforeStart: 0, receipts: 0, maxAheadMs: 0, endOfStreams: 0, lastSeqNos: [], framesAtEnd: [],
    invalidMessages: 0, utterances: 0, closeCodes: [],
  };
}

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

const CLOSE_ERRORS = { 4001: "not_authorised", 4003: "not_allowed", 4004: "invalid_model", 4005: "quota_exceeded", 4006: "quota_exceeded", 4013: "job_error" };

export function createSpeechmaticsMock(ctx) {
  const keys = new Map(); // key_value -> expires at (ms since epoch)
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
    if (req.method !== "POST") return sendJson(req, res, 405, { detail: "use POST" });
    if (!/^bearer\s+\S+/i.test(req.headers.authorization ?? "")) return sendJson(req, res, 401, { detail: "Unauthorized" });
    let body;
    try {
      body = await readJson(req);
    } catch (error) {
      if (error instanceof HttpError) sendJson(req, res, error.status, { detail: error.message });
      return;
    }
    const ttl = Number.isInteger(body.ttl) ? Math.min(86_400, Math.max(60, body.ttl)) : 60;
    const value = `smtmp${randomUUID().replaceAll("-", "")}`;
    keys.set(value, url.searchParams.get("expired") === "1" ? 0 : Date.now() + ttl * 1000);
    if (keys.size > KEY_LIMIT) keys.delete(keys.keys().next().value);
    counters.apiKeys += 1;
    sendJson(req, res, 201, { apikey_id: randomUUID(), key_value: value });
  }

  async function handleUpgrade(req, socket, head, url) {
    const params = new URLSearchParams(url.searchParams);
    const inPath = SOCKET_PATH.exec(url.pathname)?.[1];
    if (inPath) for (const [name, value] of new URLSearchParams(decodeURIComponent(inPath))) params.set(name, value);
    const key = params.get("mock_key") ?? "default";
    const stats = keyStats(key);
    const [scheme, header] = (req.headers.authorization ?? "").split(/\s+/, 2);
    const credential = params.get("jwt") ?? (scheme?.toLowerCase() === "bearer" ? header : null);
    if (!credential || !((keys.get(credential) ?? 0) > Date.now())) {
      stats.refused += 1;
      socket.end("HTTP/1.1 401 Unauthorized\r\nConnection: close\r\nContent-Length: 0\r\n\r\n");
      return;
    }
    stats[params.has("jwt") ? "jwtAuth" : "headerAuth"] += 1;
    wss.handleUpgrade(req, socket, head, (ws) => accept(ws, params, key));
  }

  function accept(ws, params, key) {
    const stats = () => keyStats(key);
    stats().connections += 1;
    stats().open += 1;
    const connection = stats().connections;
    const faulty = connection <= intParam(params, "mock_times", Infinity);
    const receiptDelay = intParam(params, "mock_receipt_delay_ms", 0, 0, 60_000);
    const receiptsUntil = intParam(params, "mock_receipts_after_frames", Infinity);
    const state = { started: false, ending: false, seq: 0, bytes: 0, receiptedBytes: 0, unreceipted: [], recognizer: null, queue: [] };
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
    const fail = (code, type, reason) => {
      send({ message: "Error", type, reason });
      close(code, reason);
    };
    const transcript = (message, text, start, end) =>
      send({ message, format: "2.9", metadata: { transcript: `${text} `, start_time: start, end_time: end }, results: wordResults(text, start, end) });

    const onRecognized = (event) => {
      switch (event.type) {
        case "partial":
          transcript("AddPartialTranscript", event.pending ?? event.text, event.start, event.end);
          break;
        case "segment":
          transcript("AddTranscript", event.text, event.start, event.end);
          break;
        case "final":
          if (event.pieces === 0) transcript("AddTranscript", event.text, event.start, event.end);
          stats().utterances += 1;
          send({ message: "EndOfUtterance", format: "2.9", metadata: { start_time: event.end, end_time: event.end } });
          break;
        case "flushed":
          if (state.ending) {
            send({ message: "EndOfTranscript" });
            close(1000, "");
          }
          break;
        case "error":
          fail(1011, "internal_error", "recognition failed");
          break;
        default:
      }
    };
    const withRecognizer = (run) => (state.recognizer ? run() : state.queue.push(run));

    ws.on("error", noop);
    ws.on("close", (code) => {
      stats().open = Math.max(0, stats().open - 1);
      pushBounded(stats().closeCodes, code, CLOSE_LOG_LIMIT);
      for (const timer of timers) clearTimeout(timer);
      withRecognizer(() => state.recognizer.close());
    });
    if (faulty && params.has("mock_drop_after_ms")) later(intParam(params, "mock_drop_after_ms", 0), () => ws.terminate());
    if (faulty && params.has("mock_session_ms")) {
      later(intParam(params, "mock_session_ms", 0), () => {
        send({ message: "Warning", type: "session_timeout", reason: "Session will end soon" });
        close(1008, "session timeout");
      });
    }
    const closeCode = intParam(params, "mock_close", 0, 0, 4999);
    const closeWith = (code) => (CLOSE_ERRORS[code] ? fail(code, CLOSE_ERRORS[code], "mock close") : close(code, "mock close"));
    if (faulty && closeCode && intParam(params, "mock_close_after_frames", 0) === 0) later(0, () => closeWith(closeCode));

    ws.on("message", (data, isBinary) => {
      if (isBinary) return onAudio(data);
      let message = null;
      try {
        message = JSON.parse(data.toString("utf8"));
      } catch {}
      switch (message?.message) {
        case "StartRecognition":
          return onStart(message);
        case "EndOfStream":
          if (!state.started) return fail(1003, "protocol_error", "EndOfStream before StartRecognition");
          stats().endOfStreams += 1;
          pushBounded(stats().lastSeqNos, message.last_seq_no, CLOSE_LOG_LIMIT);
          pushBounded(stats().framesAtEnd, state.seq, CLOSE_LOG_LIMIT);
          state.ending = true;
          return withRecognizer(() => state.recognizer.flush());
        case "ForceEndOfUtterance":
          return withRecognizer(() => state.recognizer.flush());
        case "SetRecognitionConfig":
          return undefined;
        default:
          stats().invalidMessages += 1;
          return fail(1003, "protocol_error", "unknown message");
      }
    });

    function onStart(message) {
      const format = message.audio_format ?? {};
      if (state.started || format.type !== "raw" || format.encoding !== "pcm_s16le" || format.sample_rate !== 16000) {
        stats().invalidMessages += 1;
        return fail(1003, "invalid_audio_type", "expected raw pcm_s16le at 16000 Hz");
      }
      state.started = true;
      stats().starts += 1;
      pushBounded(stats().languages, message.transcription_config?.language ?? null, CLOSE_LOG_LIMIT);
      openRecognizer(params, ctx.speech, onRecognized).then(
        (recognizer) => {
          if (ws.readyState !== ws.OPEN) return recognizer.close();
          state.recognizer = recognizer;
          for (const run of state.queue.splice(0)) run();
        },
        () => fail(1011, "internal_error", "speech recognition unavailable"),
      );
      send({ message: "RecognitionStarted", id: randomUUID(), orchestrator_version: "mock", language_pack_info: { adapted: false, itn: true, language_description: "English", word_delimiter: " ", writing_direction: "left-to-right" } });
    }

    function onAudio(data) {
      if (!state.started) {
        stats().audioBeforeStart += 1;
        return fail(1003, "protocol_error", "audio before StartRecognition");
      }
      if (state.ending) return;
      state.seq += 1;
      const seq = state.seq;
      state.bytes += data.length;
      state.unreceipted.push([seq, state.bytes]);
      stats().frames += 1;
      stats().bytes += data.length;
      // What the client has out ahead of the receipts it has seen, in ms of audio.
      const ahead = ((state.bytes - state.receiptedBytes) / BYTES_PER_SECOND) * 1000;
      stats().maxAheadMs = Math.max(stats().maxAheadMs, Math.round(ahead));
      withRecognizer(() => state.recognizer.audio(data));
      if (seq <= receiptsUntil) {
        const receipt = () => {
          while (state.unreceipted.length > 0 && state.unreceipted[0][0] <= seq) state.receiptedBytes = state.unreceipted.shift()[1];
          stats().receipts += 1;
          send({ message: "AudioAdded", seq_no: seq });
        };
        if (receiptDelay > 0) later(receiptDelay, receipt);
        else receipt();
      }
      if (faulty && params.has("mock_drop_after_frames") && seq >= intParam(params, "mock_drop_after_frames", 1)) ws.terminate();
      if (faulty && closeCode && seq >= intParam(params, "mock_close_after_frames", 0)) closeWith(closeCode);
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
