// server.mjs: the provider keys stay here; the page calls /api/…
import { createServer } from "node:http";

const { env } = process;
const openAi = { authorization: `Bearer ${env.OPENAI_API_KEY}` };
// Passed through to the provider with the key added; the answer streams back as it comes.
const PROXIED = new Map([
  ["/api/chat/primary", [env.PRIMARY_URL ?? "https://api.openai.com/v1/chat/completions", openAi]],
  ["/api/chat/fallback", [env.FALLBACK_URL ?? "https://api.groq.com/openai/v1/chat/completions", { authorization: `Bearer ${env.GROQ_API_KEY}` }]],
  ["/api/tts", [env.TTS_URL ?? "https://api.openai.com/v1/audio/speech", openAi]],
]);
// Speech-to-text: POST /api/stt/<protocol> answers { url, protocols?, config? }, made here with
// the key, which the page's provision() returns unchanged. Gladia's route is at the end of this
// file; each other provider's is in docs/providers.md: add the ones you use after it.
const STT = new Map();
const CORS = {
  "access-control-allow-origin": env.APP_ORIGIN ?? "http://localhost:5173", // the page's origin
  "access-control-allow-methods": "POST",
  "access-control-allow-headers": "content-type, idempotency-key",
};

createServer(async (req, res) => {
  const { pathname } = new URL(req.url, "http://x"); // the path alone: a query string never makes a 404
  if (req.method === "OPTIONS") return res.writeHead(204, CORS).end(); // the preflight
  const proxied = PROXIED.get(pathname);
  const stt = STT.get(pathname);
  if (req.method !== "POST" || !(proxied || stt)) return res.writeHead(404, CORS).end();
  const abort = new AbortController();
  res.on("close", () => abort.abort()); // the page gave up (barge-in, timeout): so does the provider
  try {
    if (stt) {
      const session = await stt(abort.signal);
      return res.writeHead(200, { ...CORS, "content-type": "application/json" }).end(JSON.stringify(session));
    }
    const [url, auth] = proxied;
    const body = [];
    for await (const chunk of req) body.push(chunk);
    const key = req.headers["idempotency-key"];
    const answer = await fetch(url, {
      method: "POST",
      signal: abort.signal,
      headers: { "content-type": "application/json", ...auth, ...(key && { "idempotency-key": key }) },
      body: Buffer.concat(body),
    });
    res.writeHead(answer.status, { ...CORS, "content-type": answer.headers.get("content-type") ?? "text/plain" });
    for await (const chunk of answer.body ?? []) res.write(chunk); // server-sent events as they come
    res.end();
  } catch (error) {
    if (res.headersSent) res.end();
    else res.writeHead(error.status ?? 502, CORS).end(); // the provider's status: the page retries 408, 429, 5xx
  }
}).listen(env.PORT ?? 8787);

/** A provider's JSON answer, or an error carrying its HTTP status. */
async function providerJson(url, init) {
  const response = await fetch(url, init);
  if (!response.ok) throw Object.assign(new Error(`${new URL(url).host} answered ${response.status}`), { status: response.status });
  return response.json();
}

// Gladia live v2: a new session for each call, made with the key. Gladia answers { id, url }:
// the url is the session's only credential, and the page connects to it as it is.
STT.set("/api/stt/gladia", (signal) =>
  providerJson(`${env.GLADIA_API_URL ?? "https://api.gladia.io"}/v2/live`, {
    method: "POST",
    signal,
    headers: { "x-gladia-key": env.GLADIA_API_KEY, "content-type": "application/json" },
    body: JSON.stringify({ encoding: "wav/pcm", sample_rate: 16000, bit_depth: 16, channels: 1 }),
  }),
);
