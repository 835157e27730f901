// Node, "turnguard/transcriber": the live speech-to-text entry resolves through the package's
// exports, `init()` with no argument reads its own wasm, its ReconnectPolicy classifies closes per
// protocol, and the entry has nothing of the turn ladder or the voice half. Prints one JSON line.
const transcriber = await import("turnguard/transcriber");
await transcriber.default();
const policy = new transcriber.ReconnectPolicy({ protocol: "assemblyai", jitter: "none", throttledDelayMs: 12_000 });
policy.onOpen(0);
const decision = policy.onClose(3009, 10);
const present = ["LiveTranscriber", "ReconnectPolicy", "gladiaProvisioner"].filter((name) => name in transcriber);
const absent = ["TurnController", "openAiCompatibleRoute", "VoiceSession", "SpeechPlayer"].filter((name) => !(name in transcriber));
console.log(JSON.stringify({ present, absent, decision }));
