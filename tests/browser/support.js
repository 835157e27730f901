// Helpers shared by the browser scenarios: assertions, scripted routes, a TTS recorder.

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

export function assert(condition, message) {
  if (!condition) throw new Error(`assertion failed: ${message}`);
}

export function assertEq(actual, expected, message) {
  const a = JSON.stringify(actual);
  const e = JSON.stringify(expected);
  if (a !== e) throw new Error(`${message}: expected ${e}, got ${a}`);
}

/** Expects `action` to throw (or reject with) an instance of `type` whose message matches `pattern`. */
export async function assertThrows(action, type, pattern, label) {
  let caught;
  try {
    await action();
  } catch (error) {
    caught = error;
  }
  assert(caught !== undefined, `${label}: expected a ${type.name}, nothing was thrown`);
  assert(caught instanceof type, `${label}: expected a ${type.name}, got ${caught && caught.name}: ${caught && caught.message}`);
  assert(pattern.test(caught.message), `${label}: message "${caught.message}" does not match ${pattern}`);
}

/** Records everything that would reach TTS, in order. */
export function speaker() {
  const spoken = [];
  return {
    spoken,
    onAcceptedText: (turnId, text) => spoken.push({ turnId, kind: "answer", text }),
    onRecovery: (turnId, text) => spoken.push({ turnId, kind: "recovery", text }),
  };
}

/** A route whose `generate` follows `behave(request, callNumber)` and keeps every request. */
export function route(name, behave) {
  const calls = [];
  return {
    name,
    calls,
    generate(request) {
      calls.push(request);
      return behave(request, calls.length);
    },
  };
}

/** Answers after `ms`, ignoring the abort signal (the worst case for a late answer). */
export const answerAfter = (ms, text) => () =>
  new Promise((resolve) => setTimeout(() => resolve(text), ms));

export const failWith = (error) => () => Promise.reject(error);

export const never = () => new Promise(() => {});

/** A small seeded PRNG (mulberry32), so random schedules are repeatable. */
export function seededRandom(seed) {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// ---- LiveTranscriber scenarios (transcriber.js, transcriber_ends.js) ----
// Here rather than in a module of their own: a test page that loads many modules at once stalled
// the browsers here now and then.

/** The compressed policy of the issue, with exact delays so gaps can be checked. */
export const FAST = { stableOpenMs: 400, initialDelayMs: 50, maxDelayMs: 400, jitter: "none" };
export const AUDIO_CONFIG = { encoding: "wav/pcm", sample_rate: 16000, bit_depth: 16, channels: 1 };

export async function serverStats(devstack) {
  const response = await fetch(`${devstack}/__stats`);
  return (await response.json()).stt;
}

export async function sessionStats(devstack, id) {
  const session = (await serverStats(devstack)).sessions[id];
  assert(session !== undefined, `the server knows session ${id}`);
  return session;
}

/** A provision() as an app writes it: a call to its own backend, no key in the page. */
export function backend(devstack, mode, query = "", config = AUDIO_CONFIG) {
  const calls = [];
  const requests = []; // [reason, attempt] of each call
  const sessions = [];
  const provision = async ({ signal, reason, attempt }) => {
    calls.push(performance.now());
    requests.push([reason, attempt]);
    const response = await fetch(`${devstack}/stt/${mode}/v2/live${query}`, {
      method: "POST",
      signal,
      headers: { "content-type": "application/json" },
      body: JSON.stringify(config),
    });
    if (!response.ok) throw Object.assign(new Error(`HTTP ${response.status}`), { status: response.status });
    const session = await response.json();
    sessions.push(session.id);
    return session;
  };
  return { provision, calls, requests, sessions };
}

/** Callbacks that record everything, with times. */
export function recorder() {
  const log = { states: [], times: [], partials: [], finals: [], speechStarts: [], errors: [] };
  return {
    log,
    onStateChange(state) {
      log.states.push(state);
      log.times.push([state, performance.now()]);
    },
    onPartial: (text, meta) => log.partials.push([text, meta.utterance]),
    onFinal: (text, meta) => log.finals.push([text, meta.utterance, meta.sessionId]),
    onSpeechStart: (meta) => log.speechStarts.push(meta.utterance),
    onError: (error) => log.errors.push(error),
  };
}

/** A 20 ms frame at 16 kHz whose first four bytes are `number`, little-endian (echo_frames reads them). */
export function frame(number) {
  const pcm = new Int16Array(320);
  new DataView(pcm.buffer).setUint32(0, number, true);
  return pcm;
}

export const range = (from, to) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

export async function until(condition, timeoutMs, label) {
  const deadline = performance.now() + timeoutMs;
  while (!(await condition())) {
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${label}`);
    await sleep(10);
  }
}

/** Numbers in order of first appearance. */
export const firstAppearances = (numbers) => [...new Set(numbers)];

export const NO_AUDIO = "this browser cannot run an AudioContext here (no audio output device)";

/**
 * Whether `context` starts. Headless Firefox on a machine without an audio output device never
 * starts one (resume() stays pending): there is nothing to capture then, so the microphone
 * scenarios say so instead of hanging. The capture path is covered in Chrome.
 */
export async function runs(context) {
  const running = await Promise.race([context.resume().then(() => true), sleep(1500).then(() => false)]);
  if (!running) context.close().catch(() => {});
  return running;
}

/**
 * Runs `scenarios[name](ctx)`, failing on uncaught errors too and on what `check(name, measured)`
 * rejects, and logs what it measured.
 */
export async function runIn(scenarios, name, ctx, check = () => {}) {
  const scenario = scenarios[name];
  if (!scenario) throw new Error(`no scenario named ${name}`);
  // An error thrown in an event handler (socket, timer, worklet port) is a bug too.
  const uncaught = [];
  const record = (event) => uncaught.push(String(event.message ?? event.reason));
  window.addEventListener("error", record);
  window.addEventListener("unhandledrejection", record);
  try {
    const measured = await scenario(ctx);
    await sleep(0);
    assertEq(uncaught, [], "uncaught errors");
    check(name, measured);
    if (measured !== undefined) console.log(`${name}: ${JSON.stringify(measured)}`);
  } catch (error) {
    // Firefox's `stack` leaves out the message, and the harness prints the stack.
    const stack = String(error?.stack ?? "");
    const message = String(error?.message ?? error);
    throw Object.assign(new Error(message), { stack: stack.includes(message) ? stack : `${message}\n${stack}` });
  } finally {
    window.removeEventListener("error", record);
    window.removeEventListener("unhandledrejection", record);
  }
}

/** For audio scenarios: Chrome runs with --autoplay-policy=no-user-gesture-required, so a scenario
 * that skipped itself there hides a bug. */
export function noSkipInChrome(name, measured) {
  assert(!(measured?.skipped && /Chrome/.test(navigator.userAgent)), `${name} skipped in Chrome: ${measured?.skipped}`);
}
