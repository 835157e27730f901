// Mock OpenAI-compatible chat completions endpoint with fault injection.
//
//   POST /v1/chat/completions
//   POST /llm/<scenario>/v1/chat/completions
//
// The scenario comes from, in order of precedence: the `fault` query param,
// the `x-mock-fault` header, the path segment, else "ok". The answer text is
// deterministic so tests can assert on it: "You said: <last user text>. "
// and three fixed sentences. Query params: `text` (exact answer), `tokens`
// (cut or pad to N tokens), `tokenMs` (pause before each token; 5, or 25 for
// slow), `firstChunkMs` (extra pause before the first token), `after` (tokens
// before stall_after stalls; 2), `splitMs` (pause between comments' writes; 1),
// `reply=chat` (a conversational answer by persona and question: chat.mjs).

import { chatAnswer } from "./chat.mjs";
import { corsHeaders, HttpError, intParam, readJson, sendJson, sleep, trackRequest, untilAborted } from "./http.mjs";

export const LLM_SCENARIOS = Object.freeze([
  "ok",
  "http400",
  "http401",
  "http429",
  "http500",
  "hang",
  "no_first_chunk",
  "stall_after",
  "slow",
  "garbage",
  "comments",
]);

const LLM_PATH = /^(?:\/llm\/([^/]+))?\/v1\/chat\/completions$/;

/** Returns `{ scenario }` (scenario may be undefined) when the path is the LLM mock. */
export function matchLlmPath(pathname) {
  const match = LLM_PATH.exec(pathname);
  return match ? { scenario: match[1] } : null;
}

// OpenAI's error bodies, so clients exercise their real error paths.
const HTTP_FAULTS = {
  http400: { status: 400, type: "invalid_request_error", code: null, message: "mock: invalid request" },
  http401: { status: 401, type: "invalid_request_error", code: "invalid_api_key", message: "mock: incorrect API key provided" },
  http429: { status: 429, type: "requests", code: "rate_limit_exceeded", message: "mock: rate limit reached" },
  http500: { status: 500, type: "server_error", code: null, message: "mock: the server had an error" },
};

const DEFAULT_SENTENCES = "This is the mock assistant. It answers every turn the same way. Nothing here comes from a model.";
// Accents, CJK and an emoji: multibyte UTF-8 that the `comments` scenario splits across writes.
const UNICODE_SENTENCES = "Café crème, s'il vous plaît. 日本語のテキストです. Ready when you are 🙂.";
const PADDING = "This sentence pads the answer. ";
const ECHO_LIMIT = 200;

let completionSeq = 0;

/**
 * Handles one chat completion request. `ctx` is the dev stack:
 * `{ stats, signal, isClosing }`.
 */
export async function handleLlm(ctx, req, res, url, pathScenario) {
  const scenario = url.searchParams.get("fault") ?? req.headers["x-mock-fault"] ?? pathScenario ?? "ok";
  if (!LLM_SCENARIOS.includes(scenario)) {
    const message = `unknown mock scenario "${scenario}"; one of ${LLM_SCENARIOS.join(", ")}`;
    sendOpenAiError(req, res, { status: 400, type: "invalid_request_error", code: "unknown_mock_scenario", message });
    return;
  }
  if (req.method !== "POST") {
    sendOpenAiError(req, res, { status: 405, type: "invalid_request_error", code: null, message: "use POST" });
    return;
  }
  const signal = trackRequest(ctx.stats.llmScenario(scenario), res, ctx.signal, ctx.isClosing);

  let body;
  try {
    body = await readJson(req);
  } catch (error) {
    if (error instanceof HttpError) {
      sendOpenAiError(req, res, { status: error.status, type: "invalid_request_error", code: null, message: error.message });
    }
    return;
  }
  const stream = body.stream === true;
  const model = typeof body.model === "string" ? body.model : null;
  // Whether a key was sent, never the key itself; the idempotency key, to check it never repeats.
  const idempotencyKey = req.headers["idempotency-key"] ?? null;
  ctx.stats.recordLlmRequest({ scenario, stream, model, authorization: Boolean(req.headers.authorization), idempotencyKey, body });

  const answer = planAnswer(body, url.searchParams, scenario);
  const run = stream ? STREAM_HANDLERS[scenario] : JSON_HANDLERS[scenario];
  await run({ req, res, signal, answer, params: url.searchParams });
}

/** What to answer and at what pace, from the body and the query params. */
function planAnswer(body, params, scenario) {
  return {
    meta: {
      id: `chatcmpl-mock-${++completionSeq}`,
      created: Math.floor(Date.now() / 1000),
      model: typeof body.model === "string" ? body.model : "mock-llm",
    },
    tokens: answerTokens(body, params, scenario),
    tokenMs: intParam(params, "tokenMs", scenario === "slow" ? 25 : 5, 60_000),
    firstChunkMs: intParam(params, "firstChunkMs", 0, 600_000),
    stallAfter: intParam(params, "after", 2),
  };
}

// ---------------------------------------------------------------------------
// Answer text

/** The text of the last user message, flattening OpenAI content parts. */
export function lastUserText(body) {
  const messages = Array.isArray(body.messages) ? body.messages : [];
  const last = messages.findLast((message) => message?.role === "user");
  if (!last) return "";
  if (typeof last.content === "string") return last.content;
  if (Array.isArray(last.content)) {
    return last.content.filter((part) => part?.type === "text" && typeof part.text === "string").map((part) => part.text).join(" ");
  }
  return "";
}

/** Splits text into word tokens whose concatenation is exactly the text. */
export function splitTokens(text) {
  return text.match(/\S+\s*|\s+/g) ?? [];
}

/** The default answer: an echo of the user's words, then fixed sentences. */
export function defaultAnswer(userText, scenario = "ok") {
  const echo = userText.trim().replace(/\s+/g, " ").slice(0, ECHO_LIMIT).replace(/[.!?]+$/, "") || "nothing";
  return `You said: ${echo}. ${scenario === "comments" ? UNICODE_SENTENCES : DEFAULT_SENTENCES}`.trimEnd();
}

/** Tokens of `text=` or the default answer, cut or padded to `tokens=N`. */
function answerTokens(body, params, scenario) {
  const chat = params.get("reply") === "chat" && scenario !== "comments";
  const messages = Array.isArray(body.messages) ? body.messages : [];
  const text = params.get("text") ?? (chat ? chatAnswer(messages, lastUserText(body)) : defaultAnswer(lastUserText(body), scenario));
  const tokens = splitTokens(text);
  const wanted = intParam(params, "tokens", tokens.length, 10_000);
  if (tokens.length >= wanted) return tokens.slice(0, wanted);
  // Pad with whole words, separated from the text by a space.
  if (tokens.length > 0 && !/\s$/.test(tokens.at(-1))) tokens[tokens.length - 1] += " ";
  const padding = splitTokens(PADDING);
  for (let i = 0; tokens.length < wanted; i += 1) tokens.push(padding[i % padding.length]);
  return tokens;
}

// ---------------------------------------------------------------------------
// Wire formats

function chunkJson(meta, delta, finishReason = null) {
  return JSON.stringify({
    id: meta.id,
    object: "chat.completion.chunk",
    created: meta.created,
    model: meta.model,
    choices: [{ index: 0, delta, finish_reason: finishReason }],
  });
}

function completionJson({ meta, tokens }) {
  const content = tokens.join("");
  return JSON.stringify({
    id: meta.id,
    object: "chat.completion",
    created: meta.created,
    model: meta.model,
    choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop" }],
    usage: { prompt_tokens: 0, completion_tokens: tokens.length, total_tokens: tokens.length },
  });
}

function sendOpenAiError(req, res, { status, type, code, message }) {
  const extra = status === 429 ? { "retry-after": "1" } : {};
  sendJson(req, res, status, { error: { message, type, param: null, code } }, extra);
}

function startSse(req, res) {
  res.writeHead(200, {
    ...corsHeaders(req),
    "content-type": "text/event-stream; charset=utf-8",
    "cache-control": "no-store",
    "x-accel-buffering": "no",
  });
  res.flushHeaders();
}

function startJson(req, res) {
  res.writeHead(200, { ...corsHeaders(req), "content-type": "application/json", "cache-control": "no-store" });
  res.flushHeaders();
}

// ---------------------------------------------------------------------------
// Streaming (stream: true)

/**
 * Streams `count` tokens (all by default) as OpenAI chunks, the first after
 * `firstChunkMs`, each after `tokenMs`. Returns false when the client left.
 */
async function streamTokens(res, signal, answer, count = answer.tokens.length) {
  const { meta, tokens, tokenMs, firstChunkMs } = answer;
  res.write(`data: ${chunkJson(meta, { role: "assistant", content: "" })}\n\n`);
  if (firstChunkMs > 0 && !(await sleep(firstChunkMs, signal))) return false;
  for (const token of tokens.slice(0, count)) {
    if (tokenMs > 0 && !(await sleep(tokenMs, signal))) return false;
    if (signal.aborted) return false;
    res.write(`data: ${chunkJson(meta, { content: token })}\n\n`);
  }
  return true;
}

function endStream(res, meta) {
  res.write(`data: ${chunkJson(meta, {}, "stop")}\n\n`);
  res.end("data: [DONE]\n\n");
}

async function streamOk({ req, res, signal, answer }) {
  startSse(req, res);
  if (await streamTokens(res, signal, answer)) endStream(res, answer.meta);
}

async function streamStallAfter({ req, res, signal, answer }) {
  startSse(req, res);
  if (await streamTokens(res, signal, answer, answer.stallAfter)) await untilAborted(signal);
}

async function streamNoFirstChunk({ req, res, signal }) {
  startSse(req, res);
  await untilAborted(signal);
}

async function streamGarbage({ req, res }) {
  // A proxy's error page behind a 200 with the SSE content type: no `data:`
  // line anywhere, so a correct parser yields no text at all.
  startSse(req, res);
  res.write("<html><body><h1>502 Bad Gateway</h1></body></html>\n");
  res.write(Buffer.from([0xff, 0xfe, 0x00, 0x0a]));
  res.end("not-an-event\n\n");
}

/**
 * SSE as real proxies deliver it: CRLF line endings, `: keep-alive`
 * comments, stray blank lines, `data:` with and without the optional space,
 * and the byte stream cut at odd offsets, including inside multibyte
 * characters, with a pause between writes so they reach the client apart.
 */
async function streamComments({ req, res, signal, answer, params }) {
  const { meta, tokens } = answer;
  const lines = [": keep-alive\r\n\r\n", `data: ${chunkJson(meta, { role: "assistant", content: "" })}\r\n\r\n`];
  tokens.forEach((token, index) => {
    if (index % 2 === 0) lines.push(": keep-alive\r\n");
    if (index % 3 === 1) lines.push("\r\n");
    const field = index % 2 === 0 ? "data: " : "data:";
    lines.push(`${field}${chunkJson(meta, { content: token })}\r\n\r\n`);
  });
  lines.push(`data: ${chunkJson(meta, {}, "stop")}\r\n\r\n`, ": done\r\n", "data: [DONE]\r\n\r\n");

  startSse(req, res);
  if (await writeSplit(res, signal, Buffer.from(lines.join(""), "utf8"), intParam(params, "splitMs", 1, 1000))) res.end();
}

/** Byte offsets to cut `bytes` at: odd steps plus one cut inside each multibyte width. */
export function oddCutPoints(bytes) {
  const cuts = new Set();
  const steps = [29, 53, 17, 41, 7];
  for (let offset = 0, i = 0; offset < bytes.length; i += 1) {
    offset += steps[i % steps.length];
    if (offset < bytes.length) cuts.add(offset);
  }
  // The first 2-, 3- and 4-byte sequences each get a cut after their lead byte.
  const widthsSeen = new Set();
  for (let i = 0; i < bytes.length; i += 1) {
    const width = bytes[i] >= 0xf0 ? 4 : bytes[i] >= 0xe0 ? 3 : bytes[i] >= 0xc0 ? 2 : 1;
    if (width > 1 && !widthsSeen.has(width)) {
      widthsSeen.add(width);
      cuts.add(i + 1);
    }
  }
  return [...cuts].sort((a, b) => a - b);
}

async function writeSplit(res, signal, bytes, pauseMs) {
  let start = 0;
  for (const cut of [...oddCutPoints(bytes), bytes.length]) {
    if (signal.aborted) return false;
    res.write(bytes.subarray(start, cut));
    start = cut;
    if (pauseMs > 0 && cut < bytes.length && !(await sleep(pauseMs, signal))) return false;
  }
  return true;
}

// ---------------------------------------------------------------------------
// Non-streaming (stream absent or false)

async function jsonOk({ req, res, signal, answer }) {
  if (answer.firstChunkMs > 0 && !(await sleep(answer.firstChunkMs, signal))) return;
  const body = completionJson(answer);
  res.writeHead(200, { ...corsHeaders(req), "content-type": "application/json", "content-length": Buffer.byteLength(body), "cache-control": "no-store" });
  res.end(body);
}

async function jsonSlow(context) {
  // The whole answer takes as long as streaming it would.
  const { signal, answer } = context;
  if (!(await sleep(answer.tokenMs * answer.tokens.length, signal))) return;
  await jsonOk(context);
}

async function jsonStall({ req, res, signal, answer }) {
  startJson(req, res);
  const body = completionJson(answer);
  res.write(body.slice(0, Math.floor(body.length / 2)));
  await untilAborted(signal);
}

async function jsonNoFirstChunk({ req, res, signal }) {
  startJson(req, res);
  await untilAborted(signal);
}

async function jsonGarbage({ req, res }) {
  res.writeHead(200, { ...corsHeaders(req), "content-type": "application/json", "cache-control": "no-store" });
  res.end("<html><body><h1>502 Bad Gateway</h1></body></html>\n");
}

async function jsonComments({ req, res, signal, answer, params }) {
  startJson(req, res);
  if (await writeSplit(res, signal, Buffer.from(completionJson(answer), "utf8"), intParam(params, "splitMs", 1, 1000))) res.end();
}

async function hang({ signal }) {
  // Accept the request, never send a status line.
  await untilAborted(signal);
}

function httpFault(name) {
  return async ({ req, res }) => sendOpenAiError(req, res, HTTP_FAULTS[name]);
}

const SHARED_HANDLERS = {
  http400: httpFault("http400"),
  http401: httpFault("http401"),
  http429: httpFault("http429"),
  http500: httpFault("http500"),
  hang,
};

const STREAM_HANDLERS = {
  ...SHARED_HANDLERS,
  ok: streamOk,
  slow: streamOk, // same stream, a larger default tokenMs
  stall_after: streamStallAfter,
  no_first_chunk: streamNoFirstChunk,
  garbage: streamGarbage,
  comments: streamComments,
};

const JSON_HANDLERS = {
  ...SHARED_HANDLERS,
  ok: jsonOk,
  slow: jsonSlow,
  stall_after: jsonStall,
  no_first_chunk: jsonNoFirstChunk,
  garbage: jsonGarbage,
  comments: jsonComments,
};
