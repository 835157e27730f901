// The voice agent behind the "Talk to it" panel: microphone → LiveTranscriber (real recognition in
// the dev stack) → TurnController (two LLM routes) → TTS sentences → speakers, with barge-in.
//
// THE SEAM. turnguard's VoiceSession (issue 9) does this wiring inside the library, but it does not
// pass on what the timeline draws: the transcriber's state changes, each sentence, playback start,
// end and heard ms. So `createAgent` wires TurnController + LiveTranscriber + DemoPlayer itself;
// once VoiceSession reports those, the body of `createAgent` becomes `new VoiceSession({ routes, recoveryText, provision,
// synthesize, controller: { onEvent, onSentence, ... }, transcriber: { onStateChange, onError },
// onStateChange, onCaption, onTurn, onError })` with the same `routes`, `provision` and
// `synthesize` as below, and the page (voice.mjs) does not change: it only sees the hooks.
//
// Everything the timeline draws goes through `hooks.onTimeline(entry)`, and comes only from the
// library's onEvent / onStateChange / onError, the app's own provision() and synthesize() calls,
// and playback.

import { DemoPlayer } from "./player.mjs";

export const RECOVERY_TEXT = "Sorry, I lost my train of thought. Could you say that again?";
export const PERSONAS = {
  ava: "You are Ava, a calm and concise voice assistant. Answer in short spoken sentences.",
  max: "You are Max, an upbeat voice assistant. Answer in short spoken sentences.",
};
/** The controller's timing in the demo: short enough to watch a fallback happen. */
export const CONTROLLER_TIMING = { attemptTimeoutMs: 2500, firstChunkTimeoutMs: 2500, turnDeadlineMs: 6000, chunkIdleTimeoutMs: 1500 };
const TTS_TIMEOUT_MS = 3000;
const STT_MAX_BACKOFF_MS = 4000;
const STALL_AFTER_WORDS = 8;
const SLOW_TOKEN_MS = 120;

/** The dev stack URL of one LLM route for the failure switches `f`. */
export function llmUrl(route, f, upstream) {
  const params = new URLSearchParams({ reply: "chat" });
  let scenario = "ok";
  if (route === "primary") {
    if (f.primaryTimeout) scenario = "hang";
    else if (f.primary500) scenario = "http500";
    else if (f.primary401) scenario = "http401";
    else if (f.streamStalls) {
      scenario = "stall_after";
      params.set("after", String(STALL_AFTER_WORDS));
    } else if (upstream) return "/upstream/v1/chat/completions";
  } else if (f.fallbackSlow) {
    scenario = "slow";
    params.set("tokenMs", String(SLOW_TOKEN_MS));
  }
  return `/llm/${scenario}/v1/chat/completions?${params}`;
}

/** The provisioning URL (the app's backend, here the dev stack) for the STT switches. */
export function provisionUrl(f) {
  const params = new URLSearchParams();
  if (f.stt4403) params.set("mode", "close4403");
  else if (f.sttDrop) params.set("mode", "drop1006"), params.set("dropAfterMs", "1500"), params.set("times", "2");
  else if (f.sttDeadToken) params.set("mode", "dead_token");
  else if (f.provision429) params.set("mode", "provision429"), params.set("times", "2");
  return `/speech/v2/live${params.size > 0 ? `?${params}` : ""}`;
}

/** The words of `text` a listener heard when `fraction` of its audio played. */
export function heardWords(text, fraction) {
  const words = text.split(/\s+/).filter(Boolean);
  return words.slice(0, Math.floor(words.length * Math.min(1, Math.max(0, fraction)))).join(" ");
}

/**
 * `library`: the turnguard module. `failures()`: the switches now. `upstream`: whether the dev
 * stack proxies to a real model (the primary route then uses it).
 */
export function createAgent(library, { failures, upstream = null, hooks }) {
  const { TurnController, LiveTranscriber, openAiCompatibleRoute } = library;
  const mark = (entry) => hooks.onTimeline({ t: performance.now(), ...entry });
  const player = new DemoPlayer({
    onNeedsGesture: () => hooks.onNeedsGesture(),
    onPlaybackStart: (turnId) => {
      mark({ kind: "speech", turnId, phase: "start" });
      setState("speaking");
    },
    onPlaybackEnd: (turnId) => {
      mark({ kind: "speech", turnId, phase: "end" });
      if (current?.turnId === turnId && current.settled) setState("listening");
    },
  });
  let state = "idle";
  let current = null; // { turnId, settled, sentences: [{ text, ms }], chain, abort, ttsIndex }
  let turnCount = 0;
  let transcriber = null;
  const setState = (next) => {
    if (state !== next) hooks.onStateChange((state = next));
  };

  // A route whose attempts use the URL the switches give at the time of the attempt.
  const route = (name, persona, shareHistory) => ({
    name,
    persona,
    shareHistory,
    generate: (request) =>
      openAiCompatibleRoute({ name, url: llmUrl(name, failures(), upstream), model: upstream?.model ?? `mock-${persona}`, systemPrompt: PERSONAS[persona], persona, shareHistory }).generate(request),
  });

  const controller = new TurnController([route("primary", "ava", false), route("fallback", "max", true)], {
    recoveryText: RECOVERY_TEXT,
    ...CONTROLLER_TIMING,
    onEvent: (event) => mark({ kind: "turn", event }),
    onSentence: (turnId, sentence) => {
      mark({ kind: "sentence", turnId });
      hooks.onSentence(turnId, sentence);
      speak(turnId, sentence);
    },
    onAcceptedText: (turnId, text) => {
      const turn = turnOf(turnId);
      if (turn && turn.sentences.length === 0) speak(turnId, text); // a whole answer, not streamed
      hooks.onAnswer(turnId, { kind: "answer", text });
    },
    onRecovery: (turnId, text) => {
      speak(turnId, text);
      hooks.onAnswer(turnId, { kind: "recovery", text });
    },
  });

  const turnOf = (turnId) => (current?.turnId === turnId ? current : null);

  /** The app's synthesize(): the dev stack's espeak-ng TTS; the TTS switches break sentence 1 of each turn. */
  async function synthesize(text, { index, signal }) {
    const f = failures();
    const fault = index === 0 && f.tts500 ? "/http500" : index === 0 && f.ttsHang ? "/hang" : "";
    const response = await fetch(`/tts${fault}?voice=en-us`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ text }),
      signal: AbortSignal.any([signal, AbortSignal.timeout(TTS_TIMEOUT_MS)]),
    });
    if (!response.ok) throw Object.assign(new Error(`TTS answered ${response.status}`), { status: response.status });
    return response.arrayBuffer();
  }

  /** Synthesizes now (look-ahead), plays in order; a failed sentence is skipped and reported. */
  function speak(turnId, text) {
    const turn = turnOf(turnId);
    if (!turn || turn.cut) return;
    const entry = { text, skipped: false };
    turn.sentences.push(entry);
    const index = turn.ttsIndex++;
    const audio = synthesize(text, { index, signal: turn.abort.signal });
    audio.catch(() => {});
    turn.chain = turn.chain.then(async () => {
      let wav;
      try {
        wav = await audio;
      } catch (error) {
        if (turn.abort.signal.aborted) return;
        mark({ kind: "tts_error", turnId, index });
        hooks.onError({ code: error.name === "TimeoutError" ? "tts_timeout" : "tts_failed", terminal: false, message: `sentence ${index + 1} skipped: ${error.message}` });
        entry.skipped = true;
        return;
      }
      if (turn.cut) return;
      await player.enqueue(turnId, wav);
    });
  }

  /** Barge-in: the user talks while the agent thinks or speaks. */
  function bargeIn() {
    const turn = current;
    if (!turn || turn.cut || (state !== "thinking" && state !== "speaking")) return;
    turn.cut = true;
    mark({ kind: "barge_in", turnId: turn.turnId });
    controller.interrupt(turn.turnId);
    turn.abort.abort();
    const { heardMs, unheardMs } = player.stop(turn.turnId);
    mark({ kind: "speech", turnId: turn.turnId, phase: "cut", heardMs, unheardMs });
    const heard = heardText(turn, heardMs, unheardMs);
    controller.setHeardText(turn.turnId, heard || " ");
    hooks.onHeard(turn.turnId, heard);
    setState("listening");
  }

  /** The sentences played in full, and the whole words of the cut one in proportion to its audio. */
  function heardText(turn, heardMs, unheardMs) {
    const spoken = turn.sentences.filter((s) => !s.skipped);
    const total = heardMs + unheardMs;
    if (total <= 0) return "";
    // Sentence lengths in audio are proportional to their characters (espeak-ng speaks evenly).
    const chars = spoken.reduce((sum, s) => sum + s.text.length, 0);
    let left = (heardMs / total) * chars;
    const heard = [];
    for (const sentence of spoken) {
      if (left >= sentence.text.length) heard.push(sentence.text);
      else {
        heard.push(heardWords(sentence.text, left / sentence.text.length));
        break;
      }
      left -= sentence.text.length;
    }
    return heard.join(" ").trim();
  }

  async function startTurn(text) {
    if (state === "thinking" || state === "speaking") bargeIn();
    const turnId = `turn-${++turnCount}`;
    current = { turnId, settled: false, cut: false, sentences: [], chain: Promise.resolve(), abort: new AbortController(), ttsIndex: 0 };
    hooks.onTurnStart(turnId, text);
    setState("thinking");
    const record = await controller.run(turnId, text);
    const turn = turnOf(turnId);
    if (turn) {
      turn.settled = true;
      await turn.chain;
      if (current === turn && !turn.cut && player.turnId !== turnId) setState(transcriber ? "listening" : "idle");
    }
    hooks.onTurn(record);
    return record;
  }

  function startTranscriber() {
    const f = failures();
    transcriber = new LiveTranscriber({
      // Backoffs capped at 4 s instead of 30 s, so a failure plays out while you watch.
      policy: { maxDelayMs: STT_MAX_BACKOFF_MS },
      provision: async ({ signal }) => {
        const response = await fetch(provisionUrl(f), {
          method: "POST",
          signal,
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ encoding: "wav/pcm", sample_rate: 16000, bit_depth: 16, channels: 1 }),
        });
        mark({ kind: "provision", ok: response.ok, status: response.status });
        if (!response.ok) throw Object.assign(new Error(`provisioning answered ${response.status}`), { status: response.status });
        return response.json();
      },
      onPartial: (text) => {
        hooks.onCaption(text, false);
        if (text.trim()) bargeIn();
      },
      onFinal: (text) => {
        hooks.onCaption(text, true);
        startTurn(text);
      },
      onSpeechStart: () => bargeIn(),
      onStateChange: (sttState) => {
        mark({ kind: "stt_state", state: sttState });
        hooks.onSttState(sttState);
      },
      onError: (error) => {
        mark({ kind: "stt_error", code: error.code, terminal: error.terminal, frames: error.frames });
        hooks.onError({ code: error.code, terminal: error.terminal, message: error.message });
      },
    });
    return transcriber;
  }

  return {
    get state() {
      return state;
    },
    player,
    /** Starts listening: the STT connection always, the microphone when asked. */
    async start({ microphone = true } = {}) {
      const stt = startTranscriber();
      // A restart while the agent thinks or speaks leaves that state alone.
      if (state === "idle" || state === "stopped") setState("listening");
      await stt.start();
      if (microphone) await stt.attachMicrophone();
    },
    /** Stops the STT connection and starts a new one (the STT switches apply from then on). */
    async restartStt({ microphone = false } = {}) {
      const old = transcriber;
      transcriber = null;
      await old?.stop().catch(() => {});
      old?.free?.();
      await this.start({ microphone });
    },
    sendText: (text) => startTurn(text),
    interrupt: () => bargeIn(),
    resumeAudio: () => player.resume(),
    sttStats: () => transcriber?.stats ?? null,
    async stop() {
      const turn = current;
      if (turn && !turn.settled) controller.interrupt(turn.turnId);
      if (turn) player.stop(turn.turnId);
      await transcriber?.stop().catch(() => {});
      transcriber = null;
      setState("stopped");
    },
  };
}
