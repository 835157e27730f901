import { useState } from "react";
import { openAiCompatibleRoute } from "turnguard";
import { useVoiceSession } from "./useVoiceSession.js";

// The README's server.mjs (or your own backend): it holds the provider keys.
const BACKEND = new URLSearchParams(location.search).get("backend") ?? "http://localhost:8787";

async function post(path, body, signal) {
  const response = await fetch(`${BACKEND}${path}`, {
    method: "POST",
    signal,
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  if (!response.ok) throw Object.assign(new Error(`HTTP ${response.status}`), { status: response.status });
  return response;
}

// Made at each mount, after main.jsx's `await init()` (imports run before it).
const agentOptions = () => ({
  routes: [
    openAiCompatibleRoute({ name: "primary", url: `${BACKEND}/api/chat/primary`, model: "gpt-4o-mini", shareHistory: true }),
    openAiCompatibleRoute({ name: "fallback", url: `${BACKEND}/api/chat/fallback`, model: "llama-3.1-8b-instant", shareHistory: true }),
  ],
  recoveryText: "Sorry, I lost my train of thought. Could you say that again?",
  // The backend's { url, protocols?, config? } for the provider, unchanged (docs/providers.md).
  transcriber: {
    protocol: "gladia",
    provision: async ({ signal, reason }) => (await post("/api/stt/gladia", { reason }, signal)).json(),
  },
  synthesize: async (text, { signal }) =>
    (await post("/api/tts", { model: "gpt-4o-mini-tts", voice: "alloy", input: text }, signal)).arrayBuffer(),
});

function Agent() {
  const { state, caption, answer, error, start, talk, send, interrupt, stop } = useVoiceSession(agentOptions);
  const [text, setText] = useState("");
  return (
    <section>
      <p>
        Agent: <output id="state">{state}</output> {error && <strong id="error">{error}</strong>}
      </p>
      {state === "idle" ? (
        <button id="start" onClick={start}>Start</button>
      ) : (
        <>
          <form
            onSubmit={(event) => {
              event.preventDefault();
              send(text);
              setText("");
            }}
          >
            <input id="say" value={text} onChange={(event) => setText(event.target.value)} placeholder="Type to the agent" />
            <button id="send">Send</button>
          </form>
          <button id="talk" onClick={talk}>Talk</button>
          <button id="interrupt" onClick={interrupt}>Interrupt</button>
          <button id="stop" onClick={stop}>Hang up</button>
        </>
      )}
      <p>You: <span id="caption">{caption}</span></p>
      <p>Agent says: <span id="answer">{answer.text}</span></p>
    </section>
  );
}

export function App() {
  const [open, setOpen] = useState(true);
  return (
    <main>
      <button id="toggle" onClick={() => setOpen((shown) => !shown)}>{open ? "Close the agent" : "Open the agent"}</button>
      {open && <Agent />}
    </main>
  );
}
