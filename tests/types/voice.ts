// The speech classes used the way an app would; checked by `tsc --strict --noEmit`.
import init, { openAiCompatibleSpeech, SpeechPlayer, VoiceSession, type SpeechStream, type Synthesize, type VoiceSessionEvent, type VoiceSessionState } from "turnguard";

await init();

const synthesize: Synthesize = async (text, { signal }) => {
  const response = await fetch("/tts", { method: "POST", signal, body: JSON.stringify({ text }) });
  return response.arrayBuffer();
};

const session = new VoiceSession({
  routes: [{ name: "primary", generate: ({ input }) => `You said ${input}.` }],
  recoveryText: "Sorry?",
  sessionId: "conversation-42.page-1",
  provision: async ({ signal }) => (await fetch("/api/stt", { method: "POST", signal })).json(),
  synthesize,
  controller: { turnDeadlineMs: 8000 },
  transcriber: { protocol: "gladia", bufferMs: 5000 },
  bargeIn: { minPartialChars: 3, echoGuardMs: 200 },
  onStateChange: (state: VoiceSessionState) => console.log(state),
  onCaption: (text, isFinal) => console.log(text, isFinal),
  onTurn: (record) => console.log(record.status),
  onError: (error) => console.warn(error.code),
  onEvent: (event) => {
    if (event.type === "playback_ended") console.log(event.turnId, event.heardMs.toFixed(0), event.cut);
    else if (event.type === "barge_in") console.log(event.cause);
    else if (event.type === "attempt_finished") console.log(event.route, event.result);
    else if (event.type === "transcriber_state") console.log(event.state, event.framesDropped);
    else if (event.type === "turn_latency") {
      const v2v: number | null = event.voiceToVoiceMs;
      const kept: boolean = event.preemptive === "kept";
      console.log(event.turnId, v2v, kept, event.firstSoundAt, event.routeCalledAt);
    } else if (event.type === "preemptive") console.log(event.kept, event.reason);
  },
  onSpeech: (turnId, text, { index, recovery }) => console.log(turnId, index, recovery, text.length),
  onHeard: (turnId, heardText) => console.log(turnId, heardText.length),
});
await session.start({ microphone: false });

// The recipes' shape: the protocol and its provision side by side.
new VoiceSession({
  routes: [{ name: "primary", generate: ({ input }) => input }],
  recoveryText: "Sorry?",
  synthesize,
  transcriber: { protocol: "deepgram", provision: async ({ signal, reason }) => (await fetch("/api/stt/deepgram", { method: "POST", signal, body: JSON.stringify({ reason }) })).json() },
}).free();
new VoiceSession({ routes: [], recoveryText: "Sorry?", synthesize, preemptive: true }).free();
new VoiceSession({ routes: [], recoveryText: "Sorry?", synthesize, preemptive: { eagerSilenceMs: 250 } }).free();
// @ts-expect-error preemptive takes only eagerSilenceMs
new VoiceSession({ routes: [], recoveryText: "Sorry?", synthesize, preemptive: { eagerMs: 250 } }).free();
await session.attachMicrophone(await navigator.mediaDevices.getUserMedia({ audio: true }));
session.sendText("hello");
session.interrupt();
const messages: { role: string; content: string }[] = session.history;
console.log(messages.length, session.state);
const sessionId: string = session.sessionId;
console.log(sessionId.length);
await session.stop();

const player = new SpeechPlayer({ onPlaybackEnd: (turnId, heardMs) => console.log(turnId, heardMs.toFixed(0)), onError: (error) => console.warn(error.code, error.callback) });
await player.enqueue("t1", new ArrayBuffer(8));
const heard: number = player.stop();
const state: "idle" | "playing" | "suspended" = player.state;
console.log(heard, state);
await player.resume();
player.free();

// Streamed speech: the OpenAI-compatible route, or a stream of raw PCM of your own.
const streamed: Synthesize = openAiCompatibleSpeech({ url: "/api/speech", model: "gpt-4o-mini-tts", voice: "alloy", format: "pcm", headers: { "x-session": "s" } });
const own: Synthesize = async (text, { signal }) => {
  const response = await fetch("/my-tts", { method: "POST", signal, body: text });
  const stream: SpeechStream = { stream: response.body!, format: "pcm16", sampleRate: 22050, channels: 1 };
  return stream;
};
new VoiceSession({ routes: [], recoveryText: "x", synthesize: streamed, onEvent: (event) => event.type === "underrun" && console.log(event.gapMs) });
const streamingPlayer = new SpeechPlayer({ onUnderrun: (turnId, gapMs) => console.log(turnId, gapMs), streamIdleTimeoutMs: 3000 });
await streamingPlayer.enqueue("t1", { stream: new ReadableStream<Uint8Array>(), format: "f32", sampleRate: 48000 });
console.log(own);
// @ts-expect-error a stream's format is pcm16 or f32
streamingPlayer.enqueue("t1", { stream: new ReadableStream<Uint8Array>(), format: "mp3", sampleRate: 24000 });

// @ts-expect-error a barge-in's cause is one of four
const cause: Extract<VoiceSessionEvent, { type: "barge_in" }>["cause"] = "cough";
console.log(cause);

// @ts-expect-error synthesize is required
new VoiceSession({ routes: [], recoveryText: "x" });
// @ts-expect-error audio is an ArrayBuffer or an AudioBuffer
player.enqueue("t1", "audio.wav");
