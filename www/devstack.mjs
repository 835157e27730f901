// The local dev stack the demo page and the tests run against: one HTTP
// server on 127.0.0.1 with static files, a mock OpenAI-compatible LLM, a mock
// TTS, and a mock of every speech-to-text protocol in www/protocols/
// (devstack/protocols.mjs mounts them), all with failure injection, and
// counters at GET /__stats (cleared by POST /__reset).
//
//   import { startDevStack } from "./www/devstack.mjs";
//   const stack = await startDevStack({ port: 0 });
//   // ... stack.url, stack.stats, stack.reset()
//   await stack.close();

import http from "node:http";
import { realpathSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { corsHeaders, sendJson } from "./devstack/http.mjs";
import { handleLlm, LLM_SCENARIOS, matchLlmPath } from "./devstack/llm.mjs";
import { createEngine } from "./devstack/engine.mjs";
import { handleBackend, matchBackendPath, mockFor, mountProtocols, protocolList, protocolServices } from "./devstack/protocols.mjs";
import { serveStatic } from "./devstack/static.mjs";
import { handleUpstream, matchUpstreamPath, upstreamConfig, upstreamInfo } from "./devstack/upstream.mjs";
import { DevStats } from "./devstack/stats.mjs";
import { espeakAvailable, handleTts, matchTtsPath, TTS_FAULTS } from "./devstack/tts.mjs";
import { handleSpeechOut, matchSpeechOutPath, SPEECH_OUT_FAULTS } from "./devstack/speech_out.mjs";

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
// The mocks stand in for paid services and accept anything: loopback only.
const LOOPBACK_HOSTS = new Set(["127.0.0.1", "localhost", "::1"]);

/** What /__stats lists under `services` besides the protocols, for the demo page and for people. */
export const SERVICES = Object.freeze({
  llm: { path: "/v1/chat/completions", prefixed: "/llm/<scenario>/v1/chat/completions", scenarios: LLM_SCENARIOS },
  tts: { path: "/tts", prefixed: "/tts/<fault>", faults: TTS_FAULTS },
  speechOut: { path: "/v1/audio/speech", prefixed: "/v1/audio/speech/<fault>", faults: SPEECH_OUT_FAULTS },
});

/**
 * Starts the dev stack. Resolves once it listens.
 * @param {{ port?: number, host?: string, root?: string, log?: (line: string) => void, python?: string | null }} [options]
 *   `log` receives one line per request (method, path, status), never a
 *   query string or a body: those may hold what the user said. `python`: the
 *   interpreter of the speech engine (null: none; default: engine.mjs's choice).
 *   `speechPhrases`: a file of the only phrases the recognizer may hear (engine.mjs), or none.
 */
export async function startDevStack({ port = 0, host = "127.0.0.1", root = REPO_ROOT, log, upstream = upstreamConfig(), python, speechPhrases = null } = {}) {
  if (!LOOPBACK_HOSTS.has(host)) throw new RangeError(`host must be a loopback address, got "${host}"`);
  const rootDir = realpathSync(path.resolve(root));
  const stats = new DevStats();
  const shutdown = new AbortController();
  const sockets = new Set();
  let authority = "";

  const engine = createEngine(python, { phrases: speechPhrases });
  const ctx = {
    stats,
    engine,
    signal: shutdown.signal,
    isClosing: () => shutdown.signal.aborted,
    authority: () => authority,
    upstream,
  };
  const protocols = await mountProtocols(ctx);
  ctx.protocols = protocols;
  // Other names a mock's counters go by (Gladia's `stt`), on the live stats object too.
  for (const { mock } of protocols) {
    for (const name of Object.keys(mock.aliases())) Object.defineProperty(stats, name, { get: () => mock.aliases()[name], enumerable: false });
  }
  const reset = () => {
    stats.reset();
    for (const { mock } of protocols) mock.reset();
  };

  const server = http.createServer((req, res) => {
    if (log) logWhenDone(log, req, res);
    route(ctx, rootDir, reset, req, res).catch((error) => failRequest(res, error));
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  server.on("upgrade", (req, socket, head) => {
    // Node drops its own error handling once a socket is upgraded.
    socket.on("error", () => {});
    const url = requestUrl(req);
    const found = mockFor(protocols, "Socket", url.pathname, url);
    if (found) {
      found.protocol.mock.handleUpgrade(req, socket, head, url, found.match).catch(() => socket.destroy());
      return;
    }
    socket.end("HTTP/1.1 404 Not Found\r\nConnection: close\r\nContent-Length: 0\r\n\r\n");
  });

  await listen(server, port, host);
  const address = server.address();
  const hostPart = address.family === "IPv6" ? `[${address.address}]` : address.address;
  authority = `${hostPart}:${address.port}`;

  let closing;
  const close = () =>
    (closing ??= (async () => {
      shutdown.abort(); // ends every pending sleep and hanging response
      const closed = new Promise((resolve) => server.close(() => resolve()));
      for (const { mock } of protocols) await mock.close();
      await engine.close();
      for (const socket of sockets) socket.destroy();
      await closed;
    })());

  return { url: `http://${authority}/`, port: address.port, host: address.address, stats, reset, close, protocols: protocols.map((p) => p.name), warmSpeech: () => engine.warm() };
}

/** Dispatches one HTTP request to the mock it names, else to static files. */
async function route(ctx, rootDir, reset, req, res) {
  const url = requestUrl(req);
  const { pathname } = url;

  // A backend of another origin that does not allow the page (troubleshooting's CORS case): the
  // preflight and the request are answered without CORS headers, so a page's fetch rejects.
  if (pathname === "/__no-cors") {
    res.writeHead(req.method === "OPTIONS" ? 204 : 200, { "content-type": "application/json", "cache-control": "no-store" });
    res.end(req.method === "OPTIONS" ? undefined : "{}");
    return;
  }
  if (req.method === "OPTIONS") {
    res.writeHead(204, corsHeaders(req));
    res.end();
    return;
  }
  if (pathname === "/__stats") {
    if (req.method !== "GET" && req.method !== "HEAD") return sendJson(req, res, 405, { error: "use GET" });
    // `?protocol=<name>&key=<mock_key>`: one key's counters only (what a test polls).
    const one = ctx.protocols.find(({ name }) => name === url.searchParams.get("protocol"));
    if (one) return sendJson(req, res, 200, one.mock.stats().keys[url.searchParams.get("key")] ?? null);
    const protocols = ctx.protocols.map(({ name, mock }) => [name, mock.stats()]);
    const aliases = ctx.protocols.map(({ mock }) => mock.aliases());
    return sendJson(req, res, 200, {
      ...ctx.stats.toJSON(),
      protocols: ctx.protocols.map(({ name }) => name),
      ...Object.fromEntries(protocols),
      ...Object.assign({}, ...aliases),
      recognizer: ctx.engine.stats(),
      ttsEngine: espeakAvailable() ? "espeak-ng" : "tone",
      llmUpstream: upstreamInfo(ctx.upstream),
      services: { ...SERVICES, ...protocolServices(ctx.protocols) },
    });
  }
  if (pathname === "/__protocols") {
    if (req.method !== "GET" && req.method !== "HEAD") return sendJson(req, res, 405, { error: "use GET" });
    return sendJson(req, res, 200, protocolList(ctx.protocols));
  }
  if (pathname === "/__reset") {
    if (req.method !== "POST") return sendJson(req, res, 405, { error: "use POST" });
    reset();
    return sendJson(req, res, 200, { ok: true, since: ctx.stats.since });
  }

  if (matchUpstreamPath(pathname)) return handleUpstream(ctx, req, res, ctx.upstream);
  const llm = matchLlmPath(pathname);
  if (llm) return handleLlm(ctx, req, res, url, llm.scenario);
  const tts = matchTtsPath(pathname);
  if (tts) return handleTts(ctx, req, res, url, tts.fault);
  const speechOut = matchSpeechOutPath(pathname);
  if (speechOut) return handleSpeechOut(ctx, req, res, url, speechOut.fault);
  const backend = matchBackendPath(pathname);
  if (backend) return handleBackend(ctx, ctx.protocols, backend, req, res);
  const found = mockFor(ctx.protocols, "Http", pathname, url);
  if (found) return found.protocol.mock.handleHttp(req, res, url, found.match);

  // The raw path, not the URL-normalised one, so traversal is seen and refused.
  return serveStatic(req, res, rootDir, rawPathOf(req));
}

function requestUrl(req) {
  // Only the path and query matter; the base never reaches the network.
  return new URL(req.url ?? "/", "http://127.0.0.1");
}

function rawPathOf(req) {
  const raw = req.url ?? "/";
  const query = raw.indexOf("?");
  return query === -1 ? raw : raw.slice(0, query);
}

function listen(server, port, host) {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
}

function failRequest(res, error) {
  if (!res.headersSent) {
    res.writeHead(500, { "content-type": "text/plain; charset=utf-8", "cache-control": "no-store" });
    res.end(`dev stack error: ${error?.message ?? error}\n`);
  } else {
    res.destroy();
  }
}

function logWhenDone(log, req, res) {
  const started = performance.now();
  res.on("close", () => {
    const pathname = rawPathOf(req);
    if (pathname === "/__stats") return; // the demo polls it
    const status = res.writableEnded ? res.statusCode : "aborted";
    log(`${req.method} ${pathname} ${status} ${Math.round(performance.now() - started)}ms`);
  });
}
