// `npm run bench`: per-turn overhead of turnguard beside a plain JavaScript ladder, measured side
// by side in one headless Chromium page and reported as a ratio (no timing assertions).

import { openPage, runModule, startE2e } from "../tests/e2e/harness.mjs";

// Memory figures need a collectable, precisely reported heap.
const e2e = await startE2e(["--js-flags=--expose-gc", "--enable-precise-memory-info"]);
const SOAK_TURNS = Number(process.env.BENCH_SOAK_TURNS ?? 100_000);
try {
  const { page, errors } = await openPage(e2e.browser);
  await runModule(page, e2e.stack.url, `
    import { runBench } from "/bench/page.mjs";
    window.__bench = await runBench();
  `);
  const result = await page.evaluate(() => window.__bench);
  if (errors.length) throw new Error(`page errors: ${errors.join("; ")}`);
  const us = (ms) => `${(ms * 1000).toFixed(1)} µs`;
  console.log(`bench: ${result.turns} sequential turns, route resolves at once, median of ${result.rounds} rounds`);
  console.log(`bench: turnguard ${us(result.turnguardMsPerTurn)} per turn`);
  console.log(`bench: plain JS  ${us(result.plainMsPerTurn)} per turn`);
  console.log(`bench: ratio turnguard / plain JS = ${result.ratio.toFixed(2)}`);
  const s = result.streaming;
  console.log(`bench: streamed answer, ${s.chunks} chunks at 25 ms: first sentence at ${s.firstSentenceMs.toFixed(0)} ms, full answer at ${s.fullAnswerMs.toFixed(0)} ms`);
  console.log(`bench: first sentence reached onSentence ${s.firstSentenceLagMs.toFixed(2)} ms after the chunk that completed it`);

  await runModule(page, e2e.stack.url, `
    import init, { TurnController } from "/pkg/turnguard.js";
    import { PlainTurnController } from "/bench/plain_ladder.mjs";
    import { runSoak } from "/bench/soak.mjs";
    const wasm = await init();
    window.__soak = await runSoak({ TurnController, PlainTurnController, memory: wasm.memory, turns: ${SOAK_TURNS} });
  `);
  const soak = await page.evaluate(() => window.__soak);
  const kb = (bytes) => `${(bytes / 1024).toFixed(0)} KiB`;
  console.log(`bench: soak of ${soak.turns} turns (${soak.inFlight} in flight) whose primaries ignore their signals (half stream on after their timeout, half never settle):`);
  for (const name of ["turnguard", "plain"]) {
    const { before, after, elapsedMs } = soak[name];
    const wasmPart = name === "turnguard" ? `wasm memory ${kb(before.wasm)} → ${kb(after.wasm)}, ` : "";
    console.log(`bench:   ${name.padEnd(9)} ${wasmPart}JS heap ${kb(before.heap)} → ${kb(after.heap)}, ${(elapsedMs / 1000).toFixed(1)} s`);
  }
} finally {
  await e2e.close();
}
