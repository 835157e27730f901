// Counters the dev stack keeps so tests can assert what the library did on
// the wire: requests per LLM scenario, TTS calls, STT provisions, sockets and
// frames. Served as JSON by GET /__stats and cleared by POST /__reset.

/** How many recent LLM bodies / TTS texts are kept: enough for one test. */
export const RECENT_LIMIT = 20;
/** Bounds so a long demo session cannot grow memory without limit. */
export const SESSION_LIMIT = 200;
export const FRAME_LOG_LIMIT = 10000;
export const CLOSE_LOG_LIMIT = 50;

/** Appends to `list`, dropping the oldest entries past `limit`. */
export function pushBounded(list, item, limit) {
  list.push(item);
  if (list.length > limit) list.splice(0, list.length - limit);
}

function requestCounter() {
  return { requests: 0, completed: 0, aborted: 0 };
}

function sttModeCounter() {
  return {
    provisions: 0, // POST /v2/live received in this mode
    provisionsRefused: 0, // of which answered with an injected error
    provisionsWithKey: 0, // of which carried an x-gladia-key header (its value is never kept)
    sessions: 0, // sessions created (provisioned or ad hoc)
    connections: 0, // WebSocket upgrades accepted
    open: 0, // sockets open right now
    binaryFrames: 0,
    swallowedFrames: 0, // binary frames a half-open socket took in silence (silentAfterFrames)
    bytes: 0, // audio bytes, binary frames and JSON audio_chunk together
    jsonChunks: 0, // JSON audio_chunk messages
    stopRecordings: 0,
    invalidMessages: 0, // unparsable or unknown client messages
    upgradesRefused: 0, // WebSocket upgrades answered with HTTP 404 (upgrade404: a dead token)
    endSessions: 0, // end_session sent while the session was in use (end_session mode)
    bigFrames: 0, // oversize text frames sent (big_frame mode)
    provisionsAborted: 0, // provisioning requests the client gave up on before an answer
  };
}

function sttSessionCounter(mode) {
  return {
    mode,
    connections: 0,
    open: 0,
    binaryFrames: 0,
    swallowedFrames: 0,
    bytes: 0,
    jsonChunks: 0,
    stopRecordings: 0,
    upgradesRefused: 0,
    endSessions: 0,
    bigFrames: 0,
    frameNumbers: [], // first 4 bytes (LE uint32) of each binary frame, when recorded
    frameLengths: [], // byte length of the same frames
    closeCodes: [], // close code seen by the server for each connection, in order
    ended: false, // stop_recording processed: the session is over
  };
}

/**
 * The live statistics object. `reset()` replaces the sections in place so a
 * reference held by a test (`stack.stats`) stays valid.
 */
export class DevStats {
  constructor() {
    this.reset();
  }

  reset() {
    this.since = new Date().toISOString();
    this.llm = { scenarios: {}, recent: [] };
    this.tts = { ...requestCounter(), recent: [] };
    this.stt = { modes: {}, sessions: {} };
  }

  llmScenario(name) {
    return (this.llm.scenarios[name] ??= requestCounter());
  }

  /** Keeps a recent LLM request for assertions (never logged anywhere). */
  recordLlmRequest(entry) {
    pushBounded(this.llm.recent, entry, RECENT_LIMIT);
  }

  recordTtsRequest(entry) {
    pushBounded(this.tts.recent, entry, RECENT_LIMIT);
  }

  sttMode(name) {
    return (this.stt.modes[name] ??= sttModeCounter());
  }

  sttSession(id, mode) {
    const sessions = this.stt.sessions;
    if (!sessions[id]) {
      sessions[id] = sttSessionCounter(mode);
      const ids = Object.keys(sessions);
      if (ids.length > SESSION_LIMIT) delete sessions[ids[0]];
    }
    return sessions[id];
  }

  toJSON() {
    return { since: this.since, llm: this.llm, tts: this.tts, stt: this.stt };
  }
}
