// `npm run bench`: per-turn overhead of turnguard beside a plain JavaScript ladder, measured side
// by side in one headless Chromium page and reported as a ratio (no timing assertions).

import { openPage, runModule, startE2e } from "../tests/e2e/harness.mjs";

const e2e = await startE2e();
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
} finally {
  await e2e.close();
}
