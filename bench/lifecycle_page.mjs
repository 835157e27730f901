// In-page part of the lifecycle bench (issue 25: a session that survives the browser). A
// LiveTranscriber that the bench's Node side takes offline and back (this page notes the `online`
// event, the socket open again and what provision() did meanwhile), and one capturing the default
// microphone whose track the page stops (noted: the stop, `microphone_restored`, and the first
// audio bytes the dev stack's mock STT counts after it). Times only; nothing asserts one.

import init, { LiveTranscriber } from "/pkg/turnguard.js";

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const AUDIO_CONFIG = { encoding: "wav/pcm", sample_rate: 16000, bit_depth: 16, channels: 1 };

async function until(condition, timeoutMs, label) {
  const deadline = performance.now() + timeoutMs;
  while (!condition()) {
    if (performance.now() > deadline) throw new Error(`bench: timed out waiting for ${label}`);
    await sleep(2);
  }
}

/**
 * A Deepgram LiveTranscriber on the dev stack's mock, which cuts each of its sockets (1006)
 * `dropAfterMs` after it opened: Chromium's offline emulation holds an open socket's traffic
 * rather than failing it, so the cut is the server's, while the page is offline. Deepgram's
 * credentials serve one connection (R6): every reconnect calls provision(), so "no provision()
 * while offline" is something the transcriber has to hold back, and the provision() made after
 * `online` is timed apart (the app's backend, not turnguard). A socket open `dropAfterMs` counts as
 * stable here and the backoff has no jitter: each cut waits the first delay (500 ms), which ends
 * while the page is still offline.
 *
 * Returns the handle the bench's Node side drives (the caller keeps it on `window`): `openFresh()`
 * (open, and not cut for at least half of `dropAfterMs`), `beginRun()` just before it goes offline,
 * `cut()` (offline seen and the socket not open), `reopened()` (open again after `online`),
 * `results()` and `stop()`.
 */
export async function reconnectingTranscriber(devstack, { dropAfterMs }) {
  await init();
  const key = `bench-online-${Math.random().toString(36).slice(2)}`;
  const runs = [];
  const provisions = [];
  let offlineProvisions = 0;
  let run = null;
  let openAt = -Infinity;
  let transcriber = null;
  const counters = () => transcriber?.stats ?? { provisions: 0, connections: 0 };
  // Registered before the transcriber's own listeners: these run first.
  window.addEventListener("offline", () => {
    if (!run || run.offlineAt !== undefined) return;
    run.offlineAt = performance.now();
    run.offlineConnections = counters().connections;
  });
  window.addEventListener("online", () => {
    if (!run || run.offlineAt === undefined || run.onlineAt !== undefined) return;
    run.onlineAt = performance.now();
    run.connectionsWhileOffline = counters().connections - run.offlineConnections;
  });
  const provision = async ({ signal, reason }) => {
    const started = performance.now();
    if (!navigator.onLine) offlineProvisions += 1;
    try {
      const response = await fetch(new URL("/api/stt/deepgram", devstack), {
        method: "POST",
        signal,
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ reason, key, socket: `mock_drop_after_ms=${dropAfterMs}` }),
      });
      if (!response.ok) throw Object.assign(new Error(`HTTP ${response.status}`), { status: response.status });
      return await response.json();
    } finally {
      provisions.push({ started, ms: performance.now() - started });
    }
  };
  const errors = [];
  transcriber = new LiveTranscriber({
    protocol: "deepgram",
    provision,
    policy: { stableOpenMs: Math.floor(dropAfterMs / 2), jitter: "none" },
    onStateChange: (state) => {
      if (state !== "open") return;
      openAt = performance.now();
      if (run?.onlineAt !== undefined) run.openAt ??= openAt;
    },
    onError: (error) => errors.push(error.code),
  });
  await transcriber.start();
  return {
    openFresh: () => transcriber.state === "open" && performance.now() - openAt < dropAfterMs / 2,
    beginRun: () => {
      run = {};
      runs.push(run);
    },
    cut: () => run?.offlineAt !== undefined && transcriber.state !== "open",
    reopened: () => run?.openAt !== undefined,
    results: () => ({
      dropAfterMs,
      offlineProvisions,
      errors,
      runs: runs
        .filter((r) => r.openAt !== undefined)
        .map((r) => {
          // provision() calls made from `online` to the open: the app's backend, not turnguard.
          const provisionMs = provisions.filter((p) => p.started >= r.onlineAt && p.started <= r.openAt).reduce((sum, p) => sum + p.ms, 0);
          const onlineToOpenMs = r.openAt - r.onlineAt;
          return { onlineToOpenMs, provisionMs, ownMs: onlineToOpenMs - provisionMs, connectionsWhileOffline: r.connectionsWhileOffline };
        }),
    }),
    async stop() {
      await transcriber.stop();
      transcriber.free();
    },
  };
}

/**
 * `runs` times: the default microphone (the fake device) captured by a LiveTranscriber on the
 * dev stack's Gladia mock, its track stopped from the page. Per run: stop → `microphone_restored`
 * (turnguard notices a stopped track within one 250 ms check, then opens the microphone again),
 * the event's `gapMs` (loss noticed → restored), and stop → the first audio byte the mock counts
 * after the loss (its per-session counter polled from the moment `microphone_lost` comes: as
 * coarse as one poll, a few milliseconds).
 */
export async function trackEndRecapture(devstack, runs) {
  await init();
  const Native = navigator.mediaDevices.getUserMedia;
  const streams = [];
  navigator.mediaDevices.getUserMedia = async function (constraints) {
    const stream = await Native.call(this, constraints);
    streams.push(stream);
    return stream;
  };
  let sessionId = null;
  const bytes = async () => (await (await fetch(new URL(`/__stats?protocol=gladia&key=${sessionId}`, devstack))).json())?.bytes ?? 0;
  /** The time the mock's byte count first rises over its count when this was called, or null. */
  const firstBytesAfterNow = async () => {
    const before = await bytes();
    const deadline = performance.now() + 10_000;
    while (performance.now() < deadline) {
      if ((await bytes()) > before) return performance.now();
    }
    return null;
  };
  const restored = [];
  const errors = [];
  let firstBytes = null;
  const transcriber = new LiveTranscriber({
    provision: async ({ signal }) => {
      const response = await fetch(new URL("/stt/normal/v2/live", devstack), { method: "POST", signal, headers: { "content-type": "application/json" }, body: JSON.stringify(AUDIO_CONFIG) });
      const session = await response.json();
      sessionId = session.id;
      return session;
    },
    onEvent: (event) => event.type === "microphone_restored" && restored.push({ at: performance.now(), gapMs: event.gapMs }),
    onError: (error) => {
      errors.push(error.code);
      // Nothing is captured from here until the microphone is open again: the count now is the
      // old capture's last byte.
      if (error.code === "microphone_lost") firstBytes = firstBytesAfterNow();
    },
  });
  const samples = { restoredMs: [], gapMs: [], firstByteMs: [], noBytes: 0 };
  try {
    await transcriber.start();
    await transcriber.attachMicrophone();
    for (let n = 0; n < runs; n += 1) {
      // Let the capture run a moment before its track ends.
      await sleep(300);
      const before = restored.length;
      firstBytes = null;
      const stoppedAt = performance.now();
      for (const track of streams.at(-1).getAudioTracks()) track.stop();
      await until(() => restored.length > before, 10_000, "microphone_restored");
      const back = restored[before];
      samples.restoredMs.push(back.at - stoppedAt);
      samples.gapMs.push(back.gapMs);
      const byteAt = firstBytes && (await firstBytes);
      if (byteAt === null || byteAt === undefined) samples.noBytes += 1;
      else samples.firstByteMs.push(byteAt - stoppedAt);
    }
    return { ...samples, streams: streams.length, errors };
  } finally {
    await transcriber.stop();
    transcriber.free();
    navigator.mediaDevices.getUserMedia = Native;
  }
}
