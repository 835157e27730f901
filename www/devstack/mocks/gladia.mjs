// Mock Gladia live v2 on the socket skeleton (ws_mock.mjs): provisioning over HTTP, then a
// WebSocket that takes PCM16 16 kHz mono audio (binary frames or JSON `audio_chunk`) and sends
// transcripts. The session outlives its connections: every byte is acknowledged (`audio_chunk`
// with its byte range, counted across connections), and a reconnect to the same URL continues it.
//
//   POST /v2/live, POST /stt/<mode>/v2/live      -> 201 { id, url }   scripted words ("utterance N")
//   POST /speech/v2/live                         -> 201 { id, url }   pocketsphinx hears the audio
//   WS   /v2/live/ws?token=<id>, /speech/v2/live/ws?token=<id>       (the url returned above)
//
// The switches of the provisioning request are the session's (the socket URL's own are added to
// them). The skeleton's switches apply (ws_mock.mjs); Gladia's own ways to end a session: the
// session over (`mock_session_ms`, `mock_session_frames`) is `end_session` while in use, then close
// 1000; a session whose URL is used after it ended gets close 4403; an unknown token gets HTTP 404.
// `mock_big_frame=N`: one text frame of N bytes shaped as a final after start_session (L2).
//
// The older spellings, which the transcriber suites use (`?mode=` or the /stt/<mode> prefix, each
// with `times=N`): normal, close4403 (the first N sessions are dead: every connection closes 4403),
// drop1006 (dropAfterMs, dropAfterFrames; cut at once without them), provision401/408/429/500/503,
// provision_hang, provision_reset (the first N provisions), slow_handshake (handshakeMs, default
// 2000), echo_frames (records frame numbers), upgrade404 (every upgrade refused), end_session
// (endAfterFrames, default 5: the first N sessions end in use), big_frame (bigFrameBytes, default
// 64 MiB), dead_token (the URL's token is unknown); and recordFrames, silentAfterFrames,
// utteranceBytes, maxUtterances. Without `mock_key`, a provisioning request counts for its mode
// and each session for its id: GET /__stats has them as `stt.modes` and `stt.sessions`.

import { randomUUID } from "node:crypto";
import { HttpError, readJson, sendJson } from "../http.mjs";
import { intParam, seconds } from "../recognizers.mjs";
import { SESSION_LIMIT } from "../stats.mjs";

export const GLADIA_MODES = Object.freeze([
  "normal", "close4403", "drop1006", "provision401", "provision408", "provision429", "provision500", "provision503",
  "provision_hang", "provision_reset", "slow_handshake", "echo_frames", "upgrade404", "end_session", "big_frame", "dead_token",
]);
/** Default size of big_frame's text frame: 64 MiB. */
export const BIG_FRAME_BYTES = 64 << 20;
/** Close code for a session that no longer exists (R2: re-provision). */
export const SESSION_GONE_CODE = 4403;

const HTTP_PATH = /^(?:\/stt\/([^/]+)|\/(speech))?\/v2\/live$/;
// Gladia serves the socket on /v2/live itself; /v2/live/ws is this mock's own URL.
const SOCKET_PATH = /^(?:\/stt\/([^/]+)|\/(speech))?\/v2\/live(?:\/ws)?$/;
const EXPECTED_CONFIG = { encoding: "wav/pcm", bit_depth: 16, sample_rate: 16000, channels: 1 };

const matcher = (pattern) => (pathname) => {
  const match = pattern.exec(pathname);
  return match ? { mode: match[1], speech: match[2] === "speech" } : null;
};

/** Gladia's error body shape. */
function gladiaError(statusCode, message, validationErrors = []) {
  return { timestamp: new Date().toISOString(), statusCode, message, validation_errors: validationErrors };
}

/** The config fields this mock cannot honour; absent fields take Gladia's defaults. */
export function configProblems(config) {
  return Object.entries(EXPECTED_CONFIG)
    .filter(([field, expected]) => config[field] !== undefined && config[field] !== expected)
    .map(([field, expected]) => `${field} must be ${JSON.stringify(expected)} for this mock`);
}

const modeOf = (params, match) => params.get("mode") ?? match.mode ?? "normal";
const provisionFaults = { provision401: "401", provision408: "408", provision429: "429", provision500: "500", provision503: "503", provision_hang: "hang", provision_reset: "reset" };

/**
 * The older spellings as the skeleton's switches. `times` counts provisions for the provisioning
 * faults, sessions for close4403 and end_session (decided in `http`), connections for the rest.
 */
function legacySwitches(params, match, where) {
  const out = new URLSearchParams(params);
  const set = (name, value) => out.has(name) || out.set(name, String(value));
  // A session's socket URL names its mode for people only: the session has its switches.
  const ofSession = where === "http" || !params.has("token");
  const mode = ofSession ? modeOf(params, match) : "normal";
  const times = params.get("times");
  // The scripted words are "utterance N" unless asked otherwise.
  if (ofSession) {
    if (match.speech) out.set("recognizer", "speech");
    else set("recognizer", "count");
  }
  if (params.has("utteranceBytes")) set("segment_bytes", params.get("utteranceBytes"));
  if (params.has("maxUtterances")) set("max_utterances", params.get("maxUtterances"));
  if (params.get("recordFrames") === "1" || mode === "echo_frames") set("mock_record_frames", 1);
  if (params.has("silentAfterFrames")) set("mock_silent_after_frames", params.get("silentAfterFrames"));
  if (params.has("handshakeMs") || mode === "slow_handshake") set("mock_handshake_ms", params.get("handshakeMs") ?? 2000);
  if (params.has("dropAfterMs") || params.has("dropAfterFrames") || mode === "drop1006") {
    if (params.has("dropAfterFrames")) set("mock_drop_after_frames", params.get("dropAfterFrames"));
    else set("mock_drop_after_ms", params.get("dropAfterMs") ?? 0);
  }
  if (mode === "upgrade404") set("mock_refuse_upgrade", 404);
  if (where === "http" && provisionFaults[mode]) set("mock_provision", provisionFaults[mode]);
  if (times !== null && !["close4403", "end_session", "dead_token"].includes(mode)) set("mock_times", times);
  return out;
}

export default {
  counters: () => ({ mode: "", sessions: 0, provisionsWithKey: 0, binaryFrames: 0, jsonChunks: 0, stopRecordings: 0, bigFrames: 0, ended: false }),
  matchHttp: matcher(HTTP_PATH),
  matchSocket: matcher(SOCKET_PATH),
  recognizer: "none", // one per session, not per connection
  httpError: (status, message) => gladiaError(status, message),
  switches: legacySwitches,
  /** The transcriber suites read the counters by mode and by session. */
  aliases: ({ keys, groups }) => ({ stt: { modes: groups, sessions: keys } }),
  /** Whose counters a provisioning request is: its mock_key, else its mode (`stt.modes`). */
  provisionKey(params, match, { state }) {
    const group = `${match.speech ? "speech:" : ""}${modeOf(params, match)}`;
    const key = params.get("mock_key") ?? group;
    state.groups.set(key, group);
    return key;
  },

  /** Per dev stack: the sessions, and which mode each counter key belongs to (`stt.modes`). */
  setup() {
    const sessions = new Map();
    const groups = new Map();
    return { sessions, groups, groupOf: (key) => groups.get(key) };
  },

  async http(req, res, params, tools) {
    const { key, match, count, stats, expired, state } = tools;
    const mode = modeOf(params, match);
    if (!GLADIA_MODES.includes(mode)) return sendJson(req, res, 400, gladiaError(400, `unknown mock mode "${mode}"; one of ${GLADIA_MODES.join(", ")}`));
    if (req.method !== "POST") return sendJson(req, res, 405, gladiaError(405, "use POST"));
    const group = state.groups.get(key);
    // L1: the browser should provision through the app's backend, which holds the key.
    if (req.headers["x-gladia-key"]) count(key, "provisionsWithKey");
    let config;
    try {
      config = await readJson(req);
    } catch (error) {
      if (error instanceof HttpError) sendJson(req, res, error.status, gladiaError(error.status, error.message));
      return undefined;
    }
    const problems = configProblems(config);
    if (problems.length > 0) return sendJson(req, res, 400, gladiaError(400, "invalid live session config", problems));
    if (match.speech && tools.ctx.engine.stats().engine === "unavailable") {
      return sendJson(req, res, 503, gladiaError(503, "speech recognition is not installed here: run `npm run bootstrap` (it makes .venv with pocketsphinx)"));
    }
    count(key, "sessions");
    const nth = stats(key).sessions;
    const faulty = nth <= intParam(params, "times", Infinity);
    const root = `ws://${tools.ctx.authority()}${match.speech ? "/speech" : ""}/v2/live/ws`;
    if ((mode === "dead_token" && faulty) || expired) return sendJson(req, res, 201, { id: randomUUID(), url: `${root}?token=${randomUUID()}` });
    const sessionParams = new URLSearchParams(params);
    for (const name of ["mode", "times", "mock_provision", "mock_expired"]) sessionParams.delete(name);
    if (mode === "close4403" && faulty) sessionParams.set("mock_close", String(SESSION_GONE_CODE));
    if (mode === "end_session" && faulty) sessionParams.set("mock_session_frames", String(Math.max(1, intParam(params, "endAfterFrames", 5))));
    if (mode === "big_frame") sessionParams.set("mock_big_frame", String(intParam(params, "bigFrameBytes", BIG_FRAME_BYTES, 1, 256 << 20)));
    const session = createSession(state, params.has("mock_key") ? key : null, group, sessionParams, config, stats);
    return sendJson(req, res, 201, { id: session.id, url: `${root}?token=${session.id}${match.speech ? "" : `&mode=${mode}`}` });
  },

  /** The session the URL names (an ad hoc one without a token), its switches under the URL's. */
  prepare(_req, _url, params, match, { state, stats }) {
    const token = params.get("token");
    let session;
    if (token !== null) {
      session = state.sessions.get(token);
      if (!session) return { refuse: 404 };
    } else {
      const mode = modeOf(params, match);
      if (!GLADIA_MODES.includes(mode)) return { refuse: 400 };
      session = createSession(state, null, mode, new URLSearchParams(params), {}, stats);
    }
    const merged = new URLSearchParams(session.params);
    for (const [name, value] of params) if (!["token", "mode", "times"].includes(name)) merged.set(name, value);
    merged.set("token", session.id);
    merged.set("mock_key", session.key);
    return { params: merged };
  },

  open(conn, _auth, { state, recognize }) {
    const session = state.sessions.get(conn.params.get("token"));
    if (session.ended) {
      conn.close(SESSION_GONE_CODE, "session ended");
      return {};
    }
    session.conn = conn;
    // The session's recognizer, opened with its first connection; a connection's close leaves it.
    session.recognizer ??= recognize(session.key, conn.params, (event) => onRecognized(session, event), () => fail(session));
    conn.recognizer = { audio: session.recognizer.audio, flush: session.recognizer.flush, close() {} };
    send(session, conn, "start_session");
    const big = intParam(conn.params, "mock_big_frame", 0);
    if (big > 0) sendBigFrame(session, conn, big);

    const onAudio = (buffer) => {
      if (session.ended) return; // Gladia accepts no audio after stop_recording
      if (!session.recordingStarted) {
        session.recordingStarted = true;
        send(session, conn, "start_recording");
      }
      const start = session.totalBytes;
      session.totalBytes += buffer.length;
      if (!conn.audio(buffer)) return;
      if (session.acks) {
        const range = { byte_range: [start, session.totalBytes], time_range: [seconds(start), seconds(session.totalBytes)] };
        send(session, conn, "audio_chunk", { acknowledged: true, error: null, data: range });
      }
    };
    return {
      binary(data) {
        conn.count("binaryFrames");
        onAudio(data);
      },
      json(message) {
        if (message?.type === "audio_chunk" && typeof message.data?.chunk === "string") {
          conn.count("jsonChunks");
          return onAudio(Buffer.from(message.data.chunk, "base64"));
        }
        if (message?.type !== "stop_recording") return conn.count("invalidMessages"); // L2: counted, skipped
        conn.count("stopRecordings");
        conn.count("finishes");
        const duration = seconds(session.totalBytes);
        send(session, conn, "stop_recording", { acknowledged: true, error: null, data: { recording_duration: duration, recording_left_to_process: 0 } });
        if (session.ended) return undefined;
        session.stopping = true;
        session.ended = true;
        conn.stats().ended = true;
        return session.recognizer.flush(); // "flushed" ends the session
      },
      /** end_session while the client still sends audio: the session is over for good. */
      sessionOver() {
        session.ended = true;
        conn.stats().ended = true;
        send(session, conn, "end_session");
        // A moment later, as a server finishing its post-processing would.
        conn.later(50, () => conn.close(1000, "session ended"));
      },
    };
  },
};

function createSession(state, key, group, params, config, stats) {
  const id = randomUUID();
  const session = {
    id,
    key: key ?? id,
    params,
    partials: config.messages_config?.receive_partial_transcripts !== false,
    acks: config.messages_config?.receive_acknowledgments !== false,
    totalBytes: 0,
    recordingStarted: false,
    ended: false,
    stopping: false,
    speechEnded: true,
    conn: null,
    recognizer: null,
  };
  state.sessions.set(id, session);
  if (state.sessions.size > SESSION_LIMIT) {
    const [oldestId, oldest] = state.sessions.entries().next().value;
    oldest.recognizer?.close();
    state.sessions.delete(oldestId);
  }
  state.groups.set(session.key, group);
  stats(session.key).mode = group;
  return session;
}

function send(session, conn, type, fields = {}) {
  conn?.send({ session_id: session.id, created_at: new Date().toISOString(), type, ...fields });
}

function transcript(event, isFinal, number) {
  return {
    data: {
      id: `${String(number).padStart(2, "0")}_00000000`,
      is_final: isFinal,
      utterance: { text: event.text, start: event.start, end: event.end, language: "en", channel: 0, confidence: isFinal ? 0.98 : 0.6, words: [] },
    },
  };
}

/** Recognizer events as Gladia messages, to the session's latest connection. */
function onRecognized(session, event) {
  const conn = session.conn;
  switch (event.type) {
    case "speech_start":
      session.speechEnded = false;
      return send(session, conn, "speech_start", { data: { time: event.time, channel: 0 } });
    case "partial":
      return session.partials ? send(session, conn, "transcript", transcript(event, false, session.finals ?? 0)) : undefined;
    case "speech_end":
    case "final":
      // speech_end before the final, whichever the recognizer reported first.
      if (!session.speechEnded) {
        session.speechEnded = true;
        send(session, conn, "speech_end", { data: { time: event.end ?? event.time, channel: 0 } });
      }
      if (event.type === "final") {
        send(session, conn, "transcript", transcript(event, true, session.finals ?? 0));
        session.finals = (session.finals ?? 0) + 1;
      }
      return undefined;
    case "flushed":
      if (!session.stopping) return undefined;
      send(session, conn, "end_recording", { data: { recording_duration: seconds(session.totalBytes) } });
      send(session, conn, "end_session");
      conn?.close(1000, "session ended");
      session.recognizer.close();
      return undefined;
    case "error":
      return fail(session);
    default:
      return undefined;
  }
}

/** The recognizer lost the session: Gladia closes such a session with an error code. */
function fail(session) {
  session.ended = true;
  session.conn?.close(1011, "recognition failed");
}

/** One text frame of `bytes` bytes shaped as a final transcript (L2: must be skipped unread). */
function sendBigFrame(session, conn, bytes) {
  const head = `{"type":"transcript","session_id":"${session.id}","data":{"is_final":true,"utterance":{"text":"`;
  const tail = `"}}}`;
  const filler = Math.max(0, bytes - head.length - tail.length);
  const frame = Buffer.alloc(head.length + filler + tail.length, "x");
  frame.write(head, 0);
  frame.write(tail, head.length + filler);
  conn.count("bigFrames");
  if (conn.isOpen()) conn.ws.send(frame, { binary: false });
}
