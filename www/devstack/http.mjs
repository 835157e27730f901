// Small HTTP helpers shared by the dev stack's mock services: body reading,
// JSON replies, CORS, abortable sleeps and per-request accounting.

import { setTimeout as delay } from "node:timers/promises";

/** Largest request body the mocks accept; a voice turn is far smaller. */
export const MAX_BODY_BYTES = 1 << 20;

/** Error with an HTTP status, thrown by body readers and turned into a reply. */
export class HttpError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

/**
 * Reads the whole request body. Rejects with 413 past `limit` (the rest is
 * read and dropped so the 413 can still be sent) and with 499 when the
 * client goes away before the body arrived.
 */
export function readBody(req, limit = MAX_BODY_BYTES) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    let size = 0;
    req.on("data", (chunk) => {
      size += chunk.length;
      if (size > limit) {
        chunks.length = 0;
        reject(new HttpError(413, `request body over ${limit} bytes`));
        return;
      }
      chunks.push(chunk);
    });
    req.on("end", () => resolve(Buffer.concat(chunks)));
    req.on("error", reject);
    req.on("aborted", () => reject(new HttpError(499, "client closed request")));
  });
}

/** Reads a JSON object body (every mock takes one); an empty body is `{}`. */
export async function readJson(req) {
  const raw = await readBody(req);
  if (raw.length === 0) return {};
  let value;
  try {
    value = JSON.parse(raw.toString("utf8"));
  } catch {
    throw new HttpError(400, "request body is not valid JSON");
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw new HttpError(400, "request body must be a JSON object");
  }
  return value;
}

/**
 * CORS headers for the mock APIs. The wasm test runner and other tools serve
 * pages from their own origin and still call these mocks, so allow any origin
 * and echo the requested headers (a `*` would not cover Authorization).
 */
export function corsHeaders(req) {
  return {
    "access-control-allow-origin": "*",
    "access-control-allow-methods": "GET, POST, OPTIONS",
    "access-control-allow-headers": req.headers["access-control-request-headers"] ?? "content-type",
    "access-control-max-age": "600",
  };
}

/** Sends a complete JSON response (no caching, CORS open). */
export function sendJson(req, res, status, value, extraHeaders = {}) {
  if (res.headersSent || res.destroyed) return;
  const body = JSON.stringify(value);
  res.writeHead(status, {
    ...corsHeaders(req),
    "content-type": "application/json; charset=utf-8",
    "content-length": Buffer.byteLength(body),
    "cache-control": "no-store",
    ...extraHeaders,
  });
  res.end(body);
}

/** Sleeps `ms`; resolves false instead of throwing when `signal` aborts first. */
export async function sleep(ms, signal) {
  if (signal?.aborted) return false;
  try {
    await delay(ms, undefined, { signal });
    return true;
  } catch {
    return false;
  }
}

/**
 * Counts one request on `counter` and returns an AbortSignal that fires when
 * the client disconnects. `res` 'close' is used rather than `req` 'close'
 * because since Node 16 `req` closes as soon as its body has been read, while
 * `res` closes when the response ended or the connection went away: a close
 * before the response was ended is exactly "aborted by the client".
 * (`writableEnded`, not `writableFinished`: a fast client may read the whole
 * reply and hang up before Node reports the final write as flushed.)
 *
 * `isShuttingDown` keeps the stack's own close() from counting as aborts.
 */
export function trackRequest(counter, res, stackSignal, isShuttingDown) {
  counter.requests += 1;
  const controller = new AbortController();
  const onStackAbort = () => controller.abort();
  stackSignal.addEventListener("abort", onStackAbort, { once: true });
  res.on("close", () => {
    stackSignal.removeEventListener("abort", onStackAbort);
    if (res.writableEnded) counter.completed += 1;
    else if (!isShuttingDown()) counter.aborted += 1;
    controller.abort();
  });
  return controller.signal;
}

/** Parses a non-negative integer query parameter, falling back on junk. */
export function intParam(params, name, fallback, max = Number.MAX_SAFE_INTEGER) {
  const raw = params.get(name);
  if (raw === null || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < 0) return fallback;
  return Math.min(Math.floor(value), max);
}

/** Resolves once `signal` aborts (the client left or the stack closes). */
export function untilAborted(signal) {
  return new Promise((resolve) => {
    if (signal.aborted) resolve();
    else signal.addEventListener("abort", resolve, { once: true });
  });
}
