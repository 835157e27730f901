//! The TypeScript types of the JS API that the generated signatures refer to.

use wasm_bindgen::prelude::*;

#[wasm_bindgen(typescript_custom_section)]
const CALLBACK_TYPES: &str = r#"
/**
 * What `onError` receives when an app callback threw (every class, one rule): not terminal, and
 * the class went on as if the callback had returned. A throwing `onError` is reported through
 * `onEvent` only, a throwing `onEvent` through `onError` only.
 */
export interface CallbackError extends Error {
  code: "callback_error";
  terminal: false;
  /** The callback that threw, e.g. `"onAcceptedText"`, `"onPartial"`, `"controller.onEvent"`. */
  callback: string;
  /** The turn the callback was called for, if any. */
  turnId?: string;
  /** What it threw. */
  cause: unknown;
}

/** The same report as an `onEvent` event. */
export interface CallbackErrorEvent {
  type: "callback_error";
  callback: string;
  turnId?: string;
  at: number;
}
"#;

#[cfg(feature = "controller")]
#[wasm_bindgen(typescript_custom_section)]
const TURN_TYPES: &str = r#"
/** What a route's `generate` receives for one attempt. */
export interface AttemptRequest {
  /** `"<turnId>:attempt:<n>"`, n from 1: unique per LLM call, usable as an idempotency key. */
  requestId: string;
  turnId: string;
  input: string;
  /** Aborts when this attempt times out, or the turn is interrupted, passes its deadline, or is disposed. */
  signal: AbortSignal;
  /** The conversation so far (accepted exchanges, trimmed to what was heard); only for routes with `shareHistory: true`. */
  history?: ChatMessage[];
}

/** A message of the conversation so far, as chat APIs take it. */
export interface ChatMessage {
  role: "user" | "assistant";
  content: string;
}

/** A stream of answer text: an async iterable or a `ReadableStream` of strings. */
export type TextStream = AsyncIterable<string> | ReadableStream<string>;

/**
 * One LLM backend. `generate` returns the answer text, a stream of it, or a promise of either.
 * Reject with `{ status }` for HTTP failures, `{ retryable: false }` for failures a fallback cannot fix.
 */
export interface Route {
  name: string;
  /** The voice and character this route answers in; fallbacks across personas follow `fallbackPolicy`. */
  persona?: string;
  /** Whether the conversation history is sent to this route (as `request.history`). Default false. */
  shareHistory?: boolean;
  generate(request: AttemptRequest): string | TextStream | Promise<string | TextStream>;
}

export type TurnStatus = "running" | "accepted" | "cancelled" | "exhausted";
export type AttemptResult = "running" | "accepted" | "timeout" | "error" | "cancelled" | "late" | "discarded";
/** Why a preemptive attempt was not kept (T17). */
export type DiscardReason =
  | "text_changed" | "history_changed" | "withdrawn" | "replaced" | "failed" | "expired";
/** What `runPreemptive` did: started one, one runs for that text, or why none started. */
export type PreemptiveStart = "started" | "running" | "too_late" | "limit" | "retry_budget" | "session_budget";
export type RecoveryReason =
  | "exhausted" | "deadline" | "non_retryable" | "persona" | "session_budget" | "retry_budget";
/** Why an attempt failed (the `FAILURE` table in glue.js); HTTP failures carry their status. */
export type AttemptError =
  | "timeout" | "network" | `http_${number}` | "route_error" | "route_error_non_retryable"
  | "no_text" | "stalled" | "answer_too_long";

/** One LLM call inside a turn. Times are epoch milliseconds. */
export interface Attempt {
  requestId: string;
  route: string;
  startedAt: number;
  finishedAt?: number;
  result: AttemptResult;
  error?: AttemptError;
  /** Started on an eager end of turn, before the final (T17). */
  preemptive?: true;
}

/** One user turn. Times are epoch milliseconds. */
export interface TurnRecord {
  turnId: string;
  input: string;
  status: TurnStatus;
  startedAt: number;
  deadlineAt: number;
  attempts: Attempt[];
  acceptedRequestId?: string;
  acceptedText?: string;
  recoveryReason?: RecoveryReason;
}

/** Every transition of the ladder, for logs and metrics. Never carries input, answers or headers. */
export type TurnEvent =
  | { type: "turn_started"; turnId: string; at: number }
  | { type: "attempt_started"; turnId: string; requestId: string; route: string; at: number; timeoutAt: number; preemptive?: true }
  | { type: "attempt_finished"; turnId: string; requestId: string; route: string; at: number; result: AttemptResult; error?: AttemptError; durationMs: number }
  | { type: "committed"; turnId: string; requestId: string; route: string; at: number; latencyMs: number }
  | { type: "accepted"; turnId: string; requestId: string; route: string; at: number; latencyMs: number }
  | { type: "recovered"; turnId: string; reason: RecoveryReason; at: number; latencyMs: number }
  | { type: "cancelled"; turnId: string; at: number }
  | { type: "preemptive"; turnId: string; requestId: string; at: number; kept: boolean; reason?: DiscardReason }
  /** A turn begun by `runPreemptive` whose final never came by its deadline: gone, without a record. */
  | { type: "turn_forgotten"; turnId: string; at: number }
  | CallbackErrorEvent;

export interface TurnControllerOptions {
  /** The fixed text spoken when no answer can be had in time or within budget. Never generated. */
  recoveryText: string;
  /** Called once per turn with the accepted answer. */
  onAcceptedText(turnId: string, text: string): void;
  /** Called once per exhausted turn with `recoveryText`. */
  onRecovery(turnId: string, text: string): void;
  /** Complete sentences of the accepted answer, in order, as they stream. Never one after an interrupt. */
  onSentence?(turnId: string, sentence: string): void;
  /** Every transition, for logs and metrics. */
  onEvent?(event: TurnEvent): void;
  /** A callback above threw (a `callback_error`; the controller went on). */
  onError?(error: CallbackError): void;
  /** Time from the start of a turn to recovery when nothing was accepted. Default 12000. */
  turnDeadlineMs?: number;
  /** Time one attempt may take, capped by the time left to the deadline. Default 6000. */
  attemptTimeoutMs?: number;
  /** Attempts per turn, the first included. Default 2. */
  maxAttemptsPerTurn?: number;
  /** Attempts per session; when spent, turns recover with `session_budget`. Default: no cap. */
  maxAttemptsPerSession?: number;
  /** Longest input in characters (Unicode scalar values). Default 4000. */
  maxInputChars?: number;
  /** Settled turn records kept. Default 1000. */
  historyLimit?: number;
  /** Longest answer in characters: a longer one is cut at its last complete sentence within it, its stream aborted, and the turn accepted with what went out. Default 4000. */
  maxAnswerChars?: number;
  /** Most history (user + assistant `content`, in characters) handed to a `shareHistory` route; the oldest exchanges are left out first. Default 16000. */
  historyMaxChars?: number;
  /** Retry throttling across turns (gRPC style): fallbacks only while tokens > maxTokens / 2. Defaults 10 and 1. */
  retryBudget?: { maxTokens?: number; tokenRatio?: number };
  /** Which fallbacks are automatic: any route, only one with the first route's persona, or none. Default "any". */
  fallbackPolicy?: "any" | "samePersona" | "none";
  /** Time from an attempt's start to its first text (the commit). Default: attemptTimeoutMs. */
  firstChunkTimeoutMs?: number;
  /** After the commit, a stream silent this long ends the turn with what was delivered. Default 5000. */
  chunkIdleTimeoutMs?: number;
}
"#;

#[cfg(feature = "transcriber")]
#[wasm_bindgen(typescript_custom_section)]
const RECONNECT_TYPES: &str = r#"
export interface ReconnectPolicyOptions {
  /** A socket must stay open this long before its close resets the backoff (inclusive). Default 5000. */
  stableOpenMs?: number;
  /** Sliding window that limits re-provisions. Default 300000. */
  reprovisionWindowMs?: number;
  /** Re-provisions allowed in any one window. Default 2. */
  maxReprovisionsPerWindow?: number;
  /** Cap of the first backoff delay. Default 500. */
  initialDelayMs?: number;
  /** Largest backoff delay. Default 30000. */
  maxDelayMs?: number;
  /** `"full"`: each delay uniform in [0, cap]; `"none"`: exactly the cap. Default "full". */
  jitter?: "full" | "none";
  /** Seed of the jitter PRNG (a whole number); random when absent. */
  randomSeed?: number;
  /** Sockets in a row that close before they open (e.g. an upgrade refused with HTTP 404) that make a URL dead: re-provision (R5). Default 3. */
  maxFailedConnects?: number;
  /** Retryable `provision()` failures (thrown, network, timeout, 408, 429, 5xx) in a row before giving up (L7). Default 5. */
  maxProvisionAttempts?: number;
  /** `new ReconnectPolicy` only: whose close codes `onClose` classifies (R2). Default "gladia" (4000–4999: the session is over). */
  protocol?: TranscriberProtocol;
  /** `new ReconnectPolicy` only: least delay after a close classified as throttled. Default 10000. */
  throttledDelayMs?: number;
}

export type ReconnectAction = "reconnect_same_url" | "reprovision" | "stop";
export type ReconnectReason =
  | "abnormal_close" | "normal_close" | "session_dead" | "reprovision_limit"
  | "client_detached" | "provision_failed" | "provision_rejected"
  | "dead_url" | "session_ended" | "dead_session" | "provision_exhausted"
  | "throttled" | "fatal_close";

/** What to do after a close or a failed provisioning: act after `delayMs`, or stop. */
export interface ReconnectDecision {
  action: ReconnectAction;
  delayMs: number;
  reason: ReconnectReason;
}
"#;

#[cfg(feature = "controller")]
#[wasm_bindgen(typescript_custom_section)]
const ROUTE_TYPES: &str = r#"
export interface OpenAiCompatibleRouteOptions {
  name: string;
  /** The chat-completions URL: normally your backend's proxy, which holds the provider key. */
  url: string;
  model: string;
  /** Extra request headers (e.g. your own session token). Never logged or recorded. */
  headers?: Record<string, string>;
  systemPrompt?: string;
  persona?: string;
  shareHistory?: boolean;
  /** Extra body fields (temperature, max_tokens, …); `model`, `messages` and `stream` are set by the route. */
  body?: Record<string, unknown>;
}
"#;

#[cfg(feature = "voice")]
#[wasm_bindgen(typescript_custom_section)]
const VOICE_TYPES: &str = r#"
export type SpeechPlayerState = "idle" | "playing" | "suspended";

export interface SpeechPlayerOptions {
  /** The context to play on; a new `AudioContext` when absent (closed by `free()`). */
  audioContext?: AudioContext;
  /** Where the speech goes (an effect chain, an analyser); `audioContext.destination` when absent. */
  destination?: AudioNode;
  /** The first audio of a turn was scheduled. */
  onPlaybackStart?(turnId: string): void;
  /** A turn's audio ran out or was stopped; `heardMs` is measured on the audio clock. */
  onPlaybackEnd?(turnId: string, heardMs: number): void;
  /** Audio waits on a context the browser keeps suspended: call `resume()` from a user gesture. */
  onNeedsGesture?(): void;
  /** A part of a stream started late, after `gapMs` of silence (the stream fell behind playback). */
  onUnderrun?(turnId: string, gapMs: number): void;
  /** A callback above threw (a `callback_error`; the player went on). */
  onError?(error: CallbackError): void;
  /** A stream that brings no bytes for this long is skipped. Default 8000. */
  streamIdleTimeoutMs?: number;
}

/**
 * Raw PCM streamed as it is synthesized: little-endian, interleaved by channel, chunks of any
 * size. It plays from its first chunk; Web Audio resamples `sampleRate` to the context's.
 */
export interface SpeechStream {
  stream: ReadableStream<Uint8Array>;
  format: "pcm16" | "f32";
  /** 8000 to 96000. */
  sampleRate: number;
  /** 1 to 8; default 1. */
  channels?: number;
}

/** The app's text-to-speech for one sentence: encoded audio (`decodeAudioData` formats), an `AudioBuffer`, or a `SpeechStream` of raw PCM played as it arrives. */
export type Synthesize = (
  text: string,
  request: { turnId: string; signal: AbortSignal },
) => Promise<ArrayBuffer | AudioBuffer | SpeechStream> | ArrayBuffer | AudioBuffer | SpeechStream;

export interface OpenAiCompatibleSpeechOptions {
  /** The `/v1/audio/speech` URL: normally your backend's proxy, which holds the provider key. */
  url: string;
  model: string;
  voice: string;
  /** Raw 24 kHz 16-bit mono PCM, streamed (the API's `pcm`). */
  format?: "pcm";
  /** Extra request headers (e.g. your own session token). Never logged or recorded. */
  headers?: Record<string, string>;
  /** Extra body fields (`speed`, `instructions`, …); `model`, `voice`, `input` and `response_format` are set. */
  body?: Record<string, unknown>;
}

export type VoiceSessionState = "idle" | "listening" | "thinking" | "speaking" | "stopped" | "failed";

/** A non-terminal problem of the speech path (the sentence was skipped), an error of the transcriber or a turn, or a `callback_error` (an app callback threw: `callback` names it, `cause` is what it threw). */
export interface VoiceSessionError extends Error {
  code?: string;
  terminal?: boolean;
  turnId?: string;
  callback?: string;
}

/** A `VoiceSession`'s own steps, as `onEvent` gets them: ids and timings only, never text. */
export type VoiceSessionEvent =
  | { type: "sentence_queued"; at: number; turnId: string; index: number; recovery: boolean }
  | { type: "tts_started"; at: number; turnId: string; index: number; recovery: boolean }
  | { type: "tts_finished"; at: number; turnId: string; index: number }
  | { type: "tts_failed"; at: number; turnId: string; index: number; code: "tts_failed" | "tts_timeout" }
  | { type: "playback_started"; at: number; turnId: string }
  | { type: "underrun"; at: number; turnId: string; gapMs: number }
  | { type: "sentence_audio"; at: number; turnId: string; index: number; startsInMs: number }
  | { type: "playback_ended"; at: number; turnId: string; heardMs: number; cut: boolean; unheardMs?: number }
  /** The turn was cut: by the user's words (`partial`, `final`), voice that lasted `confirmMs` while paused (`voice`), `interrupt()` (`button`), or, not by the user, the audio output closed under it (`output_closed`). */
  | { type: "barge_in"; at: number; turnId: string; cause: "voice" | "partial" | "final" | "button" | "output_closed" }
  /** The agent's echo in the microphone, measured once (V8): its mean level over the first second of its sound in which the detector heard no voice (dBFS), the return loss where the player's level is known, and whether it would pass for voice (the detector's threshold rises above it, and the provider's words need voice heard above it, while the agent sounds). */
  | { type: "echo"; at: number; echoDb: number; returnLossDb: number | null; raised: boolean }
  /** The session's `AudioContext` was closed under it (`stalled`: it ran with a clock that stood still); `replaced`: speech goes on in a new context of the session's own, at the default output. */
  | { type: "output_closed"; at: number; replaced: boolean; stalled: boolean }
  /** The user's voice (or the provider's speech start) paused the agent: silent, its place kept, the turn goes on. */
  | { type: "paused"; at: number; turnId: string; cause: "voice" | "speech_start" }
  /** Nothing confirmed the pause within `falseInterruptionMs`, or only backchannels: the agent went on where it paused. */
  | { type: "resumed"; at: number; turnId: string; pausedMs: number }
  | TurnLatencyEvent
  /** A final of only backchannel words while the agent spoke: it went on, no turn started. */
  | { type: "backchannel"; at: number; turnId: string }
  /** The page's voice detector (on the captured audio, after echo cancellation): the user started or stopped making sound, `atMs` milliseconds into the capture. */
  | { type: "vad"; at: number; speaking: boolean; atMs: number }
  | { type: "transcriber_state"; at: number; state: TranscriberState; provisions: number; connections: number; framesDropped: number }
  | { type: "transcriber_error"; at: number; code: string; terminal: boolean; status?: number; frames?: number }
  | { type: "provision_finished"; at: number; ok: boolean; status?: number }
  | MicrophoneRestoredEvent
  | MicrophoneChangedEvent
  | CallbackErrorEvent;

/**
 * Where one turn's time went, once per turn: at its first sound, or when it ends without one.
 * Marks are epoch milliseconds on the session's clock, `null` where that step never happened;
 * `firstSoundAt` is the audio clock's start of the first buffer carried over to that clock.
 */
export interface TurnLatencyEvent {
  type: "turn_latency";
  at: number;
  turnId: string;
  /** The user's last words: when the transcript last changed before the final (the final's time without a partial). */
  speechEndAt: number | null;
  finalAt: number | null;
  /** The answering attempt's route call; before `finalAt` when a preemptive attempt was kept. */
  routeCalledAt: number | null;
  firstTokenAt: number | null;
  firstSentenceAt: number | null;
  synthesizeAt: number | null;
  /** `synthesize`'s audio reached the page (resolved, or a stream's first chunk). */
  firstAudioAt: number | null;
  firstSoundAt: number | null;
  /** `firstSoundAt - speechEndAt`. */
  voiceToVoiceMs: number | null;
  preemptive: "not_tried" | "kept" | "discarded";
}

export interface VoiceSessionOptions {
  /** TurnController routes, in ladder order. */
  routes: Route[];
  /** The fixed text spoken when a turn has no answer (or none of its sentences could be synthesized). */
  recoveryText: string;
  /**
   * Names this session in its turn ids, `<sessionId>:turn-<n>`, and so in its request ids (the
   * `idempotency-key` a backend may deduplicate on): 1 to 128 letters, digits, `-`, `_` or `.`,
   * never reused by another session (e.g. your conversation id plus a page-load id). Default: 16
   * random hex digits from `crypto.getRandomValues`.
   */
  sessionId?: string;
  /** LiveTranscriber `provision()`; without it the session takes typed input only. */
  provision?: Provisioner;
  synthesize: Synthesize;
  audioContext?: AudioContext;
  destination?: AudioNode;
  /** TurnController options; the session sets `recoveryText`, `onSentence`, `onAcceptedText`, `onRecovery` and `onError` (a throwing `controller.onEvent` goes to the session's `onError`). */
  controller?: Partial<Omit<TurnControllerOptions, "recoveryText" | "onSentence" | "onAcceptedText" | "onRecovery" | "onError">>;
  /** LiveTranscriber options, `protocol` above all; `provision` here or at the top level (one of them); the session sets the callbacks. */
  transcriber?: Partial<Omit<LiveTranscriberOptions, "onPartial" | "onFinal" | "onSpeechStart" | "onStateChange" | "onError">>;
  /** What counts as the user talking over the agent: pauses, cuts and resumes (docs/semantics.md, V4 and V7). */
  bargeIn?: {
    minPartialChars?: number;
    echoGuardMs?: number;
    /** Voice heard this long while the agent thinks or speaks pauses it. Default 80; 0: voice never pauses. */
    minSpeechMs?: number;
    /** Voice this long cuts a pause without the transcriber's word. Default 800. */
    confirmMs?: number;
    /** A pause nothing confirms resumes this long after the voice ended. Default 1500. */
    falseInterruptionMs?: number;
  };
  /** A `synthesize` call slower than this is aborted and its sentence skipped; so is a stream that brings no bytes for this long. Default 8000. */
  ttsTimeoutMs?: number;
  /**
   * Preemptive attempts (T17), off by default: the provider's eager end of turn (Deepgram Flux's
   * `EagerEndOfTurn`, with `eager_eot_threshold` in its URL) or a partial unchanged for
   * `eagerSilenceMs` (default 300) starts the next turn's first attempt before its final. The
   * final keeps it when its words are the same and the history did not change; otherwise it is
   * aborted and never spoken.
   */
  preemptive?: boolean | { eagerSilenceMs?: number };
  /**
   * Words that never cut the agent while it speaks; a final of them alone starts no turn and is
   * reported as a `backchannel` event. Default: "uh huh", "mm hmm", "yeah", "yes", "okay",
   * "right", "sure", "got it", "ok", "yea", "yep", "yup", "mhm"; `[]` turns it off.
   */
  backchannels?: string[];
  onStateChange?(state: VoiceSessionState): void;
  onCaption?(text: string, isFinal: boolean): void;
  /** Each settled turn's record. */
  onTurn?(record: TurnRecord): void;
  onError?(error: VoiceSessionError): void;
  /** Speech waits on a suspended `AudioContext`: call `session.resume()` from a user gesture. */
  onNeedsGesture?(): void;
  /** Every TurnController event (after `controller.onEvent`, same object) and the session's own. */
  onEvent?(event: TurnEvent | VoiceSessionEvent): void;
  /** A sentence of the answer (or the recovery text) joined the speech queue, in order. */
  onSpeech?(turnId: string, text: string, info: { index: number; recovery: boolean }): void;
  /** A barge-in cut the turn's answer: what the user heard of it (also its history entry). */
  onHeard?(turnId: string, heardText: string): void;
}
"#;
