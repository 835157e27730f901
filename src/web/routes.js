// openAiCompatibleRoute's request side: POST a streaming chat completion with the attempt's
// signal, and hand the ladder the answer as a stream of text. The bytes are decoded by the core's
// SSE parser (a `ChatStreamDecoder` from `newDecoder()`).

export function chatRoute(spec, newDecoder) {
  const { name, url, model, headers, systemPrompt, persona, shareHistory, body } = spec;
  const route = {
    name,
    shareHistory,
    async generate({ requestId, input, signal, history }) {
      const messages = [];
      if (systemPrompt) messages.push({ role: "system", content: systemPrompt });
      if (history) messages.push(...history);
      messages.push({ role: "user", content: input });
      const response = await fetch(url, {
        method: "POST",
        signal,
        headers: {
          "content-type": "application/json",
          accept: "text/event-stream",
          "idempotency-key": requestId,
          ...headers,
        },
        body: JSON.stringify({ ...body, model, messages, stream: true }),
      });
      if (!response.ok || !response.body) {
        response.body?.cancel().catch(() => {});
        throw httpError(response.status);
      }
      return textStream(response.body, newDecoder());
    },
  };
  if (persona !== undefined) route.persona = persona;
  return route;
}

/** An error the ladder classifies by `status` (408, 429, 5xx retry; 400, 401, 403, 404, 422 do not). */
function httpError(status) {
  const error = new Error(`chat completion answered HTTP ${status}`);
  error.name = "HttpError";
  error.status = status;
  return error;
}

async function* textStream(body, decoder) {
  const reader = body.getReader();
  let finished = false;
  try {
    while (!decoder.done) {
      const { done, value } = await reader.read();
      if (done) {
        finished = true;
        yield* decoder.finish();
        break;
      }
      yield* decoder.push(value);
    }
    if (decoder.failed) {
      const error = new Error("chat completion reported an error in the stream");
      error.name = "StreamError";
      throw error;
    }
  } finally {
    // Stopped early ([DONE], an error, or the ladder no longer wants it): release the connection.
    if (!finished) reader.cancel().catch(() => {});
    decoder.free();
  }
}
