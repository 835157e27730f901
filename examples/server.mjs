// server.mjs: the provider keys stay here; the page calls /api/…
import { createServer } from "node:http";

const { env } = process;
const openAi = { authorization: `Bearer ${env.OPENAI_API_KEY}` };
const UPSTREAMS = {
  "/api/chat/primary": [env.PRIMARY_URL ?? "https://api.openai.com/v1/chat/completions", openAi],
  "/api/chat/fallback": [env.FALLBACK_URL ?? "https://api.groq.com/openai/v1/chat/completions", { authorization: `Bearer ${env.GROQ_API_KEY}` }],
  "/api/stt-session": [env.STT_URL ?? "https://api.gladia.io/v2/live", { "x-gladia-key": env.GLADIA_API_KEY }],
  "/api/tts": [env.TTS_URL ?? "https://api.openai.com/v1/audio/speech", openAi],
};
const CORS = {
  "access-control-allow-origin": env.APP_ORIGIN ?? "http://localhost:5173", // the page's origin
  "access-control-allow-methods": "POST",
  "access-control-allow-headers": "content-type, idempotency-key",
};

createServer(async (req, res) => {
  const upstream = UPSTREAMS[req.url];
  if (req.method === "OPTIONS") return res.writeHead(204, CORS).end(); // the preflight
  if (req.method !== "POST" || !upstream) return res.writeHead(404, CORS).end();
  const [url, auth] = upstream;
  const abort = new AbortController();
  res.on("close", () => abort.abort()); // the page gave up (barge-in, timeout): so does the provider
  const body = [];
  for await (const chunk of req) body.push(chunk);
  const key = req.headers["idempotency-key"];
  try {
    const answer = await fetch(url, {
      method: "POST",
      signal: abort.signal,
      headers: { "content-type": "application/json", ...auth, ...(key && { "idempotency-key": key }) },
      body: Buffer.concat(body),
    });
    res.writeHead(answer.status, { ...CORS, "content-type": answer.headers.get("content-type") ?? "text/plain" });
    for await (const chunk of answer.body ?? []) res.write(chunk); // server-sent events as they come
    res.end();
  } catch {
    if (res.headersSent) res.end();
    else res.writeHead(502, CORS).end();
  }
}).listen(env.PORT ?? 8787);
