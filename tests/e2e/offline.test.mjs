// The network as the browser reports it (W), in Chromium through the DevTools protocol
// (Playwright's setOffline: Network.emulateNetworkConditions, and the page's offline/online
// events): while offline nothing reconnects and provision() is not called; online reconnects at
// once, and the next utterance is transcribed once. (That audio sent while offline is resent is
// the core's, tests/offline.rs: Chromium's emulation holds a socket's traffic unevenly.)

import assert from "node:assert/strict";
import { test } from "node:test";
import { openPage, runModule, startE2e } from "./harness.mjs";

const LOOPBACK = ["--disable-features=LocalNetworkAccessChecks"];

test("offline: a dropped socket waits, no provision(); online: it reconnects at once and the next utterance is transcribed", async () => {
  const e2e = await startE2e(LOOPBACK);
  try {
    const { page, errors } = await openPage(e2e.browser);
    await runModule(page, e2e.stack.url, `
      import init, { LiveTranscriber } from "turnguard";
      await init();
      const log = (window.__log = { provisions: 0, states: [], finals: [], errors: [] });
      window.addEventListener("offline", () => (log.offlineAt = performance.now()));
      window.addEventListener("online", () => (log.onlineAt = performance.now()));
      window.__t = new LiveTranscriber({
        protocol: "gladia",
        // The first connection is cut 1.5 s after it opened (1006). (Offline, frames sent on it
        // never reach the server: Chromium holds the socket's traffic.)
        provision: async ({ signal }) => {
          log.provisions += 1;
          return (await fetch("/stt/drop1006/v2/live?times=1&dropAfterMs=1500", { method: "POST", signal })).json();
        },
        onStateChange: (state) => log.states.push([state, performance.now()]),
        onFinal: (text) => log.finals.push(text),
        onError: (error) => log.errors.push(error.code),
      });
      await window.__t.start();
    `);
    await page.context().setOffline(true);
    await page.waitForFunction(() => window.__log.offlineAt !== undefined);
    await page.waitForFunction(() => window.__log.states.some(([state]) => state === "backoff"), null, { timeout: 10_000 });
    // Longer than the first backoff delays: nothing may happen until the network is back.
    await new Promise((resolve) => setTimeout(resolve, 2500));
    const offline = await page.evaluate(() => ({ provisions: window.__log.provisions, states: window.__log.states.map(([state]) => state) }));
    assert.equal(offline.provisions, 1, "no provision() while offline");
    assert.deepEqual(offline.states, ["provisioning", "connecting", "open", "backoff"], "no connect while offline");
    await page.context().setOffline(false);
    await page.waitForFunction(() => window.__log.onlineAt !== undefined && window.__log.states.at(-1)[0] === "open", null, { timeout: 10_000 });
    // A new utterance after the outage is transcribed, once.
    await page.evaluate(() => {
      for (let i = 0; i < 50; i += 1) window.__t.sendAudio(new Int16Array(320));
    });
    await page.waitForFunction(() => window.__log.finals.length > 0, null, { timeout: 10_000 });
    await new Promise((resolve) => setTimeout(resolve, 500));
    const back = await page.evaluate(() => {
      const log = window.__log;
      const reconnecting = log.states.find(([state, at]) => state !== "backoff" && at >= log.onlineAt);
      return { finals: log.finals, errors: log.errors, provisions: log.provisions, waitedMs: reconnecting[1] - log.onlineAt, states: log.states.map(([state]) => state) };
    });
    assert.deepEqual(back.finals, ["utterance 1"], "the utterance after the outage, transcribed once");
    assert.equal(back.provisions, 1, "the same session's URL, no new provision()");
    assert.deepEqual(back.states.slice(3), ["backoff", "connecting", "open"], "one reconnect");
    assert.ok(back.waitedMs < 50, `reconnecting ${back.waitedMs.toFixed(1)} ms after online, not after the rest of a backoff`);
    await page.evaluate(() => window.__t.stop());
    assert.deepEqual(errors, []);
  } finally {
    await e2e.close();
  }
});
