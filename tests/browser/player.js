// SpeechPlayer scenarios on a real AudioContext: the starts and stops the player asks of the audio
// graph are recorded on AudioBufferSourceNode's prototype, heard time is checked against the audio
// clock (never the wall clock), and silence is read from an AnalyserNode on the output.
// `ctx` is `{ devstack, make }`, `make(options)` being `new SpeechPlayer(options)`.

import { assert, assertEq, assertThrows, sleep, noSkipInChrome, runIn } from "./support.js";
import { NO_AUDIO, peak, quantum, runningContext, sourceRecorder, synthesizeFrom, tone, untilAudioTime, wav } from "./audio.js";

async function until(condition, timeoutMs, label) {
  const deadline = performance.now() + timeoutMs;
  while (!(await condition())) {
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${label}`);
    await sleep(5);
  }
}

/** Callbacks that record what the player reports. */
function recorder() {
  const log = { starts: [], ends: [], gestures: 0 };
  return {
    log,
    onPlaybackStart: (turnId) => log.starts.push(turnId),
    onPlaybackEnd: (turnId, heardMs) => log.ends.push([turnId, heardMs]),
    onNeedsGesture: () => (log.gestures += 1),
  };
}

/** Runs `body(context, sources)` on a running context, or reports the skip. */
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

const scenarios = {
  // The one rule for a callback that throws: reported once to onError as a non-terminal
  // callback_error (the thrown value as its cause), and the player goes on.
  async aThrowingCallbackIsReportedOnceAndThePlayerGoesOn({ make }) {
    return withAudio(async (context, sources) => {
      const errors = [];
      const ends = [];
      const player = make({
        audioContext: context,
        onPlaybackStart(turnId) {
          throw new Error(`app bug in ${turnId}`);
        },
        onPlaybackEnd: (turnId) => ends.push(turnId),
        onError: (error) => errors.push(error),
      });
      await player.enqueue("t1", tone(context, 0.1));
      await until(() => ends.length === 1, 3000, "t1 played out");
      assertEq(errors.length, 1, "reported once");
      const [error] = errors;
      assert(error instanceof Error, "an Error");
      assertEq([error.code, error.terminal, error.callback, error.turnId, error.cause.message], ["callback_error", false, "onPlaybackStart", "t1", "app bug in t1"], "the report");
      await player.enqueue("t2", tone(context, 0.1));
      await until(() => ends.length === 2, 3000, "t2 played out after the throw");
      assertEq([sources.starts.length, errors.length], [2, 2], "both played; t2's throw reported too");
      // A throwing onError has nowhere else to go (a player has no onEvent): nothing loops.
      const quiet = make({ audioContext: context, onPlaybackStart: () => { throw new Error("again"); }, onError: () => { throw new Error("onError too"); }, onPlaybackEnd: (turnId) => ends.push(turnId) });
      await quiet.enqueue("t3", tone(context, 0.1));
      await until(() => ends.length === 3, 3000, "t3 played out");
      quiet.free();
      player.free();
    });
  },

  async threeChunksPlayGaplessAndEndWithTheirLength({ devstack, make }) {
    return withAudio(async (context, sources) => {
      const events = recorder();
      const player = make({ audioContext: context, ...events });
      const first = await synthesizeFrom(devstack, "Hello there."); // 12 chars → 720 ms WAV
      await Promise.all([
        player.enqueue("t1", first),
        player.enqueue("t1", wav(300)),
        player.enqueue("t1", tone(context, 0.25)),
      ]);
      assertEq(player.state, "playing", "state while playing");
      await until(() => events.log.ends.length === 1, 5000, "the end of the turn");
      assertEq(sources.starts.length, 3, "three sources");
      const q = quantum(context);
      for (let i = 1; i < 3; i += 1) {
        const previous = sources.starts[i - 1];
        const gap = sources.starts[i].when - (previous.when + previous.duration);
        assert(Math.abs(gap) <= q, `chunk ${i + 1} starts ${gap * 1000} ms after chunk ${i} ends`);
      }
      const total = sources.starts.reduce((sum, start) => sum + start.duration, 0) * 1000;
      assertEq(events.log.starts, ["t1"], "one playback start");
      const [turnId, heard] = events.log.ends[0];
      assertEq(turnId, "t1", "end of t1");
      assert(Math.abs(heard - total) <= q * 1000, `heard ${heard} ms of ${total} ms`);
      assertEq(player.state, "idle", "idle after the end");
      player.free();
    });
  },

  async stopMidChunkReturnsHeardFromTheAudioClockAndSilencesWithinAQuantum({ make }) {
    return withAudio(async (context, sources) => {
      const analyser = context.createAnalyser();
      analyser.fftSize = 128; // one render quantum
      analyser.connect(context.destination);
      const events = recorder();
      const player = make({ audioContext: context, destination: analyser, ...events });
      await player.enqueue("t1", tone(context, 0.4));
      await player.enqueue("t1", tone(context, 2));
      const second = sources.starts[1];
      await untilAudioTime(context, second.when + 0.3);
      assert(peak(analyser) > 0.1, "the tone is audible before the stop");
      const before = context.currentTime;
      const heard = player.stop();
      const after = context.currentTime;
      const q = quantum(context) * 1000;
      // What played: all of the first chunk and the second up to the stop, on the audio clock.
      const low = 400 + (before - second.when) * 1000 - q;
      const high = 400 + (after - second.when) * 1000 + q;
      const first = sources.starts[0];
      assert(Math.abs(first.when + first.duration - second.when) < 1e-6, "back to back");
      assert(heard >= low && heard <= high, `heard ${heard} ms, expected ${low}..${high}`);
      assertEq(events.log.ends.map(([id]) => id), ["t1"], "onPlaybackEnd for the stopped turn");
      assert(Math.abs(events.log.ends[0][1] - heard) < 1e-9, "onPlaybackEnd gets the heard ms");
      const stopAt = sources.stops.at(-1).when;
      assert(stopAt - before <= quantum(context) + 1e-9, `sources stop within a quantum (${(stopAt - before) * 1000} ms)`);
      // Silence within the next quantum: once the clock passed the ramp, the analyser's window
      // (one quantum) holds only zeros.
      await untilAudioTime(context, before + 2 * quantum(context));
      assert(peak(analyser) < 1e-4, `silent after the stop, peak ${peak(analyser)}`);
      assertEq(player.state, "idle", "idle after stop");
      return { heardMs: heard, expected: [low + q, high - q] };
    });
  },

  async audioOfAStoppedTurnNeverPlaysEvenWhenItsDecodeFinishesLater({ devstack, make }) {
    return withAudio(async (context, sources) => {
      const events = recorder();
      const player = make({ audioContext: context, ...events });
      const bytes = await synthesizeFrom(devstack, "A stale sentence.");
      const decoding = player.enqueue("t1", bytes); // decode in flight
      assertEq(player.stop(), 0, "nothing played yet");
      await decoding;
      await player.enqueue("t1", tone(context, 0.2)); // enqueued after the stop
      await sleep(150);
      assertEq(sources.starts.length, 0, "nothing of t1 started");
      assertEq(events.log.starts, [], "no playback start");
      await player.enqueue("t2", tone(context, 0.1));
      assertEq(sources.starts.length, 1, "another turn plays");
      assertEq(events.log.starts, ["t2"], "t2 started");
      player.free();
    });
  },

  async chunksPlayInEnqueueOrderWhenDecodesFinishOutOfOrder({ make }) {
    return withAudio(async (context, sources) => {
      const player = make({ audioContext: context });
      const slow = player.enqueue("t1", wav(3000, 48000)); // long decode, first in line
      const quick = player.enqueue("t1", wav(50, 8000));
      await player.enqueue("t1", tone(context, 0.05)); // already decoded
      await Promise.all([slow, quick]);
      assertEq(sources.starts.length, 3, "all three scheduled");
      const durations = sources.starts.map((start) => Math.round(start.duration * 1000));
      assertEq(durations, [3000, 50, 50], "play order = enqueue order");
      player.stop();
      player.free();
    });
  },

  async aSuspendedContextWaitsForAGestureThenPlaysInOrder({ make }) {
    return withAudio(async (context, sources) => {
      await context.suspend(); // what a browser does to a page without a user gesture
      const events = recorder();
      const player = make({ audioContext: context, ...events });
      await player.enqueue("t1", tone(context, 0.2, 440));
      await player.enqueue("t1", tone(context, 0.1, 880));
      await sleep(100);
      assertEq(player.state, "suspended", "state");
      assertEq(events.log.gestures, 1, "onNeedsGesture once");
      assertEq(sources.starts.length, 0, "nothing played");
      await player.resume(); // a click handler would call this
      await until(() => sources.starts.length === 2, 2000, "both chunks");
      assertEq(sources.starts.map((s) => Math.round(s.duration * 1000)), [200, 100], "in order");
      assertEq(player.state, "playing", "playing after resume");
      await until(() => events.log.ends.length === 1, 3000, "the end");
      player.free();
    });
  },

  async callbacksMayStopAndFreeThePlayer({ make }) {
    return withAudio(async (context, sources) => {
      let player;
      let heardInside;
      player = make({
        audioContext: context,
        onPlaybackStart: () => {
          heardInside = player.stop();
        },
        onPlaybackEnd: () => player.free(),
      });
      await player.enqueue("t1", tone(context, 0.5));
      assertEq(typeof heardInside, "number", "stop() from onPlaybackStart");
      assertEq(sources.stops.length, 1, "the source was stopped");
      await sleep(50);
      assertEq([player.stop(), player.state], [0, "idle"], "freed from onPlaybackEnd: inert");
      await assertThrows(() => player.enqueue("t2", tone(context, 0.1)), DOMException, /freed/, "enqueue after free");
      assertEq(sources.starts.length, 1, "nothing more played");
    });
  },

  async badInputRejectsWithNamedErrors({ make }) {
    const context = new AudioContext();
    const cases = [
      ["options not an object", 5, TypeError, /options/],
      ["audioContext", { audioContext: "default" }, TypeError, /options\.audioContext/],
      ["onPlaybackStart", { audioContext: context, onPlaybackStart: 1 }, TypeError, /options\.onPlaybackStart/],
      ["onNeedsGesture", { audioContext: context, onNeedsGesture: "x" }, TypeError, /options\.onNeedsGesture/],
      ["destination", { audioContext: context, destination: {} }, TypeError, /options\.destination/],
      ["destination without context", { destination: context.destination }, TypeError, /options\.destination/],
    ];
    for (const [label, options, type, pattern] of cases) {
      await assertThrows(() => make(options), type, pattern, label);
    }
    const player = make({ audioContext: context });
    await assertThrows(() => player.enqueue(5, wav(10)), TypeError, /turnId/, "numeric turnId");
    await assertThrows(() => player.enqueue("", wav(10)), RangeError, /turnId/, "empty turnId");
    await assertThrows(() => player.enqueue("t1", "audio.wav"), TypeError, /audio/, "string audio");
    await assertThrows(() => player.enqueue("t1", new Uint8Array(8)), TypeError, /audio/, "typed array");
    await assertThrows(() => player.enqueue("t1", new ArrayBuffer(0)), RangeError, /audio/, "empty audio");
    await assertThrows(() => player.enqueue("t1", new Uint8Array([1, 2, 3, 4, 5]).buffer), RangeError, /audio/, "undecodable");
    assertEq(player.stop(), 0, "nothing played");
    player.free();
    player.free(); // idempotent
    await context.close();
  },
};

export async function runScenario(name, devstack, make) {
  return runIn(scenarios, name, { devstack, make }, noSkipInChrome);
}
