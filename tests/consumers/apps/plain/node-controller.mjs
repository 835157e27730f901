// Node, "turnguard/controller": the turn ladder entry resolves through the package's exports,
// `init()` with no argument reads its own wasm, one turn runs, and the entry has nothing of the
// transcriber or the voice half. Prints one JSON line.
import { oneTurn } from "./turn.js";

const controller = await import("turnguard/controller");
await controller.default();
const result = await oneTurn(controller, process.argv[2]);
const absent = ["VoiceSession", "SpeechPlayer", "LiveTranscriber", "ReconnectPolicy"].filter((name) => !(name in controller));
console.log(JSON.stringify({ absent, ...result }));
