// Mock OpenAI Realtime transcription sessions (PROVIDERS.md) on the socket skeleton (ws_mock.mjs).
// The official `openai` SDK (`OpenAIRealtimeWS`) connects to it through TLS (www/sdk-openai.test.mjs:
// the SDK only speaks wss:).
//
//   POST /v1/realtime/client_secrets   Authorization: Bearer <any key>, body { expires_after?: { seconds },
//                                      session? } -> { value: "ek_…", expires_at, session }
//   WS   /v1/realtime?intent=transcription   auth: subprotocols ["realtime", "openai-insecure-api-key.<ek>"]
//                                      (the browser) or `Authorization: Bearer <key or ek>` (a server).
//                                      An unknown or expired ek: HTTP 401 at the handshake.
//
// As OpenAI does: `session.created`; `input_audio_buffer.append` with base64 24 kHz PCM16 (the
// recognizer gets it at 16 kHz: pocketsphinx through a low-pass decimator, the scripted recognizer
// by the nearest sample, which keeps the numbers written into the samples);
// server VAD: `input_audio_buffer.speech_started`, `…speech_stopped` { audio_end_ms }, `…committed`,
// then the item's `conversation.item.input_audio_transcription.delta`s and `…completed`;
// `input_audio_buffer.commit` ends the utterance under way (under 100 ms of new audio: the
// `input_audio_buffer_commit_empty` error); `input_audio_buffer.clear`; `session.update`. Unknown
// events get an `error` event, never a close. The session's end: the `session_expired` error, then
// close 1001.
//
// Its own switches: `mock_out_of_order=1` (each odd item's `completed` is held until the next item's
// went out), `mock_duplicate_completed=1` (every `completed` twice).

import { randomUUID } from "node:crypto";
import { HttpError, readJson, sendJson } from "../http.mjs";

/** Bytes of 24 kHz PCM16 per second. */
export const OPENAI_BYTES_PER_SECOND = 48000;
const MIN_COMMIT_BYTES = OPENAI_BYTES_PER_SECOND / 10; // 100 ms
const EK_PREFIX = "openai-insecure-api-key.";

/**
 * 24 kHz PCM16 to 16 kHz for the scripted recognizer: samples 0 and 2 of every 3 (nearest-sample
 * decimation), which keeps the frame numbers the browser tests write into their samples intact.
 */
function to16kNearest(pcm24) {
  const count = Math.floor(pcm24.length / 2);
  const out = Buffer.alloc(Math.floor((count * 2) / 3) * 2);
  for (let i = 0; i * 2 < out.length; i += 1) {
    const from = Math.round(i * 1.5);
    if (from < count) out.writeInt16LE(pcm24.readInt16LE(from * 2), i * 2);
  }
  return out;
}

/** Taps on each side of a 16 kHz sample's position in the 24 kHz stream. */
const DECIMATOR_HALF_WIDTH = 24;
/** The low-pass edge, in cycles per 24 kHz sample: 7 kHz, under the 16 kHz stream's 8 kHz Nyquist. */
const DECIMATOR_CUTOFF = 7000 / 24000;

/** Windowed-sinc taps (Blackman) for a 16 kHz sample `frac` of a 24 kHz sample past a whole one, unit gain. */
function decimatorTaps(frac) {
  const taps = [];
  for (let k = -DECIMATOR_HALF_WIDTH + 1; k <= DECIMATOR_HALF_WIDTH; k += 1) {
    const offset = k - frac;
    const x = 2 * DECIMATOR_CUTOFF * offset;
    const sinc = x === 0 ? 1 : Math.sin(Math.PI * x) / (Math.PI * x);
    const w = (offset + DECIMATOR_HALF_WIDTH) / (2 * DECIMATOR_HALF_WIDTH);
    taps.push(sinc * (0.42 - 0.5 * Math.cos(2 * Math.PI * w) + 0.08 * Math.cos(4 * Math.PI * w)));
  }
  const sum = taps.reduce((a, b) => a + b, 0);
  return taps.map((tap) => tap / sum);
}

/**
 * 24 kHz PCM16 to 16 kHz for the speech recognizer, as a server's front end would: a low-pass
 * filter against aliasing, carried across appends (one stream per connection). 16 kHz sample m
 * sits at 24 kHz position 1.5 m, so two phases of taps serve every output; each output waits for
 * DECIMATOR_HALF_WIDTH samples after its position (under a millisecond).
 */
function createDecimator() {
  const phases = [decimatorTaps(0), decimatorTaps(0.5)];
  let history = []; // 24 kHz samples from absolute index `base` on
  let base = 0;
  let next = 0; // the next 16 kHz sample
  return (pcm24) => {
    for (let i = 0; i + 1 < pcm24.length; i += 2) history.push(pcm24.readInt16LE(i));
    const out = [];
    for (;;) {
      const whole = Math.floor(next * 1.5);
      if (whole + DECIMATOR_HALF_WIDTH >= base + history.length) break;
      const taps = phases[next % 2];
      let sum = 0;
      for (let t = 0; t < taps.length; t += 1) {
        const at = whole - DECIMATOR_HALF_WIDTH + 1 + t - base;
        if (at >= 0) sum += taps[t] * history[at];
      }
      out.push(Math.max(-32768, Math.min(32767, Math.round(sum))));
      next += 1;
    }
    const keep = Math.floor(next * 1.5) - DECIMATOR_HALF_WIDTH + 1 - base;
    if (keep > 0) {
      history = history.slice(keep);
      base += keep;
    }
    const buffer = Buffer.alloc(out.length * 2);
    out.forEach((sample, i) => buffer.writeInt16LE(sample, i * 2));
    return buffer;
  };
}


/** ["subprotocol" | "header", credential] from the handshake. */
function credentialsOf(req) {
  const offered = (req.headers["sec-websocket-protocol"] ?? "").split(",").map((item) => item.trim());
  const ek = offered.find((item) => item.startsWith(EK_PREFIX));
  if (ek) return ["subprotocol", ek.slice(EK_PREFIX.length)];
  const [scheme, value] = (req.headers.authorization ?? "").split(/\s+/, 2);
  return scheme?.toLowerCase() === "bearer" && value ? ["header", value] : [null, null];
}

export default {
  counters: () => ({ subprotocolAuth: 0, headerAuth: 0, badAudio: 0, commits: 0, emptyCommits: 0, clears: 0, sessionUpdates: 0, items: 0, completed: 0 }),
  bytesPerSecond: OPENAI_BYTES_PER_SECOND,
  maxPayload: 16 << 20,
  // The browser offers ["realtime", "openai-insecure-api-key.<ek>"]: the server picks "realtime".
  handleProtocols: (protocols) => (protocols.has("realtime") ? "realtime" : false),
  httpError: (status, message) => ({ error: { type: "invalid_request_error", code: null, message } }),

  async http(req, res, _params, { credentials, expired }) {
    if (req.method !== "POST") return sendJson(req, res, 405, { error: { type: "invalid_request_error", message: "use POST" } });
    if (!/^bearer\s+\S+/i.test(req.headers.authorization ?? "")) {
      return sendJson(req, res, 401, { error: { type: "invalid_request_error", code: "invalid_api_key", message: "Incorrect API key provided." } });
    }
    let body;
    try {
      body = await readJson(req);
    } catch (error) {
      if (error instanceof HttpError) sendJson(req, res, error.status, { error: { type: "invalid_request_error", message: error.message } });
      return undefined;
    }
    const seconds = Number.isInteger(body.expires_after?.seconds) ? Math.min(7200, Math.max(10, body.expires_after.seconds)) : 600;
    const value = credentials.mint(`ek_${randomUUID().replaceAll("-", "")}`, { ttlMs: seconds * 1000, expired });
    const session = { type: "transcription", id: `sess_${randomUUID().slice(0, 8)}`, object: "realtime.transcription_session", ...(body.session ?? {}) };
    return sendJson(req, res, 200, { value, expires_at: Math.floor((expired ? Date.now() : Date.now() + seconds * 1000) / 1000), session });
  },

  authorize(req, params, { credentials }) {
    const [how, credential] = credentialsOf(req);
    // An ek must be one minted here and not expired; a server's own API key (not an ek) passes.
    const ok = how && (credential.startsWith("ek_") ? credentials.check(credential) : how === "header");
    if (!ok || params.get("intent") !== "transcription") return { refuse: 401 };
    return { count: how === "subprotocol" ? "subprotocolAuth" : "headerAuth" };
  },

  open(conn) {
    const { params } = conn;
    const outOfOrder = params.get("mock_out_of_order") === "1";
    const duplicate = params.get("mock_duplicate_completed") === "1";
    const state = { sinceCommit: 0, item: null, previous: null, held: null, itemCount: 0, commitPending: false, to16k: params.get("recognizer") === "speech" ? createDecimator() : to16kNearest };
    const error = (code, message, type = "invalid_request_error") => conn.send({ event_id: eventId(), type: "error", error: { type, code, message, param: null, event_id: null } });
    const send = (message) => conn.send({ event_id: eventId(), ...message });

    send({
      type: "session.created",
      session: {
        type: "transcription",
        id: `sess_${randomUUID().slice(0, 8)}`,
        object: "realtime.transcription_session",
        audio: { input: { format: { type: "audio/pcm", rate: 24000 }, transcription: { model: "gpt-4o-transcribe" }, turn_detection: { type: "server_vad" }, noise_reduction: null } },
      },
    });

    const itemId = () => {
      if (!state.item) {
        state.itemCount += 1;
        state.item = `item_${conn.number}_${state.itemCount}`;
      }
      return state.item;
    };
    const completed = (id, transcript) => {
      const message = { type: "conversation.item.input_audio_transcription.completed", item_id: id, content_index: 0, transcript, usage: { type: "duration", seconds: 1 } };
      conn.count("completed");
      send(message);
      if (duplicate) send(message);
    };
    /** One item committed: its deltas now, its completion now or (out of order) after the next one's. */
    const finishItem = (id, text, endMs, vad) => {
      conn.count("items");
      if (vad) send({ type: "input_audio_buffer.speech_stopped", audio_end_ms: endMs, item_id: id });
      send({ type: "input_audio_buffer.committed", previous_item_id: state.previous, item_id: id });
      state.previous = id;
      const words = text.split(/\s+/).filter(Boolean);
      words.forEach((word, i) => send({ type: "conversation.item.input_audio_transcription.delta", item_id: id, content_index: 0, delta: i === 0 ? word : ` ${word}` }));
      if (outOfOrder && !state.held && !state.commitPending) {
        state.held = { id, text };
        return;
      }
      completed(id, text);
      if (state.held) {
        const held = state.held;
        state.held = null;
        completed(held.id, held.text);
      }
    };

    function onAppend(audio) {
      const pcm = typeof audio === "string" && /^[A-Za-z0-9+/]*={0,2}$/.test(audio) ? Buffer.from(audio, "base64") : null;
      if (!pcm || pcm.length % 2 !== 0) {
        conn.count("badAudio");
        return error("invalid_value", "Invalid 'audio'. Expected base64-encoded PCM16 audio.");
      }
      state.sinceCommit += pcm.length;
      return conn.audio(pcm, state.to16k(pcm));
    }

    return {
      recognized(event) {
        switch (event.type) {
          case "speech_start":
            return send({ type: "input_audio_buffer.speech_started", audio_start_ms: Math.round(event.time * 1000), item_id: itemId() });
          case "final": {
            const id = itemId();
            state.item = null;
            state.sinceCommit = 0;
            // A commit the client asked for comes without speech_stopped; server VAD's with it.
            finishItem(id, event.text, Math.round(event.end * 1000), !state.commitPending);
            state.commitPending = false;
            return undefined;
          }
          case "flushed":
            if (state.commitPending) {
              // The commit found audio but no words: an item with an empty transcript.
              state.commitPending = false;
              const id = itemId();
              state.item = null;
              finishItem(id, "", 0, false);
            }
            return undefined;
          case "error":
            error("server_error", "The server had an error.", "server_error");
            return conn.close(1011, "recognition failed");
          default:
            return undefined;
        }
      },
      binary: () => {
        conn.count("invalidMessages");
        error("invalid_value", "binary frames are not events");
      },
      json(message) {
        switch (message?.type) {
          case "input_audio_buffer.append":
            return onAppend(message.audio);
          case "input_audio_buffer.commit":
            conn.count("commits");
            conn.count("finishes");
            if (state.sinceCommit < MIN_COMMIT_BYTES) {
              conn.count("emptyCommits");
              return error("input_audio_buffer_commit_empty", "Error committing input audio buffer: buffer too small. Expected at least 100ms of audio.");
            }
            state.commitPending = true;
            state.sinceCommit = 0;
            return conn.recognizer.flush();
          case "input_audio_buffer.clear":
            conn.count("clears");
            state.sinceCommit = 0;
            return send({ type: "input_audio_buffer.cleared" });
          case "session.update":
            conn.count("sessionUpdates");
            return send({ type: "session.updated", session: { type: "transcription", ...(message.session ?? {}) } });
          default:
            conn.count("invalidMessages");
            return error("unknown_event", "Invalid value: the event type is not supported.");
        }
      },
      sessionOver() {
        error("session_expired", "Your session hit the maximum duration of 60 minutes.");
        conn.close(1001, "session expired");
      },
      recognizerFailed: () => conn.close(1011, "speech recognition unavailable"),
    };
  },
};

const eventId = () => `event_${randomUUID().slice(0, 12)}`;
