// The lifecycle rows of `npm run bench` (issue 25: a session that survives the browser). Online →
// socket open again: the page is taken offline with Playwright's `setOffline` (Chromium's
// `Network.emulateNetworkConditions`: `navigator.onLine` false, `offline` fired), the mock STT cuts
// the socket meanwhile, the page stays offline past the backoff, then comes back; the page times
// `online` → open, less the provision() made after it (the app's backend), and counts provision()
// calls and connects while offline. Track end → capture again: the default microphone's track
// stopped from the page, timed to `microphone_restored` and to the mock's first audio byte after
// it. Medians and p90s over a few runs; nothing asserts a time.

import { runModule } from "../tests/e2e/harness.mjs";

/** How long after it opened the mock cuts each socket of the online row. */
const DROP_AFTER_MS = 1000;
/** How long the page stays offline after its socket was cut: past the 500 ms backoff. */
const HOLD_MS = 800;

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const p90 = (values) => [...values].sort((a, b) => a - b)[Math.max(0, Math.ceil(values.length * 0.9) - 1)];

/** The two rows, `[label, value, comparison]` like the others. `tiny`: 3 runs each, else 10. */
export async function runLifecycleBench(page, stackUrl, { tiny }) {
  const runs = tiny ? 3 : 10;
  const online = await onlineAgain(page, stackUrl, runs);
  await runModule(page, stackUrl, `
    import { trackEndRecapture } from "/bench/lifecycle_page.mjs";
    window.__recapture = await trackEndRecapture(${JSON.stringify(stackUrl)}, ${runs});
  `, { timeoutMs: 120_000 });
  const capture = await page.evaluate(() => window.__recapture);

  const ms = (value) => (value === undefined ? "—" : `${value.toFixed(1)} ms`);
  const mp = (values) => `${ms(median(values))} / ${ms(p90(values))}`;
  const own = online.runs.map((r) => r.ownMs);
  const connects = online.runs.reduce((sum, r) => sum + r.connectionsWhileOffline, 0);
  return [
    [
      `online → socket open again, turnguard's own: open − online − provision() (Deepgram mock, its socket cut while offline, ${online.runs.length} runs), median / p90`,
      mp(own),
      `online → open ${mp(online.runs.map((r) => r.onlineToOpenMs))}, provision() ${mp(online.runs.map((r) => r.provisionMs))}; provisions while offline: ${online.offlineProvisions}, connects: ${connects} (expected 0); goal < 200 ms of turnguard's own`,
    ],
    [
      `track end → capture again (the default microphone, its track stopped from the page, ${capture.restoredMs.length} runs): stop → microphone_restored, median / p90`,
      mp(capture.restoredMs),
      `stop → first audio byte at the mock STT ${mp(capture.firstByteMs)}${capture.noBytes ? ` (${capture.noBytes} runs without one)` : ""}; gapMs (loss noticed → restored) ${mp(capture.gapMs)}; goal: capture again within 1 s`,
    ],
  ];
}

/** The online row's runs, driven from here: the network is Chromium's, set per browser context. */
async function onlineAgain(page, stackUrl, runs) {
  await runModule(page, stackUrl, `
    import { reconnectingTranscriber } from "/bench/lifecycle_page.mjs";
    window.__online = await reconnectingTranscriber(${JSON.stringify(stackUrl)}, { dropAfterMs: ${DROP_AFTER_MS} });
  `);
  const context = page.context();
  const until = (predicate, label) =>
    page.waitForFunction(predicate, null, { timeout: 15_000 }).catch((error) => {
      throw new Error(`bench: timed out waiting for ${label}: ${error.message}`);
    });
  try {
    for (let n = 0; n < runs; n += 1) {
      // Offline well before the mock's cut, so the socket is cut while the page is offline.
      await until(() => window.__online.openFresh(), "a socket just opened");
      await page.evaluate(() => window.__online.beginRun());
      await context.setOffline(true);
      await until(() => window.__online.cut(), "offline, and the socket cut");
      await sleep(HOLD_MS);
      await context.setOffline(false);
      await until(() => window.__online.reopened(), "the socket open again after online");
    }
    return await page.evaluate(() => window.__online.results());
  } finally {
    // A failed run must not leave the page offline.
    await context.setOffline(false);
    await page.evaluate(() => window.__online?.stop()).catch(() => {});
  }
}
