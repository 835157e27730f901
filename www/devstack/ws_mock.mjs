// The one socket skeleton under every protocol mock (www/devstack/mocks/<name>.mjs): the token
// endpoint a backend calls, the WebSocket server, per-`mock_key` counters with the same names for
// every protocol, the fault switches every protocol takes, the recognizer hookup, the idle limit,
// the pacing check, cleanup, stats and reset. A mock supplies only what differs: how it mints
// credentials, how it checks them, how it reads the client's frames and how recognizer events
// become its server messages.
//
// Switches, in the socket URL's query or its path (`/mock/<url-encoded switches>/<socket path>`,
// for SDKs that rewrite the query), and on the token endpoint's query:
//   mock_key=K                   whose counters (default "default"); `mock_times` counts per key
//   mock_times=N                 only the key's first N connections (token requests, upgrade
//                                attempts) get the faults below
//   mock_drop_after_ms=N         cut the connection (no close frame: the client sees 1006) N ms
//   mock_drop_after_frames=N     ... or N audio frames after it opened
//   mock_close=X                 end the connection as the protocol ends it for X: a close code, or
//                                the protocol's error (a Soniox error code, an ElevenLabs error type)
//   mock_close_after_frames=N    ... after N audio frames (default 0: as soon as it started)
//   mock_close_code=C            the close code after an error message (where X is one)
//   mock_session_ms=N            the session is over N ms after it started, as the protocol says so
//   mock_session_frames=N        ... or after N audio frames (protocols without a session limit: none)
//   mock_silent_after_frames=N   half-open: after N frames the server neither answers nor
//                                acknowledges; what still arrives is counted as swallowedFrames
//   mock_refuse_upgrade=STATUS   refuse the upgrade with this HTTP status (browsers report 1006)
//   mock_handshake_ms=N          answer the upgrade N ms late
//   mock_idle_ms=N               the server's idle limit (where the protocol has one)
//   mock_record_frames=1         keep each frame's first four bytes (LE) and length, in order
//   mock_provision=F             the token endpoint fails: 401, 408, 429, 500, 503 (that status),
//                                hang (never answers) or reset (the connection is destroyed)
//   mock_expired=1               the token endpoint hands out a credential that has expired
//   recognizer=…                 recognizers.mjs
//
// Counters per key (GET /__stats: `<protocol>.keys[<key>]`), the same for every protocol:
//   provisions, provisionsRefused, provisionsAborted   token endpoint calls, failed by a fault,
//                                                      given up by the client
//   attempts, refused            upgrade requests; refused by a fault or for bad credentials
//   connections, open            sockets accepted; open now
//   frames, bytes, audioMs       audio frames and bytes as received, and their duration
//   tooFast                      frames that arrived faster than the protocol's pacing allows
//   partials, finals             utterances under way and ended by the recognizer
//   keepAlives, finishes         the protocol's keepalive messages; its finish messages (stop)
//   invalidMessages              client messages the protocol does not know
//   swallowedFrames, sessionsOver, closeCodes (each connection's, in order)
//   frameNumbers, frameLengths   with mock_record_frames=1
// plus the mock's own (`spec.counters()`). Never a credential, a header or transcript text.

import { WebSocketServer } from "ws";
import { sendJson, sleep } from "./http.mjs";
import { intParam, openRecognizer, recognizerSlot } from "./recognizers.mjs";
import { CLOSE_LOG_LIMIT, FRAME_LOG_LIMIT, pushBounded, SESSION_LIMIT } from "./stats.mjs";

const PROVISION_FAULTS = new Set(["401", "408", "429", "500", "503", "hang", "reset"]);
const CREDENTIAL_LIMIT = 1000;
const noop = () => {};

function uniformCounters() {
  return {
    provisions: 0, provisionsRefused: 0, provisionsAborted: 0, attempts: 0, refused: 0, connections: 0, open: 0,
    frames: 0, bytes: 0, audioMs: 0, tooFast: 0, partials: 0, finals: 0, keepAlives: 0, finishes: 0,
    invalidMessages: 0, swallowedFrames: 0, sessionsOver: 0, closeCodes: [], frameNumbers: [], frameLengths: [],
  };
}

/** Switches from `/mock/<url-encoded switches>/…` and the query (the query wins). */
export function switchesOf(url, inPath) {
  const params = new URLSearchParams(inPath ? decodeURIComponent(inPath) : "");
  for (const [name, value] of url.searchParams) params.set(name, value);
  return params;
}

/** `^(/mock/<switches>)?<path>$` for a path such as "/v1/listen". */
export function pathMatcher(path) {
  const escaped = path.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  const pattern = new RegExp(`^(?:/mock/([^/]*))?${escaped}/?$`);
  return (pathname) => {
    const match = pattern.exec(pathname);
    return match ? { inPath: match[1] } : null;
  };
}

/**
 * Credentials a mock hands out: `mint(prefix, { ttlMs, singleUse, expired, data })` → the value;
 * `check(value)` → its entry if it still works (`use(value)` spends a single-use one).
 */
export function credentialStore() {
  const entries = new Map();
  let issued = 0;
  return {
    mint(value, { ttlMs = 60_000, singleUse = false, expired = false, data = {} } = {}) {
      entries.set(value, { expires: expired ? 0 : Date.now() + ttlMs, singleUse, used: false, data });
      if (entries.size > CREDENTIAL_LIMIT) entries.delete(entries.keys().next().value);
      issued += 1;
      return value;
    },
    check(value) {
      const entry = entries.get(value);
      return entry && entry.expires > Date.now() && !(entry.singleUse && entry.used) ? entry : null;
    },
    use(value) {
      const entry = entries.get(value);
      if (entry) entry.used = true;
    },
    get issued() {
      return issued;
    },
    resetCount() {
      issued = 0;
    },
  };
}

/**
 * The mock of one protocol. `ctx`: the dev stack (`{ engine, signal, isClosing, authority }`);
 * `credentials`: the store it mints into and checks (protocols of one provider that share a token
 * endpoint share it).
 * `spec`: what the protocol has of its own:
 *   name                          the protocol
 *   matchHttp(pathname), matchSocket(pathname) → { inPath, … } | null   its two paths
 *   http(req, res, params, tools) answers the token endpoint (after the provisioning faults)
 *   httpError(status, message)    its error body
 *   open(conn, auth, tools) → handlers   a socket was accepted: greet, and say how to handle
 *                                 `{ json(message | null, text), text(string), binary(buffer),
 *                                 recognized(event), closeWith(x), sessionOver(), idle(), tooFast(),
 *                                 recognizerFailed() }` (each optional; `json` gets each text frame
 *                                 parsed, null when it is not JSON)
 *   authorize(req, params, tools) → { refuse: status } | { count: "<counter>", … }   at the upgrade
 *   switches(params, match, "http" | "socket") → params   older spellings of the switches
 *   prepare(req, url, params, match) → { params } | { refuse: status }   before anything else
 *   handleProtocols(protocols)    the subprotocol to answer with
 *   counters()                    its own per-key counters
 *   start: "open" | "message"     whether the stream starts when the socket opens or when the
 *                                 mock calls conn.started() (its start message arrived)
 *   recognizer: "start" | "none"  open one per connection when the stream starts (default), or none
 *                                 (the mock sets conn.recognizer itself)
 *   idleMs, pacing { rate, slackMs }, bytesPerSecond (of the audio as received; 32000)
 *   provisionKey(params, match, tools)   whose counters a token request is (default: mock_key)
 *   setup() → state               per dev stack (in the tools as `state`); its `groupOf(key)` names a
 *                                 group that sums its keys' numbers (Gladia's modes)
 */
export function createWsMock(ctx, spec, { credentials = credentialStore() } = {}) {
  const state = spec.setup?.() ?? {};
  const groupOf = state.groupOf ?? spec.groupOf;
  const live = new Set();
  const wss = new WebSocketServer({ noServer: true, perMessageDeflate: false, maxPayload: spec.maxPayload ?? 1 << 20, handleProtocols: spec.handleProtocols });
  const bytesPerSecond = spec.bytesPerSecond ?? 32000;
  let keys = {};
  let groups = {};

  const fresh = () => ({ ...uniformCounters(), ...(spec.counters?.() ?? {}) });
  /** The counters of `key`, made on first use; the oldest go past SESSION_LIMIT keys. */
  const stats = (key) => {
    if (!keys[key]) {
      const names = Object.keys(keys);
      if (names.length >= SESSION_LIMIT) delete keys[names[0]];
      keys[key] = fresh();
    }
    return keys[key];
  };
  const groupStats = (key) => {
    const group = groupOf?.(key);
    return group === undefined ? null : (groups[group] ??= fresh());
  };
  // Counters are looked up at each event, never cached: a /__reset swaps them.
  const count = (key, field, by = 1) => {
    stats(key)[field] += by;
    const group = groupStats(key);
    if (group) group[field] += by;
  };
  const push = (key, field, value, limit = CLOSE_LOG_LIMIT) => pushBounded(stats(key)[field], value, limit);
  /** A recognizer (recognizers.mjs) whose partials and finals count for `key`. */
  const recognize = (key, params, onEvent, failed) =>
    recognizerSlot(
      openRecognizer(params, ctx.engine, (event) => {
        if (event.type === "partial") count(key, "partials");
        if (event.type === "final") count(key, "finals");
        onEvent(event);
      }),
      failed,
    );
  const tools = { credentials, count, push, stats, recognize, state, ctx };

  async function handleHttp(req, res, url, match) {
    const params = spec.switches?.(switchesOf(url, match.inPath), match, "http") ?? switchesOf(url, match.inPath);
    const key = spec.provisionKey ? spec.provisionKey(params, match, tools) : params.get("mock_key") ?? "default";
    count(key, "provisions");
    const fault = params.get("mock_provision");
    if (fault && PROVISION_FAULTS.has(fault) && stats(key).provisions <= intParam(params, "mock_times", Infinity)) {
      if (fault === "hang") {
        // Never answered: the client's abort (or the dev stack closing) ends it.
        req.resume();
        res.on("close", () => ctx.isClosing() || count(key, "provisionsAborted"));
        return;
      }
      count(key, "provisionsRefused");
      if (fault === "reset") {
        req.socket.destroy();
        return;
      }
      const status = Number(fault);
      sendJson(req, res, status, spec.httpError(status, `mock: the token endpoint failed (${status})`), status === 429 ? { "retry-after": "1" } : {});
      return;
    }
    // `mock_expired=1`: the credential minted now has already expired (the first `mock_times`).
    const expired = params.get("mock_expired") === "1" && stats(key).provisions <= intParam(params, "mock_times", Infinity);
    await spec.http(req, res, params, { ...tools, key, match, expired });
  }

  async function handleUpgrade(req, socket, head, url, match) {
    let params = spec.switches?.(switchesOf(url, match.inPath), match, "socket") ?? switchesOf(url, match.inPath);
    if (spec.prepare) {
      const prepared = spec.prepare(req, url, params, match, tools);
      if (prepared.refuse) {
        // An unknown session: counted for the key its URL names, if any.
        const key = params.get("mock_key");
        if (key) count(key, "attempts"), count(key, "refused");
        return refuse(socket, prepared.refuse);
      }
      params = prepared.params;
    }
    const key = params.get("mock_key") ?? "default";
    count(key, "attempts");
    const times = intParam(params, "mock_times", Infinity);
    const refuseStatus = intParam(params, "mock_refuse_upgrade", 0, 0, 599);
    if (refuseStatus >= 400 && stats(key).attempts <= times) {
      count(key, "refused");
      return refuse(socket, refuseStatus);
    }
    const auth = spec.authorize?.(req, params, { ...tools, key }) ?? {};
    if (auth.refuse) {
      count(key, "refused");
      return refuse(socket, auth.refuse);
    }
    if (auth.count) count(key, auth.count);
    const handshakeMs = intParam(params, "mock_handshake_ms", 0, 0, 60_000);
    if (handshakeMs > 0) {
      // The client may give up while we stall; stop waiting when it does.
      const gone = new AbortController();
      socket.once("close", () => gone.abort());
      if (!(await sleep(handshakeMs, AbortSignal.any([gone.signal, ctx.signal]))) || socket.destroyed) return socket.destroy();
    }
    wss.handleUpgrade(req, socket, head, (ws) => accept(ws, params, key, auth));
  }

  function accept(ws, params, key, auth) {
    count(key, "connections");
    count(key, "open");
    const number = stats(key).connections;
    const faulty = number <= intParam(params, "mock_times", Infinity);
    const timers = new Set();
    const closeCode = params.get("mock_close");
    const once = new Set(); // frame faults that fired
    const has = (name) => faulty && params.has(name);
    let idleTimer = null;
    let handlers = {};

    const conn = {
      ws, key, params, number, faulty, auth,
      opened: Date.now(),
      pacedFrom: Date.now(),
      frames: 0,
      received: 0,
      recognizer: null,
      silent: false,
      count: (field, by) => count(key, field, by),
      stats: () => stats(key),
      push: (field, value, limit) => push(key, field, value, limit),
      isOpen: () => ws.readyState === ws.OPEN,
      send(message) {
        if (conn.silent || ws.readyState !== ws.OPEN) return;
        ws.send(typeof message === "string" ? message : JSON.stringify(message));
      },
      close(code, reason = "") {
        if (ws.readyState === ws.OPEN) ws.close(code, reason);
      },
      terminate: () => ws.terminate(),
      later(ms, run) {
        const timer = setTimeout(() => {
          timers.delete(timer);
          run();
        }, ms);
        timers.add(timer);
      },
      /** Opens this connection's recognizer (recognizers.mjs), its events to `recognized`. */
      startRecognizer() {
        conn.recognizer = recognize(key, params, (event) => ws.readyState === ws.OPEN && handlers.recognized?.(event), () => conn.fail("unavailable"));
        return conn.recognizer;
      },
      /** The stream started (its start message, or the socket's open): start-time faults arm. */
      started() {
        conn.pacedFrom = Date.now();
        if (spec.recognizer !== "none") conn.startRecognizer();
        if (faulty && closeCode && intParam(params, "mock_close_after_frames", 0) === 0) conn.later(0, () => closeWith(closeCode));
        if (has("mock_session_ms")) conn.later(intParam(params, "mock_session_ms", 0), sessionOver);
      },
      /** The recognizer failed: the protocol's server error. */
      fail: (why) => (handlers.recognizerFailed ? handlers.recognizerFailed(why) : conn.close(1011, "recognition failed")),
      /**
       * One audio frame as received (`pcm16k`: what the recognizer hears, when not the same):
       * counted, paced, recognized. False when the mock refused it. The frame faults fire once the
       * mock has handled the whole message (its acknowledgement sent).
       */
      audio(wire, pcm16k = wire) {
        conn.frames += 1;
        conn.received += wire.length;
        count(key, "frames");
        count(key, "bytes", wire.length);
        // Whole milliseconds of what arrived, from the bytes: no float drift over a long stream.
        for (const counters of [stats(key), groupStats(key)].filter(Boolean)) counters.audioMs = Math.round((counters.bytes * 1000) / bytesPerSecond);
        if (params.get("mock_record_frames") === "1") {
          push(key, "frameNumbers", wire.length >= 4 ? wire.readUInt32LE(0) : null, FRAME_LOG_LIMIT);
          push(key, "frameLengths", wire.length, FRAME_LOG_LIMIT);
        }
        if (spec.pacing) {
          const audioMs = (conn.received / bytesPerSecond) * 1000;
          if (audioMs > (Date.now() - conn.pacedFrom) * spec.pacing.rate + spec.pacing.slackMs) {
            count(key, "tooFast");
            if (handlers.tooFast) {
              handlers.tooFast();
              return false;
            }
          }
        }
        conn.recognizer?.audio(pcm16k);
        return true;
      },
    };

    function closeWith(what) {
      if (handlers.closeWith) handlers.closeWith(what);
      else conn.close(Number(what) || 1011, "mock close");
    }

    function sessionOver() {
      if (!handlers.sessionOver || ws.readyState !== ws.OPEN) return;
      count(key, "sessionsOver");
      handlers.sessionOver();
    }

    const reached = (name, fallback) => has(name) && !once.has(name) && conn.frames >= intParam(params, name, fallback) && once.add(name);
    function frameFaults() {
      if (reached("mock_drop_after_frames", 1)) ws.terminate();
      const closeAfter = intParam(params, "mock_close_after_frames", 0);
      if (faulty && closeCode && closeAfter > 0 && conn.frames >= closeAfter && !once.has("close")) {
        once.add("close");
        closeWith(closeCode);
      }
      if (reached("mock_session_frames", 1)) sessionOver();
      if (has("mock_silent_after_frames") && conn.frames >= intParam(params, "mock_silent_after_frames", 0)) conn.silent = true;
    }

    const idleMs = intParam(params, "mock_idle_ms", spec.idleMs ?? 0, 0, 600_000);
    const touch = () => {
      if (!idleMs) return;
      clearTimeout(idleTimer);
      idleTimer = setTimeout(() => (handlers.idle ? handlers.idle() : conn.close(1011, "idle")), idleMs);
    };

    live.add(conn);
    ws.on("error", noop);
    ws.on("close", (code) => {
      live.delete(conn);
      stats(key).open = Math.max(0, stats(key).open - 1);
      const group = groupStats(key);
      if (group) group.open = Math.max(0, group.open - 1);
      push(key, "closeCodes", code);
      clearTimeout(idleTimer);
      for (const timer of timers) clearTimeout(timer);
      conn.recognizer?.close();
      handlers.closed?.(code);
    });

    handlers = spec.open(conn, auth, { ...tools, key }) ?? {};
    if (ws.readyState !== ws.OPEN) return;
    if (has("mock_drop_after_ms")) conn.later(intParam(params, "mock_drop_after_ms", 0), () => ws.terminate());
    if (has("mock_silent_after_frames") && intParam(params, "mock_silent_after_frames", 0) === 0) conn.silent = true;
    touch();
    if ((spec.start ?? "open") === "open") conn.started();

    ws.on("message", (data, isBinary) => {
      touch();
      if (conn.silent) {
        if (isBinary) count(key, "swallowedFrames");
        return;
      }
      const frames = conn.frames;
      if (isBinary) {
        if (handlers.binary) handlers.binary(data);
        else conn.audio(data);
      } else if (handlers.json) {
        const text = data.toString("utf8");
        let message = null;
        try {
          message = JSON.parse(text);
        } catch {}
        handlers.json(message, text);
      } else if (handlers.text) {
        handlers.text(data.toString("utf8"));
      } else {
        count(key, "invalidMessages");
      }
      if (conn.frames > frames && ws.readyState === ws.OPEN) frameFaults();
    });
  }

  async function close() {
    for (const ws of wss.clients) ws.terminate();
    await new Promise((resolve) => wss.close(() => resolve()));
    for (const conn of live) conn.recognizer?.close();
  }

  return {
    name: spec.name,
    credentials,
    matchHttp: spec.matchHttp,
    matchSocket: spec.matchSocket,
    handleHttp,
    handleUpgrade,
    close,
    stats: () => ({ issued: credentials.issued, keys, ...(groupOf ? { groups } : {}) }),
    /** Other names GET /__stats gives this mock's counters (`spec.aliases(stats)`). */
    aliases: () => spec.aliases?.({ keys, groups }) ?? {},
    /** Zeroes every counter; sockets open now stay counted as open. */
    reset() {
      credentials.resetCount();
      keys = {};
      groups = {};
      for (const conn of live) {
        stats(conn.key).open += 1;
        const group = groupStats(conn.key);
        if (group) group.open += 1;
      }
    },
  };
}

function refuse(socket, status) {
  const text = { 401: "Unauthorized", 403: "Forbidden", 404: "Not Found", 429: "Too Many Requests", 503: "Service Unavailable" }[status] ?? "Error";
  socket.end(`HTTP/1.1 ${status} ${text}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
}
