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

/** The wire protocols the demo can use, each with the local recognizer behind its dev-stack mock. */
export const PROTOCOLS = Object.freeze(["gladia", "deepgram", "assemblyai", "openai", "speechmatics", "soniox", "elevenlabs"]);

/** The Deepgram socket URL (`origin` as ws:// or wss://) for the switches `f`; `key` names the mock's counters. */
export function deepgramSocketUrl(origin, f, key) {
  const params = new URLSearchParams({ model: "nova-3", encoding: "linear16", sample_rate: "16000", channels: "1", interim_results: "true", utterance_end_ms: "1000", vad_events: "true", endpointing: "300", recognizer: "speech", mock_key: key });
  if (f.dgDrop) params.set("mock_drop_after_ms", "1500"), params.set("mock_times", "2");
  else if (f.dg1008) params.set("mock_close", "1008"), params.set("mock_close_after_frames", "100");
  return `${origin}/v1/listen?${params}`;
}

/** The AssemblyAI socket URL for the switches `f` and a single-use `token`. */
export function assemblyAiSocketUrl(origin, f, key, token) {
  const params = new URLSearchParams({ sample_rate: "16000", encoding: "pcm_s16le", format_turns: "true", recognizer: "speech", mock_key: key });
  if (f.aaiDrop) params.set("mock_drop_after_ms", "1500"), params.set("mock_times", "2");
  else if (f.aai3008) params.set("mock_session_ms", "5000"), params.set("mock_times", "1");
  else if (f.aai3009) params.set("mock_close", "3009"), params.set("mock_times", "1");
  params.set("token", token);
  return `${origin}/v3/ws?${params}`;
}

/** The OpenAI Realtime transcription socket URL for the switches `f`. */
export function openAiSocketUrl(origin, f, key) {
  const params = new URLSearchParams({ intent: "transcription", recognizer: "speech", mock_key: key });
  if (f.oaDrop) params.set("mock_drop_after_ms", "1500"), params.set("mock_times", "2");
  else if (f.oaSessionExpired) params.set("mock_session_ms", "5000"), params.set("mock_times", "1");
  else if (f.oa4000) params.set("mock_close", "4000"), params.set("mock_close_after_frames", "100");
  return `${origin}/v1/realtime?${params}`;
}

/** The Speechmatics socket URL for the switches `f` and a temporary `key`. */
export function speechmaticsSocketUrl(origin, f, key, jwt) {
  const params = new URLSearchParams({ jwt, recognizer: "speech", mock_key: key });
  if (f.smDrop) params.set("mock_drop_after_ms", "1500"), params.set("mock_times", "2");
  else if (f.sm4005) params.set("mock_close", "4005"), params.set("mock_close_after_frames", "100"), params.set("mock_times", "1");
  else if (f.smLateReceipts) params.set("mock_receipt_delay_ms", "2000");
  return `${origin}/v2?${params}`;
}

/** The Soniox socket URL for the switches `f` (the key goes in the configuration message). */
export function sonioxSocketUrl(origin, f, key) {
  const params = new URLSearchParams({ recognizer: "speech", mock_key: key });
  if (f.sxDrop) params.set("mock_drop_after_ms", "1500"), params.set("mock_times", "2");
  else if (f.sx503) params.set("mock_error", "503"), params.set("mock_error_after_frames", "100"), params.set("mock_times", "1");
  else if (f.sx402) params.set("mock_error", "402"), params.set("mock_error_after_frames", "100");
  return `${origin}/transcribe-websocket?${params}`;
}

/** The ElevenLabs Scribe socket URL for the switches `f` and a single-use `token`. */
export function elevenLabsSocketUrl(origin, f, key, token) {
  const params = new URLSearchParams({ model_id: "scribe_v2_realtime", audio_format: "pcm_16000", commit_strategy: "vad", include_timestamps: "true", recognizer: "speech", mock_key: key });
  if (f.elDrop) params.set("mock_drop_after_ms", "1500"), params.set("mock_times", "2");
  else if (f.elRateLimited) params.set("mock_error", "rate_limited"), params.set("mock_error_after_frames", "100"), params.set("mock_times", "1");
  else if (f.elTerms) params.set("mock_error", "unaccepted_terms"), params.set("mock_error_after_frames", "100");
  params.set("token", token);
  return `${origin}/v1/speech-to-text/realtime?${params}`;
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

/**
 * `library`: the turnguard module. `failures()`: the switches now. `upstream`: whether the dev
 * stack proxies to a real model (the primary route then uses it). `hooks`: the session's callbacks
 * for the panel, each called with what the session gave, plus `onSession(n)` when a new session
 * (the n-th) replaces the last.
 */
export function createAgent(library, { failures, protocol = () => "gladia", upstream = null, hooks }) {
  const { VoiceSession, openAiCompatibleRoute, openAiCompatibleSpeech } = library;
  // One audio graph for every session: the sessions play into an analyser, so the page (and its
  // test) can see that sound came out.
  const context = new AudioContext();
  const analyser = context.createAnalyser();
  analyser.fftSize = 1024;
  analyser.connect(context.destination);
  context.addEventListener("statechange", () => context.state === "suspended" && hooks.onNeedsGesture());
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

  const socketOrigin = () => location.origin.replace(/^http/, "ws");
  const failed = async (response, what) => {
    if (!response.ok) throw Object.assign(new Error(`${what} answered ${response.status}`), { status: response.status });
    return response.json();
  };
  /**
   * The app's backend, per protocol: Gladia's session, Deepgram's short-lived token (asked again for
   * every connect), AssemblyAI's single-use token (the same), OpenAI's client secret (the same: it
   * expires). Here the dev stack's mocks answer.
   */
  const provisioners = {
    gladia: (f) => gladiaProvisioner(f),
    deepgram: (f, key) => {
      let calls = 0;
      return async ({ signal }) => {
        calls += 1;
        const expired = f.dgExpired && calls === 1 ? "?expired=1" : "";
        const init = { method: "POST", signal, headers: { authorization: "Token dev-backend-key", "content-type": "application/json" }, body: JSON.stringify({ ttl_seconds: 30 }) };
        const { access_token: token } = await failed(await fetch(`/v1/auth/grant${expired}`, init), "the token endpoint");
        return { url: deepgramSocketUrl(socketOrigin(), f, key), protocols: ["bearer", token] };
      };
    },
    assemblyai: (f, key) => {
      let first = null;
      return async ({ signal }) => {
        let token = f.aaiReusedToken ? first : null;
        if (!token) {
          const response = await fetch("/v3/token?expires_in_seconds=60", { signal, headers: { authorization: "dev-backend-key" } });
          token = (await failed(response, "the token endpoint")).token;
          first ??= token;
        }
        return { url: assemblyAiSocketUrl(socketOrigin(), f, key, token) };
      };
    },
    openai: (f, key) => async ({ signal }) => {
      const init = {
        method: "POST",
        signal,
        headers: { authorization: "Bearer dev-backend-key", "content-type": "application/json" },
        body: JSON.stringify({ expires_after: { anchor: "created_at", seconds: 600 }, session: { type: "transcription", audio: { input: { format: { type: "audio/pcm", rate: 24000 }, transcription: { model: "gpt-4o-transcribe" }, turn_detection: { type: "server_vad" } } } } }),
      };
      const { value } = await failed(await fetch("/v1/realtime/client_secrets", init), "the client secret endpoint");
      return { url: openAiSocketUrl(socketOrigin(), f, key), protocols: ["realtime", `openai-insecure-api-key.${value}`] };
    },
    elevenlabs: (f, key) => async ({ signal }) => {
      const response = await fetch("/v1/single-use-token/realtime_scribe", { method: "POST", signal, headers: { "xi-api-key": "dev-backend-key" } });
      const { token } = await failed(response, "the single-use token endpoint");
      return { url: elevenLabsSocketUrl(socketOrigin(), f, key, token) };
    },
    soniox: (f, key) => async ({ signal }) => {
      const init = { method: "POST", signal, headers: { authorization: "Bearer dev-backend-key", "content-type": "application/json" }, body: JSON.stringify({ usage_type: "transcribe_websocket", expires_in_seconds: 60 }) };
      const { api_key } = await failed(await fetch("/v1/auth/temporary-api-key", init), "the temporary key endpoint");
      return { url: sonioxSocketUrl(socketOrigin(), f, key), config: { api_key } };
    },
    speechmatics: (f, key) => async ({ signal }) => {
      const init = { method: "POST", signal, headers: { authorization: "Bearer dev-backend-key", "content-type": "application/json" }, body: JSON.stringify({ ttl: 60 }) };
      const { key_value: jwt } = await failed(await fetch("/v1/api_keys?type=rt", init), "the temporary key endpoint");
      return { url: speechmaticsSocketUrl(socketOrigin(), f, key, jwt), config: { transcription_config: { language: "en", enable_partials: true, max_delay: 1.0, conversation_config: { end_of_utterance_silence_trigger: 0.5 } } } };
    },
  };

  /** The app's backend provisioning a Gladia session; the STT switches as they were when the session started. */
  const gladiaProvisioner = (f) => async ({ signal }) => {
    const response = await fetch(provisionUrl(f), {
      method: "POST",
      signal,
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ encoding: "wav/pcm", sample_rate: 16000, bit_depth: 16, channels: 1 }),
    });
    if (!response.ok) throw Object.assign(new Error(`provisioning answered ${response.status}`), { status: response.status });
    return response.json();
  };

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
    hooks.onSession(generation);
    const mine = generation;
    // A replaced session's late callbacks (its stop) are not the page's any more.
    const live = (callback) => (...args) => mine === generation && callback(...args);
    const wire = PROTOCOLS.includes(protocol()) ? protocol() : "gladia";
    return new VoiceSession({
      routes,
      recoveryText: RECOVERY_TEXT,
      provision: provisioners[wire](failures(), `demo-${Date.now()}-${mine}`),
      synthesize,
      audioContext: context,
      destination: analyser,
      ttsTimeoutMs: TTS_TIMEOUT_MS,
      controller: CONTROLLER_TIMING,
      // Backoffs capped at 4 s instead of 30 s, so a failure plays out while you watch.
      // Each close, with its code and class, goes to the timeline as the transcriber reports it.
      transcriber: {
        protocol: wire,
        policy: { maxDelayMs: STT_MAX_BACKOFF_MS },
        onEvent: live((event) => hooks.onEvent({ ...event, type: `transcriber_${event.type}`, protocol: wire })),
      },
      onEvent: live(hooks.onEvent),
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
