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
