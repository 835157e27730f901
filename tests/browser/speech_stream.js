// Streamed speech (issue 18) on a real AudioContext: SpeechPlayer fed `{ stream, format,
// sampleRate, channels? }` of raw PCM in chunks of odd sizes, at rates other than the context's,
// late, stalled, failing, cut by a stop; and VoiceSession speaking through openAiCompatibleSpeech
// against the dev stack's streamed /v1/audio/speech. What the player asks of the audio graph is
// recorded on AudioBufferSourceNode's prototype; heard time is checked against the audio clock.
// `ctx` is `{ devstack, make, session, speech }`: `new SpeechPlayer(o)`, `new VoiceSession(o)`,
// `openAiCompatibleSpeech(o)`.

import { assert, assertEq, assertThrows, sleep, noSkipInChrome, runIn } from "./support.js";
import { NO_AUDIO, quantum, runningContext, sourceRecorder, tone, untilAudioTime } from "./audio.js";

const RECOVERY = "Sorry, could you say that again?";

async function until(condition, timeoutMs, label) {
  const deadline = performance.now() + timeoutMs;
  while (!(await condition())) {
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${label}`);
    await sleep(5);
  }
}

async function withAudio(body) {
  const context = await runningContext();
  if (!context) return { skipped: NO_AUDIO };
  const sources = sourceRecorder();
  try {
    return await body(context, sources);
  } finally {
    sources.restore();
    await context.close().catch(() => {});
  }
}

/** A stream the scenario feeds by hand; `log.cancelled` says whether its reader cancelled it. */
function fedStream() {
  let controller;
  const log = { cancelled: false, refused: 0 };
  const stream = new ReadableStream({
    start(c) {
      controller = c;
    },
    cancel() {
      log.cancelled = true;
    },
  });
  return {
    stream,
    log,
    // A source that keeps sending after it was cancelled: each refused chunk is counted.
    push(bytes) {
      try {
        controller.enqueue(bytes);
      } catch {
        log.refused += 1;
      }
    },
    close: () => controller.close(),
    error: (error) => controller.error(error),
  };
}

/**
 * A stream that serves `pieces` one per read; `log.drained` turns true once its reader has asked
 * past the last piece (every piece was read).
 */
function servedStream(pieces) {
  const log = { drained: false };
  let next = 0;
  const stream = new ReadableStream(
    {
      pull(controller) {
        if (next < pieces.length) {
          controller.enqueue(pieces[next]);
          next += 1;
        } else {
          controller.close();
          log.drained = true;
        }
      },
    },
    { highWaterMark: 0 },
  );
  return { stream, log };
}

/**
 * Enqueues a stream of `pieces` while the context is suspended and resumes once the player has
 * read all of it: the parts' places on the audio clock then depend on the schedule alone, not on
 * how fast this busy machine's main thread reads (a tiny first part that plays out before the
 * next read is an underrun, checked by its own scenario).
 */
async function enqueueWhileSuspended(context, player, pieces, descriptor) {
  await context.suspend();
  const served = servedStream(pieces);
  await player.enqueue("t1", { stream: served.stream, ...descriptor });
  await until(() => served.log.drained, 3000, "the player to read the whole stream");
  await sleep(20); // the read that brings `done` settles
  const resumed = await Promise.race([player.resume().then(() => true, () => false), sleep(3000).then(() => false)]);
  return resumed && context.state === "running";
}

/** Samples of a 440 Hz tone at `rate` lasting `seconds`, as 16-bit integers. */
function toneSamples(seconds, rate, hz = 440) {
  const samples = new Int16Array(Math.round(seconds * rate));
  for (let i = 0; i < samples.length; i += 1) samples[i] = Math.round(12000 * Math.sin((2 * Math.PI * hz * i) / rate));
  return samples;
}

const bytesOf = (typed) => new Uint8Array(typed.buffer.slice(0));

/** Cuts `bytes` at `sizes` (then the rest in pieces of the last size). */
function cut(bytes, sizes) {
  const pieces = [];
  let at = 0;
  let index = 0;
  while (at < bytes.length) {
    const size = sizes[Math.min(index, sizes.length - 1)];
    pieces.push(bytes.slice(at, at + size));
    at += size;
    index += 1;
  }
  return pieces;
}

function recorder() {
  const log = { starts: [], ends: [], gestures: 0, underruns: [] };
  return {
    log,
    onPlaybackStart: (turnId) => log.starts.push(turnId),
    onPlaybackEnd: (turnId, heardMs) => log.ends.push([turnId, heardMs]),
    onNeedsGesture: () => (log.gestures += 1),
    onUnderrun: (turnId, gapMs) => log.underruns.push([turnId, gapMs]),
  };
}

/** Every recorded start after the first begins where the one before it ends. */
function assertGapless(starts, label) {
  for (let i = 1; i < starts.length; i += 1) {
    const previous = starts[i - 1];
    const gap = starts[i].when - (previous.when + previous.duration);
    assert(Math.abs(gap) < 1e-6, `${label}: part ${i + 1} starts ${gap * 1000} ms after part ${i} ends`);
  }
}

/** Channel `index` of every recorded source's buffer, joined. */
function played(starts, index = 0) {
  const all = [];
  for (const start of starts) all.push(...start.node.buffer.getChannelData(index));
  return all;
}

const scenarios = {
  async oddChunkSizesPlayGaplessAtTheStreamsOwnRate({ make }) {
    return withAudio(async (context, sources) => {
      const events = recorder();
      const player = make({ audioContext: context, ...events });
      const samples = toneSamples(0.3, 24000);
      // One byte, a split sample (2 bytes across it), one byte, then odd pieces.
      const pieces = cut(bytesOf(samples), [1, 2, 1, 997]);
      if (!(await enqueueWhileSuspended(context, player, pieces, { format: "pcm16", sampleRate: 24000 }))) return { skipped: NO_AUDIO };
      await until(() => events.log.ends.length === 1, 5000, "the end of the stream");
      assert(sources.starts.length > 5, `played part by part (${sources.starts.length} parts)`);
      assert(sources.starts.every((s) => s.node.buffer.sampleRate === 24000), "buffers at the stream's rate");
      assertGapless(sources.starts, "pcm16");
      const got = played(sources.starts);
      assertEq(got.length, samples.length, "every sample, once");
      const wrong = got.findIndex((value, i) => value !== samples[i] / 32768);
      assertEq(wrong, -1, "samples exact across torn boundaries");
      assertEq(events.log.underruns, [], "no underrun");
      const [, heard] = events.log.ends[0];
      assert(Math.abs(heard - 300) <= quantum(context) * 1000, `heard ${heard} ms of 300`);
      player.free();
      return { parts: sources.starts.length, contextRate: context.sampleRate };
    });
  },

  async aSplitStereoFrameOfFloatsIsCarriedAndDeinterleaved({ make }) {
    return withAudio(async (context, sources) => {
      const events = recorder();
      const player = make({ audioContext: context, ...events });
      const frames = 1600; // 0.1 s at 16 kHz
      const interleaved = new Float32Array(frames * 2);
      for (let i = 0; i < frames; i += 1) {
        interleaved[2 * i] = Math.fround(0.25 * Math.sin(i / 7));
        interleaved[2 * i + 1] = Math.fround(-0.5 * Math.cos(i / 5));
      }
      // 5 bytes: one float and a byte; 7 more: the frame completes mid-way; 13: a frame and 5
      // bytes; then pieces of 4003 bytes (no whole frame count).
      const pieces = cut(bytesOf(interleaved), [5, 7, 13, 4003]);
      if (!(await enqueueWhileSuspended(context, player, pieces, { format: "f32", sampleRate: 16000, channels: 2 }))) return { skipped: NO_AUDIO };
      await until(() => events.log.ends.length === 1, 5000, "the end of the stream");
      assertGapless(sources.starts, "f32 stereo");
      const left = played(sources.starts, 0);
      const right = played(sources.starts, 1);
      assertEq(left.length, frames, "every frame");
      assert(left.every((v, i) => v === interleaved[2 * i]) && right.every((v, i) => v === interleaved[2 * i + 1]), "channels deinterleaved exactly");
      player.free();
    });
  },

  async aPartThatComesLateStartsAtOnceAndIsCountedAsAnUnderrun({ make }) {
    return withAudio(async (context, sources) => {
      const events = recorder();
      const player = make({ audioContext: context, ...events });
      const feed = fedStream();
      await player.enqueue("t1", { stream: feed.stream, format: "pcm16", sampleRate: 48000 });
      feed.push(bytesOf(toneSamples(0.05, 48000)));
      await until(() => sources.starts.length === 1, 3000, "the first part");
      const first = sources.starts[0];
      await untilAudioTime(context, first.when + first.duration + 0.1);
      feed.push(bytesOf(toneSamples(0.05, 48000)));
      feed.close();
      await until(() => events.log.ends.length === 1, 3000, "the end");
      const second = sources.starts[1];
      assert(second.when >= second.at - 1e-9, "scheduled at once, not in the past");
      assertEq(events.log.underruns.length, 1, "one underrun");
      const gapMs = events.log.underruns[0][1];
      const expected = (second.when - (first.when + first.duration)) * 1000;
      assert(Math.abs(gapMs - expected) < 1, `gap ${gapMs} ms, the clock says ${expected}`);
      const [, heard] = events.log.ends[0];
      assert(Math.abs(heard - 100) <= 2 * quantum(context) * 1000, `heard ${heard} ms: the parts, not the gap`);
      player.free();
      return { gapMs };
    });
  },

  async aStalledOrFailingStreamIsSkippedAndTheNextSentencePlays({ make }) {
    return withAudio(async (context, sources) => {
      const events = recorder();
      const player = make({ audioContext: context, streamIdleTimeoutMs: 200, ...events });
      const stalled = fedStream();
      stalled.push(bytesOf(toneSamples(0.05, 24000)));
      await player.enqueue("t1", { stream: stalled.stream, format: "pcm16", sampleRate: 24000 });
      await player.enqueue("t1", tone(context, 0.05));
      await until(() => sources.starts.length === 2, 3000, "the next sentence after the stall");
      assert(stalled.log.cancelled, "the stalled stream was cancelled");
      const failing = fedStream();
      failing.push(bytesOf(toneSamples(0.05, 24000)));
      await player.enqueue("t2", { stream: failing.stream, format: "pcm16", sampleRate: 24000 });
      await player.enqueue("t2", tone(context, 0.05));
      await until(() => sources.starts.length === 3, 3000, "the failing stream's first part");
      failing.error(new Error("synthesis broke"));
      await until(() => sources.starts.length === 4, 3000, "the next sentence after the error");
      // Not bytes: a stream of strings is skipped too.
      const strings = new ReadableStream({ start: (c) => (c.enqueue("pcm"), c.close()) });
      await player.enqueue("t3", { stream: strings, format: "pcm16", sampleRate: 24000 });
      await player.enqueue("t3", tone(context, 0.05));
      await until(() => sources.starts.length === 5, 3000, "the next sentence after the strings");
      player.free();
    });
  },

  async aStopDuringTheFirstChunkBetweenChunksOrBetweenSentencesCancelsAndDropsTheRest({ make }) {
    return withAudio(async (context, sources) => {
      const q = quantum(context);
      const result = {};
      // During the first chunk.
      {
        const events = recorder();
        const player = make({ audioContext: context, ...events });
        const feed = fedStream();
        feed.push(bytesOf(toneSamples(1, 24000)));
        await player.enqueue("t1", { stream: feed.stream, format: "pcm16", sampleRate: 24000 });
        await until(() => sources.starts.length === 1, 3000, "the first chunk");
        const first = sources.starts[0];
        await untilAudioTime(context, first.when + 0.1);
        const before = context.currentTime;
        const heard = player.stop();
        const after = context.currentTime;
        assert(heard >= (before - first.when - q) * 1000 && heard <= (after - first.when + q) * 1000, `heard ${heard} ms on the clock`);
        assert(sources.stops.at(-1).when - before <= q + 1e-9, "silent within a quantum");
        await sleep(0);
        assert(feed.log.cancelled, "the stream's reader was cancelled");
        feed.push(bytesOf(toneSamples(0.1, 24000)));
        await sleep(100);
        assertEq(sources.starts.length, 1, "nothing after the stop");
        assert(feed.log.refused === 1, "the stream refused what came after");
        player.free();
        result.duringFirst = heard;
      }
      // Between chunks: the first played out, the stream is still open.
      {
        const events = recorder();
        const player = make({ audioContext: context, ...events });
        const feed = fedStream();
        const begin = sources.starts.length;
        feed.push(bytesOf(toneSamples(0.1, 24000)));
        await player.enqueue("t2", { stream: feed.stream, format: "pcm16", sampleRate: 24000 });
        await until(() => sources.starts.length === begin + 1, 3000, "the chunk");
        const first = sources.starts[begin];
        await untilAudioTime(context, first.when + first.duration + 0.05);
        const heard = player.stop();
        assert(Math.abs(heard - 100) <= q * 1000, `heard ${heard} ms: the whole first chunk`);
        await sleep(0);
        assert(feed.log.cancelled, "cancelled between chunks");
        feed.push(bytesOf(toneSamples(0.1, 24000)));
        await sleep(100);
        assertEq(sources.starts.length, begin + 1, "nothing after the stop");
        player.free();
        result.betweenChunks = heard;
      }
      // Between sentences: the first stream closed and played, the second brought nothing yet.
      {
        const events = recorder();
        const player = make({ audioContext: context, ...events });
        const one = fedStream();
        const two = fedStream();
        const begin = sources.starts.length;
        one.push(bytesOf(toneSamples(0.1, 24000)));
        one.close();
        await player.enqueue("t3", { stream: one.stream, format: "pcm16", sampleRate: 24000 });
        await player.enqueue("t3", { stream: two.stream, format: "pcm16", sampleRate: 24000 });
        await until(() => sources.starts.length === begin + 1, 3000, "the first sentence");
        const first = sources.starts[begin];
        await untilAudioTime(context, first.when + first.duration + 0.05);
        const heard = player.stop();
        assert(Math.abs(heard - 100) <= q * 1000, `heard ${heard} ms: the first sentence`);
        await sleep(0);
        assert(two.log.cancelled, "the next sentence's stream was cancelled");
        two.push(bytesOf(toneSamples(0.1, 24000)));
        await sleep(100);
        assertEq(sources.starts.length, begin + 1, "nothing of the next sentence");
        player.free();
        result.betweenSentences = heard;
      }
      return result;
    });
  },

  async aSuspendedContextHoldsAnArrivingStreamInOrderUntilResume({ make }) {
    const context = new AudioContext();
    await context.suspend();
    const sources = sourceRecorder();
    try {
      const events = recorder();
      const player = make({ audioContext: context, ...events });
      const feed = fedStream();
      await player.enqueue("t1", { stream: feed.stream, format: "pcm16", sampleRate: 24000 });
      await player.enqueue("t1", tone(context, 0.05));
      for (let i = 0; i < 3; i += 1) {
        feed.push(bytesOf(toneSamples(0.05, 24000, 300 + 100 * i)));
        await sleep(20);
      }
      feed.close();
      await sleep(100);
      assertEq(sources.starts.length, 0, "nothing scheduled while suspended");
      assertEq(player.state, "suspended", "state");
      assert(events.log.gestures >= 1, "asked for a gesture");
      const resumed = await Promise.race([player.resume().then(() => true, () => false), sleep(3000).then(() => false)]);
      if (!resumed || context.state !== "running") return { skipped: NO_AUDIO };
      await until(() => sources.starts.length === 4, 3000, "every part after resume");
      assertGapless(sources.starts, "after resume");
      assertEq(sources.starts.map((s) => s.node.buffer.sampleRate), [24000, 24000, 24000, context.sampleRate], "the stream's parts, then the next sentence");
      player.free();
    } finally {
      sources.restore();
      await context.close().catch(() => {});
    }
  },

  async badStreamDescriptorsRejectWithNamedErrors({ make, speech }) {
    const context = new AudioContext();
    const player = make({ audioContext: context });
    const stream = () => new ReadableStream();
    await assertThrows(() => player.enqueue("t1", { stream: 5, format: "pcm16", sampleRate: 24000 }), TypeError, /audio\.stream/, "stream");
    await assertThrows(() => player.enqueue("t1", { stream: stream(), format: "mp3", sampleRate: 24000 }), RangeError, /audio\.format/, "format");
    await assertThrows(() => player.enqueue("t1", { stream: stream(), format: 16, sampleRate: 24000 }), TypeError, /audio\.format/, "format type");
    await assertThrows(() => player.enqueue("t1", { stream: stream(), format: "pcm16", sampleRate: 4000 }), RangeError, /audio\.sampleRate/, "rate");
    await assertThrows(() => player.enqueue("t1", { stream: stream(), format: "pcm16" }), TypeError, /audio\.sampleRate/, "no rate");
    await assertThrows(() => player.enqueue("t1", { stream: stream(), format: "pcm16", sampleRate: 24000, channels: 1.5 }), RangeError, /audio\.channels/, "channels");
    const locked = stream();
    locked.getReader();
    await assertThrows(() => player.enqueue("t1", { stream: locked, format: "pcm16", sampleRate: 24000 }), TypeError, /locked/, "locked");
    assertThrows(() => make({ audioContext: context, streamIdleTimeoutMs: -1 }), RangeError, /streamIdleTimeoutMs/, "idle timeout");
    // openAiCompatibleSpeech's own options, named as the route's are.
    const good = { url: "/v1/audio/speech", model: "tts-1", voice: "alloy" };
    await assertThrows(() => speech({ ...good, voice: undefined }), TypeError, /options\.voice/, "speech voice");
    await assertThrows(() => speech({ ...good, format: "mp3" }), RangeError, /options\.format/, "speech format");
    await assertThrows(() => speech({ ...good, headers: "x" }), TypeError, /^options\.headers must be an object/, "speech headers");
    await assertThrows(() => speech({ ...good, body: [] }), TypeError, /^options\.body must be an object/, "speech body");
    await assertThrows(() => speech(null), TypeError, /options/, "speech options");
    assertEq(typeof speech({ ...good, headers: { "x-app": "1" }, body: { speed: 1.2 } }), "function", "objects are accepted");
    player.free();
    await context.close();
  },

  // VoiceSession through openAiCompatibleSpeech and the dev stack's streamed endpoint.
  async aSessionSpeaksThroughOpenAiCompatibleSpeechAndABargeInMidStreamCountsOnlyWhatPlayed({ devstack, session: makeSession, speech }) {
    return withAudio(async (context, sources) => {
      // A stream slower than real time (the tone is 60 ms a character, 2 parts a second here):
      // the sentence is cut while its stream still arrives.
      const sentence = "One two three four five six seven eight nine ten eleven twelve.";
      const synthesize = speech({ url: `${devstack}/v1/audio/speech?chunkBytes=9600&totalMs=8000`, model: "tts-1", voice: "alloy" });
      const signals = [];
      const heard = [];
      const events = [];
      const session = makeSession({
        routes: [{ name: "r", generate: () => sentence }],
        recoveryText: RECOVERY,
        synthesize: (text, request) => (signals.push(request.signal), synthesize(text, request)),
        audioContext: context,
        onHeard: (turnId, text) => heard.push(text),
        onEvent: (event) => events.push(event),
      });
      await session.start({ microphone: false });
      session.sendText("count");
      await until(() => sources.starts.length >= 5, 8000, "five parts of the stream");
      const before = context.currentTime;
      session.interrupt();
      const startsAtCut = sources.starts.length;
      const playedMs = sources.starts.reduce((sum, s) => sum + Math.max(0, Math.min(s.duration, before - s.when)), 0) * 1000;
      await until(() => heard.length === 1, 3000, "the heard part");
      assert(signals[0].aborted, "the synthesize signal aborted");
      await sleep(700); // more parts would have arrived by now
      assertEq(sources.starts.length, startsAtCut, "nothing after the barge-in");
      const words = sentence.split(" ");
      const text = heard[0];
      assert(sentence.startsWith(text), `"${text}" is a prefix of the sentence`);
      const heardWords = text === "" ? 0 : text.split(" ").length;
      const allowed = Math.floor(words.length * (playedMs + 3) / (sentence.length * 60));
      assert(heardWords <= allowed, `${heardWords} words heard, the clock allows ${allowed}`);
      assert(events.some((e) => e.type === "underrun"), "the slow stream underran");
      const stats = await (await fetch(`${devstack}/__stats`)).json();
      assert(stats.tts.aborted >= 1, "the request was aborted at the dev stack");
      await session.stop();
      session.free();
      return { heardWords, allowed, playedMs: Math.round(playedMs) };
    });
  },

  async aStalledStreamIsSkippedAfterTtsTimeoutMsAndTheTurnGoesOn({ devstack, session: makeSession, speech }) {
    return withAudio(async (context, sources) => {
      const ok = speech({ url: `${devstack}/v1/audio/speech`, model: "tts-1", voice: "alloy" });
      const stall = speech({ url: `${devstack}/v1/audio/speech/stall?chunkBytes=960`, model: "tts-1", voice: "alloy" });
      const errors = [];
      const turns = [];
      const session = makeSession({
        routes: [{ name: "r", generate: () => "Stall one two three. Quick two." }],
        recoveryText: RECOVERY,
        synthesize: (text, request) => (text.startsWith("Stall") ? stall : ok)(text, request),
        ttsTimeoutMs: 400,
        audioContext: context,
        onError: (error) => errors.push(error),
        onTurn: (record) => turns.push(record),
      });
      await session.start({ microphone: false });
      session.sendText("go");
      await until(() => turns.length === 1 && session.state === "listening", 8000, "the turn spoken");
      assertEq(errors.map((e) => [e.code, e.terminal]), [["tts_timeout", false]], "one non-terminal timeout");
      const rates = sources.starts.map((s) => s.node.buffer.sampleRate);
      assert(rates.every((rate) => rate === 24000) && sources.starts.length >= 2, "the stalled sentence's half, then the next");
      await session.stop();
      session.free();
    });
  },

  // A stream that fails after some of it sounded: what was scheduled plays out, its turn waits
  // for it and a barge-in during it silences it; heard text stops in it (P3: what followed it came
  // after a gap no prefix of the answer can say).
  async aStreamThatBrokeAfterItSoundedKeepsItsTurnUntilItsTailEndsAndEndsTheHeardText({ session: makeSession }) {
    return withAudio(async (context, sources) => {
      const BROKEN = "Broken one two three four five six.";
      const NEXT = "Then the rest of it and more words.";
      const run = async (answer, tailSeconds, before) => {
        const broken = fedStream();
        const synthesize = (text) =>
          text === BROKEN
            ? { stream: broken.stream, format: "pcm16", sampleRate: 24000 }
            : { stream: servedStream([bytesOf(toneSamples(2.0, 24000))]).stream, format: "pcm16", sampleRate: 24000 };
        const heard = [];
        const errors = [];
        const session = makeSession({
          routes: [{ name: "r", generate: () => answer }],
          recoveryText: RECOVERY,
          synthesize,
          audioContext: context,
          onHeard: (turnId, text) => heard.push(text),
          onError: (error) => errors.push(error.code),
        });
        const startsBefore = sources.starts.length;
        await session.start({ microphone: false });
        session.sendText("go");
        broken.push(bytesOf(toneSamples(tailSeconds, 24000)));
        await until(() => sources.starts.length === startsBefore + 1, 3000, "the broken sentence sounds");
        broken.error(new TypeError("network error mid-stream"));
        await until(() => errors.includes("tts_failed"), 3000, "the stream's failure");
        await before({ session, startsBefore });
        session.interrupt();
        const at = context.currentTime;
        await until(() => heard.length === 1, 3000, "the heard part");
        const stopped = new Set(sources.stops.map((s) => s.node));
        const sounding = sources.starts.slice(startsBefore).filter((s) => s.when + s.duration > at + 0.01 && !stopped.has(s.node));
        await session.stop();
        session.free();
        return { heard: heard[0], sounding: sounding.length };
      };
      // The broken sentence is the whole answer: its 1.5 s tail keeps the turn speaking.
      const alone = await run(BROKEN, 1.5, async ({ session }) => {
        await sleep(200);
        assertEq(session.state, "speaking", "speaking through the broken sentence's tail");
      });
      assertEq(alone.sounding, 0, "a barge-in during the tail silences it");
      assert(BROKEN.startsWith(alone.heard), `heard "${alone.heard}" is a prefix of the broken sentence`);
      // A short tail, then the next sentence plays: heard text still stops in the broken one.
      const followed = await run(`${BROKEN} ${NEXT}`, 0.3, async ({ startsBefore }) => {
        await until(() => sources.starts.length === startsBefore + 2, 3000, "the next sentence sounds");
        const next = sources.starts[startsBefore + 1];
        await untilAudioTime(context, next.when + 1.0);
      });
      assertEq(followed.sounding, 0, "the barge-in silenced the next sentence");
      assert(BROKEN.startsWith(followed.heard), `heard "${followed.heard}" stops in the broken sentence, not in "${NEXT}"`);
      return { alone: alone.heard, followed: followed.heard };
    });
  },

  async aStreamThatKeepsSendingAfterItsSignalAbortedNeverPlaysAgain({ session: makeSession }) {
    return withAudio(async (context, sources) => {
      const sends = { after: 0 };
      let signal;
      const synthesize = (text, request) => {
        signal = request.signal;
        let timer;
        const stream = new ReadableStream({
          start(controller) {
            // Ignores the signal and keeps sending, as a careless adapter would.
            timer = setInterval(() => {
              if (signal.aborted) sends.after += 1;
              try {
                controller.enqueue(bytesOf(toneSamples(0.02, 24000)));
              } catch {}
              if (sends.after > 20) clearInterval(timer);
            }, 10);
          },
        });
        return { stream, format: "pcm16", sampleRate: 24000 };
      };
      const session = makeSession({ routes: [{ name: "r", generate: () => "Never ending." }], recoveryText: RECOVERY, synthesize, audioContext: context });
      await session.start({ microphone: false });
      session.sendText("go");
      await until(() => sources.starts.length >= 3, 5000, "a few parts");
      session.interrupt();
      const count = sources.starts.length;
      await until(() => sends.after > 20, 3000, "the adapter's sends after the abort");
      assert(signal.aborted, "its signal aborted");
      assertEq(sources.starts.length, count, "no part after the barge-in");
      await session.stop();
      session.free();
    });
  },
};

export async function runScenario(name, devstack, make, session, speech) {
  const named = (options) => session({ sessionId: "s", ...options });
  return runIn(scenarios, name, { devstack, make, session: named, speech }, noSkipInChrome);
}
