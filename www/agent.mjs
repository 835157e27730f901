// The voice agent behind the "Talk to it" panel: one turnguard `VoiceSession` — microphone →
// LiveTranscriber (real recognition in the dev stack) → TurnController (two LLM routes) → TTS
// sentences → speakers, with barge-in — configured for the dev stack and the failure switches.
//
// THE SEAM. Everything the page shows comes from the session's callbacks, passed on as they are:
// `onEvent` (the controller's events and the session's own: sentences, TTS, playback, barge-ins,
// the transcriber's states and provisions), `onStateChange`, `onError`, `onCaption`, `onSpeech`,
// `onHeard`, `onTurn`, `onNeedsGesture`. The timeline (timeline.mjs) draws from the first three
// only, so it shows exactly what an app could log.

export const RECOVERY_TEXT = "Sorry, I lost my train of thought. Could you say that again?";
export const PERSONAS = {
  ava: "You are Ava, a calm and concise voice assistant. Answer in short spoken sentences.",
  max: "You are Max, an upbeat voice assistant. Answer in short spoken sentences.",
};
/** The controller's timing in the demo: short enough to watch a fallback happen. */
export const CONTROLLER_TIMING = { attemptTimeoutMs: 2500, firstChunkTimeoutMs: 2500, turnDeadlineMs: 6000, chunkIdleTimeoutMs: 1500 };
/** The session's `ttsTimeoutMs`: a hung TTS request is skipped after this. */
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

/**
 * The mock switches of the STT failures checked in `f` (`{ "<protocol>.<id>": true }`) for
 * `protocol` (a descriptor from GET /__protocols): `{ socket, token }`, each a query string.
 */
export function sttSwitches(protocol, f) {
  const on = protocol.failures.filter((failure) => f[`${protocol.name}.${failure.id}`]);
  const join = (part) => on.map((failure) => failure[part]).filter(Boolean).join("&");
  return { socket: join("socket"), token: join("token") };
}

/**
 * What the demo asks of a protocol's socket beyond its descriptor's URL, by protocol name:
 * Deepgram Flux's eager end of turn (`eager_eot_threshold`: a real app's backend puts it in the
 * URL it hands out; here the page passes it to the dev stack's backend route with the rest of the
 * socket query), which starts the session's preemptive attempts, and the mock's lead of EndOfTurn
 * after its EagerEndOfTurn (`mock_eager_lead_ms`, mock only) so that the early start shows on the
 * timeline. Every other protocol needs nothing: the session guesses from a still partial.
 */
export const EAGER_SOCKET = Object.freeze({ "deepgram-flux": "eager_eot_threshold=0.5&mock_eager_lead_ms=250" });

/**
 * The socket query the page hands its backend route for `protocol` with the switches `f`: the
 * real recognizer, the protocol's eager end of turn (EAGER_SOCKET), the checked STT switches.
 */
export function socketQuery(protocol, f) {
  // The demo's mocks hear with pocketsphinx (recognizers.mjs): what you say comes back.
  return ["recognizer=speech", EAGER_SOCKET[protocol.name], sttSwitches(protocol, f).socket].filter(Boolean).join("&");
}

/**
 * The app's provision(): a call to its backend, which holds the provider key and runs the
 * protocol's recipe (here the dev stack's POST /api/stt/<name>, www/devstack/protocols.mjs). The
 * switches as they were when the session started; `key` names the mocks' counters.
 */
export function provisioner(protocol, f, key) {
  const switches = sttSwitches(protocol, f);
  const socket = socketQuery(protocol, f);
  return async ({ signal, reason }) => {
    const response = await fetch(`/api/stt/${protocol.name}`, {
      method: "POST",
      signal,
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ reason, key, token: switches.token, socket }),
    });
    if (!response.ok) throw Object.assign(new Error(`provisioning answered ${response.status}`), { status: response.status });
    return response.json();
  };
}

/**
 * `library`: the turnguard module. `failures()`: the switches now. `protocols`: the dev stack's
 * list (GET /__protocols); `protocol()`: the name picked now. `upstream`: whether the dev stack
 * proxies to a real model (the primary route then uses it). `hooks`: the session's callbacks for
 * the panel, each called with what the session gave, plus `onSession(n)` when a new session (the
 * n-th) replaces the last.
 */
export function createAgent(library, { failures, protocols, protocol, upstream = null, hooks, bargeIn = undefined }) {
  const { VoiceSession, openAiCompatibleRoute, openAiCompatibleSpeech } = library;
  // One audio graph for every session: the sessions play into an analyser, so the page (and its
  // test) can see that sound came out.
  const context = new AudioContext();
  const analyser = context.createAnalyser();
  analyser.fftSize = 1024;
  analyser.connect(context.destination);
  // A context the browser suspends needs a click to run again. The session suspends it too, to
  // pause the agent for the user's voice (its `paused` event comes first), and runs it again
  // when the pause ends, within milliseconds when a cut comes with the pause: neither needs one.
  let pausedForVoice = false;
  const needsGesture = () => context.state === "suspended" && !pausedForVoice;
  context.addEventListener("statechange", () => needsGesture() && setTimeout(() => needsGesture() && hooks.onNeedsGesture(), 200));
  const followPause = (event) => {
    if (event.type === "paused") pausedForVoice = true;
    else if (["resumed", "barge_in", "playback_ended", "output_closed"].includes(event.type)) pausedForVoice = false;
  };
  const player = {
    context,
    get suspended() {
      return context.state === "suspended";
    },
    /** The loudest output sample now (0 when silent). */
    level() {
      const samples = new Float32Array(analyser.fftSize);
      analyser.getFloatTimeDomainData(samples);
      return samples.reduce((peak, sample) => Math.max(peak, Math.abs(sample)), 0);
    },
  };

  // A route whose attempts use the URL the switches give at the time of the attempt.
  const route = (name, persona, shareHistory) => ({
    name,
    persona,
    shareHistory,
    generate: (request) =>
      openAiCompatibleRoute({ name, url: llmUrl(name, failures(), upstream), model: upstream?.model ?? `mock-${persona}`, systemPrompt: PERSONAS[persona], persona, shareHistory }).generate(request),
  });
  const routes = [route("primary", "ava", false), route("fallback", "max", true)];

  /**
   * The app's synthesize(): the dev stack's espeak-ng, streamed through openAiCompatibleSpeech
   * (played from its first bytes), or whole sentences from /tts with the "whole-sentence" switch.
   * The TTS switches break the first sentence of each turn. Each stream's first bytes are marked
   * on the timeline (`tts_first_byte`), beside the session's `sentence_audio` (first sound).
   */
  const asked = new Map(); // turnId → sentences asked for
  async function synthesize(text, { turnId, signal }) {
    const index = asked.get(turnId) ?? 0;
    asked.set(turnId, index + 1);
    const f = failures();
    if (!f.wholeSentenceTts && openAiCompatibleSpeech) {
      const fault = index === 0 && f.tts500 ? "/http500" : index === 0 && f.ttsHang ? "/hang" : index === 0 && f.ttsStall ? "/stall" : "";
      const speech = openAiCompatibleSpeech({ url: `/v1/audio/speech${fault}`, model: "espeak-ng", voice: "en-us" });
      const audio = await speech(text, { turnId, signal });
      let first = true;
      const marked = audio.stream.pipeThrough(
        new TransformStream({
          transform(chunk, controller) {
            if (first) {
              first = false;
              hooks.onEvent({ type: "tts_first_byte", at: Date.now(), turnId, index });
            }
            controller.enqueue(chunk);
          },
        }),
      );
      return { ...audio, stream: marked };
    }
    const fault = index === 0 && f.tts500 ? "/http500" : index === 0 && f.ttsHang ? "/hang" : "";
    const response = await fetch(`/tts${fault}?voice=en-us`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ text }),
      signal,
    });
    if (!response.ok) throw Object.assign(new Error(`TTS answered ${response.status}`), { status: response.status });
    return response.arrayBuffer();
  }

  // The page opens the microphone itself and hands the stream to the session: reopening it must
  // release the old capture first (a fake capture device then plays its file again), while the
  // library's own attachMicrophone() opens the new capture before it lets the old one go.
  let stream = null;
  async function openMicrophone() {
    for (const track of stream?.getTracks() ?? []) track.stop();
    stream = await navigator.mediaDevices.getUserMedia({
      audio: { channelCount: 1, echoCancellation: true, noiseSuppression: true, autoGainControl: true },
    });
    return stream;
  }
  const listen = (microphone) => (microphone ? openMicrophone().then((media) => session.start({ microphone: media })) : session.start({ microphone: false }));

  let session = null;
  let generation = 0;
  function newSession() {
    generation += 1;
    pausedForVoice = false;
    hooks.onSession(generation);
    const mine = generation;
    // A replaced session's late callbacks (its stop) are not the page's any more.
    const live = (callback) => (...args) => mine === generation && callback(...args);
    const chosen = protocols.find((entry) => entry.name === protocol()) ?? protocols.find((entry) => entry.default) ?? protocols[0];
    const wire = chosen.name;
    return new VoiceSession({
      routes,
      recoveryText: RECOVERY_TEXT,
      provision: provisioner(chosen, failures(), `demo-${Date.now()}-${mine}`),
      synthesize,
      audioContext: context,
      destination: analyser,
      ttsTimeoutMs: TTS_TIMEOUT_MS,
      controller: CONTROLLER_TIMING,
      // Preemptive attempts (T17): an eager end of turn (Flux's EagerEndOfTurn, else a partial
      // still for 300 ms) starts the first LLM attempt before the final; the final keeps or
      // discards it. Each turn's `turn_latency` event (onEvent) shows what it gained.
      preemptive: true,
      // What pauses and cuts the agent (the room tries other values: npm run room -- --min-speech-ms).
      bargeIn,
      // Backoffs capped at 4 s instead of 30 s, so a failure plays out while you watch.
      // Each close, with its code and class, goes to the timeline as the transcriber reports it.
      transcriber: {
        protocol: wire,
        policy: { maxDelayMs: STT_MAX_BACKOFF_MS },
        onEvent: live((event) => hooks.onEvent({ ...event, type: `transcriber_${event.type}`, protocol: wire })),
      },
      onEvent: live((event) => {
        followPause(event);
        hooks.onEvent(event);
      }),
      onStateChange: live(hooks.onStateChange),
      onError: live(hooks.onError),
      onCaption: live(hooks.onCaption),
      onSpeech: live(hooks.onSpeech),
      onHeard: live(hooks.onHeard),
      onTurn: live(hooks.onTurn),
      onNeedsGesture: live(hooks.onNeedsGesture),
    });
  }
  session = newSession();

  return {
    get state() {
      return session.state;
    },
    /** The current session's id: its turn ids are `<sessionId>:turn-<n>`. */
    get sessionId() {
      return session.sessionId;
    },
    player,
    /** Starts listening: the STT connection always, the microphone when asked. */
    start: ({ microphone = true } = {}) => listen(microphone),
    /** Opens the microphone again (or for the first time): a new capture of the same connection. */
    attachMicrophone: async () => session.attachMicrophone(await openMicrophone()),
    /**
     * A new session, so the STT switches apply: a VoiceSession's transcriber ends with it, and
     * the conversation (history, turn ids) starts over with the new one.
     */
    async restartStt({ microphone = false } = {}) {
      const old = session;
      session = newSession();
      await old.stop().catch(() => {});
      old.free();
      await listen(microphone);
    },
    /** A new session that has not started: the next start uses the protocol and switches now. */
    replace() {
      const old = session;
      session = newSession();
      old.stop().catch(() => {}).finally(() => old.free());
    },
    sendText: (text) => session.sendText(text),
    interrupt: () => session.interrupt(),
    resumeAudio: () => session.resume(),
    get history() {
      return session.history;
    },
    async stop() {
      await session.stop();
      for (const track of stream?.getTracks() ?? []) track.stop();
    },
  };
}
