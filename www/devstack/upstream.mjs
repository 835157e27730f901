// The demo's way to a real model: POST /upstream/v1/chat/completions is passed on to the
// OpenAI-compatible endpoint in $LLM_URL (a base such as http://127.0.0.1:11434/v1, or the full
// .../chat/completions URL), with the model set to $LLM_MODEL when given and the key in
// $LLM_API_KEY as a bearer token. The key stays in this process: the page never sees it, and
// /__stats says only whether an upstream is set and its model. Without LLM_URL the route is a 404.

import { Readable } from "node:stream";
import { corsHeaders, HttpError, readJson, sendJson, trackRequest } from "./http.mjs";

const UPSTREAM_PATH = /^\/upstream\/v1\/chat\/completions$/;

export function matchUpstreamPath(pathname) {
  return UPSTREAM_PATH.test(pathname);
}

/** The upstream settings from the environment, or null when LLM_URL is not set. */
export function upstreamConfig(env = process.env) {
  if (!env.LLM_URL) return null;
  const base = env.LLM_URL.replace(/\/+$/, "");
  const url = /\/chat\/completions$/.test(base) ? base : `${base}/chat/completions`;
  return { url, model: env.LLM_MODEL || null, key: env.LLM_API_KEY || null };
}

/** What the page may know: whether an upstream is set and its model; never the URL's secrets or the key. */
export function upstreamInfo(config) {
  return config ? { upstream: true, model: config.model } : { upstream: false, model: null };
}

const openAiError = (status, message) => ({ error: { message, type: "upstream_error", param: null, code: null } });

export async function handleUpstream(ctx, req, res, config) {
  if (req.method !== "POST") return sendJson(req, res, 405, openAiError(405, "use POST"));
  if (!config) return sendJson(req, res, 404, openAiError(404, "no upstream model: start the demo with LLM_URL set"));
  const counter = (ctx.stats.llm.upstream ??= { requests: 0, completed: 0, aborted: 0 });
  const signal = trackRequest(counter, res, ctx.signal, ctx.isClosing);
  let body;
  try {
    body = await readJson(req);
  } catch (error) {
    if (error instanceof HttpError) sendJson(req, res, error.status, openAiError(error.status, error.message));
    return;
  }
  if (config.model) body.model = config.model;
  const headers = { "content-type": "application/json", accept: req.headers.accept ?? "*/*" };
  if (config.key) headers.authorization = `Bearer ${config.key}`;
  let upstream;
  try {
    upstream = await fetch(config.url, { method: "POST", headers, body: JSON.stringify(body), signal });
  } catch {
    if (!signal.aborted) sendJson(req, res, 502, openAiError(502, "the upstream model could not be reached"));
    return;
  }
  res.writeHead(upstream.status, {
    ...corsHeaders(req),
    "content-type": upstream.headers.get("content-type") ?? "application/json",
    "cache-control": "no-store",
  });
  if (!upstream.body) return res.end();
  const stream = Readable.fromWeb(upstream.body);
  stream.on("error", () => res.destroy());
  stream.pipe(res);
}
