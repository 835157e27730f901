// One real turn, the same in every consumer: the primary route answers HTTP 500 (the dev stack's
// failing mock), the fallback answers, and exactly one answer is spoken. `turnguard` is the
// package's namespace as the consumer imported it; `llm` is the dev stack's base URL.
export async function oneTurn(turnguard, llm) {
  const { TurnController, openAiCompatibleRoute } = turnguard;
  const route = (name, scenario) =>
    openAiCompatibleRoute({ name, model: name, url: new URL(`/llm/${scenario}/v1/chat/completions`, llm).href });
  const spoken = [];
  const controller = new TurnController([route("primary", "http500"), route("fallback", "ok")], {
    recoveryText: "Sorry, could you say that again?",
    turnDeadlineMs: 10000,
    attemptTimeoutMs: 5000,
    onAcceptedText: (turnId, text) => spoken.push(text),
    onRecovery: (turnId, text) => spoken.push(`recovery: ${text}`),
  });
  try {
    const record = await controller.run("turn-1", "Hello from a consumer");
    return {
      status: record.status,
      attempts: record.attempts.map((attempt) => `${attempt.route}:${attempt.result}`).join(" "),
      spoken,
    };
  } finally {
    controller.free();
  }
}

/** Reports a page's outcome where the test reads it. */
export function report(work) {
  work.then(
    (result) => (globalThis.__consumer = { ok: true, result }),
    (error) => (globalThis.__consumer = { ok: false, error: String(error?.stack ?? error) }),
  );
}

/** Runs `oneTurn` in `worker` (whose module answers a posted dev stack URL with the outcome). */
export function turnInWorker(worker, llm) {
  return new Promise((resolve, reject) => {
    worker.onmessage = ({ data }) => (data.ok ? resolve(data.result) : reject(new Error(data.error)));
    worker.onerror = (event) => reject(new Error(`worker error: ${event.message}`));
    worker.postMessage(llm);
  });
}

/** The dev stack's URL, from the page's `?llm=` parameter. */
export const llmFromPage = () => new URL(location.href).searchParams.get("llm");
