// The local dev stack the demo page and the tests run against: one HTTP
// server on 127.0.0.1 with static files, a mock OpenAI-compatible LLM, a mock
// TTS and a mock Gladia-compatible live STT, all with failure injection, and
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
import { ASSEMBLYAI_SWITCHES, createAssemblyAiMock, matchAssemblyAiSocketPath, matchAssemblyAiTokenPath } from "./devstack/assemblyai.mjs";
import { createDeepgramMock, DEEPGRAM_SWITCHES, matchDeepgramGrantPath, matchDeepgramSocketPath } from "./devstack/deepgram.mjs";
import { PROVIDER_MOCKS } from "./devstack/providers.mjs";
import { createSpeechStt, matchSpeechProvisionPath, matchSpeechSocketPath, SPEECH_MODES } from "./devstack/speech.mjs";
import { serveStatic } from "./devstack/static.mjs";
import { handleUpstream, matchUpstreamPath, upstreamConfig, upstreamInfo } from "./devstack/upstream.mjs";
import { DevStats } from "./devstack/stats.mjs";
import { createSttMock, matchSttProvisionPath, matchSttSocketPath, STT_MODES } from "./devstack/stt.mjs";
import { espeakAvailable, handleTts, matchTtsPath, TTS_FAULTS } from "./devstack/tts.mjs";
import { handleSpeechOut, matchSpeechOutPath, SPEECH_OUT_FAULTS } from "./devstack/speech_out.mjs";

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
// The mocks stand in for paid services and accept anything: loopback only.
const LOOPBACK_HOSTS = new Set(["127.0.0.1", "localhost", "::1"]);

/** What /__stats lists under `services`, for the demo page and for people. */
export const SERVICES = Object.freeze({
  llm: { path: "/v1/chat/completions", prefixed: "/llm/<scenario>/v1/chat/completions", scenarios: LLM_SCENARIOS },
  tts: { path: "/tts", prefixed: "/tts/<fault>", faults: TTS_FAULTS },
  speechOut: { path: "/v1/audio/speech", prefixed: "/v1/audio/speech/<fault>", faults: SPEECH_OUT_FAULTS },
  stt: { path: "/v2/live", prefixed: "/stt/<mode>/v2/live", socket: "/v2/live/ws?token=<id>", modes: STT_MODES },
  speech: { path: "/speech/v2/live", socket: "/speech/v2/live/ws?token=<id>", modes: SPEECH_MODES },
  deepgram: { path: "/v1/auth/grant", socket: "/v1/listen (subprotocols bearer, <token>)", switches: DEEPGRAM_SWITCHES },
  assemblyai: { path: "/v3/token", socket: "/v3/ws?token=<token>", switches: ASSEMBLYAI_SWITCHES },
  ...Object.fromEntries(PROVIDER_MOCKS.map((mock) => [mock.name, mock.service])),
});

/**
 * Starts the dev stack. Resolves once it listens.
 * @param {{ port?: number, host?: string, root?: string, log?: (line: string) => void }} [options]
 *   `log` receives one line per request (method, path, status), never a
 *   query string or a body: those may hold what the user said.
 */
export async function startDevStack({ port = 0, host = "127.0.0.1", root = REPO_ROOT, log, upstream = upstreamConfig() } = {}) {
  if (!LOOPBACK_HOSTS.has(host)) throw new RangeError(`host must be a loopback address, got "${host}"`);
  const rootDir = realpathSync(path.resolve(root));
  const stats = new DevStats();
  const shutdown = new AbortController();
  const sockets = new Set();
  let authority = "";

  const ctx = {
    stats,
    signal: shutdown.signal,
    isClosing: () => shutdown.signal.aborted,
    authority: () => authority,
    upstream,
  };
  const stt = createSttMock(ctx);
  const speech = createSpeechStt(ctx);
  ctx.speech = speech;
  const deepgram = createDeepgramMock(ctx);
  ctx.deepgram = deepgram;
  const assemblyai = createAssemblyAiMock(ctx);
  ctx.assemblyai = assemblyai;
  ctx.providers = PROVIDER_MOCKS.map((entry) => ({ entry, mock: entry.create(ctx) }));
  const reset = () => {
    stats.reset();
    stt.recountOpen();
    speech.reset();
    deepgram.reset();
    assemblyai.reset();
    for (const { mock } of ctx.providers) mock.reset();
  };

  const server = http.createServer((req, res) => {
    if (log) logWhenDone(log, req, res);
    route(ctx, stt, rootDir, reset, req, res).catch((error) => failRequest(res, error));
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  server.on("upgrade", (req, socket, head) => {
    // Node drops its own error handling once a socket is upgraded.
    socket.on("error", () => {});
    const url = requestUrl(req);
    if (matchAssemblyAiSocketPath(url.pathname)) {
      assemblyai.handleUpgrade(req, socket, head, url).catch(() => socket.destroy());
      return;
    }
    const provider = ctx.providers.find(({ entry }) => entry.matchSocket(url.pathname));
    if (provider) {
      provider.mock.handleUpgrade(req, socket, head, url).catch(() => socket.destroy());
      return;
    }
    if (matchDeepgramSocketPath(url.pathname)) {
      deepgram.handleUpgrade(req, socket, head, url).catch(() => socket.destroy());
      return;
    }
    if (matchSpeechSocketPath(url.pathname)) {
      speech.handleUpgrade(req, socket, head, url).catch(() => socket.destroy());
      return;
    }
    const match = matchSttSocketPath(url.pathname);
    if (!match) {
      socket.end("HTTP/1.1 404 Not Found\r\nConnection: close\r\nContent-Length: 0\r\n\r\n");
      return;
    }
    stt.handleUpgrade(req, socket, head, url, match.mode).catch(() => socket.destroy());
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
      await stt.close();
      await deepgram.close();
      await assemblyai.close();
      for (const { mock } of ctx.providers) await mock.close();
      await speech.close();
      for (const socket of sockets) socket.destroy();
      await closed;
    })());

  return { url: `http://${authority}/`, port: address.port, host: address.address, stats, reset, close, warmSpeech: () => speech.warm() };
}

/** Dispatches one HTTP request to the mock it names, else to static files. */
async function route(ctx, stt, rootDir, reset, req, res) {
  const url = requestUrl(req);
  const { pathname } = url;

  if (req.method === "OPTIONS") {
    res.writeHead(204, corsHeaders(req));
    res.end();
    return;
  }
  if (pathname === "/__stats") {
    if (req.method !== "GET" && req.method !== "HEAD") return sendJson(req, res, 405, { error: "use GET" });
    return sendJson(req, res, 200, { ...ctx.stats.toJSON(), speech: ctx.speech.stats(), deepgram: ctx.deepgram.stats(), assemblyai: ctx.assemblyai.stats(), ...Object.fromEntries(ctx.providers.map(({ entry, mock }) => [entry.name, mock.stats()])), ttsEngine: espeakAvailable() ? "espeak-ng" : "tone", llmUpstream: upstreamInfo(ctx.upstream), services: SERVICES });
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
  if (matchSpeechProvisionPath(pathname)) return ctx.speech.handleProvision(req, res, url);
  if (matchDeepgramGrantPath(pathname)) return ctx.deepgram.handleGrant(req, res, url);
  if (matchAssemblyAiTokenPath(pathname)) return ctx.assemblyai.handleToken(req, res, url);
  const provider = ctx.providers.find(({ entry }) => entry.matchHttp(pathname));
  if (provider) return provider.mock.handleHttp(req, res, url);
  const provision = matchSttProvisionPath(pathname);
  if (provision) return stt.handleProvision(req, res, url, provision.mode);

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
