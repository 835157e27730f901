// The speech classes used the way an app would; checked by `tsc --strict --noEmit`.
import init, { SpeechPlayer, VoiceSession, type Synthesize, type VoiceSessionState } from "turnguard";

await init();

const synthesize: Synthesize = async (text, { signal }) => {
  const response = await fetch("/tts", { method: "POST", signal, body: JSON.stringify({ text }) });
  return response.arrayBuffer();
};

const session = new VoiceSession({
  routes: [{ name: "primary", generate: ({ input }) => `You said ${input}.` }],
  recoveryText: "Sorry?",
  provision: async ({ signal }) => (await fetch("/api/stt", { method: "POST", signal })).json(),
  synthesize,
  controller: { turnDeadlineMs: 8000 },
  transcriber: { bufferMs: 5000 },
  bargeIn: { minPartialChars: 3, echoGuardMs: 200 },
  onStateChange: (state: VoiceSessionState) => console.log(state),
  onCaption: (text, isFinal) => console.log(text, isFinal),
  onTurn: (record) => console.log(record.status),
  onError: (error) => console.warn(error.code),
});
await session.start({ microphone: false });
session.sendText("hello");
session.interrupt();
const messages: { role: string; content: string }[] = session.history;
console.log(messages.length, session.state);
await session.stop();

const player = new SpeechPlayer({ onPlaybackEnd: (turnId, heardMs) => console.log(turnId, heardMs.toFixed(0)) });
await player.enqueue("t1", new ArrayBuffer(8));
const heard: number = player.stop();
const state: "idle" | "playing" | "suspended" = player.state;
console.log(heard, state);
await player.resume();
player.free();

// @ts-expect-error synthesize is required
new VoiceSession({ routes: [], recoveryText: "x" });
// @ts-expect-error audio is an ArrayBuffer or an AudioBuffer
player.enqueue("t1", "audio.wav");
