// Counters the dev stack keeps so tests can assert what the library did on
// the wire: requests per LLM scenario and TTS calls here; each protocol mock
// keeps its own (ws_mock.mjs). Served as JSON by GET /__stats and cleared by
// POST /__reset.

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

  toJSON() {
    return { since: this.since, llm: this.llm, tts: this.tts };
  }
}
