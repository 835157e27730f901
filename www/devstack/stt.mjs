// Mock Gladia-compatible live speech-to-text (v2): provisioning over HTTP,
// then a WebSocket that takes PCM16 16 kHz mono audio and sends transcripts.
//
//   POST /v2/live, POST /stt/<mode>/v2/live       -> 201 { id, url }
//   WS   /v2/live/ws?token=<id>&mode=<mode>       (the url returned above)
//
// Without a token the socket opens an ad hoc session in `?mode=` (or the
// /stt/<mode> path prefix), handy for quick manual checks. Every 32000 bytes
// (1 s) of audio is one "utterance N": speech_start when it begins, a partial
// at half, speech_end and a final when it completes.
//
// Failure modes for R5/L7 and bounded input:
//   upgrade404        provisions fine, then refuses every upgrade of the session with
//                     HTTP 404, as a provider does for a dead token (browsers report 1006).
//   end_session       sends end_session after `endAfterFrames` (default 5) audio frames
//                     while the session is in use, then closes with 1000; the session is over.
//                     `times=N`: only the mode's first N sessions end so.
//   provision_hang    never answers the POST (counts provisionsAborted when the client gives up).
//   provision_reset   destroys the POST's connection: a network error, no HTTP status.
//   big_frame         sends one text frame of `bigFrameBytes` (default 64 MiB) after start_session,
//                     shaped as a final transcript, then behaves like `normal`.

import { randomUUID } from "node:crypto";
import { WebSocketServer } from "ws";
import { HttpError, intParam, readJson, sendJson, sleep } from "./http.mjs";
import { CLOSE_LOG_LIMIT, FRAME_LOG_LIMIT, pushBounded, SESSION_LIMIT } from "./stats.mjs";

export const STT_MODES = Object.freeze([
  "normal",
  "close4403",
  "drop1006",
  "provision408",
  "provision429",
  "provision500",
  "provision503",
  "provision401",
  "slow_handshake",
  "echo_frames",
  "upgrade404",
  "end_session",
  "provision_hang",
  "provision_reset",
  "big_frame",
]);

/** Default size of big_frame's text frame: 64 MiB. */
export const BIG_FRAME_BYTES = 64 << 20;

/** PCM16 mono at 16 kHz: 2 bytes x 16000 samples per second. */
export const PCM_BYTES_PER_SECOND = 32000;
/** Close code for a session that no longer exists (R2: re-provision). */
export const SESSION_GONE_CODE = 4403;

const PROVISION_FAULTS = { provision401: 401, provision408: 408, provision429: 429, provision500: 500, provision503: 503 };
const PROVISION_PATH = /^(?:\/stt\/([^/]+))?\/v2\/live$/;
// Gladia serves the socket on /v2/live itself; /v2/live/ws is this mock's own URL.
const SOCKET_PATH = /^(?:\/stt\/([^/]+))?\/v2\/live(?:\/ws)?$/;
const EXPECTED_CONFIG = { encoding: "wav/pcm", bit_depth: 16, sample_rate: 16000, channels: 1 };
const noop = () => {};

export function matchSttProvisionPath(pathname) {
  const match = PROVISION_PATH.exec(pathname);
  return match ? { mode: match[1] } : null;
}

export function matchSttSocketPath(pathname) {
  const match = SOCKET_PATH.exec(pathname);
  return match ? { mode: match[1] } : null;
}

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

/**
 * Creates the STT mock. `ctx` is the dev stack:
 * `{ stats, signal, authority() }` where authority() is "127.0.0.1:<port>".
 */
export function createSttMock(ctx) {
  const sessions = new Map();
  const live = new Set(); // open connections, to recount after a stats reset
  const wss = new WebSocketServer({ noServer: true, perMessageDeflate: false, maxPayload: 1 << 20 });

  const modeStats = (session) => ctx.stats.sttMode(session.mode);
  const sessionStats = (session) => ctx.stats.sttSession(session.id, session.mode);
  // Counters are looked up at each event, never cached: a /__reset swaps them.
  const bump = (session, field, by = 1) => {
    modeStats(session)[field] += by;
    sessionStats(session)[field] += by;
  };

  function createSession(mode, params, config) {
    const stats = ctx.stats.sttMode(mode);
    stats.sessions += 1;
    const session = {
      id: randomUUID(),
      mode,
      params: withoutRoutingParams(params),
      partials: config.messages_config?.receive_partial_transcripts !== false,
      acks: config.messages_config?.receive_acknowledgments !== false,
      // `times=N` on close4403: only the first N sessions of the mode are dead.
      dead: mode === "close4403" && stats.sessions <= intParam(params, "times", Infinity),
      // `times=N` on end_session: only the first N sessions of the mode end while in use.
      endsInUse: mode === "end_session" && stats.sessions <= intParam(params, "times", Infinity),
      ended: false,
      recordingStarted: false,
      recognizer: newRecognizer(params),
    };
    sessions.set(session.id, session);
    if (sessions.size > SESSION_LIMIT) sessions.delete(sessions.keys().next().value);
    sessionStats(session);
    return session;
  }

  async function handleProvision(req, res, url, pathMode) {
    const mode = url.searchParams.get("mode") ?? pathMode ?? "normal";
    if (!STT_MODES.includes(mode)) {
      sendJson(req, res, 400, gladiaError(400, `unknown mock mode "${mode}"; one of ${STT_MODES.join(", ")}`));
      return;
    }
    if (req.method !== "POST") {
      sendJson(req, res, 405, gladiaError(405, "use POST"));
      return;
    }
    const stats = ctx.stats.sttMode(mode);
    stats.provisions += 1;
    // L1: the browser should provision through the app, without the key.
    if (req.headers["x-gladia-key"]) stats.provisionsWithKey += 1;
    if (mode === "provision_hang") {
      // Never answered: the client's abort (or the dev stack closing) ends it.
      req.resume();
      res.on("close", () => (ctx.stats.sttMode(mode).provisionsAborted += 1));
      return;
    }
    if (mode === "provision_reset") {
      stats.provisionsRefused += 1;
      req.socket.destroy();
      return;
    }
    let config;
    try {
      config = await readJson(req);
    } catch (error) {
      if (error instanceof HttpError) sendJson(req, res, error.status, gladiaError(error.status, error.message));
      return;
    }
    // `times=N` on provisionNNN: the first N provisions fail, later ones succeed.
    const faultStatus = PROVISION_FAULTS[mode];
    if (faultStatus && stats.provisions <= intParam(url.searchParams, "times", Infinity)) {
      stats.provisionsRefused += 1;
      sendJson(req, res, faultStatus, gladiaError(faultStatus, `mock: provisioning refused (${mode})`), faultStatus === 429 ? { "retry-after": "1" } : {});
      return;
    }
    const problems = configProblems(config);
    if (problems.length > 0) {
      sendJson(req, res, 400, gladiaError(400, "invalid live session config", problems));
      return;
    }
    const session = createSession(mode, url.searchParams, config);
    const socketUrl = `ws://${ctx.authority()}/v2/live/ws?token=${session.id}&mode=${mode}`;
    sendJson(req, res, 201, { id: session.id, url: socketUrl });
  }

  async function handleUpgrade(req, socket, head, url, pathMode) {
    const token = url.searchParams.get("token");
    let session;
    if (token !== null) {
      session = sessions.get(token);
      if (!session) return rejectUpgrade(socket, 404, "Not Found");
      if (session.mode === "upgrade404") {
        bump(session, "upgradesRefused");
        return rejectUpgrade(socket, 404, "Not Found");
      }
    } else {
      const mode = url.searchParams.get("mode") ?? pathMode ?? "normal";
      if (!STT_MODES.includes(mode)) return rejectUpgrade(socket, 400, "Bad Request");
      session = createSession(mode, url.searchParams, {});
    }
    const params = mergeParams(session.params, url.searchParams);
    const handshakeMs = intParam(params, "handshakeMs", session.mode === "slow_handshake" ? 2000 : 0, 60_000);
    if (handshakeMs > 0) {
      // The client may give up while we stall; stop waiting when it does.
      const gone = new AbortController();
      socket.once("close", () => gone.abort());
      const waited = await sleep(handshakeMs, AbortSignal.any([gone.signal, ctx.signal]));
      if (!waited || socket.destroyed) {
        socket.destroy();
        return;
      }
    }
    wss.handleUpgrade(req, socket, head, (ws) => accept(ws, session, params));
  }

  function accept(ws, session, params) {
    const conn = { ws, session, frames: 0, timer: null, recordFrames: session.mode === "echo_frames" || params.get("recordFrames") === "1" };
    live.add(conn);
    bump(session, "connections");
    bump(session, "open");
    ws.on("error", noop);
    ws.on("close", (code) => {
      live.delete(conn);
      clearTimeout(conn.timer);
      // Clamped: a reset while this socket was open already recounted it.
      modeStats(session).open = Math.max(0, modeStats(session).open - 1);
      sessionStats(session).open = Math.max(0, sessionStats(session).open - 1);
      pushBounded(sessionStats(session).closeCodes, code, CLOSE_LOG_LIMIT);
    });

    if (session.dead || session.ended) {
      ws.close(SESSION_GONE_CODE, session.dead ? "session expired" : "session ended");
      return;
    }

    send(conn, "start_session");
    if (session.mode === "big_frame") sendBigFrame(conn, intParam(params, "bigFrameBytes", BIG_FRAME_BYTES, 256 << 20));
    conn.endAfterFrames =
      session.mode === "end_session" && session.endsInUse ? Math.max(1, intParam(params, "endAfterFrames", 5)) : undefined;
    conn.drop = dropPlan(session, params, sessionStats(session).connections);
    // `silentAfterFrames=N` (with `times`): a half-open socket. After N frames the server neither
    // answers nor acknowledges; frames still arrive over TCP and are swallowed, counted apart.
    conn.silentAfterFrames = params.has("silentAfterFrames") && sessionStats(session).connections <= intParam(params, "times", Infinity)
      ? Math.max(0, intParam(params, "silentAfterFrames", 0))
      : undefined;
    if (conn.drop?.afterMs !== undefined) conn.timer = setTimeout(() => ws.terminate(), conn.drop.afterMs);
    ws.on("message", (data, isBinary) => (isBinary ? onBinaryFrame(conn, data) : onTextMessage(conn, data)));
  }

  function onBinaryFrame(conn, data) {
    const { session } = conn;
    if (conn.silentAfterFrames !== undefined && conn.frames >= conn.silentAfterFrames) {
      bump(session, "swallowedFrames");
      return;
    }
    bump(session, "binaryFrames");
    if (conn.recordFrames) {
      const stats = sessionStats(session);
      pushBounded(stats.frameNumbers, data.length >= 4 ? data.readUInt32LE(0) : null, FRAME_LOG_LIMIT);
      pushBounded(stats.frameLengths, data.length, FRAME_LOG_LIMIT);
    }
    onAudio(conn, data.length);
    conn.frames += 1;
    if (conn.endAfterFrames !== undefined && conn.frames >= conn.endAfterFrames && !session.ended) endInUse(conn);
    if (conn.drop?.afterFrames !== undefined && conn.frames >= conn.drop.afterFrames) conn.ws.terminate();
  }

  function onTextMessage(conn, data) {
    if (conn.silentAfterFrames !== undefined && conn.frames >= conn.silentAfterFrames) return;
    let message;
    try {
      message = JSON.parse(data.toString("utf8"));
    } catch {
      message = null;
    }
    if (message?.type === "audio_chunk" && typeof message.data?.chunk === "string") {
      bump(conn.session, "jsonChunks");
      onAudio(conn, Buffer.from(message.data.chunk, "base64").length);
    } else if (message?.type === "stop_recording") {
      onStopRecording(conn);
    } else {
      // L2: unknown or malformed messages are counted and skipped.
      bump(conn.session, "invalidMessages");
    }
  }

  function onAudio(conn, byteCount) {
    const { session } = conn;
    if (session.ended) return; // Gladia accepts no audio after stop_recording
    bump(session, "bytes", byteCount);
    if (!session.recordingStarted) {
      session.recordingStarted = true;
      send(conn, "start_recording");
    }
    const rec = session.recognizer;
    const start = rec.totalBytes;
    rec.totalBytes += byteCount;
    if (session.acks) {
      send(conn, "audio_chunk", {
        acknowledged: true,
        error: null,
        data: { byte_range: [start, rec.totalBytes], time_range: [seconds(start), seconds(rec.totalBytes)] },
      });
    }
    recognize(conn, byteCount);
  }

  /** Advances the fake recogniser by `byteCount` bytes, emitting speech events. */
  function recognize(conn, byteCount) {
    const { session } = conn;
    const rec = session.recognizer;
    let remaining = byteCount;
    let position = rec.totalBytes - byteCount;
    while (remaining > 0 && rec.finals < rec.maxUtterances) {
      if (rec.currentBytes === 0) {
        rec.currentStart = position;
        send(conn, "speech_start", { data: { time: seconds(position), channel: 0 } });
      }
      const take = Math.min(remaining, rec.utteranceBytes - rec.currentBytes);
      rec.currentBytes += take;
      position += take;
      remaining -= take;
      if (!rec.partialSent && rec.currentBytes * 2 >= rec.utteranceBytes) {
        rec.partialSent = true;
        if (session.partials) send(conn, "transcript", transcript(session, false));
      }
      if (rec.currentBytes === rec.utteranceBytes) finishUtterance(conn);
    }
  }

  function finishUtterance(conn) {
    const { session } = conn;
    const rec = session.recognizer;
    const end = rec.currentStart + rec.currentBytes;
    send(conn, "speech_end", { data: { time: seconds(end), channel: 0 } });
    send(conn, "transcript", transcript(session, true));
    rec.finals += 1;
    rec.currentBytes = 0;
    rec.partialSent = false;
  }

  function onStopRecording(conn) {
    const { session, ws } = conn;
    bump(session, "stopRecordings");
    const duration = seconds(session.recognizer.totalBytes);
    send(conn, "stop_recording", { acknowledged: true, error: null, data: { recording_duration: duration, recording_left_to_process: 0 } });
    if (session.ended) return;
    if (session.recognizer.currentBytes > 0) finishUtterance(conn);
    send(conn, "end_recording", { data: { recording_duration: duration } });
    send(conn, "end_session");
    session.ended = true;
    sessionStats(session).ended = true;
    ws.close(1000, "session ended");
  }

  /** end_session while the client still sends audio: the session is over for good. */
  function endInUse(conn) {
    const { session, ws } = conn;
    bump(session, "endSessions");
    session.ended = true;
    sessionStats(session).ended = true;
    send(conn, "end_session");
    // A moment later, as a server finishing its post-processing would.
    setTimeout(() => ws.close(1000, "session ended"), 50).unref?.();
  }

  /** One text frame of `bytes` bytes shaped as a final transcript (L2: must be skipped unread). */
  function sendBigFrame(conn, bytes) {
    const head = `{"type":"transcript","session_id":"${conn.session.id}","data":{"is_final":true,"utterance":{"text":"`;
    const tail = `"}}}`;
    const filler = Math.max(0, bytes - head.length - tail.length);
    const frame = Buffer.alloc(head.length + filler + tail.length, "x");
    frame.write(head, 0);
    frame.write(tail, head.length + filler);
    bump(conn.session, "bigFrames");
    conn.ws.send(frame, { binary: false });
  }

  function send(conn, type, fields = {}) {
    if (conn.ws.readyState !== conn.ws.OPEN) return;
    conn.ws.send(JSON.stringify({ session_id: conn.session.id, created_at: new Date().toISOString(), type, ...fields }));
  }

  /** After /__reset, live sockets are counted as open in the fresh counters. */
  function recountOpen() {
    for (const conn of live) bump(conn.session, "open");
  }

  async function close() {
    for (const ws of wss.clients) ws.terminate();
    await new Promise((resolve) => wss.close(() => resolve()));
  }

  return { handleProvision, handleUpgrade, recountOpen, close };
}

// ---------------------------------------------------------------------------
// Helpers without state

function seconds(bytes) {
  return Math.round((bytes / PCM_BYTES_PER_SECOND) * 1000) / 1000;
}

/**
 * Session-level knobs: `utteranceBytes` (default 32000, one second) and
 * `maxUtterances` (default unlimited; after that the audio is "silence").
 */
function newRecognizer(params) {
  return {
    utteranceBytes: Math.max(2, intParam(params, "utteranceBytes", PCM_BYTES_PER_SECOND)),
    maxUtterances: intParam(params, "maxUtterances", Infinity),
    totalBytes: 0,
    finals: 0,
    currentStart: 0,
    currentBytes: 0,
    partialSent: false,
  };
}

function transcript(session, isFinal) {
  const rec = session.recognizer;
  const number = rec.finals + 1;
  const end = rec.currentStart + rec.currentBytes;
  return {
    data: {
      id: `${String(rec.finals).padStart(2, "0")}_00000000`,
      is_final: isFinal,
      utterance: {
        // A partial is a prefix of its final, as with a real recogniser.
        text: isFinal ? `utterance ${number}` : "utterance",
        start: seconds(rec.currentStart),
        end: seconds(end),
        language: "en",
        channel: 0,
        confidence: isFinal ? 0.98 : 0.6,
        words: [],
      },
    },
  };
}

/**
 * When to cut this connection abruptly (1006), or null. drop1006 cuts right
 * after the upgrade unless `dropAfterMs`/`dropAfterFrames` says otherwise;
 * any mode cuts when one of those params is present. `times=N` limits the
 * cut to the session's first N connections so a reconnect can succeed.
 */
function dropPlan(session, params, connectionNumber) {
  const byMs = params.has("dropAfterMs");
  const byFrames = params.has("dropAfterFrames");
  if (session.mode !== "drop1006" && !byMs && !byFrames) return null;
  if (connectionNumber > intParam(params, "times", Infinity)) return null;
  return {
    afterMs: byMs ? intParam(params, "dropAfterMs", 0, 600_000) : byFrames ? undefined : 0,
    afterFrames: byFrames ? Math.max(1, intParam(params, "dropAfterFrames", 1)) : undefined,
  };
}

function withoutRoutingParams(params) {
  const copy = new URLSearchParams(params);
  copy.delete("token");
  copy.delete("mode");
  return copy;
}

/** Session params (from provisioning) overridden by the socket URL's own. */
function mergeParams(sessionParams, socketParams) {
  const merged = new URLSearchParams(sessionParams);
  for (const [key, value] of withoutRoutingParams(socketParams)) merged.set(key, value);
  return merged;
}

function rejectUpgrade(socket, status, text) {
  socket.end(`HTTP/1.1 ${status} ${text}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
}
