// Tests for the dev stack (www/devstack.mjs): static files, the mock LLM and
// its faults, the mock TTS and the mock live STT over a real WebSocket.
// Run with: node --test www/devstack.test.mjs

import assert from "node:assert/strict";
import http from "node:http";
import { mkdtemp, mkdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, beforeEach, describe, test } from "node:test";
import { WebSocket } from "ws";
import { startDevStack } from "./devstack.mjs";
import { defaultAnswer, oddCutPoints } from "./devstack/llm.mjs";

const TEST_TIMEOUT = { timeout: 5000 };
let stack;
let base; // "http://127.0.0.1:<port>" without the trailing slash

before(async () => {
  stack = await startDevStack({ port: 0 });
  base = stack.url.replace(/\/$/, "");
});
after(() => stack.close());
beforeEach(async () => {
  const response = await fetch(`${base}/__reset`, { method: "POST" });
  assert.equal(response.status, 200);
});

// ---------------------------------------------------------------------------
// Helpers

/** Polls `probe` until it returns a truthy value; fails after `ms`. */
async function waitFor(probe, ms = 2000, what = "condition") {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) assert.fail(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

async function getStats() {
  const response = await fetch(`${base}/__stats`);
  assert.equal(response.status, 200);
  return response.json();
}

/** A GET with a path sent byte for byte: fetch would normalise `..` away. */
function rawGet(rawPath) {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: "127.0.0.1", port: stack.port, path: rawPath, method: "GET" }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (chunk) => (body += chunk));
      res.on("end", () => resolve({ status: res.statusCode, headers: res.headers, body }));
    });
    req.on("error", reject);
    req.end();
  });
}

const USER_TEXT = "hello there";

function chatBody(overrides = {}) {
  return {
    model: "mock-model-1",
    stream: true,
    messages: [
      { role: "system", content: "You are a terse assistant." },
      { role: "user", content: "earlier question" },
      { role: "assistant", content: "earlier answer" },
      { role: "user", content: USER_TEXT },
    ],
    ...overrides,
  };
}

function chat(pathAndQuery, body = chatBody(), init = {}) {
  return fetch(`${base}${pathAndQuery}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...init.headers },
    body: JSON.stringify(body),
    signal: init.signal,
  });
}

/**
 * A minimal server-sent-events parser: CRLF/LF/CR line ends, comments,
 * the optional space after "data:", multi-line data, and UTF-8 characters
 * split across network chunks (the decoder keeps partial sequences).
 */
class SseParser {
  #decoder = new TextDecoder();
  #buffer = "";
  #data = [];

  /** Feeds bytes, returns the data of every event completed by them. */
  push(bytes) {
    this.#buffer += this.#decoder.decode(bytes, { stream: true });
    const events = [];
    for (;;) {
      const match = /\r\n|\n|\r/.exec(this.#buffer);
      // A lone CR at the end may be the first half of a CRLF: wait for more.
      if (!match || (match[0] === "\r" && match.index === this.#buffer.length - 1)) break;
      const line = this.#buffer.slice(0, match.index);
      this.#buffer = this.#buffer.slice(match.index + match[0].length);
      if (line === "") {
        if (this.#data.length > 0) events.push(this.#data.join("\n"));
        this.#data = [];
      } else if (!line.startsWith(":")) {
        const colon = line.indexOf(":");
        const field = colon === -1 ? line : line.slice(0, colon);
        const value = colon === -1 ? "" : line.slice(colon + 1).replace(/^ /, "");
        if (field === "data") this.#data.push(value);
      }
    }
    return events;
  }
}

/** Reads a whole SSE response: its events' data, raw bytes and chunk count. */
async function readSse(response) {
  const parser = new SseParser();
  const events = [];
  const raw = [];
  for await (const chunk of response.body) {
    raw.push(chunk);
    events.push(...parser.push(chunk));
  }
  return { events, chunks: raw.length, raw: Buffer.concat(raw) };
}

/** The assistant text carried by OpenAI chunk events, up to [DONE]. */
function contentOf(events) {
  return events
    .filter((data) => data !== "[DONE]")
    .map((data) => JSON.parse(data).choices[0].delta.content ?? "")
    .join("");
}

/** Reads what arrives on `reader` within `ms`, without waiting for the end. */
async function readFor(reader, ms) {
  const parser = new SseParser();
  const events = [];
  const deadline = Date.now() + ms;
  for (;;) {
    const left = deadline - Date.now();
    if (left <= 0) return { events, ended: false };
    let timer;
    const result = await Promise.race([reader.read(), new Promise((resolve) => (timer = setTimeout(() => resolve(null), left)))]);
    clearTimeout(timer);
    if (result === null) return { events, ended: false };
    if (result.done) return { events, ended: true };
    events.push(...parser.push(result.value));
  }
}

/** Opens a ws client that records JSON messages, open and close. */
function connect(url) {
  const ws = new WebSocket(url);
  const messages = [];
  let failure = null;
  ws.on("message", (data, isBinary) => {
    if (!isBinary) messages.push(JSON.parse(data.toString("utf8")));
  });
  ws.on("error", (error) => (failure = error));
  const opened = new Promise((resolve) => {
    ws.once("open", () => resolve(true));
    ws.once("close", () => resolve(false));
  });
  const closed = new Promise((resolve) => ws.once("close", (code, reason) => resolve({ code, reason: reason.toString() })));
  return {
    ws,
    messages,
    opened,
    closed,
    failure: () => failure,
    waitForMessage: (predicate, what) => waitFor(() => messages.find(predicate), 2000, what),
  };
}

async function provision(prefix = "", query = "", config = { encoding: "wav/pcm", bit_depth: 16, sample_rate: 16000, channels: 1 }) {
  return fetch(`${base}${prefix}/v2/live${query}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(config),
  });
}

async function provisionOk(prefix, query) {
  const response = await provision(prefix, query);
  assert.equal(response.status, 201);
  return response.json();
}

/** Races `promise` against a timer that is cleared, so no timer outlives the test. */
async function withTimeout(promise, ms, what) {
  let timer;
  const expired = new Promise((_, reject) => (timer = setTimeout(() => reject(new Error(`timed out: ${what}`)), ms)));
  try {
    return await Promise.race([promise, expired]);
  } finally {
    clearTimeout(timer);
  }
}

/** A binary frame whose first 4 bytes are `n` (LE), as a numbered audio frame. */
function numberedFrame(n, length = 640) {
  const frame = Buffer.alloc(length);
  frame.writeUInt32LE(n, 0);
  return frame;
}

// ---------------------------------------------------------------------------
// Static files

describe("static files", () => {
  let root;
  let rootStack;

  before(async () => {
    // A throwaway root with a wasm file, and a secret one level above it.
    const parent = await mkdtemp(path.join(tmpdir(), "devstack-test-"));
    root = path.join(parent, "root");
    await mkdir(path.join(root, "www"), { recursive: true });
    await mkdir(path.join(root, "pkg"), { recursive: true });
    await mkdir(path.join(root, ".git"), { recursive: true });
    await writeFile(path.join(root, "www", "index.html"), "<!doctype html><title>test index</title>");
    await writeFile(path.join(root, "pkg", "mod.wasm"), Buffer.from([0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00]));
    await writeFile(path.join(root, ".git", "config"), "dot file");
    await writeFile(path.join(parent, "secret.txt"), "TOP SECRET");
    rootStack = await startDevStack({ port: 0, root });
  });
  after(async () => {
    await rootStack.close();
    await rm(path.dirname(root), { recursive: true, force: true });
  });

  test("GET / serves the repo's demo page, no-store", TEST_TIMEOUT, async () => {
    const response = await fetch(`${base}/`);
    assert.equal(response.status, 200);
    assert.equal(response.headers.get("content-type"), "text/html; charset=utf-8");
    assert.equal(response.headers.get("cache-control"), "no-store");
    assert.match(await response.text(), /turnguard demo/);
    const script = await fetch(`${base}/www/demo.mjs`);
    assert.equal(script.headers.get("content-type"), "text/javascript; charset=utf-8");
    assert.match(await script.text(), /\/\/ The library is wired in here\./);
    const css = await fetch(`${base}/www/style.css`);
    assert.equal(css.headers.get("content-type"), "text/css; charset=utf-8");
    await css.arrayBuffer();
  });

  test("wasm is served as application/wasm, byte for byte", TEST_TIMEOUT, async () => {
    const response = await fetch(`${rootStack.url}pkg/mod.wasm`);
    assert.equal(response.status, 200);
    assert.equal(response.headers.get("content-type"), "application/wasm");
    assert.deepEqual(new Uint8Array(await response.arrayBuffer()), new Uint8Array([0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00]));
    const index = await fetch(rootStack.url);
    assert.equal(await index.text(), "<!doctype html><title>test index</title>");
  });

  test("path traversal, dot-files and missing files are refused", TEST_TIMEOUT, async () => {
    const get = (rawPath) =>
      new Promise((resolve, reject) => {
        const req = http.request({ host: "127.0.0.1", port: rootStack.port, path: rawPath }, (res) => {
          let body = "";
          res.on("data", (chunk) => (body += chunk));
          res.on("end", () => resolve({ status: res.statusCode, body }));
        });
        req.on("error", reject);
        req.end();
      });
    for (const rawPath of ["/../secret.txt", "/www/../../secret.txt", "/%2e%2e/secret.txt", "/www/..%2f..%2fsecret.txt", "/..%5csecret.txt"]) {
      const { status, body } = await get(rawPath);
      assert.ok(status === 400 || status === 403, `${rawPath} answered ${status}`);
      assert.doesNotMatch(body, /TOP SECRET/);
    }
    assert.equal((await get("/.git/config")).status, 404);
    assert.equal((await get("/pkg/missing.wasm")).status, 404);
    assert.equal((await get("/%E0%A4%A")).status, 400);
  });

  test("a directory without its slash redirects, never off-site", TEST_TIMEOUT, async () => {
    const { status, headers } = await rawGet("//www");
    assert.equal(status, 301);
    assert.equal(headers.location, "/www/");
  });
});

// ---------------------------------------------------------------------------
// Mock LLM

describe("mock LLM", () => {
  test("streams the deterministic answer as OpenAI chunks, then [DONE]", TEST_TIMEOUT, async () => {
    const response = await chat("/v1/chat/completions");
    assert.equal(response.status, 200);
    assert.match(response.headers.get("content-type"), /^text\/event-stream/);
    const { events } = await readSse(response);
    assert.equal(events.at(-1), "[DONE]");
    const first = JSON.parse(events[0]);
    assert.equal(first.object, "chat.completion.chunk");
    assert.equal(first.model, "mock-model-1");
    assert.deepEqual(first.choices[0].delta, { role: "assistant", content: "" });
    assert.equal(JSON.parse(events.at(-2)).choices[0].finish_reason, "stop");
    assert.equal(contentOf(events), defaultAnswer(USER_TEXT));
    assert.ok(contentOf(events).startsWith("You said: hello there. "));
  });

  test("records the request body: stream flag, model, system prompt, history", TEST_TIMEOUT, async () => {
    await readSse(await chat("/llm/ok/v1/chat/completions", chatBody(), { headers: { authorization: "Bearer sk-test" } }));
    const stats = await getStats();
    assert.deepEqual(stats.llm.scenarios.ok, { requests: 1, completed: 1, aborted: 0 });
    const [entry] = stats.llm.recent;
    assert.equal(entry.scenario, "ok");
    assert.equal(entry.stream, true);
    assert.equal(entry.model, "mock-model-1");
    assert.equal(entry.authorization, true);
    assert.deepEqual(entry.body, chatBody());
    assert.doesNotMatch(JSON.stringify(stats), /sk-test/);
  });

  test("answers a normal chat.completion without stream", TEST_TIMEOUT, async () => {
    const response = await chat("/v1/chat/completions", chatBody({ stream: false }));
    assert.equal(response.status, 200);
    const completion = await response.json();
    assert.equal(completion.object, "chat.completion");
    assert.equal(completion.choices[0].message.content, defaultAnswer(USER_TEXT));
    assert.equal(completion.choices[0].finish_reason, "stop");
  });

  test("text= and tokens= shape the answer", TEST_TIMEOUT, async () => {
    const exact = await readSse(await chat(`/v1/chat/completions?text=${encodeURIComponent("One. Two three!")}`));
    assert.equal(contentOf(exact.events), "One. Two three!");
    const counted = await readSse(await chat("/v1/chat/completions?tokens=40"));
    const contentEvents = counted.events.filter((data) => data !== "[DONE]" && JSON.parse(data).choices[0].delta.content);
    assert.equal(contentEvents.length, 40);
    const cut = await readSse(await chat("/v1/chat/completions?tokens=3"));
    assert.equal(contentOf(cut.events), "You said: hello ");
  });

  test("HTTP faults answer OpenAI error bodies", TEST_TIMEOUT, async () => {
    for (const [scenario, status, code] of [["http400", 400, null], ["http401", 401, "invalid_api_key"], ["http429", 429, "rate_limit_exceeded"], ["http500", 500, null]]) {
      const response = await chat(`/llm/${scenario}/v1/chat/completions`);
      assert.equal(response.status, status, scenario);
      const { error } = await response.json();
      assert.equal(error.code, code);
      assert.equal(typeof error.message, "string");
      if (status === 429) assert.equal(response.headers.get("retry-after"), "1");
    }
    const stats = await getStats();
    assert.equal(stats.llm.scenarios.http429.requests, 1);
  });

  test("the fault can come from the x-mock-fault header or the fault param", TEST_TIMEOUT, async () => {
    const byHeader = await chat("/v1/chat/completions", chatBody(), { headers: { "x-mock-fault": "http500" } });
    assert.equal(byHeader.status, 500);
    await byHeader.arrayBuffer();
    const byQuery = await chat("/llm/ok/v1/chat/completions?fault=http401");
    assert.equal(byQuery.status, 401);
    await byQuery.arrayBuffer();
    const unknown = await chat("/llm/nonsense/v1/chat/completions");
    assert.equal(unknown.status, 400);
    assert.match((await unknown.json()).error.message, /unknown mock scenario/);
  });

  test("invalid JSON is a 400", TEST_TIMEOUT, async () => {
    const response = await fetch(`${base}/v1/chat/completions`, { method: "POST", body: "{not json" });
    assert.equal(response.status, 400);
    assert.equal((await response.json()).error.type, "invalid_request_error");
  });

  test("hang: no status line ever; the client's abort is counted", TEST_TIMEOUT, async () => {
    const started = Date.now();
    await assert.rejects(chat("/llm/hang/v1/chat/completions", chatBody(), { signal: AbortSignal.timeout(150) }), { name: "TimeoutError" });
    assert.ok(Date.now() - started >= 140);
    await waitFor(async () => (await getStats()).llm.scenarios.hang?.aborted === 1, 2000, "hang abort counted");
  });

  test("no_first_chunk: headers, then nothing", TEST_TIMEOUT, async () => {
    const controller = new AbortController();
    const response = await chat("/llm/no_first_chunk/v1/chat/completions", chatBody(), { signal: controller.signal });
    assert.equal(response.status, 200);
    const reader = response.body.getReader();
    const { events, ended } = await readFor(reader, 150);
    assert.deepEqual(events, []);
    assert.equal(ended, false);
    controller.abort();
    await reader.read().catch(() => {});
    await waitFor(async () => (await getStats()).llm.scenarios.no_first_chunk?.aborted === 1, 2000, "abort counted");
  });

  test("stall_after: N tokens, then silence without an end", TEST_TIMEOUT, async () => {
    const controller = new AbortController();
    const response = await chat("/llm/stall_after/v1/chat/completions?after=3&tokenMs=0", chatBody(), { signal: controller.signal });
    const reader = response.body.getReader();
    const { events, ended } = await readFor(reader, 200);
    assert.equal(ended, false);
    assert.equal(contentOf(events), "You said: hello ");
    assert.ok(!events.includes("[DONE]"));
    controller.abort();
    await reader.read().catch(() => {});
  });

  test("slow: tokenMs between tokens", TEST_TIMEOUT, async () => {
    const started = Date.now();
    const { events } = await readSse(await chat("/llm/slow/v1/chat/completions?tokenMs=40&tokens=4"));
    assert.ok(Date.now() - started >= 150, `took ${Date.now() - started} ms`);
    assert.equal(contentOf(events), "You said: hello there. ");
  });

  test("garbage: a 200 with no SSE event and no text", TEST_TIMEOUT, async () => {
    const response = await chat("/llm/garbage/v1/chat/completions");
    assert.equal(response.status, 200);
    const { events, raw } = await readSse(response);
    assert.deepEqual(events, []);
    assert.ok(raw.length > 0);
  });

  test("comments: keep-alives, CRLF and odd splits still parse to the text", TEST_TIMEOUT, async () => {
    const response = await chat("/llm/comments/v1/chat/completions");
    const { events, raw, chunks } = await readSse(response);
    const text = contentOf(events);
    assert.equal(text, defaultAnswer(USER_TEXT, "comments"));
    assert.match(text, /é/);
    assert.match(text, /日本/);
    assert.match(text, /🙂/);
    const wire = raw.toString("utf8");
    assert.match(wire, /: keep-alive\r\n/);
    assert.match(wire, /\r\n\r\n\r\n/); // a stray blank line
    assert.match(wire, /\ndata:\{/); // "data:" without the optional space
    assert.ok(chunks > 10, `only ${chunks} network chunks`);
    assert.equal(events.at(-1), "[DONE]");
  });

  test("comments: the cut points fall inside 2-, 3- and 4-byte characters", () => {
    const bytes = Buffer.from("ab é 日本 🙂 done", "utf8");
    const cuts = oddCutPoints(bytes);
    for (const char of ["é", "日", "🙂"]) {
      const start = bytes.indexOf(Buffer.from(char, "utf8"));
      assert.ok(cuts.includes(start + 1), `no cut inside ${char}`);
    }
  });

  test("a client abort mid-stream is counted and ends the work", TEST_TIMEOUT, async () => {
    const controller = new AbortController();
    const response = await chat("/llm/slow/v1/chat/completions?tokenMs=30&tokens=100", chatBody(), { signal: controller.signal });
    const reader = response.body.getReader();
    const parser = new SseParser();
    let text = "";
    while (!text) {
      const { value } = await reader.read();
      text = contentOf(parser.push(value));
    }
    controller.abort();
    await reader.read().catch(() => {});
    const stats = await waitFor(async () => {
      const current = await getStats();
      return current.llm.scenarios.slow.aborted === 1 && current;
    }, 2000, "abort counted");
    assert.deepEqual(stats.llm.scenarios.slow, { requests: 1, completed: 0, aborted: 1 });
  });

  test("CORS preflight echoes the requested headers", TEST_TIMEOUT, async () => {
    const response = await fetch(`${base}/v1/chat/completions`, {
      method: "OPTIONS",
      headers: { origin: "http://example.test", "access-control-request-method": "POST", "access-control-request-headers": "authorization,content-type" },
    });
    assert.equal(response.status, 204);
    assert.equal(response.headers.get("access-control-allow-origin"), "*");
    assert.equal(response.headers.get("access-control-allow-headers"), "authorization,content-type");
  });
});

// ---------------------------------------------------------------------------
// Mock TTS

describe("mock TTS", () => {
  function tts(query, body) {
    return fetch(`${base}/tts${query}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body), signal: AbortSignal.timeout(3000) });
  }

  test("answers a 16-bit mono 24 kHz WAV, 60 ms per character", TEST_TIMEOUT, async () => {
    const response = await tts("", { text: "hello" });
    assert.equal(response.status, 200);
    assert.equal(response.headers.get("content-type"), "audio/wav");
    const wav = Buffer.from(await response.arrayBuffer());
    assert.equal(wav.toString("ascii", 0, 4), "RIFF");
    assert.equal(wav.readUInt32LE(4), wav.length - 8);
    assert.equal(wav.toString("ascii", 8, 12), "WAVE");
    assert.equal(wav.toString("ascii", 12, 16), "fmt ");
    assert.equal(wav.readUInt16LE(20), 1); // PCM
    assert.equal(wav.readUInt16LE(22), 1); // mono
    assert.equal(wav.readUInt32LE(24), 24000);
    assert.equal(wav.readUInt32LE(28), 48000);
    assert.equal(wav.readUInt16LE(34), 16);
    assert.equal(wav.toString("ascii", 36, 40), "data");
    const dataBytes = wav.readUInt32LE(40);
    assert.equal(dataBytes, 5 * 60 * 24 * 2); // 300 ms of 24 kHz 16-bit
    assert.equal(wav.length, 44 + dataBytes);
    assert.ok(wav.subarray(44).some((byte) => byte !== 0), "the tone is not silence");
    const again = Buffer.from(await (await tts("", { text: "hello" })).arrayBuffer());
    assert.ok(again.equals(wav), "deterministic");
  });

  test("duration is capped at 10 s", TEST_TIMEOUT, async () => {
    const wav = Buffer.from(await (await tts("", { text: "x".repeat(1000) })).arrayBuffer());
    assert.equal(wav.readUInt32LE(40), 10 * 24000 * 2);
  });

  test("faults, bad input and aborts are answered and counted", TEST_TIMEOUT, async () => {
    assert.equal((await tts("?fault=http500", { text: "hi" })).status, 500);
    assert.equal((await tts("", { text: "" })).status, 400);
    await assert.rejects(
      fetch(`${base}/tts?fault=hang`, { method: "POST", body: JSON.stringify({ text: "hi" }), signal: AbortSignal.timeout(100) }),
      { name: "TimeoutError" },
    );
    const stats = await waitFor(async () => {
      const current = await getStats();
      return current.tts.aborted === 1 && current;
    }, 2000, "tts abort counted");
    assert.equal(stats.tts.requests, 3);
    assert.deepEqual(stats.tts.recent.map((entry) => entry.fault), ["http500", "hang"]);
  });
});

// ---------------------------------------------------------------------------
// Mock live STT

describe("mock live STT", () => {
  test("provisions a session: 201 { id, url } with the ws URL", TEST_TIMEOUT, async () => {
    const { id, url } = await provisionOk();
    assert.match(id, /^[0-9a-f-]{36}$/);
    assert.equal(url, `ws://127.0.0.1:${stack.port}/v2/live/ws?token=${id}&mode=normal`);
    const prefixed = await provisionOk("/stt/echo_frames");
    assert.match(prefixed.url, /&mode=echo_frames$/);
    const stats = await getStats();
    assert.equal(stats.stt.modes.normal.provisions, 1);
    assert.equal(stats.stt.sessions[id].mode, "normal");
  });

  test("rejects an audio config the mock cannot honour", TEST_TIMEOUT, async () => {
    const response = await provision("", "", { encoding: "wav/pcm", sample_rate: 44100 });
    assert.equal(response.status, 400);
    assert.match((await response.json()).validation_errors[0], /sample_rate/);
  });

  test("normal: speech_start, partial, final per second of audio; stop ends the session", TEST_TIMEOUT, async () => {
    const { id, url } = await provisionOk();
    const client = connect(url);
    assert.equal(await client.opened, true);
    await client.waitForMessage((m) => m.type === "start_session", "start_session");

    for (let i = 0; i < 10; i += 1) client.ws.send(Buffer.alloc(3200)); // 1 s of PCM16 at 16 kHz
    const final = await client.waitForMessage((m) => m.type === "transcript" && m.data.is_final, "final transcript");
    assert.equal(final.session_id, id);
    assert.equal(final.data.utterance.text, "utterance 1");
    assert.equal(final.data.utterance.language, "en");
    assert.equal(final.data.utterance.start, 0);
    assert.equal(final.data.utterance.end, 1);

    const types = client.messages.filter((m) => m.type !== "audio_chunk").map((m) => (m.type === "transcript" ? `${m.type}:${m.data.is_final}` : m.type));
    assert.deepEqual(types, ["start_session", "start_recording", "speech_start", "transcript:false", "speech_end", "transcript:true"]);
    const partial = client.messages.find((m) => m.type === "transcript" && !m.data.is_final);
    assert.ok(final.data.utterance.text.startsWith(partial.data.utterance.text));
    const acks = client.messages.filter((m) => m.type === "audio_chunk");
    assert.equal(acks.length, 10);
    assert.ok(acks.every((m) => m.acknowledged === true));
    assert.deepEqual(acks.at(-1).data.byte_range, [28800, 32000]);

    // Half a second more as a JSON audio_chunk, then stop: the rest is finalised.
    client.ws.send(JSON.stringify({ type: "audio_chunk", data: { chunk: Buffer.alloc(16000).toString("base64") } }));
    client.ws.send(JSON.stringify({ type: "stop_recording" }));
    const closed = await withTimeout(client.closed, 2000, "close after stop_recording");
    assert.equal(closed.code, 1000);
    const finals = client.messages.filter((m) => m.type === "transcript" && m.data.is_final).map((m) => m.data.utterance.text);
    assert.deepEqual(finals, ["utterance 1", "utterance 2"]);
    const tail = client.messages.map((m) => m.type).slice(-3);
    assert.deepEqual(tail, ["transcript", "end_recording", "end_session"]);
    assert.ok(client.messages.some((m) => m.type === "stop_recording" && m.acknowledged === true));

    const stats = await waitFor(async () => {
      const current = await getStats();
      return current.stt.sessions[id].closeCodes.length === 1 && current;
    }, 2000, "close recorded");
    const session = stats.stt.sessions[id];
    assert.equal(session.connections, 1);
    assert.equal(session.open, 0);
    assert.equal(session.binaryFrames, 10);
    assert.equal(session.jsonChunks, 1);
    assert.equal(session.bytes, 48000);
    assert.equal(session.stopRecordings, 1);
    assert.equal(session.ended, true);
    assert.deepEqual(session.closeCodes, [1000]);
    assert.equal(stats.stt.modes.normal.connections, 1);
  });

  test("an unknown token is refused at the upgrade", TEST_TIMEOUT, async () => {
    const client = connect(`ws://127.0.0.1:${stack.port}/v2/live/ws?token=nope`);
    assert.equal(await client.opened, false);
    assert.match(String(client.failure()?.message), /404/);
  });

  test("close4403: accepted, then closed 4403, on every reconnect to that URL", TEST_TIMEOUT, async () => {
    const { url } = await provisionOk("/stt/close4403");
    for (let attempt = 0; attempt < 2; attempt += 1) {
      const client = connect(url);
      assert.equal(await client.opened, true);
      const { code } = await withTimeout(client.closed, 2000, "4403 close");
      assert.equal(code, 4403);
    }
    // With times=1 only the first session is dead: a re-provision works.
    await fetch(`${base}/__reset`, { method: "POST" });
    const dead = await provisionOk("/stt/close4403", "?times=1");
    assert.equal((await withTimeout(connect(dead.url).closed, 2000, "dead")).code, 4403);
    const fresh = await provisionOk("/stt/close4403", "?times=1");
    const client = connect(fresh.url);
    await client.waitForMessage((m) => m.type === "start_session", "start_session on a fresh session");
    client.ws.close(1000);
    await withTimeout(client.closed, 2000, "client close");
  });

  test("drop1006: the TCP socket is cut and the client sees 1006", TEST_TIMEOUT, async () => {
    const { url } = await provisionOk("/stt/drop1006");
    const client = connect(url);
    const { code } = await withTimeout(client.closed, 2000, "1006");
    assert.equal(code, 1006);
  });

  test("drop1006 with dropAfterMs and times=1: open a while, cut, the reconnect stays up", TEST_TIMEOUT, async () => {
    const { id, url } = await provisionOk("/stt/drop1006", "?dropAfterMs=100&times=1");
    const first = connect(url);
    const openedAt = Date.now();
    assert.equal(await first.opened, true);
    await first.waitForMessage((m) => m.type === "start_session", "start_session");
    assert.equal((await withTimeout(first.closed, 2000, "drop")).code, 1006);
    assert.ok(Date.now() - openedAt >= 90);

    const second = connect(url);
    assert.equal(await second.opened, true);
    await assert.rejects(withTimeout(second.closed, 200, "still open"), /timed out: still open/);
    second.ws.close(1000);
    await withTimeout(second.closed, 2000, "client close");
    const stats = await waitFor(async () => {
      const current = await getStats();
      return current.stt.sessions[id].closeCodes.length === 2 && current;
    }, 2000, "both closes recorded");
    assert.deepEqual(stats.stt.sessions[id].closeCodes, [1006, 1000]);
    assert.equal(stats.stt.sessions[id].connections, 2);
  });

  test("provision429/500/401: the POST fails, counted; times=N lets later ones through", TEST_TIMEOUT, async () => {
    const limited = await provision("/stt/provision429");
    assert.equal(limited.status, 429);
    assert.equal(limited.headers.get("retry-after"), "1");
    assert.equal((await limited.json()).statusCode, 429);
    assert.equal((await provision("/stt/provision500")).status, 500);
    assert.equal((await provision("/stt/provision401")).status, 401);

    await fetch(`${base}/__reset`, { method: "POST" });
    assert.equal((await provision("/stt/provision429", "?times=1")).status, 429);
    const ok = await provisionOk("/stt/provision429", "?times=1");
    assert.match(ok.url, /^ws:\/\//);
    const stats = await getStats();
    assert.equal(stats.stt.modes.provision429.provisions, 2);
    assert.equal(stats.stt.modes.provision429.provisionsRefused, 1);
  });

  test("slow_handshake: the upgrade answers after handshakeMs", TEST_TIMEOUT, async () => {
    const { url } = await provisionOk("/stt/slow_handshake", "?handshakeMs=150");
    const started = Date.now();
    const client = connect(url);
    assert.equal(await client.opened, true);
    assert.ok(Date.now() - started >= 140, `opened after ${Date.now() - started} ms`);
    client.ws.close(1000);
    await withTimeout(client.closed, 2000, "client close");
  });

  test("echo_frames: numbered frames keep their order across a reconnect", TEST_TIMEOUT, async () => {
    const { id, url } = await provisionOk("/stt/echo_frames", "?dropAfterFrames=3&times=1");
    const first = connect(url);
    assert.equal(await first.opened, true);
    for (const n of [0, 1, 2]) first.ws.send(numberedFrame(n));
    assert.equal((await withTimeout(first.closed, 2000, "drop after 3 frames")).code, 1006);

    const second = connect(url);
    assert.equal(await second.opened, true);
    for (const n of [3, 4, 5]) second.ws.send(numberedFrame(n, 320 + n));
    const stats = await waitFor(async () => {
      const current = await getStats();
      return current.stt.sessions[id].frameNumbers.length === 6 && current;
    }, 2000, "six frames recorded");
    const session = stats.stt.sessions[id];
    assert.deepEqual(session.frameNumbers, [0, 1, 2, 3, 4, 5]);
    assert.deepEqual(session.frameLengths, [640, 640, 640, 323, 324, 325]);
    assert.equal(session.connections, 2);
    assert.equal(stats.stt.modes.echo_frames.binaryFrames, 6);
    second.ws.close(1000);
    await withTimeout(second.closed, 2000, "client close");
  });

  test("upgrade404: a provisioned session whose every upgrade is refused with HTTP 404", TEST_TIMEOUT, async () => {
    const { id, url } = await provisionOk("/stt/upgrade404");
    for (let attempt = 0; attempt < 2; attempt += 1) {
      const client = connect(url);
      assert.equal(await client.opened, false);
      assert.match(String(client.failure()?.message), /404/);
    }
    const stats = await getStats();
    assert.equal(stats.stt.sessions[id].refused, 2);
    assert.equal(stats.stt.sessions[id].connections, 0);
    assert.equal(stats.stt.modes.upgrade404.refused, 2);
  });

  test("end_session: ends the session in use after endAfterFrames, closes 1000, refuses its URL after", TEST_TIMEOUT, async () => {
    const { id, url } = await provisionOk("/stt/end_session", "?endAfterFrames=3&times=1");
    const client = connect(url);
    assert.equal(await client.opened, true);
    for (const n of [0, 1, 2]) client.ws.send(numberedFrame(n));
    await client.waitForMessage((m) => m.type === "end_session", "end_session");
    assert.equal((await withTimeout(client.closed, 2000, "close after end_session")).code, 1000);
    assert.ok(!client.messages.some((m) => m.type === "end_recording"), "not a stop: no end_recording");
    const again = connect(url);
    assert.equal((await withTimeout(again.closed, 2000, "its URL is dead")).code, 4403);
    const stats = await getStats();
    assert.equal(stats.stt.sessions[id].sessionsOver, 1);
    assert.equal(stats.stt.sessions[id].ended, true);
    // times=1: the next session of the mode stays up.
    const fresh = await provisionOk("/stt/end_session", "?endAfterFrames=3&times=1");
    const second = connect(fresh.url);
    assert.equal(await second.opened, true);
    for (const n of [0, 1, 2, 3, 4]) second.ws.send(numberedFrame(n));
    await waitFor(async () => (await getStats()).stt.sessions[fresh.id].binaryFrames === 5, 2000, "frames");
    assert.ok(!second.messages.some((m) => m.type === "end_session"));
    second.ws.close(1000);
    await withTimeout(second.closed, 2000, "client close");
  });

  test("provision_hang: never answers; a client abort is counted", TEST_TIMEOUT, async () => {
    const abort = new AbortController();
    const pending = fetch(`${base}/stt/provision_hang/v2/live`, { method: "POST", body: "{}", signal: abort.signal });
    await waitFor(async () => (await getStats()).stt.modes.provision_hang?.provisions === 1, 2000, "request arrived");
    abort.abort();
    await assert.rejects(pending, /abort/i);
    await waitFor(async () => (await getStats()).stt.modes.provision_hang.provisionsAborted === 1, 2000, "abort counted");
  });

  test("provision_reset: the POST fails with a network error, no HTTP status", TEST_TIMEOUT, async () => {
    await assert.rejects(provision("/stt/provision_reset"), TypeError);
    const stats = await getStats();
    assert.equal(stats.stt.modes.provision_reset.provisionsRefused, 1);
  });

  test("big_frame: one text frame of bigFrameBytes shaped as a final, then a normal session", TEST_TIMEOUT, async () => {
    const { id, url } = await provisionOk("/stt/big_frame", "?bigFrameBytes=2000000");
    const ws = new WebSocket(url, { maxPayload: 0 });
    const sizes = [];
    const texts = [];
    ws.on("message", (data, isBinary) => {
      if (isBinary) return;
      sizes.push(data.length);
      if (data.length < 10_000) texts.push(JSON.parse(data.toString("utf8")));
    });
    await new Promise((resolve) => ws.once("open", resolve));
    await waitFor(() => sizes.length >= 2, 2000, "two frames");
    assert.equal(sizes[1], 2_000_000);
    for (let i = 0; i < 10; i += 1) ws.send(Buffer.alloc(3200));
    await waitFor(() => texts.some((m) => m.type === "transcript" && m.data.is_final), 2000, "a normal final");
    assert.equal((await getStats()).stt.sessions[id].bigFrames, 1);
    ws.close(1000);
  });
});

// ---------------------------------------------------------------------------
// Lifecycle

test("close() resolves with a hanging request and an open socket", TEST_TIMEOUT, async () => {
  const own = await startDevStack({ port: 0 });
  const ownBase = own.url.replace(/\/$/, "");
  const hanging = fetch(`${ownBase}/llm/hang/v1/chat/completions`, { method: "POST", body: "{}" }).catch((error) => error);
  const response = await fetch(`${ownBase}/v2/live`, { method: "POST", body: "{}" });
  const client = connect((await response.json()).url);
  assert.equal(await client.opened, true);
  await waitFor(() => own.stats.llm.scenarios.hang?.requests === 1, 2000, "hang request arrived");
  await withTimeout(own.close(), 2000, "close()");
  assert.ok((await hanging) instanceof Error);
  assert.equal((await withTimeout(client.closed, 2000, "socket closed")).code, 1006);
  assert.equal(own.stats.llm.scenarios.hang.aborted, 0, "our own shutdown is not a client abort");
});
