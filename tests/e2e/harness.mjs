// What the end-to-end tests share: Debian's Chromium driven by playwright-core (never a
// downloaded browser) against the local dev stack, with console and page errors collected.

import { chromium } from "playwright-core";
import { startDevStack } from "../../www/devstack.mjs";

const CHROMIUM = process.env.CHROMIUM_PATH || "/usr/bin/chromium";

// The closed network here refuses Chromium's background connections; these flags stop them.
export const CHROMIUM_ARGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-dev-shm-usage",
  "--disable-background-networking",
  "--disable-component-update",
  "--no-first-run",
  "--autoplay-policy=no-user-gesture-required",
  "--use-fake-device-for-media-stream",
  "--use-fake-ui-for-media-stream",
];

export async function launchChromium(extraArgs = []) {
  return chromium.launch({ executablePath: CHROMIUM, args: [...CHROMIUM_ARGS, ...extraArgs], headless: true });
}

/** Starts the dev stack and Chromium (with `extraArgs`); `close()` ends both. */
export async function startE2e(extraArgs = []) {
  const stack = await startDevStack({ port: 0 });
  const browser = await launchChromium(extraArgs);
  return {
    stack,
    browser,
    async close() {
      await browser.close();
      await stack.close();
    },
  };
}

/** A new page whose console lines and uncaught errors are collected. */
export async function openPage(browser) {
  const page = await browser.newPage();
  const console = [];
  const errors = [];
  page.on("console", (message) => {
    console.push({ type: message.type(), text: message.text() });
    if (message.type() === "error") errors.push(message.text());
  });
  page.on("pageerror", (error) => errors.push(error.message));
  return { page, console, errors };
}

/**
 * Serves `script` as a module in a page of the dev stack's origin, with `turnguard` mapped to the
 * built package, and resolves once it finished (or rejects with its error). `body`: HTML the page
 * has before the module runs (an app's buttons).
 */
export async function runModule(page, stackUrl, script, { body = "" } = {}) {
  const url = new URL("/__e2e_module.html", stackUrl).href;
  const html = `<!doctype html><meta charset="utf-8">${body}
<script type="importmap">{ "imports": { "turnguard": "/pkg/turnguard.js" } }</script>
<script type="module">
try {
  await import("/__e2e_module.mjs");
  window.__e2eDone = { ok: true };
} catch (error) {
  window.__e2eDone = { ok: false, error: String(error && error.stack || error) };
}
</script>`;
  await page.route(url, (route) => route.fulfill({ contentType: "text/html", body: html }));
  await page.route(new URL("/__e2e_module.mjs", stackUrl).href, (route) =>
    route.fulfill({ contentType: "text/javascript", body: script }));
  await page.goto(url);
  await page.waitForFunction(() => window.__e2eDone !== undefined, null, { timeout: 30_000 });
  const done = await page.evaluate(() => window.__e2eDone);
  if (!done.ok) throw new Error(`module failed: ${done.error}`);
}
