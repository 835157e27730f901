// Live speech-to-text with real recognition, behind the Gladia live v2 protocol: the same messages
// as the scripted mock (stt.mjs), so a LiveTranscriber cannot tell them apart, but the transcripts
// are what was said. Recognition runs in one Python process (stt_engine.py: pocketsphinx) that
// this module starts on the first session and stops with the dev stack.
//
//   POST /speech/v2/live[?mode=<mode>&times=N]   -> 201 { id, url }
//   WS   /speech/v2/live/ws?token=<id>           (the url returned above)
//
// Modes inject the failures the demo page switches on; `times=N` limits each to its first N
// occurrences (default: always). close4403: the session is dead (accepted, then closed 4403).
// drop1006: each connection is cut (no close frame) `dropAfterMs` after it opens (default 0).
// provision429: provisioning is refused with 429. dead_token: provisioning returns a URL whose
// token the server does not know (HTTP 404 on the upgrade).

import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { existsSync } from "node:fs";
import path from "node:path";
import readline from "node:readline";
import { fileURLToPath } from "node:url";
import { WebSocketServer } from "ws";
import { HttpError, intParam, readJson, sendJson } from "./http.mjs";
import { SESSION_LIMIT } from "./stats.mjs";
import { configProblems, PCM_BYTES_PER_SECOND, SESSION_GONE_CODE } from "./stt.mjs";

export const SPEECH_MODES = Object.freeze(["normal", "close4403", "drop1006", "provision429", "dead_token"]);

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ENGINE = path.join(HERE, "stt_engine.py");
/** The Python of the repo's virtual environment, made by scripts/bootstrap.sh. */
export const VENV_PYTHON = path.resolve(HERE, "../../.venv/bin/python");
const PROVISION_PATH = /^\/speech\/v2\/live$/;
const SOCKET_PATH = /^\/speech\/v2\/live\/ws$/;
const ENGINE_READY_MS = 20_000;
const noop = () => {};

export function matchSpeechProvisionPath(pathname) {
  return PROVISION_PATH.test(pathname);
}

export function matchSpeechSocketPath(pathname) {
  return SOCKET_PATH.test(pathname);
}

/** Which Python runs the engine: $TURNGUARD_PYTHON, else the repo's .venv, else null. */
export function enginePython(env = process.env) {
  if (env.TURNGUARD_PYTHON) return env.TURNGUARD_PYTHON;
  return existsSync(VENV_PYTHON) ? VENV_PYTHON : null;
}

function gladiaError(statusCode, message) {
  return { timestamp: new Date().toISOString(), statusCode, message, validation_errors: [] };
}

function seconds(bytes) {
  return Math.round((bytes / PCM_BYTES_PER_SECOND) * 1000) / 1000;
}

/**
 * The recognition process: started on first use, restarted on the next session after it died.
 * `open(onEvent)` returns a session handle `{ audio(buffer), flush(), close() }`.
 */
function createEngine(python) {
  let child = null;
  let ready = null;
  let nextNumber = 1;
  const listeners = new Map();

  function start() {
    child = spawn(python, [ENGINE], { stdio: ["pipe", "pipe", "pipe"] });
    const proc = child;
    ready = new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error("the speech engine did not start in time")), ENGINE_READY_MS);
      readline.createInterface({ input: proc.stdout }).on("line", (line) => {
        let message;
        try {
          message = JSON.parse(line);
        } catch {
          return;
        }
        if (message.type === "ready") {
          clearTimeout(timer);
          resolve();
        } else {
          listeners.get(message.id)?.(message);
        }
      });
      proc.on("exit", () => {
        clearTimeout(timer);
        reject(new Error("the speech engine exited"));
        if (child === proc) child = null;
        for (const listener of listeners.values()) listener({ type: "error" });
        listeners.clear();
      });
    });
    ready.catch(noop);
    // stderr carries the engine's own errors (never audio or text): pass them on.
    proc.stderr.on("data", (data) => process.stderr.write(data));
    proc.stdin.on("error", noop);
  }

  const write = (message) => child?.stdin.write(`${JSON.stringify(message)}\n`);

  async function open(onEvent) {
    if (!child) start();
    await ready;
    const id = nextNumber++;
    listeners.set(id, onEvent);
    write({ op: "open", id });
    return {
      audio: (buffer) => write({ op: "audio", id, pcm: buffer.toString("base64") }),
      flush: () => write({ op: "flush", id }),
      close: () => {
        listeners.delete(id);
        write({ op: "close", id });
      },
    };
  }

  async function close() {
    const proc = child;
    if (!proc) return;
    child = null;
    const exited = new Promise((resolve) => proc.once("exit", resolve));
    proc.stdin.end();
    proc.kill("SIGTERM");
    await exited;
  }

  /** Starts the process now (npm start does, so the first session does not wait for the model). */
  function warm() {
    if (!child) start();
    return ready;
  }

  return { open, close, warm, running: () => child !== null };
}

function newCounters() {
  return { provisions: 0, provisionsRefused: 0, sessions: 0, connections: 0, open: 0, bytes: 0, partials: 0, finals: 0, modes: {} };
}

/**
 * Creates the speech STT. `ctx` is the dev stack: `{ signal, authority() }`. `python` overrides
 * which interpreter runs the engine (null: recognition unavailable, provisioning answers 503).
 */
export function createSpeechStt(ctx, { python = enginePython() } = {}) {
  const engine = python ? createEngine(python) : null;
  const sessions = new Map();
  const wss = new WebSocketServer({ noServer: true, perMessageDeflate: false, maxPayload: 1 << 20 });
  let counters = newCounters();
  const modeCount = (mode, field) => {
    const counts = (counters.modes[mode] ??= { provisions: 0, sessions: 0, connections: 0 });
    counts[field] += 1;
    return counts[field];
  };

  async function handleProvision(req, res, url) {
    const mode = url.searchParams.get("mode") ?? "normal";
    if (!SPEECH_MODES.includes(mode)) return sendJson(req, res, 400, gladiaError(400, `unknown mode "${mode}"; one of ${SPEECH_MODES.join(", ")}`));
    if (req.method !== "POST") return sendJson(req, res, 405, gladiaError(405, "use POST"));
    counters.provisions += 1;
    const times = intParam(url.searchParams, "times", Infinity);
    const nth = modeCount(mode, "provisions");
    let config;
    try {
      config = await readJson(req);
    } catch (error) {
      if (error instanceof HttpError) sendJson(req, res, error.status, gladiaError(error.status, error.message));
      return;
    }
    if (mode === "provision429" && nth <= times) {
      counters.provisionsRefused += 1;
      return sendJson(req, res, 429, gladiaError(429, "provisioning refused (provision429)"), { "retry-after": "1" });
    }
    const problems = configProblems(config);
    if (problems.length > 0) return sendJson(req, res, 400, { ...gladiaError(400, "invalid live session config"), validation_errors: problems });
    if (!engine) {
      return sendJson(req, res, 503, gladiaError(503, "speech recognition is not installed here: run `npm run bootstrap` (it makes .venv with pocketsphinx)"));
    }
    if (mode === "dead_token" && nth <= times) {
      return sendJson(req, res, 201, { id: randomUUID(), url: `ws://${ctx.authority()}/speech/v2/live/ws?token=${randomUUID()}` });
    }
    let session;
    try {
      session = await createSession(mode, url.searchParams, config, nth <= times);
    } catch (error) {
      return sendJson(req, res, 503, gladiaError(503, `speech recognition unavailable: ${error.message}`));
    }
    sendJson(req, res, 201, { id: session.id, url: `ws://${ctx.authority()}/speech/v2/live/ws?token=${session.id}` });
  }

  async function createSession(mode, params, config, faulty) {
    const session = {
      id: randomUUID(),
      mode,
      faulty,
      dropAfterMs: intParam(params, "dropAfterMs", 0, 600_000),
      times: intParam(params, "times", Infinity),
      connections: 0,
      partials: config.messages_config?.receive_partial_transcripts !== false,
      acks: config.messages_config?.receive_acknowledgments !== false,
      conn: null,
      totalBytes: 0,
      recordingStarted: false,
      ended: false,
      recognizer: null,
    };
    session.recognizer = await engine.open((event) => onEngineEvent(session, event));
    counters.sessions += 1;
    modeCount(mode, "sessions");
    sessions.set(session.id, session);
    if (sessions.size > SESSION_LIMIT) {
      const [oldestId, oldest] = sessions.entries().next().value;
      oldest.recognizer.close();
      sessions.delete(oldestId);
    }
    return session;
  }

  async function handleUpgrade(req, socket, head, url) {
    const session = sessions.get(url.searchParams.get("token") ?? "");
    if (!session) {
      socket.end("HTTP/1.1 404 Not Found\r\nConnection: close\r\nContent-Length: 0\r\n\r\n");
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => accept(ws, session));
  }

  function accept(ws, session) {
    counters.connections += 1;
    counters.open += 1;
    session.connections += 1;
    modeCount(session.mode, "connections");
    ws.on("error", noop);
    ws.on("close", () => {
      counters.open = Math.max(0, counters.open - 1);
      if (session.conn === ws) session.conn = null;
    });
    if ((session.mode === "close4403" && session.faulty) || session.ended) {
      ws.close(SESSION_GONE_CODE, session.ended ? "session ended" : "session expired");
      return;
    }
    session.conn?.close(1000, "replaced by a new connection");
    session.conn = ws;
    send(session, "start_session");
    if (session.mode === "drop1006" && session.connections <= session.times) {
      const timer = setTimeout(() => ws.terminate(), session.dropAfterMs);
      ws.on("close", () => clearTimeout(timer));
    }
    ws.on("message", (data, isBinary) => {
      if (isBinary) return onAudio(session, data);
      let message = null;
      try {
        message = JSON.parse(data.toString("utf8"));
      } catch {}
      if (message?.type === "audio_chunk" && typeof message.data?.chunk === "string") onAudio(session, Buffer.from(message.data.chunk, "base64"));
      else if (message?.type === "stop_recording") onStopRecording(session);
    });
  }

  function onAudio(session, buffer) {
    if (session.ended || buffer.length === 0) return;
    if (!session.recordingStarted) {
      session.recordingStarted = true;
      send(session, "start_recording");
    }
    const start = session.totalBytes;
    session.totalBytes += buffer.length;
    counters.bytes += buffer.length;
    session.recognizer.audio(buffer);
    if (session.acks) {
      send(session, "audio_chunk", {
        acknowledged: true,
        error: null,
        data: { byte_range: [start, session.totalBytes], time_range: [seconds(start), seconds(session.totalBytes)] },
      });
    }
  }

  function onStopRecording(session) {
    const duration = seconds(session.totalBytes);
    send(session, "stop_recording", { acknowledged: true, error: null, data: { recording_duration: duration, recording_left_to_process: 0 } });
    if (session.ended) return;
    session.ended = true;
    session.recognizer.flush(); // the engine answers "flushed" after the last final
  }

  function onEngineEvent(session, event) {
    switch (event.type) {
      case "speech_start":
      case "speech_end":
        send(session, event.type, { data: { time: event.time, channel: 0 } });
        break;
      case "partial":
        counters.partials += 1;
        if (session.partials) send(session, "transcript", transcript(event, false));
        break;
      case "final":
        counters.finals += 1;
        send(session, "transcript", transcript(event, true));
        break;
      case "flushed":
        send(session, "end_recording", { data: { recording_duration: seconds(session.totalBytes) } });
        send(session, "end_session");
        session.conn?.close(1000, "session ended");
        session.recognizer.close();
        break;
      case "error":
        // The engine lost this session: Gladia closes such a session with an error code.
        session.ended = true;
        session.conn?.close(1011, "recognition failed");
        break;
      default:
    }
  }

  function transcript(event, isFinal) {
    return {
      data: {
        id: randomUUID(),
        is_final: isFinal,
        utterance: { text: event.text, start: event.start, end: event.end, language: "en", channel: 0, confidence: isFinal ? 0.9 : 0.5, words: [] },
      },
    };
  }

  function send(session, type, fields = {}) {
    const ws = session.conn;
    if (!ws || ws.readyState !== ws.OPEN) return;
    ws.send(JSON.stringify({ session_id: session.id, created_at: new Date().toISOString(), type, ...fields }));
  }

  async function close() {
    for (const ws of wss.clients) ws.terminate();
    await new Promise((resolve) => wss.close(() => resolve()));
    await engine?.close();
  }

  return {
    handleProvision,
    handleUpgrade,
    close,
    warm: () => (engine ? engine.warm() : Promise.reject(new Error("no .venv with pocketsphinx"))),
    /** A recognition session of its own, for the other protocols' mocks (recognizers.mjs). */
    openRecognizer: (onEvent) => (engine ? engine.open(onEvent) : Promise.reject(new Error("no .venv with pocketsphinx"))),
    reset: () => {
      const open = counters.open;
      counters = newCounters();
      counters.open = open;
    },
    stats: () => ({ engine: engine ? "pocketsphinx" : "unavailable", engineRunning: engine?.running() ?? false, ...counters }),
  };
}
