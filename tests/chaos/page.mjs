// The in-page half of `npm run chaos`: one VoiceSession at a time in a real page, against the dev
// stack, with faults drawn from every switch the dev stack has, barge-ins of every cause,
// stop/free at random, typed and spoken turns. Each session speaks one speech-to-text protocol
// (`protocol`: one name, or "rotate": each new session the next of `protocols`), provisioned
// through the dev stack's stand-in for an app's backend; its faults are the shared switches of
// the mocks' socket skeleton (www/devstack/ws_mock.mjs), the same for every protocol. Invariants are checked continuously from the
// session's events and from an instrumented audio graph (every AudioBufferSourceNode start and
// stop on this page, each buffer traced back to the synthesize call that produced it).
//
// Speech comes whole (`tts: "whole"`: WAV from the dev stack's /tts, decoded by the page),
// streamed (`"stream"`: raw PCM from its /v1/audio/speech, played part by part) or either at
// random (`"mixed"`). Nothing here times an assertion: each check compares counts, texts or the
// audio clock.
//
// Every session has preemptive attempts on (eagerSilenceMs 300, the default): a spoken turn's
// eager end of turn starts its first LLM attempt before the final. For most protocols that is
// the session's own guess on the scripted recognizer's still partial ("utterance"; half the
// spoken utterances pause after it), which the final ("utterance N") then discards as
// text_changed; Deepgram Flux sessions ask the mock for its EagerEndOfTurn (eager_eot_threshold,
// with a seeded lead of 0-400 ms before EndOfTurn), whose text is the final's, so those are
// mostly kept. Each route call's answer carries a tag of its own (`rq<n>`) in every sentence,
// mapped to the call's requestId, so every synthesize call, onSpeech sentence and audio source is
// traced back to the attempt that wrote it.
//
// With `lifecycle` on, what the browser does to a page comes too (issue 25): the network reported
// down and up, the page into the back-forward cache and back, the session's AudioContext suspended
// or closed under it, and timers held back as in a hidden tab.

import init, { VoiceSession } from "/pkg/turnguard.js";

const RECOVERY = "Sorry, could you say that again?";
const FRAMES_PER_UTTERANCE = 50; // the mocks' scripted utterance (recognizer=count): 1 s of PCM16
const FRAME_BYTES = 640;
const FRAME_MS = 20;
const MAX_ATTEMPTS_PER_TURN = 2; // ladder (`:attempt:`) calls
const MAX_PREEMPTIVE_PER_TURN = 2; // preemptive (`:preemptive:`) calls, besides those
const FLUX_EAGER_LEAD_MS = 400; // Flux's EagerEndOfTurn leads its EndOfTurn by 0..this (seeded)
const EAGER_SILENCE_MS = 300; // the sessions' own guess: a partial still this long (the default)
const PAUSED_TAIL_FRAMES = 20; // a paused utterance's frames after the pause
// A cough: 200 ms of voice, then 280 ms of quiet. 24 frames stay below the mocks' first partial
// (25 frames): nothing confirms the pause it makes, and the agent resumes.
const COUGH_VOICE_FRAMES = 10;
const COUGH_FRAMES = 24;
// Longer than any pause may last: the voice (200 ms), the quiet until the detector's end and
// falseInterruptionMs (1500 ms), with room for a busy machine.
const PAUSE_LIMIT_MS = 6000;
// What a listener says while the agent talks (V6): typed while it speaks, each goes by.
const BACKCHANNELS = ["okay", "uh huh", "yeah", "got it", "Mm hmm.", "Yes, right."];
const MAX_ATTEMPTS_PER_SESSION = 200;
const REPROVISION_WINDOW_MS = 300_000;
const MAX_REPROVISIONS = 2;
const TURN_SETTLE_LIMIT_MS = 60_000;
const ECHO_GUARD_SLACK_MS = 150;
/** Stream tags are pcm16 values 1..STREAM_TAG_VALUES; the latest STREAM_TAGS_KEPT are traced. */
const STREAM_TAG_VALUES = 30000;
const STREAM_TAGS_KEPT = 512;
const REOPEN_LIMIT_MS = 10_000; // a transcriber held offline or cached is open again this long after
const OUTPUT_CLOSED_LIMIT_MS = 2000; // a context closed under a session is reported by then

// The page's own timer, taken before a `throttle` fault wraps `setTimeout`: the soak's sleeps,
// utterances and checks keep their time whatever the session's timers do.
const realSetTimeout = window.setTimeout;
const sleep = (ms) => new Promise((resolve) => realSetTimeout(resolve, ms));

/** mulberry32: a small seeded PRNG, so a seed replays the same draws. */
function prng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const words = (text) => text.split(/\s+/).filter(Boolean);
const normal = (text) => words(text).join(" ");
/** The answer tags (`rq<n>`, one per route call) in a text the session synthesizes or plays. */
const answerTags = (text) => [...new Set(text.match(/\brq\d+\b/g) ?? [])];
const isPreemptive = (requestId) => requestId.includes(":preemptive:");

export async function runChaos({ devstack, minutes, seed, tts = "mixed", protocol = "rotate", protocols, echoGuardMs, minPartialChars, lifecycle = false, onProgress, onViolation }) {
  const wasm = await init();
  const random = prng(seed);
  const pick = (weighted) => {
    const total = weighted.reduce((sum, [, w]) => sum + w, 0);
    let r = random() * total;
    for (const [value, w] of weighted) {
      if ((r -= w) < 0) return value;
    }
    return weighted.at(-1)[0];
  };

  const report = {
    turns: 0,
    spoken: 0,
    spokenPaused: 0,
    typed: 0,
    sessions: 0,
    faults: {},
    bargeIns: {},
    // V7: pauses of the agent by cause, and how each ended.
    pauses: { coughs: 0, paused: 0, resumed: 0, cut: 0, ended: 0, byCause: {} },
    // V6: backchannels typed while the agent spoke, and the `backchannel` events they made.
    backchannels: { said: 0, reported: 0 },
    violations: {},
    examples: [],
    checks: { heard: 0, frames: 0, framesUnchecked: 0, settled: 0, sources: 0, traced: 0, untraced: 0, requestIds: 0, latency: 0, latencyOrdered: 0 },
    // Preemptive attempts: route calls made for them, and the outcomes their events reported
    // (also by protocol: "started/kept/discarded").
    preemptive: { started: 0, kept: 0, discarded: 0, reasons: {}, byProtocol: {} },
    memory: {},
    // Lifecycle faults injected, by kind (only with `lifecycle`).
    ...(lifecycle && { lifecycle: {} }),
  };
  const fault = (kind) => (report.faults[kind] = (report.faults[kind] ?? 0) + 1);
  const preempted = (life, outcome) => {
    report.preemptive[outcome] += 1;
    const counts = (report.preemptive.byProtocol[life.protocol.name] ??= { started: 0, kept: 0, discarded: 0 });
    counts[outcome] += 1;
  };
  const violation = (name, detail) => {
    report.violations[name] = (report.violations[name] ?? 0) + 1;
    if (report.examples.length < 20) {
      report.examples.push(`${name}: ${detail}`);
      onViolation?.(`${name}: ${detail}`);
    }
  };
  for (const name of [
    "one answer's audio per turn",
    "no audio after barge-in or stop",
    "heard text a prefix of what was spoken",
    "heard text within the audio clock",
    "at most 2 ladder LLM calls per turn",
    "at most 2 preemptive LLM calls per turn",
    "never a discarded attempt's sentence spoken",
    "never a repeated request id",
    "one turn_latency per turn",
    "turn_latency marks in order",
    "session LLM budget",
    "at most 2 re-provisions per 5 minutes",
    "every captured frame sent or dropped and reported",
    "every turn settles",
    "every pause ends once",
    "a backchannel neither cuts nor starts a turn",
    "no page error or unhandled rejection",
    "wasm memory flat",
    "JS heap flat",
  ]) {
    report.violations[name] = 0;
  }
  if (lifecycle) {
    for (const name of ["output_closed reported, with a new context", "a cut by output_closed ends its playback", "transcriber open again within 10 s of online or pageshow"]) {
      report.violations[name] = 0;
    }
  }

  window.addEventListener("error", (event) => violation("no page error or unhandled rejection", String(event.message)));
  window.addEventListener("unhandledrejection", (event) => violation("no page error or unhandled rejection", String(event.reason?.stack ?? event.reason)));

  // The page's context, given to every session; a new one once a `close` fault closed it.
  let context = new AudioContext();
  await context.resume();

  // --- The instrumented audio graph -------------------------------------------------------
  // Every encoded answer carries a tag (life, turn, sentence text); decodeAudioData passes it to
  // the buffer, the buffer to each source started from it.
  const byteTags = new WeakMap();
  const bufferTags = new WeakMap();
  // A streamed answer is made by the player part by part, so it carries its tag in its samples:
  // every sample of one synthesize call's stream is the same pcm16 value, the tag's number.
  const streamTags = new Map(); // pcm16 value -> tag
  let streamTagSeq = 0;
  const sampleTag = (buffer) => streamTags.get(Math.round(buffer.getChannelData(0)[0] * 32768));
  const contextProto = BaseAudioContext.prototype;
  const decode = contextProto.decodeAudioData;
  contextProto.decodeAudioData = function (bytes, ...rest) {
    const tag = byteTags.get(bytes);
    const decoded = decode.call(this, bytes, ...rest);
    return tag ? decoded.then((buffer) => (bufferTags.set(buffer, tag), buffer)) : decoded;
  };
  const sourceProto = AudioBufferSourceNode.prototype;
  const { start: startSource, stop: stopSource } = sourceProto;
  const liveSources = new Map(); // node -> record
  sourceProto.start = function (when = 0, ...rest) {
    const tag = this.buffer && (bufferTags.get(this.buffer) ?? sampleTag(this.buffer));
    if (tag) {
      // The recovery audio is decoded once and replayed: its buffer names the turn that first
      // asked for it. It always plays for the session's current turn, the latest one started.
      const turn = tag.text === RECOVERY ? [...tag.life.turns.values()].at(-1) : tag.life.turns.get(tag.turnId);
      // `when` and `stoppedAt` are on the source's own context's clock: a session whose context was
      // closed plays on another one.
      const record = { tag, context: this.context, when, duration: this.buffer.duration, stoppedAt: null, ended: false };
      report.checks.sources += 1;
      // A session whose context was closed under it plays on one of its own: its first source
      // says which (the module's bindings took the AudioContext constructor before any wrapper).
      if (!tag.life.context) tag.life.context = this.context;
      if (tag.life.ended || turn?.cutAt !== undefined) {
        violation("no audio after barge-in or stop", `${turn?.key ?? tag.life.id} started a source after its cut (${tag.text === RECOVERY ? "recovery" : "answer"})`);
      }
      checkSpoken(tag.life, tag.turnId, tag.text, "played");
      if (turn) {
        turn.sources.push(record);
        checkOneAnswer(turn, tag.text);
      }
      liveSources.set(this, record);
      this.addEventListener("ended", () => {
        record.ended = true;
        liveSources.delete(this);
      });
    }
    return startSource.call(this, when, ...rest);
  };
  sourceProto.stop = function (when = 0, ...rest) {
    const record = liveSources.get(this);
    if (record && record.stoppedAt === null) record.stoppedAt = Math.max(this.context.currentTime, when);
    return stopSource.call(this, when, ...rest);
  };

  /** A source that will sound no more: ended, stopped, or on a context closed under it. */
  const over = (s) => s.ended || s.stoppedAt !== null || s.context.state === "closed";
  /** Sources of `turn` still sounding now (each by its context's clock): neither ended nor stopped by then. */
  const sounding = (turn) =>
    turn.sources.filter((s) => {
      const now = s.context.currentTime;
      return !s.ended && s.context.state !== "closed" && (s.stoppedAt === null || s.stoppedAt > now + 128 / s.context.sampleRate) && s.when + s.duration > now;
    });

  function checkOneAnswer(turn, text) {
    // Every sentence of a route call's answer carries that call's tag; the recovery text is the
    // only other speech.
    if (text === RECOVERY) turn.recoveryAudio = true;
    for (const tag of answerTags(text)) {
      turn.answers.add(tag);
      if (turn.answers.size > 1) violation("one answer's audio per turn", `${turn.key}: ${[...turn.answers]}`);
    }
    if (turn.recoveryAudio && turn.answers.size > 0) violation("one answer's audio per turn", `${turn.key}: an answer and the recovery text`);
  }

  /**
   * A sentence of `turnId` went to synthesize, to onSpeech or to the speakers (`where`): each tag
   * in it names the route call that wrote it. That call's attempt must belong to the turn and
   * never have been discarded; a discard learned later is checked against `life.spoken`.
   */
  function checkSpoken(life, turnId, text, where) {
    if (text === RECOVERY) return;
    const tags = answerTags(text);
    if (tags.length === 0) {
      report.checks.untraced += 1;
      return;
    }
    for (const tag of tags) {
      const requestId = life.requestOf.get(tag);
      report.checks.traced += 1;
      if (requestId === undefined) {
        violation("never a discarded attempt's sentence spoken", `${life.id}/${turnId}: ${where} "${text}" names no route call of this session`);
        continue;
      }
      if (!requestId.startsWith(`${turnId}:`)) violation("one answer's audio per turn", `${life.id}/${turnId}: ${where} a sentence of ${requestId}, another turn's`);
      const why = life.discarded.get(requestId);
      if (why !== undefined) violation("never a discarded attempt's sentence spoken", `${life.id}: ${where} "${text}" of ${requestId}, discarded (${why})`);
      if (!life.spoken.has(requestId)) life.spoken.set(requestId, where);
    }
  }

  /** The attempt of `requestId` was discarded (`why`): none of its sentences may ever sound. */
  function markDiscarded(life, requestId, why) {
    if (life.discarded.has(requestId)) return;
    life.discarded.set(requestId, why);
    const where = life.spoken.get(requestId);
    if (where !== undefined) violation("never a discarded attempt's sentence spoken", `${life.id}: ${requestId} discarded (${why}) after a sentence of it was ${where}`);
  }

  /**
   * One turn_latency per turn; for a turn with sound its marks in the order things happen, and
   * the route called after the final unless a preemptive attempt was kept (1 ms of slack).
   */
  function checkLatency(life, event) {
    report.checks.latency += 1;
    if (life.latencies.has(event.turnId)) violation("one turn_latency per turn", `${life.id}/${event.turnId}: a second turn_latency`);
    life.latencies.add(event.turnId);
    if (event.firstSoundAt === null || event.firstSoundAt === undefined) return;
    report.checks.latencyOrdered += 1;
    const marks = ["routeCalledAt", "firstTokenAt", "firstSentenceAt", "synthesizeAt", "firstAudioAt", "firstSoundAt"].filter((name) => typeof event[name] === "number");
    for (let i = 1; i < marks.length; i += 1) {
      if (event[marks[i - 1]] > event[marks[i]]) {
        violation("turn_latency marks in order", `${life.id}/${event.turnId}: ${marks[i - 1]} ${event[marks[i - 1]]} > ${marks[i]} ${event[marks[i]]} (${event.preemptive})`);
      }
    }
    if (event.preemptive !== "kept" && typeof event.routeCalledAt === "number" && typeof event.finalAt === "number" && event.routeCalledAt < event.finalAt - 1) {
      violation("turn_latency marks in order", `${life.id}/${event.turnId}: route called at ${event.routeCalledAt}, before the final at ${event.finalAt} (${event.preemptive})`);
    }
  }

  /** A turn that settled with an answer or the recovery text had its turn_latency. */
  function checkLatencyCame(life, turnId, turn) {
    if ((turn.outcome === "accepted" || turn.outcome === "recovered") && !life.latencies.has(turnId)) {
      violation("one turn_latency per turn", `${turn.key}: ${turn.outcome}, with no turn_latency`);
    }
  }

  function checkCut(turn, why) {
    // Runs in a task after the cut: anything of the turn still sounding was not silenced.
    realSetTimeout(() => {
      const left = sounding(turn);
      if (left.length > 0) violation("no audio after barge-in or stop", `${turn.key}: ${left.length} sources still sound after ${why}`);
    }, 0);
  }

  /**
   * A turn cut because its output closed, with audio that had not ended (its sources never end
   * now), reports its cut `playback_ended` in the same task as the `barge_in`. The recovery audio
   * is left out: it is traced to the latest turn, not always the one that played it.
   */
  function checkClosedCut(turn) {
    if (!turn.sources.some((s) => !s.ended && s.tag.text !== RECOVERY)) return;
    const ends = turn.playbackEnds;
    realSetTimeout(() => {
      if (turn.playbackEnds === ends) violation("a cut by output_closed ends its playback", `${turn.key}: no playback_ended after its barge_in`);
    }, 0);
  }

  function checkHeard(turn, heard) {
    report.checks.heard += 1;
    // One sentence per tag: a whole answer is one source, a streamed one a source per part.
    const played = [];
    for (const source of [...turn.sources].sort((a, b) => a.when - b.when)) {
      if (source.tag.text === RECOVERY) continue;
      if (played.at(-1)?.tag === source.tag) played.at(-1).parts.push(source);
      else played.push({ tag: source.tag, parts: [source] });
    }
    const spoken = normal(played.map((s) => s.tag.text).join(" "));
    if (!spoken.startsWith(normal(heard))) violation("heard text a prefix of what was spoken", `${turn.key}: "${heard}" vs "${spoken}"`);
    // Words the audio clock allows: whole sentences that played out, plus the cut sentence's share
    // (one word of slack: the player read the clock a hair apart from this check). A stream cut
    // before all of it arrived is measured against what arrived: a generous bound, never a tight one.
    // Each source by its own context's clock: a closed one stands where it closed, as the
    // session's count does.
    let allowed = 0;
    for (const { tag, parts } of played) {
      const duration = parts.reduce((sum, s) => sum + s.duration, 0);
      const playedSeconds = parts.reduce((sum, s) => {
        const end = s.stoppedAt ?? (s.ended ? s.when + s.duration : s.context.currentTime);
        return sum + Math.min(s.duration, Math.max(0, end - s.when));
      }, 0);
      const share = Math.min(1, playedSeconds / duration);
      const count = words(tag.text).length;
      if (share >= 1 - 0.004 / duration) {
        allowed += count;
        continue;
      }
      allowed += Math.ceil(count * share) + 1;
      break;
    }
    if (words(heard).length > allowed) violation("heard text within the audio clock", `${turn.key}: ${words(heard).length} words heard, the clock allows ${allowed}`);
  }

  // --- Faults -------------------------------------------------------------------------------
  // The skeleton's switches (`socket` ones in the socket URL, `token` ones on the token request),
  // per session's own mock_key: a protocol with no way to end a session ignores the session ones.
  const STT = [
    [{ kind: "normal" }, 10],
    [{ kind: "drop1006", socket: "mock_drop_after_ms=1500&mock_times=2" }, 2],
    [{ kind: "session_over_at_start", socket: "mock_session_ms=0&mock_times=1" }, 1],
    [{ kind: "upgrade_refused", socket: "mock_refuse_upgrade=404" }, 0.5],
    [{ kind: "session_over_in_use", socket: "mock_session_frames=30&mock_times=1" }, 1],
    [{ kind: "provision429", token: "mock_provision=429&mock_times=2" }, 1],
    [{ kind: "provision503", token: "mock_provision=503&mock_times=1" }, 1],
    [{ kind: "provision408", token: "mock_provision=408&mock_times=1" }, 0.5],
    [{ kind: "provision_hang", token: "mock_provision=hang" }, 0.5],
    [{ kind: "provision_reset", token: "mock_provision=reset" }, 0.5],
    [{ kind: "slow_handshake", socket: "mock_handshake_ms=2000" }, 0.5],
  ];
  const names = protocols.map((entry) => entry.name);
  if (protocol !== "rotate" && !names.includes(protocol)) throw new RangeError(`protocol must be "rotate" or one of ${names.join(", ")}`);
  /** The protocol of the n-th session (from 1). */
  const protocolOf = (n) => protocols[protocol === "rotate" ? (n - 1) % protocols.length : names.indexOf(protocol)];
  const LLM = [
    ["ok", 10],
    ["http500", 1],
    ["http401", 0.7],
    ["http429", 0.7],
    ["hang", 0.7],
    ["no_first_chunk", 0.7],
    ["stall_after", 0.7],
    ["slow", 1],
    ["garbage", 0.5],
    ["endless", 0.7],
  ];
  const FALLBACK = [
    ["ok", 4],
    ["slow", 1],
  ];
  const TTS = [
    ["ok", 20],
    ["http500", 1],
    ["hang", 0.7],
    ["slow", 2],
    ["undecodable", 1],
  ];
  // The streamed endpoint's switches: a 500, no answer at all, half the audio then nothing, a
  // late first byte.
  const STREAM_TTS = [
    ["ok", 20],
    ["http500", 1],
    ["hang", 0.7],
    ["stall", 1],
    ["slow", 2],
  ];

  /** `text` streamed as 24 kHz pcm16 from the dev stack, every sample set to the tag's number. */
  async function streamSpeech(kind, text, tag, signal) {
    // Sent at once, a little faster than it plays, or slower (the player then underruns).
    const pace = pick([[0, 1], [0.9, 1], [1.2, 0.5]]);
    const totalMs = Math.round([...text].length * 25 * pace);
    const params = new URLSearchParams({ fault: kind, msPerChar: "25", firstByteMs: kind === "slow" ? "700" : "0", totalMs: String(totalMs) });
    const response = await fetch(`${devstack}/v1/audio/speech?${params}`, {
      method: "POST",
      signal,
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "mock", voice: "tone", input: text, response_format: "pcm" }),
    });
    if (!response.ok) throw new Error(`TTS HTTP ${response.status}`);
    streamTagSeq = (streamTagSeq % STREAM_TAG_VALUES) + 1;
    const value = streamTagSeq;
    streamTags.set(value, tag);
    // Only recent streams still play: older tags go, so finished lives are not kept alive.
    streamTags.delete(((value - 1 + STREAM_TAG_VALUES - STREAM_TAGS_KEPT) % STREAM_TAG_VALUES) + 1);
    let offset = 0; // bytes so far: a chunk may end inside a sample
    const stamp = new TransformStream({
      transform(chunk, controller) {
        const out = new Uint8Array(chunk.length);
        for (let i = 0; i < chunk.length; i += 1) out[i] = (offset + i) % 2 === 0 ? value & 0xff : value >> 8;
        offset += chunk.length;
        controller.enqueue(out);
      },
    });
    return { stream: response.body.pipeThrough(stamp), format: "pcm16", sampleRate: 24000 };
  }

  /**
   * The dev stack's mock LLM, streamed: yields the text deltas of its SSE, each sentence's full
   * stop preceded by the call's `tag` ("Answer rq12. It is sunny … test rq12. …"), padding too.
   */
  async function* streamLlm(scenario, tag, signal) {
    const params = new URLSearchParams({ text: "Answer. It is sunny today in the chaos test. Take an umbrella for later.", tokenMs: "3" });
    if (scenario === "endless") params.set("tokens", "3000"), params.set("tokenMs", "1");
    const path = scenario === "endless" ? "ok" : scenario;
    const response = await fetch(`${devstack}/llm/${path}/v1/chat/completions?${params}`, {
      method: "POST",
      signal,
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "mock", stream: true, messages: [{ role: "user", content: "chaos" }] }),
    });
    if (!response.ok) throw Object.assign(new Error(`HTTP ${response.status}`), { status: response.status });
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffered = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffered += value;
      let newline;
      while ((newline = buffered.indexOf("\n")) >= 0) {
        const line = buffered.slice(0, newline).trim();
        buffered = buffered.slice(newline + 1);
        if (!line.startsWith("data:")) continue;
        const data = line.slice(5).trim();
        if (data === "[DONE]") return;
        let content;
        try {
          content = JSON.parse(data).choices?.[0]?.delta?.content;
        } catch {
          throw Object.assign(new Error("garbage from the LLM"), { retryable: true });
        }
        if (content) yield content.replaceAll(".", ` ${tag}.`);
      }
    }
  }

  // --- Lives: one VoiceSession each ------------------------------------------------------------
  let lifeSeq = 0;
  let partialPlan = null;
  let answerSeq = 0; // route calls, for their answers' tags
  const requestIds = new Set(); // every requestId a route was called with, over the whole soak

  function newLife() {
    lifeSeq += 1;
    report.sessions += 1;
    const stt = pick(STT);
    const wire = protocolOf(lifeSeq);
    fault(`stt:${stt.kind}`);
    fault(`protocol:${wire.name}`);
    // Flux guesses the end of turn itself (EagerEndOfTurn) when its URL has a threshold; the
    // session then makes no guesses of its own. The mock's EndOfTurn follows after a seeded lead.
    const eager = wire.name === "deepgram-flux" ? `eager_eot_threshold=0.5&mock_eager_lead_ms=${Math.floor(random() * (FLUX_EAGER_LEAD_MS + 1))}` : "";
    const life = {
      id: `s${lifeSeq}`,
      turns: new Map(),
      routeCalls: 0,
      key: `chaos-${seed}-${lifeSeq}-${Math.random().toString(36).slice(2)}`, // its counters at the mock
      protocol: wire,
      provisions: [], // times of re-provisions (the first provision() for a session that is over)
      provisionLog: [], // every provision() call: ms since startedAt, reason and attempt
      startedAt: performance.now(),
      framesSent: 0,
      framesDropped: 0,
      transcriberState: "idle",
      ended: false,
      failed: false,
      requestOf: new Map(), // answer tag -> requestId of the route call that wrote it
      spoken: new Map(), // requestId -> where a sentence of it went first (synthesize, onSpeech, played)
      discarded: new Map(), // requestId -> why its attempt was discarded
      latencies: new Set(), // turn ids with a turn_latency
      context, // the context its speech plays on: the page's, then its own after an output_closed
      outputCloses: 0, // output_closed events
      opened: false, // its transcriber was open once
      held: false, // it heard an offline or pagehide that nothing has ended yet
      reopening: null, // the online or pageshow its transcriber has to open again after
    };
    const turnOf = (turnId) => life.turns.get(turnId);
    const route = (name, draw) => ({
      name,
      generate({ requestId, turnId, signal }) {
        life.routeCalls += 1;
        report.checks.requestIds += 1;
        if (requestIds.has(requestId)) violation("never a repeated request id", `${life.id}: ${requestId}`);
        requestIds.add(requestId);
        const preemptive = isPreemptive(requestId);
        if (!requestId.startsWith(`${turnId}:${preemptive ? "preemptive" : "attempt"}:`)) violation("never a repeated request id", `${life.id}: ${requestId} is not an id of ${turnId}`);
        if (preemptive) preempted(life, "started");
        const turn = turnOf(turnId);
        if (turn && preemptive) {
          turn.preemptiveCalls += 1;
          if (turn.preemptiveCalls > MAX_PREEMPTIVE_PER_TURN) violation("at most 2 preemptive LLM calls per turn", `${turn.key}: ${turn.preemptiveCalls}`);
        } else if (turn) {
          turn.routeCalls += 1;
          if (turn.routeCalls > MAX_ATTEMPTS_PER_TURN) violation("at most 2 ladder LLM calls per turn", `${turn.key}: ${turn.routeCalls}`);
        }
        if (life.routeCalls > MAX_ATTEMPTS_PER_SESSION) violation("session LLM budget", `${life.id}: ${life.routeCalls}`);
        if (life.ended) violation("no audio after barge-in or stop", `${life.id}: a route call after stop`);
        const scenario = draw();
        fault(`llm:${name}:${scenario}`);
        const tag = `rq${++answerSeq}`;
        life.requestOf.set(tag, requestId);
        return streamLlm(scenario, tag, signal);
      },
    });
    const session = new VoiceSession({
      routes: [route("primary", () => pick(LLM)), route("fallback", () => pick(FALLBACK))],
      recoveryText: RECOVERY,
      audioContext: context,
      // A `suspend` fault asks for a gesture: see answerGesture.
      onNeedsGesture: lifecycle ? () => answerGesture(life) : undefined,
      ttsTimeoutMs: 3000,
      bargeIn: { echoGuardMs, minPartialChars },
      preemptive: { eagerSilenceMs: EAGER_SILENCE_MS }, // every session (see the top of this file)
      controller: { turnDeadlineMs: 5000, attemptTimeoutMs: 2500, maxAttemptsPerSession: MAX_ATTEMPTS_PER_SESSION, maxAnswerChars: 400 },
      transcriber: { protocol: wire.name, provisionTimeoutMs: 1500, policy: { initialDelayMs: 100, maxDelayMs: 1500 } },
      // The app's backend (the dev stack's POST /api/stt/<name>) with this session's switches; the
      // scripted recognizer's "utterance N" for every protocol. A call for fresh credentials before
      // a reconnect (R6) is not a re-provision: one for a session that is over is, and its
      // retries (a failure, a timeout, the back-forward cache) are the same one (R3).
      async provision({ signal, reason, attempt }) {
        if (reason === "session_over" && attempt === 1) life.provisions.push(performance.now());
        life.provisionLog.push(`${Math.round(performance.now() - life.startedAt)}:${reason}#${attempt}`);
        const response = await fetch(`${devstack}/api/stt/${wire.name}`, {
          method: "POST",
          signal,
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ reason, key: life.key, token: stt.token ?? "", socket: ["recognizer=count", eager, stt.socket].filter(Boolean).join("&") }),
        });
        if (!response.ok) throw Object.assign(new Error(`HTTP ${response.status}`), { status: response.status });
        const created = await response.json();
        const recent = life.provisions.filter((at) => at > performance.now() - REPROVISION_WINDOW_MS);
        if (recent.length > MAX_REPROVISIONS) violation("at most 2 re-provisions per 5 minutes", `${life.id}: ${recent.length} (calls, ms into the session: ${life.provisionLog.slice(-8).join(" ")})`);
        return created;
      },
      async synthesize(text, { turnId, signal }) {
        if (life.ended) violation("no audio after barge-in or stop", `${life.id}: synthesize after stop`);
        checkSpoken(life, turnId, text, "synthesized");
        const tag = { life, turnId, text };
        if (tts === "stream" || (tts === "mixed" && random() < 0.5)) {
          const kind = pick(STREAM_TTS);
          fault(`tts:stream:${kind}`);
          return streamSpeech(kind, text, tag, signal);
        }
        const kind = pick(TTS);
        fault(`tts:${kind}`);
        if (kind === "undecodable") {
          const bytes = new Uint8Array(64).fill(7).buffer;
          byteTags.set(bytes, tag);
          return bytes;
        }
        const params = new URLSearchParams({ fault: kind === "slow" ? "ok" : kind, delayMs: kind === "slow" ? "700" : "0", msPerChar: "25" });
        const response = await fetch(`${devstack}/tts?${params}`, { method: "POST", signal, headers: { "content-type": "application/json" }, body: JSON.stringify({ text }) });
        if (!response.ok) throw new Error(`TTS HTTP ${response.status}`);
        const bytes = await response.arrayBuffer();
        byteTags.set(bytes, tag);
        return bytes;
      },
      onEvent(event) {
        life.watched?.push(event);
        const turn = event.turnId && turnOf(event.turnId);
        switch (event.type) {
          case "turn_started":
            report.turns += 1;
            // A pending turn (a preemptive attempt's, before its final) starts here too; one
            // forgotten at its deadline starts afresh if its final comes after all.
            life.turns.set(event.turnId, { key: `${life.id}/${event.turnId}`, startedAt: performance.now(), settled: false, outcome: null, routeCalls: 0, preemptiveCalls: 0, sources: [], answers: new Set(), recoveryAudio: false, playbackEnds: 0 });
            break;
          case "accepted":
          case "recovered":
          case "cancelled":
            if (turn) {
              turn.settled = true;
              turn.outcome = event.type;
            }
            break;
          case "preemptive":
            if (event.kept) {
              preempted(life, "kept");
            } else {
              preempted(life, "discarded");
              report.preemptive.reasons[event.reason] = (report.preemptive.reasons[event.reason] ?? 0) + 1;
              markDiscarded(life, event.requestId, `event: ${event.reason}`);
              // A pending turn whose final never came is forgotten at its deadline: it ends here.
              if (event.reason === "expired" && turn) {
                turn.settled = true;
                turn.outcome = "forgotten";
              }
            }
            break;
          case "turn_latency":
            checkLatency(life, event);
            break;
          case "paused":
            report.pauses.paused += 1;
            report.pauses.byCause[event.cause] = (report.pauses.byCause[event.cause] ?? 0) + 1;
            if (life.pause) violation("every pause ends once", `${life.id}: ${event.turnId} paused while ${life.pause.turnId} was`);
            life.pause = { turnId: event.turnId, at: performance.now() };
            break;
          case "resumed":
            report.pauses.resumed += 1;
            if (life.pause?.turnId !== event.turnId) violation("every pause ends once", `${life.id}: ${event.turnId} resumed without a pause`);
            life.pause = null;
            break;
          case "barge_in":
            if (life.pause?.turnId === event.turnId) {
              report.pauses.cut += 1;
              life.pause = null;
            }
            report.bargeIns[event.cause] = (report.bargeIns[event.cause] ?? 0) + 1;
            if (turn) {
              turn.cutAt = context.currentTime;
              checkCut(turn, `a ${event.cause} barge-in`);
              if (event.cause === "output_closed") checkClosedCut(turn);
            }
            break;
          case "playback_ended":
            if (turn) turn.playbackEnds += 1;
            break;
          case "output_closed":
            life.outputCloses += 1;
            if (event.replaced === true) life.context = null; // known by its first source

            else violation("output_closed reported, with a new context", `${life.id}: replaced ${event.replaced}`);
            // Sources on a closed context never end: forget them.
            for (const [node, record] of liveSources) {
              if (record.context.state === "closed") liveSources.delete(node);
            }
            break;
          case "playback_started":
            if (partialPlan && partialPlan.life === life) {
              const plan = partialPlan;
              partialPlan = null;
              plan.go();
            }
            break;
          case "transcriber_state":
            life.transcriberState = event.state;
            if (event.state === "open") {
              life.opened = true;
              life.reopening = null;
            }
            life.framesDropped = Math.max(life.framesDropped, event.framesDropped ?? 0);
            break;
          default:
        }
      },
      onSpeech(turnId, text) {
        checkSpoken(life, turnId, text, "queued for speech (onSpeech)");
      },
      onTurn(record) {
        let ladder = 0;
        let preemptive = 0;
        for (const attempt of record.attempts) {
          if (attempt.preemptive === true) preemptive += 1;
          else ladder += 1;
          if (attempt.preemptive !== true && isPreemptive(attempt.requestId)) violation("never a repeated request id", `${life.id}: ${attempt.requestId} not marked preemptive in its record`);
          if (attempt.result === "discarded") markDiscarded(life, attempt.requestId, "record");
        }
        const key = `${life.id}/${record.turnId}`;
        if (ladder > MAX_ATTEMPTS_PER_TURN) violation("at most 2 ladder LLM calls per turn", `${key}: ${ladder} ladder attempts in its record`);
        if (preemptive > MAX_PREEMPTIVE_PER_TURN) violation("at most 2 preemptive LLM calls per turn", `${key}: ${preemptive} preemptive attempts in its record`);
      },
      onHeard(turnId, heard) {
        const turn = turnOf(turnId);
        if (turn) checkHeard(turn, heard);
      },
      onError(error) {
        if (error?.code === "frames_dropped" || error?.code === "audio_dropped") life.framesDropped += error.frames ?? 0;
      },
      onStateChange(state) {
        if (state === "failed") life.failed = true;
      },
    });
    life.session = session;
    life.started = session.start({ microphone: false }).catch(() => (life.failed = true));
    return life;
  }

  function speak(life, frames) {
    for (let i = 0; i < frames; i += 1) {
      try {
        life.session.sendAudio(new Int16Array(FRAME_BYTES / 2));
        life.framesSent += 1;
      } catch {
        return;
      }
    }
  }

  /** Voice nothing confirms: a pause that resumes (V7). Its bytes begin the mock's next utterance. */
  function cough(life) {
    for (let n = 0; n < COUGH_FRAMES; n += 1) {
      const pcm = new Int16Array(FRAME_BYTES / 2);
      if (n < COUGH_VOICE_FRAMES) for (let i = 0; i < pcm.length; i += 1) pcm[i] = Math.round(8000 * Math.sin((2 * Math.PI * 220 * (n * pcm.length + i)) / 16000));
      try {
        life.session.sendAudio(pcm);
        life.framesSent += 1;
      } catch {
        return;
      }
    }
  }

  /**
   * "Okay" while the agent speaks (V6): the session reports a `backchannel` and goes on — no
   * barge-in, no new turn. `sendText` runs the session's pump to its end, so the events it made
   * are in by its return.
   */
  function backchannel(life) {
    const text = BACKCHANNELS[Math.floor(random() * BACKCHANNELS.length)];
    life.watched = [];
    const sent = sendText(life, text);
    const types = life.watched.map((event) => event.type);
    life.watched = null;
    if (!sent) return;
    report.backchannels.said += 1;
    if (types.includes("backchannel")) report.backchannels.reported += 1;
    if (!types.includes("backchannel") || types.includes("barge_in") || types.includes("turn_started")) {
      violation("a backchannel neither cuts nor starts a turn", `${life.id}: "${text}" while speaking made ${types.join(", ") || "no event"}`);
    }
  }

  function sendText(life, text) {
    try {
      life.session.sendText(text);
      return true;
    } catch {
      return false;
    }
  }

  /**
   * Sent frames reached the server (any of the life's connections: they share its mock_key) or were
   * reported dropped. A protocol that sends frames `framesPerChunk` at a time may hold the last
   * chunk's few back until more audio comes or it stops.
   */
  async function checkFrames(life) {
    if (life.framesSent === 0) return;
    if (life.transcriberState !== "open") {
      report.checks.framesUnchecked += 1;
      return;
    }
    const deadline = performance.now() + 3000;
    for (;;) {
      const counters = await (await fetch(`${devstack}/__stats?protocol=${life.protocol.name}&key=${life.key}`)).json();
      const received = counters?.audioMs ?? 0;
      const held = ((life.protocol.fixture.framesPerChunk ?? 1) - 1) * FRAME_MS;
      // audioMs is rounded from the bytes the server has (24 kHz for some protocols): 1 ms of slack.
      if (received + held + 1 + life.framesDropped * FRAME_MS >= life.framesSent * FRAME_MS) {
        report.checks.frames += 1;
        return;
      }
      if (performance.now() > deadline || life.transcriberState !== "open") {
        if (life.transcriberState !== "open") {
          report.checks.framesUnchecked += 1;
          return;
        }
        violation("every captured frame sent or dropped and reported", `${life.id} (${life.protocol.name}): sent ${life.framesSent * FRAME_MS} ms, server ${received} ms, dropped ${life.framesDropped} frames`);
        return;
      }
      await sleep(100);
    }
  }

  async function endLife(life, how) {
    if (life.ended) return;
    await checkFrames(life);
    life.ended = true;
    for (const turn of life.turns.values()) {
      turn.cutAt ??= context.currentTime;
      checkCut(turn, how);
    }
    if (how === "free") life.session.free();
    else await life.session.stop().catch(() => {});
    await sleep(300);
    for (const [id, turn] of life.turns) {
      report.checks.settled += 1;
      if (!turn.settled) violation("every turn settles", `${turn.key} did not settle by ${how}`);
      checkLatencyCame(life, id, turn);
    }
    life.session.free();
    life.turns.clear();
  }

  function checkRunningTurns(life) {
    const now = performance.now();
    // A pause ends within confirmMs or falseInterruptionMs of the voice's end (V7), unless its
    // turn ended (the answer had nothing left to play) or the session stopped.
    if (life.pause) {
      const turn = life.turns.get(life.pause.turnId);
      if (life.ended || life.failed || !["thinking", "speaking"].includes(life.session.state) || (turn?.settled && turn.sources.every(over) && turn.sources.length > 0)) {
        report.pauses.ended += 1;
        life.pause = null;
      } else if (now - life.pause.at > PAUSE_LIMIT_MS) {
        violation("every pause ends once", `${life.id}: ${life.pause.turnId} paused for over ${PAUSE_LIMIT_MS} ms`);
        life.pause = null;
      }
    }
    for (const [id, turn] of life.turns) {
      if (!turn.settled && now - turn.startedAt > TURN_SETTLE_LIMIT_MS) {
        violation("every turn settles", `${turn.key} still running after ${TURN_SETTLE_LIMIT_MS} ms`);
        turn.settled = true;
      }
      // Settled turns whose audio is over are forgotten: memory stays flat.
      if (turn.settled && turn.sources.every(over) && now - turn.startedAt > 20_000) {
        checkLatencyCame(life, id, turn);
        life.turns.delete(id);
      }
    }
  }

  // --- Lifecycle faults (`lifecycle`) ---------------------------------------------------------
  // What the browser does to the page (issue 25). Each fault's end comes on the page's own clock
  // whatever happens to the life meanwhile, and the run waits for every end still to come before
  // it returns: no offline window, cached page or suspended output outlives it.
  let offline = false;
  let cached = false;
  let suspension = null; // { life, target }: a context suspended under a session, until its tap
  const restores = new Set(); // the ends still to come

  /** `restore()` after `ms` on the page's own clock. */
  function restoreAfter(ms, restore) {
    const done = sleep(ms).then(restore);
    restores.add(done);
    done.then(() => restores.delete(done));
  }

  /** The session asks for a gesture: the user taps at once, unless a `suspend` of its life holds the context (that fault's end taps). */
  function answerGesture(life) {
    if (suspension?.life !== life) life.session.resume().catch(() => {});
  }

  /** The page goes offline or into the cache: the current session hears it and holds (W). */
  function hold(event) {
    life.held = true;
    life.reopening = null;
    window.dispatchEvent(event);
  }

  /**
   * The page is online or shown again (`kind`). Once nothing holds it, a held session whose
   * transcriber had been open connects at once: it is open again within REOPEN_LIMIT_MS unless the
   * life ended or failed, or its transcriber stopped or failed. (An offline socket stays open.)
   */
  function release(event, kind) {
    window.dispatchEvent(event);
    if (offline || cached || !life.held) return;
    life.held = false;
    if (!life.opened || life.transcriberState === "open") return;
    const held = life;
    const mark = (held.reopening = { kind });
    realSetTimeout(() => {
      if (held.reopening !== mark || held.ended || held.failed || ["stopped", "failed"].includes(held.transcriberState)) return;
      violation("transcriber open again within 10 s of online or pageshow", `${held.id} (${held.protocol.name}): ${held.transcriberState} ${REOPEN_LIMIT_MS} ms after ${kind}`);
    }, REOPEN_LIMIT_MS);
  }

  /** Suspends the context the session plays on (a call, a locked screen); the user taps after `ms`. */
  function suspend(ms) {
    const held = (suspension = { life, target: life.context });
    held.target.suspend().catch(() => {});
    restoreAfter(ms, () => {
      suspension = null;
      if (!held.life.ended) held.life.session.resume().catch(() => {});
      // An ended session cannot: the page resumes its own context for the next one.
      else if (held.target.state === "suspended") held.target.resume().catch(() => {});
    });
  }

  /** Closes the context the session plays on (the browser gave up the device): it is reported and replaced. */
  async function closeOutput() {
    const closed = life;
    const target = closed.context;
    const reported = closed.outputCloses;
    await target.close().catch(() => {});
    if (target === context) {
      context = new AudioContext();
      await context.resume();
    }
    realSetTimeout(() => {
      if (!closed.ended && closed.outputCloses === reported) violation("output_closed reported, with a new context", `${closed.id}: none ${OUTPUT_CLOSED_LIMIT_MS} ms after its context closed (session ${closed.session.state}, context ${target.state}, the page's: ${target === context})`);
    }, OUTPUT_CLOSED_LIMIT_MS);
  }

  /**
   * A hidden tab's timers: for `ms`, every timeout set waits at least `floorMs`, or until the tab
   * is visible again (the end), when what was held back runs. The capture goes on meanwhile, a
   * frame every 20 ms as the worklet's, so the session meets its deadlines on the frames.
   */
  async function throttle(ms, floorMs) {
    const visibleAt = performance.now() + ms;
    window.setTimeout = (handler, delay = 0, ...args) => realSetTimeout(handler, Math.max(delay, Math.min(floorMs, visibleAt - performance.now())), ...args);
    try {
      for (let sent = 0; sent < ms / FRAME_MS; ) {
        await sleep(FRAME_MS);
        const due = Math.min(ms / FRAME_MS, Math.floor((performance.now() - visibleAt + ms) / FRAME_MS));
        speak(life, due - sent);
        sent = due;
      }
    } finally {
      window.setTimeout = realSetTimeout;
    }
  }

  /** One lifecycle fault of `kind`, its times drawn here. */
  async function lifecycleFault(kind) {
    report.lifecycle[kind] = (report.lifecycle[kind] ?? 0) + 1;
    switch (kind) {
      case "offline":
        offline = true;
        hold(new Event("offline"));
        restoreAfter(500 + random() * 2500, () => {
          offline = false;
          release(new Event("online"), "online");
        });
        break;
      case "bfcache":
        cached = true;
        hold(new PageTransitionEvent("pagehide", { persisted: true }));
        restoreAfter(500 + random() * 1500, () => {
          cached = false;
          release(new PageTransitionEvent("pageshow", { persisted: true }), "pageshow");
        });
        break;
      case "suspend":
        suspend(300 + random() * 1200);
        break;
      case "close":
        await closeOutput();
        break;
      case "throttle":
        // Whole seconds: the frames make whole utterances of the mocks (50 frames each).
        await throttle(1000 * (2 + Math.floor(random() * 3)), 2000 + random() * 3000);
        break;
    }
  }

  async function heap() {
    for (let i = 0; i < 3; i += 1) {
      globalThis.gc?.();
      await sleep(50);
    }
    return performance.memory?.usedJSHeapSize ?? NaN;
  }

  // --- The run ---------------------------------------------------------------------------------
  const started = performance.now();
  const endAt = started + minutes * 60_000;
  const warmupAt = started + Math.min(120_000, minutes * 60_000 * 0.2);
  let warm = null;
  let life = newLife();
  let typedSeq = 0;
  let lastProgress = 0;
  report.memory.start = { wasm: wasm.memory.buffer.byteLength, heap: await heap() };

  while (performance.now() < endAt) {
    if (life.ended || life.failed) {
      await endLife(life, "stop");
      life = newLife();
    }
    checkRunningTurns(life);
    const busy = ["thinking", "speaking"].includes(life.session.state);
    const action = pick([
      ["typed", 4],
      ["spoken", 3],
      ["button", busy ? 1.5 : 0.1],
      ["final", busy ? 1 : 0],
      ["partial", busy ? 1 : 0],
      ["cough", busy ? 1 : 0],
      ["backchannel", life.session.state === "speaking" ? 3 : 0],
      ["stop", 0.4],
      ["free", 0.2],
      ["wait", 2],
      // One window of each kind at a time; an output suspended or closed matters most under an answer.
      ...(lifecycle
        ? [
            ["offline", offline ? 0 : 0.5],
            ["bfcache", cached ? 0 : 0.5],
            ["suspend", suspension || !life.context ? 0 : busy ? 0.8 : 0.2],
            ["close", !life.context || life.context.state === "closed" ? 0 : busy ? 0.4 : 0.15],
            ["throttle", 0.4],
          ]
        : []),
    ]);
    switch (action) {
      case "typed":
        if (sendText(life, `typed question ${++typedSeq}`)) report.typed += 1;
        break;
      case "spoken":
        // The frames go at once, so most protocols' partial and final come together; half the
        // utterances pause after the partial ("utterance", at half of them) for longer than
        // eagerSilenceMs, so every protocol's session makes its own guess before the final.
        if (random() < 0.5) {
          const target = life;
          speak(target, FRAMES_PER_UTTERANCE - PAUSED_TAIL_FRAMES);
          realSetTimeout(() => speak(target, PAUSED_TAIL_FRAMES), EAGER_SILENCE_MS + 50 + random() * 400);
          report.spokenPaused += 1;
        } else {
          speak(life, FRAMES_PER_UTTERANCE);
        }
        report.spoken += 1;
        break;
      case "button":
        life.session.interrupt();
        break;
      case "cough":
        cough(life);
        report.pauses.coughs += 1;
        // Quiet long enough for the pause to resume (falseInterruptionMs after the voice).
        await sleep(2000);
        break;
      case "final":
        sendText(life, `interrupting question ${++typedSeq}`);
        break;
      case "backchannel":
        backchannel(life);
        break;
      case "partial": {
        // A speech start inside the echo guard of the next playback start (ignored), then the
        // partial after the guard: a barge-in by partial. The utterance completes as a turn.
        const target = life;
        partialPlan = {
          life: target,
          go: () => {
            speak(target, 5);
            realSetTimeout(() => speak(target, 20), echoGuardMs + ECHO_GUARD_SLACK_MS);
            realSetTimeout(() => speak(target, FRAMES_PER_UTTERANCE - 25), echoGuardMs + ECHO_GUARD_SLACK_MS + 300);
          },
        };
        break;
      }
      case "stop":
      case "free":
        await endLife(life, action);
        break;
      case "offline":
      case "bfcache":
      case "suspend":
      case "close":
      case "throttle":
        await lifecycleFault(action);
        break;
      default:
    }
    await sleep(150 + random() * 1600);
    if (!warm && performance.now() > warmupAt) warm = { wasm: wasm.memory.buffer.byteLength, heap: await heap() };
    if (performance.now() - lastProgress > 10_000) {
      lastProgress = performance.now();
      onProgress?.({ elapsedMin: (performance.now() - started) / 60_000, turns: report.turns, violations: Object.values(report.violations).reduce((a, b) => a + b, 0) });
    }
  }
  await Promise.all(restores);
  await endLife(life, "stop");
  await sleep(500);
  report.memory.warm = warm;
  report.memory.end = { wasm: wasm.memory.buffer.byteLength, heap: await heap() };
  if (warm) {
    const grownWasm = report.memory.end.wasm - warm.wasm;
    if (grownWasm > 1 << 20) violation("wasm memory flat", `grew ${grownWasm} B after warm-up`);
    if (report.memory.end.heap > warm.heap * 1.5 + (4 << 20)) violation("JS heap flat", `${warm.heap} B after warm-up, ${report.memory.end.heap} B at the end`);
  }
  report.minutes = (performance.now() - started) / 60_000;
  return report;
}

