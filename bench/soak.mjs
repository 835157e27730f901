// Runs in the bench page: a long session whose routes ignore their signals. The primary either
// streams on forever after its attempt timed out or never settles at all; the fallback answers.
// Wasm memory and the JS heap are read (after a forced collection) before and after, for
// turnguard and for the plain JS ladder side by side.

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

const endless = () => ({
  async *[Symbol.asyncIterator]() {
    await sleep(8);
    for (;;) {
      yield "more text ";
      await sleep(1);
    }
  },
});
const silent = () => new Promise(() => {});

function options() {
  return {
    recoveryText: "Sorry?",
    turnDeadlineMs: 10_000,
    attemptTimeoutMs: 2,
    historyLimit: 100,
    retryBudget: { maxTokens: 1e9, tokenRatio: 1 },
    onAcceptedText: () => {},
    onRecovery: () => {},
  };
}

async function heap() {
  // `gc` exists when Chromium runs with --js-flags=--expose-gc (npm run bench sets it).
  for (let i = 0; i < 3; i++) {
    globalThis.gc?.();
    await sleep(20);
  }
  return performance.memory?.usedJSHeapSize ?? NaN;
}

async function session(Controller, turns, inFlight) {
  const endlessLadder = new Controller([{ name: "endless", generate: endless }, { name: "fallback", generate: () => "ok" }], options());
  const silentLadder = new Controller([{ name: "silent", generate: silent }, { name: "fallback", generate: () => "ok" }], options());
  let next = 0;
  const batch = async (count) => {
    const runs = [];
    for (let i = 0; i < count; i++) {
      const ladder = i % 2 === 0 ? endlessLadder : silentLadder;
      runs.push(ladder.run(`t${next++}`, "hello"));
    }
    await Promise.all(runs);
  };
  return {
    run: async (count) => {
      for (let done = 0; done < count; done += inFlight) await batch(Math.min(inFlight, count - done));
      await sleep(30); // the last streams reach their first late chunk
    },
    free: () => {
      endlessLadder.free?.();
      silentLadder.free?.();
    },
  };
}

/**
 * `turns` turns, `inFlight` at a time, after a warm-up of a tenth of them (at least 1000).
 * `memory` is turnguard's wasm memory (`WebAssembly.Memory`).
 */
export async function runSoak({ TurnController, PlainTurnController, memory, turns, inFlight = 500 }) {
  const result = {};
  for (const [name, Controller] of [["turnguard", TurnController], ["plain", PlainTurnController]]) {
    const ladders = await session(Controller, turns, inFlight);
    await ladders.run(Math.max(1000, Math.floor(turns / 10)));
    const before = { wasm: memory.buffer.byteLength, heap: await heap() };
    const started = performance.now();
    await ladders.run(turns);
    const elapsedMs = performance.now() - started;
    const after = { wasm: memory.buffer.byteLength, heap: await heap() };
    ladders.free();
    result[name] = { before, after, elapsedMs };
  }
  result.turns = turns;
  result.inFlight = inFlight;
  return result;
}
