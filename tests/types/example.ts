// Uses the public API the way an app would; `tsc --strict --noEmit` checks it against the
// generated declarations. The `@ts-expect-error` lines prove the types reject misuse. It needs no
// lib beyond `dom` and `es2022` (the consumer matrix checks it under several); `using` is in
// disposable.ts, for projects with `esnext.disposable`.
import init, {
  TurnController,
  type AttemptError,
  type Route,
  type TurnControllerOptions,
  type TurnEvent,
  type TurnRecord,
} from "turnguard";

await init();

const primary: Route = {
  name: "primary",
  async generate({ requestId, input, signal }) {
    const response = await fetch("/v1/chat/completions", {
      method: "POST",
      signal,
      headers: { "content-type": "application/json", "idempotency-key": requestId },
      body: JSON.stringify({ model: "primary", messages: [{ role: "user", content: input }] }),
    });
    if (!response.ok) throw Object.assign(new Error(`HTTP ${response.status}`), { status: response.status });
    const body: { choices: { message: { content: string } }[] } = await response.json();
    return body.choices[0]?.message.content ?? "";
  },
};

const options: TurnControllerOptions = {
  recoveryText: "Sorry, could you say that again?",
  turnDeadlineMs: 8000,
  attemptTimeoutMs: 3000,
  maxAttemptsPerSession: 200,
  retryBudget: { maxTokens: 10, tokenRatio: 0.1 },
  onAcceptedText: (turnId: string, text: string) => console.log(turnId, text.length),
  onRecovery: (_turnId, text) => console.log(text.length),
  onEvent(event: TurnEvent) {
    if (event.type === "attempt_finished") {
      const duration: number = event.durationMs;
      console.log(event.requestId, event.result, duration);
    }
  },
};

const controller = new TurnController([primary, { name: "fallback", generate: () => "ok" }], options);
const record: TurnRecord = await controller.run("turn-1", "hello");
const status: "running" | "accepted" | "cancelled" | "exhausted" = record.status;
const firstResult = record.attempts[0]?.result;
const interrupted: boolean = controller.interrupt("turn-1");
const again: TurnRecord | undefined = controller.getTurn("turn-1");
console.log(status, firstResult, interrupted, again?.acceptedText);
controller.free();

// @ts-expect-error recoveryText is required
new TurnController([primary], { onAcceptedText() {}, onRecovery() {} });
// @ts-expect-error a route needs generate
new TurnController([{ name: "broken" }], options);
// @ts-expect-error status is a closed set
const wrong: TurnRecord["status"] = "done";
console.log(wrong);
const failure: AttemptError | undefined = record.attempts[0]?.error;
const httpFailure: AttemptError = "http_503";
console.log(failure, httpFailure);
// @ts-expect-error errors are codes, never messages
const message: AttemptError = "HTTP 503";
console.log(message);

// Streaming routes, personas and the reconnect policy.
import {
  openAiCompatibleRoute,
  ReconnectPolicy,
  LiveTranscriber,
  gladiaProvisioner,
  type ReconnectDecision,
  type Provisioner,
  type TranscriberState,
  type TranscriberError,
} from "turnguard";

const streaming = openAiCompatibleRoute({
  name: "proxy",
  url: "/api/chat",
  model: "gpt-4o-mini",
  systemPrompt: "You are Ava.",
  persona: "ava",
  shareHistory: true,
  body: { temperature: 0.3 },
});
const words: Route = {
  name: "words",
  persona: "ava",
  async *generate() {
    yield "Hello ";
    yield "there.";
  },
};
const talking = new TurnController([streaming, words], {
  ...options,
  fallbackPolicy: "samePersona",
  firstChunkTimeoutMs: 1500,
  chunkIdleTimeoutMs: 2000,
  onSentence: (turnId: string, sentence: string) => console.log(turnId, sentence.length),
});
const heard: boolean = talking.setHeardText("turn-1", "Hello");
console.log(heard);

const policy = new ReconnectPolicy({ stableOpenMs: 5000, jitter: "full", randomSeed: 7 });
policy.onOpen(performance.now());
const decision: ReconnectDecision = policy.onClose(4403, performance.now());
if (decision.action === "reprovision") console.log(decision.delayMs, decision.reason, policy.backoffAttempt);
new ReconnectPolicy().onClientDetach();

// Live transcription with an app-side provisioner (the page never holds the provider key).
const provision: Provisioner = async ({ signal }) => {
  const response = await fetch("/api/stt-session", { method: "POST", signal });
  if (!response.ok) throw Object.assign(new Error(`HTTP ${response.status}`), { status: response.status });
  return response.json();
};
const transcriber = new LiveTranscriber({
  provision,
  policy: { initialDelayMs: 250, maxFailedConnects: 3, maxProvisionAttempts: 5 },
  bufferMs: 5000,
  provisionTimeoutMs: 10_000,
  maxMessageBytes: 1 << 20,
  onPartial: (text) => console.log(text.length),
  onFinal: (text, meta) => void talking.run(`utterance-${meta.utterance}`, text),
  onSpeechStart: () => talking.interrupt("turn-1"),
  onStateChange: (state: TranscriberState) => console.log(state),
  onError: (error: TranscriberError) => console.log(error.code, error.terminal),
});
await transcriber.start();
await transcriber.attachMicrophone();
await transcriber.attachMicrophone(undefined, { workletUrl: "/assets/capture-worklet.js" });
await transcriber.attachMicrophone({ workletUrl: "/assets/capture-worklet.js" });
if (decision.reason === "dead_url" || decision.reason === "session_ended") console.log(policy.failedConnects);
policy.onProvisioned();
console.log(policy.onSessionEnded(performance.now()).action);
const transcriberFailure = (error: TranscriberError) => error.code === "dead_session" || error.code === "worklet_blocked" ? error.attempts : 0;
console.log(transcriberFailure);
transcriber.sendAudio(new Int16Array(320));
console.log(transcriber.state, transcriber.stats.framesSent);
await transcriber.stop();

// @ts-expect-error provision is required
new LiveTranscriber({});
// @ts-expect-error audio is PCM16
transcriber.sendAudio(new Float32Array(320));
