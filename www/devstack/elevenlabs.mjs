// Mock ElevenLabs Scribe realtime (PROVIDERS.md), with the real recognizer or the scripted one
// behind it (recognizers.mjs). The official `@elevenlabs/client` (`Scribe.connect`, whose `baseUri`
// points anywhere) connects to it (www/sdk-elevenlabs.test.mjs).
//
//   POST /v1/single-use-token/realtime_scribe   xi-api-key: <any key> -> { token }. Each token opens
//                                    one connection (15 min). `?expired=1`: a token already expired.
//   WS   /v1/speech-to-text/realtime?model_id=…&token=<t>&audio_format=pcm_16000&commit_strategy=vad
//        &include_timestamps=true    A missing, used or expired token: `auth_error`, then close 1008.
//
// As ElevenLabs does: `session_started`; `input_audio_chunk` messages with base64 PCM16
// (`sample_rate` 16000; `previous_text` only on the first chunk, else `invalid_request`); with
// `commit_strategy=vad` the server commits each utterance, and `commit: true` (an empty chunk)
// commits what is buffered; `partial_transcript`, then per commit `committed_transcript` and, with
// `include_timestamps=true`, `committed_transcript_with_timestamps` (words with `start`/`end`
// seconds) — both, as the service does. Errors are messages named by their `message_type`, then a
// close.
//
// Switches in the socket URL's query (or its path, `/mock/<url-encoded switches>/v1/speech-to-text/realtime`),
// per `mock_key`: `recognizer=speech` (pocketsphinx; else the scripted recognizer with `segment_ms`,
// `words_per_utterance`), `mock_error=TYPE` with `mock_error_after_frames=N` (that error message, then
// close `mock_error_close` or 1008), `mock_drop_after_ms=N`, `mock_drop_after_frames=N` (a cut,
// 1006), `mock_times=N` (only the key's first N connections).

import { randomUUID } from "node:crypto";
import { WebSocketServer } from "ws";
import { sendJson } from "./http.mjs";
import { intParam, openRecognizer } from "./recognizers.mjs";
import { CLOSE_LOG_LIMIT, pushBounded, SESSION_LIMIT } from "./stats.mjs";

const TOKEN_PATH = /^\/v1\/single-use-token\/realtime_scribe$/;
const SOCKET_PATH = /^(?:\/mock\/([^/]*))?\/v1\/speech-to-text\/realtime$/;
const TOKEN_LIMIT = 1000;
const noop = () => {};

export const ELEVENLABS_SWITCHES = Object.freeze(["recognizer", "mock_error", "mock_error_after_frames", "mock_error_close", "mock_drop_after_ms", "mock_drop_after_frames", "mock_times"]);

export const matchElevenLabsTokenPath = (pathname) => TOKEN_PATH.test(pathname);
export const matchElevenLabsSocketPath = (pathname) => SOCKET_PATH.test(pathname);

function keyCounters() {
  return {
    connections: 0, open: 0, refused: 0, chunks: 0, bytes: 0, badChunks: 0, previousTexts: [], commits: 0,
    committed: 0, invalidMessages: 0, errors: [], closeCodes: [],
  };
}

export function createElevenLabsMock(ctx) {
  const tokens = new Map(); // token -> { expires, used }
  const wss = new WebSocketServer({ noServer: true, perMessageDeflate: false, maxPayload: 1 << 20 });
  let counters = { tokens: 0, keys: {} };
  const keyStats = (key) => {
    if (!counters.keys[key]) {
      const names = Object.keys(counters.keys);
      if (names.length >= SESSION_LIMIT) delete counters.keys[names[0]];
      counters.keys[key] = keyCounters();
    }
    return counters.keys[key];
  };

  function handleToken(req, res, url) {
    if (req.method !== "POST") return sendJson(req, res, 405, { detail: { status: "method_not_allowed", message: "use POST" } });
    if (!req.headers["xi-api-key"]) return sendJson(req, res, 401, { detail: { status: "invalid_api_key", message: "Invalid API key" } });
    const token = `sutkn_${randomUUID().replaceAll("-", "")}`;
    tokens.set(token, { expires: url.searchParams.get("expired") === "1" ? 0 : Date.now() + 15 * 60_000, used: false });
    if (tokens.size > TOKEN_LIMIT) tokens.delete(tokens.keys().next().value);
    counters.tokens += 1;
    sendJson(req, res, 200, { token });
  }

  async function handleUpgrade(req, socket, head, url) {
    const params = new URLSearchParams(url.searchParams);
    const inPath = SOCKET_PATH.exec(url.pathname)?.[1];
    if (inPath) for (const [name, value] of new URLSearchParams(decodeURIComponent(inPath))) params.set(name, value);
    wss.handleUpgrade(req, socket, head, (ws) => accept(ws, params, params.get("mock_key") ?? "default"));
  }

  function accept(ws, params, key) {
    const stats = () => keyStats(key);
    stats().connections += 1;
    stats().open += 1;
    const connection = stats().connections;
    const faulty = connection <= intParam(params, "mock_times", Infinity);
    const timestamps = params.get("include_timestamps") === "true";
    const vad = params.get("commit_strategy") === "vad";
    const state = { chunks: 0, pending: [], recognizer: null, queue: [], manualCommit: false };
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
    const fail = (type, code = 1008) => {
      pushBounded(stats().errors, type, CLOSE_LOG_LIMIT);
      send({ message_type: type, error: `mock ${type}` });
      close(code, type);
    };

    const entry = tokens.get(params.get("token"));
    if (!entry || entry.used || entry.expires <= Date.now() || params.get("audio_format") !== "pcm_16000") {
      stats().refused += 1;
      return fail(entry && params.get("audio_format") !== "pcm_16000" ? "input_error" : "auth_error");
    }
    entry.used = true;
    send({ message_type: "session_started", session_id: randomUUID(), config: { sample_rate: 16000, audio_format: "pcm_16000", model_id: params.get("model_id") ?? "scribe_v2_realtime" } });

    const commit = (text, start, end) => {
      stats().committed += 1;
      send({ message_type: "committed_transcript", text });
      if (timestamps) {
        const words = text.split(/\s+/).filter(Boolean);
        const step = words.length > 0 ? (end - start) / words.length : 0;
        send({
          message_type: "committed_transcript_with_timestamps",
          text,
          words: words.map((word, i) => ({ text: word, start: Math.round((start + i * step) * 1000) / 1000, end: Math.round((start + (i + 1) * step) * 1000) / 1000, type: "word", logprob: -0.1 })),
        });
      }
    };
    const onRecognized = (event) => {
      switch (event.type) {
        case "partial":
          send({ message_type: "partial_transcript", text: event.text });
          break;
        case "final":
          // VAD commits each utterance; without it, the words wait for the client's commit.
          if (vad || state.manualCommit) {
            const held = state.pending.splice(0);
            state.manualCommit = false;
            commit([...held.map((e) => e.text), event.text].join(" "), held[0]?.start ?? event.start, event.end);
          } else state.pending.push(event);
          break;
        case "flushed":
          if (state.manualCommit) {
            state.manualCommit = false;
            const held = state.pending.splice(0);
            if (held.length > 0) commit(held.map((e) => e.text).join(" "), held[0].start, held.at(-1).end);
            else commit("", 0, 0);
          }
          break;
        case "error":
          fail("transcriber_error", 1011);
          break;
        default:
      }
    };
    openRecognizer(params, ctx.speech, onRecognized).then(
      (recognizer) => {
        if (ws.readyState !== ws.OPEN) return recognizer.close();
        state.recognizer = recognizer;
        for (const run of state.queue.splice(0)) run();
      },
      () => fail("transcriber_error", 1011),
    );
    const withRecognizer = (run) => (state.recognizer ? run() : state.queue.push(run));

    ws.on("error", noop);
    ws.on("close", (code) => {
      stats().open = Math.max(0, stats().open - 1);
      pushBounded(stats().closeCodes, code, CLOSE_LOG_LIMIT);
      for (const timer of timers) clearTimeout(timer);
      withRecognizer(() => state.recognizer.close());
    });
    if (faulty && params.has("mock_drop_after_ms")) later(intParam(params, "mock_drop_after_ms", 0), () => ws.terminate());
    const errorType = faulty ? params.get("mock_error") : null;
    const errorClose = intParam(params, "mock_error_close", 1008, 1000, 4999);
    if (errorType && intParam(params, "mock_error_after_frames", 0) === 0) later(0, () => fail(errorType, errorClose));

    ws.on("message", (data, isBinary) => {
      let message = null;
      try {
        message = isBinary ? null : JSON.parse(data.toString("utf8"));
      } catch {}
      if (message?.message_type !== "input_audio_chunk") {
        stats().invalidMessages += 1;
        return fail("invalid_request");
      }
      const audio = typeof message.audio_base_64 === "string" && /^[A-Za-z0-9+/]*={0,2}$/.test(message.audio_base_64) ? Buffer.from(message.audio_base_64, "base64") : null;
      if (!audio || audio.length % 2 !== 0 || message.sample_rate !== 16000) {
        stats().badChunks += 1;
        return fail("input_error");
      }
      if (message.previous_text !== undefined) {
        if (state.chunks > 0) return fail("invalid_request");
        pushBounded(stats().previousTexts, message.previous_text, CLOSE_LOG_LIMIT);
      }
      if (audio.length > 0) {
        state.chunks += 1;
        stats().chunks += 1;
        stats().bytes += audio.length;
        withRecognizer(() => state.recognizer.audio(audio));
      }
      if (message.commit === true) {
        stats().commits += 1;
        state.manualCommit = true;
        withRecognizer(() => state.recognizer.flush());
      }
      if (faulty && params.has("mock_drop_after_frames") && state.chunks >= intParam(params, "mock_drop_after_frames", 1)) ws.terminate();
      if (errorType && audio.length > 0 && state.chunks === intParam(params, "mock_error_after_frames", 0)) fail(errorType, errorClose);
    });
  }

  async function close() {
    for (const ws of wss.clients) ws.terminate();
    await new Promise((resolve) => wss.close(() => resolve()));
  }

  return {
    handleHttp: handleToken,
    handleUpgrade,
    close,
    stats: () => counters,
    reset: () => {
      const open = Object.fromEntries(Object.entries(counters.keys).map(([name, value]) => [name, value.open]));
      counters = { tokens: 0, keys: {} };
      for (const [name, count] of Object.entries(open)) if (count > 0) keyStats(name).open = count;
    },
  };
}
